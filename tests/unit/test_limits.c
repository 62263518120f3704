/* The documented limits (docs/limits.md): each one is a clear error at the
 * place it is crossed, never a crash, a hang or a stack overflow, and the
 * largest legal case still compiles. Source size, expression nesting (a
 * 100,000-deep expression of each kind), fn nesting, graph nodes, rank,
 * elements (literal dims at compile time, bound dims at run time), kernel
 * parameter space (split or refused), inputs, outputs, fn parameters; and,
 * on a machine with a GPU, device memory running out. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusec.h"
#include "ir/interp.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

/* ---- building big programs ------------------------------------------------------------ */

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(k, 0);
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 1) * 2;
		b->s = realloc(b->s, b->cap);
		ck_assert_ptr_nonnull(b->s);
	}
}

static void repeat(Buf *b, const char *s, int n)
{
	for (int i = 0; i < n; i++)
		put(b, "%s", s);
}

/* The first line of a rendered diagnostic. */
static const char *first_line(const char *text)
{
	static char line[1024];
	ck_assert_ptr_nonnull(text);
	size_t n = strcspn(text, "\n");
	ck_assert_uint_lt(n, sizeof line);
	memcpy(line, text, n);
	line[n] = 0;
	return line;
}

static const char *error_of(const char *src, PipeStage stop)
{
	const char *e = tu_error(src, stop);
	ck_assert_msg(e != NULL, "expected an error");
	return first_line(e);
}

static void compiles(const char *src, PipeStage stop)
{
	Compilation *c = tu_compile(src, stop);
	ck_assert_msg(c->status == FZ_OK, "expected success: %s", c->diag_text ? c->diag_text : "");
	pipe_free(c);
}

/* ---- program text ----------------------------------------------------------------------- */

START_TEST(source_size)
{
	static const char prog[] = "in x: f32[N]\nout y = x + 1\n";
	size_t n = FZ_MAX_SOURCE_BYTES;
	char *text = malloc(n + 1);
	ck_assert_ptr_nonnull(text);
	/* exactly at the limit: a program padded with a comment compiles */
	memcpy(text, prog, sizeof prog - 1);
	memset(text + sizeof prog - 1, ' ', n - (sizeof prog - 1));
	text[sizeof prog - 1] = '#';
	text[n - 1] = '\n';
	PipeOptions o = pipe_default_options();
	o.stop = STAGE_IR;
	Compilation *c = pipe_new("big.fz", text, n, &o);
	ck_assert_int_eq(pipe_run(c), FZ_OK);
	pipe_free(c);

	/* one byte over: FZ_ERR_LIMIT before lexing */
	text[n] = '\n';
	c = pipe_new("big.fz", text, n + 1, &o);
	ck_assert_int_eq(pipe_run(c), FZ_ERR_LIMIT);
	ck_assert_str_eq(c->diag_text, "big.fz: error: program is 16777217 bytes; the limit is 16777216 bytes\n");
	pipe_free(c);

	/* through the public API */
	fz_program *p = NULL;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(NULL, "big.fz", text, n + 1, NULL, &p, &d), FZ_ERR_LIMIT);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(d.message, "program is 16777217 bytes; the limit is 16777216 bytes"));
	ck_assert_ptr_nonnull(strstr(fz_last_error(), "the limit is 16777216 bytes"));
	free(text);
}
END_TEST

/* ---- nesting ---------------------------------------------------------------------------- */

#define DEEP 100000

static const char too_deep[] = "expression nested too deeply (the limit is 1000 levels)";

/* "in x: ...\nout y = " + prefix * n + "x" + suffix * n, and its error. */
static const char *nested_error(const char *decl, const char *prefix, const char *suffix, int n)
{
	Buf b = {0};
	put(&b, "%s\nout y = ", decl);
	repeat(&b, prefix, n);
	put(&b, "x");
	repeat(&b, suffix, n);
	put(&b, "\n");
	const char *e = tu_error(b.s, STAGE_CUDA);
	free(b.s);
	return e ? first_line(e) : NULL;
}

START_TEST(deep_expressions)
{
	char want[256];
	/* the error points at the token that crossed the limit: column 9 + 1000 */
	snprintf(want, sizeof want, "test.fz:2:1009: error: %s", too_deep);
	ck_assert_str_eq(nested_error("in x: f32[N]", "(", ")", DEEP), want);
	ck_assert_str_eq(nested_error("in x: f32[N]", "-", "", DEEP), want);
	ck_assert_str_eq(nested_error("in x: bool[N]", "!", "", DEEP), want);
	snprintf(want, sizeof want, "test.fz:2:4012: error: %s", too_deep);
	ck_assert_str_eq(nested_error("in x: f32[N]", "exp(", ")", DEEP), want);
	ck_assert_str_eq(nested_error("in x: f32[N]", "f32(", ")", DEEP), want);
	snprintf(want, sizeof want, "test.fz:3:8011: error: %s", too_deep);
	ck_assert_str_eq(nested_error("in c: bool[N]\nin x: f32[N]", "c ? x : ", "", DEEP), want);
	snprintf(want, sizeof want, "test.fz:2:11016: error: %s", too_deep);
	ck_assert_str_eq(nested_error("in x: f32[N]", "maximum(x, ", ")", DEEP), want);

	/* the limit itself: 1000 levels compile, 1001 do not */
	ck_assert_ptr_null(nested_error("in x: f32[N]", "(", ")", 1000));
	ck_assert_ptr_null(nested_error("in x: f32[N]", "-", "", 1000));
	snprintf(want, sizeof want, "test.fz:2:1009: error: %s", too_deep);
	ck_assert_str_eq(nested_error("in x: f32[N]", "(", ")", 1001), want);

	/* unclosed: the depth error comes before the missing ')' */
	Buf b = {0};
	put(&b, "in x: f32[N]\nout y = ");
	repeat(&b, "(", DEEP);
	ck_assert_str_eq(error_of(b.s, STAGE_AST), want);
	free(b.s);
}
END_TEST

START_TEST(long_operator_chain)
{
	/* a chain of binary operators is as deep as it is long */
	Buf b = {0};
	put(&b, "in x: f32[N]\nout y = x");
	repeat(&b, " + x", DEEP);
	put(&b, "\n");
	char want[256];
	snprintf(want, sizeof want, "test.fz:2:4011: error: %s", too_deep);
	ck_assert_str_eq(error_of(b.s, STAGE_AST), want);
	free(b.s);
}
END_TEST

START_TEST(deep_fn_nesting)
{
	/* each fn calls the one before: the inlined bodies nest past 2000 levels */
	Buf b = {0};
	put(&b, "fn g0(v) = v + 1\n");
	for (int i = 1; i < 3000; i++)
		put(&b, "fn g%d(v) = g%d(v) * 2\n", i, i - 1);
	put(&b, "in x: f32[N]\nout y = g2999(x)\n");
	ck_assert_str_eq(error_of(b.s, STAGE_CUDA),
	                 "test.fz:2002:15: error: functions nested too deeply (the limit is 2000 levels of expression, "
	                 "counting the bodies of called fns) (in 'g2001' called at 2003:15)");
	free(b.s);
}
END_TEST

START_TEST(long_binding_chain_runs)
{
	/* 100,000 bindings, each using the one before: no stage after the parser
	 * recurses, so this compiles through codegen and runs in the interpreter */
	Buf b = {0};
	put(&b, "in x: i32[N]\na0 = x\n");
	for (int i = 1; i < DEEP; i++)
		put(&b, "a%d = a%d + 1\n", i, i - 1);
	put(&b, "out y = a%d\n", DEEP - 1);
	Compilation *c = tu_compile(b.s, STAGE_CUDA);
	free(b.s);
	ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text ? c->diag_text : "");
	ck_assert_int_eq(c->plan.nkernels, 1);
	int64_t dims[1] = {3};
	int32_t xs[3] = {0, -5, 1000};
	Tensor in = {.dtype = FZ_I32, .rank = 1, .shape = {3}, .data = xs}, out;
	char err[256];
	ck_assert_int_eq(interp_run(&c->graph, dims, &in, &out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(((int32_t *)out.data)[0], 99999);
	ck_assert_int_eq(((int32_t *)out.data)[1], 99994);
	ck_assert_int_eq(((int32_t *)out.data)[2], 100999);
	tensor_free(&out);
	pipe_free(c);
}
END_TEST

/* ---- graph size ------------------------------------------------------------------------- */

START_TEST(too_many_nodes)
{
	/* each fn doubles the distinct nodes below it: 2^40 of them from a
	 * 1 KiB program; the limit stops the build long before memory does */
	Buf b = {0};
	put(&b, "fn g0(v) = v * 3\n");
	for (int i = 1; i < 40; i++)
		put(&b, "fn g%d(v) = g%d(v + 1) - g%d(v * 2)\n", i, i - 1, i - 1);
	put(&b, "in x: f32[N]\nout y = g39(x)\n");
	ck_assert_str_eq(error_of(b.s, STAGE_CUDA),
	                 "test.fz:1:12: error: program too large: more than 1048576 nodes in the op graph "
	                 "(in 'g0' called at 2:24)");
	free(b.s);
}
END_TEST

/* ---- shapes and elements ---------------------------------------------------------------- */

START_TEST(rank)
{
	ck_assert_str_eq(error_of("in x: f32[1, 2, 3, 4, 5, 6, 7, 8, 9]\nout y = x\n", STAGE_AST),
	                 "test.fz:1:35: error: tensor rank 9 exceeds the limit of 8");
	ck_assert_str_eq(error_of("in x: f32[A, B, C, D, E, F, G, H, I, J, K]\nout y = x\n", STAGE_AST),
	                 "test.fz:1:35: error: tensor rank 9 exceeds the limit of 8");
	/* rank 8 goes all the way: through codegen and the interpreter */
	Compilation *c = tu_compile("in x: f32[A, 2, 1, 2, 1, 2, 1, B]\nout y = sum(x) * x\n", STAGE_CUDA);
	ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text ? c->diag_text : "");
	int64_t dims[2] = {2, 3};
	float xs[48];
	for (int i = 0; i < 48; i++)
		xs[i] = (float)(i % 3);
	Tensor in = {.dtype = FZ_F32, .rank = 8, .shape = {2, 2, 1, 2, 1, 2, 1, 3}, .data = xs}, out;
	char err[256];
	ck_assert_int_eq(interp_run(&c->graph, dims, &in, &out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(out.rank, 8);
	/* each row is (0, 1, 2): sum 3, so y = 3 * x */
	for (int i = 0; i < 48; i++)
		ck_assert_float_eq(((float *)out.data)[i], 3.0f * (float)(i % 3));
	tensor_free(&out);
	pipe_free(c);
}
END_TEST

START_TEST(literal_dims_too_large)
{
	/* 2^62 elements is the limit, checked at compile time for literal dims */
	compiles("in x: i32[2147483648, 2147483648]\nout y = x + 1\n", STAGE_IR);
	ck_assert_str_eq(error_of("in x: i32[2147483648, 2147483649]\nout y = x + 1\n", STAGE_IR),
	                 "test.fz:1:23: error: 'x' has more than 2^62 elements");
	ck_assert_str_eq(error_of("in x: f32[4611686018427387904, 4]\nout y = x\n", STAGE_IR),
	                 "test.fz:1:32: error: 'x' has more than 2^62 elements");
	ck_assert_str_eq(error_of("in x: f32[9223372036854775807, 9223372036854775807]\nout y = x\n", STAGE_IR),
	                 "test.fz:1:11: error: 'x' has more than 2^62 elements");
	ck_assert_str_eq(error_of("in x: f32[9223372036854775808]\nout y = x\n", STAGE_AST),
	                 "test.fz:1:11: error: integer literal 9223372036854775808 is too large "
	                 "(the limit is 9223372036854775807)");
	/* by broadcasting: each operand is fine, their product is not */
	ck_assert_str_eq(error_of("in a: f32[4294967296, 1]\nin b: f32[4294967296]\nout y = a + b\n", STAGE_IR),
	                 "test.fz:3:11: error: the result of '+' has more than 2^62 elements: [4294967296, 4294967296]");
	ck_assert_str_eq(error_of("in a: f32[4294967296, 1]\nin b: f32[4294967296]\nin c: bool\nout y = where(c, a, b)\n",
	                          STAGE_IR),
	                 "test.fz:4:9: error: the result of 'where' has more than 2^62 elements: [4294967296, 4294967296]");
	compiles("in a: f32[2147483648, 1]\nin b: f32[2147483648]\nout y = a + b\n", STAGE_IR);
}
END_TEST

START_TEST(bound_dims_overflow)
{
	/* symbolic dims whose product overflows are refused when they are bound:
	 * the inputs are empty (Z = 0) so they exist, the result would not */
	Compilation *c = tu_compile("in a: f32[M, 1, Z]\nin b: f32[N, Z]\nout y = a + b\n", STAGE_IR);
	ck_assert_int_eq(c->status, FZ_OK);
	const int64_t big = (int64_t)1 << 40;
	Tensor in[2] = {{.dtype = FZ_F32, .rank = 3, .shape = {big, 1, 0}},
	                {.dtype = FZ_F32, .rank = 2, .shape = {big, 0}}};
	ck_assert(tensor_alloc(&in[0]) && tensor_alloc(&in[1]));
	int64_t dims[3] = {-1, -1, -1};
	char err[512];
	ck_assert_int_eq(ir_bind_dims(&c->graph, in, dims, err, sizeof err), FZ_OK);
	Tensor out;
	ck_assert_int_eq(interp_run(&c->graph, dims, in, &out, err, sizeof err), FZ_ERR_LIMIT);
	ck_assert_str_eq(err, "add at 3:9 has too many elements for its bound dims");
	tensor_free(&in[0]);
	tensor_free(&in[1]);

	/* ir_numel: 2^62 is the largest count */
	Dim s2[2] = {(Dim)1 << 31, (Dim)1 << 31}, s3[2] = {((Dim)1 << 31) + 1, (Dim)1 << 31};
	int64_t n;
	ck_assert(ir_numel(2, s2, NULL, &n));
	ck_assert_int_eq(n, (int64_t)1 << 62);
	ck_assert(!ir_numel(2, s3, NULL, &n));
	Dim sym[2] = {DIM_SYM(0), DIM_SYM(0)};
	int64_t d1[1] = {(int64_t)1 << 32};
	ck_assert(!ir_numel(2, sym, d1, &n));
	pipe_free(c);
}
END_TEST

/* ---- kernel parameters ------------------------------------------------------------------- */

/* NVRTC compiles the CUDA of c to a cubin for sm_90 with an empty log. */
static void nvrtc_ok(Compilation *c)
{
	RtNvrtcResult r;
	bool ok = rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, 9, 0, true, &r);
	ck_assert_msg(ok, "NVRTC: %s", r.message ? r.message : "");
	ck_assert_str_eq(r.log ? r.log : "", "");
}

/* The bytes of a kernel's parameters, laid out as CUDA does. */
static size_t kernel_param_bytes(const Graph *g, const Kernel *k)
{
	size_t bytes = 0;
	for (int j = 0; j < k->nparams; j++) {
		size_t sz = k->params[j].kind == PARAM_SCALAR ? fz_dtype_size((fz_dtype)g->nodes[k->params[j].node].dtype) : 8;
		bytes = (bytes + sz - 1) / sz * sz + sz;
	}
	return bytes;
}

START_TEST(kernel_params_split)
{
	/* 256 inputs and 256 outputs over one shape: 4 KiB of pointers do not
	 * fit one kernel, so the pointwise kernel is split by outputs */
	Buf b = {0};
	for (int i = 0; i < 256; i++)
		put(&b, "in x%d: f32[N]\n", i);
	for (int i = 0; i < 256; i++)
		put(&b, "out y%d = x%d * 2 + x%d\n", i, i, (i + 1) % 256);
	Compilation *c = tu_compile(b.s, STAGE_CUDA);
	free(b.s);
	ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text ? c->diag_text : "");
	ck_assert_int_eq(c->plan.nkernels, 2);
	for (int k = 0; k < c->plan.nkernels; k++) {
		ck_assert_uint_le(kernel_param_bytes(&c->graph, &c->plan.kernels[k]), FZ_MAX_KERNEL_PARAM_BYTES - 32);
		ck_assert_ptr_nonnull(strstr(c->module.source, c->plan.kernels[k].name));
	}
	/* (NVRTC takes over 20 s of CPU for these two 128-output kernels, too
	 * slow for the unit tests: docs/limits.md records the cubin build) */
	pipe_free(c);

	/* 255 f64 scalars and a tensor: by-value parameters count too */
	b = (Buf){0};
	for (int i = 0; i < 255; i++)
		put(&b, "in s%d: f64\n", i);
	put(&b, "in v: f32[N]\nout y = v");
	for (int i = 0; i < 255; i++)
		put(&b, " * s%d", i);
	put(&b, "\n");
	c = tu_compile(b.s, STAGE_CUDA);
	free(b.s);
	ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text ? c->diag_text : "");
	nvrtc_ok(c);
	pipe_free(c);
}
END_TEST

START_TEST(kernel_params_refused)
{
	/* a row kernel cannot be split: its reduction reads all 256 inputs and
	 * its epilogue writes 256 outputs, 4104 bytes */
	Buf b = {0};
	for (int i = 0; i < 256; i++)
		put(&b, "in x%d: f32[N]\n", i);
	put(&b, "s = sum(x0");
	for (int i = 1; i < 256; i++)
		put(&b, " + x%d", i);
	put(&b, ")\n");
	for (int i = 0; i < 256; i++)
		put(&b, "out y%d = x%d * s\n", i, i);
	ck_assert_str_eq(error_of(b.s, STAGE_CUDA),
	                 "test.fz:258:5: error: kernel test_k0 would take 4104 bytes of parameters; the limit is 4064");
	/* per-op mode has a kernel per op, each with a few parameters */
	PipeOptions o = pipe_default_options();
	o.fuse = false;
	Compilation *c = pipe_new("test.fz", b.s, b.n, &o);
	ck_assert_int_eq(pipe_run(c), FZ_OK);
	pipe_free(c);
	free(b.s);
}
END_TEST

/* ---- declarations ------------------------------------------------------------------------ */

START_TEST(inputs_outputs_params)
{
	Buf b = {0};
	for (int i = 0; i < 257; i++)
		put(&b, "in x%d: f32\n", i);
	put(&b, "out y = x0\n");
	ck_assert_str_eq(error_of(b.s, STAGE_IR), "test.fz:257:4: error: too many inputs (the limit is 256)");
	free(b.s);

	b = (Buf){0};
	put(&b, "in x: f32[N]\n");
	for (int i = 0; i < 257; i++)
		put(&b, "out y%d = x + %d\n", i, i);
	ck_assert_str_eq(error_of(b.s, STAGE_IR), "test.fz:258:5: error: too many outputs (the limit is 256)");
	free(b.s);

	/* 256 of each: compiles through codegen and NVRTC */
	b = (Buf){0};
	for (int i = 0; i < 256; i++)
		put(&b, "in x%d: f32\n", i);
	for (int i = 0; i < 256; i++)
		put(&b, "out y%d = x%d + x%d\n", i, i, 255 - i);
	Compilation *c = tu_compile(b.s, STAGE_CUDA);
	free(b.s);
	ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text ? c->diag_text : "");
	ck_assert_int_eq(c->graph.ninputs, 256);
	ck_assert_int_eq(c->graph.noutputs, 256);
	nvrtc_ok(c);
	pipe_free(c);

	b = (Buf){0};
	put(&b, "fn f(p0");
	for (int i = 1; i < 65; i++)
		put(&b, ", p%d", i);
	put(&b, ") = p0\nin x: f32\nout y = x\n");
	ck_assert_str_eq(error_of(b.s, STAGE_AST), "test.fz:1:316: error: too many parameters (the limit is 64)");
	free(b.s);

	b = (Buf){0};
	put(&b, "fn f(p0");
	for (int i = 1; i < 64; i++)
		put(&b, ", p%d", i);
	put(&b, ") = p0 - p63\nin x: f32[N]\nin z: f32[N]\nout y = f(x");
	for (int i = 1; i < 63; i++)
		put(&b, ", x");
	put(&b, ", z)\n");
	compiles(b.s, STAGE_CUDA);
	free(b.s);
}
END_TEST

/* ---- device memory (GPU only) ---------------------------------------------------------- */

START_TEST(device_memory_exhausted)
{
	fz_context *ctx = NULL;
	if (fz_context_create(0, &ctx) != FZ_OK) {
		printf("device_memory_exhausted: skipped (%s)\n", fz_last_error());
		return;
	}
	/* an allocation no GPU has */
	void *p = (void *)1;
	ck_assert_int_eq(fz_device_alloc(ctx, (size_t)1 << 50, &p), FZ_ERR_DEVICE_MEMORY);
	ck_assert_ptr_null(p);
	ck_assert_msg(strncmp(fz_context_error(ctx), "out of device memory: ", 22) == 0, "%s", fz_context_error(ctx));

	/* a run whose inputs fit (1 MiB each) and whose output does not (256 GiB) */
	static const char src[] = "in a: f32[M, 1]\nin b: f32[N]\nout y = a + b\n";
	fz_program *prog;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(ctx, "oom.fz", src, strlen(src), NULL, &prog, &d), FZ_OK);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(prog, NULL, &r), FZ_OK);
	const int64_t n = (int64_t)1 << 18;
	float *host = calloc((size_t)n, sizeof(float));
	ck_assert_int_eq(fz_run_bind_input_host(r, "a", host, FZ_F32, 2, (int64_t[]){n, 1}), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input_host(r, "b", host, FZ_F32, 1, (int64_t[]){n}), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_ERR_DEVICE_MEMORY);
	ck_assert_msg(strncmp(fz_run_error(r), "out of device memory: ", 22) == 0, "%s", fz_run_error(r));
	ck_assert_msg(strstr(fz_run_error(r), "'y'") != NULL, "%s", fz_run_error(r));
	/* the run is still usable at a size that fits */
	ck_assert_int_eq(fz_run_bind_input_host(r, "a", host, FZ_F32, 2, (int64_t[]){4, 1}), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input_host(r, "b", host, FZ_F32, 1, (int64_t[]){4}), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	float y[16] = {1};
	ck_assert_int_eq(fz_run_read_output(r, "y", y, sizeof y), FZ_OK);
	for (int i = 0; i < 16; i++)
		ck_assert_float_eq(y[i], 0.0f);

	/* shapes whose element count overflows are refused at binding */
	static const char sq[] = "in x: f32[K, K]\nout z = x * 2\n";
	fz_program *q;
	ck_assert_int_eq(fz_program_compile(ctx, "sq.fz", sq, strlen(sq), NULL, &q, &d), FZ_OK);
	fz_run *rq;
	ck_assert_int_eq(fz_run_create(q, NULL, &rq), FZ_OK);
	const int64_t k = (int64_t)1 << 32;
	ck_assert_int_eq(fz_run_bind_input(rq, "x", (void *)(uintptr_t)4096, FZ_F32, 2, (int64_t[]){k, k}), FZ_ERR_LIMIT);
	ck_assert_str_eq(fz_run_error(rq), "input 'x' has too many elements");
	fz_run_destroy(rq);
	fz_program_destroy(q);

	free(host);
	fz_run_destroy(r);
	fz_program_destroy(prog);
	fz_context_destroy(ctx);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, source_size);
	tcase_add_test(tc, deep_expressions);
	tcase_add_test(tc, long_operator_chain);
	tcase_add_test(tc, deep_fn_nesting);
	tcase_add_test(tc, long_binding_chain_runs);
	tcase_add_test(tc, too_many_nodes);
	tcase_add_test(tc, rank);
	tcase_add_test(tc, literal_dims_too_large);
	tcase_add_test(tc, bound_dims_overflow);
	tcase_add_test(tc, kernel_params_split);
	tcase_add_test(tc, kernel_params_refused);
	tcase_add_test(tc, inputs_outputs_params);
	tcase_add_test(tc, device_memory_exhausted);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
