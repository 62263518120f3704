/*
 * progen_expr.c: abstract values and expression generators of progen.
 *
 * Every node carries an abstract value (PAttr, progen_impl.h): dtype with the
 * language's weak literals, shape within a universe (the broadcast shape the
 * tensors of a group of statements share), an interval for finite inputs, a
 * mixed error bound |computed - exact| <= abs + rel * |exact| in the per-op
 * model (every result stored in its dtype; math functions a few ulps off),
 * and whether it is exact (bit-identical in the interpreter, on the GPU in
 * both modes, and in the f64 shadow). One function, op_attr, holds the rule
 * of every op; a node whose rule fails (a divisor that may be zero, a half
 * value near overflow, an error bound grown useless) is rejected, and the
 * generators retry other choices, falling back to an input, always valid.
 *
 * The error bound is worst-case except sums, whose accumulation error is
 * taken as (16 + 2 sqrt(n)) ulps of the accumulator (tree plus sequential
 * partial sums; rounding errors are not all of one sign). Sign-definite sums
 * keep relative bounds, so softmax over a million elements still gets a tight
 * relative tolerance.
 */
#include "progen_impl.h"

#include <math.h>
#include <string.h>

double pg_unit_of(fz_dtype t)
{
	switch (t) {
	case FZ_F16: return ldexp(1, -11);
	case FZ_BF16: return ldexp(1, -8);
	case FZ_F32: return ldexp(1, -24);
	case FZ_F64: return ldexp(1, -53);
	default: return 0;
	}
}

/* Largest integer magnitude a float dtype holds exactly (with all below). */
static double exact_int_limit(fz_dtype t)
{
	switch (t) {
	case FZ_F16: return 2048;
	case FZ_BF16: return 256;
	case FZ_F32: return 16777216.0;
	case FZ_F64: return 9007199254740992.0;
	default: return 1e300;
	}
}

/* Largest magnitude a value of dtype t may reach: far from half overflow
 * (65504) even after rounding, and from integer wrap-around. */
static double mag_limit(fz_dtype t)
{
	switch (t) {
	case FZ_F16: case FZ_BF16: return 4000;
	case FZ_F32: return 1e8;
	case FZ_F64: return 1e12;
	case FZ_I32: return 1e9;
	case FZ_I64: return 1e17;
	default: return 1;
	}
}

double pg_mag(const PAttr *x) { return fmax(fabs(x->lo), fabs(x->hi)); }
/* The error bound as one absolute number over the whole interval. */
static double tot(const PAttr *x) { return x->abs + x->rel * pg_mag(x); }
static bool is_float(const PAttr *x) { return dtype_is_float(x->dt); }

/* A dyadic number with few bits: exact in every float dtype, so a literal
 * with this value is the same number everywhere. */
static bool is_dyadic(double v)
{
	if (v != v || fabs(v) > 256)
		return false;
	double s = v * 256;
	return s == floor(s) && fabs(s) < 65536 && (fabs(v) >= 1.0 / 256 || v == 0);
}

/* The language's weak literals: an integer literal takes the other dtype
 * (i32 next to bool), a float literal the other dtype if float, else f32. */
static fz_dtype lit_join(fz_dtype strong, fz_dtype lit)
{
	if (lit == FZ_I32)
		return strong == FZ_BOOL ? FZ_I32 : strong;
	return dtype_is_float(strong) ? strong : FZ_F32;
}

static fz_dtype join2(const PAttr *x, const PAttr *y, bool *weak)
{
	*weak = false;
	if (x->weak && y->weak) {
		*weak = true;
		return (x->dt == FZ_F32 || y->dt == FZ_F32) ? FZ_F32 : FZ_I32;
	}
	if (x->weak)
		return lit_join(y->dt, x->dt);
	if (y->weak)
		return lit_join(x->dt, y->dt);
	return dtype_promote(x->dt, y->dt);
}

/* An operand converted to the op's operand dtype t. */
static PAttr conv(PAttr x, fz_dtype t)
{
	if (!x.weak && x.dt != t && dtype_is_float(t) && !dtype_is_float(x.dt) && pg_mag(&x) > exact_int_limit(t)) {
		x.rel += pg_unit_of(t);
		x.det = false;
	}
	if (dtype_is_float(t) && t != x.dt && !x.weak && dtype_is_half(t))
		x.ulow = fmax(x.ulow, pg_unit_of(t));
	x.dt = t;
	x.weak = false;
	return x;
}

/* Shapes: both in one universe (or scalars); false on a mismatch. */
static bool bcast(PAttr *r, const PAttr *x, const PAttr *y)
{
	if (x->uni >= 0 && y->uni >= 0 && x->uni != y->uni)
		return false;
	r->uni = x->uni >= 0 ? x->uni : y->uni;
	r->rank = x->rank > y->rank ? x->rank : y->rank;
	r->mask = x->mask | y->mask;
	return true;
}

/* Rounding of a result of dtype t and magnitude m by an op `ulps` ulps off
 * in its compute type, then stored (per-op mode stores every result). */
static double rnd_rel(fz_dtype t, double ulps)
{
	if (t == FZ_F64)
		return ulps * pg_unit_of(FZ_F64);
	if (!dtype_is_float(t))
		return 0;
	return ulps * pg_unit_of(FZ_F32) + (dtype_is_half(t) ? pg_unit_of(t) : 0);
}

static bool pow2(double v)
{
	int e;
	return v != 0 && fabs(frexp(v, &e)) == 0.5;
}

/* Interval product. */
static void imul(double alo, double ahi, double blo, double bhi, double *lo, double *hi)
{
	double p[4] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
	*lo = *hi = p[0];
	for (int i = 1; i < 4; i++) {
		*lo = fmin(*lo, p[i]);
		*hi = fmax(*hi, p[i]);
	}
}

/* ---- one rule per op ------------------------------------------------------------ */


static double silu_f(double x) { return x / (1 + exp(-x)); }
static double gelu_f(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelut_f(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

static double softplus_f(double x) { return x > 20 ? x : log1p(exp(x)); }
static double mish_f(double x) { return x * tanh(softplus_f(x)); }
static double hardsigmoid_f(double x) { return fmin(fmax(x + 3, 0), 6) / 6; }
static double hardswish_f(double x) { return x * hardsigmoid_f(x); }
static double act_f(Op op, double x)
{
	return op == OP_SOFTPLUS ? softplus_f(x) : op == OP_ELU ? (x > 0 ? x : expm1(x)) : hardsigmoid_f(x);
}

/* Range of a function decreasing then increasing around its minimum at xm. */
static void vshape(double (*f)(double), double xm, double lo, double hi, double *rlo, double *rhi)
{
	double a = f(lo), b = f(hi);
	*rhi = fmax(a, b);
	*rlo = (xm > lo && xm < hi) ? f(xm) : fmin(a, b);
}

static void trig_range(bool is_sin, double lo, double hi, double *rlo, double *rhi)
{
	double f_lo = is_sin ? sin(lo) : cos(lo), f_hi = is_sin ? sin(hi) : cos(hi);
	*rlo = fmin(f_lo, f_hi);
	*rhi = fmax(f_lo, f_hi);
	if (hi - lo >= 2 * M_PI) {
		*rlo = -1, *rhi = 1;
		return;
	}
	double shift = is_sin ? M_PI / 2 : 0; /* maxima at shift + 2k pi */
	for (double k = floor((lo - shift) / M_PI) - 1; k <= ceil((hi - shift) / M_PI) + 1; k++) {
		double x = shift + k * M_PI;
		if (x > lo && x < hi) {
			if (((long long)k % 2 + 2) % 2 == 0)
				*rhi = 1;
			else
				*rlo = -1;
		}
	}
}

/* The ulps of f32 a math function is off: a few, but exp, sigmoid and silu
 * of halves are the GPU's approximations (codegen's cg_pre_halfmath: exp2 at
 * 2 + 1.2 |x| ulps, then a division at 2; within the 4 + 1.2 |x| here). */
static double math_ulps(Op op, fz_dtype dt, double m)
{
	bool approx = dtype_is_half(dt) && (op == OP_EXP || op == OP_SIGMOID || op == OP_SILU);
	return approx ? 4 + 1.2 * m : 4;
}

/* OC_MATH of a float argument: the result interval and error. */
static bool math_attr(Op op, const PAttr *x, PAttr *r)
{
	double lo = x->lo, hi = x->hi, t = tot(x), m = pg_mag(x);
	fz_dtype dt = r->dt;
	r->abs = 0, r->rel = rnd_rel(dt, math_ulps(op, dt, m));
	switch (op) {
	case OP_EXP: case OP_EXP2: case OP_EXPM1: {
		double k = op == OP_EXP2 ? M_LN2 : 1, lim = dtype_is_half(dt) ? 7 : 12;
		if (hi * k > lim || lo * k < -80)
			return false;
		r->lo = exp(lo * k), r->hi = exp(hi * k);
		if (op == OP_EXPM1) {
			r->lo -= 1, r->hi -= 1;
			r->abs = exp(hi * k + t * k) * t * k;
		} else {
			r->rel += expm1(t * k);
		}
		return true;
	}
	case OP_LOG: case OP_LOG2: {
		double rl = x->rel + x->abs / fmax(lo, 1e-300);
		if (lo < 0.05 || rl > 0.1)
			return false;
		double k = op == OP_LOG2 ? 1 / M_LN2 : 1;
		r->lo = log(lo) * k, r->hi = log(hi) * k;
		r->abs = -log1p(-rl) * k;
		return true;
	}
	case OP_LOG1P:
		if (lo - t < -0.8)
			return false;
		r->lo = log1p(lo), r->hi = log1p(hi);
		r->abs = t / (1 + lo - t);
		return true;
	case OP_SQRT: case OP_RSQRT: {
		double rl = x->rel + x->abs / fmax(lo, 1e-300);
		if (lo < 0.01 || rl > 0.1)
			return false;
		r->lo = sqrt(lo), r->hi = sqrt(hi);
		if (op == OP_RSQRT)
			r->lo = 1 / sqrt(hi), r->hi = 1 / sqrt(lo);
		r->rel += 0.5 * rl / (1 - rl);
		return true;
	}
	case OP_SIN: case OP_COS:
		if (m > 64)
			return false;
		trig_range(op == OP_SIN, lo, hi, &r->lo, &r->hi);
		r->abs = t + rnd_rel(dt, 4);
		r->rel = 0;
		return true;
	case OP_TAN: /* kept below 1.2, where tan' = 1 + tan^2 < 7.6 */
		if (m + t > 1.2)
			return false;
		r->lo = tan(lo), r->hi = tan(hi);
		r->abs = t * (1 + tan(m + t) * tan(m + t));
		return true;
	case OP_ATAN:
		r->lo = atan(lo), r->hi = atan(hi);
		r->abs = t;
		return true;
	case OP_ASIN: case OP_ACOS: /* kept within 0.9, where the slope is below 2.3 */
		if (m + t > 0.9)
			return false;
		r->lo = op == OP_ASIN ? asin(lo) : acos(hi), r->hi = op == OP_ASIN ? asin(hi) : acos(lo);
		r->abs = t / sqrt(1 - (m + t) * (m + t));
		return true;
	case OP_SINH: case OP_COSH:
		if (m > 5)
			return false;
		if (op == OP_SINH)
			r->lo = sinh(lo), r->hi = sinh(hi);
		else
			vshape(cosh, 0, lo, hi, &r->lo, &r->hi);
		r->abs = t * cosh(m + t);
		return true;
	case OP_RECIPROCAL: { /* as 1 / x: bounded away from zero */
		double my = lo > 0 ? lo : hi < 0 ? -hi : 0;
		double ry = x->rel + x->abs / fmax(my, 1e-300);
		if (my < 0.01 || ry > 0.1)
			return false;
		r->lo = 1 / hi, r->hi = 1 / lo;
		r->rel = ry / (1 - ry) + rnd_rel(dt, 1);
		return true;
	}
	case OP_SIGN: case OP_TRUNC: /* discontinuous: exact values only */
		if (!x->det)
			return false;
		r->lo = op == OP_SIGN ? (lo < 0 ? -1 : lo > 0 ? 1 : 0) : trunc(lo);
		r->hi = op == OP_SIGN ? (hi < 0 ? -1 : hi > 0 ? 1 : 0) : trunc(hi);
		r->abs = r->rel = 0;
		r->det = true;
		return true;
	case OP_SOFTPLUS: case OP_ELU: case OP_HARDSIGMOID: /* increasing, slope at most 1 */
		r->lo = act_f(op, lo), r->hi = act_f(op, hi);
		r->abs = t * (op == OP_HARDSIGMOID ? 1.0 / 6 : 1);
		return true;
	case OP_MISH: case OP_HARDSWISH: /* falling then rising, slope at most 1.5 */
		if (m > 30)
			return false;
		vshape(op == OP_MISH ? mish_f : hardswish_f, op == OP_MISH ? -1.1924 : -1.5, lo, hi, &r->lo, &r->hi);
		r->lo -= 1e-3;
		r->abs = 1.5 * t;
		return true;
	case OP_TANH: case OP_ERF:
		r->lo = op == OP_TANH ? tanh(lo) : erf(lo);
		r->hi = op == OP_TANH ? tanh(hi) : erf(hi);
		r->abs = x->abs * (op == OP_ERF ? 1.13 : 1);
		r->rel += x->rel;
		return true;
	case OP_SIGMOID:
		r->lo = 1 / (1 + exp(-lo)), r->hi = 1 / (1 + exp(-hi));
		r->rel += expm1(t);
		return true;
	case OP_SILU:
		vshape(silu_f, -1.2784645427610738, lo, hi, &r->lo, &r->hi);
		r->abs = x->abs * 1.1;
		r->rel += x->rel + expm1(t);
		return true;
	case OP_GELU: case OP_GELU_TANH:
		if (m > 30)
			return false;
		vshape(op == OP_GELU ? gelu_f : gelut_f, -0.7517915246, lo, hi, &r->lo, &r->hi);
		r->lo -= 1e-3;
		r->abs = 1.13 * t + 8 * rnd_rel(dt, 1) * m;
		return true;
	case OP_RELU:
		r->lo = fmax(lo, 0), r->hi = fmax(hi, 0);
		r->abs = x->abs, r->rel = x->rel;
		r->det = x->det;
		return true;
	case OP_ABS:
		r->lo = lo >= 0 ? lo : hi <= 0 ? -hi : 0;
		r->hi = m;
		r->abs = x->abs, r->rel = x->rel;
		r->det = x->det;
		return true;
	case OP_FLOOR: case OP_CEIL: case OP_ROUND:
		if (!x->det)
			return false;
		r->lo = floor(lo), r->hi = ceil(hi);
		r->abs = r->rel = 0;
		r->det = true;
		return true;
	default:
		return false;
	}
}

/* The float builtins of two arguments (operands converted). */
static bool math2_attr(Op op, const PAttr *a, const PAttr *b, PAttr *r)
{
	double ta = tot(a), tb = tot(b), ma = pg_mag(a), mb = pg_mag(b);
	r->abs = 0, r->rel = rnd_rel(r->dt, 4);
	switch (op) {
	case OP_ATAN2: { /* b bounded away from zero above: no branch cut */
		if (b->lo < 0.05 || tb > 0.1 * b->lo)
			return false;
		double c[4] = {atan2(a->lo, b->lo), atan2(a->lo, b->hi), atan2(a->hi, b->lo), atan2(a->hi, b->hi)};
		r->lo = fmin(fmin(c[0], c[1]), fmin(c[2], c[3])), r->hi = fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
		r->abs = (ta + tb) / (b->lo - tb);
		return true;
	}
	case OP_HYPOT: { /* 1-Lipschitz in each */
		double la = a->lo > 0 ? a->lo : a->hi < 0 ? -a->hi : 0, lb = b->lo > 0 ? b->lo : b->hi < 0 ? -b->hi : 0;
		r->lo = hypot(la, lb), r->hi = hypot(ma, mb);
		r->abs = ta + tb;
		return true;
	}
	case OP_LOGADDEXP: { /* increasing in both, the slopes sum to 1 */
		if (fmax(ma, mb) > 1e4)
			return false;
		r->lo = fmax(a->lo, b->lo) + log1p(exp(-fabs(a->lo - b->lo)));
		r->hi = fmax(a->hi, b->hi) + log1p(exp(-fabs(a->hi - b->hi)));
		r->abs = ta + tb + rnd_rel(r->dt, 4) * (fmax(ma, mb) + 1); /* max(a, b) + log1p(...) may cancel */
		return true;
	}
	case OP_LEAKY_RELU: { /* x above 0, x * slope below: continuous at 0 */
		double nlo = 0, nhi = 0;
		if (a->lo < 0)
			imul(a->lo, fmin(a->hi, 0), b->lo, b->hi, &nlo, &nhi);
		r->lo = fmin(fmax(a->lo, 0), nlo), r->hi = fmax(fmax(a->hi, 0), nhi);
		r->abs = ta * fmax(1, mb) + tb * ma;
		r->rel = rnd_rel(r->dt, 1);
		return true;
	}
	default:
		return false;
	}
}

/* OC_ARITH on floats (operands converted): interval and error. */
static bool arith_float(Op op, int n, const PAttr *x, PAttr *r)
{
	const PAttr *a = &x[0], *b = &x[1];
	double u = rnd_rel(r->dt, 1);
	switch (op) {
	case OP_NEG:
		r->lo = -a->hi, r->hi = -a->lo, r->abs = a->abs, r->rel = a->rel, r->det = a->det;
		return true;
	case OP_ADD: case OP_SUB: {
		double blo = op == OP_ADD ? b->lo : -b->hi, bhi = op == OP_ADD ? b->hi : -b->lo;
		r->lo = a->lo + blo, r->hi = a->hi + bhi;
		bool same = (a->lo >= 0 && blo >= 0) || (a->hi <= 0 && bhi <= 0);
		if (same)
			r->abs = a->abs + b->abs, r->rel = fmax(a->rel, b->rel) + u;
		else
			r->abs = tot(a) + tot(b), r->rel = u;
		return true;
	}
	case OP_MUL: {
		imul(a->lo, a->hi, b->lo, b->hi, &r->lo, &r->hi);
		r->rel = a->rel + b->rel + a->rel * b->rel + u;
		r->abs = a->abs * (pg_mag(b) * (1 + b->rel) + b->abs) + b->abs * pg_mag(a) * (1 + a->rel);
		/* times a power of two is exact (f32/f64: no underflow at our magnitudes) */
		bool p2 = (b->lo == b->hi && pow2(b->lo)) || (a->lo == a->hi && pow2(a->lo));
		if (p2 && a->det && b->det && (r->dt == FZ_F32 || r->dt == FZ_F64))
			r->det = true, r->abs = r->rel = 0;
		return true;
	}
	case OP_DIV: {
		double my = b->lo > 0 ? b->lo : b->hi < 0 ? -b->hi : 0;
		if (my < 0.01)
			return false;
		double ry = b->rel + b->abs / my;
		if (ry > 0.1)
			return false;
		imul(a->lo, a->hi, 1 / b->hi, 1 / b->lo, &r->lo, &r->hi);
		/* of halves, the GPU's approximate division: 2 ulps of f32 */
		r->rel = (a->rel + ry) / (1 - ry) + (dtype_is_half(r->dt) ? rnd_rel(r->dt, 3) : u);
		r->abs = a->abs / (my * (1 - ry));
		return true;
	}
	case OP_MOD: {
		if (!a->det || !b->det || a->nonfin || b->nonfin)
			return false;
		double m = fmin(pg_mag(a), pg_mag(b));
		r->lo = a->lo >= 0 ? 0 : -m, r->hi = a->hi <= 0 ? 0 : m;
		r->det = true;
		return true;
	}
	case OP_MINIMUM: case OP_MAXIMUM: case OP_CLAMP: {
		double lo = a->lo, hi = a->hi;
		bool mx = op != OP_MINIMUM;
		lo = mx ? fmax(lo, b->lo) : fmin(lo, b->lo);
		hi = mx ? fmax(hi, b->hi) : fmin(hi, b->hi);
		r->abs = fmax(a->abs, b->abs), r->rel = fmax(a->rel, b->rel), r->det = a->det && b->det;
		if (n == 3) {
			lo = fmin(lo, x[2].lo), hi = fmin(hi, x[2].hi);
			r->abs = fmax(r->abs, x[2].abs), r->rel = fmax(r->rel, x[2].rel), r->det &= x[2].det;
		}
		r->lo = lo, r->hi = hi;
		return true;
	}
	case OP_POW: {
		if (b->lo == b->hi && (b->lo == 2 || b->lo == 3) && b->det) {
			double n_ = b->lo;
			if (n_ == 2)
				r->lo = a->lo >= 0 ? a->lo * a->lo : a->hi <= 0 ? a->hi * a->hi : 0, r->hi = pg_mag(a) * pg_mag(a);
			else
				r->lo = a->lo * a->lo * a->lo, r->hi = a->hi * a->hi * a->hi;
			r->rel = pow(1 + a->rel, n_) - 1 + rnd_rel(r->dt, 4);
			r->abs = n_ * pow(pg_mag(a) + tot(a), n_ - 1) * a->abs;
			return true;
		}
		if (a->lo < 0.25 || a->hi > 16 || pg_mag(b) > 3)
			return false;
		double ra = a->rel + a->abs / a->lo, llo, lhi;
		if (ra > 0.1)
			return false;
		imul(b->lo, b->hi, log(a->lo), log(a->hi), &llo, &lhi);
		r->lo = exp(llo), r->hi = exp(lhi);
		double d = pg_mag(b) * -log1p(-ra) + tot(b) * fmax(fabs(log(a->lo)), fabs(log(a->hi)));
		r->rel = expm1(d) + rnd_rel(r->dt, 4);
		r->abs = 0;
		return true;
	}
	default:
		return false;
	}
}

/* Arithmetic on two bools is an error, minimum, maximum, clamp and & | ^ ~
 * are not; one bool promotes (b * x, b & i). */
static bool bool_arith_ok(Op op, int n, const PAttr *x, fz_dtype t)
{
	TypeRule rule = ir_ops[op].type;
	bool minmax = rule == TY_ORDER, bits = rule == TY_BITS || rule == TY_SHIFT;
	bool any = false;
	for (int i = 0; i < n; i++)
		any |= x[i].dt == FZ_BOOL && !x[i].weak;
	if (t == FZ_BOOL)
		return minmax || rule == TY_BITS;
	return !any || minmax || bits || op == OP_ADD || op == OP_SUB || op == OP_MUL;
}

/* The smallest power of two above every magnitude in [lo, hi]. */
static double pow2_above(double lo, double hi)
{
	double k = 1;
	while (k <= fmax(fabs(lo), fabs(hi)))
		k *= 2;
	return k;
}

/* & | ^ ~ << >> on integers (and & | ^ ~ on bools): exact. A shift count
 * may be any value, in range or not (see sem.def). */
static bool bits_int(Op op, const PAttr *a, const PAttr *b, PAttr *r)
{
	double w = r->dt == FZ_I64 ? 64 : 32, k = pow2_above(a->lo, a->hi);
	if (op != OP_BITNOT && op != OP_SHL && op != OP_SHR)
		k = fmax(k, pow2_above(b->lo, b->hi));
	bool nonneg = a->lo >= 0 && (op == OP_BITNOT || op == OP_SHL || op == OP_SHR || b->lo >= 0);
	switch (op) {
	case OP_BITNOT: r->lo = -a->hi - 1, r->hi = -a->lo - 1; return true;
	case OP_BITAND: r->lo = nonneg ? 0 : -k, r->hi = nonneg ? fmin(a->hi, b->hi) : k - 1; return true;
	case OP_BITOR: case OP_BITXOR: r->lo = nonneg ? 0 : -k, r->hi = k - 1; return true;
	case OP_SHL: case OP_SHR: {
		double clo = fmax(b->lo, 0), chi = fmin(b->hi, w - 1);
		r->lo = r->hi = 0;
		if (b->lo < 0 || b->hi > w - 1) /* out of range: 0, or the sign for >> */
			r->lo = op == OP_SHR && a->lo < 0 ? -1 : 0;
		if (clo <= chi) { /* x * 2^c, or floor(x / 2^c): the ends take the ends of c */
			int elo = (int)(a->lo < 0 ? chi : clo), ehi = (int)(a->hi > 0 ? chi : clo);
			if (op == OP_SHR)
				elo = -(int)(a->lo < 0 ? clo : chi), ehi = -(int)(a->hi > 0 ? clo : chi);
			r->lo = fmin(r->lo, floor(ldexp(a->lo, elo))), r->hi = fmax(r->hi, floor(ldexp(a->hi, ehi)));
		}
		return true;
	}
	default: return false;
	}
}

static bool fits_int(double v, fz_dtype t) { return fabs(v) <= mag_limit(t); }

/* OC_ARITH on integers: exact, but kept away from wrap-around. */
static bool arith_int(Op op, int n, const PAttr *x, PAttr *r)
{
	const PAttr *a = &x[0], *b = &x[1];
	double ma = pg_mag(a), mb = n > 1 ? pg_mag(b) : 0;
	r->det = true, r->abs = r->rel = 0;
	switch (op) {
	case OP_NEG: r->lo = -a->hi, r->hi = -a->lo; break;
	case OP_ADD: r->lo = a->lo + b->lo, r->hi = a->hi + b->hi; break;
	case OP_SUB: r->lo = a->lo - b->hi, r->hi = a->hi - b->lo; break;
	case OP_MUL: imul(a->lo, a->hi, b->lo, b->hi, &r->lo, &r->hi); break;
	case OP_DIV: r->lo = a->lo >= 0 && b->lo >= 0 ? 0 : -ma, r->hi = ma; break;
	case OP_MOD:
		r->lo = a->lo >= 0 ? 0 : -fmin(ma, mb), r->hi = a->hi <= 0 ? 0 : fmin(ma, mb);
		break;
	case OP_MINIMUM: r->lo = fmin(a->lo, b->lo), r->hi = fmin(a->hi, b->hi); break;
	case OP_MAXIMUM: r->lo = fmax(a->lo, b->lo), r->hi = fmax(a->hi, b->hi); break;
	case OP_CLAMP:
		r->lo = fmin(fmax(a->lo, b->lo), x[2].lo), r->hi = fmin(fmax(a->hi, b->hi), x[2].hi);
		break;
	case OP_POW: {
		if (b->hi > 4 || b->lo < -3 || ma > 100)
			return false;
		double p = pow(fmax(ma, 1), fmax(b->hi, 0));
		r->lo = -p, r->hi = p;
		if (a->lo >= 0)
			r->lo = 0;
		break;
	}
	default:
		if (r->dt == FZ_BOOL) { /* logical */
			r->lo = 0, r->hi = 1;
			return ir_ops[op].type == TY_BITS;
		}
		if (!bits_int(op, a, b, r))
			return false;
		break;
	}
	return r->dt == FZ_BOOL ? ir_ops[op].type == TY_ORDER
	                        : fits_int(r->lo, r->dt) && fits_int(r->hi, r->dt);
}

static bool cast_attr(fz_dtype to, const PAttr *x, PAttr *r)
{
	fz_dtype from = x->dt;
	*r = *x;
	r->dt = to, r->weak = false;
	if (dtype_is_float(to) && dtype_is_float(from)) {
		bool widen = from == to || to == FZ_F64 || (to == FZ_F32 && dtype_is_half(from));
		if (pg_mag(x) > mag_limit(to))
			return false;
		if (!widen) {
			r->det = false;
			r->rel += pg_unit_of(to);
			r->ulow = fmax(r->ulow, pg_unit_of(to));
		}
		return true;
	}
	if (dtype_is_float(to)) { /* from an integer or bool */
		if (pg_mag(x) > exact_int_limit(to))
			r->det = false, r->rel += pg_unit_of(to);
		return true;
	}
	if (to == FZ_BOOL) {
		if (!x->det)
			return false;
		r->lo = 0, r->hi = 1;
		return true;
	}
	if (dtype_is_float(from)) { /* float to integer: truncation, exact inputs only */
		if (!x->det || x->nonfin || pg_mag(x) > mag_limit(to))
			return false;
		r->lo = trunc(x->lo), r->hi = trunc(x->hi);
		return true;
	}
	return fits_int(x->lo, to) && fits_int(x->hi, to);
}

static bool reduce_attr(const G *g, Op op, const PAttr *x, PAttr *r)
{
	if (x->rank == 0 || x->weak || x->uni < 0)
		return false;
	const Uni *un = &g->uni[x->uni];
	int last = un->rank - 1;
	int64_t n = (x->mask >> last) & 1 ? pg_axis_size(g, x->uni, last) : 1;
	double nn = (double)n, m = pg_mag(x);
	*r = *x;
	r->mask &= ~(1u << last);
	r->row = n > r->row ? n : r->row;
	bool fl = is_float(x);
	if (op == OP_MAX || op == OP_MIN)
		return true;
	r->det = !fl && op == OP_SUM;
	if (op == OP_SUM)
		r->dt = fl ? x->dt : FZ_I64;
	else
		r->dt = fl ? x->dt : FZ_F32;
	if (op == OP_SUM) {
		r->lo = fmin(0, nn * x->lo), r->hi = fmax(0, nn * x->hi);
		if (n > 0)
			r->lo = nn * x->lo, r->hi = nn * x->hi;
	}
	if (!fl && op == OP_SUM)
		return fits_int(r->lo, FZ_I64) && fits_int(r->hi, FZ_I64);
	double uacc = pg_unit_of(x->dt == FZ_F64 ? FZ_F64 : FZ_F32) * (16 + 2 * sqrt(nn));
	if (!fl) /* mean of integers: f32(sum) / n */
		uacc = 2 * pg_unit_of(FZ_F32);
	bool same = x->lo >= 0 || x->hi <= 0;
	double ab = same ? x->abs : tot(x) + uacc * m;
	r->rel = (same ? x->rel + uacc : 0) + rnd_rel(r->dt, 1);
	r->abs = op == OP_SUM ? fmax(nn, 1) * ab : ab;
	if (dtype_is_half(r->dt))
		r->ulow = fmax(r->ulow, pg_unit_of(r->dt));
	return true;
}

/* The operand dtype of an op: its value operands joined (weak literals
 * take the other operand's dtype; a where's condition is not joined). */
static fz_dtype op_type(Op op, int n, const PAttr *x, bool *weak)
{
	int first = ir_ops[op].cls == OC_SELECT ? 1 : 0;
	PAttr acc = {.dt = x[first].dt, .weak = x[first].weak};
	for (int i = first + 1; i < n; i++) {
		bool w;
		acc.dt = join2(&acc, &x[i], &w);
		acc.weak = w;
	}
	*weak = acc.weak;
	return acc.dt;
}

/* The abstract value of op over arguments x (n of them); false when the op
 * is invalid or ill-conditioned there. `to` is OP_CAST's target. */
static bool op_attr(const G *g, Op op, fz_dtype to, int n, const PAttr *x, PAttr *r)
{
	memset(r, 0, sizeof *r);
	r->uni = -1;
	for (int i = 0; i < n; i++)
		if (!bcast(r, r, &x[i]))
			return false;
	PAttr shape = *r;
	for (int i = 0; i < n; i++) {
		r->nonfin |= x[i].nonfin;
		r->ulow = fmax(r->ulow, x[i].ulow);
		r->row = x[i].row > r->row ? x[i].row : r->row;
	}
	PAttr meta = *r;
	OpClass cls = ir_ops[op].cls;
	bool ok;
	if (cls == OC_REDUCE) {
		ok = reduce_attr(g, op, &x[0], r);
		meta = *r;
	} else if (cls == OC_CAST) {
		ok = !x[0].weak && cast_attr(to, &x[0], r);
		meta.dt = r->dt, meta.weak = false;
	} else {
		fz_dtype t = op_type(op, n, x, &r->weak);
		r->dt = t;
		PAttr c[3];
		for (int i = 0; i < n; i++)
			c[i] = conv(x[i], (cls == OC_SELECT && i == 0) ? FZ_BOOL : t);
		if (r->weak && cls != OC_ARITH)
			return false;
		meta.dt = r->dt, meta.weak = r->weak;
		switch (cls) {
		case OC_COMPARE:
			ok = c[0].det && c[1].det && !(x[0].dt == FZ_BOOL && x[1].weak);
			meta.dt = FZ_BOOL, r->lo = 0, r->hi = 1, r->det = true;
			break;
		case OC_LOGIC:
			ok = x[0].dt == FZ_BOOL && !x[0].weak && (n == 1 || (x[1].dt == FZ_BOOL && !x[1].weak));
			r->lo = 0, r->hi = 1, r->det = true;
			break;
		case OC_SELECT:
			ok = x[0].dt == FZ_BOOL && !x[0].weak && x[0].det && !(x[1].weak && x[2].weak);
			r->lo = fmin(c[1].lo, c[2].lo), r->hi = fmax(c[1].hi, c[2].hi);
			r->abs = fmax(c[1].abs, c[2].abs), r->rel = fmax(c[1].rel, c[2].rel);
			r->det = c[1].det && c[2].det;
			break;
		case OC_MATH: {
			bool keep = ir_ops[op].type == TY_ABS && !dtype_is_float(t);
			if (ir_ops[op].type == TY_PRED) { /* isnan, isinf, isfinite: exact values, NaN and inf too */
				ok = c[0].det && !x[0].weak;
				meta.dt = FZ_BOOL, r->lo = 0, r->hi = 1, r->det = true;
				break;
			}
			meta.dt = r->dt = keep ? t : dtype_is_float(t) ? t : FZ_F32;
			PAttr arg[2];
			for (int i = 0; i < n; i++)
				arg[i] = keep ? c[i] : conv(x[i], r->dt);
			ok = !x[0].weak && t != FZ_BOOL;
			if (ok && keep)
				ok = arith_int(OP_NEG, 1, arg, r);
			else if (ok)
				ok = n == 1 ? math_attr(op, &arg[0], r) : math2_attr(op, &arg[0], &arg[1], r);
			if (keep)
				r->lo = arg[0].lo >= 0 ? arg[0].lo : arg[0].hi <= 0 ? -arg[0].hi : 0, r->hi = pg_mag(&arg[0]);
			break;
		}
		default: /* OC_ARITH */
			if (r->weak) { /* literals only: folded in double */
				double v = op == OP_ADD ? c[0].lo + c[1].lo : op == OP_SUB ? c[0].lo - c[1].lo
				         : op == OP_MUL ? c[0].lo * c[1].lo : op == OP_NEG ? -c[0].lo : NAN;
				ok = v == v;
				r->lo = r->hi = v, r->det = is_dyadic(v), r->rel = r->det ? 0 : pg_unit_of(FZ_F32);
				break;
			}
			if (!bool_arith_ok(op, n, x, t))
				return false;
			ok = dtype_is_float(t) ? arith_float(op, n, c, r) : arith_int(op, n, c, r);
			break;
		}
	}
	if (!ok)
		return false;
	r->uni = shape.uni, r->rank = cls == OC_REDUCE ? r->rank : shape.rank;
	r->mask = cls == OC_REDUCE ? r->mask : shape.mask;
	r->nonfin = meta.nonfin, r->row = meta.row > r->row ? meta.row : r->row;
	r->ulow = fmax(r->ulow, meta.ulow);
	r->dt = meta.dt, r->weak = meta.weak;
	if (dtype_is_half(r->dt) && cls != OC_REDUCE && cls != OC_CAST && !r->det)
		r->ulow = fmax(r->ulow, pg_unit_of(r->dt));
	if (dtype_is_float(r->dt) && !r->det) /* below the smallest normal number, precision is absolute */
		r->abs += r->dt == FZ_F16 ? ldexp(1, -24) : r->dt == FZ_F64 ? ldexp(1, -1020) : ldexp(1, -124);
	if (r->det)
		r->abs = r->rel = 0;
	if (r->dt == FZ_BOOL)
		r->lo = fmax(r->lo, 0), r->hi = fmin(fmax(r->hi, 0), 1);
	if (r->weak)
		return true;
	double m = pg_mag(r);
	if (m > mag_limit(r->dt) || r->lo != r->lo || r->hi != r->hi)
		return false;
	return r->rel <= 0.02 && r->abs <= 0.02 * fmax(m, 0.01);
}

/* ---- nodes ------------------------------------------------------------------------- */

int64_t pg_axis_size(const G *g, int uni, int axis)
{
	const Axis *ax = &g->uni[uni].ax[axis];
	return ax->dim >= 0 ? g->info->dim_sizes[ax->dim] : ax->lit;
}

static PNode *node_new(G *g, PKind k)
{
	PNode *n = ARENA_NEW(g->a, PNode);
	n->kind = k;
	return n;
}

/* The abstract value of an op node from its arguments' (x * x is a square). */
static bool node_attr(G *g, PNode *n)
{
	PAttr x[3];
	for (int i = 0; i < n->nargs; i++)
		x[i] = n->arg[i]->at;
	if (!op_attr(g, n->op, n->to, n->nargs, x, &n->at))
		return false;
	if (n->op == OP_MUL && n->arg[0] == n->arg[1] && is_float(&n->at) && !n->at.weak) {
		const PAttr *a = &x[0];
		n->at.lo = a->lo >= 0 ? a->lo * a->lo : a->hi <= 0 ? a->hi * a->hi : 0;
		n->at.hi = pg_mag(a) * pg_mag(a);
	}
	return true;
}

PNode *pg_mk(G *g, Op op, int nargs, PNode *a, PNode *b, PNode *c)
{
	PNode *args[3] = {a, b, c};
	for (int i = 0; i < nargs; i++)
		if (!args[i])
			return NULL;
	PNode *n = node_new(g, PK_OP);
	n->op = op;
	n->nargs = nargs;
	memcpy(n->arg, args, sizeof args);
	if (!node_attr(g, n))
		return NULL;
	g->budget--;
	g->nreductions += ir_ops[op].cls == OC_REDUCE;
	return n;
}

#define mk1(g, op, a) pg_mk((g), (op), 1, (a), NULL, NULL)
#define mk2(g, op, a, b) pg_mk((g), (op), 2, (a), (b), NULL)

PNode *pg_mk_cast(G *g, fz_dtype to, PNode *a)
{
	if (!a)
		return NULL;
	PNode *n = node_new(g, PK_OP);
	n->op = OP_CAST, n->to = to, n->nargs = 1, n->arg[0] = a;
	if (!node_attr(g, n))
		return NULL;
	g->budget--;
	return n;
}

static PNode *mk_where(G *g, PNode *c, PNode *a, PNode *b)
{
	PNode *n = pg_mk(g, OP_WHERE, 3, c, a, b);
	if (n)
		n->ternary = rng_pct(&g->rng, 50);
	return n;
}

/* Re-analyse a fn body for the arguments' values (post-order). */
static bool reattr(G *g, PNode *n, const PAttr *params)
{
	for (int i = 0; i < n->nargs; i++)
		if (!reattr(g, n->arg[i], params))
			return false;
	if (n->kind == PK_PARAM) {
		n->at = params[n->index];
	} else if (n->kind == PK_OP) {
		return node_attr(g, n);
	} else if (n->kind == PK_CALL) {
		PAttr x[3];
		for (int i = 0; i < n->nargs; i++)
			x[i] = n->arg[i]->at;
		if (!reattr(g, g->fns[n->index].body, x))
			return false;
		n->at = g->fns[n->index].body->at;
	}
	return true;
}

static PNode *mk_call(G *g, int fi, PNode **args)
{
	PFn *f = &g->fns[fi];
	PNode *n = node_new(g, PK_CALL);
	n->index = fi, n->nargs = f->nparams;
	for (int i = 0; i < f->nparams; i++)
		if (!(n->arg[i] = args[i]))
			return NULL;
	PAttr x[3];
	for (int i = 0; i < n->nargs; i++)
		x[i] = args[i]->at;
	if (!reattr(g, f->body, x))
		return NULL;
	n->at = f->body->at;
	g->budget--;
	return n;
}


/* Exact literals (dyadic: the same number in every dtype) and others. */
const Lit pg_lit_exact[14] = {
	{"0.5", 0.5}, {".5", 0.5},  {"2.", 2},       {"1.0", 1},   {"0.25", 0.25}, {"1.5", 1.5},  {"3.0", 3},
	{"0.125", 0.125}, {"2.5E-1", 0.25}, {"1e0", 1}, {"4.0", 4}, {"0.75", 0.75}, {"1.25e+1", 12.5}, {"8.", 8},
};
static const Lit lit_any[] = {
	{"0.1", 0.1},   {"0.7978845608", 0.7978845608}, {"0.044715", 0.044715}, {"1e-3", 1e-3}, {"3.14159", 3.14159},
	{"0.3", 0.3},   {"1.7", 1.7}, {"2.71828", 2.71828}, {"0.01", 0.01}, {"1E-2", 0.01}, {"0.9", 0.9}, {"1.1", 1.1},
};
static const Lit lit_int[] = {{"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"5", 5}, {"7", 7}, {"16", 16}, {"100", 100}};
const Lit pg_lit_eps[6] = {{"0.01", 0.01}, {"1e-2", 0.01}, {"0.05", 0.05}, {"0.1", 0.1}, {"0.5", 0.5}, {"1.0", 1}};

PNode *pg_mk_lit(G *g, const Lit *l, bool is_float)
{
	PNode *n = node_new(g, PK_LIT);
	n->text = l->text;
	PAttr *a = &n->at;
	a->dt = is_float ? FZ_F32 : FZ_I32;
	a->weak = true;
	a->uni = -1;
	a->lo = a->hi = l->v;
	a->det = !is_float || is_dyadic(l->v);
	a->rel = a->det ? 0 : pg_unit_of(FZ_F32);
	return n;
}

#define LIT(g, table, isf) pg_mk_lit((g), &(table)[rng_int(&(g)->rng, 0, COUNT(table) - 1)], (isf))

/* A weakly typed operand: a literal, a negated one, or a literal-only sum. */
static PNode *weak_operand(G *g, bool exact)
{
	static const int w[] = {50, 20, 12, 8, 10, 8};
	switch (PICK(&g->rng, w)) {
	case 5: /* a binding of literals only, still weak */
		for (int i = g->nparams ? g->nvals : 0; i < g->nvals; i++)
			if (g->vals[i].at.weak && (!exact || g->vals[i].at.det))
				return pg_mk_ref(g, i);
		return LIT(g, pg_lit_exact, true);
	case 0: return LIT(g, pg_lit_exact, true);
	case 1: return exact ? LIT(g, lit_int, false) : LIT(g, lit_any, true);
	case 2: return mk1(g, OP_NEG, LIT(g, pg_lit_exact, true));
	case 3: return mk2(g, rng_pct(&g->rng, 50) ? OP_ADD : OP_MUL, LIT(g, pg_lit_exact, true), LIT(g, lit_int, false));
	default: return LIT(g, lit_int, false);
	}
}

/* ---- leaves ------------------------------------------------------------------------- */

enum { W_FLOAT, W_DETF, W_INT, W_BOOL, W_POS };

static bool leaf_kind(const PAttr *a, int want)
{
	if (a->weak)
		return false;
	switch (want) {
	case W_FLOAT: return is_float(a);
	case W_DETF: return is_float(a) && a->det;
	case W_INT: return a->dt == FZ_I32 || a->dt == FZ_I64;
	case W_BOOL: return a->dt == FZ_BOOL;
	default: return is_float(a) && a->lo >= 0.05 && tot(a) < 0.01 * a->lo;
	}
}

PNode *pg_mk_ref(G *g, int i)
{
	PNode *n = node_new(g, PK_VAL);
	n->index = i;
	n->at = g->vals[i].at;
	return n;
}

/* A declared value of the current universe (or a scalar); bindings made
 * lately are likelier, so that chains get deep. NULL if none fits. */
static PNode *pick_leaf(G *g, int want)
{
	if (g->nparams) {
		if (want != W_FLOAT)
			return NULL;
		PNode *n = node_new(g, PK_PARAM);
		n->index = rng_int(&g->rng, 0, g->nparams - 1);
		n->at = g->params[n->index];
		return n;
	}
	int w[MAX_VALS], any = 0;
	for (int i = 0; i < g->nvals; i++) {
		const PVal *v = &g->vals[i];
		bool here = (v->at.uni == g->cur || v->at.uni < 0) && (!v->input || v->declared);
		w[i] = here && leaf_kind(&v->at, want) ? (v->input ? 4 : 5) * (v->at.rank ? 3 : 1) : 0;
		if (w[i] && !v->input && i >= g->nvals - 3)
			w[i] += 8;
		any += w[i];
	}
	return any ? pg_mk_ref(g, rng_pick(&g->rng, w, g->nvals)) : NULL;
}

/* The first float input of the universe: finite, full shape, always there. */
PNode *pg_anchor(G *g)
{
	if (g->nparams)
		return pick_leaf(g, W_FLOAT);
	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].input && g->vals[i].declared && g->vals[i].at.uni == g->cur)
			return pg_mk_ref(g, i);
	return NULL;
}

/* ---- generators, one per kind of value ------------------------------------------------- */


static bool out_of_budget(const G *g, int d) { return d <= 0 || g->budget <= 0; }

/* A float of magnitude at most b. */
PNode *pg_gen_small(G *g, int d, double b)
{
	PNode *n = pg_gen_float(g, d);
	if (n && pg_mag(&n->at) <= b)
		return n;
	static const Lit bound[] = {{"1.0", 1}, {"2.0", 2}, {"4.", 4}};
	const Lit *l = &bound[b >= 4 ? 2 : b >= 2 ? 1 : 0];
	static const int w[] = {40, 30, 15, 15};
	PNode *r = NULL;
	switch (PICK(&g->rng, w)) {
	case 0: r = mk1(g, OP_TANH, n); break;
	case 1: r = pg_mk(g, OP_CLAMP, 3, n, mk1(g, OP_NEG, pg_mk_lit(g, l, true)), pg_mk_lit(g, l, true)); break;
	case 2: r = mk2(g, OP_MUL, mk1(g, OP_TANH, n), pg_mk_lit(g, l, true)); break;
	default: r = mk1(g, OP_SIN, n); break;
	}
	if (r && pg_mag(&r->at) <= b)
		return r;
	r = mk1(g, OP_TANH, n ? n : pg_anchor(g));
	return r ? r : mk1(g, OP_TANH, pg_anchor(g));
}

/* A float bounded away from zero from above: lo >= 0.05, small error. */
static PNode *pos_prod(G *g, int d)
{
	static const int w[] = {20, 16, 10, 10, 10, 8, 8, 6, 6};
	PNode *x;
	switch (PICK(&g->rng, w)) {
	case 0: return mk1(g, OP_EXP, pg_gen_small(g, d - 1, 3));
	case 1: x = pg_gen_small(g, d - 1, 8); return mk2(g, OP_ADD, mk2(g, OP_MUL, x, x), LIT(g, pg_lit_eps, true));
	case 2: return mk2(g, OP_ADD, mk1(g, OP_ABS, pg_gen_float(g, d - 1)), LIT(g, pg_lit_eps, true));
	case 3: return mk2(g, OP_ADD, mk1(g, OP_SIGMOID, pg_gen_float(g, d - 1)), LIT(g, pg_lit_eps, true));
	case 4: return mk1(g, OP_SUM, mk1(g, OP_EXP, pg_gen_small(g, d - 1, 3)));
	case 5: x = pg_gen_small(g, d - 1, 8); return mk2(g, OP_ADD, mk1(g, OP_MEAN, mk2(g, OP_MUL, x, x)), LIT(g, pg_lit_eps, true));
	case 6: return pick_leaf(g, W_POS);
	case 7: return mk1(g, OP_SQRT, pos_prod(g, d - 1));
	default: return mk2(g, OP_ADD, LIT(g, lit_int, false), mk1(g, OP_RELU, pg_gen_small(g, d - 1, 4)));
	}
}

PNode *pg_gen_pos(G *g, int d)
{
	for (int t = 0; t < 6 && !out_of_budget(g, d + 1); t++) {
		PNode *n = pos_prod(g, d);
		if (n && leaf_kind(&n->at, W_POS))
			return n;
	}
	PNode *n = pick_leaf(g, W_POS);
	return n ? n : mk1(g, OP_EXP, mk1(g, OP_TANH, pg_anchor(g)));
}

static const Op unary_ops[] = {OP_NEG, OP_ABS, OP_EXP, OP_EXP2, OP_EXPM1, OP_SIN, OP_COS, OP_TANH,
                               OP_ERF, OP_SIGMOID, OP_RELU, OP_SILU, OP_GELU, OP_GELU_TANH};
static const Op log_ops[] = {OP_LOG, OP_LOG2, OP_LOG1P, OP_SQRT, OP_RSQRT};
static const Op red_ops[] = {OP_SUM, OP_MEAN, OP_MAX, OP_MIN};
static const fz_dtype float_dts[] = {FZ_F16, FZ_BF16, FZ_F32, FZ_F64};

static PNode *unary_prod(G *g, int d)
{
	Op op = unary_ops[rng_int(&g->rng, 0, COUNT(unary_ops) - 1)];
	if (op == OP_EXP || op == OP_EXP2 || op == OP_EXPM1) {
		PNode *x = pg_gen_small(g, d - 1, 4);
		if (rng_pct(&g->rng, 30) && x && x->at.rank > 0) { /* exp(x - max(x)): softmax's numerator */
			PNode *s = mk2(g, OP_SUB, x, mk1(g, OP_MAX, x));
			if (s)
				s->at.hi = fmin(s->at.hi, 0);
			return mk1(g, op, s);
		}
		return mk1(g, op, x);
	}
	return mk1(g, op, pg_gen_float(g, d - 1));
}

/* The float builtins of fz 1.1, each on the values it is well-conditioned
 * for (sign and trunc, discontinuous, are with the exact values). */
static PNode *v11_prod(G *g, int d)
{
	static const Lit half = {"0.5", 0.5}, slopes[] = {{"0.01", 0.01}, {"0.2", 0.2}, {"1e-1", 0.1}};
	static const Op acts[] = {OP_ATAN, OP_SOFTPLUS, OP_MISH, OP_HARDSWISH, OP_HARDSIGMOID, OP_ELU};
	PNode *b;
	switch (rng_int(&g->rng, 0, 9)) {
	case 0: return mk1(g, OP_TAN, pg_gen_small(g, d - 1, 1));
	case 1:
		b = mk2(g, OP_MUL, pg_gen_small(g, d - 1, 1), pg_mk_lit(g, &half, true));
		return mk1(g, rng_pct(&g->rng, 50) ? OP_ASIN : OP_ACOS, b);
	case 2: return mk1(g, rng_pct(&g->rng, 50) ? OP_SINH : OP_COSH, pg_gen_small(g, d - 1, 4));
	case 3: b = pg_gen_pos(g, d - 1); return mk1(g, OP_RECIPROCAL, rng_pct(&g->rng, 30) ? mk1(g, OP_NEG, b) : b);
	case 4:
		b = rng_pct(&g->rng, 30) ? LIT(g, pg_lit_exact, true) : pg_gen_pos(g, d - 1);
		return mk2(g, OP_ATAN2, pg_gen_float(g, d - 1), b);
	case 5:
		b = rng_pct(&g->rng, 30) ? weak_operand(g, false) : pg_gen_float(g, d - 1);
		return mk2(g, OP_HYPOT, pg_gen_float(g, d - 1), b);
	case 6:
		b = rng_pct(&g->rng, 30) ? weak_operand(g, false) : pg_gen_small(g, d - 1, 8);
		return mk2(g, OP_LOGADDEXP, pg_gen_small(g, d - 1, 8), b);
	case 7: /* a literal slope, or a tensor one */
		b = rng_pct(&g->rng, 60) ? pg_mk_lit(g, &slopes[rng_int(&g->rng, 0, 2)], true)
		                         : mk1(g, OP_SIGMOID, pg_gen_float(g, d - 1));
		return mk2(g, OP_LEAKY_RELU, pg_gen_float(g, d - 1), b);
	default: return mk1(g, acts[rng_int(&g->rng, 0, COUNT(acts) - 1)], pg_gen_float(g, d - 1));
	}
}

static PNode *arith_prod(G *g, int d)
{
	static const Op ops[] = {OP_ADD, OP_SUB, OP_MUL};
	Op op = ops[rng_int(&g->rng, 0, 2)];
	PNode *a = pg_gen_float(g, d - 1);
	PNode *b = rng_pct(&g->rng, 30) ? weak_operand(g, false) : pg_gen_float(g, d - 1);
	if (rng_pct(&g->rng, 20) && a && b && a->at.rank && b->at.rank) /* reuse: x * x, x - x */
		b = a;
	return rng_pct(&g->rng, 50) ? mk2(g, op, a, b) : mk2(g, op, b, a);
}

static PNode *div_prod(G *g, int d)
{
	PNode *a = rng_pct(&g->rng, 15) ? weak_operand(g, false) : pg_gen_float(g, d - 1);
	PNode *b = pg_gen_pos(g, d - 1);
	if (rng_pct(&g->rng, 25))
		b = mk1(g, OP_NEG, b);
	return mk2(g, OP_DIV, a, b);
}

static PNode *minmax_prod(G *g, int d)
{
	PNode *a = pg_gen_float(g, d - 1);
	switch (rng_int(&g->rng, 0, 3)) {
	case 0: return mk2(g, OP_MINIMUM, a, rng_pct(&g->rng, 40) ? weak_operand(g, false) : pg_gen_float(g, d - 1));
	case 1: return mk2(g, OP_MAXIMUM, rng_pct(&g->rng, 40) ? weak_operand(g, false) : pg_gen_float(g, d - 1), a);
	case 2: return pg_mk(g, OP_CLAMP, 3, a, mk1(g, OP_NEG, LIT(g, pg_lit_exact, true)), LIT(g, pg_lit_exact, true));
	default: return pg_mk(g, OP_CLAMP, 3, a, pg_gen_float(g, d - 1), pg_gen_float(g, d - 1));
	}
}

static PNode *pow_prod(G *g, int d)
{
	static const Lit sq[] = {{"2", 2}, {"3", 3}, {"2.0", 2}};
	if (rng_pct(&g->rng, 40))
		return mk2(g, OP_POW, pg_gen_small(g, d - 1, 6), pg_mk_lit(g, &sq[rng_int(&g->rng, 0, 2)], true));
	PNode *base = mk2(g, OP_ADD, mk1(g, OP_SIGMOID, pg_gen_float(g, d - 1)), LIT(g, pg_lit_exact, true));
	if (rng_pct(&g->rng, 30))
		base = pg_gen_pos(g, d - 1);
	PNode *e = rng_pct(&g->rng, 40) ? weak_operand(g, false) : pg_gen_small(g, d - 1, 2);
	return mk2(g, OP_POW, base, e);
}

static PNode *reduce_prod(G *g, int d)
{
	Op op = red_ops[rng_int(&g->rng, 0, 3)];
	PNode *x = pg_gen_float(g, d - 1);
	if (!x || x->at.rank == 0)
		return NULL;
	PNode *r = mk1(g, op, x);
	if (!r && dtype_is_half(x->at.dt)) /* a long half row: sum it in f32 */
		r = mk1(g, op, pg_mk_cast(g, FZ_F32, x));
	if (!r || rng_pct(&g->rng, 50))
		return r;
	/* an epilogue over the row: x - r, x / r, x * r */
	static const Op epi[] = {OP_SUB, OP_MUL, OP_ADD};
	return mk2(g, epi[rng_int(&g->rng, 0, 2)], x, r);
}

static PNode *call_prod(G *g, int d)
{
	if (!g->nfns)
		return NULL;
	/* in a body, only fns defined above it */
	int nf = g->nparams ? g->nfns - 1 : g->nfns;
	if (nf <= 0)
		return NULL;
	int fi = rng_int(&g->rng, 0, nf - 1);
	PNode *args[3] = {0};
	for (int i = 0; i < g->fns[fi].nparams; i++)
		args[i] = pg_gen_small(g, d - 1, 4);
	return mk_call(g, fi, args);
}

/* Floats made from integers and bools: casts and promotions. */
static PNode *fromint_prod(G *g, int d)
{
	switch (rng_int(&g->rng, 0, 3)) {
	case 0: return pg_mk_cast(g, rng_pct(&g->rng, 70) ? FZ_F32 : FZ_F64, pg_gen_int(g, d - 1));
	case 1: return mk2(g, rng_pct(&g->rng, 50) ? OP_ADD : OP_MUL, pg_gen_int(g, d - 1), pg_gen_float(g, d - 1));
	case 2: return mk2(g, OP_MUL, pg_gen_float(g, d - 1), pg_gen_bool(g, d - 1));
	default: return mk2(g, OP_MUL, pg_gen_float(g, d - 1), pg_mk_cast(g, FZ_F32, pg_gen_bool(g, d - 1)));
	}
}

static PNode *float_prod(G *g, int d)
{
	enum { LEAF, UNARY, LOGS, ARITH, DIV, MINMAX, POW, WHERE, REDUCE, CALL, CAST, FROMINT, EXACT, V11 };
	int w[] = {12, 16, 7, 20, 6, 6, 3, 5, 9, 6, 3, 3, 3, 10};
	if (g->nparams)
		w[WHERE] = w[FROMINT] = w[EXACT] = 0;
	switch (PICK(&g->rng, w)) {
	case LEAF: return pick_leaf(g, W_FLOAT);
	case UNARY: return unary_prod(g, d);
	case LOGS: return mk1(g, log_ops[rng_int(&g->rng, 0, COUNT(log_ops) - 1)], pg_gen_pos(g, d - 1));
	case ARITH: return arith_prod(g, d);
	case DIV: return div_prod(g, d);
	case MINMAX: return minmax_prod(g, d);
	case POW: return pow_prod(g, d);
	case WHERE:
		return mk_where(g, pg_gen_bool(g, d - 1), pg_gen_float(g, d - 1),
		                rng_pct(&g->rng, 30) ? weak_operand(g, false) : pg_gen_float(g, d - 1));
	case REDUCE: return reduce_prod(g, d);
	case CALL: return call_prod(g, d);
	case CAST: return pg_mk_cast(g, float_dts[rng_int(&g->rng, 0, 3)], pg_gen_float(g, d - 1));
	case FROMINT: return fromint_prod(g, d);
	case V11: return v11_prod(g, d);
	default: return pg_gen_exact(g, d - 1);
	}
}

PNode *pg_gen_float(G *g, int d)
{
	for (int t = 0; t < 6 && !out_of_budget(g, d); t++) {
		PNode *n = float_prod(g, d);
		if (n && leaf_kind(&n->at, W_FLOAT))
			return n;
	}
	PNode *n = pick_leaf(g, W_FLOAT);
	return n ? n : pg_anchor(g);
}

/* Exact floats: what discontinuous ops may take. */
static PNode *exact_prod(G *g, int d)
{
	static const Op rounds[] = {OP_FLOOR, OP_CEIL, OP_ROUND, OP_NEG, OP_ABS, OP_RELU, OP_SIGN, OP_TRUNC};
	static const Lit p2[] = {{"2", 2}, {"0.5", 0.5}, {"4.0", 4}, {"0.25", 0.25}};
	static const int w[] = {14, 14, 8, 6, 6, 6, 4, 5, 5, 4};
	switch (PICK(&g->rng, w)) {
	case 0: return pick_leaf(g, W_DETF);
	case 1: return mk1(g, rounds[rng_int(&g->rng, 0, COUNT(rounds) - 1)], pg_gen_exact(g, d - 1));
	case 2: return mk2(g, rng_pct(&g->rng, 50) ? OP_MINIMUM : OP_MAXIMUM, pg_gen_exact(g, d - 1),
		           rng_pct(&g->rng, 50) ? weak_operand(g, true) : pg_gen_exact(g, d - 1));
	case 3: return pg_mk(g, OP_CLAMP, 3, pg_gen_exact(g, d - 1), mk1(g, OP_NEG, LIT(g, pg_lit_exact, true)), LIT(g, pg_lit_exact, true));
	case 4: return mk_where(g, pg_gen_bool(g, d - 1), pg_gen_exact(g, d - 1), pg_gen_exact(g, d - 1));
	case 5: return pg_mk_cast(g, rng_pct(&g->rng, 50) ? FZ_F32 : FZ_F64, pg_gen_exact(g, d - 1));
	case 6: return pg_mk_cast(g, float_dts[rng_int(&g->rng, 0, 3)], pg_gen_int(g, d - 1));
	case 7: return mk2(g, OP_MUL, pg_gen_exact(g, d - 1), pg_mk_lit(g, &p2[rng_int(&g->rng, 0, 3)], true));
	case 8: return mk1(g, rng_pct(&g->rng, 50) ? OP_MAX : OP_MIN, pg_gen_exact(g, d - 1));
	default: return mk2(g, OP_MOD, pg_gen_exact(g, d - 1), pg_gen_exact(g, d - 1));
	}
}

PNode *pg_gen_exact(G *g, int d)
{
	for (int t = 0; t < 6 && !out_of_budget(g, d) && !g->nparams; t++) {
		PNode *n = exact_prod(g, d);
		if (n && leaf_kind(&n->at, W_DETF))
			return n;
	}
	PNode *n = pick_leaf(g, W_DETF);
	return n ? n : pg_anchor(g);
}

/* An exact value of any dtype, or an exact weak literal. */
static PNode *exact_operand(G *g, int d)
{
	switch (rng_int(&g->rng, 0, 4)) {
	case 0: return weak_operand(g, true);
	case 1: return pg_gen_int(g, d);
	default: return pg_gen_exact(g, d);
	}
}

static PNode *bool_prod(G *g, int d)
{
	static const Op cmps[] = {OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE};
	static const int w[] = {30, 10, 5, 6, 6, 8, 6, 6, 6};
	switch (PICK(&g->rng, w)) {
	case 0: {
		Op op = cmps[rng_int(&g->rng, 0, 5)];
		PNode *a = rng_pct(&g->rng, 70) ? pg_gen_exact(g, d - 1) : pg_gen_int(g, d - 1);
		return mk2(g, op, a, exact_operand(g, d - 1));
	}
	case 1: return mk2(g, rng_pct(&g->rng, 50) ? OP_AND : OP_OR, pg_gen_bool(g, d - 1), pg_gen_bool(g, d - 1));
	case 2: return mk1(g, OP_NOT, pg_gen_bool(g, d - 1));
	case 3: {
		static const Op preds[] = {OP_ISNAN, OP_ISNAN, OP_ISINF, OP_ISFINITE};
		return mk1(g, preds[rng_int(&g->rng, 0, 3)], pg_gen_exact(g, d - 1));
	}
	case 4: return pg_mk_cast(g, FZ_BOOL, rng_pct(&g->rng, 50) ? pg_gen_exact(g, d - 1) : pg_gen_int(g, d - 1));
	case 5: return pick_leaf(g, W_BOOL);
	case 6: return mk1(g, rng_pct(&g->rng, 50) ? OP_MAX : OP_MIN, pg_gen_bool(g, d - 1));
	case 8: { /* the bitwise operators on bools are logical */
		static const Op bits[] = {OP_BITAND, OP_BITOR, OP_BITXOR};
		if (rng_pct(&g->rng, 25))
			return mk1(g, OP_BITNOT, pg_gen_bool(g, d - 1));
		return mk2(g, bits[rng_int(&g->rng, 0, 2)], pg_gen_bool(g, d - 1), pg_gen_bool(g, d - 1));
	}
	default:
		if (rng_pct(&g->rng, 50))
			return mk_where(g, pg_gen_bool(g, d - 1), pg_gen_bool(g, d - 1), pg_gen_bool(g, d - 1));
		return mk2(g, rng_pct(&g->rng, 50) ? OP_MINIMUM : OP_MAXIMUM, pg_gen_bool(g, d - 1), pg_gen_bool(g, d - 1));
	}
}

PNode *pg_gen_bool(G *g, int d)
{
	for (int t = 0; t < 6 && !out_of_budget(g, d) && !g->nparams; t++) {
		PNode *n = bool_prod(g, d);
		if (n && leaf_kind(&n->at, W_BOOL))
			return n;
	}
	PNode *n = pick_leaf(g, W_BOOL);
	return n ? n : mk2(g, OP_GT, pg_anchor(g), LIT(g, pg_lit_exact, true));
}

static PNode *int_prod(G *g, int d)
{
	static const Op ar[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_MINIMUM, OP_MAXIMUM};
	static const int w[] = {16, 22, 6, 6, 8, 8, 6, 6, 4, 4, 8, 6};
	switch (PICK(&g->rng, w)) {
	case 0: return pick_leaf(g, W_INT);
	case 1: {
		Op op = ar[rng_int(&g->rng, 0, COUNT(ar) - 1)];
		PNode *b = rng_pct(&g->rng, 35) ? LIT(g, lit_int, false) : pg_gen_int(g, d - 1);
		return mk2(g, op, pg_gen_int(g, d - 1), b);
	}
	case 2: return mk1(g, rng_pct(&g->rng, 50) ? OP_NEG : OP_ABS, pg_gen_int(g, d - 1));
	case 3: return pg_mk_cast(g, rng_pct(&g->rng, 60) ? FZ_I32 : FZ_I64, pg_gen_exact(g, d - 1));
	case 4: return mk1(g, OP_SUM, rng_pct(&g->rng, 50) ? pg_gen_int(g, d - 1) : pg_gen_bool(g, d - 1));
	case 5: return mk1(g, rng_pct(&g->rng, 50) ? OP_MAX : OP_MIN, pg_gen_int(g, d - 1));
	case 6: return mk_where(g, pg_gen_bool(g, d - 1), pg_gen_int(g, d - 1), pg_gen_int(g, d - 1));
	case 7: return pg_mk_cast(g, rng_pct(&g->rng, 50) ? FZ_I32 : FZ_I64, pg_gen_int(g, d - 1));
	case 8: return mk2(g, OP_POW, pg_gen_int(g, d - 1), LIT(g, lit_int, false));
	case 10: { /* & | ^ ~ */
		static const Op bits[] = {OP_BITAND, OP_BITOR, OP_BITXOR};
		if (rng_pct(&g->rng, 20))
			return mk1(g, OP_BITNOT, pg_gen_int(g, d - 1));
		PNode *b = rng_pct(&g->rng, 35)   ? LIT(g, lit_int, false)
		           : rng_pct(&g->rng, 20) ? pg_gen_bool(g, d - 1)
		                                  : pg_gen_int(g, d - 1);
		return mk2(g, bits[rng_int(&g->rng, 0, 2)], pg_gen_int(g, d - 1), b);
	}
	case 11: { /* shifts, by counts in range and out of it (0 or the sign) */
		static const Lit counts[] = {{"0", 0},   {"1", 1},   {"3", 3},   {"7", 7},   {"31", 31},
		                             {"32", 32}, {"33", 33}, {"63", 63}, {"64", 64}, {"100", 100}};
		PNode *c = rng_pct(&g->rng, 70) ? pg_mk_lit(g, &counts[rng_int(&g->rng, 0, COUNT(counts) - 1)], false)
		           : rng_pct(&g->rng, 30) ? mk1(g, OP_NEG, LIT(g, lit_int, false)) : pg_gen_int(g, d - 1);
		return mk2(g, rng_pct(&g->rng, 50) ? OP_SHL : OP_SHR, pg_gen_int(g, d - 1), c);
	}
	default: return pg_mk(g, OP_CLAMP, 3, pg_gen_int(g, d - 1), mk1(g, OP_NEG, LIT(g, lit_int, false)), LIT(g, lit_int, false));
	}
}

PNode *pg_gen_int(G *g, int d)
{
	for (int t = 0; t < 6 && !out_of_budget(g, d) && !g->nparams; t++) {
		PNode *n = int_prod(g, d);
		if (n && leaf_kind(&n->at, W_INT))
			return n;
	}
	PNode *n = pick_leaf(g, W_INT);
	return n ? n : pg_mk_cast(g, FZ_I32, pg_anchor(g));
}
