/* Every program in examples/ on the GPU against the interpreter, fused and
 * per-op, at size sets from one element to rows of a million, a million rows
 * of three, empty leading dims and empty rows (where max/min must fail with
 * FZ_ERR_RUNTIME), and once with NaN/inf inputs. Output buffers are poisoned
 * (gpucheck.h); tolerances are progen_compare's defaults for the least
 * precise dtype the program uses and its longest reduced row. Per-op runs of
 * programs with f16/bf16 values are compared with the interpreter rounding
 * every half value where per-op mode stores it (interp_run_ex): per-op
 * softmax_f16 over 300k elements legitimately overflows its f16 sum.
 *
 * A dim that is the last axis of some input is a row length and takes the
 * set's row size; any other dim takes its row count.
 *
 * Environment: FUSEC_TEST_OUT (failing cases are written there),
 * FUSEC_SOURCE_DIR (the tree, when it moved). Prints one line per failing
 * case and ends with "N passed, N failed". Exits 77 without a driver or
 * device, 1 if any case failed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucheck.h"
#include "ir/interp.h"
#include "pipeline.h"
#include "testutil.h"

typedef struct SizeSet {
	int64_t rows, row;
	bool nonfinite;
} SizeSet;

static const SizeSet sets[] = {
	{1, 1, false},      {3, 5, false},       {7, 33, false},     {64, 1000, false},
	{300, 4097, false}, {2, 300007, false},  {2, 1000000, false}, {1000000, 3, false},
	{0, 17, false},     {5, 0, false},       {33, 257, true},
};

static char *read_text(const char *path)
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

/* The names of examples/ *.fz, sorted; count in *n. */
static char **list_examples(const char *dir, int *n)
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

static void set_dims(const Graph *g, const SizeSet *s, int64_t *dims)
{
	for (int k = 0; k < g->ndims; k++) {
		bool row = false;
		for (int i = 0; i < g->ninputs; i++) {
			const Node *n = &g->nodes[g->inputs[i].node];
			row |= n->rank > 0 && dim_is_sym(n->shape[n->rank - 1]) && dim_sym(n->shape[n->rank - 1]) == k;
		}
		dims[k] = row ? s->row : s->rows;
	}
}

static bool make_inputs(const Graph *g, const int64_t *dims, bool nonfinite, Tensor *in)
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
		if (!progen_fill(t, 1000u + (uint64_t)i, lo, hi, t->dtype, nonfinite && n->rank > 0)) {
			progen_free_tensors(in, i);
			return false;
		}
	}
	return true;
}

/* The least precise float dtype a node of g has; the longest reduced row. */
static ProgenTol tolerance_of(const Graph *g, const int64_t *dims, fz_dtype out)
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

typedef struct Tally {
	int passed, failed;
} Tally;

static void run_case(fz_context *ctx, const char *file, const char *text, const SizeSet *s, Tally *tally)
{
	PipeOptions po = pipe_default_options();
	po.stop = STAGE_IR;
	Compilation *comp = pipe_new(file, text, strlen(text), &po);
	char label[256], msg[2048], err[512], path[4200] = "";
	snprintf(label, sizeof label, "%s [%lld rows x %lld%s]", file, (long long)s->rows, (long long)s->row,
	         s->nonfinite ? ", NaN/inf inputs" : "");
	if (!comp || pipe_run(comp) != FZ_OK) {
		printf("FAIL %s: reference compilation: %s\n", label, comp ? comp->diag_text : "out of memory");
		tally->failed++;
		pipe_free(comp);
		return;
	}
	const Graph *g = &comp->graph;
	int64_t dims[FZ_MAX_INPUTS];
	Tensor in[FZ_MAX_INPUTS], want[FZ_MAX_OUTPUTS], want_perop[FZ_MAX_OUTPUTS];
	ProgenTol tols[FZ_MAX_OUTPUTS];
	memset(in, 0, sizeof in);
	set_dims(g, s, dims);
	bool ok = make_inputs(g, dims, s->nonfinite, in);
	GcCase c = {.label = label, .name = file, .text = text, .g = g, .dims = dims, .inputs = in, .want = want,
	            .tols = tols, .disk_cache = 1, .expect = progen_expect(g, dims)};
	for (int k = 0; k < g->noutputs; k++)
		tols[k] = tolerance_of(g, dims, (fz_dtype)g->nodes[g->outputs[k].node].dtype);
	fz_status st = ok ? interp_run(g, dims, in, want, err, sizeof err) : FZ_ERR_NOMEM;
	bool have_want = st == FZ_OK, have_perop = false;
	if (st == FZ_OK && gc_has_half(g)) { /* per-op mode rounds every half value it stores */
		st = interp_run_ex(g, dims, in, want_perop, true, err, sizeof err);
		have_perop = st == FZ_OK;
		c.want_perop = have_perop ? want_perop : NULL;
	}
	if (!ok) {
		snprintf(msg, sizeof msg, "out of memory for the inputs");
	} else if (st != c.expect) {
		snprintf(msg, sizeof msg, "interpreter: %s (expected %s): %s", fz_status_string(st),
		         fz_status_string(c.expect), err);
		ok = false;
	} else {
		int nk[2];
		for (int fuse = 1; ok && fuse >= 0; fuse--)
			ok = gc_run(ctx, &c, fuse, &nk[fuse], msg, sizeof msg);
		if (ok && nk[1] > nk[0]) {
			snprintf(msg, sizeof msg, "%d fused kernels > %d per-op kernels", nk[1], nk[0]);
			ok = false;
		}
	}
	if (!ok) {
		const char *outdir = getenv("FUSEC_TEST_OUT");
		char stem[300];
		snprintf(stem, sizeof stem, "example_%.*s_%lldx%lld", (int)(strlen(file) - 3), file, (long long)s->rows,
		         (long long)s->row);
		if (outdir && *outdir)
			gc_save(outdir, stem, &c, path, sizeof path);
		printf("FAIL %s: %s%s%s%s\n", label, msg, path[0] ? " [" : "", path, path[0] ? "]" : "");
	}
	ok ? tally->passed++ : tally->failed++;
	if (have_want)
		progen_free_tensors(want, g->noutputs);
	if (have_perop)
		progen_free_tensors(want_perop, g->noutputs);
	progen_free_tensors(in, g->ninputs);
	pipe_free(comp);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_context *ctx;
	int rc = gc_context("test_examples", &ctx);
	if (rc != 0)
		return rc;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", tu_path("examples"));
	int n;
	char **names = list_examples(dir, &n);
	Tally tally = {0};
	if (n == 0) {
		printf("FAIL no examples in %s (set FUSEC_SOURCE_DIR to the source tree)\n", dir);
		tally.failed++;
	}
	for (int i = 0; i < n; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *text = read_text(path);
		if (!text) {
			printf("FAIL %s: cannot read it\n", path);
			tally.failed++;
		}
		for (int k = 0; text && k < (int)(sizeof sets / sizeof sets[0]); k++)
			run_case(ctx, names[i], text, &sets[k], &tally);
		free(text);
		free(names[i]);
	}
	free(names);
	fz_context_destroy(ctx);
	printf("%d passed, %d failed\n", tally.passed, tally.failed);
	return tally.failed ? 1 : 0;
}
