/*
 * progen_check.c: what a test needs around a generated program: its dims in
 * the graph's order, whether it must fail at run time, seeded inputs, and
 * the comparison of a result with the interpreter's.
 *
 * Tolerances. A generated program's outputs carry their own (progen.c: four
 * times the error bound of the per-op model; zero for exact values, which
 * must be bit-identical). Otherwise (the examples) they are derived from the
 * least precise dtype d the value went through, with unit roundoff u
 * (f16 2^-11, bf16 2^-8, f32 2^-24, f64 2^-53) and the longest reduced row n:
 *
 *     rtol = 16 u + 4 sqrt(n) v          atol = rtol * max |want|
 *
 * where v is the accumulator's unit roundoff (f64 for f64, else f32: half
 * sums accumulate in f32). 16 ulps cover a chain of roundings (per-op mode
 * rounds every f16/bf16 intermediate, math functions are a few ulps off);
 * the sqrt(n) term covers summation order (the interpreter sums f32 in f64,
 * the GPU in f32 trees); the absolute part, scaled by the largest finite
 * reference value, covers cancellation in elements near zero (x - mean(x)).
 * For f32 that is 1e-6 relative with no reduction, 2.4e-4 for rows of a
 * million; for f16 7.8e-3 and for bf16 6.3e-2. Integers and bool compare exactly; NaN
 * matches only NaN, an infinity only the same infinity, and a finite
 * reference only a finite result.
 */
#include "progen_impl.h"

#include "ir/interp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool progen_dims(const ProgenInfo *info, const Graph *g, int64_t *dims, char *err, size_t errlen)
{
	for (int k = 0; k < g->ndims; k++) {
		dims[k] = -1;
		for (int j = 0; j < info->ndims; j++)
			if (strcmp(g->dims[k], info->dim_names[j]) == 0)
				dims[k] = info->dim_sizes[j];
		if (dims[k] < 0) {
			snprintf(err, errlen, "the graph has a dim '%s' the program does not declare", g->dims[k]);
			return false;
		}
	}
	return true;
}

fz_status progen_expect(const Graph *g, const int64_t *dims)
{
	char msg[256];
	return ir_check_empty_rows(g, dims, msg, sizeof msg);
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	Rng r = {a ^ (b * 0xd1b54a32d192ed03ull)};
	return rng_next(&r);
}

static void store(Tensor *t, int64_t i, double v)
{
	char *p = t->data;
	switch (t->dtype) {
	case FZ_BOOL: p[i] = v != 0; break;
	case FZ_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	case FZ_I64: ((int64_t *)t->data)[i] = (int64_t)v; break;
	case FZ_F16: ((uint16_t *)t->data)[i] = f32_to_f16_bits((float)v); break;
	case FZ_BF16: ((uint16_t *)t->data)[i] = f32_to_bf16_bits((float)v); break;
	case FZ_F32: ((float *)t->data)[i] = (float)v; break;
	default: ((double *)t->data)[i] = v; break;
	}
}

/* One value in [lo, hi], exact in `values`; sometimes an end point. */
static double draw(Rng *r, double lo, double hi, fz_dtype values)
{
	if (values == FZ_BOOL)
		return (double)(rng_next(r) & 1);
	if (!dtype_is_float(values))
		return lo + (double)(rng_next(r) % (uint64_t)(hi - lo + 1));
	double v = rng_pct(r, 2) ? (rng_pct(r, 50) ? lo : hi) : lo + (hi - lo) * rng_unit(r);
	if (values == FZ_F64)
		return v;
	if (values == FZ_F32)
		return (float)v;
	return round_to_half(values, (float)v);
}

bool progen_fill(Tensor *t, uint64_t seed, double lo, double hi, fz_dtype values, bool nonfinite)
{
	int64_t n = 1;
	for (int k = 0; k < t->rank; k++)
		n *= t->shape[k];
	size_t bytes = (size_t)n * fz_dtype_size(t->dtype);
	t->data = malloc(bytes ? bytes : 1);
	if (!t->data)
		return false;
	Rng r = {seed};
	static const double specials[] = {NAN, INFINITY, -INFINITY};
	for (int64_t i = 0; i < n; i++) {
		double v = draw(&r, lo, hi, values);
		if (nonfinite && rng_next(&r) % 50 == 0)
			v = specials[rng_next(&r) % 3];
		store(t, i, v);
	}
	return true;
}

void progen_free_tensors(Tensor *t, int n)
{
	for (int i = 0; i < n; i++) {
		free(t[i].data);
		memset(&t[i], 0, sizeof t[i]);
	}
}

bool progen_inputs(const ProgenInfo *info, const Graph *g, const int64_t *dims, Tensor *inputs, char *err,
                   size_t errlen)
{
	memset(inputs, 0, sizeof *inputs * (size_t)g->ninputs);
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		int j = 0;
		while (j < info->ninputs && strcmp(info->inputs[j].name, g->inputs[i].name) != 0)
			j++;
		if (j == info->ninputs) {
			snprintf(err, errlen, "input '%s' is not one the generator wrote", g->inputs[i].name);
			progen_free_tensors(inputs, i);
			return false;
		}
		const ProgenInput *spec = &info->inputs[j];
		Tensor *t = &inputs[i];
		t->dtype = n->dtype;
		t->rank = n->rank;
		for (int k = 0; k < n->rank; k++)
			t->shape[k] = ir_dim_value(n->shape[k], dims);
		fz_dtype values = dtype_is_float(spec->dtype) && dtype_is_float(t->dtype) ? spec->dtype : t->dtype;
		if (!progen_fill(t, mix(info->seed, (uint64_t)j + 1), spec->lo, spec->hi, values, spec->nonfinite)) {
			snprintf(err, errlen, "out of memory for input '%s'", spec->name);
			progen_free_tensors(inputs, i + 1);
			return false;
		}
	}
	return true;
}

/* ---- comparison ------------------------------------------------------------------------- */

static double get_f(const Tensor *t, int64_t i)
{
	switch (t->dtype) {
	case FZ_BOOL: return ((const uint8_t *)t->data)[i];
	case FZ_I32: return ((const int32_t *)t->data)[i];
	case FZ_I64: return (double)((const int64_t *)t->data)[i];
	case FZ_F16: return f16_bits_to_f32(((const uint16_t *)t->data)[i]);
	case FZ_BF16: return bf16_bits_to_f32(((const uint16_t *)t->data)[i]);
	case FZ_F32: return ((const float *)t->data)[i];
	default: return ((const double *)t->data)[i];
	}
}

static int64_t get_i(const Tensor *t, int64_t i)
{
	switch (t->dtype) {
	case FZ_BOOL: return ((const uint8_t *)t->data)[i];
	case FZ_I32: return ((const int32_t *)t->data)[i];
	case FZ_I64: return ((const int64_t *)t->data)[i];
	default: return (int64_t)get_f(t, i);
	}
}

static void index_str(const Tensor *t, int64_t i, char *buf, size_t n)
{
	int64_t idx[FZ_MAX_RANK];
	for (int k = t->rank - 1; k >= 0; k--) {
		idx[k] = t->shape[k] ? i % t->shape[k] : 0;
		i = t->shape[k] ? i / t->shape[k] : 0;
	}
	size_t len = (size_t)snprintf(buf, n, "[");
	for (int k = 0; k < t->rank && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)idx[k]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}

static bool same_shape(const Tensor *a, const Tensor *b)
{
	if (a->rank != b->rank)
		return false;
	for (int k = 0; k < a->rank; k++)
		if (a->shape[k] != b->shape[k])
			return false;
	return true;
}

static int64_t numel(const Tensor *t)
{
	int64_t n = 1;
	for (int k = 0; k < t->rank; k++)
		n *= t->shape[k];
	return n;
}

typedef struct Worst {
	int64_t bad, at, got_i, want_i;
	double got, want, allowed, score, max_abs, max_rel;
} Worst;

/* Is got acceptable for want? Scores how far over its allowance it is. */
static bool close_enough(double got, double want, double atol, double rtol, double *allowed, double *score)
{
	*allowed = atol + rtol * fabs(want);
	*score = 1e300;
	if (want != want)
		return got != got;
	if (isinf(want))
		return got == want;
	if (!isfinite(got))
		return false;
	double e = fabs(got - want);
	*score = *allowed > 0 ? e / *allowed : e > 0 ? 1e300 : 0;
	return e <= *allowed;
}

static void default_tol(const Tensor *want, const ProgenTol *tol, double *atol, double *rtol)
{
	fz_dtype d = dtype_is_float(tol->dtype) ? tol->dtype : want->dtype;
	double u = pg_unit_of(d), uacc = pg_unit_of(d == FZ_F64 ? FZ_F64 : FZ_F32), m = 0;
	*rtol = 16 * u + 4 * sqrt((double)(tol->row > 0 ? tol->row : 0)) * uacc;
	int64_t n = numel(want);
	for (int64_t i = 0; i < n; i++) {
		double v = fabs(get_f(want, i));
		if (isfinite(v) && v > m)
			m = v;
	}
	*atol = *rtol * m;
}

static void scan(const Tensor *got, const Tensor *want, bool exact, double atol, double rtol, Worst *w)
{
	int64_t n = numel(want);
	memset(w, 0, sizeof *w);
	w->at = -1;
	for (int64_t i = 0; i < n; i++) {
		double gv = get_f(got, i), wv = get_f(want, i), allowed = 0, score;
		bool ok;
		if (exact) {
			int64_t gi = get_i(got, i), wi = get_i(want, i);
			ok = gi == wi && !(got->dtype == FZ_BOOL && gi > 1);
			score = 1;
			gv = (double)gi, wv = (double)wi;
			if (!ok && w->bad == 0)
				w->got_i = gi, w->want_i = wi;
		} else {
			ok = close_enough(gv, wv, atol, rtol, &allowed, &score);
		}
		if (isfinite(gv) && isfinite(wv)) {
			double e = fabs(gv - wv);
			w->max_abs = fmax(w->max_abs, e);
			if (wv != 0)
				w->max_rel = fmax(w->max_rel, e / fabs(wv));
		}
		if (!ok) {
			w->bad++;
			if (w->at < 0 || score > w->score)
				w->at = i, w->got = gv, w->want = wv, w->allowed = allowed, w->score = score;
		}
	}
}

bool progen_compare_tol(const Tensor *got, const Tensor *want, const ProgenTol *tol, char *msg, size_t msglen)
{
	char gs[128], ws[128];
	tensor_type_str(got, gs, sizeof gs);
	tensor_type_str(want, ws, sizeof ws);
	bool dt_ok = got->dtype == want->dtype ||
	             (tol->any_dtype && dtype_is_float(got->dtype) == dtype_is_float(want->dtype));
	if (!same_shape(got, want) || !dt_ok) {
		snprintf(msg, msglen, "type mismatch: got %s, want %s", gs, ws);
		return false;
	}
	bool exact = !dtype_is_float(want->dtype);
	double atol = 0, rtol = 0;
	if (tol->analysed)
		atol = tol->atol, rtol = tol->rtol;
	else if (!exact)
		default_tol(want, tol, &atol, &rtol);
	Worst w;
	scan(got, want, exact, atol, rtol, &w);
	if (w.bad == 0) {
		snprintf(msg, msglen, "ok (max abs err %.3g, max rel err %.3g)", w.max_abs, w.max_rel);
		return true;
	}
	char is[96];
	index_str(want, w.at, is, sizeof is);
	if (exact) {
		snprintf(msg, msglen, "%lld of %lld elements of %s differ; first %s: got %lld, want %lld", (long long)w.bad,
		         (long long)numel(want), ws, is, (long long)w.got_i, (long long)w.want_i);
		return false;
	}
	snprintf(msg, msglen,
	         "%lld of %lld elements of %s differ (max abs err %.3g, max rel err %.3g); worst %s: got %.9g, "
	         "want %.9g, allowed error %.3g (atol %.3g, rtol %.3g)",
	         (long long)w.bad, (long long)numel(want), ws, w.max_abs, w.max_rel, is, w.got, w.want, w.allowed, atol,
	         rtol);
	return false;
}

bool progen_compare(const Tensor *got, const Tensor *want, fz_dtype dtype, char *msg, size_t msglen)
{
	ProgenTol tol = {.dtype = dtype};
	return progen_compare_tol(got, want, &tol, msg, msglen);
}
