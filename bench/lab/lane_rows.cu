// bench/lab/lane_rows.cu: rows of a few hundred elements whose width is not
// a multiple of the vector, for bench/cubin_lab.py (bench/lab/lane_rows.json).
// A group of G lanes a row (G <= 32: one warp holds 32 / G rows), each lane
// K elements of it, element j = lane + G k: one element per access, so that
// a group's access is coalesced whatever the row's alignment, and which
// elements lie in the row is the same for every row (hoisted out of the loop
// over rows), where chunks of a vector starting at each row's alignment mask
// their ends row by row. Column operands (w, b) are loaded once per thread
// and held across its rows. Every kernel takes (x, y, w, b, eps, rows, n).
//
//   nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/lane_rows.cu -o build/lane_rows.cubin
//   PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \
//       python3 bench/cubin_lab.py --cubin build/lane_rows.cubin bench/lab/lane_rows.json
//
// Timed on the H200 on 2026-11-30 (docs/performance.md, "Rows of a few
// hundred elements, not aligned: a warp a row"): the design of the register
// path's lane class (`_reg<K>l`, row_reg.c).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <class T> __device__ __forceinline__ float ld(T v);
template <> __device__ __forceinline__ float ld(float v) { return v; }
template <> __device__ __forceinline__ float ld(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float ld(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T st(float v);
template <> __device__ __forceinline__ float st(float v) { return v; }
template <> __device__ __forceinline__ __half st(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 st(float v) { return __float2bfloat16_rn(v); }

template <int G> __device__ __forceinline__ float gsum(float a)
{
#pragma unroll
	for (int o = G / 2; o > 0; o /= 2)
		a += __shfl_xor_sync(0xffffffffu, a, o);
	return a;
}
template <int G> __device__ __forceinline__ float gmax(float a)
{
#pragma unroll
	for (int o = G / 2; o > 0; o /= 2)
		a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
	return a;
}

// blockDim.x = 32 (a warp), blockDim.y warps; lane / G picks the warp's row.
template <class T, int K, int G>
__device__ void softmax_lane(const T *__restrict__ x, T *__restrict__ y, long long rows, int n)
{
	const int lane = threadIdx.x % G, sub = threadIdx.x / G;
	const int per = blockDim.y * (32 / G);
	bool in[K];
#pragma unroll
	for (int k = 0; k < K; k++)
		in[k] = lane + G * k < n;
	for (long long r0 = (long long)blockIdx.x * per; r0 < rows; r0 += (long long)gridDim.x * per) {
		const long long row = r0 + threadIdx.y * (32 / G) + sub;
		const bool act = row < rows;
		const long long rr = act ? row : rows - 1;
		const T *p = x + rr * n + lane;
		float v[K], m = -INFINITY;
#pragma unroll
		for (int k = 0; k < K; k++) {
			v[k] = in[k] ? ld(p[G * k]) : -INFINITY;
			m = fmaxf(m, v[k]);
		}
		m = gmax<G>(m);
		float s = 0.f;
#pragma unroll
		for (int k = 0; k < K; k++) {
			v[k] = expf(v[k] - m);
			s += v[k];
		}
		s = gsum<G>(s);
		const float rs = 1.f / s;
		T *q = y + rr * n + lane;
#pragma unroll
		for (int k = 0; k < K; k++)
			if (act && in[k])
				q[G * k] = st<T>(v[k] * rs);
	}
}

template <class T, int K, int G>
__device__ void layernorm_lane(const T *__restrict__ x, T *__restrict__ y, const T *__restrict__ w,
                               const T *__restrict__ b, float eps, long long rows, int n)
{
	const int lane = threadIdx.x % G, sub = threadIdx.x / G;
	const int per = blockDim.y * (32 / G);
	bool in[K];
	float wv[K], bv[K];
#pragma unroll
	for (int k = 0; k < K; k++) {
		in[k] = lane + G * k < n;
		wv[k] = in[k] ? ld(w[lane + G * k]) : 0.f;
		bv[k] = in[k] ? ld(b[lane + G * k]) : 0.f;
	}
	const float inv = 1.f / n;
	for (long long r0 = (long long)blockIdx.x * per; r0 < rows; r0 += (long long)gridDim.x * per) {
		const long long row = r0 + threadIdx.y * (32 / G) + sub;
		const bool act = row < rows;
		const long long rr = act ? row : rows - 1;
		const T *p = x + rr * n + lane;
		float v[K], s = 0.f;
#pragma unroll
		for (int k = 0; k < K; k++) {
			v[k] = in[k] ? ld(p[G * k]) : 0.f;
			s += v[k];
		}
		const float mu = gsum<G>(s) * inv;
		float q = 0.f;
#pragma unroll
		for (int k = 0; k < K; k++) {
			v[k] -= mu;
			q += in[k] ? v[k] * v[k] : 0.f;
		}
		const float rstd = rsqrtf(gsum<G>(q) * inv + eps);
		T *o = y + rr * n + lane;
#pragma unroll
		for (int k = 0; k < K; k++)
			if (act && in[k])
				o[G * k] = st<T>(v[k] * rstd * wv[k] + bv[k]);
	}
}

#define ARGS(T) const T *x, T *y, const T *w, const T *b, float eps, long long rows, int n
#define SM(NAME, T, K, G) \
	extern "C" __global__ void __launch_bounds__(256) NAME(ARGS(T)) { softmax_lane<T, K, G>(x, y, rows, n); }
#define LN(NAME, T, K, G) \
	extern "C" __global__ void __launch_bounds__(256) NAME(ARGS(T)) { layernorm_lane<T, K, G>(x, y, w, b, eps, rows, n); }

SM(sm_f32_5x32, float, 5, 32)
SM(sm_f32_9x16, float, 9, 16)
SM(sm_f32_8x32, float, 8, 32)
SM(sm_f32_10x32, float, 10, 32)
SM(sm_f32_16x32, float, 16, 32)
SM(sm_f16_16x32, __half, 16, 32)
SM(sm_bf16_16x32, __nv_bfloat16, 16, 32)
LN(ln_f32_5x32, float, 5, 32)
LN(ln_f32_9x16, float, 9, 16)
LN(ln_f32_10x32, float, 10, 32)
LN(ln_f32_16x32, float, 16, 32)
LN(ln_f16_9x32, __half, 9, 32)
LN(ln_f16_16x32, __half, 16, 32)
LN(ln_bf16_16x32, __nv_bfloat16, 16, 32)
