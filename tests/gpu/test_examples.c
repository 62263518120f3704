/* Every program in examples/ on the GPU against the interpreter, fused and
 * per-op, at size sets from one element to rows of a million, a million rows
 * of three, empty leading dims and empty rows (where max/min must fail with
 * FZ_ERR_RUNTIME), and once with NaN/inf inputs. Output buffers are poisoned
 * (gpucheck.h); tolerances are progen_compare's defaults for the least
 * precise dtype the program uses and its longest reduced row. Per-op runs of
 * programs with f16/bf16 values are compared with the interpreter rounding
 * every half value where per-op mode stores it (interp_run_ex): per-op
 * softmax_f16 over 300k elements legitimately overflows its f16 sum.
 *
 * A dim that is the last axis of some input is a row length and takes the
 * set's row size; any other dim takes its row count.
 *
 * Environment: FUSEC_TEST_OUT (failing cases are written there),
 * FUSEC_SOURCE_DIR (the tree, when it moved). Prints one line per failing
 * case and ends with "N passed, N failed". Exits 77 without a driver or
 * device, 1 if any case failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucheck.h"
#include "pipeline.h"
#include "testutil.h"

typedef struct SizeSet {
	int64_t rows, row;
	bool nonfinite;
} SizeSet;

static const SizeSet sets[] = {
	{1, 1, false},      {3, 5, false},       {7, 33, false},     {64, 1000, false},
	{300, 4097, false}, {2, 300007, false},  {2, 1000000, false}, {1000000, 3, false},
	{0, 17, false},     {5, 0, false},       {33, 257, true},
};

typedef struct Tally {
	int passed, failed;
} Tally;

static void run_case(fz_context *ctx, const char *file, const char *text, const SizeSet *s, Tally *tally)
{
	GcExample e = {.name = file, .text = text, .rows = s->rows, .row = s->row, .nonfinite = s->nonfinite,
	               .seed = 1000};
	char msg[8192];
	if (gc_example_run(ctx, &e, msg, sizeof msg)) {
		tally->passed++;
	} else {
		printf("FAIL %s\n", msg);
		tally->failed++;
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_context *ctx;
	int rc = gc_context("test_examples", &ctx);
	if (rc != 0)
		return rc;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", tu_path("examples"));
	int n;
	char **names = gc_list_examples(dir, &n);
	Tally tally = {0};
	if (n == 0) {
		printf("FAIL no examples in %s (set FUSEC_SOURCE_DIR to the source tree)\n", dir);
		tally.failed++;
	}
	for (int i = 0; i < n; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *text = gc_read_text(path);
		if (!text) {
			printf("FAIL %s: cannot read it\n", path);
			tally.failed++;
		}
		for (int k = 0; text && k < (int)(sizeof sets / sizeof sets[0]); k++)
			run_case(ctx, names[i], text, &sets[k], &tally);
		free(text);
		free(names[i]);
	}
	free(names);
	fz_context_destroy(ctx);
	printf("%d passed, %d failed\n", tally.passed, tally.failed);
	return tally.failed ? 1 : 0;
}
