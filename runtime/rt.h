/*
 * rt.h: what the runtime's files share: the structures behind the public
 * handles (fz_context, fz_program, fz_run) and the helpers that set their
 * error messages.
 *
 *   driver.c  libcuda loaded at run time
 *   cache.c   the on-disk kernel cache
 *   jit.c     a launch's entries: NVRTC -> cubin -> module, through the
 *             in-memory and disk caches, on their first use
 *   api.c     contexts, programs, introspection, device memory
 *   launch.c  runs: creation, launches, CUDA graphs, results (run.h)
 *   bind.c    a run's bindings, checked against the declarations
 *   plans.c   a run's per-size launch plans
 *   call.c    a run bound and launched by position in one call (bindings)
 *   program.c the explain text, shapes, and runs on the CPU reference
 *   interpret.c the GPU interpreter, runs without a compile
 */
#ifndef FUSEC_RT_H
#define FUSEC_RT_H

#include <pthread.h>

#include "pipeline.h"
#include "runtime/cache.h"
#include "runtime/driver.h"

#define RT_ERR_MAX 16384 /* room for an NVRTC log */

/* By default a run replays a size's launches as a CUDA graph once the same
 * bindings have been launched this many times in a row (launch.c): a capture
 * costs the host about as much as this many launches save. Measured on an
 * H200 (fusec bench --graph, one kernel): capture 460-520 us, a launch
 * 3.5-4.1 us plain against 1.8 us replayed, so a capture pays for itself
 * after about 230 calls. */
#define RT_GRAPH_AFTER 256
/* RT_GRAPH_AFTER, or FUSEC_GRAPH_AFTER from the environment (read once). */
int rt_graph_after(void);

/* A module loaded in a context, shared by every program with the same key. */
typedef struct RtModule {
	RtKey key;
	CUmodule mod;
	int refs;           /* programs using it; unused modules are kept, up to a cap */
	uint64_t last_use;  /* a tick, for evicting unused modules */
} RtModule;

struct fz_context {
	int ordinal;
	bool multi_device;     /* the driver sees several GPUs: bound pointers are checked */
	CUdevice dev;
	CUcontext cu;          /* the device's primary context (retained) */
	CgDevice cg;           /* what codegen's launch rules need */
	size_t l2_window_max;  /* the largest L2 access policy window (0: none) */
	fz_device_info info;
	RtCache disk;
	pthread_mutex_t lock;  /* modules, warnings, stats, err */
	RtModule **modules;
	int nmodules, cap;
	uint64_t tick;
	char *warnings;        /* malloc'ed, '\n'-separated */
	size_t warn_len;
	char *warn_snapshot;   /* what fz_context_warnings returned last */
	fz_cache_stats stats;
	int interp_state;      /* the GPU interpreter: not tried, loaded or missing (interpret.c) */
	CUmodule interp_mod;
	CUfunction interp_map, interp_reduce;
	char err[RT_ERR_MAX];
};

struct fz_program {
	Compilation *c;        /* graph, plan and module (the arena owns them) */
	fz_compile_options opt;
	fz_context *ctx;       /* where its entries are loaded; NULL until bound to one */
	RtModule **modules;    /* the modules its entries were loaded from (a reference each) */
	int nmodules, capmodules;
	CUfunction *funcs;     /* per CgEntry: NULL until a launch first needs it (ctx->lock) */
	unsigned *smem_optin;  /* per CgEntry: dynamic shared memory already allowed */
	int interpret;         /* fz_program_set_interpret; read by launches without a lock */
	char err[RT_ERR_MAX];
};

/* Record a failure: the message goes into `dst` (a handle's buffer, may be
 * NULL) and the thread's last error. Returns s. */
fz_status rt_fail(char *dst, fz_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A failed driver call: "WHAT: CUDA_ERROR_X: description". */
fz_status rt_fail_cu(char *dst, CUresult r, const char *what);

/* Add a warning to the context (locked). */
void rt_warn(void *ctx, const char *message);

/* Make ctx current on this thread; rt_pop restores what was current. Pairs
 * nest; when ctx is current already neither touches the context stack (one
 * cuCtxGetCurrent instead of a push and a pop). */
fz_status rt_push(fz_context *ctx, char *err);
void rt_pop(void);

/* With several GPUs, refuse a pointer of another device than ctx's
 * (FZ_ERR_BINDING, naming `what` and `name`): its kernels would fault or,
 * with peer access on, read the other device's memory. One driver call;
 * nothing on a one-GPU machine. */
fz_status rt_check_device_ptr(fz_context *ctx, char *err, const char *what, const char *name, CUdeviceptr p);

/* Bind p to ctx: its entries will be loaded there (nothing is compiled). */
fz_status rt_jit_bind(fz_context *ctx, fz_program *p, char *err);
/* Load the entries of p marked in need that are not loaded yet (ctx
 * current): one module of just those, from the context's table, the disk
 * cache or NVRTC. On failure the message is in err. */
fz_status rt_jit_entries(fz_program *p, const bool *need, char *err);
/* Load the entries that launches of every kernel of p with these dim
 * values take (dims NULL: every entry; ctx current), as rt_jit_entries. */
fz_status rt_jit_sizes(fz_program *p, const int64_t *dims, char *err);
/* Drop p's references to its modules. */
void rt_jit_release(fz_program *p);
/* Unload every module (context destruction). */
void rt_jit_unload_all(fz_context *ctx);

/* The program a run runs, and its error message buffer (launch.c). */
const fz_program *rt_run_program(fz_run *r, char **err);

/* fz_run_bind_input, _scalar and _output for input or output i (in range),
 * found by position rather than by name (bind.c; call.c's positional
 * launch). */
fz_status rt_bind_input_at(fz_run *r, int i, const void *device_ptr, fz_dtype dtype, int rank, const int64_t *shape);
fz_status rt_bind_scalar_at(fz_run *r, int i, double value);
fz_status rt_bind_output_at(fz_run *r, int i, void *device_ptr, fz_dtype dtype, int rank, const int64_t *shape);

/* Allow `smem` bytes of dynamic shared memory for entry e (above 48 KB a
 * function must opt in). */
fz_status rt_allow_smem(fz_program *p, int e, unsigned smem, char *err);

#endif
