/*
 * row_tile.c: the TILE path, short rows staged through shared memory.
 *
 * A block of blockDim.y rows of blockDim.x threads each takes its rows as
 * one tile: their elements are one contiguous span of each stream of the
 * rows' layout (the inputs and outputs of the kernel's shape), which the
 * whole block copies into shared memory as 16-byte vectors from the span's
 * alignment (fz_tin), and the outputs' span back the same way (fz_tout)
 * once the rows are computed. In between, each row is held in the registers
 * of its group as in the register path (row_reg.c), K chunks of V a thread
 * counted from the row's start (a tile needs no alignment; column operands
 * such as layernorm's weight are then aligned with them), read from its row
 * of the tile whole (fz_tld: past the row, the next row's elements or the
 * tile's slack, masked by the accumulation) and stored to it element by
 * element (fz_tst); other streams load whole chunks where the row's start
 * is aligned. A row's group is at most a warp: its reductions are inline
 * shuffles (fz_reduce_warp; none where a thread takes a row: row_emit.c's
 * emit_block_reduce), and the entries are bound by class to threads an SM
 * (row_emit.c's tile_threads). K is the entry's compile-time class, 1, 2 or 4 (up to the
 * register path's rk; for halves 1 or 2: row_plan_reg.c's row_tile_kmax): a row of
 * 7 f32 takes one thread of 2 chunks, not 4 (whose dead elements would be
 * computed too).
 * Entries of 16 elements a thread copy their inputs in with cp.async, every
 * piece of a thread in flight at once (tile_async).
 *
 * A row a thread holds alone takes the direct entries instead (below,
 * row_tile_direct): its inputs read where they are, only its outputs staged;
 * a row of one chunk, an entry a length (`_tile1n<n>`), which stages
 * nothing up to CG_TILE_UNSTAGED_MAX elements and at one vector
 * (row_tile_unstaged).
 *
 * Why: a row of a few elements a thread (or a few threads) reads and writes
 * its own row, so a warp's loads and stores are 32 short pieces, one or two
 * sectors each, of different rows; its partial-sector stores kept the L2
 * busy (ncu, H200, softmax 1198373x7 in the register path's masked class:
 * L2 86%, DRAM 17%). Staged, every access to global memory is a whole
 * vector of a contiguous span. cg_launch takes it for many short rows not a
 * multiple of V (and few that a thread holds), and the direct entries for
 * rows of a multiple of V shorter than the register path's thread
 * (docs/performance.md).
 */
#include "codegen/rowint.h"

/* Rows a thread holds alone (launch_rules.c's tile_rules: up to tile_kmax chunks,
 * rows of up to 16 elements in f32 and in halves) take the direct entries
 * (`_tile<K>n<L>`, an entry a length: every class below tile_kmax, and
 * beside the tile_kmax class's groups): each thread reads its own row
 * straight from global memory, and only the outputs are staged, a warp's
 * rows at a time, with no block barrier. A warp's loads of its 32 rows meet
 * in the L1, so each sector comes from DRAM once; blockDim.x is 1, so a
 * chunk's offset is a constant (row_reg_start) and there is nothing to
 * combine (no reduction code): every load of the row issues at once.
 * Measured on the H200 (docs/performance.md, "A thread a row";
 * bench/replay_ab.py, main -> the direct entries, us): faster at all 20
 * shapes of rows of 3 to 15 timed, 0.77-0.94x: logsumexp f32 2097152x7 26.5
 * -> 20.4, softmax f32 838861x10 31.0 -> 25.5, rmsnorm bf16 2396745x7 39.6
 * -> 31.6, layernorm f16 5592405x3 96.5 -> 85.6. Rows of 31 (two threads a
 * row, staged) keep the staged entries: a hand-written thread of 32 elements
 * was no faster (softmax f32 270601x31 25.2 -> 25.3 us, layernorm 25.6 ->
 * 28.1). */
bool row_tile_direct(const RowK *R)
{
	return R->path->path == CG_PATH_TILE && R->rowlen > 0; /* every such entry is of one length */
}

/* Rows of one chunk (n <= V, launch_rules.c's tile_rules) take a direct entry of
 * their length (`_tile1n<n>`, row_emit.c's emit_lengths), which stages
 * nothing where n is at most CG_TILE_UNSTAGED_MAX or one vector: each
 * thread stores its row where it lies too (fz_tst: one vector where a row
 * of V is aligned, else element by element), and a thread past the rows
 * leaves the loop (row_emit.c's emit_row_loop: no warp's copy waits for
 * it), so that every bound is the constant n. Rows of one vector, measured
 * on the H200 (bench/replay_ab.py, the entry of one chunk that staged its
 * outputs -> this, its length still a run-time value, us): softmax bf16
 * 1048576x8 14.7 -> 12.6, f32 2097152x4 22.9 -> 19.2, rmsnorm bf16
 * 2097152x8 24.8 -> 21.0 (7 shapes, 0.84-0.91x). Shorter rows (the entries
 * of a length that staged -> these, us): softmax f32 4194304x2 32.1 ->
 * 21.5, 2796202x3 25.5 -> 20.1, f16 4194304x4 38.2 -> 25.9, 5592405x3 43.9
 * -> 30.2, 3355443x5 35.8 -> 25.9, 2796202x6 31.2 -> 26.8, layernorm f16
 * 5592405x3 50.5 -> 37.1, rmsnorm f32 4194304x2 30.3 -> 22.0 (14 shapes of
 * 2 to 6, 0.67-0.88x; rmsnorm f16 2796202x6 26.8 -> 27.3); logsumexp f32
 * 2796202x3, no per-element outputs, 16.3 -> 14.9 from the constant bounds
 * alone. At 7 halves the warp's seven element stores, each across all its
 * rows' sectors, lost: softmax f16 2396745x7 29.9 -> 42.5, rmsnorm bf16
 * 26.1 -> 43.9, layernorm f16 32.5 -> 36.1; those stay staged. Rows of two
 * chunks stored so were mixed in a hand-written kernel: softmax f16
 * 1048576x16 28.6 -> 26.2, f32 1048576x8 20.5 -> 24.5. */
bool row_tile_unstaged(const RowK *R)
{
	return row_tile_direct(R) && R->rowlen > 0 && R->rowlen <= R->vec &&
	       (R->rowlen <= CG_TILE_UNSTAGED_MAX || R->rowlen == R->vec);
}

/* Pairs of rows whose spans are whole vectors (cg_tile_span) are a
 * thread's two adjacent rows, not rows a block apart: each stream's span of
 * the pair is read before its rows are computed and written after, one
 * vector (fz_gld, fz_spout), and a row's chunk moves between it and the row's
 * registers (fz_spld, fz_spst). A warp's access is then one piece of 32
 * vectors, where rows a block apart took two of 32 elements each. Measured
 * on the H200 (bench/replay_ab.py, rows a block apart -> adjacent, us):
 * softmax f32 4194304x2 20.8 -> 19.5, rmsnorm f32 21.2 -> 19.4, layernorm
 * f32 21.9 -> 20.6, softmax f16 8388608x2 33.1 -> 29.5, layernorm bf16 38.6
 * -> 31.5, rmsnorm f16 32.1 -> 29.4; logsumexp f32 4194304x2 (no row
 * outputs) 17.5 -> 17.8. Rows of 4 halves (16 bytes), under the entries'
 * bound of 8 blocks an SM: rmsnorm bf16 4194304x4 22.7 -> 20.3, layernorm
 * bf16 28.0 -> 24.9, rmsnorm f16 23.1 -> 21.7, softmax bf16 24.7 -> 24.1,
 * softmax f16 24.1 -> 23.9, log_softmax bf16 22.6 -> 22.7, layernorm f16
 * 27.7 -> 28.2 (under the bound of 5, before it: mixed, 0.94-1.03x). */
bool row_tile_span(const RowK *R)
{
	return row_tile_unstaged(R) && cg_tile_span(R->c->info, R->rowlen, R->rpt);
}

bool row_tile_elems(const RowK *R) { return R->path->path == CG_PATH_TILE && R->rowlen && R->rowlen < R->vec; }

/* Before the pair's rows: its elements (fz_spn, fewer where the rows end
 * inside it) and each stream's span, the inputs' read. */
void row_tile_span_head(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	cw_line(w, "const int fz_spn = (fz_rows - fz_rt < %d ? (int)(fz_rows - fz_rt) : %d) * (int)fz_n; // the pair's "
	           "elements", R->rpt, R->rpt);
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		cw_line(w, "%s fz_sp%d[%d]; // %s", cg_compute_type((fz_dtype)c->g->nodes[R->k->params[i].node].dtype), i,
		        R->rpt * R->rowlen, cg_param_name(c, i));
		if (ki->tile_in[t])
			cw_line(w, "fz_gld(fz_sp%d, %s + fz_rt * fz_n, 0, fz_spn);", i, cg_param_name(c, i));
	}
}

/* After them: the outputs' spans written. */
void row_tile_span_tail(RowK *R, CgW *w)
{
	const struct CgKernelInfo *ki = R->c->info;
	for (int t = 0; t < ki->ntiles; t++)
		if (!ki->tile_in[t])
			cw_line(w, "fz_spout(%s + fz_rt * fz_n, fz_spn, fz_sp%d);", cg_param_name(R->c, ki->tile_param[t]),
			        ki->tile_param[t]);
}

/* Is tile t staged (copied through shared memory) by the entry being written? */
static bool tile_staged(const RowK *R, int t)
{
	return cg_tile_staged(R->c->info, row_tile_direct(R), row_tile_unstaged(R), t);
}

/* Does the entry stage outputs (per-element ones of the rows' layout)? */
static bool tile_outputs(const RowK *R) { return !row_tile_unstaged(R) && cg_tile_outputs(R->c->info); }

static int tile_args(RowK *R, CgArg *args)
{
	const struct CgKernelInfo *ki = R->c->info;
	int n = 0;
	for (int t = 0; t < ki->ntiles; t++)
		if (tile_staged(R, t))
			args[n++] = (CgArg){CGARG_TILE, ki->tile_param[t]};
	return n;
}

static const char *tile_describe(RowK *R)
{
	if (row_tile_unstaged(R))
		return arena_printf(R->c->a, "rows of %d elements, %s: its inputs and outputs read and written where they "
		                    "are, nothing staged; each row in registers, 1 chunk of %d elements", R->rowlen,
		                    row_tile_span(R) ? arena_printf(R->c->a, "%s adjacent rows a thread, moved as one span",
		                                                    R->rpt == 2 ? "two" : "four")
		                    : R->rpt > 1     ? "two rows a thread, a block's rows apart"
		                                     : "a thread a row",
		                    R->vec);
	if (R->rowlen)
		return arena_printf(R->c->a, "rows of %d elements, a thread a row: its inputs read straight from global "
		                    "memory, its outputs staged through shared memory a warp's rows at a time; each row in "
		                    "registers, %d chunk%s of %d elements", R->rowlen, R->K, R->K == 1 ? "" : "s", R->vec);
	return arena_printf(R->c->a, "short rows: the block's rows staged through shared memory, copied in and out as "
	                    "whole vectors; each row in registers, %d chunk%s of %d elements a thread", R->K,
	                    R->K == 1 ? "" : "s", R->vec);
}

/* Shared memory: each staged stream's tile (fz_t<i>). */
static void tile_prologue(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	if (!row_tile_unstaged(R))
		cw_line(w, "extern __shared__ fz_a16 fz_smem[];");
	row_reg_start(R, w);
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		if (!tile_staged(R, t))
			continue;
		const char *ty = cg_store_type((fz_dtype)c->g->nodes[R->k->params[i].node].dtype);
		cw_line(w, "%s *fz_t%d = reinterpret_cast<%s *>(reinterpret_cast<unsigned char *>(fz_smem) + fz_tile%d); // %s",
		        ty, i, ty, i, cg_param_name(c, i));
	}
}

/* Whether the entry copies its inputs in with cp.async (fz_tin_async): where
 * a thread holds 16 elements or more. Measured on the H200 (docs/
 * performance.md, "Short and odd rows"): softmax f32 66053x127 33.4 -> 30.3
 * us, layernorm f32 270600x31 31.9 -> 28.5, softmax f16 132105x127 47.2 ->
 * 45.7; but at 8 elements a thread (f32 rows of up to 8, a thread each:
 * two pieces of 16 bytes or fewer, which fz_tin already has in flight at
 * once) softmax f32 1198373x7 31.3 -> 32.4. */
static bool tile_async(const RowK *R) { return R->K * R->vec >= 16; }

/* After the tiles: the other streams' alignment tests (column operands,
 * masks of another layout: their chunks are aligned where the row's start
 * is), then the row's registers. */
static void tile_row_rest(RowK *R, CgW *w)
{
	for (int i = 0; i < R->k->nparams; i++)
		if (R->used[i] && row_is_stream(R, i) && row_tile_of(R, i) < 0 && !row_tile_elems(R))
			cw_line(w, "const bool fz_v%d = fz_aligned(%s, %d);", i, row_ptr(R, i),
			        cg_vec_align(R->vec, (fz_dtype)R->c->g->nodes[R->k->params[i].node].dtype));
	row_reg_row(R, w);
}

/* A staged stream's row in its tile (fz_tr<i>), the tile placed at the
 * stream's alignment before the span (fz_o<i>). */
static void tile_row_in_tile(RowK *R, CgW *w, int i)
{
	cw_line(w, "%s *fz_tr%d = fz_t%d + fz_o%d + (int)threadIdx.y * (int)fz_n;",
	        cg_store_type((fz_dtype)R->c->g->nodes[R->k->params[i].node].dtype), i, i, i);
}

/* A thread a row: its inputs' rows where they are (fz_tr<i> in global
 * memory), its outputs' rows in their tiles; no barrier. */
static void tile_direct_head(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	cw_line(w, row_tile_span(R)       ? "// a row of the pair: its chunk in the pair's spans"
	           : row_tile_unstaged(R) ? "// a thread a row: its inputs and outputs where they are"
	                                  : "// a thread a row: its inputs read where they are, its outputs staged");
	if (tile_outputs(R)) /* the outputs' span begins there */
		cw_line(w, "const long long fz_tb = fz_rb * fz_n;");
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		const char *name = cg_param_name(c, i);
		if (row_tile_span(R)) /* the pair's spans: row_tile_span_head */
			continue;
		if (row_tile_unstaged(R)) { /* every thread's row is in the tensor (row_emit.c's emit_row_loop) */
			cw_line(w, "%s%s *%sfz_tr%d = %s + fz_row * fz_n;", ki->tile_in[t] ? "const " : "",
			        cg_store_type((fz_dtype)c->g->nodes[R->k->params[i].node].dtype),
			        ki->tile_in[t] ? "__restrict__ " : "", i, name);
			continue;
		}
		if (ki->tile_in[t]) {
			cw_line(w, "const %s *__restrict__ fz_tr%d = %s + (fz_act ? fz_row : fz_rows - 1) * fz_n;",
			        cg_store_type((fz_dtype)c->g->nodes[R->k->params[i].node].dtype), i, name);
			continue;
		}
		cw_line(w, "const int fz_o%d = fz_toff<%d>(%s, fz_tb);", i, R->vec, name);
		tile_row_in_tile(R, w, i);
	}
	tile_row_rest(R, w);
}

/* The block's rows: their span fz_tb .. fz_te-1 of each staged input copied
 * into its tile; each staged stream's row there (fz_tr<i>); the row's
 * registers. A thread a row: tile_direct_head. */
static void tile_row_head(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	if (row_tile_direct(R)) {
		tile_direct_head(R, w);
		return;
	}
	bool async = tile_async(R);
	cw_line(w, "// the block's rows, one span of each stream, staged in shared memory");
	cw_line(w, "const long long fz_tb = fz_rb * fz_n, fz_te = (fz_rb + blockDim.y < fz_rows ? fz_rb + blockDim.y : "
	           "fz_rows) * fz_n;");
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		const char *name = cg_param_name(c, i);
		cw_line(w, "const int fz_o%d = fz_toff<%d>(%s, fz_tb);", i, R->vec, name);
		if (R->k->params[i].kind == PARAM_IN)
			cw_line(w, "fz_tin%s<%d>(fz_t%d, %s, fz_tb, fz_te, fz_o%d);", async ? "_async" : "", R->vec, i, name, i);
		tile_row_in_tile(R, w, i);
	}
	if (async)
		cw_line(w, "fz_cpa_wait();");
	cw_line(w, "__syncthreads();");
	tile_row_rest(R, w);
}

/* A thread a row: each warp's rows' outputs back to global memory by the
 * warp, once its rows are written (its lanes are its 32 rows: blockDim.x is
 * 1); a warp's part of a tile is its own, free again after the second
 * __syncwarp. */
static void tile_warp_tail(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	if (!tile_outputs(R))
		return;
	cw_line(w, "__syncwarp();");
	cw_line(w, "const int fz_w0 = (int)threadIdx.y & ~31; // the warp's first row of the block's, then its end");
	cw_line(w, "const int fz_w1 = fz_rb + fz_w0 + 32 < fz_rows ? fz_w0 + 32 : fz_rows - fz_rb > fz_w0 ? (int)(fz_rows - "
	           "fz_rb) : fz_w0;");
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		if (!ki->tile_in[t])
			cw_line(w, "fz_tout_warp<%d>(%s, fz_t%d, fz_tb, fz_o%d, fz_o%d + fz_w0 * (int)fz_n, fz_o%d + fz_w1 * (int)fz_n);",
			        R->vec, cg_param_name(c, i), i, i, i, i);
	}
	cw_line(w, "__syncwarp();");
}

/* The outputs' span back to global memory, once every row is written; the
 * tiles are free again after the second barrier. */
static void tile_row_tail(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	if (row_tile_direct(R)) {
		tile_warp_tail(R, w);
		return;
	}
	cw_line(w, "__syncthreads();");
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
		if (R->k->params[i].kind == PARAM_OUT)
			cw_line(w, "fz_tout<%d>(%s, fz_t%d, fz_tb, fz_te, fz_o%d);", R->vec, cg_param_name(c, i), i, i);
	}
	cw_line(w, "__syncthreads();");
}

const RowPath row_tile_path = {
	.path = CG_PATH_TILE,
	.helpers = CGH_TILE | CGH_CPA,
	.args = tile_args,
	.describe = tile_describe,
	.prologue = tile_prologue,
	.row_head = tile_row_head,
	.chunks = row_reg_chunks,
	.exchange = NULL,
	.row_tail = tile_row_tail,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = true,
	.shifted = false,
};
