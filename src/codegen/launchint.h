/*
 * launchint.h: what the two halves of cg_launch share: launch_rules.c, the
 * rules that choose a path and its geometry from the sizes (a Choice), and
 * launch.c, which completes a choice into a CgLaunch (the entry, shared
 * memory, workspace, the kernel's arguments) and holds the entry points.
 */
#ifndef FUSEC_LAUNCHINT_H
#define FUSEC_LAUNCHINT_H

#include "codegen/cgint.h"

static inline int64_t cdiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int64_t pow2ceil(int64_t x)
{
	int64_t p = 1;
	while (p < x && p < ((int64_t)1 << 40))
		p <<= 1;
	return p;
}

/* Elements of a row one block takes, counted from the row's alignment (up to
 * V - 1 elements before its start, row_loop.c): S segments of whole chunks
 * cover n + V - 1. */
static inline int64_t seg_len(int64_t n, int64_t S, int vec)
{
	return cdiv(cdiv(n + vec - 1, S > 1 ? S : 1), vec) * vec;
}

/* What the rules see: the kernel, the sizes and the device. */
typedef struct Sizes {
	const struct CgKernelInfo *ki;
	int64_t rows, n, chunks;
	bool whole;                /* the rows are whole vectors at aligned addresses: n a
	                              multiple of V, every buffer 16-byte aligned (cg_launch's
	                              `aligned`); else the classes for rows of any length */
	int64_t sms, tps;          /* SMs, threads an SM */
	int64_t optin;             /* dynamic shared memory a block may have */
	int64_t smem_sm, per_block;/* shared memory an SM has; what a block costs it besides its dynamic bytes */
	int tmax;                  /* the entries' thread bound */
	int64_t l2;                /* bytes of L2 */
} Sizes;

/* Bytes of shared memory a thread of the register path's class uses: the
 * prefetch buffer it copies its next row into (row_plan_reg.c's reg_direct: the
 * aligned class of some kernels copies none), and the masked class's slots
 * after it (row_reg.c). */
static inline int64_t reg_pf_bytes(const struct CgKernelInfo *ki, bool masked)
{
	return masked ? ki->pf_bytes + ki->col_bytes : ki->reg_direct ? 0 : ki->pf_bytes;
}

/* The multiple a resident grid of the class is cut to (CgLaunch.grid_step):
 * CG_SLOT_GRID where the masked class keeps column operands in slots. */
static inline unsigned slot_step(const struct CgKernelInfo *ki, bool masked)
{
	return masked && ki->col_bytes > 0 ? CG_SLOT_GRID : 1;
}

/* Blocks of `dyn` bytes of dynamic shared memory an SM holds. */
static inline int64_t blocks_by_smem(const Sizes *z, int64_t dyn) { return z->smem_sm / (dyn + z->per_block); }

typedef struct Choice {
	CgPath path;
	bool masked;               /* REG, ROW: the class for rows of any length */
	bool lane;                 /* REG: the lane class (K: elements a thread) */
	bool hold;                 /* REG: the entry holding column operands (row_plan.c) */
	bool line;                 /* REG: a line entry (line_rule) */
	bool stream;               /* SPLIT: the entry without a row cache */
	int K;                     /* TILE, REG: chunks a thread (its entry's class; REG 0: rk) */
	int rowlen;                /* TILE: a thread a row: n, its entry's constant */
	int rpt;                   /* TILE, rowlen: rows a thread (the entry's) */
	CgCache cache;             /* ROW, SPLIT: where the row cache is (when the kernel has one) */
	int64_t G, R, S, grid;
	bool resident;
	CgRule rule;
} Choice;

/* The loop schedule's row caches in the workspace: at most this in all
 * (fewer blocks for longer rows). */
#define CG_LOOP_CACHE_MAX ((int64_t)1 << 30)

/* ---- the rules (launch_rules.c) ------------------------------------------------------ */

/* A chunk a thread: pointwise kernels, and row kernels' rows of one element. */
void launch_pointwise_rules(const struct CgKernelInfo *ki, int64_t n, Choice *ch);
/* A row kernel's path and geometry for these sizes. */
void launch_row_rules(const Sizes *z, Choice *ch);
/* Whether the register path takes these rows with G threads a row, and if
 * not, why. */
CgRule launch_reg_rule(const Sizes *z, int64_t G);
/* Whether the row cache's rows take its masked class (not `_rowa`). */
bool launch_row_masked(const Sizes *z);
/* A group of G threads as whole warps: a power of two up to 32, then a
 * multiple of 32. */
int64_t launch_whole_warps(int64_t G);

#endif
