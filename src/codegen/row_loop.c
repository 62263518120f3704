/*
 * row_loop.c: the ROW path, a group of threads a row with its row cache.
 *
 * blockDim.x threads take a row (up to a warp: shuffles only, blockDim.y
 * rows a block; more: a block a row) in chunks of V elements, each thread
 * the same chunks in every pass, so the row cache needs no barrier. The
 * first pass, the only one that reads the inputs from global memory when
 * the row is cached, copies the thread's share of each cached input into
 * the cache at once (cp.async: the whole row in flight), then reads it
 * back; inputs it does not cache it loads a chunk ahead (the stream entry,
 * without a cache: its ring, row_ring.c, or a group of chunks at a time,
 * group_chunks). The row cache (row_plan.c decides what is in it) is in
 * dynamic shared memory or in the workspace, where and at which offsets as
 * cg_launch says (fz_cws, fz_cstride, fz_so<s>): the same code either way.
 * cg_launch takes this path for rows the register path cannot hold.
 *
 * A row's chunks start at its primary stream's 16-byte boundary before it
 * (fz_s elements: the shifted paths, row_emit.c), so every chunk but the
 * row's first and last moves as one vector whatever the row's length and
 * alignment; the row cache is indexed from that boundary (j0 + fz_s).
 *
 * Its aligned class (`_rowa`, row_loopa_path) takes rows of a multiple of V:
 * chunks from the row's start, 32-bit offsets, every chunk whole (loads,
 * copies, stores and reductions test no element, every vector aligned:
 * cg_launch takes it only where every buffer is 16-byte aligned, so fz_vec
 * is a constant, but in kernels with column operands, which test it and
 * write each pass for both answers: row_loop_chunks).
 *
 * The chunk loop and the cache pointers are shared with split rows
 * (row_split.c), whose blocks each take a segment of the row.
 */
#include "codegen/rowint.h"

int row_cache_args(RowK *R, CgArg *args)
{
	int n = 0;
	if (R->c->info->nslots == 0)
		return 0;
	args[n++] = (CgArg){CGARG_CSTRIDE, 0};
	args[n++] = (CgArg){CGARG_CWS, 0};
	for (int s = 1; s < R->c->info->nslots; s++)
		args[n++] = (CgArg){CGARG_SLOT, s};
	return n;
}

void row_cache_pointers(RowK *R, CgW *w, bool split)
{
	Cg *c = R->c;
	int ns = c->info->nslots;
	if (ns == 0)
		return;
	cw_line(w, "// the row cache: %d slot%s, in shared memory or the workspace (fz_cws)", ns, ns == 1 ? "" : "s");
	cw_line(w, "unsigned char *fz_cb = fz_cws < 0 ? reinterpret_cast<unsigned char *>(fz_smem) + threadIdx.y * fz_cstride");
	cw_in(w);
	cw_line(w, ": reinterpret_cast<unsigned char *>(fz_ws) + fz_cws + (%s * blockDim.y + threadIdx.y) * fz_cstride;",
	        split ? "((unsigned long long)blockIdx.y * gridDim.x + blockIdx.x)" : "(unsigned long long)blockIdx.x");
	cw_out(w);
	for (int i = 0; i < R->ncached; i++) {
		NodeId id = R->cached[i];
		const Node *n = &c->g->nodes[id];
		const char *ty = cg_is_leaf(c, id) ? cg_store_type((fz_dtype)n->dtype)
		                 : n->dtype == FZ_BOOL ? "unsigned char" : cg_compute_type((fz_dtype)n->dtype);
		const char *at = R->cslot[i] ? arena_printf(c->a, "fz_cb + fz_so%d", R->cslot[i]) : "fz_cb";
		cw_line(w, "%s *fz_c%d = reinterpret_cast<%s *>(%s);", ty, id, ty, at);
	}
}

/* Which leaves a pass keeps a chunk ahead: all of them in pass 0 (`all`);
 * in later passes without a row cache only the row's streams, which come
 * from the L2 or DRAM (a column operand such as layernorm's weight is read by
 * every row, and its second buffer cost the entry its registers). */
static bool ahead(const RowK *R, NodeId id, bool all) { return all || row_is_rowvar(R, id); }

bool row_loop_aligned(const RowK *R) { return R->path->path == CG_PATH_ROW && !R->path->masked; }

/* Pass 0 of a cached row copies the leaves the cache keeps as they are
 * (in their storage type) straight into it, every chunk of the thread's
 * share in flight at once (fz_rowcp), and reads them back: where the stream's
 * chunks are the row's (aligned with the primary). Measured on the H200
 * (docs/performance.md, "Long rows: the whole row in flight"): softmax f32
 * 1024x32768 126.3 -> 102.9 us, f16 512x32768 56.5 -> 49.6, layernorm bf16
 * 511x32768 54.3 -> 50.5; the one-chunk-ahead loads it replaces stay where
 * nothing is cached. */
static bool copied(const RowK *R, NodeId id, int q) { return q == 0 && row_is_copied(R, id); }

/* Loads of a chunk's leaves at j0 (passes after the first, and pass 0 of
 * the aligned class, which loads nothing ahead: `all`), but those kept
 * ahead (see ahead()) and those pass 0 copies into the cache. */
static void emit_leaf_loads(RowK *R, const Closure *m, bool all)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if ((R->stream && ahead(R, id, all)) || (all && copied(R, id, 0)))
			continue;
		int p = c->pin[id];
		if (p < 0) {
			cg_internal(c, "leaf %%%d of kernel %s has no parameter", id, R->k->name);
			return;
		}
		cw_line(R->w, "%s l%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		cw_line(R->w, "%s", row_load(R, p, arena_printf(c->a, "l%d", id), "j0", "fz_e"));
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
}

/* The values of earlier passes that pass q reads, from the row cache. */
static void emit_freads(RowK *R, const Closure *m, const char *at)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nfread; i++) {
		NodeId id = m->fread[i];
		cw_line(R->w, "%s f%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		cw_line(R->w, "fz_cld(f%d, fz_c%d + %s);", id, id, at);
		c->vname[id] = arena_printf(c->a, "f%d[u]", id);
	}
}

/* The copies of pass 0's copied leaves, before its chunk loop (`start`: the
 * thread's first chunk; its place in the cache is fz_j). */
static void emit_copies(RowK *R, const Closure *m, const char *start)
{
	Cg *c = R->c;
	bool any = false;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (!copied(R, id, 0))
			continue;
		int p = c->pin[id];
		if (!any)
			cw_line(R->w, "// the thread's chunks of the row into the row cache, all in flight at once");
		any = true;
		c->helpers |= CGH_ROWCP | CGH_CPA;
		if (row_loop_aligned(R))
			cw_line(R->w, "fz_rowcpa<%d>(fz_c%d + fz_j, %s, %s, fz_e, fz_step, %s, fz_cws < 0);", R->vec, id,
			        row_ptr(R, p), start, R->vec_arg);
		else
			cw_line(R->w, "fz_rowcp<%d>(fz_c%d + fz_j, %s, %s, fz_e, fz_step, fz_v%d, fz_cws < 0);", R->vec, id,
			        row_ptr(R, p), start, p);
	}
	if (any)
		cw_line(R->w, "fz_cpa_wait();");
}

/* The copied leaves of a chunk, read back from the cache (as l<id>[0], the
 * array pass 0's stores and cache writes name). */
static void emit_copied_reads(RowK *R, const Closure *m, const char *at)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (!copied(R, id, 0))
			continue;
		cw_line(R->w, "%s l%d[1][%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		cw_line(R->w, "fz_cld(l%d[0], fz_c%d + %s);", id, id, at);
		c->vname[id] = arena_printf(c->a, "l%d[0][u]", id);
	}
}

/* Pass 0 (every pass, without a row cache) keeps one chunk in flight:
 * l<id>[1] is loaded while l<id>[0] is used (`start`: the thread's first
 * chunk). */
static void emit_first_loads(RowK *R, const Closure *m, bool open, const char *start, bool all)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (!ahead(R, id, all) || copied(R, id, all ? 0 : 1))
			continue;
		const char *o = arena_printf(c->a, "l%d[1]", id);
		if (!open) {
			cw_line(R->w, "%s l%d[2][%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
			cw_line(R->w, "%s", row_load(R, c->pin[id], o, start, "fz_e"));
			continue;
		}
		cw_line(R->w, "fz_mv(l%d[0], l%d[1]);", id, id);
		cw_line(R->w, "%s", row_load(R, c->pin[id], o, "j0 + fz_step", "fz_e"));
		c->vname[id] = arena_printf(c->a, "l%d[0][u]", id);
	}
}

/* The split rows' entry without a row cache (_stream) loads every pass's
 * inputs from the L2 or DRAM, each thread a chunk of a stream at a time, so
 * that a chunk ahead kept too few bytes in flight: ncu on the H200 gave
 * softmax f32 1x10000019's entry 22% of DRAM's throughput (2 blocks of 512
 * threads an SM). It takes the thread's chunks in groups instead, the
 * group's loads issued together before any is used: up to 4 chunks, 16
 * values a thread for the pass's leaves (column operands counted; at 32 the
 * entries of halves spilled, softmax f16's 160 bytes). The order of the
 * additions is the same. H200, bench/row_shapes.py, us: softmax f32
 * 1x10000019 86.2 -> 76.7, 2x4194304 56.9 -> 49.5, 64x131072 46.6 -> 40.5,
 * rmsnorm f32 55x151936 39.7 -> 36.0; halves (2 chunks) 1-4%. */
static int group_chunks(const RowK *R, const Closure *m, bool all)
{
	int vals = 0, kept = 0;
	for (int i = 0; i < m->nleaf; i++) {
		vals += R->vec;
		kept += ahead(R, m->leaf[i], all);
	}
	int g = kept > 0 ? 16 / vals : 1;
	return !R->stream ? 1 : g < 1 ? 1 : g > 4 ? 4 : g;
}

/* A group's loads of the streams kept ahead, G chunks each, fz_step apart
 * from fz_jb (l<id>[g] the chunk g). */
static void emit_group_loads(RowK *R, const Closure *m, int G, bool all)
{
	Cg *c = R->c;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (!ahead(R, id, all))
			continue;
		cw_line(R->w, "%s l%d[%d][%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, G, R->vec);
		c->vname[id] = arena_printf(c->a, "l%d[fz_g][u]", id);
	}
	cw_unroll(R->w);
	cw_open(R->w, "for (int fz_g = 0; fz_g < %d; fz_g++)", G);
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (ahead(R, id, all))
			cw_line(R->w, "%s", row_load(R, c->pin[id], arena_printf(c->a, "l%d[fz_g]", id),
			                               "fz_jb + fz_g * fz_step", "fz_e"));
	}
	cw_close(R->w);
}

/* The loop over the thread's chunks: one at a time (j0), or in groups of G
 * (fz_jb, then each chunk j0 of the group that is in the row: three blocks,
 * which close_chunk_loop closes). */
static void open_chunk_loop(RowK *R, const Closure *m, const char *start, int G, bool all)
{
	CgW *w = R->w;
	if (G == 1) {
		cw_open(w, "for (%s j0 = %s; j0 < fz_e; j0 += fz_step)", row_loop_aligned(R) ? "int" : "long long", start);
		return;
	}
	cw_open(w, "for (long long fz_jb = %s; fz_jb < fz_e; fz_jb += %d * fz_step)", start, G);
	emit_group_loads(R, m, G, all);
	cw_unroll(w);
	cw_open(w, "for (int fz_g = 0; fz_g < %d; fz_g++)", G);
	cw_line(w, "const long long j0 = fz_jb + fz_g * fz_step;");
	cw_open(w, "if (j0 < fz_e)");
}

static void close_chunk_loop(RowK *R, int G)
{
	for (int i = 0; i < (G > 1 ? 3 : 1); i++)
		cw_close(R->w);
}

static bool loop_pass(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool seg)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	CgW *w = R->w;
	/* the thread's first chunk, and a chunk's place in the cache */
	bool al = row_loop_aligned(R);
	const char *start = seg ? "fz_beg + fz_j" : al ? "fz_j" : "fz_j - fz_s";
	const char *at = seg ? "(j0 - fz_beg)" : al ? "j0" : "(j0 + fz_s)";
	/* without a row cache every pass loads its inputs: each keeps a chunk
	 * of the row's streams in flight, or a group of chunks; the aligned
	 * class loads pass 0's inputs that it does not copy at the chunk (a
	 * chunk ahead would read past the row: it loads whole chunks) */
	bool pipe = (q == 0 && !al) || R->stream, all = q == 0;
	bool ring = R->stream && row_ring_here(R);
	int G = ring ? 1 : group_chunks(R, m, all); /* (the ring's loop is one block) */
	if (ring) {
		row_ring_open(R, m, start);
	} else {
		if (q == 0)
			emit_copies(R, m, start);
		if (pipe && G == 1)
			emit_first_loads(R, m, false, start, all);
		open_chunk_loop(R, m, start, G, all);
		if (q == 0)
			emit_copied_reads(R, m, at);
		if (pipe && G == 1)
			emit_first_loads(R, m, true, start, all);
		if (!pipe || !all)
			emit_leaf_loads(R, m, all);
	}
	emit_freads(R, m, at);
	if (!row_elements(R, q, m, t, nt, false))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_OUT && row_is_colv(R, kp->node) && c->ph[kp->node] == q)
			cw_line(w, "%s", row_store(R, i, "j0", "fz_e", row_value_array(R, kp->node)));
	}
	for (int i = 0; i < R->ncached; i++) {
		NodeId id = R->cached[i];
		if (c->ph[id] == q && !copied(R, id, q))
			cw_line(w, "fz_cst(fz_c%d + %s, %s);", id, at, row_value_array(R, id));
	}
	close_chunk_loop(R, G);
	return true;
}

/* A pass's chunk loop. The aligned class's fz_vec is a constant (cg_launch
 * takes the class only where every buffer is 16-byte aligned), so its loop
 * holds no test; but where the kernel tests it anyway (R->vec_test:
 * kernels with column operands, row_emit.c's emit_vec_test) each pass is
 * written twice, for pointers aligned and not (`if (fz_vec)`, once a pass),
 * each with its own answer a constant (R->vec_arg). Tested once a chunk
 * instead, layernorm bf16 511x32768 took 28.2 us against 24.8, f16
 * 1000x24576 36.1 against 33.6 (H200, docs/performance.md, "The row
 * cache's aligned class"). */
bool row_loop_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool seg)
{
	if (!row_loop_aligned(R) || seg || !R->vec_test)
		return loop_pass(R, q, m, t, nt, seg);
	bool ok = true;
	cw_open(R->w, "if (fz_vec)");
	for (int v = 1; ok && v >= 0; v--) {
		if (!v)
			cw_else(R->w);
		R->vec_arg = v ? "true" : "false";
		ok = loop_pass(R, q, m, t, nt, seg);
	}
	cw_close(R->w);
	R->vec_arg = "fz_vec";
	return ok;
}

static int loop_args(RowK *R, CgArg *args)
{
	if (R->c->info->nslots == 0)
		return 0; /* nothing cached: no workspace either */
	args[0] = (CgArg){CGARG_WORKSPACE, 0};
	return 1 + row_cache_args(R, args + 1);
}

static const char *loop_describe(RowK *R)
{
	const struct CgKernelInfo *ki = R->c->info;
	if (ki->nslots == 0)
		return "a group of threads a row, no row cache";
	int bytes = 0;
	for (int s = 0; s < ki->nslots; s++)
		bytes += ki->slot_bytes[s];
	return arena_printf(R->c->a, "a group of threads a row, the row cache (%d bytes an element) in shared "
	                    "memory or the workspace", bytes);
}

static void loop_prologue(RowK *R, CgW *w)
{
	if (R->c->info->nslots > 0)
		cw_line(w, "extern __shared__ fz_a16 fz_smem[];");
	if (row_loop_aligned(R)) /* rows of fewer than 2^30 elements (launch.c) */
		cw_line(w, "const int fz_j = (int)threadIdx.x * %d, fz_step = (int)blockDim.x * %d;", R->vec, R->vec);
	else
		cw_line(w, "const long long fz_j = (long long)threadIdx.x * %d, fz_step = (long long)blockDim.x * %d;",
		        R->vec, R->vec);
	row_cache_pointers(R, w, false);
}

static void loop_row_head(RowK *R, CgW *w)
{
	cw_line(w, row_loop_aligned(R) ? "const int fz_e = fz_act ? (int)fz_n : 0;" : "const long long fz_e = fz_act ? fz_n : 0;");
}

static bool loop_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt)
{
	return row_loop_chunks(R, q, m, t, nt, false);
}

const RowPath row_loop_path = {
	.path = CG_PATH_ROW,
	.helpers = 0,
	.args = loop_args,
	.describe = loop_describe,
	.prologue = loop_prologue,
	.row_head = loop_row_head,
	.chunks = loop_chunks,
	.exchange = NULL,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = true,
	.shifted = true,
};

const RowPath row_loopa_path = {
	.path = CG_PATH_ROW,
	.helpers = CGH_REG,
	.args = loop_args,
	.describe = loop_describe,
	.prologue = loop_prologue,
	.row_head = loop_row_head,
	.chunks = loop_chunks,
	.exchange = NULL,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = false,
	.shifted = false,
};
