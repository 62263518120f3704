/* The positional calls of the public API that need no GPU (runtime/program.c):
 * the explain text, shapes from input sizes with their mismatch messages,
 * and runs on the CPU reference over host buffers, checked against values
 * computed here in double precision; and fz_call_launch's argument
 * errors. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fusec.h"
#include "testutil.h"

static fz_program *compile(const char *src, int fuse)
{
	fz_compile_options o = fz_compile_options_default();
	o.fuse = fuse;
	fz_program *p = NULL;
	fz_diag d;
	fz_status s = fz_program_compile(NULL, "calls.fz", src, strlen(src), &o, &p, &d);
	ck_assert_msg(s == FZ_OK, "compile failed: %s", d.rendered);
	return p;
}

static const char two_dims[] = "in x: f32[B, N]\n"
                               "in w: f32[N]\n"
                               "in s: f32\n"
                               "out y = x * w + s\n"
                               "out t = sum(x)\n";

START_TEST(explain_text)
{
	fz_program *p = compile("in x: f32[B, N]\nin w: f32[C, B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n"
	                        "out z = e * w\n", 1);
	char buf[512];
	const char *want = "%2 (max at 3:13) is stored: its consumer %3 iterates over [C, B, N], not the rows [B, N]\n";
	ck_assert_uint_eq(fz_program_explain(p, buf, sizeof buf), strlen(want));
	ck_assert_str_eq(buf, want);
	/* cut like snprintf, the full length still returned */
	ck_assert_uint_eq(fz_program_explain(p, buf, 5), strlen(want));
	ck_assert_str_eq(buf, "%2 (");
	ck_assert_uint_eq(fz_program_explain(p, NULL, 0), strlen(want));
	fz_program_destroy(p);

	p = compile("in x: f32[N]\nout y = x * 2\n", 1);
	ck_assert_uint_gt(fz_program_explain(p, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "no edge crosses kernels (1 kernel)\n");
	fz_program_destroy(p);
	ck_assert_uint_eq(fz_program_explain(NULL, buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(shapes_from_sizes)
{
	fz_program *p = compile(two_dims, 1);
	int64_t in[] = {3, 5, 5}, dims[2], out[4];
	ck_assert_int_eq(fz_program_shapes(p, in, dims, out), FZ_OK);
	ck_assert_int_eq(dims[0], 3);
	ck_assert_int_eq(dims[1], 5);
	ck_assert_int_eq(out[0], 3);
	ck_assert_int_eq(out[1], 5);
	ck_assert_int_eq(out[2], 3); /* t = sum(x): [B, 1] */
	ck_assert_int_eq(out[3], 1);
	fz_program_destroy(p);
}
END_TEST

static void expect_mismatch(const char *src, const int64_t *in, const char *msg)
{
	fz_program *p = compile(src, 1);
	int64_t dims[8], out[16];
	ck_assert_int_eq(fz_program_shapes(p, in, dims, out), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_program_error(p), msg);
	ck_assert_str_eq(fz_last_error(), msg);
	fz_program_destroy(p);
}

START_TEST(shape_mismatches_name_input_dim_and_sizes)
{
	expect_mismatch(two_dims, (int64_t[]){3, 5, 6}, "input 'w': dim N (axis 0) is 6, but input 'x' gives N = 5");
	expect_mismatch("in a: f32[N, N]\nout y = a + 1\n", (int64_t[]){3, 4},
	                "input 'a': dim N is 3 at axis 0 but 4 at axis 1");
	expect_mismatch("in a: f32[N, 4]\nout y = a + 1\n", (int64_t[]){3, 5},
	                "input 'a': axis 1 is 5, but the program declares it 4");
	expect_mismatch("in a: f32[N]\nout y = a + 1\n", (int64_t[]){-2}, "input 'a': axis 0 has size -2");
}
END_TEST

START_TEST(run_cpu_matches_double)
{
	fz_program *p = compile(two_dims, 1);
	enum { B = 3, N = 5 };
	float x[B * N], w[N], s = 0.25f, y[B * N], t[B]; /* t: [B, 1] */
	for (int i = 0; i < B * N; i++)
		x[i] = (float)(i % 7) - 2.5f;
	for (int i = 0; i < N; i++)
		w[i] = 0.5f * (float)i;
	const void *in[] = {x, w, &s};
	void *out[] = {y, t};
	ck_assert_int_eq(fz_program_run_cpu(p, in, (int64_t[]){B, N, N}, out), FZ_OK);
	for (int b = 0; b < B; b++) {
		double sum = 0;
		for (int n = 0; n < N; n++) {
			ck_assert_float_eq_tol(y[b * N + n], (double)x[b * N + n] * w[n] + s, 1e-6);
			sum += x[b * N + n];
		}
		ck_assert_float_eq_tol(t[b], sum, 1e-6);
	}
	/* a mismatch writes nothing */
	memset(t, 0x7f, sizeof t);
	ck_assert_int_eq(fz_program_run_cpu(p, in, (int64_t[]){B, N, N + 1}, out), FZ_ERR_BINDING);
	ck_assert_int_eq(t[0] == t[0] && t[0] > 1e30f, 1);
	fz_program_destroy(p);
}
END_TEST

/* Per-op programs round each stored half value, as eager PyTorch does. */
START_TEST(run_cpu_per_op_rounds_halves)
{
	const char *src = "in x: f16[N]\nout y = (x + 1000) - 1000\n";
	fz_program *fused = compile(src, 1), *perop = compile(src, 0);
	uint16_t x = 0x2e66, y1, y2; /* 0.1: 1000.1 rounds to 1000 in f16 */
	const void *in[] = {&x};
	int64_t n = 1;
	ck_assert_int_eq(fz_program_run_cpu(fused, in, &n, (void *[]){&y1}), FZ_OK);
	ck_assert_int_eq(fz_program_run_cpu(perop, in, &n, (void *[]){&y2}), FZ_OK);
	ck_assert_uint_eq(y1, 0x2e66);
	ck_assert_uint_eq(y2, 0);
	fz_program_destroy(fused);
	fz_program_destroy(perop);
}
END_TEST

START_TEST(run_cpu_errors)
{
	fz_program *p = compile("in x: f32[N]\nout y = max(x)\n", 1);
	float x[1] = {1}, y[1];
	int64_t n = 0;
	ck_assert_int_eq(fz_program_run_cpu(p, (const void *[]){x}, &n, (void *[]){y}), FZ_ERR_RUNTIME);
	ck_assert_str_eq(fz_program_error(p), "max at 2:9 reduces an empty axis (N = 0)");
	n = 1;
	ck_assert_int_eq(fz_program_run_cpu(p, (const void *[]){NULL}, &n, (void *[]){y}), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "input 'x': data is NULL");
	ck_assert_int_eq(fz_program_run_cpu(p, (const void *[]){x}, &n, (void *[]){NULL}), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "output 'y': buffer is NULL");
	ck_assert_int_eq(fz_program_run_cpu(p, NULL, &n, (void *[]){y}), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_program_run_cpu(NULL, NULL, NULL, NULL), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_program_shapes(p, NULL, NULL, NULL), FZ_ERR_ARGUMENT);
	ck_assert_int_eq(fz_call_launch(NULL, NULL), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_last_error(), "fz_call_launch: call is NULL");
	ck_assert_int_eq(fz_call_launch(&(fz_call){0}, NULL), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_last_error(), "fz_call_launch: the call's run is NULL");
	fz_program_destroy(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("program_calls");
	TCase *tc = tcase_create("program_calls");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, explain_text);
	tcase_add_test(tc, shapes_from_sizes);
	tcase_add_test(tc, shape_mismatches_name_input_dim_and_sizes);
	tcase_add_test(tc, run_cpu_matches_double);
	tcase_add_test(tc, run_cpu_per_op_rounds_halves);
	tcase_add_test(tc, run_cpu_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(suite()); }
