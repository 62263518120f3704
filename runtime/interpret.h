/*
 * interpret.h: the GPU interpreter (interpret.cu's kernels, compiled when
 * libfusec is built and linked in as cubins): a program run with generic
 * kernels, a launch per row reduction and per output, so that a launch
 * needs no NVRTC compile. Slower than the program's own kernels; it serves
 * a program's first calls while its kernels compile (fz_program_set_interpret).
 */
#ifndef FUSEC_RUNTIME_INTERPRET_H
#define FUSEC_RUNTIME_INTERPRET_H

#include <stddef.h>

#include "runtime/rt.h"

/* A cubin of the interpreter for sm_<arch> (the build's, from
 * tools/embed_kernels.c), sorted by arch. */
typedef struct RtImage {
	int arch;
	const unsigned char *data;
	size_t len;
} RtImage;

extern const RtImage rt_interp_images[];
extern const int rt_interp_nimages;

/* One launch of a program, as the interpreter needs it. */
typedef struct RtInterpRun {
	const Graph *g;
	const int64_t *dims;          /* every dim bound */
	const CUdeviceptr *slot;      /* per node: an input's memory (others unused) */
	const unsigned char *const *scalar; /* per input: a scalar input's value, its dtype's storage format */
	const CUdeviceptr *out;       /* per output: where it is written, in its dtype */
	CUstream stream;
	bool store_all;               /* per-op mode: every half value rounded as computed */
} RtInterpRun;

/* Load the interpreter in ctx (current) once: false, with a log line the
 * first time, when the build has no cubin for the device or the driver
 * refuses it (the caller then compiles as usual). */
bool rt_interp_available(fz_context *ctx);
/* Enqueue the run's reductions and outputs on its stream (ctx current and
 * the interpreter available); the reductions' results go to temporaries of
 * the stream-ordered allocator, freed (in stream order) at the end. */
fz_status rt_interp_launch(fz_context *ctx, const RtInterpRun *run, char *err);
/* Unload it (context destruction; ctx current). */
void rt_interp_unload(fz_context *ctx);

#endif
