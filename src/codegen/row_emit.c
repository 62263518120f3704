/*
 * row_emit.c: the entries of a row kernel, one per path.
 *
 * Every path runs the same skeleton: a loop over the rows of the block
 * (grid-stride), and in it, for each pass, accumulators, the path's walk
 * over the thread's chunks of the row, the block's reduction (and, for
 * split rows, the exchange between the blocks of a row), then the per-row
 * values the next pass needs; after the epilogue, the per-row outputs. What
 * differs between paths (their state, their chunk loop, their exchange) is
 * a RowPath (rowint.h), one file each: row_reg.c, row_loop.c, row_split.c,
 * row_tile.c; what a chunk computes, loads and stores is row_chunk.c's.
 * Paths whose chunks start at the row's alignment get the row's shift and
 * vector tests here (emit_shift), after its offsets.
 *
 * An entry is written body first: the prologue tests the alignment of the
 * parameters the body used, so it is written last and put in front.
 */
#include "codegen/rowint.h"

/* The paths a row kernel has an entry for, in the module's order. */
static const RowPath *const row_paths[] = {&row_reg_path,  &row_regm_path,  &row_regl_path, &row_tile_path,
                                           &row_loop_path, &row_loopa_path, &row_split_path};

/* ---- passes -------------------------------------------------------------------------- */

/* A reduction's block reduction. */
static void emit_block_reduce(RowK *R, NodeId red)
{
	const char *op = cg_acc_op(&R->c->g->nodes[red]);
	/* Staged rows: a thread a row has nothing to combine (its partial is
	 * the row's); a group, at most a warp (launch_rules.c's tile_rules), shuffles
	 * inline (fz_reduce_warp), which won over fz_reduce's call
	 * (docs/performance.md, "Staged rows"). */
	if (row_tile_direct(R))
		return;
	if (R->path->path == CG_PATH_TILE)
		cw_line(R->w, "a%d = fz_reduce_warp<%s>(a%d);", red, op, red);
	else if (R->path->lane) /* a warp a row */
		cw_line(R->w, "a%d = fz_reduce_group<%s, 32>(a%d);", red, op, red);
	else if (R->red_group && cg_line_wide(R->c->info)) /* 8 or 16 threads a row: blockDim.x */
		cw_line(R->w, "a%d = fz_reduce_line<%s>(a%d);", red, op, red);
	else if (R->red_group) /* CG_LINE_THREADS a row, a known group */
		cw_line(R->w, "a%d = fz_reduce_group<%s, %d>(a%d);", red, op, CG_LINE_THREADS, red);
	else
		cw_line(R->w, "a%d = fz_reduce%s<%s>(a%d, fz_red + 32 * (fz_rp++ & 1));", red, R->red_inline ? "_in" : "", op,
		        red);
}

/* The values of round `round`'s reductions. */
static void emit_results(RowK *R, int q, int round)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (R->path->exchange)
		R->path->exchange(R, q, round);
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i], m = row_online_of(R, red);
		if (!row_in_round(R, q, red, round))
			continue;
		if (m >= 0 && round == 1) /* as the program writes it: every element's exp(-inf - -inf) is NaN */
			cw_line(R->w, "a%d = a%d == %s ? __int_as_float(0x7fffffff) : a%d;", red, m, cg_acc_identity(c, m), red);
		const Node *n = &c->g->nodes[red];
		const char *v = cg_acc_result(c, red, arena_printf(c->a, "a%d", red), "fz_n");
		cw_line(R->w, "const %s t%d = %s; // %s", cg_compute_type((fz_dtype)n->dtype), red, v, cg_comment(c, n));
		c->vname[red] = arena_printf(c->a, "t%d", red);
	}
}

/* After the chunk loop: combine the threads of the row (and, for split
 * rows, the blocks), then the reductions' values. Online sums of maxima
 * after their maxima: each thread's sum is relative to its own maximum
 * (fz_o<m>), brought to the block's before it is added. Online variances in
 * a second round, after their means: each thread's squared deviations from
 * its own mean moved to the row's (+ count * (its mean - the row's)^2). */
static void emit_finish(RowK *R, int q)
{
	Cg *c = R->c;
	NodeId *red = ARENA_ARRAY(c->a, NodeId, R->k->nreductions + 1);
	int n = row_round(R, q, 1, red);
	for (int i = 0; i < n; i++) {
		NodeId m = row_online_of(R, red[i]);
		if (m >= 0)
			cw_line(R->w, "a%d = fz_rescale(a%d, fz_o%d, a%d);", red[i], red[i], m, m);
		if (row_has_online(R, red[i]) && c->g->nodes[red[i]].op == OP_MAX)
			cw_line(R->w, "const float fz_o%d = a%d;", red[i], red[i]);
		emit_block_reduce(R, red[i]);
	}
	emit_results(R, q, 1);
	n = row_round(R, q, 2, red);
	if (n == 0)
		return;
	for (int i = 0; i < n; i++) {
		NodeId m = row_online_of(R, red[i]);
		const char *mv = cg_value(c, m);
		cw_line(R->w, "a%d = a%d + fz_c%d * ((fz_m%d - %s) * (fz_m%d - %s));", red[i], red[i], m, m, mv, m, mv);
		emit_block_reduce(R, red[i]);
	}
	emit_results(R, q, 2);
}

/* Per-row leaves (phase 0), read once a row. */
static void emit_row_leaves(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN || c->mark3[kp->node] != R->rowc || c->pin[kp->node] != i || row_is_colv(R, kp->node))
			continue;
		const Node *n = &c->g->nodes[kp->node];
		R->used[i] = true;
		cw_line(R->w, "const %s t%d = fz_in(%s[%s]);", cg_compute_type((fz_dtype)n->dtype), kp->node,
		        cg_param_name(c, i), R->roff[i] ? R->roff[i] : "0");
		c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
	}
}

/* Per-row values of phase p (leaves and computed ones), in graph order. */
static bool emit_rowc(RowK *R, int p)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (p == 0)
		emit_row_leaves(R);
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		if (c->mark3[id] != R->rowc || row_is_colv(R, id) || row_is_red(R, id) || cg_is_leaf(c, id) || c->ph[id] != p)
			continue;
		const Node *n = &c->g->nodes[id];
		if (cg_store_cast(c, R->w, id))
			continue;
		const char *e = cg_node_expr(c, id);
		if (!e)
			return false;
		cw_line(R->w, "const %s t%d = %s; // %s", cg_compute_type((fz_dtype)n->dtype), id, e, cg_comment(c, n));
		c->vname[id] = arena_printf(c->a, "t%d", id);
	}
	return true;
}

static void pass_comment(RowK *R, int q)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (q == R->P) {
		cw_line(R->w, "// epilogue: the per-element outputs");
		return;
	}
	StrBuf sb;
	sb_init(&sb, c->a);
	for (int i = 0; i < k->nreductions; i++)
		if (c->ph[k->reductions[i]] == q + 1)
			sb_printf(&sb, "%s %s", sb.len ? "," : "", cg_comment(c, &c->g->nodes[k->reductions[i]]));
	cw_line(R->w, "// pass %d of %d:%s", q + 1, R->P, sb_str(&sb));
}

static bool emit_pass(RowK *R, int q)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + R->ncached + 1);
	int nt = row_targets(R, q, t);
	Closure m;
	row_closure(R, q, t, nt, &m);
	if (nt == 0)
		return emit_rowc(R, q + 1);
	pass_comment(R, q);
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		cw_line(R->w, "%s a%d = %s;", cg_acc_type(c, red), red, cg_acc_identity(c, red));
		if (row_has_online(R, red) && c->g->nodes[red].op == OP_MEAN) /* emit_online_mean's */
			cw_line(R->w, "float fz_c%d = 0.0f, fz_m%d = 0.0f; /* the thread's count and mean */", red, red);
	}
	cw_begin(R->w);
	row_recips(R, &m);
	R->q = q;
	if (!R->path->chunks(R, q, &m, t, nt))
		return false;
	cw_close(R->w);
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
		if (kp->kind != PARAM_OUT || row_is_colv(R, kp->node))
			continue;
		R->used[i] = true;
		cw_line(R->w, "if (%s)", R->path->row_store_cond);
		cw_in(R->w);
		cw_line(R->w, "fz_out(%s[%s], %s);", cg_param_name(c, i), R->roff[i] ? R->roff[i] : "0",
		        cg_value(c, kp->node));
		cw_out(R->w);
	}
}

/* ---- the entry ----------------------------------------------------------------------- */

/* Declarations of the row offsets of the parameters used (inside the row
 * loop) and their constants (before it); for the leaves the register path
 * prefetches, the next row's too (fz_q<i>, `next`). */
static void emit_offsets(RowK *R, CgW *before, CgW *inside, CgW *next)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nparams; i++)
		if (R->roff[i] && R->used[i])
			R->used[R->rdecl[i]] = true; /* the one that declares it */
	bool *pf = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	bool prefetch = false;
	for (int i = 0; i < R->npf; i++)
		if (row_pf_here(R, R->pf[i])) {
			pf[R->rdecl[c->pin[R->pf[i]]]] = true;
			prefetch = true;
		}
	if (prefetch)
		cw_line(next, "const long long fz_rn = fz_row + fz_rstep < fz_rows ? fz_row + fz_rstep : fz_rows - 1;");
	bool small = false;
	for (int i = 0; i < k->nparams; i++) {
		if (!R->roff[i] || !R->used[i] || R->rdecl[i] != i)
			continue;
		const Node *n = &c->g->nodes[k->params[i].node];
		CgRun runs[FZ_MAX_RANK];
		int nr = cg_runs(n, R->r, k->domain, R->r - 1, runs);
		const char *per = row_is_colv(R, k->params[i].node) ? " * fz_n" : "";
		for (int nx = 0; nx < (pf[i] ? 2 : 1); nx++) {
			const char *name = arena_printf(c->a, nx ? "fz_q%d" : "fz_r%d", i), *row = nx ? "fz_rn" : "fz_rr";
			const char *off = cg_offset(c, k, runs, nr, R->r - 1, name, row, before);
			if (nr == 1 && runs[0].kept) { /* the row's own index: no division */
				cw_line(nx ? next : inside, "const long long %s = %s%s;", name, off, per);
				continue;
			}
			/* a broadcast operand's row (a mask [B, 1, 1, K]): a division a
			 * row, in 32 bits where the rows are fewer than 2^32 */
			const char *off32 = cg_offset_u32(c, k, runs, nr, R->r - 1, arena_printf(c->a, "%su", name),
			                                  arena_printf(c->a, "(unsigned)%s", row), before);
			cw_line(nx ? next : inside, "const long long %s = (fz_small ? (long long)(%s) : (%s))%s;", name, off32,
			        off, per);
			small = true;
		}
	}
	if (small)
		cw_line(before, "const bool fz_small = fz_rows <= 0xffffffffLL;");
}

/* The scalar inputs' names (declared in the prologue). */
static void name_scalars(RowK *R)
{
	Cg *c = R->c;
	for (int i = 0; i < R->k->nparams; i++) {
		const KParam *kp = &R->k->params[i];
		if (kp->kind == PARAM_SCALAR && c->pin[kp->node] == i)
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
	}
}

/* The aligned classes (rows of a multiple of V): every vector of every row
 * aligned, a constant. The host decides (cg_launch's `aligned`: the
 * runtime tests its bindings), taking these classes only where every
 * buffer is 16-byte aligned, the classes for rows of any length elsewhere.
 * Tested here once a launch instead (a test of n and of each pointer before
 * the first load), the entry of rows of one line was slower (H200: the lab,
 * bench/cubin_lab.py, softmax f16 2097152x64 142.8 -> 137.8 us, f32
 * 1048576x32 71.8 -> 70.2; in the sweep's replay, bench/replay_ab.py,
 * 136.9 -> 135.9 and 71.1 -> 70.1), and so were others by up to 2.5%
 * (softmax f32 512x16384 `_rowa` 20.3 -> 19.8, f16 4096x4096 18.6 ->
 * 18.2; docs/performance.md, "The aligned classes decided on the host"). But
 * kernels that read column operands still test (R->vec_test): with the
 * constant, ptxas issued `_rowa`'s load of b after w's had arrived
 * (layernorm bf16 511x32768 23.4 -> 24.8) and the holding entry took 81
 * registers for 74 (layernorm f32 8191x1024 18.8 -> 19.4). */
static void emit_vec_test(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (!R->vec_test) {
		cw_line(w, "const bool fz_vec = true; // %s %% %d == 0, every buffer 16-byte aligned (cg_launch's aligned class)",
		        cg_extent(c, k, R->r - 1, R->r), R->vec);
		return;
	}
	StrBuf cond;
	sb_init(&cond, c->a);
	sb_printf(&cond, "fz_n %% %d == 0", R->vec);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if ((kp->kind == PARAM_IN || kp->kind == PARAM_OUT) && R->used[i] && row_is_colv(R, kp->node))
			sb_printf(&cond, " && fz_aligned(%s, %d)", cg_param_name(c, i),
			          cg_vec_align(R->vec, (fz_dtype)c->g->nodes[kp->node].dtype));
	}
	cw_line(w, "const bool fz_vec = %s; // true wherever cg_launch takes this class: tested for ptxas's sake (row_emit.c)",
	        sb_str(&cond));
}

/* What every path declares first: the reductions' scratch, the sizes, the
 * vector test (the register path's class for multiples of V), the scalar
 * inputs. */
static void emit_prologue(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	/* (fz_reduce_warp, fz_reduce_group need none) */
	if (R->P > 0 && R->path->path != CG_PATH_TILE && !R->path->lane && !R->red_group) {
		c->m->entries[c->m->nentries - 1].static_smem = CG_RED_WORDS * 8; /* the entry begun */
		cw_line(w, "__shared__ unsigned long long fz_red[%d];", CG_RED_WORDS);
		cw_line(w, "unsigned fz_rp = 0; /* reductions so far: fz_reduce's half of fz_red */");
	}
	cw_line(w, "const long long fz_rows = %s;", cg_extent(c, k, 0, R->r - 1));
	if (R->rowlen) /* the entry of one row length (emit_lengths) */
		cw_line(w, "const long long fz_n = %d; // %s: this entry's rows are %d long", R->rowlen,
		        cg_extent(c, k, R->r - 1, R->r), R->rowlen);
	else
		cw_line(w, "const long long fz_n = %s;", cg_extent(c, k, R->r - 1, R->r));
	if (!R->path->masked)
		emit_vec_test(R, w);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_SCALAR && c->pin[kp->node] == i)
			cw_line(w, "const %s t%d = fz_in(%s);", cg_compute_type((fz_dtype)c->g->nodes[kp->node].dtype),
			        kp->node, cg_param_name(c, i));
	}
}

/* The shift of a row (`sfx` ""), or of the next row a prefetching entry
 * copies ("n": its offsets are fz_q<d>): fz_s<sfx>, the elements between the
 * row's start and the 16-byte boundary of its primary stream before it, and
 * for each stream aligned with the primary that `want` marks, whether it is
 * aligned too (fz_v<sfx><i>). */
static void emit_shift_of(RowK *R, CgW *w, const char *sfx, const bool *want)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int P = R->prim;
	const char *offv = *sfx ? "fz_q" : "fz_r";
	fz_dtype pt = (fz_dtype)c->g->nodes[k->params[P].node].dtype;
	const char *pp = R->roff[P] ? arena_printf(c->a, "%s + %s%d", cg_param_name(c, P), offv, R->rdecl[P])
	                            : cg_param_name(c, P);
	cw_line(w, "const int fz_s%s = %s(int)((unsigned long long)(%s) / %d %% %d)%s;", sfx, *sfx ? "" : "fz_act ? ",
	        pp, (int)fz_dtype_size(pt), R->vec, *sfx ? "" : " : 0");
	for (int i = 0; i < k->nparams; i++) {
		if (!want[i] || !R->aligned[i])
			continue;
		const char *ip = R->roff[i] ? arena_printf(c->a, "%s + %s%d", cg_param_name(c, i), offv, R->rdecl[i])
		                            : cg_param_name(c, i);
		cw_line(w, "const bool fz_v%s%d = fz_aligned(%s - fz_s%s, %d);", sfx, i, ip, sfx,
		        cg_vec_align(R->vec, (fz_dtype)c->g->nodes[k->params[i].node].dtype));
	}
}

/* Shifted paths: the row's shift and vector tests (in `w`, after the row's
 * offsets), and the next row's where the entry prefetches (in `next`).
 * Marks the primary used, so that its offset is declared. */
static void emit_shift(RowK *R, CgW *w, CgW *next)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	if (!R->path->shifted)
		return;
	if (R->prim < 0) {
		cw_line(w, "const int fz_s = 0; /* no per-element stream */");
		return;
	}
	R->used[R->prim] = true;
	cw_line(w, "// the row's chunks start at the 16-byte boundary of %s before the row (fz_s elements)",
	        cg_param_name(c, R->prim));
	emit_shift_of(R, w, "", R->used);
	bool *pf = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	bool any = false;
	for (int i = 0; i < R->npf; i++)
		if (row_pf_here(R, R->pf[i]))
			any = pf[c->pin[R->pf[i]]] = true;
	if (any)
		emit_shift_of(R, next, "n", pf);
}

/* The loop over the rows of a block (grid-stride) around the passes: the
 * row, its offsets and the next row's (for prefetch), their shifts, the
 * path's per-row state, the body. A thread past the rows takes part
 * (fz_act false) where its warp or block shares work or waits; in an entry
 * that stages nothing it leaves, and the bounds are the rows' own. */
static void emit_row_loop(RowK *R, CgW *w, const StrBuf *const parts[5])
{
	bool unstaged = row_tile_unstaged(R), pairs = unstaged && R->rpt > 1, span = row_tile_span(R);
	if (pairs) { /* R->rpt rows a thread: both rows' loads in flight at once */
		cw_open(w, "for (long long fz_rbs = (long long)blockIdx.x * blockDim.y * %d; fz_rbs < fz_rows; fz_rbs += "
		           "(long long)gridDim.x * blockDim.y * %d)", R->rpt, R->rpt);
		if (span) { /* adjacent, their spans moved whole */
			cw_line(w, "const long long fz_rt = fz_rbs + (long long)threadIdx.y * %d; // the thread's rows", R->rpt);
			cw_line(w, "if (fz_rt >= fz_rows)");
			cw_line(w, "	break;");
			row_tile_span_head(R, w);
		}
		cw_unroll(w);
		cw_open(w, "for (int fz_p = 0; fz_p < %d; fz_p++)", R->rpt);
		if (!span)
			cw_line(w, "const long long fz_rb = fz_rbs + (long long)fz_p * blockDim.y; // a block's rows apart");
	} else {
		cw_open(w, "for (long long fz_rb = (long long)blockIdx.x * blockDim.y; fz_rb < fz_rows; fz_rb += "
		           "(long long)gridDim.x * blockDim.y)");
	}
	cw_line(w, span ? "const long long fz_row = fz_rt + fz_p;" : "const long long fz_row = fz_rb + threadIdx.y;");
	if (unstaged) { /* no barrier, no shuffle: a thread past the rows has nothing to do */
		cw_line(w, "if (fz_row >= fz_rows) // %s, nothing staged or shared: past the rows, done",
		        pairs ? "a thread's rows" : "a thread a row");
		cw_line(w, "	break;");
		cw_line(w, "const bool fz_act = true; // and every bound below the row's constant length");
	} else {
		cw_line(w, "const bool fz_act = fz_row < fz_rows;");
	}
	if (parts[0]->len > 0)
		cw_line(w, "const long long fz_rr = fz_act ? fz_row : fz_rows - 1;");
	for (int i = 0; i < 4; i++)
		cw_append(w, parts[i]);
	R->path->row_head(R, w);
	cw_append(w, parts[4]);
	if (R->path->row_tail)
		R->path->row_tail(R, w);
	cw_close(w);
	if (span)
		row_tile_span_tail(R, w);
	if (pairs)
		cw_close(w);
}

/* The body of the row loop: the passes and the per-row outputs. */
static bool emit_body(RowK *R)
{
	bool ok = emit_rowc(R, 0);
	for (int q = 0; ok && q <= R->P; q++)
		ok = emit_pass(R, q);
	if (ok)
		emit_row_stores(R);
	return ok;
}

static StrBuf *new_text(Cg *c, CgW *w, int depth)
{
	StrBuf *sb = ARENA_NEW(c->a, StrBuf);
	sb_init(sb, c->a);
	cw_init(w, sb, depth);
	return sb;
}

/* Does the kernel compute only values of up to 4 bytes (f32, halves,
 * 32-bit integers, bool)? */
static bool narrow_values(const RowK *R)
{
	for (int i = 0; i < R->k->nnodes; i++)
		if (fz_dtype_size((fz_dtype)R->c->g->nodes[R->k->nodes[i]].dtype) > 4)
			return false;
	return true;
}

/* Does the kernel compute or stage only values of up to 4 bytes (no f64 or
 * i64) and its staged streams of up to `bytes` each, without long math?
 * tile_blocks' bounds were measured on such kernels only: with 8-byte
 * values, long math or f32 streams beside a bool one (V = 8 of f32) they
 * spill (ptxas: 24 to 268 bytes at f64 softmax, bias_gelu_residual_layernorm
 * and a bool-masked f32 softmax). */
static bool tile_light(const RowK *R, int bytes)
{
	const struct CgKernelInfo *ki = R->c->info;
	if (ki->heavy)
		return false;
	for (int t = 0; t < ki->ntiles; t++)
		if (ki->tile_bytes[t] > bytes)
			return false;
	return narrow_values(R);
}

/* The threads an SM a staged entry is bound to (__launch_bounds__'s second
 * argument is that over its block, cg_tile_threads; 0: the kernel's thread
 * bound alone). Short rows run as many blocks as their registers allow, and
 * NVRTC, left at 64 or more, took what it could: 5 blocks of 256 threads of
 * halves' entries at 48 registers, the classes of f32 rows below tile_kmax
 * (rows of up to 8: a thread a row, no reduction) at 8 blocks and 32, in
 * kernels without long math or wider values
 * (tile_light). H100, one call, `bench/row_shapes.py --reps 100`, the
 * entries unbound -> bound (us): layernorm bf16 132104x127 42.4 -> 40.3,
 * 541200x31 41.3 -> 39.4, softmax f16 132105x127 41.3 -> 39.6, 2396746x7
 * 46.6 -> 44.4; bcast3 f32 8x139811x7 36.6 -> 31.1 (62 registers unbound),
 * softmax f32 1198373x7 31.7 -> 29.5, 2000003x5 44.1 -> 40.7. The f32 rows
 * of tile_kmax chunks keep the thread bound: bound to 5 or 4 blocks (with
 * fz_mk's bits, which lost alone too) softmax f32 66053x127 took 30.6 ->
 * 31.6 or 31.9 us, 700001x13 33.7 -> 35.4 or 35.7 (the bound without the
 * bits was not timed there; docs/performance.md, "Staged rows"). The
 * halves' entries that stage nothing (row_tile_unstaged) are bound to 8
 * blocks, 32 registers: their loads whole since, rmsnorm bf16 2097152x8's
 * took 35 registers (6 blocks an SM) and lost to the element loads, 19.3 ->
 * 20.4 us; bound, 19.3 (H200, bench/replay_ab.py), and layernorm f16
 * 3355443x5 30.5 -> 28.3, rmsnorm bf16 3355443x5 25.9 -> 24.8, layernorm
 * bf16 2796202x6 31.6 -> 30.2, layernorm f16 2097152x8 (16 bytes of spill)
 * 22.4 -> 23.0. */
static int tile_threads(const RowK *R)
{
	if (R->vec >= 8)
		return tile_light(R, 2) ? (row_tile_unstaged(R) ? 8 : 5) * 256 : 0;
	return R->vec == 4 && R->K < R->c->info->tile_kmax && tile_light(R, 4) ? 8 * 256 : 0;
}

/* The entry of path `rp`: body first (it decides which parameters are used),
 * then the comment, signature and prologue in front of it. */
static bool emit_entry(RowK *R, const RowPath *rp)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	/* the parameters, then the path's values: at most a tile a parameter, a
	 * slot's offset each, and a few more */
	CgArg *args = ARENA_ARRAY(c->a, CgArg, 2 * k->nparams + 16 + c->info->nslots);
	int nargs = 0;
	R->path = rp;
	for (int i = 0; i < k->nparams; i++)
		args[nargs++] = (CgArg){CGARG_PARAM, i};
	nargs += rp->args(R, args + nargs);
	bool reg = rp->path == CG_PATH_REG, tile = rp->path == CG_PATH_TILE;
	bool hentry = reg && R->hold && c->info->reg_hold; /* a `_reg<K>h` (row_plan_reg.c's row_plan_hold) */
	const char *twin = R->rpt > 1 ? arena_printf(c->a, "x%d", R->rpt) : ""; /* `_tile<K>n<L>x<rpt>` */
	const char *suffix = reg && R->line ? arena_printf(c->a, "line%d", R->K)
	                     : reg       ? arena_printf(c->a, "reg%d%s", R->K,
	                                                rp->lane ? "l" : rp->masked ? "m" : hentry ? "h" : "")
	                     : tile && R->rowlen ? arena_printf(c->a, "tile%dn%d%s", R->K, R->rowlen, twin)
	                     : tile      ? arena_printf(c->a, "tile%d", R->K) /* a group a row */
	                     : R->stream ? "stream"
	                     : rp->path == CG_PATH_ROW && !rp->masked ? "rowa" /* the row cache's aligned class */
	                                 : cg_path_name(rp->path);
	cg_begin_entry(c, rp->path, reg || tile ? R->K : 0, suffix, args, nargs);
	c->m->entries[c->m->nentries - 1].masked = (reg || rp->path == CG_PATH_ROW) && rp->masked && !rp->lane;
	c->m->entries[c->m->nentries - 1].lane = rp->lane;
	c->m->entries[c->m->nentries - 1].stream = R->stream;
	c->helpers |= CGH_ACC | CGH_ROW | CGH_MINMAX | rp->helpers;
	c->m->entries[c->m->nentries - 1].direct = row_tile_direct(R);
	c->m->entries[c->m->nentries - 1].rowlen = row_tile_direct(R) ? R->rowlen : 0;
	c->m->entries[c->m->nentries - 1].rpt = row_tile_direct(R) && R->rowlen ? R->rpt : 1;
	c->m->entries[c->m->nentries - 1].unstaged = row_tile_unstaged(R);
	c->m->entries[c->m->nentries - 1].hold = hentry;
	c->m->entries[c->m->nentries - 1].line = reg && R->line;
	R->used = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	R->vec_test = !rp->masked && c->info->colops; /* column operands: emit_vec_test */
	R->vec_arg = "fz_vec";
	R->whole = ARENA_ARRAY(c->a, bool, k->nparams + 1);
	CgW body, before, inside, next, shift, nshift, *out = c->w;
	StrBuf *bsb = new_text(c, &body, 2), *isb = new_text(c, &inside, 2), *nsb = new_text(c, &next, 2);
	StrBuf *ssb = new_text(c, &shift, 2), *nssb = new_text(c, &nshift, 2), *psb = new_text(c, &before, 1);
	R->w = &body;
	/* Lean kernels (few streams, no long math: their entries bound to 1024
	 * threads) and the others (512). The block reductions of the register
	 * path inline, but in its aligned class of lean kernels; measured on the
	 * H200 (docs/performance.md), inlined they gained 4-26% in the entries
	 * bound to 512 threads (softmax f16 8192x4096 62.1 -> 53.8 us) and in
	 * the masked class (f32 2047x4099 31.1 -> 29.0, f16 4094x4099 78.9 ->
	 * 58.7), and lost 2-4% in the aligned entries (then bound to 48 registers)
	 * (layernorm 2047x4096 23.8 -> 24.7); but inline in the entries holding
	 * column operands (bound to 512 threads; the lab, docs/performance.md,
	 * "Column operands held": layernorm f32 8191x1024 20.1 -> 19.3 us). The
	 * other paths were not measured so and keep the call. */
	bool lean = c->info->max_threads == 1024 && R->rk > 0;
	bool hold = reg && R->hold;
	bool line = reg && R->line;
	R->lean = lean;
	/* The line entries of one chunk reduce among the row's 8 threads with
	 * three shuffles (no test of blockDim.x, no shared memory or barrier);
	 * H200, bench/replay_ab.py, us: softmax f32 262144x32 20.3 -> 19.0, f16
	 * 262144x64 19.9 -> 18.7, bf16 20.4 -> 18.7, log_softmax f32 262144x32
	 * 19.1 -> 18.6, f16 262144x64 20.2 -> 18.8, softmax f16 2097152x64
	 * 146.6 -> 139.6, f32 1048576x32 74.6 -> 72.2 (docs/performance.md,
	 * "The line entries' reductions"). Not those of two chunks (f32 rows of
	 * 64): their 32 registers spilled 8 bytes, softmax f32 131072x64 18.2 ->
	 * 19.3; their loop written twice, for aligned pointers and not, spilled
	 * none and gained nothing (18.0 -> 18.2). They inline fz_reduce_in.
	 * Those of halves serve rows of two lines too, 16 threads a row: their
	 * reductions test blockDim.x for a shuffle more (fz_reduce_line; softmax
	 * f16 262144x64 18.0 -> 18.2, 17.7 again: within the noise,
	 * docs/performance.md "Line entries for kernels that prefetch"). */
	R->red_group = line && cg_line_group(c->info, R->K);
	R->red_inline = reg && (!(lean && !rp->masked) || hold || line);
	name_scalars(R);
	if (!emit_body(R))
		return false;
	emit_shift(R, &shift, &nshift);
	emit_prologue(R, &before);
	emit_offsets(R, &before, &inside, &next);
	cg_entry_header(c, arena_printf(c->a, "rows of %s, %d pass%s over each row, then the epilogue",
	                                ir_shape_str(c->a, c->g, k->rank, k->domain), R->P, R->P == 1 ? "" : "es"),
	                rp->describe(R));
	/* 56 registers for lean kernels' entries and their masked class
	 * (FZ_LEAN_ROW, FZ_MASKED_ROW: the prelude says why) */
	/* staged rows of halves hold 16 elements a thread, as f32 tiles do: 64
	 * registers where tile_threads leaves them unbound, unless the kernel is
	 * heavy (at 128, layernorm bf16's tiles took 96 and ran 2 blocks an SM
	 * instead of 4) */
	int bound_threads = tile && R->vec >= 8 && !c->info->heavy ? 1024 : c->info->max_threads;
	const char *bound = arena_printf(c->a, "__launch_bounds__(%d)", bound_threads);
	int blocks = tile ? tile_threads(R) / cg_tile_threads(row_tile_direct(R)) : 0;
	if (blocks > 0)
		bound = arena_printf(c->a, "__launch_bounds__(%d, %d)", cg_tile_threads(row_tile_direct(R)), blocks);
	else if (tile && R->vec == 4 && !row_tile_direct(R) && tile_light(R, 4) && c->info->ntiles <= 2)
		/* light f32 groups: cgint.h's CG_TILE_GROUP_THREADS says why */
		bound = arena_printf(c->a, "__launch_bounds__(%d, %d)", cg_tile_threads(false),
		                     CG_TILE_GROUP_THREADS / cg_tile_threads(false));
	else if (R->stream) /* no cache: CG_STREAM_BLOCKS blocks an SM (launch.c) */
		bound = arena_printf(c->a, "__launch_bounds__(%d, %d)", CG_STREAM_THREADS, CG_STREAM_BLOCKS);
	else if (hentry)
		bound = arena_printf(c->a, "__launch_bounds__(%d)", CG_HOLD_THREADS);
	else if (line) /* 32 registers: launch_rules.c's line_rule says why */
		bound = arena_printf(c->a, "__launch_bounds__(%d, %d)", CG_LINE_BLOCK, CG_LINE_BLOCKS);
	else if (rp->lane && R->K > CG_LANE_KMAX / 2) /* FZ_LANE_WIDE_ROW: the prelude says why */
		bound = "FZ_LANE_WIDE_ROW";
	else if (lean && reg && rp->masked && row_masked_reduce(R))
		bound = "FZ_MASKED_REDUCE_ROW";
	else if (lean && reg && rp->masked)
		bound = "FZ_MASKED_ROW";
	else if (reg && rp->masked && row_masked_half(R))
		bound = "FZ_MASKED_HALF_ROW";
	else if (lean && !tile)
		bound = "FZ_LEAN_ROW";
	cg_entry_signature(c, bound);
	cw_begin(out);
	cw_append(out, psb);
	rp->prologue(R, out);
	const StrBuf *parts[5] = {isb, nsb, nssb, ssb, bsb};
	emit_row_loop(R, out, parts);
	cw_close(out);
	cg_end_entry(c);
	return true;
}

/* Plan the kernel again into *to, as `how`'s flags say (late, narrow,
 * stream, pf_late), after forgetting the plan *from. The kernel's notes for
 * cg_launch are put back as they were (they describe the first plan's
 * entries, the register path's among them); the new plan's are returned
 * in *ci. */
static bool replan(RowK *from, RowK *to, RowK how, struct CgKernelInfo *ci)
{
	Cg *c = from->c;
	struct CgKernelInfo saved = *c->info;
	row_reset(from);
	*to = (RowK){.c = c, .k = c->k, .r = from->r, .vec = from->vec, .late = how.late, .narrow = how.narrow,
	             .stream = how.stream, .pf_late = how.pf_late};
	to->rowc = cg_new_stamp(c);
	to->pf_room = saved.pf_bytes;
	bool ok = row_plan(to);
	*ci = *c->info;
	*c->info = saved;
	to->rk = saved.rk; /* the register path's, which the entries' bounds follow */
	return ok;
}

static int cache_width(const struct CgKernelInfo *ki)
{
	int b = 0;
	for (int s = 0; s < ki->nslots; s++)
		b += ki->slot_bytes[s];
	return b;
}

/* A thread a row of K chunks: an entry per row length L, its fz_n the
 * constant L (`_tile<K>n<L>`, compiled on first use): L from K/2 V + 1 to
 * K V (one chunk: from 2 to V; 1 is the rows of one element's,
 * cg_rows_of_one) where the kernel's length is a symbol, else the
 * literal's alone. At one chunk, up to CG_TILE_UNSTAGED_MAX and at L = V
 * (one vector) it stages nothing (row_tile.c's row_tile_unstaged); below
 * V, up to CG_TILE_PAIR_MAX, it has a twin of two rows a thread (`x2`;
 * rows of 2 halves four, `x4`: cg_tile_rpt), for many rows (launch_rules.c's
 * tile_rules). With the length a run-time value every row paid its tests
 * and its dead lanes' math. Measured on the H200 (bench/replay_ab.py, one
 * `_tile1d` -> these, us): softmax f16 4194304x4 55.8 -> 39.1, layernorm
 * f16 5592405x3 87.7 -> 50.5, softmax bf16 2396745x7 35.5 -> 29.9, f32
 * 4194304x2 41.3 -> 32.9, rmsnorm f16 2396745x7 31.6 -> 26.2 (ten lengths
 * of 2 to 7, 0.58-0.94x); rows of one vector 0.92-1.00x (docs/performance.md,
 * "Rows of one chunk: an entry a length"). Rows of 2 and 4 chunks (one
 * `_tile<K>d` -> these, us): softmax f16 1290555x13 36.3 -> 27.9, layernorm
 * f16 33.9 -> 27.4, log_softmax bf16 1198373x14 29.4 -> 23.2, softmax f32
 * 838861x10 25.9 -> 20.8, 645277x13 24.5 -> 21.9, layernorm f32 1198373x7
 * 23.5 -> 21.2, softmax f16 1048576x16 26.3 -> 24.6, layernorm bf16 25.2 ->
 * 22.5 (14 shapes, 0.77-1.00x; rmsnorm f16 1048576x16 20.7 -> 20.8). */
static bool emit_lengths(RowK *R, const RowPath *rp)
{
	Dim N = R->k->domain[R->k->rank - 1];
	int lo = R->K == 1 ? 2 : R->K / 2 * R->vec + 1, hi = R->K * R->vec;
	if (!dim_is_sym(N))
		lo = hi = N >= lo && N <= hi ? (int)N : 0;
	bool ok = true;
	for (int L = lo; ok && L >= 2 && L <= hi; L++) {
		R->rowlen = L;
		R->rpt = 1;
		ok = emit_entry(R, rp);
		R->rpt = cg_tile_rpt(L, R->vec); /* its twin's, if it has one */
		if (ok && R->rpt > 1)
			ok = emit_entry(R, rp);
	}
	R->rowlen = 0;
	R->rpt = 1;
	return ok;
}

/* Staged rows: classes of 1, 2, ... up to tile_kmax chunks a thread
 * (compiled on first use). Below kmax a thread holds its row alone
 * (launch_rules.c's tile_rules: the direct entries, an entry a length); at kmax
 * either a group (an entry) or a thread a row (an entry a length). */
static bool emit_tiles(RowK *R, const RowPath *rp)
{
	int kmax = R->c->info->tile_kmax;
	bool ok = true;
	for (int K = 1; ok && K <= kmax; K *= 2) {
		R->K = K;
		if (K == kmax)
			ok = emit_entry(R, rp);
		ok = ok && emit_lengths(R, rp);
	}
	return ok;
}

/* The register path's lane class (row_reg.c): an entry of K elements a
 * thread for each K (compiled on first use) from just past the staged rows
 * (CG_TILE_CHUNKS chunks of V over CG_LANE_THREADS threads) up to
 * CG_LANE_KMAX, where the register path holds rows at all (rk > 0: at 32
 * elements a thread, what its passes carry fits as the masked class of
 * halves' does); in kernels of chunks of 4 (f32) that write rows, from
 * CG_LANE_KMIN, rows of 65 on, where it beat the stage (launch_rules.c's
 * lane_rules: a kernel that writes only a value a row, logsumexp, lost).
 * Where the row's length is a literal, its own K alone, unless it is a
 * multiple of V that the class never takes (halves; f32 up to the staged
 * rows' length); none for one row (rank 1), nor for kernels of 8-byte
 * values (f64, i64), where it was not measured. Written with V = 1. */
static bool emit_lanes(RowK *R, const RowPath *rp)
{
	struct CgKernelInfo *ki = R->c->info;
	int V = R->vec, hi = R->rk > 0 ? CG_LANE_KMAX : 0;
	int lo = V == 4 && row_writes_rows(R) ? CG_LANE_KMIN : CG_TILE_CHUNKS * V / CG_LANE_THREADS + 1;
	Dim N = R->k->domain[R->k->rank - 1];
	if (R->r < 2 || !narrow_values(R)) /* one row (rank 1) is never many */
		lo = hi + 1;
	else if (!dim_is_sym(N)) {
		int64_t K = N % V != 0 || cg_lane_aligned_len(N, V) ? (N + CG_LANE_THREADS - 1) / CG_LANE_THREADS : 0;
		lo = hi = K >= lo && K <= hi ? (int)K : 0;
	}
	ki->lane_lo = lo <= hi ? lo : 0;
	ki->lane_hi = lo <= hi ? hi : 0;
	bool ok = true;
	R->vec = 1;
	for (int K = ki->lane_lo; ok && K > 0 && K <= ki->lane_hi; K++) {
		R->K = K;
		ok = emit_entry(R, rp);
	}
	R->vec = V;
	R->K = R->rk;
	return ok;
}

/* Does the masked register entry (R->path) keep its held column operands
 * in slots (row_reg.c)? Where its rows are prefetched (a resident grid,
 * whose blocks loop over rows) and the operands' chunks are 16 bytes, as
 * the slots store them. */
static bool slots_here(const RowK *R)
{
	const Cg *c = R->c;
	if (!R->path->shifted || R->nheld == 0 || c->info->pf_bytes == 0)
		return false;
	for (int h = 0; h < R->nheld; h++)
		if (R->vec * (int)fz_dtype_size((fz_dtype)c->g->nodes[R->held[h]].dtype) != 16)
			return false;
	for (int i = 0; i < R->npf; i++)
		if (row_pf_here(R, R->pf[i]))
			return true;
	return false;
}

static bool emit_path(RowK *R, const RowPath *rp)
{
	Cg *c = R->c;
	if (rp->lane)
		return R->rk == 0 || emit_lanes(R, rp);
	bool has = rp->path == CG_PATH_REG     ? R->rk > 0
	           : rp->path == CG_PATH_SPLIT ? R->P > 0
	           : rp->path == CG_PATH_TILE  ? R->rk > 0 && c->info->ntiles > 0
	                                       : true;
	if (rp->path == CG_PATH_TILE)
		return !has || emit_tiles(R, rp);
	/* the row cache's aligned class: none where the row's length is a
	 * literal that is not a multiple of V */
	Dim N = R->k->domain[R->k->rank - 1];
	if (rp->path == CG_PATH_ROW && !rp->masked && !dim_is_sym(N) && N % R->vec != 0)
		return true;
	/* the register path holds rk chunks a thread (its aligned class, where
	 * it holds column operands, also an entry holding them: row_plan_reg.c's
	 * row_plan_hold) */
	if (has) {
		R->K = R->rk;
		/* rows of halves hold their column operands in the aligned entry,
		 * and in the masked entry's slots */
		R->hold = rp->path == CG_PATH_REG && !rp->masked && R->nheld > 0 && !c->info->reg_hold;
		R->path = rp;
		R->slots = slots_here(R);
		if (R->slots)
			c->info->col_bytes = R->nheld * R->K * 16; /* 16-byte chunks (slots_here) */
		if (!emit_entry(R, rp))
			return false;
		R->slots = false;
		/* and of 2 and 1 chunks for short rows of halves that it prefetches
		 * (launch_rules.c's reg_k says why) */
		bool aligned = rp->path == CG_PATH_REG && !rp->masked;
		if (aligned) {
			c->info->reg_narrow = R->vec >= 8 && R->rk > 2 && c->info->pf_bytes > 0 && !c->info->reg_direct;
			/* and the line entries, for rows of one or two lines
			 * (launch_rules.c's line_rule), in kernels like those it was
			 * measured on: f32 or halves, chunks of 16 bytes, whose entries
			 * fit 32 registers (tile_light), that write rows (not only a
			 * value a row, as logsumexp), reading at most one column
			 * operand besides streams of the rows' layout */
			c->info->reg_line = R->rk > 2 && row_line_operands(R) && cg_tile_outputs(c->info) &&
			                    (R->vec == 4 || R->vec == 8) && tile_light(R, 16 / R->vec);
		}
		for (int K = 2; aligned && c->info->reg_narrow && K >= 1; K--) {
			R->K = K;
			if (!emit_entry(R, rp))
				return false;
		}
		for (int K = cg_line_k(c->info, 2 * CG_LINE_THREADS); aligned && c->info->reg_line && K >= 1; K--) {
			R->K = K;
			R->line = true;
			bool ok = emit_entry(R, rp);
			R->line = false;
			if (!ok)
				return false;
		}
		R->K = R->rk;
	}
	R->hold = false;
	if (has && rp->path == CG_PATH_REG && !rp->masked && c->info->reg_hold) {
		R->K = R->rk;
		R->hold = true;
		bool ok = emit_entry(R, rp);
		R->hold = false;
		return ok;
	}
	return true;
}

/* The general loops (ROW, SPLIT), whose row cache is in shared memory or the
 * workspace: from the late plan *R (its notes *cl), or the late and narrow
 * one where it caches fewer bytes an element (rowint.h), so that longer
 * rows fit a block and more blocks an SM; the kernel's notes then describe
 * its cache. *R becomes the plan used. */
static bool emit_cached(RowK *R, const struct CgKernelInfo *cl, int first)
{
	Cg *c = R->c;
	struct CgKernelInfo cn;
	RowK N;
	if (!replan(R, &N, (RowK){.late = true, .narrow = true}, &cn))
		return false;
	*R = N;
	if (cache_width(&cn) >= cache_width(cl) && !replan(&N, R, (RowK){.late = true}, &cn))
		return false;
	c->info->nslots = cn.nslots;
	c->info->slot_bytes = cn.slot_bytes;
	c->info->rowcp = cn.rowcp;
	for (size_t i = (size_t)first; i < sizeof row_paths / sizeof row_paths[0]; i++)
		if (!emit_path(R, row_paths[i]))
			return false;
	return true;
}

/* The split rows' entry without a row cache (_stream): the kernel planned
 * again with every pass recomputing its values from the inputs, written
 * while the notes say it has no cache; they then describe the cached
 * entries again. */
static bool emit_stream(RowK *R)
{
	Cg *c = R->c;
	struct CgKernelInfo ci;
	RowK S;
	int nslots = c->info->nslots;
	bool ok = replan(R, &S, (RowK){.late = true, .stream = true}, &ci);
	*R = S;
	c->info->nslots = ci.nslots;
	/* its passes may finish more reductions each (online sums): the
	 * workspace holds the most partials either plan publishes a pass */
	c->info->nred = ci.nred > c->info->nred ? ci.nred : c->info->nred;
	ok = ok && emit_entry(&S, &row_split_path);
	c->info->nslots = nslots;
	c->info->stream = ok;
	c->info->ring_bytes = ok ? S.ring_bytes : 0;
	return ok;
}

bool cg_row(Cg *c)
{
	if (!c->ph) {
		int n = c->g->n + 1;
		c->ph = ARENA_ARRAY(c->a, int32_t, n);
		c->lastread = ARENA_ARRAY(c->a, int32_t, n);
		c->nflags = ARENA_ARRAY(c->a, uint8_t, n);
	}
	RowK R = {.c = c, .k = c->k, .r = c->k->rank};
	R.vec = c->vec = cg_vec_width(c, true);
	R.rowc = cg_new_stamp(c);
	bool ok = row_plan(&R) && emit_path(&R, &row_reg_path);
	/* the other entries from the late plan (row_plan.c's plan_late): the
	 * rest held in registers (its cache notes, read by the cached entries
	 * only, are the first plan's meanwhile), then the cached ones. The
	 * masked class is launched with the aligned class's prefetch buffer,
	 * at least what it needs: the late plan only moves inputs out of pass 0,
	 * and the masked class's pf_late prefetches those of them it can (the
	 * streams aligned with its primary) into the places the first plan's
	 * pass 0 had for them. */
	struct CgKernelInfo ci;
	RowK L;
	ok = ok && replan(&R, &L, (RowK){.late = true, .pf_late = true}, &ci);
	if (ok)
		R = L;
	size_t i = 1;
	for (; ok && row_paths[i]->path != CG_PATH_ROW; i++)
		ok = emit_path(&R, row_paths[i]);
	ok = ok && emit_cached(&R, &ci, (int)i);
	/* split rows without a cache: the entry launch.c takes for few rows too
	 * long to cache on chip and, in kernels that cache nothing (a row
	 * reduction alone), for every split: two blocks an SM and groups of
	 * chunks, where the SPLIT entry has one block and a chunk ahead */
	if (ok && R.P > 0)
		ok = emit_stream(&R);
	/* rows of one element, where the row length may be 1 */
	Dim N = c->k->domain[c->k->rank - 1];
	if (ok && (dim_is_sym(N) || N == 1))
		ok = cg_rows_of_one(c, R.vec);
	row_reset(&R);
	return ok && !c->d->set;
}
