/*
 * api.c: the public API's contexts, programs, introspection and device
 * memory (runs are in launch.c, bind.c and plans.c).
 *
 * A program is a Compilation (pipeline.h) plus, once it has a context, its
 * loaded module and functions. Compiling needs no GPU: the front end, fusion
 * and codegen are plain C, so fz_program_compile(NULL, ...) serves
 * introspection and the generated source anywhere. Every failure leaves a
 * message on its handle and in the thread's last error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "runtime/interpret.h"
#include "runtime/rt.h"

static _Thread_local char last_error[RT_ERR_MAX];

/* ---- errors ------------------------------------------------------------------------ */

const char *fz_last_error(void) { return last_error; }

const char *fz_version(void)
{
#define FZ_STR2(x) #x
#define FZ_STR(x) FZ_STR2(x)
	return FZ_STR(FUSEC_VERSION_MAJOR) "." FZ_STR(FUSEC_VERSION_MINOR) "." FZ_STR(FUSEC_VERSION_PATCH);
}

fz_status rt_fail(char *dst, fz_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	if (dst && dst != last_error)
		snprintf(dst, RT_ERR_MAX, "%s", last_error);
	return s;
}

fz_status rt_fail_cu(char *dst, CUresult r, const char *what)
{
	char why[256];
	rt_cu_error(r, why, sizeof why);
	fz_status s = rt_cu_status(r);
	if (s == FZ_ERR_DEVICE_MEMORY)
		return rt_fail(dst, s, "out of device memory: %s (%s)", what, why);
	return rt_fail(dst, s, "%s: %s", what, why);
}

void rt_warn(void *ud, const char *message)
{
	fz_context *ctx = ud;
	pthread_mutex_lock(&ctx->lock);
	size_t n = strlen(message);
	char *w = realloc(ctx->warnings, ctx->warn_len + n + 2);
	if (w) {
		memcpy(w + ctx->warn_len, message, n);
		w[ctx->warn_len + n] = '\n';
		w[ctx->warn_len + n + 1] = 0;
		ctx->warnings = w;
		ctx->warn_len += n + 1;
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* The thread's open rt_push calls: bit d of `pushed` says whether the one at
 * nesting depth d pushed (deeper than 64 always pushes). A launch is a few
 * microseconds of host work, and a push and a pop are two driver calls of
 * it: under the CUDA runtime or PyTorch the device's primary context is
 * already current, so one cheap cuCtxGetCurrent replaces them. It is asked
 * each time, not remembered: the caller may switch contexts between calls. */
typedef struct RtPushes {
	uint64_t pushed;
	int depth;
} RtPushes;

static _Thread_local RtPushes pushes;

fz_status rt_push(fz_context *ctx, char *err)
{
	RtPushes *t = &pushes;
	CUcontext cur = NULL;
	bool push = t->depth >= 64 || CU(cuCtxGetCurrent)(&cur) != CUDA_SUCCESS || cur != ctx->cu;
	if (push) {
		CUresult r = CU(cuCtxPushCurrent)(ctx->cu);
		if (r != CUDA_SUCCESS)
			return rt_fail_cu(err, r, "making the context current (cuCtxPushCurrent)");
	}
	if (t->depth < 64)
		t->pushed = (t->pushed & ~((uint64_t)1 << t->depth)) | (uint64_t)push << t->depth;
	t->depth++;
	return FZ_OK;
}

void rt_pop(void)
{
	RtPushes *t = &pushes;
	if (t->depth == 0) /* unpaired: nothing of ours to undo */
		return;
	t->depth--;
	if (t->depth >= 64 || (t->pushed >> t->depth & 1)) {
		CUcontext dummy;
		CU(cuCtxPopCurrent)(&dummy);
	}
}

/* ---- contexts ------------------------------------------------------------------------ */

static fz_status init_failure(CUresult r, const char *what)
{
	char why[256];
	rt_cu_error(r, why, sizeof why);
	fz_status s = rt_cu_status(r);
	if (s == FZ_ERR_NO_DRIVER)
		return rt_fail(NULL, s, "no CUDA driver: %s failed (%s)", what, why);
	if (s == FZ_ERR_DEVICE_MEMORY)
		return rt_fail(NULL, s, "out of device memory: %s failed (%s)", what, why);
	return rt_fail(NULL, FZ_ERR_NO_DEVICE, "no CUDA device: %s failed (%s)", what, why);
}

static fz_status query_device(fz_context *ctx)
{
	static const struct {
		CUdevice_attribute attr;
		size_t offset;
	} attrs[] = {
		{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(CgDevice, cc_major)},
		{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(CgDevice, cc_minor)},
		{CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(CgDevice, sm_count)},
		{CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, offsetof(CgDevice, max_threads_per_sm)},
		{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(CgDevice, smem_per_block_optin)},
		{CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof(CgDevice, smem_per_sm)},
		{CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, offsetof(CgDevice, smem_reserved_per_block)},
		{CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(CgDevice, l2_bytes)},
	};
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
		CUresult r = CU(cuDeviceGetAttribute)((int *)((char *)&ctx->cg + attrs[i].offset), attrs[i].attr, ctx->dev);
		if (r != CUDA_SUCCESS)
			return init_failure(r, "cuDeviceGetAttribute");
	}
	int win = 0; /* not every driver (or fake) knows it: none then */
	if (CU(cuDeviceGetAttribute)(&win, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, ctx->dev) == CUDA_SUCCESS &&
	    win > 0)
		ctx->l2_window_max = (size_t)win;
	fz_device_info *in = &ctx->info;
	in->ordinal = ctx->ordinal;
	in->cc_major = ctx->cg.cc_major;
	in->cc_minor = ctx->cg.cc_minor;
	in->sm_count = ctx->cg.sm_count;
	CU(cuDriverGetVersion)(&in->driver_version);
	if (CU(cuDeviceGetName)(in->name, (int)sizeof in->name, ctx->dev) != CUDA_SUCCESS)
		snprintf(in->name, sizeof in->name, "CUDA device %d", ctx->ordinal);
	return FZ_OK;
}

static fz_status open_device(fz_context *ctx, int device)
{
	CUresult r = CU(cuInit)(0);
	if (r != CUDA_SUCCESS)
		return init_failure(r, "cuInit");
	int count = 0;
	r = CU(cuDeviceGetCount)(&count);
	if (r != CUDA_SUCCESS)
		return init_failure(r, "cuDeviceGetCount");
	if (count == 0)
		return rt_fail(NULL, FZ_ERR_NO_DEVICE, "no CUDA device: the driver is loaded but sees no GPU");
	if (device < 0 || device >= count)
		return rt_fail(NULL, FZ_ERR_NO_DEVICE, "no CUDA device: device %d was requested; the driver sees %d (0 to %d)",
		               device, count, count - 1);
	ctx->ordinal = device;
	ctx->multi_device = count > 1;
	if ((r = CU(cuDeviceGet)(&ctx->dev, device)) != CUDA_SUCCESS)
		return init_failure(r, "cuDeviceGet");
	if ((r = CU(cuDevicePrimaryCtxRetain)(&ctx->cu, ctx->dev)) != CUDA_SUCCESS)
		return init_failure(r, "cuDevicePrimaryCtxRetain");
	fz_status s = query_device(ctx);
	if (s != FZ_OK) {
		CU(cuDevicePrimaryCtxRelease)(ctx->dev);
		ctx->cu = NULL;
	}
	return s;
}

fz_status fz_context_create(int device, fz_context **out)
{
	if (!out)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_context_create: out is NULL");
	*out = NULL;
	const char *msg;
	if (rt_driver_load(&msg) != FZ_OK)
		return rt_fail(NULL, FZ_ERR_NO_DRIVER, "%s", msg);
	fz_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return rt_fail(NULL, FZ_ERR_NOMEM, "out of memory");
	pthread_mutex_init(&ctx->lock, NULL);
	fz_status s = open_device(ctx, device);
	if (s != FZ_OK) {
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return s;
	}
	rt_cache_init(&ctx->disk, rt_warn, ctx);
	if (ctx->disk.enabled)
		snprintf(ctx->info.cache_dir, sizeof ctx->info.cache_dir, "%s", ctx->disk.dir);
	*out = ctx;
	return FZ_OK;
}

void fz_context_destroy(fz_context *ctx)
{
	if (!ctx)
		return;
	if (rt_push(ctx, NULL) == FZ_OK) {
		rt_jit_unload_all(ctx);
		rt_interp_unload(ctx);
		rt_pop();
	}
	CU(cuDevicePrimaryCtxRelease)(ctx->dev);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->warnings);
	free(ctx->warn_snapshot);
	free(ctx);
}

const char *fz_context_error(const fz_context *ctx) { return ctx ? ctx->err : ""; }

const char *fz_context_warnings(fz_context *ctx)
{
	if (!ctx)
		return "";
	pthread_mutex_lock(&ctx->lock);
	free(ctx->warn_snapshot);
	ctx->warn_snapshot = strdup(ctx->warnings ? ctx->warnings : "");
	pthread_mutex_unlock(&ctx->lock);
	return ctx->warn_snapshot ? ctx->warn_snapshot : "";
}

void fz_context_clear_warnings(fz_context *ctx)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	free(ctx->warnings);
	ctx->warnings = NULL;
	ctx->warn_len = 0;
	pthread_mutex_unlock(&ctx->lock);
}

fz_status fz_context_info(const fz_context *ctx, fz_device_info *out)
{
	if (!ctx || !out)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_context_info: NULL argument");
	*out = ctx->info;
	return FZ_OK;
}

void fz_context_cache_stats(fz_context *ctx, fz_cache_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof *out);
	if (!ctx)
		return;
	pthread_mutex_lock(&ctx->lock);
	*out = ctx->stats;
	pthread_mutex_unlock(&ctx->lock);
}

/* ---- device memory ------------------------------------------------------------------- */

fz_status rt_check_device_ptr(fz_context *ctx, char *err, const char *what, const char *name, CUdeviceptr p)
{
	if (!ctx->multi_device || !p || rt_push(ctx, err) != FZ_OK)
		return FZ_OK;
	int ordinal = -1;
	CUresult r = CU(cuPointerGetAttribute)(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
	rt_pop();
	/* Memory the driver does not know (host memory, say) is left to the
	 * kernels: under HMM it may well be reachable. */
	if (r != CUDA_SUCCESS || ordinal == ctx->ordinal)
		return FZ_OK;
	return rt_fail(err, FZ_ERR_BINDING, "%s '%s' is memory of device %d, but this run is on device %d", what, name,
	               ordinal, ctx->ordinal);
}

fz_status fz_device_alloc(fz_context *ctx, size_t bytes, void **ptr)
{
	if (!ctx || !ptr)
		return rt_fail(ctx ? ctx->err : NULL, FZ_ERR_ARGUMENT, "fz_device_alloc: NULL argument");
	*ptr = NULL;
	if (bytes == 0)
		return FZ_OK;
	fz_status s = rt_push(ctx, ctx->err);
	if (s != FZ_OK)
		return s;
	CUdeviceptr d = 0;
	CUresult r = CU(cuMemAlloc)(&d, bytes);
	rt_pop();
	if (r != CUDA_SUCCESS)
		return rt_fail_cu(ctx->err, r, "fz_device_alloc (cuMemAlloc)");
	*ptr = (void *)(uintptr_t)d;
	return FZ_OK;
}

void fz_device_free(fz_context *ctx, void *ptr)
{
	if (!ctx || !ptr || rt_push(ctx, NULL) != FZ_OK)
		return;
	CU(cuMemFree)((CUdeviceptr)(uintptr_t)ptr);
	rt_pop();
}

static fz_status copy(fz_context *ctx, void *dst, const void *src, size_t bytes, bool to_device)
{
	if (!ctx || ((!dst || !src) && bytes))
		return rt_fail(ctx ? ctx->err : NULL, FZ_ERR_ARGUMENT, "fz_copy_to_%s: NULL argument",
		               to_device ? "device" : "host");
	if (bytes == 0)
		return FZ_OK;
	fz_status s = rt_push(ctx, ctx->err);
	if (s != FZ_OK)
		return s;
	CUresult r = to_device ? CU(cuMemcpyHtoDAsync)((CUdeviceptr)(uintptr_t)dst, src, bytes, NULL)
	                       : CU(cuMemcpyDtoHAsync)(dst, (CUdeviceptr)(uintptr_t)src, bytes, NULL);
	if (r == CUDA_SUCCESS)
		r = CU(cuStreamSynchronize)(NULL);
	rt_pop();
	if (r != CUDA_SUCCESS)
		return rt_fail_cu(ctx->err, r, to_device ? "fz_copy_to_device" : "fz_copy_to_host");
	return FZ_OK;
}

fz_status fz_copy_to_device(fz_context *ctx, void *dst, const void *src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, true);
}

fz_status fz_copy_to_host(fz_context *ctx, void *dst, const void *src, size_t bytes)
{
	return copy(ctx, dst, src, bytes, false);
}

/* ---- programs --------------------------------------------------------------------------- */

fz_compile_options fz_compile_options_default(void)
{
	fz_compile_options o = {.fuse = 1, .disk_cache = 1};
	return o;
}

/* Copy as much of src as fits (messages may be long NVRTC logs). */
static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* A failure without a source location, as a diagnostic. */
static void diag_plain(fz_diag *d, const char *file, const char *msg)
{
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	copy_str(d->file, sizeof d->file, file);
	copy_str(d->message, sizeof d->message, msg);
	copy_str(d->rendered, sizeof d->rendered, msg);
	size_t n = strlen(d->rendered);
	if (n + 1 < sizeof d->rendered && (n == 0 || d->rendered[n - 1] != '\n'))
		memcpy(d->rendered + n, "\n", 2);
}

fz_status fz_program_compile(fz_context *ctx, const char *name, const char *src, size_t len,
                             const fz_compile_options *opt, fz_program **out, fz_diag *diag)
{
	if (diag)
		memset(diag, 0, sizeof *diag);
	if (!name)
		name = "<string>";
	if (!out || (!src && len)) {
		fz_status s = rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_compile: %s is NULL", out ? "src" : "out");
		diag_plain(diag, name, last_error);
		return s;
	}
	*out = NULL;
	fz_program *p = calloc(1, sizeof *p);
	Compilation *c = NULL;
	if (p) {
		p->opt = opt ? *opt : fz_compile_options_default();
		PipeOptions po = pipe_default_options();
		po.fuse = p->opt.fuse != 0;
		c = pipe_new(name, src ? src : "", len, &po);
	}
	if (!c) {
		free(p);
		rt_fail(NULL, FZ_ERR_NOMEM, "out of memory");
		diag_plain(diag, name, last_error);
		return FZ_ERR_NOMEM;
	}
	p->c = c;
	fz_status s = pipe_run(c);
	if (s != FZ_OK) {
		rt_fail(NULL, s, "%s", c->diag_text ? c->diag_text : fz_status_string(s));
		if (diag && s == FZ_ERR_PROGRAM)
			diag_to_public(&c->src, &c->diag, c->diag_text, diag);
		else
			diag_plain(diag, name, last_error);
		fz_program_destroy(p);
		return s;
	}
	if (ctx && (s = rt_jit_bind(ctx, p, ctx->err)) != FZ_OK) {
		diag_plain(diag, name, last_error);
		fz_program_destroy(p);
		return s;
	}
	*out = p;
	return FZ_OK;
}

/* A program file into malloc'ed memory (fileio.h: only a regular file,
 * opened without blocking; reading stops past twice the source limit, which
 * the pipeline then reports). */
static fz_status read_file(const char *path, char **text, size_t *len)
{
	char err[RT_ERR_MAX];
	*text = file_read_source(path, len, err, sizeof err);
	if (!*text)
		return rt_fail(NULL, strstr(err, ": out of memory") ? FZ_ERR_NOMEM : FZ_ERR_IO, "%s", err);
	return FZ_OK;
}

fz_status fz_program_compile_file(fz_context *ctx, const char *path, const fz_compile_options *opt,
                                  fz_program **out, fz_diag *diag)
{
	if (diag)
		memset(diag, 0, sizeof *diag);
	if (out)
		*out = NULL;
	if (!path || !out) {
		fz_status s = rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_compile_file: NULL argument");
		diag_plain(diag, path ? path : "", last_error);
		return s;
	}
	char *text = NULL;
	size_t len = 0;
	fz_status s = read_file(path, &text, &len);
	if (s != FZ_OK) {
		diag_plain(diag, path, last_error);
		return s;
	}
	s = fz_program_compile(ctx, path, text, len, opt, out, diag);
	free(text);
	return s;
}

void fz_program_destroy(fz_program *p)
{
	if (!p)
		return;
	rt_jit_release(p);
	pipe_free(p->c);
	free(p);
}

const char *fz_program_error(const fz_program *p) { return p ? p->err : ""; }
const char *fz_program_name(const fz_program *p) { return p ? p->c->graph.name : ""; }
const char *fz_program_cuda_source(const fz_program *p) { return p && p->c->module.source ? p->c->module.source : ""; }
int fz_program_num_kernels(const fz_program *p) { return p ? p->c->plan.nkernels : 0; }
int fz_program_num_inputs(const fz_program *p) { return p ? p->c->graph.ninputs : 0; }
int fz_program_num_outputs(const fz_program *p) { return p ? p->c->graph.noutputs : 0; }
int fz_program_num_dims(const fz_program *p) { return p ? p->c->graph.ndims : 0; }

const char *fz_program_dim_name(const fz_program *p, int k)
{
	return p && k >= 0 && k < p->c->graph.ndims ? p->c->graph.dims[k] : NULL;
}

static void tensor_info(const Graph *g, const char *name, NodeId id, fz_tensor_info *out)
{
	const Node *n = &g->nodes[id];
	memset(out, 0, sizeof *out);
	out->name = name;
	out->dtype = (fz_dtype)n->dtype;
	out->rank = n->rank;
	for (int k = 0; k < n->rank; k++) {
		out->shape[k] = n->shape[k];
		out->dim_names[k] = dim_is_sym(n->shape[k]) ? g->dims[dim_sym(n->shape[k])] : NULL;
	}
}

_Static_assert(FZ_TENSOR_MAX_RANK == FZ_MAX_RANK, "the public rank limit is the compiler's");

fz_status fz_program_input(const fz_program *p, int i, fz_tensor_info *out)
{
	if (!p || !out)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_input: NULL argument");
	const Graph *g = &p->c->graph;
	if (i < 0 || i >= g->ninputs)
		return rt_fail((char *)p->err, FZ_ERR_ARGUMENT, "input %d does not exist: '%s' has %d input%s", i,
		               g->name, g->ninputs, g->ninputs == 1 ? "" : "s");
	tensor_info(g, g->inputs[i].name, g->inputs[i].node, out);
	return FZ_OK;
}

fz_status fz_program_output(const fz_program *p, int i, fz_tensor_info *out)
{
	if (!p || !out)
		return rt_fail(NULL, FZ_ERR_ARGUMENT, "fz_program_output: NULL argument");
	const Graph *g = &p->c->graph;
	if (i < 0 || i >= g->noutputs)
		return rt_fail((char *)p->err, FZ_ERR_ARGUMENT, "output %d does not exist: '%s' has %d output%s", i,
		               g->name, g->noutputs, g->noutputs == 1 ? "" : "s");
	tensor_info(g, g->outputs[i].name, g->outputs[i].node, out);
	return FZ_OK;
}

int fz_program_find_input(const fz_program *p, const char *name)
{
	for (int i = 0; p && name && i < p->c->graph.ninputs; i++)
		if (strcmp(p->c->graph.inputs[i].name, name) == 0)
			return i;
	return -1;
}

int fz_program_find_output(const fz_program *p, const char *name)
{
	for (int i = 0; p && name && i < p->c->graph.noutputs; i++)
		if (strcmp(p->c->graph.outputs[i].name, name) == 0)
			return i;
	return -1;
}
