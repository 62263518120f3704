/* `fusec bench` on a GPU: the JSON it prints is complete and consistent (the
 * plans' exact bytes and kernels, buffer sets that span four times the L2,
 * positive times, fused and per-op outputs that agree), the kernel cache is
 * used the second time, and the table prints. Runs the fusec binary next to
 * the tests' folder (or $FUSEC_BIN).
 *
 * Exits 77 (skipped) where there is no driver or no device. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fusec.h"
#include "gpucheck.h"
#include "testutil.h"

static char out_buf[1 << 16], err_buf[1 << 16];
static char cache_dir[] = "/tmp/fusec-gpu-bench-XXXXXX";

static const char *fusec_bin(void)
{
	static char buf[PATH_MAX + 16];
	const char *env = getenv("FUSEC_BIN");
	if (env && *env)
		return env;
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	ck_assert_int_gt(n, 0);
	buf[n] = 0;
	strcpy(strrchr(buf, '/'), "/../fusec");
	return buf;
}

static void slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	buf[fread(buf, 1, n - 1, f)] = 0;
	fclose(f);
	unlink(path);
}

/* fusec bench EXAMPLE ARGS... with the test's kernel cache; returns the exit
 * status, output in out_buf and err_buf. */
static int bench(const char *example, const char *const *args)
{
	char out_path[] = "/tmp/fusec-gb-out-XXXXXX", err_path[] = "/tmp/fusec-gb-err-XXXXXX";
	int fo = mkstemp(out_path), fe = mkstemp(err_path);
	ck_assert(fo >= 0 && fe >= 0);
	char prog[PATH_MAX];
	snprintf(prog, sizeof prog, "%s", tu_path(example));
	const char *argv[64] = {fusec_bin(), "bench", prog};
	for (int i = 0; args[i]; i++)
		argv[i + 3] = args[i];
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("FUSEC_CACHE_DIR", cache_dir, 1);
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

/* A number in the JSON: "key" at the top level, or "object.key" inside one
 * of the flat objects ("fused", "per_op", "copy"). */
static double jnum(const char *json, const char *path)
{
	char key[128];
	const char *from = json, *dot = strchr(path, '.');
	if (dot) {
		snprintf(key, sizeof key, "\"%.*s\": {", (int)(dot - path), path);
		from = strstr(json, key);
		ck_assert_msg(from != NULL, "no object %s in %s", key, json);
		path = dot + 1;
	}
	snprintf(key, sizeof key, "\"%s\": ", path);
	const char *at = strstr(from, key);
	const char *end = dot ? strchr(from, '}') : NULL;
	ck_assert_msg(at && (!end || at < end), "no %s in %s", key, from);
	return strtod(at + strlen(key), NULL);
}

START_TEST(softmax_json)
{
	const char *args[] = {"--dim", "B=256", "--dim", "N=1024", "--json", "--reps", "30", "--warmup", "3", NULL};
	ck_assert_int_eq(bench("examples/softmax.fz", args), 0);
	ck_assert_str_eq(err_buf, "");
	const char *j = out_buf;
	/* 1 MiB read and 1 MiB written; per-op: max 1 MiB + 1 KiB, x - m 2 MiB +
	 * 1 KiB, exp 2 MiB, sum 1 MiB + 1 KiB, e / s 2 MiB + 1 KiB */
	ck_assert_double_eq(jnum(j, "min_bytes"), 2097152);
	ck_assert_double_eq(jnum(j, "fused.kernels"), 1);
	ck_assert_double_eq(jnum(j, "fused.bytes_moved"), 2097152);
	ck_assert_double_eq(jnum(j, "per_op.kernels"), 5);
	ck_assert_double_eq(jnum(j, "per_op.bytes_moved"), 8392704);
	ck_assert_double_eq_tol(jnum(j, "ideal_speedup"), 8392704.0 / 2097152, 1e-5);
	double l2 = jnum(j, "l2_bytes");
	ck_assert_double_gt(l2, 0);
	ck_assert_double_eq(jnum(j, "buffer_sets"), ceil(4 * l2 / 2097152));
	ck_assert_double_gt(jnum(j, "copy.gbps"), 50);
	ck_assert_double_eq_tol(jnum(j, "floor_us"), 2097152 / (jnum(j, "copy.gbps") * 1e3), 1e-3);
	for (int m = 0; m < 2; m++) {
		const char *mode = m ? "per_op" : "fused";
		char k[64];
		snprintf(k, sizeof k, "%s.median_us", mode);
		double med = jnum(j, k);
		ck_assert_double_gt(med, 0);
		snprintf(k, sizeof k, "%s.min_us", mode);
		ck_assert_double_le(jnum(j, k), med);
		snprintf(k, sizeof k, "%s.pct_floor", mode);
		ck_assert_double_eq_tol(jnum(j, k), 100 * jnum(j, "floor_us") / med, 1e-3 * jnum(j, k));
		snprintf(k, sizeof k, "%s.host_us_per_call", mode);
		ck_assert_double_gt(jnum(j, k), 0);
		snprintf(k, sizeof k, "%s.compiles", mode);
		ck_assert_double_eq(jnum(j, k), 1); /* the cache directory started empty */
	}
	ck_assert_double_eq_tol(jnum(j, "speedup"), jnum(j, "per_op.median_us") / jnum(j, "fused.median_us"), 1e-4);
	ck_assert_double_lt(jnum(j, "outputs_rel_diff"), 1e-5);
	ck_assert_ptr_nonnull(strstr(j, "\"outputs_nan\": false"));

	/* the same again: both modules come from the disk cache */
	ck_assert_int_eq(bench("examples/softmax.fz", args), 0);
	ck_assert_double_eq(jnum(out_buf, "fused.compiles"), 0);
	ck_assert_double_eq(jnum(out_buf, "fused.disk_hits"), 1);
	ck_assert_double_eq(jnum(out_buf, "per_op.compiles"), 0);
}
END_TEST

START_TEST(large_set_is_not_rotated)
{
	/* 3 x 64 MiB read, 64 MiB written: past four times any L2 */
	const char *args[] = {"--dim", "N=16777216", "--json", "--reps", "10", "--warmup", "2", "--mode", "fused", NULL};
	ck_assert_int_eq(bench("examples/add_scale_bias_relu.fz", args), 0);
	ck_assert_double_eq(jnum(out_buf, "buffer_sets"), 1);
	ck_assert_double_eq(jnum(out_buf, "min_bytes"), 16.0 * 16777216);
	ck_assert_ptr_null(strstr(out_buf, "per_op"));
	ck_assert_ptr_null(strstr(out_buf, "speedup"));
}
END_TEST

START_TEST(launch_bound_with_graphs)
{
	const char *args[] = {"--dim", "N=4096", "--json", "--reps", "500", "--warmup", "50", "--graph", NULL};
	ck_assert_int_eq(bench("examples/add_scale_bias_relu.fz", args), 0);
	ck_assert_str_eq(err_buf, "");
	ck_assert_double_gt(jnum(out_buf, "buffer_sets"), 1);
	for (int m = 0; m < 2; m++) {
		const char *mode = m ? "per_op" : "fused";
		char k[64];
		snprintf(k, sizeof k, "%s.graph_host_us_per_call", mode);
		double host = jnum(out_buf, k);
		snprintf(k, sizeof k, "%s.graph_wall_us_per_call", mode);
		ck_assert_double_gt(host, 0);
		ck_assert_double_ge(jnum(out_buf, k), host);
	}
}
END_TEST

START_TEST(half_types_and_table)
{
	const char *args[] = {"--dim", "R=64", "--dim", "C=1024", "--reps", "10", "--warmup", "2", NULL};
	ck_assert_int_eq(bench("examples/layernorm_bf16.fz", args), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "\nfused "));
	ck_assert_ptr_nonnull(strstr(out_buf, "\nper-op "));
	ck_assert_ptr_nonnull(strstr(out_buf, "\nfused / per-op speedup: "));
	/* per-op rounds every intermediate to bf16 (8 bits of mantissa) */
	const char *d = strstr(out_buf, "relative difference ");
	ck_assert_ptr_nonnull(d);
	ck_assert_double_lt(strtod(d + strlen("relative difference "), NULL), 3e-2);
	ck_assert_ptr_null(strstr(out_buf, "NaN"));
}
END_TEST

/* Outputs with NaN (Adam on random inputs: v may go negative under the
 * square root): the relative difference is not a number, and the JSON says
 * null, which a strict parser takes. */
START_TEST(nan_outputs_are_null)
{
	const char *args[] = {"--dim", "N=4096", "--json", "--reps", "5", "--warmup", "1", NULL};
	ck_assert_int_eq(bench("examples/adam.fz", args), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "\"outputs_rel_diff\": null"));
	ck_assert_ptr_nonnull(strstr(out_buf, "\"outputs_nan\": true"));
	ck_assert_int_eq(tu_strict_json(out_buf), 0);
}
END_TEST

/* -v: every JIT lookup (with its key) and every launch geometry chosen. */
START_TEST(verbose_log)
{
	const char *args[] = {"--dim", "B=4", "--dim", "N=8", "--reps", "1", "--warmup", "0", "--mode", "fused",
	                      "-v", NULL};
	ck_assert_int_eq(bench("examples/softmax.fz", args), 0);
	const char *jit = strstr(err_buf, "fusec: jit 'softmax' for sm_");
	ck_assert_msg(jit != NULL, "%s", err_buf);
	ck_assert_ptr_nonnull(strstr(jit, ", key "));
	ck_assert_msg(strstr(err_buf, "fusec: launch softmax_k0 (") && strstr(err_buf, "): grid ") &&
	                  strstr(err_buf, " bytes of dynamic shared memory"),
	              "%s", err_buf);
	/* and a device that is not there: 77, naming how many there are */
	const char *dev[] = {"--dim", "B=4", "--dim", "N=8", "--device", "1023", NULL};
	ck_assert_int_eq(bench("examples/softmax.fz", dev), 77);
	ck_assert_msg(strstr(err_buf, "device 1023 was requested; the driver sees "), "%s", err_buf);
}
END_TEST

int main(void)
{
	fz_context *ctx = NULL;
	int rc = gc_context("test_bench", &ctx);
	if (rc != 0)
		return rc;
	fz_context_destroy(ctx);
	if (!mkdtemp(cache_dir))
		return 1;
	Suite *su = suite_create("gpu_bench");
	TCase *tc = tcase_create("bench");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, softmax_json);
	tcase_add_test(tc, large_set_is_not_rotated);
	tcase_add_test(tc, launch_bound_with_graphs);
	tcase_add_test(tc, half_types_and_table);
	tcase_add_test(tc, nan_outputs_are_null);
	tcase_add_test(tc, verbose_log);
	suite_add_tcase(su, tc);
	rc = tu_run(su);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
