// bench/lab/long_rows.cu: layernorm over long rows of a multiple of the
// vector, three designs beside the row cache's (bench/lab/row_cache.cu, whose
// kernels this file includes), for bench/cubin_lab.py
// (bench/lab/long_rows.json):
//
//   ln_next_*  the row cache, persistent: each thread, once its chunk of the
//              epilogue is read, copies the same chunk of the block's next row
//              into the same slot (cp.async), so the next row is in flight
//              while this one is stored; no barrier more than the row cache's.
//   ln_l2_*    no cache: a block a row, three passes that each load the row
//              (the second and third from the L2, which the first fills with
//              an evict_last hint; the third's loads evict_first).
//   ln_l2p_*   ln_l2 with a block's chunks of a pass all loaded before any is
//              used (up to 8 a thread), as the register path loads.
//
//   nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/long_rows.cu -o build/long_rows.cubin
//   PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \
//       python3 bench/cubin_lab.py --cubin build/long_rows.cubin bench/lab/long_rows.json
//
// Timed on the H200 on 2026-12-01 (one call, us, medians of three replays;
// fusec's own `_rowa` entry beside them, compiled from `fusec --dim R=600
// --dim C=20000 examples/layernorm.fz` wrapped in a namespace, its kernel
// renamed, and launched with other block sizes; ce4a702):
//
//   layernorm f32 600x20000: torch.compile 35.6, fusec 38.9 (`_rowa`, 1024
//   threads, one block an SM by its registers); `_rowa` at 640 threads 33.9,
//   512 34.5, 256 40.7; ln_next_f32_512 31.1, _1024 43.8, _256 36.4;
//   ln_l2_f32_256 50.6, _512 38.7; ln_l2p 77.7 and 66.6; ln_f32_256 34.6,
//   _512 35.5.
//   layernorm f32 511x16384: torch.compile 24.2, fusec 27.5 (`reg4`, 1024
//   threads); `_rowa` at 1024 28.5, 512 23.4, 256 27.2; ln_next_f32_512
//   21.9, _256 23.3; ln_l2_f32_256 27.0; ln_l2p 43.1 and 41.4; ln_f32_256
//   22.7.
//   layernorm f16 1000x24576: torch.compile 32.8, fusec 33.6 (`_rowa`, 512);
//   at 384 33.6, 256 34.7.
//
// So fusec's `_rowa` at 512 threads (launch_rules.c's long_group and wide_rule,
// a2422fc). The next row copied ahead (ln_next) gained another 7-10% here,
// but written into fusec's `_rowa` (row_loop.c: each thread's cp.async of
// the next row's chunk after storing this row's, grid of resident blocks)
// it lost 1.02-1.25x at 14 of 18 points (bench/replay_ab.py, the same day):
// not kept (docs/performance.md, "Long rows at 512 threads").
#include "row_cache.cu"

template <> struct V<__half> {
	static constexpr int n = 8;
	static __device__ __forceinline__ void ld(float *f, uint4 u)
	{
		unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const float2 g = __half22float2(*reinterpret_cast<__half2 *>(&w[i]));
			f[2 * i] = g.x;
			f[2 * i + 1] = g.y;
		}
	}
	static __device__ __forceinline__ uint4 st(const float *f)
	{
		unsigned w[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			__half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
			w[i] = *reinterpret_cast<unsigned *>(&h);
		}
		return make_uint4(w[0], w[1], w[2], w[3]);
	}
};

__device__ __forceinline__ uint4 ld_last(const uint4 *p)
{
	uint4 u;
	unsigned long long pol;
	asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
	asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
		     : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p), "l"(pol));
	return u;
}
__device__ __forceinline__ uint4 ld_first(const uint4 *p)
{
	uint4 u;
	unsigned long long pol;
	asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
	asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
		     : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p), "l"(pol));
	return u;
}

template <class T, int NT>
__device__ void layernorm_next(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
			       T *__restrict__ y, float eps, long long rows, int n)
{
	extern __shared__ uint4 c[];
	__shared__ float red[2][32];
	constexpr int E = V<T>::n;
	const int nc = n / E;
	long long r = blockIdx.x;
	if (r < rows)
		for (int j = threadIdx.x; j < nc; j += NT) cp16(c + j, reinterpret_cast<const uint4 *>(x + r * n) + j);
	for (; r < rows; r += gridDim.x) {
		cpwait();
		__syncthreads(); /* every thread's copies of this row landed */
		float s = 0.f;
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E];
			V<T>::ld(f, c[j]);
#pragma unroll
			for (int u = 0; u < E; u++) s += f[u];
		}
		const float mu = bsum<NT>(s, red[0]) / (float)n;
		float q = 0.f;
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E];
			V<T>::ld(f, c[j]);
#pragma unroll
			for (int u = 0; u < E; u++) { const float d = f[u] - mu; q += d * d; }
		}
		const float rs = rsqrtf(bsum<NT>(q, red[1]) / (float)n + eps);
		uint4 *o = reinterpret_cast<uint4 *>(y + r * n);
		const uint4 *pw = reinterpret_cast<const uint4 *>(w), *pb = reinterpret_cast<const uint4 *>(b);
		const long long rn = r + gridDim.x;
		const uint4 *pn = reinterpret_cast<const uint4 *>(x + (rn < rows ? rn : r) * n);
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E], fw[E], fb[E];
			V<T>::ld(f, c[j]);
			if (rn < rows)
				cp16(c + j, pn + j); /* this thread's slot, read just above */
			V<T>::ld(fw, __ldg(pw + j));
			V<T>::ld(fb, __ldg(pb + j));
#pragma unroll
			for (int u = 0; u < E; u++) f[u] = (f[u] - mu) * rs * fw[u] + fb[u];
			__stcs(o + j, V<T>::st(f));
		}
		/* the reductions' buffers: the next row's first barrier orders them */
	}
}

template <class T, int NT, bool PIPE>
__device__ void layernorm_l2(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
			     T *__restrict__ y, float eps, long long rows, int n)
{
	__shared__ float red[2][32];
	constexpr int E = V<T>::n, P = PIPE ? 8 : 1;
	const int nc = n / E;
	for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
		const uint4 *p = reinterpret_cast<const uint4 *>(x + r * n);
		float s = 0.f;
		for (int j0 = threadIdx.x; j0 < nc; j0 += P * NT) {
			uint4 u[P];
#pragma unroll
			for (int k = 0; k < P; k++)
				if (j0 + k * NT < nc) u[k] = ld_last(p + j0 + k * NT);
#pragma unroll
			for (int k = 0; k < P; k++)
				if (j0 + k * NT < nc) {
					float f[E];
					V<T>::ld(f, u[k]);
#pragma unroll
					for (int e = 0; e < E; e++) s += f[e];
				}
		}
		const float mu = bsum<NT>(s, red[0]) / (float)n;
		float q = 0.f;
		for (int j0 = threadIdx.x; j0 < nc; j0 += P * NT) {
			uint4 u[P];
#pragma unroll
			for (int k = 0; k < P; k++)
				if (j0 + k * NT < nc) u[k] = ld_last(p + j0 + k * NT);
#pragma unroll
			for (int k = 0; k < P; k++)
				if (j0 + k * NT < nc) {
					float f[E];
					V<T>::ld(f, u[k]);
#pragma unroll
					for (int e = 0; e < E; e++) { const float d = f[e] - mu; q += d * d; }
				}
		}
		const float rs = rsqrtf(bsum<NT>(q, red[1]) / (float)n + eps);
		uint4 *o = reinterpret_cast<uint4 *>(y + r * n);
		const uint4 *pw = reinterpret_cast<const uint4 *>(w), *pb = reinterpret_cast<const uint4 *>(b);
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E], fw[E], fb[E];
			V<T>::ld(f, ld_first(p + j));
			V<T>::ld(fw, __ldg(pw + j));
			V<T>::ld(fb, __ldg(pb + j));
#pragma unroll
			for (int e = 0; e < E; e++) f[e] = (f[e] - mu) * rs * fw[e] + fb[e];
			__stcs(o + j, V<T>::st(f));
		}
		__syncthreads(); /* red[] reused by the next row */
	}
}

#define LNX(name, T, NT, MB, body) \
	extern "C" __global__ void __launch_bounds__(NT, MB) name(const T *x, const T *w, const T *b, T *y, float eps, long long rows, int n) \
	{ body; }

LNX(ln_next_f32_512, float, 512, 2, (layernorm_next<float, 512>(x, w, b, y, eps, rows, n)))
LNX(ln_next_f32_1024, float, 1024, 2, (layernorm_next<float, 1024>(x, w, b, y, eps, rows, n)))
LNX(ln_next_f32_256, float, 256, 1, (layernorm_next<float, 256>(x, w, b, y, eps, rows, n)))
LNX(ln_l2_f32_256, float, 256, 4, (layernorm_l2<float, 256, false>(x, w, b, y, eps, rows, n)))
LNX(ln_l2_f32_512, float, 512, 2, (layernorm_l2<float, 512, false>(x, w, b, y, eps, rows, n)))
LNX(ln_l2p_f32_256, float, 256, 4, (layernorm_l2<float, 256, true>(x, w, b, y, eps, rows, n)))
LNX(ln_l2p_f32_512, float, 512, 2, (layernorm_l2<float, 512, true>(x, w, b, y, eps, rows, n)))
LNX(ln_next_bf16_512, __nv_bfloat16, 512, 2, (layernorm_next<__nv_bfloat16, 512>(x, w, b, y, eps, rows, n)))
LNX(ln_l2p_bf16_512, __nv_bfloat16, 512, 2, (layernorm_l2<__nv_bfloat16, 512, true>(x, w, b, y, eps, rows, n)))
LNX(ln_next_f16_512, __half, 512, 2, (layernorm_next<__half, 512>(x, w, b, y, eps, rows, n)))
LNX(ln_l2p_f16_512, __half, 512, 2, (layernorm_l2<__half, 512, true>(x, w, b, y, eps, rows, n)))
