/*
 * print.c: --emit=fused, the plan as stable text (golden tests diff it).
 *
 *   plan softmax (fused): 1 kernel, 0 temporaries
 *   kernel softmax_k0: row over [B, N]
 *     nodes: %1 max, %2 sub, %3 exp, %4 sum, %5 div
 *     reductions: %1 max, %4 sum
 *     reads: x %0 f32[B, N]
 *     writes: y %5 f32[B, N]
 *     dims: B, N
 *     bytes: 8*B*N
 *   total bytes: 8*B*N
 *
 * Parameters are listed in their KParam order. Bytes are what the kernel must
 * move at least: every tensor it reads or writes once (a broadcast operand
 * counts its own size), as a polynomial in the symbolic dims.
 */
#include "fuse/fuse_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- bytes as a polynomial of the dims ---------------------------------------------- */

typedef struct Term {
	int ndims;
	int dims[FZ_MAX_RANK];      /* symbolic dims, ascending (with repeats) */
	int64_t coef;
} Term;

typedef struct Poly {
	Term *t;
	int n, cap;
	bool overflow;
} Poly;

static bool mul_ok(int64_t a, int64_t b, int64_t *out)
{
	if (a != 0 && b > INT64_MAX / a)
		return false;
	*out = a * b;
	return true;
}

static int cmp_dim(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

static void poly_add(Poly *p, Arena *a, const Term *t)
{
	if (t->coef == 0)
		return;
	for (int i = 0; i < p->n; i++)
		if (p->t[i].ndims == t->ndims && memcmp(p->t[i].dims, t->dims, sizeof(int) * (size_t)t->ndims) == 0) {
			if (p->t[i].coef > INT64_MAX - t->coef)
				p->overflow = true;
			else
				p->t[i].coef += t->coef;
			return;
		}
	VEC_PUSH(a, p->t, p->n, p->cap, *t);
}

static void poly_add_tensor(Poly *p, Arena *a, const Node *nd)
{
	Term t = {.coef = (int64_t)fz_dtype_size((fz_dtype)nd->dtype)};
	for (int i = 0; i < nd->rank; i++) {
		if (dim_is_sym(nd->shape[i]))
			t.dims[t.ndims++] = dim_sym(nd->shape[i]);
		else if (!mul_ok(t.coef, nd->shape[i], &t.coef))
			p->overflow = true;
	}
	qsort(t.dims, (size_t)t.ndims, sizeof(int), cmp_dim);
	poly_add(p, a, &t);
}

static int cmp_term(const void *x, const void *y)
{
	const Term *a = x, *b = y;
	if (a->ndims != b->ndims)
		return b->ndims - a->ndims;
	for (int i = 0; i < a->ndims; i++)
		if (a->dims[i] != b->dims[i])
			return a->dims[i] - b->dims[i];
	return 0;
}

static void poly_print(StrBuf *sb, const Graph *g, Poly *p)
{
	if (p->overflow) {
		sb_puts(sb, "more than 2^63");
		return;
	}
	if (p->n == 0) {
		sb_puts(sb, "0");
		return;
	}
	qsort(p->t, (size_t)p->n, sizeof(Term), cmp_term);
	for (int i = 0; i < p->n; i++) {
		const Term *t = &p->t[i];
		if (i)
			sb_puts(sb, " + ");
		if (t->coef != 1 || t->ndims == 0)
			sb_printf(sb, "%lld%s", (long long)t->coef, t->ndims ? "*" : "");
		for (int j = 0; j < t->ndims; j++)
			sb_printf(sb, "%s%s", j ? "*" : "", g->dims[t->dims[j]]);
	}
}

static void kernel_bytes(Poly *p, Arena *a, const Graph *g, const Kernel *k)
{
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_IN || k->params[i].kind == PARAM_OUT)
			poly_add_tensor(p, a, &g->nodes[k->params[i].node]);
}

/* ---- the listing -------------------------------------------------------------------- */

int *fuse_writers(const Plan *p, Arena *a)
{
	int *w = ARENA_ARRAY(a, int, p->g->n + 1);
	memset(w, 0xff, sizeof(int) * (size_t)(p->g->n + 1));
	for (int i = p->nkernels - 1; i >= 0; i--)
		for (int j = 0; j < p->kernels[i].nparams; j++)
			if (p->kernels[i].params[j].kind == PARAM_OUT)
				w[p->kernels[i].params[j].node] = i;
	return w;
}

static void print_param(StrBuf *sb, const Plan *p, const int *writer, const KParam *prm)
{
	const Graph *g = p->g;
	const Node *nd = &g->nodes[prm->node];
	const char *type = ir_type_str(sb->arena, g, nd);
	const char *name = NULL;
	if (nd->op == OP_INPUT)
		name = g->inputs[nd->input].name;
	if (prm->output >= 0)
		name = g->outputs[prm->output].name;
	if (name)
		sb_printf(sb, "%s ", name);
	sb_printf(sb, "%%%d %s", prm->node, type);
	if (prm->kind == PARAM_IN && nd->op != OP_INPUT)
		sb_printf(sb, " (%sfrom k%d)", prm->output < 0 ? "temp " : "", writer[prm->node]);
	else if (prm->kind == PARAM_OUT && prm->output < 0)
		sb_puts(sb, " (temp)");
	else if (prm->kind == PARAM_OUT && nd->op == OP_INPUT)
		sb_printf(sb, " (copy of %s)", g->inputs[nd->input].name);
	else if (prm->kind == PARAM_OUT && nd->op == OP_CONST)
		sb_puts(sb, " (fill)");
}

static void print_params(StrBuf *sb, const Plan *p, const int *writer, const Kernel *k, ParamKind kind,
                         const char *label)
{
	bool any = false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *prm = &k->params[i];
		if (prm->kind != kind)
			continue;
		sb_puts(sb, any ? ", " : label);
		any = true;
		if (kind == PARAM_DIM)
			sb_puts(sb, p->g->dims[prm->dim]);
		else
			print_param(sb, p, writer, prm);
	}
	if (any)
		sb_puts(sb, "\n");
}

static void print_nodes(StrBuf *sb, const Graph *g, const char *label, const NodeId *ids, int n)
{
	sb_puts(sb, label);
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s%%%d %s", i ? ", " : "", ids[i], ir_ops[g->nodes[ids[i]].op].name);
	sb_puts(sb, n ? "\n" : "-\n");
}

static void print_kernel(StrBuf *sb, const Plan *p, const int *writer, const Kernel *k, Poly *total)
{
	const Graph *g = p->g;
	sb_printf(sb, "kernel %s: %s over %s\n", k->name, k->kind == KERNEL_ROW ? "row" : "pointwise",
	          ir_shape_str(sb->arena, g, k->rank, k->domain));
	if (k->ndeps) {
		sb_puts(sb, "  after:");
		for (int i = 0; i < k->ndeps; i++)
			sb_printf(sb, "%s k%d", i ? "," : "", k->deps[i]);
		sb_puts(sb, "\n");
	}
	print_nodes(sb, g, "  nodes: ", k->nodes, k->nnodes);
	if (k->kind == KERNEL_ROW)
		print_nodes(sb, g, "  reductions: ", k->reductions, k->nreductions);
	print_params(sb, p, writer, k, PARAM_IN, "  reads: ");
	print_params(sb, p, writer, k, PARAM_OUT, "  writes: ");
	print_params(sb, p, writer, k, PARAM_SCALAR, "  scalars: ");
	print_params(sb, p, writer, k, PARAM_DIM, "  dims: ");
	Poly bytes = {0};
	kernel_bytes(&bytes, sb->arena, g, k);
	sb_puts(sb, "  bytes: ");
	poly_print(sb, g, &bytes);
	sb_puts(sb, "\n");
	for (int i = 0; i < bytes.n; i++)
		poly_add(total, sb->arena, &bytes.t[i]);
	total->overflow |= bytes.overflow;
}

void fuse_print(StrBuf *sb, const Plan *p)
{
	if (!p->g)
		return; /* no plan: the compilation stopped before fusion */
	sb_printf(sb, "plan %s (%s): %d kernel%s, %d temporar%s\n", p->g->name, p->fused ? "fused" : "per-op",
	          p->nkernels, p->nkernels == 1 ? "" : "s", p->ntemps, p->ntemps == 1 ? "y" : "ies");
	Poly total = {0};
	const int *writer = fuse_writers(p, sb->arena);
	for (int i = 0; i < p->nkernels; i++)
		print_kernel(sb, p, writer, &p->kernels[i], &total);
	sb_puts(sb, "total bytes: ");
	poly_print(sb, p->g, &total);
	sb_puts(sb, "\n");
}
