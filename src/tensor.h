/*
 * tensor.h: host arrays, as the interpreter, .npy I/O and the runtime's host
 * bindings see them: dense, C order, in the dtype's storage format (f16 and
 * bf16 as their 16-bit patterns, bool as one byte 0 or 1). Data is malloc'ed,
 * not arena-owned, since arrays outlive compilations.
 */
#ifndef FUSEC_TENSOR_H
#define FUSEC_TENSOR_H

#include "common.h"

typedef struct Tensor {
	fz_dtype dtype;
	int rank;                      /* 0 for a scalar (one element) */
	int64_t shape[FZ_MAX_RANK];
	void *data;                    /* numel * fz_dtype_size(dtype) bytes */
} Tensor;

/* Elements; -1 if the product overflows int64. */
int64_t tensor_numel(const Tensor *t);
size_t tensor_nbytes(const Tensor *t);
/* Allocate (zeroed) data for t's dtype and shape; false if out of memory. */
bool tensor_alloc(Tensor *t);
void tensor_free(Tensor *t);
/* Element i as a double (f16/bf16 decoded, ints and bool converted). */
double tensor_get(const Tensor *t, int64_t i);
/* "f32[4, 5]" (ir_type_text: truncated to n bytes, terminated) */
void tensor_type_str(const Tensor *t, char *buf, size_t n);

/* .npy files: format v1, v2 (and v3 headers). Reading takes f2 f4 f8 i4 i8
 * b1 in either byte order and C or Fortran order (converted to the host's
 * order and C order), and '<V2' (ml_dtypes.bfloat16) as bf16; only regular
 * files. Writing is little-endian, C order; bf16 tensors are written as <f4.
 * Writing goes to a temporary file in the same directory that is renamed at
 * the end, so a failure never leaves half a file. Errors name the file and
 * the problem. */
bool npy_read(const char *path, Tensor *out, char *err, size_t errlen);
bool npy_write(const char *path, const Tensor *t, char *err, size_t errlen);

#endif
