/* The public API on the CPU (no GPU needed): compiling without a context,
 * diagnostics as values, introspection, argument errors, a missing driver
 * (FUSEC_CUDA_LIBRARY points at a file that is not there, or is no driver),
 * and the tolerances `fusec run --check` and the GPU tests use.
 *
 * The driver is loaded once per process, so the tests that set
 * FUSEC_CUDA_LIBRARY rely on Check running each test in its own process
 * (the default, CK_FORK=yes). */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fusec.h"
#include "runtime/compare.h"
#include "testutil.h"

static const char prog_src[] = "# a program with two dims, a scalar and two outputs\n"
                               "in x: f32[B, N]\n"
                               "in s: f16\n"
                               "in w: f32[N]\n"
                               "e = exp(x * s - max(x))\n"
                               "out y = e / sum(e) * w\n"
                               "out n = sum(x)\n";

static fz_program *compile_ok(const char *src, int fuse)
{
	fz_compile_options o = fz_compile_options_default();
	o.fuse = fuse;
	fz_program *p = NULL;
	fz_diag d;
	fz_status s = fz_program_compile(NULL, "prog.fz", src, strlen(src), &o, &p, &d);
	ck_assert_msg(s == FZ_OK, "compile failed (%s): %s", fz_status_string(s), d.rendered);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* ---- compiling ------------------------------------------------------------------------- */

START_TEST(compile_without_context)
{
	fz_program *p = compile_ok(prog_src, 1);
	ck_assert_str_eq(fz_program_name(p), "prog");
	const char *cu = fz_program_cuda_source(p);
	ck_assert_ptr_nonnull(strstr(cu, "extern \"C\""));
	ck_assert_ptr_nonnull(strstr(cu, "prog_k"));
	ck_assert_int_ge(fz_program_num_kernels(p), 1);
	fz_program *q = compile_ok(prog_src, 0);
	/* per-op: one kernel per non-leaf op at least as many as fused */
	ck_assert_int_gt(fz_program_num_kernels(q), fz_program_num_kernels(p));
	fz_program_destroy(p);
	fz_program_destroy(q);
}
END_TEST

START_TEST(introspection)
{
	fz_program *p = compile_ok(prog_src, 1);
	ck_assert_int_eq(fz_program_num_inputs(p), 3);
	ck_assert_int_eq(fz_program_num_outputs(p), 2);
	ck_assert_int_eq(fz_program_num_dims(p), 2);
	ck_assert_str_eq(fz_program_dim_name(p, 0), "B");
	ck_assert_str_eq(fz_program_dim_name(p, 1), "N");
	ck_assert_ptr_null(fz_program_dim_name(p, 2));
	ck_assert_ptr_null(fz_program_dim_name(p, -1));

	fz_tensor_info t;
	ck_assert_int_eq(fz_program_input(p, 0, &t), FZ_OK);
	ck_assert_str_eq(t.name, "x");
	ck_assert_int_eq(t.dtype, FZ_F32);
	ck_assert_int_eq(t.rank, 2);
	ck_assert_int_eq(t.shape[0], -1);
	ck_assert_int_eq(t.shape[1], -2);
	ck_assert_str_eq(t.dim_names[0], "B");
	ck_assert_str_eq(t.dim_names[1], "N");
	ck_assert_int_eq(fz_program_input(p, 1, &t), FZ_OK);
	ck_assert_str_eq(t.name, "s");
	ck_assert_int_eq(t.dtype, FZ_F16);
	ck_assert_int_eq(t.rank, 0);
	ck_assert_int_eq(fz_program_output(p, 0, &t), FZ_OK);
	ck_assert_str_eq(t.name, "y");
	ck_assert_int_eq(t.dtype, FZ_F32);
	ck_assert_int_eq(t.rank, 2);
	ck_assert_int_eq(fz_program_output(p, 1, &t), FZ_OK);
	ck_assert_str_eq(t.name, "n");
	ck_assert_int_eq(t.rank, 2);
	ck_assert_int_eq(t.shape[0], -1);
	ck_assert_int_eq(t.shape[1], 1);
	ck_assert_ptr_null(t.dim_names[1]);

	ck_assert_int_eq(fz_program_find_input(p, "w"), 2);
	ck_assert_int_eq(fz_program_find_input(p, "y"), -1);
	ck_assert_int_eq(fz_program_find_output(p, "n"), 1);
	ck_assert_int_eq(fz_program_find_output(p, NULL), -1);

	ck_assert_int_eq(fz_program_input(p, 3, &t), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "input 3 does not exist: 'prog' has 3 inputs");
	ck_assert_str_eq(fz_last_error(), "input 3 does not exist: 'prog' has 3 inputs");
	ck_assert_int_eq(fz_program_output(p, -1, &t), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "output -1 does not exist: 'prog' has 2 outputs");
	fz_program_destroy(p);
}
END_TEST

START_TEST(program_errors_are_diagnostics)
{
	const char *src = "in x: f32[N]\nin w: f32[M]\nout y = x + w\n";
	fz_program *p = (fz_program *)1;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(NULL, "bad.fz", src, strlen(src), NULL, &p, &d), FZ_ERR_PROGRAM);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.file, "bad.fz");
	ck_assert_int_eq(d.line, 3);
	ck_assert_int_eq(d.col, 11);
	ck_assert_int_eq(d.len, 1);
	ck_assert_str_eq(d.message, "cannot broadcast f32[N] with f32[M]: N and M differ");
	ck_assert_str_eq(d.rendered, "bad.fz:3:11: error: cannot broadcast f32[N] with f32[M]: N and M differ\n"
	                             "out y = x + w\n"
	                             "          ^\n");
	ck_assert_str_eq(fz_last_error(), d.rendered);
	/* a NULL name is "<string>"; the diag may be NULL */
	const char *src2 = "out y = z\n";
	ck_assert_int_eq(fz_program_compile(NULL, NULL, src2, strlen(src2), NULL, &p, NULL), FZ_ERR_PROGRAM);
	ck_assert_ptr_nonnull(strstr(fz_last_error(), "<string>:1:9: error: unknown name 'z'"));
}
END_TEST

START_TEST(compile_file)
{
	char path[] = "/tmp/fusec-test-api-XXXXXX.fz";
	int fd = mkstemps(path, 3);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, prog_src, strlen(prog_src)), (ssize_t)strlen(prog_src));
	close(fd);
	fz_program *p;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile_file(NULL, path, NULL, &p, &d), FZ_OK);
	ck_assert_int_eq(fz_program_num_inputs(p), 3);
	char stem[64]; /* "fusec-test-api-XXXXXX.fz" names its kernels fusec_test_api_XXXXXX */
	snprintf(stem, sizeof stem, "%s", path + 5);
	stem[strlen(stem) - 3] = 0;
	for (char *c = stem; *c; c++)
		*c = *c == '-' ? '_' : *c;
	ck_assert_str_eq(fz_program_name(p), stem);
	fz_program_destroy(p);
	unlink(path);

	ck_assert_int_eq(fz_program_compile_file(NULL, "/nonexistent/prog.fz", NULL, &p, &d), FZ_ERR_IO);
	ck_assert_ptr_null(p);
	ck_assert_str_eq(d.message, "cannot read /nonexistent/prog.fz: No such file or directory");
	ck_assert_str_eq(d.rendered, "cannot read /nonexistent/prog.fz: No such file or directory\n");
	ck_assert_int_eq(d.line, 0);
	ck_assert_str_eq(d.file, "/nonexistent/prog.fz");
	ck_assert_int_eq(fz_program_compile_file(NULL, "/tmp", NULL, &p, &d), FZ_ERR_IO);
	ck_assert_str_eq(d.message, "cannot read /tmp: Is a directory");
}
END_TEST

START_TEST(argument_errors)
{
	fz_program *p;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(NULL, "a.fz", "x", 1, NULL, NULL, &d), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(d.message, "fz_program_compile: out is NULL");
	ck_assert_int_eq(fz_program_compile(NULL, "a.fz", NULL, 5, NULL, &p, &d), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_last_error(), "fz_program_compile: src is NULL");
	ck_assert_int_eq(fz_program_compile_file(NULL, NULL, NULL, &p, &d), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_context_create(0, NULL), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_run_create(NULL, NULL, NULL), FZ_ERR_ARGUMENT);
	/* NULL handles are ignored by destroy and give "" for errors */
	fz_program_destroy(NULL);
	fz_context_destroy(NULL);
	fz_run_destroy(NULL);
	ck_assert_str_eq(fz_context_error(NULL), "");
	ck_assert_str_eq(fz_run_error(NULL), "");
	ck_assert_str_eq(fz_program_error(NULL), "");
	ck_assert_int_eq(fz_program_num_inputs(NULL), 0);
	ck_assert_int_eq(fz_run_launch(NULL), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_run_bind_dim(NULL, "N", 3), FZ_ERR_ARGUMENT);
}
END_TEST

START_TEST(source_too_large)
{
	size_t n = (size_t)FZ_MAX_SOURCE_BYTES + 1;
	char *big = malloc(n);
	memset(big, '\n', n);
	fz_program *p;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(NULL, "big.fz", big, n, NULL, &p, &d), FZ_ERR_LIMIT);
	ck_assert_str_eq(d.message, "big.fz: error: program is 16777217 bytes; the limit is 16777216 bytes\n");
	free(big);
	/* lengths no buffer can have: refused from the length alone, the text
	 * never read nor copied (n + 1 used to wrap, and 1 TiB ran out of
	 * memory copying) */
	char tiny[] = "in x: f32\nout y = x\n";
	ck_assert_int_eq(fz_program_compile(NULL, "huge.fz", tiny, (size_t)1 << 40, NULL, &p, &d), FZ_ERR_LIMIT);
	ck_assert_str_eq(d.message, "huge.fz: error: program is 1099511627776 bytes; the limit is 16777216 bytes\n");
	ck_assert_ptr_null(p);
	ck_assert_int_eq(fz_program_compile(NULL, "max.fz", tiny, SIZE_MAX, NULL, &p, &d), FZ_ERR_LIMIT);
	char want[256];
	snprintf(want, sizeof want, "max.fz: error: program is %zu bytes; the limit is 16777216 bytes\n", (size_t)SIZE_MAX);
	ck_assert_str_eq(d.message, want);
}
END_TEST

/* Misuse that used to kill the host: a NULL out-pointer is ignored. */
START_TEST(null_out_pointers)
{
	fz_context_cache_stats(NULL, NULL);
	fz_cache_stats st = {.nvrtc_compiles = 7};
	fz_context_cache_stats(NULL, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);
}
END_TEST

/* The arena refuses sizes no block can hold instead of wrapping them. */
static jmp_buf arena_oom;

START_TEST(arena_huge_sizes)
{
	Arena *a = arena_new();
	ck_assert_ptr_nonnull(a);
	arena_set_oom(a, &arena_oom);
	volatile int step = 0;
	if (setjmp(arena_oom) == 0) {
		arena_strndup(a, "x", SIZE_MAX);
		step = 1;
	}
	ck_assert_int_eq(step, 0);
	if (setjmp(arena_oom) == 0) {
		arena_alloc(a, SIZE_MAX - 3);
		step = 2;
	}
	ck_assert_int_eq(step, 0);
	ck_assert_str_eq(arena_strndup(a, "abc", 2), "ab");
	arena_free(a);
}
END_TEST

START_TEST(strings_and_defaults)
{
	for (int s = FZ_OK; s <= FZ_ERR_INTERNAL; s++)
		ck_assert_str_ne(fz_status_string((fz_status)s), "unknown status");
	ck_assert_str_eq(fz_status_string(FZ_ERR_NO_DRIVER), "CUDA driver not available");
	ck_assert_str_eq(fz_dtype_name(FZ_BF16), "bf16");
	ck_assert_uint_eq(fz_dtype_size(FZ_I64), 8);
	fz_compile_options o = fz_compile_options_default();
	ck_assert_int_eq(o.fuse, 1);
	ck_assert_int_eq(o.disk_cache, 1);
	ck_assert_str_eq(fz_version(), "0.1.0");
}
END_TEST

/* ---- no driver ------------------------------------------------------------------------------ */

START_TEST(missing_driver)
{
	setenv("FUSEC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	fz_context *ctx = (fz_context *)1;
	ck_assert_int_eq(fz_context_create(0, &ctx), FZ_ERR_NO_DRIVER);
	ck_assert_ptr_null(ctx);
	ck_assert_str_eq(fz_last_error(), "no CUDA driver: /nonexistent/libcuda.so.1 could not be loaded "
	                                  "(/nonexistent/libcuda.so.1: cannot open shared object file: "
	                                  "No such file or directory)");
	/* the same answer again (loaded once), and everything else still works */
	ck_assert_int_eq(fz_context_create(1, &ctx), FZ_ERR_NO_DRIVER);
	fz_program *p = compile_ok(prog_src, 1);
	fz_run *r = (fz_run *)1;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_ERR_ARGUMENT);
	ck_assert_ptr_null(r);
	ck_assert_str_eq(fz_program_error(p),
	                 "program 'prog' was compiled without a context: pass one to fz_run_create");
	fz_program_destroy(p);
}
END_TEST

START_TEST(library_is_not_a_driver)
{
	setenv("FUSEC_CUDA_LIBRARY", "libm.so.6", 1);
	fz_context *ctx;
	ck_assert_int_eq(fz_context_create(0, &ctx), FZ_ERR_NO_DRIVER);
	ck_assert_str_eq(fz_last_error(),
	                 "no CUDA driver: libm.so.6 has no cuGetProcAddress (fusec needs a driver for CUDA 11.3 or newer)");
}
END_TEST

/* ---- tolerances (runtime/compare.h) -------------------------------------------------------------- */

static Tensor vec(fz_dtype t, int n, const double *v)
{
	Tensor x = {.dtype = t, .rank = 1, .shape = {n}};
	ck_assert(tensor_alloc(&x));
	for (int i = 0; i < n; i++) {
		if (t == FZ_F32)
			((float *)x.data)[i] = (float)v[i];
		else if (t == FZ_F64)
			((double *)x.data)[i] = v[i];
		else if (t == FZ_I64)
			((int64_t *)x.data)[i] = (int64_t)v[i];
		else if (t == FZ_F16)
			((uint16_t *)x.data)[i] = f32_to_f16_bits((float)v[i]);
	}
	return x;
}

START_TEST(tolerance_table)
{
	RtTolerance t = rt_tolerance(FZ_F32, 0, false);
	ck_assert(t.atol == 1e-5 && t.rtol == 1e-4 && !t.exact);
	t = rt_tolerance(FZ_F32, 64, false);
	ck_assert(t.atol == 1e-5 && t.rtol == 1e-4);
	t = rt_tolerance(FZ_F32, 4096, false); /* sqrt(4096) / 8 = 8 */
	ck_assert_double_eq_tol(t.atol, 8e-5, 1e-12);
	ck_assert_double_eq_tol(t.rtol, 8e-4, 1e-12);
	t = rt_tolerance(FZ_F16, 4096, false);
	ck_assert(t.atol == 1e-2 && t.rtol == 1e-2);
	t = rt_tolerance(FZ_BF16, 0, true);
	ck_assert(t.atol == 4e-2 && t.rtol == 4e-2);
	t = rt_tolerance(FZ_F64, 0, true);
	ck_assert(t.atol == 1e-12 && t.rtol == 1e-10);
	ck_assert(rt_tolerance(FZ_I32, 100000, false).exact);
	ck_assert(rt_tolerance(FZ_BOOL, 0, true).exact);
}
END_TEST

START_TEST(compare_values)
{
	double want[] = {1.0, NAN, INFINITY, -INFINITY, 100.0, 0.0};
	double good[] = {1.0 + 5e-5, NAN, INFINITY, -INFINITY, 100.0 + 5e-3, 9e-6};
	Tensor w = vec(FZ_F64, 6, want), g = vec(FZ_F64, 6, good);
	RtTolerance tol = rt_tolerance(FZ_F32, 0, false);
	RtCompare c;
	ck_assert(rt_compare(&g, &w, tol, &c));
	ck_assert_int_eq(c.bad, 0);
	ck_assert_int_eq(c.n, 6);
	ck_assert_double_eq_tol(c.max_abs, 5e-3, 1e-9);
	ck_assert_double_eq_tol(c.max_rel, 5e-5, 1e-9);
	ck_assert_int_eq(c.worst, 5); /* 9e-6 of a bound of 1e-5 */
	tensor_free(&g);

	double bad[] = {1.0 + 2e-4, 1.0, -INFINITY, -INFINITY, 100.0, NAN};
	g = vec(FZ_F64, 6, bad);
	ck_assert(rt_compare(&g, &w, tol, &c));
	ck_assert_int_eq(c.bad, 4); /* out of tolerance, NaN vs 1, -inf vs inf, NaN vs 0 */
	ck_assert_int_eq(c.worst, 1);
	ck_assert(isnan(c.worst_want) && c.worst_got == 1.0);
	tensor_free(&g);

	/* shapes and dtypes must agree */
	Tensor f = vec(FZ_F32, 6, want);
	ck_assert(!rt_compare(&f, &w, tol, &c));
	tensor_free(&f);
	tensor_free(&w);
}
END_TEST

START_TEST(compare_integers_exactly)
{
	Tensor a = {.dtype = FZ_I64, .rank = 2, .shape = {2, 3}}, b = a;
	ck_assert(tensor_alloc(&a));
	ck_assert(tensor_alloc(&b));
	int64_t *x = a.data, *y = b.data;
	for (int i = 0; i < 6; i++)
		x[i] = y[i] = (int64_t)1 << 53;
	x[5] += 1; /* the same double, a different integer */
	RtCompare c;
	ck_assert(rt_compare(&a, &b, rt_tolerance(FZ_I64, 0, false), &c));
	ck_assert_int_eq(c.bad, 1);
	ck_assert_int_eq(c.worst, 5);
	char at[64];
	rt_index_str(&a, c.worst, at, sizeof at);
	ck_assert_str_eq(at, "[1, 2]");
	Tensor s = {.dtype = FZ_F32, .rank = 0};
	rt_index_str(&s, 0, at, sizeof at);
	ck_assert_str_eq(at, "[]");
	tensor_free(&a);
	tensor_free(&b);
}
END_TEST

START_TEST(longest_reduction)
{
	Compilation *c = tu_compile("in x: f32[B, N]\nin y: f32[B, 7]\nout a = sum(x)\nout b = max(y) + mean(x * 2)\n",
	                            STAGE_IR);
	ck_assert_int_eq(c->status, FZ_OK);
	int64_t dims[2] = {3, 100};
	ck_assert_int_eq(rt_longest_reduction(&c->graph, dims), 100);
	dims[1] = 5;
	ck_assert_int_eq(rt_longest_reduction(&c->graph, dims), 7);
	pipe_free(c);
	c = tu_compile("in x: f32[N]\nout y = x * 2\n", STAGE_IR);
	ck_assert_int_eq(rt_longest_reduction(&c->graph, dims), 0);
	pipe_free(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, compile_without_context);
	tcase_add_test(tc, introspection);
	tcase_add_test(tc, program_errors_are_diagnostics);
	tcase_add_test(tc, compile_file);
	tcase_add_test(tc, argument_errors);
	tcase_add_test(tc, source_too_large);
	tcase_add_test(tc, null_out_pointers);
	tcase_add_test(tc, arena_huge_sizes);
	tcase_add_test(tc, strings_and_defaults);
	tcase_add_test(tc, missing_driver);
	tcase_add_test(tc, library_is_not_a_driver);
	tcase_add_test(tc, tolerance_table);
	tcase_add_test(tc, compare_values);
	tcase_add_test(tc, compare_integers_exactly);
	tcase_add_test(tc, longest_reduction);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(suite()); }
