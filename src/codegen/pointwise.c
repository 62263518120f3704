/*
 * pointwise.c: kernels of elementwise ops over one iteration space.
 *
 * One entry, `<kernel>_pw`: a grid-stride loop over chunks of V consecutive
 * elements (V fills 16 bytes of the narrowest tensor the kernel streams), so
 * that full-shape operands and outputs move as 16-byte vector accesses. The
 * kernel checks alignment itself (every streamed pointer aligned, every
 * broadcast's inner extent a multiple of V) and otherwise takes the masked
 * scalar path of the same loop, which also handles the last partial chunk:
 * one body serves every case, which keeps NVRTC's time down.
 *
 * Operands, by how their shape broadcasts into the iteration space:
 *   full     the same shape: element i
 *   scalar   all axes broadcast: loaded once, before the loop
 *   bcast    anything else, e.g. [N] in [B, N] (i % N) or [B, 1] in [B, N]
 *            (i / N): element off(i), where off sums one term per run of
 *            kept axes; a chunk is contiguous or constant in it when the
 *            innermost run's extent is a multiple of V
 * Sizes are long long kernel arguments, so one module serves every size.
 */
#include "codegen/cgint.h"

typedef enum { OPD_FULL, OPD_SCALAR, OPD_BCAST } OpdKind;

typedef struct PwOpd {
	OpdKind kind;
	CgRun runs[FZ_MAX_RANK];
	int nruns;
} PwOpd;

static bool classify(Cg *c, const Kernel *k, int i, PwOpd *o)
{
	const KParam *kp = &k->params[i];
	const Node *n = &c->g->nodes[kp->node];
	if (n->rank > k->rank)
		return cg_internal(c, "operand %%%d of kernel %s has a higher rank than its domain", kp->node, k->name);
	o->nruns = cg_runs(n, k->rank, k->domain, k->rank, o->runs);
	if (o->nruns < 0)
		return cg_internal(c, "operand %%%d of kernel %s does not broadcast to its domain", kp->node, k->name);
	bool all_kept = true, none = true;
	for (int r = 0; r < o->nruns; r++) {
		all_kept &= o->runs[r].kept;
		none &= !o->runs[r].kept;
	}
	o->kind = none ? OPD_SCALAR : all_kept ? OPD_FULL : OPD_BCAST;
	if (kp->kind == PARAM_OUT && o->kind != OPD_FULL && !(o->kind == OPD_SCALAR && o->nruns == 0))
		return cg_internal(c, "output %%%d of kernel %s does not have the kernel's shape", kp->node, k->name);
	return true;
}

/* Needed nodes: a descending sweep from the outputs over the kernel's nodes. */
static int32_t mark_needed(Cg *c, const Kernel *k)
{
	int32_t s = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT)
			c->mark[k->params[i].node] = s;
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		if (c->mark[id] != s || cg_is_leaf(c, id))
			continue;
		const Node *n = &c->g->nodes[id];
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			c->mark[n->args[a]] = s;
	}
	return s;
}

static void emit_header(Cg *c, const Kernel *k, int vec)
{
	CgArg *args = ARENA_ARRAY(c->a, CgArg, k->nparams + 1);
	for (int i = 0; i < k->nparams; i++)
		args[i] = (CgArg){CGARG_PARAM, i};
	cg_begin_entry(c, CG_PATH_POINTWISE, 0, "pw", args, k->nparams);
	cg_entry_header(c, arena_printf(c->a, "pointwise over %s, %d elements a chunk",
	                                ir_shape_str(c->a, c->g, k->rank, k->domain), vec),
	                "a grid-stride loop over the chunks, vector accesses where aligned");
	cg_entry_signature(c, "__launch_bounds__(256)");
	cw_begin(c->w);
}

/* Before the loop: the element count, broadcast offsets, the vector test and
 * the scalar operands. */
static bool emit_prologue(Cg *c, const Kernel *k, PwOpd *opd, int vec)
{
	CgW *w = c->w;
	cw_line(w, "const long long fz_n = %s;", cg_extent(c, k, 0, k->rank));
	StrBuf cond;
	sb_init(&cond, c->a);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN && kp->kind != PARAM_OUT && kp->kind != PARAM_SCALAR)
			continue;
		const Node *n = &c->g->nodes[kp->node];
		const char *name = cg_param_name(c, i);
		if (kp->kind == PARAM_SCALAR) {
			cw_line(w, "const %s t%d = fz_in(%s);", cg_compute_type((fz_dtype)n->dtype), kp->node, name);
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
			continue;
		}
		if (!classify(c, k, i, &opd[i]))
			return false;
		if (kp->kind == PARAM_IN && opd[i].kind == OPD_SCALAR) {
			cw_line(w, "const %s t%d = fz_in(%s[0]);", cg_compute_type((fz_dtype)n->dtype), kp->node, name);
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
			continue;
		}
		if (opd[i].kind == OPD_SCALAR)
			continue; /* a rank-0 output: one element */
		bool contig = true;
		if (opd[i].kind == OPD_BCAST) {
			c->helpers |= CGH_BCAST;
			const CgRun *in = &opd[i].runs[0];
			contig = in->kept;
			cw_line(w, "// %s broadcasts: %s in %s", name, ir_shape_str(c->a, c->g, n->rank, n->shape),
			          ir_shape_str(c->a, c->g, k->rank, k->domain));
			const char *px = arena_printf(c->a, "fz_o%d", i);
			const char *off = cg_offset(c, k, opd[i].runs, opd[i].nruns, k->rank, px, "i", w);
			cw_line(w, "auto %s = [=](long long i) { return %s; };", px, off);
			sb_printf(&cond, "%s(%s) %% %d == 0", cond.len ? " && " : "", cg_extent(c, k, in->lo, in->hi), vec);
		}
		if (contig)
			sb_printf(&cond, "%sfz_aligned(%s, %d)", cond.len ? " && " : "", name, cg_vec_align(vec, (fz_dtype)n->dtype));
	}
	cw_line(w, "const bool fz_vec = %s;", cond.len ? sb_str(&cond) : "true");
	return true;
}

/* A chunk's loads of the streamed inputs (full or broadcast). */
static void emit_loads(Cg *c, const Kernel *k, const PwOpd *opd, int vec)
{
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN || opd[i].kind == OPD_SCALAR || c->pin[kp->node] != i)
			continue;
		const Node *n = &c->g->nodes[kp->node];
		const char *name = cg_param_name(c, i);
		cw_line(c->w, "%s l%d[%d];", cg_compute_type((fz_dtype)n->dtype), kp->node, vec);
		if (opd[i].kind == OPD_FULL)
			cw_line(c->w, "fz_ld(l%d, %s, i0, fz_n, fz_vec);", kp->node, name);
		else
			cw_line(c->w, "fz_ldb<%s>(l%d, %s, i0, fz_n, fz_vec, fz_o%d);", opd[i].runs[0].kept ? "true" : "false",
			        kp->node, name, i);
		c->vname[kp->node] = arena_printf(c->a, "l%d[u]", kp->node);
	}
}

/* The u-loop: every needed node of the chunk's V elements, into s<out>[u]. */
static bool emit_elements(Cg *c, const Kernel *k, int vec, int32_t need, int32_t outs)
{
	cw_unroll(c->w);
	cw_open(c->w, "for (int u = 0; u < %d; u++)", vec);
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		if ((c->mark[id] != need && c->mark[id] != outs) || cg_is_leaf(c, id))
			continue;
		const Node *n = &c->g->nodes[id];
		if (ir_ops[n->op].cls == OC_REDUCE)
			return cg_internal(c, "reduction %%%d in pointwise kernel %s", id, k->name);
		const char *e = cg_node_expr(c, id);
		if (!e)
			return false;
		cw_line(c->w, "const %s t%d = %s; // %s", cg_compute_type((fz_dtype)n->dtype), id, e, cg_comment(c, n));
		c->vname[id] = arena_printf(c->a, "t%d", id);
	}
	int32_t done = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_OUT || c->mark[kp->node] == done)
			continue;
		c->mark[kp->node] = done;
		cw_line(c->w, "s%d[u] = %s;", kp->node, cg_value(c, kp->node));
	}
	cw_close(c->w);
	return true;
}

static bool emit_body(Cg *c, const Kernel *k, PwOpd *opd, int vec, int32_t need)
{
	CgW *w = c->w;
	cw_line(w, "const long long fz_step = (long long)gridDim.x * blockDim.x * %d;", vec);
	cw_open(w, "for (long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * %d; i0 < fz_n; i0 += fz_step)",
	        vec);
	emit_loads(c, k, opd, vec);
	int32_t outs = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_OUT || c->mark[kp->node] == outs)
			continue;
		c->mark[kp->node] = outs;
		cw_line(w, "%s s%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[kp->node].dtype), kp->node, vec);
	}
	if (!emit_elements(c, k, vec, need, outs))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_OUT)
			cw_line(w, "fz_st(%s, i0, fz_n, fz_vec, s%d);", cg_param_name(c, i), kp->node);
	}
	cw_close(w);
	cw_close(w);
	return true;
}

bool cg_pointwise(Cg *c)
{
	const Kernel *k = c->k;
	int vec = cg_vec_width(c, false);
	c->vec = vec;
	c->info->vec = vec;
	c->info->max_threads = 256;
	for (int i = 0; i < k->nnodes; i++)
		c->info->heavy |= cg_long_math((Op)c->g->nodes[k->nodes[i]].op);
	PwOpd *opd = ARENA_ARRAY(c->a, PwOpd, k->nparams + 1);
	emit_header(c, k, vec);
	bool ok = emit_prologue(c, k, opd, vec) && emit_body(c, k, opd, vec, mark_needed(c, k));
	cg_end_entry(c);
	return ok;
}
