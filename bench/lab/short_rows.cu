// bench/lab/short_rows.cu: hand-written kernels of short rows for
// bench/cubin_lab.py (bench/lab/short_rows.json), the designs timed before
// the direct entries of the staged path were written (docs/performance.md,
// "A thread a row"). Every kernel takes (x, y, w, b, eps, rows, n): rows of
// n <= NMAX elements of x, w and b of n (or null), y the output.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define NEG_INF (-__int_as_float(0x7f800000))

template <class T> __device__ __forceinline__ float ld(T v);
template <> __device__ __forceinline__ float ld(float v) { return v; }
template <> __device__ __forceinline__ float ld(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T st(float v);
template <> __device__ __forceinline__ float st(float v) { return v; }
template <> __device__ __forceinline__ __half st(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 st(float v) { return __float2bfloat16_rn(v); }

// The row's computation on v[0 .. n-1] (NMAX registers, the rest dead).
struct Softmax {
	template <int NMAX> __device__ void f(float *v, int n, const float *, const float *, float)
	{
		float m = NEG_INF, s = 0.f;
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			m = j < n ? fmaxf(m, v[j]) : m;
#pragma unroll
		for (int j = 0; j < NMAX; j++) {
			v[j] = expf(v[j] - m);
			s += j < n ? v[j] : 0.f;
		}
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			v[j] = v[j] / s;
	}
};
struct Layernorm {
	template <int NMAX> __device__ void f(float *v, int n, const float *w, const float *b, float eps)
	{
		float s = 0.f, q = 0.f;
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			s += j < n ? v[j] : 0.f;
		const float mu = s / n;
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			q += j < n ? (v[j] - mu) * (v[j] - mu) : 0.f;
		const float r = rsqrtf(q / n + eps);
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			v[j] = (v[j] - mu) * r * w[j] + b[j];
	}
};
struct Rmsnorm {
	template <int NMAX> __device__ void f(float *v, int n, const float *w, const float *, float eps)
	{
		float q = 0.f;
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			q += j < n ? v[j] * v[j] : 0.f;
		const float r = rsqrtf(q / n + eps);
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			v[j] = v[j] * r * w[j];
	}
};

__device__ __forceinline__ float logsumexp(const float *v, int n, int nmax)
{
	float m = NEG_INF, s = 0.f;
	for (int j = 0; j < nmax; j++)
		m = j < n ? fmaxf(m, v[j]) : m;
	for (int j = 0; j < nmax; j++)
		s += j < n ? expf(v[j] - m) : 0.f;
	return m + logf(s);
}

// A thread a row, R rows a thread (a block's rows interleaved by thread),
// its loads straight from global memory, one output a row (logsumexp).
template <int R, int NMAX>
__device__ void lse_thread(const float *__restrict__ x, float *__restrict__ y, long long rows, int n)
{
	const long long base = (long long)blockIdx.x * blockDim.x * R + threadIdx.x;
	float v[R][NMAX];
#pragma unroll
	for (int r = 0; r < R; r++) {
		const long long row = base + (long long)r * blockDim.x;
		const float *p = x + row * n;
#pragma unroll
		for (int j = 0; j < NMAX; j++)
			v[r][j] = row < rows && j < n ? p[j] : 0.f;
	}
#pragma unroll
	for (int r = 0; r < R; r++) {
		const long long row = base + (long long)r * blockDim.x;
		if (row < rows)
			y[row] = logsumexp(v[r], n, NMAX);
	}
}

// A warp stages its 32 * R rows in shared memory by 16-byte loads (a span
// that starts 16-byte aligned: the rows before it are a multiple of 32),
// then a lane a row.
template <int R, int NMAX>
__device__ void lse_warp(const float *__restrict__ x, float *__restrict__ y, long long rows, int n)
{
	extern __shared__ float4 smem4[];
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	float *s = reinterpret_cast<float *>(smem4) + w * 32 * R * NMAX;
	const long long row0 = ((long long)blockIdx.x * (blockDim.x >> 5) + w) * 32 * R;
	if (row0 >= rows)
		return;
	const long long mine = rows - row0 < 32 * R ? rows - row0 : 32 * R;
	const long long e0 = row0 * n;
	const int len = (int)(mine * n), n4 = len >> 2;
	const float4 *x4 = reinterpret_cast<const float4 *>(x + e0);
	float4 t[(R * NMAX + 3) / 4];
#pragma unroll
	for (int k = 0; k < (R * NMAX + 3) / 4; k++)
		if (lane + 32 * k < n4)
			t[k] = __ldg(x4 + lane + 32 * k);
#pragma unroll
	for (int k = 0; k < (R * NMAX + 3) / 4; k++)
		if (lane + 32 * k < n4)
			reinterpret_cast<float4 *>(s)[lane + 32 * k] = t[k];
	for (int i = (n4 << 2) + lane; i < len; i += 32)
		s[i] = x[e0 + i];
	__syncwarp();
#pragma unroll
	for (int r = 0; r < R; r++) {
		const int lr = lane + 32 * r;
		if (lr < mine) {
			float v[NMAX];
#pragma unroll
			for (int j = 0; j < NMAX; j++)
				v[j] = j < n ? s[lr * n + j] : 0.f;
			y[row0 + lr] = logsumexp(v, n, NMAX);
		}
	}
}

// A thread a row, its loads straight from global memory; its outputs
// stored by the thread (STAGE 0: 32 partial-sector pieces a warp store) or
// staged in shared memory and stored by the warp as 16-byte vectors of one
// span (STAGE 1: 32 * NMAX elements of T a warp).
template <class T, class Op, int NMAX, int STAGE>
__device__ void rows_thread(const T *__restrict__ x, T *__restrict__ y, const T *__restrict__ wp,
                            const T *__restrict__ bp, float eps, long long rows, int n)
{
	extern __shared__ float4 smem4[];
	const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
	const long long row0 = (long long)blockIdx.x * blockDim.x + wi * 32, row = row0 + lane;
	const bool ok = row < rows;
	float w[NMAX], b[NMAX], v[NMAX];
#pragma unroll
	for (int j = 0; j < NMAX; j++) {
		w[j] = wp && j < n ? ld(wp[j]) : 0.f;
		b[j] = bp && j < n ? ld(bp[j]) : 0.f;
		v[j] = ok && j < n ? ld(x[row * n + j]) : 0.f;
	}
	Op().template f<NMAX>(v, n, w, b, eps);
	if (!STAGE) {
		if (ok)
#pragma unroll
			for (int j = 0; j < NMAX; j++)
				if (j < n)
					y[row * n + j] = st<T>(v[j]);
		return;
	}
	T *s = reinterpret_cast<T *>(smem4) + wi * 32 * NMAX;
#pragma unroll
	for (int j = 0; j < NMAX; j++)
		if (j < n)
			s[lane * n + j] = st<T>(v[j]);
	__syncwarp();
	if (row0 >= rows)
		return;
	const int len = (int)((rows - row0 < 32 ? rows - row0 : 32) * n);
	constexpr int V = 16 / sizeof(T);
	float4 *y4 = reinterpret_cast<float4 *>(y + row0 * n); // row0 * n: a multiple of 32 elements
	for (int i = lane; i < len / V; i += 32)
		y4[i] = reinterpret_cast<const float4 *>(s)[i];
	for (int i = len / V * V + lane; i < len; i += 32)
		y[row0 * n + i] = s[i];
}

#define ARGS(T) const T *__restrict__ x, T *__restrict__ y, const T *__restrict__ w, const T *__restrict__ b, float eps, long long rows, int n
#define LSE(NAME, KIND, R) \
	extern "C" __global__ void __launch_bounds__(256) NAME(ARGS(float)) { KIND<R, 8>(x, y, rows, n); }
#define ROWS(NAME, T, OP, NMAX, STAGE) \
	extern "C" __global__ void __launch_bounds__(256) NAME(ARGS(T)) { rows_thread<T, OP, NMAX, STAGE>(x, y, w, b, eps, rows, n); }

LSE(lse_thread1, lse_thread, 1) LSE(lse_thread2, lse_thread, 2) LSE(lse_thread4, lse_thread, 4)
LSE(lse_thread8, lse_thread, 8)
LSE(lse_warp1, lse_warp, 1) LSE(lse_warp2, lse_warp, 2) LSE(lse_warp4, lse_warp, 4) LSE(lse_warp8, lse_warp, 8)
ROWS(sm_f32_8_own, float, Softmax, 8, 0) ROWS(sm_f32_8, float, Softmax, 8, 1)
ROWS(sm_f32_16, float, Softmax, 16, 1) ROWS(sm_f32_32_own, float, Softmax, 32, 0) ROWS(sm_f32_32, float, Softmax, 32, 1)
ROWS(sm_f16_8_own, __half, Softmax, 8, 0) ROWS(sm_f16_8, __half, Softmax, 8, 1) ROWS(sm_f16_16, __half, Softmax, 16, 1)
ROWS(ln_f32_8_own, float, Layernorm, 8, 0) ROWS(ln_f32_8, float, Layernorm, 8, 1)
ROWS(ln_f32_16, float, Layernorm, 16, 1) ROWS(ln_f32_32, float, Layernorm, 32, 1)
ROWS(rms_bf16_8_own, __nv_bfloat16, Rmsnorm, 8, 0) ROWS(rms_bf16_8, __nv_bfloat16, Rmsnorm, 8, 1)
ROWS(rms_bf16_16, __nv_bfloat16, Rmsnorm, 16, 1)
