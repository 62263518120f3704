/*
 * test_fuse.c: the partition of the op graph into kernels (src/fuse).
 *
 * Programs go through the real pipeline up to STAGE_FUSED, in fused and in
 * per-op mode. Every plan is checked against the invariants codegen and the
 * runtime rely on (check_plan: complete parameter lists in their order,
 * dependencies before users, every output written once, reductions computed
 * once, shapes inside the domain), and its partition is compared exactly
 * with a one-line summary written out by hand:
 *
 *   "row[B, N] w=sum@3:5,y; pw[B, M] w=z r=sum@3:5"
 *
 * one entry per kernel in launch order: its kind and domain, what it writes
 * (output names; temporaries as op@line:col) and the stored values it reads.
 * Some graphs are built by hand (deep chains, dead nodes, wide kernels) to
 * test fuse_plan without the front end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "fuse/fuse.h"

/* ---- helpers ------------------------------------------------------------------------ */

static Compilation *plan_mode(const char *src, bool fused)
{
	PipeOptions opt = pipe_default_options();
	opt.stop = STAGE_FUSED;
	opt.fuse = fused;
	Compilation *c = pipe_new("test.fz", src, strlen(src), &opt);
	ck_assert_ptr_nonnull(c);
	if (pipe_run(c) != FZ_OK)
		ck_abort_msg("compile failed:\n%s\nfor program:\n%s", c->diag_text ? c->diag_text : "?", src);
	return c;
}

static char *read_text(const char *rel)
{
	FILE *f = fopen(tu_path(rel), "rb");
	ck_assert_msg(f != NULL, "cannot open %s", rel);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

static bool is_leaf(const Graph *g, NodeId n) { return ir_ops[g->nodes[n].op].arity == 0; }

static int find_param(const Kernel *k, ParamKind kind, NodeId n)
{
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == kind && k->params[i].node == n)
			return i;
	return -1;
}

/* Binary search: the nodes of a kernel are ascending (checked). */
static bool is_member(const Kernel *k, NodeId n)
{
	int lo = 0, hi = k->nnodes;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (k->nodes[mid] < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nnodes && k->nodes[lo] == n;
}

/* The kernel that writes node n (the first), or -1. */
static int writer(const Plan *p, NodeId n)
{
	for (int i = 0; i < p->nkernels; i++)
		if (find_param(&p->kernels[i], PARAM_OUT, n) >= 0)
			return i;
	return -1;
}

/* Shape s broadcasts into the domain d (NumPy rules, trailing alignment). */
static bool broadcasts_into(int rs, const Dim *s, int rd, const Dim *d)
{
	if (rs > rd)
		return false;
	for (int i = 0; i < rs; i++)
		if (s[rs - 1 - i] != 1 && s[rs - 1 - i] != d[rd - 1 - i])
			return false;
	return true;
}

static bool param_before(const Graph *g, const KParam *a, const KParam *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind;
	if (a->kind == PARAM_DIM)
		return a->dim < b->dim;
	if (a->node != b->node)
		return a->node < b->node;
	return a->output < b->output;
}

static void check_kernel(const Plan *p, const int *writers, int ki)
{
	const Graph *g = p->g;
	const Kernel *k = &p->kernels[ki];
	char name[256];
	snprintf(name, sizeof name, "%s_k%d", g->name, ki);
	ck_assert_int_eq(k->id, ki);
	ck_assert_str_eq(k->name, name);
	for (int i = 1; i < k->nparams; i++)
		ck_assert_msg(param_before(g, &k->params[i - 1], &k->params[i]), "%s: params out of order at %d", name, i);
	int nred = 0;
	for (int i = 0; i < k->nnodes; i++) {
		NodeId m = k->nodes[i];
		const Node *nd = &g->nodes[m];
		ck_assert_msg(i == 0 || k->nodes[i - 1] < m, "%s: nodes not ascending", name);
		ck_assert_msg(!is_leaf(g, m), "%s computes leaf %%%d", name, m);
		ck_assert_msg(broadcasts_into(nd->rank, nd->shape, k->rank, k->domain) ||
		                  (ir_ops[nd->op].cls == OC_REDUCE && k->kind == KERNEL_ROW),
		              "%s: %%%d is outside the domain", name, m);
		if (ir_ops[nd->op].cls == OC_REDUCE) {
			ck_assert_int_eq(k->kind, KERNEL_ROW);
			ck_assert_int_lt(nred, k->nreductions);
			ck_assert_int_eq(k->reductions[nred++], m);
			const Node *in = &g->nodes[nd->args[0]];
			ck_assert_msg(in->rank == k->rank && memcmp(in->shape, k->domain, sizeof(Dim) * (size_t)k->rank) == 0,
			              "%s: reduction %%%d is not over the kernel's rows", name, m);
		}
		for (int j = 0; j < ir_ops[nd->op].arity; j++) {
			NodeId a = nd->args[j];
			const Node *an = &g->nodes[a];
			bool ok = is_member(k, a) || an->op == OP_CONST || find_param(k, PARAM_IN, a) >= 0 ||
			          find_param(k, PARAM_SCALAR, a) >= 0;
			ck_assert_msg(ok, "%s: %%%d needs %%%d, which is neither computed nor a parameter", name, m, a);
		}
	}
	ck_assert_int_eq(nred, k->nreductions);
	if (k->kind == KERNEL_ROW)
		ck_assert_int_ge(k->nreductions, 1);
	bool dims[64] = {false};
	for (int i = 0; i < k->rank; i++)
		if (dim_is_sym(k->domain[i]))
			dims[dim_sym(k->domain[i])] = true;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *prm = &k->params[i];
		if (prm->kind == PARAM_DIM)
			continue;
		const Node *nd = &g->nodes[prm->node];
		for (int d = 0; d < nd->rank; d++)
			if (dim_is_sym(nd->shape[d]))
				dims[dim_sym(nd->shape[d])] = true;
		if (prm->kind == PARAM_SCALAR) {
			ck_assert_int_eq(nd->op, OP_INPUT);
			ck_assert_int_eq(nd->rank, 0);
		} else if (prm->kind == PARAM_IN && nd->op != OP_INPUT) {
			int w = writers[prm->node];
			ck_assert_msg(w >= 0 && w < ki, "%s reads %%%d, written by k%d", name, prm->node, w);
			bool dep = false;
			for (int j = 0; j < k->ndeps; j++)
				dep |= k->deps[j] == w;
			ck_assert_msg(dep, "%s reads from k%d without depending on it", name, w);
			int first = -1;
			for (int o = g->noutputs - 1; o >= 0; o--)
				if (g->outputs[o].node == prm->node)
					first = o;
			ck_assert_int_eq(prm->output, first);
		} else if (prm->kind == PARAM_OUT) {
			ck_assert_msg(is_member(k, prm->node) || is_leaf(g, prm->node), "%s writes %%%d it does not compute",
			              name, prm->node);
			if (nd->op == OP_INPUT)
				ck_assert(find_param(k, nd->rank ? PARAM_IN : PARAM_SCALAR, prm->node) >= 0);
			if (prm->output >= 0)
				ck_assert_int_eq(g->outputs[prm->output].node, prm->node);
			else
				ck_assert(p->stored[prm->node]);
		}
	}
	for (int i = 0; i < k->nnodes; i++) {
		const Node *nd = &g->nodes[k->nodes[i]];
		for (int d = 0; d < nd->rank; d++)
			if (dim_is_sym(nd->shape[d]))
				dims[dim_sym(nd->shape[d])] = true;
	}
	for (int d = 0; d < g->ndims && d < 64; d++) {
		bool listed = false;
		for (int i = 0; i < k->nparams; i++)
			listed |= k->params[i].kind == PARAM_DIM && k->params[i].dim == d;
		ck_assert_msg(listed == dims[d], "%s: dim %s %s", name, g->dims[d], listed ? "listed but unused" : "missing");
	}
	for (int j = 0; j < k->ndeps; j++) {
		ck_assert_int_lt(k->deps[j], ki);
		ck_assert(j == 0 || k->deps[j - 1] < k->deps[j]);
	}
}

/* The invariants every plan must keep. */
static void check_plan(const Plan *p)
{
	const Graph *g = p->g;
	int *writers = malloc(sizeof(int) * (size_t)(g->n + 1));
	int *writes = calloc((size_t)g->n + 1, sizeof(int)), *reads = calloc((size_t)g->n + 1, sizeof(int));
	int *computed = calloc((size_t)g->n + 1, sizeof(int)), *outs = calloc((size_t)g->noutputs + 1, sizeof(int));
	ck_assert(writers && writes && reads && computed && outs);
	for (NodeId n = 0; n < g->n; n++)
		writers[n] = -1;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		for (int j = 0; j < k->nparams; j++) {
			const KParam *prm = &k->params[j];
			if (prm->kind == PARAM_OUT) {
				if (writers[prm->node] < 0)
					writers[prm->node] = i;
				writes[prm->node]++;
				if (prm->output >= 0)
					outs[prm->output]++;
			}
			reads[prm->node < 0 ? g->n : prm->node] += prm->kind == PARAM_IN;
		}
		for (int j = 0; j < k->nnodes; j++)
			computed[k->nodes[j]]++;
	}
	for (int i = 0; i < p->nkernels; i++)
		check_kernel(p, writers, i);
	for (int o = 0; o < g->noutputs; o++)
		ck_assert_msg(outs[o] == 1, "output %d written %d times", o, outs[o]);
	for (int t = 0; t < p->ntemps; t++) {
		NodeId n = p->temps[t];
		ck_assert_msg(writes[n] == 1 && reads[n] >= 1, "temp %%%d written %d times, read %d times", n, writes[n], reads[n]);
		ck_assert(t == 0 || p->temps[t - 1] < n);
	}
	for (NodeId n = 0; n < g->n; n++)
		if (ir_ops[g->nodes[n].op].cls == OC_REDUCE)
			ck_assert_msg(computed[n] == 1, "reduction %%%d computed in %d kernels", n, computed[n]);
	for (int i = 0; i < p->nunfused; i++)
		ck_assert_ptr_nonnull(p->unfused[i].why);
	free(writers);
	free(writes);
	free(reads);
	free(computed);
	free(outs);
}

/* "row[B, N] w=y,m r=sum@3:5; ..." (see the top of the file). */
static const char *summary(Compilation *c)
{
	const Plan *p = &c->plan;
	const Graph *g = p->g;
	StrBuf sb;
	sb_init(&sb, c->arena);
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		sb_printf(&sb, "%s%s[", i ? "; " : "", k->kind == KERNEL_ROW ? "row" : "pw");
		for (int d = 0; d < k->rank; d++) {
			if (dim_is_sym(k->domain[d]))
				sb_printf(&sb, "%s%s", d ? ", " : "", g->dims[dim_sym(k->domain[d])]);
			else
				sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)k->domain[d]);
		}
		sb_puts(&sb, "]");
		for (int pass = 0; pass < 2; pass++) {
			bool any = false;
			for (int j = 0; j < k->nparams; j++) {
				const KParam *prm = &k->params[j];
				const Node *nd = &g->nodes[prm->node < 0 ? 0 : prm->node];
				if (prm->kind != (pass ? PARAM_IN : PARAM_OUT) || (pass && nd->op == OP_INPUT))
					continue;
				sb_puts(&sb, any ? "," : pass ? " r=" : " w=");
				any = true;
				if (prm->output >= 0)
					sb_puts(&sb, g->outputs[prm->output].name);
				else
					sb_printf(&sb, "%s@%d:%d", ir_ops[nd->op].name, nd->span.line, nd->span.col);
			}
		}
	}
	return sb_str(&sb);
}

/* Plan src in fused mode, check it, and compare its summary. */
static Compilation *expect_plan(const char *src, bool fused, const char *want)
{
	Compilation *c = plan_mode(src, fused);
	check_plan(&c->plan);
	const char *got = summary(c);
	ck_assert_msg(strcmp(got, want) == 0, "plan of:\n%s\ngot:  %s\nwant: %s", src, got, want);
	return c;
}

static const char *emit(Compilation *c, void (*fn)(StrBuf *, const Plan *))
{
	StrBuf sb;
	sb_init(&sb, c->arena);
	fn(&sb, &c->plan);
	return sb_str(&sb);
}

static int count_kernels_with(const Plan *p, NodeId n)
{
	int k = 0;
	for (int i = 0; i < p->nkernels; i++)
		k += is_member(&p->kernels[i], n);
	return k;
}

/* Per-op mode: one kernel per non-leaf node except implicit casts, plus one
 * per leaf that is an output. */
static int per_op_kernels(const Graph *g)
{
	int k = 0;
	for (NodeId n = 0; n < g->n; n++) {
		const Node *nd = &g->nodes[n];
		bool out = false;
		for (int o = 0; o < g->noutputs; o++)
			out |= g->outputs[o].node == n;
		if (is_leaf(g, n))
			k += out;
		else
			k += !(nd->op == OP_CAST && (nd->flags & NF_IMPLICIT)) || out;
	}
	return k;
}

/* ---- the examples ------------------------------------------------------------------------ */

static const struct {
	const char *name;
	int per_op;          /* kernels in per-op mode */
	const char *bytes;   /* fused: the bytes the one kernel moves */
} examples[] = {
	{"adam", 16, "28*N"},
	{"add_scale_bias_relu", 4, "16*N"},
	{"bias_gelu_residual_layernorm", 12, "12*R*C + 12*C"},
	{"gelu_tanh", 9, "8*N"},
	{"l2norm", 6, "8*B*N"},
	{"layernorm", 9, "8*R*C + 8*C"},
	{"layernorm_bf16", 10, "4*R*C + 4*C"},
	{"layernorm_f16", 10, "4*R*C + 4*C"},
	{"log_softmax", 6, "8*B*N"},
	{"logsumexp", 6, "4*B*N + 4*B"},
	{"rmsnorm", 6, "8*R*C + 4*C"},
	{"rowsum_sq", 2, "4*R*C + 4*R"},
	{"softmax", 5, "8*B*N"},
	{"softmax_bf16", 5, "4*B*N"},
	{"softmax_f16", 5, "4*B*N"},
	{"spec_layernorm_gelu", 19, "6*R*C + 4*C"},
	{"spec_relu", 4, "16*N"},
	{"spec_softmax", 5, "8*B*N"},
};

START_TEST(example_is_one_kernel)
{
	char rel[256];
	snprintf(rel, sizeof rel, "examples/%s.fz", examples[_i].name);
	const char *src = read_text(rel);
	Compilation *c = plan_mode(src, true);
	const Plan *p = &c->plan;
	check_plan(p);
	ck_assert_msg(p->nkernels == 1, "%s: %d kernels", rel, p->nkernels);
	ck_assert_int_eq(p->ntemps, 0);
	ck_assert_int_eq(p->nunfused, 0);
	int outs = 0;
	for (int j = 0; j < p->kernels[0].nparams; j++)
		outs += p->kernels[0].params[j].kind == PARAM_OUT;
	ck_assert_int_eq(outs, c->graph.noutputs);
	char want[128];
	snprintf(want, sizeof want, "\ntotal bytes: %s\n", examples[_i].bytes);
	const char *text = emit(c, fuse_print);
	ck_assert_msg(strstr(text, want), "%s:\n%s", rel, text);
	ck_assert_str_eq(emit(c, fuse_explain), "no edge crosses kernels (1 kernel)\n");
	pipe_free(c);

	c = plan_mode(src, false);
	check_plan(&c->plan);
	ck_assert_int_eq(c->plan.nkernels, per_op_kernels(&c->graph));
	ck_assert_int_eq(c->plan.nkernels, examples[_i].per_op);
	ck_assert(!c->plan.fused);
	pipe_free(c);
}
END_TEST

START_TEST(softmax_listing)
{
	Compilation *c = plan_mode(read_text("examples/softmax.fz"), true);
	ck_assert_str_eq(emit(c, fuse_print), "plan test (fused): 1 kernel, 0 temporaries\n"
	                                      "kernel test_k0: row over [B, N]\n"
	                                      "  nodes: %1 max, %2 sub, %3 exp, %4 sum, %5 div\n"
	                                      "  reductions: %1 max, %4 sum\n"
	                                      "  reads: x %0 f32[B, N]\n"
	                                      "  writes: y %5 f32[B, N]\n"
	                                      "  dims: B, N\n"
	                                      "  bytes: 8*B*N\n"
	                                      "total bytes: 8*B*N\n");
	const Kernel *k = &c->plan.kernels[0];
	ck_assert_int_eq(k->nparams, 4);
	ck_assert_int_eq(k->params[0].kind, PARAM_IN);
	ck_assert_int_eq(k->params[0].node, 0);
	ck_assert_int_eq(k->params[0].output, -1);
	ck_assert_int_eq(k->params[1].kind, PARAM_OUT);
	ck_assert_int_eq(k->params[1].node, 5);
	ck_assert_int_eq(k->params[1].output, 0);
	ck_assert_int_eq(k->params[2].kind, PARAM_DIM);
	ck_assert_int_eq(k->params[3].kind, PARAM_DIM);
	ck_assert_int_eq(k->params[2].dim, 0);
	ck_assert_int_eq(k->params[3].dim, 1);
	pipe_free(c);
}
END_TEST

/* Two outputs of one row group (y and gelu(y)) and the per-row statistics
 * in f32: one kernel, as the spec says. */
START_TEST(spec_layernorm_gelu_two_outputs)
{
	Compilation *c = expect_plan(read_text("examples/spec_layernorm_gelu.fz"), true, "row[R, C] w=y,act");
	const Kernel *k = &c->plan.kernels[0];
	ck_assert_int_eq(k->nreductions, 2);
	ck_assert_int_eq(c->graph.nodes[k->reductions[0]].op, OP_MEAN);
	ck_assert_int_eq(c->graph.nodes[k->reductions[1]].op, OP_MEAN);
	ck_assert_int_lt(k->reductions[0], k->reductions[1]);
	pipe_free(c);
}
END_TEST

START_TEST(adam_three_outputs)
{
	Compilation *c = expect_plan(read_text("examples/adam.fz"), true, "pw[N] w=m_new,v_new,p_new");
	int scalars = 0, ins = 0;
	for (int j = 0; j < c->plan.kernels[0].nparams; j++) {
		scalars += c->plan.kernels[0].params[j].kind == PARAM_SCALAR;
		ins += c->plan.kernels[0].params[j].kind == PARAM_IN;
	}
	ck_assert_int_eq(scalars, 6);
	ck_assert_int_eq(ins, 4);
	pipe_free(c);
}
END_TEST

/* ---- partitions ---------------------------------------------------------------------------- */

START_TEST(diamond)
{
	const char *src = "in x: f32[N]\n"
	                  "a = exp(x)\n"
	                  "b = a + 1\n"
	                  "c = a * 2\n"
	                  "out y = b * c\n";
	Compilation *c = expect_plan(src, true, "pw[N] w=y");
	ck_assert_int_eq(c->plan.kernels[0].nnodes, 4);
	pipe_free(c);
	c = expect_plan(src, false,
	                "pw[N] w=exp@2:5; pw[N] w=add@3:5 r=exp@2:5; pw[N] w=mul@4:5 r=exp@2:5; pw[N] w=y r=add@3:5,mul@4:5");
	ck_assert_int_eq(c->plan.ntemps, 3);
	ck_assert_int_eq(c->plan.kernels[3].ndeps, 2);
	pipe_free(c);
}
END_TEST

/* A cheap producer used in two iteration spaces is recomputed in both, never
 * stored. */
START_TEST(shared_producer_is_recomputed)
{
	const char *src = "in x: f32[N]\n"
	                  "in w: f32[M, N]\n"
	                  "a = exp(x)\n"
	                  "out y = a + 1\n"
	                  "out z = a * w\n";
	Compilation *c = expect_plan(src, true, "pw[N] w=y; pw[M, N] w=z");
	ck_assert_int_eq(c->plan.ntemps, 0);
	ck_assert_int_eq(count_kernels_with(&c->plan, 2), 2);
	ck_assert_int_eq(c->plan.kernels[1].ndeps, 0);
	pipe_free(c);
}
END_TEST

START_TEST(node_that_is_two_outputs)
{
	const char *src = "in x: f32[N]\n"
	                  "y = x * 2\n"
	                  "out a = y\n"
	                  "out b = y\n"
	                  "out c = x\n";
	Compilation *c = expect_plan(src, true, "pw[N] w=c,a,b");
	pipe_free(c);
	c = expect_plan(src, false, "pw[N] w=c; pw[N] w=a,b");
	ck_assert_int_eq(c->plan.kernels[0].nnodes, 0);
	ck_assert_int_eq(c->plan.ntemps, 0);
	pipe_free(c);
}
END_TEST

START_TEST(outputs_that_are_inputs_or_constants)
{
	const char *src = "in x: f32[N]\n"
	                  "in s: f32\n"
	                  "out y = x\n"
	                  "out c = 2.0\n"
	                  "out t = s\n"
	                  "out u = x + 1\n"
	                  "out u2 = u\n";
	Compilation *c = expect_plan(src, true, "pw[N] w=y,u,u2; pw[] w=t,c");
	const Kernel *fill = &c->plan.kernels[1];
	ck_assert_int_eq(fill->nnodes, 0);
	ck_assert_int_eq(fill->params[0].kind, PARAM_OUT);
	ck_assert_int_eq(fill->params[2].kind, PARAM_SCALAR);
	ck_assert_str_eq(emit(c, fuse_print), "plan test (fused): 2 kernels, 0 temporaries\n"
	                                      "kernel test_k0: pointwise over [N]\n"
	                                      "  nodes: %4 add\n"
	                                      "  reads: x %0 f32[N]\n"
	                                      "  writes: y %0 f32[N] (copy of x), u %4 f32[N], u2 %4 f32[N]\n"
	                                      "  dims: N\n"
	                                      "  bytes: 16*N\n"
	                                      "kernel test_k1: pointwise over []\n"
	                                      "  nodes: -\n"
	                                      "  writes: t %1 f32 (copy of s), c %2 f32 (fill)\n"
	                                      "  scalars: s %1 f32\n"
	                                      "  bytes: 8\n"
	                                      "total bytes: 16*N + 8\n");
	pipe_free(c);
	c = expect_plan(src, false, "pw[N] w=y; pw[] w=t; pw[] w=c; pw[N] w=u,u2");
	pipe_free(c);
}
END_TEST

/* Later reductions over the same rows that depend on earlier ones are
 * phases of one kernel. */
START_TEST(softmax_of_softmax)
{
	const char *src = "in x: f32[B, N]\n"
	                  "e = exp(x - max(x))\n"
	                  "s = e / sum(e)\n"
	                  "f = exp(s - max(s))\n"
	                  "out y = f / sum(f)\n";
	Compilation *c = expect_plan(src, true, "row[B, N] w=y");
	const Kernel *k = &c->plan.kernels[0];
	static const Op ops[] = {OP_MAX, OP_SUM, OP_MAX, OP_SUM};
	ck_assert_int_eq(k->nreductions, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(c->graph.nodes[k->reductions[i]].op, ops[i]);
	pipe_free(c);
	c = plan_mode(src, false);
	check_plan(&c->plan);
	ck_assert_int_eq(c->plan.nkernels, 10);
	for (int i = 0; i < c->plan.nkernels; i++)
		ck_assert_int_le(c->plan.kernels[i].nreductions, 1);
	pipe_free(c);
}
END_TEST

/* sum over [B, M] of something made from a sum over [B, N], and back: three
 * kernels, and only the two sums are stored (s * 2 is recomputed). */
START_TEST(reductions_feeding_reductions_across_rows)
{
	const char *src = "in x: f32[B, N]\n"
	                  "in y: f32[B, M]\n"
	                  "s = sum(x)\n"
	                  "t = sum(y * (s * 2))\n"
	                  "q = sum(x * t)\n"
	                  "out n = s + q\n";
	Compilation *c = expect_plan(src, true, "row[B, N] w=sum@3:5; row[B, M] w=sum@4:5 r=sum@3:5; row[B, N] w=n r=sum@3:5,sum@4:5");
	ck_assert_int_eq(c->plan.ntemps, 2);
	ck_assert_int_eq(c->plan.kernels[2].ndeps, 2);
	ck_assert_str_eq(emit(c, fuse_explain),
	                 "%2 (sum at 3:5) is stored: its consumer %4 iterates over the rows [B, M], not the rows [B, N]\n"
	                 "%6 (sum at 4:5) is stored: its consumer %7 iterates over the rows [B, N], not the rows [B, M]\n"
	                 "%2 (sum at 3:5) is stored: its consumer %9, over the same [B, N], also needs %6 from k1, "
	                 "which runs after k0\n");
	pipe_free(c);
}
END_TEST

START_TEST(broadcast_operands_in_rows)
{
	const char *src = "in x: f32[B, N]\n"
	                  "in c: f32[B, 1]\n"
	                  "in w: f32[N]\n"
	                  "h = x * c + w\n"
	                  "out y = h / sum(h)\n";
	Compilation *c = expect_plan(src, true, "row[B, N] w=y");
	ck_assert(strstr(emit(c, fuse_print), "\n  bytes: 8*B*N + 4*B + 4*N\n"));
	pipe_free(c);
	c = expect_plan(src, false, "pw[B, N] w=mul@4:5; pw[B, N] w=add@4:5 r=mul@4:5; row[B, N] w=sum@5:13 r=add@4:5; "
	                            "pw[B, N] w=y r=add@4:5,sum@5:13");
	pipe_free(c);
}
END_TEST

START_TEST(three_and_four_dims)
{
	Compilation *c = expect_plan("in x: f32[A, B, N]\n"
	                             "e = exp(x - max(x))\n"
	                             "out y = e / sum(e)\n",
	                             true, "row[A, B, N] w=y");
	pipe_free(c);
	c = expect_plan("in x: f32[A, B, C, N]\n"
	                "in w: f32[N]\n"
	                "in v: f32[C, 1]\n"
	                "mu = mean(x * v)\n"
	                "xc = x * v - mu\n"
	                "out y = xc * rsqrt(mean(xc * xc) + 1e-5) * w\n"
	                "out m = mu\n",
	                true, "row[A, B, C, N] w=m,y");
	pipe_free(c);
	/* A per-row value of [B, N] rows used over [A, B, N]: another space. */
	c = expect_plan("in x: f32[B, N]\n"
	                "in z: f32[A, B, N]\n"
	                "out y = z - max(x)\n",
	                true, "row[B, N] w=max@3:13; pw[A, B, N] w=y r=max@3:13");
	pipe_free(c);
}
END_TEST

START_TEST(rows_of_different_lengths)
{
	Compilation *c = expect_plan("in x: f32[B, N]\n"
	                             "in y: f32[B, M]\n"
	                             "out a = sum(x) + sum(y)\n",
	                             true, "row[B, M] w=sum@3:18; row[B, N] w=a r=sum@3:18");
	ck_assert_str_eq(emit(c, fuse_explain),
	                 "%3 (sum at 3:18) is stored: its consumer %4 iterates over the rows [B, N], not the rows [B, M]\n");
	pipe_free(c);
	/* Independent: two kernels, nothing stored, no order. */
	c = expect_plan("in x: f32[B, N]\n"
	                "in y: f32[B, M]\n"
	                "out a = sum(x)\n"
	                "out b = max(y)\n",
	                true, "row[B, N] w=a; row[B, M] w=b");
	ck_assert_int_eq(c->plan.kernels[1].ndeps, 0);
	pipe_free(c);
}
END_TEST

/* A reduced value broadcast into another iteration space: the per-row value
 * is stored, never the full row (exp(x - m) is recomputed from m). */
START_TEST(reduced_value_in_another_space)
{
	Compilation *c = expect_plan("in x: f32[B, N]\n"
	                             "in v: f32[B, M]\n"
	                             "s = sum(x)\n"
	                             "out y = x / s\n"
	                             "out z = s * v\n",
	                             true, "row[B, N] w=sum@3:5,y; pw[B, M] w=z r=sum@3:5");
	ck_assert_str_eq(emit(c, fuse_explain),
	                 "%2 (sum at 3:5) is stored: its consumer %4 iterates over [B, M], not the rows [B, N]\n");
	ck_assert_int_eq(c->plan.nunfused, 1);
	ck_assert_int_eq(c->plan.unfused[0].producer, 2);
	ck_assert_int_eq(c->plan.unfused[0].consumer, 4);
	ck_assert_int_eq(c->plan.unfused[0].kernel, 1);
	pipe_free(c);
	c = expect_plan("in x: f32[B, N]\n"
	                "in w: f32[C, B, N]\n"
	                "e = exp(x - max(x))\n"
	                "out y = e / sum(e)\n"
	                "out z = e * w\n",
	                true, "row[B, N] w=max@3:13,y; pw[C, B, N] w=z r=max@3:13");
	ck_assert_int_eq(c->plan.ntemps, 1);
	ck_assert_int_eq(count_kernels_with(&c->plan, 4), 2); /* exp */
	pipe_free(c);
	c = expect_plan("in x: f32[B, N]\n"
	                "in w: f32[C, B, 1]\n"
	                "out z = sum(x) * w\n",
	                true, "row[B, N] w=sum@3:9; pw[C, B, 1] w=z r=sum@3:9");
	pipe_free(c);
	/* A stored output is read from its output buffer, not stored again. */
	c = expect_plan("in x: f32[B, N]\n"
	                "in v: f32[B, M]\n"
	                "out z = v * max(x)\n"
	                "out m = max(x)\n",
	                true, "row[B, N] w=m; pw[B, M] w=z r=m");
	ck_assert_int_eq(c->plan.ntemps, 0);
	const KParam *in = &c->plan.kernels[1].params[1];
	ck_assert_int_eq(in->kind, PARAM_IN);
	ck_assert_int_eq(in->output, 1);
	pipe_free(c);
}
END_TEST

/* A group nobody reads yet moves after the kernel it needs: softmax and
 * x * sum(y) / sum(x) stay one kernel after the [B, M] sum. */
START_TEST(group_waits_for_what_it_reads)
{
	Compilation *c = expect_plan("in x: f32[B, N]\n"
	                             "in y: f32[B, M]\n"
	                             "e = exp(x - max(x))\n"
	                             "out a = e / sum(e)\n"
	                             "out b = x * sum(y) / sum(x)\n",
	                             true, "row[B, M] w=sum@5:13; row[B, N] w=a,b r=sum@5:13");
	pipe_free(c);
}
END_TEST

START_TEST(free_outputs_join_row_kernels)
{
	Compilation *c = expect_plan("in x: f32[B, N]\n"
	                             "h = x * 2\n"
	                             "out y = exp(h - max(h))\n"
	                             "out h2 = h\n",
	                             true, "row[B, N] w=h2,y");
	pipe_free(c);
	c = expect_plan("in x: f32[B, N]\n"
	                "in c: f32[B, 1]\n"
	                "out m = max(x)\n"
	                "out d = c * 2\n",
	                true, "row[B, N] w=m,d");
	pipe_free(c);
	c = expect_plan("in x1: f32[B, N]\n"
	                "in x2: f32[B, N]\n"
	                "out a = sum(x1)\n"
	                "out b = max(x2)\n"
	                "out c = x1 - x2\n",
	                true, "row[B, N] w=a,b,c");
	ck_assert_int_eq(c->plan.kernels[0].nreductions, 2);
	pipe_free(c);
}
END_TEST

START_TEST(per_op_folds_implicit_casts)
{
	Compilation *c = expect_plan("in x: f16[N]\n"
	                             "in y: f32[N]\n"
	                             "out z = x + y\n",
	                             false, "pw[N] w=z");
	const Kernel *k = &c->plan.kernels[0];
	ck_assert_int_eq(k->nnodes, 2);
	ck_assert_int_eq(c->graph.nodes[k->nodes[0]].op, OP_CAST);
	ck_assert_str_eq(emit(c, fuse_explain),
	                 "per-op mode (--no-fuse): every op is its own kernel and stores its value, as eager PyTorch runs "
	                 "them; implicit casts are computed by their consumers (1 kernel, 0 edges cross kernels)\n");
	pipe_free(c);
	c = expect_plan("in x: f16[B, N]\n"
	                "in y: f32[B, N]\n"
	                "out z = sum(x * y)\n",
	                false, "pw[B, N] w=mul@3:13; row[B, N] w=z r=mul@3:13");
	ck_assert_int_eq(c->plan.kernels[0].nnodes, 2);
	pipe_free(c);
}
END_TEST

START_TEST(scalar_arithmetic)
{
	const char *src = "in s: f32\n"
	                  "in x: f32[N]\n"
	                  "out y = x * (s * s)\n";
	Compilation *c = expect_plan(src, true, "pw[N] w=y");
	pipe_free(c);
	c = expect_plan(src, false, "pw[] w=mul@3:13; pw[N] w=y r=mul@3:13");
	ck_assert_str_eq(emit(c, fuse_explain),
	                 "per-op mode (--no-fuse): every op is its own kernel and stores its value, as eager PyTorch runs "
	                 "them; implicit casts are computed by their consumers (2 kernels, 1 edge crosses kernels)\n");
	pipe_free(c);
}
END_TEST

START_TEST(dot_graph)
{
	Compilation *c = plan_mode("in x: f32[B, N]\n"
	                           "in v: f32[B, M]\n"
	                           "s = sum(x)\n"
	                           "out y = x / s\n"
	                           "out z = s * v\n",
	                           true);
	const char *dot = emit(c, fuse_print_dot);
	static const char *want[] = {
		"digraph \"test\" {\n",
		"  n0 [label=\"x\\nf32[B, N]\", shape=invhouse];\n",
		"  out1 [label=\"z\", shape=house];\n",
		"  subgraph cluster_k0 {\n    label=\"test_k0: row over [B, N]\";\n",
		"    k0_n2 [label=\"%2 sum\\nf32[B, 1]\", style=bold];\n",
		"  subgraph cluster_k1 {\n    label=\"test_k1: pointwise over [B, M]\";\n",
		"  k0_n2 -> k1_n4 [style=dashed];\n",
		"  k0_n2 -> k0_n3;\n",
		"  k1_n4 -> out1;\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(dot, want[i]), "missing %s in:\n%s", want[i], dot);
	ck_assert_str_eq(dot + strlen(dot) - 2, "}\n");
	pipe_free(c);
}
END_TEST

/* ---- deep, wide and hand-built graphs -------------------------------------------------------- */

static char *chain_source(int n)
{
	size_t cap = (size_t)n * 40 + 100, len = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	len += (size_t)snprintf(s + len, cap - len, "in x: f32[N]\na0 = x + 1.0\n");
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "a%d = a%d * 1.5 + x\n", i, i - 1);
	snprintf(s + len, cap - len, "out y = a%d\n", n - 1);
	return s;
}

/* 100,000 bindings: one kernel fused, one per op otherwise, no recursion. */
START_TEST(deep_chain)
{
	char *src = chain_source(100000);
	Compilation *c = plan_mode(src, true);
	ck_assert_int_eq(c->plan.nkernels, 1);
	ck_assert_int_eq(c->plan.kernels[0].nnodes, 200000 - 1);
	check_plan(&c->plan);
	pipe_free(c);
	c = plan_mode(src, false);
	ck_assert_int_eq(c->plan.nkernels, 200000 - 1);
	ck_assert_int_eq(c->plan.ntemps, 200000 - 2);
	ck_assert_int_eq(c->plan.nunfused, 2 * (100000 - 1));
	const Kernel *last = &c->plan.kernels[c->plan.nkernels - 1];
	ck_assert_int_eq(last->ndeps, 1);
	ck_assert_int_eq(last->deps[0], c->plan.nkernels - 2);
	pipe_free(c);
	free(src);
}
END_TEST

/* 20,000 alternations between rows [B, N] and [B, M]: 40,000 row kernels,
 * each reading the one before. */
START_TEST(deep_chain_of_row_kernels)
{
	int n = 20000;
	size_t cap = (size_t)n * 60 + 100, len = 0;
	char *src = malloc(cap);
	ck_assert_ptr_nonnull(src);
	len += (size_t)snprintf(src + len, cap - len, "in x: f32[B, N]\nin y: f32[B, M]\ns0 = sum(x)\n");
	for (int i = 1; i < n; i++)
		len += (size_t)snprintf(src + len, cap - len, "t%d = sum(y * s%d); s%d = sum(x * t%d)\n", i, i - 1, i, i);
	snprintf(src + len, cap - len, "out z = s%d\n", n - 1);
	Compilation *c = plan_mode(src, true);
	const Plan *p = &c->plan;
	ck_assert_int_eq(p->nkernels, 2 * n - 1);
	ck_assert_int_eq(p->ntemps, 2 * n - 2);
	for (int i = 1; i < p->nkernels; i++) {
		ck_assert_int_eq(p->kernels[i].ndeps, 1);
		ck_assert_int_eq(p->kernels[i].deps[0], i - 1);
		ck_assert_int_eq(p->kernels[i].nreductions, 1);
	}
	pipe_free(c);
	free(src);
}
END_TEST

/* 256 inputs and 256 outputs over one shape would pass 4 KiB of kernel
 * parameters: the pointwise kernel is split. */
START_TEST(wide_pointwise_kernel_is_split)
{
	size_t cap = 256 * 60, len = 0;
	char *src = malloc(cap);
	ck_assert_ptr_nonnull(src);
	for (int i = 0; i < 256; i++)
		len += (size_t)snprintf(src + len, cap - len, "in x%d: f32[N]\n", i);
	for (int i = 0; i < 256; i++)
		len += (size_t)snprintf(src + len, cap - len, "out y%d = x%d + x%d\n", i, i, (i + 1) % 256);
	Compilation *c = plan_mode(src, true);
	const Plan *p = &c->plan;
	check_plan(p);
	ck_assert_int_eq(p->nkernels, 2);
	for (int i = 0; i < p->nkernels; i++)
		ck_assert_int_le(p->kernels[i].nparams * 8, FZ_MAX_KERNEL_PARAM_BYTES - 32);
	pipe_free(c);
	free(src);
}
END_TEST

/* A row kernel that needs too many parameters is an error, not a bad kernel. */
START_TEST(wide_row_kernel_is_an_error)
{
	size_t cap = 256 * 60, len = 0;
	char *src = malloc(cap);
	ck_assert_ptr_nonnull(src);
	for (int i = 0; i < 256; i++)
		len += (size_t)snprintf(src + len, cap - len, "in x%d: f32[B, N]\n", i);
	len += (size_t)snprintf(src + len, cap - len, "s = sum(x0)\n");
	for (int i = 0; i < 256; i++)
		len += (size_t)snprintf(src + len, cap - len, "out y%d = x%d / s\n", i, i);
	const char *err = tu_error(src, STAGE_FUSED);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "test.fz:258:5: error: kernel test_k0 would take 4112 bytes of parameters; the limit is 4064\n"),
	              "%s", err);
	free(src);
}
END_TEST

typedef struct GB {
	Arena *a;
	Graph g;
	int cap, capin, capout;
} GB;

static void gb_init(GB *b)
{
	memset(b, 0, sizeof *b);
	b->a = arena_new();
	ck_assert_ptr_nonnull(b->a);
	b->g.arena = b->a;
	b->g.name = "hand";
	static const char *dims[] = {"B", "N", "M"};
	b->g.dims = dims;
	b->g.ndims = 3;
}

static NodeId gb_node(GB *b, Op op, int rank, Dim d0, Dim d1, NodeId a0, NodeId a1)
{
	Node nd = {.op = (uint16_t)op, .dtype = FZ_F32, .rank = (uint8_t)rank, .args = {a0, a1, -1}, .input = -1};
	nd.shape[0] = d0;
	nd.shape[1] = d1;
	nd.span = (Span){0, 1, 1, 1};
	VEC_PUSH(b->a, b->g.nodes, b->g.n, b->cap, nd);
	return b->g.n - 1;
}

static NodeId gb_input(GB *b, const char *name, Dim d0, Dim d1)
{
	NodeId n = gb_node(b, OP_INPUT, 2, d0, d1, -1, -1);
	b->g.nodes[n].input = b->g.ninputs;
	IrInput in = {name, n, {0, 1, 1, 1}};
	VEC_PUSH(b->a, b->g.inputs, b->g.ninputs, b->capin, in);
	return n;
}

static void gb_output(GB *b, const char *name, NodeId n)
{
	IrOutput o = {name, n, {0, 1, 1, 1}};
	VEC_PUSH(b->a, b->g.outputs, b->g.noutputs, b->capout, o);
}

/* fuse_plan on a graph nothing pruned: a dead consumer in another space must
 * not make the plan store anything. */
START_TEST(dead_nodes_are_ignored)
{
	GB b;
	gb_init(&b);
	Dim B = DIM_SYM(0), N = DIM_SYM(1), M = DIM_SYM(2);
	NodeId x = gb_input(&b, "x", B, N), y = gb_input(&b, "y", B, M);
	NodeId s = gb_node(&b, OP_SUM, 2, B, 1, x, -1);
	gb_node(&b, OP_MUL, 2, B, M, s, y); /* dead */
	NodeId o = gb_node(&b, OP_DIV, 2, B, N, x, s);
	gb_output(&b, "o", o);
	for (int fused = 0; fused < 2; fused++) {
		Plan p;
		Diag d = {0};
		ck_assert(fuse_plan(&b.g, fused, b.a, &p, &d));
		check_plan(&p);
		ck_assert_int_eq(p.nkernels, fused ? 1 : 2);
		ck_assert_int_eq(p.ntemps, fused ? 0 : 1);
		for (int i = 0; i < p.nkernels; i++)
			ck_assert(!is_member(&p.kernels[i], 3));
	}
	arena_free(b.a);
}
END_TEST

/* A 100,000-node chain built by hand, without the front end: fuse_plan alone. */
START_TEST(hand_built_deep_chain)
{
	GB b;
	gb_init(&b);
	Dim B = DIM_SYM(0), N = DIM_SYM(1);
	NodeId x = gb_input(&b, "x", B, N), v = x;
	for (int i = 0; i < 100000; i++)
		v = gb_node(&b, i % 3 ? OP_EXP : OP_ADD, 2, B, N, v, i % 3 ? -1 : x);
	NodeId s = gb_node(&b, OP_MAX, 2, B, 1, v, -1);
	gb_output(&b, "y", gb_node(&b, OP_SUB, 2, B, N, v, s));
	Plan p;
	Diag d = {0};
	ck_assert(fuse_plan(&b.g, true, b.a, &p, &d));
	ck_assert_int_eq(p.nkernels, 1);
	ck_assert_int_eq(p.kernels[0].kind, KERNEL_ROW);
	ck_assert_int_eq(p.kernels[0].nnodes, 100002);
	StrBuf sb;
	sb_init(&sb, b.a);
	fuse_print(&sb, &p);
	fuse_print_dot(&sb, &p);
	fuse_explain(&sb, &p);
	ck_assert(fuse_plan(&b.g, false, b.a, &p, &d));
	ck_assert_int_eq(p.nkernels, 100002);
	arena_free(b.a);
}
END_TEST

/* ---- random programs ------------------------------------------------------------------------ */

/* Shapes as strings of dims, '1' for a literal 1: "BN" is [B, N]. */
static bool bcast(const char *a, const char *b, char *out)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	for (size_t i = 0; i < n; i++) {
		char x = i < la ? a[la - 1 - i] : '1', y = i < lb ? b[lb - 1 - i] : '1';
		if (x != y && x != '1' && y != '1')
			return false;
		out[n - 1 - i] = x == '1' ? y : x;
	}
	out[n] = 0;
	return n <= 3;
}

static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

/* A random program over a few shapes, with reductions, broadcasts into other
 * spaces and several outputs; returns its text in buf. */
static void random_program(unsigned seed, char *buf, size_t cap)
{
	static const char *in_names[] = {"x", "y", "c", "w", "z", "h", "s"};
	static const char *in_shapes[] = {"BN", "BM", "B1", "N", "CBN", "BN", ""};
	static const char *in_decl[] = {"f32[B, N]", "f32[B, M]", "f32[B, 1]", "f32[N]", "f32[C, B, N]", "f16[B, N]", "f32"};
	char names[64][16], shapes[64][4]; /* room for "v%d" of any int: -O0 cannot see nv < 64 */
	int nv = 0;
	size_t len = 0;
	for (int i = 0; i < 7; i++) {
		len += (size_t)snprintf(buf + len, cap - len, "in %s: %s\n", in_names[i], in_decl[i]);
		snprintf(names[nv], sizeof names[nv], "%s", in_names[i]);
		snprintf(shapes[nv++], sizeof shapes[0], "%s", in_shapes[i]);
	}
	static const char *bin[] = {"+", "-", "*", "/"};
	static const char *un[] = {"exp", "tanh", "relu"};
	static const char *red[] = {"sum", "max", "mean"};
	while (nv < 30) {
		unsigned k = rnd(&seed) % 20;
		int a = (int)(rnd(&seed) % (unsigned)nv), b = (int)(rnd(&seed) % (unsigned)nv);
		char sh[8];
		if (k < 12) {
			if (!bcast(shapes[a], shapes[b], sh))
				continue;
			len += (size_t)snprintf(buf + len, cap - len, "v%d = %s %s %s\n", nv, names[a], bin[k % 4], names[b]);
		} else if (k < 15) {
			strcpy(sh, shapes[a]);
			len += (size_t)snprintf(buf + len, cap - len, "v%d = %s(%s)\n", nv, un[k % 3], names[a]);
		} else {
			size_t l = strlen(shapes[a]);
			if (l == 0 || shapes[a][l - 1] == '1')
				continue;
			strcpy(sh, shapes[a]);
			sh[l - 1] = '1';
			len += (size_t)snprintf(buf + len, cap - len, "v%d = %s(%s)\n", nv, red[k % 3], names[a]);
		}
		snprintf(names[nv], sizeof names[nv], "v%d", nv);
		strcpy(shapes[nv++], sh);
	}
	int nout = 1 + (int)(rnd(&seed) % 4);
	for (int i = 0; i < nout; i++)
		len += (size_t)snprintf(buf + len, cap - len, "out o%d = %s\n", i, names[i ? 7 + (int)(rnd(&seed) % 23) : 29]);
}

START_TEST(random_programs_keep_invariants)
{
	static char buf[8192];
	int multi = 0;
	for (unsigned seed = 1; seed <= 400; seed++) {
		random_program(seed, buf, sizeof buf);
		for (int fused = 0; fused < 2; fused++) {
			PipeOptions opt = pipe_default_options();
			opt.stop = STAGE_FUSED;
			opt.fuse = fused;
			Compilation *c = pipe_new("test.fz", buf, strlen(buf), &opt);
			if (pipe_run(c) != FZ_OK)
				ck_abort_msg("seed %u:\n%s\n%s", seed, buf, c->diag_text);
			check_plan(&c->plan);
			if (fused) {
				ck_assert_int_le(c->plan.nkernels, per_op_kernels(&c->graph));
				multi += c->plan.nkernels > 1;
				for (int i = 0; i < c->plan.nunfused; i++) {
					/* Fused mode stores only values of row kernels. */
					const Unfused *u = &c->plan.unfused[i];
					ck_assert(writer(&c->plan, u->producer) >= 0);
					ck_assert_int_eq(c->plan.kernels[writer(&c->plan, u->producer)].kind, KERNEL_ROW);
				}
			} else {
				ck_assert_int_eq(c->plan.nkernels, per_op_kernels(&c->graph));
			}
			pipe_free(c);
		}
	}
	ck_assert_int_gt(multi, 50);
}
END_TEST

static Suite *fuse_suite(void)
{
	Suite *s = suite_create("fuse");
	TCase *t = tcase_create("examples");
	tcase_add_loop_test(t, example_is_one_kernel, 0, (int)(sizeof examples / sizeof examples[0]));
	tcase_add_test(t, softmax_listing);
	tcase_add_test(t, spec_layernorm_gelu_two_outputs);
	tcase_add_test(t, adam_three_outputs);
	suite_add_tcase(s, t);
	t = tcase_create("partitions");
	tcase_add_test(t, diamond);
	tcase_add_test(t, shared_producer_is_recomputed);
	tcase_add_test(t, node_that_is_two_outputs);
	tcase_add_test(t, outputs_that_are_inputs_or_constants);
	tcase_add_test(t, softmax_of_softmax);
	tcase_add_test(t, reductions_feeding_reductions_across_rows);
	tcase_add_test(t, broadcast_operands_in_rows);
	tcase_add_test(t, three_and_four_dims);
	tcase_add_test(t, rows_of_different_lengths);
	tcase_add_test(t, reduced_value_in_another_space);
	tcase_add_test(t, group_waits_for_what_it_reads);
	tcase_add_test(t, free_outputs_join_row_kernels);
	tcase_add_test(t, per_op_folds_implicit_casts);
	tcase_add_test(t, scalar_arithmetic);
	tcase_add_test(t, dot_graph);
	suite_add_tcase(s, t);
	t = tcase_create("limits");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, deep_chain);
	tcase_add_test(t, deep_chain_of_row_kernels);
	tcase_add_test(t, wide_pointwise_kernel_is_split);
	tcase_add_test(t, wide_row_kernel_is_an_error);
	tcase_add_test(t, dead_nodes_are_ignored);
	tcase_add_test(t, hand_built_deep_chain);
	tcase_add_test(t, random_programs_keep_invariants);
	suite_add_tcase(s, t);
	return s;
}

int main(void) { return tu_run(fuse_suite()); }
