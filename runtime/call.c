/*
 * call.c: a run bound and launched by position in one call, for language
 * bindings (the Python package), where every crossing into C, and every
 * argument of one, costs about as much as a C launch's whole host work.
 *
 * So a call is two arguments: an fz_call, prepared once per input sizes and
 * stream (the run, the stream, the sizes), and the pointers and scalar
 * values of this call, one 8-byte slot each, which a binding packs in one
 * step. Inputs and outputs are bound by position through the same code as
 * the calls by name (bind.c's rt_bind_*_at), so the checks are the same
 * and so is the fast path: a binding with the shape it had last time is a
 * store, and a launch at unchanged sizes goes straight to the driver.
 *
 * An output that overlaps a tensor input is refused here: out= makes that
 * an easy mistake from Python, a kernel may read an input after writing an
 * output, and the check is a few comparisons in C.
 */
#include <string.h>

#include "runtime/rt.h"

/* Bytes from ptr that a tensor of this dtype and shape covers; 0 for none,
 * or when the shape is too large to be bound (its binding fails anyway). */
static uint64_t extent(const void *ptr, fz_dtype dtype, int rank, const int64_t *shape)
{
	uint64_t n = ptr ? fz_dtype_size(dtype) : 0;
	for (int k = 0; k < rank && n; k++) {
		if (shape[k] < 0 || (shape[k] && n > UINT64_MAX / (uint64_t)shape[k]))
			return 0;
		n *= (uint64_t)shape[k];
	}
	return n;
}

static bool overlap(const void *a, uint64_t na, const void *b, uint64_t nb)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
	return na && nb && x < y + nb && y < x + na;
}

/* The first tensor input that `bytes` bytes from ptr overlap, or -1. */
static int overlapped_input(const Graph *g, const fz_arg *args, const int64_t *in_shapes, const void *ptr,
                            uint64_t bytes)
{
	const int64_t *shape = in_shapes;
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		if (n->rank == 0)
			continue;
		if (overlap(ptr, bytes, args[i].ptr, extent(args[i].ptr, (fz_dtype)n->dtype, n->rank, shape)))
			return i;
		shape += n->rank;
	}
	return -1;
}

static fz_status bind_inputs(fz_run *r, char *err, const Graph *g, const fz_arg *args, const int64_t *shape)
{
	fz_status s = FZ_OK;
	for (int i = 0; i < g->ninputs && s == FZ_OK; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		if (n->rank == 0) {
			s = rt_bind_scalar_at(r, i, args[i].value);
			continue;
		}
		if (!shape)
			return rt_fail(err, FZ_ERR_ARGUMENT, "fz_call_launch: in_shapes is NULL");
		s = rt_bind_input_at(r, i, args[i].ptr, (fz_dtype)n->dtype, n->rank, shape);
		shape += n->rank;
	}
	return s;
}

static fz_status bind_outputs(fz_run *r, char *err, const Graph *g, const fz_arg *args, const int64_t *in_shapes,
                              const int64_t *shape)
{
	fz_status s = FZ_OK;
	for (int j = 0; j < g->noutputs && s == FZ_OK; j++) {
		const Node *n = &g->nodes[g->outputs[j].node];
		void *ptr = args[g->ninputs + j].ptr;
		if (n->rank && !shape)
			return rt_fail(err, FZ_ERR_ARGUMENT, "fz_call_launch: out_shapes is NULL");
		int i = overlapped_input(g, args, in_shapes, ptr, extent(ptr, (fz_dtype)n->dtype, n->rank, shape));
		if (i >= 0)
			return rt_fail(err, FZ_ERR_BINDING,
			               "output '%s' overlaps input '%s': a kernel may read an input after writing an output",
			               g->outputs[j].name, g->inputs[i].name);
		s = rt_bind_output_at(r, j, ptr, (fz_dtype)n->dtype, n->rank, shape);
		if (n->rank)
			shape += n->rank;
	}
	return s;
}

fz_status fz_call_launch(const fz_call *c, const fz_arg *args)
{
	if (!c || !c->run)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_call_launch: %s is NULL", c ? "the call's run" : "call");
	fz_run *r = c->run;
	char *err;
	const Graph *g = &rt_run_program(r, &err)->c->graph;
	if (!args && g->ninputs + g->noutputs)
		return rt_fail(err, FZ_ERR_ARGUMENT, "fz_call_launch: args is NULL");
	fz_status s = fz_run_set_stream(r, c->stream);
	if (s == FZ_OK)
		s = bind_inputs(r, err, g, args, c->in_shapes);
	if (s == FZ_OK)
		s = bind_outputs(r, err, g, args, c->in_shapes, c->out_shapes);
	return s == FZ_OK ? fz_run_launch(r) : s;
}
