/*
 * bench_gpu.c: `fusec bench` on the GPU: seeded inputs, buffer sets, the
 * copy bandwidth and the timing of each mode.
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
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor.h"

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
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
int bench_gpu_open(Bench *b)
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
		b->stride[j] = align_up((size_t)bench_value_bytes(g, id, b->dims), 256);
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
		if (j < g->ninputs && total && !fill_input(b, j, (size_t)bench_value_bytes(g, id, b->dims)))
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

bool bench_measure(Bench *b)
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

void bench_gpu_close(Bench *b)
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
