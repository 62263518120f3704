/*
 * driver.c: loading libcuda at run time (see driver.h).
 *
 * Only cuGetProcAddress is taken with dlsym: the _v2 form (driver 12.0+)
 * reports whether a symbol was found at the version we asked, the older
 * form (11.3+) is the fallback. Every entry point in RT_CU_FUNCS is then
 * requested at the ABI version of the typedef we call it through. A missing
 * entry point means the driver is too old, which we report as no driver.
 * The library handle is never closed: the pointers must stay valid.
 */
#include "runtime/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

RtCu rt_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static fz_status load_status;
static char load_msg[768];
static const RtCu *installed; /* rt_driver_install's table */

typedef struct ProcLookup {
	PFN_cuGetProcAddress_v12000 v2; /* preferred */
	PFN_cuGetProcAddress_v11030 v1;
} ProcLookup;

static bool lookup(const ProcLookup *pl, const char *sym, int version, void **fn)
{
	CUresult r;
	*fn = NULL;
	if (pl->v2) {
		CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		r = pl->v2(sym, fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
		return r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && *fn;
	}
	r = pl->v1(sym, fn, version, CU_GET_PROC_ADDRESS_DEFAULT);
	return r == CUDA_SUCCESS && *fn;
}

static void fail(const char *fmt, const char *a, const char *b)
{
	load_status = FZ_ERR_NO_DRIVER;
	snprintf(load_msg, sizeof load_msg, fmt, a, b);
}

static void load(void)
{
	if (installed) {
		rt_cu = *installed;
		load_status = FZ_OK;
		return;
	}
	const char *lib = getenv("FUSEC_CUDA_LIBRARY");
	if (!lib || !*lib)
		lib = "libcuda.so.1";
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		fail("no CUDA driver: %s could not be loaded (%s)", lib, why ? why : "unknown reason");
		return;
	}
	ProcLookup pl = {0};
	*(void **)&pl.v2 = dlsym(h, "cuGetProcAddress_v2");
	if (!pl.v2)
		*(void **)&pl.v1 = dlsym(h, "cuGetProcAddress");
	if (!pl.v2 && !pl.v1) {
		fail("no CUDA driver: %s has no %s (fusec needs a driver for CUDA 11.3 or newer)", lib,
		     "cuGetProcAddress");
		return;
	}
#define RT_CU_GET(name, ver)                                               \
	if (!lookup(&pl, #name, ver, (void **)&rt_cu.name##_)) {               \
		fail("no CUDA driver: %s does not provide %s (the driver is too old)", lib, #name); \
		return;                                                            \
	}
	RT_CU_FUNCS(RT_CU_GET)
#undef RT_CU_GET
	load_status = FZ_OK;
}

fz_status rt_driver_load(const char **msg)
{
	pthread_once(&load_once, load);
	if (msg)
		*msg = load_status == FZ_OK ? "" : load_msg;
	return load_status;
}

bool rt_driver_install(const RtCu *table)
{
	installed = table;
	pthread_once(&load_once, load);
	return load_status == FZ_OK && rt_cu.cuInit_ == table->cuInit_;
}

fz_status rt_cu_status(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return FZ_OK;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return FZ_ERR_DEVICE_MEMORY;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_DEVICE_UNAVAILABLE:
		return FZ_ERR_NO_DEVICE;
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		return FZ_ERR_NO_DRIVER;
	default:
		return FZ_ERR_CUDA;
	}
}

const char *rt_cu_error(CUresult r, char *buf, size_t n)
{
	const char *name = NULL, *text = NULL;
	if (rt_driver_load(NULL) == FZ_OK) {
		CU(cuGetErrorName)(r, &name);
		CU(cuGetErrorString)(r, &text);
	}
	if (name && text)
		snprintf(buf, n, "%s: %s", name, text);
	else
		snprintf(buf, n, "CUDA error %d", (int)r);
	return buf;
}

/* The thread in the relaxed capture mode; *saved gets the mode it had. */
static bool relax(CUstreamCaptureMode *saved)
{
	*saved = CU_STREAM_CAPTURE_MODE_RELAXED;
	return CU(cuThreadExchangeStreamCaptureMode)(saved) == CUDA_SUCCESS;
}

static void restore(bool relaxed, CUstreamCaptureMode saved)
{
	if (relaxed)
		CU(cuThreadExchangeStreamCaptureMode)(&saved);
}

CUresult rt_mem_alloc(CUdeviceptr *p, size_t bytes)
{
	CUstreamCaptureMode saved;
	bool relaxed = relax(&saved);
	CUresult r = CU(cuMemAlloc)(p, bytes);
	restore(relaxed, saved);
	return r;
}

CUresult rt_module_load(CUmodule *mod, const void *image)
{
	CUstreamCaptureMode saved;
	bool relaxed = relax(&saved);
	CUresult r = CU(cuModuleLoadData)(mod, image);
	restore(relaxed, saved);
	return r;
}
