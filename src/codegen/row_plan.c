/*
 * row_plan.c: what a row kernel computes in which pass, and what it keeps.
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
 * recomputed from global memory; one cheap step from a cached value (the
 * xc = x - mu of layernorm) is recomputed instead (plan_remat). Slots are
 * reused once their last reader has passed (a thread reads its chunk
 * before it writes it), so softmax needs 4 bytes an element and layernorm
 * 4 (f32) or 2 (f16). Where the
 * cache lives (registers, shared memory, the workspace) is the path's and
 * the launch's business; this file decides what is in it.
 *
 * Also planned once for every entry: the register path's chunks a thread
 * (rk), the leaves it prefetches a row ahead and their buffers, the entry's
 * thread bound (row_plan_reg.c), and everything cg_launch needs
 * (CgKernelInfo).
 */
#include "codegen/rowint.h"

#include <stdint.h>
#include <string.h>

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

/* Node id's phase and flags from its arguments'. */
static bool node_flags(RowK *R, NodeId id)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[id];
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
	if (n->rank > R->r || cg_runs(n, R->r, R->k->domain, R->r, (CgRun[FZ_MAX_RANK]){0}) < 0)
		return cg_internal(c, "node %%%d of kernel %s does not broadcast to its rows", id, R->k->name);
	if (ir_ops[n->op].cls == OC_REDUCE) {
		if (colv(R, n) || !(c->nflags[n->args[0]] & NK_COLV))
			return cg_internal(c, "reduction %%%d of kernel %s is not over its rows", id, R->k->name);
		ph++;
		R->P = ph > R->P ? ph : R->P;
	}
	c->nflags[id] |= (colv(R, n) ? NK_COLV : 0) | (rowvar ? NK_ROWVAR : 0);
	c->ph[id] = ph;
	return true;
}

static bool analyse(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (k->domain[R->r - 1] == 1)
		return cg_internal(c, "row kernel %s reduces an axis of literal size 1", k->name);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind != PARAM_DIM && !leaf_flags(R, k->params[i].node))
			return false;
	R->P = 0;
	for (int i = 0; i < k->nnodes; i++)
		if (!cg_is_leaf(c, k->nodes[i]) && !node_flags(R, k->nodes[i]))
			return false;
	return true;
}

bool row_is_red(const RowK *R, NodeId id) { return ir_ops[R->c->g->nodes[id].op].cls == OC_REDUCE; }
bool row_is_colv(const RowK *R, NodeId id) { return (R->c->nflags[id] & NK_COLV) != 0; }
bool row_is_rowvar(const RowK *R, NodeId id) { return (R->c->nflags[id] & NK_ROWVAR) != 0; }

bool row_is_fread(const RowK *R, NodeId id, int q)
{
	return !R->stream && row_is_colv(R, id) && row_is_rowvar(R, id) && R->c->ph[id] < q && R->c->g->nodes[id].op != OP_CONST &&
	       !(R->c->nflags[id] & NK_REMAT);
}

/* A cast of a per-element input no wider than the cast's compute type
 * (rmsnorm bf16's f32(x)): recomputed from the input, which is cached instead,
 * in its storage type (2 bytes an element instead of 4). H200, rmsnorm bf16
 * 334x50257 (ROW: 100 KiB a row, two blocks an SM instead of one), with the
 * first pass's copy (row_loop.c): 58.7 -> 41.2 us; the register path's code
 * is the same but for names (1024x16384: 25.0 us before and after). */
static bool leaf_cast(const RowK *R, const Node *n, NodeId x)
{
	Cg *c = R->c;
	const Node *l = &c->g->nodes[x];
	return n->op == OP_CAST && cg_is_leaf(c, x) && row_is_rowvar(R, x) &&
	       (int)fz_dtype_size((fz_dtype)l->dtype) <= cg_compute_size((fz_dtype)n->dtype);
}

/* ---- online sums ----------------------------------------------------------------- */

/* Without a row cache every pass reads the inputs again from the L2 or DRAM,
 * so softmax's stream entry read x three times: max(x), then sum(exp(x -
 * max(x))), then the outputs; layernorm's, mean(x), then mean((x - mean(x))^2),
 * then the outputs. Such a sum is accumulated in its partner's pass instead
 * ("online"), in the stream entry only (the cached entries read their later
 * passes from the cache):
 *
 * - sum(exp(u - m)), m = max(u) (softmax): each thread keeps the largest u so
 *   far and the sum relative to it, multiplied by exp(old - new) where the
 *   maximum grows; the block's and the row's partial sums are brought to the
 *   row's maximum the same way before they are added;
 * - sum((u - m) * (u - m)), m = mean(u) (variance): each thread keeps the
 *   count, mean and squared deviations of its elements, a chunk's merged in
 *   (Chan, Golub and LeVeque); once the row's mean is known (after the
 *   partner's exchange), each thread's deviations are moved to it (+ count *
 *   (mean - row's mean)^2) and added, in an exchange of their own.
 *
 * Either may be a mean instead of a sum. The terms are computed as the
 * program writes them (its own ops, u from the partner's chunk array), so
 * only the merging's roundings are new (row_chunk.c). */
static bool is_float(const RowK *R, NodeId id)
{
	return !strcmp(cg_compute_type((fz_dtype)R->c->g->nodes[id].dtype), "float");
}

/* s = sum or mean of exp(u - m), m = max(u), or of (u - m) * (u - m), m =
 * mean(u), m a reduction of this kernel, everything in float: m, or -1. */
static NodeId online_pattern(const RowK *R, NodeId s)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[s];
	if (n->op != OP_SUM && n->op != OP_MEAN)
		return -1;
	NodeId e = n->args[0];
	const Node *en = &c->g->nodes[e];
	bool sq = en->op == OP_MUL && en->args[0] == en->args[1];
	if ((en->op != OP_EXP && !sq) || cg_is_leaf(c, e))
		return -1;
	NodeId d = en->args[0];
	const Node *dn = &c->g->nodes[d];
	if (dn->op != OP_SUB || cg_is_leaf(c, d))
		return -1;
	NodeId u = dn->args[0], m = dn->args[1];
	const Node *mn = &c->g->nodes[m];
	if (mn->op != (sq ? OP_MEAN : OP_MAX) || mn->args[0] != u || cg_is_leaf(c, m) || !row_is_colv(R, u))
		return -1;
	bool in = false;
	for (int i = 0; i < R->k->nreductions; i++)
		in |= R->k->reductions[i] == m;
	bool fl = is_float(R, u) && is_float(R, d) && is_float(R, e) && !strcmp(cg_acc_type(c, m), "float") &&
	          !strcmp(cg_acc_type(c, s), "float");
	return in && fl ? m : -1;
}

NodeId row_online_of(const RowK *R, NodeId s)
{
	if (!(R->c->nflags[s] & NK_ONLINE))
		return -1;
	const Node *e = &R->c->g->nodes[R->c->g->nodes[s].args[0]];
	return R->c->g->nodes[e->args[0]].args[1];
}

bool row_online_var(const RowK *R, NodeId s)
{
	NodeId m = row_online_of(R, s);
	return m >= 0 && R->c->g->nodes[m].op == OP_MEAN;
}

bool row_has_online(const RowK *R, NodeId m)
{
	for (int i = 0; i < R->k->nreductions; i++)
		if (row_online_of(R, R->k->reductions[i]) == m)
			return true;
	return false;
}

bool row_in_round(const RowK *R, int q, NodeId red, int round)
{
	return R->c->ph[red] == q + 1 && row_online_var(R, red) == (round == 2);
}

int row_round(const RowK *R, int q, int round, NodeId *out)
{
	const Kernel *k = R->k;
	int n = 0;
	for (int after = 0; after < 2; after++)
		for (int i = 0; i < k->nreductions; i++) {
			NodeId red = k->reductions[i];
			bool of_max = row_online_of(R, red) >= 0 && !row_online_var(R, red);
			if (row_in_round(R, q, red, round) && of_max == after)
				out[n++] = red;
		}
	return n;
}

/* Mark the online sums, and move each (and what depends on it) a phase
 * earlier: into its partner's. */
static void plan_online(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	bool any = false;
	for (int i = 0; R->stream && i < k->nreductions; i++)
		if (online_pattern(R, k->reductions[i]) >= 0) {
			c->nflags[k->reductions[i]] |= NK_ONLINE;
			any = true;
		}
	if (!any)
		return;
	R->P = 0;
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		const Node *n = &c->g->nodes[id];
		if (cg_is_leaf(c, id))
			continue;
		int ph = 0;
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			ph = c->ph[n->args[a]] > ph ? c->ph[n->args[a]] : ph;
		if (row_is_red(R, id))
			ph = (c->nflags[id] & NK_ONLINE) ? c->ph[row_online_of(R, id)] : ph + 1;
		c->ph[id] = ph;
		R->P = row_is_red(R, id) && ph > R->P ? ph : R->P;
	}
}

/* ---- late values ----------------------------------------------------------------- */

/* A node's phase is the earliest pass that can compute it; a value only
 * later passes read may be better computed there. modrms_row's `1 + scale`
 * and `shift` (inputs of the rows) were read only by the epilogue, but
 * computed in pass 0 and kept across the reduction: in f32 registers (the
 * masked register class spilled 180 bytes) or in the row cache. In a late
 * plan (R->late) an input of the rows is loaded by the first pass that
 * reads it, and a per-element value whose every per-element operand is
 * such an input (or a column operand, or another such value) is computed
 * by the first pass that reads it. Outputs stay in their phase.
 *
 * The aligned register class, which copies pass 0's inputs a row ahead
 * into shared memory, lost where its epilogue loaded them instead (H100,
 * bench/row_shapes.py, us: modrms_row 4096x2048 28.6 -> 31.4, modrms_batch
 * 8x682x3072 30.3 -> 44.0), so it keeps the plan without (row_emit.c);
 * the masked class prefetches its late inputs too (pf_late, row_plan_prefetch).
 * The others, H200, before -> late: modrms_row bf16 4095x2047 (masked
 * class) 42.6 -> 32.4, 16760x1001 69.8 -> 57.3, 132104x127 (tiles) 46.2 ->
 * 42.1, 400x20000 (ROW) 38.9 -> 27.6, modrms_batch bf16 8x511x4095 77.7 ->
 * 48.6, 8x100x20000 63.6 -> 36.7. */
static bool late_node(const RowK *R, NodeId id)
{
	return !cg_is_leaf(R->c, id) && !row_is_red(R, id) && row_is_colv(R, id) && row_param_of(R, id, PARAM_OUT) < 0;
}

/* The pass that computes node id (or that reads leaf id first) when the
 * late nodes move to their first reader. */
static int late_pass(const RowK *R, const int32_t *use, const bool *late, NodeId id)
{
	int p = R->c->ph[id];
	return late[id] && use[id] != INT32_MAX && use[id] > p ? use[id] : p;
}

/* The earliest pass that reads each per-element value, the late nodes moved. */
static void late_uses(RowK *R, int32_t *use, const bool *late)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < R->ntouched; i++)
		use[R->touched[i]] = INT32_MAX;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT)
			use[k->params[i].node] = c->ph[k->params[i].node];
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		const Node *n = &c->g->nodes[id];
		if (cg_is_leaf(c, id) || (!row_is_colv(R, id) && !row_is_red(R, id)))
			continue;
		int at = row_is_red(R, id) ? c->ph[id] - 1 : late_pass(R, use, late, id);
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			if (row_is_colv(R, n->args[a]) && at < use[n->args[a]])
				use[n->args[a]] = at;
	}
}

/* Can late node id move to pass p: each per-element operand a constant, a
 * column operand, an input of the rows first read there, or a late node? */
static bool late_ok(const RowK *R, const int32_t *use, const bool *late, NodeId id, int p)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[id];
	for (int a = 0; a < ir_ops[n->op].arity; a++) {
		NodeId x = n->args[a];
		const Node *xn = &c->g->nodes[x];
		if (!row_is_colv(R, x) || xn->op == OP_CONST || late[x])
			continue;
		if (!cg_is_leaf(c, x) || (row_is_rowvar(R, x) && use[x] != p))
			return false;
	}
	return true;
}

static void plan_late(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (!R->late || R->P == 0)
		return;
	int32_t *use = ARENA_ARRAY(c->a, int32_t, c->g->n + 1);
	bool *late = ARENA_ARRAY(c->a, bool, c->g->n + 1);
	for (int i = 0; i < k->nnodes; i++)
		late[k->nodes[i]] = late_node(R, k->nodes[i]);
	/* a node that cannot move keeps its operands where they are read:
	 * again, until none is dropped */
	for (bool again = true; again;) {
		again = false;
		late_uses(R, use, late);
		for (int i = 0; i < k->nnodes; i++) {
			NodeId id = k->nodes[i];
			int p = late_pass(R, use, late, id);
			if (late[id] && p > c->ph[id] && !late_ok(R, use, late, id, p)) {
				late[id] = false;
				again = true;
			}
		}
	}
	for (int i = 0; i < k->nnodes; i++)
		c->ph[k->nodes[i]] = late_pass(R, use, late, k->nodes[i]);
	for (int i = 0; i < R->ntouched; i++) {
		NodeId id = R->touched[i];
		if (cg_is_leaf(c, id) && row_is_colv(R, id) && row_is_rowvar(R, id) && use[id] != INT32_MAX)
			c->ph[id] = use[id];
	}
}

/* Values recomputed by the passes that read them instead of cached: an add,
 * subtract, multiply, negation or cast of per-row values and one per-element
 * value, of an earlier pass (so cached anyway) or itself recomputed, such as
 * layernorm's xc = x - mean(x). The cache then holds x alone, 2 bytes an
 * element for bf16 instead of 6, and the pass that computes xc stores
 * nothing. Measured on the H200 (docs/performance.md, "xc recomputed, not
 * cached"): layernorm bf16 511x32768 72.6 -> 54.0 us (three blocks an SM
 * instead of one), 130x128256 86.9 -> 79.7, f32 8x1000003 81.7 -> 76.0;
 * the register path's rows unchanged.
 *
 * A narrow plan (the entries whose cache is in memory) recomputes light
 * one-operand math of such values too: softmax f16's e = exp(x - max(x)),
 * so that its cache holds x (2 bytes an element) instead of x and e (6).
 * The register path keeps e: it holds values in f32 registers either way,
 * and recomputing costs it the math. row_emit.c takes the narrow plan only
 * where it caches fewer bytes. */
static bool remat_op(const RowK *R, Op op)
{
	if (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_NEG || op == OP_CAST)
		return true;
	const OpInfo *o = &ir_ops[op];
	return R->narrow && o->arity == 1 && (o->cls == OC_MATH || o->cls == OC_ARITH) && o->cost == COST_LIGHT;
}

static void plan_remat(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		const Node *n = &c->g->nodes[id];
		bool op = remat_op(R, (Op)n->op);
		if (!op || cg_is_leaf(c, id) || !row_is_colv(R, id) || !row_is_rowvar(R, id))
			continue;
		int colv = 0;
		bool earlier = true;
		for (int a = 0; a < ir_ops[n->op].arity; a++) {
			NodeId x = n->args[a];
			if (!row_is_colv(R, x) || c->g->nodes[x].op == OP_CONST)
				continue;
			colv++;
			earlier &= (c->ph[x] < c->ph[id] && row_is_rowvar(R, x)) || (c->nflags[x] & NK_REMAT) ||
			           leaf_cast(R, n, x);
		}
		if (colv == 1 && earlier)
			c->nflags[id] |= NK_REMAT;
	}
}

int row_targets(RowK *R, int q, NodeId *t)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int n = 0;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i], m = row_online_of(R, red);
		/* an online sum's pass computes its partner's operand alone (row_chunk.c
		 * computes the terms from it) */
		if (c->ph[red] == q + 1)
			t[n++] = c->g->nodes[m >= 0 ? m : red].args[0];
	}
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_OUT && row_is_colv(R, kp->node) && c->ph[kp->node] == q)
			t[n++] = kp->node;
	}
	for (int i = 0; i < R->ncached; i++)
		if (c->ph[R->cached[i]] == q)
			t[n++] = R->cached[i];
	return n;
}

/* Mark node x as needed by a closure with stamp s, classifying leaves and
 * per-row values on the spot (they are not in the kernel's node list). */
static void need(RowK *R, NodeId x, int32_t s, int q, Closure *out)
{
	Cg *c = R->c;
	if (c->mark[x] == s)
		return;
	c->mark[x] = s;
	const Node *n = &c->g->nodes[x];
	if (n->op == OP_CONST)
		return;
	if (!row_is_colv(R, x)) {
		c->mark3[x] = R->rowc;
		return;
	}
	if (row_is_fread(R, x, q)) {
		VEC_PUSH(c->a, out->fread, out->nfread, out->capfread, x);
		return;
	}
	if (cg_is_leaf(c, x))
		VEC_PUSH(c->a, out->leaf, out->nleaf, out->capleaf, x);
}

void row_closure(RowK *R, int q, const NodeId *t, int nt, Closure *out)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	memset(out, 0, sizeof *out);
	int32_t s = cg_new_stamp(c);
	for (int i = 0; i < nt; i++)
		need(R, t[i], s, q, out);
	NodeId *rev = ARENA_ARRAY(c->a, NodeId, k->nnodes + 1);
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		if (c->mark[id] != s || !row_is_colv(R, id) || cg_is_leaf(c, id) || row_is_fread(R, id, q))
			continue;
		rev[out->ncomp++] = id;
		const Node *n = &c->g->nodes[id];
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			need(R, n->args[a], s, q, out);
	}
	out->comp = ARENA_ARRAY(c->a, NodeId, out->ncomp + 1);
	for (int i = 0; i < out->ncomp; i++)
		out->comp[i] = rev[out->ncomp - 1 - i];
}

/* ---- the row cache ----------------------------------------------------------------- */

static int cache_bytes(RowK *R, NodeId id)
{
	const Node *n = &R->c->g->nodes[id];
	return cg_is_leaf(R->c, id) ? (int)fz_dtype_size((fz_dtype)n->dtype) : cg_compute_size((fz_dtype)n->dtype);
}

/* Passes from the last to the first: which cached values each reads (so the
 * earlier pass that computes them knows to write them), and every per-row
 * value needed. */
static void plan_reads(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + k->nnodes + 1);
	R->ncached = 0;
	for (int q = R->P; q >= 0; q--) {
		int nt = row_targets(R, q, t);
		for (int i = 0; i < R->ntouched; i++) {
			NodeId id = R->touched[i];
			if (c->ph[id] == q && c->lastread[id] > q && row_is_colv(R, id) && row_is_rowvar(R, id))
				t[nt++] = id;
		}
		Closure m;
		row_closure(R, q, t, nt, &m);
		for (int i = 0; i < m.nfread; i++)
			if (c->lastread[m.fread[i]] < q)
				c->lastread[m.fread[i]] = q;
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT && !row_is_colv(R, k->params[i].node))
			c->mark3[k->params[i].node] = R->rowc;
	/* per-row values need their per-row arguments (a reduction stops here:
	 * its argument is the passes' business) */
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		const Node *n = &c->g->nodes[id];
		if (c->mark3[id] != R->rowc || row_is_colv(R, id) || row_is_red(R, id) || cg_is_leaf(c, id))
			continue;
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			c->mark3[n->args[a]] = R->rowc;
	}
}

/* Slots, in order of the pass that writes them: a value holds one from its
 * pass to its last reader, and a later value of the same size may take it
 * over. */
static void plan_slots(RowK *R)
{
	Cg *c = R->c;
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

int row_slot_of(const RowK *R, NodeId id)
{
	for (int i = 0; i < R->ncached; i++)
		if (R->cached[i] == id)
			return R->cslot[i];
	return -1;
}

int row_param_of(const RowK *R, NodeId id, ParamKind kind)
{
	for (int i = 0; i < R->k->nparams; i++)
		if (R->k->params[i].kind == kind && R->k->params[i].node == id)
			return i;
	return -1;
}

/* ---- row offsets ------------------------------------------------------------------- */

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

/* ---- chunks aligned row by row --------------------------------------------------------- */

bool row_is_stream(const RowK *R, int i)
{
	const KParam *kp = &R->k->params[i];
	return (kp->kind == PARAM_IN || kp->kind == PARAM_OUT) && row_is_colv(R, kp->node);
}

/* Whether parameter i has the kernel's full shape (every axis kept): the
 * layout of its outputs. */
static bool full_layout(const RowK *R, int i)
{
	const Node *n = &R->c->g->nodes[R->k->params[i].node];
	for (int ax = 0; ax < R->r; ax++)
		if (R->k->domain[ax] != 1 && cg_dim_at(n, R->r, ax) != R->k->domain[ax])
			return false;
	return true;
}

/* The primary stream of the shifted paths: a row's chunks start where it is
 * 16-byte aligned (fz_s elements before the row). Preferred: a stream of the
 * kernel's full shape (its outputs' layout), then the narrowest (its V
 * elements are 16 bytes; a wider stream's chunks, V times its size, are
 * then aligned too). The streams with its row offset are aligned with it
 * row by row when their pointers are (fz_v<i>, a test a row); the others
 * (a column operand such as layernorm's weight, a mask of another layout)
 * are not, and load whole chunks from the aligned blocks that hold them
 * (fz_ldc). */
static void plan_streams(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	R->prim = -1;
	R->aligned = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	int best = 0;
	for (int i = 0; i < k->nparams; i++) {
		if (!row_is_stream(R, i))
			continue;
		int score = (full_layout(R, i) ? 100 : 0) + (R->roff[i] ? 50 : 0) -
		            (int)fz_dtype_size((fz_dtype)c->g->nodes[k->params[i].node].dtype);
		if (R->prim < 0 || score > best) {
			R->prim = i;
			best = score;
		}
	}
	for (int i = 0; i < k->nparams && R->prim >= 0; i++)
		R->aligned[i] = row_is_stream(R, i) && (R->roff[i] ? R->roff[R->prim] && R->rdecl[i] == R->rdecl[R->prim]
		                                                   : !R->roff[R->prim]);
	/* the TILE path stages the streams of the rows' layout: a block's rows
	 * are one contiguous span of each */
	struct CgKernelInfo *ki = c->info;
	ki->tile_param = ARENA_ARRAY(c->a, int, k->nparams + 1);
	ki->tile_bytes = ARENA_ARRAY(c->a, int, k->nparams + 1);
	ki->tile_in = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	ki->ntiles = 0;
	for (int i = 0; i < k->nparams && R->prim >= 0 && R->roff[R->prim] && full_layout(R, R->prim); i++)
		if (R->aligned[i]) {
			ki->tile_param[ki->ntiles] = i;
			ki->tile_in[ki->ntiles] = k->params[i].kind == PARAM_IN;
			ki->tile_bytes[ki->ntiles++] = (int)fz_dtype_size((fz_dtype)c->g->nodes[k->params[i].node].dtype);
		}
}

bool row_line_operands(const RowK *R)
{
	int cols = 0;
	for (int i = 0; i < R->k->nparams; i++) {
		if (R->k->params[i].kind != PARAM_IN || !row_is_stream(R, i) || full_layout(R, i))
			continue;
		if (R->roff[i]) /* a broadcast operand whose elements vary by row (a mask [B, 1, 1, N]) */
			return false;
		cols++;
	}
	return cols == 0 || (cols == 1 && R->P == 1);
}

bool row_is_copied(const RowK *R, NodeId id)
{
	Cg *c = R->c;
	return !R->stream && cg_is_leaf(c, id) && row_is_rowvar(R, id) && row_slot_of(R, id) >= 0 && c->pin[id] >= 0 &&
	       R->aligned[c->pin[id]];
}

int row_tile_of(const RowK *R, int i)
{
	const struct CgKernelInfo *ki = R->c->info;
	for (int t = 0; t < ki->ntiles; t++)
		if (ki->tile_param[t] == i)
			return t;
	return -1;
}

/* ---- the plan ---------------------------------------------------------------------- */

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
	c->info->vec = R->vec;
	c->info->nred = nred;
	c->info->npasses = R->P + 1;
	c->info->static_smem = R->P > 0 ? CG_RED_WORDS * 8 : 0;
	for (int i = 0; i < k->nparams; i++) {
		c->info->rowc_store |= k->params[i].kind == PARAM_OUT && !row_is_colv(R, k->params[i].node);
		if (k->params[i].kind == PARAM_IN && row_is_stream(R, i) && R->roff[i])
			c->info->in_bytes += (int)fz_dtype_size((fz_dtype)c->g->nodes[k->params[i].node].dtype);
		c->info->colops |= k->params[i].kind == PARAM_IN && row_is_stream(R, i) && !R->roff[i];
		c->info->rowcp |= k->params[i].kind == PARAM_IN && row_is_copied(R, k->params[i].node);
	}
	R->rk = c->info->rk = row_plan_rk(R);
	c->info->tile_kmax = row_tile_kmax(R);
	c->info->max_threads = row_max_threads(R);
}

bool row_plan(RowK *R)
{
	if (!analyse(R))
		return false;
	plan_online(R);
	plan_late(R);
	plan_remat(R);
	plan_reads(R);
	plan_slots(R);
	plan_offsets(R);
	plan_streams(R);
	fill_info(R);
	row_plan_prefetch(R);
	row_plan_hold(R);
	row_plan_lastload(R);
	return true;
}

void row_reset(RowK *R)
{
	for (int i = 0; i < R->ntouched; i++)
		R->c->nflags[R->touched[i]] = 0;
}
