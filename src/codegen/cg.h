/*
 * cg.h: CUDA C for a plan.
 *
 * One self-contained source per plan (no includes beyond what NVRTC
 * provides), with extern "C" kernels named after the program and kernel.
 * Sizes are run-time arguments, so one compiled module serves every size; a
 * row kernel comes in a few entries, one per schedule (warp per row, block
 * per row with the row cached on chip, looping block per row, split rows),
 * and cg_launch picks one per call from the row length and the device.
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
} CgModule;

bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d);

/* How to launch kernel `k` for these dim values on this device: which entry,
 * grid, block, dynamic shared memory, and workspace bytes. */
typedef struct CgLaunch {
	int entry;
	unsigned grid[3], block[3];
	unsigned smem;
	int64_t workspace;          /* bytes of scratch memory (0 if none) */
	bool empty;                 /* nothing to do (a zero-size domain) */
} CgLaunch;

bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev, CgLaunch *out);

#endif
