/*
 * fusec.h: the one public header of fusec, a fusion compiler for GPUs.
 *
 * A program in the fz language (see docs/language.md) is compiled into a few
 * fused CUDA kernels, JIT-compiled by NVRTC and launched through the CUDA
 * driver, which is loaded at run time: everything but running kernels works
 * on machines with no GPU.
 *
 * Conventions. Every handle is opaque, made by a *_create or *_compile call
 * and released by the matching *_destroy. Every call that can fail returns an
 * fz_status; the handle it was called on remembers a message for the last
 * failure (fz_*_error). The library never prints and never exits.
 *
 * Thread safety: an fz_context may be shared by threads (its kernel cache is
 * locked); an fz_program and an fz_run may be used by one thread at a time.
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
const char *fz_status_string(fz_status s);

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
const char *fz_dtype_name(fz_dtype t);
size_t fz_dtype_size(fz_dtype t);

/* A diagnostic: where the first error of a program is, and what it is. */
typedef struct fz_diag {
	char file[256];   /* the name the program was compiled under */
	int line, col;    /* 1-based; 0 when the error has no location */
	int len;          /* columns to underline, at least 1 */
	char message[512];
	char rendered[2048]; /* "FILE:LINE:COL: error: MESSAGE\n<source line>\n<caret>\n" */
} fz_diag;

#ifdef __cplusplus
}
#endif
#endif /* FUSEC_H */
