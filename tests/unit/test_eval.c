/* Scalar semantics (ir/eval.c): every builtin against libm, NaN rules,
 * integer wrap-around and division, casts and half rounding, reductions. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "ir/eval.h"
#include "testutil.h"

static const double probe[] = {
	0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, -0.3, 1e-3, -7.25, 10.0, 20.0, 88.0, 89.0,
	-88.0, -104.0, 100.0, 710.0, -745.0, 1e-30, 1e-300, 5e-324, 1e30, -1e30, 1e300, 65504.0, 3.4e38, -3.4e38,
	INFINITY, -INFINITY, NAN, -NAN, 0.7071067811865476, 1.0e-7, 123456.789, -0.999999,
};
#define NPROBE (int)(sizeof probe / sizeof probe[0])

static Scalar F(double x) { return (Scalar){.f = x}; }
static Scalar I(int64_t x) { return (Scalar){.i = x}; }

/* Same double, NaN equal to NaN, -0 distinct from +0. */
static bool same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return a == b && signbit(a) == signbit(b);
}

#define ck_same(a, b) ck_assert_msg(same((a), (b)), "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* eval_op, which must know the op on that operand dtype. */
static Scalar op_value(Op op, fz_dtype result, fz_dtype operand, const Scalar *args)
{
	Scalar r;
	ck_assert_msg(eval_op(op, result, operand, args, &r), "no semantics for %s on %s", ir_ops[op].name,
	              fz_dtype_name(operand));
	return r;
}

static double un64(Op op, double x) { return op_value(op, FZ_F64, FZ_F64, (Scalar[]){F(x)}).f; }
static double un32(Op op, double x) { return op_value(op, FZ_F32, FZ_F32, (Scalar[]){F(x)}).f; }
static double bin64(Op op, double a, double b) { return op_value(op, FZ_F64, FZ_F64, (Scalar[]){F(a), F(b)}).f; }
static double bin32(Op op, double a, double b) { return op_value(op, FZ_F32, FZ_F32, (Scalar[]){F(a), F(b)}).f; }
static int64_t ibin(Op op, fz_dtype t, int64_t a, int64_t b)
{
	return op_value(op, t, t, (Scalar[]){I(a), I(b)}).i;
}

/* The reference formulas, written here independently of eval.c. */
static double ref64(Op op, double x)
{
	switch (op) {
	case OP_ABS: return fabs(x);
	case OP_EXP: return exp(x);
	case OP_EXP2: return exp2(x);
	case OP_LOG: return log(x);
	case OP_LOG2: return log2(x);
	case OP_LOG1P: return log1p(x);
	case OP_EXPM1: return expm1(x);
	case OP_SQRT: return sqrt(x);
	case OP_RSQRT: return 1.0 / sqrt(x);
	case OP_SIN: return sin(x);
	case OP_COS: return cos(x);
	case OP_TANH: return tanh(x);
	case OP_ERF: return erf(x);
	case OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case OP_RELU: return isnan(x) ? x : x > 0 ? x : 0.0;
	case OP_SILU: return x / (1.0 + exp(-x));
	case OP_GELU: return 0.5 * x * (1.0 + erf(x * M_SQRT1_2));
	case OP_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
	case OP_FLOOR: return floor(x);
	case OP_CEIL: return ceil(x);
	case OP_ROUND: return nearbyint(x);
	default: ck_abort_msg("no reference for %s", ir_ops[op].name); return 0;
	}
}

static float ref32(Op op, float x)
{
	switch (op) {
	case OP_ABS: return fabsf(x);
	case OP_EXP: return expf(x);
	case OP_EXP2: return exp2f(x);
	case OP_LOG: return logf(x);
	case OP_LOG2: return log2f(x);
	case OP_LOG1P: return log1pf(x);
	case OP_EXPM1: return expm1f(x);
	case OP_SQRT: return sqrtf(x);
	case OP_RSQRT: return 1.0f / sqrtf(x);
	case OP_SIN: return sinf(x);
	case OP_COS: return cosf(x);
	case OP_TANH: return tanhf(x);
	case OP_ERF: return erff(x);
	case OP_SIGMOID: return 1.0f / (1.0f + expf(-x));
	case OP_RELU: return isnan(x) ? x : x > 0 ? x : 0.0f;
	case OP_SILU: return x / (1.0f + expf(-x));
	case OP_GELU: return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));
	case OP_GELU_TANH: return 0.5f * x * (1.0f + tanhf((float)sqrt(2.0 / M_PI) * (x + 0.044715f * x * x * x)));
	case OP_FLOOR: return floorf(x);
	case OP_CEIL: return ceilf(x);
	case OP_ROUND: return nearbyintf(x);
	default: ck_abort_msg("no reference for %s", ir_ops[op].name); return 0;
	}
}

static const Op unary_ops[] = {
	OP_ABS, OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_LOG1P, OP_EXPM1, OP_SQRT, OP_RSQRT, OP_SIN, OP_COS,
	OP_TANH, OP_ERF, OP_SIGMOID, OP_RELU, OP_SILU, OP_GELU, OP_GELU_TANH, OP_FLOOR, OP_CEIL, OP_ROUND,
};

START_TEST(unary_f64_matches_libm)
{
	for (size_t k = 0; k < sizeof unary_ops / sizeof unary_ops[0]; k++)
		for (int i = 0; i < NPROBE; i++) {
			Op op = unary_ops[k];
			ck_assert_msg(same(un64(op, probe[i]), ref64(op, probe[i])), "%s(%.17g) = %.17g, libm %.17g",
			              ir_ops[op].name, probe[i], un64(op, probe[i]), ref64(op, probe[i]));
		}
}
END_TEST

START_TEST(unary_f32_matches_libm)
{
	for (size_t k = 0; k < sizeof unary_ops / sizeof unary_ops[0]; k++)
		for (int i = 0; i < NPROBE; i++) {
			Op op = unary_ops[k];
			float x = (float)probe[i];
			double got = un32(op, x), want = ref32(op, x);
			ck_assert_msg(same(got, want), "%s(%.9g) = %.9g, libm %.9g", ir_ops[op].name, x, got, want);
			/* a half operand computes in f32 too, with the same result */
			double h = op_value(op, FZ_F16, FZ_F16, (Scalar[]){F(x)}).f;
			ck_assert(same(h, want));
		}
}
END_TEST

START_TEST(f32_results_are_floats)
{
	/* 1/3 in f32 is not 1/3 in f64: the result must be rounded to float */
	ck_same(bin32(OP_DIV, 1.0, 3.0), (double)(1.0f / 3.0f));
	ck_assert(bin64(OP_DIV, 1.0, 3.0) == 1.0 / 3.0);
	ck_same(bin32(OP_ADD, 1.0, 1e-10), 1.0);
	ck_same(un32(OP_EXP, 1.0), (double)expf(1.0f));
	ck_assert(un32(OP_EXP, 1.0) != exp(1.0));
	/* a float constant in an f32 op is used as float */
	ck_same(bin32(OP_MUL, 0.1, 3.0), (double)(0.1f * 3.0f));
}
END_TEST

START_TEST(known_values)
{
	ck_assert(fabs(un64(OP_GELU, 1.0) - 0.8413447460685429) < 1e-15);
	ck_assert(fabs(un64(OP_GELU_TANH, 1.0) - 0.8411919906082768) < 1e-15);
	ck_assert(fabs(un64(OP_SILU, 1.0) - 0.7310585786300049) < 1e-15);
	ck_same(un64(OP_SIGMOID, 0.0), 0.5);
	ck_same(un64(OP_SIGMOID, -1000.0), 0.0);
	ck_same(un64(OP_SIGMOID, 1000.0), 1.0);
	ck_same(un32(OP_SIGMOID, -200.0), 0.0);
	ck_same(un64(OP_RSQRT, 4.0), 0.5);
	ck_same(un64(OP_RSQRT, 0.0), INFINITY);
	ck_same(un64(OP_RSQRT, -1.0), NAN);
	ck_same(un64(OP_LOG, 0.0), -INFINITY);
	ck_same(un64(OP_LOG, -1.0), NAN);
	ck_same(un64(OP_SQRT, -0.0), -0.0);
	ck_same(un64(OP_ABS, -0.0), 0.0);
	ck_same(un64(OP_EXP, INFINITY), INFINITY);
	ck_same(un64(OP_EXP, -INFINITY), 0.0);
	ck_same(un64(OP_TANH, INFINITY), 1.0);
	ck_same(un64(OP_GELU, -INFINITY), NAN); /* 0.5 * -inf * 0: as defined */
	ck_same(un32(OP_EXP, 89.0), INFINITY);  /* overflows f32, not f64 */
	ck_same(un64(OP_EXP, 89.0), exp(89.0));
	ck_same(bin64(OP_POW, 2.0, 10.0), 1024.0);
	ck_same(bin64(OP_POW, -8.0, 1.0 / 3.0), NAN);
	ck_same(bin64(OP_POW, NAN, 0.0), 1.0);
	ck_same(bin32(OP_POW, 2.0, 0.5), (double)powf(2.0f, 0.5f));
}
END_TEST

START_TEST(round_half_even)
{
	static const double in[] = {0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.49999999999999994, 2.4, -2.6};
	static const double out[] = {0.0, 2.0, 2.0, 4.0, -0.0, -2.0, -2.0, 0.0, 2.0, -3.0};
	for (int k = 0; k < 10; k++) {
		ck_same(un64(OP_ROUND, in[k]), out[k]);
		ck_same(un32(OP_ROUND, in[k]), (double)nearbyintf((float)in[k]));
	}
	ck_same(un32(OP_ROUND, 2.5), 2.0);
	ck_same(un64(OP_FLOOR, -0.5), -1.0);
	ck_same(un64(OP_CEIL, -0.5), -0.0);
}
END_TEST

START_TEST(nan_propagation)
{
	for (int k = 0; k < 2; k++) {
		double (*b)(Op, double, double) = k ? bin32 : bin64;
		ck_same(b(OP_MAXIMUM, NAN, 1.0), NAN);
		ck_same(b(OP_MAXIMUM, 1.0, NAN), NAN);
		ck_same(b(OP_MINIMUM, NAN, 1.0), NAN);
		ck_same(b(OP_MINIMUM, 1.0, NAN), NAN);
		ck_same(b(OP_MAXIMUM, -INFINITY, 1.0), 1.0);
		ck_same(b(OP_MINIMUM, -INFINITY, 1.0), -INFINITY);
		ck_same(b(OP_MAXIMUM, 2.0, 3.0), 3.0);
		ck_same(b(OP_MINIMUM, 2.0, 3.0), 2.0);
	}
	fz_dtype ts[] = {FZ_F64, FZ_F32};
	for (int k = 0; k < 2; k++) {
		fz_dtype t = ts[k];
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(NAN), F(0), F(1)}).f, NAN);
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(0.5), F(NAN), F(1)}).f, NAN);
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(0.5), F(0), F(NAN)}).f, NAN);
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(5), F(0), F(1)}).f, 1.0);
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(-5), F(0), F(1)}).f, 0.0);
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(0.25), F(0), F(1)}).f, 0.25);
		/* lo > hi: hi wins, as minimum(maximum(x, lo), hi) */
		ck_same(op_value(OP_CLAMP, t, t, (Scalar[]){F(0.5), F(2), F(1)}).f, 1.0);
		ck_same(op_value(OP_RELU, t, t, (Scalar[]){F(NAN)}).f, NAN);
		ck_same(op_value(OP_RELU, t, t, (Scalar[]){F(-3)}).f, 0.0);
		ck_same(op_value(OP_RELU, t, t, (Scalar[]){F(-0.0)}).f, 0.0);
		ck_same(op_value(OP_RELU, t, t, (Scalar[]){F(-INFINITY)}).f, 0.0);
		ck_same(op_value(OP_RELU, t, t, (Scalar[]){F(2.5)}).f, 2.5);
	}
	/* comparisons with NaN are IEEE */
	ck_assert_int_eq(op_value(OP_EQ, FZ_BOOL, FZ_F32, (Scalar[]){F(NAN), F(NAN)}).i, 0);
	ck_assert_int_eq(op_value(OP_NE, FZ_BOOL, FZ_F32, (Scalar[]){F(NAN), F(NAN)}).i, 1);
	ck_assert_int_eq(op_value(OP_LT, FZ_BOOL, FZ_F64, (Scalar[]){F(NAN), F(1)}).i, 0);
	ck_assert_int_eq(op_value(OP_GE, FZ_BOOL, FZ_F64, (Scalar[]){F(NAN), F(1)}).i, 0);
	ck_assert_int_eq(op_value(OP_LE, FZ_BOOL, FZ_F64, (Scalar[]){F(-0.0), F(0.0)}).i, 1);
	ck_assert_int_eq(op_value(OP_ISNAN, FZ_BOOL, FZ_F32, (Scalar[]){F(NAN)}).i, 1);
	ck_assert_int_eq(op_value(OP_ISNAN, FZ_BOOL, FZ_F32, (Scalar[]){F(INFINITY)}).i, 0);
	ck_assert_int_eq(op_value(OP_ISINF, FZ_BOOL, FZ_F64, (Scalar[]){F(-INFINITY)}).i, 1);
	ck_assert_int_eq(op_value(OP_ISINF, FZ_BOOL, FZ_F64, (Scalar[]){F(DBL_MAX)}).i, 0);
	/* the IR converts integers to f32 first: on an integer there is no
	 * semantics, and eval says so instead of giving 0 */
	Scalar r;
	ck_assert(!eval_op(OP_ISNAN, FZ_BOOL, FZ_I32, (Scalar[]){I(0)}, &r));
	ck_assert(!eval_op(OP_ISINF, FZ_BOOL, FZ_I64, (Scalar[]){I(INT64_MAX)}, &r));
}
END_TEST

START_TEST(integer_division)
{
	static const int64_t cases[][4] = {
		/* a, b, a / b, a % b */
		{7, 2, 3, 1},   {-7, 2, -3, -1}, {7, -2, -3, 1}, {-7, -2, 3, -1}, {6, 3, 2, 0},
		{0, 5, 0, 0},   {7, 0, 0, 0},    {-7, 0, 0, 0},  {0, 0, 0, 0},    {1, 7, 0, 1},
		{-1, 7, 0, -1}, {5, -1, -5, 0},
	};
	fz_dtype ts[] = {FZ_I32, FZ_I64};
	for (int t = 0; t < 2; t++)
		for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
			ck_assert_int_eq(ibin(OP_DIV, ts[t], cases[k][0], cases[k][1]), cases[k][2]);
			ck_assert_int_eq(ibin(OP_MOD, ts[t], cases[k][0], cases[k][1]), cases[k][3]);
		}
	ck_assert_int_eq(ibin(OP_DIV, FZ_I32, INT32_MIN, -1), INT32_MIN);
	ck_assert_int_eq(ibin(OP_MOD, FZ_I32, INT32_MIN, -1), 0);
	ck_assert_int_eq(ibin(OP_DIV, FZ_I64, INT64_MIN, -1), INT64_MIN);
	ck_assert_int_eq(ibin(OP_MOD, FZ_I64, INT64_MIN, -1), 0);
	ck_assert_int_eq(ibin(OP_DIV, FZ_I64, INT64_MIN, 0), 0);
	ck_assert_int_eq(ibin(OP_DIV, FZ_I32, INT32_MIN, 2), INT32_MIN / 2);
	ck_assert_int_eq(ibin(OP_MOD, FZ_I32, INT32_MIN, 3), -2);
	/* float % is fmod: the sign of the dividend */
	ck_same(bin64(OP_MOD, -7.0, 2.0), -1.0);
	ck_same(bin64(OP_MOD, 7.5, -2.0), 1.5);
	ck_same(bin64(OP_MOD, 1.0, 0.0), NAN);
	ck_same(bin32(OP_MOD, 5.5, INFINITY), 5.5);
	ck_same(bin64(OP_DIV, 1.0, 0.0), INFINITY);
	ck_same(bin64(OP_DIV, -1.0, 0.0), -INFINITY);
	ck_same(bin64(OP_DIV, 0.0, 0.0), NAN);
}
END_TEST

START_TEST(integer_wraparound)
{
	ck_assert_int_eq(ibin(OP_ADD, FZ_I32, INT32_MAX, 1), INT32_MIN);
	ck_assert_int_eq(ibin(OP_SUB, FZ_I32, INT32_MIN, 1), INT32_MAX);
	ck_assert_int_eq(ibin(OP_MUL, FZ_I32, 65536, 65536), 0);
	ck_assert_int_eq(ibin(OP_MUL, FZ_I32, 46341, 46341), (int64_t)46341 * 46341 - 4294967296LL);
	ck_assert_int_eq(ibin(OP_ADD, FZ_I64, INT64_MAX, 1), INT64_MIN);
	ck_assert_int_eq(ibin(OP_MUL, FZ_I64, INT64_MAX, 2), -2);
	ck_assert_int_eq(op_value(OP_NEG, FZ_I32, FZ_I32, (Scalar[]){I(INT32_MIN)}).i, INT32_MIN);
	ck_assert_int_eq(op_value(OP_NEG, FZ_I64, FZ_I64, (Scalar[]){I(INT64_MIN)}).i, INT64_MIN);
	ck_assert_int_eq(op_value(OP_NEG, FZ_I32, FZ_I32, (Scalar[]){I(5)}).i, -5);
	ck_assert_int_eq(op_value(OP_ABS, FZ_I32, FZ_I32, (Scalar[]){I(INT32_MIN)}).i, INT32_MIN);
	ck_assert_int_eq(op_value(OP_ABS, FZ_I64, FZ_I64, (Scalar[]){I(INT64_MIN)}).i, INT64_MIN);
	ck_assert_int_eq(op_value(OP_ABS, FZ_I32, FZ_I32, (Scalar[]){I(-7)}).i, 7);
	ck_assert_int_eq(ibin(OP_MAXIMUM, FZ_I32, -3, 2), 2);
	ck_assert_int_eq(ibin(OP_MINIMUM, FZ_I64, -3, 2), -3);
	ck_assert_int_eq(ibin(OP_MAXIMUM, FZ_BOOL, 0, 1), 1);
	ck_assert_int_eq(op_value(OP_CLAMP, FZ_I32, FZ_I32, (Scalar[]){I(17), I(0), I(10)}).i, 10);
	ck_assert_int_eq(op_value(OP_CLAMP, FZ_I32, FZ_I32, (Scalar[]){I(-17), I(0), I(10)}).i, 0);
	/* a float builtin has no integer semantics (the IR converts to f32) */
	Scalar r;
	ck_assert(!eval_op(OP_SQRT, FZ_F32, FZ_I32, (Scalar[]){I(2)}, &r));
}
END_TEST

START_TEST(integer_pow)
{
	static const int64_t cases[][3] = {
		{2, 10, 1024}, {3, 0, 1}, {0, 0, 1}, {0, 3, 0}, {-2, 3, -8}, {-2, 4, 16}, {2, -1, 0},
		{5, -2, 0}, {0, -1, 0}, {1, -5, 1}, {-1, -3, -1}, {-1, -2, 1}, {7, 1, 7}, {-1, 0, 1},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		ck_assert_int_eq(ibin(OP_POW, FZ_I32, cases[k][0], cases[k][1]), cases[k][2]);
		ck_assert_int_eq(ibin(OP_POW, FZ_I64, cases[k][0], cases[k][1]), cases[k][2]);
	}
	ck_assert_int_eq(ibin(OP_POW, FZ_I32, 2, 31), INT32_MIN);
	ck_assert_int_eq(ibin(OP_POW, FZ_I32, 2, 32), 0);
	ck_assert_int_eq(ibin(OP_POW, FZ_I64, 2, 62), (int64_t)1 << 62);
	ck_assert_int_eq(ibin(OP_POW, FZ_I64, 3, 39), 4052555153018976267LL);
	ck_assert_int_eq(ibin(OP_POW, FZ_I64, 3, 40), -6289078614652622815LL); /* 3^40 mod 2^64 */
	ck_assert_int_eq(ibin(OP_POW, FZ_I64, 2, INT64_MAX), 0);
	ck_assert_int_eq(ibin(OP_POW, FZ_I64, -1, INT64_MAX), -1);
}
END_TEST

static int64_t cast_i(fz_dtype from, fz_dtype to, double x) { return eval_cast(from, to, F(x)).i; }
static double cast_f(fz_dtype from, fz_dtype to, double x) { return eval_cast(from, to, F(x)).f; }

START_TEST(float_to_int_casts)
{
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, NAN), 0);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I64, NAN), 0);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, 2.9), 2);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, -2.9), -2);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I32, -0.5), 0);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, 1e10), INT32_MAX);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, -1e10), INT32_MIN);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, INFINITY), INT32_MAX);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_I32, -INFINITY), INT32_MIN);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I32, 2147483647.9), INT32_MAX);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I32, 2147483648.0), INT32_MAX);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I32, -2147483648.9), INT32_MIN);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I32, -2147483649.0), INT32_MIN);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I64, 9223372036854775808.0), INT64_MAX);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I64, -9223372036854775808.0), INT64_MIN);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I64, -1e30), INT64_MIN);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_I64, 1e18), 1000000000000000000LL);
	ck_assert_int_eq(cast_i(FZ_F16, FZ_I64, 65504.0), 65504);
	/* bool(x) is x != 0: NaN is true, -0 is false */
	ck_assert_int_eq(cast_i(FZ_F32, FZ_BOOL, NAN), 1);
	ck_assert_int_eq(cast_i(FZ_F32, FZ_BOOL, -0.0), 0);
	ck_assert_int_eq(cast_i(FZ_F64, FZ_BOOL, 1e-300), 1);
	ck_assert_int_eq(eval_cast(FZ_I32, FZ_BOOL, I(-4)).i, 1);
	ck_assert_int_eq(eval_cast(FZ_I64, FZ_BOOL, I(0)).i, 0);
}
END_TEST

START_TEST(int_casts)
{
	ck_assert_int_eq(eval_cast(FZ_I64, FZ_I32, I(((int64_t)1 << 32) + 5)).i, 5);
	ck_assert_int_eq(eval_cast(FZ_I64, FZ_I32, I(2147483648LL)).i, INT32_MIN);
	ck_assert_int_eq(eval_cast(FZ_I32, FZ_I64, I(-3)).i, -3);
	ck_assert_int_eq(eval_cast(FZ_BOOL, FZ_I32, I(1)).i, 1);
	ck_same(eval_cast(FZ_BOOL, FZ_F32, I(1)).f, 1.0);
	ck_same(eval_cast(FZ_I32, FZ_F32, I(16777217)).f, 16777216.0);
	ck_same(eval_cast(FZ_I64, FZ_F64, I(((int64_t)1 << 53) + 1)).f, 9007199254740992.0);
	ck_same(eval_cast(FZ_I64, FZ_F32, I(INT64_MAX)).f, 9223372036854775808.0);
	/* int -> bf16 rounds once: 2^24 + 2^16 + 1 is above the tie */
	ck_same(eval_cast(FZ_I32, FZ_BF16, I(16842753)).f, 16908288.0);
	ck_same(eval_cast(FZ_I32, FZ_BF16, I(16842752)).f, 16777216.0); /* the tie itself: to even */
	ck_same(eval_cast(FZ_I64, FZ_BF16, I(-16842753)).f, -16908288.0);
	ck_same(eval_cast(FZ_I32, FZ_F16, I(2049)).f, 2048.0);
	ck_same(eval_cast(FZ_I32, FZ_F16, I(2051)).f, 2052.0);
	ck_same(eval_cast(FZ_I32, FZ_F16, I(65519)).f, 65504.0);
	ck_same(eval_cast(FZ_I32, FZ_F16, I(65520)).f, INFINITY);
	ck_same(eval_cast(FZ_I64, FZ_F16, I(INT64_MIN)).f, -INFINITY);
}
END_TEST

START_TEST(half_rounding)
{
	/* f16: ties to even, subnormals, overflow */
	ck_same(cast_f(FZ_F32, FZ_F16, 1.0 + 0x1p-11), 1.0);
	ck_same(cast_f(FZ_F32, FZ_F16, 1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9);
	ck_same(cast_f(FZ_F32, FZ_F16, 1.0 + 0x1p-11 + 0x1p-20), 1.0 + 0x1p-10);
	ck_same(cast_f(FZ_F32, FZ_F16, 0x1p-24), 0x1p-24);
	ck_same(cast_f(FZ_F32, FZ_F16, 0x1p-25), 0.0);
	ck_same(cast_f(FZ_F32, FZ_F16, -0x1p-25), -0.0);
	ck_same(cast_f(FZ_F32, FZ_F16, 3 * 0x1p-25), 0x1p-23);
	ck_same(cast_f(FZ_F32, FZ_F16, 5 * 0x1p-25), 0x1p-23);
	ck_same(cast_f(FZ_F32, FZ_F16, 7 * 0x1p-25), 0x1p-22);
	ck_same(cast_f(FZ_F32, FZ_F16, 0x1p-25 + 0x1p-40), 0x1p-24);
	ck_same(cast_f(FZ_F32, FZ_F16, 1023 * 0x1p-24), 1023 * 0x1p-24); /* largest subnormal */
	ck_same(cast_f(FZ_F32, FZ_F16, 0x1p-14), 0x1p-14);
	ck_same(cast_f(FZ_F32, FZ_F16, 65504.0), 65504.0);
	ck_same(cast_f(FZ_F32, FZ_F16, 65519.0), 65504.0);
	ck_same(cast_f(FZ_F32, FZ_F16, 65520.0), INFINITY);
	ck_same(cast_f(FZ_F32, FZ_F16, -1e5), -INFINITY);
	ck_same(cast_f(FZ_F32, FZ_F16, NAN), NAN);
	ck_same(cast_f(FZ_F32, FZ_F16, 0.1), (double)0.0999755859375f);
	/* bf16 */
	ck_same(cast_f(FZ_F32, FZ_BF16, 1.0 + 0x1p-8), 1.0);
	ck_same(cast_f(FZ_F32, FZ_BF16, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
	ck_same(cast_f(FZ_F32, FZ_BF16, 1.0 + 0x1p-8 + 0x1p-20), 1.0 + 0x1p-7);
	ck_same(cast_f(FZ_F32, FZ_BF16, FLT_MAX), INFINITY);
	ck_same(cast_f(FZ_F32, FZ_BF16, 0x1.fep127), 0x1.fep127); /* largest finite */
	ck_same(cast_f(FZ_F32, FZ_BF16, NAN), NAN);
	ck_same(cast_f(FZ_F32, FZ_BF16, 0x1p-133), 0x1p-133); /* bf16 subnormal */
	ck_same(cast_f(FZ_F32, FZ_BF16, -0.0), -0.0);
	/* f64 -> half rounds once: just above the tie, though (float) lands on it */
	double d = 1.0 + 0x1p-11 + 0x1p-40;
	ck_assert((double)(float)d == 1.0 + 0x1p-11);
	ck_same(cast_f(FZ_F64, FZ_F16, d), 1.0 + 0x1p-10);
	ck_same(cast_f(FZ_F64, FZ_F16, 1.0 + 0x1p-11 - 0x1p-40), 1.0);
	ck_same(cast_f(FZ_F64, FZ_BF16, 1.0 + 0x1p-8 + 0x1p-40), 1.0 + 0x1p-7);
	ck_same(cast_f(FZ_F64, FZ_BF16, 1e300), INFINITY);
	ck_same(cast_f(FZ_F64, FZ_BF16, -1e-300), -0.0);
	ck_same(cast_f(FZ_F64, FZ_F16, 65519.99), 65504.0);
	ck_same(cast_f(FZ_F64, FZ_F16, 65520.0), INFINITY);
	ck_same(cast_f(FZ_F64, FZ_F16, NAN), NAN);
	/* an explicit cast to a half type rounds a (f32) half value */
	ck_same(cast_f(FZ_F16, FZ_F16, 1.0 + 0x1p-12), 1.0);
	ck_same(cast_f(FZ_BF16, FZ_F16, 1.0 / 3.0), (double)f16_bits_to_f32(f32_to_f16_bits(1.0f / 3.0f)));
	/* f32 <- f64 rounds to float; f64 <- f16 is exact */
	ck_same(cast_f(FZ_F64, FZ_F32, 0.1), (double)0.1f);
	ck_same(cast_f(FZ_F16, FZ_F64, 0.0999755859375), 0.0999755859375);
}
END_TEST

START_TEST(normalize_and_storage)
{
	ck_assert_int_eq(eval_normalize(FZ_I32, I(2147483648LL)).i, INT32_MIN);
	ck_assert_int_eq(eval_normalize(FZ_BOOL, I(7)).i, 1);
	ck_same(eval_normalize(FZ_F32, F(0.1)).f, (double)0.1f);
	ck_same(eval_normalize(FZ_F16, F(0.1)).f, (double)0.1f); /* f32, not rounded to half */
	ck_same(eval_normalize(FZ_F64, F(0.1)).f, 0.1);
	unsigned char buf[64];
	for (int t = 0; t < FZ_DTYPE_COUNT; t++) {
		memset(buf, 0xAB, sizeof buf);
		Scalar v = dtype_is_float((fz_dtype)t) ? F(-2.5) : I(t == FZ_BOOL ? 1 : -7);
		eval_store((fz_dtype)t, buf, 3, v);
		Scalar w = eval_load((fz_dtype)t, buf, 3);
		if (dtype_is_float((fz_dtype)t))
			ck_same(w.f, -2.5);
		else
			ck_assert_int_eq(w.i, v.i);
		ck_assert_int_eq(buf[0], 0xAB); /* nothing outside element 3 changed */
		ck_assert_int_eq(buf[4 * fz_dtype_size((fz_dtype)t)], 0xAB);
	}
	eval_store(FZ_F16, buf, 0, F(1.0 + 0x1p-11 + 0x1p-20));
	ck_assert_int_eq(buf[0] | buf[1] << 8, 0x3c01);
	eval_store(FZ_BF16, buf, 0, F(1.0));
	ck_assert_int_eq(buf[0] | buf[1] << 8, 0x3f80);
	eval_store(FZ_BOOL, buf, 0, I(1));
	ck_assert_int_eq(buf[0], 1);
	buf[0] = 0x7f; /* a bool byte other than 0/1 reads as true */
	ck_assert_int_eq(eval_load(FZ_BOOL, buf, 0).i, 1);
}
END_TEST

static Scalar reduce_f(Op op, fz_dtype res, fz_dtype t, const double *v, int n, bool *ok)
{
	Scalar row[16] = {{0}}, out = {.i = 0};
	for (int k = 0; k < n; k++)
		row[k] = F(v[k]);
	*ok = eval_reduce(op, res, t, row, n, &out);
	return out;
}

START_TEST(reductions)
{
	bool ok;
	/* f32 sums accumulate in f64: f32 accumulation would give 0 */
	ck_same(reduce_f(OP_SUM, FZ_F32, FZ_F32, (double[]){1e8, 1, -1e8}, 3, &ok).f, 1.0);
	/* f64 sums are compensated: plain accumulation would give 0 */
	ck_same(reduce_f(OP_SUM, FZ_F64, FZ_F64, (double[]){1e16, 1, -1e16}, 3, &ok).f, 1.0);
	ck_same(reduce_f(OP_SUM, FZ_F32, FZ_F32, (double[]){1, INFINITY, 2}, 3, &ok).f, INFINITY);
	ck_same(reduce_f(OP_SUM, FZ_F64, FZ_F64, (double[]){1, INFINITY, -INFINITY}, 3, &ok).f, NAN);
	ck_same(reduce_f(OP_SUM, FZ_F64, FZ_F64, (double[]){1e308, 1e308}, 2, &ok).f, INFINITY);
	ck_same(reduce_f(OP_SUM, FZ_F32, FZ_F32, (double[]){3e38, 3e38}, 2, &ok).f, INFINITY);
	ck_same(reduce_f(OP_SUM, FZ_F32, FZ_F32, (double[]){0.1f, 0.2f}, 2, &ok).f, (double)(float)((double)0.1f + (double)0.2f));
	ck_same(reduce_f(OP_SUM, FZ_F16, FZ_F16, (double[]){1, 0x1p-12}, 2, &ok).f, 1.0 + 0x1p-12); /* kept f32 */
	ck_same(reduce_f(OP_MEAN, FZ_F32, FZ_F32, (double[]){1, 2, 4}, 3, &ok).f, (double)(float)(7.0 / 3.0));
	ck_same(reduce_f(OP_MEAN, FZ_F64, FZ_F64, (double[]){1, 2, 4}, 3, &ok).f, 7.0 / 3.0);
	ck_same(reduce_f(OP_MAX, FZ_F32, FZ_F32, (double[]){1, NAN, 3}, 3, &ok).f, NAN);
	ck_same(reduce_f(OP_MAX, FZ_F32, FZ_F32, (double[]){NAN, 1, 3}, 3, &ok).f, NAN);
	ck_same(reduce_f(OP_MIN, FZ_F64, FZ_F64, (double[]){1, 3, NAN}, 3, &ok).f, NAN);
	ck_same(reduce_f(OP_MAX, FZ_F64, FZ_F64, (double[]){-INFINITY, -5, -7}, 3, &ok).f, -5.0);
	ck_same(reduce_f(OP_MIN, FZ_F64, FZ_F64, (double[]){2, -INFINITY, 7}, 3, &ok).f, -INFINITY);
	/* empty rows */
	ck_same(reduce_f(OP_SUM, FZ_F32, FZ_F32, NULL, 0, &ok).f, 0.0);
	ck_assert(ok);
	ck_same(reduce_f(OP_MEAN, FZ_F32, FZ_F32, NULL, 0, &ok).f, NAN);
	ck_assert(ok);
	reduce_f(OP_MAX, FZ_F32, FZ_F32, NULL, 0, &ok);
	ck_assert(!ok);
	reduce_f(OP_MIN, FZ_I32, FZ_I32, NULL, 0, &ok);
	ck_assert(!ok);
	/* integers: sums in i64, mean in f32 */
	Scalar row[4] = {I(INT32_MAX), I(INT32_MAX), I(INT32_MAX), I(-1)}, out;
	ck_assert(eval_reduce(OP_SUM, FZ_I64, FZ_I32, row, 4, &out));
	ck_assert_int_eq(out.i, 3LL * INT32_MAX - 1);
	ck_assert(eval_reduce(OP_MEAN, FZ_F32, FZ_I32, (Scalar[]){I(1), I(2)}, 2, &out));
	ck_same(out.f, 1.5);
	ck_assert(eval_reduce(OP_MEAN, FZ_F32, FZ_I32, (Scalar[]){I(1), I(1), I(2)}, 3, &out));
	ck_same(out.f, (double)(4.0f / 3.0f));
	ck_assert(eval_reduce(OP_MEAN, FZ_F32, FZ_I64, NULL, 0, &out));
	ck_same(out.f, NAN);
	ck_assert(eval_reduce(OP_SUM, FZ_I64, FZ_I64, (Scalar[]){I(INT64_MAX), I(1)}, 2, &out));
	ck_assert_int_eq(out.i, INT64_MIN);
	ck_assert(eval_reduce(OP_MAX, FZ_I32, FZ_I32, (Scalar[]){I(-3), I(9), I(2)}, 3, &out));
	ck_assert_int_eq(out.i, 9);
	ck_assert(eval_reduce(OP_MIN, FZ_I64, FZ_I64, (Scalar[]){I(-3), I(9), I(INT64_MIN)}, 3, &out));
	ck_assert_int_eq(out.i, INT64_MIN);
	/* bool: sum counts, max is any, min is all */
	ck_assert(eval_reduce(OP_SUM, FZ_I64, FZ_BOOL, (Scalar[]){I(1), I(0), I(1)}, 3, &out));
	ck_assert_int_eq(out.i, 2);
	ck_assert(eval_reduce(OP_MAX, FZ_BOOL, FZ_BOOL, (Scalar[]){I(0), I(1), I(0)}, 3, &out));
	ck_assert_int_eq(out.i, 1);
	ck_assert(eval_reduce(OP_MAX, FZ_BOOL, FZ_BOOL, (Scalar[]){I(0), I(0)}, 2, &out));
	ck_assert_int_eq(out.i, 0);
	ck_assert(eval_reduce(OP_MIN, FZ_BOOL, FZ_BOOL, (Scalar[]){I(1), I(0)}, 2, &out));
	ck_assert_int_eq(out.i, 0);
}
END_TEST

START_TEST(select_and_logic)
{
	ck_same(op_value(OP_WHERE, FZ_F32, FZ_F32, (Scalar[]){I(1), F(2), F(3)}).f, 2.0);
	ck_same(op_value(OP_WHERE, FZ_F32, FZ_F32, (Scalar[]){I(0), F(2), F(NAN)}).f, NAN);
	ck_assert_int_eq(op_value(OP_WHERE, FZ_I64, FZ_I64, (Scalar[]){I(0), I(2), I(-3)}).i, -3);
	ck_assert_int_eq(op_value(OP_AND, FZ_BOOL, FZ_BOOL, (Scalar[]){I(1), I(0)}).i, 0);
	ck_assert_int_eq(op_value(OP_OR, FZ_BOOL, FZ_BOOL, (Scalar[]){I(1), I(0)}).i, 1);
	ck_assert_int_eq(op_value(OP_NOT, FZ_BOOL, FZ_BOOL, (Scalar[]){I(0)}).i, 1);
	ck_assert_int_eq(op_value(OP_LT, FZ_BOOL, FZ_I64, (Scalar[]){I(INT64_MIN), I(0)}).i, 1);
	ck_assert_int_eq(op_value(OP_EQ, FZ_BOOL, FZ_BOOL, (Scalar[]){I(1), I(1)}).i, 1);
	ck_same(op_value(OP_CAST, FZ_F16, FZ_F32, (Scalar[]){F(1.0 + 0x1p-11)}).f, 1.0);
	ck_same(op_value(OP_NEG, FZ_F32, FZ_F32, (Scalar[]){F(0.0)}).f, -0.0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eval");
	TCase *tc = tcase_create("eval");
	tcase_add_test(tc, unary_f64_matches_libm);
	tcase_add_test(tc, unary_f32_matches_libm);
	tcase_add_test(tc, f32_results_are_floats);
	tcase_add_test(tc, known_values);
	tcase_add_test(tc, round_half_even);
	tcase_add_test(tc, nan_propagation);
	tcase_add_test(tc, integer_division);
	tcase_add_test(tc, integer_wraparound);
	tcase_add_test(tc, integer_pow);
	tcase_add_test(tc, float_to_int_casts);
	tcase_add_test(tc, int_casts);
	tcase_add_test(tc, half_rounding);
	tcase_add_test(tc, normalize_and_storage);
	tcase_add_test(tc, reductions);
	tcase_add_test(tc, select_and_logic);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
