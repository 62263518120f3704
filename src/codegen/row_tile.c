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
 * shuffles (fz_reduce_warp, but row_emit.c's tile_reduce_call), and the
 * entries are bound to blocks an SM by class (tile_blocks). K is
 * the entry's compile-time class, 1, 2 or 4 (up to the register path's
 * rk; for halves 1 or 2: row_plan.c's tile_kmax): a row of 7 f32 takes one
 * thread of 2 chunks, not 4 (whose dead elements would be computed too).
 * Entries of 16 elements a thread copy their inputs in with cp.async, every
 * piece of a thread in flight at once (tile_async).
 *
 * Why: a row of a few elements a thread (or a few threads) reads and writes
 * its own row, so a warp's loads and stores are 32 short pieces, one or two
 * sectors each, of different rows; its partial-sector stores kept the L2
 * busy (ncu, H200, softmax 1198373x7 in the register path's masked class:
 * L2 86%, DRAM 17%). Staged, every access to global memory is a whole
 * vector of a contiguous span. cg_launch takes it for many short rows not a
 * multiple of V (docs/performance.md).
 */
#include "codegen/rowint.h"

static int tile_args(RowK *R, CgArg *args)
{
	const struct CgKernelInfo *ki = R->c->info;
	int n = 0;
	for (int t = 0; t < ki->ntiles; t++)
		args[n++] = (CgArg){CGARG_TILE, ki->tile_param[t]};
	return n;
}

static const char *tile_describe(RowK *R)
{
	return arena_printf(R->c->a, "short rows: the block's rows staged through shared memory, copied in and out as "
	                    "whole vectors; each row in registers, %d chunk%s of %d elements a thread", R->K,
	                    R->K == 1 ? "" : "s", R->vec);
}

/* Shared memory: each staged stream's tile (fz_t<i>). */
static void tile_prologue(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
	cw_line(w, "extern __shared__ fz_a16 fz_smem[];");
	row_reg_start(R, w);
	for (int t = 0; t < ki->ntiles; t++) {
		int i = ki->tile_param[t];
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

/* The block's rows: their span fz_tb .. fz_te-1 of each staged input copied
 * into its tile; each staged stream's row there (fz_tr<i>); the row's
 * registers. */
static void tile_row_head(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
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
		cw_line(w, "%s *fz_tr%d = fz_t%d + fz_o%d + (int)threadIdx.y * (int)fz_n;",
		        cg_store_type((fz_dtype)c->g->nodes[R->k->params[i].node].dtype), i, i, i);
	}
	if (async)
		cw_line(w, "fz_cpa_wait();");
	cw_line(w, "__syncthreads();");
	/* the other streams (column operands, masks of another layout): their
	 * chunks are aligned where the row's start is */
	for (int i = 0; i < R->k->nparams; i++)
		if (R->used[i] && row_is_stream(R, i) && row_tile_of(R, i) < 0)
			cw_line(w, "const bool fz_v%d = fz_aligned(%s, %d);", i, row_ptr(R, i),
			        cg_vec_align(R->vec, (fz_dtype)c->g->nodes[R->k->params[i].node].dtype));
	row_reg_row(R, w);
}

/* The outputs' span back to global memory, once every row is written; the
 * tiles are free again after the second barrier. */
static void tile_row_tail(RowK *R, CgW *w)
{
	Cg *c = R->c;
	const struct CgKernelInfo *ki = c->info;
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
