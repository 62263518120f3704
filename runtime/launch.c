/*
 * launch.c: runs, the bindings and launches of one program.
 *
 * The host work of a launch must be a few microseconds, so everything that
 * depends only on the sizes is computed once per size and kept in a size
 * plan: which entry each kernel uses, its grid, block and shared memory, its
 * argument array (with the values the launch plan gives the kernel), and
 * one device allocation for the temporaries and workspaces. Kernel argument arrays do not hold values but point at slots
 * the run keeps (a device pointer per node, a value per scalar input, a size
 * per dim), so rebinding a buffer is one store and never rebuilds a plan; a
 * launch with unchanged shapes goes straight to cuLaunchKernel.
 *
 * A size plan's launches can be captured into a CUDA graph (on a private
 * stream, so the caller's stream may be the legacy default one) and replayed
 * with one cuGraphLaunch, which costs the host less than even one
 * cuLaunchKernel. A graph bakes in argument values, so it is good only while
 * the bound pointers and scalars equal the snapshot taken at capture. Forced
 * on, a plan is captured again whenever they differ; by default (automatic)
 * only once the same bindings have been launched RT_GRAPH_AFTER times in a
 * row, so a run launched once, or rebound at every call, never pays for a
 * capture (tens of microseconds) and launches kernel by kernel.
 *
 * The first launch at new sizes also loads the entries (the paths) they
 * take that no earlier size took: one compile, or a cache hit (jit.c).
 *
 * The hot path, a launch at known sizes, does no allocation and no search:
 * one cuCtxGetCurrent (rt_push), then one cuGraphLaunch or one cuLaunchKernel
 * per kernel (and a memset of the part of a workspace that must start zeroed,
 * split rows' counters, and a copy per output no kernel writes, both known
 * per size).
 *
 * Outputs no kernel writes (an input marked as an output, a constant, a
 * second name for a value) are filled by copies after the kernels.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/interp.h"
#include "log.h"
#include "runtime/interpret.h"
#include "runtime/rt.h"
#include "tensor.h"

enum { RT_MAX_PLANS = 16, RT_ALIGN = 256 };

/* fz_run_set_graph: off, on, automatic (the default) */
enum { RT_GRAPH_OFF, RT_GRAPH_ON, RT_GRAPH_AUTO };

typedef enum BindKind { BIND_NONE, BIND_DEVICE, BIND_HOST } BindKind;

typedef struct RtInput {
	BindKind kind;
	fz_dtype dtype;
	int rank;
	int64_t shape[FZ_MAX_RANK];
	CUdeviceptr host_copy;    /* BIND_HOST tensors: device memory the run owns */
	size_t host_cap;
	unsigned char scalar[8];  /* scalar inputs: the value in the dtype's storage format */
} RtInput;

typedef struct RtOutput {
	CUdeviceptr user;         /* caller memory, or 0 */
	fz_dtype dtype;
	int rank;
	int64_t shape[FZ_MAX_RANK]; /* of the caller's buffer */
	CUdeviceptr own;          /* run-owned memory */
	size_t own_cap;
	int64_t cur[FZ_MAX_RANK]; /* shape at the last launch */
	size_t bytes;             /* size at the last launch */
	bool written;             /* some kernel writes it (else it is copied) */
	void *host;               /* constant outputs: the value, expanded */
	size_t host_cap;
} RtOutput;

typedef struct RtLaunch {
	CUfunction f;
	unsigned grid[3], block[3], smem;
	bool cooperative;         /* its blocks must be co-resident (split rows) */
	void **params;
	CUdeviceptr ws;           /* workspace */
	size_t ws_bytes;
	size_t ws_zero;           /* its leading bytes zeroed before each launch */
} RtLaunch;

typedef struct RtSizePlan {
	int64_t *dims;            /* the key */
	RtLaunch *launches;
	int nlaunches;
	void **params;            /* every launch's argument pointers */
	int64_t *vals;            /* the launch plans' values the kernels receive (CgArg) */
	CUdeviceptr scratch;      /* temporaries and workspaces */
	CUdeviceptr *temp_ptr;    /* per Plan.temps */
	CUgraphExec exec;         /* captured with the values in snap, or NULL */
	uint64_t *snap;           /* the bound values of this plan's last launch */
	int streak;               /* launches in a row with those values (capped) */
	bool no_graph;            /* capture failed once: launch kernel by kernel */
	uint64_t last_use;
} RtSizePlan;

struct fz_run {
	fz_program *p;
	fz_context *ctx;
	const Graph *g;
	const Plan *plan;
	const CgModule *m;
	CUstream stream, capture;
	int graph_mode;           /* RT_GRAPH_* */
	bool graph_ok;            /* no host copies (which cannot be captured) */
	int ncopies;              /* outputs copied after the kernels, at these sizes */
	RtInput *in;
	RtOutput *out;
	int64_t *dims_set;        /* by fz_run_bind_dim; -1 where not */
	int64_t *dims;            /* at the last launch: kernel arguments point here */
	CUdeviceptr *slot;        /* per node: the memory kernels read it from */
	CUdeviceptr *out_slot;    /* per output: the memory it is written to */
	int *writer;              /* per node: the output index a kernel writes it as, or -1 */
	bool dirty;               /* a shape changed since the last launch */
	bool launched;            /* outputs have values (a launch went out) */
	RtSizePlan *plans[RT_MAX_PLANS];
	int nplans;
	RtSizePlan *cur;
	uint64_t tick;
	int nsnap;
	uint64_t *snap;           /* scratch for graph snapshots */
	char err[RT_ERR_MAX];
};

static size_t align_up(size_t n) { return (n + RT_ALIGN - 1) / RT_ALIGN * RT_ALIGN; }

static fz_status cu_fail(fz_run *r, CUresult res, const char *what) { return rt_fail_cu(r->err, res, what); }

/* ---- creation ---------------------------------------------------------------------- */

/* Which outputs kernels write, and the output each written node belongs to. */
static void find_writers(fz_run *r)
{
	for (int i = 0; i < r->g->n; i++)
		r->writer[i] = -1;
	for (int k = 0; k < r->plan->nkernels; k++) {
		const Kernel *kn = &r->plan->kernels[k];
		for (int j = 0; j < kn->nparams; j++) {
			const KParam *kp = &kn->params[j];
			if (kp->kind == PARAM_OUT && kp->output >= 0) {
				r->out[kp->output].written = true;
				/* An input copied to an output keeps its own buffer: the
				 * kernel reads the input and writes the copy. */
				if (r->g->nodes[kp->node].op != OP_INPUT)
					r->writer[kp->node] = kp->output;
			}
		}
	}
	r->graph_ok = true;
	for (int i = 0; i < r->g->noutputs; i++) {
		const Node *n = &r->g->nodes[r->g->outputs[i].node];
		if (!r->out[i].written && r->writer[r->g->outputs[i].node] < 0 &&
		    (n->op == OP_CONST || (n->op == OP_INPUT && n->rank == 0)))
			r->graph_ok = false;
	}
}

static fz_status run_alloc(fz_run *r)
{
	const Graph *g = r->g;
	size_t ni = (size_t)g->ninputs + 1, no = (size_t)g->noutputs + 1, nd = (size_t)g->ndims + 1;
	size_t nn = (size_t)g->n + 1;
	r->in = calloc(ni, sizeof *r->in);
	r->out = calloc(no, sizeof *r->out);
	r->dims_set = malloc(nd * sizeof *r->dims_set);
	r->dims = calloc(nd, sizeof *r->dims);
	r->slot = calloc(nn, sizeof *r->slot);
	r->out_slot = calloc(no, sizeof *r->out_slot);
	r->writer = malloc(nn * sizeof *r->writer);
	r->nsnap = 2 * g->ninputs + g->noutputs;
	r->snap = calloc((size_t)r->nsnap + 1, sizeof *r->snap);
	if (!r->in || !r->out || !r->dims_set || !r->dims || !r->slot || !r->out_slot || !r->writer || !r->snap)
		return rt_fail(NULL, FZ_ERR_NOMEM, "out of memory");
	for (int k = 0; k < g->ndims; k++)
		r->dims_set[k] = -1;
	for (int i = 0; i < g->ninputs; i++)
		r->in[i].dtype = (fz_dtype)g->nodes[g->inputs[i].node].dtype;
	find_writers(r);
	return FZ_OK;
}

fz_status fz_run_create(fz_program *p, fz_context *ctx, fz_run **out)
{
	if (!out || !p)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_create: NULL argument");
	*out = NULL;
	if (!ctx)
		ctx = p->ctx;
	if (!ctx)
		return rt_fail(p->err, FZ_ERR_ARGUMENT,
		               "program '%s' was compiled without a context: pass one to fz_run_create", p->c->graph.name);
	if (p->ctx && p->ctx != ctx)
		return rt_fail(p->err, FZ_ERR_ARGUMENT, "program '%s' is loaded in another context", p->c->graph.name);
	fz_status s;
	if (!p->ctx && (s = rt_jit_bind(ctx, p, p->err)) != FZ_OK)
		return s;
	fz_run *r = calloc(1, sizeof *r);
	if (!r)
		return rt_fail(NULL, FZ_ERR_NOMEM, "out of memory");
	r->p = p;
	r->ctx = ctx;
	r->g = &p->c->graph;
	r->plan = &p->c->plan;
	r->m = &p->c->module;
	r->dirty = true;
	r->graph_mode = RT_GRAPH_AUTO;
	if ((s = run_alloc(r)) != FZ_OK) {
		fz_run_destroy(r);
		return s;
	}
	*out = r;
	return FZ_OK;
}

static void free_plan(RtSizePlan *sp)
{
	if (sp->exec)
		CU(cuGraphExecDestroy)(sp->exec);
	if (sp->scratch)
		CU(cuMemFree)(sp->scratch);
	free(sp->dims);
	free(sp->launches);
	free(sp->params);
	free(sp->vals);
	free(sp->temp_ptr);
	free(sp->snap);
	free(sp);
}

void fz_run_destroy(fz_run *r)
{
	if (!r)
		return;
	if (r->ctx && rt_push(r->ctx, NULL) == FZ_OK) {
		CU(cuStreamSynchronize)(r->stream);
		for (int i = 0; i < r->nplans; i++)
			free_plan(r->plans[i]);
		for (int i = 0; r->in && i < r->g->ninputs; i++)
			if (r->in[i].host_copy)
				CU(cuMemFree)(r->in[i].host_copy);
		for (int i = 0; r->out && i < r->g->noutputs; i++)
			if (r->out[i].own)
				CU(cuMemFree)(r->out[i].own);
		if (r->capture)
			CU(cuStreamDestroy)(r->capture);
		rt_pop();
	}
	for (int i = 0; r->out && i < r->g->noutputs; i++)
		free(r->out[i].host);
	free(r->in);
	free(r->out);
	free(r->dims_set);
	free(r->dims);
	free(r->slot);
	free(r->out_slot);
	free(r->writer);
	free(r->snap);
	free(r);
}

const char *fz_run_error(const fz_run *r) { return r ? r->err : ""; }
const fz_program *rt_run_program(fz_run *r, char **err)
{
	*err = r->err;
	return r->p;
}

fz_status fz_run_set_stream(fz_run *r, void *stream)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_set_stream: run is NULL");
	r->stream = (CUstream)stream;
	return FZ_OK;
}

fz_status fz_run_set_graph(fz_run *r, int enable)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_set_graph: run is NULL");
	r->graph_mode = enable > 0 ? RT_GRAPH_ON : enable == 0 ? RT_GRAPH_OFF : RT_GRAPH_AUTO;
	return FZ_OK;
}

/* ---- binding ------------------------------------------------------------------------ */

/* Output i goes to ptr; a node a kernel writes as output i is read from there. */
static void set_out_ptr(fz_run *r, int i, CUdeviceptr ptr)
{
	NodeId n = r->g->outputs[i].node;
	r->out_slot[i] = ptr;
	if (r->writer[n] == i)
		r->slot[n] = ptr;
}

static int find_dim(const Graph *g, const char *name)
{
	for (int k = 0; name && k < g->ndims; k++)
		if (strcmp(g->dims[k], name) == 0)
			return k;
	return -1;
}

static fz_status no_such(fz_run *r, const char *what, const char *name)
{
	return rt_fail(r->err, FZ_ERR_BINDING, "program '%s' has no %s named '%s'", r->g->name, what,
	               name ? name : "(null)");
}

static const char *decl_text(fz_run *r, const Node *n, char *buf, size_t cap)
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
	               decl_text(r, n, want, sizeof want), rank < 0 || rank > FZ_MAX_RANK ? "a rank out of range: " : "",
	               got);
}

static bool same_shape(int rank, const int64_t *a, const int64_t *b)
{
	return rank == 0 || memcmp(a, b, sizeof *a * (size_t)rank) == 0;
}

/* Record a tensor input's type; marks the run dirty if its shape changed. */
static void set_input_shape(fz_run *r, RtInput *in, BindKind kind, int rank, const int64_t *shape)
{
	if (in->kind == BIND_NONE || in->rank != rank || !same_shape(rank, in->shape, shape))
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
	int k = find_dim(r->g, name);
	if (k < 0)
		return no_such(r, "dim", name);
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
		*s = no_such(r, "input", name);
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
	return i < 0 ? no_such(r, "input", name) : rt_bind_input_at(r, i, device_ptr, dtype, rank, shape);
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
	r->slot[r->g->inputs[i].node] = (CUdeviceptr)(uintptr_t)device_ptr;
	return FZ_OK;
}

/* Make sure *buf holds `bytes` (waiting for the stream before freeing). */
static fz_status ensure_buffer(fz_run *r, CUdeviceptr *buf, size_t *cap, size_t bytes, const char *what)
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
	s = ensure_buffer(r, &in->host_copy, &in->host_cap, bytes, what);
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
	r->slot[r->g->inputs[i].node] = in->host_copy;
	return FZ_OK;
}

/* A double as a value of dtype t, in storage format; false if an integer
 * dtype cannot hold it exactly. */
static bool scalar_bytes(fz_dtype t, double v, unsigned char out[8])
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
	return i < 0 ? no_such(r, "input", name) : rt_bind_scalar_at(r, i, value);
}

fz_status rt_bind_scalar_at(fz_run *r, int i, double value)
{
	const char *name = r->g->inputs[i].name;
	const Node *n = &r->g->nodes[r->g->inputs[i].node];
	char decl[512];
	if (n->rank != 0)
		return rt_fail(r->err, FZ_ERR_BINDING, "input '%s' is the tensor %s, not a scalar", name,
		               decl_text(r, n, decl, sizeof decl));
	RtInput *in = &r->in[i];
	if (!scalar_bytes((fz_dtype)n->dtype, value, in->scalar))
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
	return i < 0 ? no_such(r, "output", name) : rt_bind_output_at(r, i, device_ptr, dtype, rank, shape);
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
	if (!o->user || !same_shape(rank, o->shape, shape))
		r->dirty = true; /* checked against the output's shape at launch */
	o->user = (CUdeviceptr)(uintptr_t)device_ptr;
	o->dtype = dtype;
	o->rank = rank;
	for (int k = 0; k < rank; k++)
		o->shape[k] = shape[k];
	if (!r->dirty)
		set_out_ptr(r, i, o->user);
	return FZ_OK;
}

/* ---- sizes ---------------------------------------------------------------------------- */

/* Every input bound; the dims bound from their shapes (the interpreter's
 * rules and messages, through ir_bind_dims). */
static fz_status resolve_dims(fz_run *r, int64_t *dims)
{
	const Graph *g = r->g;
	Tensor *t = calloc((size_t)g->ninputs + 1, sizeof *t);
	if (!t)
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = FZ_OK;
	for (int i = 0; i < g->ninputs && s == FZ_OK; i++) {
		const RtInput *in = &r->in[i];
		if (in->kind == BIND_NONE)
			s = rt_fail(r->err, FZ_ERR_BINDING, "input '%s' is not bound", g->inputs[i].name);
		t[i].dtype = in->dtype;
		t[i].rank = in->rank;
		memcpy(t[i].shape, in->shape, sizeof t[i].shape);
	}
	if (g->ndims)
		memcpy(dims, r->dims_set, sizeof *dims * (size_t)g->ndims);
	char msg[1024];
	if (s == FZ_OK && (s = ir_bind_dims(g, t, dims, msg, sizeof msg)) != FZ_OK)
		rt_fail(r->err, s, "%s", msg);
	for (int k = 0; k < g->ndims && s == FZ_OK; k++)
		if (dims[k] < 0)
			s = rt_fail(r->err, FZ_ERR_BINDING, "dim '%s' is not bound", g->dims[k]);
	free(t);
	return s;
}

/* max/min of an empty row has no value: an error before anything runs, in
 * the interpreter's words (ir_check_empty_rows). */
static fz_status check_reductions(fz_run *r, const int64_t *dims)
{
	char msg[512];
	fz_status s = ir_check_empty_rows(r->g, dims, msg, sizeof msg);
	return s == FZ_OK ? s : rt_fail(r->err, s, "%s", msg);
}

static fz_status node_bytes(fz_run *r, NodeId id, const int64_t *dims, size_t *bytes)
{
	const Node *n = &r->g->nodes[id];
	int64_t numel;
	char ty[512];
	if (!ir_numel(n->rank, n->shape, dims, &numel) || (uint64_t)numel > SIZE_MAX / 16)
		return rt_fail(r->err, FZ_ERR_LIMIT, "a value of type %s is too large for these sizes",
		               decl_text(r, n, ty, sizeof ty));
	*bytes = (size_t)numel * fz_dtype_size((fz_dtype)n->dtype);
	return FZ_OK;
}

/* Where argument a of launch l points: a run slot, or the launch's workspace. */
static void *arg_slot(fz_run *r, RtLaunch *l, const Kernel *kn, const CgArg *a)
{
	if (a->kind == CGARG_WORKSPACE)
		return &l->ws;
	if (a->index < 0 || a->index >= kn->nparams)
		return NULL;
	const KParam *kp = &kn->params[a->index];
	switch (kp->kind) {
	case PARAM_IN: return &r->slot[kp->node];
	case PARAM_OUT: return kp->output >= 0 ? (void *)&r->out_slot[kp->output] : (void *)&r->slot[kp->node];
	case PARAM_SCALAR: return r->in[r->g->nodes[kp->node].input].scalar;
	case PARAM_DIM: return &r->dims[kp->dim];
	}
	return NULL;
}

/* A grid meant to be one resident wave (grid-stride loops) is cut to the
 * blocks the compiled entry really fits an SM with (its registers are known
 * only now): a second, partial wave would leave most SMs idle at the end;
 * and to a multiple of its grid_step (codegen's prefetch_grid says why).
 * Once per size plan, so not on the per-call path; where the driver cannot
 * say, the grid stays as codegen sized it. */
static void fit_resident(fz_run *r, CgLaunch *cl)
{
	int per_sm = 0, threads = (int)(cl->block[0] * cl->block[1] * cl->block[2]);
	CUresult res = CU(cuOccupancyMaxActiveBlocksPerMultiprocessor)(&per_sm, r->p->funcs[cl->entry], threads,
	                                                               (size_t)cl->smem);
	int64_t fit = (int64_t)per_sm * (r->ctx->cg.sm_count > 0 ? r->ctx->cg.sm_count : 1);
	if (res == CUDA_SUCCESS && per_sm > 0 && fit < cl->grid[0])
		cl->grid[0] = (unsigned)cg_resident_cut(cl, fit);
}

/* What the launched entries need before they run: above 48 KiB of dynamic
 * shared memory an opt-in, and grids meant as one resident wave cut to what
 * the compiled entry fits. */
static fz_status fit_launches(fz_run *r, CgLaunch *cl)
{
	for (int k = 0; k < r->plan->nkernels; k++) {
		if (cl[k].empty)
			continue;
		if (cl[k].smem > 0) { /* any dynamic amount: static memory counts against the 48 KB default too */
			fz_status s = rt_allow_smem(r->p, cl[k].entry, cl[k].smem, r->err);
			if (s != FZ_OK)
				return s;
		}
		if (cl[k].resident)
			fit_resident(r, &cl[k]);
	}
	return FZ_OK;
}

/* Choose each kernel's entry and geometry for these sizes (codegen's rules),
 * and load the entries they use that are not loaded yet. */
static fz_status plan_launches(fz_run *r, RtSizePlan *sp, CgLaunch *cl, size_t *nargs)
{
	*nargs = 0;
	bool *need = calloc((size_t)r->m->nentries + 1, sizeof *need);
	if (!need)
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = FZ_OK;
	for (int k = 0; k < r->plan->nkernels && s == FZ_OK; k++) {
		if (!cg_launch(r->m, r->plan, k, sp->dims, &r->ctx->cg, &cl[k]))
			s = rt_fail(r->err, FZ_ERR_LIMIT, "kernel '%s' cannot be launched for these sizes",
			            r->plan->kernels[k].name);
		else if (!cl[k].empty && (cl[k].entry < 0 || cl[k].entry >= r->m->nentries))
			s = rt_fail(r->err, FZ_ERR_INTERNAL, "kernel '%s': launch entry %d out of range",
			            r->plan->kernels[k].name, cl[k].entry);
		else if (!cl[k].empty) {
			need[cl[k].entry] = true;
			*nargs += (size_t)r->m->entries[cl[k].entry].nargs;
		}
	}
	if (s == FZ_OK)
		s = rt_jit_entries(r->p, need, r->err);
	free(need);
	return s == FZ_OK ? fit_launches(r, cl) : s;
}

/* Lay out temporaries and workspaces in one allocation. */
static fz_status alloc_scratch(fz_run *r, RtSizePlan *sp)
{
	size_t total = 0, bytes;
	size_t *off = calloc((size_t)r->plan->ntemps + 1, sizeof *off);
	if (!off)
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = FZ_OK;
	for (int t = 0; t < r->plan->ntemps && s == FZ_OK; t++) {
		s = node_bytes(r, r->plan->temps[t], sp->dims, &bytes);
		off[t] = total;
		total += align_up(bytes);
	}
	size_t ws_base = total;
	for (int i = 0; i < sp->nlaunches; i++)
		total += align_up(sp->launches[i].ws_bytes);
	CUresult res = CUDA_SUCCESS;
	if (s == FZ_OK && total > 0 && (res = rt_mem_alloc(&sp->scratch, total)) != CUDA_SUCCESS)
		s = cu_fail(r, res, "allocating temporaries (cuMemAlloc)");
	if (s == FZ_OK && sp->scratch) {
		for (int t = 0; t < r->plan->ntemps; t++)
			sp->temp_ptr[t] = sp->scratch + off[t];
		for (int i = 0; i < sp->nlaunches; i++) {
			sp->launches[i].ws = sp->launches[i].ws_bytes ? sp->scratch + ws_base : 0;
			ws_base += align_up(sp->launches[i].ws_bytes);
		}
	}
	free(off);
	return s;
}

static fz_status fill_launches(fz_run *r, RtSizePlan *sp, const CgLaunch *cl)
{
	size_t used = 0;
	for (int k = 0; k < r->plan->nkernels; k++) {
		if (cl[k].empty)
			continue;
		const CgEntry *e = &r->m->entries[cl[k].entry];
		const Kernel *kn = &r->plan->kernels[k];
		RtLaunch *l = &sp->launches[sp->nlaunches++];
		l->f = r->p->funcs[cl[k].entry];
		memcpy(l->grid, cl[k].grid, sizeof l->grid);
		memcpy(l->block, cl[k].block, sizeof l->block);
		l->smem = cl[k].smem;
		l->cooperative = cl[k].cooperative;
		l->ws_bytes = cl[k].workspace > 0 ? (size_t)cl[k].workspace : 0;
		l->ws_zero = cl[k].workspace_zero > 0 ? (size_t)cl[k].workspace_zero : 0;
		if (l->ws_zero > l->ws_bytes)
			l->ws_zero = l->ws_bytes;
		l->params = sp->params + used;
		log_line("launch %s (%s): grid %ux%ux%u, block %ux%ux%u, %u bytes of dynamic shared memory%s", kn->name,
		         e->symbol, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem,
		         l->cooperative ? ", cooperative" : "");
		for (int j = 0; j < e->nargs; j++) {
			const CgArg *a = &e->args[j];
			if (a->kind != CGARG_PARAM && a->kind != CGARG_WORKSPACE) { /* a value of the launch plan */
				sp->vals[used + (size_t)j] = cg_launch_arg(r->m, k, &cl[k], a);
				l->params[j] = &sp->vals[used + (size_t)j];
			} else if (!(l->params[j] = arg_slot(r, l, kn, a))) {
				return rt_fail(r->err, FZ_ERR_INTERNAL, "entry '%s': argument %d names no parameter of kernel '%s'",
				               e->symbol, j, kn->name);
			}
		}
		used += (size_t)e->nargs;
	}
	return FZ_OK;
}

static fz_status build_plan(fz_run *r, const int64_t *dims, RtSizePlan **out)
{
	const Graph *g = r->g;
	int nk = r->plan->nkernels;
	RtSizePlan *sp = calloc(1, sizeof *sp);
	CgLaunch *cl = calloc((size_t)nk + 1, sizeof *cl);
	if (sp) {
		sp->dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
		sp->launches = calloc((size_t)nk + 1, sizeof *sp->launches);
		sp->temp_ptr = calloc((size_t)r->plan->ntemps + 1, sizeof *sp->temp_ptr);
		sp->snap = calloc((size_t)r->nsnap + 1, sizeof *sp->snap);
	}
	if (!sp || !cl || !sp->dims || !sp->launches || !sp->temp_ptr || !sp->snap) {
		free(cl);
		if (sp)
			free_plan(sp);
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	}
	if (g->ndims)
		memcpy(sp->dims, dims, sizeof *dims * (size_t)g->ndims);
	size_t nargs;
	fz_status s = plan_launches(r, sp, cl, &nargs);
	if (s == FZ_OK && (!(sp->params = calloc(nargs + 1, sizeof *sp->params)) ||
	                   !(sp->vals = calloc(nargs + 1, sizeof *sp->vals))))
		s = rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		s = fill_launches(r, sp, cl);
	if (s == FZ_OK)
		s = alloc_scratch(r, sp);
	free(cl);
	if (s != FZ_OK) {
		free_plan(sp);
		return s;
	}
	*out = sp;
	return FZ_OK;
}

/* Keep at most RT_MAX_PLANS sizes: drop the least recently used. */
static void evict_plan(fz_run *r)
{
	int lru = 0;
	for (int i = 1; i < r->nplans; i++)
		if (r->plans[i]->last_use < r->plans[lru]->last_use)
			lru = i;
	CU(cuStreamSynchronize)(r->stream); /* its scratch may still be in use */
	if (r->plans[lru] == r->cur)
		r->cur = NULL;
	free_plan(r->plans[lru]);
	r->plans[lru] = r->plans[--r->nplans];
}

static RtSizePlan *find_plan(fz_run *r, const int64_t *dims)
{
	size_t n = sizeof *dims * (size_t)r->g->ndims;
	for (int i = 0; i < r->nplans; i++)
		if (n == 0 || memcmp(r->plans[i]->dims, dims, n) == 0)
			return r->plans[i];
	return NULL;
}

/* A constant output, expanded to its shape on the host (copied each launch). */
static bool fill_const(RtOutput *o, const Node *n, size_t bytes)
{
	size_t es = fz_dtype_size((fz_dtype)n->dtype);
	if (bytes > o->host_cap) {
		void *h = realloc(o->host, bytes);
		if (!h)
			return false;
		o->host = h;
		o->host_cap = bytes;
	}
	unsigned char v[8] = {0};
	if (dtype_is_float((fz_dtype)n->dtype)) {
		scalar_bytes((fz_dtype)n->dtype, n->c.f, v);
	} else {
		int64_t i = n->dtype == FZ_BOOL ? n->c.i != 0 : n->c.i;
		int32_t i32 = (int32_t)i;
		if (es == 4)
			memcpy(v, &i32, 4);
		else
			memcpy(v, &i, es);
	}
	for (size_t off = 0; off < bytes; off += es)
		memcpy((char *)o->host + off, v, es);
	return true;
}

static fz_status prepare_output(fz_run *r, int i, const int64_t *dims)
{
	const IrOutput *io = &r->g->outputs[i];
	const Node *n = &r->g->nodes[io->node];
	RtOutput *o = &r->out[i];
	size_t bytes = 0;
	fz_status s = node_bytes(r, io->node, dims, &bytes);
	if (s != FZ_OK)
		return s;
	for (int k = 0; k < n->rank; k++)
		o->cur[k] = ir_dim_value(n->shape[k], dims);
	o->bytes = bytes;
	if (n->op == OP_CONST && !o->written && r->writer[io->node] < 0 && !fill_const(o, n, bytes))
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	if (o->user) {
		if (same_shape(n->rank, o->cur, o->shape))
			goto done;
		Tensor want = {.dtype = (fz_dtype)n->dtype, .rank = n->rank}, got = {.dtype = o->dtype, .rank = o->rank};
		memcpy(want.shape, o->cur, sizeof want.shape);
		memcpy(got.shape, o->shape, sizeof got.shape);
		char w[256], gt[256];
		tensor_type_str(&want, w, sizeof w);
		tensor_type_str(&got, gt, sizeof gt);
		return rt_fail(r->err, FZ_ERR_BINDING, "output '%s' is %s for these inputs; the bound buffer is %s",
		               io->name, w, gt);
	}
	char what[300];
	snprintf(what, sizeof what, "allocating output '%s' (cuMemAlloc)", io->name);
	if ((s = ensure_buffer(r, &o->own, &o->own_cap, bytes, what)) != FZ_OK)
		return s;
done:
	set_out_ptr(r, i, o->user ? o->user : o->own);
	return FZ_OK;
}

/* Bindings changed: find (or make) the plan for the new sizes. */
static fz_status prepare(fz_run *r)
{
	const Graph *g = r->g;
	int64_t *dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
	if (!dims)
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = resolve_dims(r, dims);
	RtSizePlan *sp = s == FZ_OK ? find_plan(r, dims) : NULL;
	if (s == FZ_OK && !sp && (s = check_reductions(r, dims)) == FZ_OK) {
		if (r->nplans == RT_MAX_PLANS)
			evict_plan(r);
		if ((s = build_plan(r, dims, &sp)) == FZ_OK)
			r->plans[r->nplans++] = sp;
	}
	r->ncopies = 0;
	for (int i = 0; i < g->noutputs && s == FZ_OK; i++) {
		s = prepare_output(r, i, dims);
		r->ncopies += !r->out[i].written && r->out[i].bytes > 0;
	}
	if (s == FZ_OK) {
		for (int t = 0; t < r->plan->ntemps; t++)
			r->slot[r->plan->temps[t]] = sp->temp_ptr[t];
		if (g->ndims)
			memcpy(r->dims, dims, sizeof *dims * (size_t)g->ndims);
		r->cur = sp;
		r->dirty = false;
	}
	free(dims);
	return s;
}

/* ---- launching -------------------------------------------------------------------------- */

/* Outputs no kernel writes: copied from where their value is. */
static fz_status copy_outputs(fz_run *r, CUstream st)
{
	const Graph *g = r->g;
	for (int i = 0; i < g->noutputs; i++) {
		RtOutput *o = &r->out[i];
		if (o->written || o->bytes == 0)
			continue;
		NodeId id = g->outputs[i].node;
		const Node *n = &g->nodes[id];
		CUresult res;
		if (n->op == OP_CONST && r->writer[id] < 0)
			res = CU(cuMemcpyHtoDAsync)(r->out_slot[i], o->host, o->bytes, st);
		else if (n->op == OP_INPUT && n->rank == 0)
			res = CU(cuMemcpyHtoDAsync)(r->out_slot[i], r->in[n->input].scalar, o->bytes, st);
		else if (r->slot[id])
			res = CU(cuMemcpyDtoDAsync)(r->out_slot[i], r->slot[id], o->bytes, st);
		else
			return rt_fail(r->err, FZ_ERR_INTERNAL, "output '%s' is written by no kernel", g->outputs[i].name);
		if (res != CUDA_SUCCESS)
			return cu_fail(r, res, "copying an output (cuMemcpyAsync)");
	}
	return FZ_OK;
}

/* A cooperative launch (cuLaunchKernelEx, which stream capture records as a
 * cooperative graph node). */
static CUresult launch_cooperative(const RtLaunch *l, CUstream st)
{
	CUlaunchAttribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	attr.value.cooperative = 1;
	CUlaunchConfig cfg = {l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
	                      l->smem, st, &attr, 1};
	return CU(cuLaunchKernelEx)(&cfg, l->f, l->params, NULL);
}

static fz_status enqueue(fz_run *r, const RtSizePlan *sp, CUstream st)
{
	for (int i = 0; i < sp->nlaunches; i++) {
		const RtLaunch *l = &sp->launches[i];
		CUresult res = CUDA_SUCCESS;
		if (l->ws_zero) /* codegen's contract: the counters start at zero */
			res = CU(cuMemsetD8Async)(l->ws, 0, l->ws_zero, st);
		if (res == CUDA_SUCCESS && l->cooperative)
			res = launch_cooperative(l, st);
		else if (res == CUDA_SUCCESS)
			res = CU(cuLaunchKernel)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
			                         l->block[2], l->smem, st, l->params, NULL);
		if (res != CUDA_SUCCESS)
			return cu_fail(r, res, "launching a kernel (cuLaunchKernel)");
	}
	return r->ncopies ? copy_outputs(r, st) : FZ_OK;
}

/* The values a captured graph has baked in (besides the plan's own). */
static void snapshot(const fz_run *r, uint64_t *v)
{
	int j = 0;
	for (int i = 0; i < r->g->ninputs; i++) {
		v[j++] = r->slot[r->g->inputs[i].node];
		memcpy(&v[j++], r->in[i].scalar, 8);
	}
	for (int i = 0; i < r->g->noutputs; i++)
		v[j++] = r->out_slot[i];
}

static void drop_graph(RtSizePlan *sp)
{
	if (sp->exec)
		CU(cuGraphExecDestroy)(sp->exec); /* freed once a replay in flight ends */
	sp->exec = NULL;
}

/* Capture sp's launches with the values bound now (r->snap). */
static fz_status capture(fz_run *r, RtSizePlan *sp)
{
	CUresult res;
	if (!r->capture && (res = CU(cuStreamCreate)(&r->capture, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
		return cu_fail(r, res, "creating the capture stream (cuStreamCreate)");
	drop_graph(sp);
	if ((res = CU(cuStreamBeginCapture)(r->capture, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) != CUDA_SUCCESS)
		return cu_fail(r, res, "capturing a CUDA graph (cuStreamBeginCapture)");
	fz_status s = enqueue(r, sp, r->capture);
	CUgraph graph = NULL;
	res = CU(cuStreamEndCapture)(r->capture, &graph);
	if (s == FZ_OK && res != CUDA_SUCCESS)
		s = cu_fail(r, res, "capturing a CUDA graph (cuStreamEndCapture)");
	if (s == FZ_OK && (res = CU(cuGraphInstantiateWithFlags)(&sp->exec, graph, 0)) != CUDA_SUCCESS) {
		sp->exec = NULL;
		s = cu_fail(r, res, "instantiating a CUDA graph (cuGraphInstantiateWithFlags)");
	}
	if (graph)
		CU(cuGraphDestroy)(graph);
	return s;
}

/* The caller's stream is being captured (into the caller's own graph): the
 * automatic mode then launches kernel by kernel, into that capture, as if
 * graphs were off. An error counts as capturing. */
static bool stream_capturing(const fz_run *r)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CU(cuStreamIsCapturing)(r->stream, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static int graph_after = RT_GRAPH_AFTER;
static pthread_once_t graph_after_once = PTHREAD_ONCE_INIT;

static void read_graph_after(void)
{
	const char *e = getenv("FUSEC_GRAPH_AFTER");
	long v = e ? strtol(e, NULL, 10) : 0;
	if (v > 0 && v <= 1000000)
		graph_after = (int)v;
}

int rt_graph_after(void)
{
	pthread_once(&graph_after_once, read_graph_after);
	return graph_after;
}

/* Replay sp's graph if it holds the values bound now; else capture it when
 * the mode says so (forced: at once; automatic: once the same values have
 * been launched RT_GRAPH_AFTER times in a row), or launch kernel by kernel.
 * A graph is an optimisation: if the driver will not capture these launches
 * (an older driver and a cooperative kernel, say), the plan goes back to
 * launching kernel by kernel for good, where a real error shows up as itself. */
static fz_status launch_graph(fz_run *r, RtSizePlan *sp)
{
	size_t n = sizeof *r->snap * (size_t)r->nsnap;
	snapshot(r, r->snap);
	if (sp->streak == 0 || memcmp(sp->snap, r->snap, n) != 0) {
		memcpy(sp->snap, r->snap, n);
		sp->streak = 0;
		drop_graph(sp); /* captured with other values */
	}
	int after = rt_graph_after();
	if (sp->streak < after)
		sp->streak++;
	bool autom = r->graph_mode == RT_GRAPH_AUTO;
	if (autom && ((!sp->exec && sp->streak < after) || stream_capturing(r)))
		return enqueue(r, sp, r->stream);
	if (!sp->exec && capture(r, sp) != FZ_OK) {
		drop_graph(sp);
		sp->no_graph = true;
		return enqueue(r, sp, r->stream);
	}
	CUresult res = CU(cuGraphLaunch)(sp->exec, r->stream);
	return res == CUDA_SUCCESS ? FZ_OK : cu_fail(r, res, "launching a CUDA graph (cuGraphLaunch)");
}

/* ---- the GPU interpreter ------------------------------------------------------------------- */

/* The program asks for the interpreter (fz_program_set_interpret) and it can
 * serve: never into a capture of the caller's stream, whose graph would keep
 * the interpreter's launches for every replay (there the kernels compile). */
static bool interpreting(fz_run *r)
{
	return __atomic_load_n(&r->p->interpret, __ATOMIC_RELAXED) && !stream_capturing(r) &&
	       rt_interp_available(r->ctx);
}

/* The bound run on the interpreter: the sizes and outputs as prepare()
 * finds them, no size plan (the next launch makes or finds one). */
static fz_status launch_interpreted(fz_run *r)
{
	const Graph *g = r->g;
	int64_t *dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
	const unsigned char **scalar = calloc((size_t)g->ninputs + 1, sizeof *scalar);
	fz_status s = dims && scalar ? resolve_dims(r, dims) : rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		s = check_reductions(r, dims);
	for (int i = 0; i < g->noutputs && s == FZ_OK; i++)
		s = prepare_output(r, i, dims);
	for (int i = 0; i < g->ninputs && s == FZ_OK; i++)
		scalar[i] = r->in[i].scalar;
	if (s == FZ_OK) {
		RtInterpRun run = {g, dims, r->slot, scalar, r->out_slot, r->stream, !r->p->opt.fuse};
		s = rt_interp_launch(r->ctx, &run, r->err);
	}
	if (s == FZ_OK && g->ndims)
		memcpy(r->dims, dims, sizeof *dims * (size_t)g->ndims);
	r->dirty = true; /* the next launch finds its size plan again */
	r->launched |= s == FZ_OK;
	free(dims);
	free(scalar);
	return s;
}

fz_status fz_run_launch(fz_run *r)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_launch: run is NULL");
	fz_status s = rt_push(r->ctx, r->err);
	if (s != FZ_OK)
		return s;
	if (interpreting(r)) {
		s = launch_interpreted(r);
		rt_pop();
		return s;
	}
	if (r->dirty || !r->cur)
		s = prepare(r);
	if (s == FZ_OK) {
		r->launched = true;
		RtSizePlan *sp = r->cur;
		sp->last_use = ++r->tick;
		if (r->graph_mode != RT_GRAPH_OFF && r->graph_ok && !sp->no_graph && sp->nlaunches > 0)
			s = launch_graph(r, sp);
		else
			s = enqueue(r, sp, r->stream);
	}
	rt_pop();
	return s;
}

fz_status fz_run_synchronize(fz_run *r)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_synchronize: run is NULL");
	fz_status s = rt_push(r->ctx, r->err);
	if (s != FZ_OK)
		return s;
	CUresult res = CU(cuStreamSynchronize)(r->stream);
	rt_pop();
	return res == CUDA_SUCCESS ? FZ_OK : cu_fail(r, res, "running the kernels (cuStreamSynchronize)");
}

/* ---- results ------------------------------------------------------------------------------ */

static fz_status launched_output(fz_run *r, const char *name, int *i)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_output: run is NULL");
	if ((*i = fz_program_find_output(r->p, name)) < 0)
		return no_such(r, "output", name);
	if (!r->launched)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "output '%s' has no value yet: the run was not launched", name);
	return FZ_OK;
}

fz_status fz_run_output(fz_run *r, const char *name, void **device_ptr, int *rank, int64_t *shape)
{
	int i = -1;
	fz_status s = launched_output(r, name, &i);
	if (s != FZ_OK)
		return s;
	const Node *n = &r->g->nodes[r->g->outputs[i].node];
	if (device_ptr)
		*device_ptr = (void *)(uintptr_t)r->out_slot[i];
	if (rank)
		*rank = n->rank;
	if (shape)
		memcpy(shape, r->out[i].cur, sizeof *shape * (size_t)n->rank);
	return FZ_OK;
}

fz_status fz_run_read_output(fz_run *r, const char *name, void *host_ptr, size_t bytes)
{
	int i = -1;
	fz_status s = launched_output(r, name, &i);
	if (s != FZ_OK)
		return s;
	if (bytes != r->out[i].bytes || (!host_ptr && bytes))
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "output '%s' is %zu bytes; got a buffer of %zu bytes%s", name,
		               r->out[i].bytes, bytes, host_ptr ? "" : " at NULL");
	if (bytes == 0)
		return FZ_OK;
	if ((s = rt_push(r->ctx, r->err)) != FZ_OK)
		return s;
	CUresult res = CU(cuMemcpyDtoHAsync)(host_ptr, r->out_slot[i], bytes, r->stream);
	if (res == CUDA_SUCCESS)
		res = CU(cuStreamSynchronize)(r->stream);
	rt_pop();
	return res == CUDA_SUCCESS ? FZ_OK : cu_fail(r, res, "reading an output (cuMemcpyDtoHAsync)");
}

fz_status fz_run_dim(fz_run *r, const char *name, int64_t *size)
{
	if (!r || !size)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_dim: NULL argument");
	int k = find_dim(r->g, name);
	if (k < 0)
		return no_such(r, "dim", name);
	if (!r->launched && r->dims_set[k] < 0)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "dim '%s' has no value yet: the run was not launched", name);
	*size = r->launched ? r->dims[k] : r->dims_set[k];
	return FZ_OK;
}
