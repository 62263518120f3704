/*
 * driver.h: the CUDA driver API, loaded at run time.
 *
 * Nothing links libcuda: rt_driver_load dlopens libcuda.so.1 (or the file
 * named by FUSEC_CUDA_LIBRARY, which tests use to force a missing driver),
 * takes only cuGetProcAddress with dlsym and asks it for every other entry
 * point by name and by the ABI version whose typedef we call through (as
 * NCCL's cudawrap does), so a newer driver keeps giving us the signatures we
 * were compiled against. It happens once per process (pthread_once); the
 * outcome, success or the one sentence saying why not, is kept.
 *
 * cuda.h is used for its types only. Call sites write CU(cuMemAlloc)(...),
 * which reads the pointer out of rt_cu.
 */
#ifndef FUSEC_RT_DRIVER_H
#define FUSEC_RT_DRIVER_H

#include <cudaTypedefs.h>

#include "common.h"

/*   entry point             ABI version (the PFN_<name>_v<version> typedef) */
#define RT_CU_FUNCS(X)                  \
	X(cuGetErrorName, 6000)             \
	X(cuGetErrorString, 6000)           \
	X(cuInit, 2000)                     \
	X(cuDriverGetVersion, 2020)         \
	X(cuDeviceGetCount, 2000)           \
	X(cuDeviceGet, 2000)                \
	X(cuDeviceGetName, 2000)            \
	X(cuDeviceGetAttribute, 2000)       \
	X(cuDevicePrimaryCtxRetain, 7000)   \
	X(cuDevicePrimaryCtxRelease, 11000) \
	X(cuCtxGetCurrent, 4000)            \
	X(cuCtxPushCurrent, 4000)           \
	X(cuCtxPopCurrent, 4000)            \
	X(cuModuleLoadData, 2000)           \
	X(cuModuleUnload, 2000)             \
	X(cuModuleGetFunction, 2000)        \
	X(cuFuncSetAttribute, 9000)         \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
	X(cuMemAlloc, 3020)                 \
	X(cuMemFree, 3020)                  \
	X(cuMemAllocAsync, 11020)           \
	X(cuMemFreeAsync, 11020)            \
	X(cuMemsetD8Async, 3020)            \
	X(cuMemcpyHtoDAsync, 3020)          \
	X(cuMemcpyDtoHAsync, 3020)          \
	X(cuMemcpyDtoDAsync, 3020)          \
	X(cuLaunchKernel, 4000)             \
	X(cuLaunchKernelEx, 11060)          \
	X(cuStreamCreate, 2000)             \
	X(cuStreamDestroy, 4000)            \
	X(cuStreamSynchronize, 2000)        \
	X(cuEventCreate, 2000)              \
	X(cuEventRecord, 2000)              \
	X(cuEventElapsedTime, 2000)         \
	X(cuEventDestroy, 4000)             \
	X(cuStreamBeginCapture, 10010)      \
	X(cuStreamEndCapture, 10000)        \
	X(cuStreamIsCapturing, 10000)       \
	X(cuThreadExchangeStreamCaptureMode, 10010) \
	X(cuGraphInstantiateWithFlags, 11040) \
	X(cuGraphLaunch, 10000)             \
	X(cuGraphExecDestroy, 10000)        \
	X(cuGraphDestroy, 10000)              \
	X(cuPointerGetAttribute, 4000)

typedef struct RtCu {
#define RT_CU_FIELD(name, ver) PFN_##name##_v##ver name##_;
	RT_CU_FUNCS(RT_CU_FIELD)
#undef RT_CU_FIELD
} RtCu;

extern RtCu rt_cu;
#define CU(name) (rt_cu.name##_)

/* Load the driver (once per process). FZ_OK, or FZ_ERR_NO_DRIVER with a
 * sentence in *msg ("no CUDA driver: libcuda.so.1 could not be loaded (...)").
 * Thread-safe. */
fz_status rt_driver_load(const char **msg);

/* Tests: use `table` (a fake driver that counts calls, say) instead of
 * loading libcuda. Must come before anything loads the driver; false if
 * something already did. */
bool rt_driver_install(const RtCu *table);

/* cuMemAlloc and cuModuleLoadData that a caller's stream capture survives.
 * A run allocates its scratch and loads its kernels at its first launch at
 * new sizes, and that launch may be the first on a stream someone is
 * capturing (the Python package keeps a run per stream, so under
 * torch.cuda.graph it is). Under a capture begun in the global or
 * thread-local mode (torch's default) such calls are prohibited and end the
 * capture in an error; the driver lets a library switch its thread to the
 * relaxed mode for them (cuThreadExchangeStreamCaptureMode), as PyTorch's
 * own allocator does. What they make belongs to the run or the context and
 * outlives the graph's replays. */
CUresult rt_mem_alloc(CUdeviceptr *p, size_t bytes);
CUresult rt_module_load(CUmodule *mod, const void *image);

/* The status a failed driver call maps to (out of memory, no device, ...). */
fz_status rt_cu_status(CUresult r);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" into buf; returns buf. */
const char *rt_cu_error(CUresult r, char *buf, size_t n);

#endif
