/* What `fusec` shows of its own work: the progress line of a long command
 * (on a terminal only, erased when done) and the FUSEC_LOG / -v log lines
 * that need no GPU (NVRTC's time and log; the JIT and launch lines are
 * checked on a GPU in tests/gpu/test_bench.c). Runs the fusec binary next to
 * the tests' folder (or $FUSEC_BIN), under a pseudo-terminal where the test
 * is about one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char out_buf[1 << 16], err_buf[1 << 16];
static char tmpdir[] = "/tmp/fusec-test-cli-XXXXXX";

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

static void set_log(const char *v)
{
	if (v)
		setenv("FUSEC_LOG", v, 1);
	else
		unsetenv("FUSEC_LOG");
}

/* fusec ARGS with stdout and stderr into files (not a terminal); the exit
 * status, the output in out_buf and err_buf. */
static int run_plain(const char *log, const char *const *args)
{
	char cmd[4096] = "";
	size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s'", fusec_bin());
	for (int i = 0; args[i]; i++)
		n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", args[i]);
	snprintf(cmd + n, sizeof cmd - n, " >%s/out 2>%s/err", tmpdir, tmpdir);
	set_log(log);
	int st = system(cmd);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/out", tmpdir);
	FILE *f = fopen(path, "rb");
	out_buf[fread(out_buf, 1, sizeof out_buf - 1, f)] = 0;
	fclose(f);
	snprintf(path, sizeof path, "%s/err", tmpdir);
	f = fopen(path, "rb");
	err_buf[fread(err_buf, 1, sizeof err_buf - 1, f)] = 0;
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* fusec ARGS on a pseudo-terminal (stdout and stderr both): the exit status,
 * everything it wrote in out_buf. */
static int run_tty(const char *log, const char *const *args)
{
	const char *argv[32] = {fusec_bin()};
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	set_log(log);
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	size_t got = 0;
	for (;;) {
		ssize_t r = read(master, out_buf + got, sizeof out_buf - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) /* EIO once the child has closed the terminal */
			break;
		got += (size_t)r;
	}
	out_buf[got] = 0;
	close(master);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A program that takes the interpreter a few seconds: 60 transcendental
 * ops an element over 2 million elements. */
static const char *slow_program(void)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/slow.fz", tmpdir);
	/* each line uses the one before */
	char text[4096];
	size_t n = 0;
	n += (size_t)snprintf(text + n, sizeof text - n, "in x: f32[N]\n");
	for (int i = 0; i < 12; i++) {
		char prev[16];
		snprintf(prev, sizeof prev, i ? "a%d" : "x", i - 1);
		n += (size_t)snprintf(text + n, sizeof text - n, "a%d = sin(exp(cos(%s)) * 3 + tanh(%s))\n", i, prev, prev);
	}
	snprintf(text + n, sizeof text - n, "out w = a11\n");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_msg(access(fusec_bin(), X_OK) == 0, "no fusec binary at %s (set FUSEC_BIN)", fusec_bin());
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

START_TEST(progress_on_a_terminal)
{
	char outdir[PATH_MAX];
	snprintf(outdir, sizeof outdir, "%s/o", tmpdir);
	const char *args[] = {"run", slow_program(), "--cpu", "--dim", "N=2000000", "--out-dir", outdir, NULL};
	/* a terminal: the line appears after a second, rewritten in place, and
	 * is erased before the summary */
	ck_assert_int_eq(run_tty(NULL, args), 0);
	const char *line = strstr(out_buf, "\r\033[Kfusec run: running on the CPU reference interpreter (");
	ck_assert_msg(line != NULL, "no progress line in: %s", out_buf);
	const char *summary = strstr(out_buf, "w f32[2000000] min=");
	ck_assert_ptr_nonnull(summary);
	ck_assert_msg(summary - out_buf >= 4 && memcmp(summary - 4, "\r\033[K", 4) == 0, "the line was not erased: %s",
	              out_buf);
	/* not a terminal: never */
	ck_assert_int_eq(run_plain(NULL, args), 0);
	ck_assert_str_eq(err_buf, "");
	/* nor while the log is on, whose lines it would break */
	ck_assert_int_eq(run_tty("1", args), 0);
	ck_assert_ptr_null(strstr(out_buf, "fusec run: running"));
}
END_TEST

START_TEST(log_without_a_gpu)
{
	char prog[PATH_MAX];
	snprintf(prog, sizeof prog, "%s", tu_path("examples/softmax.fz"));
	const char *ptx[] = {"--emit=ptx", prog, NULL};
	/* off: the library prints nothing */
	ck_assert_int_eq(run_plain(NULL, ptx), 0);
	ck_assert_str_eq(err_buf, "");
	ck_assert_int_eq(run_plain("0", ptx), 0);
	ck_assert_str_eq(err_buf, "");
	/* FUSEC_LOG=1: NVRTC's time and its log, said to be empty when it is */
	ck_assert_int_eq(run_plain("1", ptx), 0);
	ck_assert_msg(strncmp(err_buf, "fusec: nvrtc: softmax.cu (compute_90) compiled in ", 50) == 0, "%s", err_buf);
	ck_assert_msg(strstr(err_buf, " ms; its log is empty\n") != NULL, "%s", err_buf);
	ck_assert_ptr_eq(strchr(err_buf, '\n'), err_buf + strlen(err_buf) - 1); /* one line */
	/* -v is the same */
	const char *v[] = {"-v", "--emit=ptx", "--arch", "sm_80", prog, NULL};
	ck_assert_int_eq(run_plain(NULL, v), 0);
	ck_assert_msg(strncmp(err_buf, "fusec: nvrtc: softmax.cu (compute_80) compiled in ", 50) == 0, "%s", err_buf);
	ck_assert_ptr_nonnull(strstr(out_buf, ".target sm_80"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("cli");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, progress_on_a_terminal);
	tcase_add_test(tc, log_without_a_gpu);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
