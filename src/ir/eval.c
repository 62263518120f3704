/*
 * eval.c: the scalar semantics of every op (see eval.h for the choices).
 *
 * Elementwise ops take their formulas from sem.def, compiled here once per
 * compute type: as C with <tgmath.h> for float and double, so f32 and f64
 * follow the same text and differ only in precision (expf against exp), and
 * for int32 and int64 with their unsigned types, so integers wrap without
 * undefined behaviour. An op with no text for its operand's dtype is
 * reported (eval_op returns false), never computed as 0. Conversions to the
 * half types round exactly once: from f64 through a round-to-odd f32, from
 * integers through a 24-bit value with a sticky bit, so no value is rounded
 * twice.
 */
#include "ir/eval.h"

#include <float.h>
#include <string.h>
#include <tgmath.h>

static int64_t wrap_int(fz_dtype t, uint64_t v)
{
	if (t == FZ_I32)
		return (int64_t)(int32_t)(uint32_t)v;
	if (t == FZ_BOOL)
		return v != 0;
	return (int64_t)v;
}

/* ---- which texts sem.def has ----------------------------------------------------- */

#define SEM_NONE(op, ...)
#define SEM_MARK(op, ...) [op] = true,

#define FLOAT SEM_MARK
#define FLOAT_FN SEM_MARK
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_NONE
#define BOOL_FN SEM_NONE
#define ALL SEM_MARK
static const bool has_float[OP_COUNT] = {
#include "ir/sem.def"
};
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#define FLOAT SEM_NONE
#define FLOAT_FN SEM_NONE
#define INT SEM_MARK
#define INT_FN SEM_MARK
static const bool has_int[OP_COUNT] = {
#include "ir/sem.def"
};
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_MARK
#define BOOL_FN SEM_MARK
static const bool has_bool[OP_COUNT] = {
#include "ir/sem.def"
};
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#undef ALL
#undef SEM_NONE
#undef SEM_MARK

/* ---- the texts, as C ---------------------------------------------------------------- */

#define SEM_FN static
#define SEM_I32 int32_t
#define SEM_U32 uint32_t
#define SEM_I64 int64_t
#define SEM_U64 uint64_t
#define SEM_NAN NAN
#include "ir/sem_fns.h"

/* An op of sem.def on values of the operand's compute type. A float op
 * gives a float or a bool, an integer op an integer or a bool, a bool op a
 * bool; anything else is not a result the texts can give. */
static bool eval_sem(Op op, fz_dtype result, fz_dtype operand, const Scalar *v, Scalar *out)
{
	if (dtype_is_float(operand)) {
		if (!has_float[op] || !(dtype_is_float(result) || result == FZ_BOOL))
			return false;
		double r = dtype_compute(operand) == FZ_F64 ? sem_f64(op, v[0].f, v[1].f, v[2].f)
		                                            : (double)sem_f32(op, (float)v[0].f, (float)v[1].f, (float)v[2].f);
		if (result == FZ_BOOL)
			out->i = r != 0;
		else
			out->f = r;
		return true;
	}
	if (operand == FZ_BOOL) {
		if (!has_bool[op] || result != FZ_BOOL)
			return false;
		out->i = sem_bool(op, v[0].i != 0, v[1].i != 0, v[2].i != 0);
		return true;
	}
	if (!has_int[op] || !(dtype_is_int(result) || result == FZ_BOOL))
		return false;
	int64_t r = operand == FZ_I32 ? sem_i32(op, (int32_t)v[0].i, (int32_t)v[1].i, (int32_t)v[2].i)
	                              : sem_i64(op, v[0].i, v[1].i, v[2].i);
	out->i = result == FZ_BOOL ? r != 0 : r;
	return true;
}

bool eval_op(Op op, fz_dtype result, fz_dtype operand, const Scalar *args, Scalar *out)
{
	Scalar v[3] = {{.i = 0}, {.i = 0}, {.i = 0}};
	for (int k = 0; k < ir_ops[op].arity && k < 3; k++)
		v[k] = args[k];
	switch (ir_ops[op].cls) {
	case OC_SELECT: *out = v[0].i ? v[1] : v[2]; return true;
	case OC_CAST: *out = eval_cast(operand, result, v[0]); return true;
	case OC_ARITH:
	case OC_COMPARE:
	case OC_LOGIC:
	case OC_MATH: return eval_sem(op, result, operand, v, out);
	case OC_LEAF:
	case OC_REDUCE: break;
	}
	return false;
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
	default: return false; /* not a reduction */
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
