#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *tu_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("FUSEC_SOURCE_DIR");
	if (!root || !*root)
		root = FUSEC_SOURCE_DIR;
	snprintf(buf, sizeof buf, "%s/%s", root, rel);
	return buf;
}

Compilation *tu_compile(const char *src, PipeStage stop)
{
	PipeOptions opt = pipe_default_options();
	opt.stop = stop;
	Compilation *c = pipe_new("test.fz", src, strlen(src), &opt);
	ck_assert_ptr_nonnull(c);
	pipe_run(c);
	return c;
}

const char *tu_error(const char *src, PipeStage stop)
{
	static char buf[8192];
	Compilation *c = tu_compile(src, stop);
	if (c->status == FZ_OK) {
		pipe_free(c);
		return NULL;
	}
	snprintf(buf, sizeof buf, "%s", c->diag_text ? c->diag_text : "");
	pipe_free(c);
	return buf;
}

int tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int tu_strict_json(const char *text)
{
	char path[] = "/tmp/fusec-json-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof cmd,
	         "command -v python3 >/dev/null || exit 77; python3 -c 'import json, sys\n"
	         "def bad(c): raise ValueError(c)\n"
	         "json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"), parse_constant=bad)' %s "
	         "2>/dev/null",
	         path);
	int st = system(cmd);
	unlink(path);
	return WIFEXITED(st) ? (WEXITSTATUS(st) == 0 ? 0 : WEXITSTATUS(st) == 77 ? 77 : 1) : -1;
}
