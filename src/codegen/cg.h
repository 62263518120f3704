/*
 * cg.h: CUDA C for a plan.
 *
 * One self-contained source per plan (no includes beyond what NVRTC
 * provides), with extern "C" kernels named after the program and kernel.
 * Sizes are run-time arguments, so one compiled module serves every size.
 *
 * Entries: a pointwise kernel has one, `<kernel>_pw` (grid-stride over
 * vector chunks). A row kernel has one, `<kernel>_row`, which runs every row
 * schedule; cg_launch picks the schedule per call through the launch
 * geometry alone:
 *   blockDim.x   threads per row: 1..32 (warp or part of one, shuffles only,
 *                blockDim.y rows per block) or 64..1024 (a block per row)
 *   gridDim.y    blocks per row: 1, or S > 1 for split rows (the blocks of a
 *                row exchange partial results through the workspace and wait
 *                for each other, so they must be co-resident: `cooperative`)
 *   smem         dynamic shared memory: enough for the row cache (values a
 *                later pass needs, so the input is read once), or 0 (the
 *                cache is then in the workspace, in global memory)
 * Kernel arguments are the KParams in order (pointers, scalar inputs by value
 * in their storage format: f16/bf16 as 2-byte bit patterns, bool as 1 byte,
 * dims as int64), then for row entries the workspace pointer.
 */
#ifndef FUSEC_CG_H
#define FUSEC_CG_H

#include "fuse/fuse.h"

typedef struct CgDevice {
	int cc_major, cc_minor;
	int sm_count;
	int max_threads_per_sm;
	int smem_per_block_optin;   /* bytes of shared memory a block may ask for */
	int l2_bytes;
} CgDevice;

struct CgKernelInfo;            /* codegen's notes on a kernel, for cg_launch */

/* A defaults for printing and tests: an H100-class device. */
CgDevice cg_default_device(void);

typedef enum CgArgKind {
	CGARG_PARAM,      /* the kernel's KParam `index` (pointer, scalar or dim) */
	CGARG_WORKSPACE,  /* pointer to scratch device memory of `bytes` (split rows) */
} CgArgKind;

typedef struct CgArg {
	CgArgKind kind;
	int index;
	int64_t bytes;
} CgArg;

typedef struct CgEntry {
	const char *symbol;         /* extern "C" name in the module */
	int kernel;                 /* Plan kernel id */
	int schedule;               /* codegen's schedule id */
	CgArg *args;                /* the entry's arguments, in order */
	int nargs;
} CgEntry;

typedef struct CgModule {
	const char *source;         /* the CUDA C */
	CgEntry *entries;
	int nentries;
	const struct CgKernelInfo *kinfo; /* per plan kernel (private to codegen) */
	int nkernels;
} CgModule;

bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d);

/* How to launch kernel `k` for these dim values on this device: which entry,
 * grid, block, dynamic shared memory, and workspace bytes. The first
 * workspace_zero bytes of the workspace must be zeroed before every launch
 * (zeroing all of it is correct too). Above 48 KiB of dynamic shared memory the
 * entry must be allowed it first (cuFuncSetAttribute). */
typedef struct CgLaunch {
	int entry;
	unsigned grid[3], block[3];
	unsigned smem;
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
	int schedule;               /* CG_SCHED_*, for --explain and tests */
} CgLaunch;

/* The row schedules (CgLaunch.schedule); pointwise kernels say CG_SCHED_POINTWISE. */
enum {
	CG_SCHED_POINTWISE,
	CG_SCHED_WARP,      /* a warp or part of one per row, the row cached on chip */
	CG_SCHED_BLOCK,     /* a block per row, the row cached in shared memory */
	CG_SCHED_LOOP,      /* a block per row re-reading global memory each pass */
	CG_SCHED_SPLIT      /* several blocks per row, partial results in the workspace */
};
/* "pointwise", "warp", "block", "loop", "split" */
const char *cg_schedule_name(int schedule);

bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev, CgLaunch *out);

#endif
