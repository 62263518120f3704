/*
 * fakecuda.c: a stand-in for libcuda.so.1 (loaded through FUSEC_CUDA_LIBRARY)
 * so that the Python package's device path runs on a machine without a GPU:
 * one device, contexts and modules as handles, device memory as host
 * memory (copies and memsets really copy), and launches that run nothing
 * but are counted with their stream. Tests read the counters through
 * fake_cuda_launches. What the kernels compute is the GPU tests' business;
 * this checks everything around a launch (tests/python/fake_driver_check.py).
 * An entry point added to runtime/driver.h's table needs a stub here: the
 * test fails saying which one is missing.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local CUcontext current;
static int primary = 1, module = 1, function = 1, stream_tag = 1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long launches;
static CUstream last_stream;

/* Launches so far, and the stream of the last one. */
long fake_cuda_launches(CUstream *stream)
{
	pthread_mutex_lock(&mu);
	long n = launches;
	if (stream)
		*stream = last_stream;
	pthread_mutex_unlock(&mu);
	return n;
}

static void count(CUstream s)
{
	pthread_mutex_lock(&mu);
	launches++;
	last_stream = s;
	pthread_mutex_unlock(&mu);
}

static CUresult getErrorName(CUresult r, const char **s) { *s = r ? "CUDA_ERROR_FAKE" : "CUDA_SUCCESS"; return 0; }
static CUresult getErrorString(CUresult r, const char **s) { *s = r ? "fake error" : "no error"; return 0; }
static CUresult init(unsigned f) { return CUDA_SUCCESS; }
static CUresult driverGetVersion(int *v) { *v = 12040; return 0; }
static CUresult deviceGetCount(int *n) { *n = 1; return 0; }
static CUresult deviceGet(CUdevice *d, int o) { *d = o; return o == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
static CUresult deviceGetName(char *s, int n, CUdevice d) { strncpy(s, "fake GPU", (size_t)n); return 0; }

static CUresult deviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
	default: *v = 0; break;
	}
	return 0;
}

static CUresult primaryRetain(CUcontext *c, CUdevice d) { *c = (CUcontext)&primary; return 0; }
static CUresult primaryRelease(CUdevice d) { return 0; }
static CUresult ctxGetCurrent(CUcontext *c) { *c = current; return 0; }
static CUresult ctxPush(CUcontext c) { current = c; return 0; }
static CUresult ctxPop(CUcontext *c) { *c = current; current = NULL; return 0; }
static CUresult moduleLoadData(CUmodule *m, const void *image) { *m = (CUmodule)&module; return 0; }
static CUresult moduleUnload(CUmodule m) { return 0; }
static CUresult moduleGetFunction(CUfunction *f, CUmodule m, const char *n) { *f = (CUfunction)&function; return 0; }
static CUresult funcSetAttribute(CUfunction f, CUfunction_attribute a, int v) { return 0; }
static CUresult occupancy(int *n, CUfunction f, int b, size_t s) { *n = 4; return 0; }

static CUresult memAlloc(CUdeviceptr *p, size_t n)
{
	void *m = aligned_alloc(256, (n + 255) / 256 * 256);
	*p = (CUdeviceptr)(uintptr_t)m;
	return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult memFree(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }
static CUresult memAllocAsync(CUdeviceptr *p, size_t n, CUstream s) { return memAlloc(p, n); }
static CUresult memFreeAsync(CUdeviceptr p, CUstream s) { return memFree(p); }
static CUresult memsetD8(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { memset((void *)(uintptr_t)p, v, n); return 0; }
static CUresult htod(CUdeviceptr d, const void *h, size_t n, CUstream s) { memcpy((void *)(uintptr_t)d, h, n); return 0; }
static CUresult dtoh(void *h, CUdeviceptr d, size_t n, CUstream s) { memcpy(h, (void *)(uintptr_t)d, n); return 0; }
static CUresult dtod(CUdeviceptr d, CUdeviceptr s_, size_t n, CUstream s) { memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s_, n); return 0; }

static CUresult pointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	if (a != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
		return CUDA_ERROR_NOT_SUPPORTED;
	*(int *)data = 0; /* the one device */
	return 0;
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, CUstream s, void **params, void **extra)
{
	count(s);
	return 0;
}

static CUresult launchEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	count(c->hStream);
	return 0;
}

static CUresult streamCreate(CUstream *s, unsigned f) { *s = (CUstream)&stream_tag; return 0; }
static CUresult streamDestroy(CUstream s) { return 0; }
static CUresult streamSynchronize(CUstream s) { return 0; }
static CUresult eventCreate(CUevent *e, unsigned f) { *e = (CUevent)&stream_tag; return 0; }
static CUresult eventRecord(CUevent e, CUstream s) { return 0; }
static CUresult eventElapsed(float *ms, CUevent a, CUevent b) { *ms = 0; return 0; }
static CUresult eventDestroy(CUevent e) { return 0; }
/* graphs are not faked: capture fails, and the runtime launches kernel by kernel */
static CUresult beginCapture(CUstream s, CUstreamCaptureMode m) { return CUDA_ERROR_NOT_SUPPORTED; }
static CUresult endCapture(CUstream s, CUgraph *g) { *g = NULL; return CUDA_ERROR_NOT_SUPPORTED; }
static CUresult isCapturing(CUstream s, CUstreamCaptureStatus *st) { *st = CU_STREAM_CAPTURE_STATUS_NONE; return 0; }
static CUresult exchangeCaptureMode(CUstreamCaptureMode *m) { *m = CU_STREAM_CAPTURE_MODE_GLOBAL; return 0; }
static CUresult graphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long f) { return CUDA_ERROR_NOT_SUPPORTED; }
static CUresult graphLaunch(CUgraphExec e, CUstream s) { return CUDA_ERROR_NOT_SUPPORTED; }
static CUresult graphExecDestroy(CUgraphExec e) { return 0; }
static CUresult graphDestroy(CUgraph g) { return 0; }

static const struct {
	const char *name;
	void *fn;
} table[] = {
	{"cuGetErrorName", (void *)getErrorName}, {"cuGetErrorString", (void *)getErrorString},
	{"cuInit", (void *)init}, {"cuDriverGetVersion", (void *)driverGetVersion},
	{"cuDeviceGetCount", (void *)deviceGetCount}, {"cuDeviceGet", (void *)deviceGet},
	{"cuDeviceGetName", (void *)deviceGetName}, {"cuDeviceGetAttribute", (void *)deviceGetAttribute},
	{"cuDevicePrimaryCtxRetain", (void *)primaryRetain}, {"cuDevicePrimaryCtxRelease", (void *)primaryRelease},
	{"cuCtxGetCurrent", (void *)ctxGetCurrent}, {"cuCtxPushCurrent", (void *)ctxPush},
	{"cuCtxPopCurrent", (void *)ctxPop}, {"cuModuleLoadData", (void *)moduleLoadData},
	{"cuModuleUnload", (void *)moduleUnload}, {"cuModuleGetFunction", (void *)moduleGetFunction},
	{"cuFuncSetAttribute", (void *)funcSetAttribute},
	{"cuOccupancyMaxActiveBlocksPerMultiprocessor", (void *)occupancy}, {"cuMemAlloc", (void *)memAlloc},
	{"cuMemFree", (void *)memFree}, {"cuMemAllocAsync", (void *)memAllocAsync},
	{"cuMemFreeAsync", (void *)memFreeAsync}, {"cuMemsetD8Async", (void *)memsetD8}, {"cuMemcpyHtoDAsync", (void *)htod},
	{"cuMemcpyDtoHAsync", (void *)dtoh}, {"cuMemcpyDtoDAsync", (void *)dtod}, {"cuLaunchKernel", (void *)launch},
	{"cuLaunchKernelEx", (void *)launchEx}, {"cuStreamCreate", (void *)streamCreate},
	{"cuStreamDestroy", (void *)streamDestroy}, {"cuStreamSynchronize", (void *)streamSynchronize},
	{"cuEventCreate", (void *)eventCreate}, {"cuEventRecord", (void *)eventRecord},
	{"cuEventElapsedTime", (void *)eventElapsed}, {"cuEventDestroy", (void *)eventDestroy},
	{"cuStreamBeginCapture", (void *)beginCapture}, {"cuStreamEndCapture", (void *)endCapture},
	{"cuStreamIsCapturing", (void *)isCapturing},
	{"cuThreadExchangeStreamCaptureMode", (void *)exchangeCaptureMode},
	{"cuGraphInstantiateWithFlags", (void *)graphInstantiate},
	{"cuGraphLaunch", (void *)graphLaunch}, {"cuGraphExecDestroy", (void *)graphExecDestroy},
	{"cuGraphDestroy", (void *)graphDestroy}, {"cuPointerGetAttribute", (void *)pointerGetAttribute},
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (strcmp(table[i].name, symbol) == 0) {
			*pfn = table[i].fn;
			if (status)
				*status = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	}
	*pfn = NULL;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}
