/*
 * launch.c: how to launch a kernel for given sizes on a given device.
 *
 * Two steps. The rules (launch_rules.c) choose a path and its geometry:
 * threads a row G, rows a block R, blocks a row S, the grid, where the row
 * cache lives. Then complete() derives everything
 * else from that choice, and is the only place that does: the entry, a
 * split row's segment, the row cache's layout (cg_cache_layout), the
 * shared memory, the workspace's layout and size, and the values the
 * kernel receives for them (cg_launch_arg). Tests force a path and a
 * geometry through the same complete() (cg_launch_forced), so what a test
 * launches is what the runtime would.
 *
 * The rules, with the measurements behind them in docs/performance.md:
 *
 * Pointwise: a thread a chunk of V elements, 256 a block, a block per 256
 * chunks (the kernel's element loop takes what a smaller grid leaves).
 *
 * Rows:
 *   - TILE first: many rows of at most CG_TILE_CHUNKS chunks, not a
 *     multiple of V (and few such rows that a thread holds), 64 threads a
 *     block (256 where a thread takes a row: cg_tile_threads), a row in
 *     the registers of one thread of the fewest chunks (K = 1, 2, 4; for
 *     halves 1, 2), which reads its row from global memory and stages only
 *     its outputs (the direct entries; rows of one chunk up to
 *     CG_TILE_UNSTAGED_MAX elements, and of one vector, stage nothing), or
 *     of the fewest threads of the most, the block's rows staged through
 *     shared memory both ways;
 *   - threads per row G: about 8 chunks a thread (as many as the register
 *     path holds, rk, where it applies), up to the entries' thread bound,
 *     raised while the rows leave most of the device idle; G <= 32 a power
 *     of two taking 128 / G rows a block (shuffles only), a larger G whole
 *     warps, a block a row;
 *   - REG, the row in registers, for rows of at most rk chunks a thread of
 *     the group (and, where the class prefetches, a buffer that fits; and
 *     at most 512 threads where the row cache's first pass would copy the
 *     row, with more rows than SMs: wide_rule): no
 *     row cache; with prefetch, as many blocks as are resident, each looping
 *     over rows. Rows of a multiple of V take the class `_reg<K>`, others
 *     the masked class `_reg<K>m`, whose chunks start at the row's alignment
 *     (a row then touches up to cdiv(n + V - 1, V) chunks), and where it
 *     keeps column operands in slots its resident grid is a multiple of
 *     CG_SLOT_GRID (prefetch_grid); the aligned
 *     class of some kernels of halves does not prefetch (reg_pf_bytes);
 *     in lean kernels whose later passes read column operands, the aligned
 *     class holds them from pass 0 (`_reg<K>h`) where a group is at most
 *     256 threads: hold_rule; short rows of halves that the aligned class
 *     prefetches, 2 to 8 chunks, take 2 chunks a thread (1 at 2 chunks:
 *     `_reg2`, `_reg1`), twice the threads: reg_k; many rows of one or two
 *     128-byte lines in kernels that read their rows and at most one column
 *     operand take the line entries (`_line<K>`, no prefetch): 8 threads a
 *     row, each a chunk of every line (16 of a chunk for two lines of
 *     halves): line_rule;
 *   - ROW otherwise: the row cache in dynamic shared memory when the kernel
 *     carries values between passes and the row's fit (up to the opt-in
 *     limit; at most 512 threads a row where the rows outnumber the SMs,
 *     long_group; where the cache limits the blocks an SM holds, more
 *     threads a row);
 *     many rows too long for that: a block a row, as many blocks as are
 *     resident, each with its row cache in the workspace; rows of a
 *     multiple of V take its aligned class (`_rowa`: row_masked);
 *   - SPLIT (S blocks a row, cooperative, at most as many blocks as are sure
 *     to be resident) when rows are too few to fill the device and long
 *     enough to share, or too long to cache in one block's shared memory:
 *     each block caches its segment, in shared memory when it fits.
 *
 * Shared memory is counted as the hardware does: a block's dynamic bytes
 * plus its static ones (the entry's fz_red) within the opt-in limit, and in
 * an SM's, each resident block with the system's reserve beside it.
 */
#include "codegen/launchint.h"

#include <limits.h>
#include <string.h>

static int64_t dim_value(const Kernel *k, int ax, const int64_t *dims)
{
	Dim d = k->domain[ax];
	return dim_is_sym(d) ? dims[dim_sym(d)] : d;
}

/* Bytes of slot s of a row cache of `len` elements, 16-byte aligned. */
static int64_t slot_size(const struct CgKernelInfo *ki, int64_t len, int s)
{
	return cdiv(cdiv(len, ki->vec) * ki->vec * ki->slot_bytes[s], 16) * 16;
}

int64_t cg_cache_layout(const struct CgKernelInfo *ki, int64_t len, int64_t *slot_off)
{
	int64_t b = 0;
	for (int s = 0; s < ki->nslots; s++) {
		if (slot_off)
			slot_off[s] = b;
		b += slot_size(ki, len, s);
	}
	return b;
}

bool cg_tile_staged(const struct CgKernelInfo *ki, bool direct, bool unstaged, int t)
{
	return !(direct && (unstaged || ki->tile_in[t]));
}

bool cg_tile_outputs(const struct CgKernelInfo *ki)
{
	for (int t = 0; t < ki->ntiles; t++)
		if (!ki->tile_in[t])
			return true;
	return false;
}

bool cg_tile_span(const struct CgKernelInfo *ki, int rowlen, int rpt)
{
	if (rpt < 2)
		return false;
	for (int t = 0; t < ki->ntiles; t++) {
		int b = rpt * rowlen * ki->tile_bytes[t];
		if (b % 16 != 0 && (b > 16 || (b & (b - 1)) != 0))
			return false;
	}
	return true;
}

/* Bytes of tile t of a block of R rows of n that entry e stages (TILE): it
 * holds the rows' span from its alignment boundary (up to V - 1 elements
 * before it), and fz_tld reads whole chunks, up to V - 1 elements past the
 * last row's end: R * n + 2V elements, 16-byte aligned; 0 where e does not
 * stage it. */
static int64_t tile_size(const struct CgKernelInfo *ki, const CgEntry *e, int64_t R, int64_t n, int t)
{
	if (!cg_tile_staged(ki, e->direct, e->unstaged, t))
		return 0;
	return cdiv((R * n + 2 * ki->vec) * ki->tile_bytes[t], 16) * 16;
}

/* The tiles entry e stages, one after another, their offsets into *off. */
int64_t cg_tile_layout(const struct CgKernelInfo *ki, const CgEntry *e, int64_t R, int64_t n, int64_t *off)
{
	int64_t b = 0;
	for (int t = 0; t < ki->ntiles; t++) {
		if (off)
			off[t] = b;
		b += tile_size(ki, e, R, n, t);
	}
	return b;
}

/* Chunks a row touches: n / V where the rows are whole vectors at aligned
 * addresses, else up to one more, counted from the 16-byte boundary before
 * the row. */
static int64_t row_chunks(int64_t n, int vec, bool whole) { return whole ? n / vec : cdiv(n + vec - 1, vec); }

/* What the rules see of launch l (start() has its rows and n) on dev, its
 * buffers aligned or not (cg_launch's `aligned`, recorded in l). */
static Sizes sizes(const struct CgKernelInfo *ki, const CgDevice *dev, CgLaunch *l, bool aligned)
{
	Sizes z = {.ki = ki, .rows = l->rows, .n = l->n};
	z.whole = z.n % ki->vec == 0 && aligned;
	z.chunks = row_chunks(z.n, ki->vec, z.whole);
	l->aligned = aligned;
	int optin = dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin : 48 << 10;
	int reserved = dev->smem_reserved_per_block > 0 ? dev->smem_reserved_per_block : 0;
	z.sms = dev->sm_count > 0 ? dev->sm_count : 1;
	z.tps = dev->max_threads_per_sm >= 1024 ? dev->max_threads_per_sm : 1024;
	z.optin = optin - ki->static_smem;
	z.smem_sm = dev->smem_per_sm > 0 ? dev->smem_per_sm : optin + reserved;
	z.per_block = ki->static_smem + reserved;
	z.tmax = ki->max_threads > 0 ? ki->max_threads : 512;
	z.l2 = dev->l2_bytes > 0 ? dev->l2_bytes : 0;
	return z;
}

/* ---- the choice ------------------------------------------------------------------------ */

static int find_entry(const CgModule *m, int k, const Choice *ch, int K)
{
	const struct CgKernelInfo *ki = &m->kinfo[k];
	CgPath path = ch->path;
	for (int e = ki->first_entry; e < ki->first_entry + ki->nentries; e++) {
		const CgEntry *en = &m->entries[e];
		bool cls = path == CG_PATH_REG     ? en->K == K && en->masked == ch->masked && en->hold == ch->hold
		                                         && en->lane == ch->lane && en->line == ch->line
		           : path == CG_PATH_TILE  ? en->K == K && en->direct == (ch->G == 1) /* a thread a row */
		                                         && en->rowlen == ch->rowlen && en->rpt == ch->rpt
		           : path == CG_PATH_SPLIT ? en->stream == ch->stream
		           : path == CG_PATH_ROW   ? en->masked == ch->masked
		                                   : true;
		if (en->path == path && cls)
			return e;
	}
	return -1;
}

/* The workspace of a row launch: split rows' counters (one per row group,
 * zeroed before the launch) and two sets of partial results per group, then
 * (16-byte aligned) the row caches of every group when they are not in
 * shared memory. */
static void row_workspace(const struct CgKernelInfo *ki, const Choice *ch, CgLaunch *out)
{
	int64_t gx = ch->grid, words = 0;
	if (ch->path == CG_PATH_SPLIT) {
		words = (gx + gx * 2 * ch->S * (ki->nred > 0 ? ki->nred : 1) + 1) / 2 * 2;
		out->partials = gx;
		out->workspace_zero = gx * 8;
	}
	out->cws = out->cache == CG_CACHE_GLOBAL ? words * 8 : -1;
	out->workspace = words * 8 + (out->cache == CG_CACHE_GLOBAL ? gx * ch->S * ch->R * out->cstride : 0);
}

/* Whether the launch marks its inputs streaming in the L2 (runtime/launch.c
 * sets the window): a row kernel's inputs, read once, then give way before
 * what it writes, which the next kernel reads. Measured on an H200, each
 * sweep point with and without (docs/performance.md, "An L2 window on row
 * kernels"): row kernels up to 9% faster, except the split rows without a
 * row cache, whose every pass reads the inputs again from the L2 (up to 6%
 * slower); pointwise kernels not faster. */
static bool l2_stream(const struct CgKernelInfo *ki, const Choice *ch)
{
	return ki->kind == KERNEL_ROW && !(ch->stream && ki->nslots > 0);
}

/* Everything a launch is, from the choice of path and geometry. false if
 * the kernel has no such path or the path cannot run it so. */
static bool complete(const CgModule *m, int k, const Sizes *z, const Choice *ch, CgLaunch *out)
{
	const struct CgKernelInfo *ki = z->ki;
	int K = ch->path == CG_PATH_TILE || (ch->path == CG_PATH_REG && ch->K > 0) ? ch->K : ki->rk;
	out->entry = find_entry(m, k, ch, K);
	out->path = ch->path;
	out->rule = ch->rule;
	out->resident = ch->resident;
	out->grid_step = ch->resident ? slot_step(ki, ch->masked) : 1;
	out->l2_stream = l2_stream(ki, ch);
	out->grid[0] = (unsigned)min64(ch->grid, INT_MAX);
	out->grid[1] = (unsigned)ch->S;
	out->block[0] = (unsigned)ch->G;
	out->block[1] = (unsigned)ch->R;
	out->cws = -1;
	if (out->entry < 0)
		return false;
	if (ch->path == CG_PATH_POINTWISE)
		return true;
	out->seg = seg_len(z->n, ch->S, ki->vec);
	if (ch->path == CG_PATH_REG) {
		int64_t pf = ch->lane || ch->line ? 0 : reg_pf_bytes(ki, ch->masked); /* the line entries load directly */
		out->smem = (unsigned)(pf * ch->G * ch->R);
		return pf * ch->G * ch->R <= z->optin;
	}
	if (ch->path == CG_PATH_TILE) { /* the tiles (the rows in registers, no cache) */
		const CgEntry *e = &m->entries[out->entry];
		out->tiles = cg_tile_layout(ki, e, ch->R, z->n, NULL);
		out->smem = (unsigned)min64(out->tiles, UINT_MAX);
		return out->tiles <= z->optin && cdiv(z->n, ki->vec) <= ch->G * ch->K;
	}
	out->cache = ki->nslots > 0 && !ch->stream ? ch->cache : CG_CACHE_NONE;
	out->cstride = ch->stream ? 0 : cg_cache_layout(ki, out->seg, NULL);
	out->cooperative = ch->path == CG_PATH_SPLIT;
	if (out->cache == CG_CACHE_SHARED)
		out->smem = (unsigned)min64(out->cstride * ch->R, UINT_MAX);
	if (ch->stream) /* its ring (row_ring.c) */
		out->smem = (unsigned)(ki->ring_bytes * ch->G * ch->R);
	row_workspace(ki, ch, out);
	return out->cstride * (out->cache == CG_CACHE_SHARED ? ch->R : 0) <= z->optin && (int64_t)out->smem <= z->optin;
}

/* ---- entry points ------------------------------------------------------------------ */

/* The common start: checks, sizes, and empty launches. 1: go on, 0: done
 * (empty), -1: cannot launch. */
static int start(const CgModule *m, const Plan *p, int k, const int64_t *dims, CgLaunch *out, int64_t *numel)
{
	memset(out, 0, sizeof *out);
	out->cws = -1;
	for (int i = 0; i < 3; i++)
		out->grid[i] = out->block[i] = 1;
	if (!m || !p || k < 0 || k >= p->nkernels || !m->kinfo || k >= m->nkernels)
		return -1;
	const Kernel *kn = &p->kernels[k];
	for (int ax = 0; ax < kn->rank; ax++)
		if ((out->dom[ax] = dim_value(kn, ax, dims)) < 0)
			return -1;
	if (!ir_numel(kn->rank, kn->domain, dims, numel))
		return -1;
	out->entry = m->kinfo[k].first_entry;
	out->path = m->entries[out->entry].path;
	if (kn->kind == KERNEL_ROW) {
		out->rows = 1;
		for (int ax = 0; ax + 1 < kn->rank; ax++)
			out->rows *= dim_value(kn, ax, dims);
		out->n = dim_value(kn, kn->rank - 1, dims);
		out->empty = out->rows == 0 || (out->n == 0 && !m->kinfo[k].rowc_store);
	} else {
		out->empty = *numel == 0;
	}
	return out->empty ? 0 : 1;
}

bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, bool aligned, const CgDevice *dev,
               CgLaunch *out)
{
	int64_t numel;
	int s = start(m, p, k, dims, out, &numel);
	if (s <= 0 || !dev)
		return s == 0;
	const struct CgKernelInfo *ki = &m->kinfo[k];
	Sizes z = sizes(ki, dev, out, aligned);
	Choice ch;
	if (ki->kind == KERNEL_POINTWISE)
		launch_pointwise_rules(ki, numel, &ch);
	else
		launch_row_rules(&z, &ch);
	CgLaunch l = *out;
	return complete(m, k, &z, &ch, &l) && (*out = l, true);
}

bool cg_launch_forced(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev,
                      const CgForce *f, CgLaunch *out)
{
	int64_t numel;
	int s = start(m, p, k, dims, out, &numel);
	if (s <= 0 || !dev)
		return s == 0;
	const struct CgKernelInfo *ki = &m->kinfo[k];
	Sizes z = sizes(ki, dev, out, !f->unaligned);
	if (f->masked) /* the masked class's chunks even where the rows are whole */
		z.chunks = row_chunks(z.n, ki->vec, false);
	bool masked = f->path == CG_PATH_ROW ? launch_row_masked(&z) : !z.whole;
	bool line = f->path == CG_PATH_REG && f->line;
	Choice ch = {.path = f->path, .masked = f->masked || masked, .hold = f->hold, .line = line, .stream = f->stream,
	             .K = f->K, .cache = f->global ? CG_CACHE_GLOBAL : CG_CACHE_SHARED, .G = f->threads,
	             .R = f->rows > 0 ? f->rows : 1, .S = f->splits > 0 ? f->splits : 1, .grid = f->grid, .rpt = 1,
	             .rule = CG_RULE_FORCED};
	if (f->path == CG_PATH_TILE && f->threads == 1) /* a thread a row: the entry of the row's length */
		ch.rowlen = z.n <= CG_TILE_CHUNKS * ki->vec ? (int)z.n : 0;
	bool warps = ch.G > 32 ? ch.R == 1 : ch.G * ch.R % 32 == 0; /* fz_reduce's geometry */
	int bound = f->hold ? CG_HOLD_THREADS : line ? CG_LINE_BLOCK : ki->max_threads;
	bool ok = ch.G > 0 && launch_whole_warps(ch.G) == ch.G && warps && ch.G * ch.R <= bound && ch.grid > 0;
	if (line && cg_line_group(ki, f->K)) /* its reductions' group: CG_LINE_THREADS, or 16 (cg_line_wide) */
		ok = ok && (ch.G == CG_LINE_THREADS || (cg_line_wide(ki) && ch.G == 2 * CG_LINE_THREADS));
	if (f->path == CG_PATH_REG && f->lane) { /* a warp a row, the entry of its K (row_reg.c's fz_mk) */
		ch.masked = false;
		ch.lane = true;
		ch.K = (int)min64(cdiv(z.n, CG_LANE_THREADS), INT_MAX);
		ok = ok && ch.G == CG_LANE_THREADS && (f->K == 0 || f->K == ch.K) && ki->lane_lo > 0 &&
		     ch.K >= ki->lane_lo && ch.K <= ki->lane_hi;
	} else if (f->path == CG_PATH_REG) {
		CgRule r = launch_reg_rule(&z, ch.G);
		ok = ok && (r == CG_RULE_REG || r == CG_RULE_REG_MASKED) && (f->K == 0 || z.chunks <= ch.G * f->K);
	}
	if (f->path != CG_PATH_SPLIT)
		ok = ok && ch.S == 1;
	CgLaunch l = *out;
	/* a row kernel's pointwise entry takes rows of one element only */
	bool kind = f->path != CG_PATH_POINTWISE ? ki->kind == KERNEL_ROW
	                                         : ki->kind == KERNEL_POINTWISE || (ki->one && z.n == 1);
	return ok && kind && complete(m, k, &z, &ch, &l) && (*out = l, true);
}

int64_t cg_launch_arg(const CgModule *m, int k, const CgLaunch *l, const CgArg *a)
{
	switch (a->kind) {
	case CGARG_SEG: return l->seg;
	case CGARG_CSTRIDE: return l->cstride;
	case CGARG_CWS: return l->cws;
	case CGARG_PARTIALS: return l->partials;
	case CGARG_SLOT: {
		const struct CgKernelInfo *ki = &m->kinfo[k]; /* cg_cache_layout's offset of slot a->index */
		int64_t off = 0;
		for (int s = 0; s < a->index && s < ki->nslots; s++)
			off += slot_size(ki, l->seg, s);
		return off;
	}
	case CGARG_TILE: { /* cg_tile_layout's offset of this parameter's tile */
		const struct CgKernelInfo *ki = &m->kinfo[k];
		int64_t off = 0;
		for (int t = 0; t < ki->ntiles && ki->tile_param[t] != a->index; t++)
			off += tile_size(ki, &m->entries[l->entry], l->block[1], l->n, t);
		return off;
	}
	case CGARG_DIVMAGIC: {
		int lo = a->index / CG_DIV_AXES, hi = a->index % CG_DIV_AXES;
		int64_t d = 1; /* saturated past 2^31, where there is no magic either way */
		for (int ax = lo; ax < hi && ax < FZ_MAX_RANK && d > 0; ax++)
			d = l->dom[ax] <= 0 ? 0 : d > INT32_MAX / l->dom[ax] ? INT64_MAX : d * l->dom[ax];
		return (int64_t)cg_div_magic(d);
	}
	case CGARG_PARAM:
	case CGARG_WORKSPACE: break;
	}
	return -1; /* not a value of the launch plan */
}

uint64_t cg_div_magic(int64_t d)
{
	if (d <= 1 || d > INT32_MAX)
		return 0;
	int l = 0; /* ceil(log2(d)) */
	while ((1LL << l) < d)
		l++;
	int p = 31 + l; /* 32 .. 62 */
	uint64_t m = ((1ULL << p) + (uint64_t)d - 1) / (uint64_t)d;
	return m | (uint64_t)(p - 32) << 32;
}

/* ---- when each entry is chosen ------------------------------------------------------- */

const char *cg_entry_when(const CgModule *m, const CgEntry *e, Arena *a)
{
	const struct CgKernelInfo *ki = &m->kinfo[e->kernel];
	int V = ki->vec;
	switch (e->path) {
	case CG_PATH_POINTWISE:
		if (ki->kind == KERNEL_ROW)
			return arena_printf(a, "Chosen for rows of one element: a block per 256 chunks of %d rows, a chunk a "
			                       "thread.", V);
		return "Chosen always: a block per 256 chunks, a chunk a thread.";
	case CG_PATH_REG: {
		/* wide_rule: past 512 threads a row, these rows take the row cache */
		const char *unless = ki->max_threads > 512 && ki->rowcp
		                         ? "unless split, or past 512 threads a row (then the row cache)"
		                         : "unless split";
		int H = CG_HOLD_THREADS / 2; /* hold_rule */
		if (e->hold)
			return arena_printf(a, "Chosen for rows of a positive multiple of %d elements, at most %d a thread of "
			                       "a group of up to %d (%d a row), unless split.", V, e->K * V, H, e->K * V * H);
		if (e->lane)
			return arena_printf(a, "Chosen for many rows of %d to %d elements, not a multiple of %d: a group of "
			                       "%d threads a row.", (e->K - 1) * CG_LANE_THREADS + 1, e->K * CG_LANE_THREADS, V,
			                    CG_LANE_THREADS);
		if (e->line && cg_line_wide(ki)) /* line_rule, halves: a chunk a thread of one or two lines */
			return arena_printf(a, "Chosen for many rows of %d or %d elements (one or two 128-byte lines of the "
			                       "narrowest stream): %d or %d threads a row, a chunk of %d each, loaded directly.",
			                    CG_LINE_THREADS * V, 2 * CG_LINE_THREADS * V, CG_LINE_THREADS, 2 * CG_LINE_THREADS, V);
		if (e->line) /* line_rule */
			return arena_printf(a, "Chosen for many rows of %d elements (%d 128-byte line%s of the narrowest "
			                       "stream): %d threads a row, %d chunk%s of %d each, loaded directly.",
			                    e->K * CG_LINE_THREADS * V, e->K, e->K == 1 ? "" : "s", CG_LINE_THREADS, e->K,
			                    e->K == 1 ? "" : "s", V);
		if (e->masked)
			return arena_printf(a, "Chosen for rows of other lengths, up to %d chunks of %d a thread of a group "
			                       "counted from the row's alignment (%d a row), %s.",
			                    e->K, V, e->K * V * ki->max_threads - (V - 1), unless);
		return arena_printf(a, "Chosen for rows of a positive multiple of %d elements, at most %d a thread of a "
		                       "group (%d a row), %s.", V, e->K * V, e->K * V * ki->max_threads, unless);
	}
	case CG_PATH_ROW:
		if (!e->masked)
			return arena_printf(a, "Chosen for the rows of a positive multiple of %d elements (fewer than 2^30) "
			                       "that the register path cannot hold; the row cache in the workspace for many "
			                       "rows too long for shared memory.", V);
		return "Chosen for the rows of other lengths that the register path cannot hold; the row cache in the "
		       "workspace for many rows too long for shared memory.";
	case CG_PATH_SPLIT:
		if (e->stream)
			return "Chosen for rows too few to fill the device, whose segments would be too long to cache.";
		return "Chosen for rows too few to fill the device and long enough to share, or too long for one block's "
		       "shared memory.";
	case CG_PATH_TILE:
		if (e->rowlen) { /* launch_rules.c's tile_rules: which rows take which of a length's entries */
			bool whole = e->rowlen % V == 0; /* few such rows take the register path */
			const char *rows = e->rpt > 1 || whole ? "many" : cg_tile_rpt(e->rowlen, V) > 1 ? "few" : "many or few";
			if (e->rpt > 1)
				return arena_printf(a, "Chosen for %s rows of %d elements, %s a thread.", rows, e->rowlen,
				                    e->rpt == 4 ? "four" : "two");
			return arena_printf(a, "Chosen for %s rows of %d element%s, a thread a row%s.", rows, e->rowlen,
			                    e->rowlen == 1 ? "" : "s",
			                    whole && e->K > 1 ? ", where the register path's thread would hold as many chunks or more"
			                                      : "");
		}
		return arena_printf(a, "Chosen for many rows of at most %d elements (%d chunk%s of %d a thread of a group), "
		                       "not a multiple of %d, and for longer ones up to %d elements where it holds them in "
		                       "fewer chunks than the register path's masked class.",
		                    CG_TILE_CHUNKS * V, e->K, e->K == 1 ? "" : "s", V, V, 32 * e->K * V);
	case CG_NPATHS: break;
	}
	return "Never chosen.";
}
