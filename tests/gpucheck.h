/*
 * gpucheck.h: one program on the GPU through the public API (fusec.h),
 * compared with the reference interpreter; shared by the GPU tests.
 *
 * Output buffers are the test's own device memory, poisoned before the
 * launch so that an element the kernels never write shows: per-op runs with
 * 0xFF bytes (NaN in every float dtype, 255 for bool, -1 for integers),
 * fused runs with 0x7B bytes (finite and huge in every float dtype, so an
 * unwritten element cannot hide where the reference is NaN; 123 for bool).
 * Inputs are bound from host memory, scalars by value.
 */
#ifndef FUSEC_GPUCHECK_H
#define FUSEC_GPUCHECK_H

#include "fusec.h"
#include "ir/ir.h"
#include "progen.h"

typedef struct GcCase {
	const char *label;       /* for messages: "seed 17", "softmax.fz [3 x 300007]" */
	const char *name;        /* the program's file name (names the kernels) */
	const char *text;
	const Graph *g;          /* the reference compilation's graph */
	const int64_t *dims;     /* in g's order */
	const Tensor *inputs;    /* in g's order */
	const Tensor *want;      /* the interpreter's outputs (when expect is FZ_OK) */
	const Tensor *want_perop; /* the same with every half value rounded where
	                            per-op mode stores it (interp_run_ex with
	                            store_all); NULL: `want` serves both modes */
	fz_status expect;        /* FZ_OK, or FZ_ERR_RUNTIME (max/min of an empty row) */
	const ProgenTol *tols;   /* one per output */
	int disk_cache;          /* compile option */
} GcCase;

/* Compile and run the case in one mode (fuse 1: fused, 0: per-op), compare
 * every output. On failure returns false and writes one line (without a
 * newline) into msg. *nkernels gets fz_program_num_kernels (or -1). */
bool gc_run(fz_context *ctx, const GcCase *c, int fuse, int *nkernels, char *msg, size_t msglen);

/* Whether the graph has an f16 or bf16 value (then per-op mode needs its
 * own reference). */
bool gc_has_half(const Graph *g);

/* Write what reproduces a failure under dir (created if needed):
 * STEM.fz (the program, then a comment with the dims and a `fusec run`
 * command) and STEM/NAME.npy for every input. Returns the .fz path in path. */
void gc_save(const char *dir, const char *stem, const GcCase *c, char *path, size_t pathlen);

/* An integer from the environment, or dflt. */
long gc_env_long(const char *name, long dflt);

/* A GPU test's context: 0 with *ctx set; 77 (skip), printing "NAME: skipped:
 * why", without a driver or device; 1, printing the error, on any other
 * failure. Meant for `if ((rc = gc_context(...)) != 0) return rc;`. */
int gc_context(const char *name, fz_context **ctx);

#endif
