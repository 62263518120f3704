/*
 * plans.c: a run's size plans.
 *
 * The host work of a launch must be a few microseconds, so everything that
 * depends only on the sizes is computed once per size and kept in a size
 * plan: which entry each kernel uses, its grid, block and shared memory, its
 * argument array (with the values the launch plan gives the kernel), and
 * one device allocation for the temporaries and workspaces. Kernel argument
 * arrays do not hold values but point at slots the run keeps (a device
 * pointer per node, a value per scalar input, a size per dim), so rebinding
 * a buffer is one store and never rebuilds a plan; a launch with unchanged
 * shapes goes straight to cuLaunchKernel (launch.c).
 *
 * The first launch at new sizes also loads the entries (the paths) they
 * take that no earlier size took: one compile, or a cache hit (jit.c).
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

void rt_plan_free(RtSizePlan *sp)
{
	if (sp->exec)
		CU(cuGraphExecDestroy)(sp->exec);
	if (sp->scratch)
		CU(cuMemFree)(sp->scratch);
	free(sp->dims);
	free(sp->launches);
	free(sp->params);
	free(sp->vals);
	free(sp->in_bytes);
	free(sp->temp_ptr);
	free(sp->snap);
	free(sp);
}

/* ---- sizes ---------------------------------------------------------------------------- */

/* Every input bound; the dims bound from their shapes (the interpreter's
 * rules and messages, through ir_bind_dims). */
fz_status rt_resolve_dims(fz_run *r, int64_t *dims)
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
fz_status rt_check_reductions(fz_run *r, const int64_t *dims)
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
		               rt_decl_text(r, n, ty, sizeof ty));
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
		if (!cg_launch(r->m, r->plan, k, sp->dims, sp->aligned, &r->ctx->cg, &cl[k]))
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
	fz_status s;
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
		l->l2_stream = cl[k].l2_stream;
		l->ws_bytes = cl[k].workspace > 0 ? (size_t)cl[k].workspace : 0;
		l->ws_zero = cl[k].workspace_zero > 0 ? (size_t)cl[k].workspace_zero : 0;
		if (l->ws_zero > l->ws_bytes)
			l->ws_zero = l->ws_bytes;
		l->params = sp->params + used;
		l->nparams = e->nargs;
		l->in_bytes = sp->in_bytes + used;
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
			const KParam *kp = a->kind == CGARG_PARAM ? &kn->params[a->index] : NULL;
			if (l->l2_stream && kp && kp->kind == PARAM_IN && r->g->nodes[kp->node].rank > 0 &&
			    (s = node_bytes(r, kp->node, sp->dims, &l->in_bytes[j])) != FZ_OK)
				return s;
		}
		used += (size_t)e->nargs;
	}
	return FZ_OK;
}

static fz_status build_plan(fz_run *r, const int64_t *dims, bool aligned, RtSizePlan **out)
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
			rt_plan_free(sp);
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	}
	if (g->ndims)
		memcpy(sp->dims, dims, sizeof *dims * (size_t)g->ndims);
	sp->aligned = aligned;
	size_t nargs;
	fz_status s = plan_launches(r, sp, cl, &nargs);
	if (s == FZ_OK && (!(sp->params = calloc(nargs + 1, sizeof *sp->params)) ||
	                   !(sp->vals = calloc(nargs + 1, sizeof *sp->vals)) ||
	                   !(sp->in_bytes = calloc(nargs + 1, sizeof *sp->in_bytes))))
		s = rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK)
		s = fill_launches(r, sp, cl);
	if (s == FZ_OK)
		s = alloc_scratch(r, sp);
	free(cl);
	if (s != FZ_OK) {
		rt_plan_free(sp);
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
	rt_plan_free(r->plans[lru]);
	r->plans[lru] = r->plans[--r->nplans];
}

static RtSizePlan *find_plan(fz_run *r, const int64_t *dims, bool aligned)
{
	size_t n = sizeof *dims * (size_t)r->g->ndims;
	for (int i = 0; i < r->nplans; i++)
		if (r->plans[i]->aligned == aligned && (n == 0 || memcmp(r->plans[i]->dims, dims, n) == 0))
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
		rt_scalar_bytes((fz_dtype)n->dtype, n->c.f, v);
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

fz_status rt_prepare_output(fz_run *r, int i, const int64_t *dims)
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
		if (rt_same_shape(n->rank, o->cur, o->shape))
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
	if ((s = rt_ensure_buffer(r, &o->own, &o->own_cap, bytes, what)) != FZ_OK)
		return s;
done:
	rt_set_out_ptr(r, i, o->user ? o->user : o->own);
	return FZ_OK;
}

/* Bindings changed: find (or make) the plan for the new sizes. */
fz_status rt_prepare(fz_run *r)
{
	const Graph *g = r->g;
	int64_t *dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
	if (!dims)
		return rt_fail(r->err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = rt_resolve_dims(r, dims);
	bool aligned = rt_bindings_aligned(r);
	RtSizePlan *sp = s == FZ_OK ? find_plan(r, dims, aligned) : NULL;
	if (s == FZ_OK && !sp && (s = rt_check_reductions(r, dims)) == FZ_OK) {
		if (r->nplans == RT_MAX_PLANS)
			evict_plan(r);
		if ((s = build_plan(r, dims, aligned, &sp)) == FZ_OK)
			r->plans[r->nplans++] = sp;
	}
	r->ncopies = 0;
	for (int i = 0; i < g->noutputs && s == FZ_OK; i++) {
		s = rt_prepare_output(r, i, dims);
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

