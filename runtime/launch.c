/*
 * launch.c: runs, their creation and launches (bind.c binds them, plans.c
 * plans them per size).
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
 * The hot path, a launch at known sizes, does no allocation and no search:
 * one cuCtxGetCurrent (rt_push), then one cuGraphLaunch or one cuLaunchKernel
 * (cuLaunchKernelEx where it has attributes) per kernel (and a memset of the
 * part of a workspace that must start zeroed, split rows' counters, and a
 * copy per output no kernel writes, both known per size).
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
#include "runtime/run.h"
#include "tensor.h"

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


void fz_run_destroy(fz_run *r)
{
	if (!r)
		return;
	if (r->ctx && rt_push(r->ctx, NULL) == FZ_OK) {
		CU(cuStreamSynchronize)(r->stream);
		for (int i = 0; i < r->nplans; i++)
			rt_plan_free(r->plans[i]);
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

/* ---- the L2 policy of row kernels ---------------------------------------------------------- */

/* Where codegen says so (CgLaunch.l2_stream: row kernels that read their
 * inputs once), a launch carries an L2 access policy window over its
 * inputs, their lines marked streaming (evicted first). A launch attribute,
 * so it costs no PTX (the same policy on the register path's cp.async
 * copies, `.L2::cache_hint`, meets a ptxas 13.0 bug: docs/performance.md),
 * and stream capture keeps it in the graph's node. FUSEC_L2_WINDOW=0 turns
 * it off (for timing with and without). */
static bool l2_on = true;
static pthread_once_t l2_once = PTHREAD_ONCE_INIT;

static void read_l2_window(void)
{
	const char *e = getenv("FUSEC_L2_WINDOW");
	l2_on = !(e && strcmp(e, "0") == 0);
}

/* The window of launch l: the span of its tensor inputs where the device
 * allows a window that long, else its largest input (its first bytes where
 * even that is too long). False for no window. Only the pointers are read
 * here: the inputs' bytes are the size plan's (RtLaunch.in_bytes). */
static bool l2_window(const fz_run *r, const RtLaunch *l, CUaccessPolicyWindow *w)
{
	size_t cap = r->ctx->l2_window_max;
	if (!l->l2_stream || cap == 0)
		return false;
	pthread_once(&l2_once, read_l2_window);
	if (!l2_on)
		return false;
	CUdeviceptr big = 0, lo = ~(CUdeviceptr)0, hi = 0;
	size_t big_bytes = 0;
	for (int j = 0; j < l->nparams; j++) {
		size_t bytes = l->in_bytes[j];
		CUdeviceptr p = bytes ? *(const CUdeviceptr *)l->params[j] : 0;
		if (!p)
			continue;
		if (bytes > big_bytes)
			big = p, big_bytes = bytes;
		lo = p < lo ? p : lo;
		hi = p + bytes > hi ? p + bytes : hi;
	}
	if (big_bytes == 0)
		return false;
	if (hi - lo > cap)
		lo = big, hi = big + (big_bytes < cap ? big_bytes : cap);
	memset(w, 0, sizeof *w);
	w->base_ptr = (void *)(uintptr_t)lo;
	w->num_bytes = (size_t)(hi - lo);
	w->hitRatio = 1.0f;
	w->hitProp = CU_ACCESS_PROPERTY_STREAMING;
	w->missProp = CU_ACCESS_PROPERTY_STREAMING;
	return true;
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

/* One kernel: through cuLaunchKernelEx where it has attributes (cooperative
 * for split rows, an L2 window), which stream capture keeps in the graph's
 * node; else through cuLaunchKernel. */
static CUresult launch_one(const fz_run *r, const RtLaunch *l, CUstream st)
{
	CUlaunchAttribute attr[2];
	unsigned n = 0;
	memset(attr, 0, sizeof attr);
	if (l->cooperative) {
		attr[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr[n++].value.cooperative = 1;
	}
	if (l2_window(r, l, &attr[n].value.accessPolicyWindow))
		attr[n++].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
	if (n == 0)
		return CU(cuLaunchKernel)(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		                          l->smem, st, l->params, NULL);
	CUlaunchConfig cfg = {l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
	                      l->smem, st, attr, n};
	return CU(cuLaunchKernelEx)(&cfg, l->f, l->params, NULL);
}

static fz_status enqueue(fz_run *r, const RtSizePlan *sp, CUstream st)
{
	for (int i = 0; i < sp->nlaunches; i++) {
		const RtLaunch *l = &sp->launches[i];
		CUresult res = CUDA_SUCCESS;
		if (l->ws_zero) /* codegen's contract: the counters start at zero */
			res = CU(cuMemsetD8Async)(l->ws, 0, l->ws_zero, st);
		if (res == CUDA_SUCCESS)
			res = launch_one(r, l, st);
		if (res != CUDA_SUCCESS)
			return cu_fail(r, res, "launching a kernel (cuLaunchKernel or cuLaunchKernelEx)");
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

/* The bound run on the interpreter: the sizes and outputs as rt_prepare()
 * finds them, no size plan (the next launch makes or finds one). */
static fz_status launch_interpreted(fz_run *r)
{
	const Graph *g = r->g;
	int64_t *dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
	const unsigned char **scalar = calloc((size_t)g->ninputs + 1, sizeof *scalar);
	fz_status s = dims && scalar ? rt_resolve_dims(r, dims) : rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		s = rt_check_reductions(r, dims);
	for (int i = 0; i < g->noutputs && s == FZ_OK; i++)
		s = rt_prepare_output(r, i, dims);
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
		s = rt_prepare(r);
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
		return rt_no_such(r, "output", name);
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
	int k = rt_find_dim(r->g, name);
	if (k < 0)
		return rt_no_such(r, "dim", name);
	if (!r->launched && r->dims_set[k] < 0)
		return rt_fail(r->err, FZ_ERR_ARGUMENT, "dim '%s' has no value yet: the run was not launched", name);
	*size = r->launched ? r->dims[k] : r->dims_set[k];
	return FZ_OK;
}
