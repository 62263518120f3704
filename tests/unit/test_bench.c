/* `fusec bench` without a GPU: what the plans say (--dry-run, exact bytes and
 * kernels), the options and their errors, and the one-line failure where no
 * driver can be loaded (forced with FUSEC_CUDA_LIBRARY, so that the test means
 * the same on the GPU machine). Runs the fusec binary next to the tests'
 * folder (or $FUSEC_BIN). */
#include "testutil.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NO_DRIVER "/nonexistent/libcuda.so.1"

static char out_buf[1 << 16], err_buf[1 << 16];

static const char *fusec_bin(void)
{
	static char buf[PATH_MAX + 16];
	const char *env = getenv("FUSEC_BIN");
	if (env && *env)
		return env;
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	ck_assert_int_gt(n, 0);
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	strcpy(slash, "/../fusec"); /* build/tests/test_bench -> build/fusec */
	return buf;
}

static void slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size_t got = fread(buf, 1, n - 1, f);
	buf[got] = 0;
	fclose(f);
	unlink(path);
}

/* Run fusec with argv (NULL-terminated, without argv[0]) and no driver;
 * stdout and stderr into out_buf and err_buf; returns the exit status. */
static int run_fusec(const char *const *args)
{
	char out_path[] = "/tmp/fusec-bench-out-XXXXXX", err_path[] = "/tmp/fusec-bench-err-XXXXXX";
	int fo = mkstemp(out_path), fe = mkstemp(err_path);
	ck_assert(fo >= 0 && fe >= 0);
	const char *argv[64] = {fusec_bin()};
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("FUSEC_CUDA_LIBRARY", NO_DRIVER, 1);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(fo);
	close(fe);
	slurp(out_path, out_buf, sizeof out_buf);
	slurp(err_path, err_buf, sizeof err_buf);
	ck_assert_msg(WIFEXITED(status), "fusec died");
	return WEXITSTATUS(status);
}

static char softmax[PATH_MAX], relu[PATH_MAX];

static void setup(void)
{
	ck_assert_msg(access(fusec_bin(), X_OK) == 0, "no fusec binary at %s (set FUSEC_BIN)", fusec_bin());
	snprintf(softmax, sizeof softmax, "%s", tu_path("examples/softmax.fz"));
	snprintf(relu, sizeof relu, "%s", tu_path("examples/add_scale_bias_relu.fz"));
}

START_TEST(no_driver_is_one_line)
{
	const char *args[] = {"bench", softmax, "--dim", "B=4", "--dim", "N=8", NULL};
	ck_assert_int_eq(run_fusec(args), 77); /* no usable GPU: the status harnesses count as skipped */
	ck_assert_str_eq(out_buf, "");
	ck_assert_str_eq(err_buf, "fusec: bench: no CUDA driver: " NO_DRIVER " could not be loaded (" NO_DRIVER
	                          ": cannot open shared object file: No such file or directory)\n");
	const char *json[] = {"bench", softmax, "--dim", "B=4", "--dim", "N=8", "--json", NULL};
	ck_assert_int_eq(run_fusec(json), 77);
	ck_assert_str_eq(out_buf, "");
	ck_assert_ptr_eq(strchr(err_buf, '\n'), err_buf + strlen(err_buf) - 1);
}
END_TEST

START_TEST(dry_run_softmax)
{
	/* fused: x read, y written (4x8 f32: 128 bytes each). Per-op: max (128
	 * + 16), x - m (128 + 16 + 128), exp (128 + 128), sum (128 + 16), e / s
	 * (128 + 16 + 128) = 1088 bytes in 5 kernels. */
	const char *args[] = {"bench", softmax, "--dim", "B=4", "--dim", "N=8", "--dry-run", NULL};
	ck_assert_int_eq(run_fusec(args), 0);
	ck_assert_str_eq(err_buf, "");
	char want[8192];
	snprintf(want, sizeof want,
	         "%s  B=4 N=8  (dry run: no GPU used)\n"
	         "minimum bytes: 256 (every input read once, every output written once)\n"
	         "\n"
	         "mode       median us  kernels    bytes moved\n"
	         "fused              -        1            256\n"
	         "per-op             -        5           1088\n"
	         "\n"
	         "ideal fused / per-op speedup (per-op bytes moved / minimum): 4.25x\n",
	         softmax);
	ck_assert_str_eq(out_buf, want);
}
END_TEST

START_TEST(dry_run_json)
{
	/* relu((x + y) * s + bias) over N = 1000: 3 inputs read and 1 output
	 * written, 4000 bytes each; per-op: add 12000, mul by the scalar 8000,
	 * add 12000, relu 8000. */
	const char *args[] = {"bench", relu, "--dim=N=1000", "--dry-run", "--json", NULL};
	ck_assert_int_eq(run_fusec(args), 0);
	char want[8192];
	snprintf(want, sizeof want,
	         "{\"program\": \"%s\", \"dims\": {\"N\": 1000}, \"min_bytes\": 16000, "
	         "\"fused\": {\"kernels\": 1, \"bytes_moved\": 16000}, "
	         "\"per_op\": {\"kernels\": 4, \"bytes_moved\": 40000}, \"ideal_speedup\": 2.5}\n",
	         relu);
	ck_assert_str_eq(out_buf, want);

	const char *one[] = {"bench", relu, "--dim", "N=1000", "--dry-run", "--json", "--mode", "per-op", NULL};
	ck_assert_int_eq(run_fusec(one), 0);
	snprintf(want, sizeof want,
	         "{\"program\": \"%s\", \"dims\": {\"N\": 1000}, \"min_bytes\": 16000, "
	         "\"per_op\": {\"kernels\": 4, \"bytes_moved\": 40000}}\n",
	         relu);
	ck_assert_str_eq(out_buf, want);
}
END_TEST

START_TEST(usage_errors)
{
	static const struct {
		const char *args[8];
		const char *err;
	} cases[] = {
		{{"bench", "--reps", "0", NULL}, "fusec: --reps expects an integer from 1 to 1000000, got '0'\n"},
		{{"bench", "--warmup", "-1", NULL}, "fusec: --warmup expects an integer from 0 to 1000000, got '-1'\n"},
		{{"bench", "--mode", "all", NULL}, "fusec: --mode expects fused, per-op or both, got 'all'\n"},
		{{"bench", "--dim", "B", NULL}, "fusec: --dim expects NAME=SIZE, got 'B'\n"},
		{{"bench", "--dim", "B=-3", NULL}, "fusec: --dim B=-3: the size must be an integer from 0 to 2^62\n"},
		{{"bench", "--seed", "x", NULL}, "fusec: --seed expects a non-negative integer, got 'x'\n"},
		{{"bench", "--reps", NULL}, "fusec: --reps expects a value\n"},
		{{"bench", "--fast", NULL}, "fusec: unknown option '--fast' (see fusec bench --help)\n"},
		{{"bench", "a.fz", "b.fz", NULL}, "fusec: more than one program file ('a.fz' and 'b.fz')\n"},
		{{"bench", "--device", "-1", NULL}, "fusec: --device expects an integer from 0 to 1023, got '-1'\n"},
		{{"bench", "--device=x", NULL}, "fusec: --device expects an integer from 0 to 1023, got 'x'\n"},
		{{"bench", "-", NULL}, "fusec: bench: the program must be a file, not standard input\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(run_fusec(cases[i].args), 2);
		ck_assert_str_eq(err_buf, cases[i].err);
		ck_assert_str_eq(out_buf, "");
	}
	const char *none[] = {"bench", NULL};
	ck_assert_int_eq(run_fusec(none), 2);
	ck_assert_int_eq(strncmp(err_buf, "usage: fusec bench FILE.fz [OPTIONS]\n", 37), 0);
	const char *help[] = {"bench", "--help", NULL};
	ck_assert_int_eq(run_fusec(help), 0);
	ck_assert_int_eq(strncmp(out_buf, "usage: fusec bench FILE.fz [OPTIONS]\n", 37), 0);
}
END_TEST

START_TEST(dim_errors_come_before_the_gpu)
{
	const char *unknown[] = {"bench", softmax, "--dim", "B=4", "--dim", "N=8", "--dim", "Q=2", NULL};
	ck_assert_int_eq(run_fusec(unknown), 1);
	ck_assert_str_eq(err_buf, "fusec: --dim: the program has no dim 'Q' (its dims: B, N)\n");
	const char *missing[] = {"bench", softmax, "--dim", "B=4", NULL};
	ck_assert_int_eq(run_fusec(missing), 1);
	ck_assert_str_eq(err_buf, "fusec: dim 'N' is not bound: pass --dim N=SIZE\n");
	const char *twice[] = {"bench", softmax, "--dim", "B=4", "--dim", "B=5", "--dim", "N=8", NULL};
	ck_assert_int_eq(run_fusec(twice), 2);
	ck_assert_str_eq(err_buf, "fusec: --dim: dim 'B' is given twice (4 and 5)\n");
	ck_assert_str_eq(out_buf, "");
}
END_TEST

/* Every --json line parses strictly: rates over empty tensors (0/0, x/0)
 * are null, and a path that is no valid UTF-8 is escaped. */
START_TEST(json_is_strict)
{
	if (tu_strict_json("{}") == 77) {
		fprintf(stderr, "json_is_strict: no python3, the strict parser; not checked\n");
		return;
	}
	ck_assert_int_eq(tu_strict_json("{\"x\": NaN}"), 1); /* the parser is strict */
	const char *b0[] = {"bench", softmax, "--dry-run", "--json", "--dim", "B=0", "--dim", "N=4", NULL};
	ck_assert_int_eq(run_fusec(b0), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "\"ideal_speedup\": null}"));
	ck_assert_int_eq(tu_strict_json(out_buf), 0);
	const char *n0[] = {"bench", softmax, "--dry-run", "--json", "--dim", "B=4", "--dim", "N=0", NULL};
	ck_assert_int_eq(run_fusec(n0), 0);
	ck_assert_int_eq(tu_strict_json(out_buf), 0);
	/* a program whose path holds a quote, a backslash and a byte that is not UTF-8 */
	char dir[] = "/tmp/fusec-bench-XXXXXX", path[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/odd\"\\\xff.fz", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("in x: f32[N]\nout y = x * 2\n", f);
	fclose(f);
	const char *odd[] = {"bench", path, "--dry-run", "--json", "--dim", "N=4", NULL};
	ck_assert_int_eq(run_fusec(odd), 0);
	unlink(path);
	rmdir(dir);
	ck_assert_int_eq(tu_strict_json(out_buf), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "/odd\\\"\\\\\xef\xbf\xbd.fz\""));
}
END_TEST

START_TEST(program_error)
{
	char path[] = "/tmp/fusec-bench-XXXXXX.fz";
	int fd = mkstemps(path, 3);
	ck_assert_int_ge(fd, 0);
	const char *src = "in x: f32[N]\nout y = x +\n";
	ck_assert_int_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
	close(fd);
	const char *args[] = {"bench", path, "--dim", "N=8", NULL};
	ck_assert_int_eq(run_fusec(args), 1);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(err_buf, ":2:"));
	ck_assert_ptr_nonnull(strstr(err_buf, ": error: "));
	ck_assert_str_eq(out_buf, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench");
	TCase *tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, no_driver_is_one_line);
	tcase_add_test(tc, dry_run_softmax);
	tcase_add_test(tc, dry_run_json);
	tcase_add_test(tc, usage_errors);
	tcase_add_test(tc, dim_errors_come_before_the_gpu);
	tcase_add_test(tc, program_error);
	tcase_add_test(tc, json_is_strict);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
