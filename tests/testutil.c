#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
