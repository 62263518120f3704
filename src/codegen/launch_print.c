/*
 * launch_print.c: --emit=launch, a kernel's launch plan in words.
 *
 * What cg_launch decided, as it decided it: the path and the rule that chose
 * it (one line, with the sizes that made the difference), the entry, grid,
 * block, shared memory and workspace, and the launch-plan values the entry
 * receives (its CgArgs beyond the kernel's parameters). The rule's words
 * are here, the rule itself only in launch.c: this file formats the
 * CgRule that cg_launch set.
 */
#include "codegen/cgint.h"

/* Why the rows take a class for rows of any length: their length, or a
 * buffer's alignment (cg_launch's `aligned`). */
static void ragged(StrBuf *sb, const char *N, long long n, int V)
{
	if (n % V != 0)
		sb_printf(sb, "%s = %lld is not a multiple of %d", N, n, V);
	else
		sb_printf(sb, "%s = %lld is a multiple of %d, but a buffer is not 16-byte aligned", N, n, V);
}

/* The TILE path's rules: the entry it takes, and why. */
static void print_tile(StrBuf *sb, const CgModule *m, int k, const CgLaunch *l, const char *N)
{
	const CgEntry *e = &m->entries[l->entry];
	int V = m->kinfo[k].vec;
	long long n = (long long)l->n;
	if (l->rule == CG_RULE_TILE_FEW) /* not a multiple of V: launch_rules.c's tile_rules */
		sb_printf(sb, "%lld row%s leave%s the device idle, but the register path's masked class would compute "
		              "chunks past rows this short in vain: ", (long long)l->rows, l->rows == 1 ? "" : "s",
		          l->rows == 1 ? "s" : "");
	else if (e->rowlen)
		sb_puts(sb, "many rows: ");
	if (e->rowlen && n == V)
		sb_printf(sb, "%s = %lld is one vector", N, n);
	else if (e->rowlen && n < V)
		sb_printf(sb, "%s = %lld is shorter than a vector of %d", N, n, V);
	else if (e->rowlen)
		sb_printf(sb, "%s = %lld is short (%d chunks of %d%s)", N, n, e->K, V,
		          n % V                          ? ""
		          : n / V < m->kinfo[k].rk       ? ", fewer than the register path's thread holds"
		                                         : ", as many as the register path's thread holds");
	if (e->unstaged)
		sb_printf(sb, ": the entry of that length, %s, which reads and writes it where it lies, nothing staged",
		          cg_tile_span(&m->kinfo[k], e->rowlen, e->rpt)
		              ? e->rpt == 2 ? "two adjacent rows a thread (both rows of each stream moved as one vector)"
		                            : "four adjacent rows a thread (the rows of each stream moved as one vector)"
		          : e->rpt > 1 ? "two rows a thread (a block's rows apart: both rows' loads in flight at once)"
		                       : "a thread a row");
	else if (e->rowlen)
		sb_puts(sb, ": the entry of that length, a thread a row, which reads its row from global memory, a warp's 32 "
		            "rows' outputs staged through shared memory");
	else if (l->rule == CG_RULE_TILE_SHIFT) { /* launch_rules.c's tile_rules */
		ragged(sb, N, n, V);
		sb_printf(sb, ", and the rows many: a block's %u rows staged through shared memory, each from its first "
		              "element in %u threads of %d chunks, fewer chunks than the register path's masked class "
		              "holds it in from the 16-byte boundary before it",
		          l->block[1], l->block[0], e->K);
	} else {
		sb_printf(sb, "%s = %lld is short (at most %d chunks of %d), ", N, n, CG_TILE_CHUNKS, V);
		sb_printf(sb, n % V ? "not a multiple of %d" : "a multiple of %d but a buffer not 16-byte aligned", V);
		sb_printf(sb, ", and the rows many: a block's %u rows staged through shared memory", l->block[1]);
	}
}

static void print_rule(StrBuf *sb, const CgModule *m, const Plan *p, int k, const CgLaunch *l)
{
	const struct CgKernelInfo *ki = &m->kinfo[k];
	Dim d = p->kernels[k].domain[p->kernels[k].rank - 1];
	const char *N = dim_is_sym(d) ? p->g->dims[dim_sym(d)] : "the row length";
	int V = ki->vec, K = l->path == CG_PATH_REG ? m->entries[l->entry].K : ki->rk;
	long long n = (long long)l->n, G = l->block[0];
	switch (l->rule) {
	case CG_RULE_EMPTY: sb_puts(sb, "nothing to do: no elements, or no rows"); return;
	case CG_RULE_PW: sb_printf(sb, "a chunk of %d elements a thread, a block per 256 chunks", V); return;
	case CG_RULE_REG:
		sb_printf(sb, "%s = %lld is a multiple of %d, and %lld threads a row hold it in %d chunk%s of %d each", N, n, V,
		          G, K, K == 1 ? "" : "s", V);
		if (K < ki->rk)
			sb_printf(sb, " (not %d: a short row of halves the kernel prefetches, a warp's copies over whole rows)",
			          ki->rk);
		return;
	case CG_RULE_REG_LINE: /* launch_rules.c's line_rule */
		sb_printf(sb, "%s = %lld is a multiple of %d, %s 128-byte line%s of the narrowest stream, the rows many, "
		              "and the kernel reads its rows (and at most one column operand, in one pass): %lld threads a row, "
		              "each a chunk of every line, loaded directly, so that a warp's load reads whole lines", N, n, V,
		          G * K > CG_LINE_THREADS ? "two" : "one", G * K > CG_LINE_THREADS ? "s" : "", G);
		return;
	case CG_RULE_ROW_NO_REG:
		sb_puts(sb, "no register path: what the passes carry would not fit in registers");
		return;
	case CG_RULE_REG_MASKED:
		ragged(sb, N, n, V);
		sb_printf(sb, ": its chunks start at each row's alignment, the first and last masked, and %lld threads a "
		              "row hold them in %d chunks of %d each", G, K, V);
		return;
	case CG_RULE_REG_LANE:
		if (n % V == 0 && l->aligned) /* launch_rules.c's lane_aligned */
			sb_printf(sb, "%s = %lld is a multiple of %d, but the register path's threads would hold a fifth or "
			              "more of their chunks past the row, and the rows many: %lld threads a row hold it in %d "
			              "elements each, one at a time", N, n, V, G, K);
		else {
			ragged(sb, N, n, V);
			sb_printf(sb, ", and the rows many: %lld threads a row hold it in %d elements each, one at a time, "
			              "whatever the row's alignment", G, K);
		}
		return;
	case CG_RULE_ROW_EMPTY: sb_printf(sb, "%s = 0: rows of no elements, their per-row outputs", N); return;
	case CG_RULE_ROW_LONG:
		sb_printf(sb, "%s = %lld is more than %d threads a row hold in %d chunks of %d each", N, n, ki->max_threads, K,
		          V);
		if (G < ki->max_threads) /* launch_rules.c's long_group */
			sb_printf(sb, ": the row cache, %lld threads a row (a block of %d would be alone on its SM)", G,
			          ki->max_threads);
		return;
	case CG_RULE_ROW_PREFETCH:
		sb_puts(sb, "the register path's prefetch buffer would not fit in shared memory");
		return;
	case CG_RULE_ROW_WIDE:
		sb_printf(sb, "%s = %lld would take the register path more than 512 threads a row (one row an SM): the row "
		              "cache, %lld threads a row", N, n, G);
		return;
	case CG_RULE_ROW_GLOBAL:
		sb_printf(sb, "many rows whose cache (%lld bytes) does not fit in a block's shared memory",
		          (long long)l->cstride);
		return;
	case CG_RULE_SPLIT_FEW:
		sb_printf(sb, "%lld row%s leave%s most of the device idle, and %s = %lld is long enough to share",
		          (long long)l->rows, l->rows == 1 ? "" : "s", l->rows == 1 ? "s" : "", N, n);
		return;
	case CG_RULE_SPLIT_LONG:
		sb_printf(sb, "a row's cache does not fit in one block's shared memory; %lld segments of %lld do",
		          (long long)l->grid[1], (long long)l->seg);
		return;
	case CG_RULE_SPLIT_STREAM:
		sb_printf(sb, "%lld row%s leave%s most of the device idle, and a cached split would take %s in rounds or cache "
		              "through the workspace: no row cache, %lld blocks a row, every pass reads the inputs again",
		          (long long)l->rows, l->rows == 1 ? "" : "s", l->rows == 1 ? "s" : "", l->rows == 1 ? "it" : "them",
		          (long long)l->grid[1]);
		return;
	case CG_RULE_SPLIT_BARE:
		sb_printf(sb, "%lld row%s leave%s most of the device idle, and the kernel caches nothing: %lld blocks a "
		              "row, two an SM, every pass reads the inputs",
		          (long long)l->rows, l->rows == 1 ? "" : "s", l->rows == 1 ? "s" : "", (long long)l->grid[1]);
		return;
	case CG_RULE_TILE:
	case CG_RULE_TILE_FEW:
	case CG_RULE_TILE_SHIFT: print_tile(sb, m, k, l, N); return;
	case CG_RULE_ONE:
		sb_printf(sb, "%s = 1: every reduction is its one value, so the rows go pointwise, a chunk of %d rows a "
		              "thread, a block per 256 chunks", N, V);
		return;
	case CG_RULE_FORCED: sb_puts(sb, "forced (a test)"); return;
	}
	sb_puts(sb, "?");
}

static const char *cache_words(CgCache c)
{
	switch (c) {
	case CG_CACHE_NONE: return "no row cache";
	case CG_CACHE_SHARED: return "the row cache in shared memory";
	case CG_CACHE_GLOBAL: return "the row cache in the workspace";
	}
	return "?";
}

/* The entry's arguments beyond the kernel's parameters and the workspace. */
static void print_values(StrBuf *sb, const CgModule *m, int k, const CgLaunch *l)
{
	static const char *names[] = {[CGARG_SEG] = "fz_len", [CGARG_CSTRIDE] = "fz_cstride", [CGARG_CWS] = "fz_cws",
	                              [CGARG_PARTIALS] = "fz_wpart"};
	const CgEntry *e = &m->entries[l->entry];
	int n = 0;
	for (int i = 0; i < e->nargs; i++) {
		const CgArg *a = &e->args[i];
		if (a->kind == CGARG_PARAM || a->kind == CGARG_WORKSPACE)
			continue;
		sb_puts(sb, n++ ? ", " : "  values     ");
		if (a->kind == CGARG_DIVMAGIC) {
			uint64_t v = (uint64_t)cg_launch_arg(m, k, l, a);
			sb_printf(sb, "fz_m%d_%d m %u s %u", a->index / CG_DIV_AXES, a->index % CG_DIV_AXES, (unsigned)v,
			          (unsigned)(v >> 32));
		} else if (a->kind == CGARG_SLOT || a->kind == CGARG_TILE)
			sb_printf(sb, "%s%d %lld", a->kind == CGARG_SLOT ? "fz_so" : "fz_tile", a->index,
			          (long long)cg_launch_arg(m, k, l, a));
		else
			sb_printf(sb, "%s %lld", names[a->kind], (long long)cg_launch_arg(m, k, l, a));
	}
	if (n)
		sb_puts(sb, "\n");
}

void cg_print_launch(StrBuf *sb, const CgModule *m, const Plan *p, int k, const CgLaunch *l)
{
	const Kernel *kn = &p->kernels[k];
	const struct CgKernelInfo *ki = &m->kinfo[k];
	sb_printf(sb, "kernel %s: %s over %s", kn->name, kn->kind == KERNEL_ROW ? "rows" : "pointwise",
	          ir_shape_str(sb->arena, p->g, kn->rank, kn->domain));
	if (kn->kind == KERNEL_ROW)
		sb_printf(sb, ", %lld row%s of %lld", (long long)l->rows, l->rows == 1 ? "" : "s", (long long)l->n);
	sb_puts(sb, "\n");
	if (l->empty) {
		sb_puts(sb, "  empty      nothing to launch\n");
		return;
	}
	const CgEntry *e = &m->entries[l->entry];
	sb_printf(sb, "  path       %s", cg_path_name(l->path));
	if (l->path == CG_PATH_REG && e->lane)
		sb_printf(sb, ", %d elements a thread, one at a time", e->K);
	else if (l->path == CG_PATH_REG || l->path == CG_PATH_TILE)
		sb_printf(sb, ", %d chunk%s of %d a thread%s", e->K, e->K == 1 ? "" : "s", ki->vec,
		          e->masked ? ", the row's ends masked" : "");
	if (l->path == CG_PATH_ROW || l->path == CG_PATH_SPLIT)
		sb_printf(sb, ", %s", cache_words(l->cache));
	if (l->path == CG_PATH_ROW && !e->masked)
		sb_printf(sb, ", whole chunks of %d from the row's start", ki->vec);
	sb_puts(sb, "\n  rule       ");
	print_rule(sb, m, p, k, l);
	if (kn->kind == KERNEL_ROW && !l->aligned) /* cg_launch's `aligned` */
		sb_puts(sb, "\n  buffers    not all 16-byte aligned: no aligned class, only those for rows of any length");
	sb_printf(sb, "\n  entry      %s\n", e->symbol);
	sb_printf(sb, "  grid       %u x %u x %u%s", l->grid[0], l->grid[1], l->grid[2],
	          l->cooperative ? " (cooperative)" : "");
	if (l->resident && l->grid_step > 1)
		sb_printf(sb, " (resident blocks: cut to what fits, a multiple of %u)\n", l->grid_step);
	else
		sb_printf(sb, "%s\n", l->resident ? " (resident blocks: cut to what fits)" : "");
	sb_printf(sb, "  block      %u x %u x %u\n", l->block[0], l->block[1], l->block[2]);
	sb_printf(sb, "  smem       %u bytes dynamic, %d static\n", l->smem, m->entries[l->entry].static_smem);
	sb_printf(sb, "  workspace  %lld bytes", (long long)l->workspace);
	if (l->workspace_zero > 0)
		sb_printf(sb, ", the first %lld zeroed", (long long)l->workspace_zero);
	sb_puts(sb, "\n");
	if (l->l2_stream)
		sb_puts(sb, "  l2         the inputs streaming (an access policy window): read once, evicted first\n");
	else if (kn->kind == KERNEL_ROW)
		sb_puts(sb, "  l2         normal: every pass reads the inputs again\n");
	print_values(sb, m, k, l);
}

void cg_print_device(StrBuf *sb, const CgDevice *d)
{
	sb_printf(sb, "# device: sm_%d%d, %d SMs, %d threads and %d bytes of shared memory an SM, %d a block\n",
	          d->cc_major, d->cc_minor, d->sm_count, d->max_threads_per_sm, d->smem_per_sm,
	          d->smem_per_block_optin);
}
