/*
 * eval.c: the scalar semantics of every op (see eval.h for the choices).
 *
 * Float ops are written once, as a macro over the compute type, with
 * <tgmath.h> picking expf for float and exp for double, so f32 and f64 follow
 * the same formulas and differ only in precision. Integer ops compute in
 * uint64_t, which wraps without undefined behaviour, and narrow to i32 at the
 * end. Conversions to the half types round exactly once: from f64 through a
 * round-to-odd f32, from integers through a 24-bit value with a sticky bit,
 * so no value is rounded twice.
 */
#include "ir/eval.h"

#include <float.h>
#include <string.h>
#include <tgmath.h>

/* ---- integers ------------------------------------------------------------------- */

static int64_t wrap_int(fz_dtype t, uint64_t v)
{
	if (t == FZ_I32)
		return (int64_t)(int32_t)(uint32_t)v;
	if (t == FZ_BOOL)
		return v != 0;
	return (int64_t)v;
}

/* Exact power, wrapping; negative exponents give 0 unless |base| is 1. */
static uint64_t int_pow(int64_t base, int64_t e)
{
	if (e < 0)
		return base == 1 ? 1 : base == -1 ? ((e & 1) ? UINT64_MAX : 1) : 0;
	uint64_t r = 1, x = (uint64_t)base;
	while (e) {
		if (e & 1)
			r *= x;
		x *= x;
		e >>= 1;
	}
	return r;
}

static Scalar int_op(Op op, fz_dtype t, const Scalar *v)
{
	int64_t a = v[0].i, b = ir_ops[op].arity > 1 ? v[1].i : 0;
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	Scalar r;
	switch (op) {
	case OP_NEG: r.i = wrap_int(t, 0 - ua); break;
	case OP_ADD: r.i = wrap_int(t, ua + ub); break;
	case OP_SUB: r.i = wrap_int(t, ua - ub); break;
	case OP_MUL: r.i = wrap_int(t, ua * ub); break;
	case OP_DIV:
		/* by zero: 0, never a trap; INT_MIN / -1 wraps to INT_MIN */
		r.i = b == 0 ? 0 : (b == -1 ? wrap_int(t, 0 - ua) : a / b);
		break;
	case OP_MOD: r.i = (b == 0 || b == -1) ? 0 : a % b; break;
	case OP_MINIMUM: r.i = a < b ? a : b; break;
	case OP_MAXIMUM: r.i = a > b ? a : b; break;
	case OP_CLAMP: {
		int64_t lo = v[1].i, hi = v[2].i;
		int64_t x = a > lo ? a : lo;
		r.i = x < hi ? x : hi;
		break;
	}
	case OP_POW: r.i = wrap_int(t, int_pow(a, b)); break;
	case OP_ABS: r.i = a < 0 ? wrap_int(t, 0 - ua) : a; break;
	case OP_ISNAN:
	case OP_ISINF: r.i = 0; break;
	default: r.i = 0; break;
	}
	return r;
}

/* ---- floats ------------------------------------------------------------------------ */

/* One definition of the float ops for both compute types: T is float or
 * double, and the tgmath calls resolve to the matching libm function. */
#define FLOAT_OP(NAME, T)                                                                   \
	static T NAME(Op op, const T *v)                                                        \
	{                                                                                       \
		T x = v[0], y = ir_ops[op].arity > 1 ? v[1] : 0;                                    \
		switch (op) {                                                                       \
		case OP_NEG: return -x;                                                             \
		case OP_ADD: return x + y;                                                          \
		case OP_SUB: return x - y;                                                          \
		case OP_MUL: return x * y;                                                          \
		case OP_DIV: return x / y;                                                          \
		case OP_MOD: return fmod(x, y);                                                     \
		case OP_MINIMUM: return isnan(x) ? x : isnan(y) ? y : (x < y ? x : y);              \
		case OP_MAXIMUM: return isnan(x) ? x : isnan(y) ? y : (x > y ? x : y);              \
		case OP_CLAMP: {                                                                    \
			T lo = v[1], hi = v[2];                                                         \
			T m = isnan(x) ? x : isnan(lo) ? lo : (x > lo ? x : lo);                        \
			return isnan(m) ? m : isnan(hi) ? hi : (m < hi ? m : hi);                       \
		}                                                                                   \
		case OP_POW: return pow(x, y);                                                      \
		case OP_ABS: return fabs(x);                                                        \
		case OP_EXP: return exp(x);                                                         \
		case OP_EXP2: return exp2(x);                                                       \
		case OP_LOG: return log(x);                                                         \
		case OP_LOG2: return log2(x);                                                       \
		case OP_LOG1P: return log1p(x);                                                     \
		case OP_EXPM1: return expm1(x);                                                     \
		case OP_SQRT: return sqrt(x);                                                       \
		case OP_RSQRT: return (T)1 / sqrt(x);                                               \
		case OP_SIN: return sin(x);                                                         \
		case OP_COS: return cos(x);                                                         \
		case OP_TANH: return tanh(x);                                                       \
		case OP_ERF: return erf(x);                                                         \
		case OP_SIGMOID: return (T)1 / ((T)1 + exp(-x));                                    \
		case OP_RELU: return isnan(x) ? x : (x > 0 ? x : (T)0);                             \
		case OP_SILU: return x * ((T)1 / ((T)1 + exp(-x)));                                 \
		case OP_GELU: return (T)0.5 * x * ((T)1 + erf(x / (T)1.41421356237309504880));      \
		case OP_GELU_TANH:                                                                  \
			return (T)0.5 * x *                                                             \
			       ((T)1 + tanh((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))); \
		case OP_FLOOR: return floor(x);                                                     \
		case OP_CEIL: return ceil(x);                                                       \
		case OP_ROUND: return nearbyint(x);                                                 \
		default: return 0;                                                                  \
		}                                                                                   \
	}

FLOAT_OP(float_op_f32, float)
FLOAT_OP(float_op_f64, double)

static bool float_compare(Op op, double a, double b)
{
	switch (op) {
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	case OP_LT: return a < b;
	case OP_LE: return a <= b;
	case OP_GT: return a > b;
	case OP_GE: return a >= b;
	default: return false;
	}
}

static bool int_compare(Op op, int64_t a, int64_t b)
{
	switch (op) {
	case OP_EQ: return a == b;
	case OP_NE: return a != b;
	case OP_LT: return a < b;
	case OP_LE: return a <= b;
	case OP_GT: return a > b;
	case OP_GE: return a >= b;
	default: return false;
	}
}

static Scalar float_arith(Op op, fz_dtype operand, const Scalar *args)
{
	int n = ir_ops[op].arity;
	Scalar r;
	if (dtype_compute(operand) == FZ_F64) {
		double v[3] = {0, 0, 0};
		for (int k = 0; k < n; k++)
			v[k] = args[k].f;
		r.f = float_op_f64(op, v);
	} else {
		float v[3] = {0, 0, 0};
		for (int k = 0; k < n; k++)
			v[k] = (float)args[k].f;
		r.f = float_op_f32(op, v);
	}
	return r;
}

static Scalar math_op(Op op, fz_dtype operand, const Scalar *args)
{
	Scalar r;
	if (!dtype_is_float(operand)) {
		if (op == OP_ABS || op == OP_ISNAN || op == OP_ISINF)
			return int_op(op, operand, args);
		/* the IR converts integers to f32 first; stay correct if it did not */
		Scalar x = eval_cast(operand, FZ_F32, args[0]);
		return float_arith(op, FZ_F32, &x);
	}
	if (op == OP_ISNAN || op == OP_ISINF) {
		double x = args[0].f;
		r.i = op == OP_ISNAN ? isnan(x) != 0 : isinf(x) != 0;
		return r;
	}
	return float_arith(op, operand, args);
}

Scalar eval_op(Op op, fz_dtype result, fz_dtype operand, const Scalar *args)
{
	Scalar r = {.i = 0};
	switch (ir_ops[op].cls) {
	case OC_ARITH:
		return dtype_is_float(operand) ? float_arith(op, operand, args) : int_op(op, operand, args);
	case OC_COMPARE:
		r.i = dtype_is_float(operand) ? float_compare(op, args[0].f, args[1].f)
		                              : int_compare(op, args[0].i, args[1].i);
		return r;
	case OC_LOGIC:
		if (op == OP_NOT)
			r.i = !args[0].i;
		else if (op == OP_AND)
			r.i = args[0].i && args[1].i;
		else
			r.i = args[0].i || args[1].i;
		return r;
	case OC_SELECT: return args[0].i ? args[1] : args[2];
	case OC_CAST: return eval_cast(operand, result, args[0]);
	case OC_MATH: return math_op(op, operand, args);
	case OC_LEAF:
	case OC_REDUCE: break;
	}
	return r;
}

/* ---- conversions ------------------------------------------------------------------------ */

/* Float to integer as CUDA's cvt.rzi: truncate, saturate, NaN -> 0. */
static int64_t float_to_int(fz_dtype to, double x)
{
	if (isnan(x))
		return 0;
	if (to == FZ_I32) {
		if (x >= 2147483648.0)
			return INT32_MAX;
		if (x <= -2147483649.0)
			return INT32_MIN;
		return (int64_t)x;
	}
	if (x >= 9223372036854775808.0)
		return INT64_MAX;
	if (x < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)x;
}

/* d as a float rounded to odd: exact, or the neighbour with an odd last bit.
 * Rounding that to fewer than 23 bits equals rounding d directly. */
static float f64_to_f32_odd(double d)
{
	float f = (float)d;
	if (isnan(d) || (double)f == d)
		return f;
	if (isinf(f)) /* d is finite: past FLT_MAX but it must stay finite here */
		f = d > 0 ? FLT_MAX : -FLT_MAX;
	uint32_t u;
	memcpy(&u, &f, 4);
	if (!(u & 1))
		f = nextafterf(f, (float)(d > (double)f ? INFINITY : -INFINITY));
	return f;
}

/* An integer as a float with a sticky bit for the bits below the 24 kept
 * (so rounding it to a half type is a single rounding). */
static float int_to_f32_sticky(int64_t v)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int shift = 0;
	while (m >= (1u << 24)) {
		m = (m >> 1) | (m & 1);
		shift++;
	}
	float f = ldexpf((float)m, shift);
	return v < 0 ? -f : f;
}

Scalar eval_cast(fz_dtype from, fz_dtype to, Scalar v)
{
	Scalar r;
	if (to == FZ_BOOL) {
		r.i = dtype_is_float(from) ? v.f != 0 : v.i != 0;
	} else if (!dtype_is_float(to)) {
		r.i = dtype_is_float(from) ? float_to_int(to, v.f) : wrap_int(to, (uint64_t)v.i);
	} else if (to == FZ_F64) {
		r.f = dtype_is_float(from) ? v.f : (double)v.i;
	} else if (to == FZ_F32) {
		r.f = dtype_is_float(from) ? (float)v.f : (float)v.i;
	} else { /* f16, bf16: one rounding */
		float f;
		if (!dtype_is_float(from))
			f = int_to_f32_sticky(v.i);
		else if (from == FZ_F64)
			f = f64_to_f32_odd(v.f);
		else
			f = (float)v.f;
		r.f = round_to_half(to, f);
	}
	return r;
}

Scalar eval_normalize(fz_dtype t, Scalar v)
{
	if (dtype_is_float(t)) {
		if (t != FZ_F64)
			v.f = (float)v.f;
	} else {
		v.i = wrap_int(t, (uint64_t)v.i);
	}
	return v;
}

/* ---- storage ---------------------------------------------------------------------------- */

Scalar eval_load(fz_dtype t, const void *data, int64_t i)
{
	const unsigned char *p = (const unsigned char *)data + (size_t)i * fz_dtype_size(t);
	Scalar r = {.i = 0};
	switch (t) {
	case FZ_BOOL: r.i = *p != 0; break;
	case FZ_I32: { int32_t x; memcpy(&x, p, 4); r.i = x; break; }
	case FZ_I64: memcpy(&r.i, p, 8); break;
	case FZ_F16: { uint16_t h; memcpy(&h, p, 2); r.f = f16_bits_to_f32(h); break; }
	case FZ_BF16: { uint16_t h; memcpy(&h, p, 2); r.f = bf16_bits_to_f32(h); break; }
	case FZ_F32: { float x; memcpy(&x, p, 4); r.f = x; break; }
	case FZ_F64: memcpy(&r.f, p, 8); break;
	default: break;
	}
	return r;
}

void eval_store(fz_dtype t, void *data, int64_t i, Scalar v)
{
	unsigned char *p = (unsigned char *)data + (size_t)i * fz_dtype_size(t);
	switch (t) {
	case FZ_BOOL: *p = v.i != 0; break;
	case FZ_I32: { int32_t x = (int32_t)wrap_int(FZ_I32, (uint64_t)v.i); memcpy(p, &x, 4); break; }
	case FZ_I64: memcpy(p, &v.i, 8); break;
	case FZ_F16: { uint16_t h = f32_to_f16_bits((float)v.f); memcpy(p, &h, 2); break; }
	case FZ_BF16: { uint16_t h = f32_to_bf16_bits((float)v.f); memcpy(p, &h, 2); break; }
	case FZ_F32: { float x = (float)v.f; memcpy(p, &x, 4); break; }
	case FZ_F64: memcpy(p, &v.f, 8); break;
	default: break;
	}
}

/* ---- reductions ------------------------------------------------------------------------- */

void eval_acc_init(EvalAcc *acc, Op op, fz_dtype operand)
{
	memset(acc, 0, sizeof *acc);
	acc->op = op;
	acc->operand = operand;
}

void eval_acc_add(EvalAcc *acc, Scalar v)
{
	bool fl = dtype_is_float(acc->operand);
	if (acc->op == OP_SUM || acc->op == OP_MEAN) {
		if (!fl) {
			acc->isum += (uint64_t)v.i;
		} else { /* Neumaier's compensated sum */
			double s = acc->sum, t = s + v.f;
			acc->comp += fabs(s) >= fabs(v.f) ? (s - t) + v.f : (v.f - t) + s;
			acc->sum = t;
		}
	} else if (acc->n == 0) {
		acc->best = v;
	} else if (fl) {
		double b = acc->best.f;
		bool take = acc->op == OP_MAX ? v.f > b : v.f < b;
		if (!isnan(b) && (isnan(v.f) || take))
			acc->best = v;
	} else {
		bool take = acc->op == OP_MAX ? v.i > acc->best.i : v.i < acc->best.i;
		if (take)
			acc->best = v;
	}
	acc->n++;
}

static double acc_float_sum(const EvalAcc *acc)
{
	/* with infinities or NaN the compensation is meaningless */
	return isfinite(acc->sum) ? acc->sum + acc->comp : acc->sum;
}

bool eval_acc_result(const EvalAcc *acc, fz_dtype result, Scalar *out)
{
	bool fl = dtype_is_float(acc->operand);
	Scalar r = {.i = 0};
	switch (acc->op) {
	case OP_SUM:
		if (fl)
			r.f = acc_float_sum(acc);
		else
			r.i = (int64_t)acc->isum;
		break;
	case OP_MEAN:
		if (acc->n == 0)
			r.f = NAN;
		else if (fl)
			r.f = acc_float_sum(acc) / (double)acc->n;
		else /* f32(sum_i64) / N, in f32 */
			r.f = (float)(int64_t)acc->isum / (float)acc->n;
		break;
	case OP_MAX:
	case OP_MIN:
		if (acc->n == 0)
			return false;
		r = acc->best;
		break;
	default: break;
	}
	*out = eval_normalize(result, r);
	return true;
}

bool eval_reduce(Op op, fz_dtype result, fz_dtype operand, const Scalar *row, int64_t n, Scalar *out)
{
	EvalAcc acc;
	eval_acc_init(&acc, op, operand);
	for (int64_t k = 0; k < n; k++)
		eval_acc_add(&acc, row[k]);
	return eval_acc_result(&acc, result, out);
}
