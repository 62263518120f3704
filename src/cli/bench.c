/*
 * bench.c: `fusec bench FILE.fz`: how fast the fused program runs on the GPU,
 * against the same program run one kernel per op, and against the bandwidth
 * floor.
 *
 * What the plans say comes first and needs no GPU: the minimum bytes (every
 * declared input read once, every output written once, for the bound dims)
 * and, per mode, the kernels and the bytes they read and write (summed over
 * the plan's kernel parameters). --dry-run stops there.
 *
 * On the GPU both modes go through the public run API, as a user's program
 * would: inputs are seeded random (never zeros, which can hide unwritten
 * outputs and run faster than real data), each call is timed between two
 * CUDA events on the run's stream, after warm-up, and the median is kept.
 * When one set of inputs and outputs fits in the L2, the calls rotate among
 * enough buffer sets to span four times the L2 (read off the device), so that
 * no call finds its data in the cache, as a real workload would not. The copy
 * bandwidth that defines the floor is measured in the same process (a large
 * cuMemcpyDtoD, bytes read plus bytes written). The device times are of plain
 * launches (graphs off), as they always were.
 *
 * The host time per call is the launch overhead: N back-to-back asynchronous
 * fz_run_launch calls on one buffer set bound once (nothing rebound inside
 * the timed loop), after warm-up calls on the same set, timed with
 * CLOCK_MONOTONIC and divided by N; the synchronisation comes after the
 * clock stops (it is in the wall time). Kernel by kernel always; with
 * --graph also forced CUDA graph replay (and the one launch that captures),
 * the default automatic mode (a graph once the bindings have stayed the same
 * for RT_GRAPH_AFTER calls: the warm-up is never shorter), and kernel by
 * kernel from a thread where no context is current (what a run pays to push
 * and pop its context; the other figures have the primary context current,
 * as under the CUDA runtime or PyTorch).
 *
 * The runtime times nothing itself, so events and streams come from the
 * driver table of runtime/driver.h, on the device's primary context, which
 * the run API shares.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/driver.h"
#include "runtime/rt.h"
#include "json.h"
#include "tensor.h"

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

enum { MODE_FUSED = 1, MODE_PER_OP = 2 };
enum { NMODES = 2 };

typedef struct BenchOptions {
	const char *file;
	const char **dim_names;  /* as given, up to '=' (NUL-terminated copies) */
	int64_t *dim_values;
	int ndims;
	bool json, dry_run, graph;
	int reps, warmup, modes, device;
	uint64_t seed;
} BenchOptions;

/* One mode: what its plan says, then what was measured. */
typedef struct ModeStats {
	const char *name;        /* "fused", "per_op" */
	const char *title;       /* "fused", "per-op" */
	bool fuse, on;
	Compilation *comp;       /* STAGE_FUSED: graph and plan */
	int kernels;             /* launched per call */
	int64_t bytes_moved;     /* the plan's kernels' bytes read + written */
	bool measured;
	double median_us, min_us;
	double host_us, wall_us; /* per call, back to back */
	double graph_host_us, graph_wall_us; /* the same replaying a CUDA graph (--graph) */
	double capture_us;       /* host time of the launch that captures the graph */
	double auto_host_us, auto_wall_us; /* the default mode, graphs automatic */
	double pushed_host_us, pushed_wall_us; /* graphs off, no context current */
	double compile_ms;       /* fz_program_compile_file and the first launch (JIT and load) */
	double jit_ms;           /* of which compiling, reading and loading modules */
	uint64_t compiles;       /* NVRTC compiles it caused */
	uint64_t disk_hits;
} ModeStats;

typedef struct Bench {
	BenchOptions o;
	ModeStats mode[NMODES];
	const Graph *g;          /* of the first mode that is on */
	int64_t *dims;           /* g->ndims bound sizes */
	int64_t min_bytes;
	/* GPU */
	fz_context *ctx;
	fz_device_info info;
	int l2_bytes;
	CUdevice dev;
	CUcontext cu;
	CUstream stream;
	int64_t copy_bytes;      /* read + written by one copy */
	double copy_us, copy_gbps;
	int nsets;
	void **slab;             /* per input/output (inputs first): nsets buffers */
	size_t *stride;          /* bytes between sets (0 for a scalar) */
	double *scalar;          /* per input: the value of a scalar input */
	double out_rel_diff;     /* fused vs per-op outputs, -1 if not compared */
	bool out_nan;
} Bench;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

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

static int64_t value_bytes(const Graph *g, NodeId id, const int64_t *dims)
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
			total += value_bytes(g, g->inputs[i].node, dims);
	for (int i = 0; i < g->noutputs; i++)
		total += value_bytes(g, g->outputs[i].node, dims);
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
				total += value_bytes(p->g, kn->params[j].node, dims);
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

/* ---- random inputs ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* n values of dtype t into buf: floats uniform in [-2, 2), integers in
 * [-8, 8], bools even odds. Two floats per draw: this fills gigabytes. */
static void fill_random(void *buf, int64_t n, fz_dtype t, uint64_t seed)
{
	uint64_t s = seed;
	for (int64_t i = 0; i < n; i++) {
		uint64_t r = splitmix64(&s);
		float f = (float)(int32_t)(r >> 40 << 8) * (2.0f / 2147483648.0f);
		switch (t) {
		case FZ_BOOL: ((uint8_t *)buf)[i] = (uint8_t)(r >> 63); break;
		case FZ_I32: ((int32_t *)buf)[i] = (int32_t)(r % 17) - 8; break;
		case FZ_I64: ((int64_t *)buf)[i] = (int64_t)(r % 17) - 8; break;
		case FZ_F16: ((uint16_t *)buf)[i] = f32_to_f16_bits(f); break;
		case FZ_BF16: ((uint16_t *)buf)[i] = f32_to_bf16_bits(f); break;
		case FZ_F64: ((double *)buf)[i] = (double)f; break;
		default:
			((float *)buf)[i] = f;
			if (i + 1 < n) /* the low half of the draw makes the next float */
				((float *)buf)[++i] = (float)(int32_t)((uint32_t)r & 0xFFFFFF00u) * (2.0f / 2147483648.0f);
			break;
		}
	}
}

/* ---- the GPU -------------------------------------------------------------------------- */

/* A failed driver call as one line; returns false. */
static bool cu_ok(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return true;
	char buf[256];
	cli_error("bench: %s: %s", what, rt_cu_error(r, buf, sizeof buf));
	return false;
}

static bool fz_ok(fz_status s, const char *what, const char *msg)
{
	if (s == FZ_OK)
		return true;
	cli_error("bench: %s: %s", what, msg && *msg ? msg : fz_status_string(s));
	return false;
}

/* The device's info, and its primary context current here. */
static bool gpu_open_context(Bench *b)
{
	if (!fz_ok(fz_context_info(b->ctx, &b->info), "device info", fz_context_error(b->ctx)))
		return false;
	if (!cu_ok(CU(cuDeviceGet)(&b->dev, b->o.device), "cuDeviceGet") ||
	    !cu_ok(CU(cuDevicePrimaryCtxRetain)(&b->cu, b->dev), "cuDevicePrimaryCtxRetain"))
		return false;
	if (!cu_ok(CU(cuCtxPushCurrent)(b->cu), "cuCtxPushCurrent")) {
		CU(cuDevicePrimaryCtxRelease)(b->dev);
		b->cu = NULL;
		return false;
	}
	return cu_ok(CU(cuDeviceGetAttribute)(&b->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, b->dev),
	             "reading the L2 size") &&
	       cu_ok(CU(cuStreamCreate)(&b->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

/* Open the device through the API, then make its primary context (the one
 * the API uses) current here for the events, streams and copies. Returns -1
 * to go on, else the exit code (EXIT_NO_GPU without a driver or device). */
static int gpu_open(Bench *b)
{
	fz_status s = fz_context_create(b->o.device, &b->ctx);
	if (s != FZ_OK) {
		cli_error("bench: %s", fz_last_error());
		return cli_gpu_exit(s);
	}
	return gpu_open_context(b) ? -1 : EXIT_ERROR;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Events around each of n calls of `call`, after `prep` (may be NULL; host
 * work kept out of the timed interval); the per-call times in ms into t. */
typedef bool (*CallFn)(void *arg, int i);

static bool time_calls(Bench *b, int n, CallFn prep, CallFn call, void *arg, double *t)
{
	CUevent *ev = calloc((size_t)n * 2, sizeof *ev);
	bool ok = ev != NULL;
	int made = 0;
	for (; ok && made < 2 * n; made++)
		ok = cu_ok(CU(cuEventCreate)(&ev[made], CU_EVENT_DEFAULT), "cuEventCreate");
	for (int i = 0; ok && i < n; i++) {
		ok = (!prep || prep(arg, i)) && cu_ok(CU(cuEventRecord)(ev[2 * i], b->stream), "cuEventRecord") &&
		     call(arg, i) &&
		     cu_ok(CU(cuEventRecord)(ev[2 * i + 1], b->stream), "cuEventRecord");
	}
	ok = ok && cu_ok(CU(cuStreamSynchronize)(b->stream), "running the timed calls");
	for (int i = 0; ok && i < n; i++) {
		float ms;
		ok = cu_ok(CU(cuEventElapsedTime)(&ms, ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime");
		t[i] = ms;
	}
	for (int i = 0; ev && i < made; i++)
		CU(cuEventDestroy)(ev[i]);
	free(ev);
	return ok;
}

typedef struct CopyArg {
	Bench *b;
	CUdeviceptr src, dst;
	size_t bytes;
} CopyArg;

static bool copy_call(void *arg, int i)
{
	CopyArg *c = arg;
	(void)i;
	return cu_ok(CU(cuMemcpyDtoDAsync)(c->dst, c->src, c->bytes, c->b->stream), "cuMemcpyDtoDAsync");
}

/* Device-to-device copy bandwidth: 1 GiB each way, or less if memory is
 * short; bytes read plus bytes written over the median time. */
static bool copy_bandwidth(Bench *b)
{
	enum { REPS = 30, WARM = 5 };
	CopyArg c = {b, 0, 0, (size_t)1 << 30};
	while (c.bytes >= ((size_t)16 << 20)) {
		if (CU(cuMemAlloc)(&c.src, c.bytes) == CUDA_SUCCESS) {
			if (CU(cuMemAlloc)(&c.dst, c.bytes) == CUDA_SUCCESS)
				break;
			CU(cuMemFree)(c.src);
		}
		c.src = c.dst = 0;
		c.bytes /= 2;
	}
	if (!c.dst) {
		cli_error("bench: no device memory for the copy bandwidth test");
		return false;
	}
	double t[REPS];
	bool ok = cu_ok(CU(cuMemsetD8Async)(c.src, 0x5a, c.bytes, b->stream), "cuMemsetD8Async");
	for (int i = 0; ok && i < WARM; i++)
		ok = copy_call(&c, i);
	ok = ok && time_calls(b, REPS, NULL, copy_call, &c, t);
	if (ok) {
		b->copy_bytes = 2 * (int64_t)c.bytes;
		b->copy_us = median(t, REPS) * 1e3;
		b->copy_gbps = (double)b->copy_bytes / b->copy_us / 1e3;
	}
	CU(cuMemFree)(c.src);
	CU(cuMemFree)(c.dst);
	return ok;
}

/* ---- buffer sets ---------------------------------------------------------------------- */

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Slot j: input j for j < ninputs, else output j - ninputs. */
static NodeId slot_node(const Graph *g, int j)
{
	return j < g->ninputs ? g->inputs[j].node : g->outputs[j - g->ninputs].node;
}

/* How many buffer sets: one if a set is larger than 4x the L2, else enough
 * to span 4x the L2 (so no call finds its data in the cache). */
static int count_sets(const Bench *b, size_t set_bytes)
{
	size_t want = 4 * (size_t)(b->l2_bytes > 0 ? b->l2_bytes : 64 << 20);
	if (set_bytes == 0 || set_bytes >= want)
		return 1;
	size_t n = (want + set_bytes - 1) / set_bytes;
	return n > 65536 ? 65536 : (int)n;
}

/* One input's slab: random values for one set, repeated nsets times (the
 * same values at other addresses miss the cache all the same). */
static bool fill_input(Bench *b, int j, size_t bytes)
{
	const Node *n = &b->g->nodes[slot_node(b->g, j)];
	size_t total = b->stride[j] * (size_t)b->nsets;
	char *host = malloc(total);
	if (!host) {
		cli_error("bench: out of host memory for the inputs");
		return false;
	}
	fill_random(host, (int64_t)(bytes / fz_dtype_size((fz_dtype)n->dtype)), (fz_dtype)n->dtype,
	            b->o.seed * 1000003u + (uint64_t)j);
	for (int s = 1; s < b->nsets; s++)
		memcpy(host + (size_t)s * b->stride[j], host, bytes);
	bool ok = fz_ok(fz_copy_to_device(b->ctx, b->slab[j], host, total), "copying the inputs",
	                fz_context_error(b->ctx));
	free(host);
	return ok;
}

/* A scalar input's value: in [0.5, 1) for floats (positive, so that an eps
 * under a square root stays harmless), 1 to 8 for integers, true for bool. */
static double scalar_value(const Bench *b, int j, fz_dtype t)
{
	uint64_t s = b->o.seed * 7919u + (uint64_t)j;
	uint64_t r = splitmix64(&s);
	if (t == FZ_BOOL)
		return 1;
	if (dtype_is_int(t))
		return (double)(1 + r % 8);
	return 0.5 + (double)(r >> 11) * (0.5 / 9007199254740992.0);
}

static bool alloc_sets(Bench *b)
{
	const Graph *g = b->g;
	int nslots = g->ninputs + g->noutputs;
	size_t set_bytes = 0;
	b->slab = calloc((size_t)nslots + 1, sizeof *b->slab);
	b->stride = calloc((size_t)nslots + 1, sizeof *b->stride);
	b->scalar = calloc((size_t)nslots + 1, sizeof *b->scalar);
	if (!b->slab || !b->stride || !b->scalar) {
		cli_error("out of memory");
		return false;
	}
	for (int j = 0; j < nslots; j++) {
		NodeId id = slot_node(g, j);
		if (j < g->ninputs && g->nodes[id].rank == 0)
			continue;
		b->stride[j] = align_up((size_t)value_bytes(g, id, b->dims), 256);
		set_bytes += b->stride[j];
	}
	b->nsets = count_sets(b, set_bytes);
	for (int j = 0; j < nslots; j++) {
		NodeId id = slot_node(g, j);
		if (j < g->ninputs && g->nodes[id].rank == 0) {
			b->scalar[j] = scalar_value(b, j, (fz_dtype)g->nodes[id].dtype);
			continue;
		}
		size_t total = b->stride[j] * (size_t)b->nsets;
		if (total && !fz_ok(fz_device_alloc(b->ctx, total, &b->slab[j]), "allocating the buffers",
		                    fz_context_error(b->ctx)))
			return false;
		if (j < g->ninputs && total && !fill_input(b, j, (size_t)value_bytes(g, id, b->dims)))
			return false;
	}
	return true;
}

/* ---- timing one mode ------------------------------------------------------------------- */

static void slot_shape(const Bench *b, int j, int *rank, int64_t *shape)
{
	const Node *n = &b->g->nodes[slot_node(b->g, j)];
	*rank = n->rank;
	for (int d = 0; d < n->rank; d++)
		shape[d] = ir_dim_value(n->shape[d], b->dims);
}

static const char *slot_name(const Graph *g, int j)
{
	return j < g->ninputs ? g->inputs[j].name : g->outputs[j - g->ninputs].name;
}

/* Point the run's tensor inputs and outputs at buffer set `set`. */
static bool bind_set(Bench *b, fz_run *r, int set)
{
	const Graph *g = b->g;
	for (int j = 0; j < g->ninputs + g->noutputs; j++) {
		int rank;
		int64_t shape[FZ_MAX_RANK];
		slot_shape(b, j, &rank, shape);
		if (j < g->ninputs && rank == 0)
			continue;
		void *p = b->slab[j] ? (char *)b->slab[j] + (size_t)set * b->stride[j] : NULL;
		fz_dtype t = (fz_dtype)g->nodes[slot_node(g, j)].dtype;
		fz_status s = j < g->ninputs ? fz_run_bind_input(r, slot_name(g, j), p, t, rank, shape)
		                             : fz_run_bind_output(r, slot_name(g, j), p, t, rank, shape);
		if (!fz_ok(s, "binding", fz_run_error(r)))
			return false;
	}
	return true;
}

/* Bindings that stay: scalars and dims. */
static bool bind_fixed(Bench *b, fz_run *r)
{
	const Graph *g = b->g;
	if (!fz_ok(fz_run_set_stream(r, b->stream), "setting the stream", fz_run_error(r)))
		return false;
	for (int j = 0; j < g->ninputs; j++)
		if (g->nodes[g->inputs[j].node].rank == 0 &&
		    !fz_ok(fz_run_bind_scalar(r, g->inputs[j].name, b->scalar[j]), "binding", fz_run_error(r)))
			return false;
	for (int k = 0; k < g->ndims; k++)
		if (!fz_ok(fz_run_bind_dim(r, g->dims[k], b->dims[k]), "binding", fz_run_error(r)))
			return false;
	return true;
}

typedef struct RunArg {
	Bench *b;
	fz_run *r;
	int first;  /* buffer set of call 0 */
} RunArg;

static bool run_prep(void *arg, int i)
{
	RunArg *a = arg;
	return a->b->nsets == 1 || bind_set(a->b, a->r, (a->first + i) % a->b->nsets);
}

static bool run_call(void *arg, int i)
{
	RunArg *a = arg;
	(void)i;
	return fz_ok(fz_run_launch(a->r), "launch", fz_run_error(a->r));
}

/* Time per call of back-to-back launches on one buffer set bound once (so
 * nothing is rebound): to submit them (host) and until the GPU is done
 * (wall), after warm-up calls on the same set (long enough for the
 * automatic mode to have captured its graph). *first_us: the host time of
 * the first warm-up call (a forced graph is captured there). */
static bool time_back_to_back(Bench *b, RunArg *a, double *host_us, double *wall_us, double *first_us)
{
	int n = b->o.reps, warm = b->o.warmup > rt_graph_after() ? b->o.warmup : rt_graph_after() + 1;
	if (!bind_set(b, a->r, 0))
		return false;
	for (int i = 0; i < warm; i++) {
		double t = now_ms();
		if (!run_call(a, i))
			return false;
		if (i == 0 && first_us)
			*first_us = (now_ms() - t) * 1e3;
	}
	if (!fz_ok(fz_run_synchronize(a->r), "running the program", fz_run_error(a->r)))
		return false;
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (!run_call(a, i))
			return false;
	double t1 = now_ms();
	if (!fz_ok(fz_run_synchronize(a->r), "running the program", fz_run_error(a->r)))
		return false;
	double t2 = now_ms();
	*host_us = (t1 - t0) * 1e3 / n;
	*wall_us = (t2 - t0) * 1e3 / n;
	return true;
}

/* Back to back in graph mode `graph` (fz_run_set_graph). */
static bool time_graph_mode(Bench *b, RunArg *a, int graph, double *host_us, double *wall_us, double *first_us)
{
	return fz_ok(fz_run_set_graph(a->r, graph), "choosing the graph mode", fz_run_error(a->r)) &&
	       time_back_to_back(b, a, host_us, wall_us, first_us);
}

/* The launch overhead: kernel by kernel, then (--graph) replaying a forced
 * graph, in the default mode, and kernel by kernel again with the bench's
 * context popped, so that every launch pushes and pops the run's. */
static bool time_host(Bench *b, RunArg *a, ModeStats *ms)
{
	if (!time_graph_mode(b, a, 0, &ms->host_us, &ms->wall_us, NULL))
		return false;
	if (!b->o.graph)
		return true;
	bool ok = time_graph_mode(b, a, 1, &ms->graph_host_us, &ms->graph_wall_us, &ms->capture_us) &&
	          time_graph_mode(b, a, -1, &ms->auto_host_us, &ms->auto_wall_us, NULL);
	CUcontext popped = NULL;
	if (ok && cu_ok(CU(cuCtxPopCurrent)(&popped), "cuCtxPopCurrent")) {
		ok = time_graph_mode(b, a, 0, &ms->pushed_host_us, &ms->pushed_wall_us, NULL);
		ok = cu_ok(CU(cuCtxPushCurrent)(popped), "cuCtxPushCurrent") && ok;
	} else {
		ok = false;
	}
	return fz_ok(fz_run_set_graph(a->r, 0), "disabling graphs", fz_run_error(a->r)) && ok;
}

static bool compile_mode(Bench *b, ModeStats *ms, fz_program **p)
{
	fz_compile_options opt = fz_compile_options_default();
	opt.fuse = ms->fuse;
	fz_diag d;
	fz_status s = fz_program_compile_file(b->ctx, b->o.file, &opt, p, &d);
	if (s == FZ_ERR_PROGRAM) {
		fputs(d.rendered, stderr);
		return false;
	}
	if (!fz_ok(s, "compiling", d.message))
		return false;
	ms->kernels = fz_program_num_kernels(*p);
	return true;
}

/* The JIT's share of compiling and the first launch (which compiles, or
 * reads from the cache, the kernel entries the sizes take). */
static void jit_stats(Bench *b, ModeStats *ms, const fz_cache_stats *s0, double t0)
{
	fz_cache_stats s1;
	fz_context_cache_stats(b->ctx, &s1);
	ms->compile_ms = now_ms() - t0;
	ms->jit_ms = s1.jit_ms - s0->jit_ms;
	ms->compiles = s1.nvrtc_compiles - s0->nvrtc_compiles;
	ms->disk_hits = s1.disk_hits - s0->disk_hits;
}

/* Outputs of buffer set 0, copied to the host (malloc'ed, one per output). */
static bool read_outputs(Bench *b, Tensor *outs)
{
	const Graph *g = b->g;
	for (int i = 0; i < g->noutputs; i++) {
		int j = g->ninputs + i;
		Tensor *t = &outs[i];
		t->dtype = (fz_dtype)g->nodes[slot_node(g, j)].dtype;
		slot_shape(b, j, &t->rank, t->shape);
		if (!tensor_alloc(t)) {
			cli_error("bench: out of host memory for the outputs");
			return false;
		}
		size_t n = tensor_nbytes(t);
		if (n && !fz_ok(fz_copy_to_host(b->ctx, t->data, b->slab[j], n), "reading the outputs",
		                fz_context_error(b->ctx)))
			return false;
	}
	return true;
}

/* Warm up, time each call, then the host time per call; outs gets the
 * outputs. */
static bool time_mode(Bench *b, ModeStats *ms, Tensor *outs)
{
	fz_program *p = NULL;
	fz_run *r = NULL;
	double *t = malloc(sizeof(double) * (size_t)b->o.reps);
	fz_cache_stats s0;
	fz_context_cache_stats(b->ctx, &s0);
	double t0 = now_ms();
	bool ok = t && compile_mode(b, ms, &p) &&
	          fz_ok(fz_run_create(p, NULL, &r), "creating a run", fz_last_error()) && bind_fixed(b, r) &&
	          bind_set(b, r, 0) && fz_ok(fz_run_set_graph(r, 0), "disabling graphs", fz_run_error(r));
	RunArg a = {b, r, 0};
	ok = ok && run_call(&a, 0) && fz_ok(fz_run_synchronize(r), "the first launch", fz_run_error(r));
	if (ok)
		jit_stats(b, ms, &s0, t0);
	for (int i = 0; ok && i < b->o.warmup; i++)
		ok = run_prep(&a, i) && run_call(&a, i);
	a.first = b->o.warmup;
	ok = ok && time_calls(b, b->o.reps, run_prep, run_call, &a, t) && time_host(b, &a, ms) && read_outputs(b, outs);
	if (ok) {
		ms->median_us = median(t, b->o.reps) * 1e3;
		ms->min_us = t[0] * 1e3; /* sorted by median() */
		ms->measured = true;
	}
	fz_run_destroy(r);
	fz_program_destroy(p);
	free(t);
	return ok;
}

/* ||a - b|| / ||a|| over all outputs; NaN anywhere sets *nan. */
static double rel_diff(const Graph *g, const Tensor *a, const Tensor *b, bool *nan)
{
	double num = 0, den = 0;
	for (int i = 0; i < g->noutputs; i++) {
		int64_t n = tensor_numel(&a[i]);
		for (int64_t k = 0; k < n; k++) {
			double x = tensor_get(&a[i], k), y = tensor_get(&b[i], k);
			if (isnan(x) || isnan(y))
				*nan = true;
			num += (x - y) * (x - y);
			den += x * x;
		}
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void free_outputs(Tensor *outs, int n)
{
	for (int i = 0; outs && i < n; i++)
		tensor_free(&outs[i]);
	free(outs);
}

static bool measure(Bench *b)
{
	int n = b->g->noutputs;
	Tensor *outs[NMODES] = {calloc((size_t)n + 1, sizeof(Tensor)), calloc((size_t)n + 1, sizeof(Tensor))};
	progress_phase("measuring the copy bandwidth");
	bool ok = outs[0] && outs[1] && copy_bandwidth(b) && alloc_sets(b);
	for (int m = 0; ok && m < NMODES; m++) {
		if (b->mode[m].on) {
			progress_phase(m == 0 ? "timing the fused kernels" : "timing the per-op kernels");
			ok = time_mode(b, &b->mode[m], outs[m]);
		}
	}
	b->out_rel_diff = -1;
	if (ok && b->mode[0].on && b->mode[1].on)
		b->out_rel_diff = rel_diff(b->g, outs[0], outs[1], &b->out_nan);
	for (int m = 0; m < NMODES; m++)
		free_outputs(outs[m], n);
	return ok;
}

static void gpu_close(Bench *b)
{
	const Graph *g = b->g;
	for (int j = 0; b->slab && j < g->ninputs + g->noutputs; j++)
		fz_device_free(b->ctx, b->slab[j]);
	free(b->slab);
	free(b->stride);
	free(b->scalar);
	if (b->stream)
		CU(cuStreamDestroy)(b->stream);
	if (b->cu) {
		CUcontext popped;
		CU(cuCtxPopCurrent)(&popped);
		CU(cuDevicePrimaryCtxRelease)(b->dev);
	}
	if (b->ctx) {
		const char *w = fz_context_warnings(b->ctx);
		while (w && *w) {
			size_t n = strcspn(w, "\n");
			fprintf(stderr, "fusec: warning: %.*s\n", (int)n, w);
			w += n + (w[n] == '\n');
		}
		fz_context_destroy(b->ctx);
	}
}

/* ---- printing ---------------------------------------------------------------------------- */

static double floor_us(const Bench *b) { return (double)b->min_bytes / (b->copy_gbps * 1e3); }

static void json_num(JsonWriter *w, const char *key, double v)
{
	json_key(w, key);
	json_number(w, v);
}

static void json_mode(JsonWriter *w, const Bench *b, const ModeStats *ms)
{
	json_key(w, ms->name);
	json_object_begin(w);
	json_key(w, "kernels");
	json_int(w, ms->kernels);
	json_key(w, "bytes_moved");
	json_int(w, ms->bytes_moved);
	if (ms->measured) {
		json_num(w, "median_us", ms->median_us);
		json_num(w, "min_us", ms->min_us);
		json_num(w, "gbps", (double)b->min_bytes / ms->median_us / 1e3);
		json_num(w, "pct_floor", 100 * floor_us(b) / ms->median_us);
		json_num(w, "host_us_per_call", ms->host_us);
		json_num(w, "wall_us_per_call", ms->wall_us);
		if (b->o.graph) {
			json_num(w, "graph_host_us_per_call", ms->graph_host_us);
			json_num(w, "graph_wall_us_per_call", ms->graph_wall_us);
			json_num(w, "graph_capture_us", ms->capture_us);
			json_num(w, "auto_host_us_per_call", ms->auto_host_us);
			json_num(w, "auto_wall_us_per_call", ms->auto_wall_us);
			json_num(w, "pushed_host_us_per_call", ms->pushed_host_us);
			json_num(w, "pushed_wall_us_per_call", ms->pushed_wall_us);
		}
		json_num(w, "compile_ms", ms->compile_ms);
		json_num(w, "jit_ms", ms->jit_ms);
		json_key(w, "compiles");
		json_uint(w, ms->compiles);
		json_key(w, "disk_hits");
		json_uint(w, ms->disk_hits);
	}
	json_object_end(w);
}

static void json_device(JsonWriter *w, const Bench *b)
{
	char cc[32];
	snprintf(cc, sizeof cc, "%d.%d", b->info.cc_major, b->info.cc_minor);
	json_key(w, "device");
	json_string(w, b->info.name);
	json_key(w, "cc");
	json_string(w, cc);
	json_key(w, "sm_count");
	json_int(w, b->info.sm_count);
	json_key(w, "l2_bytes");
	json_int(w, b->l2_bytes);
	json_key(w, "reps");
	json_int(w, b->o.reps);
	json_key(w, "warmup");
	json_int(w, b->o.warmup);
	json_key(w, "buffer_sets");
	json_int(w, b->nsets);
	json_key(w, "seed");
	json_uint(w, b->o.seed);
	json_key(w, "copy");
	json_object_begin(w);
	json_key(w, "bytes_moved");
	json_int(w, b->copy_bytes);
	json_num(w, "median_us", b->copy_us);
	json_num(w, "gbps", b->copy_gbps);
	json_object_end(w);
	json_num(w, "floor_us", floor_us(b));
}

/* One JSON object (json.h: strict, non-finite numbers are null). */
static void print_json(const Bench *b)
{
	const Graph *g = b->g;
	const ModeStats *f = &b->mode[0], *p = &b->mode[1];
	StrBuf sb;
	JsonWriter w;
	sb_init(&sb, g->arena);
	json_init(&w, &sb);
	json_object_begin(&w);
	json_key(&w, "program");
	json_string(&w, b->o.file);
	json_key(&w, "dims");
	json_object_begin(&w);
	for (int k = 0; k < g->ndims; k++) {
		json_key(&w, g->dims[k]);
		json_int(&w, b->dims[k]);
	}
	json_object_end(&w);
	json_key(&w, "min_bytes");
	json_int(&w, b->min_bytes);
	if (!b->o.dry_run)
		json_device(&w, b);
	for (int m = 0; m < NMODES; m++)
		if (b->mode[m].on)
			json_mode(&w, b, &b->mode[m]);
	if (f->on && p->on) {
		json_num(&w, "ideal_speedup", (double)p->bytes_moved / (double)b->min_bytes);
		if (f->measured && p->measured) {
			json_num(&w, "speedup", p->median_us / f->median_us);
			json_num(&w, "outputs_rel_diff", b->out_rel_diff);
			json_key(&w, "outputs_nan");
			json_bool(&w, b->out_nan);
		}
	}
	json_object_end(&w);
	sb_puts(&sb, "\n");
	cli_write(sb.buf, sb.len);
}

static void print_head(const Bench *b)
{
	const Graph *g = b->g;
	printf("%s ", b->o.file);
	for (int k = 0; k < g->ndims; k++)
		printf(" %s=%lld", g->dims[k], (long long)b->dims[k]);
	printf("%s\n", b->o.dry_run ? "  (dry run: no GPU used)" : "");
	if (!b->o.dry_run) {
		printf("device: %s (sm_%d%d, %d SMs, %.0f MiB L2)\n", b->info.name, b->info.cc_major, b->info.cc_minor,
		       b->info.sm_count, b->l2_bytes / 1048576.0);
		printf("copy bandwidth: %.1f GB/s (cuMemcpyDtoD, %lld MiB read + %lld MiB written)\n", b->copy_gbps,
		       (long long)(b->copy_bytes >> 21), (long long)(b->copy_bytes >> 21));
	}
	printf("minimum bytes: %lld (every input read once, every output written once)", (long long)b->min_bytes);
	if (!b->o.dry_run)
		printf("; floor %.2f us", floor_us(b));
	printf("\n");
	if (!b->o.dry_run)
		printf("timing: median of %d calls after %d warm-up, CUDA events around each; %d buffer set%s\n",
		       b->o.reps, b->o.warmup, b->nsets, b->nsets == 1 ? "" : "s (rotated: 4x the L2)");
}

/* --graph: host (and wall) microseconds per call in the other launch modes. */
static void print_graph_lines(const ModeStats *ms)
{
	printf("%s, replaying a CUDA graph: %.2f us/call on the host, %.2f us/call wall (capturing it: %.1f us)\n",
	       ms->title, ms->graph_host_us, ms->graph_wall_us, ms->capture_us);
	printf("%s, default (graph after %d same calls): %.2f us/call on the host, %.2f us/call wall\n", ms->title,
	       rt_graph_after(), ms->auto_host_us, ms->auto_wall_us);
	printf("%s, no context current (pushed and popped): %.2f us/call on the host, %.2f us/call wall\n", ms->title,
	       ms->pushed_host_us, ms->pushed_wall_us);
}

static void print_table(const Bench *b)
{
	const ModeStats *f = &b->mode[0], *p = &b->mode[1];
	print_head(b);
	printf("\n%-8s %11s %8s %14s", "mode", "median us", "kernels", "bytes moved");
	if (!b->o.dry_run)
		printf(" %9s %8s %13s %13s %10s", "eff GB/s", "% floor", "host us/call", "wall us/call", "jit ms");
	printf("\n");
	for (int m = 0; m < NMODES; m++) {
		const ModeStats *ms = &b->mode[m];
		if (!ms->on)
			continue;
		if (ms->measured)
			printf("%-8s %11.2f %8d %14lld %9.1f %8.1f %13.2f %13.2f %10.1f\n", ms->title, ms->median_us,
			       ms->kernels, (long long)ms->bytes_moved, (double)b->min_bytes / ms->median_us / 1e3,
			       100 * floor_us(b) / ms->median_us, ms->host_us, ms->wall_us, ms->jit_ms);
		else
			printf("%-8s %11s %8d %14lld\n", ms->title, "-", ms->kernels, (long long)ms->bytes_moved);
	}
	for (int m = 0; b->o.graph && m < NMODES; m++)
		if (b->mode[m].measured)
			print_graph_lines(&b->mode[m]);
	if (f->on && p->on) {
		double ideal = (double)p->bytes_moved / (double)b->min_bytes;
		if (f->measured && p->measured)
			printf("\nfused / per-op speedup: %.2fx (ideal, per-op bytes moved / minimum: %.2fx)\n"
			       "fused vs per-op outputs: relative difference %.3g%s\n",
			       p->median_us / f->median_us, ideal, b->out_rel_diff, b->out_nan ? " (NaN in the outputs)" : "");
		else
			printf("\nideal fused / per-op speedup (per-op bytes moved / minimum): %.2fx\n", ideal);
	}
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
		rc = gpu_open(&b);
		if (rc < 0 && !measure(&b))
			rc = EXIT_ERROR;
		progress_stop();
	}
	if (rc < 0) {
		if (b.o.json)
			print_json(&b);
		else
			print_table(&b);
		rc = EXIT_OK;
	}
	if (!b.o.dry_run && b.g)
		gpu_close(&b);
	for (int m = 0; m < NMODES; m++)
		pipe_free(b.mode[m].comp);
	for (int i = 0; i < b.o.ndims; i++)
		free((void *)b.o.dim_names[i]);
	free(b.o.dim_names);
	free(b.o.dim_values);
	return rc;
}
