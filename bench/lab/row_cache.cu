// bench/lab/row_cache.cu: long rows of a multiple of the vector, each row in a
// block's shared memory (the ROW path's design), for bench/cubin_lab.py
// (bench/lab/row_cache.json): cp.async copies the block's row at once, three
// passes read it back; 32-bit offsets and no bounds test (rows of a multiple
// of V, aligned pointers). Layernorm (bf16, f32) and softmax (f32) at 256, 512
// and 1024 threads, and 512 bound to three blocks an SM. Every kernel takes
// (x, [w, b,] y, [eps,] rows, n).
//
//   nvcc -cubin -arch=sm_90 -O3 -std=c++17 bench/lab/row_cache.cu -o build/row_cache.cubin
//   PYTHONPATH=python FUSEC_LIBRARY=build/libfusec.so \
//       python3 bench/cubin_lab.py --cubin build/row_cache.cubin bench/lab/row_cache.json
//
// Timed on the H200 on 2026-11-30 (docs/performance.md, "The row cache's
// aligned class"): the design of the ROW path's aligned class (`_rowa`,
// row_loop.c).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ void cp16(void *s, const void *g)
{
	unsigned a = (unsigned)__cvta_generic_to_shared(s);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void cpwait() { asm volatile("cp.async.wait_all;" ::: "memory"); }

template <class T> struct V;
template <> struct V<float> {
	static constexpr int n = 4;
	static __device__ __forceinline__ void ld(float *f, uint4 u)
	{ f[0] = __uint_as_float(u.x); f[1] = __uint_as_float(u.y); f[2] = __uint_as_float(u.z); f[3] = __uint_as_float(u.w); }
	static __device__ __forceinline__ uint4 st(const float *f)
	{ return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]), __float_as_uint(f[3])); }
};
template <> struct V<__nv_bfloat16> {
	static constexpr int n = 8;
	static __device__ __forceinline__ void ld(float *f, uint4 u)
	{
		unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
		for (int i = 0; i < 4; i++) { f[2 * i] = __uint_as_float(w[i] << 16); f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u); }
	}
	static __device__ __forceinline__ uint4 st(const float *f)
	{
		unsigned w[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			__nv_bfloat162 h = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
			w[i] = *reinterpret_cast<unsigned *>(&h);
		}
		return make_uint4(w[0], w[1], w[2], w[3]);
	}
};

template <int NT> __device__ __forceinline__ float bsum(float a, float *red)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2) a += __shfl_xor_sync(0xffffffffu, a, o);
	if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = a;
	__syncthreads();
	float s = 0.f;
#pragma unroll
	for (int i = 0; i < NT / 32; i++) s += red[i];
	return s;
}
template <int NT> __device__ __forceinline__ float bmax(float a, float *red)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
	if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = a;
	__syncthreads();
	float s = -INFINITY;
#pragma unroll
	for (int i = 0; i < NT / 32; i++) s = fmaxf(s, red[i]);
	return s;
}

template <class T, int NT>
__device__ void layernorm(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b, T *__restrict__ y,
			  float eps, long long rows, int n)
{
	extern __shared__ uint4 c[];
	__shared__ float red[2][32];
	constexpr int E = V<T>::n;
	const int nc = n / E; // chunks a row
	for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
		const uint4 *p = reinterpret_cast<const uint4 *>(x + r * n);
		for (int j = threadIdx.x; j < nc; j += NT) cp16(c + j, p + j);
		cpwait();
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
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E], fw[E], fb[E];
			V<T>::ld(f, c[j]);
			V<T>::ld(fw, __ldg(pw + j));
			V<T>::ld(fb, __ldg(pb + j));
#pragma unroll
			for (int u = 0; u < E; u++) f[u] = (f[u] - mu) * rs * fw[u] + fb[u];
			__stcs(o + j, V<T>::st(f));
		}
	}
}

template <class T, int NT>
__device__ void softmax(const T *__restrict__ x, T *__restrict__ y, long long rows, int n)
{
	extern __shared__ uint4 c[];
	__shared__ float red[2][32];
	constexpr int E = V<T>::n;
	const int nc = n / E;
	for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
		const uint4 *p = reinterpret_cast<const uint4 *>(x + r * n);
		for (int j = threadIdx.x; j < nc; j += NT) cp16(c + j, p + j);
		cpwait();
		float m = -INFINITY;
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E];
			V<T>::ld(f, c[j]);
#pragma unroll
			for (int u = 0; u < E; u++) m = fmaxf(m, f[u]);
		}
		m = bmax<NT>(m, red[0]);
		float s = 0.f;
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E];
			V<T>::ld(f, c[j]);
#pragma unroll
			for (int u = 0; u < E; u++) s += __expf(f[u] - m);
		}
		const float rs = 1.f / bsum<NT>(s, red[1]);
		uint4 *o = reinterpret_cast<uint4 *>(y + r * n);
		for (int j = threadIdx.x; j < nc; j += NT) {
			float f[E];
			V<T>::ld(f, c[j]);
#pragma unroll
			for (int u = 0; u < E; u++) f[u] = __expf(f[u] - m) * rs;
			__stcs(o + j, V<T>::st(f));
		}
	}
}

#define LN(name, T, NT, MB) \
	extern "C" __global__ void __launch_bounds__(NT, MB) name(const T *x, const T *w, const T *b, T *y, float eps, long long rows, int n) \
	{ layernorm<T, NT>(x, w, b, y, eps, rows, n); }
#define SM(name, T, NT, MB) \
	extern "C" __global__ void __launch_bounds__(NT, MB) name(const T *x, T *y, long long rows, int n) \
	{ softmax<T, NT>(x, y, rows, n); }

LN(ln_bf16_512, __nv_bfloat16, 512, 1)
LN(ln_bf16_512b3, __nv_bfloat16, 512, 3)
LN(ln_bf16_256, __nv_bfloat16, 256, 1)
LN(ln_bf16_1024, __nv_bfloat16, 1024, 1)
LN(ln_f32_512, float, 512, 1)
LN(ln_f32_512b3, float, 512, 3)
LN(ln_f32_256, float, 256, 1)
LN(ln_f32_1024, float, 1024, 1)
SM(sm_f32_512, float, 512, 1)
SM(sm_f32_512b3, float, 512, 3)
SM(sm_f32_256, float, 256, 1)
SM(sm_f32_1024, float, 1024, 1)
