/*
 * interpret.c: launching the GPU interpreter (interpret.h).
 *
 * A launch per row reduction, in the graph's order, then one per output:
 * each evaluates, per element, the expression of the elementwise nodes
 * under it (FziExpr) down to what is in memory: inputs, constants and
 * scalar inputs (values), and the reductions' results, each kept in a
 * temporary in its compute type (f16/bf16 as f32) from the stream-ordered
 * allocator until the launch's end. An output is stored in its own dtype
 * (halves rounded there, as a kernel's store does). An expression too large
 * for one parameter block sends its latest argument to memory first. So
 * the elementwise work is recomputed where several users share it, and
 * nothing but reductions' results goes through memory.
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
	CUdeviceptr *temp;  /* per node: its value in memory, computed here (0: none) */
	bool *stored;       /* per node: a reduction's or a materialised value, in temp */
	int16_t *reg;       /* per node: its register in the expression being built, or -1 */
	char *err;
	int launches;
} Walk;

static int64_t numel(const Walk *w, const Node *n)
{
	int64_t e = 1;
	for (int k = 0; k < n->rank; k++)
		e *= ir_dim_value(n->shape[k], w->run->dims);
	return e;
}

/* Node id as an operand of an expression of rank r and shape `shape`: where
 * its value is, and its strides over the expression's dims, aligned at the
 * end (0 where it broadcasts or is missing). */
static FziOperand operand(const Walk *w, NodeId id, int r, const int64_t *shape)
{
	const Node *n = &w->g->nodes[id];
	FziOperand o;
	memset(&o, 0, sizeof o);
	o.dtype = dtype_compute((fz_dtype)n->dtype);
	o.kind = FZI_VALUE;
	if (n->op == OP_CONST) {
		Scalar c;
		if (dtype_is_float((fz_dtype)n->dtype))
			c.f = n->c.f;
		else
			c.i = n->c.i;
		c = eval_normalize((fz_dtype)n->dtype, c);
		memcpy(&o.v, &c, sizeof o.v);
		return o;
	}
	if (n->op == OP_INPUT && n->rank == 0) {
		Scalar c = eval_load((fz_dtype)n->dtype, w->run->scalar[n->input], 0);
		memcpy(&o.v, &c, sizeof o.v);
		return o;
	}
	o.ptr = n->op == OP_INPUT ? w->run->slot[id] : w->temp[id];
	if (n->op == OP_INPUT)
		o.dtype = n->dtype; /* its storage format */
	bool same = n->rank == r;
	int64_t s = 1;
	for (int k = r - 1; k >= 0; k--) {
		int ka = k - (r - n->rank);
		if (ka < 0)
			continue;
		int64_t d = ir_dim_value(n->shape[ka], w->run->dims);
		o.stride[k] = d == 1 ? 0 : s;
		same &= d == shape[k];
		s *= d;
	}
	o.kind = same ? FZI_DENSE : FZI_STRIDED;
	return o;
}

static bool in_memory(const Walk *w, NodeId id)
{
	return ir_ops[w->g->nodes[id].op].cls == OC_LEAF || w->stored[id];
}

/* Add node id, and the elementwise nodes under it not in memory, to x
 * (evaluated over rank r, shape): its register, or -1 when x is full. */
static int emit(Walk *w, FziExpr *x, NodeId id, int r, const int64_t *shape)
{
	if (w->reg[id] >= 0)
		return w->reg[id];
	const Node *n = &w->g->nodes[id];
	FziInstr in;
	memset(&in, 0, sizeof in);
	if (in_memory(w, id)) {
		if (x->nloads == FZI_MAX_LOADS)
			return -1;
		x->load[x->nloads] = operand(w, id, r, shape);
		x->strided |= x->load[x->nloads].kind == FZI_STRIDED;
		in.how = FZI_LOAD;
		in.a[0] = (unsigned char)x->nloads++;
	} else {
		OpClass cls = ir_ops[n->op].cls;
		in.how = cls == OC_SELECT ? FZI_SELECT : cls == OC_CAST ? FZI_CAST : FZI_SEM;
		in.op = (unsigned char)n->op;
		in.result = n->dtype;
		in.operand = n->operand;
		in.round = w->run->store_all && dtype_is_half((fz_dtype)n->dtype);
		for (int a = 0; a < ir_ops[n->op].arity; a++) {
			int ra = emit(w, x, n->args[a], r, shape);
			if (ra < 0)
				return -1;
			in.a[a] = (unsigned char)ra;
		}
	}
	if (x->ncode == FZI_MAX_CODE)
		return -1;
	x->code[x->ncode] = in;
	return w->reg[id] = (int16_t)x->ncode++;
}

static fz_status materialise(Walk *w, NodeId id);

/* The expression of node id over its own shape. Where it does not fit, its
 * latest elementwise argument goes to memory first (its own expression),
 * until it does. */
static fz_status build(Walk *w, NodeId id, FziExpr *x)
{
	const Node *n = &w->g->nodes[id];
	int64_t shape[FZ_MAX_RANK];
	for (int k = 0; k < n->rank; k++)
		shape[k] = ir_dim_value(n->shape[k], w->run->dims);
	for (;;) {
		memset(x, 0, sizeof *x);
		x->rank = n->rank;
		memcpy(x->shape, shape, sizeof shape);
		for (int i = 0; i < w->g->n; i++)
			w->reg[i] = -1;
		if (emit(w, x, id, n->rank, shape) >= 0)
			return FZ_OK;
		NodeId big = -1; /* the latest argument not in memory: ids are topological, */
		for (int a = 0; a < ir_ops[n->op].arity; a++) /* so it is the one most is built on */
			if (!in_memory(w, n->args[a]) && n->args[a] > big)
				big = n->args[a];
		if (big < 0)
			return rt_fail(w->err, FZ_ERR_INTERNAL, "interpreter: %s at %d:%d has too many operands",
			               ir_ops[n->op].name, n->span.line, n->span.col);
		fz_status s = materialise(w, big);
		if (s != FZ_OK)
			return s;
	}
}

static unsigned grid_for(const Walk *w, int64_t items, int64_t per_block)
{
	int64_t blocks = (items + per_block - 1) / per_block;
	int64_t cap = (int64_t)(w->ctx->cg.sm_count > 0 ? w->ctx->cg.sm_count : 1) * 16;
	return (unsigned)(blocks < cap ? blocks : cap);
}

static fz_status enqueue(Walk *w, CUfunction f, void *params, unsigned grid)
{
	void *args[] = {params};
	w->launches++;
	CUresult r = CU(cuLaunchKernel)(f, grid, 1, 1, BLOCK, 1, 1, 0, w->run->stream, args, NULL);
	return r == CUDA_SUCCESS ? FZ_OK : rt_fail_cu(w->err, r, "launching the interpreter (cuLaunchKernel)");
}

static fz_status alloc_temp(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	size_t bytes = (size_t)numel(w, n) * fz_dtype_size(dtype_compute((fz_dtype)n->dtype));
	CUresult r = bytes ? CU(cuMemAllocAsync)(&w->temp[id], bytes, w->run->stream) : CUDA_SUCCESS;
	return r == CUDA_SUCCESS ? FZ_OK
	                         : rt_fail_cu(w->err, r, "allocating the interpreter's temporaries (cuMemAllocAsync)");
}

/* Node id's expression, stored at out in dtype `store`. */
static fz_status map(Walk *w, NodeId id, CUdeviceptr out, int store)
{
	FziMap m;
	memset(&m, 0, sizeof m);
	fz_status s = build(w, id, &m.x);
	m.n = numel(w, &w->g->nodes[id]);
	m.out = out;
	m.store = store;
	return s != FZ_OK || m.n == 0 ? s : enqueue(w, w->ctx->interp_map, &m, grid_for(w, m.n, BLOCK));
}

/* An elementwise node's value into memory, in its compute type: loaded
 * from there by the expressions built after. */
static fz_status materialise(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	fz_status s = alloc_temp(w, id);
	if (s == FZ_OK)
		s = map(w, id, w->temp[id], dtype_compute((fz_dtype)n->dtype));
	w->stored[id] = s == FZ_OK;
	return s;
}

static fz_status reduce(Walk *w, NodeId id)
{
	const Node *n = &w->g->nodes[id];
	const Node *x = &w->g->nodes[n->args[0]];
	FziReduce m;
	memset(&m, 0, sizeof m);
	fz_status s = build(w, n->args[0], &m.x);
	if (s == FZ_OK)
		s = alloc_temp(w, id);
	w->stored[id] = s == FZ_OK;
	m.op = n->op;
	m.result = n->dtype;
	m.operand = n->operand;
	m.store = dtype_compute((fz_dtype)n->dtype);
	m.round = w->run->store_all && dtype_is_half((fz_dtype)n->dtype);
	m.rows = numel(w, n);
	m.len = ir_dim_value(x->shape[x->rank - 1], w->run->dims);
	m.out = w->temp[id];
	return s != FZ_OK || m.rows == 0 ? s : enqueue(w, w->ctx->interp_reduce, &m, grid_for(w, m.rows, 1));
}

static fz_status walk(Walk *w)
{
	const Graph *g = w->g;
	fz_status s = FZ_OK;
	for (int i = 0; i < g->n && s == FZ_OK; i++) /* every node is live: the pipeline ran ir_dce */
		if (ir_ops[g->nodes[i].op].cls == OC_REDUCE)
			s = reduce(w, i);
	for (int k = 0; k < g->noutputs && s == FZ_OK; k++)
		s = map(w, g->outputs[k].node, w->run->out[k], g->nodes[g->outputs[k].node].dtype);
	for (int i = 0; i < g->n; i++)
		if (w->temp[i])
			CU(cuMemFreeAsync)(w->temp[i], w->run->stream);
	return s;
}

fz_status rt_interp_launch(fz_context *ctx, const RtInterpRun *run, char *err)
{
	const Graph *g = run->g;
	size_t nn = (size_t)(g->n > 0 ? g->n : 1);
	Walk w = {ctx, run, g, calloc(nn, sizeof *w.temp), calloc(nn, sizeof *w.stored), malloc(nn * sizeof *w.reg), err, 0};
	fz_status s = w.temp && w.stored && w.reg ? walk(&w) : rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		log_line("interpreter: %s launched in %d kernels", g->name, w.launches);
	free(w.temp);
	free(w.stored);
	free(w.reg);
	return s;
}
