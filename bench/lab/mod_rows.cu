// bench/lab/mod_rows.cu: modulated RMSNorm (bench/sweep/modrms_row_bf16.fz,
// y = x * rsqrt(mean(x * x) + eps) * (1 + scale) + shift, bf16, rows a
// multiple of 8) written as a block a row, for bench/cubin_lab.py
// (bench/lab/mod_rows.json), against fusec's aligned register class (a
// grid of resident blocks, each copying its next row into shared memory by
// cp.async while it computes this one) and torch.compile's kernel
// (Inductor's triton_red: a block a row, pass 1 reading x with an L2
// evict_last policy, pass 2 reading x again, scale and shift evict_first).
// Every kernel takes (x, scale, shift, y, eps, rows, n).
//
//   ml_<threads>_h<H>[p]  16-byte loads; H chunks of x held across the
//                         reduction (the rest read again), p: scale and
//                         shift of the held chunks loaded with x in pass 1
//   tl_<threads>_v<V>[_h] V elements a load, a loop over the row in both
//                         passes, registers bound to 2048 threads an SM;
//                         _h: the L2 policies of Inductor's kernel
//
//   nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/mod_rows.cu -o build/mod_rows.cubin
//   PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \
//       python3 bench/cubin_lab.py --cubin build/mod_rows.cubin bench/lab/mod_rows.json
//
// Timed on the H200 on 2026-12-01 (docs/performance.md, "Modulated RMSNorm's
// aligned rows, and resident grids evened: tried, not kept"): none reached
// torch.compile at the five shapes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <class T> __device__ __forceinline__ void ld8(const T *p, float f[8])
{
	uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
	const T *h = reinterpret_cast<const T *>(&u);
#pragma unroll
	for (int i = 0; i < 8; i++)
		f[i] = (float)h[i];
}
template <class T> __device__ __forceinline__ void st8(T *p, const float f[8])
{
	uint4 u;
	T *h = reinterpret_cast<T *>(&u);
#pragma unroll
	for (int i = 0; i < 8; i++)
		h[i] = (T)f[i];
	*reinterpret_cast<uint4 *>(p) = u;
}

template <int THREADS> __device__ __forceinline__ float bsum(float a, float *red)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2)
		a += __shfl_xor_sync(0xffffffffu, a, o);
	if (THREADS == 32)
		return a;
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = a;
	__syncthreads();
	float t = 0.0f;
#pragma unroll
	for (int w = 0; w < THREADS / 32; w++)
		t += red[w];
	return t;
}

// PRE: scale and shift loaded with x in pass 1 (held across the reduction),
// else in the epilogue; HOLD: x's chunks kept (up to HOLD), else re-read.
template <class T, int THREADS, int HOLD, bool PRE>
__device__ void modrms(const T *__restrict__ x, const T *__restrict__ sc, const T *__restrict__ sh, T *__restrict__ y,
                       float eps, long long rows, int n)
{
	__shared__ float red[THREADS / 32];
	const long long row = blockIdx.x;
	const long long o = row * n;
	float acc = 0.0f;
	float hx[HOLD > 0 ? HOLD : 1][8], hs[HOLD > 0 ? HOLD : 1][8], hb[HOLD > 0 ? HOLD : 1][8];
	int k = 0;
	for (int j = threadIdx.x * 8; j < n; j += THREADS * 8, k++) {
		float f[8];
		ld8(x + o + j, f);
#pragma unroll
		for (int u = 0; u < 8; u++)
			acc += f[u] * f[u];
		if (HOLD > 0 && k < HOLD) {
#pragma unroll
			for (int u = 0; u < 8; u++)
				hx[k < HOLD ? k : 0][u] = f[u];
			if (PRE) {
				ld8(sc + o + j, hs[k < HOLD ? k : 0]);
				ld8(sh + o + j, hb[k < HOLD ? k : 0]);
			}
		}
	}
	const float r = rsqrtf(bsum<THREADS>(acc, red) / (float)n + eps);
	k = 0;
	for (int j = threadIdx.x * 8; j < n; j += THREADS * 8, k++) {
		float f[8], s[8], b[8], v[8];
		if (HOLD > 0 && k < HOLD) {
#pragma unroll
			for (int u = 0; u < 8; u++) {
				f[u] = hx[k < HOLD ? k : 0][u];
				s[u] = PRE ? hs[k < HOLD ? k : 0][u] : 0.0f;
				b[u] = PRE ? hb[k < HOLD ? k : 0][u] : 0.0f;
			}
		} else
			ld8(x + o + j, f);
		if (!(PRE && HOLD > 0 && k < HOLD)) {
			ld8(sc + o + j, s);
			ld8(sh + o + j, b);
		}
#pragma unroll
		for (int u = 0; u < 8; u++)
			v[u] = f[u] * r * (1.0f + s[u]) + b[u];
		st8(y + o + j, v);
	}
}

#define K(name, T, TH, H, P)                                                                                   \
	extern "C" __global__ void __launch_bounds__(TH) name(const T *x, const T *s, const T *b, T *y, float eps,   \
	                                                       long long rows, int n)                              \
	{                                                                                                           \
		modrms<T, TH, H, P>(x, s, b, y, eps, rows, n);                                                       \
	}
K(ml_512_h0, __nv_bfloat16, 512, 0, false)
K(ml_256_h0, __nv_bfloat16, 256, 0, false)
K(ml_128_h0, __nv_bfloat16, 128, 0, false)
K(ml_512_h1, __nv_bfloat16, 512, 1, false)
K(ml_256_h2, __nv_bfloat16, 256, 2, false)
K(ml_512_h1p, __nv_bfloat16, 512, 1, true)
K(ml_256_h2p, __nv_bfloat16, 256, 2, true)

// As Inductor's triton_red kernel: a block a row, a runtime loop over the
// row in vectors of V elements a thread, pass 1 reading x with
// L2::evict_last (kept for pass 2's re-read), pass 2 x, scale and shift with
// evict_first; at most MINB blocks' worth of registers.
template <int V> struct VecT;
template <> struct VecT<4> { typedef uint2 t; };
template <> struct VecT<8> { typedef uint4 t; };
template <int V, int HINT> __device__ __forceinline__ void ldh(const __nv_bfloat16 *p, float f[V])
{
	typename VecT<V>::t u;
	if (V == 8) {
		uint4 &w = reinterpret_cast<uint4 &>(u);
		if (HINT == 1)
			{ unsigned long long pol; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
			asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(p), "l"(pol)); }
		else if (HINT == 2)
			{ unsigned long long pol; asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
			asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;" : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(p), "l"(pol)); }
		else
			w = __ldg(reinterpret_cast<const uint4 *>(p));
	} else {
		uint2 &w = reinterpret_cast<uint2 &>(u);
		if (HINT == 1)
			{ unsigned long long pol; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
			asm volatile("ld.global.nc.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;" : "=r"(w.x), "=r"(w.y) : "l"(p), "l"(pol)); }
		else if (HINT == 2)
			{ unsigned long long pol; asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
			asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v2.u32 {%0,%1}, [%2], %3;" : "=r"(w.x), "=r"(w.y) : "l"(p), "l"(pol)); }
		else
			w = __ldg(reinterpret_cast<const uint2 *>(p));
	}
	const __nv_bfloat16 *h = reinterpret_cast<const __nv_bfloat16 *>(&u);
#pragma unroll
	for (int i = 0; i < V; i++)
		f[i] = __bfloat162float(h[i]);
}
template <int V> __device__ __forceinline__ void sth(__nv_bfloat16 *p, const float f[V])
{
	typename VecT<V>::t u;
	__nv_bfloat16 *h = reinterpret_cast<__nv_bfloat16 *>(&u);
#pragma unroll
	for (int i = 0; i < V; i++)
		h[i] = __float2bfloat16_rn(f[i]);
	*reinterpret_cast<typename VecT<V>::t *>(p) = u;
}

template <int TH, int V, bool HINTS>
__device__ void modrms_tl(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ sc,
                          const __nv_bfloat16 *__restrict__ sh, __nv_bfloat16 *__restrict__ y, float eps, int n)
{
	__shared__ float red[TH / 32];
	const long long o = (long long)blockIdx.x * n;
	float acc = 0.0f;
	for (int j = threadIdx.x * V; j < n; j += TH * V) {
		float f[V];
		ldh<V, HINTS ? 1 : 0>(x + o + j, f);
#pragma unroll
		for (int u = 0; u < V; u++)
			acc += f[u] * f[u];
	}
	const float r = rsqrtf(bsum<TH>(acc, red) / (float)n + eps);
	for (int j = threadIdx.x * V; j < n; j += TH * V) {
		float f[V], s[V], b[V], v[V];
		ldh<V, HINTS ? 2 : 0>(x + o + j, f);
		ldh<V, HINTS ? 2 : 0>(sc + o + j, s);
		ldh<V, HINTS ? 2 : 0>(sh + o + j, b);
#pragma unroll
		for (int u = 0; u < V; u++)
			v[u] = f[u] * r * (1.0f + s[u]) + b[u];
		sth<V>(y + o + j, v);
	}
}

#define T(name, TH, MINB, V, H)                                                                                 \
	extern "C" __global__ void __launch_bounds__(TH, MINB) name(const __nv_bfloat16 *x, const __nv_bfloat16 *s, \
	                                                             const __nv_bfloat16 *b, __nv_bfloat16 *y, float eps, \
	                                                             long long rows, int n)                         \
	{                                                                                                           \
		modrms_tl<TH, V, H>(x, s, b, y, eps, n);                                                             \
	}
T(tl_512_v4_h, 512, 4, 4, true)
T(tl_512_v4, 512, 4, 4, false)
T(tl_512_v8_h, 512, 4, 8, true)
T(tl_256_v8_h, 256, 8, 8, true)
T(tl_128_v8_h, 128, 16, 8, true)
T(tl_256_v4_h, 256, 8, 4, true)

// K chunks of 8 a thread, unrolled: every load of a pass issued before its
// math, the chunks kept packed (bf16 pairs) until used; no loop over the row
// (TH * K * 8 >= n). HINT 1: the L2 policies of Inductor's kernel through
// plain ld.global (not .nc); 0: no policy.
template <int HINT> __device__ __forceinline__ uint4 ld8p(const __nv_bfloat16 *p, bool last)
{
	uint4 w;
	if (HINT) {
		unsigned long long pol;
		if (last)
			asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
		else
			asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
		asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
		             : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(p), "l"(pol));
	} else
		w = *reinterpret_cast<const uint4 *>(p);
	return w;
}
__device__ __forceinline__ float el(const uint4 &w, int u) { return __bfloat162float(reinterpret_cast<const __nv_bfloat16 *>(&w)[u]); }

template <int TH, int K, int HINT>
__device__ void modrms_k(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ sc,
                         const __nv_bfloat16 *__restrict__ sh, __nv_bfloat16 *__restrict__ y, float eps, int n)
{
	__shared__ float red[TH / 32];
	const long long o = (long long)blockIdx.x * n;
	uint4 f[K], s[K], b[K];
	float acc = 0.0f;
#pragma unroll
	for (int k = 0; k < K; k++) {
		const int j = (threadIdx.x + k * TH) * 8;
		f[k] = j < n ? ld8p<HINT>(x + o + j, true) : make_uint4(0, 0, 0, 0);
	}
#pragma unroll
	for (int k = 0; k < K; k++)
#pragma unroll
		for (int u = 0; u < 8; u++)
			acc += el(f[k], u) * el(f[k], u);
	const float r = rsqrtf(bsum<TH>(acc, red) / (float)n + eps);
#pragma unroll
	for (int k = 0; k < K; k++) {
		const int j = (threadIdx.x + k * TH) * 8;
		if (j < n) {
			f[k] = ld8p<HINT>(x + o + j, false);
			s[k] = ld8p<HINT>(sc + o + j, false);
			b[k] = ld8p<HINT>(sh + o + j, false);
		}
	}
#pragma unroll
	for (int k = 0; k < K; k++) {
		const int j = (threadIdx.x + k * TH) * 8;
		float v[8];
#pragma unroll
		for (int u = 0; u < 8; u++)
			v[u] = el(f[k], u) * r * (1.0f + el(s[k], u)) + el(b[k], u);
		if (j < n)
			sth<8>(y + o + j, v);
	}
}

#define KK(name, TH, K, H) KB(name, TH, K, H, 2048 / TH)
#define KB(name, TH, K, H, MINB)                                                                                \
	extern "C" __global__ void __launch_bounds__(TH, MINB) name(const __nv_bfloat16 *x,                   \
	                                                                  const __nv_bfloat16 *s,                   \
	                                                                  const __nv_bfloat16 *b, __nv_bfloat16 *y, \
	                                                                  float eps, long long rows, int n)         \
	{                                                                                                           \
		modrms_k<TH, K, H>(x, s, b, y, eps, n);                                                              \
	}
KK(tk_1024_1_p, 1024, 1, 1)
KK(tk_512_1_p, 512, 1, 1)
KK(tk_512_1_n, 512, 1, 0)
KK(tk_256_1_p, 256, 1, 1)
KK(tk_128_1_p, 128, 1, 1)
KK(tk_256_2_p, 256, 2, 1)
KK(tk_128_2_p, 128, 2, 1)
KK(tk_512_2_p, 512, 2, 1)
KB(tk_512_1_p3, 512, 1, 1, 3)
KB(tk_256_2_p6, 256, 2, 1, 6)
KB(tk_128_2_p12, 128, 2, 1, 12)
