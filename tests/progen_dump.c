/*
 * progen_dump: random programs (tests/progen.h) for tests in other languages,
 * one JSON object a line, so that the Python package's tests run the same
 * generator as the C ones instead of a second one.
 *
 *     progen_dump [--size tiny|small|medium|big] SEED0 COUNT
 *
 * Each line: {"seed", "name", "source", "dims": {NAME: SIZE}, "inputs":
 * [{"name", "dtype", "lo", "hi", "nonfinite"}], "outputs": [{"name",
 * "tol_dtype", "atol", "rtol"}], "runtime_error"}: values of input NAME are
 * drawn in [lo, hi] (whole numbers for integers; some NaN and infinities
 * when nonfinite), an output must be within atol + rtol * |want| of the
 * reference (both 0: bit for bit), and runtime_error says that a max or min
 * reduces an empty axis, which must be refused. The inputs themselves are
 * the caller's to draw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "progen.h"

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void json_number(double v) { printf("%.17g", v); }

/* Whether a max/min of the program reduces an axis bound to 0. */
static int runtime_error(const char *name, const char *text, const ProgenInfo *info)
{
	PipeOptions po = pipe_default_options();
	po.stop = STAGE_IR;
	Compilation *c = pipe_new(name, text, strlen(text), &po);
	int64_t dims[PROGEN_MAX_DIMS];
	char err[256];
	int r = -1;
	if (c && pipe_run(c) == FZ_OK && progen_dims(info, &c->graph, dims, err, sizeof err))
		r = progen_expect(&c->graph, dims) == FZ_ERR_RUNTIME;
	pipe_free(c);
	return r;
}

static int dump(uint64_t seed, ProgenSize size)
{
	ProgenOptions opt = progen_default_options(size);
	ProgenInfo info;
	char *text = progen_program(seed, &opt, &info), name[64];
	if (!text)
		return 1;
	snprintf(name, sizeof name, "progen_%llu.fz", (unsigned long long)seed);
	int rte = runtime_error(name, text, &info);
	if (rte < 0) {
		fprintf(stderr, "progen_dump: seed %llu: the program does not compile\n", (unsigned long long)seed);
		free(text);
		return 1;
	}
	printf("{\"seed\": %llu, \"name\": ", (unsigned long long)seed);
	json_string(name);
	fputs(", \"source\": ", stdout);
	json_string(text);
	fputs(", \"dims\": {", stdout);
	for (int k = 0; k < info.ndims; k++) {
		printf("%s", k ? ", " : "");
		json_string(info.dim_names[k]);
		printf(": %lld", (long long)info.dim_sizes[k]);
	}
	fputs("}, \"inputs\": [", stdout);
	for (int i = 0; i < info.ninputs; i++) {
		const ProgenInput *in = &info.inputs[i];
		printf("%s{\"name\": ", i ? ", " : "");
		json_string(in->name);
		printf(", \"dtype\": \"%s\", \"lo\": ", fz_dtype_name(in->dtype));
		json_number(in->lo);
		fputs(", \"hi\": ", stdout);
		json_number(in->hi);
		printf(", \"nonfinite\": %s}", in->nonfinite ? "true" : "false");
	}
	fputs("], \"outputs\": [", stdout);
	for (int i = 0; i < info.noutputs; i++) {
		const ProgenOutput *o = &info.outputs[i];
		printf("%s{\"name\": ", i ? ", " : "");
		json_string(o->name);
		printf(", \"tol_dtype\": \"%s\", \"atol\": ", fz_dtype_name(o->tol.dtype));
		json_number(o->tol.atol);
		fputs(", \"rtol\": ", stdout);
		json_number(o->tol.rtol);
		putchar('}');
	}
	printf("], \"runtime_error\": %s}\n", rte ? "true" : "false");
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const sizes[] = {"tiny", "small", "medium", "big"};
	ProgenSize size = PROGEN_SMALL;
	int a = 1;
	if (argc > 2 && strcmp(argv[1], "--size") == 0) {
		int k = 0;
		while (k < PROGEN_SIZE_COUNT && strcmp(argv[2], sizes[k]) != 0)
			k++;
		if (k == PROGEN_SIZE_COUNT) {
			fprintf(stderr, "progen_dump: unknown size '%s' (tiny, small, medium, big)\n", argv[2]);
			return 2;
		}
		size = (ProgenSize)k;
		a = 3;
	}
	char *end1, *end2;
	if (argc - a != 2) {
		fprintf(stderr, "usage: progen_dump [--size tiny|small|medium|big] SEED0 COUNT\n");
		return 2;
	}
	unsigned long long seed0 = strtoull(argv[a], &end1, 10);
	long count = strtol(argv[a + 1], &end2, 10);
	if (*end1 || *end2 || count < 0) {
		fprintf(stderr, "progen_dump: SEED0 and COUNT are non-negative integers\n");
		return 2;
	}
	for (long i = 0; i < count; i++)
		if (dump(seed0 + (uint64_t)i, size) != 0)
			return 1;
	return 0;
}
