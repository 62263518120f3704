/* Helpers shared by the Check unit tests: compile a program from a string
 * through the pipeline up to a given stage, and read files of the source tree
 * (FUSEC_SOURCE_DIR, or the FUSEC_SOURCE_DIR environment variable when the
 * tree was moved, as on the GPU machine). */
#ifndef FUSEC_TESTUTIL_H
#define FUSEC_TESTUTIL_H

#include <check.h>
#include "pipeline.h"

/* Path of a file under the source tree; static buffer, valid until next call. */
const char *tu_path(const char *rel);

/* Run the pipeline on `src` (named "test.fz") up to `stop`; on failure the
 * rendered diagnostic is in c->diag_text. Caller frees with pipe_free(). */
Compilation *tu_compile(const char *src, PipeStage stop);

/* Same, expecting failure: returns the rendered first diagnostic (arena-owned
 * copy in a static buffer). */
const char *tu_error(const char *src, PipeStage stop);

/* Check `text` with a strict JSON parser (Python's json.loads, with NaN and
 * Infinity refused): 0 if it is one valid UTF-8 JSON document, 1 if not, 77
 * if python3 cannot be run. */
int tu_strict_json(const char *text);

/* Run a Check suite and return the process exit code. */
int tu_run(Suite *s);

#endif
