/*
 * fusec.h: the one public header of fusec, a fusion compiler for GPUs.
 *
 * A program in the fz language (see docs/language.md) is compiled into a few
 * fused CUDA kernels, JIT-compiled by NVRTC and launched through the CUDA
 * driver, which is loaded at run time: everything but running kernels works
 * on machines with no GPU (compiling, introspection, the generated source).
 *
 * The handles, in the order a caller meets them:
 *   fz_context  one GPU: its primary context (shared with the CUDA runtime
 *               and PyTorch), the loaded modules and the kernel cache;
 *   fz_program  one compiled program: its inputs, outputs and kernels;
 *   fz_run      the bindings of one program's inputs, dims and outputs, and
 *               the device memory and launch parameters for the sizes seen.
 *
 *     fz_context *ctx;  fz_program *p;  fz_run *r;  fz_diag d;
 *     fz_context_create(0, &ctx);
 *     fz_program_compile(ctx, "axpy", src, strlen(src), NULL, &p, &d);
 *     fz_run_create(p, NULL, &r);
 *     fz_run_bind_input(r, "x", x_dev, FZ_F32, 1, (int64_t[]){n});
 *     ...
 *     fz_run_launch(r);                          (asynchronous, on the run's stream)
 *     fz_run_output(r, "y", &y_dev, NULL, NULL);
 *
 * Conventions. Every handle is opaque, made by a *_create or *_compile call
 * and released by the matching *_destroy (NULL is accepted and ignored).
 * Every call that can fail returns an fz_status; the handle it was called on
 * keeps a message for its last failure (fz_context_error, fz_program_error,
 * fz_run_error), and fz_last_error gives the last failure of the calling
 * thread, including calls that made no handle. The library never exits, and
 * never prints unless FUSEC_LOG asks it to (below). Device pointers are passed as void * (a CUdeviceptr cast to a
 * pointer, as cudaMalloc and torch.Tensor.data_ptr() give them), streams as
 * void * (a CUstream or cudaStream_t; NULL is the legacy default stream).
 *
 * Thread safety: an fz_context may be shared by threads (its module table,
 * cache and statistics are locked; its fz_context_error is then whichever
 * thread failed last, so prefer fz_last_error). A program compiled with a
 * context is read-only afterwards and may be shared by runs in several
 * threads. An fz_run is used by one thread at a time. Destroy runs before
 * their program, and programs before their context.
 *
 * Environment: FUSEC_CACHE=0 turns the on-disk kernel cache off,
 * FUSEC_CACHE_DIR moves it (default $XDG_CACHE_HOME/fusec or ~/.cache/fusec),
 * FUSEC_CACHE_MAX_BYTES caps it (default 256M); FUSEC_CUDA_LIBRARY names the
 * driver library to load instead of libcuda.so.1; FUSEC_LOG=1 logs each JIT
 * compile (cache hit or miss, key, NVRTC's time and log) and each launch
 * geometry chosen, one line each on stderr (read at every call).
 */
#ifndef FUSEC_H
#define FUSEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FUSEC_VERSION_MAJOR 0
#define FUSEC_VERSION_MINOR 1
#define FUSEC_VERSION_PATCH 0

/* Marks the library's entry points: the shared library exports only these. */
#if defined(__GNUC__) || defined(__clang__)
#define FZ_API __attribute__((visibility("default")))
#else
#define FZ_API
#endif

/* Status codes: one for each kind of failure a caller may act on. */
typedef enum fz_status {
	FZ_OK = 0,
	FZ_ERR_PROGRAM,     /* the program has an error (see its diagnostic) */
	FZ_ERR_ARGUMENT,    /* a bad argument to an API call */
	FZ_ERR_NOMEM,       /* host memory exhausted */
	FZ_ERR_LIMIT,       /* a documented limit was exceeded */
	FZ_ERR_IO,          /* a file could not be read or written */
	FZ_ERR_BINDING,     /* a missing, extra or mismatched input, output or dim */
	FZ_ERR_RUNTIME,     /* the program cannot run on these inputs (max of an empty row) */
	FZ_ERR_NO_DRIVER,   /* libcuda.so.1 could not be loaded */
	FZ_ERR_NO_DEVICE,   /* no CUDA device, or not that ordinal */
	FZ_ERR_CUDA,        /* a CUDA driver call failed */
	FZ_ERR_DEVICE_MEMORY, /* device memory exhausted */
	FZ_ERR_NVRTC,       /* NVRTC failed to compile generated code (a fusec bug) */
	FZ_ERR_CACHE,       /* the kernel cache could not be used */
	FZ_ERR_INTERNAL     /* a fusec bug */
} fz_status;

/* A short English phrase for a status; never NULL. */
FZ_API const char *fz_status_string(fz_status s);

/* Element types. The order is the promotion order of the language, except
 * that f16 and bf16 promote together to f32. */
typedef enum fz_dtype {
	FZ_BOOL = 0,
	FZ_I32,
	FZ_I64,
	FZ_F16,
	FZ_BF16,
	FZ_F32,
	FZ_F64,
	FZ_DTYPE_COUNT
} fz_dtype;

/* The dtype's name as in the language ("f32"), and its size in bytes. */
FZ_API const char *fz_dtype_name(fz_dtype t);
FZ_API size_t fz_dtype_size(fz_dtype t);

/* A diagnostic: where the first error of a program is, and what it is. */
typedef struct fz_diag {
	char file[256];   /* the name the program was compiled under */
	int line, col;    /* 1-based; 0 when the error has no location */
	int len;          /* columns to underline, at least 1 */
	char message[512];
	char rendered[2048]; /* "FILE:LINE:COL: error: MESSAGE\n<source line>\n<caret>\n" */
} fz_diag;

/* ---- errors ------------------------------------------------------------------- */

/* The message of the calling thread's last failed call, whichever handle it
 * was on (or none, as for a failed fz_context_create); "" if none failed. */
FZ_API const char *fz_last_error(void);

/* The library's version as "MAJOR.MINOR.PATCH". */
FZ_API const char *fz_version(void);

/* ---- contexts: one GPU ---------------------------------------------------------- */

typedef struct fz_context fz_context;

/* Open GPU `device` (an ordinal, 0 for the first): loads the driver, retains
 * the device's primary context and opens the kernel cache. Fails with
 * FZ_ERR_NO_DRIVER or FZ_ERR_NO_DEVICE (and *out = NULL) on machines
 * without them; the message is in fz_last_error. */
FZ_API fz_status fz_context_create(int device, fz_context **out);
/* Unload the context's modules and release the primary context. */
FZ_API void fz_context_destroy(fz_context *ctx);
/* The message of the context's last failure ("" if none). */
FZ_API const char *fz_context_error(const fz_context *ctx);
/* Warnings collected so far, one per line ("" if none): a damaged cache entry
 * that was deleted and rebuilt, a cache directory that cannot be used. The
 * pointer is valid until the next call on ctx. */
FZ_API const char *fz_context_warnings(fz_context *ctx);
/* Forget the collected warnings. */
FZ_API void fz_context_clear_warnings(fz_context *ctx);

typedef struct fz_device_info {
	char name[256];          /* "NVIDIA H100 80GB HBM3" */
	int ordinal;
	int cc_major, cc_minor;  /* compute capability: kernels are compiled for sm_<major><minor> */
	int sm_count;
	int driver_version;      /* CUDA version of the driver, e.g. 12040 */
	char cache_dir[4096];    /* the on-disk kernel cache, "" when it is off */
} fz_device_info;

/* Describe the context's device. */
FZ_API fz_status fz_context_info(const fz_context *ctx, fz_device_info *out);

typedef struct fz_cache_stats {
	uint64_t nvrtc_compiles;  /* modules compiled by NVRTC */
	uint64_t disk_hits;       /* modules read from the on-disk cache */
	uint64_t memory_hits;     /* modules already loaded in this context */
	uint64_t disk_writes;     /* entries written to the on-disk cache */
	uint64_t damaged;         /* damaged entries found (deleted and rebuilt) */
	double jit_ms;            /* time spent compiling, reading and loading modules */
} fz_cache_stats;

/* The context's kernel cache statistics since it was created. */
FZ_API void fz_context_cache_stats(fz_context *ctx, fz_cache_stats *out);

/* Device memory, for callers without the CUDA runtime (examples, tests).
 * Allocation of 0 bytes gives NULL. Copies are synchronous. */
FZ_API fz_status fz_device_alloc(fz_context *ctx, size_t bytes, void **ptr);
FZ_API void fz_device_free(fz_context *ctx, void *ptr);
FZ_API fz_status fz_copy_to_device(fz_context *ctx, void *dst, const void *src, size_t bytes);
FZ_API fz_status fz_copy_to_host(fz_context *ctx, void *dst, const void *src, size_t bytes);

/* ---- programs --------------------------------------------------------------------- */

typedef struct fz_program fz_program;

typedef struct fz_compile_options {
	int fuse;        /* 1: fuse into few kernels (default); 0: one kernel per op, as eager PyTorch */
	int disk_cache;  /* 1: use the on-disk kernel cache (default); 0: neither read nor write it */
} fz_compile_options;

/* The defaults (what a NULL options pointer means). */
FZ_API fz_compile_options fz_compile_options_default(void);

/* Compile `len` bytes of program text; `name` names it in diagnostics and
 * its stem names the kernels (NULL: "<string>"). With a context the program
 * is bound to it and can run there: each launch at new sizes JIT-compiles
 * and loads (through the kernel cache) the kernel entries those sizes take,
 * the first time any size takes them; with ctx NULL no GPU is needed, for
 * introspection and the source. An
 * error in the program gives FZ_ERR_PROGRAM and fills *diag (may be NULL);
 * every other failure also puts its message in diag->message. */
FZ_API fz_status fz_program_compile(fz_context *ctx, const char *name, const char *src, size_t len,
                                    const fz_compile_options *opt, fz_program **out, fz_diag *diag);
/* The same for a file (read failures are FZ_ERR_IO). */
FZ_API fz_status fz_program_compile_file(fz_context *ctx, const char *path, const fz_compile_options *opt,
                                         fz_program **out, fz_diag *diag);
FZ_API void fz_program_destroy(fz_program *p);
/* The message of the program's last failed call ("" if none). */
FZ_API const char *fz_program_error(const fz_program *p);

/* The program's name (its file stem), which prefixes its kernels. */
FZ_API const char *fz_program_name(const fz_program *p);
/* The generated CUDA C (valid while p lives). */
FZ_API const char *fz_program_cuda_source(const fz_program *p);
/* Kernels one launch runs (fused, or one per op). */
FZ_API int fz_program_num_kernels(const fz_program *p);

#define FZ_TENSOR_MAX_RANK 8

/* An input or output as declared. */
typedef struct fz_tensor_info {
	const char *name;        /* valid while the program lives */
	fz_dtype dtype;
	int rank;                /* 0 for a scalar */
	int64_t shape[FZ_TENSOR_MAX_RANK];         /* a size, or -1 - k for symbolic dim k */
	const char *dim_names[FZ_TENSOR_MAX_RANK]; /* the symbolic dim's name, NULL for a size */
} fz_tensor_info;

FZ_API int fz_program_num_inputs(const fz_program *p);
FZ_API int fz_program_num_outputs(const fz_program *p);
/* Inputs in declaration order, outputs in the order of their out statements;
 * FZ_ERR_ARGUMENT for an index out of range. */
FZ_API fz_status fz_program_input(const fz_program *p, int i, fz_tensor_info *out);
FZ_API fz_status fz_program_output(const fz_program *p, int i, fz_tensor_info *out);
/* Index of the input/output called `name`, or -1. */
FZ_API int fz_program_find_input(const fz_program *p, const char *name);
FZ_API int fz_program_find_output(const fz_program *p, const char *name);
/* The symbolic dims, in order of first use; NULL for an index out of range. */
FZ_API int fz_program_num_dims(const fz_program *p);
FZ_API const char *fz_program_dim_name(const fz_program *p, int k);

/* The `fusec --explain` text (why each edge between kernels was not fused)
 * into buf, cut to cap bytes with a NUL; returns its full length, as snprintf. */
FZ_API size_t fz_program_explain(const fz_program *p, char *buf, size_t cap);

/* Calls by position, for language bindings (no names, one call a step). An
 * input's sizes are passed as `in_shapes`: every input's sizes in declaration
 * order, concatenated (a scalar has none); output shapes likewise. */

/* The dims (fz_program_num_dims values) and output shapes that inputs of
 * these sizes give; no GPU. A mismatch is FZ_ERR_BINDING, its message naming
 * the input, the dim (or axis) and both sizes. */
FZ_API fz_status fz_program_shapes(const fz_program *p, const int64_t *in_shapes, int64_t *dims,
                                   int64_t *out_shapes);
/* Run p on the CPU reference interpreter (synchronous, no GPU): inputs[i] is
 * input i's data in host memory (dense, C order, the dtype's storage format;
 * a scalar is one element), outputs[i] host memory of output i's size
 * (fz_program_shapes). Per-op programs (fuse 0) round each half value stored. */
FZ_API fz_status fz_program_run_cpu(const fz_program *p, const void *const *inputs, const int64_t *in_shapes,
                                    void *const *outputs);

/* JIT-compile and load now the kernel entries that a launch with these dim
 * values (fz_program_num_dims of them, in order) takes, so that the launch
 * compiles nothing; dims NULL: every entry of every kernel (each path any
 * size can take). p must have been compiled with a context. Thread-safe:
 * NVRTC compiles of several programs or sizes may run at once. */
FZ_API fz_status fz_program_prepare(fz_program *p, const int64_t *dims);

/* 1: launches of p's runs go to fusec's GPU interpreter, which needs no
 * compile (its generic kernels are built into libfusec): a kernel per row
 * reduction and per output, each evaluating the ops under it per element
 * from a small code, so slower than p's own kernels (an op a switch, the
 * elementwise work repeated where several reductions or outputs share it);
 * equal to the CPU reference within the numerics contract (f32 sums
 * accumulate in f64). Meant for the first calls while another thread
 * compiles p's kernels (fz_program_prepare), as the torch backend does; 0
 * (the default): launches use p's kernels, compiling what they need. A
 * launch into a capture of the run's stream never interprets, nor does one
 * on a device the build has no interpreter for (it compiles; FUSEC_LOG says
 * why). Thread-safe. */
FZ_API fz_status fz_program_set_interpret(fz_program *p, int enable);

/* ---- runs: bindings and launches ---------------------------------------------------- */

typedef struct fz_run fz_run;

/* A run of `p` on `ctx` (NULL: the context p was compiled with). A program
 * compiled without a context is bound to ctx here. */
FZ_API fz_status fz_run_create(fz_program *p, fz_context *ctx, fz_run **out);
/* Waits for the run's stream, then frees its device memory. */
FZ_API void fz_run_destroy(fz_run *r);
/* The message of the run's last failure ("" if none). */
FZ_API const char *fz_run_error(const fz_run *r);

/* The stream launches go to (a CUstream; NULL, the default, is the legacy
 * default stream). Host inputs are copied on it too, so set it first; it must
 * stay alive while the run uses it (fz_run_destroy waits for it). */
FZ_API fz_status fz_run_set_stream(fz_run *r, void *stream);
/* 1: replay the launches of each size as a CUDA graph, captured at the first
 * launch and again whenever a bound pointer or scalar changes (so it pays off
 * when buffers are reused); 0: launch kernel by kernel; -1 (default):
 * automatic, a graph once the same bindings have been launched 256 times in
 * a row (FUSEC_GRAPH_AFTER changes it; never while the run's stream is being
 * captured), else kernel by kernel. Results are the same either way. */
FZ_API fz_status fz_run_set_graph(fz_run *r, int enable);

/* Set a symbolic dim by name. Optional: dims are bound from the inputs'
 * shapes; a dim set here must agree with them. */
FZ_API fz_status fz_run_bind_dim(fz_run *r, const char *name, int64_t size);
/* Bind an input to device memory: dtype, rank and literal sizes are checked
 * now, symbolic dims at launch (they must agree across inputs). Any element
 * alignment works; buffers that start at a 16-byte boundary (as cudaMalloc's
 * and PyTorch's do) take the fastest kernels, and a binding that changes
 * that is like a change of shape: the next launch finds another plan. */
FZ_API fz_status fz_run_bind_input(fz_run *r, const char *name, const void *device_ptr, fz_dtype dtype, int rank,
                                   const int64_t *shape);
/* Bind an input to host memory: copied now (to device memory the run owns,
 * on its stream), so the caller may reuse it on return. Scalar inputs (rank
 * 0) are kept on the host and passed by value. */
FZ_API fz_status fz_run_bind_input_host(fz_run *r, const char *name, const void *host_ptr, fz_dtype dtype,
                                        int rank, const int64_t *shape);
/* Bind a scalar input from a double, converted to its declared dtype
 * (integers must be exact; f16/bf16 round to nearest even). */
FZ_API fz_status fz_run_bind_scalar(fz_run *r, const char *name, double value);
/* Write output `name` into caller memory (checked against the output's shape
 * at launch); device_ptr NULL returns to run-owned memory (the default). */
FZ_API fz_status fz_run_bind_output(fz_run *r, const char *name, void *device_ptr, fz_dtype dtype, int rank,
                                    const int64_t *shape);

/* Enqueue the program on the run's stream and return (asynchronous). All
 * inputs must be bound. At sizes not launched before, first JIT-compiles the
 * kernel entries they take if no earlier launch did. Fails with
 * FZ_ERR_BINDING for a missing or mismatched input, FZ_ERR_RUNTIME (before
 * any launch) for max/min over an empty axis, FZ_ERR_DEVICE_MEMORY,
 * FZ_ERR_CUDA, FZ_ERR_NVRTC. */
FZ_API fz_status fz_run_launch(fz_run *r);

/* A launch by position in one call, for language bindings: what stays the
 * same from call to call is prepared once in an fz_call (a binding keeps one
 * per input sizes and stream), and a call passes only its pointers and
 * scalar values, one 8-byte fz_arg each. */
typedef struct fz_call {
	fz_run *run;
	void *stream;              /* as fz_run_set_stream */
	const int64_t *in_shapes;  /* the tensor inputs' sizes, in declaration order, concatenated */
	const int64_t *out_shapes; /* the outputs' sizes, in the order of the out statements, concatenated */
} fz_call;

typedef union fz_arg {
	void *ptr;    /* a tensor input's or an output's device memory */
	double value; /* a scalar input's value (converted as by fz_run_bind_scalar) */
} fz_arg;

/* Set c->stream, bind input i to args[i] (declaration order) and output j to
 * args[ninputs + j] (NULL: run-owned memory), and launch: the checks of the
 * calls by name, with the declared dtypes, and an output that overlaps a
 * tensor input is refused (FZ_ERR_BINDING: a kernel may read an input after
 * writing an output). args must be 8-byte aligned. */
FZ_API fz_status fz_call_launch(const fz_call *c, const fz_arg *args);
/* Wait for the run's stream (errors of kernels surface here). */
FZ_API fz_status fz_run_synchronize(fz_run *r);

/* After a launch: output `name`'s device memory, rank and shape (any of the
 * three out-pointers may be NULL). Run-owned memory is reused by the next
 * launch. */
FZ_API fz_status fz_run_output(fz_run *r, const char *name, void **device_ptr, int *rank, int64_t *shape);
/* After a launch: copy output `name` to the host (`bytes` must be its exact
 * size; waits for the stream). */
FZ_API fz_status fz_run_read_output(fz_run *r, const char *name, void *host_ptr, size_t bytes);
/* The value of symbolic dim `name` at the last launch. */
FZ_API fz_status fz_run_dim(fz_run *r, const char *name, int64_t *size);

#ifdef __cplusplus
}
#endif
#endif /* FUSEC_H */
