/*
 * program.c: what a language binding asks of a program besides running it
 * on the GPU: the --explain text, the shapes that given input sizes imply,
 * and a run on the CPU reference interpreter over host buffers (how the
 * Python package runs NumPy arrays).
 *
 * Everything here is positional: inputs in declaration order, outputs in
 * the order of their out statements, every input's sizes concatenated into
 * one array (its rank is the declared one). A binding prepares these arrays
 * once and passes them whole, so a call is one crossing into C.
 *
 * Binding dims to sizes is decided by ir_bind_dims, as for the interpreter
 * and fz_run; when it refuses, mismatch() only finds the axis that disagrees,
 * so that the message names the input, the dim and both sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "runtime/rt.h"
#include "tensor.h"

size_t fz_program_explain(const fz_program *p, char *buf, size_t cap)
{
	if (cap)
		buf[0] = 0;
	if (!p)
		return 0;
	Arena *a = arena_new();
	if (!a)
		return 0;
	jmp_buf oom;
	arena_set_oom(a, &oom);
	size_t n = 0;
	if (!setjmp(oom)) {
		StrBuf sb;
		sb_init(&sb, a);
		fuse_explain(&sb, &p->c->plan);
		const char *text = sb_str(&sb);
		n = strlen(text);
		if (cap)
			snprintf(buf, cap, "%s", text);
	}
	arena_free(a);
	return n;
}

/* The inputs as tensors of their declared dtypes and ranks, sizes from
 * in_shapes, data from `data` (may be NULL: shapes only). */
static void as_tensors(const Graph *g, const int64_t *in_shapes, const void *const *data, Tensor *t)
{
	const int64_t *s = in_shapes;
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		memset(&t[i], 0, sizeof t[i]);
		t[i].dtype = (fz_dtype)n->dtype;
		t[i].rank = n->rank;
		for (int k = 0; k < n->rank; k++)
			t[i].shape[k] = *s++;
		t[i].data = data ? (void *)data[i] : NULL;
		if (data && !t[i].data && tensor_nbytes(&t[i]) == 0)
			t[i].data = &t[i].shape; /* empty: never read, but not NULL */
	}
}

/* The first axis of an input that disagrees with a declared size or with
 * the size an earlier axis gave its dim, as a message; false if none does. */
static bool mismatch(const Graph *g, const Tensor *t, char *msg, size_t cap)
{
	int nd = g->ndims > 0 ? g->ndims : 1;
	int *from_in = malloc(sizeof(int) * (size_t)nd), *from_ax = malloc(sizeof(int) * (size_t)nd);
	bool found = false;
	for (int k = 0; from_in && from_ax && k < g->ndims; k++)
		from_in[k] = -1;
	for (int i = 0; from_in && from_ax && i < g->ninputs && !found; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		const char *name = g->inputs[i].name;
		for (int k = 0; k < n->rank && !found; k++) {
			Dim d = n->shape[k];
			int64_t have = t[i].shape[k];
			if (have < 0) {
				found = true;
				snprintf(msg, cap, "input '%s': axis %d has size %lld", name, k, (long long)have);
			} else if (!dim_is_sym(d)) {
				if ((found = have != d))
					snprintf(msg, cap, "input '%s': axis %d is %lld, but the program declares it %lld", name, k,
					         (long long)have, (long long)d);
			} else if (from_in[dim_sym(d)] < 0) {
				from_in[dim_sym(d)] = i;
				from_ax[dim_sym(d)] = k;
			} else {
				const Tensor *o = &t[from_in[dim_sym(d)]];
				int64_t want = o->shape[from_ax[dim_sym(d)]];
				const char *dn = g->dims[dim_sym(d)];
				if (!(found = have != want))
					continue;
				if (from_in[dim_sym(d)] == i)
					snprintf(msg, cap, "input '%s': dim %s is %lld at axis %d but %lld at axis %d", name, dn,
					         (long long)want, from_ax[dim_sym(d)], (long long)have, k);
				else
					snprintf(msg, cap, "input '%s': dim %s (axis %d) is %lld, but input '%s' gives %s = %lld",
					         name, dn, k, (long long)have, g->inputs[from_in[dim_sym(d)]].name, dn,
					         (long long)want);
			}
		}
	}
	free(from_in);
	free(from_ax);
	return found;
}

/* dims from the inputs' sizes (ir_bind_dims decides; mismatch() words it). */
static fz_status bind_dims(const fz_program *p, const Tensor *t, int64_t *dims)
{
	const Graph *g = &p->c->graph;
	char msg[1024];
	for (int k = 0; k < g->ndims; k++)
		dims[k] = -1;
	fz_status s = ir_bind_dims(g, t, dims, msg, sizeof msg);
	if (s != FZ_OK) {
		char why[512];
		if (s == FZ_ERR_BINDING && mismatch(g, t, why, sizeof why))
			snprintf(msg, sizeof msg, "%s", why);
		return rt_fail((char *)p->err, s, "%s", msg);
	}
	for (int k = 0; k < g->ndims; k++)
		if (dims[k] < 0)
			return rt_fail((char *)p->err, FZ_ERR_BINDING, "dim '%s' is not bound by any input", g->dims[k]);
	return FZ_OK;
}

static fz_status shapes(const fz_program *p, const Tensor *t, int64_t *dims, int64_t *out_shapes)
{
	const Graph *g = &p->c->graph;
	fz_status s = bind_dims(p, t, dims);
	if (s != FZ_OK)
		return s;
	int64_t *o = out_shapes;
	for (int i = 0; i < g->noutputs; i++) {
		const Node *n = &g->nodes[g->outputs[i].node];
		int64_t numel;
		if (!ir_numel(n->rank, n->shape, dims, &numel))
			return rt_fail((char *)p->err, FZ_ERR_LIMIT, "output '%s' would have more than 2^62 elements",
			               g->outputs[i].name);
		for (int k = 0; k < n->rank; k++)
			*o++ = ir_dim_value(n->shape[k], dims);
	}
	return FZ_OK;
}

fz_status fz_program_shapes(const fz_program *p, const int64_t *in_shapes, int64_t *dims, int64_t *out_shapes)
{
	if (!p || (!in_shapes && fz_program_num_inputs(p)) || (!dims && p->c->graph.ndims) || !out_shapes)
		return rt_fail(p ? (char *)p->err : NULL, FZ_ERR_ARGUMENT, "fz_program_shapes: NULL argument");
	const Graph *g = &p->c->graph;
	Tensor *t = calloc((size_t)g->ninputs + 1, sizeof *t);
	if (!t)
		return rt_fail((char *)p->err, FZ_ERR_NOMEM, "out of memory");
	as_tensors(g, in_shapes, NULL, t);
	fz_status s = shapes(p, t, dims, out_shapes);
	free(t);
	return s;
}

/* Interpret with the inputs in t, copying the outputs to the caller's memory. */
static fz_status interpret(const fz_program *p, const Tensor *t, const int64_t *dims, void *const *outputs)
{
	const Graph *g = &p->c->graph;
	Tensor *outs = calloc((size_t)g->noutputs + 1, sizeof *outs);
	if (!outs)
		return rt_fail((char *)p->err, FZ_ERR_NOMEM, "out of memory");
	char msg[1024];
	fz_status s = interp_run_ex(g, dims, t, outs, !p->opt.fuse, msg, sizeof msg);
	if (s != FZ_OK) {
		free(outs);
		return rt_fail((char *)p->err, s, "%s", msg);
	}
	for (int i = 0; i < g->noutputs; i++) {
		size_t bytes = tensor_nbytes(&outs[i]);
		if (bytes)
			memcpy(outputs[i], outs[i].data, bytes);
		tensor_free(&outs[i]);
	}
	free(outs);
	return FZ_OK;
}

/* Every input with data and every output with memory, unless it is empty. */
static fz_status check_buffers(const fz_program *p, const Tensor *t, const int64_t *oshapes, void *const *outputs)
{
	const Graph *g = &p->c->graph;
	for (int i = 0; i < g->ninputs; i++)
		if (!t[i].data)
			return rt_fail((char *)p->err, FZ_ERR_ARGUMENT, "input '%s': data is NULL", g->inputs[i].name);
	for (int i = 0; i < g->noutputs; i++) {
		const Node *n = &g->nodes[g->outputs[i].node];
		int64_t numel = 1;
		for (int k = 0; k < n->rank; k++)
			numel *= *oshapes++;
		if (!outputs[i] && numel > 0)
			return rt_fail((char *)p->err, FZ_ERR_ARGUMENT, "output '%s': buffer is NULL", g->outputs[i].name);
	}
	return FZ_OK;
}

fz_status fz_program_run_cpu(const fz_program *p, const void *const *inputs, const int64_t *in_shapes,
                             void *const *outputs)
{
	if (!p)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_run_cpu: program is NULL");
	const Graph *g = &p->c->graph;
	if ((g->ninputs && (!inputs || !in_shapes)) || (g->noutputs && !outputs))
		return rt_fail((char *)p->err, FZ_ERR_ARGUMENT, "fz_program_run_cpu: NULL argument");
	Tensor *t = calloc((size_t)g->ninputs + 1, sizeof *t);
	int64_t *dims = malloc(sizeof *dims * ((size_t)g->ndims + 1));
	int64_t *oshapes = NULL;
	fz_status s = FZ_OK;
	size_t nout = 0;
	for (int i = 0; i < g->noutputs; i++)
		nout += g->nodes[g->outputs[i].node].rank;
	if (!t || !dims || !(oshapes = malloc(sizeof *oshapes * (nout + 1))))
		s = rt_fail((char *)p->err, FZ_ERR_NOMEM, "out of memory");
	if (s == FZ_OK) {
		as_tensors(g, in_shapes, inputs, t);
		s = shapes(p, t, dims, oshapes);
	}
	if (s == FZ_OK)
		s = check_buffers(p, t, oshapes, outputs);
	if (s == FZ_OK)
		s = interpret(p, t, dims, outputs);
	free(t);
	free(dims);
	free(oshapes);
	return s;
}

fz_status fz_program_prepare(fz_program *p, const int64_t *dims)
{
	if (!p)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_prepare: program is NULL");
	if (!p->ctx)
		return rt_fail(p->err, FZ_ERR_ARGUMENT,
		               "program '%s' was compiled without a context: there is no device to prepare it for",
		               p->c->graph.name);
	for (int k = 0; dims && k < p->c->graph.ndims; k++)
		if (dims[k] < 0)
			return rt_fail(p->err, FZ_ERR_ARGUMENT, "fz_program_prepare: dim %s is %lld", p->c->graph.dims[k],
			               (long long)dims[k]);
	fz_status s = rt_push(p->ctx, p->err);
	if (s != FZ_OK)
		return s;
	s = rt_jit_sizes(p, dims, p->err);
	rt_pop();
	return s;
}

fz_status fz_program_set_interpret(fz_program *p, int enable)
{
	if (!p)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_set_interpret: program is NULL");
	if (enable != 0 && enable != 1)
		return rt_fail(p->err, FZ_ERR_ARGUMENT, "fz_program_set_interpret: enable is %d, not 0 or 1", enable);
	__atomic_store_n(&p->interpret, enable, __ATOMIC_RELAXED);
	return FZ_OK;
}
