/* The host path of fz_run_launch on the CPU, against a fake CUDA driver
 * (rt_driver_install) that counts every call, runs nothing and logs what
 * would run: each kernel with the argument values it would read, graphs
 * replaying what they captured. So the tests can say exactly which driver
 * calls a launch makes (the host cost of a launch is mostly driver calls),
 * and that whatever path it takes (kernel by kernel, capture, replay) the
 * kernels run with the values bound at that launch.
 *
 * Programs are compiled by the real NVRTC for the fake device (sm_90) into
 * a disk cache private to this test, entry by entry as launches need them,
 * so only the first test that needs an entry compiles it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cg.h"
#include "fusec.h"
#include "runtime/interpret_abi.h"
#include "runtime/rt.h"
#include "testutil.h"

/* The longest L2 access policy window the fake device allows. */
#define FAKE_WINDOW_MAX (64 << 20)

/* The graph threshold these tests run with (FUSEC_GRAPH_AFTER, set in main). */
#define GRAPH_AFTER 8

/* ---- the fake driver ---------------------------------------------------------------- */

#define FAKE_IDX(name, ver) F_##name,
enum { RT_CU_FUNCS(FAKE_IDX) NFUNCS };
#undef FAKE_IDX

static int calls[NFUNCS];
#define COUNT(name) (calls[F_##name]++)

enum { MAX_OPS = 4096, MAX_GRAPH_OPS = 16, MAX_OBJS = 64, MAX_ARGS = 16 };

typedef enum FakeOpKind { FK_KERNEL, FK_MEMSET, FK_DTOD, FK_HTOD } FakeOpKind;

typedef struct FakeFunc {
	char name[128];
	int nargs;  /* from the programs the test compiled (the fake cannot read a cubin) */
	int ws;     /* the workspace argument, or -1 */
} FakeFunc;

typedef struct FakeOp {
	FakeOpKind kind;
	const FakeFunc *f;
	unsigned grid[3], block[3], smem;
	bool coop;
	bool win;                /* an L2 access policy window, streaming */
	CUdeviceptr win_base;
	size_t win_bytes;
	uint64_t args[MAX_ARGS]; /* the value behind each kernel parameter pointer */
	CUdeviceptr dst, src;
	size_t bytes;
	CUstream stream;
	bool replayed;           /* by a graph */
} FakeOp;

typedef struct FakeGraph {
	bool used;
	FakeOp ops[MAX_GRAPH_OPS];
	int nops;
} FakeGraph;

static struct {
	CUcontext stack[16];     /* the thread's context stack (tests use one thread) */
	int depth;
	CUdeviceptr next_ptr;
	int live_allocs, live_streams, live_modules, nstreams;
	FakeFunc funcs[MAX_OBJS];
	int nfuncs;
	FakeGraph graphs[MAX_OBJS], execs[MAX_OBJS];
	CUstream capturing;      /* our capture in progress */
	FakeGraph *capture;
	CUstream user_capturing; /* a stream the "user" is capturing (in the global mode) */
	CUstreamCaptureMode mode; /* the thread's capture mode (0: global) */
	bool fail_end_capture;
	FakeOp ran[MAX_OPS];     /* what would have run, in order */
	int nran;
	int ndevices;            /* 0: one; more: memory of device d is at d << 44 */
	const CgModule *mods[MAX_OBJS]; /* the compiled programs' entries, by symbol */
	int nmods;
} fake;

static char primary_obj, other_obj;
#define PRIMARY ((CUcontext)(void *)&primary_obj)
#define OTHER ((CUcontext)(void *)&other_obj)

static CUresult CUDAAPI f_cuGetErrorName(CUresult e, const char **s)
{
	COUNT(cuGetErrorName);
	*s = e == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" : "CUDA_ERROR_FAKE";
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuGetErrorString(CUresult e, const char **s)
{
	(void)e;
	COUNT(cuGetErrorString);
	*s = "fake";
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuInit(unsigned flags) { (void)flags; COUNT(cuInit); return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuDriverGetVersion(int *v) { COUNT(cuDriverGetVersion); *v = 13000; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuDeviceGetCount(int *n)
{
	COUNT(cuDeviceGetCount);
	*n = fake.ndevices ? fake.ndevices : 1;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuDeviceGet(CUdevice *d, int i) { COUNT(cuDeviceGet); *d = i; return CUDA_SUCCESS; }

static CUresult CUDAAPI f_cuDeviceGetName(char *name, int len, CUdevice d)
{
	(void)d;
	COUNT(cuDeviceGetName);
	snprintf(name, (size_t)len, "Fake GPU");
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	COUNT(cuDeviceGetAttribute);
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
	case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: *v = FAKE_WINDOW_MAX; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	(void)d;
	COUNT(cuDevicePrimaryCtxRetain);
	*c = PRIMARY;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; COUNT(cuDevicePrimaryCtxRelease); return CUDA_SUCCESS; }

static CUresult CUDAAPI f_cuCtxGetCurrent(CUcontext *c)
{
	COUNT(cuCtxGetCurrent);
	*c = fake.depth ? fake.stack[fake.depth - 1] : NULL;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuCtxPushCurrent(CUcontext c)
{
	COUNT(cuCtxPushCurrent);
	ck_assert_int_lt(fake.depth, 16);
	fake.stack[fake.depth++] = c;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuCtxPopCurrent(CUcontext *c)
{
	COUNT(cuCtxPopCurrent);
	ck_assert_int_gt(fake.depth, 0);
	*c = fake.stack[--fake.depth];
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuModuleLoadData(CUmodule *m, const void *image)
{
	COUNT(cuModuleLoadData);
	ck_assert_ptr_nonnull(image);
	if (fake.user_capturing && fake.mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* as cuMemAlloc below */
	*m = (CUmodule)(uintptr_t)(0x1000 + ++fake.live_modules);
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuModuleUnload(CUmodule m) { (void)m; COUNT(cuModuleUnload); fake.live_modules--; return CUDA_SUCCESS; }

static CUresult CUDAAPI f_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	(void)m;
	COUNT(cuModuleGetFunction);
	ck_assert_int_lt(fake.nfuncs, MAX_OBJS);
	FakeFunc *ff = &fake.funcs[fake.nfuncs++];
	snprintf(ff->name, sizeof ff->name, "%s", name);
	ff->nargs = -1;
	if (strncmp(name, "fzi_", 4) == 0) { /* the GPU interpreter's: one parameter block */
		ff->nargs = 1;
		ff->ws = -1;
	}
	/* the newest program first: older ones may have been destroyed */
	for (int i = fake.nmods - 1; i >= 0 && ff->nargs < 0; i--)
		for (int e = 0; e < fake.mods[i]->nentries; e++) {
			const CgEntry *en = &fake.mods[i]->entries[e];
			if (strcmp(en->symbol, name) != 0)
				continue;
			ff->nargs = en->nargs;
			ff->ws = -1;
			for (int j = 0; j < en->nargs; j++)
				ff->ws = en->args[j].kind == CGARG_WORKSPACE ? j : ff->ws;
		}
	ck_assert_msg(ff->nargs >= 0, "fake driver: no compiled program has an entry %s", name);
	*f = (CUfunction)(void *)ff;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
	(void)f, (void)a, (void)v;
	COUNT(cuFuncSetAttribute);
	return CUDA_SUCCESS;
}

/* As if every entry used 64 registers a thread. */
static CUresult CUDAAPI f_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int threads, size_t smem)
{
	(void)f, (void)smem;
	COUNT(cuOccupancyMaxActiveBlocksPerMultiprocessor);
	ck_assert_int_gt(threads, 0);
	*n = 1024 / threads > 0 ? 1024 / threads : 1;
	return CUDA_SUCCESS;
}

/* As the driver: an allocation while someone captures in the global mode
 * is refused (and would end that capture), unless this thread is relaxed. */
static CUresult CUDAAPI f_cuMemAlloc(CUdeviceptr *p, size_t n)
{
	COUNT(cuMemAlloc);
	if (fake.user_capturing && fake.mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (!fake.next_ptr)
		fake.next_ptr = (CUdeviceptr)1 << 40;
	*p = fake.next_ptr;
	fake.next_ptr += (n + 255) / 256 * 256 + 256;
	fake.live_allocs++;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuMemFree(CUdeviceptr p)
{
	COUNT(cuMemFree);
	ck_assert(p != 0);
	fake.live_allocs--;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream st)
{
	(void)st;
	COUNT(cuMemAllocAsync);
	calls[F_cuMemAlloc]--; /* counted as itself */
	return f_cuMemAlloc(p, n);
}

static CUresult CUDAAPI f_cuMemFreeAsync(CUdeviceptr p, CUstream st)
{
	(void)st;
	COUNT(cuMemFreeAsync);
	calls[F_cuMemFree]--;
	return f_cuMemFree(p);
}

/* Into the capture in progress if `st` is being captured, else it "runs". */
static CUresult record(const FakeOp *op)
{
	if (fake.capturing && op->stream == fake.capturing) {
		if (op->kind == FK_HTOD) /* pageable host memory: not capturable */
			return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		ck_assert_int_lt(fake.capture->nops, MAX_GRAPH_OPS);
		fake.capture->ops[fake.capture->nops++] = *op;
		return CUDA_SUCCESS;
	}
	ck_assert_int_lt(fake.nran, MAX_OPS);
	fake.ran[fake.nran++] = *op;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st)
{
	COUNT(cuMemsetD8Async);
	ck_assert_int_eq(v, 0);
	return record(&(FakeOp){.kind = FK_MEMSET, .dst = d, .bytes = n, .stream = st});
}

static CUresult CUDAAPI f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, CUstream st)
{
	(void)h;
	COUNT(cuMemcpyHtoDAsync);
	return record(&(FakeOp){.kind = FK_HTOD, .dst = d, .bytes = n, .stream = st});
}

static CUresult CUDAAPI f_cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, CUstream st)
{
	(void)d, (void)st;
	COUNT(cuMemcpyDtoHAsync);
	memset(h, 0, n);
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	COUNT(cuMemcpyDtoDAsync);
	return record(&(FakeOp){.kind = FK_DTOD, .dst = d, .src = s, .bytes = n, .stream = st});
}

static FakeOp kernel_op(CUfunction f, const unsigned g[3], const unsigned b[3], unsigned smem, CUstream st,
                        void **params, bool coop)
{
	FakeOp op = {.kind = FK_KERNEL, .f = (const FakeFunc *)(void *)f, .smem = smem, .stream = st, .coop = coop};
	memcpy(op.grid, g, sizeof op.grid);
	memcpy(op.block, b, sizeof op.block);
	ck_assert_int_le(op.f->nargs, MAX_ARGS);
	for (int j = 0; j < op.f->nargs; j++) /* every parameter slot is 8 bytes */
		memcpy(&op.args[j], params[j], 8);
	return op;
}

static CUresult CUDAAPI f_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                         unsigned bz, unsigned smem, CUstream st, void **params, void **extra)
{
	COUNT(cuLaunchKernel);
	ck_assert_ptr_null(extra);
	FakeOp op = kernel_op(f, (unsigned[3]){gx, gy, gz}, (unsigned[3]){bx, by, bz}, smem, st, params, false);
	return record(&op);
}

static CUresult CUDAAPI f_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	COUNT(cuLaunchKernelEx);
	ck_assert_ptr_null(extra);
	bool coop = false;
	for (unsigned i = 0; i < c->numAttrs; i++)
		coop |= c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && c->attrs[i].value.cooperative;
	FakeOp op = kernel_op(f, (unsigned[3]){c->gridDimX, c->gridDimY, c->gridDimZ},
	                      (unsigned[3]){c->blockDimX, c->blockDimY, c->blockDimZ}, c->sharedMemBytes, c->hStream,
	                      params, coop);
	for (unsigned i = 0; i < c->numAttrs; i++) {
		const CUaccessPolicyWindow *w = &c->attrs[i].value.accessPolicyWindow;
		if (c->attrs[i].id != CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW)
			continue;
		ck_assert(!op.win); /* one window a launch */
		ck_assert_msg(w->num_bytes > 0 && w->num_bytes <= FAKE_WINDOW_MAX, "window of %zu bytes", w->num_bytes);
		ck_assert(w->hitRatio == 1.0f && w->hitProp == CU_ACCESS_PROPERTY_STREAMING &&
		          w->missProp == CU_ACCESS_PROPERTY_STREAMING);
		op.win = true;
		op.win_base = (CUdeviceptr)(uintptr_t)w->base_ptr;
		op.win_bytes = w->num_bytes;
	}
	ck_assert_msg(c->numAttrs > 0, "cuLaunchKernelEx with no attribute: cuLaunchKernel would do");
	return record(&op);
}

static CUresult CUDAAPI f_cuStreamCreate(CUstream *s, unsigned flags)
{
	(void)flags;
	COUNT(cuStreamCreate);
	*s = (CUstream)(uintptr_t)(0x2000 + 16 * ++fake.nstreams);
	fake.live_streams++;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuStreamDestroy(CUstream s) { (void)s; COUNT(cuStreamDestroy); fake.live_streams--; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuStreamSynchronize(CUstream s) { (void)s; COUNT(cuStreamSynchronize); return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuEventCreate(CUevent *e, unsigned fl) { (void)fl; COUNT(cuEventCreate); *e = (CUevent)(uintptr_t)8; return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuEventRecord(CUevent e, CUstream s) { (void)e, (void)s; COUNT(cuEventRecord); return CUDA_SUCCESS; }
static CUresult CUDAAPI f_cuEventDestroy(CUevent e) { (void)e; COUNT(cuEventDestroy); return CUDA_SUCCESS; }

static CUresult CUDAAPI f_cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	(void)a, (void)b;
	COUNT(cuEventElapsedTime);
	*ms = 1;
	return CUDA_SUCCESS;
}

static FakeGraph *new_graph(FakeGraph *pool)
{
	for (int i = 0; i < MAX_OBJS; i++) {
		if (!pool[i].used) {
			memset(&pool[i], 0, sizeof pool[i]);
			pool[i].used = true;
			return &pool[i];
		}
	}
	ck_abort_msg("fake driver: too many graphs");
	return NULL;
}

static CUresult CUDAAPI f_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode)
{
	COUNT(cuStreamBeginCapture);
	ck_assert_int_eq(mode, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
	if (fake.capturing || !s)
		return CUDA_ERROR_ILLEGAL_STATE;
	fake.capturing = s;
	fake.capture = new_graph(fake.graphs);
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuStreamEndCapture(CUstream s, CUgraph *g)
{
	COUNT(cuStreamEndCapture);
	if (s != fake.capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	fake.capturing = NULL;
	*g = (CUgraph)(void *)fake.capture;
	if (fake.fail_end_capture) {
		fake.capture->used = false;
		*g = NULL;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	COUNT(cuStreamIsCapturing);
	bool on = s && (s == fake.capturing || s == fake.user_capturing);
	*st = on ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m)
{
	COUNT(cuThreadExchangeStreamCaptureMode);
	CUstreamCaptureMode old = fake.mode;
	fake.mode = *m;
	*m = old;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	COUNT(cuGraphInstantiateWithFlags);
	FakeGraph *x = new_graph(fake.execs);
	*x = *(FakeGraph *)(void *)g;
	*e = (CUgraphExec)(void *)x;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuGraphLaunch(CUgraphExec e, CUstream s)
{
	COUNT(cuGraphLaunch);
	FakeGraph *x = (FakeGraph *)(void *)e;
	ck_assert(x->used);
	for (int i = 0; i < x->nops; i++) {
		FakeOp op = x->ops[i];
		op.stream = s;
		op.replayed = true;
		record(&op);
	}
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuGraphExecDestroy(CUgraphExec e)
{
	COUNT(cuGraphExecDestroy);
	FakeGraph *x = (FakeGraph *)(void *)e;
	ck_assert(x->used);
	x->used = false;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuGraphDestroy(CUgraph g)
{
	COUNT(cuGraphDestroy);
	FakeGraph *x = (FakeGraph *)(void *)g;
	ck_assert(x->used);
	x->used = false;
	return CUDA_SUCCESS;
}

static CUresult CUDAAPI f_cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	COUNT(cuPointerGetAttribute);
	ck_assert_int_eq(a, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
	*(int *)data = (int)(p >> 44);
	return CUDA_SUCCESS;
}

static const RtCu fake_table = {
#define FAKE_FIELD(name, ver) .name##_ = f_##name,
	RT_CU_FUNCS(FAKE_FIELD)
#undef FAKE_FIELD
};

static int live(const FakeGraph *pool)
{
	int n = 0;
	for (int i = 0; i < MAX_OBJS; i++)
		n += pool[i].used;
	return n;
}

static int total_calls(void)
{
	int n = 0;
	for (int i = 0; i < NFUNCS; i++)
		n += calls[i];
	return n;
}

static void clear_counts(void)
{
	memset(calls, 0, sizeof calls);
	fake.nran = 0;
}

/* ---- fixture ---------------------------------------------------------------------------- */

static char cache_dir[] = "/tmp/fusec-launch-calls-XXXXXX";
static fz_context *ctx;

static void setup(void)
{
	memset(&fake, 0, sizeof fake);
	ck_assert(rt_driver_install(&fake_table));
	ck_assert_int_eq(fz_context_create(0, &ctx), FZ_OK);
	clear_counts();
}

static void teardown(void)
{
	fz_context_destroy(ctx);
	ctx = NULL;
	ck_assert_int_eq(fake.live_modules, 0);
	ck_assert_int_eq(fake.depth, 0);
}

/* Compile with the context; tell the fake its entries' arguments. */
static fz_program *compile(const char *src, int fuse)
{
	fz_compile_options o = fz_compile_options_default();
	o.fuse = fuse;
	fz_program *p = NULL;
	fz_diag d;
	fz_status s = fz_program_compile(ctx, "calls.fz", src, strlen(src), &o, &p, &d);
	ck_assert_msg(s == FZ_OK, "%s", s == FZ_ERR_PROGRAM ? d.rendered : fz_last_error());
	ck_assert_int_lt(fake.nmods, MAX_OBJS);
	fake.mods[fake.nmods++] = &p->c->module;
	return p;
}

/* relu((x + y) * s + bias): one kernel, arguments x, y, bias, z, s, N */
static const char asbr_src[] = "in x: f32[N]\nin y: f32[N]\nin bias: f32[N]\nin s: f32\nout z = relu((x + y) * s + bias)\n";

enum { N = 4096 };
static const CUdeviceptr X = 0x100000, Y = 0x200000, B = 0x300000, Z = 0x400000, X2 = 0x500000, Z2 = 0x600000;

static void bind_asbr(fz_run *r, CUdeviceptr x, CUdeviceptr z, double s)
{
	int64_t n[1] = {N};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)x, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "y", (void *)(uintptr_t)Y, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "bias", (void *)(uintptr_t)B, FZ_F32, 1, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_scalar(r, "s", s), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "z", (void *)(uintptr_t)z, FZ_F32, 1, n), FZ_OK);
}

/* The one kernel that ran at op i read exactly these values. */
static void check_asbr_op(int i, CUdeviceptr x, CUdeviceptr z, float s, bool replayed)
{
	ck_assert_int_lt(i, fake.nran);
	const FakeOp *op = &fake.ran[i];
	ck_assert_int_eq(op->kind, FK_KERNEL);
	ck_assert_str_eq(op->f->name, "calls_k0_pw");
	ck_assert_int_eq(op->f->nargs, 6);
	uint64_t sbits = 0;
	memcpy(&sbits, &s, 4);
	uint64_t want[6] = {x, Y, B, z, sbits, N};
	for (int j = 0; j < 6; j++)
		ck_assert_msg(op->args[j] == want[j], "op %d argument %d: %#llx, want %#llx", i, j,
		              (unsigned long long)op->args[j], (unsigned long long)want[j]);
	ck_assert_int_eq(op->replayed, replayed);
}

/* Launch once; returns the number of driver calls it made. */
static int launch_calls(fz_run *r)
{
	int before = total_calls();
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	return total_calls() - before;
}

/* ---- the context stack --------------------------------------------------------------------- */

/* The caller made the primary context current (as the CUDA runtime and
 * PyTorch do): a plain launch is one cuCtxGetCurrent and one cuLaunchKernel. */
START_TEST(plain_launch_with_context_current)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	f_cuCtxPushCurrent(PRIMARY);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK); /* builds the size plan */
	clear_counts();
	for (int i = 0; i < 50; i++) {
		ck_assert_int_eq(launch_calls(r), 2);
		ck_assert_int_eq(calls[F_cuCtxGetCurrent], i + 1);
		ck_assert_int_eq(calls[F_cuLaunchKernel], i + 1);
		check_asbr_op(i, X, Z, 0.5f, false);
		ck_assert(fake.ran[i].stream == NULL); /* the run's stream: the default one */
	}
	ck_assert_int_eq(calls[F_cuCtxPushCurrent] + calls[F_cuCtxPopCurrent], 0);
	ck_assert_int_eq(fake.depth, 1);
	ck_assert(fake.stack[0] == PRIMARY);
	f_cuCtxPopCurrent(&(CUcontext){0});
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* No context current, or another one: the run's is pushed and popped around
 * the launch, and what was current is current again after it. */
START_TEST(plain_launch_pushes_when_not_current)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	clear_counts();
	ck_assert_int_eq(launch_calls(r), 4); /* get, push, launch, pop */
	ck_assert_int_eq(calls[F_cuCtxPushCurrent], 1);
	ck_assert_int_eq(calls[F_cuCtxPopCurrent], 1);
	ck_assert_int_eq(fake.depth, 0);
	f_cuCtxPushCurrent(OTHER);
	clear_counts();
	ck_assert_int_eq(launch_calls(r), 4);
	ck_assert_int_eq(calls[F_cuCtxPushCurrent], 1);
	ck_assert_int_eq(calls[F_cuCtxPopCurrent], 1);
	ck_assert_int_eq(fake.depth, 1);
	ck_assert(fake.stack[0] == OTHER);
	check_asbr_op(0, X, Z, 0.5f, false);
	f_cuCtxPopCurrent(&(CUcontext){0});
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* Pushes nest: only the outermost one that finds another context current
 * pushes, and each pop undoes exactly its own push. */
START_TEST(nested_pushes)
{
	ck_assert_int_eq(rt_push(ctx, NULL), FZ_OK);
	ck_assert_int_eq(fake.depth, 1);
	ck_assert_int_eq(rt_push(ctx, NULL), FZ_OK);
	ck_assert_int_eq(fake.depth, 1);
	rt_pop();
	ck_assert_int_eq(fake.depth, 1);
	rt_pop();
	ck_assert_int_eq(fake.depth, 0);
	ck_assert_int_eq(calls[F_cuCtxPushCurrent], 1);
	ck_assert_int_eq(calls[F_cuCtxPopCurrent], 1);
	rt_pop(); /* unpaired: leaves the caller's context alone */
	ck_assert_int_eq(calls[F_cuCtxPopCurrent], 1);
	/* deeper than the record (64 levels): every level pushes and pops */
	clear_counts();
	for (int i = 0; i < 70; i++)
		ck_assert_int_eq(rt_push(ctx, NULL), FZ_OK);
	ck_assert_int_eq(calls[F_cuCtxPushCurrent], 1 + 6);
	ck_assert_int_eq(fake.depth, 7);
	for (int i = 0; i < 70; i++)
		rt_pop();
	ck_assert_int_eq(calls[F_cuCtxPopCurrent], 1 + 6);
	ck_assert_int_eq(fake.depth, 0);
}
END_TEST

/* ---- graphs ---------------------------------------------------------------------------------- */

/* By default: kernel by kernel until the same bindings have been launched
 * GRAPH_AFTER times in a row, then captured once and replayed, one
 * cuGraphLaunch a call; a rebinding goes back to kernel by kernel. */
START_TEST(automatic_graph_after_stable_bindings)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	f_cuCtxPushCurrent(PRIMARY);
	for (int round = 0; round < 2; round++) {
		CUdeviceptr x = round ? X2 : X;
		clear_counts();
		for (int i = 0; i < GRAPH_AFTER - 1; i++) {
			int n = launch_calls(r);
			/* a rebinding drops the graph captured with the old values; the
			 * first launch loads the kernel (cuModuleLoadData between two
			 * cuThreadExchangeStreamCaptureMode, cuModuleGetFunction) */
			ck_assert_int_eq(n, 2 + (round == 1 && i == 0) + 4 * (round == 0 && i == 0));
			check_asbr_op(i, x, Z, 0.5f, false);
		}
		ck_assert_int_eq(calls[F_cuGraphExecDestroy], round);
		ck_assert_int_eq(calls[F_cuStreamBeginCapture] + calls[F_cuStreamIsCapturing], 0);
		/* the capture: on a private stream, then replayed on the run's */
		launch_calls(r);
		ck_assert_int_eq(calls[F_cuStreamIsCapturing], 1);
		ck_assert_int_eq(calls[F_cuStreamBeginCapture], 1);
		ck_assert_int_eq(calls[F_cuStreamEndCapture], 1);
		ck_assert_int_eq(calls[F_cuGraphInstantiateWithFlags], 1);
		ck_assert_int_eq(calls[F_cuGraphDestroy], 1);
		ck_assert_int_eq(calls[F_cuGraphLaunch], 1);
		ck_assert_int_eq(calls[F_cuStreamCreate], round == 0);
		check_asbr_op(GRAPH_AFTER - 1, x, Z, 0.5f, true);
		for (int i = GRAPH_AFTER; i < 40; i++) {
			ck_assert_int_eq(launch_calls(r), 3); /* get current, is capturing, graph launch */
			check_asbr_op(i, x, Z, 0.5f, true);
		}
		ck_assert_int_eq(calls[F_cuLaunchKernel], GRAPH_AFTER); /* the last one captured */
		ck_assert_int_eq(fake.nran, 40);
		bind_asbr(r, X2, Z, 0.5);
	}
	ck_assert_int_eq(live(fake.execs), 1);
	int streams = fake.live_streams;
	fz_run_destroy(r);
	ck_assert_int_eq(live(fake.execs), 0);
	ck_assert_int_eq(live(fake.graphs), 0);
	ck_assert_int_eq(fake.live_streams, streams - 1);
	ck_assert_int_eq(fake.live_allocs, 0);
	f_cuCtxPopCurrent(&(CUcontext){0});
	fz_program_destroy(p);
}
END_TEST

/* Bindings that change at every call (rotating buffers): never captured,
 * every kernel runs with the buffers bound for its call. */
START_TEST(automatic_rotating_buffers_never_capture)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	for (int i = 0; i < 60; i++) {
		CUdeviceptr x = i % 2 ? X2 : X, z = i % 3 ? Z2 : Z;
		bind_asbr(r, x, z, 0.5);
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		check_asbr_op(i, x, z, 0.5f, false);
	}
	ck_assert_int_eq(calls[F_cuLaunchKernel], 60);
	ck_assert_int_eq(calls[F_cuStreamBeginCapture] + calls[F_cuStreamIsCapturing] + calls[F_cuGraphLaunch], 0);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* The caller is capturing the run's stream into a graph of its own: the
 * automatic mode launches kernel by kernel, into that capture. */
START_TEST(automatic_not_while_stream_captured)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	CUstream user = (CUstream)(uintptr_t)0x7770;
	ck_assert_int_eq(fz_run_set_stream(r, user), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	fake.user_capturing = user;
	for (int i = 0; i < 30; i++) {
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		check_asbr_op(i, X, Z, 0.5f, false);
		ck_assert(fake.ran[i].stream == user);
	}
	ck_assert_int_eq(calls[F_cuStreamBeginCapture] + calls[F_cuGraphLaunch], 0);
	ck_assert_int_eq(calls[F_cuStreamIsCapturing], 30 - (GRAPH_AFTER - 1));
	/* capture over: the next launch captures */
	fake.user_capturing = NULL;
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuStreamBeginCapture], 1);
	check_asbr_op(30, X, Z, 0.5f, true);
	/* and a graph is not replayed into a capture either */
	fake.user_capturing = user;
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	check_asbr_op(31, X, Z, 0.5f, false);
	ck_assert_int_eq(calls[F_cuGraphLaunch], 1);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* A run's first launch inside the caller's capture (torch.cuda.graph on a
 * stream the run has not launched on) loads its kernels and allocates its
 * scratch with the thread relaxed, so the capture goes on, and restores the
 * thread's mode after each. */
START_TEST(first_launch_inside_a_capture_allocates)
{
	fz_program *p = compile(asbr_src, 0); /* per-op: temporaries between its kernels */
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	CUstream user = (CUstream)(uintptr_t)0x7770;
	ck_assert_int_eq(fz_run_set_stream(r, user), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	fake.user_capturing = user;
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	ck_assert_int_eq(calls[F_cuMemAlloc], 1);
	ck_assert_int_ge(calls[F_cuModuleLoadData], 1);
	ck_assert_int_eq(calls[F_cuThreadExchangeStreamCaptureMode], 2 * (1 + calls[F_cuModuleLoadData]));
	ck_assert_int_eq(fake.mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
	ck_assert_int_eq(fake.nran, 4);
	for (int i = 0; i < fake.nran; i++)
		ck_assert(fake.ran[i].stream == user);
	fake.user_capturing = NULL;
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* Forced on: captured at the first launch, again at once when a scalar
 * changes; forced off: never. */
START_TEST(forced_graph_on_and_off)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 1), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuStreamBeginCapture], 1);
	check_asbr_op(0, X, Z, 0.5f, true);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuStreamBeginCapture], 1);
	ck_assert_int_eq(calls[F_cuStreamIsCapturing], 0); /* forced: not asked */
	check_asbr_op(1, X, Z, 0.5f, true);
	ck_assert_int_eq(fz_run_bind_scalar(r, "s", 0.25), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuStreamBeginCapture], 2);
	ck_assert_int_eq(calls[F_cuGraphExecDestroy], 1);
	check_asbr_op(2, X, Z, 0.25f, true);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	for (int i = 3; i < 20; i++) {
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		check_asbr_op(i, X, Z, 0.25f, false);
	}
	ck_assert_int_eq(calls[F_cuGraphLaunch], 3);
	ck_assert_int_eq(fz_run_set_graph(r, -1), FZ_OK); /* automatic again: the graph still holds */
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	check_asbr_op(20, X, Z, 0.25f, true);
	fz_run_destroy(r);
	ck_assert_int_eq(live(fake.execs), 0);
	fz_program_destroy(p);
}
END_TEST

/* A driver that will not capture: the launch still runs, kernel by kernel,
 * and that plan never tries again. */
START_TEST(failed_capture_falls_back)
{
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	fake.fail_end_capture = true;
	for (int i = 0; i < 30; i++) {
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		check_asbr_op(i, X, Z, 0.5f, false);
	}
	ck_assert_int_eq(calls[F_cuStreamBeginCapture], 1);
	ck_assert_int_eq(calls[F_cuLaunchKernel], 31); /* one of them into the failed capture */
	ck_assert_int_eq(calls[F_cuGraphLaunch] + calls[F_cuGraphInstantiateWithFlags], 0);
	ck_assert_int_eq(live(fake.graphs) + live(fake.execs), 0);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* ---- several kernels, workspaces, sizes ------------------------------------------------------ */

/* Per-op softmax: every kernel, every plan's scratch and, for sizes whose
 * rows split across blocks, the workspace zeroed before its kernel; a graph
 * per size. The kernels of a replay are the kernels of a plain launch. */
START_TEST(per_op_and_sizes)
{
	static const char src[] = "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n";
	fz_program *p = compile(src, 0);
	int nk = p->c->plan.nkernels;
	ck_assert_int_ge(nk, 4);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	f_cuCtxPushCurrent(PRIMARY);
	const int64_t sizes[3][2] = {{8, 1024}, {2, 1 << 22}, {8, 1024}};
	FakeOp plain[3][16];
	int nplain[3];
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 2, sizes[k]), FZ_OK);
		ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F32, 2, sizes[k]), FZ_OK);
		clear_counts();
		for (int i = 0; i < GRAPH_AFTER + 3; i++)
			ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		/* every launch ran the same operations; a size seen before (with
		 * the same buffers) finds its plan and its graph at once */
		int nplainl = k < 2 ? GRAPH_AFTER - 1 : 0;
		ck_assert_int_eq(fake.nran % (GRAPH_AFTER + 3), 0);
		int per = fake.nran / (GRAPH_AFTER + 3);
		ck_assert_int_le(per, 16);
		int kernels = 0, memsets = 0;
		int64_t zeroed = 0;
		for (int j = 0; j < per; j++) {
			kernels += fake.ran[j].kind == FK_KERNEL;
			memsets += fake.ran[j].kind == FK_MEMSET;
			for (int i = 1; i < GRAPH_AFTER + 3; i++) {
				const FakeOp *a = &fake.ran[j], *b = &fake.ran[i * per + j];
				ck_assert_int_eq(b->replayed, i >= nplainl);
				ck_assert(a->kind == b->kind && a->f == b->f && a->dst == b->dst && a->bytes == b->bytes);
				ck_assert_int_eq(memcmp(a->args, b->args, sizeof a->args), 0);
				ck_assert_int_eq(memcmp(a->grid, b->grid, sizeof a->grid), 0);
			}
			/* a memset zeroes the workspace its kernel is given */
			if (fake.ran[j].kind == FK_MEMSET) {
				ck_assert_int_lt(j + 1, per);
				const FakeOp *kn = &fake.ran[j + 1];
				ck_assert_int_eq(kn->kind, FK_KERNEL);
				ck_assert_int_ge(kn->f->ws, 0);
				ck_assert(kn->args[kn->f->ws] == fake.ran[j].dst);
				zeroed += (int64_t)fake.ran[j].bytes;
			}
		}
		ck_assert_int_eq(kernels, nk);
		int want_memsets = 0;
		int64_t want_zeroed = 0;
		for (int kk = 0; kk < nk; kk++) {
			CgLaunch cl;
			ck_assert(cg_launch(&p->c->module, &p->c->plan, kk, sizes[k], true, &ctx->cg, &cl));
			want_memsets += cl.workspace_zero > 0;
			want_zeroed += cl.workspace_zero;
		}
		/* only what codegen says must start zeroed (split rows' counters) */
		ck_assert_int_eq(memsets, want_memsets);
		ck_assert_int_eq(zeroed, want_zeroed);
		if (k == 1)
			ck_assert_int_gt(memsets, 0); /* two rows of 4M: split */
		int ncap = k < 2; /* launches into the capture */
		ck_assert_int_eq(calls[F_cuMemsetD8Async], memsets * (nplainl + ncap));
		ck_assert_int_eq(calls[F_cuLaunchKernel] + calls[F_cuLaunchKernelEx], nk * (nplainl + ncap));
		ck_assert_int_eq(calls[F_cuGraphLaunch], GRAPH_AFTER + 3 - nplainl);
		ck_assert_int_eq(calls[F_cuStreamBeginCapture], ncap);
		memcpy(plain[k], fake.ran, sizeof *fake.ran * (size_t)per);
		nplain[k] = per;
	}
	ck_assert_int_eq(nplain[0], nplain[2]);
	for (int j = 0; j < nplain[0]; j++)
		ck_assert_int_eq(memcmp(plain[0][j].args, plain[2][j].args, sizeof plain[0][j].args), 0);
	fz_run_destroy(r);
	ck_assert_int_eq(fake.live_allocs, 0);
	f_cuCtxPopCurrent(&(CUcontext){0});
	fz_program_destroy(p);
}
END_TEST

/* Every output gets its value at every launch, by a kernel or by a copy,
 * whichever path the launch takes: outputs that are inputs, scalars,
 * constants and second names included, fused and per-op. */
static bool op_writes(const FakeOp *op, CUdeviceptr out)
{
	if (op->kind != FK_KERNEL)
		return op->dst == out;
	for (int j = 0; j < op->f->nargs; j++)
		if (op->args[j] == out)
			return true;
	return false;
}

START_TEST(outputs_every_launch)
{
	static const char src[] = "in s: f32\nin x: f32[N]\nout y = x * s\nout y2 = y\nout t = s\nout c = 1.5\nout z = x\n";
	enum { LAUNCHES = 20 };
	for (int fuse = 0; fuse < 2; fuse++) {
		fz_program *p = compile(src, fuse);
		fz_run *r;
		ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
		int64_t n[1] = {N};
		ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 1, n), FZ_OK);
		ck_assert_int_eq(fz_run_bind_scalar(r, "s", 3), FZ_OK);
		clear_counts();
		for (int i = 0; i < LAUNCHES; i++)
			ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		ck_assert_int_eq(fake.nran % LAUNCHES, 0);
		int per = fake.nran / LAUNCHES;
		ck_assert_int_gt(per, 0);
		ck_assert_int_eq(calls[F_cuGraphLaunch], LAUNCHES - (GRAPH_AFTER - 1));
		for (int o = 0; o < fz_program_num_outputs(p); o++) {
			fz_tensor_info ti;
			ck_assert_int_eq(fz_program_output(p, o, &ti), FZ_OK);
			void *d;
			ck_assert_int_eq(fz_run_output(r, ti.name, &d, NULL, NULL), FZ_OK);
			ck_assert(d != NULL && (CUdeviceptr)(uintptr_t)d != X);
			for (int i = 0; i < LAUNCHES; i++) {
				bool written = false;
				for (int j = 0; j < per; j++)
					written |= op_writes(&fake.ran[i * per + j], (CUdeviceptr)(uintptr_t)d);
				ck_assert_msg(written, "%s: output %s not written at launch %d", fuse ? "fused" : "per-op", ti.name, i);
			}
		}
		fz_run_destroy(r);
		ck_assert_int_eq(fake.live_allocs, 0);
		fz_program_destroy(p);
	}
}
END_TEST

/* A kernel's dynamic shared memory is allowed when a plan first needs more
 * of it than before, whatever the amount (its static shared memory counts
 * against the 48 KB default too), never at a launch. */
START_TEST(shared_memory_opt_in)
{
	fz_program *p = compile("in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	/* rows longer than the register path holds (16384 f32): the row cache,
	 * 64 KB, 128 KB, 64 KB, 78 KB */
	const int64_t sizes[4][2] = {{256, 16383}, {256, 32767}, {256, 16383}, {256, 20001}};
	const int opt_ins[4] = {1, 1, 0, 0}; /* 78 KB once 64 KB and 128 KB were allowed */
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 2, sizes[k]), FZ_OK);
		clear_counts();
		for (int i = 0; i < 3; i++)
			ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		ck_assert_int_gt(fake.ran[0].smem, 0);
		ck_assert_int_eq(calls[F_cuFuncSetAttribute], opt_ins[k]);
	}
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* A grid meant to be the blocks resident at once (rows of halves in
 * registers, each block prefetching its next row, as an rmsnorm's do: as
 * many blocks as fit, 16 of 128 threads an SM for codegen) is cut, once per
 * size, to what the driver says the entry fits (the fake: 1024 threads an
 * SM, 8 blocks of 128); a pointwise kernel's grid (a block per 256 chunks,
 * long math or not) is left alone and asks nothing. */
START_TEST(resident_grid_cut_to_occupancy)
{
	fz_program *p = compile("in x: f16[B, N]\nin w: f16[N]\nout y = f16(x * rsqrt(mean(x * x) + 1e-5) * w)\n", 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	int64_t n[2] = {65536, 4096};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F16, 2, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "w", (void *)(uintptr_t)B, FZ_F16, 1, n + 1), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F16, 2, n), FZ_OK);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuOccupancyMaxActiveBlocksPerMultiprocessor], 1);
	ck_assert_int_eq(fake.nran, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(fake.ran[i].grid[0], 132 * 8);
		ck_assert_uint_eq(fake.ran[i].block[0], 128);
	}
	fz_run_destroy(r);
	fz_program_destroy(p);
	p = compile("in x: f32[N]\nout y = tanh(x) * x\n", 1);
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	int64_t m[1] = {64 << 20};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 1, m), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F32, 1, m), FZ_OK);
	clear_counts();
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuOccupancyMaxActiveBlocksPerMultiprocessor], 0);
	ck_assert_uint_eq(fake.ran[0].grid[0], (64 << 20) / 4 / 256);
	fz_run_destroy(r);
	fz_program_destroy(p);
	p = compile(asbr_src, 1);
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	clear_counts();
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuOccupancyMaxActiveBlocksPerMultiprocessor], 0);
	ck_assert_uint_eq(fake.ran[0].grid[0], N / 4 / 256);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* A row kernel's launch carries an L2 window over its inputs (their span,
 * else the largest, cut to what the device allows), streaming, which a
 * captured graph keeps; a pointwise kernel's has none, nor has a split row
 * whose every pass reads its inputs again. */
static const FakeOp *launch_rms(fz_run *r, int64_t rows, int64_t cols, CUdeviceptr w)
{
	int64_t n[2] = {rows, cols};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 2, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "w", (void *)(uintptr_t)w, FZ_F32, 1, n + 1), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F32, 2, n), FZ_OK);
	clear_counts();
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	ck_assert_int_eq(fake.ran[fake.nran - 1].kind, FK_KERNEL);
	return &fake.ran[fake.nran - 1];
}

/* A caller's buffer not 16-byte aligned takes the classes for rows of any
 * length, in a size plan of its own (cg_launch's `aligned`, bind.c's
 * mark_ragged): the same sizes with x, then y, one element off, aligned
 * again, both off; each launch runs the entry cg_launch chooses so, and
 * the aligned class (fz_vec a constant) only for aligned buffers. */
START_TEST(ragged_buffers_take_their_own_plan)
{
	fz_program *p = compile("in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", 1);
	ck_assert_int_eq(p->c->plan.nkernels, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	f_cuCtxPushCurrent(PRIMARY);
	const int64_t shape[2] = {40000, 32};
	const struct {
		CUdeviceptr x, y;
		bool aligned;
	} binds[] = {{X, Z, true}, {X + 4, Z, false}, {X, Z + 4, false}, {X, Z, true}, {X + 4, Z + 4, false}};
	const CgModule *m = &p->c->module;
	for (size_t i = 0; i < sizeof binds / sizeof binds[0]; i++) {
		ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)binds[i].x, FZ_F32, 2, shape), FZ_OK);
		ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)binds[i].y, FZ_F32, 2, shape), FZ_OK);
		clear_counts();
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
		ck_assert_int_eq(fake.nran, 1);
		CgLaunch cl;
		ck_assert(cg_launch(m, &p->c->plan, 0, shape, binds[i].aligned, &ctx->cg, &cl));
		const char *name = fake.ran[0].f->name;
		ck_assert_str_eq(name, m->entries[cl.entry].symbol);
		ck_assert_int_eq(strstr(m->entries[cl.entry].text, "const bool fz_vec = true;") != NULL, binds[i].aligned);
		ck_assert_uint_eq(fake.ran[0].args[0], binds[i].x);
		ck_assert_uint_eq(fake.ran[0].args[1], binds[i].y);
	}
	fz_run_destroy(r);
	f_cuCtxPopCurrent(&(CUcontext){0});
	fz_program_destroy(p);
}
END_TEST

START_TEST(row_kernels_stream_their_inputs)
{
	fz_program *p = compile("in x: f32[R, C]\nin w: f32[C]\nout y = x * rsqrt(mean(x * x) + 1e-5) * w\n", 1);
	ck_assert_int_eq(p->c->plan.nkernels, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	const FakeOp *op = launch_rms(r, 64, 1000, B); /* x at X, w above it: their span */
	ck_assert(op->win);
	ck_assert_uint_eq(op->win_base, X);
	ck_assert_uint_eq(op->win_bytes, B + 4000 - X);
	ck_assert_int_eq(calls[F_cuLaunchKernelEx], 1);
	ck_assert_int_eq(calls[F_cuLaunchKernel], 0);
	const CUdeviceptr far = X + ((CUdeviceptr)1 << 32); /* a span longer than allowed: x alone */
	op = launch_rms(r, 64, 1000, far);
	ck_assert(op->win);
	ck_assert_uint_eq(op->win_base, X);
	ck_assert_uint_eq(op->win_bytes, 64 * 1000 * 4);
	op = launch_rms(r, 32768, 1024, B); /* x alone longer than allowed: its first bytes */
	ck_assert(op->win);
	ck_assert_uint_eq(op->win_base, X);
	ck_assert_uint_eq(op->win_bytes, FAKE_WINDOW_MAX);
	op = launch_rms(r, 2, 1 << 22, B); /* split, no row cache: the passes read x again */
	ck_assert(!op->win);
	ck_assert(op->coop);
	ck_assert_int_eq(fz_run_set_graph(r, 1), FZ_OK); /* replays keep it */
	op = launch_rms(r, 64, 1000, B);
	ck_assert(op->replayed);
	ck_assert(op->win);
	ck_assert_uint_eq(op->win_base, X);
	ck_assert_uint_eq(op->win_bytes, B + 4000 - X);
	fz_run_destroy(r);
	fz_program_destroy(p);

	p = compile(asbr_src, 1); /* pointwise */
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	clear_counts();
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuLaunchKernel], 1);
	ck_assert_int_eq(calls[F_cuLaunchKernelEx], 0);
	ck_assert(!fake.ran[0].win);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* The masked class of a kernel of halves with a column operand keeps its
 * chunks in shared memory at its rows' alignment (row_reg.c's slots), which
 * every row a thread takes shares only where the grid steps over a multiple
 * of 8 rows: cut to the occupancy (the fake's 1024 threads an SM: 3 blocks
 * of 320, 396 on 132 SMs), the grid is cut on to 392; its shared memory is
 * the prefetch buffer of x and the slots of w, 64 bytes each a thread. */
START_TEST(masked_slots_grid_multiple_of_8)
{
	fz_program *p = compile("in x: f16[B, N]\nin w: f16[N]\nout y = f16(x * rsqrt(mean(x * x) + 1e-5) * w)\n", 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	int64_t n[2] = {65536, 10007};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F16, 2, n), FZ_OK);
	ck_assert_int_eq(fz_run_bind_input(r, "w", (void *)(uintptr_t)B, FZ_F16, 1, n + 1), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F16, 2, n), FZ_OK);
	ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(calls[F_cuOccupancyMaxActiveBlocksPerMultiprocessor], 1);
	ck_assert_int_eq(fake.nran, 1);
	ck_assert_uint_eq(fake.ran[0].block[0], 320);
	ck_assert_uint_eq(fake.ran[0].grid[0], 392);
	ck_assert_uint_eq(fake.ran[0].smem, 320 * (64 + 64));
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* With two GPUs, a pointer of device 1 bound to a run on device 0 is refused
 * at binding, and the run keeps its earlier bindings; with one GPU nothing
 * is asked of the driver (the launch tests above count every call). */
START_TEST(pointers_of_another_device)
{
	fz_context_destroy(ctx);
	fake.ndevices = 2;
	ck_assert_int_eq(fz_context_create(0, &ctx), FZ_OK);
	fz_program *p = compile(asbr_src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	const CUdeviceptr other = (CUdeviceptr)1 << 44 | X2;
	int64_t n[1] = {N};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)other, FZ_F32, 1, n), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "input 'x' is memory of device 1, but this run is on device 0");
	ck_assert_int_eq(fz_run_bind_output(r, "z", (void *)(uintptr_t)other, FZ_F32, 1, n), FZ_ERR_BINDING);
	ck_assert_str_eq(fz_run_error(r), "output 'z' is memory of device 1, but this run is on device 0");
	clear_counts();
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	check_asbr_op(0, X, Z, 0.5f, false);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* ---- entries loaded on first use --------------------------------------------------------- */

static void launch_softmax(fz_run *r, int64_t rows, int64_t n)
{
	int64_t shape[2] = {rows, n};
	ck_assert_int_eq(fz_run_bind_input(r, "x", (void *)(uintptr_t)X, FZ_F32, 2, shape), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(r, "y", (void *)(uintptr_t)Z, FZ_F32, 2, shape), FZ_OK);
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
}

/* Compiling a program compiles nothing; the first launch of each path (the
 * register path's two classes, the row cache, split rows) compiles and loads that entry
 * alone; sizes taking a loaded path load nothing; the same program in the
 * context again, or in a new context, finds the entries loaded, or on disk. */
START_TEST(entries_loaded_on_first_use)
{
	static const char src[] = "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e) + 0.25\n";
	fz_cache_stats st0, st;
	fz_context_cache_stats(ctx, &st0);
	fz_program *p = compile(src, 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	ck_assert_int_eq(calls[F_cuModuleLoadData], 0);
	static const struct {
		int64_t rows, n;
		const char *entry;
		int loads;
	} runs[] = {
		{64, 1024, "calls_k0_reg4", 1},   {64, 1001, "calls_k0_reg4m", 2}, {256, 20001, "calls_k0_row", 3},
		{4, 1 << 18, "calls_k0_split", 4}, {8, 4096, "calls_k0_reg4", 4},   {3, 77, "calls_k0_reg4m", 4},
		{64, 1024, "calls_k0_reg4", 4},
	};
	for (int i = 0; i < 7; i++) {
		fake.nran = 0;
		launch_softmax(r, runs[i].rows, runs[i].n);
		ck_assert_str_eq(fake.ran[fake.nran - 1].f->name, runs[i].entry);
		ck_assert_int_eq(calls[F_cuModuleLoadData], runs[i].loads);
		ck_assert_int_eq(calls[F_cuModuleGetFunction], runs[i].loads);
	}
	fz_context_cache_stats(ctx, &st);
	ck_assert_uint_eq(st.nvrtc_compiles + st.disk_hits - st0.nvrtc_compiles - st0.disk_hits, 4);
	/* the same program again: the loaded modules */
	fz_program *q = compile(src, 1);
	fz_run *r2;
	ck_assert_int_eq(fz_run_create(q, NULL, &r2), FZ_OK);
	launch_softmax(r2, 16, 512);
	fz_context_cache_stats(ctx, &st0);
	ck_assert_uint_eq(st0.memory_hits, st.memory_hits + 1);
	ck_assert_int_eq(calls[F_cuModuleLoadData], 4);
	fz_run_destroy(r2);
	fz_program_destroy(q);
	fz_run_destroy(r);
	fz_program_destroy(p);
	/* a new context: from the disk cache */
	fz_context_destroy(ctx);
	ck_assert_int_eq(fz_context_create(0, &ctx), FZ_OK);
	p = compile(src, 1);
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	launch_softmax(r, 4, 1 << 18);
	fz_context_cache_stats(ctx, &st);
	ck_assert_uint_eq(st.nvrtc_compiles, 0);
	ck_assert_uint_eq(st.disk_hits, 1);
	fz_run_destroy(r);
	fz_program_destroy(p);
}
END_TEST

/* fz_program_prepare loads, ahead of the launch, what the launch would: the
 * launch then loads nothing. A program without a context, or a negative
 * dim, is refused. */
/* With fz_program_set_interpret a launch runs the GPU interpreter: its
 * module loaded once (the build's cubin, no compile) and, for a program
 * without reductions, one map whose expression is the whole program, stored
 * straight into the output; into a capture of the run's stream, and once
 * turned off, the program's kernel. */
START_TEST(interpreted_launch)
{
	fz_program *p = compile(asbr_src, 1);
	ck_assert_int_eq(fz_program_set_interpret(p, 1), FZ_OK);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	bind_asbr(r, X, Z, 0.5);
	for (int launch = 0; launch < 2; launch++) {
		clear_counts();
		ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
		ck_assert_int_eq(calls[F_cuModuleLoadData], launch == 0);
		ck_assert_int_eq(fake.nran, 1);
		ck_assert_str_eq(fake.ran[0].f->name, "fzi_map");
		ck_assert_int_eq(fake.ran[0].args[0], N); /* FziMap.n */
		ck_assert_int_eq(calls[F_cuMemAllocAsync] + calls[F_cuMemAlloc], 0);
	}
	fz_cache_stats st;
	fz_context_cache_stats(ctx, &st);
	ck_assert_uint_eq(st.nvrtc_compiles + st.disk_hits + st.memory_hits, 0);
	void *out = NULL;
	ck_assert_int_eq(fz_run_output(r, "z", &out, NULL, NULL), FZ_OK);
	ck_assert(out == (void *)(uintptr_t)Z);

	CUstream user = (CUstream)(uintptr_t)0x7770;
	ck_assert_int_eq(fz_run_set_stream(r, user), FZ_OK);
	fake.user_capturing = user;
	clear_counts();
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	check_asbr_op(0, X, Z, 0.5f, false);
	fake.user_capturing = NULL;
	ck_assert_int_eq(fz_program_set_interpret(p, 0), FZ_OK);
	clear_counts();
	ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	ck_assert_int_eq(fake.nran, 1);
	check_asbr_op(0, X, Z, 0.5f, false);

	/* (programs compiled after the asbr kernel was loaded: the fake finds
	 * entries by symbol, newest program first, and theirs are named alike) */
	/* softmax: a reduce for max, one for the sum (under it exp(x - m)), a
	 * map for the output; the reductions' results in temporaries */
	fz_program *sm = compile("in x: f32[R, C]\nm = max(x)\ne = exp(x - m)\nout y = e / sum(e)\n", 1);
	ck_assert_int_eq(fz_program_set_interpret(sm, 1), FZ_OK);
	fz_run *rs;
	ck_assert_int_eq(fz_run_create(sm, NULL, &rs), FZ_OK);
	int64_t shape[2] = {4, 100};
	ck_assert_int_eq(fz_run_bind_input(rs, "x", (void *)(uintptr_t)X, FZ_F32, 2, shape), FZ_OK);
	ck_assert_int_eq(fz_run_bind_output(rs, "y", (void *)(uintptr_t)Z, FZ_F32, 2, shape), FZ_OK);
	clear_counts();
	ck_assert_msg(fz_run_launch(rs) == FZ_OK, "%s", fz_run_error(rs));
	ck_assert_int_eq(fake.nran, 3);
	ck_assert_str_eq(fake.ran[0].f->name, "fzi_reduce");
	ck_assert_str_eq(fake.ran[1].f->name, "fzi_reduce");
	ck_assert_str_eq(fake.ran[2].f->name, "fzi_map");
	ck_assert_int_eq(fake.ran[0].args[0], 4);       /* FziReduce.rows */
	ck_assert_int_eq(fake.ran[2].args[0], 4 * 100); /* FziMap.n */
	ck_assert_int_eq(calls[F_cuMemAllocAsync], 2);
	ck_assert_int_eq(calls[F_cuMemFreeAsync], 2);

	/* thirteen inputs: more operands than an expression holds, so the sum of
	 * the first twelve... goes to memory first, then the output's map */
	char big[1024] = "in a0: f32[N]\n", *e = big + strlen(big);
	for (int i = 1; i < 13; i++)
		e += sprintf(e, "in a%d: f32[N]\n", i);
	e += sprintf(e, "out y = a0");
	for (int i = 1; i < 13; i++)
		e += sprintf(e, " + a%d", i);
	sprintf(e, "\n");
	fz_program *bp = compile(big, 1);
	ck_assert_int_eq(fz_program_set_interpret(bp, 1), FZ_OK);
	fz_run *rb;
	ck_assert_int_eq(fz_run_create(bp, NULL, &rb), FZ_OK);
	int64_t n1[1] = {N};
	for (int i = 0; i < 13; i++) {
		char name[8];
		snprintf(name, sizeof name, "a%d", i);
		ck_assert_int_eq(fz_run_bind_input(rb, name, (void *)(uintptr_t)(X + 0x10000 * (unsigned)i), FZ_F32, 1, n1),
		                 FZ_OK);
	}
	ck_assert_int_eq(fz_run_bind_output(rb, "y", (void *)(uintptr_t)Z, FZ_F32, 1, n1), FZ_OK);
	clear_counts();
	ck_assert_msg(fz_run_launch(rb) == FZ_OK, "%s", fz_run_error(rb));
	ck_assert_int_eq(fake.nran, 2);
	ck_assert_int_eq(calls[F_cuMemAllocAsync], 1);
	ck_assert_int_eq(calls[F_cuMemFreeAsync], 1);
	fz_run_destroy(rb);

	fz_run_destroy(rs);
	fz_run_destroy(r);
	fz_program_destroy(bp);
	fz_program_destroy(sm);
	fz_program_destroy(p);
	ck_assert_int_eq(fake.live_allocs, 0);
}
END_TEST

START_TEST(prepare_ahead_of_launch)
{
	static const char src[] = "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e) + 0.5\n";
	fz_program *p = compile(src, 1);
	const int64_t dims[2] = {64, 1001}, bad[2] = {64, -1};
	ck_assert_int_eq(fz_program_prepare(p, bad), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(p), "fz_program_prepare: dim N is -1");
	ck_assert_int_eq(calls[F_cuModuleLoadData], 0);
	ck_assert_int_eq(fz_program_prepare(p, dims), FZ_OK);
	ck_assert_int_eq(calls[F_cuModuleLoadData], 1);
	ck_assert_int_eq(fz_program_prepare(p, dims), FZ_OK); /* loaded already */
	ck_assert_int_eq(calls[F_cuModuleLoadData], 1);
	fz_run *r;
	ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(r, 0), FZ_OK);
	fake.nran = 0;
	launch_softmax(r, 64, 1001);
	ck_assert_str_eq(fake.ran[fake.nran - 1].f->name, "calls_k0_reg4m");
	ck_assert_int_eq(calls[F_cuModuleLoadData], 1);
	fz_run_destroy(r);
	/* every entry: the three not loaded yet, in one module */
	ck_assert_int_eq(fz_program_prepare(p, NULL), FZ_OK);
	ck_assert_int_eq(calls[F_cuModuleLoadData], 2);
	ck_assert_int_eq(calls[F_cuModuleGetFunction], 1 + (p->c->module.nentries - 1));
	fz_program_destroy(p);
	fz_program *q = NULL;
	fz_diag d;
	ck_assert_int_eq(fz_program_compile(NULL, "calls.fz", src, strlen(src), NULL, &q, &d), FZ_OK);
	ck_assert_int_eq(fz_program_prepare(q, dims), FZ_ERR_ARGUMENT);
	ck_assert_str_eq(fz_program_error(q),
	                 "program 'calls' was compiled without a context: there is no device to prepare it for");
	fz_program_destroy(q);
}
END_TEST

int main(void)
{
	setenv("FUSEC_GRAPH_AFTER", "8", 1);
	if (!mkdtemp(cache_dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("FUSEC_CACHE_DIR", cache_dir, 1);
	Suite *su = suite_create("launch_calls");
	TCase *tc = tcase_create("fake driver");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, plain_launch_with_context_current);
	tcase_add_test(tc, resident_grid_cut_to_occupancy);
	tcase_add_test(tc, masked_slots_grid_multiple_of_8);
	tcase_add_test(tc, plain_launch_pushes_when_not_current);
	tcase_add_test(tc, nested_pushes);
	tcase_add_test(tc, automatic_graph_after_stable_bindings);
	tcase_add_test(tc, automatic_rotating_buffers_never_capture);
	tcase_add_test(tc, automatic_not_while_stream_captured);
	tcase_add_test(tc, first_launch_inside_a_capture_allocates);
	tcase_add_test(tc, forced_graph_on_and_off);
	tcase_add_test(tc, failed_capture_falls_back);
	tcase_add_test(tc, per_op_and_sizes);
	tcase_add_test(tc, outputs_every_launch);
	tcase_add_test(tc, shared_memory_opt_in);
	tcase_add_test(tc, row_kernels_stream_their_inputs);
	tcase_add_test(tc, ragged_buffers_take_their_own_plan);
	tcase_add_test(tc, pointers_of_another_device);
	tcase_add_test(tc, prepare_ahead_of_launch);
	tcase_add_test(tc, interpreted_launch);
	tcase_add_test(tc, entries_loaded_on_first_use);
	suite_add_tcase(su, tc);
	int rc = tu_run(su);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
