/*
 * call.c: a run bound and launched by position in one call, for language
 * bindings (the Python package), where every crossing into C costs about as
 * much as a C launch's whole host work.
 *
 * It is made of the public calls a C caller would make (set the stream,
 * bind each input and output by name, launch), so it checks exactly what
 * they check and keeps their fast path: a binding with the shape it had
 * last time is a store, and a launch at unchanged sizes goes straight to the
 * driver. The name lookups it adds cost tens of nanoseconds an argument.
 */
#include "runtime/rt.h"

/* Input i from args[i]: a double for a scalar, else device memory. */
static fz_status bind_input(fz_run *r, char *err, const fz_tensor_info *t, const void *arg, const int64_t *shape)
{
	if (t->rank > 0)
		return fz_run_bind_input(r, t->name, arg, t->dtype, t->rank, shape);
	if (!arg)
		return rt_fail(err, FZ_ERR_ARGUMENT, "scalar input '%s': the pointer to its value is NULL", t->name);
	return fz_run_bind_scalar(r, t->name, *(const double *)arg);
}

fz_status fz_run_launch_with(fz_run *r, void *stream, const void *const *inputs, const int64_t *in_shapes,
                             void *const *outputs, const int64_t *out_shapes)
{
	if (!r)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_run_launch_with: run is NULL");
	char *err;
	const fz_program *p = rt_run_program(r, &err);
	int ni = fz_program_num_inputs(p), no = fz_program_num_outputs(p);
	if ((ni && (!inputs || !in_shapes)) || (no && (!outputs || !out_shapes)))
		return rt_fail(err, FZ_ERR_ARGUMENT, "fz_run_launch_with: NULL argument");
	fz_status s = fz_run_set_stream(r, stream);
	fz_tensor_info t;
	for (int i = 0; i < ni && s == FZ_OK; i++) {
		if ((s = fz_program_input(p, i, &t)) == FZ_OK)
			s = bind_input(r, err, &t, inputs[i], in_shapes);
		in_shapes += t.rank;
	}
	for (int i = 0; i < no && s == FZ_OK; i++) {
		if ((s = fz_program_output(p, i, &t)) == FZ_OK)
			s = fz_run_bind_output(r, t.name, outputs[i], t.dtype, t.rank, out_shapes);
		out_shapes += t.rank;
	}
	return s == FZ_OK ? fz_run_launch(r) : s;
}
