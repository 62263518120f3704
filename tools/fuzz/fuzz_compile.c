/*
 * fuzz_compile.c: libFuzzer target for the whole compiler.
 *
 * The bytes are a program. They go through pipe_new + pipe_run up to the
 * fusion stage, then every printer of every stage that succeeded runs (tokens,
 * AST, IR, fused, dot, explain); the program is compiled again through
 * codegen in fused and in per-op mode, and through the public API without a
 * context; a program that compiles is run by the reference interpreter on
 * tiny dims with seeded inputs (NaN, infinities and integer extremes among
 * them, so that conversions and integer arithmetic meet their edge cases).
 *
 * Besides crashes, leaks and UBSan reports (the build has ASan and UBSan),
 * the target aborts when an invariant the pipeline promises breaks: a failure
 * always has a message, a program error is rendered at "fuzz.fz:", no node
 * has more than 2^62 elements over its literal dims, stages are
 * deterministic (the fused plan printed twice is the same text), the
 * interpreter's outputs have the declared dtypes and shapes, and a failure of
 * the interpreter is one of the documented run-time ones.
 *
 * Built with -DFUZZ_NVRTC (fuzz_nvrtc.c), the generated CUDA of both modes
 * is also compiled by NVRTC to a cubin for sm_90: failing to compile, or a
 * warning in NVRTC's log, is a fusec bug.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "pipeline.h"
#ifdef FUZZ_NVRTC
#include "runtime/nvrtc.h"
#endif

/* The interpreter is skipped when the graph holds more elements than this at
 * the chosen dims: the target looks for bugs, not for big allocations. */
enum { INTERP_MAX_ELEMENTS = 1 << 16 };

static void check(bool ok, const char *what, const Compilation *c)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz_compile: invariant broken: %s\n", what);
	if (c && c->diag_text)
		fprintf(stderr, "diagnostic: %s\n", c->diag_text);
	abort();
}

static Compilation *compile(const uint8_t *data, size_t size, PipeStage stop, bool fuse)
{
	PipeOptions o = {.stop = stop, .fuse = fuse};
	Compilation *c = pipe_new("fuzz.fz", (const char *)data, size, &o);
	check(c != NULL, "pipe_new failed", NULL);
	fz_status s = pipe_run(c);
	if (s == FZ_OK)
		return c;
	check(s == FZ_ERR_PROGRAM || s == FZ_ERR_LIMIT, "pipe_run's status is a program error or a limit", c);
	check(c->diag_text && c->diag_text[0], "a failure has a message", c);
	if (s == FZ_ERR_PROGRAM) {
		check(c->diag.set && c->diag.message, "a program error has a diagnostic", c);
		check(strncmp(c->diag_text, "fuzz.fz:", 8) == 0, "the diagnostic names the file", c);
		fz_diag pub;
		diag_to_public(&c->src, &c->diag, c->diag_text, &pub);
		check(pub.message[0] != 0 && pub.len >= 1, "the public diagnostic has a message", c);
	}
	return c;
}

/* Print into a fresh buffer and check the text is NUL-free. */
#define PRINT(c, call)                                                              \
	do {                                                                            \
		StrBuf sb;                                                                  \
		sb_init(&sb, (c)->arena);                                                   \
		call;                                                                       \
		const char *s_ = sb_str(&sb);                                               \
		check(strlen(s_) == sb.len, #call " prints no NUL byte", (c));              \
	} while (0)

static void print_front(Compilation *c, bool ast)
{
	PRINT(c, fe_print_tokens(&sb, &c->src, &c->tokens));
	if (ast)
		PRINT(c, fe_print_ast(&sb, &c->src, &c->ast));
}

static const char *print_plan(Compilation *c)
{
	PRINT(c, fuse_print_dot(&sb, &c->plan));
	PRINT(c, fuse_explain(&sb, &c->plan));
	StrBuf sb;
	sb_init(&sb, c->arena);
	fuse_print(&sb, &c->plan);
	return sb_str(&sb);
}

/* No node has more than 2^62 elements over its literal dims (docs/limits.md):
 * symbolic dims, counted as 1 here, are checked when bound. */
static void check_sizes(const Compilation *c)
{
	const Graph *g = &c->graph;
	int64_t *ones = malloc(sizeof(int64_t) * ((size_t)g->ndims + 1)), e;
	for (int k = 0; k < g->ndims; k++)
		ones[k] = 1;
	for (int i = 0; i < g->n; i++)
		check(ir_numel(g->nodes[i].rank, g->nodes[i].shape, ones, &e), "a node has at most 2^62 elements", c);
	free(ones);
}

/* ---- the interpreter on tiny dims ---------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double random_float(uint64_t *s)
{
	static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e30, -1e30, 65504.0, 70000.0,
	                                 3e9, -3e9, 1e-40, 1e300, __builtin_nan(""), __builtin_inf(),
	                                 -__builtin_inf()};
	uint64_t r = splitmix(s);
	if (r % 4 == 0)
		return special[(r >> 8) % (sizeof special / sizeof special[0])];
	return ((double)(r >> 11) / (double)(1ull << 53)) * 8.0 - 4.0;
}

static int64_t random_int(uint64_t *s)
{
	static const int64_t special[] = {0, 1, -1, 2, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 63, 64};
	uint64_t r = splitmix(s);
	if (r % 4 == 0)
		return special[(r >> 8) % (sizeof special / sizeof special[0])];
	return (int64_t)((r >> 8) % 17) - 8;
}

static void fill(Tensor *t, uint64_t *seed)
{
	int64_t n = tensor_numel(t);
	for (int64_t e = 0; e < n; e++) {
		switch (t->dtype) {
		case FZ_BOOL: ((uint8_t *)t->data)[e] = splitmix(seed) & 1; break;
		case FZ_I32: ((int32_t *)t->data)[e] = (int32_t)random_int(seed); break;
		case FZ_I64: ((int64_t *)t->data)[e] = random_int(seed); break;
		case FZ_F16: ((uint16_t *)t->data)[e] = f32_to_f16_bits((float)random_float(seed)); break;
		case FZ_BF16: ((uint16_t *)t->data)[e] = f32_to_bf16_bits((float)random_float(seed)); break;
		case FZ_F32: ((float *)t->data)[e] = (float)random_float(seed); break;
		case FZ_F64: ((double *)t->data)[e] = random_float(seed); break;
		default: check(false, "input dtype in range", NULL);
		}
	}
}

static void shape_of(const Node *n, const int64_t *dims, Tensor *t)
{
	memset(t, 0, sizeof *t);
	t->dtype = (fz_dtype)n->dtype;
	t->rank = n->rank;
	for (int k = 0; k < n->rank; k++)
		t->shape[k] = ir_dim_value(n->shape[k], dims);
}

static bool small_enough(const Graph *g, const int64_t *dims)
{
	int64_t total = 0;
	for (int i = 0; i < g->n; i++) {
		int64_t e;
		if (!ir_numel(g->nodes[i].rank, g->nodes[i].shape, dims, &e) || e > INTERP_MAX_ELEMENTS)
			return false;
		total += e;
		if (total > INTERP_MAX_ELEMENTS)
			return false;
	}
	return true;
}

static void interpret(const Compilation *c, uint64_t seed)
{
	static const int64_t sizes[8] = {1, 2, 3, 1, 2, 3, 0, 4};
	const Graph *g = &c->graph;
	int64_t *dims = calloc((size_t)g->ndims + 1, sizeof *dims);
	for (int k = 0; k < g->ndims; k++)
		dims[k] = sizes[(seed >> (3 * (k % 21))) & 7];
	if (!small_enough(g, dims)) {
		free(dims);
		return;
	}
	Tensor *in = calloc((size_t)g->ninputs + 1, sizeof *in);
	Tensor *out = calloc((size_t)g->noutputs + 1, sizeof *out);
	for (int i = 0; i < g->ninputs; i++) {
		shape_of(&g->nodes[g->inputs[i].node], dims, &in[i]);
		check(tensor_alloc(&in[i]), "tensor_alloc of an input", c);
		fill(&in[i], &seed);
	}
	char err[1024] = "";
	fz_status s = interp_run(g, dims, in, out, err, sizeof err);
	if (s == FZ_OK) {
		for (int k = 0; k < g->noutputs; k++) {
			Tensor want;
			shape_of(&g->nodes[g->outputs[k].node], dims, &want);
			check(out[k].dtype == want.dtype && out[k].rank == want.rank &&
			          memcmp(out[k].shape, want.shape, sizeof want.shape) == 0,
			      "an output has its declared dtype and shape", c);
			for (int64_t e = 0, n = tensor_numel(&out[k]); e < n; e++)
				(void)tensor_get(&out[k], e);
			tensor_free(&out[k]);
		}
	} else {
		check(s == FZ_ERR_RUNTIME || s == FZ_ERR_LIMIT, "the interpreter fails only at run time", c);
		check(err[0] != 0, "an interpreter failure has a message", c);
	}
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(&in[i]);
	free(in);
	free(out);
	free(dims);
}

/* ---- codegen (and NVRTC) ----------------------------------------------------------------- */

static void nvrtc(Compilation *c)
{
#ifdef FUZZ_NVRTC
	RtNvrtcResult r;
	bool ok = rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, 9, 0, true, &r);
	if (!ok) {
		fprintf(stderr, "%s\n", r.message ? r.message : "(no message)");
		check(false, "NVRTC compiles the generated CUDA", c);
	}
	if (r.log && r.log[0]) {
		fprintf(stderr, "%s\n%s\n", c->module.source, r.log);
		check(false, "NVRTC's log is empty", c);
	}
#else
	(void)c;
#endif
}

static void codegen(const uint8_t *data, size_t size, bool fuse, const char *fused_text)
{
	Compilation *c = compile(data, size, STAGE_CUDA, fuse);
	if (c->status == FZ_OK) {
		const char *plan = print_plan(c);
		if (fused_text)
			check(strcmp(plan, fused_text) == 0, "the fused plan is the same in a second compilation", c);
		check(c->module.source && c->module.source[0], "codegen made source", c);
		check(c->module.nentries >= c->plan.nkernels, "every kernel has an entry", c);
		nvrtc(c);
	}
	pipe_free(c);
}

/* The public API without a context: compile and introspect. */
static void api(const uint8_t *data, size_t size)
{
	fz_program *p = NULL;
	fz_diag d;
	fz_status s = fz_program_compile(NULL, "fuzz.fz", (const char *)data, size, NULL, &p, &d);
	if (s != FZ_OK) {
		check(p == NULL && d.message[0], "a failed fz_program_compile has a message and no program", NULL);
		return;
	}
	fz_tensor_info ti;
	for (int i = 0; i < fz_program_num_inputs(p); i++)
		check(fz_program_input(p, i, &ti) == FZ_OK && fz_program_find_input(p, ti.name) == i,
		      "inputs are found by name", NULL);
	for (int i = 0; i < fz_program_num_outputs(p); i++)
		check(fz_program_output(p, i, &ti) == FZ_OK && fz_program_find_output(p, ti.name) >= 0,
		      "outputs are found by name", NULL);
	for (int k = 0; k < fz_program_num_dims(p); k++)
		check(fz_program_dim_name(p, k) != NULL, "dims have names", NULL);
	check(strlen(fz_program_cuda_source(p)) > 0 && fz_program_num_kernels(p) > 0, "a program has kernels", NULL);
	fz_program_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t seed = 0x243F6A8885A308D3ull;
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * 0x100000001B3ull;

	Compilation *f = compile(data, size, STAGE_FUSED, true);
	if (f->status != FZ_OK) {
		/* Print what the stages before the failure made. */
		Compilation *a = compile(data, size, STAGE_AST, true);
		if (a->status == FZ_OK) {
			print_front(a, true);
		} else {
			Compilation *t = compile(data, size, STAGE_TOKENS, true);
			if (t->status == FZ_OK)
				print_front(t, false);
			pipe_free(t);
		}
		pipe_free(a);
		pipe_free(f);
		return 0;
	}
	print_front(f, true);
	PRINT(f, ir_print(&sb, &f->graph));
	check_sizes(f);
	const char *fused_text = print_plan(f);
	interpret(f, seed);
	codegen(data, size, true, fused_text);
	codegen(data, size, false, NULL);
	api(data, size);
	pipe_free(f);
	return 0;
}
