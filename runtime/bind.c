/*
 * bind.c: a run's bindings: device and host inputs, scalars, outputs and
 * dims, each checked against the program's declaration (name, dtype, rank,
 * shape) with a message that names both; a changed shape marks the run
 * dirty, so that its next launch looks its size plan up again (plans.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/interp.h"
#include "log.h"
#include "runtime/interpret.h"
#include "runtime/run.h"
#include "tensor.h"

/* ---- binding ------------------------------------------------------------------------ */

/* Output i goes to ptr; a node a kernel writes as output i is read from there. */
void rt_set_out_ptr(fz_run *r, int i, CUdeviceptr ptr)
{
	NodeId n = r->g->outputs[i].node;
	r->out_slot[i] = ptr;
	if (r->writer[n] == i)
		r->slot[n] = ptr;
}

int rt_find_dim(const Graph *g, const char *name)
{
	for (int k = 0; name && k < g->ndims; k++)
		if (strcmp(g->dims[k], name) == 0)
			return k;
	return -1;
}

fz_status rt_no_such(fz_run *r, const char *what, const char *name)
{
	return rt_fail(r->err, FZ_ERR_BINDING, "program '%s' has no %s named '%s'", r->g->name, what,
	               name ? name : "(null)");
}

const char *rt_decl_text(fz_run *r, const Node *n, char *buf, size_t cap)
{
	ir_type_text(buf, cap, r->g, fz_dtype_name((fz_dtype)n->dtype), n->rank, n->shape);
	return buf;
}

/* dtype, rank and literal sizes against a declaration. */
static fz_status check_decl(fz_run *r, const char *what, const char *name, const Node *n, fz_dtype dtype, int rank,
                            const int64_t *shape)
{
	bool ok = dtype == (fz_dtype)n->dtype && rank == n->rank && (rank == 0 || shape);
	for (int k = 0; ok && k < rank; k++)
		ok = shape[k] >= 0 && (dim_is_sym(n->shape[k]) || shape[k] == n->shape[k]);
	if (ok)
		return FZ_OK;
	char want[512], got[256];
	Tensor t = {.dtype = dtype, .rank = rank >= 0 && rank <= FZ_MAX_RANK ? rank : 0};
	for (int k = 0; shape && k < t.rank; k++)
		t.shape[k] = shape[k];
	if ((unsigned)dtype >= FZ_DTYPE_COUNT)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "%s '%s': dtype %d is not an fz_dtype", what, name, (int)dtype);
	tensor_type_str(&t, got, sizeof got);
	return rt_fail(r->err, FZ_ERR_BINDING, "%s '%s': expected %s, got %s%s", what, name,
	               rt_decl_text(r, n, want, sizeof want), rank < 0 || rank > FZ_MAX_RANK ? "a rank out of range: " : "",
	               got);
}

bool rt_same_shape(int rank, const int64_t *a, const int64_t *b)
{
	return rank == 0 || memcmp(a, b, sizeof *a * (size_t)rank) == 0;
}

/* Whether a caller's buffer is 16-byte aligned decides the size plan (the
 * aligned classes take only aligned buffers: cg_launch's `aligned`), so a
 * change of it marks the run dirty, as a change of shape does. */
static void mark_ragged(fz_run *r, bool *ragged, CUdeviceptr p)
{
	bool now = (p & 15) != 0;
	r->dirty |= now != *ragged;
	*ragged = now;
}

bool rt_bindings_aligned(const fz_run *r)
{
	for (int i = 0; i < r->g->ninputs; i++)
		if (r->in[i].kind == BIND_DEVICE && r->in[i].ragged)
			return false;
	for (int i = 0; i < r->g->noutputs; i++)
		if (r->out[i].user && r->out[i].ragged)
			return false;
	return true;
}

/* Record a tensor input's type; marks the run dirty if its shape changed. */
static void set_input_shape(fz_run *r, RtInput *in, BindKind kind, int rank, const int64_t *shape)
{
	if (in->kind == BIND_NONE || in->rank != rank || !rt_same_shape(rank, in->shape, shape))
		r->dirty = true;
	in->kind = kind;
	in->rank = rank;
	for (int k = 0; k < rank; k++)
		in->shape[k] = shape[k];
}

static int64_t shape_numel(int rank, const int64_t *shape)
{
	int64_t n = 1;
	for (int k = 0; k < rank; k++) {
		if (shape[k] != 0 && n > INT64_MAX / shape[k])
			return -1;
		n *= shape[k];
	}
	return n;
}

fz_status fz_run_bind_dim(fz_run *r, const char *name, int64_t size)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_bind_dim: run is NULL");
	int k = rt_find_dim(r->g, name);
	if (k < 0)
		return rt_no_such(r, "dim", name);
	if (size < 0)
		return rt_fail(r->err, FZ_ERR_BINDING, "dim '%s' cannot be %lld", name, (long long)size);
	if (r->dims_set[k] != size)
		r->dirty = true;
	r->dims_set[k] = size;
	return FZ_OK;
}

/* The input called name, checked against its declaration; NULL on failure. */
static RtInput *input_for(fz_run *r, const char *name, fz_dtype dtype, int rank, const int64_t *shape, int *idx,
                          fz_status *s)
{
	int i = fz_program_find_input(r->p, name);
	if (i < 0) {
		*s = rt_no_such(r, "input", name);
		return NULL;
	}
	*s = check_decl(r, "input", name, &r->g->nodes[r->g->inputs[i].node], dtype, rank, shape);
	*idx = i;
	return *s == FZ_OK ? &r->in[i] : NULL;
}

fz_status fz_run_bind_input(fz_run *r, const char *name, const void *device_ptr, fz_dtype dtype, int rank,
                            const int64_t *shape)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_bind_input: run is NULL");
	int i = fz_program_find_input(r->p, name);
	return i < 0 ? rt_no_such(r, "input", name) : rt_bind_input_at(r, i, device_ptr, dtype, rank, shape);
}

fz_status rt_bind_input_at(fz_run *r, int i, const void *device_ptr, fz_dtype dtype, int rank, const int64_t *shape)
{
	const char *name = r->g->inputs[i].name;
	fz_status s = check_decl(r, "input", name, &r->g->nodes[r->g->inputs[i].node], dtype, rank, shape);
	if (s != FZ_OK)
		return s;
	RtInput *in = &r->in[i];
	if (rank == 0)
		return rt_fail(r->err, FZ_ERR_BINDING,
		               "input '%s' is a scalar %s, passed by value: bind it with fz_run_bind_scalar or "
		               "fz_run_bind_input_host", name, fz_dtype_name(dtype));
	int64_t numel = shape_numel(rank, shape);
	if (numel < 0)
		return rt_fail(r->err, FZ_ERR_LIMIT, "input '%s' has too many elements", name);
	if (!device_ptr && numel > 0)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "input '%s': device pointer is NULL", name);
	if ((s = rt_check_device_ptr(r->ctx, r->err, "input", name, (CUdeviceptr)(uintptr_t)device_ptr)) != FZ_OK)
		return s;
	set_input_shape(r, in, BIND_DEVICE, rank, shape);
	mark_ragged(r, &in->ragged, (CUdeviceptr)(uintptr_t)device_ptr);
	r->slot[r->g->inputs[i].node] = (CUdeviceptr)(uintptr_t)device_ptr;
	return FZ_OK;
}

/* Make sure *buf holds `bytes` (waiting for the stream before freeing). */
fz_status rt_ensure_buffer(fz_run *r, CUdeviceptr *buf, size_t *cap, size_t bytes, const char *what)
{
	if (bytes <= *cap)
		return FZ_OK;
	if (*buf) {
		CU(cuStreamSynchronize)(r->stream);
		CU(cuMemFree)(*buf);
		*buf = 0;
		*cap = 0;
	}
	CUresult res = rt_mem_alloc(buf, bytes);
	if (res != CUDA_SUCCESS) {
		*buf = 0;
		return cu_fail(r, res, what);
	}
	*cap = bytes;
	return FZ_OK;
}

static fz_status copy_host_input(fz_run *r, int i, const void *host, size_t bytes)
{
	RtInput *in = &r->in[i];
	fz_status s = rt_push(r->ctx, r->err);
	if (s != FZ_OK)
		return s;
	char what[300];
	snprintf(what, sizeof what, "allocating input '%s' (cuMemAlloc)", r->g->inputs[i].name);
	s = rt_ensure_buffer(r, &in->host_copy, &in->host_cap, bytes, what);
	if (s == FZ_OK && bytes) {
		CUresult res = CU(cuMemcpyHtoDAsync)(in->host_copy, host, bytes, r->stream);
		if (res != CUDA_SUCCESS)
			s = cu_fail(r, res, "copying a host input to the device (cuMemcpyHtoDAsync)");
	}
	rt_pop();
	return s;
}

fz_status fz_run_bind_input_host(fz_run *r, const char *name, const void *host_ptr, fz_dtype dtype, int rank,
                                 const int64_t *shape)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_bind_input_host: run is NULL");
	int i;
	fz_status s;
	RtInput *in = input_for(r, name, dtype, rank, shape, &i, &s);
	if (!in)
		return s;
	int64_t numel = shape_numel(rank, shape);
	if (numel < 0 || (uint64_t)numel > SIZE_MAX / 8)
		return rt_fail(r->err, FZ_ERR_LIMIT, "input '%s' has too many elements", name);
	size_t bytes = (size_t)numel * fz_dtype_size(dtype);
	if (!host_ptr && bytes)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "input '%s': host pointer is NULL", name);
	if (rank == 0) {
		memset(in->scalar, 0, sizeof in->scalar);
		memcpy(in->scalar, host_ptr, bytes);
		if (in->kind == BIND_NONE)
			r->dirty = true;
		in->kind = BIND_HOST;
		return FZ_OK;
	}
	if ((s = copy_host_input(r, i, host_ptr, bytes)) != FZ_OK)
		return s;
	set_input_shape(r, in, BIND_HOST, rank, shape);
	mark_ragged(r, &in->ragged, in->host_copy); /* (the run's own copy: aligned) */
	r->slot[r->g->inputs[i].node] = in->host_copy;
	return FZ_OK;
}

/* A double as a value of dtype t, in storage format; false if an integer
 * dtype cannot hold it exactly. */
bool rt_scalar_bytes(fz_dtype t, double v, unsigned char out[8])
{
	memset(out, 0, 8);
	switch (t) {
	case FZ_BOOL: out[0] = v != 0; return true;
	case FZ_I32: {
		if (!(v >= INT32_MIN && v <= INT32_MAX && v == (double)(int32_t)v))
			return false;
		int32_t x = (int32_t)v;
		memcpy(out, &x, 4);
		return true;
	}
	case FZ_I64: {
		if (!(v >= -0x1p63 && v < 0x1p63 && v == (double)(int64_t)v))
			return false;
		int64_t x = (int64_t)v;
		memcpy(out, &x, 8);
		return true;
	}
	case FZ_F64: memcpy(out, &v, 8); return true;
	default: break;
	}
	Scalar s = eval_cast(FZ_F64, t, (Scalar){.f = v}); /* rounds once to the half type */
	float f = (float)s.f;
	uint16_t h = t == FZ_F16 ? f32_to_f16_bits(f) : t == FZ_BF16 ? f32_to_bf16_bits(f) : 0;
	if (t == FZ_F32)
		memcpy(out, &f, 4);
	else
		memcpy(out, &h, 2);
	return true;
}

fz_status fz_run_bind_scalar(fz_run *r, const char *name, double value)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_bind_scalar: run is NULL");
	int i = fz_program_find_input(r->p, name);
	return i < 0 ? rt_no_such(r, "input", name) : rt_bind_scalar_at(r, i, value);
}

fz_status rt_bind_scalar_at(fz_run *r, int i, double value)
{
	const char *name = r->g->inputs[i].name;
	const Node *n = &r->g->nodes[r->g->inputs[i].node];
	char decl[512];
	if (n->rank != 0)
		return rt_fail(r->err, FZ_ERR_BINDING, "input '%s' is the tensor %s, not a scalar", name,
		               rt_decl_text(r, n, decl, sizeof decl));
	RtInput *in = &r->in[i];
	if (!rt_scalar_bytes((fz_dtype)n->dtype, value, in->scalar))
		return rt_fail(r->err, FZ_ERR_BINDING, "input '%s' is %s: %.17g is not a value of that type", name,
		               fz_dtype_name((fz_dtype)n->dtype), value);
	if (in->kind == BIND_NONE)
		r->dirty = true;
	in->kind = BIND_HOST;
	return FZ_OK;
}

fz_status fz_run_bind_output(fz_run *r, const char *name, void *device_ptr, fz_dtype dtype, int rank,
                             const int64_t *shape)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_bind_output: run is NULL");
	int i = fz_program_find_output(r->p, name);
	return i < 0 ? rt_no_such(r, "output", name) : rt_bind_output_at(r, i, device_ptr, dtype, rank, shape);
}

fz_status rt_bind_output_at(fz_run *r, int i, void *device_ptr, fz_dtype dtype, int rank, const int64_t *shape)
{
	const char *name = r->g->outputs[i].name;
	RtOutput *o = &r->out[i];
	if (!device_ptr) {
		r->dirty |= o->user != 0;
		o->user = 0;
		return FZ_OK;
	}
	fz_status s = check_decl(r, "output", name, &r->g->nodes[r->g->outputs[i].node], dtype, rank, shape);
	if (s == FZ_OK)
		s = rt_check_device_ptr(r->ctx, r->err, "output", name, (CUdeviceptr)(uintptr_t)device_ptr);
	if (s != FZ_OK)
		return s;
	if (!o->user || !rt_same_shape(rank, o->shape, shape))
		r->dirty = true; /* checked against the output's shape at launch */
	mark_ragged(r, &o->ragged, (CUdeviceptr)(uintptr_t)device_ptr);
	o->user = (CUdeviceptr)(uintptr_t)device_ptr;
	o->dtype = dtype;
	o->rank = rank;
	for (int k = 0; k < rank; k++)
		o->shape[k] = shape[k];
	if (!r->dirty)
		rt_set_out_ptr(r, i, o->user);
	return FZ_OK;
}

