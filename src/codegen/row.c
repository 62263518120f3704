/*
 * row.c: row kernels, last-axis reductions with their producers and users.
 *
 * The rows are [A..., N]. Every node of the kernel is either per-element
 * (its last dim is N: "column-varying") or per-row (last dim 1 or none: one
 * value a row, computed once by every thread of the row's group). A node's
 * phase is the number of reductions chained on the way from the leaves, so
 * softmax has max(x) in phase 1, e - its exponentials - in phase 1 and the
 * sum in phase 2. Pass q (0 .. P-1) runs over the row and accumulates the
 * reductions of phase q+1; the epilogue (pass P) writes the per-element
 * outputs; per-row values are computed between passes, once their
 * reductions are done.
 *
 * The row cache: a per-element value computed in pass p and needed in a
 * later pass (the input x of softmax, or a derived value such as
 * gelu(x + b) + r in a fused layernorm, which is worth not recomputing) is
 * written to the cache in pass p and read back later instead of being
 * recomputed from global memory. Slots are reused once their last reader
 * has passed (a thread reads its chunk before it writes it), so softmax
 * needs 4 bytes an element and layernorm 4 (f32) or 6 (f16). The cache is
 * dynamic shared memory when the launch gives enough, else a region of the
 * workspace (global memory, mostly L2): the same code either way, which one
 * is decided per launch. (Recomputing from the inputs instead would need a
 * second copy of every pass's code, which costs NVRTC time.)
 *
 * One entry serves every schedule (cg.h): blockDim.x threads per row (up to
 * a warp: shuffles only, several rows per block in blockDim.y; more: a block
 * per row), gridDim.y blocks per row (split rows: partial results through
 * the workspace, with a barrier between the blocks of a row), the cache in
 * shared or in global memory. Threads own chunks of V elements (16 bytes of the narrowest
 * stream) at the same place in every pass, so the cache needs no barrier; the
 * first pass, the only one that reads the inputs from global memory, keeps
 * one chunk in flight ahead of the one it works on.
 */
#include "codegen/cgint.h"

#include <string.h>

enum { NK_COLV = 1, NK_ROWVAR = 2, NK_SEEN = 4 };

typedef struct Closure {
	NodeId *comp;   /* computed in the chunk loop, ascending */
	int ncomp;
	NodeId *leaf;   /* per-element leaves loaded from global memory */
	int nleaf, capleaf;
	NodeId *fread;  /* values of earlier passes (the cache, or recomputed) */
	int nfread, capfread;
} Closure;

typedef struct RowK {
	Cg *c;
	const Kernel *k;
	int r;                  /* domain rank */
	int vec;
	int P;                  /* passes before the epilogue */
	int rk;                 /* chunks a thread holds in registers (0: no register path) */
	bool regmode;           /* emitting the register path's row loop */
	NodeId *pf;             /* register path: leaves prefetched a row ahead (fz_pf) */
	int npf;
	int32_t rowc;           /* mark3 stamp: per-row values needed */
	NodeId *touched;        /* nodes whose scratch entries are set */
	int ntouched, captouched;
	NodeId *cached;         /* nodes with a cache slot, and their slots */
	int *cslot;
	int ncached;
	bool *used;             /* per param: used by the emitted code */
	const char **roff;      /* per param: row offset expression "fz_r<d>", or NULL */
	int *rdecl;             /* per param: d, the parameter declaring that offset */
} RowK;

/* ---- analysis ------------------------------------------------------------------ */

static bool colv(const RowK *R, const Node *n)
{
	Dim N = R->k->domain[R->r - 1];
	return n->rank > 0 && cg_dim_at(n, R->r, R->r - 1) == N;
}

static void touch(RowK *R, NodeId id)
{
	Cg *c = R->c;
	if (c->nflags[id] & NK_SEEN)
		return;
	c->nflags[id] = NK_SEEN;
	c->ph[id] = 0;
	c->lastread[id] = -1;
	VEC_PUSH(c->a, R->touched, R->ntouched, R->captouched, id);
}

/* Flags of a leaf: column-varying, and row-varying (some leading axis kept). */
static bool leaf_flags(RowK *R, NodeId id)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[id];
	touch(R, id);
	if (n->op == OP_CONST)
		return true;
	CgRun runs[FZ_MAX_RANK];
	if (n->rank > R->r || cg_runs(n, R->r, R->k->domain, R->r, runs) < 0)
		return cg_internal(c, "operand %%%d of kernel %s does not broadcast to its rows", id, R->k->name);
	int nr = cg_runs(n, R->r, R->k->domain, R->r - 1, runs);
	bool rowvar = false;
	for (int i = 0; i < nr; i++)
		rowvar |= runs[i].kept;
	c->nflags[id] |= (colv(R, n) ? NK_COLV : 0) | (rowvar ? NK_ROWVAR : 0);
	return true;
}

static bool analyse(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	const Graph *g = c->g;
	Dim N = k->domain[R->r - 1];
	if (N == 1)
		return cg_internal(c, "row kernel %s reduces an axis of literal size 1", k->name);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind != PARAM_DIM && !leaf_flags(R, k->params[i].node))
			return false;
	R->P = 0;
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		const Node *n = &g->nodes[id];
		if (cg_is_leaf(c, id))
			continue;
		bool rowvar = false;
		int ph = 0;
		for (int a = 0; a < ir_ops[n->op].arity; a++) {
			NodeId x = n->args[a];
			if (!(c->nflags[x] & NK_SEEN) && !leaf_flags(R, x))
				return false;
			rowvar |= (c->nflags[x] & NK_ROWVAR) != 0;
			ph = c->ph[x] > ph ? c->ph[x] : ph;
		}
		touch(R, id);
		if (n->rank > R->r || cg_runs(n, R->r, k->domain, R->r, (CgRun[FZ_MAX_RANK]){0}) < 0)
			return cg_internal(c, "node %%%d of kernel %s does not broadcast to its rows", id, k->name);
		if (ir_ops[n->op].cls == OC_REDUCE) {
			if (colv(R, n) || !(c->nflags[n->args[0]] & NK_COLV))
				return cg_internal(c, "reduction %%%d of kernel %s is not over its rows", id, k->name);
			ph++;
			R->P = ph > R->P ? ph : R->P;
		}
		c->nflags[id] |= (colv(R, n) ? NK_COLV : 0) | (rowvar ? NK_ROWVAR : 0);
		c->ph[id] = ph;
	}
	return true;
}

static bool is_red(const RowK *R, NodeId id) { return ir_ops[R->c->g->nodes[id].op].cls == OC_REDUCE; }
static bool is_colv(const RowK *R, NodeId id) { return (R->c->nflags[id] & NK_COLV) != 0; }
static bool is_rowvar(const RowK *R, NodeId id) { return (R->c->nflags[id] & NK_ROWVAR) != 0; }

/* A column-varying value of an earlier pass, which pass q reads from the
 * cache (or recomputes) rather than computes itself. */
static bool is_fread(const RowK *R, NodeId id, int q)
{
	return is_colv(R, id) && is_rowvar(R, id) && R->c->ph[id] < q && R->c->g->nodes[id].op != OP_CONST;
}

/* The targets of pass q: operands of its reductions, per-element outputs
 * of its phase, and values it writes to the cache. */
static int targets(RowK *R, int q, NodeId *t)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int n = 0;
	for (int i = 0; i < k->nreductions; i++)
		if (c->ph[k->reductions[i]] == q + 1)
			t[n++] = c->g->nodes[k->reductions[i]].args[0];
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_OUT && is_colv(R, kp->node) && c->ph[kp->node] == q)
			t[n++] = kp->node;
	}
	for (int i = 0; i < R->ncached; i++)
		if (c->ph[R->cached[i]] == q)
			t[n++] = R->cached[i];
	return n;
}

/* Mark node x as needed by a closure with stamp s, classifying leaves and
 * per-row values on the spot (they are not in the kernel's node list). */
static void need(RowK *R, NodeId x, int32_t s, int q, bool fstop, Closure *out)
{
	Cg *c = R->c;
	if (c->mark[x] == s)
		return;
	c->mark[x] = s;
	const Node *n = &c->g->nodes[x];
	if (n->op == OP_CONST)
		return;
	if (!is_colv(R, x)) {
		c->mark3[x] = R->rowc;
		return;
	}
	if (fstop && is_fread(R, x, q)) {
		VEC_PUSH(c->a, out->fread, out->nfread, out->capfread, x);
		return;
	}
	if (cg_is_leaf(c, x))
		VEC_PUSH(c->a, out->leaf, out->nleaf, out->capleaf, x);
}

/* Everything pass q computes for `targets` (fstop: stopping at values of
 * earlier passes; else recomputing them from the leaves). */
static void closure(RowK *R, int q, const NodeId *t, int nt, bool fstop, Closure *out)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	memset(out, 0, sizeof *out);
	int32_t s = cg_new_stamp(c);
	for (int i = 0; i < nt; i++)
		need(R, t[i], s, q, fstop, out);
	NodeId *rev = ARENA_ARRAY(c->a, NodeId, k->nnodes + 1);
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		if (c->mark[id] != s || !is_colv(R, id) || cg_is_leaf(c, id) || (fstop && is_fread(R, id, q)))
			continue;
		rev[out->ncomp++] = id;
		const Node *n = &c->g->nodes[id];
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			need(R, n->args[a], s, q, fstop, out);
	}
	out->comp = ARENA_ARRAY(c->a, NodeId, out->ncomp + 1);
	for (int i = 0; i < out->ncomp; i++)
		out->comp[i] = rev[out->ncomp - 1 - i];
}

static int cache_bytes(RowK *R, NodeId id)
{
	const Node *n = &R->c->g->nodes[id];
	return cg_is_leaf(R->c, id) ? (int)fz_dtype_size((fz_dtype)n->dtype) : cg_compute_size((fz_dtype)n->dtype);
}

/* Passes from the last to the first: which cached values each reads (so the
 * earlier pass that computes them knows to write them), and every per-row
 * value needed. Then slots: a value holds one from its pass to its last
 * reader, and a later value of the same size may take it over. */
static void plan_cache(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + k->nnodes + 1);
	R->ncached = 0;
	for (int q = R->P; q >= 0; q--) {
		int nt = targets(R, q, t);
		for (int i = 0; i < R->ntouched; i++) {
			NodeId id = R->touched[i];
			if (c->ph[id] == q && c->lastread[id] > q && is_colv(R, id) && is_rowvar(R, id))
				t[nt++] = id;
		}
		Closure m;
		closure(R, q, t, nt, true, &m);
		for (int i = 0; i < m.nfread; i++)
			if (c->lastread[m.fread[i]] < q)
				c->lastread[m.fread[i]] = q;
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT && !is_colv(R, k->params[i].node))
			c->mark3[k->params[i].node] = R->rowc;
	/* per-row values need their per-row arguments (a reduction stops here:
	 * its argument is the passes' business) */
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		const Node *n = &c->g->nodes[id];
		if (c->mark3[id] != R->rowc || is_colv(R, id) || is_red(R, id) || cg_is_leaf(c, id))
			continue;
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			c->mark3[n->args[a]] = R->rowc;
	}
	/* slots, in order of the pass that writes them */
	int *slot_last = ARENA_ARRAY(c->a, int, R->ntouched + 1);
	int *slot_bytes = ARENA_ARRAY(c->a, int, R->ntouched + 1);
	R->cached = ARENA_ARRAY(c->a, NodeId, R->ntouched + 1);
	R->cslot = ARENA_ARRAY(c->a, int, R->ntouched + 1);
	int nslots = 0;
	for (int q = 0; q <= R->P; q++)
		for (int i = 0; i < R->ntouched; i++) {
			NodeId id = R->touched[i];
			if (c->ph[id] != q || c->lastread[id] <= q)
				continue;
			int b = cache_bytes(R, id), s = 0;
			while (s < nslots && !(slot_bytes[s] == b && slot_last[s] <= q))
				s++;
			if (s == nslots)
				slot_bytes[nslots++] = b;
			slot_last[s] = c->lastread[id];
			R->cached[R->ncached] = id;
			R->cslot[R->ncached++] = s;
		}
	c->info->nslots = nslots;
	c->info->slot_bytes = slot_bytes;
}

static int slot_of(const RowK *R, NodeId id)
{
	for (int i = 0; i < R->ncached; i++)
		if (R->cached[i] == id)
			return R->cslot[i];
	return -1;
}

/* ---- emission helpers ---------------------------------------------------------------- */

static int param_of(const RowK *R, NodeId id, ParamKind kind)
{
	for (int i = 0; i < R->k->nparams; i++)
		if (R->k->params[i].kind == kind && R->k->params[i].node == id)
			return i;
	return -1;
}

/* The pointer to a row of parameter i: "in_x + fz_r0" (or just "in_w"). */
static const char *row_ptr(RowK *R, int i)
{
	R->used[i] = true;
	const char *name = cg_param_name(R->c, i);
	return R->roff[i] ? arena_printf(R->c->a, "%s + %s", name, R->roff[i]) : name;
}

static const char *acc_type(RowK *R, NodeId red)
{
	const Graph *g = R->c->g;
	const Node *n = &g->nodes[red];
	fz_dtype in = (fz_dtype)g->nodes[n->args[0]].dtype;
	if (n->op == OP_SUM || n->op == OP_MEAN)
		return !dtype_is_float(in) ? "long long" : in == FZ_F64 ? "double" : "float";
	return in == FZ_BOOL ? "int" : cg_compute_type(in);
}

static const char *acc_op(const Node *n) { return n->op == OP_MAX ? "fz_max" : n->op == OP_MIN ? "fz_min" : "fz_sum"; }

static const char *acc_identity(RowK *R, NodeId red)
{
	const char *t = acc_type(R, red);
	Op op = (Op)R->c->g->nodes[red].op;
	bool dbl = strcmp(t, "double") == 0, flt = strcmp(t, "float") == 0, ll = strcmp(t, "long long") == 0;
	if (op == OP_SUM || op == OP_MEAN)
		return dbl ? "0.0" : flt ? "0.0f" : "0LL";
	bool mx = op == OP_MAX;
	if (flt)
		return mx ? "(-__uint_as_float(0x7f800000u))" : "__uint_as_float(0x7f800000u)";
	if (dbl)
		return mx ? "(-__longlong_as_double(0x7ff0000000000000ll))" : "__longlong_as_double(0x7ff0000000000000ll)";
	if (ll)
		return mx ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
	bool is_bool = R->c->g->nodes[R->c->g->nodes[red].args[0]].dtype == FZ_BOOL;
	if (is_bool)
		return mx ? "0" : "1";
	return mx ? "(-2147483647 - 1)" : "2147483647";
}

/* The value of a finished reduction from its accumulator. */
static const char *acc_result(RowK *R, NodeId red)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[red];
	const char *t = acc_type(R, red);
	if (n->op == OP_MEAN) {
		if (strcmp(t, "long long") == 0)
			return arena_printf(c->a, "(float)a%d / (float)fz_n", red);
		return arena_printf(c->a, "a%d / (%s)fz_n", red, t);
	}
	if (n->dtype == FZ_BOOL)
		return arena_printf(c->a, "a%d != 0", red);
	return arena_printf(c->a, "a%d", red);
}

static const char *ind(int depth) { return &"\t\t\t\t\t\t\t\t"[8 - (depth > 8 ? 8 : depth)]; }

/* One line computing node id inside a chunk's u-loop. */
static bool emit_node(RowK *R, NodeId id, int depth)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[id];
	const char *e = cg_node_expr(c, id);
	if (!e)
		return false;
	sb_printf(c->sb, "%sconst %s t%d = %s; // %s\n", ind(depth), cg_compute_type((fz_dtype)n->dtype), id, e,
	          cg_comment(c, n));
	c->vname[id] = arena_printf(c->a, "t%d", id);
	return true;
}

/* Load declarations of per-element leaves for a chunk at j0 (not pass 0). */
static void emit_leaf_loads(RowK *R, const NodeId *leaf, int nleaf, int depth)
{
	Cg *c = R->c;
	for (int i = 0; i < nleaf; i++) {
		NodeId id = leaf[i];
		int p = c->pin[id];
		if (p < 0) {
			cg_internal(c, "leaf %%%d of kernel %s has no parameter", id, R->k->name);
			return;
		}
		sb_printf(c->sb, "%s%s l%d[%d];\n", ind(depth), cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		sb_printf(c->sb, "%sfz_ld(l%d, %s, j0, fz_e, fz_vec);\n", ind(depth), id, row_ptr(R, p));
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
}

/* The values of earlier passes that pass q reads, from the row cache. */
static void emit_freads(RowK *R, const Closure *m, int depth)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nfread; i++) {
		NodeId id = m->fread[i];
		sb_printf(c->sb, "%s%s f%d[%d];\n", ind(depth), cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		sb_printf(c->sb, "%sfz_cld(f%d, fz_c%d + (j0 - fz_beg));\n", ind(depth), id, id);
		c->vname[id] = arena_printf(c->a, "f%d[u]", id);
	}
}

/* The array holding node id's V values after the u-loop (for stores and
 * cache writes). */
static const char *value_array(RowK *R, NodeId id, int q)
{
	if (cg_is_leaf(R->c, id))
		return arena_printf(R->c->a, q == 0 ? "l%d[0]" : "l%d", id);
	return arena_printf(R->c->a, "v%d", id);
}

/* Accumulate the reductions of pass q (inside the u-loop). */
static void emit_accumulate(RowK *R, int q, int depth, bool checked)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		const Node *n = &c->g->nodes[red];
		const char *v = cg_value(c, n->args[0]);
		const char *t = acc_type(R, red);
		if (strcmp(t, cg_compute_type((fz_dtype)c->g->nodes[n->args[0]].dtype)) != 0)
			v = arena_printf(c->a, "(%s)%s", t, v);
		if (checked)
			sb_printf(c->sb, "%sif (j0 + u < fz_e)\n%s\ta%d = %s::f(a%d, %s); // %s\n", ind(depth), ind(depth), red,
			          acc_op(n), red, v, cg_comment(c, n));
		else /* the row in registers: the chunk's partial (see emit_partials) */
			sb_printf(c->sb, "%sp%d = %s::f(p%d, %s); // %s\n", ind(depth), red, acc_op(n), red, v, cg_comment(c, n));
	}
}

/* The register path accumulates a chunk's V values into partials p<red>
 * (declared before its u-loop, open = true), then adds them to the
 * accumulators with one select for the chunk (open = false): a chunk is all
 * in the row or all past it, so the check is once a chunk, not an element. */
static void emit_partials(RowK *R, int q, bool open)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		const char *t = acc_type(R, red), *id = acc_identity(R, red);
		if (!strcmp(id, "0.0f") || !strcmp(id, "0.0")) /* -0 + x is x for every x: the first add folds away */
			id = !strcmp(id, "0.0f") ? "-0.0f" : "-0.0";
		if (open)
			sb_printf(c->sb, "\t\t\t\t%s p%d = %s;\n", t, red, id);
		else
			sb_printf(c->sb, "\t\t\t\ta%d = j0 < fz_ei ? %s::f(a%d, p%d) : a%d;\n", red, acc_op(&c->g->nodes[red]), red,
			          red, red);
	}
}

/* A chunk's V elements, shared by both row loops: arrays for the values
 * stored or cached after the loop, then the u-loop computing the pass's
 * nodes and accumulating its reductions (per element, checked against the
 * segment's end, in the general loop; into per-chunk partials in the
 * register path, see emit_partials). */
static bool emit_elements(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool reg)
{
	Cg *c = R->c;
	StrBuf *sb = c->sb;
	int V = R->vec;
	int32_t arr = cg_new_stamp(c);
	for (int i = 0; i < nt; i++) {
		NodeId id = t[i];
		bool keep = (is_colv(R, id) && c->ph[id] == q && param_of(R, id, PARAM_OUT) >= 0) || slot_of(R, id) >= 0;
		if (!keep || cg_is_leaf(c, id) || c->mark2[id] == arr)
			continue;
		c->mark2[id] = arr;
		sb_printf(sb, "\t\t\t\t%s v%d[%d];\n", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, V);
	}
	if (reg)
		emit_partials(R, q, true);
	sb_printf(sb, "#pragma unroll\n\t\t\t\tfor (int u = 0; u < %d; u++) {\n", V);
	for (int i = 0; i < m->ncomp; i++)
		if (!emit_node(R, m->comp[i], 5))
			return false;
	emit_accumulate(R, q, 5, !reg);
	for (int i = 0; i < nt; i++)
		if (c->mark2[t[i]] == arr) {
			c->mark2[t[i]] = 0;
			sb_printf(sb, "\t\t\t\t\tv%d[u] = %s;\n", t[i], cg_value(c, t[i]));
		}
	sb_puts(sb, "\t\t\t\t}\n");
	if (reg)
		emit_partials(R, q, false);
	return true;
}

/* The chunk loop of pass q over this thread's chunks of the row. */
static bool emit_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int V = R->vec;
	StrBuf *sb = c->sb;
	if (q == 0) { /* one chunk in flight ahead of the one in use */
		for (int i = 0; i < m->nleaf; i++) {
			NodeId id = m->leaf[i];
			sb_printf(sb, "\t\t\t%s l%d[2][%d];\n", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, V);
			sb_printf(sb, "\t\t\tfz_ld(l%d[1], %s, fz_j, fz_e, fz_vec);\n", id, row_ptr(R, c->pin[id]));
		}
	}
	sb_puts(sb, "\t\t\tfor (long long j0 = fz_j; j0 < fz_e; j0 += fz_step) {\n");
	if (q == 0) {
		for (int i = 0; i < m->nleaf; i++) {
			NodeId id = m->leaf[i];
			sb_printf(sb, "\t\t\t\tfz_mv(l%d[0], l%d[1]);\n", id, id);
			sb_printf(sb, "\t\t\t\tfz_ld(l%d[1], %s, j0 + fz_step, fz_e, fz_vec);\n", id, row_ptr(R, c->pin[id]));
			c->vname[id] = arena_printf(c->a, "l%d[0][u]", id);
		}
	} else {
		emit_leaf_loads(R, m->leaf, m->nleaf, 4);
	}
	emit_freads(R, m, 4);
	/* arrays for values stored or cached after the loop */
	if (!emit_elements(R, q, m, t, nt, false))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_OUT && is_colv(R, kp->node) && c->ph[kp->node] == q)
			sb_printf(sb, "\t\t\t\tfz_st(%s, j0, fz_e, fz_vec, %s);\n", row_ptr(R, i), value_array(R, kp->node, q));
	}
	for (int i = 0; i < R->ncached; i++) {
		NodeId id = R->cached[i];
		if (c->ph[id] == q)
			sb_printf(sb, "\t\t\t\tfz_cst(fz_c%d + (j0 - fz_beg), %s);\n", id, value_array(R, id, q));
	}
	sb_puts(sb, "\t\t\t}\n");
	return true;
}

static bool is_pf(const RowK *R, NodeId id)
{
	for (int i = 0; i < R->npf; i++)
		if (R->pf[i] == id)
			return true;
	return false;
}

/* The array of chunk k holding node id's values in the register path. */
static const char *reg_array(RowK *R, NodeId id, int q, bool whole)
{
	Cg *c = R->c;
	if (!cg_is_leaf(c, id))
		return arena_printf(c->a, "v%d", id);
	bool held = whole && (R->npf == 0 || (q == 0 && is_pf(R, id)));
	return arena_printf(c->a, held ? "l%d[k]" : "l%d", id);
}

/* The register path's copies of row-varying leaves into the prefetch buffer
 * (fz_pf<id>: chunk k of every thread of the block, then chunk k + 1), for
 * the row at offsets `off` ("fz_r": this one, "fz_q": the next). */
static void emit_pf_issue(RowK *R, const char *off, const char *depth)
{
	Cg *c = R->c;
	StrBuf *sb = c->sb;
	sb_printf(sb, "#pragma unroll\n%sfor (int k = 0; k < %d; k++) {\n", depth, R->rk);
	sb_printf(sb, "%s\tconst int j0 = fz_ji + k * fz_stepi;\n%s\tif (j0 < fz_nr) {\n", depth, depth);
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		int p = c->pin[id];
		row_ptr(R, p); /* marks it used */
		sb_printf(sb, "%s\t\tfz_pf<%d>(fz_pf%d + k * fz_pfk * %d, %s + %s%d, j0, fz_vec);\n", depth, R->vec, id, R->vec,
		          cg_param_name(c, p), off, R->rdecl[p]);
	}
	sb_printf(sb, "%s\t}\n%s}\n", depth, depth);
}

/* Pass 0 of the register path reads its row-varying leaves from the prefetch
 * buffer, then has the next row's copied there while it computes this one:
 * the block's loads stay in flight across its reductions and epilogue.
 * Measured on the H200, it pays where a row takes long to compute against
 * the bytes it loads: heavy kernels (bound to 512 threads: long math or
 * many streams; bias-gelu-residual-layernorm 51% -> 67% of the floor) and
 * half-precision rows (layernorm f16 48% -> 56%). Light f32 rows lost 4 to
 * 10 points with it (more registers, a persistent grid's tail), so they
 * keep the plain loads. */
static void emit_prefetched(RowK *R, const Closure *m)
{
	Cg *c = R->c;
	StrBuf *sb = c->sb;
	R->pf = ARENA_ARRAY(c->a, NodeId, m->nleaf + 1);
	R->npf = 0;
	if (c->info->max_threads >= 1024 && R->vec < 8)
		return;
	for (int i = 0; i < m->nleaf; i++)
		if (is_rowvar(R, m->leaf[i]) && c->pin[m->leaf[i]] >= 0 && R->roff[c->pin[m->leaf[i]]])
			R->pf[R->npf++] = m->leaf[i];
	if (R->npf == 0)
		return;
	int bytes = 0;
	for (int i = 0; i < R->npf; i++)
		bytes += R->rk * R->vec * (int)fz_dtype_size((fz_dtype)c->g->nodes[R->pf[i]].dtype);
	c->info->pf_bytes = bytes;
	sb_puts(sb, "\t\t\tif (fz_rb == (long long)blockIdx.x * blockDim.y) { /* the block's first row: not prefetched */\n");
	emit_pf_issue(R, "fz_r", "\t\t\t\t");
	sb_puts(sb, "\t\t\t}\n\t\t\tfz_pf_wait();\n");
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		sb_printf(sb, "\t\t\t%s l%d[%d][%d];\n", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->rk, R->vec);
	}
	sb_printf(sb, "#pragma unroll\n\t\t\tfor (int k = 0; k < %d; k++) {\n", R->rk);
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		sb_printf(sb, "\t\t\t\tfz_cld(l%d[k], fz_pf%d + k * fz_pfk * %d);\n", id, id, R->vec);
		c->vname[id] = arena_printf(c->a, "l%d[k][u]", id);
	}
	sb_puts(sb, "\t\t\t}\n\t\t\tif (fz_rb + fz_rstep < fz_rows) { /* the next row's, while this one is computed */\n");
	emit_pf_issue(R, "fz_q", "\t\t\t\t");
	sb_puts(sb, "\t\t\t}\n");
}

/* Pass q with the row in registers (fz_reg: one block or less a row, the
 * row's length a multiple of V): chunk k of the thread is j0 = fz_ji + k *
 * fz_stepi, the cached values live in fz_g<id>[k] instead of the row cache,
 * a chunk is all in the row or all past it (one check per chunk, none per
 * element). Pass 0 reads the row-varying leaves from the prefetch buffer
 * (emit_prefetched), or issues every load of a lone stream before it uses
 * any (all of the thread's bytes in flight at once). */
static bool emit_chunks_reg(RowK *R, int q, const Closure *m, const NodeId *t, int nt)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int V = R->vec, K = R->rk;
	StrBuf *sb = c->sb;
	const char *loop = "#pragma unroll\n\t\t\tfor (int k = 0; k < %d; k++) {\n"
	                   "\t\t\t\tconst int j0 = fz_ji + k * fz_stepi;\n\t\t\t\t{\n";
	const char *jl = "\t\t\t\tconst int jl = j0 < fz_ei ? j0 : 0; /* past the row: load its start */\n";
	if (q == 0)
		emit_prefetched(R, m);
	bool hoist = q == 0 && m->nleaf == 1 && R->npf == 0;
	if (hoist) {
		NodeId id = m->leaf[0];
		sb_printf(sb, "\t\t\t%s l%d[%d][%d];\n", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, K, V);
		sb_printf(sb, loop, K);
		sb_puts(sb, jl);
		sb_printf(sb, "\t\t\t\tfz_ldr(l%d[k], %s, jl, fz_vec);\n\t\t\t\t}\n\t\t\t}\n", id, row_ptr(R, c->pin[id]));
		c->vname[id] = arena_printf(c->a, "l%d[k][u]", id);
	}
	/* leaves held for every chunk (hoisted or prefetched): l<id>[k] */
	bool whole = hoist || (q == 0 && R->npf > 0);
	sb_printf(sb, loop, K);
	int nload = 0;
	for (int i = 0; !hoist && i < m->nleaf; i++)
		nload += !(q == 0 && is_pf(R, m->leaf[i]));
	if (nload > 0)
		sb_puts(sb, jl);
	for (int i = 0; !hoist && i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (q == 0 && is_pf(R, id))
			continue;
		sb_printf(sb, "\t\t\t\t%s l%d[%d];\n", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, V);
		sb_printf(sb, "\t\t\t\tfz_ldr(l%d, %s, jl, fz_vec);\n", id, row_ptr(R, c->pin[id]));
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
	for (int i = 0; i < m->nfread; i++)
		c->vname[m->fread[i]] = arena_printf(c->a, "fz_g%d[k][u]", m->fread[i]);
	if (!emit_elements(R, q, m, t, nt, true))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		NodeId id = kp->node;
		if (kp->kind == PARAM_OUT && is_colv(R, id) && c->ph[id] == q)
			sb_printf(sb, "\t\t\t\tif (j0 < fz_ei)\n\t\t\t\t\tfz_str(%s, j0, fz_vec, %s);\n", row_ptr(R, i),
			          reg_array(R, id, q, whole));
	}
	for (int i = 0; i < R->ncached; i++) {
		NodeId id = R->cached[i];
		if (c->ph[id] == q)
			sb_printf(sb, "\t\t\t\tfz_mv(fz_g%d[k], %s);\n", id, reg_array(R, id, q, whole));
	}
	sb_puts(sb, "\t\t\t\t}\n\t\t\t}\n");
	return true;
}

/* After the chunk loop: combine the threads of the row (and the blocks of a
 * split row), then the reductions' values. */
static void emit_finish(RowK *R, int q)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	StrBuf *sb = c->sb;
	int nr = 0;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		const Node *n = &c->g->nodes[red];
		sb_printf(sb, "\t\ta%d = fz_reduce<%s>(a%d, fz_red + 32 * (fz_rp++ & 1));\n", red, acc_op(n), red);
		nr++;
	}
	/* split rows: every block of the row gets every block's partial results */
	if (R->regmode) /* never split */
		goto values;
	int NR = c->info->nred;
	sb_puts(sb, "\t\tif (fz_S > 1) {\n");
	sb_printf(sb, "\t\t\tunsigned long long *fz_p = fz_ws + gridDim.x + ((unsigned long long)blockIdx.x * 2 + (fz_ep & 1)) "
	              "* fz_S * %d;\n", NR);
	sb_puts(sb, "\t\t\tif (threadIdx.x == 0) {\n");
	int j = 0;
	for (int i = 0; i < k->nreductions; i++)
		if (c->ph[k->reductions[i]] == q + 1)
			sb_printf(sb, "\t\t\t\tfz_p[fz_seg * %d + %d] = fz_bits(a%d);\n", NR, j++, k->reductions[i]);
	sb_puts(sb, "\t\t\t}\n\t\t\tfz_barrier(fz_ws + blockIdx.x, ++fz_ep * fz_S);\n");
	j = 0;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] == q + 1)
			sb_printf(sb, "\t\t\ta%d = fz_gather<%s>(a%d, fz_p + %d, fz_S, %d);\n", red, acc_op(&c->g->nodes[red]), red,
			          j++, NR);
	}
	sb_puts(sb, "\t\t}\n");
values:
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		const Node *n = &c->g->nodes[red];
		sb_printf(sb, "\t\tconst %s t%d = %s; // %s\n", cg_compute_type((fz_dtype)n->dtype), red, acc_result(R, red),
		          cg_comment(c, n));
		c->vname[red] = arena_printf(c->a, "t%d", red);
	}
}

/* Per-row values of phase p (leaves and computed ones), in graph order. */
static bool emit_rowc(RowK *R, int p)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	StrBuf *sb = c->sb;
	if (p == 0) {
		for (int i = 0; i < k->nparams; i++) {
			const KParam *kp = &k->params[i];
			if (kp->kind != PARAM_IN || c->mark3[kp->node] != R->rowc || c->pin[kp->node] != i || is_colv(R, kp->node))
				continue;
			const Node *n = &c->g->nodes[kp->node];
			R->used[i] = true;
			sb_printf(sb, "\t\tconst %s t%d = fz_in(%s[%s]);\n", cg_compute_type((fz_dtype)n->dtype), kp->node,
			          cg_param_name(c, i), R->roff[i] ? R->roff[i] : "0");
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
		}
	}
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		if (c->mark3[id] != R->rowc || is_colv(R, id) || is_red(R, id) || cg_is_leaf(c, id) || c->ph[id] != p)
			continue;
		const Node *n = &c->g->nodes[id];
		const char *e = cg_node_expr(c, id);
		if (!e)
			return false;
		sb_printf(sb, "\t\tconst %s t%d = %s; // %s\n", cg_compute_type((fz_dtype)n->dtype), id, e, cg_comment(c, n));
		c->vname[id] = arena_printf(c->a, "t%d", id);
	}
	return true;
}

static void pass_comment(RowK *R, int q)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (q == R->P) {
		sb_printf(c->sb, "\t\t// epilogue: the per-element outputs\n");
		return;
	}
	sb_printf(c->sb, "\t\t// pass %d of %d:", q + 1, R->P);
	bool first = true;
	for (int i = 0; i < k->nreductions; i++)
		if (c->ph[k->reductions[i]] == q + 1) {
			sb_printf(c->sb, "%s %s", first ? "" : ",", cg_comment(c, &c->g->nodes[k->reductions[i]]));
			first = false;
		}
	sb_puts(c->sb, "\n");
}

static bool emit_pass(RowK *R, int q)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + R->ncached + 1);
	int nt = targets(R, q, t);
	Closure m;
	closure(R, q, t, nt, true, &m);
	if (nt == 0)
		return emit_rowc(R, q + 1);
	pass_comment(R, q);
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] == q + 1)
			sb_printf(c->sb, "\t\t%s a%d = %s;\n", acc_type(R, red), red, acc_identity(R, red));
	}
	sb_puts(c->sb, "\t\t{\n");
	if (!(R->regmode ? emit_chunks_reg(R, q, &m, t, nt) : emit_chunks(R, q, &m, t, nt)))
		return false;
	sb_puts(c->sb, "\t\t}\n");
	if (q < R->P)
		emit_finish(R, q);
	return emit_rowc(R, q + 1);
}

/* Per-row outputs, written once a row by its group's first thread. */
static void emit_row_stores(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_OUT || is_colv(R, kp->node))
			continue;
		R->used[i] = true;
		sb_printf(c->sb, "\t\tif (fz_act && threadIdx.x == 0 && fz_seg == 0)\n\t\t\tfz_out(%s[%s], %s);\n",
		          cg_param_name(c, i), R->roff[i] ? R->roff[i] : "0", cg_value(c, kp->node));
	}
}

/* ---- the kernel ------------------------------------------------------------------------ */

static bool same_layout(const RowK *R, NodeId a, NodeId b)
{
	const Node *x = &R->c->g->nodes[a], *y = &R->c->g->nodes[b];
	for (int ax = 0; ax < R->r; ax++)
		if (cg_dim_at(x, R->r, ax) != cg_dim_at(y, R->r, ax))
			return false;
	return true;
}

/* Row offsets: names for the parameters whose rows differ. */
static void plan_offsets(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	R->used = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	R->roff = ARENA_ARRAY(c->a, const char *, k->nparams + 1);
	R->rdecl = ARENA_ARRAY(c->a, int, k->nparams + 1);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN && kp->kind != PARAM_OUT)
			continue;
		CgRun runs[FZ_MAX_RANK];
		int nr = cg_runs(&c->g->nodes[kp->node], R->r, k->domain, R->r - 1, runs);
		bool rowvar = false;
		for (int j = 0; j < nr; j++)
			rowvar |= runs[j].kept;
		if (!rowvar)
			continue;
		/* parameters of the same shape (and layout) share one offset */
		R->rdecl[i] = i;
		for (int j = 0; j < i; j++)
			if (R->roff[j] && same_layout(R, k->params[j].node, kp->node)) {
				R->rdecl[i] = R->rdecl[j];
				break;
			}
		R->roff[i] = arena_printf(c->a, "fz_r%d", R->rdecl[i]);
	}
}

/* Declarations of the row offsets of the parameters used (inside the row
 * loop) and their constants (before it); for the leaves the register path
 * prefetches, the next row's too (fz_q<i>, inside that loop only). */
static void emit_offsets(RowK *R, StrBuf *before, StrBuf *inside, StrBuf *inside_reg)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	StrBuf *save = c->sb;
	for (int i = 0; i < k->nparams; i++)
		if (R->roff[i] && R->used[i])
			R->used[R->rdecl[i]] = true; /* the one that declares it */
	bool *next = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	for (int i = 0; i < R->npf; i++)
		next[R->rdecl[c->pin[R->pf[i]]]] = true;
	if (R->npf > 0)
		sb_puts(inside_reg, "\t\tconst long long fz_rn = fz_row + fz_rstep < fz_rows ? fz_row + fz_rstep : fz_rows - 1;\n");
	for (int i = 0; i < k->nparams; i++) {
		if (!R->roff[i] || !R->used[i] || R->rdecl[i] != i)
			continue;
		const Node *n = &c->g->nodes[k->params[i].node];
		CgRun runs[FZ_MAX_RANK];
		int nr = cg_runs(n, R->r, k->domain, R->r - 1, runs);
		for (int w = 0; w < (next[i] ? 2 : 1); w++) {
			const char *name = arena_printf(c->a, w ? "fz_q%d" : "fz_r%d", i);
			c->sb = before;
			const char *off = cg_offset(c, k, runs, nr, R->r - 1, name, w ? "fz_rn" : "fz_rr", "\t");
			c->sb = save;
			sb_printf(w ? inside_reg : inside, "\t\tconst long long %s = %s%s;\n", name,
			          nr == 1 && runs[0].kept ? off : arena_printf(c->a, "(%s)", off), colv(R, n) ? " * fz_n" : "");
		}
	}
}

static void emit_prologue_general(RowK *R, StrBuf *sb)
{
	Cg *c = R->c;
	int V = R->vec;
	sb_printf(sb, "\tconst long long fz_len = fz_S == 1 ? fz_n : ((fz_n + fz_S - 1) / fz_S + %d) / %d * %d;\n", V - 1, V, V);
	sb_puts(sb, "\tconst long long fz_beg = fz_seg * fz_len < fz_n ? fz_seg * fz_len : fz_n;\n");
	sb_puts(sb, "\tconst long long fz_end = fz_beg + fz_len < fz_n ? fz_beg + fz_len : fz_n;\n");
	sb_printf(sb, "\tconst long long fz_j = fz_beg + (long long)threadIdx.x * %d, fz_step = (long long)blockDim.x * %d;\n",
	          V, V);
	if (c->info->nslots > 0) {
		sb_printf(sb, "\t// the row cache: %d slot%s, each padded to 16 bytes\n", c->info->nslots,
		          c->info->nslots == 1 ? "" : "s");
		sb_printf(sb, "\tconst long long fz_lp = (fz_len + %d) / %d * %d;\n", V - 1, V, V);
		sb_puts(sb, "\tconst long long fz_so0 = 0;\n");
		for (int s = 0; s < c->info->nslots; s++)
			sb_printf(sb, "\tconst long long fz_so%d = fz_so%d + (fz_lp * %d + 15) / 16 * 16;\n", s + 1, s,
			          c->info->slot_bytes[s]);
		/* in shared memory if the launch gave enough, else in the workspace
		 * after the split-row counters and partials */
		int ns = c->info->nslots, nr = c->info->nred > 0 ? c->info->nred : 1;
		sb_printf(sb, "\tconst unsigned long long fz_wc = (gridDim.x + gridDim.x * 2ull * fz_S * %d + 1) / 2 * 2;\n", nr);
		sb_printf(sb, "\tunsigned char *fz_cb = (unsigned long long)fz_so%d * blockDim.y <= fz_dyn_smem()\n", ns);
		sb_printf(sb, "\t\t? reinterpret_cast<unsigned char *>(fz_smem) + threadIdx.y * fz_so%d\n", ns);
		sb_printf(sb, "\t\t: reinterpret_cast<unsigned char *>(fz_ws + fz_wc) + ((blockIdx.y * gridDim.x + blockIdx.x) * "
		              "(unsigned long long)blockDim.y + threadIdx.y) * fz_so%d;\n", ns);
		for (int i = 0; i < R->ncached; i++) {
			NodeId id = R->cached[i];
			const Node *n = &c->g->nodes[id];
			const char *ty = cg_is_leaf(c, id) ? cg_store_type((fz_dtype)n->dtype)
			                 : n->dtype == FZ_BOOL ? "unsigned char" : cg_compute_type((fz_dtype)n->dtype);
			sb_printf(sb, "\t%s *fz_c%d = reinterpret_cast<%s *>(fz_cb + fz_so%d);\n", ty, id, ty, R->cslot[i]);
		}
	}
	if (R->P > 0)
		sb_puts(sb, "\tunsigned long long fz_ep = 0; /* split rows: exchanges so far */\n");
}

/* The prefetch buffer of the register path: for each prefetched leaf, rk
 * chunks of every thread of the block, in its storage type; chunk k of a
 * thread at fz_pf<id> + k * fz_pfk * V, so that a warp's copies and reads
 * are consecutive 16-byte pieces. */
static void emit_pf_buffer(RowK *R, StrBuf *sb)
{
	Cg *c = R->c;
	int bytes = 0;
	sb_puts(sb, "\t\tconst int fz_nr = (int)fz_n, fz_pfk = blockDim.x * blockDim.y;\n");
	sb_puts(sb, "\t\tconst long long fz_rstep = (long long)gridDim.x * blockDim.y;\n");
	sb_puts(sb, "\t\tconst int fz_tid = threadIdx.y * blockDim.x + threadIdx.x;\n");
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		fz_dtype t = (fz_dtype)c->g->nodes[id].dtype;
		const char *ty = cg_store_type(t);
		if (bytes == 0)
			sb_printf(sb, "\t\t%s *fz_pf%d = reinterpret_cast<%s *>(fz_smem) + fz_tid * %d;\n", ty, id, ty, R->vec);
		else
			sb_printf(sb, "\t\t%s *fz_pf%d = reinterpret_cast<%s *>(reinterpret_cast<unsigned char *>(fz_smem) + "
			              "fz_pfk * %d) + fz_tid * %d;\n", ty, id, ty, bytes, R->vec);
		bytes += R->rk * R->vec * (int)fz_dtype_size(t);
	}
}

/* part 0: what both row loops use; 1: the general loop's (segments, the
 * row cache, split rows); 2: the register loop's. */
static void emit_prologue(RowK *R, StrBuf *sb, int part)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int V = R->vec;
	if (part == 2) {
		sb_printf(sb, "\t\tconst int fz_ji = (int)threadIdx.x * %d, fz_stepi = (int)blockDim.x * %d;\n", V, V);
		if (R->npf > 0)
			emit_pf_buffer(R, sb);
		return;
	}
	if (part == 1) {
		emit_prologue_general(R, sb);
		return;
	}
	if (c->info->nslots > 0 || R->npf > 0)
		sb_puts(sb, "\textern __shared__ fz_a16 fz_smem[];\n");
	if (R->P > 0)
		sb_puts(sb, "\t__shared__ unsigned long long fz_red[64];\n\tunsigned fz_rp = 0; /* reductions so far: fz_reduce's half of fz_red */\n");
	sb_printf(sb, "\tconst long long fz_rows = %s;\n", cg_extent(c, k, 0, R->r - 1));
	sb_printf(sb, "\tconst long long fz_n = %s;\n", cg_extent(c, k, R->r - 1, R->r));
	sb_puts(sb, "\tconst int fz_S = gridDim.y, fz_seg = blockIdx.y;\n");
	StrBuf cond;
	sb_init(&cond, c->a);
	sb_printf(&cond, "fz_n %% %d == 0", V);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if ((kp->kind == PARAM_IN || kp->kind == PARAM_OUT) && R->used[i] && is_colv(R, kp->node))
			sb_printf(&cond, " && fz_aligned(%s, %d)", cg_param_name(c, i),
			          cg_vec_align(V, (fz_dtype)c->g->nodes[kp->node].dtype));
	}
	sb_printf(sb, "\tconst bool fz_vec = %s;\n", sb_str(&cond));
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_SCALAR || c->pin[kp->node] != i)
			continue;
		const Node *n = &c->g->nodes[kp->node];
		sb_printf(sb, "\tconst %s t%d = fz_in(%s);\n", cg_compute_type((fz_dtype)n->dtype), kp->node, cg_param_name(c, i));
		c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
	}
	if (R->rk > 0) {
		sb_printf(sb, "\t// the row in registers (up to %d chunks a thread, no row cache), else the general loop\n",
		          R->rk);
		sb_printf(sb, "\tconst bool fz_reg = fz_S == 1 && fz_n > 0 && fz_n %% %d == 0 && fz_n <= (long long)blockDim.x * %d",
		          V, R->rk * V);
		if (R->npf > 0) /* and the launch gave the prefetch buffer */
			sb_printf(sb, "\n\t\t&& fz_dyn_smem() >= blockDim.x * blockDim.y * %du", c->info->pf_bytes);
		sb_puts(sb, ";\n");
	}
}

/* Chunks a thread holds in registers: 16 elements, when what the passes
 * carry fits (32 make the 64-register bound of 1024-thread blocks spill,
 * measured with ptxas); 32 for rows of halves (V >= 8), whose entries are
 * then bound to 512 threads (max_threads): half the bytes an element, so
 * the same bytes in flight a thread and half the per-row work an element
 * (H200, 8192x4096: layernorm f16 54.0 -> 49.2 us, softmax f16 66.3 ->
 * 64.0, layernorm bf16 58.6 -> 56.6). */
static int reg_elems(const RowK *R) { return R->vec >= 8 ? 32 : 16; }

/* The entry's __launch_bounds__: 1024 threads (64 registers each) only for
 * lean kernels, which is what a 1024-thread block a row needs (the longest
 * rows cached in one block); 512 (128 registers) otherwise, so that wide
 * chunks and long math chains do not spill. */
static int max_threads(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int streams = 0;
	for (int i = 0; i < k->nparams; i++)
		streams += (k->params[i].kind == PARAM_IN || k->params[i].kind == PARAM_OUT) && is_colv(R, k->params[i].node);
	bool heavy = false;
	for (int i = 0; i < k->nnodes; i++) {
		Op op = (Op)c->g->nodes[k->nodes[i]].op;
		heavy |= is_colv(R, k->nodes[i]) && cg_long_math(op);
	}
	c->info->heavy = heavy;
	/* the register path's own loop carries less: up to 4 streams without
	 * long math stay under 64 registers there (ptxas, every example) */
	if (R->rk > 0 && streams <= 4 && !heavy)
		return reg_elems(R) > 16 ? 512 : 1024;
	return R->vec <= 4 && streams <= 2 && !heavy ? 1024 : 512;
}

static int reg_chunks(RowK *R)
{
	int V = R->vec, E = reg_elems(R), K = V >= 2 ? E / V : 8, bytes = 0;
	for (int i = 0; i < R->ncached; i++)
		bytes += cg_compute_size((fz_dtype)R->c->g->nodes[R->cached[i]].dtype) * K * V;
	return bytes <= 16 * E ? K : 0;
}

static void reset_scratch(RowK *R)
{
	for (int i = 0; i < R->ntouched; i++)
		R->c->nflags[R->touched[i]] = 0;
}

/* What cg_launch needs to know (CgKernelInfo), once the plan is made. */
static void fill_info(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int nred = 0;
	for (int q = 0; q < R->P; q++) {
		int n = 0;
		for (int i = 0; i < k->nreductions; i++)
			n += c->ph[k->reductions[i]] == q + 1;
		nred = n > nred ? n : nred;
	}
	c->info->nred = nred;
	c->info->npasses = R->P + 1;
	for (int i = 0; i < k->nparams; i++)
		c->info->rowc_store |= k->params[i].kind == PARAM_OUT && !is_colv(R, k->params[i].node);
	R->rk = c->info->rk = reg_chunks(R);
	c->info->max_threads = max_threads(R);
}

/* The loop over the rows of a block (grid-stride): the general one, or the
 * register path's (whole rows, 32-bit offsets, the cached values in fz_g*). */
static void emit_row_loop(RowK *R, StrBuf *sb, const StrBuf *inside, const StrBuf *inside_reg, const StrBuf *body,
                          bool reg)
{
	Cg *c = R->c;
	sb_puts(sb, "\tfor (long long fz_rb = (long long)blockIdx.x * blockDim.y; fz_rb < fz_rows; fz_rb += "
	            "(long long)gridDim.x * blockDim.y) {\n");
	sb_puts(sb, "\t\tconst long long fz_row = fz_rb + threadIdx.y;\n\t\tconst bool fz_act = fz_row < fz_rows;\n");
	if (inside->len > 0)
		sb_puts(sb, "\t\tconst long long fz_rr = fz_act ? fz_row : fz_rows - 1;\n");
	if (reg) {
		sb_puts(sb, "\t\tconst int fz_ei = fz_act ? (int)fz_n : 0;\n");
		for (int i = 0; i < R->ncached; i++) {
			const Node *n = &c->g->nodes[R->cached[i]];
			sb_printf(sb, "\t\t%s fz_g%d[%d][%d];\n", cg_compute_type((fz_dtype)n->dtype), R->cached[i], R->rk, R->vec);
		}
	} else {
		sb_puts(sb, "\t\tconst long long fz_e = fz_act ? fz_end : fz_beg;\n");
	}
	sb_putn(sb, inside->buf ? inside->buf : "", inside->len);
	if (reg)
		sb_putn(sb, inside_reg->buf ? inside_reg->buf : "", inside_reg->len);
	sb_putn(sb, body->buf ? body->buf : "", body->len);
	sb_puts(sb, "\t}\n");
}

/* The kernel: its prologue (written last: it tests the alignment of the
 * parameters the passes used), then the register path's row loop (rows that
 * fit in registers, see fz_reg) and the general one. */
static bool emit_kernel(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	StrBuf body[2], before, general, inside, inside_reg, *save = c->sb;
	sb_init(&body[0], c->a);
	sb_init(&body[1], c->a);
	sb_init(&before, c->a);
	sb_init(&inside, c->a);
	sb_init(&inside_reg, c->a);
	emit_prologue(R, &before, 0); /* names the scalars the passes use */
	bool ok = true;
	for (int m = 0; ok && m < (R->rk > 0 ? 2 : 1); m++) { /* the general loop, then the register loop */
		R->regmode = m == 1;
		c->sb = &body[m];
		ok = emit_rowc(R, 0);
		for (int q = 0; ok && q <= R->P; q++)
			ok = emit_pass(R, q);
		if (ok)
			emit_row_stores(R);
	}
	c->sb = save;
	if (!ok)
		return false;
	sb_init(&before, c->a);
	sb_init(&general, c->a);
	emit_prologue(R, &before, 0);
	emit_prologue(R, &general, 1);
	emit_offsets(R, &before, &inside, &inside_reg);
	sb_printf(save, "\n// ---- kernel %s: rows of %s, %d pass%s over each row, then the epilogue\n", k->name,
	          ir_shape_str(c->a, c->g, k->rank, k->domain), R->P, R->P == 1 ? "" : "es");
	if (c->info->max_threads == 1024 && R->rk > 0)
		sb_printf(save, "extern \"C\" __global__ void FZ_LEAN_ROW %s_row", c->kname);
	else
		sb_printf(save, "extern \"C\" __global__ void __launch_bounds__(%d) %s_row", c->info->max_threads, c->kname);
	cg_signature(c, k, true);
	sb_puts(save, "{\n");
	sb_putn(save, before.buf ? before.buf : "", before.len);
	if (R->rk > 0) {
		sb_puts(save, "\tif (fz_reg) {\n");
		emit_prologue(R, save, 2);
		emit_row_loop(R, save, &inside, &inside_reg, &body[1], true);
		sb_puts(save, "\t\treturn;\n\t}\n");
	}
	sb_putn(save, general.buf ? general.buf : "", general.len);
	emit_row_loop(R, save, &inside, &inside_reg, &body[0], false);
	sb_puts(save, "}\n");
	return true;
}

bool cg_row(Cg *c)
{
	if (!c->ph) {
		int n = c->g->n + 1;
		c->ph = ARENA_ARRAY(c->a, int32_t, n);
		c->lastread = ARENA_ARRAY(c->a, int32_t, n);
		c->nflags = ARENA_ARRAY(c->a, uint8_t, n);
	}
	c->helpers |= CGH_ROW | CGH_MINMAX;
	RowK R = {.c = c, .k = c->k, .r = c->k->rank};
	R.vec = c->vec = c->info->vec = cg_vec_width(c, true);
	R.rowc = cg_new_stamp(c);
	bool ok = analyse(&R);
	if (ok) {
		plan_cache(&R);
		plan_offsets(&R);
		fill_info(&R);
		ok = emit_kernel(&R);
	}
	reset_scratch(&R);
	return ok && !c->d->set;
}
