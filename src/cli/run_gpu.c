/*
 * run_gpu.c: `fusec run` on the GPU, through the public API as a user's
 * program would go: a context on the device of --device (0 by default), the program compiled again from
 * its text (fused, or per-op with --no-fuse; the front end costs far less
 * than the JIT, which the kernel cache makes cheap), inputs bound from the
 * host arrays run.c prepared, one launch, outputs read back and written.
 *
 * --check runs the reference interpreter on the same inputs and compares
 * every output within the tolerances of runtime/compare.h, printing for each
 * the largest absolute and relative errors and the worst element; an output
 * out of tolerance makes the exit status 1 (the outputs are still written,
 * to look at).
 */
#include "run.h"

#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "runtime/compare.h"

static void print_warnings(fz_context *ctx)
{
	const char *w = fz_context_warnings(ctx);
	while (*w) {
		const char *nl = strchr(w, '\n');
		int n = nl ? (int)(nl - w) : (int)strlen(w);
		fprintf(stderr, "fusec: warning: %.*s\n", n, w);
		w += n + (nl ? 1 : 0);
	}
	fz_context_clear_warnings(ctx);
}

static bool bind_inputs(const RunJob *job, fz_run *r)
{
	const Graph *g = &job->comp->graph;
	fz_status s = FZ_OK;
	progress_phase("running on the GPU");
	for (int k = 0; k < g->ndims && s == FZ_OK; k++)
		s = fz_run_bind_dim(r, g->dims[k], job->dims[k]);
	for (int i = 0; i < g->ninputs && s == FZ_OK; i++) {
		const Tensor *t = &job->inputs[i];
		s = fz_run_bind_input_host(r, g->inputs[i].name, t->data, t->dtype, t->rank, t->shape);
	}
	if (s != FZ_OK)
		cli_error("%s: %s", job->path, fz_run_error(r));
	return s == FZ_OK;
}

/* Launch and read every output into host tensors. */
static bool run_and_read(const RunJob *job, fz_run *r, Tensor *outs)
{
	const Graph *g = &job->comp->graph;
	if (fz_run_launch(r) != FZ_OK || fz_run_synchronize(r) != FZ_OK) {
		cli_error("%s: %s", job->path, fz_run_error(r));
		return false;
	}
	for (int i = 0; i < g->noutputs; i++) {
		Tensor *t = &outs[i];
		t->dtype = (fz_dtype)g->nodes[g->outputs[i].node].dtype;
		if (fz_run_output(r, g->outputs[i].name, NULL, &t->rank, t->shape) != FZ_OK)
			break;
		if (!tensor_alloc(t)) {
			cli_error("out of memory for output '%s'", g->outputs[i].name);
			return false;
		}
		if (fz_run_read_output(r, g->outputs[i].name, t->data, tensor_nbytes(t)) != FZ_OK) {
			cli_error("%s: %s", job->path, fz_run_error(r));
			return false;
		}
	}
	return true;
}

/* --check: every output against the interpreter; false if one is out of
 * tolerance (or the interpreter fails). */
static bool check_outputs(const RunJob *job, const Tensor *outs)
{
	const Graph *g = &job->comp->graph;
	Tensor *ref = calloc((size_t)g->noutputs + 1, sizeof *ref);
	char err[1024];
	if (!ref || interp_run(g, job->dims, job->inputs, ref, err, sizeof err) != FZ_OK) {
		cli_error("%s: --check: the CPU reference failed: %s", job->path, ref ? err : "out of memory");
		free(ref);
		return false;
	}
	int64_t n_reduce = rt_longest_reduction(g, job->dims);
	bool ok = true;
	for (int i = 0; i < g->noutputs; i++) {
		RtTolerance tol = rt_tolerance(outs[i].dtype, n_reduce, job->no_fuse);
		RtCompare c;
		char ty[256], at[256];
		tensor_type_str(&outs[i], ty, sizeof ty);
		if (!rt_compare(&outs[i], &ref[i], tol, &c)) {
			printf("check %s: FAIL: the GPU gave %s, unlike the reference\n", g->outputs[i].name, ty);
			ok = false;
			continue;
		}
		printf("check %s %s: max abs err %.3g, max rel err %.3g", g->outputs[i].name, ty, c.max_abs, c.max_rel);
		if (c.worst >= 0) {
			rt_index_str(&outs[i], c.worst, at, sizeof at);
			printf(", worst at %s: gpu %.9g cpu %.9g", at, c.worst_got, c.worst_want);
		}
		if (tol.exact)
			printf(" (exact)");
		else
			printf(" (atol %.3g rtol %.3g)", tol.atol, tol.rtol);
		if (c.bad)
			printf(": FAIL, %lld of %lld elements out of tolerance\n", (long long)c.bad, (long long)c.n);
		else
			printf(": ok\n");
		ok &= c.bad == 0;
	}
	for (int i = 0; i < g->noutputs; i++)
		tensor_free(&ref[i]);
	free(ref);
	return ok;
}

/* Everything after the context is open. */
static int run_on(const RunJob *job, fz_context *ctx, Tensor *outs)
{
	const Source *src = &job->comp->src;
	fz_compile_options opt = fz_compile_options_default();
	opt.fuse = !job->no_fuse;
	fz_program *p = NULL;
	fz_run *r = NULL;
	fz_diag d;
	int rc = EXIT_ERROR;
	progress_phase("compiling and loading the kernels");
	fz_status s = fz_program_compile(ctx, src->name, src->text, src->len, &opt, &p, &d);
	if (s == FZ_ERR_PROGRAM) {
		fputs(d.rendered, stderr);
	} else if (s != FZ_OK) {
		cli_error("%s: %s", job->path, fz_last_error());
	} else if (fz_program_set_interpret(p, job->interpret) != FZ_OK || fz_run_create(p, NULL, &r) != FZ_OK) {
		cli_error("%s: %s", job->path, fz_last_error());
	} else if (bind_inputs(job, r) && run_and_read(job, r, outs)) {
		rc = cli_run_write_outputs(job, outs);
		if (job->check && !check_outputs(job, outs))
			rc = EXIT_ERROR;
	}
	print_warnings(ctx);
	fz_run_destroy(r);
	fz_program_destroy(p);
	return rc;
}

int cli_run_gpu(const RunJob *job)
{
	fz_context *ctx;
	fz_status s = fz_context_create(job->device, &ctx);
	if (s != FZ_OK) {
		cli_error("%s (use --cpu to run on the CPU reference interpreter)", fz_last_error());
		return cli_gpu_exit(s);
	}
	const Graph *g = &job->comp->graph;
	Tensor *outs = calloc((size_t)g->noutputs + 1, sizeof *outs);
	int rc = EXIT_ERROR;
	if (!outs)
		cli_error("out of memory");
	else
		rc = run_on(job, ctx, outs);
	for (int i = 0; outs && i < g->noutputs; i++)
		tensor_free(&outs[i]);
	free(outs);
	fz_context_destroy(ctx);
	return rc;
}
