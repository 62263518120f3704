/*
 * gpucheck.c: a program on the GPU against the interpreter (see gpucheck.h).
 *
 * Every step that can fail says which one did in the message, with the
 * library's own message, so a failure line in a log of a thousand programs
 * is enough to start from; gc_save writes the rest (program and inputs).
 */
#include "gpucheck.h"

#include "ir/interp.h"
#include "pipeline.h"

#include <dirent.h>
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

fz_program *gc_compile(fz_context *ctx, const GcCase *c, int fuse, char *msg, size_t msglen)
{
	fz_compile_options opt = fz_compile_options_default();
	opt.fuse = fuse;
	opt.disk_cache = c->disk_cache;
	fz_program *p = NULL;
	fz_diag diag;
	fz_status s = fz_program_compile(ctx, c->name, c->text, strlen(c->text), &opt, &p, &diag);
	if (s != FZ_OK)
		snprintf(msg, msglen, "compile (%s): %s: %s", fuse ? "fused" : "per-op", fz_status_string(s), diag.message);
	else if (gc_env_long("FUSEC_TEST_INTERPRET", 0) == 1) /* every launch on the GPU interpreter */
		fz_program_set_interpret(p, 1);
	return s == FZ_OK ? p : NULL;
}

bool gc_run(fz_context *ctx, const GcCase *c, int fuse, int *nkernels, char *msg, size_t msglen)
{
	fz_program *p = gc_compile(ctx, c, fuse, msg, msglen);
	*nkernels = p ? fz_program_num_kernels(p) : -1;
	bool ok = p && gc_run_program(ctx, p, c, fuse, msg, msglen);
	fz_program_destroy(p);
	return ok;
}

bool gc_run_program(fz_context *ctx, fz_program *p, const GcCase *c, int fuse, char *msg, size_t msglen)
{
	fz_run *r = NULL;
	int nout = c->g->noutputs;
	Tensor *got = calloc((size_t)nout + 1, sizeof *got);
	void **dev = calloc((size_t)nout + 1, sizeof *dev);
	bool ok = false;
	fz_status s;
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

/* ---- the programs of examples/ ---------------------------------------------------- */

char *gc_read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *t = malloc((size_t)n + 1);
	if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
		free(t);
		t = NULL;
	}
	if (t)
		t[n] = 0;
	fclose(f);
	return t;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **gc_list_examples(const char *dir, int *n)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	*n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 3 && strcmp(e->d_name + len - 3, ".fz") == 0) {
			names = realloc(names, sizeof *names * (size_t)(*n + 1));
			names[(*n)++] = strdup(e->d_name);
		}
	}
	if (d)
		closedir(d);
	if (*n)
		qsort(names, (size_t)*n, sizeof *names, by_name);
	return names;
}

void gc_example_dims(const Graph *g, int64_t rows, int64_t row, int64_t *dims)
{
	for (int k = 0; k < g->ndims; k++) {
		bool is_row = false;
		for (int i = 0; i < g->ninputs; i++) {
			const Node *n = &g->nodes[g->inputs[i].node];
			is_row |= n->rank > 0 && dim_is_sym(n->shape[n->rank - 1]) && dim_sym(n->shape[n->rank - 1]) == k;
		}
		dims[k] = is_row ? row : rows;
	}
}

bool gc_example_inputs(const Graph *g, const int64_t *dims, uint64_t seed, bool nonfinite, Tensor *in)
{
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		Tensor *t = &in[i];
		memset(t, 0, sizeof *t);
		t->dtype = (fz_dtype)n->dtype;
		t->rank = n->rank;
		for (int k = 0; k < n->rank; k++)
			t->shape[k] = ir_dim_value(n->shape[k], dims);
		/* scalars are rates and epsilons; v is Adam's second moment */
		double lo = -2, hi = 2;
		if (n->rank == 0)
			lo = 0.01, hi = 0.5;
		else if (strcmp(g->inputs[i].name, "v") == 0)
			lo = 0, hi = 1;
		if (!dtype_is_float(t->dtype))
			lo = t->dtype == FZ_BOOL ? 0 : -8, hi = t->dtype == FZ_BOOL ? 1 : 8;
		if (!progen_fill(t, seed + (uint64_t)i, lo, hi, t->dtype, nonfinite && n->rank > 0)) {
			progen_free_tensors(in, i);
			return false;
		}
	}
	return true;
}

ProgenTol gc_tolerance(const Graph *g, const int64_t *dims, fz_dtype out)
{
	ProgenTol t = {.dtype = out};
	bool half = false;
	for (int i = 0; i < g->n; i++) {
		const Node *n = &g->nodes[i];
		if (n->dtype == FZ_BF16 || (n->dtype == FZ_F16 && t.dtype != FZ_BF16))
			t.dtype = (fz_dtype)n->dtype, half = true;
		if (ir_ops[n->op].cls == OC_REDUCE) {
			const Node *x = &g->nodes[n->args[0]];
			int64_t row = x->rank ? ir_dim_value(x->shape[x->rank - 1], dims) : 1;
			t.row = row > t.row ? row : t.row;
		}
	}
	if (!half && dtype_is_float(out))
		t.dtype = out;
	return t;
}

/* Both modes of one case: with the programs given (already compiled), or
 * compiled here (then fused must not have more kernels than per-op). */
static bool run_modes(fz_context *ctx, const GcExample *e, const GcCase *c, char *msg, size_t msglen)
{
	int nk[2] = {-1, -1};
	bool ok = true;
	for (int fuse = 1; ok && fuse >= 0; fuse--) {
		if (e->prog[fuse])
			ok = gc_run_program(ctx, e->prog[fuse], c, fuse, msg, msglen);
		else
			ok = gc_run(ctx, c, fuse, &nk[fuse], msg, msglen);
	}
	if (ok && nk[0] >= 0 && nk[1] > nk[0]) {
		snprintf(msg, msglen, "%d fused kernels > %d per-op kernels", nk[1], nk[0]);
		ok = false;
	}
	return ok;
}

bool gc_example_run(fz_context *ctx, const GcExample *e, char *msg, size_t msglen)
{
	PipeOptions po = pipe_default_options();
	po.stop = STAGE_IR;
	Compilation *comp = pipe_new(e->name, e->text, strlen(e->text), &po);
	char label[256], m[2048], err[512], path[4200] = "";
	snprintf(label, sizeof label, "%s [%lld rows x %lld%s]", e->name, (long long)e->rows, (long long)e->row,
	         e->nonfinite ? ", NaN/inf inputs" : "");
	if (!comp || pipe_run(comp) != FZ_OK) {
		snprintf(msg, msglen, "%s: reference compilation: %s", label, comp ? comp->diag_text : "out of memory");
		pipe_free(comp);
		return false;
	}
	const Graph *g = &comp->graph;
	int64_t dims[FZ_MAX_INPUTS];
	Tensor in[FZ_MAX_INPUTS], want[FZ_MAX_OUTPUTS], want_perop[FZ_MAX_OUTPUTS];
	ProgenTol tols[FZ_MAX_OUTPUTS];
	memset(in, 0, sizeof in);
	gc_example_dims(g, e->rows, e->row, dims);
	bool ok = gc_example_inputs(g, dims, e->seed, e->nonfinite, in);
	GcCase c = {.label = label, .name = e->name, .text = e->text, .g = g, .dims = dims, .inputs = in,
	            .want = want, .tols = tols, .disk_cache = 1, .expect = progen_expect(g, dims)};
	for (int k = 0; k < g->noutputs; k++)
		tols[k] = gc_tolerance(g, dims, (fz_dtype)g->nodes[g->outputs[k].node].dtype);
	fz_status st = ok ? interp_run(g, dims, in, want, err, sizeof err) : FZ_ERR_NOMEM;
	bool have_want = st == FZ_OK, have_perop = false;
	if (st == FZ_OK && gc_has_half(g)) { /* per-op mode rounds every half value it stores */
		st = interp_run_ex(g, dims, in, want_perop, true, err, sizeof err);
		have_perop = st == FZ_OK;
		c.want_perop = have_perop ? want_perop : NULL;
	}
	if (!ok) {
		snprintf(m, sizeof m, "out of memory for the inputs");
	} else if (st != c.expect) {
		snprintf(m, sizeof m, "interpreter: %s (expected %s): %s", fz_status_string(st),
		         fz_status_string(c.expect), err);
		ok = false;
	} else {
		ok = run_modes(ctx, e, &c, m, sizeof m);
	}
	if (!ok) {
		const char *outdir = getenv("FUSEC_TEST_OUT");
		char stem[300];
		snprintf(stem, sizeof stem, "example_%.*s_%lldx%lld_s%llu", (int)(strlen(e->name) - 3), e->name,
		         (long long)e->rows, (long long)e->row, (unsigned long long)e->seed);
		if (outdir && *outdir)
			gc_save(outdir, stem, &c, path, sizeof path);
		snprintf(msg, msglen, "%s: %s%s%s%s", label, m, path[0] ? " [" : "", path, path[0] ? "]" : "");
	}
	if (have_want)
		progen_free_tensors(want, g->noutputs);
	if (have_perop)
		progen_free_tensors(want_perop, g->noutputs);
	progen_free_tensors(in, g->ninputs);
	pipe_free(comp);
	return ok;
}
