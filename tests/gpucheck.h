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

/* With FUSEC_TEST_INTERPRET=1 in the environment every program compiled
 * here launches on the GPU interpreter (fz_program_set_interpret), which
 * gpu_test_random and gpu_test_examples then check as they check kernels. */

/* The same in two steps: compile the case (NULL, with a message, on
 * failure), then run an already compiled program on it (p is not freed). */
fz_program *gc_compile(fz_context *ctx, const GcCase *c, int fuse, char *msg, size_t msglen);
bool gc_run_program(fz_context *ctx, fz_program *p, const GcCase *c, int fuse, char *msg, size_t msglen);

/* Whether the graph has an f16 or bf16 value (then per-op mode needs its
 * own reference). */
bool gc_has_half(const Graph *g);

/* Write what reproduces a failure under dir (created if needed):
 * STEM.fz (the program, then a comment with the dims and a `fusec run`
 * command) and STEM/NAME.npy for every input. Returns the .fz path in path. */
void gc_save(const char *dir, const char *stem, const GcCase *c, char *path, size_t pathlen);

/* ---- the programs of examples/ (test_examples, test_multi_device) ---- */

/* A file's whole text (malloc'ed), or NULL. */
char *gc_read_text(const char *path);
/* The names of the *.fz files in dir, sorted, count in *n (free each and
 * the array). */
char **gc_list_examples(const char *dir, int *n);
/* Sizes: a dim that is the last axis of some input is a row length and
 * takes `row`; any other dim takes `rows`. */
void gc_example_dims(const Graph *g, int64_t rows, int64_t row, int64_t *dims);
/* Inputs from `seed` (input i from seed + i): uniform in [-2, 2]; scalars
 * (rates, epsilons) in [0.01, 0.5]; `v` (Adam's second moment) in [0, 1];
 * integers in [-8, 8]; with nonfinite, tensors get NaN and infinities too.
 * False, with nothing left allocated, when out of memory. */
bool gc_example_inputs(const Graph *g, const int64_t *dims, uint64_t seed, bool nonfinite, Tensor *in);
/* The tolerance of an output of dtype `out`: the least precise float dtype
 * a node of g has, and its longest reduced row. */
ProgenTol gc_tolerance(const Graph *g, const int64_t *dims, fz_dtype out);

/* One example at one size set, checked fused and per-op against the
 * interpreter: inputs from `seed`, the programs in prog[fuse] if given
 * (already compiled for ctx), else compiled here. On failure, msg gets one
 * line naming the case, and the case is saved under FUSEC_TEST_OUT if set. */
typedef struct GcExample {
	const char *name, *text;
	int64_t rows, row;
	bool nonfinite;
	uint64_t seed;
	fz_program *prog[2];     /* [0] per-op, [1] fused; NULL: compile */
} GcExample;
bool gc_example_run(fz_context *ctx, const GcExample *e, char *msg, size_t msglen);

/* An integer from the environment, or dflt. */
long gc_env_long(const char *name, long dflt);

/* A GPU test's context: 0 with *ctx set; 77 (skip), printing "NAME: skipped:
 * why", without a driver or device; 1, printing the error, on any other
 * failure. Meant for `if ((rc = gc_context(...)) != 0) return rc;`. */
int gc_context(const char *name, fz_context **ctx);

#endif
