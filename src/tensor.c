/*
 * tensor.c: host arrays (see tensor.h). Elements are read and written
 * through eval_load/eval_store, so the storage formats (half bit patterns,
 * one-byte bools) are defined in one place.
 */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"

int64_t tensor_numel(const Tensor *t)
{
	if (t->rank < 0 || t->rank > FZ_MAX_RANK)
		return -1;
	int64_t n = 1;
	for (int k = 0; k < t->rank; k++) {
		int64_t d = t->shape[k];
		if (d < 0 || (d > 0 && n > INT64_MAX / d))
			return -1;
		n *= d;
	}
	return n;
}

size_t tensor_nbytes(const Tensor *t)
{
	int64_t n = tensor_numel(t);
	size_t size = fz_dtype_size(t->dtype);
	if (n < 0 || size == 0 || (uint64_t)n > SIZE_MAX / size)
		return SIZE_MAX; /* cannot be allocated: tensor_alloc fails */
	return (size_t)n * size;
}

bool tensor_alloc(Tensor *t)
{
	size_t n = tensor_nbytes(t);
	t->data = NULL;
	if (n == SIZE_MAX)
		return false;
	/* never NULL on success, even for an empty array */
	t->data = calloc(n ? n : 1, 1);
	return t->data != NULL;
}

void tensor_free(Tensor *t)
{
	if (!t)
		return;
	free(t->data);
	t->data = NULL;
}

double tensor_get(const Tensor *t, int64_t i)
{
	Scalar v = eval_load(t->dtype, t->data, i);
	return dtype_is_float(t->dtype) ? v.f : (double)v.i;
}

void tensor_type_str(const Tensor *t, char *buf, size_t n)
{
	ir_type_text(buf, n, NULL, fz_dtype_name(t->dtype), t->rank, t->shape);
}
