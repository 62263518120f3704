/*
 * cg.h: CUDA C for a plan, and the launch plan of each kernel.
 *
 * A kernel has one entry (an extern "C" function) per path it can take, and
 * each entry contains the code of that path only:
 *
 *   path        entry            what it does
 *   POINTWISE   <kernel>_pw      elementwise: a chunk a thread as vectors, the rest
 *                                element by element
 *               <kernel>_one     a row kernel's rows of one element, as a pointwise
 *                                kernel over its rows: each reduction of one value
 *   REG         <kernel>_reg<K>  rows held in registers, K chunks a thread
 *               (_reg<K>m: any row length, chunks from the row's alignment)
 *   ROW         <kernel>_row     a group of threads a row, the row cached in
 *                                shared memory or in the workspace
 *               (_rowa: rows of a multiple of V, every chunk whole)
 *   SPLIT       <kernel>_split   several blocks a row (cooperative), their
 *                                partial results through the workspace
 *               (_stream: no row cache, every pass reading its inputs again)
 *   TILE        <kernel>_tile    short rows: a block's rows staged through
 *                                shared memory, copied in and out as whole
 *                                16-byte vectors of their contiguous span
 *
 * cg_launch decides, on the host and nowhere else, everything about a
 * launch: the path, the geometry, the shared memory and the workspace, and
 * the few values the kernel needs that depend on them (a split row's segment
 * length, where the row cache and its slots are). The kernel receives those
 * values as arguments (CgArg) and derives none of them, so the host and the
 * kernel cannot disagree. Sizes are run-time arguments: one entry serves
 * every size its path takes. The runtime JIT-compiles an entry on its first
 * use, so a program compiles only the paths its sizes take.
 *
 * Kernel arguments are the entry's CgArgs in order: KParams (pointers,
 * scalar inputs by value in their storage format: f16/bf16 as 2-byte bit
 * patterns, bool as 1 byte, dims as int64), the workspace pointer, then the
 * launch plan's values (long long each).
 */
#ifndef FUSEC_CG_H
#define FUSEC_CG_H

#include "fuse/fuse.h"

typedef struct CgDevice {
	int cc_major, cc_minor;
	int sm_count;
	int max_threads_per_sm;
	int smem_per_block_optin;    /* bytes of shared memory a block may have (static and dynamic) */
	int smem_per_sm;             /* bytes of shared memory an SM has */
	int smem_reserved_per_block; /* bytes the system keeps of an SM's shared memory per resident block */
	int l2_bytes;
} CgDevice;

struct CgKernelInfo;            /* codegen's notes on a kernel, for cg_launch */

/* The default for printing and tests: an H100-class device. */
CgDevice cg_default_device(void);

typedef enum CgPath {
	CG_PATH_POINTWISE,
	CG_PATH_REG,
	CG_PATH_ROW,
	CG_PATH_SPLIT,
	CG_PATH_TILE,
	CG_NPATHS
} CgPath;

/* "pointwise", "reg", "row", "split", "tile" */
const char *cg_path_name(CgPath path);

/* Where a row kernel's row cache (values a later pass reads again) lives. */
typedef enum CgCache {
	CG_CACHE_NONE,     /* nothing to carry between passes, or in registers */
	CG_CACHE_SHARED,   /* dynamic shared memory */
	CG_CACHE_GLOBAL    /* the workspace (global memory, mostly L2) */
} CgCache;

typedef enum CgArgKind {
	CGARG_PARAM,      /* the kernel's KParam `index` (pointer, scalar or dim) */
	CGARG_WORKSPACE,  /* pointer to the launch's workspace (CgLaunch.workspace bytes) */
	CGARG_SEG,        /* elements of a row one block takes (split rows: a segment) */
	CGARG_CSTRIDE,    /* bytes of one row's cache */
	CGARG_CWS,        /* byte offset of the row caches in the workspace; -1: in shared memory */
	CGARG_PARTIALS,   /* offset of split rows' partial results in the workspace (8-byte words) */
	CGARG_SLOT,       /* byte offset of cache slot `index` in a row's cache */
	CGARG_TILE,       /* TILE: byte offset in shared memory of the tile of parameter `index` */
	CGARG_DIVMAGIC,   /* pointwise: cg_div_magic of the extent of the domain's axes lo .. hi - 1,
	                     index = lo * CG_DIV_AXES + hi (fz_m<lo>_<hi>) */
} CgArgKind;

enum { CG_DIV_AXES = 16 };

/* The magic number of a division by d, for indices below 2^31: the
 * multiplier m in the low 32 bits, the shift s above them, so that a / d
 * is __umulhi(a, m) >> s (prelude.c, fz_divm; as CUTLASS's FastDivmod).
 * 0 where there is none (d = 1, d >= 2^31, d <= 0): the kernel divides. */
uint64_t cg_div_magic(int64_t d);

typedef struct CgArg {
	CgArgKind kind;
	int index;
} CgArg;

typedef struct CgEntry {
	const char *symbol;         /* extern "C" name in the module */
	int kernel;                 /* Plan kernel id */
	CgPath path;
	int K;                      /* REG, TILE: chunks a thread holds (its compile-time class) */
	bool stream;                /* SPLIT: no row cache; its passes read their inputs again */
	bool masked;                /* REG, ROW: the class for any row length (the row's chunks start
	                               at its alignment, its first and last masked) */
	bool lane;                  /* REG: the lane class (`_reg<K>l`): a warp a row, K elements a
	                               thread, one at a time, at j = threadIdx.x + 32 k */
	bool direct;                /* TILE: a thread a row, its inputs read straight from global
	                               memory, only its outputs staged (row_tile.c) */
	int rowlen;                 /* TILE: direct: the one row length it takes (its fz_n a
	                               constant; `_tile<K>n<rowlen>`), 0 for any */
	bool unstaged;              /* TILE: an entry of one row length (rowlen): its outputs
	                               stored where they lie too, nothing staged */
	int rpt;                    /* TILE, rowlen: rows a thread (2 or 4 in the `x2`, `x4` twins; else 1) */
	bool line;                  /* REG: a line entry (`_line<K>`, aligned rows of one or two
	                               128-byte lines, loaded directly; launch_rules.c's line_rule) */
	bool hold;                  /* REG: a `_reg<K>h`, holding the column operands of the later
	                               passes (row_plan_reg.c's row_plan_hold; the aligned entry of rows
	                               of halves holds them too, and is not one) */
	int static_smem;            /* bytes of static shared memory it declares (fz_red, or none) */
	CgArg *args;                /* the entry's arguments, in order */
	int nargs;
	const char *text;           /* its CUDA C (the prelude is not in it) */
	uint64_t helpers;           /* the prelude pieces it uses (cgint.h: CGH_*) */
	const uint8_t *ophelp;      /* per op: 1 << CgKind for each helper fz_<name> it uses */
} CgEntry;

typedef struct CgModule {
	const char *name;           /* the program's, as a C identifier */
	const char *source;         /* the CUDA C of every entry, each introduced by when it is chosen */
	CgEntry *entries;
	int nentries;
	const struct CgKernelInfo *kinfo; /* per plan kernel (private to codegen) */
	int nkernels;
} CgModule;

bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d);

/* The CUDA C of the entries marked in want (one flag per entry; NULL: all):
 * the prelude pieces they use, then their text. What the runtime compiles. */
const char *cg_module_source(const CgModule *m, const bool *want, Arena *a);

/* Why cg_launch chose a path (printed by --emit=launch). */
typedef enum CgRule {
	CG_RULE_EMPTY,          /* nothing to do */
	CG_RULE_PW,             /* pointwise: a chunk a thread, a block per 256 chunks */
	CG_RULE_REG,            /* the row fits the register path */
	CG_RULE_REG_MASKED,     /* the row fits the register path's masked class (not a multiple of V) */
	CG_RULE_REG_LANE,       /* many rows of 65 (f32 rows) or past the staged ones up to 1024 elements,
	                           not a multiple of V (or f32 rows the aligned class would hold with many
	                           chunks past the row): a warp a row, an element at a time (the register
	                           path's lane class) */
	CG_RULE_REG_LINE,       /* many rows of one or two 128-byte lines, the kernel reading its rows alone:
	                           8 threads a row, a chunk of every line each */
	CG_RULE_ROW_NO_REG,     /* ROW: the kernel has no register path (what it carries would not fit) */
	CG_RULE_ROW_EMPTY,      /* ROW: rows of no elements (their per-row outputs) */
	CG_RULE_ROW_LONG,       /* ROW: the row is longer than the register path holds */
	CG_RULE_ROW_PREFETCH,   /* ROW: the register path's prefetch buffer would not fit */
	CG_RULE_ROW_WIDE,       /* ROW: the register path would take more than 512 threads a row */
	CG_RULE_ROW_GLOBAL,     /* ROW: many rows too long to cache in shared memory */
	CG_RULE_SPLIT_FEW,      /* too few rows to fill the device */
	CG_RULE_SPLIT_LONG,     /* rows too long for one block's shared memory */
	CG_RULE_SPLIT_STREAM,   /* few rows whose segments are too long to cache: no cache */
	CG_RULE_SPLIT_BARE,     /* few rows of a kernel that caches nothing: the same entry */
	CG_RULE_TILE,           /* short rows, many: staged through shared memory */
	CG_RULE_TILE_FEW,       /* short rows, few, not a multiple of V: a thread a row */
	CG_RULE_TILE_SHIFT,     /* longer rows, many, not a multiple of V: staged in fewer chunks */
	CG_RULE_ONE,            /* rows of one element: the row kernel's pointwise entry */
	CG_RULE_FORCED          /* cg_launch_forced */
} CgRule;

/* How to launch kernel k for these dim values on this device. The first
 * workspace_zero bytes of the workspace must be zeroed before every launch
 * (zeroing all of it is correct too). Above 48 KiB of dynamic shared memory
 * the entry must be allowed it first (cuFuncSetAttribute). */
typedef struct CgLaunch {
	int entry;                  /* index in CgModule.entries */
	CgPath path;
	CgCache cache;
	CgRule rule;
	unsigned grid[3], block[3];
	unsigned smem;              /* dynamic shared memory, bytes */
	int64_t workspace;          /* bytes of scratch memory (0 if none) */
	int64_t workspace_zero;     /* how many leading bytes of it must be zero
	                               before the launch (the rest is scratch) */
	bool empty;                 /* nothing to do (a zero-size domain) */
	bool cooperative;           /* the blocks must be co-resident: launch with
	                               CU_LAUNCH_ATTRIBUTE_COOPERATIVE (split rows;
	                               the grid is sized to fit the device) */
	bool resident;              /* the grid is meant to be the blocks resident at
	                               once, each looping over the work: the caller
	                               may cut it to what the compiled entry's
	                               registers really let fit */
	bool aligned;               /* what the caller said of the buffers (cg_launch) */
	bool l2_stream;             /* launch with an L2 access policy window marking the
	                               inputs' lines streaming (evicted first): row
	                               kernels that read their inputs once */
	unsigned grid_step;         /* resident: a cut grid stays a multiple of it (where
	                               it is at least that): the masked register class
	                               keeping column operands at its rows' alignment */
	int64_t rows, n;            /* row kernels: rows, and elements a row */
	int64_t seg;                /* elements of a row one block takes (counted from the row's
	                               alignment: SPLIT's segments, ROW's row cache) */
	int64_t cstride;            /* bytes of one row's cache (0: none) */
	int64_t cws;                /* byte offset of the row caches in the workspace, or -1 */
	int64_t partials;           /* word offset of split rows' partials in the workspace */
	int64_t tiles;              /* TILE: bytes of a block's tiles */
	int64_t dom[FZ_MAX_RANK];   /* the sizes of the kernel's domain (CGARG_DIVMAGIC) */
} CgLaunch;

/* Kernel k's launch at these sizes. `aligned`: every buffer the program's
 * launches read or write starts at a 16-byte boundary (the caller's to say:
 * the runtime tests its bindings). The aligned classes' entries (`_reg<K>`,
 * `_reg<K>h`, `_rowa`) assume it and test nothing; where it is false the
 * rules take the classes for rows of any length, as for a row length not a
 * multiple of V. */
bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, bool aligned, const CgDevice *dev,
               CgLaunch *out);

/* A resident grid cut to `fit` blocks: to a multiple of its grid_step
 * where fit is at least that (codegen's estimate and the runtime's cut to
 * the compiled entry's occupancy both take it). */
static inline int64_t cg_resident_cut(const CgLaunch *l, int64_t fit)
{
	return l->grid_step > 1 && fit >= l->grid_step ? fit - fit % l->grid_step : fit;
}

/* A launch of a given path and geometry, for tests: everything else (shared
 * memory, workspace, the kernel's values) is completed as cg_launch does.
 * false if kernel k has no such path or the path cannot take these sizes. */
typedef struct CgForce {
	CgPath path;
	unsigned threads;           /* a row (G; pointwise: a block) */
	unsigned rows;              /* a block (R) */
	unsigned splits;            /* blocks a row (S, SPLIT) */
	unsigned grid;              /* blocks (gridDim.x) */
	bool global;                /* ROW, SPLIT: the row cache in the workspace */
	bool masked;                /* REG, ROW: the masked class even for rows of a multiple of V */
	bool lane;                  /* REG: the lane class, a warp a row (K: 0, or the fewest elements a
	                               thread that hold the row, its entry's class) */
	bool stream;                /* SPLIT: the entry without a row cache */
	int K;                      /* TILE, REG: chunks a thread (its entry's class; REG 0: rk) */
	bool hold;                  /* REG: the aligned class's entry that holds column operands */
	bool line;                  /* REG: the aligned class's line entry of K chunks (`_line<K>`) */
	bool unaligned;             /* a buffer is not 16-byte aligned: the classes for rows of any
	                               length, as cg_launch's `aligned` false */
} CgForce;

bool cg_launch_forced(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev,
                      const CgForce *f, CgLaunch *out);

/* The value of a launch-plan argument (CGARG_SEG ... CGARG_SLOT) of kernel
 * k's launch l. */
int64_t cg_launch_arg(const CgModule *m, int k, const CgLaunch *l, const CgArg *a);

/* --emit=launch: kernel k's launch l, its path and why, geometry, shared
 * memory, workspace and the values the kernel receives. */
void cg_print_launch(StrBuf *sb, const CgModule *m, const Plan *p, int k, const CgLaunch *l);
/* The device line --emit=launch starts with. */
void cg_print_device(StrBuf *sb, const CgDevice *dev);

#endif
