/*
 * row_split.c: the SPLIT path, several blocks a row.
 *
 * gridDim.y = S blocks take a row together, block fz_seg its segment of
 * fz_len elements (cg_launch's choice: the row over S, in whole chunks,
 * counted from the row's alignment fz_s elements before it),
 * with the chunk loop and row cache of the ROW path (row_loop.c). After each
 * pass's block reduction they publish their partial results in the
 * workspace (at fz_wpart: two alternating sets per row group, so that a
 * block may publish the next pass's while a slower one still reads these),
 * wait for each other on a counter (fz_barrier: they are co-resident, the
 * launch is cooperative) and all combine them in the same order.
 *
 * cg_launch takes it when rows are too few to fill the device, or too long
 * for one block's shared memory but not for the device's.
 */
#include "codegen/rowint.h"

static int split_args(RowK *R, CgArg *args)
{
	int n = 0;
	args[n++] = (CgArg){CGARG_WORKSPACE, 0};
	args[n++] = (CgArg){CGARG_SEG, 0};
	args[n++] = (CgArg){CGARG_PARTIALS, 0};
	return n + row_cache_args(R, args + n);
}

static const char *split_describe(RowK *R)
{
	if (R->stream)
		return "several blocks a row, partial results exchanged through the workspace, no row cache: each "
		       "pass reads its inputs again";
	return R->c->info->nslots > 0 ? "several blocks a row, partial results exchanged through the workspace, "
	                                "each segment cached in shared memory or the workspace"
	                              : "several blocks a row, partial results exchanged through the workspace";
}

static void split_prologue(RowK *R, CgW *w)
{
	if (R->c->info->nslots > 0 || R->ring_bytes > 0)
		cw_line(w, "extern __shared__ fz_a16 fz_smem[];");
	if (R->ring_bytes > 0)
		row_ring_prologue(R, w);
	cw_line(w, "const int fz_S = gridDim.y, fz_seg = blockIdx.y;");
	cw_line(w, "const long long fz_j = (long long)threadIdx.x * %d, fz_step = (long long)blockDim.x * %d;", R->vec,
	        R->vec);
	row_cache_pointers(R, w, true);
	cw_line(w, "unsigned long long fz_ep = 0; /* exchanges so far */");
}

/* The block's segment of the row, fz_beg .. fz_end: whole chunks counted
 * from the row's alignment, so the first segment starts fz_s elements before
 * the row. */
static void split_row_head(RowK *R, CgW *w)
{
	(void)R;
	cw_line(w, "const long long fz_vn = fz_n + fz_s, fz_vb = fz_seg * fz_len < fz_vn ? fz_seg * fz_len : fz_vn;");
	cw_line(w, "const long long fz_beg = fz_vb - fz_s, fz_end = (fz_vb + fz_len < fz_vn ? fz_vb + fz_len : fz_vn) - fz_s;");
	cw_line(w, "const long long fz_e = fz_act ? fz_end : fz_beg;");
}

static bool split_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt)
{
	return row_loop_chunks(R, q, m, t, nt, true);
}

/* Every block of the row gets every block's partial results of pass q's
 * round `round` (row_round): published in the kernel's order, combined in
 * the round's (an online sum of a max after the max, each block's sum
 * brought to the row's maximum from the block's: row_chunk.c's
 * emit_online_max). */
static void split_exchange(RowK *R, int q, int round)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	CgW *w = R->w;
	int NR = c->info->nred;
	cw_begin(w);
	cw_line(w, "unsigned long long *fz_p = fz_ws + fz_wpart + ((unsigned long long)blockIdx.x * 2 + (fz_ep & 1)) * "
	           "fz_S * %d;", NR);
	cw_open(w, "if (threadIdx.x == 0)");
	int *slot = ARENA_ARRAY(c->a, int, c->g->n + 1);
	int j = 0;
	for (int i = 0; i < k->nreductions; i++)
		if (row_in_round(R, q, k->reductions[i], round)) {
			slot[k->reductions[i]] = j;
			cw_line(w, "fz_p[fz_seg * %d + %d] = fz_bits(a%d);", NR, j++, k->reductions[i]);
		}
	cw_close(w);
	cw_line(w, "fz_barrier(fz_ws + blockIdx.x, ++fz_ep * fz_S);");
	NodeId *red = ARENA_ARRAY(c->a, NodeId, k->nreductions + 1);
	int n = row_round(R, q, round, red);
	for (int i = 0; i < n; i++) {
		NodeId r = red[i], m = row_online_of(R, r);
		if (m >= 0 && !row_online_var(R, r))
			cw_line(w, "a%d = fz_gather_online(fz_p + %d, fz_p + %d, a%d, fz_S, %d, fz_red + 32 * (fz_rp++ & 1));", r,
			        slot[r], slot[m], m, NR);
		else
			cw_line(w, "a%d = fz_gather<%s, %s>(%s, fz_p + %d, fz_S, %d, fz_red + 32 * (fz_rp++ & 1));", r,
			        cg_acc_op(&c->g->nodes[r]), cg_acc_type(c, r), cg_acc_identity(c, r), slot[r], NR);
	}
	cw_close(w);
}

const RowPath row_split_path = {
	.path = CG_PATH_SPLIT,
	.helpers = CGH_SPLIT,
	.args = split_args,
	.describe = split_describe,
	.prologue = split_prologue,
	.row_head = split_row_head,
	.chunks = split_chunks,
	.exchange = split_exchange,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0 && fz_seg == 0",
	.masked = true,
	.shifted = true,
};
