/*
 * row_plan_reg.c: the plan's part for the register path, made once for every
 * entry (row_plan.c calls it): the chunks a thread holds (rk), the entries'
 * thread bound, the staged tiles' most chunks, the leaves a thread copies a
 * row ahead and their buffers (row_plan_prefetch), the column operands the
 * aligned class holds (row_plan_hold), and each leaf's last load.
 */
#include "codegen/rowint.h"

/* Chunks a thread holds in registers: 16 elements, when what the passes
 * carry fits (32 make the 64-register bound of 1024-thread blocks spill,
 * measured with ptxas); 32 for rows of halves (V >= 8), whose entries are
 * then bound to 512 threads (row_max_threads): half the bytes an element, so
 * the same bytes in flight a thread and half the per-row work an element
 * (H200, 8192x4096: layernorm f16 54.0 -> 49.2 us, softmax f16 66.3 ->
 * 64.0, layernorm bf16 58.6 -> 56.6). */
static int reg_elems(const RowK *R) { return R->vec >= 8 ? 32 : 16; }

int row_plan_rk(RowK *R)
{
	int V = R->vec, E = reg_elems(R), K = V >= 2 ? E / V : 8, bytes = 0;
	for (int i = 0; i < R->ncached; i++)
		bytes += cg_compute_size((fz_dtype)R->c->g->nodes[R->cached[i]].dtype) * K * V;
	return bytes <= 16 * E ? K : 0;
}

/* Chunks a thread of staged rows holds at most (the TILE entries hold 1, 2,
 * ... up to it): CG_TILE_KMAX, up to the register path's rk; for halves 2,
 * 16 elements a thread. Measured on the H200 (docs/performance.md): at 2
 * against 4, layernorm bf16 541200x31 52.2 -> 48.4 us, 132104x127 58.1 ->
 * 48.7 (more threads a row, half the registers a thread). */
int row_tile_kmax(const RowK *R)
{
	int k = R->vec >= 8 ? 2 : CG_TILE_KMAX;
	return R->rk < k ? R->rk : k;
}

/* Per-element streams: inputs and outputs with the row's last axis. */
static int row_streams(const RowK *R)
{
	const Kernel *k = R->k;
	int streams = 0;
	for (int i = 0; i < k->nparams; i++)
		streams += (k->params[i].kind == PARAM_IN || k->params[i].kind == PARAM_OUT) && row_is_colv(R, k->params[i].node);
	return streams;
}

/* The entries' __launch_bounds__: 1024 threads (64 registers each) only for
 * lean kernels, which is what a 1024-thread block a row needs (the longest
 * rows cached in one block); 512 (128 registers) otherwise, so that wide
 * chunks and long math chains do not spill. */
int row_max_threads(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	int streams = row_streams(R);
	bool heavy = false;
	for (int i = 0; i < k->nnodes; i++)
		heavy |= row_is_colv(R, k->nodes[i]) && cg_long_math((Op)c->g->nodes[k->nodes[i]].op);
	c->info->heavy = heavy;
	/* the register path's own loop carries less: up to 4 streams without
	 * long math stay under 64 registers there (ptxas, every example) */
	if (R->rk > 0 && streams <= 4 && !heavy)
		return reg_elems(R) > 16 ? 512 : 1024;
	return R->vec <= 4 && streams <= 2 && !heavy ? 1024 : 512;
}

/* The masked class of f32 rows in lean kernels that write no row, only
 * values of each row, from at most two streams (logsumexp): 40 registers
 * (FZ_MASKED_REDUCE_ROW), not FZ_MASKED_ROW's 56. ptxas gave logsumexp's
 * `_reg4m` 52, 18 blocks of 64 threads an SM; at 40, 25 and no spill (a
 * kernel of four streams spilled 112 bytes at 40, so not those). Such rows
 * are issue-bound (ncu, logsumexp f32 16744x1001: SM 71%, DRAM 52%), half
 * the bytes an element of softmax's. H200, bench/replay_ab.py, 56 -> 40
 * (us, medians): logsumexp f32 16744x1001 28.3 -> 27.1, then 1.00x and
 * 0.98x in two later calls; 4094x4099 31.4 -> 30.8, then 0.97x; 65536x255
 * 47.1 -> 45.9, then 0.98x and 0.97x. */
bool row_masked_reduce(const RowK *R) { return R->vec == 4 && !row_writes_rows(R) && row_streams(R) <= 2; }

bool row_writes_rows(const RowK *R)
{
	const Kernel *k = R->k;
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT && row_is_colv(R, k->params[i].node))
			return true;
	return false;
}

/* The masked class of rows of halves (32 elements a thread, bound to 512
 * threads) in kernels of up to 4 streams without long math: 80 registers
 * (FZ_MASKED_HALF_ROW), not the bound's 128. ptxas gave them 87-105, so 5
 * blocks of 128 threads an SM; at 80, 6. Measured on the H200 at 72 under
 * -Ofc=min (docs/performance.md, "Short and odd rows"): softmax f16
 * 16761x1001 51.2 -> 43.2 us, layernorm bf16 16760x1001 60.6 -> 57.6,
 * softmax f16 4094x4099 53.9 -> 51.8; at 64 they spill more and gain less.
 * The full optimizer spills at 72 (the prelude says what it cost). Not the
 * others: 5 streams spill 180 bytes at 72 (add_rmsnorm bf16 1846x4545 31.8
 * -> 41.5), long math 12 (bias_gelu_residual_layernorm 8191x1001 63.0 ->
 * 65.1). */
bool row_masked_half(const RowK *R)
{
	return R->vec >= 8 && R->rk > 0 && row_streams(R) <= 4 && !R->c->info->heavy;
}

/* Does the register path's aligned class of this kernel load its rows
 * straight from global memory, not prefetched (the masked class still
 * prefetches)? Rows of halves whose kernel reads no column operand and
 * has at most three streams of the rows' layout, inputs and outputs:
 * softmax's and log-softmax's, a masked softmax's. H200, one call,
 * `bench/row_shapes.py --reps 100`, prefetched -> not (us): masked_softmax
 * f16 4x16x256x1024 33.9 -> 28.4, softmax f16 4096x4096 26.4 -> 23.8, bf16
 * 16384x1024 24.6 -> 23.0. The others lost without it: layernorm bf16
 * 16383x1024 24.7 -> 26.2, 4095x4096 26.2 -> 27.4, f16 1023x16384 27.2 ->
 * 38.1 (two column operands), modrms_row bf16 2048x4096 22.1 -> 35.3 (three
 * row streams), add_rmsnorm bf16 1846x4544 21.9 -> 22.8; rmsnorm bf16 (one
 * column operand) gained 2% (1024x16384 24.2 -> 23.7) and keeps it. The
 * masked class lost without it everywhere (softmax f16 16761x1001 40.3 ->
 * 43.7, log_softmax bf16 5591x3001 33.9 -> 42.0): docs/performance.md,
 * "Rows of halves without the prefetch". */
static bool reg_direct(const RowK *R)
{
	return R->vec >= 8 && !R->c->info->heavy && !R->c->info->colops && row_streams(R) <= 3;
}

/* The leaves the register path copies a row ahead into shared memory (its
 * pass 0's row-varying leaves), and their buffers: for each, rk chunks of
 * every thread of the block, in its storage type, one after the other.
 * Measured on the H200, prefetching pays where a row takes long to compute
 * against the bytes it loads: heavy kernels (bound to 512 threads: long
 * math or many streams; bias-gelu-residual-layernorm 51% -> 67% of the
 * floor) and half-precision rows (layernorm f16 48% -> 56%). Light f32
 * rows lost 4 to 10 points with it (more registers, a persistent grid's
 * tail), so they keep the plain loads.
 *
 * A pf_late plan (the masked class's) prefetches the leaves its later
 * passes read first too, into the room the first plan's buffer has: each
 * pass's copies are a group, the epilogue copying a chunk's next row where
 * it has read this one's (row_reg.c). Its epilogue loaded them from memory
 * after the row's reduction instead, the latency exposed. H200, one call,
 * bench/replay_ab.py (us): modrms_row bf16 4095x2047 28.3 -> 24.8,
 * 2340x3583 26.4 -> 23.8, 1023x8191 30.7 -> 23.7, 8191x4095 106.7 -> 84.4;
 * rows of the lane class and the aligned class unchanged. In the aligned
 * class (the first plan, its epilogue's inputs read in pass 0 and held in
 * registers) the same plan did not pay: modrms_row bf16 2048x4096 19.1 ->
 * 19.5, 4096x2048 19.0 -> 19.0, modrms_batch 0.97-1.02x (ptxas: 96
 * registers for 102, and 4-52% slower bound to 80 or 64, where it spills). */
void row_plan_prefetch(RowK *R)
{
	Cg *c = R->c;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, R->k->nreductions + R->k->nparams + R->ncached + 1);
	R->pf = ARENA_ARRAY(c->a, NodeId, R->k->nparams + 1);
	R->pf_off = ARENA_ARRAY(c->a, int, R->k->nparams + 1);
	R->npf = 0;
	if (R->rk == 0 || (c->info->max_threads >= 1024 && R->vec < 8))
		return;
	int bytes = 0;
	for (int q = 0; q <= (R->pf_late ? R->P : 0); q++) {
		Closure m;
		row_closure(R, q, t, row_targets(R, q, t), &m);
		for (int i = 0; i < m.nleaf; i++) {
			NodeId id = m.leaf[i];
			int size = R->rk * R->vec * (int)fz_dtype_size((fz_dtype)c->g->nodes[id].dtype);
			if (!row_is_rowvar(R, id) || c->pin[id] < 0 || !R->roff[c->pin[id]] || c->ph[id] != q ||
			    (q > 0 && bytes + size > R->pf_room))
				continue;
			R->pf_off[R->npf] = bytes;
			R->pf[R->npf++] = id;
			bytes += size;
		}
	}
	c->info->pf_bytes = bytes;
	c->info->reg_direct = bytes > 0 && reg_direct(R);
}

/* The column operands (per-element inputs the rows share, such as a
 * layernorm's weight and bias) that the register path's later passes read,
 * held in registers as stored (fz_h<id>), loaded early (row_reg.c says
 * where: a thread's chunks of the aligned class are the same in every
 * row), not where they are used: the epilogue otherwise waits for them
 * after the row's reductions, as Triton's persistent reductions do not
 * (they load w and b beside x). At most CG_HOLD_MAX of them; the masked
 * class, whose chunks move with each row's alignment, keeps them in
 * shared memory instead (row_reg.c's slots, rows of halves). In lean
 * kernels (rows of f32, few streams, no prefetch) in entries of their own
 * (`_reg<K>h`, CgKernelInfo.reg_hold), bound to CG_HOLD_THREADS threads,
 * not 1024 at 56 registers (ptxas spills 114 bytes at 64), the lean entries
 * beside them (launch_rules.c's hold_rule chooses); in rows of halves of up to 4 streams without long
 * math, in the aligned entry itself (bound to 512 threads already): H200,
 * layernorm bf16 4095x4096 24.7 -> 21.5 us, 16383x1024 22.5 -> 20.8, f16
 * 1023x16384 25.0 -> 22.7, rmsnorm bf16 4096x4096 21.2 -> 19.8, but
 * add_rmsnorm bf16 1639x5120 (5 streams) 19.7 -> 20.1, so not there.
 * docs/performance.md, "Column operands held". */
void row_plan_hold(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + R->ncached + 1);
	R->held = ARENA_ARRAY(c->a, NodeId, CG_HOLD_MAX);
	R->nheld = 0;
	bool lean = c->info->max_threads >= 1024 && R->vec <= 4 && R->npf == 0;
	bool halves = R->vec >= 8 && !c->info->heavy && row_streams(R) <= 4;
	/* (rows of rank 1 are one row: nothing is shared) */
	if (R->r < 2 || R->rk == 0 || R->stream || !(lean || halves))
		return;
	for (int q = 1; q <= R->P; q++) {
		Closure m;
		row_closure(R, q, t, row_targets(R, q, t), &m);
		for (int i = 0; i < m.nleaf && R->nheld < CG_HOLD_MAX; i++) {
			NodeId id = m.leaf[i];
			int p = c->pin[id];
			bool seen = false;
			for (int h = 0; h < R->nheld; h++)
				seen |= R->held[h] == id;
			if (!seen && p >= 0 && !R->roff[p] && row_is_colv(R, id) && !row_is_rowvar(R, id))
				R->held[R->nheld++] = id;
		}
	}
	c->info->reg_hold = lean && R->nheld > 0;
}

/* The entry without a row cache loads its rows from global memory in
 * every pass that reads them: the last pass that loads each parameter, whose
 * loads then leave the caches first while the earlier passes' stay (row_chunk.c,
 * row_hint). */
void row_plan_lastload(RowK *R)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	R->lastload = ARENA_ARRAY(c->a, int, k->nparams + 1);
	for (int i = 0; i < k->nparams; i++)
		R->lastload[i] = -1;
	if (!R->stream)
		return;
	NodeId *t = ARENA_ARRAY(c->a, NodeId, k->nreductions + k->nparams + R->ncached + 1);
	for (int q = 0; q <= R->P; q++) {
		Closure m;
		row_closure(R, q, t, row_targets(R, q, t), &m);
		for (int i = 0; i < m.nleaf; i++)
			if (c->pin[m.leaf[i]] >= 0)
				R->lastload[c->pin[m.leaf[i]]] = q;
	}
}

bool row_is_held(const RowK *R, NodeId id)
{
	if (!(R->hold || R->slots) || R->path->path != CG_PATH_REG)
		return false;
	for (int h = 0; h < R->nheld; h++)
		if (R->held[h] == id)
			return true;
	return false;
}

bool row_is_pf(const RowK *R, NodeId id)
{
	for (int i = 0; i < R->npf; i++)
		if (R->pf[i] == id)
			return true;
	return false;
}

bool row_pf_here(const RowK *R, NodeId id)
{
	/* not in the aligned class of reg_direct kernels, nor in the line
	 * entries, which load their rows themselves; cp.async copies aligned
	 * pieces: the masked entries copy only the streams aligned with the
	 * row's chunks; the lane class's elements are too small to copy
	 * (cp.async moves 4 bytes or more) */
	if (R->path->path != CG_PATH_REG || R->path->lane || R->line || (R->c->info->reg_direct && !R->path->masked))
		return false;
	return row_is_pf(R, id) && (!R->path->shifted || R->aligned[R->c->pin[id]]);
}
