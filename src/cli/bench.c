/*
 * bench.c: `fusec bench FILE.fz`: how fast the fused program runs on the GPU,
 * against the same program run one kernel per op, and against the bandwidth
 * floor. Its files (bench.h): this one takes the options, says what the plans
 * say and runs the command; bench_gpu.c measures, bench_print.c prints.
 *
 * What the plans say comes first and needs no GPU: the minimum bytes (every
 * declared input read once, every output written once, for the bound dims)
 * and, per mode, the kernels and the bytes they read and write (summed over
 * the plan's kernel parameters). --dry-run stops there.
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
	"usage: fusec bench FILE.fz [OPTIONS]\n"
	"\n"
	"Time the program on the GPU, fused and one kernel per op, on seeded random\n"
	"inputs. For each mode: the median time of a call (CUDA events, after\n"
	"warm-up), the kernels it launches, the bytes its kernels move, the effective\n"
	"bandwidth (minimum bytes over time), the % of the bandwidth floor (minimum\n"
	"bytes over the device-to-device copy bandwidth, measured in the same run),\n"
	"and the host time per call of back-to-back launches. Then the fused/per-op\n"
	"speedup next to its ideal (per-op bytes moved over the minimum).\n"
	"\n"
	"options (--opt=VALUE or --opt VALUE):\n"
	"  --dim NAME=SIZE   bind a dimension (every dim must be bound)\n"
	"  --json            print one JSON object instead of the table (strict JSON:\n"
	"                    a value that is not a finite number, such as a rate over\n"
	"                    an empty tensor, is null)\n"
	"  --reps N          timed calls per mode (default 200)\n"
	"  --warmup N        untimed calls before them (default 20)\n"
	"  --mode MODE       fused, per-op or both (default both)\n"
	"  --seed N          seed of the random inputs (default 0)\n"
	"  --device N        GPU ordinal (default 0)\n"
	"  --graph           also the host time per call replaying a CUDA graph (forced,\n"
	"                    and the default automatic mode) and with no context current\n"
	"  --dry-run         print what the plans say (bytes, kernels); no GPU needed\n"
	"  -v, --verbose     log each JIT compile and launch geometry to stderr\n"
	"  -h, --help        this text\n"
	"\n" CLI_EXIT_STATUS_TEXT;

/* ---- options ------------------------------------------------------------------------ */

static int parse_dim(BenchOptions *o, const char *v)
{
	const char *eq = strchr(v, '=');
	long long size = 0;
	if (!eq || eq == v || !eq[1]) {
		cli_error("--dim expects NAME=SIZE, got '%s'", v);
		return EXIT_USAGE;
	}
	char *end;
	errno = 0;
	if (eq[1] >= '0' && eq[1] <= '9')
		size = strtoll(eq + 1, &end, 10);
	if (eq[1] < '0' || eq[1] > '9' || *end || errno == ERANGE || size > (1LL << 62)) {
		cli_error("--dim %s: the size must be an integer from 0 to 2^62", v);
		return EXIT_USAGE;
	}
	char *name = strndup(v, (size_t)(eq - v));
	if (!name) {
		cli_error("out of memory");
		return EXIT_ERROR;
	}
	o->dim_names[o->ndims] = name;
	o->dim_values[o->ndims++] = size;
	return -1;
}

/* A numeric option's value; returns -1 to go on, else the exit code. */
static int parse_count(const char *opt, const char *v, long long lo, long long hi, int *out)
{
	long long x;
	int rc = cli_parse_int(opt, v, lo, hi, &x);
	*out = (int)x;
	return rc;
}

static int parse_mode(const char *v, int *modes)
{
	if (strcmp(v, "fused") == 0)
		*modes = MODE_FUSED;
	else if (strcmp(v, "per-op") == 0)
		*modes = MODE_PER_OP;
	else if (strcmp(v, "both") == 0)
		*modes = MODE_FUSED | MODE_PER_OP;
	else {
		cli_error("--mode expects fused, per-op or both, got '%s'", v);
		return EXIT_USAGE;
	}
	return -1;
}

enum { OPT_DIM = 256, OPT_REPS, OPT_WARMUP, OPT_DEVICE, OPT_MODE, OPT_SEED, OPT_JSON, OPT_DRY_RUN, OPT_GRAPH };

static int bench_option(void *ctx, int opt, const char *v)
{
	BenchOptions *o = ctx;
	switch (opt) {
	case OPT_DIM: return parse_dim(o, v);
	case OPT_REPS: return parse_count("--reps", v, 1, 1000000, &o->reps);
	case OPT_WARMUP: return parse_count("--warmup", v, 0, 1000000, &o->warmup);
	case OPT_DEVICE: return cli_parse_device(v, &o->device);
	case OPT_MODE: return parse_mode(v, &o->modes);
	case OPT_SEED: {
		char *end = (char *)v;
		errno = 0;
		unsigned long long x = *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
		if (end == v || *end || errno == ERANGE || x > INT64_MAX) {
			cli_error("--seed expects a non-negative integer, got '%s'", v);
			return EXIT_USAGE;
		}
		o->seed = (uint64_t)x;
		return -1;
	}
	case OPT_JSON: o->json = true; return -1;
	case OPT_DRY_RUN: o->dry_run = true; return -1;
	case OPT_GRAPH: o->graph = true; return -1;
	}
	cli_error("internal error: option %d has no handler", opt);
	return EXIT_ERROR;
}

/* Returns -1 to go on, else the exit code. */
static int parse_options(int argc, char **argv, BenchOptions *o)
{
	static const struct option opts[] = {
		{"dim", required_argument, NULL, OPT_DIM},
		{"reps", required_argument, NULL, OPT_REPS},
		{"warmup", required_argument, NULL, OPT_WARMUP},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"mode", required_argument, NULL, OPT_MODE},
		{"seed", required_argument, NULL, OPT_SEED},
		{"json", no_argument, NULL, OPT_JSON},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"graph", no_argument, NULL, OPT_GRAPH},
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	int first, rc = cli_getopt(argc, argv, opts, "fusec bench", bench_usage, bench_option, o, &first);
	if (rc >= 0)
		return rc;
	if (first == argc) {
		fputs(bench_usage, stderr);
		return EXIT_USAGE;
	}
	if (argc - first > 1) {
		cli_error("more than one program file ('%s' and '%s')", argv[first], argv[first + 1]);
		return EXIT_USAGE;
	}
	o->file = argv[first];
	if (strcmp(o->file, "-") == 0) {
		/* the run API compiles from the file again */
		cli_error("bench: the program must be a file, not standard input");
		return EXIT_USAGE;
	}
	return -1;
}

/* ---- what the plans say ------------------------------------------------------------- */

int64_t bench_value_bytes(const Graph *g, NodeId id, const int64_t *dims)
{
	const Node *n = &g->nodes[id];
	int64_t numel;
	if (!ir_numel(n->rank, n->shape, dims, &numel))
		return -1;
	return numel * (int64_t)fz_dtype_size((fz_dtype)n->dtype);
}

/* Every tensor input read once, every output written once. Scalar inputs
 * are kernel arguments, not memory traffic. */
static int64_t min_bytes(const Graph *g, const int64_t *dims)
{
	int64_t total = 0;
	for (int i = 0; i < g->ninputs; i++)
		if (g->nodes[g->inputs[i].node].rank > 0)
			total += bench_value_bytes(g, g->inputs[i].node, dims);
	for (int i = 0; i < g->noutputs; i++)
		total += bench_value_bytes(g, g->outputs[i].node, dims);
	return total;
}

/* What a plan's kernels read and write: each tensor parameter once. */
static int64_t plan_bytes(const Plan *p, const int64_t *dims)
{
	int64_t total = 0;
	for (int k = 0; k < p->nkernels; k++) {
		const Kernel *kn = &p->kernels[k];
		for (int j = 0; j < kn->nparams; j++)
			if (kn->params[j].kind == PARAM_IN || kn->params[j].kind == PARAM_OUT)
				total += bench_value_bytes(p->g, kn->params[j].node, dims);
	}
	return total;
}

static const char *dim_list(const Graph *g)
{
	StrBuf sb;
	sb_init(&sb, g->arena);
	for (int k = 0; k < g->ndims; k++)
		sb_printf(&sb, "%s%s", k ? ", " : "", g->dims[k]);
	return g->ndims ? sb_str(&sb) : "none";
}

/* Bind the --dim options to the graph's dims; every dim must be bound. */
static int bind_dims(Bench *b)
{
	const Graph *g = b->g;
	b->dims = ARENA_ARRAY(g->arena, int64_t, g->ndims + 1);
	for (int k = 0; k < g->ndims; k++)
		b->dims[k] = -1;
	for (int i = 0; i < b->o.ndims; i++) {
		int d = -1;
		for (int k = 0; k < g->ndims; k++)
			if (strcmp(g->dims[k], b->o.dim_names[i]) == 0)
				d = k;
		if (d < 0) {
			cli_error("--dim: the program has no dim '%s' (its dims: %s)", b->o.dim_names[i], dim_list(g));
			return EXIT_ERROR;
		}
		if (b->dims[d] >= 0 && b->dims[d] != b->o.dim_values[i]) {
			cli_error("--dim: dim '%s' is given twice (%lld and %lld)", g->dims[d], (long long)b->dims[d],
			          (long long)b->o.dim_values[i]);
			return EXIT_USAGE;
		}
		b->dims[d] = b->o.dim_values[i];
	}
	for (int k = 0; k < g->ndims; k++) {
		if (b->dims[k] < 0) {
			cli_error("dim '%s' is not bound: pass --dim %s=SIZE", g->dims[k], g->dims[k]);
			return EXIT_ERROR;
		}
	}
	return -1;
}

/* Compile the modes that are on (to their plans), bind the dims, count the
 * bytes. Returns -1 to go on, else the exit code. */
static int plan_modes(Bench *b)
{
	for (int m = 0; m < NMODES; m++) {
		ModeStats *ms = &b->mode[m];
		if (!ms->on)
			continue;
		ms->comp = cli_compile(b->o.file, STAGE_FUSED, ms->fuse);
		if (!ms->comp)
			return EXIT_ERROR;
		if (!b->g) {
			b->g = &ms->comp->graph;
			int rc = bind_dims(b);
			if (rc >= 0)
				return rc;
		}
		ms->kernels = ms->comp->plan.nkernels;
		ms->bytes_moved = plan_bytes(&ms->comp->plan, b->dims);
	}
	b->min_bytes = min_bytes(b->g, b->dims);
	if (b->min_bytes < 0) {
		cli_error("the sizes are too large: a tensor has more than 2^62 elements");
		return EXIT_ERROR;
	}
	return -1;
}

/* ---- the command -------------------------------------------------------------------------- */

int cmd_bench(int argc, char **argv)
{
	Bench b = {.o = {.reps = 200, .warmup = 20, .modes = MODE_FUSED | MODE_PER_OP}};
	b.mode[0] = (ModeStats){.name = "fused", .title = "fused", .fuse = true};
	b.mode[1] = (ModeStats){.name = "per_op", .title = "per-op", .fuse = false};
	b.o.dim_names = calloc((size_t)argc + 1, sizeof *b.o.dim_names);
	b.o.dim_values = calloc((size_t)argc + 1, sizeof *b.o.dim_values);
	int rc = b.o.dim_names && b.o.dim_values ? parse_options(argc, argv, &b.o) : EXIT_ERROR;
	if (rc < 0) {
		b.mode[0].on = (b.o.modes & MODE_FUSED) != 0;
		b.mode[1].on = (b.o.modes & MODE_PER_OP) != 0;
		rc = plan_modes(&b);
	}
	if (rc < 0 && !b.o.dry_run) {
		progress_start("bench");
		progress_phase("opening the GPU");
		rc = bench_gpu_open(&b);
		if (rc < 0 && !bench_measure(&b))
			rc = EXIT_ERROR;
		progress_stop();
	}
	if (rc < 0) {
		if (b.o.json)
			bench_print_json(&b);
		else
			bench_print_table(&b);
		rc = EXIT_OK;
	}
	if (!b.o.dry_run && b.g)
		bench_gpu_close(&b);
	for (int m = 0; m < NMODES; m++)
		pipe_free(b.mode[m].comp);
	for (int i = 0; i < b.o.ndims; i++)
		free((void *)b.o.dim_names[i]);
	free(b.o.dim_names);
	free(b.o.dim_values);
	return rc;
}
