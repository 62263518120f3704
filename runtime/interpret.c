/*
 * interpret.c: launching the GPU interpreter (interpret.h).
 *
 * The CPU interpreter's walk (ir/interp.c), each node a launch: a map for an
 * elementwise node over its shape, its operands by strides (0 where they
 * broadcast), a reduce for a row reduction; leaves are no launch (an input
 * is its memory, a constant or a scalar input its value). Every computed
 * node gets a temporary in its compute type (f16/bf16 values as f32), which
 * goes back to the stream-ordered allocator as soon as its last user is
 * enqueued; then each output is copied from its node's value into its own
 * dtype (rounding halves there, as a kernel's store does).
 */
#include "runtime/interpret.h"

#include <string.h>

#include "ir/eval.h"
#include "log.h"
#include "runtime/interpret_abi.h"

_Static_assert((int)FZI_BOOL == (int)FZ_BOOL && (int)FZI_I32 == (int)FZ_I32 && (int)FZI_I64 == (int)FZ_I64 &&
                   (int)FZI_F16 == (int)FZ_F16 && (int)FZI_BF16 == (int)FZ_BF16 && (int)FZI_F32 == (int)FZ_F32 &&
                   (int)FZI_F64 == (int)FZ_F64,
               "interpret_abi.h's dtype codes are fz_dtype's");
_Static_assert(FZI_MAX_RANK == FZ_MAX_RANK, "interpret_abi.h's rank is fusec's");

enum { INTERP_UNKNOWN, INTERP_READY, INTERP_MISSING, BLOCK = 256 };

/* The image for a device of compute capability major.minor: the newest of
 * its major not newer than it (a cubin runs on later minors of its major). */
static const RtImage *image_for(int major, int minor)
{
	const RtImage *best = NULL;
	for (int i = 0; i < rt_interp_nimages; i++) {
		int a = rt_interp_images[i].arch;
		if (a / 10 == major && a % 10 <= minor)
			best = &rt_interp_images[i];
	}
	return best;
}

static bool load_interp(fz_context *ctx)
{
	const RtImage *img = image_for(ctx->cg.cc_major, ctx->cg.cc_minor);
	if (!img) {
		log_line("interpreter: no cubin for sm_%d%d in this build: launches compile their kernels",
		         ctx->cg.cc_major, ctx->cg.cc_minor);
		return false;
	}
	CUresult r = CU(cuModuleLoadData)(&ctx->interp_mod, img->data);
	if (r == CUDA_SUCCESS)
		r = CU(cuModuleGetFunction)(&ctx->interp_map, ctx->interp_mod, "fzi_map");
	if (r == CUDA_SUCCESS)
		r = CU(cuModuleGetFunction)(&ctx->interp_reduce, ctx->interp_mod, "fzi_reduce");
	if (r != CUDA_SUCCESS) {
		log_line("interpreter: the driver refused its sm_%d cubin (CUresult %d): launches compile their kernels",
		         img->arch, (int)r);
		if (ctx->interp_mod)
			CU(cuModuleUnload)(ctx->interp_mod);
		ctx->interp_mod = NULL;
		return false;
	}
	return true;
}

bool rt_interp_available(fz_context *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->interp_state == INTERP_UNKNOWN)
		ctx->interp_state = load_interp(ctx) ? INTERP_READY : INTERP_MISSING;
	bool ok = ctx->interp_state == INTERP_READY;
	pthread_mutex_unlock(&ctx->lock);
	return ok;
}

void rt_interp_unload(fz_context *ctx)
{
	if (ctx->interp_mod)
		CU(cuModuleUnload)(ctx->interp_mod);
	ctx->interp_mod = NULL;
	ctx->interp_state = INTERP_UNKNOWN;
}

/* ---- one launch ------------------------------------------------------------------------ */

typedef struct Walk {
	fz_context *ctx;
	const RtInterpRun *run;
	const Graph *g;
	CUdeviceptr *temp;  /* per node: its value, computed here (0: none) */
	int32_t *last;      /* per node: its last user; g->n for outputs; -1 dead */
	char *err;
	int launches;
} Walk;

/* The last user of every node (ir/interp.c's liveness). */
static void liveness(Walk *w)
{
	const Graph *g = w->g;
	for (int i = 0; i < g->n; i++)
		w->last[i] = -1;
	for (int k = 0; k < g->noutputs; k++)
		w->last[g->outputs[k].node] = g->n;
	for (int i = g->n - 1; i >= 0; i--)
		for (int a = 0; w->last[i] >= 0 && a < ir_ops[g->nodes[i].op].arity; a++) {
			NodeId arg = g->nodes[i].args[a];
			if (w->last[arg] < i)
				w->last[arg] = i;
		}
}

static int64_t numel(const Walk *w, const Node *n)
{
	int64_t e = 1;
	for (int k = 0; k < n->rank; k++)
		e *= ir_dim_value(n->shape[k], w->run->dims);
	return e;
}

/* Node id as an operand of a result of rank r: where its value is, and its
 * strides over the result's dims, aligned at the end (0 where it
 * broadcasts or is missing). */
static FziOperand operand(const Walk *w, NodeId id, int r)
{
	const Node *n = &w->g->nodes[id];
	FziOperand o;
	memset(&o, 0, sizeof o);
	o.dtype = dtype_compute((fz_dtype)n->dtype);
	if (n->op == OP_CONST) {
		Scalar c;
		if (dtype_is_float((fz_dtype)n->dtype))
			c.f = n->c.f;
		else
			c.i = n->c.i;
		c = eval_normalize((fz_dtype)n->dtype, c);
		memcpy(&o.v, &c, sizeof o.v);
	} else if (n->op == OP_INPUT && n->rank == 0) {
		Scalar c = eval_load((fz_dtype)n->dtype, w->run->scalar[n->input], 0);
		memcpy(&o.v, &c, sizeof o.v);
	} else if (n->op == OP_INPUT) {
		o.ptr = w->run->slot[id];
		o.dtype = n->dtype; /* its storage format */
	} else {
		o.ptr = w->temp[id];
	}
	int64_t s = 1;
	for (int k = r - 1; k >= 0; k--) {
		int ka = k - (r - n->rank);
		if (ka < 0)
			continue;
		int64_t d = ir_dim_value(n->shape[ka], w->run->dims);
		o.stride[k] = d == 1 ? 0 : s;
		s *= d;
	}
	return o;
}

static unsigned grid_for(const Walk *w, int64_t items, int64_t per_block)
{
	int64_t blocks = (items + per_block - 1) / per_block, cap = (int64_t)(w->ctx->cg.sm_count > 0 ? w->ctx->cg.sm_count : 1) * 16;
	return (unsigned)(blocks < cap ? blocks : cap);
}

static fz_status enqueue(Walk *w, CUfunction f, void *params, unsigned grid)
{
	void *args[] = {params};
	w->launches++;
	CUresult r = CU(cuLaunchKernel)(f, grid, 1, 1, BLOCK, 1, 1, 0, w->run->stream, args, NULL);
	return r == CUDA_SUCCESS ? FZ_OK : rt_fail_cu(w->err, r, "launching the interpreter (cuLaunchKernel)");
}

/* A map writing n elements of shape `shape` at out, in dtype `store`. */
static fz_status map(Walk *w, FziMap *m, const Node *n, CUdeviceptr out, int store)
{
	m->rank = n->rank;
	for (int k = 0; k < n->rank; k++)
		m->shape[k] = ir_dim_value(n->shape[k], w->run->dims);
	m->n = numel(w, n);
	m->out = out;
	m->store = store;
	return m->n == 0 ? FZ_OK : enqueue(w, w->ctx->interp_map, m, grid_for(w, m->n, BLOCK));
}

static fz_status run_elementwise(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	FziMap m;
	memset(&m, 0, sizeof m);
	switch (ir_ops[n->op].cls) {
	case OC_SELECT: m.how = FZI_SELECT; break;
	case OC_CAST: m.how = FZI_CAST; break;
	default: m.how = FZI_SEM; break;
	}
	m.op = n->op;
	m.result = n->dtype;
	m.operand = n->operand;
	m.round = w->run->store_all && dtype_is_half((fz_dtype)n->dtype);
	m.arity = ir_ops[n->op].arity;
	for (int a = 0; a < m.arity; a++)
		m.a[a] = operand(w, n->args[a], n->rank);
	return map(w, &m, n, w->temp[id], dtype_compute((fz_dtype)n->dtype));
}

static fz_status run_reduce(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	const Node *x = &w->g->nodes[n->args[0]];
	FziReduce m;
	memset(&m, 0, sizeof m);
	m.op = n->op;
	m.result = n->dtype;
	m.operand = n->operand;
	m.store = dtype_compute((fz_dtype)n->dtype);
	m.round = w->run->store_all && dtype_is_half((fz_dtype)n->dtype);
	m.rows = numel(w, n);
	m.len = ir_dim_value(x->shape[x->rank - 1], w->run->dims);
	m.out = w->temp[id];
	m.a = operand(w, n->args[0], x->rank);
	return m.rows == 0 ? FZ_OK : enqueue(w, w->ctx->interp_reduce, &m, grid_for(w, m.rows, 1));
}

static fz_status compute(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	size_t bytes = (size_t)numel(w, n) * fz_dtype_size(dtype_compute((fz_dtype)n->dtype));
	if (bytes) {
		CUresult r = CU(cuMemAllocAsync)(&w->temp[id], bytes, w->run->stream);
		if (r != CUDA_SUCCESS)
			return rt_fail_cu(w->err, r, "allocating the interpreter's temporaries (cuMemAllocAsync)");
	}
	return ir_ops[n->op].cls == OC_REDUCE ? run_reduce(w, id) : run_elementwise(w, id);
}

static void release(Walk *w, NodeId id)
{
	if (w->temp[id])
		CU(cuMemFreeAsync)(w->temp[id], w->run->stream);
	w->temp[id] = 0;
}

static fz_status walk(Walk *w)
{
	const Graph *g = w->g;
	fz_status s = FZ_OK;
	liveness(w);
	for (int i = 0; i < g->n && s == FZ_OK; i++) {
		if (w->last[i] < 0 || ir_ops[g->nodes[i].op].cls == OC_LEAF)
			continue;
		s = compute(w, i);
		for (int a = 0; s == FZ_OK && a < ir_ops[g->nodes[i].op].arity; a++)
			if (w->last[g->nodes[i].args[a]] == i)
				release(w, g->nodes[i].args[a]);
	}
	for (int k = 0; k < g->noutputs && s == FZ_OK; k++) {
		const Node *n = &g->nodes[g->outputs[k].node];
		FziMap m;
		memset(&m, 0, sizeof m);
		m.how = FZI_COPY;
		m.arity = 1;
		m.a[0] = operand(w, g->outputs[k].node, n->rank);
		s = map(w, &m, n, w->run->out[k], n->dtype);
	}
	for (int i = 0; i < g->n; i++)
		release(w, i);
	return s;
}

fz_status rt_interp_launch(fz_context *ctx, const RtInterpRun *run, char *err)
{
	const Graph *g = run->g;
	size_t nn = (size_t)(g->n > 0 ? g->n : 1);
	Walk w = {ctx, run, g, calloc(nn, sizeof *w.temp), malloc(nn * sizeof *w.last), err, 0};
	fz_status s = w.temp && w.last ? walk(&w) : rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		log_line("interpreter: %s launched node by node (%d launches)", g->name, w.launches);
	free(w.temp);
	free(w.last);
	return s;
}
