// harness.cu: pointwise kernel layouts side by side (issue 10; docs/performance.md,
// "A chunk a thread"). fusec's generated kernels (gen/kernels.h, written by
// run.sh from `fusec --emit=cuda`) against hand-written layouts of the same
// math, with the same prelude and compile options (--fmad=false -Ofc min, as
// fusec's NVRTC call; accurate math). One line per (program, size, variant):
// median us of 50 event-timed launches, % of the copy floor measured in the
// same process, registers, grid, and whether the output is bit-identical to
// fusec's kernel's. Inputs rotate over enough buffer sets to span four times
// the L2 when one set fits in it, as `fusec bench` does.
#include "gen/kernels.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <string>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

// ---- bodies: the math of each program over one chunk ----------------------------------
struct Noprm {};
struct AdamPrm { float lr, b1, b2, eps, bc1, bc2; };

struct GeluTanh {
	typedef float S; typedef Noprm P; enum { V = 4, NIN = 1, NOUT = 1 };
	static __device__ __forceinline__ void f(const float (&l)[NIN][V], float (&s)[NOUT][V], const P &)
	{
#pragma unroll
		for (int u = 0; u < V; u++) {
			const float x = l[0][u];
			const float t2 = 0.5f * x, t4 = 0.0447149985f * x, t5 = t4 * x, t6 = t5 * x, t7 = x + t6;
			const float t9 = 0.797884583f * t7, t10 = tanh(t9), t12 = 1.0f + t10;
			s[0][u] = t2 * t12;
		}
	}
};
struct SiluMul {
	typedef fz_bf16 S; typedef Noprm P; enum { V = 8, NIN = 2, NOUT = 1 };
	static __device__ __forceinline__ void f(const float (&l)[NIN][V], float (&s)[NOUT][V], const P &)
	{
#pragma unroll
		for (int u = 0; u < V; u++)
			s[0][u] = fz_silu(l[0][u]) * l[1][u];
	}
};
struct Silu {
	typedef fz_bf16 S; typedef Noprm P; enum { V = 8, NIN = 1, NOUT = 1 };
	static __device__ __forceinline__ void f(const float (&l)[NIN][V], float (&s)[NOUT][V], const P &)
	{
#pragma unroll
		for (int u = 0; u < V; u++)
			s[0][u] = fz_silu(l[0][u]);
	}
};
struct Gelu {
	typedef fz_bf16 S; typedef Noprm P; enum { V = 8, NIN = 1, NOUT = 1 };
	static __device__ __forceinline__ void f(const float (&l)[NIN][V], float (&s)[NOUT][V], const P &)
	{
#pragma unroll
		for (int u = 0; u < V; u++)
			s[0][u] = fz_gelu(l[0][u]);
	}
};
struct Adam { // inputs p g m v; outputs m_new v_new p_new (fusec's parameter order)
	typedef float S; typedef AdamPrm P; enum { V = 4, NIN = 4, NOUT = 3 };
	static __device__ __forceinline__ void f(const float (&l)[NIN][V], float (&s)[NOUT][V], const P &q)
	{
#pragma unroll
		for (int u = 0; u < V; u++) {
			const float t10 = q.b1 * l[2][u], t12 = 1.0f - q.b1, t13 = t12 * l[1][u], t14 = t10 + t13;
			const float t15 = q.b2 * l[3][u], t16 = 1.0f - q.b2, t17 = t16 * l[1][u], t18 = t17 * l[1][u];
			const float t19 = t15 + t18, t20 = t14 / q.bc1, t21 = q.lr * t20, t22 = t19 / q.bc2;
			const float t23 = sqrt(t22), t24 = t23 + q.eps, t25 = t21 / t24, t26 = l[0][u] - t25;
			s[0][u] = t14; s[1][u] = t19; s[2][u] = t26;
		}
	}
};

template <class B> struct Args {
	const typename B::S *in[B::NIN];
	typename B::S *out[B::NOUT];
	long long n;
	typename B::P prm;
};

// HINT: 0 plain, 1 streaming stores (st.global.cs), 2 streaming loads and stores.
template <class B, int HINT = 0, class I> __device__ __forceinline__ void ld_chunk(float (&o)[B::V], const typename B::S *p, I c)
{
	fz_vec<typename B::S, B::V> v;
	if (HINT >= 2) {
		uint4 w = __ldcs(reinterpret_cast<const uint4 *>(p) + c);
		memcpy(&v, &w, 16);
	} else {
		uint4 w = __ldg(reinterpret_cast<const uint4 *>(p) + c);
		memcpy(&v, &w, 16);
	}
	fz_unpack(o, v);
}
template <class B, int HINT = 0, class I> __device__ __forceinline__ void st_chunk(typename B::S *p, I c, const float (&o)[B::V])
{
	fz_vec<typename B::S, B::V> v;
	fz_pack(v, o);
	if (HINT >= 1) {
		uint4 w;
		memcpy(&w, &v, 16);
		__stcs(reinterpret_cast<uint4 *>(p) + c, w);
	} else {
		reinterpret_cast<fz_vec<typename B::S, B::V> *>(p)[c] = v;
	}
}

// The last n % V elements (fewer than a chunk): the first threads of the grid.
template <class B> __device__ __forceinline__ void tail(const Args<B> &a, long long tid)
{
	const long long n0 = (long long)(((unsigned long long)a.n >> (B::V == 8 ? 3 : 2)) * B::V);
	if (tid >= a.n - n0)
		return;
	float l[B::NIN][B::V] = {}, s[B::NOUT][B::V];
#pragma unroll
	for (int k = 0; k < B::NIN; k++)
		l[k][0] = fz_in(a.in[k][n0 + tid]);
	B::f(l, s, a.prm);
#pragma unroll
	for (int k = 0; k < B::NOUT; k++)
		fz_out(a.out[k][n0 + tid], s[k][0]);
}

// Split: a vector loop over the full chunks (C of them an iteration, nth apart,
// all loads first), no bounds checks but one compare a chunk when C > 1; then the tail.
template <class B, int C, class I, int MINB, int HINT = 0>
__global__ void __launch_bounds__(256, MINB) k_split(Args<B> a)
{
	const I nfull = (I)((unsigned long long)a.n >> (B::V == 8 ? 3 : 2));
	const I tid = (I)blockIdx.x * blockDim.x + threadIdx.x;
	const I nth = (I)gridDim.x * blockDim.x;
	for (I c0 = tid; c0 < nfull; c0 += nth * C) {
		float l[C][B::NIN][B::V];
#pragma unroll
		for (int j = 0; j < C; j++)
			if (j == 0 || c0 + j * nth < nfull)
#pragma unroll
				for (int k = 0; k < B::NIN; k++)
					ld_chunk<B, HINT>(l[j][k], a.in[k], c0 + j * nth);
#pragma unroll
		for (int j = 0; j < C; j++) {
			if (j > 0 && c0 + j * nth >= nfull)
				break;
			float s[B::NOUT][B::V];
			B::f(l[j], s, a.prm);
#pragma unroll
			for (int k = 0; k < B::NOUT; k++)
				st_chunk<B, HINT>(a.out[k], c0 + j * nth, s[k]);
		}
	}
	tail(a, (long long)tid);
}

// Pipelined: C = 1 grid-stride, the next chunk's loads issued before this one's math.
template <class B, class I>
__global__ void __launch_bounds__(256) k_pipe(Args<B> a)
{
	const I nfull = (I)((unsigned long long)a.n >> (B::V == 8 ? 3 : 2));
	const I tid = (I)blockIdx.x * blockDim.x + threadIdx.x;
	const I nth = (I)gridDim.x * blockDim.x;
	float cur[B::NIN][B::V];
	if (tid < nfull)
#pragma unroll
		for (int k = 0; k < B::NIN; k++)
			ld_chunk<B>(cur[k], a.in[k], tid);
	for (I c = tid; c < nfull; c += nth) {
		float nxt[B::NIN][B::V];
		if (c + nth < nfull)
#pragma unroll
			for (int k = 0; k < B::NIN; k++)
				ld_chunk<B>(nxt[k], a.in[k], c + nth);
		float s[B::NOUT][B::V];
		B::f(cur, s, a.prm);
#pragma unroll
		for (int k = 0; k < B::NOUT; k++)
			st_chunk<B>(a.out[k], c, s[k]);
#pragma unroll
		for (int k = 0; k < B::NIN; k++)
#pragma unroll
			for (int u = 0; u < B::V; u++)
				cur[k][u] = nxt[k][u];
	}
	tail(a, (long long)tid);
}

// ---- the host side ---------------------------------------------------------------------
__global__ void fill(float *p, long long n, unsigned seed, float lo, float hi)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		h ^= h >> 15; h *= 0x2c1b3c6dU; h ^= h >> 12; h *= 0x297a2d39U; h ^= h >> 15;
		p[i] = lo + (hi - lo) * (h >> 8) * (1.0f / 16777216.0f);
	}
}
__global__ void fill(fz_bf16 *p, long long n, unsigned seed, float lo, float hi)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		h ^= h >> 15; h *= 0x2c1b3c6dU; h ^= h >> 12; h *= 0x297a2d39U; h ^= h >> 15;
		fz_out(p[i], lo + (hi - lo) * (h >> 8) * (1.0f / 16777216.0f));
	}
}
__global__ void count_diff(const unsigned char *a, const unsigned char *b, long long n, unsigned long long *d)
{
	unsigned long long c = 0;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
		c += a[i] != b[i];
	if (c) atomicAdd(d, c);
}

static int g_sms, g_l2;
static double g_copy_gbps;

struct Timing { double us; };
template <class F> static double time_median(F launch, int sets, int reps = 50)
{
	std::vector<cudaEvent_t> ev(2 * reps);
	for (auto &e : ev) CK(cudaEventCreate(&e));
	for (int i = 0; i < 10; i++) launch(i % sets);
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(ev[2 * i]));
		launch(i % sets);
		CK(cudaEventRecord(ev[2 * i + 1]));
	}
	CK(cudaDeviceSynchronize());
	CK(cudaGetLastError());
	std::vector<double> t(reps);
	for (int i = 0; i < reps; i++) {
		float ms; CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1])); t[i] = ms * 1e3;
	}
	for (auto &e : ev) CK(cudaEventDestroy(e));
	std::sort(t.begin(), t.end());
	return t[reps / 2];
}

static void copy_bw()
{
	size_t b = (size_t)1 << 30;
	void *s, *d;
	CK(cudaMalloc(&s, b)); CK(cudaMalloc(&d, b)); CK(cudaMemset(s, 0x5a, b));
	double us = time_median([&](int) { CK(cudaMemcpyAsync(d, s, b, cudaMemcpyDeviceToDevice)); }, 1, 30);
	g_copy_gbps = 2.0 * b / us / 1e3;
	CK(cudaFree(s)); CK(cudaFree(d));
}

template <class B> struct Bufs {
	std::vector<Args<B>> sets;
	long long n;
	size_t bytes; // moved a call
};

template <class B> static Bufs<B> make(long long n, typename B::P prm)
{
	Bufs<B> b;
	b.n = n;
	b.bytes = (size_t)n * sizeof(typename B::S) * (B::NIN + B::NOUT);
	int sets = b.bytes <= (size_t)g_l2 ? (int)((4.0 * g_l2 + b.bytes - 1) / b.bytes) : 1; // as fusec bench
	for (int s = 0; s < sets; s++) {
		Args<B> a;
		a.n = n; a.prm = prm;
		for (int k = 0; k < B::NIN; k++) {
			typename B::S *p; CK(cudaMalloc(&p, n * sizeof *p));
			bool nonneg = B::NIN == 4 && k == 3; // adam's v
			fill<<<1024, 256>>>(p, n, 1234u + 77u * k + 1000u * s, nonneg ? 0.f : -4.f, nonneg ? 1.f : 4.f);
			a.in[k] = p;
		}
		for (int k = 0; k < B::NOUT; k++) {
			typename B::S *p; CK(cudaMalloc(&p, n * sizeof *p));
			a.out[k] = p;
		}
		b.sets.push_back(a);
	}
	CK(cudaDeviceSynchronize());
	return b;
}
template <class B> static void release(Bufs<B> &b)
{
	for (auto &a : b.sets) {
		for (int k = 0; k < B::NIN; k++) CK(cudaFree((void *)a.in[k]));
		for (int k = 0; k < B::NOUT; k++) CK(cudaFree(a.out[k]));
	}
}

static int regs_of(const void *f)
{
	cudaFuncAttributes at; CK(cudaFuncGetAttributes(&at, f)); return at.numRegs;
}
static int resident_of(const void *f)
{
	int per = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, f, 256, 0)); return per * g_sms;
}

// Reference output (fusec's kernel, set 0) kept to compare every variant with.
template <class B> struct Ref { std::vector<unsigned char *> out; };

template <class B> static void snapshot(Bufs<B> &b, Ref<B> &r)
{
	for (int k = 0; k < B::NOUT; k++) {
		unsigned char *p; CK(cudaMalloc(&p, b.n * sizeof(typename B::S)));
		CK(cudaMemcpy(p, b.sets[0].out[k], b.n * sizeof(typename B::S), cudaMemcpyDeviceToDevice));
		r.out.push_back(p);
	}
}
template <class B> static long long diff(Bufs<B> &b, Ref<B> &r)
{
	unsigned long long *d, h = 0;
	CK(cudaMalloc(&d, 8)); CK(cudaMemset(d, 0, 8));
	for (int k = 0; k < B::NOUT; k++)
		count_diff<<<1024, 256>>>(r.out[k], (unsigned char *)b.sets[0].out[k], b.n * (long long)sizeof(typename B::S), d);
	CK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
	CK(cudaFree(d));
	return (long long)h;
}
template <class B> static void poison(Bufs<B> &b)
{
	for (int k = 0; k < B::NOUT; k++) CK(cudaMemset(b.sets[0].out[k], 0xff, b.n * sizeof(typename B::S)));
}

static void report(const char *prog, long long n, const char *var, double us, size_t bytes, int regs, long long grid,
                   long long bad)
{
	double floor_us = bytes / g_copy_gbps / 1e3;
	printf("%-10s %11lld %-26s %8.1f us %5.1f%% regs %3d grid %7lld %s\n", prog, n, var, us, 100 * floor_us / us, regs,
	       grid, bad ? "MISMATCH" : "same");
	fflush(stdout);
}

// fusec's own kernel, called through a per-program shim (parameter order as generated).
template <class B> struct Fusec;
template <> struct Fusec<GeluTanh> {
	static const void *fn() { return (const void *)gelu_tanh_k0_pw; }
	static void go(const Args<GeluTanh> &a, long long g) { gelu_tanh_k0_pw<<<g, 256>>>(a.in[0], a.out[0], a.n); }
};
template <> struct Fusec<SiluMul> {
	static const void *fn() { return (const void *)silu_mul_bf16_k0_pw; }
	static void go(const Args<SiluMul> &a, long long g) { silu_mul_bf16_k0_pw<<<g, 256>>>(a.in[0], a.in[1], a.out[0], a.n); }
};
template <> struct Fusec<Silu> {
	static const void *fn() { return (const void *)silu_bf16_k0_pw; }
	static void go(const Args<Silu> &a, long long g) { silu_bf16_k0_pw<<<g, 256>>>(a.in[0], a.out[0], a.n, 1); }
};
template <> struct Fusec<Gelu> {
	static const void *fn() { return (const void *)gelu_bf16_k0_pw; }
	static void go(const Args<Gelu> &a, long long g) { gelu_bf16_k0_pw<<<g, 256>>>(a.in[0], a.out[0], a.n, 1); }
};
template <> struct Fusec<Adam> {
	static const void *fn() { return (const void *)adam_k0_pw; }
	static void go(const Args<Adam> &a, long long g)
	{
		adam_k0_pw<<<g, 256>>>(a.in[0], a.in[1], a.in[2], a.in[3], a.out[0], a.out[1], a.out[2], a.prm.lr, a.prm.b1,
		                       a.prm.b2, a.prm.eps, a.prm.bc1, a.prm.bc2, a.n);
	}
};

template <class B, class K> static void variant(const char *prog, Bufs<B> &b, Ref<B> &r, const char *name, K kern,
                                                int C, bool resident)
{
	long long nfull = b.n / B::V;
	long long g = std::max(1LL, (nfull + 256LL * C - 1) / (256LL * C));
	if (resident) g = std::min(g, (long long)resident_of((const void *)kern));
	int sets = (int)b.sets.size();
	poison(b);
	kern<<<g, 256>>>(b.sets[0]);
	CK(cudaDeviceSynchronize());
	long long bad = diff(b, r);
	double us = time_median([&](int s) { kern<<<g, 256>>>(b.sets[s]); }, sets);
	report(prog, b.n, name, us, b.bytes, regs_of((const void *)kern), g, bad);
}

template <class B> static void run(const char *prog, long long n, typename B::P prm = {})
{
	Bufs<B> b = make<B>(n, prm);
	int sets = (int)b.sets.size();
	long long chunks = (n + B::V - 1) / B::V;
	long long g_light = (chunks + 255) / 256, g_res = std::min(g_light, (long long)resident_of(Fusec<B>::fn()));
	long long g_rule = g_light;
	Fusec<B>::go(b.sets[0], g_rule);
	CK(cudaDeviceSynchronize());
	Ref<B> r;
	snapshot(b, r);
	double us = time_median([&](int s) { Fusec<B>::go(b.sets[s], g_rule); }, sets);
	report(prog, n, "fusec (block/256 chunks)", us, b.bytes, regs_of(Fusec<B>::fn()), g_rule, 0);
	long long g_alt = g_res;
	poison(b); Fusec<B>::go(b.sets[0], g_alt); CK(cudaDeviceSynchronize());
	long long bad = diff(b, r);
	us = time_median([&](int s) { Fusec<B>::go(b.sets[s], g_alt); }, sets);
	report(prog, n, "fusec, resident wave", us, b.bytes, regs_of(Fusec<B>::fn()), g_alt, bad);

	variant(prog, b, r, "split C1 i64 oneshot", k_split<B, 1, long long, 1>, 1, false);
	variant(prog, b, r, "split C1 i64 resident", k_split<B, 1, long long, 1>, 1, true);
	variant(prog, b, r, "split C1 u32 oneshot", k_split<B, 1, unsigned, 1>, 1, false);
	variant(prog, b, r, "split C1 u32 resident", k_split<B, 1, unsigned, 1>, 1, true);
	variant(prog, b, r, "split C2 u32 oneshot", k_split<B, 2, unsigned, 1>, 2, false);
	variant(prog, b, r, "split C2 u32 resident", k_split<B, 2, unsigned, 1>, 2, true);
	variant(prog, b, r, "split C4 u32 oneshot", k_split<B, 4, unsigned, 1>, 4, false);
	variant(prog, b, r, "split C4 u32 resident", k_split<B, 4, unsigned, 1>, 4, true);
	variant(prog, b, r, "split C2 u32 min8 oneshot", k_split<B, 2, unsigned, 8>, 2, false);
	variant(prog, b, r, "split C2 u32 min8 resident", k_split<B, 2, unsigned, 8>, 2, true);
	variant(prog, b, r, "pipe u32 resident", k_pipe<B, unsigned>, 1, true);
	variant(prog, b, r, "split C1 u32 oneshot st.cs", k_split<B, 1, unsigned, 1, 1>, 1, false);
	variant(prog, b, r, "split C2 u32 oneshot st.cs", k_split<B, 2, unsigned, 1, 1>, 2, false);
	variant(prog, b, r, "split C2 u32 oneshot ld+st.cs", k_split<B, 2, unsigned, 1, 2>, 2, false);
	variant(prog, b, r, "split C2 u32 resident st.cs", k_split<B, 2, unsigned, 1, 1>, 2, true);
	for (auto p : r.out) CK(cudaFree(p));
	release(b);
}

int main(int argc, char **argv)
{
	cudaDeviceProp pr;
	CK(cudaGetDeviceProperties(&pr, 0));
	g_sms = pr.multiProcessorCount;
	g_l2 = pr.l2CacheSize;
	copy_bw();
	printf("%s, %d SMs, L2 %d MB, copy %.0f GB/s\n", pr.name, g_sms, g_l2 >> 20, g_copy_gbps);
	const char *only = argc > 1 ? argv[1] : "";
	AdamPrm ap = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.001f};
	if (strstr("gelu_tanh", only)) { run<GeluTanh>("gelu_tanh", 67108864); run<GeluTanh>("gelu_tanh", 8388617); }
	if (strstr("silu_mul", only)) { run<SiluMul>("silu_mul", 67108867); run<SiluMul>("silu_mul", 11184811); }
	if (strstr("silu", only)) run<Silu>("silu", 2048LL * 8192);
	if (strstr("gelu", only)) run<Gelu>("gelu", 1639LL * 10240);
	if (strstr("adam", only)) { run<Adam>("adam", 2400001, ap); run<Adam>("adam", 16777219, ap); }
	return 0;
}
