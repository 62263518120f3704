/* The runtime on a GPU: every example through the public API, fused and
 * per-op, at sizes that exercise each row schedule and the empty cases,
 * against the reference interpreter (within runtime/compare.h's
 * tolerances); CUDA graphs replaying bit for bit; the kernel cache (an NVRTC
 * compile per path twenty sizes take, warm starts from disk, a damaged entry
 * rebuilt);
 * binding errors; caller memory and streams; the host time per launch.
 *
 * Exits 77 (skipped) where there is no driver or no device. Tests run in
 * this process (CK_NOFORK): a CUDA context does not survive fork. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusec.h"
#include "ir/interp.h"
#include "runtime/compare.h"
#include "runtime/rt.h"
#include "gpucheck.h"
#include "testutil.h"

static fz_context *ctx;
static char cache_dir[256];

/* ---- inputs ------------------------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Random values: tensors uniform in [-1, 1), scalar floats in [0.01, 1) (they
 * are epsilons and rates), integers in [-8, 8]. */
static void fill_random(Tensor *t, uint64_t seed)
{
	int64_t n = tensor_numel(t);
	for (int64_t e = 0; e < n; e++) {
		double u = (double)(splitmix(&seed) >> 11) / 9007199254740992.0;
		double v = t->rank == 0 ? 0.01 + 0.99 * u : 2 * u - 1;
		switch (t->dtype) {
		case FZ_BOOL: ((uint8_t *)t->data)[e] = u < 0.5; break;
		case FZ_I32: ((int32_t *)t->data)[e] = (int32_t)(u * 17) - 8; break;
		case FZ_I64: ((int64_t *)t->data)[e] = (int64_t)(u * 17) - 8; break;
		case FZ_F16: ((uint16_t *)t->data)[e] = f32_to_f16_bits((float)v); break;
		case FZ_BF16: ((uint16_t *)t->data)[e] = f32_to_bf16_bits((float)v); break;
		case FZ_F32: ((float *)t->data)[e] = (float)v; break;
		case FZ_F64: ((double *)t->data)[e] = v; break;
		default: break;
		}
	}
}

static Tensor *make_inputs(const Graph *g, const int64_t *dims, uint64_t seed)
{
	Tensor *in = calloc((size_t)g->ninputs + 1, sizeof *in);
	for (int i = 0; i < g->ninputs; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		in[i].dtype = (fz_dtype)n->dtype;
		in[i].rank = n->rank;
		for (int k = 0; k < n->rank; k++)
			in[i].shape[k] = ir_dim_value(n->shape[k], dims);
		ck_assert(tensor_alloc(&in[i]));
		fill_random(&in[i], seed * 1000 + (uint64_t)i);
	}
	return in;
}

static void free_tensors(Tensor *t, int n)
{
	for (int i = 0; t && i < n; i++)
		tensor_free(&t[i]);
	free(t);
}

static const Graph *graph_of(const fz_program *p) { return &p->c->graph; }

static int interpret_all; /* programs compiled by compile() launch on the GPU interpreter */

static fz_program *compile(const char *name, const char *src, int fuse)
{
	fz_compile_options o = fz_compile_options_default();
	o.fuse = fuse;
	fz_program *p = NULL;
	fz_diag d;
	fz_status s = fz_program_compile(ctx, name, src, strlen(src), &o, &p, &d);
	ck_assert_msg(s == FZ_OK, "%s: %s", name, s == FZ_ERR_PROGRAM ? d.rendered : fz_last_error());
	ck_assert_int_eq(fz_program_set_interpret(p, interpret_all), FZ_OK);
	return p;
}

/* Bind, launch, read back. Returns the launch status; outs filled on FZ_OK. */
static fz_status run_once(fz_run *r, const Graph *g, const Tensor *in, Tensor *outs)
{
	for (int i = 0; i < g->ninputs; i++)
		ck_assert_msg(fz_run_bind_input_host(r, g->inputs[i].name, in[i].data, in[i].dtype, in[i].rank,
		                                     in[i].shape) == FZ_OK, "%s", fz_run_error(r));
	fz_status s = fz_run_launch(r);
	if (s != FZ_OK)
		return s;
	ck_assert_msg(fz_run_synchronize(r) == FZ_OK, "%s", fz_run_error(r));
	for (int i = 0; i < g->noutputs; i++) {
		Tensor *t = &outs[i];
		t->dtype = (fz_dtype)g->nodes[g->outputs[i].node].dtype;
		ck_assert_int_eq(fz_run_output(r, g->outputs[i].name, NULL, &t->rank, t->shape), FZ_OK);
		ck_assert(tensor_alloc(t));
		ck_assert_msg(fz_run_read_output(r, g->outputs[i].name, t->data, tensor_nbytes(t)) == FZ_OK, "%s",
		              fz_run_error(r));
	}
	return FZ_OK;
}

/* ---- every example, fused and per-op, against the interpreter ------------------------------- */

typedef struct SizeSet {
	const char *what;
	int64_t lead, last;  /* the last dim is the row length in the examples; others lead */
} SizeSet;

static const SizeSet sizes[] = {
	{"all ones", 1, 1},
	{"odd sizes", 37, 515},
	{"many short rows", 4097, 33},
	{"medium rows", 64, 4096},
	{"few long rows", 3, 50000},
	{"no rows", 0, 8},
	{"empty rows", 3, 0},
};

static void check_example(const char *file, const char *src, int fuse, const SizeSet *ss, bool graph)
{
	fz_program *p = compile(file, src, fuse);
	const Graph *g = graph_of(p);
	int64_t dims[16];
	for (int k = 0; k < g->ndims; k++)
		dims[k] = k == g->ndims - 1 ? ss->last : ss->lead;
	Tensor *in = make_inputs(g, dims, 7);
	Tensor *got = calloc((size_t)g->noutputs + 1, sizeof *got), *want = calloc((size_t)g->noutputs + 1, sizeof *want);
	char err[1024] = "";
	fz_status ref = interp_run(g, dims, in, want, err, sizeof err);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	fz_run_set_graph(r, graph);
	fz_status s = run_once(r, g, in, got);
	ck_assert_msg(s == ref, "%s (%s, %s): the GPU says %s (%s), the interpreter %s (%s)", file,
	              fuse ? "fused" : "per-op", ss->what, fz_status_string(s), fz_run_error(r), fz_status_string(ref), err);
	if (s != FZ_OK) {
		ck_assert_str_eq(fz_run_error(r), err); /* the same words as the interpreter */
	} else {
		int64_t nred = rt_longest_reduction(g, dims);
		for (int i = 0; i < g->noutputs; i++) {
			RtCompare c;
			ck_assert(rt_compare(&got[i], &want[i], rt_tolerance(got[i].dtype, nred, !fuse), &c));
			char at[128] = "";
			if (c.worst >= 0)
				rt_index_str(&got[i], c.worst, at, sizeof at);
			ck_assert_msg(c.bad == 0, "%s (%s, %s, graph %d) output %s: %lld of %lld out of tolerance; worst at %s: "
			              "gpu %.9g cpu %.9g", file, fuse ? "fused" : "per-op", ss->what, graph,
			              g->outputs[i].name, (long long)c.bad, (long long)c.n, at, c.worst_got, c.worst_want);
		}
	}
	fz_run_destroy(r);
	free_tensors(in, g->ninputs);
	free_tensors(got, g->noutputs);
	free_tensors(want, g->noutputs);
	fz_program_destroy(p);
}

static void each_example(void (*fn)(const char *file, const char *src, void *arg), void *arg)
{
	const char *dir = tu_path("examples");
	char dirbuf[4096];
	snprintf(dirbuf, sizeof dirbuf, "%s", dir);
	DIR *d = opendir(dirbuf);
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 3, ".fz") != 0)
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dirbuf, de->d_name);
		FILE *f = fopen(path, "rb");
		ck_assert_ptr_nonnull(f);
		static char src[1 << 16];
		size_t got = fread(src, 1, sizeof src - 1, f);
		src[got] = 0;
		fclose(f);
		fn(de->d_name, src, arg);
		n++;
	}
	closedir(d);
	ck_assert_int_ge(n, 10);
}

static void example_all_sizes(const char *file, const char *src, void *arg)
{
	int fuse = *(int *)arg;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		check_example(file, src, fuse, &sizes[i], false);
}

START_TEST(examples_fused)
{
	int fuse = 1;
	each_example(example_all_sizes, &fuse);
}
END_TEST

START_TEST(examples_per_op)
{
	int fuse = 0;
	each_example(example_all_sizes, &fuse);
}
END_TEST

static void example_graph(const char *file, const char *src, void *arg)
{
	(void)arg;
	check_example(file, src, 1, &sizes[1], true);
	check_example(file, src, 0, &sizes[3], true);
}

START_TEST(examples_as_graphs)
{
	each_example(example_graph, NULL);
}
END_TEST

/* A row of a one-dimensional tensor is also its column operand, loaded with a
 * cache hint in inline PTX; at zero elements its buffer is a null pointer, which
 * the load once read because NVVM hoisted it above its bounds test (progen seed
 * 550). The row entries of a one-row program at no elements, fused and per-op. */
START_TEST(empty_kept_rows)
{
	static const char *const progs[] = {
	    "in x: f32[W]\nin a: f32\nout s = max(sum(x > 1.0))\n",
	    "in x: bf16[W]\nout y = x - mean(x)\nout m = sum(x * x)\n",
	    "in x: f16[W]\nin w: f16[W]\nout s = sum(x * w)\nout m = mean(x * x)\n",
	};
	static const SizeSet none = {"one row of none", 1, 0};
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
		for (int fuse = 0; fuse < 2; fuse++)
			check_example("empty_kept_rows", progs[i], fuse, &none, false);
}
END_TEST

/* ---- graphs replay bit for bit, and follow rebinding ---------------------------------------------- */

START_TEST(graph_replay)
{
	const char *src = "in x: f32[B, N]\nin s: f32\ne = exp(x * s - max(x))\nout y = e / sum(e)\n";
	fz_program *p = compile("g.fz", src, 1);
	const Graph *g = graph_of(p);
	int64_t dims[2] = {100, 300};
	Tensor *in = make_inputs(g, dims, 3), *in2 = make_inputs(g, dims, 4);
	Tensor a[1] = {{0}}, b[1] = {{0}}, c[1] = {{0}}, d[1] = {{0}};
	fz_run *plain, *gr;
	ck_assert_int_eq(fz_run_create(p, NULL, &plain), FZ_OK);
	ck_assert_int_eq(fz_run_create(p, NULL, &gr), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(gr, 1), FZ_OK);
	ck_assert_int_eq(run_once(plain, g, in, a), FZ_OK);
	ck_assert_int_eq(run_once(gr, g, in, b), FZ_OK);   /* captured */
	ck_assert_int_eq(memcmp(a[0].data, b[0].data, tensor_nbytes(&a[0])), 0);
	tensor_free(&b[0]);
	ck_assert_int_eq(run_once(gr, g, in, b), FZ_OK);   /* replayed */
	ck_assert_int_eq(memcmp(a[0].data, b[0].data, tensor_nbytes(&a[0])), 0);
	/* new values in the same buffers: the graph replays with them */
	ck_assert_int_eq(run_once(gr, g, in2, c), FZ_OK);
	tensor_free(&a[0]);
	ck_assert_int_eq(run_once(plain, g, in2, a), FZ_OK);
	ck_assert_int_eq(memcmp(a[0].data, c[0].data, tensor_nbytes(&a[0])), 0);
	/* a new scalar value is baked into the graph: it must be captured again */
	ck_assert_int_eq(fz_run_bind_scalar(gr, "s", 0.25), FZ_OK);
	ck_assert_int_eq(fz_run_launch(gr), FZ_OK);
	ck_assert_int_eq(fz_run_bind_scalar(plain, "s", 0.25), FZ_OK);
	ck_assert_int_eq(fz_run_launch(plain), FZ_OK);
	d[0] = a[0];
	ck_assert(tensor_alloc(&d[0]));
	ck_assert_int_eq(fz_run_read_output(gr, "y", d[0].data, tensor_nbytes(&d[0])), FZ_OK);
	ck_assert_int_eq(fz_run_read_output(plain, "y", a[0].data, tensor_nbytes(&a[0])), FZ_OK);
	ck_assert_int_eq(memcmp(a[0].data, d[0].data, tensor_nbytes(&a[0])), 0);
	ck_assert_int_ne(memcmp(c[0].data, d[0].data, tensor_nbytes(&a[0])), 0);
	tensor_free(&a[0]);
	tensor_free(&b[0]);
	tensor_free(&c[0]);
	tensor_free(&d[0]);
	fz_run_destroy(plain);
	fz_run_destroy(gr);
	free_tensors(in, g->ninputs);
	free_tensors(in2, g->ninputs);
	fz_program_destroy(p);
}
END_TEST

/* ---- the kernel cache ---------------------------------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A program no other test compiles, so its first compile is cold. */
static const char cache_src[] = "# cache test\nin x: f32[R, C]\nin w: f32[C]\nmu = mean(x)\nxc = x - mu\n"
                                "out y = xc * rsqrt(mean(xc * xc) + 0.00001) * w\n";

/* One launch of p (a run of its own) at dims, checked against the interpreter. */
static void launch_checked(fz_program *p, const int64_t *dims, uint64_t seed)
{
	const Graph *g = graph_of(p);
	Tensor *in = make_inputs(g, dims, seed);
	Tensor got[1] = {{0}}, want[1] = {{0}};
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(run_once(r, g, in, got), FZ_OK);
	char err[256];
	ck_assert_int_eq(interp_run(g, dims, in, want, err, sizeof err), FZ_OK);
	RtCompare cmp;
	ck_assert(rt_compare(got, want, rt_tolerance(FZ_F32, dims[1], false), &cmp));
	ck_assert_int_eq(cmp.bad, 0);
	tensor_free(got);
	tensor_free(want);
	free_tensors(in, g->ninputs);
	fz_run_destroy(r);
}

/* The entry cg_launch picks for the program's only kernel at dims (the rule
 * itself lives there; this test checks that the runtime compiles what it
 * picks, once, on first use). */
static int entry_at(const fz_program *p, const int64_t *dims)
{
	CgLaunch l;
	ck_assert(cg_launch(&p->c->module, &p->c->plan, 0, dims, true, &p->ctx->cg, &l));
	return l.entry;
}

/* Twenty sizes take several paths (rows in registers, aligned or masked, row
 * caches...): one compile for each entry, on the first launch that takes it,
 * nothing at fz_program_compile. */
START_TEST(twenty_sizes_two_compiles)
{
	fz_context *c2;
	ck_assert_int_eq(fz_context_create(0, &c2), FZ_OK);
	fz_compile_options o = fz_compile_options_default();
	fz_program *p;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(c2, "cache.fz", cache_src, strlen(cache_src), &o, &p, &d), FZ_OK);
	fz_cache_stats st;
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);
	const Graph *g = graph_of(p);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	bool seen[64] = {false};
	unsigned nseen = 0;
	for (int i = 0; i < 20; i++) {
		int64_t dims[2] = {1 + 13 * i, 7 + 997 * i};
		int e = entry_at(p, dims);
		ck_assert(e >= 0 && e < 64);
		nseen += !seen[e];
		seen[e] = true;
		Tensor *in = make_inputs(g, dims, (uint64_t)i);
		Tensor out[1] = {{0}};
		ck_assert_int_eq(run_once(r, g, in, out), FZ_OK);
		ck_assert_int_eq(out[0].shape[0], dims[0]);
		ck_assert_int_eq(out[0].shape[1], dims[1]);
		tensor_free(&out[0]);
		free_tensors(in, g->ninputs);
		fz_context_cache_stats(c2, &st);
		ck_assert_uint_eq(st.nvrtc_compiles, nseen);
	}
	ck_assert_uint_ge(nseen, 2); /* 7 + 997 i is a multiple of 4 first at i = 1: registers, then not */
	ck_assert_uint_eq(st.disk_hits, 0);
	ck_assert_uint_eq(st.disk_writes, nseen);
	printf("cold compile (NVRTC + load) of cache.fz's %u entries: %.1f ms\n", nseen, st.jit_ms);
	/* the same program again in this context: the loaded modules */
	fz_program *q;
	ck_assert_int_eq(fz_program_compile(c2, "cache.fz", cache_src, strlen(cache_src), &o, &q, &d), FZ_OK);
	launch_checked(q, (int64_t[]){5, 100}, 7);
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.memory_hits, 1);
	ck_assert_uint_eq(st.nvrtc_compiles, nseen + !seen[entry_at(q, (int64_t[]){5, 100})]); /* p's entries, shared */
	fz_program_destroy(q);
	fz_run_destroy(r);
	fz_program_destroy(p);
	fz_context_destroy(c2);

	/* a new context (a new process, as far as the cache knows): from disk */
	ck_assert_int_eq(fz_context_create(0, &c2), FZ_OK);
	double t0 = now_ms();
	ck_assert_int_eq(fz_program_compile(c2, "cache.fz", cache_src, strlen(cache_src), &o, &p, &d), FZ_OK);
	launch_checked(p, (int64_t[]){5, 100}, 8);
	double t1 = now_ms();
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);
	ck_assert_uint_eq(st.disk_hits, 1);
	printf("warm start from the disk cache: %.3f ms in the JIT, %.3f ms to compile and launch once\n", st.jit_ms,
	       t1 - t0);
	fz_program_destroy(p);
	fz_context_destroy(c2);

	/* damage the entries: warned, rebuilt, and the program still runs right */
	DIR *dd = opendir(cache_dir);
	struct dirent *de;
	int damaged = 0;
	while ((de = readdir(dd)) != NULL) {
		if (!strstr(de->d_name, ".fzc"))
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", cache_dir, de->d_name);
		ck_assert_int_eq(truncate(path, 300), 0);
		damaged++;
	}
	closedir(dd);
	ck_assert_int_ge(damaged, 2);
	ck_assert_int_eq(fz_context_create(0, &c2), FZ_OK);
	ck_assert_int_eq(fz_program_compile(c2, "cache.fz", cache_src, strlen(cache_src), &o, &p, &d), FZ_OK);
	launch_checked(p, (int64_t[]){5, 100}, 1); /* the register path's entry */
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.damaged, 1);
	ck_assert_uint_eq(st.nvrtc_compiles, 1);
	ck_assert_ptr_nonnull(strstr(fz_context_warnings(c2), "was damaged (truncated): deleted it"));
	fz_program_destroy(p);
	fz_context_destroy(c2);
}
END_TEST

/* ---- the GPU interpreter ------------------------------------------------------------------------ */

/* Every example at every size on the interpreter, fused and per-op (the
 * interpreter rounds every half value per-op mode stores), against the CPU
 * interpreter, as the kernels are. */
START_TEST(examples_interpreted)
{
	interpret_all = 1;
	for (int fuse = 1; fuse >= 0; fuse--)
		each_example(example_all_sizes, &fuse);
	interpret_all = 0;
}
END_TEST

/* One launch of r at dims, every output checked against the CPU interpreter. */
static void run_compared(fz_run *r, const Graph *g, const int64_t *dims, uint64_t seed)
{
	Tensor *in = make_inputs(g, dims, seed), got[FZ_MAX_OUTPUTS] = {{0}}, want[FZ_MAX_OUTPUTS] = {{0}};
	char err[256];
	ck_assert_int_eq(interp_run(g, dims, in, want, err, sizeof err), FZ_OK);
	ck_assert_int_eq(run_once(r, g, in, got), FZ_OK);
	int64_t nred = rt_longest_reduction(g, dims);
	for (int k = 0; k < g->noutputs; k++) {
		RtCompare cmp;
		ck_assert(rt_compare(&got[k], &want[k], rt_tolerance(got[k].dtype, nred, false), &cmp));
		ck_assert_msg(cmp.bad == 0, "output %s at dims %lld, %lld: %lld of %lld bad", g->outputs[k].name,
		              (long long)dims[0], (long long)dims[1], (long long)cmp.bad, (long long)cmp.n);
		tensor_free(&got[k]);
		tensor_free(&want[k]);
	}
	free_tensors(in, g->ninputs);
}

/* Launches on the interpreter compile nothing, in a context of their own
 * (its own counts); turned off, the next launch compiles its entry. An
 * empty max row is the interpreter's error, in its words. */
START_TEST(interpreter_compiles_nothing)
{
	fz_context *c2;
	ck_assert_int_eq(fz_context_create(0, &c2), FZ_OK);
	fz_compile_options o = fz_compile_options_default();
	o.disk_cache = 0;
	fz_program *p;
	fz_diag d;
	const char *src = "in x: f32[R, C]\nin w: bf16[C]\nin s: f32\nm = max(x)\n"
	                  "out y = bf16(exp(x - m) / sum(exp(x - m)) * f32(w) + s)\nout z = m\n";
	ck_assert_int_eq(fz_program_compile(c2, "interp.fz", src, strlen(src), &o, &p, &d), FZ_OK);
	ck_assert_int_eq(fz_program_set_interpret(NULL, 1), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_program_set_interpret(p, 2), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "fz_program_set_interpret: enable is 2, not 0 or 1");
	ck_assert_int_eq(fz_program_set_interpret(p, 1), FZ_OK);
	const Graph *g = graph_of(p);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	const int64_t shapes[][2] = {{3, 50000}, {1000, 7}, {1, 1}};
	for (int i = 0; i < 3; i++)
		run_compared(r, g, shapes[i], (uint64_t)i);
	fz_cache_stats st;
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);
	ck_assert_uint_eq(st.disk_hits + st.memory_hits, 0);

	/* max of an empty row: the interpreter's error, before anything runs */
	Tensor *in = make_inputs(g, (int64_t[]){4, 0}, 3), got[2] = {{0}};
	ck_assert_int_eq(run_once(r, g, in, got), FZ_ERR_RUNTIME);
	ck_assert_str_eq(fz_run_error(r), "max at 4:5 reduces an empty axis (C = 0)");
	free_tensors(in, g->ninputs);

	/* more operands and ops than one expression holds: parts of it go to
	 * memory first (thirteen inputs, and a chain of 60 ops under a sum) */
	char big[4096] = "in a0: f32[R, C]\n", *e = big + strlen(big);
	for (int i = 1; i < 13; i++)
		e += sprintf(e, "in a%d: f32[%sC]\n", i, i % 2 ? "R, " : "");
	e += sprintf(e, "t = a0");
	for (int i = 1; i < 13; i++)
		e += sprintf(e, " %c a%d", "+-*"[i % 3], i);
	e += sprintf(e, "\nu = t");
	for (int i = 0; i < 60; i++)
		e += sprintf(e, " * 0.5 + %d", i % 7);
	sprintf(e, "\nout y = u - sum(u)\n");
	fz_program *q;
	ck_assert_int_eq(fz_program_compile(c2, "interp_big.fz", big, strlen(big), &o, &q, &d), FZ_OK);
	ck_assert_int_eq(fz_program_set_interpret(q, 1), FZ_OK);
	fz_run *rq;
	ck_assert_int_eq(fz_run_create(q, NULL, &rq), FZ_OK);
	run_compared(rq, graph_of(q), (int64_t[]){5, 3001}, 4);
	fz_run_destroy(rq);
	fz_program_destroy(q);
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);

	ck_assert_int_eq(fz_program_set_interpret(p, 0), FZ_OK);
	run_compared(r, g, (int64_t[]){3, 50000}, 9);
	fz_context_cache_stats(c2, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 1);
	fz_run_destroy(r);
	fz_program_destroy(p);
	fz_context_destroy(c2);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------------------------ */

START_TEST(binding_errors)
{
	const char *src = "in x: f32[B, N]\nin w: f32[N]\nin k: i32\nout y = x * w + f32(k)\nout m = max(x)\n";
	fz_program *p = compile("bind.fz", src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	float buf[64] = {0};
	int64_t s34[2] = {3, 4}, s5[1] = {5}, s4[1] = {4}, s30[2] = {3, 0};
	ck_assert_int_eq(fz_run_bind_input_host(r, "x", buf, FZ_F16, 2, s34), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'x': expected f32[B, N], got f16[3, 4]");
	ck_assert_int_eq(fz_run_bind_input_host(r, "q", buf, FZ_F32, 2, s34), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "program 'bind' has no input named 'q'");
	ck_assert_int_eq(fz_run_bind_input(r, "k", buf, FZ_I32, 0, NULL), FZ_ERR_BINDING);
	ck_assert_int_eq(fz_run_bind_scalar(r, "k", 2.5), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'k' is i32: 2.5 is not a value of that type");
	ck_assert_int_eq(fz_run_bind_scalar(r, "x", 1), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'x' is the tensor f32[B, N], not a scalar");

	ck_assert_int_eq(fz_run_bind_input_host(r, "x", buf, FZ_F32, 2, s34), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'w' is not bound");
	ck_assert_int_eq(fz_run_bind_input_host(r, "w", buf, FZ_F32, 1, s5), FZ_OK);
	ck_assert_int_eq(fz_run_bind_scalar(r, "k", 3), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'w': expected f32[N] with N = 4, got f32[5]");
	ck_assert_int_eq(fz_run_bind_input_host(r, "w", buf, FZ_F32, 1, s4), FZ_OK);
	ck_assert_int_eq(fz_run_bind_dim(r, "B", 2), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'x': expected f32[B, N] with B = 2, got f32[3, 4]");
	ck_assert_int_eq(fz_run_bind_dim(r, "B", 3), FZ_OK);
	ck_assert_int_eq(fz_run_bind_dim(r, "Q", 3), FZ_ERR_BINDING);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);

	/* a caller's output buffer of the wrong shape */
	void *dev;
	ck_assert_int_eq(fz_device_alloc(ctx, 64 * 4, &dev), FZ_OK);
	int64_t s33[2] = {3, 3};
	ck_assert_int_eq(fz_run_bind_output(r, "y", dev, FZ_F32, 2, s33), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "output 'y' is f32[3, 4] for these inputs; the bound buffer is f32[3, 3]");
	ck_assert_int_eq(fz_run_bind_output(r, "y", dev, FZ_F64, 2, s34), FZ_ERR_BINDING);
	ck_assert_int_eq(fz_run_bind_output(r, "y", NULL, FZ_F32, 0, NULL), FZ_OK);
	float host[12];
	ck_assert_int_eq(fz_run_read_output(r, "y", host, 8), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_run_error(r), "output 'y' is 48 bytes; got a buffer of 8 bytes");

	/* max over an empty axis: an error before launching, in the interpreter's words */
	ck_assert_int_eq(fz_run_bind_dim(r, "B", -1), FZ_ERR_BINDING);
	fz_run_destroy(r);
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input_host(r, "x", buf, FZ_F32, 2, s30), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input_host(r, "w", buf, FZ_F32, 1, (int64_t[]){0}), FZ_OK);
	ck_assert_int_eq(fz_run_bind_scalar(r, "k", 1), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_RUNTIME);
	ck_assert_str_eq(fz_run_error(r), "max at 5:9 reduces an empty axis (N = 0)");
	ck_assert_int_eq(fz_run_output(r, "m", NULL, NULL, NULL), FZ_ERR_ARGUMENT);
	fz_device_free(ctx, dev);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* ---- caller memory and streams ------------------------------------------------------------------------------- */

START_TEST(device_pointers_and_outputs)
{
	const char *src = "in x: f32[N]\nin y: f32[N]\nin b: f32[N]\nin s: f32\nout z = relu((x + y) * s + b)\nout x2 = x\n";
	fz_program *p = compile("dev.fz", src, 1);
	enum { N = 100003 };
	float *hx = malloc(N * 4), *hy = malloc(N * 4), *hb = malloc(N * 4), *hz = malloc(N * 4), *hx2 = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		hx[i] = (float)(i % 17) - 8;
		hy[i] = (float)(i % 5) * 0.5f;
		hb[i] = -1.5f;
	}
	void *dx, *dy, *db, *dz;
	ck_assert_int_eq(fz_device_alloc(ctx, N * 4, &dx), FZ_OK);
	ck_assert_int_eq(fz_device_alloc(ctx, N * 4, &dy), FZ_OK);
	ck_assert_int_eq(fz_device_alloc(ctx, N * 4, &db), FZ_OK);
	ck_assert_int_eq(fz_device_alloc(ctx, N * 4, &dz), FZ_OK);
	ck_assert_int_eq(fz_copy_to_device(ctx, dx, hx, N * 4), FZ_OK);
	ck_assert_int_eq(fz_copy_to_device(ctx, dy, hy, N * 4), FZ_OK);
	ck_assert_int_eq(fz_copy_to_device(ctx, db, hb, N * 4), FZ_OK);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	int64_t n[1] = {N};
	ck_assert_int_eq(fz_run_bind_input(r, "x", dx, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "y", dy, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "b", db, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_scalar(r, "s", 2), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "z", dz, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(fz_run_synchronize(r), FZ_OK);
	void *pz, *px2;
	int rank;
	int64_t shape[8];
	ck_assert_int_eq(fz_run_output(r, "z", &pz, &rank, shape), FZ_OK);
	ck_assert_ptr_eq(pz, dz);
	ck_assert_int_eq(rank, 1);
	ck_assert_int_eq(shape[0], N);
	ck_assert_int_eq(fz_run_output(r, "x2", &px2, NULL, NULL), FZ_OK);
	ck_assert_ptr_ne(px2, dx); /* an output is a copy, in run-owned memory */
	ck_assert_int_eq(fz_copy_to_host(ctx, hz, dz, N * 4), FZ_OK);
	ck_assert_int_eq(fz_copy_to_host(ctx, hx2, px2, N * 4), FZ_OK);
	for (int i = 0; i < N; i++) {
		float want = (hx[i] + hy[i]) * 2 + hb[i];
		ck_assert_msg(hz[i] == (want > 0 ? want : 0), "z[%d] = %g", i, hz[i]);
		ck_assert(hx2[i] == hx[i]);
	}
	/* host time per launch: back-to-back asynchronous launches, nothing rebound */
	double t0 = now_ms();
	for (int i = 0; i < 1000; i++)
		fz_run_launch(r);
	double t1 = now_ms();
	ck_assert_int_eq(fz_run_synchronize(r), FZ_OK);
	printf("host time per launch (relu example, %d elements): %.2f us\n", N, (t1 - t0));
	fz_run_destroy(r);
	fz_device_free(ctx, dx);
	fz_device_free(ctx, dy);
	fz_device_free(ctx, db);
	fz_device_free(ctx, dz);
	free(hx), free(hy), free(hb), free(hz), free(hx2);
	fz_program_destroy(p);
}
END_TEST

START_TEST(context_info)
{
	fz_device_info info;
	ck_assert_int_eq(fz_context_info(ctx, &info), FZ_OK);
	ck_assert_int_ge(info.cc_major, 7);
	ck_assert_int_gt(info.sm_count, 0);
	ck_assert_str_eq(info.cache_dir, cache_dir);
	printf("device %d: %s, sm_%d%d, %d SMs, driver %d\n", info.ordinal, info.name, info.cc_major, info.cc_minor,
	       info.sm_count, info.driver_version);
	fz_context *c2;
	ck_assert_int_eq(fz_context_create(1000, &c2), FZ_ERR_NO_DEVICE);
	ck_assert_ptr_nonnull(strstr(fz_last_error(), "no CUDA device: device 1000 was requested; the driver sees"));
}
END_TEST

int main(void)
{
	snprintf(cache_dir, sizeof cache_dir, "/tmp/fusec-gpu-test-XXXXXX");
	if (!mkdtemp(cache_dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("FUSEC_CACHE_DIR", cache_dir, 1);
	int rc = gc_context("test_runtime", &ctx);
	if (rc != 0) {
		rmdir(cache_dir);
		return rc;
	}
	Suite *su = suite_create("runtime");
	TCase *tc = tcase_create("gpu");
	tcase_set_timeout(tc, 1200);
	tcase_add_test(tc, context_info);
	tcase_add_test(tc, binding_errors);
	tcase_add_test(tc, device_pointers_and_outputs);
	tcase_add_test(tc, graph_replay);
	tcase_add_test(tc, twenty_sizes_two_compiles);
	tcase_add_test(tc, examples_fused);
	tcase_add_test(tc, examples_per_op);
	tcase_add_test(tc, examples_as_graphs);
	tcase_add_test(tc, empty_kept_rows);
	tcase_add_test(tc, examples_interpreted);
	tcase_add_test(tc, interpreter_compiles_nothing);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	fz_context_destroy(ctx);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? 1 : 0;
}
