/*
 * launch.c: how to launch a kernel for given sizes on a given device.
 *
 * Pointwise: 256 threads a block, each taking V-element chunks in a
 * grid-stride loop: a block per 256 chunks for light kernels, no more blocks
 * than fill the device once for long math (launch_pointwise says why).
 *
 * Rows (one entry, schedules by geometry; see cg.h and row.c):
 *   - threads per row G: about 8 chunks (of V elements) a thread, a power of
 *     two up to the entry's limit, raised while the rows leave most of the
 *     device idle;
 *   - warp (G <= 32): 128 / G rows a block, reductions by shuffles only;
 *     block (G >= 64): a block a row;
 *   - the row cache in dynamic shared memory whenever the kernel has values
 *     to carry between passes and the row fits (up to the opt-in limit);
 *   - split (S blocks a row, cooperative, persistent: at most as many blocks
 *     as are sure to be resident) when rows are too few to fill the device
 *     and long enough to share, or too long to cache in one block's shared
 *     memory: each block caches its segment, in shared memory when it fits;
 *   - loop (a block a row, as many blocks as are resident, each with its row
 *     cache in the workspace) when even a split row would not fit, or split
 *     with the segments' caches in the workspace when rows are few.
 * Rows whose length is a multiple of V and at most 16 elements a thread of
 * the group (rk chunks) are held in registers (row.c's fz_reg): the group
 * is sized for them, and the shared memory is the prefetch buffer, where a
 * block's next row arrives while it computes one (so the grid is at most
 * the blocks resident at once, each looping over rows).
 * The shared-memory sizes follow the kernel's own formula (row.c), so the
 * kernel turns its cache on exactly when cg_launch gave it enough.
 */
#include "codegen/cgint.h"

#include <limits.h>
#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

static int64_t pow2ceil(int64_t x)
{
	int64_t p = 1;
	while (p < x && p < ((int64_t)1 << 40))
		p <<= 1;
	return p;
}

static int64_t dim_value(const Kernel *k, int ax, const int64_t *dims)
{
	Dim d = k->domain[ax];
	return dim_is_sym(d) ? dims[dim_sym(d)] : d;
}

/* Bytes of the row cache for a segment of `len` elements (row.c's formula). */
static int64_t cache_bytes(const struct CgKernelInfo *ki, int64_t len)
{
	int64_t lp = cdiv(len, ki->vec) * ki->vec, b = 0;
	for (int s = 0; s < ki->nslots; s++)
		b += cdiv(lp * ki->slot_bytes[s], 16) * 16;
	return b;
}

static int64_t seg_len(int64_t n, int64_t S, int vec)
{
	return S <= 1 ? n : cdiv(cdiv(n, S), vec) * vec;
}

static void launch_pointwise(const struct CgKernelInfo *ki, int64_t n, const CgDevice *dev, CgLaunch *out)
{
	int64_t chunks = cdiv(n, ki->vec);
	int64_t block = chunks < 256 ? cdiv(chunks, 32) * 32 : 256;
	int64_t tps = dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm : 2048;
	int64_t resident = (int64_t)(dev->sm_count > 0 ? dev->sm_count : 1) * (tps / 256 > 0 ? tps / 256 : 1);
	int64_t grid = cdiv(chunks, block);
	/* Long math (gelu's tanhf): one resident wave, each thread looping
	 * over chunks, amortises a thread's setup (H200, gelu_tanh 64Mi: 147 us
	 * against 153 with a block a 256 chunks). Light kernels: a block per
	 * 256 chunks, which the hardware hands out as SMs free up
	 * (add_scale_bias_relu 64Mi: 244 us against 254). */
	if (ki->heavy && grid > resident) {
		grid = resident;
		out->resident = true;
	}
	out->grid[0] = (unsigned)(grid < INT_MAX ? grid : INT_MAX);
	out->block[0] = (unsigned)block;
	out->schedule = CG_SCHED_POINTWISE;
}

typedef struct RowSizes {
	int64_t rows, n, chunks;
	int64_t sms, tps, optin, smem_sm;
	int tmax;
} RowSizes;

/* The workspace (row.c's layout, in 8-byte words): a counter per row group,
 * two sets of partial results per group, then (16-byte aligned) the row
 * caches of every group when they are not in shared memory. */
static void set_workspace(const struct CgKernelInfo *ki, int64_t gx, int64_t S, int64_t R, int64_t cache, CgLaunch *out)
{
	int64_t words = (gx + gx * 2 * S * (ki->nred > 0 ? ki->nred : 1) + 1) / 2 * 2;
	out->workspace = S > 1 || cache > 0 ? words * 8 + gx * S * R * cache : 0;
}

/* Split rows over S blocks each (cooperative). false if not worth it. */
static bool launch_split(const struct CgKernelInfo *ki, const RowSizes *z, bool few, CgLaunch *out)
{
	int64_t T = ki->max_threads < 512 ? ki->max_threads : 512;
	/* blocks sure to be resident: threads, and registers (the entry is
	 * compiled for max_threads threads, so T-thread blocks fit that many) */
	int64_t bps = z->tps / T < ki->max_threads / T ? z->tps / T : ki->max_threads / T;
	if (bps < 1)
		bps = 1;
	int64_t budget = z->smem_sm / bps - 1024;
	if (budget > z->optin)
		budget = z->optin;
	int64_t cap = z->sms * bps;
	int64_t S = 1;
	if (few)
		S = cdiv(cap, z->rows);
	int64_t most = cdiv(z->chunks, 2 * T); /* at least two chunks a thread */
	if (S > most)
		S = most;
	if (ki->nslots > 0)
		while (S < cap && cache_bytes(ki, seg_len(z->n, S, ki->vec)) > budget)
			S++;
	if (S > cap)
		S = cap;
	if (S > 65535)
		S = 65535;
	int64_t cb = cache_bytes(ki, seg_len(z->n, S, ki->vec));
	/* many rows too long for a block: split if the device's shared memory
	 * can hold one (else the loop schedule, a row a block with its cache in
	 * global memory) */
	if (S < 2 || (!few && cb > budget))
		return false;
	int64_t gx = cap / S < z->rows ? cap / S : z->rows;
	out->grid[0] = (unsigned)gx;
	out->grid[1] = (unsigned)S;
	out->block[0] = (unsigned)T;
	out->smem = cb <= budget ? (unsigned)cb : 0;
	set_workspace(ki, gx, S, 1, out->smem ? 0 : cb, out);
	out->workspace_zero = gx * 8; /* the counters */
	out->cooperative = true;
	out->schedule = CG_SCHED_SPLIT;
	return true;
}

static bool launch_row(const struct CgKernelInfo *ki, const Kernel *k, const int64_t *dims, const CgDevice *dev,
                       CgLaunch *out)
{
	RowSizes z;
	z.rows = 1;
	for (int ax = 0; ax + 1 < k->rank; ax++)
		z.rows *= dim_value(k, ax, dims);
	z.n = dim_value(k, k->rank - 1, dims);
	if (z.rows == 0 || (z.n == 0 && !ki->rowc_store)) {
		out->empty = true;
		return true;
	}
	z.chunks = cdiv(z.n, ki->vec);
	z.sms = dev->sm_count > 0 ? dev->sm_count : 1;
	z.tps = dev->max_threads_per_sm >= 1024 ? dev->max_threads_per_sm : 1024;
	z.optin = dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin : 48 << 10;
	z.smem_sm = z.optin + 1024;
	z.tmax = ki->max_threads > 0 ? ki->max_threads : 512;

	/* about 8 chunks a thread, or as many as the register path holds */
	int64_t G = pow2ceil(cdiv(z.chunks, ki->rk > 0 ? ki->rk : 8));
	if (G > z.tmax)
		G = z.tmax;
	while (G < z.tmax && G < z.chunks && z.rows * G < z.sms * z.tps / 2)
		G *= 2;
	bool few = z.rows * G < z.sms * z.tps / 2 && z.chunks >= 4 * (int64_t)z.tmax;
	/* the row in registers (the kernel's fz_reg): no row cache, but the
	 * prefetch buffer for the next row (pf_bytes a thread of the block) */
	int64_t pf = ki->pf_bytes * (G <= 32 ? 128 : G);
	bool reg = ki->rk > 0 && z.n % ki->vec == 0 && z.n <= G * ki->rk * ki->vec && pf <= z.optin;
	int64_t cb = reg ? 0 : cache_bytes(ki, z.n);
	/* where the row cache limits the blocks an SM holds, spread a row over
	 * more threads: at least 1024 threads an SM keep enough loads in flight */
	while (G >= 32 && G < z.tmax && 2 * G <= z.chunks && cb > 0 && cb <= z.optin &&
	       z.smem_sm / (cb * (G == 32 ? 4 : 1) + 1024) * (G == 32 ? 128 : G) < 1024)
		G *= 2;
	bool too_long = ki->nslots > 0 && cb > z.optin;
	if (ki->npasses > 1 && (few || too_long) && launch_split(ki, &z, few, out))
		return true;
	if (too_long) { /* loop: a block a row, the row cache in the workspace */
		int64_t bps = z.tps / z.tmax > 0 ? z.tps / z.tmax : 1;
		int64_t gx = z.sms * bps < z.rows ? z.sms * bps : z.rows;
		while (gx > 1 && gx * cb > ((int64_t)1 << 30)) /* at most 1 GiB of cache */
			gx /= 2;
		out->block[0] = (unsigned)z.tmax;
		out->grid[0] = (unsigned)gx;
		set_workspace(ki, gx, 1, 1, cb, out);
		out->schedule = CG_SCHED_LOOP;
		return true;
	}
	/* whole warps (shuffles name all 32 lanes): 32 to 128 threads of
	 * G-thread groups; groups past the last row idle */
	int64_t R = G <= 32 ? 128 / G : 1;
	while (G * R > 32 && cb * R > z.optin)
		R /= 2;
	int64_t grid = cdiv(z.rows, R);
	if (reg && pf > 0) {
		/* prefetching: blocks loop over rows, as many as threads and
		 * shared memory let an SM hold (the runtime cuts that to what
		 * the entry's registers allow: `resident`) */
		int64_t T = G * R, bps = z.tps / T;
		if (z.smem_sm / (pf + 1024) < bps)
			bps = z.smem_sm / (pf + 1024);
		if (bps > 32)
			bps = 32;
		if (bps < 1)
			bps = 1;
		if (grid > z.sms * bps)
			grid = z.sms * bps;
		out->resident = true;
	}
	out->block[0] = (unsigned)G;
	out->block[1] = (unsigned)R;
	out->grid[0] = (unsigned)(grid < INT_MAX ? grid : INT_MAX);
	out->smem = (unsigned)(reg ? pf : cb * R);
	out->schedule = G <= 32 ? CG_SCHED_WARP : CG_SCHED_BLOCK;
	return true;
}

bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev, CgLaunch *out)
{
	memset(out, 0, sizeof *out);
	if (!m || !p || !dev || k < 0 || k >= p->nkernels || !m->kinfo || k >= m->nkernels)
		return false;
	const Kernel *kn = &p->kernels[k];
	const struct CgKernelInfo *ki = &m->kinfo[k];
	out->entry = ki->entry;
	for (int i = 0; i < 3; i++)
		out->grid[i] = out->block[i] = 1;
	for (int ax = 0; ax < kn->rank; ax++)
		if (dim_value(kn, ax, dims) < 0)
			return false;
	int64_t n;
	if (!ir_numel(kn->rank, kn->domain, dims, &n))
		return false;
	if (kn->kind == KERNEL_POINTWISE) {
		if (n == 0) {
			out->empty = true;
			return true;
		}
		launch_pointwise(ki, n, dev, out);
		return true;
	}
	return launch_row(ki, kn, dims, dev, out);
}
