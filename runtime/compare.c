/*
 * compare.c: GPU results against the reference (see compare.h for the
 * tolerances and why they are what they are).
 */
#include "runtime/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

RtTolerance rt_tolerance(fz_dtype t, int64_t n_reduce, bool per_op)
{
	RtTolerance tol = {0, 0, false};
	double scale = n_reduce > 64 ? sqrt((double)n_reduce) / 8 : 1;
	switch (t) {
	case FZ_F64: tol = (RtTolerance){1e-12 * scale, 1e-10 * scale, false}; break;
	case FZ_F32: tol = (RtTolerance){1e-5 * scale, 1e-4 * scale, false}; break;
	case FZ_F16: tol = (RtTolerance){1e-2, 1e-2, false}; break;
	case FZ_BF16: tol = (RtTolerance){2e-2, 2e-2, false}; break;
	default: tol.exact = true; break;
	}
	if (per_op && dtype_is_half(t)) {
		tol.atol *= 2;
		tol.rtol *= 2;
	}
	return tol;
}

int64_t rt_longest_reduction(const Graph *g, const int64_t *dims)
{
	int64_t n = 0;
	for (int i = 0; i < g->n; i++) {
		const Node *nd = &g->nodes[i];
		if (ir_ops[nd->op].cls != OC_REDUCE)
			continue;
		const Node *a = &g->nodes[nd->args[0]];
		int64_t len = ir_dim_value(a->shape[a->rank - 1], dims);
		if (len > n)
			n = len;
	}
	return n;
}

/* How far out of tolerance one element is: <= 1 passes, INFINITY for a NaN
 * or infinity mismatch. */
static double violation(double got, double want, RtTolerance tol)
{
	if (isnan(got) || isnan(want))
		return isnan(got) && isnan(want) ? 0 : INFINITY;
	if (isinf(got) || isinf(want))
		return got == want ? 0 : INFINITY;
	double bound = tol.atol + tol.rtol * fabs(want);
	double err = fabs(got - want);
	if (bound == 0)
		return err == 0 ? 0 : INFINITY;
	return err / bound;
}

bool rt_compare(const Tensor *got, const Tensor *want, RtTolerance tol, RtCompare *out)
{
	memset(out, 0, sizeof *out);
	out->worst = -1;
	if (got->dtype != want->dtype || got->rank != want->rank ||
	    memcmp(got->shape, want->shape, sizeof got->shape[0] * (size_t)got->rank) != 0)
		return false;
	int64_t n = tensor_numel(got);
	size_t es = fz_dtype_size(got->dtype);
	double worst = -1;
	out->n = n;
	for (int64_t e = 0; e < n; e++) {
		double a = tensor_get(got, e), b = tensor_get(want, e), v;
		if (tol.exact) /* bytes, not doubles: i64 beyond 2^53 */
			v = memcmp((const char *)got->data + e * (int64_t)es, (const char *)want->data + e * (int64_t)es, es)
			        ? INFINITY : 0;
		else
			v = violation(a, b, tol);
		if (isfinite(a) && isfinite(b)) {
			double d = fabs(a - b);
			out->max_abs = d > out->max_abs ? d : out->max_abs;
			if (b != 0 && d / fabs(b) > out->max_rel)
				out->max_rel = d / fabs(b);
		}
		out->bad += v > 1;
		if (v > worst) {
			worst = v;
			out->worst = e;
			out->worst_got = a;
			out->worst_want = b;
		}
	}
	return true;
}

void rt_index_str(const Tensor *t, int64_t e, char *buf, size_t n)
{
	int64_t idx[FZ_MAX_RANK];
	for (int k = t->rank - 1; k >= 0; k--) {
		idx[k] = t->shape[k] ? e % t->shape[k] : 0;
		e = t->shape[k] ? e / t->shape[k] : 0;
	}
	size_t len = (size_t)snprintf(buf, n, "[");
	for (int k = 0; k < t->rank && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)idx[k]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}
