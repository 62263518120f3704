/*
 * launch_rules.c: the rules that choose how a kernel is launched for given
 * sizes on a given device: a path and its geometry (a Choice), which
 * launch.c completes into everything else. The measurements behind each
 * rule are beside it and in docs/performance.md; launch.c's head comment
 * summarises the rules.
 */
#include "codegen/launchint.h"

/* A thread a chunk, 256 a block (fewer, in whole warps, for a small launch).
 * Measured on the H200 (docs/performance.md, "A chunk a thread"): against
 * one resident wave of a grid-stride loop, gelu_tanh 64Mi 130.8 us instead
 * of 144.7, adam 16Mi 114.0 instead of 123.8; two or four chunks a thread
 * were no faster and cost registers. */
void launch_pointwise_rules(const struct CgKernelInfo *ki, int64_t n, Choice *ch)
{
	int64_t chunks = cdiv(n, ki->vec);
	int64_t block = chunks < 256 ? cdiv(chunks, 32) * 32 : 256;
	*ch = (Choice){.path = CG_PATH_POINTWISE, .G = block, .R = 1, .S = 1, .grid = cdiv(chunks, block),
	               .rule = CG_RULE_PW};
}

/* Few rows whose segments, at a split that gives every block of a wave its
 * share of all the rows, are too long to cache on chip: the entry without a
 * row cache, two blocks of 512 an SM (fewer where its ring, row_ring.c, does
 * not fit twice in an SM's shared memory), every row at once (S blocks a row,
 * rounded down so that no row waits for a second round), every pass after
 * the first reading the inputs again. split_rules takes it where the cached
 * split would put its cache in the workspace, or take the rows one at a
 * time, or a few at a time while the inputs fit the L2 (the passes then read
 * them again from there). Measured on the H200 (docs/performance.md, "Split
 * rows without a cache"): softmax f32 8x4194304 (134 MB, a row at a time)
 * 289.3 -> 162.7 us, 9x1000003 (36 MB, 7 rows at a time) 59.9 -> 53.0,
 * layernorm f32 63x131072 (52 at a time) 72.7 -> 58.1, bf16 130x128256 (66
 * at a time) 79.2 -> 67.5; but 33x1000003 (132 MB, 7 at a time) 154.2 ->
 * 170.2, so that one stays. A kernel that caches nothing takes it for every
 * few rows (CG_RULE_SPLIT_BARE), its SPLIT entry having one block an SM and
 * a chunk ahead: H100 (docs/performance.md, "Row reductions alone take the
 * stream entry"), sum(x * x) bf16 4x4194304 26.7 -> 21.6 us, f32 64x131072
 * 23.7 -> 19.4, max and mean of f16 17x1000003 34.7 -> 23.2. */
static bool stream_rules(const Sizes *z, Choice *ch)
{
	const struct CgKernelInfo *ki = z->ki;
	int64_t T = CG_STREAM_THREADS;
	int64_t cap = z->sms * min64(min64(z->tps / T, CG_STREAM_BLOCKS), blocks_by_smem(z, ki->ring_bytes * T));
	if (!ki->stream || cap < 1)
		return false;
	int64_t S = min64(min64(cap / z->rows, cdiv(z->chunks, 2 * T)), 65535);
	if (S < 2)
		return false;
	*ch = (Choice){.path = CG_PATH_SPLIT, .stream = true, .cache = CG_CACHE_NONE, .G = T, .R = 1, .S = S,
	               .grid = min64(cap / S, z->rows),
	               .rule = ki->nslots > 0 ? CG_RULE_SPLIT_STREAM : CG_RULE_SPLIT_BARE};
	return true;
}

/* The cached split's blocks a row, once it is chosen: the rows go in rounds
 * of cap / S at once (the grid's x), a block of a round caching its
 * segment. Keep the fewest rounds the fitting split Sfit allows, spread
 * evenly (cdiv(rows, rounds) rows each), and give each row of a round as
 * many blocks as the device holds, up to two chunks a thread (smax): the
 * same kernel, no more rounds, no longer segments (so the cache still
 * fits), and no SM idle that a row could use. Before, S stayed at Sfit:
 * softmax f16 133x3000001 took its rounds on 78 of 132 SMs, softmax f32
 * 17x1000001 in rounds of 7, 7 and 3 rows on 245 of 264 blocks. Not timed
 * yet (docs/performance.md, "Split rows in rounds"); what a round costs was
 * measured on the `_stream` entry: an extra round of one row made softmax
 * f32 9x1000003 81.2 us instead of 53.0 ("Split rows without a cache"). */
static int64_t balance_split(const Sizes *z, int64_t Sfit, int64_t cap, int64_t smax)
{
	int64_t rounds = cdiv(z->rows, min64(z->rows, cap / Sfit));
	int64_t S = min64(cap / cdiv(z->rows, rounds), smax);
	return S > Sfit ? S : Sfit;
}

/* Split rows over S blocks each. false if not worth it. */
static bool split_rules(const Sizes *z, bool few, Choice *ch)
{
	const struct CgKernelInfo *ki = z->ki;
	int64_t T = z->tmax < 512 ? z->tmax : 512;
	/* blocks sure to be resident: threads, and registers (the entry is
	 * compiled for tmax threads, so T-thread blocks fit that many) */
	int64_t bps = min64(z->tps / T, z->tmax / T);
	bps = bps < 1 ? 1 : bps;
	int64_t budget = min64(z->smem_sm / bps - z->per_block, z->optin);
	int64_t cap = z->sms * bps, smax = cdiv(z->chunks, 2 * T); /* at least two chunks a thread */
	int64_t S = min64(few ? cdiv(cap, z->rows) : 1, smax), S0 = S;
	while (ki->nslots > 0 && S < cap && cg_cache_layout(ki, seg_len(z->n, S, ki->vec), NULL) > budget)
		S++;
	S = min64(min64(S, cap), 65535);
	int64_t cb = cg_cache_layout(ki, seg_len(z->n, S, ki->vec), NULL);
	/* few rows the cache would take through the workspace, or in rounds:
	 * one row each, or more while the inputs fit the L2 */
	bool fits0 = ki->nslots == 0 || cg_cache_layout(ki, seg_len(z->n, S0, ki->vec), NULL) <= budget;
	bool rounds = cap / S < z->rows, l2 = z->rows * z->n * ki->in_bytes <= z->l2;
	bool worse = (!fits0 && (cb > budget || cap / S == 1)) || (rounds && l2);
	/* a kernel that caches nothing (a row reduction alone) has no cached
	 * split to prefer (stream_rules) */
	if (few && (worse || ki->nslots == 0) && stream_rules(z, ch))
		return true;
	/* many rows too long for a block: split if the device's shared memory
	 * can hold one (else a block a row with its cache in the workspace) */
	if (S < 2 || (!few && cb > budget))
		return false;
	S = min64(balance_split(z, S, cap, smax), 65535);
	cb = cg_cache_layout(ki, seg_len(z->n, S, ki->vec), NULL);
	*ch = (Choice){.path = CG_PATH_SPLIT, .cache = cb <= budget ? CG_CACHE_SHARED : CG_CACHE_GLOBAL, .G = T, .R = 1,
	               .S = S, .grid = min64(cap / S, z->rows), .rule = few ? CG_RULE_SPLIT_FEW : CG_RULE_SPLIT_LONG};
	return true;
}

/* The row cache's class for rows of any length (`_row`: chunks from each
 * row's alignment, the row's first and last masked), or for rows of a
 * multiple of V (`_rowa`, row_loop.c: every chunk whole, 32-bit offsets,
 * so fewer than 2^30 elements). Measured on the H200 (one call,
 * bench/replay_ab.py, medians of three rounds, us, `_row` -> `_rowa`, its
 * passes written for aligned pointers and not): layernorm bf16 511x32768
 * 32.5 -> 24.8, softmax f32 512x16384 25.3 -> 20.7, 1024x32768 94.2 ->
 * 83.2, f16 512x32768 25.8 -> 22.4, bf16 400x40000 30.9 -> 26.2, layernorm
 * f16 1000x24576 42.4 -> 33.6, rmsnorm f32 256x32768 25.7 -> 24.0 (11
 * points, 0.76-0.97x; docs/performance.md, "The row cache's aligned
 * class"). */
bool launch_row_masked(const Sizes *z) { return !z->whole || z->n >= ((int64_t)1 << 30); }

/* Many rows too long to cache on chip: a block a row, as many blocks as are
 * resident, each with its row cache in the workspace. */
static void global_rules(const Sizes *z, Choice *ch)
{
	int64_t bps = z->tps / z->tmax > 0 ? z->tps / z->tmax : 1;
	int64_t gx = min64(z->sms * bps, z->rows);
	/* (the rows' elements; their alignment's chunk is beside the point) */
	while (gx > 1 && gx * cg_cache_layout(z->ki, z->n, NULL) > CG_LOOP_CACHE_MAX)
		gx /= 2;
	*ch = (Choice){.path = CG_PATH_ROW, .masked = launch_row_masked(z), .cache = CG_CACHE_GLOBAL, .G = z->tmax, .R = 1,
	               .S = 1, .grid = gx, .rule = CG_RULE_ROW_GLOBAL};
}

/* Whole warps (shuffles name all 32 lanes): up to a warp a power of two
 * (several rows a warp), more a multiple of 32 (fz_reduce takes any number
 * of warps). */
int64_t launch_whole_warps(int64_t G) { return G <= 32 ? pow2ceil(G) : cdiv(G, 32) * 32; }

/* Threads a row: about 8 chunks a thread, or K, as many as the register
 * path's entry holds, more while the rows leave the device half idle. Not a
 * power of two past a warp: a row of 4099 f32 (1026 chunks) takes 288
 * threads of 4 chunks, not 512 of 2. */
static int64_t group_size(const Sizes *z, int K)
{
	int64_t G = launch_whole_warps(cdiv(z->chunks, K > 0 ? K : 8));
	G = min64(G, z->tmax);
	while (G < z->tmax && G < z->chunks && z->rows * G < z->sms * z->tps / 2)
		G = min64(2 * G, z->tmax);
	return G;
}

/* Whether the register path takes these rows with G threads a row, and if
 * not, why (the rule of the ROW path). */
CgRule launch_reg_rule(const Sizes *z, int64_t G)
{
	const struct CgKernelInfo *ki = z->ki;
	if (ki->rk == 0)
		return CG_RULE_ROW_NO_REG;
	if (z->n == 0)
		return CG_RULE_ROW_EMPTY;
	if (z->chunks > G * ki->rk)
		return CG_RULE_ROW_LONG;
	bool masked = !z->whole;
	if (reg_pf_bytes(ki, masked) * (G <= 32 ? 128 : G) > z->optin)
		return CG_RULE_ROW_PREFETCH;
	return masked ? CG_RULE_REG_MASKED : CG_RULE_REG;
}

/* Rows of one or two 128-byte lines (8 or 16 chunks of 16 bytes), many, in
 * a kernel that loads them directly and reads nothing but streams of the
 * rows' layout (CgKernelInfo.reg_line: softmax, log-softmax): 8 threads a
 * row (CG_LINE_THREADS), each one chunk of every line (the entries of 1 and
 * 2 chunks), so that a warp's load reads four whole lines, where the rk
 * chunks of 2 or 4 threads a row read 32 or 64 bytes of each of 16 or 8
 * rows' lines and every line took four or two loads. Hand-written first
 * (bench/lab/aligned_short.cu, H200, bench/cubin_lab.py, one call, us:
 * torch.compile, fusec, the lab's rk chunks a thread as fusec holds them,
 * its 8 threads a row of one chunk): softmax f32 262144x32 18.1, 21.1,
 * 23.2, 18.3; f16 262144x64 18.7, 21.4, 22.5, 18.3; f32 131072x64 (16
 * chunks) 17.8, 18.6, 18.9, and 16 threads a row of one chunk 18.6, 8 of
 * two with two rows a thread 18.7; two rows a thread of one chunk 18.1-18.4
 * at the others. The entries hold a chunk or two, but what a row costs besides
 * (its offsets, the loop over rows) takes 44 registers: under the lean
 * entries' bound (56) that left 1280 threads an SM, one 16-byte load in
 * flight each, and the rule lost (softmax f32 262144x32 21.0 -> 21.6 us,
 * 131072x64 18.7 -> 21.9); bound to 32 registers (CG_LINE_BLOCKS blocks of
 * CG_LINE_BLOCK) and reductions inline, it gained (bench/replay_ab.py, one
 * call, medians of three rounds, us): softmax f32 262144x32 21.0 -> 19.8,
 * 131072x64 18.8 -> 18.0, log_softmax f32 262144x32 20.6 -> 18.7 (19.1 in
 * another build of the same entry), softmax f16 262144x64 21.5 -> 19.6.
 * Not rows of 4 or 12 chunks, nor 16 in one chunk a thread (softmax f32
 * 524288x16 18.8 -> 19.5, 174762x48 19.1 -> 25.5, 131072x64 18.8 ->
 * 20.0), nor kernels with column or broadcast
 * operands: layernorm f16 262144x64 20.3 -> 26.7, masked_softmax f16
 * 4x16x4096x64 23.2 -> 28.3, layernorm bf16 131072x128 20.8 -> 26.1,
 * logsumexp f32 (rows of 4 chunks) 19.9 -> 28.6; layernorm f32 262144x32
 * 20.5 -> 20.6. Fewer rows than fill the device once keep rk chunks. The
 * rule without its last two conditions, a second call (the same tool,
 * main, this, main, this): softmax f32 262144x32 21.2, 20.1, 21.5, 20.1;
 * 131072x64 19.1, 18.3, 19.2, 17.9; bf16 262144x64 21.6, 20.2, 21.7, 20.0;
 * f16 262144x64 21.6, 21.1, 21.5, 20.1; 2097152x64 150.9, 145.8, 150.0,
 * 145.7; log_softmax f32 262144x32 20.6, 19.4, 20.8, 19.4; 131072x64 18.6,
 * 17.7, 18.7, 17.8; f16 262144x64 20.7, 19.8, 20.9, 19.9. But two lines of
 * halves (16 elements a thread: softmax f16's spilled 102 bytes under the
 * bound) lost (softmax f16 131072x128 19.1 -> 25.8, bf16 19.0 -> 26.8;
 * log_softmax bf16 gained, 18.7 -> 18.0), and so did kernels that write a
 * value a row alone
 * (logsumexp f32 262144x32 11.7 -> 15.6 and 16.7, 131072x64 10.7 -> 11.8
 * and 13.0): at most CG_LINE_ELEMS elements a thread, and kernels that
 * write rows. The entries of one chunk reduce among their 8 threads with
 * shuffles alone (row_emit.c's red_group: softmax f32 262144x32 20.3 ->
 * 19.0 more); those of two inline fz_reduce_in.
 * Since 2026-12-02 these are entries of their own (`_line<K>`), which never
 * prefetch, so that kernels whose other aligned entries do may take them
 * too; and rows of two lines of halves take 16 threads of one chunk (their
 * reductions a shuffle more where blockDim.x is 16: fz_reduce_line). H200,
 * bench/replay_ab.py, one call, medians of three rounds, main's entries ->
 * line entries (us; torch.compile's beside, from the same call's sweep):
 * rmsnorm f32 262144x32 21.1 -> 18.7 (18.3), bf16 262144x64 19.6 -> 19.4
 * (18.3), f16 19.8 -> 19.2 (18.1), add_rmsnorm bf16 262144x64 39.4 -> 37.1
 * (34.9), modrms_row bf16 262144x64 37.5 -> 34.9 (34.2); two lines of
 * halves, rmsnorm bf16 131072x128 19.9 -> 19.5 (18.2), f16 20.6 -> 19.4
 * (17.9), softmax f16 18.7 -> 18.1 (19.1), bf16 18.7 -> 18.3 (19.9),
 * add_rmsnorm bf16 41.2 -> 37.2 (35.7), modrms_row bf16 39.4 -> 35.1
 * (34.6); log_softmax bf16 131072x128 18.4 -> 18.8 (20.7; main again 18.8).
 * Kernels with a column operand and two passes lost: layernorm (w and b)
 * f16 262144x64 20.3 -> 37.1, bf16 20.5 -> 30.6, 131072x128 20.7 -> 31.1
 * and 20.8 -> 37.9, f32 131072x64 18.8 -> 23.6 (f32 262144x32 gained, 20.9
 * -> 19.9; ptxas: a layernorm f16's line entry spills 12 bytes under 32
 * registers with w alone); so at most one column operand, in a kernel of
 * one pass (row_plan.c's row_line_operands). */
static bool line_rule(const Sizes *z)
{
	bool lines = z->chunks == CG_LINE_THREADS || z->chunks == 2 * CG_LINE_THREADS;
	return z->ki->reg_line && z->whole && lines &&
	       z->rows * (z->chunks / cg_line_k(z->ki, z->chunks)) >= z->sms * z->tps;
}

/* Chunks a thread of the register path holds: rk, but 2 (1 for rows of two)
 * in short rows of halves, at most 8 chunks, whose kernel's aligned class
 * prefetches them (row_plan_reg.c's reg_direct: kernels that read column
 * operands, or of more than three streams), from the entries of fewer
 * chunks that such kernels have: more threads a row, so that a warp's
 * copies of a chunk cover whole rows where rk chunks a thread covered 32
 * bytes of each of 16 rows. Measured on the H200 (bench/replay_ab.py, one
 * call, rk = 4 chunks or the direct `_tile2n16` -> these, us): rmsnorm bf16
 * 262144x64 24.8 -> 19.8, f16 24.4 -> 19.9, layernorm f16 25.1 -> 20.8,
 * bf16 25.0 -> 20.6, rmsnorm bf16 524288x32 36.1 -> 21.2, 299593x56 30.5 ->
 * 22.8, 699050x24 30.2 -> 26.7, layernorm f16 524288x32 36.1 -> 21.9,
 * add_rmsnorm bf16 262144x64 46.4 -> 37.6, modrms_row bf16 45.9 -> 37.1,
 * rmsnorm f16 1048576x16 20.9 -> 19.7, layernorm bf16 22.7 -> 21.9,
 * layernorm f16 349525x48 22.1 -> 22.1. One chunk a thread up to 4 chunks
 * was better at rmsnorm bf16 (699050x24 24.1, 524288x32 19.6) and worse at
 * layernorm bf16 699050x24 (28.7): not taken. Not longer rows: at 12 to 32 chunks 0.97-1.06x in
 * an earlier call (layernorm bf16 349525x96 39.8 -> 42.2, 65536x256 20.4 ->
 * 20.9, rmsnorm bf16 131072x128 20.2 -> 19.5). Not kernels that load their
 * rows directly (softmax f16 262144x64, 2 chunks a thread 22.1 -> 22.5, 1
 * 26.8), nor rows of f32 (softmax f32 262144x64 35.3 -> 36.0 and 41.3):
 * under the lean entries' 56 registers; bound to 32, rows of one or two
 * lines gain (line_rule). Rows of one chunk stay staged (tile_rules). */
static int reg_k(const Sizes *z)
{
	const struct CgKernelInfo *ki = z->ki;
	if (line_rule(z))
		return cg_line_k(z->ki, z->chunks);
	bool narrow = ki->reg_narrow && z->whole && z->chunks >= 2 && z->chunks <= CG_REG_NARROW_CHUNKS;
	return !narrow ? ki->rk : z->chunks == 2 ? 1 : 2;
}

/* Whether rows of a multiple of V in a kernel whose later passes read
 * column operands take the register entry that holds them (`_reg<K>h`,
 * row_plan_reg.c's row_plan_hold, bound to CG_HOLD_THREADS threads): where the
 * group is at most half that; a larger one takes the lean entry, which
 * keeps two blocks of 512 an SM where the holding one, at 76 registers,
 * keeps one. H200, main -> held (us, bench/replay_ab.py): layernorm f32
 * 8191x1024 20.9 -> 19.5, 32767x256 20.4 -> 18.8, 2047x4096 22.0 -> 21.1,
 * 4095x2048 21.0 -> 19.9, rmsnorm f32 2048x4096 20.4 -> 18.7, 8191x1024 19.9
 * -> 18.2; but at 512 threads, layernorm f32 1023x8192 23.9 -> 30.1. Rows
 * of more than 512 threads of rk chunks, held at 2 rk a thread, gained 4-9%
 * (layernorm f32 511x16384 28.2 -> 27.0, rmsnorm 24.5 -> 22.1) but that
 * entry (spilling) doubled NVRTC's time (layernorm 511x16384 105 -> 227
 * ms): not kept. Not the masked class: holding, at 82 registers, it lost
 * 5-34% (layernorm f32 8380x1001 26.4 -> 29.6, 2046x4099 27.7 -> 37.0). */
static bool hold_rule(const Sizes *z, int64_t G)
{
	return z->ki->reg_hold && z->whole && G <= CG_HOLD_THREADS / 2;
}

/* Rows the register path would hold in a group of more than 512 threads
 * (rows of 8K-16K f32), more rows than SMs: rounds of one such row an SM
 * (their blocks are bound to 48 or 56 registers, two do not fit), whose
 * loads stop during each row's reductions and epilogue. The ROW path takes
 * them instead where its first pass copies the row into the cache at once
 * (rowcp): about 8 chunks a thread, several rows an SM. Measured on the
 * H200 (docs/performance.md, "Long rows: the whole row in flight"), lean
 * kernels: softmax f32 2048x12000 82.6 -> 66.0 us, 839x10007 37.7 -> 30.7,
 * 512x16384 31.3 -> 29.1, log_softmax f32 512x16384 30.2 -> 28.0. Kernels
 * that read a column operand (a layernorm's weight) lost then (layernorm
 * f32 511x16384 31.5 -> 41.2: the loop loaded it through fz_ldc, a call a
 * chunk); since their chunks load inline (the aligned class `_rowa`, and
 * the masked class's aligned chunks) they gain too (bench/replay_ab.py,
 * the register path -> the row cache, us): layernorm f32 511x16384 27.8 ->
 * 23.6, 1000x12288 40.1 -> 30.9, 300x9000 10.4 -> 9.9, rmsnorm f32
 * 1000x10000 31.7 -> 25.4, 511x16384 24.3 -> 21.9; masked, layernorm f32
 * 838x10007 39.0 -> 32.2, 1000x12289 52.2 -> 42.7, 2000x9001 56.8 -> 54.8,
 * rmsnorm f32 1500x15001 69.2 -> 56.3, but 700x9999 19.9 -> 23.3 (still
 * faster than torch.compile's 28.5). */
static bool wide_rule(const Sizes *z, int64_t G)
{
	return G > 512 && z->rows > z->sms && z->ki->rowcp;
}

/* Threads a row of the row cache's rows longer than the register path
 * holds (tmax of them would not): at most 512 where the rows outnumber the
 * SMs. A block of 1024 (its entry at 40-56 registers) is alone on its SM,
 * where two of 512 share it; widen() takes the group back to 1024 where the
 * cache leaves one block an SM anyway (rows of 32K f32). H200
 * (bench/cubin_lab.py, fusec's `_rowa` entry of layernorm f32 600x20000,
 * us): 38.7 at 1024 threads, 33.9 at 640, 34.5 at 512, 40.7 at 256
 * (torch.compile 35.6). */
static int64_t long_group(const Sizes *z) { return z->rows > z->sms ? min64(z->tmax, 512) : z->tmax; }

/* Where the row cache limits the blocks an SM holds, spread a row over more
 * threads: at least 1024 threads an SM keep enough loads in flight. */
static int64_t widen(const Sizes *z, int64_t G, int64_t cb)
{
	while (G >= 32 && G < z->tmax && 2 * G <= z->chunks && cb > 0 && cb <= z->optin &&
	       blocks_by_smem(z, cb * (G == 32 ? 4 : 1)) * (G == 32 ? 128 : G) < 1024)
		G = min64(2 * G, z->tmax);
	return G;
}

/* With prefetch, blocks loop over rows, as many as threads and shared
 * memory let an SM hold (the runtime cuts that to what the entry's
 * registers allow: `resident`); where the masked class keeps column
 * operands in slots, a multiple of CG_SLOT_GRID of them, so that a thread's
 * rows share their alignment (slot_step). */
static void prefetch_grid(const Sizes *z, Choice *ch)
{
	int64_t buf = reg_pf_bytes(z->ki, ch->masked) * ch->G * ch->R;
	int64_t bps = min64(z->tps / (ch->G * ch->R), blocks_by_smem(z, buf));
	bps = bps > 32 ? 32 : bps < 1 ? 1 : bps;
	int64_t fit = z->sms * bps;
	ch->resident = true;
	if (fit < ch->grid)
		ch->grid = cg_resident_cut(&(CgLaunch){.grid_step = slot_step(z->ki, ch->masked)}, fit);
}

/* Short rows, many: staged through shared memory a block at a time (TILE),
 * each row in the registers of a thread (up to tile_kmax chunks) or of the
 * fewest threads that hold it in that many; cg_tile_threads' threads a
 * block. false where they are not short, or too few to give every SM
 * CG_TILE_FILL threads of them (but see below), or a multiple of V that takes more than a
 * thread (the register path's vectors are then aligned: faster, measured).
 * Rows of a multiple of V that a thread holds in at most the register
 * path's rk chunks take the direct entries (`_tile<K>n<n>`): that path's
 * thread a row would compute rk chunks, the dead ones too. Measured on the
 * H200 (bench/replay_ab.py, the register path -> direct, their tiles
 * stored a vector a chunk by fz_tst, us): softmax f32 2097152x4 39.9 ->
 * 22.8, 1048576x8 25.8 -> 19.5, 699050x12 27.5 -> 24.0, bf16 1048576x8 31.9
 * -> 15.2, f16 1048576x16 32.6 -> 28.4, logsumexp f32 2097152x8 31.9 ->
 * 22.4; 12 of 13 shapes faster, rmsnorm f32 1048576x8 19.4 -> 20.1. At rk
 * chunks the register path's thread holds no dead chunk, and won against
 * the direct entry of any length (softmax f32 524288x16 27.6 -> 30.1,
 * logsumexp f32 1048576x16 20.7 -> 42.2), but not against the entry of
 * that length, whose outputs are staged where the register path's stores
 * are a quarter of a row's sectors each (the register path -> `_tile4n16`,
 * us): softmax f32 524288x16 28.9 -> 20.2, log_softmax 27.5 -> 19.4,
 * rmsnorm 25.6 -> 22.1, layernorm 24.6 -> 22.9, 262144x16 15.5 -> 10.6;
 * logsumexp 1048576x16 (no row outputs) 21.0 -> 21.2. Every direct entry
 * is an entry of one length (`_tile<K>n<n>`, n a constant: row_emit.c's
 * emit_lengths); of one chunk (n <= V) it stages nothing up to
 * CG_TILE_UNSTAGED_MAX elements and at one vector (row_tile.c).
 * Few rows that a thread holds, not a multiple of V, take the direct entries
 * too (CG_RULE_TILE_FEW): the register path's masked class holds rk chunks
 * a thread (two threads of 4 chunks for a row of 3), all computed, a long
 * chain where nothing hides its latency. Measured on the H200
 * (bench/replay_ab.py, the register path -> direct, us): softmax f32
 * 3000x3 6.1 -> 1.7, 20000x3 6.2 -> 1.7, f16 20000x5 9.9 -> 2.1, rmsnorm
 * f16 30000x12 6.5 -> 2.8, layernorm f32 4096x7 3.7 -> 2.7, bf16 16384x6
 * 5.6 -> 2.5, logsumexp f32 8192x5 2.9 -> 2.0; softmax f32 200x13 5.6 ->
 * 6.1 (one block). Not aligned rows (softmax f32 1000x8 2.1 -> 4.0, bf16
 * 10000x16 2.5 -> 6.0, whose register path holds no dead chunk), nor rows
 * of several threads (softmax f32 3000x31 3.6 -> 6.3, f16 2000x50 3.7 ->
 * 3.0, layernorm f32 5000x61 5.8 -> 4.4).
 * Many rows of one chunk, shorter than V, up to CG_TILE_PAIR_MAX elements,
 * take two a thread (their `x2` entries: both rows' loads in flight at
 * once, the grid half as long). Measured on the H200 (bench/replay_ab.py,
 * a row a thread -> two, every entry that stages nothing, us): softmax f16
 * 8388608x2 36.2 -> 32.7, 5592405x3 29.9 -> 27.8, 4194304x4 25.9 -> 24.1,
 * 3355443x5 26.0 -> 24.4, bf16 3355443x5 25.6 -> 24.0, f32 4194304x2 21.6
 * -> 20.9, layernorm f32 2796202x3 22.3 -> 21.4, rmsnorm f32 4194304x2
 * 21.8 -> 21.0 (0.90-0.97x; softmax f32 2796202x3 1.00x); but rows of 6
 * (softmax f16 26.8 -> 28.1, log_softmax bf16 24.6 -> 27.7), of one vector
 * (rmsnorm bf16 2097152x8 19.3 -> 20.5, softmax f32 2097152x4 18.5 ->
 * 18.9) and few rows (softmax f32 3000x3 1.7 -> 2.1, f16 20000x5 2.0 ->
 * 2.5: half the threads) lost.
 * Longer rows, not a multiple of V, up to 32 threads of tile_kmax chunks
 * (CG_RULE_TILE_SHIFT): staged only where the stage holds the row in fewer
 * chunks than the register path's masked class. That class starts at the
 * row's 16-byte boundary, so a row can take one chunk more than its length
 * needs (255 f32: 64 chunks from its first element, 65 from the boundary
 * before it), and a group of a power of two threads then doubles (32
 * threads of 4 chunks, half of them past the row, where the stage takes
 * 16). Measured on the H200 (bench/replay_ab.py, one call, the masked
 * class -> staged, us): logsumexp f32 65536x255 47.3 -> 25.7, layernorm
 * 77.2 -> 45.1, rmsnorm 53.1 -> 40.7, softmax 62.1 -> 39.2, log_softmax
 * 55.1 -> 39.2, layernorm bf16 65536x511 142.2 -> 76.1, rmsnorm bf16 83.3
 * -> 65.6, softmax f16 76.2 -> 64.0, log_softmax bf16 68.9 -> 64.9. Where
 * both hold the row in as many chunks the stage did not gain: softmax f32
 * 32896x509 38.1 -> 46.3, 83886x200 36.4 -> 36.8, 55924x300 40.2 -> 39.8,
 * softmax f16 111848x300 68.3 -> 76.7, layernorm f32 55924x300 41.2 ->
 * 41.2, logsumexp f32 41943x400 22.9 -> 22.9; though layernorm f32
 * 131072x131 82.4 -> 61.1, softmax 64.5 -> 60.4, layernorm f16 131072x257
 * 143.1 -> 130.2 gained (not taken: no rule told them from the others).
 * Since 2026-11-30 the lane class takes many such rows first (lane_rules);
 * the stage keeps them where they are fewer. */
static bool tile_rules(const Sizes *z, Choice *ch)
{
	const struct CgKernelInfo *ki = z->ki;
	int64_t chunks = cdiv(z->n, ki->vec), kmax = ki->tile_kmax;
	bool aligned = z->whole;
	if (ki->ntiles == 0 || kmax == 0 || z->n == 0 || (aligned && (chunks > kmax || chunks > ki->rk)))
		return false;
	int64_t G = chunks <= kmax ? 1 : pow2ceil(cdiv(chunks, kmax)), K = G == 1 ? pow2ceil(chunks) : kmax;
	int64_t R = cg_tile_threads(G == 1) / G;
	bool few = z->rows * G < z->sms * CG_TILE_FILL;
	bool shift = chunks > CG_TILE_CHUNKS; /* longer: only where the stage saves a chunk (above) */
	if (G > 32 || (few && (G > 1 || aligned)) || (shift && G * K >= group_size(z, ki->rk) * ki->rk))
		return false;
	int rowlen = G == 1 ? (int)z->n : 0;
	int rpt = few ? 1 : cg_tile_rpt(rowlen, ki->vec);
	*ch = (Choice){.path = CG_PATH_TILE, .K = (int)K, .G = G, .R = R, .S = 1, .grid = cdiv(z->rows, R * rpt),
	               .rowlen = rowlen, .rpt = rpt,
	               .rule = few ? CG_RULE_TILE_FEW : shift ? CG_RULE_TILE_SHIFT : CG_RULE_TILE};
	return true;
}

/* Rows of a multiple of V that the lane class takes too: f32 (chunks of
 * 4; rows of halves lost, below), longer than the staged rows, where the
 * aligned class's group holds a fifth or more of its chunks past the row
 * (300: 75 chunks in 32 threads of 4). H200, one call, bench/replay_ab.py,
 * medians of three rounds, aligned class -> lane (us): softmax f32
 * 55924x300 39.6 -> 35.1, layernorm 40.7 -> 35.9, rmsnorm 35.6 -> 35.8,
 * softmax 83886x200 35.9 -> 34.4, log_softmax 102300x164 37.9 -> 35.1,
 * logsumexp 41943x400 23.0 -> 19.2; where the group is full, no gain
 * (softmax 65536x256 35.7 -> 35.1, 32768x512 35.5 -> 36.0, 8389x1000
 * 19.1 -> 19.5, layernorm 8389x1000 19.8 -> 20.5), nor at 128 and 96
 * (131072x128 35.8 -> 36.1, 174762x96 35.3 -> 39.4); rows of halves lost
 * everywhere (softmax f16 16777x1000 19.0 -> 21.9, layernorm bf16
 * 16383x1024 20.6 -> 23.3, layernorm f16 111848x304, its group 59% full,
 * 44.0 -> 46.0). */
static bool lane_aligned(const Sizes *z)
{
	if (!cg_lane_aligned_len(z->n, z->ki->vec))
		return false;
	int K = reg_k(z);
	return 5 * z->chunks <= 4 * group_size(z, K) * K;
}

/* Many rows of a few hundred elements, not a multiple of V (past the
 * staged rows' CG_TILE_CHUNKS chunks, or from 65 in kernels of f32 rows
 * that write rows, up to the lane entries' most elements, 1024:
 * CgKernelInfo.lane_lo, lane_hi times CG_LANE_THREADS): the register
 * path's lane class, a warp a row, each thread the fewest elements that
 * hold the row, one at a time (row_reg.c). Hand-written first
 * (bench/lab/lane_rows.cu, H200, bench/cubin_lab.py, one call, us, medians
 * of three rounds; torch.compile, fusec's masked class or stage, the lane
 * kernel): softmax f32 131072x131 37.1, 63.6, 36.8; layernorm f32
 * 131072x131 39.9, 81.2, 37.6; 55924x300 35.8, 40.8, 36.1; softmax f32
 * 55924x300 35.4, 39.4, 35.1; 32833x511 38.5, 47.8, 35.3; layernorm f32
 * 32833x511 37.5, 52.3, 35.7; layernorm f16 131072x257 63.8, 142.0, 57.5;
 * 65536x511 52.3, 76.9, 55.8; softmax f16 65536x511 44.0, 64.0, 46.7; bf16
 * 65536x506 41.0, 62.9, 46.6; layernorm bf16 65536x511 52.1, 77.0, 57.1. 8
 * elements a thread for rows of 131 (half of them past the row) took 40.6,
 * 16 threads of 9 36.7, a grid of resident blocks looping over the rows
 * 45.2. Few rows keep the
 * masked class, whose group grows to fill the device. The lane entries,
 * main -> lane (bench/replay_ab.py, same call as the sweep beside
 * torch.compile): softmax f32 131072x131 64.4 -> 39.4, layernorm f32 81.5
 * -> 41.5, softmax f32 32833x511 47.5 -> 35.7, layernorm f16 131072x257
 * 141.9 -> 48.7, softmax f16 65536x511 63.7 -> 42.1, masked_softmax f16
 * 4x16x1024x511 78.0 -> 48.1 (26 points, 0.34-0.95x; docs/performance.md,
 * "Rows of a few hundred elements, not aligned: a warp a row"). Then
 * widened (H200, one call, the same tool, main -> lane, medians): to rows
 * of 513 to 1024, 17 to 32 elements a thread (softmax f32 16350x513 34.4
 * -> 19.8, 8381x1001 21.0 -> 19.9, logsumexp f32 16744x1001 27.4 -> 18.9,
 * layernorm f32 8380x1001 26.7 -> 21.2, bf16 16760x1001 42.3 -> 24.6, bf16
 * 32700x513 72.3 -> 25.2, masked_softmax f16 4x16x256x999 42.3 -> 24.4:
 * 14 points, all faster), and down to rows of 65 f32, 3 and 4 elements a
 * thread, in place of the stage, in kernels that write rows (layernorm f32
 * 66052x127 25.7 -> 20.5, 90200x93 27.3 -> 22.2, softmax 66053x127 24.2 ->
 * 19.9, 90200x93 23.9 -> 22.0, rmsnorm 120000x67 25.5 -> 22.6; 9 points,
 * all faster), not in those that write only a value a row (logsumexp f32
 * 132105x127 26.4 -> 27.6, 180000x93 30.0 -> 33.4); docs/performance.md,
 * "Rows of 65 to 1024". Checked before the stage's rules, which it
 * replaces where both apply. */
static bool lane_rules(const Sizes *z, Choice *ch)
{
	const struct CgKernelInfo *ki = z->ki;
	int64_t K = cdiv(z->n, CG_LANE_THREADS);
	if (ki->lane_lo == 0 || (z->whole && !lane_aligned(z)) || K < ki->lane_lo || K > ki->lane_hi ||
	    z->rows * CG_LANE_THREADS < z->sms * z->tps / 2)
		return false;
	*ch = (Choice){.path = CG_PATH_REG, .lane = true, .K = (int)K, .G = CG_LANE_THREADS, .R = CG_LANE_ROWS,
	               .S = 1, .grid = cdiv(z->rows, CG_LANE_ROWS), .rule = CG_RULE_REG_LANE};
	return true;
}

/* Rows of one element: every reduction is its one value, so the kernel is
 * pointwise over its rows (its `_one` entry), and launched as one. Measured
 * on the H200 against the staged rows (TILE), which at n = 1 hold one
 * element in a chunk of V: docs/performance.md, "Rows of one element". */
static bool one_rules(const Sizes *z, Choice *ch)
{
	if (!z->ki->one || z->n != 1)
		return false;
	launch_pointwise_rules(z->ki, z->rows, ch);
	ch->rule = CG_RULE_ONE;
	return true;
}

void launch_row_rules(const Sizes *z, Choice *ch)
{
	const struct CgKernelInfo *ki = z->ki;
	int K = reg_k(z);
	if (one_rules(z, ch) || lane_rules(z, ch) || (K == ki->rk && tile_rules(z, ch)))
		return;
	int64_t G = group_size(z, K);
	bool few = z->rows * G < z->sms * z->tps / 2 && z->chunks >= 4 * (int64_t)z->tmax;
	CgRule rule = launch_reg_rule(z, G);
	bool reg = rule == CG_RULE_REG || rule == CG_RULE_REG_MASKED;
	if (reg && wide_rule(z, G)) {
		reg = false;
		rule = CG_RULE_ROW_WIDE;
		G = min64(launch_whole_warps(cdiv(z->chunks, 8)), z->tmax);
	} else if (rule == CG_RULE_ROW_LONG) {
		G = long_group(z);
	}
	int64_t cb = reg ? 0 : cg_cache_layout(ki, seg_len(z->n, 1, ki->vec), NULL);
	G = widen(z, G, cb);
	bool too_long = ki->nslots > 0 && cb > z->optin;
	if (ki->npasses > 1 && (few || too_long) && split_rules(z, few, ch))
		return;
	if (too_long) {
		global_rules(z, ch);
		return;
	}
	/* whole warps (shuffles name all 32 lanes): 32 to 128 threads of
	 * G-thread groups; groups past the last row idle */
	int64_t R = G <= 32 ? (line_rule(z) ? CG_LINE_BLOCK : 128) / G : 1;
	while (G * R > 32 && cb * R > z->optin)
		R /= 2;
	if (cb * R > z->optin) { /* a warp's rows (short, but many values cached) do not fit */
		global_rules(z, ch);
		return;
	}
	bool line = reg && rule == CG_RULE_REG && line_rule(z);
	*ch = (Choice){.path = reg ? CG_PATH_REG : CG_PATH_ROW, .masked = reg ? rule == CG_RULE_REG_MASKED : launch_row_masked(z),
	               .hold = reg && K == ki->rk && hold_rule(z, G), .line = line, .K = reg ? K : 0,
	               .cache = CG_CACHE_SHARED, .G = G, .R = R, .S = 1,
	               .grid = cdiv(z->rows, R), .rule = line ? CG_RULE_REG_LINE : rule};
	if (reg && !line && reg_pf_bytes(ki, ch->masked) > 0)
		prefetch_grid(z, ch);
}

