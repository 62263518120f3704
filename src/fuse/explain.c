/*
 * explain.c: --explain (why an edge crosses kernels) and --emit=dot.
 *
 * In fused mode only values of row kernels cross kernels (free values are
 * recomputed), so a reason is either another iteration space ("its consumer
 * iterates over [B, M], not the rows [B, N]") or launch order (the consumer
 * also needs a value written by a kernel that runs after the producer's).
 * Per-op mode stores every value; --explain says so once.
 *
 * The dot graph draws each kernel as a cluster holding the nodes it computes;
 * a node recomputed by several kernels appears in each. Dashed edges are
 * values read from memory; inputs are inverted houses, outputs houses,
 * constants plain text.
 */
#include "fuse/fuse_int.h"

#include <string.h>

static const char *domain_text(Arena *a, const Graph *g, const Kernel *k)
{
	const char *s = ir_shape_str(a, g, k->rank, k->domain);
	return k->kind == KERNEL_ROW ? arena_printf(a, "the rows %s", s) : s;
}

/* A value kernel k reads from a kernel that runs after kernel h, or -1. */
static NodeId later_read(const Kernel *k, const int *writer, int h)
{
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_IN && writer[k->params[i].node] > h)
			return k->params[i].node;
	return -1;
}

static const char *why(const Plan *p, Arena *a, const int *writer, const Unfused *u)
{
	const Graph *g = p->g;
	const Node *pn = &g->nodes[u->producer];
	const char *what = arena_printf(a, "%%%d (%s at %d:%d) is stored: its consumer %%%d", u->producer,
	                                ir_ops[pn->op].name, pn->span.line, pn->span.col, u->consumer);
	const Kernel *k = &p->kernels[u->kernel];
	int h = writer[u->producer];
	const Kernel *hk = &p->kernels[h];
	if (!fuse_shape_eq(k->rank, k->domain, hk->rank, hk->domain))
		return arena_printf(a, "%s iterates over %s, not %s", what, domain_text(a, g, k), domain_text(a, g, hk));
	NodeId q = later_read(k, writer, h);
	const char *dom = ir_shape_str(a, g, k->rank, k->domain);
	if (q >= 0)
		return arena_printf(a, "%s, over the same %s, also needs %%%d from k%d, which runs after k%d", what, dom, q,
		                    writer[q], h);
	return arena_printf(a, "%s is in k%d, a separate kernel over the same %s", what, u->kernel, dom);
}

void fuse_explain_edges(Plan *p, Arena *a)
{
	const int *writer = fuse_writers(p, a);
	for (int i = 0; i < p->nunfused; i++)
		p->unfused[i].why = p->fused ? why(p, a, writer, &p->unfused[i])
		                             : "per-op mode: every op is its own kernel and stores its value";
}

void fuse_explain(StrBuf *sb, const Plan *p)
{
	if (!p->g)
		return; /* no plan: the compilation stopped before fusion */
	if (!p->fused) {
		sb_printf(sb,
		          "per-op mode (--no-fuse): every op is its own kernel and stores its value, as eager PyTorch runs "
		          "them; implicit casts are computed by their consumers (%d kernel%s, %d edge%s kernels)\n",
		          p->nkernels, p->nkernels == 1 ? "" : "s", p->nunfused, p->nunfused == 1 ? " crosses" : "s cross");
		return;
	}
	if (p->nunfused == 0)
		sb_printf(sb, "no edge crosses kernels (%d kernel%s)\n", p->nkernels, p->nkernels == 1 ? "" : "s");
	for (int i = 0; i < p->nunfused; i++)
		sb_printf(sb, "%s\n", p->unfused[i].why);
}

/* ---- dot ------------------------------------------------------------------------------ */

static void dot_leaf(StrBuf *sb, const Graph *g, NodeId n)
{
	const Node *nd = &g->nodes[n];
	const char *type = ir_type_str(sb->arena, g, nd);
	if (nd->op == OP_INPUT) {
		sb_printf(sb, "  n%d [label=\"%s\\n%s\", shape=invhouse];\n", n, g->inputs[nd->input].name, type);
	} else if (dtype_is_float((fz_dtype)nd->dtype)) {
		sb_printf(sb, "  n%d [label=\"%.17g\", shape=plaintext];\n", n, nd->c.f);
	} else if (nd->dtype == FZ_BOOL) {
		sb_printf(sb, "  n%d [label=\"%s\", shape=plaintext];\n", n, nd->c.i ? "true" : "false");
	} else {
		sb_printf(sb, "  n%d [label=\"%lld\", shape=plaintext];\n", n, (long long)nd->c.i);
	}
}

static bool dot_is_leaf(const Graph *g, NodeId n) { return fuse_is_leaf(&g->nodes[n]); }

static void dot_cluster(StrBuf *sb, const Plan *p, const Kernel *k)
{
	const Graph *g = p->g;
	sb_printf(sb, "  subgraph cluster_k%d {\n    label=\"%s: %s over %s\";\n", k->id, k->name,
	          k->kind == KERNEL_ROW ? "row" : "pointwise", ir_shape_str(sb->arena, g, k->rank, k->domain));
	for (int i = 0; i < k->nnodes; i++) {
		const Node *nd = &g->nodes[k->nodes[i]];
		sb_printf(sb, "    k%d_n%d [label=\"%%%d %s\\n%s\"%s];\n", k->id, k->nodes[i], k->nodes[i], ir_ops[nd->op].name,
		          ir_type_str(sb->arena, g, nd), fuse_is_reduce(nd) ? ", style=bold" : "");
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT && dot_is_leaf(g, k->params[i].node))
			sb_printf(sb, "    k%d_copy%d [label=\"copy\"];\n", k->id, k->params[i].output);
	sb_puts(sb, "  }\n");
}

/* Edges into the nodes kernel k computes, and from what it writes to the
 * outputs. mark[n] == k->id for the nodes it computes. */
static void dot_edges(StrBuf *sb, const Plan *p, const Kernel *k, const int *mark, const int *writer)
{
	const Graph *g = p->g;
	for (int i = 0; i < k->nnodes; i++) {
		const Node *nd = &g->nodes[k->nodes[i]];
		for (int j = 0; j < ir_ops[nd->op].arity; j++) {
			NodeId a = nd->args[j];
			if (dot_is_leaf(g, a))
				sb_printf(sb, "  n%d -> k%d_n%d;\n", a, k->id, k->nodes[i]);
			else if (mark[a] == k->id)
				sb_printf(sb, "  k%d_n%d -> k%d_n%d;\n", k->id, a, k->id, k->nodes[i]);
			else
				sb_printf(sb, "  k%d_n%d -> k%d_n%d [style=dashed];\n", writer[a], a, k->id, k->nodes[i]);
		}
	}
	for (int i = 0; i < k->nparams; i++) {
		const KParam *prm = &k->params[i];
		if (prm->kind != PARAM_OUT || prm->output < 0)
			continue;
		if (dot_is_leaf(g, prm->node))
			sb_printf(sb, "  n%d -> k%d_copy%d -> out%d;\n", prm->node, k->id, prm->output, prm->output);
		else
			sb_printf(sb, "  k%d_n%d -> out%d;\n", k->id, prm->node, prm->output);
	}
}

void fuse_print_dot(StrBuf *sb, const Plan *p)
{
	if (!p->g)
		return; /* no plan: the compilation stopped before fusion */
	const Graph *g = p->g;
	sb_printf(sb, "digraph \"%s\" {\n  node [shape=box, fontname=\"monospace\"];\n", g->name);
	int *mark = ARENA_ARRAY(sb->arena, int, g->n + 1);
	uint8_t *used = ARENA_ARRAY(sb->arena, uint8_t, g->n + 1);
	for (NodeId n = 0; n < g->n; n++) {
		mark[n] = -1;
		if (g->nodes[n].op == OP_INPUT)
			used[n] = 1;
	}
	for (int i = 0; i < p->nkernels; i++)
		for (int j = 0; j < p->kernels[i].nparams; j++)
			if (p->kernels[i].params[j].node >= 0)
				used[p->kernels[i].params[j].node] = 1;
	for (int i = 0; i < p->nkernels; i++)
		for (int j = 0; j < p->kernels[i].nnodes; j++) {
			const Node *nd = &g->nodes[p->kernels[i].nodes[j]];
			for (int a = 0; a < ir_ops[nd->op].arity; a++)
				used[nd->args[a]] = 1;
		}
	for (NodeId n = 0; n < g->n; n++)
		if (used[n] && dot_is_leaf(g, n))
			dot_leaf(sb, g, n);
	for (int i = 0; i < g->noutputs; i++)
		sb_printf(sb, "  out%d [label=\"%s\", shape=house];\n", i, g->outputs[i].name);
	for (int i = 0; i < p->nkernels; i++)
		dot_cluster(sb, p, &p->kernels[i]);
	const int *writer = fuse_writers(p, sb->arena);
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		for (int j = 0; j < k->nnodes; j++)
			mark[k->nodes[j]] = k->id;
		dot_edges(sb, p, k, mark, writer);
	}
	sb_puts(sb, "}\n");
}
