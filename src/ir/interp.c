/*
 * interp.c: the CPU reference interpreter (see interp.h).
 *
 * It walks the node array once, in order (a topological order, so no
 * recursion), computing each live node over its whole shape into an array
 * of Scalars in the node's compute type (eval.h): f16/bf16 values stay f32
 * until stored. Broadcasting is done by strides: an argument's stride is 0
 * along a dimension it broadcasts. A node's array is freed right after its
 * last user has run, so memory holds only the values still needed.
 *
 * Simplicity beats speed here: one Scalar (8 bytes) per element and one
 * eval_op call per element. It is the oracle, not the product.
 */
#include "ir/interp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"

static fz_status interp_fail(char *err, size_t errlen, fz_status s, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static fz_status interp_fail(char *err, size_t errlen, fz_status s, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return s;
}

/* ---- binding inputs --------------------------------------------------------------- */

/* "f32[B, N]" of a declaration, then " with B = 4, N = 8" for its symbolic
 * dims already bound. */
static void decl_str(const Graph *g, const Node *n, const int64_t *dims, char *buf, size_t cap)
{
	size_t len = ir_type_text(buf, cap, g, fz_dtype_name((fz_dtype)n->dtype), n->rank, n->shape);
	bool first = true;
	for (int k = 0; k < n->rank && len < cap; k++) {
		Dim d = n->shape[k];
		if (!dim_is_sym(d) || dims[dim_sym(d)] < 0)
			continue;
		bool dup = false; /* name each dim once: f32[N, N] */
		for (int j = 0; j < k; j++)
			dup |= n->shape[j] == d;
		if (dup)
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s = %lld", first ? " with " : ", ",
		                        g->dims[dim_sym(d)], (long long)dims[dim_sym(d)]);
		first = false;
	}
}

static fz_status bind_mismatch(const Graph *g, int i, const Node *n, const Tensor *t, const int64_t *dims,
                               char *err, size_t errlen)
{
	char want[512], got[256];
	decl_str(g, n, dims, want, sizeof want);
	tensor_type_str(t, got, sizeof got);
	return interp_fail(err, errlen, FZ_ERR_BINDING, "input '%s': expected %s, got %s", g->inputs[i].name, want, got);
}

fz_status ir_bind_dims(const Graph *g, const Tensor *inputs, int64_t *dims, char *err, size_t errlen)
{
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		const Tensor *t = &inputs[i];
		int fresh[FZ_MAX_RANK], nfresh = 0; /* dims this input binds, undone on a mismatch */
		bool ok = t->dtype == (fz_dtype)n->dtype && t->rank == n->rank;
		for (int k = 0; ok && k < n->rank; k++) {
			Dim d = n->shape[k];
			int64_t have = t->shape[k];
			if (have < 0)
				ok = false;
			else if (!dim_is_sym(d))
				ok = have == d;
			else if (dims[dim_sym(d)] >= 0)
				ok = have == dims[dim_sym(d)];
			else
				dims[fresh[nfresh++] = dim_sym(d)] = have;
		}
		if (!ok) {
			while (nfresh > 0)
				dims[fresh[--nfresh]] = -1;
			return bind_mismatch(g, i, n, t, dims, err, errlen);
		}
	}
	return FZ_OK;
}

/* max and min of an empty row have no value: the first that an output
 * depends on and that would reduce one (an axis bound to 0 under rows that
 * exist) is an error that names it and the dimension. The interpreter and
 * the runtime both ask this before anything runs. */
fz_status ir_check_empty_rows(const Graph *g, const int64_t *dims, char *err, size_t errlen)
{
	uint8_t *live = calloc((size_t)(g->n > 0 ? g->n : 1), 1);
	if (!live)
		return interp_fail(err, errlen, FZ_ERR_NOMEM, "out of memory");
	for (int k = 0; k < g->noutputs; k++)
		live[g->outputs[k].node] = 1;
	for (int i = g->n - 1; i >= 0; i--)
		for (int a = 0; live[i] && a < ir_ops[g->nodes[i].op].arity; a++)
			live[g->nodes[i].args[a]] = 1;
	fz_status s = FZ_OK;
	for (int i = 0; i < g->n && s == FZ_OK; i++) {
		const Node *n = &g->nodes[i];
		if (!live[i] || ir_ops[n->op].type != TY_EXTREMUM)
			continue;
		const Node *x = &g->nodes[n->args[0]];
		Dim last = x->shape[x->rank - 1];
		int64_t rows;
		if (ir_dim_value(last, dims) != 0 || !ir_numel(n->rank, n->shape, dims, &rows) || rows == 0)
			continue;
		if (dim_is_sym(last))
			s = interp_fail(err, errlen, FZ_ERR_RUNTIME, "%s at %d:%d reduces an empty axis (%s = 0)",
			                ir_ops[n->op].name, n->span.line, n->span.col, g->dims[dim_sym(last)]);
		else
			s = interp_fail(err, errlen, FZ_ERR_RUNTIME, "%s at %d:%d reduces an empty axis (size 0)",
			                ir_ops[n->op].name, n->span.line, n->span.col);
	}
	free(live);
	return s;
}

/* ---- evaluation ------------------------------------------------------------------ */

typedef struct Interp {
	const Graph *g;
	const int64_t *dims;
	const Tensor *inputs;
	Scalar **vals;    /* per node, NULL when not computed or freed */
	int64_t *numel;   /* per node */
	int32_t *last;    /* per node: index of its last user, -1 if dead */
	bool store_all;   /* round every half-typed value, as per-op mode stores it */
	char *err;
	size_t errlen;
} Interp;

static const char *node_name(const Node *n) { return ir_ops[n->op].name; }

/* The last user of every node, walking backwards from the outputs so dead
 * nodes (none after ir_dce, but the interpreter does not rely on it) are
 * never computed. Outputs live to the end. */
static void interp_liveness(Interp *in)
{
	const Graph *g = in->g;
	for (int i = 0; i < g->n; i++)
		in->last[i] = -1;
	for (int k = 0; k < g->noutputs; k++)
		in->last[g->outputs[k].node] = g->n;
	for (int i = g->n - 1; i >= 0; i--) {
		if (in->last[i] < 0)
			continue;
		for (int a = 0; a < ir_ops[g->nodes[i].op].arity; a++) {
			NodeId arg = g->nodes[i].args[a];
			if (in->last[arg] < i)
				in->last[arg] = i;
		}
	}
}

static fz_status interp_sizes(Interp *in)
{
	const Graph *g = in->g;
	for (int i = 0; i < g->n; i++) {
		const Node *n = &g->nodes[i];
		int64_t e = 1;
		if (in->last[i] < 0) { /* dead: never computed, so never too large */
			in->numel[i] = 0;
			continue;
		}
		for (int k = 0; k < n->rank; k++) {
			int64_t d = ir_dim_value(n->shape[k], in->dims);
			if (d > 0 && e > ((int64_t)1 << 62) / d)
				return interp_fail(in->err, in->errlen, FZ_ERR_LIMIT,
				                   "%s at %d:%d has too many elements for its bound dims", node_name(n),
				                   n->span.line, n->span.col);
			e *= d;
		}
		if ((uint64_t)e > SIZE_MAX / sizeof(Scalar))
			return interp_fail(in->err, in->errlen, FZ_ERR_LIMIT, "%s at %d:%d is too large", node_name(n),
			                   n->span.line, n->span.col);
		in->numel[i] = e;
	}
	return FZ_OK;
}

/* Strides of argument `a` (shape of rank ra) over the output's dims (rank r),
 * aligned at the end; 0 where it broadcasts or is missing. */
static void arg_strides(const Interp *in, const Node *a, int r, int64_t *st)
{
	int64_t s = 1;
	for (int k = r - 1; k >= 0; k--) {
		int ka = k - (r - a->rank);
		if (ka < 0) {
			st[k] = 0;
			continue;
		}
		int64_t d = ir_dim_value(a->shape[ka], in->dims);
		st[k] = d == 1 ? 0 : s;
		s *= d;
	}
}

/* A node computed element by element from its args' arrays, each walked by
 * strides over the node's shape. After ir_build every value operand has the
 * node's operand dtype (promotions are explicit casts); one that has not is
 * a bug upstream, reported rather than computed. */
static fz_status run_elementwise(Interp *in, int id, Scalar *out)
{
	const Graph *g = in->g;
	const Node *n = &g->nodes[id];
	int arity = ir_ops[n->op].arity, r = n->rank;
	int64_t st[3][FZ_MAX_RANK], off[3] = {0, 0, 0}, idx[FZ_MAX_RANK] = {0}, shape[FZ_MAX_RANK];
	const Scalar *src[3];
	for (int k = 0; k < r; k++)
		shape[k] = ir_dim_value(n->shape[k], in->dims);
	for (int a = 0; a < arity; a++) {
		const Node *an = &g->nodes[n->args[a]];
		fz_dtype want = ir_ops[n->op].cls == OC_SELECT && a == 0 ? FZ_BOOL : (fz_dtype)n->operand;
		if (an->dtype != want)
			return interp_fail(in->err, in->errlen, FZ_ERR_INTERNAL,
			                   "internal error: operand %d of %s at %d:%d is %s, not %s", a, node_name(n),
			                   n->span.line, n->span.col, fz_dtype_name((fz_dtype)an->dtype), fz_dtype_name(want));
		arg_strides(in, an, r, st[a]);
		src[a] = in->vals[n->args[a]];
	}
	for (int64_t e = 0; e < in->numel[id]; e++) {
		Scalar v[3];
		for (int a = 0; a < arity; a++)
			v[a] = src[a][off[a]];
		if (!eval_op((Op)n->op, (fz_dtype)n->dtype, (fz_dtype)n->operand, v, &out[e]))
			return interp_fail(in->err, in->errlen, FZ_ERR_INTERNAL, "internal error: %s has no semantics on %s",
			                   node_name(n), fz_dtype_name((fz_dtype)n->operand));
		for (int k = r - 1; k >= 0; k--) { /* odometer over the output index */
			idx[k]++;
			for (int a = 0; a < arity; a++)
				off[a] += st[a][k];
			if (idx[k] < shape[k])
				break;
			for (int a = 0; a < arity; a++)
				off[a] -= st[a][k] * shape[k];
			idx[k] = 0;
		}
	}
	return FZ_OK;
}

/* max/min of an empty row was reported before anything ran
 * (ir_check_empty_rows), so a reduction without a value here is a bug. */
static fz_status run_reduce(Interp *in, int id, Scalar *out)
{
	const Graph *g = in->g;
	const Node *n = &g->nodes[id];
	const Node *a = &g->nodes[n->args[0]];
	const Scalar *src = in->vals[n->args[0]];
	int64_t len = ir_dim_value(a->shape[a->rank - 1], in->dims);
	int64_t rows = in->numel[id]; /* the result is [..., 1]: one per row */
	for (int64_t r = 0; r < rows; r++)
		if (!eval_reduce((Op)n->op, (fz_dtype)n->dtype, (fz_dtype)n->operand, src + r * len, len, &out[r]))
			return interp_fail(in->err, in->errlen, FZ_ERR_INTERNAL, "internal error: %s at %d:%d has no value",
			                   node_name(n), n->span.line, n->span.col);
	return FZ_OK;
}

static void run_leaf(Interp *in, int id, Scalar *out)
{
	const Node *n = &in->g->nodes[id];
	if (n->op == OP_INPUT) {
		const Tensor *t = &in->inputs[n->input];
		for (int64_t e = 0; e < in->numel[id]; e++)
			out[e] = eval_load(t->dtype, t->data, e);
		return;
	}
	Scalar c;
	if (dtype_is_float((fz_dtype)n->dtype))
		c.f = n->c.f;
	else
		c.i = n->c.i;
	c = eval_normalize((fz_dtype)n->dtype, c);
	for (int64_t e = 0; e < in->numel[id]; e++)
		out[e] = c;
}

static fz_status run_node(Interp *in, int id)
{
	const Node *n = &in->g->nodes[id];
	/* at least one element, so an empty array is not mistaken for a failure */
	Scalar *out = malloc(sizeof(Scalar) * (size_t)(in->numel[id] ? in->numel[id] : 1));
	if (!out)
		return interp_fail(in->err, in->errlen, FZ_ERR_NOMEM, "out of memory for %s at %d:%d (%lld elements)",
		                   node_name(n), n->span.line, n->span.col, (long long)in->numel[id]);
	in->vals[id] = out;
	fz_status s = FZ_OK;
	switch (ir_ops[n->op].cls) {
	case OC_LEAF: run_leaf(in, id, out); return FZ_OK;
	case OC_REDUCE: s = run_reduce(in, id, out); break;
	case OC_ARITH:
	case OC_COMPARE:
	case OC_LOGIC:
	case OC_SELECT:
	case OC_CAST:
	case OC_MATH: s = run_elementwise(in, id, out); break;
	}
	if (in->store_all && dtype_is_half((fz_dtype)n->dtype))
		for (int64_t e = 0; e < in->numel[id]; e++)
			out[e].f = round_to_half((fz_dtype)n->dtype, (float)out[e].f);
	return s;
}

static fz_status write_output(Interp *in, int k, Tensor *t)
{
	const Graph *g = in->g;
	NodeId id = g->outputs[k].node;
	const Node *n = &g->nodes[id];
	memset(t, 0, sizeof *t);
	t->dtype = (fz_dtype)n->dtype;
	t->rank = n->rank;
	for (int d = 0; d < n->rank; d++)
		t->shape[d] = ir_dim_value(n->shape[d], in->dims);
	if (!tensor_alloc(t))
		return interp_fail(in->err, in->errlen, FZ_ERR_NOMEM, "out of memory for output '%s'", g->outputs[k].name);
	for (int64_t e = 0; e < in->numel[id]; e++)
		eval_store(t->dtype, t->data, e, in->vals[id][e]);
	return FZ_OK;
}

static fz_status interp_check_dims(const Graph *g, const int64_t *dims, char *err, size_t errlen)
{
	for (int k = 0; k < g->ndims; k++)
		if (dims[k] < 0)
			return interp_fail(err, errlen, FZ_ERR_BINDING, "dim '%s' is not bound", g->dims[k]);
	return FZ_OK;
}

static fz_status interp_eval(Interp *in, Tensor *outputs)
{
	const Graph *g = in->g;
	fz_status s;
	interp_liveness(in);
	if ((s = interp_sizes(in)) != FZ_OK)
		return s;
	for (int i = 0; i < g->n; i++) {
		if (in->last[i] < 0)
			continue;
		if ((s = run_node(in, i)) != FZ_OK)
			return s;
		for (int a = 0; a < ir_ops[g->nodes[i].op].arity; a++) {
			NodeId arg = g->nodes[i].args[a];
			if (in->last[arg] == i) {
				free(in->vals[arg]);
				in->vals[arg] = NULL;
			}
		}
	}
	for (int k = 0; k < g->noutputs; k++) {
		if ((s = write_output(in, k, &outputs[k])) != FZ_OK) {
			for (int j = 0; j < k; j++)
				tensor_free(&outputs[j]);
			return s;
		}
	}
	return FZ_OK;
}

fz_status interp_run(const Graph *g, const int64_t *dims, const Tensor *inputs, Tensor *outputs, char *err,
                     size_t errlen)
{
	return interp_run_ex(g, dims, inputs, outputs, false, err, errlen);
}

fz_status interp_run_ex(const Graph *g, const int64_t *dims, const Tensor *inputs, Tensor *outputs, bool store_all,
                        char *err, size_t errlen)
{
	int nd = g->ndims > 0 ? g->ndims : 1, nn = g->n > 0 ? g->n : 1;
	int64_t *bound = malloc(sizeof(int64_t) * (size_t)nd);
	Interp in = {g,   bound, inputs, calloc((size_t)nn, sizeof(Scalar *)), malloc(sizeof(int64_t) * (size_t)nn),
	             malloc(sizeof(int32_t) * (size_t)nn), store_all, err, errlen};
	fz_status s;
	if (!bound || !in.vals || !in.numel || !in.last) {
		s = interp_fail(err, errlen, FZ_ERR_NOMEM, "out of memory");
	} else {
		if (g->ndims)
			memcpy(bound, dims, sizeof(int64_t) * (size_t)g->ndims);
		s = ir_bind_dims(g, inputs, bound, err, errlen);
		if (s == FZ_OK)
			s = interp_check_dims(g, bound, err, errlen);
		if (s == FZ_OK)
			s = ir_check_empty_rows(g, bound, err, errlen);
		if (s == FZ_OK)
			s = interp_eval(&in, outputs);
	}
	if (in.vals)
		for (int i = 0; i < g->n; i++)
			free(in.vals[i]);
	free(in.vals);
	free(in.numel);
	free(in.last);
	free(bound);
	return s;
}
