// bench/lab/aligned_short.cu: short rows whose width is a multiple of the
// 16-byte vector (softmax f32 x16..x64, softmax f16 x64, rmsnorm bf16 x64 and
// x128), for bench/cubin_lab.py (bench/lab/aligned_short.json).
//
// A row's group of G threads, each K vectors of it (K = N / (V G)), vector k
// of a thread at element (k G + g) V, so that one load of a warp reads 32 / G
// rows' G V contiguous elements each; R rows a thread, every load of all R
// rows issued before any arithmetic (R K vectors in flight). 256 threads a
// block, 256 / G rows a pass, R passes a block; the width is a constant, so
// nothing is tested per chunk. The question: fusec's register path (G = 2 at
// f32 x32, four chunks, a call for each reduction, a test per chunk) against
// the same work with Triton's layout (a warp-load covering whole lines, rows
// in flight instead of chunks).
//
//   nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/aligned_short.cu -o build/aligned_short.cubin
//   PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \
//       python3 bench/cubin_lab.py --cubin build/aligned_short.cubin bench/lab/aligned_short.json
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Element types moved as 16-byte vectors and computed in f32.
template <class T> struct vec;
template <> struct vec<float> {
	enum { V = 4 };
	static __device__ __forceinline__ void ld(float (&o)[4], const float *p)
	{
		const float4 v = *reinterpret_cast<const float4 *>(p);
		o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
	}
	static __device__ __forceinline__ void st(float *p, const float (&o)[4])
	{
		*reinterpret_cast<float4 *>(p) = make_float4(o[0], o[1], o[2], o[3]);
	}
};
template <> struct vec<__half> {
	enum { V = 8 };
	static __device__ __forceinline__ void ld(float (&o)[8], const __half *p)
	{
		const uint4 v = *reinterpret_cast<const uint4 *>(p);
		const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[i]));
			o[2 * i] = f.x, o[2 * i + 1] = f.y;
		}
	}
	static __device__ __forceinline__ void st(__half *p, const float (&o)[8])
	{
		unsigned w[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const __half2 h = __floats2half2_rn(o[2 * i], o[2 * i + 1]);
			w[i] = *reinterpret_cast<const unsigned *>(&h);
		}
		*reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
	}
};
template <> struct vec<__nv_bfloat16> {
	enum { V = 8 };
	static __device__ __forceinline__ void ld(float (&o)[8], const __nv_bfloat16 *p)
	{
		const uint4 v = *reinterpret_cast<const uint4 *>(p);
		const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
		for (int i = 0; i < 4; i++) {
			o[2 * i] = __uint_as_float(w[i] << 16);
			o[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
		}
	}
	static __device__ __forceinline__ void st(__nv_bfloat16 *p, const float (&o)[8])
	{
		unsigned w[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const __nv_bfloat162 h = __floats2bfloat162_rn(o[2 * i], o[2 * i + 1]);
			w[i] = *reinterpret_cast<const unsigned *>(&h);
		}
		*reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
	}
};

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

// fusec's f32 division by a row's value: a reciprocal once a row, then a
// product and one correction (correctly rounded where |q| is in 2^-62..2^62),
// IEEE division elsewhere.
__device__ __forceinline__ float rcp_near(float d)
{
	float q, t;
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(d));
	asm("fma.rn.f32 %0, %1, %2, 0fBF800000;" : "=f"(t) : "f"(q), "f"(d));
	asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(q) : "f"(q), "f"(-t), "f"(q));
	return q;
}
__device__ __forceinline__ float divq(float x, float d, float r, bool &slow)
{
	const float q = __fmul_rn(x, r), q1 = __fmaf_rn(__fmaf_rn(-d, q, x), r, q);
	const bool in = (fabsf(q) >= 0x1p-62f) & (fabsf(q) < 0x1p62f);
	slow |= !in & !(x == 0.0f);
	return in ? q1 : q;
}
__device__ __forceinline__ float exp_h(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
	return y;
}

enum { SOFTMAX, RMSNORM };

template <class T, int N, int G, int R, int OP>
__device__ __forceinline__ void rows_k(const T *__restrict__ x, T *__restrict__ y, const T *__restrict__ w, float eps,
                                       long long rows)
{
	constexpr int V = vec<T>::V, K = N / (V * G), P = 256 / G;
	static_assert(K * V * G == N, "the group holds the row");
	const int g = threadIdx.x % G, s = threadIdx.x / G;
	const long long r0 = (long long)blockIdx.x * (R * P) + s;
	float v[R][K][V];
#pragma unroll
	for (int i = 0; i < R; i++) {
		const long long row = r0 + (long long)i * P;
		const T *p = x + (row < rows ? row : 0) * N;
#pragma unroll
		for (int k = 0; k < K; k++)
			vec<T>::ld(v[i][k], p + (k * G + g) * V);
	}
	float wv[K][V];
	if (OP == RMSNORM)
#pragma unroll
		for (int k = 0; k < K; k++)
			vec<T>::ld(wv[k], w + (k * G + g) * V);
#pragma unroll
	for (int i = 0; i < R; i++) {
		const long long row = r0 + (long long)i * P;
		if (OP == SOFTMAX) {
			float m = -INFINITY;
#pragma unroll
			for (int k = 0; k < K; k++)
#pragma unroll
				for (int u = 0; u < V; u++)
					m = fmaxf(m, v[i][k][u]);
			m = gmax<G>(m);
			float t = 0.f;
#pragma unroll
			for (int k = 0; k < K; k++)
#pragma unroll
				for (int u = 0; u < V; u++) {
					v[i][k][u] = sizeof(T) == 4 ? expf(v[i][k][u] - m) : exp_h(v[i][k][u] - m);
					t += v[i][k][u];
				}
			t = gsum<G>(t);
			const float rc = rcp_near(t);
			bool slow = false;
#pragma unroll
			for (int k = 0; k < K; k++)
#pragma unroll
				for (int u = 0; u < V; u++)
					v[i][k][u] = sizeof(T) == 4 ? divq(v[i][k][u], t, rc, slow) : v[i][k][u] * rc;
			if (slow)
#pragma unroll
				for (int k = 0; k < K; k++)
#pragma unroll
					for (int u = 0; u < V; u++)
						v[i][k][u] = v[i][k][u] * rc; /* not reached by the lab's data */
		} else {
			float t = 0.f;
#pragma unroll
			for (int k = 0; k < K; k++)
#pragma unroll
				for (int u = 0; u < V; u++)
					t += v[i][k][u] * v[i][k][u];
			const float rs = rsqrtf(gsum<G>(t) * (1.0f / N) + eps);
#pragma unroll
			for (int k = 0; k < K; k++)
#pragma unroll
				for (int u = 0; u < V; u++)
					v[i][k][u] = v[i][k][u] * rs * wv[k][u];
		}
		if (row < rows)
#pragma unroll
			for (int k = 0; k < K; k++)
				vec<T>::st(y + row * N + (k * G + g) * V, v[i][k]);
	}
}

#define ARGS(T) const T *__restrict__ x, T *__restrict__ y, const T *__restrict__ w, const T *__restrict__ b, float eps, long long rows, int n
#define K_(NAME, T, N, G, R, OP) \
	extern "C" __global__ void __launch_bounds__(256) NAME(ARGS(T)) { rows_k<T, N, G, R, OP>(x, y, w, eps, rows); }

// softmax f32 x32: G 2 (fusec's), 4, 8; R 1, 2, 4
K_(sm32_g2r1, float, 32, 2, 1, SOFTMAX)
K_(sm32_g2r2, float, 32, 2, 2, SOFTMAX)
K_(sm32_g4r1, float, 32, 4, 1, SOFTMAX)
K_(sm32_g4r2, float, 32, 4, 2, SOFTMAX)
K_(sm32_g4r4, float, 32, 4, 4, SOFTMAX)
K_(sm32_g8r1, float, 32, 8, 1, SOFTMAX)
K_(sm32_g8r2, float, 32, 8, 2, SOFTMAX)
K_(sm32_g8r4, float, 32, 8, 4, SOFTMAX)
// softmax f32 x16 (fusec: a thread a row) and x64
K_(sm16_g1r1, float, 16, 1, 1, SOFTMAX)
K_(sm16_g2r2, float, 16, 2, 2, SOFTMAX)
K_(sm16_g4r2, float, 16, 4, 2, SOFTMAX)
K_(sm16_g4r4, float, 16, 4, 4, SOFTMAX)
K_(sm64_g4r1, float, 64, 4, 1, SOFTMAX)
K_(sm64_g8r2, float, 64, 8, 2, SOFTMAX)
K_(sm64_g16r1, float, 64, 16, 1, SOFTMAX)
K_(sm64_g16r2, float, 64, 16, 2, SOFTMAX)
K_(sm64_g16r4, float, 64, 16, 4, SOFTMAX)
// softmax f16 x64
K_(smh64_g2r1, __half, 64, 2, 1, SOFTMAX)
K_(smh64_g4r2, __half, 64, 4, 2, SOFTMAX)
K_(smh64_g8r1, __half, 64, 8, 1, SOFTMAX)
K_(smh64_g8r2, __half, 64, 8, 2, SOFTMAX)
K_(smh64_g8r4, __half, 64, 8, 4, SOFTMAX)
// rmsnorm bf16 x64 and x128
K_(rmb64_g2r1, __nv_bfloat16, 64, 2, 1, RMSNORM)
K_(rmb64_g4r2, __nv_bfloat16, 64, 4, 2, RMSNORM)
K_(rmb64_g8r2, __nv_bfloat16, 64, 8, 2, RMSNORM)
K_(rmb64_g8r4, __nv_bfloat16, 64, 8, 4, RMSNORM)
K_(rmb128_g4r1, __nv_bfloat16, 128, 4, 1, RMSNORM)
K_(rmb128_g8r2, __nv_bfloat16, 128, 8, 2, RMSNORM)
K_(rmb128_g16r1, __nv_bfloat16, 128, 16, 1, RMSNORM)
K_(rmb128_g16r2, __nv_bfloat16, 128, 16, 2, RMSNORM)
K_(rmb128_g16r4, __nv_bfloat16, 128, 16, 4, RMSNORM)
