/*
 * gpucheck.c: a program on the GPU against the interpreter (see gpucheck.h).
 *
 * Every step that can fail says which one did in the message, with the
 * library's own message, so a failure line in a log of a thousand programs
 * is enough to start from; gc_save writes the rest (program and inputs).
 */
#include "gpucheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gc_context(const char *name, fz_context **ctx)
{
	fz_status s = fz_context_create(0, ctx);
	if (s == FZ_ERR_NO_DRIVER || s == FZ_ERR_NO_DEVICE) {
		printf("%s: skipped: %s\n", name, fz_last_error());
		return 77;
	}
	if (s != FZ_OK) {
		printf("%s: cannot create a context: %s: %s\n", name, fz_status_string(s), fz_last_error());
		return 1;
	}
	return 0;
}

long gc_env_long(const char *name, long dflt)
{
	const char *e = getenv(name);
	if (!e || !*e)
		return dflt;
	char *end;
	long v = strtol(e, &end, 10);
	return *end ? dflt : v;
}

static size_t nbytes(const Tensor *t)
{
	size_t n = fz_dtype_size(t->dtype);
	for (int k = 0; k < t->rank; k++)
		n *= (size_t)t->shape[k];
	return n;
}

static bool bind_inputs(fz_run *r, const GcCase *c, char *msg, size_t msglen)
{
	for (int i = 0; i < c->g->ninputs; i++) {
		const Tensor *t = &c->inputs[i];
		const char *name = c->g->inputs[i].name;
		fz_status s = fz_run_bind_input_host(r, name, t->data, t->dtype, t->rank, t->shape);
		if (s != FZ_OK) {
			snprintf(msg, msglen, "binding input %s: %s: %s", name, fz_status_string(s), fz_run_error(r));
			return false;
		}
	}
	return true;
}

/* The test's output buffers, poisoned, bound to the run. */
static bool bind_outputs(fz_context *ctx, fz_run *r, const GcCase *c, int poison, Tensor *got, void **dev,
                         char *msg, size_t msglen)
{
	for (int k = 0; k < c->g->noutputs; k++) {
		const Node *n = &c->g->nodes[c->g->outputs[k].node];
		Tensor *t = &got[k];
		t->dtype = (fz_dtype)n->dtype;
		t->rank = n->rank;
		for (int d = 0; d < n->rank; d++)
			t->shape[d] = ir_dim_value(n->shape[d], c->dims);
		size_t bytes = nbytes(t);
		t->data = malloc(bytes ? bytes : 1);
		if (!t->data) {
			snprintf(msg, msglen, "out of host memory");
			return false;
		}
		memset(t->data, poison, bytes);
		if (bytes == 0)
			continue; /* nothing to poison: the run's own (empty) memory */
		fz_status s = fz_device_alloc(ctx, bytes, &dev[k]);
		if (s == FZ_OK)
			s = fz_copy_to_device(ctx, dev[k], t->data, bytes);
		if (s == FZ_OK)
			s = fz_run_bind_output(r, c->g->outputs[k].name, dev[k], t->dtype, t->rank, t->shape);
		if (s != FZ_OK) {
			snprintf(msg, msglen, "binding output %s (%zu bytes): %s: %s / %s", c->g->outputs[k].name, bytes,
			         fz_status_string(s), fz_run_error(r), fz_context_error(ctx));
			return false;
		}
	}
	return true;
}

static bool read_outputs(fz_context *ctx, fz_run *r, const GcCase *c, Tensor *got, void **dev, char *msg,
                         size_t msglen)
{
	for (int k = 0; k < c->g->noutputs; k++) {
		const char *name = c->g->outputs[k].name;
		int rank = -1;
		int64_t shape[FZ_TENSOR_MAX_RANK];
		void *ptr = NULL;
		fz_status s = fz_run_output(r, name, &ptr, &rank, shape);
		if (s != FZ_OK) {
			snprintf(msg, msglen, "fz_run_output(%s): %s: %s", name, fz_status_string(s), fz_run_error(r));
			return false;
		}
		bool same = rank == got[k].rank && (!dev[k] || ptr == dev[k]);
		for (int d = 0; same && d < rank; d++)
			same = shape[d] == got[k].shape[d];
		if (!same) {
			snprintf(msg, msglen, "fz_run_output(%s): rank %d or shape or pointer is not the bound one", name, rank);
			return false;
		}
		size_t bytes = nbytes(&got[k]);
		if (bytes && (s = fz_copy_to_host(ctx, got[k].data, dev[k], bytes)) != FZ_OK) {
			snprintf(msg, msglen, "reading output %s: %s: %s", name, fz_status_string(s), fz_context_error(ctx));
			return false;
		}
	}
	return true;
}

bool gc_has_half(const Graph *g)
{
	for (int i = 0; i < g->n; i++)
		if (dtype_is_half((fz_dtype)g->nodes[i].dtype))
			return true;
	return false;
}

static bool compare_all(const GcCase *c, const Tensor *got, int fuse, char *msg, size_t msglen)
{
	const Tensor *want = !fuse && c->want_perop ? c->want_perop : c->want;
	for (int k = 0; k < c->g->noutputs; k++) {
		char m[1024];
		if (!progen_compare_tol(&got[k], &want[k], &c->tols[k], m, sizeof m)) {
			snprintf(msg, msglen, "output %s (%s): %s", c->g->outputs[k].name, fuse ? "fused" : "per-op", m);
			return false;
		}
	}
	return true;
}

/* Launch and check the status against the expectation. */
static bool launch(fz_run *r, const GcCase *c, char *msg, size_t msglen)
{
	fz_status s = fz_run_launch(r);
	if (s == FZ_OK)
		s = fz_run_synchronize(r);
	if (s != c->expect) {
		snprintf(msg, msglen, "launch: %s, expected %s: %s", fz_status_string(s), fz_status_string(c->expect),
		         fz_run_error(r));
		return false;
	}
	return true;
}

bool gc_run(fz_context *ctx, const GcCase *c, int fuse, int *nkernels, char *msg, size_t msglen)
{
	fz_compile_options opt = fz_compile_options_default();
	opt.fuse = fuse;
	opt.disk_cache = c->disk_cache;
	fz_program *p = NULL;
	fz_run *r = NULL;
	fz_diag diag;
	int nout = c->g->noutputs;
	Tensor *got = calloc((size_t)nout + 1, sizeof *got);
	void **dev = calloc((size_t)nout + 1, sizeof *dev);
	bool ok = false;
	*nkernels = -1;
	fz_status s = fz_program_compile(ctx, c->name, c->text, strlen(c->text), &opt, &p, &diag);
	if (s != FZ_OK) {
		snprintf(msg, msglen, "compile (%s): %s: %s", fuse ? "fused" : "per-op", fz_status_string(s), diag.message);
		goto done;
	}
	*nkernels = fz_program_num_kernels(p);
	if ((s = fz_run_create(p, ctx, &r)) != FZ_OK) {
		snprintf(msg, msglen, "fz_run_create: %s: %s", fz_status_string(s), fz_last_error());
		goto done;
	}
	if (!bind_inputs(r, c, msg, msglen) || !bind_outputs(ctx, r, c, fuse ? 0x7B : 0xFF, got, dev, msg, msglen) || !launch(r, c, msg, msglen))
		goto done;
	ok = c->expect != FZ_OK ||
	     (read_outputs(ctx, r, c, got, dev, msg, msglen) && compare_all(c, got, fuse, msg, msglen));
done:
	fz_run_destroy(r);
	fz_program_destroy(p);
	for (int k = 0; k < nout; k++) {
		if (dev[k])
			fz_device_free(ctx, dev[k]);
		free(got[k].data);
	}
	free(got);
	free(dev);
	return ok;
}

void gc_save(const char *dir, const char *stem, const GcCase *c, char *path, size_t pathlen)
{
	mkdir(dir, 0777);
	snprintf(path, pathlen, "%s/%s.fz", dir, stem);
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(path, pathlen, "(cannot write %s/%s.fz: %s)", dir, stem, strerror(errno));
		return;
	}
	fputs(c->text, f);
	fprintf(f, "\n# %s\n# fusec run %s.fz --check", c->label, stem);
	for (int k = 0; k < c->g->ndims; k++)
		fprintf(f, " --dim %s=%lld", c->g->dims[k], (long long)c->dims[k]);
	char sub[4096], err[256];
	snprintf(sub, sizeof sub, "%s/%s", dir, stem);
	mkdir(sub, 0777);
	for (int i = 0; i < c->g->ninputs; i++) {
		char file[4400];
		snprintf(file, sizeof file, "%s/%s.npy", sub, c->g->inputs[i].name);
		if (npy_write(file, &c->inputs[i], err, sizeof err))
			fprintf(f, " --in %s=%s/%s.npy", c->g->inputs[i].name, stem, c->g->inputs[i].name);
	}
	fputs("\n", f);
	fclose(f);
}
