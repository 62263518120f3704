/*
 * prelude.c: the device helpers every generated module starts with.
 *
 * The generated source includes nothing (NVRTC compiles it without headers,
 * which keeps a cold compile fast), so everything a kernel calls beyond
 * NVRTC's built-in math functions and intrinsics is defined here: storage
 * types for f16/bf16 (bit patterns, converted with PTX cvt instructions, round
 * to nearest even), vector loads and stores, NaN-propagating minimum/maximum,
 * the helpers fz_<name> of the ops whose text in ir/sem.def names its types
 * (written from that text, the interpreter's, for each dtype a kernel uses),
 * and the row-kernel machinery (reductions, the shared-memory row cache,
 * split-row exchange). Only the pieces a module uses are emitted.
 *
 * Math functions are CUDA's accurate ones (expf, tanhf, erff: at most 2 ulp;
 * the module is compiled without -use_fast_math), so results match the
 * interpreter up to the ulps of those functions.
 */
#include "codegen/cgint.h"

#include <string.h>

static const char pre_core[] =
	"// ---- fusec prelude ------------------------------------------------------------\n"
	"// Self-contained (it includes nothing). f16 and bf16 are stored as their bit patterns\n"
	"// and computed in f32; bool is stored as one byte.\n"
	"struct fz_f16 { unsigned short b; };\n"
	"struct fz_bf16 { unsigned short b; };\n"
	"__device__ __forceinline__ float fz_in(float s) { return s; }\n"
	"__device__ __forceinline__ double fz_in(double s) { return s; }\n"
	"__device__ __forceinline__ int fz_in(int s) { return s; }\n"
	"__device__ __forceinline__ long long fz_in(long long s) { return s; }\n"
	"__device__ __forceinline__ bool fz_in(unsigned char s) { return s != 0; }\n"
	"__device__ __forceinline__ float fz_in(fz_f16 s)\n"
	"{\n"
	"\tfloat f;\n"
	"\tasm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(s.b));\n"
	"\treturn f;\n"
	"}\n"
	"__device__ __forceinline__ float fz_in(fz_bf16 s) { return __uint_as_float((unsigned)s.b << 16); }\n"
	"__device__ __forceinline__ void fz_out(float &d, float v) { d = v; }\n"
	"__device__ __forceinline__ void fz_out(double &d, double v) { d = v; }\n"
	"__device__ __forceinline__ void fz_out(int &d, int v) { d = v; }\n"
	"__device__ __forceinline__ void fz_out(long long &d, long long v) { d = v; }\n"
	"__device__ __forceinline__ void fz_out(unsigned char &d, bool v) { d = v ? 1 : 0; }\n"
	"__device__ __forceinline__ void fz_out(fz_f16 &d, float v) { asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(d.b) : \"f\"(v)); }\n"
	"__device__ __forceinline__ void fz_out(fz_bf16 &d, float v)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tasm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(d.b) : \"f\"(v));\n"
	"#else\n"
	"\tunsigned u = __float_as_uint(v);\n"
	"\td.b = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)\n"
	"\t                                       : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
	"#endif\n"
	"}\n"
	"// V elements moved as one access of up to 16 bytes (or several).\n"
	"template <class S, int V> struct alignas(sizeof(S) * V < 16 ? sizeof(S) * V : 16) fz_vec { S e[V]; };\n"
	"// A vector's elements to and from the compute type. bf16 pairs are unpacked\n"
	"// from their 32-bit word by a shift and a mask, not an extract and a shift\n"
	"// each (ptxas already packs pairs of f16/bf16 stores into one instruction).\n"
	"template <class C, class S, int V> __device__ __forceinline__ void fz_unpack(C (&o)[V], const fz_vec<S, V> &v)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\to[u] = fz_in(v.e[u]);\n"
	"}\n"
	"template <int V> __device__ __forceinline__ void fz_unpack(float (&o)[V], const fz_vec<fz_bf16, V> &v)\n"
	"{\n"
	"\tconst unsigned *w = reinterpret_cast<const unsigned *>(v.e);\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V / 2; u++) {\n"
	"\t\to[2 * u] = __uint_as_float(w[u] << 16);\n"
	"\t\to[2 * u + 1] = __uint_as_float(w[u] & 0xffff0000u);\n"
	"\t}\n"
	"\tif (V % 2)\n"
	"\t\to[V - 1] = fz_in(v.e[V - 1]);\n"
	"}\n"
	"template <class C, class S, int V> __device__ __forceinline__ void fz_pack(fz_vec<S, V> &v, const C (&o)[V])\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tfz_out(v.e[u], o[u]);\n"
	"}\n"

	"__device__ __forceinline__ bool fz_aligned(const void *p, unsigned a) { return ((unsigned long long)p & (a - 1)) == 0; }\n"
	"// Elements j0 .. j0+V-1 of p that are below n (zero beyond), converted to the\n"
	"// compute type: one vector access when `vec` says the rows are aligned.\n"
	"template <class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_ld(C (&o)[V], const S *__restrict__ p, long long j0, long long n, bool vec)\n"
	"{\n"
	"\tif (vec && j0 + V <= n) {\n"
	"\t\tfz_vec<S, V> v = *reinterpret_cast<const fz_vec<S, V> *>(p + j0);\n"
	"\t\tfz_unpack(o, v);\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = j0 + u < n ? fz_in(p[j0 + u]) : C(0);\n"
	"\t}\n"
	"}\n"
	"template <class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_st(S *__restrict__ p, long long j0, long long n, bool vec, const C (&o)[V])\n"
	"{\n"
	"\tif (vec && j0 + V <= n) {\n"
	"\t\tfz_vec<S, V> v;\n"
	"\t\tfz_pack(v, o);\n"
	"\t\t*reinterpret_cast<fz_vec<S, V> *>(p + j0) = v;\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\tif (j0 + u < n)\n"
	"\t\t\t\tfz_out(p[j0 + u], o[u]);\n"
	"\t}\n"
	"}\n";

static const char pre_minmax[] =
	"// minimum, maximum and clamp propagate NaN, as PyTorch's do.\n"
	"__device__ __forceinline__ float fz_maximum(float a, float b)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tfloat r;\n"
	"\tasm(\"max.NaN.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
	"\treturn r;\n"
	"#else\n"
	"\treturn a != a || a > b ? a : b;\n"
	"#endif\n"
	"}\n"
	"__device__ __forceinline__ float fz_minimum(float a, float b)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tfloat r;\n"
	"\tasm(\"min.NaN.f32 %0, %1, %2;\" : \"=f\"(r) : \"f\"(a), \"f\"(b));\n"
	"\treturn r;\n"
	"#else\n"
	"\treturn a != a || a < b ? a : b;\n"
	"#endif\n"
	"}\n"
	"__device__ __forceinline__ double fz_maximum(double a, double b) { return a != a || a > b ? a : b; }\n"
	"__device__ __forceinline__ double fz_minimum(double a, double b) { return a != a || a < b ? a : b; }\n"
	"__device__ __forceinline__ int fz_maximum(int a, int b) { return a > b ? a : b; }\n"
	"__device__ __forceinline__ int fz_minimum(int a, int b) { return a < b ? a : b; }\n"
	"__device__ __forceinline__ long long fz_maximum(long long a, long long b) { return a > b ? a : b; }\n"
	"__device__ __forceinline__ long long fz_minimum(long long a, long long b) { return a < b ? a : b; }\n"
	"__device__ __forceinline__ bool fz_maximum(bool a, bool b) { return a || b; }\n"
	"__device__ __forceinline__ bool fz_minimum(bool a, bool b) { return a && b; }\n"
	"template <class T> __device__ __forceinline__ T fz_clamp(T x, T lo, T hi) { return fz_minimum(fz_maximum(x, lo), hi); }\n";

static const char pre_round[] =
	"// Casts to a half type round once to nearest even, also from f64 and from\n"
	"// integers: first to f32 rounding to odd, which the second rounding to fewer\n"
	"// bits cannot spoil (as the interpreter does).\n"
	"__device__ __forceinline__ float fz_odd(double d)\n"
	"{\n"
	"\tfloat f = __double2float_rz(d);\n"
	"\treturn (double)f == d || d != d ? f : __uint_as_float(__float_as_uint(f) | 1u);\n"
	"}\n"
	"__device__ __forceinline__ float fz_odd(long long v)\n"
	"{\n"
	"\tfloat f = __ll2float_rz(v);\n"
	"\treturn __float2ll_rz(f) == v ? f : __uint_as_float(__float_as_uint(f) | 1u);\n"
	"}\n"
	"__device__ __forceinline__ float fz_round_f16(float v)\n"
	"{\n"
	"\tfz_f16 h;\n"
	"\tfz_out(h, v);\n"
	"\treturn fz_in(h);\n"
	"}\n"
	"__device__ __forceinline__ float fz_round_bf16(float v)\n"
	"{\n"
	"\tfz_bf16 h;\n"
	"\tfz_out(h, v);\n"
	"\treturn fz_in(h);\n"
	"}\n";

static const char pre_pw[] =
	"// Pointwise kernels: chunk c of p (its V elements from element c * V) as one\n"
	"// vector access.\n"
	"template <class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_ldv(C (&o)[V], const S *__restrict__ p, long long c)\n"
	"{\n"
	"\tfz_vec<S, V> v = reinterpret_cast<const fz_vec<S, V> *>(p)[c];\n"
	"\tfz_unpack(o, v);\n"
	"}\n"
	"template <class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_stv(S *__restrict__ p, long long c, const C (&o)[V])\n"
	"{\n"
	"\tfz_vec<S, V> v;\n"
	"\tfz_pack(v, o);\n"
	"\treinterpret_cast<fz_vec<S, V> *>(p)[c] = v;\n"
	"}\n";

static const char pre_bcast[] =
	"// Quotients of indices (a >= 0, b > 0) for the offsets of broadcast operands:\n"
	"// fz_div32 in 32 bits when both fit (a 64-bit division is a long subroutine),\n"
	"// once a chunk; fz_div64 always in 64 bits, for the elements loaded one by one\n"
	"// (fewer inlined divisions: NVRTC's time).\n"
	"struct fz_div32 {\n"
	"\t__device__ __forceinline__ long long operator()(long long a, long long b) const\n"
	"\t{\n"
	"\t\tconst unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;\n"
	"\t\treturn (long long)((ua | ub) >> 32 ? ua / ub : (unsigned)ua / (unsigned)ub);\n"
	"\t}\n"
	"};\n"
	"struct fz_div64 {\n"
	"\t__device__ __forceinline__ long long operator()(long long a, long long b) const\n"
	"\t{\n"
	"\t\treturn (long long)((unsigned long long)a / (unsigned long long)b);\n"
	"\t}\n"
	"};\n"
	"// A broadcast operand of a pointwise kernel: element i of the index space\n"
	"// reads p[off(i, r, div)], r being the position of i in the operand's innermost\n"
	"// run of axes (of extent e). The chunk from i0 starts at o0 = off(i0, r, ...),\n"
	"// computed by the caller (once for the operands that read the same elements).\n"
	"// The whole chunk stays in that run when r + V <= e: it is then contiguous in\n"
	"// the operand (Contig) or one element of it; a chunk crossing the run's end is\n"
	"// loaded element by element.\n"
	"template <bool Contig, class C, class S, int V, class F>\n"
	"__device__ __forceinline__ void fz_ldb(C (&o)[V], const S *__restrict__ p, long long o0, long long r, long long e,\n"
	"                                       long long i0, F off)\n"
	"{\n"
	"\tif (r + V <= e && !Contig) {\n"
	"\t\tconst C v = fz_in(p[o0]);\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = v;\n"
	"\t} else if (r + V <= e && fz_aligned(p + o0, sizeof(S) * V < 16 ? sizeof(S) * V : 16)) {\n"
	"\t\tfz_ldv(o, p + o0, 0);\n"
	"\t} else if (r + V <= e) {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = fz_in(p[o0 + u]);\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = fz_in(p[off(i0 + u, r, fz_div64())]);\n"
	"\t}\n"
	"}\n";

// A row reduction's combining step, for every row entry and for rows of one
// element (pointwise.c).
static const char pre_acc[] =
	"struct fz_sum {\n"
	"\t__device__ __forceinline__ static float f(float a, float b) { return a + b; }\n"
	"\t__device__ __forceinline__ static double f(double a, double b) { return a + b; }\n"
	"\t__device__ __forceinline__ static long long f(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }\n"
	"};\n"
	"struct fz_max {\n"
	"\ttemplate <class T> __device__ __forceinline__ static T f(T a, T b) { return fz_maximum(a, b); }\n"
	"};\n"
	"struct fz_min {\n"
	"\ttemplate <class T> __device__ __forceinline__ static T f(T a, T b) { return fz_minimum(a, b); }\n"
	"};\n";

static const char pre_row[] =
	"struct alignas(16) fz_a16 { unsigned w[4]; };\n"
	"// Register caps of row entries, below their thread bound's, so that more\n"
	"// blocks fit an SM; measured under NVRTC's full optimizer (nvrtc.c), which\n"
	"// spills more than -Ofc=min did at the caps before (48, 72). Lean entries (rows\n"
	"// of f32 in registers or a cache, up to 1024 threads a block) and their masked\n"
	"// class (rows of any length) take 56: 4 blocks of 288 an SM instead of 3 at 64\n"
	"// (H200, under -Ofc=min: softmax 2047x4099 34.0 -> 31.1 us, layernorm 2046x4099\n"
	"// 42.2 -> 38.9). At 48 (5 blocks of 256), layernorm's entry spills 54 bytes\n"
	"// (H100: 8192x4096 115.6 us against 95.8 at 56; softmax 4096x4096 50.1 against\n"
	"// 49.3). The masked class of rows of halves (512-thread entries) takes 80, not\n"
	"// 128: 6 blocks of 128 an SM instead of 4 (H100: softmax f16 4094x4099 57.2 us\n"
	"// at 72, 50.8 at 80, where it still spills 68 bytes; row_plan.c says which\n"
	"// kernels). __maxnreg__ needs NVRTC 12.4; older ones get the thread bound alone.\n"
	"#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204\n"
	"#define FZ_LEAN_ROW __maxnreg__(56)\n"
	"#define FZ_MASKED_ROW __maxnreg__(56)\n"
	"#define FZ_MASKED_HALF_ROW __maxnreg__(80)\n"
	"#else\n"
	"#define FZ_LEAN_ROW __launch_bounds__(1024)\n"
	"#define FZ_MASKED_ROW __launch_bounds__(1024)\n"
	"#define FZ_MASKED_HALF_ROW __launch_bounds__(512)\n"
	"#endif\n"
	"// Row kernels. A group of blockDim.x threads works on one row (or one segment\n"
	"// of it): a power of two up to a warp, or whole warps; fz_reduce combines their\n"
	"// values with shuffles, and through shared memory `red` when the group is the\n"
	"// whole block (more than a warp): one barrier, since consecutive calls\n"
	"// alternate between the two halves of fz_red (a half is rewritten only after\n"
	"// every thread has passed the barrier of the call between, so after its\n"
	"// reads), and up to log2(warps) shuffles and a broadcast to combine the warps'\n"
	"// values (every lane ends with lane 0's tree). It runs once a row: a call\n"
	"// (fz_reduce) in most entries, which keeps them small for NVRTC; inlined\n"
	"// (fz_reduce_in) in the register path's entries that are not bound to 48\n"
	"// registers, where the call held up the row's other work (row_emit.c).\n"
	"template <class Op, class T> __device__ __forceinline__ T fz_reduce_in(T v, unsigned long long *red)\n"
	"{\n"
	"\tconst int g = blockDim.x;\n"
	"#pragma unroll\n"
	"\tfor (int o = 16; o > 0; o >>= 1)\n"
	"\t\tif (o < g)\n"
	"\t\t\tv = Op::f(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
	"\tif (g > 32) {\n"
	"\t\tT *r = reinterpret_cast<T *>(red);\n"
	"\t\tif ((threadIdx.x & 31) == 0)\n"
	"\t\t\tr[threadIdx.x >> 5] = v;\n"
	"\t\t__syncthreads();\n"
	"\t\t/* the w warps' values (any w up to 32): lane 0 gathers them all, each\n"
	"\t\t   lane combining only with lanes below w, then gives its total to all */\n"
	"\t\tconst int w = g >> 5, lane = threadIdx.x & 31;\n"
	"\t\tv = r[lane < w ? lane : 0];\n"
	"#pragma unroll\n"
	"\t\tfor (int o = 16; o > 0; o >>= 1)\n"
	"\t\t\tif (o < w) {\n"
	"\t\t\t\tconst T t = __shfl_xor_sync(0xffffffffu, v, o);\n"
	"\t\t\t\tv = (lane ^ o) < w ? Op::f(v, t) : v;\n"
	"\t\t\t}\n"
	"\t\tv = __shfl_sync(0xffffffffu, v, 0);\n"
	"\t}\n"
	"\treturn v;\n"
	"}\n"
	"template <class Op, class T> __device__ __noinline__ T fz_reduce(T v, unsigned long long *red)\n"
	"{\n"
	"\treturn fz_reduce_in<Op>(v, red);\n"
	"}\n"
	"// The row cache (shared memory or the workspace): V elements of a thread's chunk.\n"
	"template <class C, class S, int V> __device__ __forceinline__ void fz_cld(C (&o)[V], const S *c)\n"
	"{\n"
	"\tfz_vec<S, V> v = *reinterpret_cast<const fz_vec<S, V> *>(c);\n"
	"\tfz_unpack(o, v);\n"
	"}\n"
	"template <class C, class S, int V> __device__ __forceinline__ void fz_cst(S *c, const C (&o)[V])\n"
	"{\n"
	"\tfz_vec<S, V> v;\n"
	"\tfz_pack(v, o);\n"
	"\t*reinterpret_cast<fz_vec<S, V> *>(c) = v;\n"
	"}\n"
	"template <class T, int V> __device__ __forceinline__ void fz_mv(T (&d)[V], const T (&s)[V])\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\td[u] = s[u];\n"
	"}\n"
	"// Chunks aligned row by row: a row's chunk j0 .. j0+V-1 starts where the row's\n"
	"// primary stream is 16-byte aligned, so its first chunk may start before the row\n"
	"// (j0 < 0) and its last end past it (n). Elements outside 0 .. n-1 are neither\n"
	"// read (they load as zero) nor written; whole chunks move as one vector when\n"
	"// `vec` says the stream's row is aligned like the primary's. The rest (a row's\n"
	"// first and last chunk) are calls, not inlined: twice a row, and it keeps each\n"
	"// entry's code, so NVRTC's time, near the register path's.\n"
	"__device__ __forceinline__ bool fz_inrow(int i, int n) { return (unsigned)i < (unsigned)n; }\n"
	"__device__ __forceinline__ bool fz_inrow(long long i, long long n) { return (unsigned long long)i < (unsigned long long)n; }\n"
	"template <class C, class S, int V, class I>\n"
	"__device__ __noinline__ fz_vec<C, V> fz_ldm_part(const S *__restrict__ p, I j0, I n)\n"
	"{\n"
	"\tfz_vec<C, V> r;\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tr.e[u] = fz_inrow(j0 + u, n) ? fz_in(p[j0 + u]) : C(0);\n"
	"\treturn r;\n"
	"}\n"
	"template <class C, class S, int V, class I>\n"
	"__device__ __forceinline__ void fz_ldm(C (&o)[V], const S *__restrict__ p, I j0, I n, bool vec)\n"
	"{\n"
	"\tif (vec && j0 >= 0 && j0 + V <= n) {\n"
	"\t\tfz_vec<S, V> v = *reinterpret_cast<const fz_vec<S, V> *>(p + j0);\n"
	"\t\tfz_unpack(o, v);\n"
	"\t} else {\n"
	"\t\tconst fz_vec<C, V> r = fz_ldm_part<C, S, V, I>(p, j0, n);\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = r.e[u];\n"
	"\t}\n"
	"}\n"
	"// A chunk of outputs stored to global memory as one 16-byte access, written in\n"
	"// PTX: NVVM's full optimizer splits the vector store of the general loops\n"
	"// (fz_stm) into its elements, 4 st.global.f32 or 4 pairs of halves a chunk\n"
	"// (H100: log_softmax f32 167x50257 56.6 -> 43.2 us, softmax f32 1024x32768\n"
	"// 109.8 -> 104.6). Not in the register path's fz_str, where it lost as much\n"
	"// as it won (docs/performance.md, \"General loops: whole chunks unchecked\").\n"
	"template <class S, int V> __device__ __forceinline__ void fz_stg(S *p, const fz_vec<S, V> &v)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 700\n"
	"\tif constexpr (sizeof(fz_vec<S, V>) == 16) {\n"
	"\t\tunion { fz_vec<S, V> v; unsigned w[4]; } u;\n"
	"\t\tu.v = v;\n"
	"\t\tasm volatile(\"st.global.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"l\"(p), \"r\"(u.w[0]), \"r\"(u.w[1]), \"r\"(u.w[2]),\n"
	"\t\t             \"r\"(u.w[3]) : \"memory\");\n"
	"\t\treturn;\n"
	"\t}\n"
	"#endif\n"
	"\t*reinterpret_cast<fz_vec<S, V> *>(p) = v;\n"
	"}\n"
	"template <class S, int V, class I>\n"
	"__device__ __noinline__ void fz_stm_part(S *__restrict__ p, I j0, I n, fz_vec<S, V> v)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tif (fz_inrow(j0 + u, n))\n"
	"\t\t\tp[j0 + u] = v.e[u];\n"
	"}\n"
	"template <class C, class S, int V, class I>\n"
	"__device__ __forceinline__ void fz_stm(S *__restrict__ p, I j0, I n, bool vec, const C (&o)[V])\n"
	"{\n"
	"\tfz_vec<S, V> v;\n"
	"\tfz_pack(v, o);\n"
	"\tif (vec && j0 >= 0 && j0 + V <= n)\n"
	"\t\tfz_stg<S, V>(p + j0, v);\n"
	"\telse\n"
	"\t\tfz_stm_part<S, V, I>(p, j0, n, v);\n"
	"}\n"
	"// A stream whose chunks are not aligned with the row's (a column operand such\n"
	"// as layernorm's weight, whose offset from the row's alignment changes from row\n"
	"// to row; a mask of another layout): a whole chunk from the aligned blocks that\n"
	"// hold it, each word shifted into place (a select of the block's word and a\n"
	"// funnel shift of two), instead of V loads of one element. Element by element\n"
	"// where those blocks would reach outside p[0 .. n-1]. A call, not inlined (it\n"
	"// made layernorm's masked entry take 110 ms of NVRTC instead of 82), but for\n"
	"// a chunk that is aligned already (every chunk of rows of a multiple of V\n"
	"// elements): one vector load, inline (fz_ldc).\n"
	"template <int B> struct alignas(B) fz_blk { unsigned w[B / 4]; };\n"
	"template <class C, class S, int V, class I>\n"
	"__device__ __noinline__ fz_vec<C, V> fz_ldc_chunk(const S *__restrict__ p, I j0, I n)\n"
	"{\n"
	"\tC o[V];\n"
	"\tconstexpr int CB = (int)sizeof(S) * V, B = CB < 16 ? CB : 16, NB = CB / B, W = B / 4;\n"
	"\tconst unsigned long long a = (unsigned long long)(p + j0), off = a & (B - 1), A = a - off;\n"
	"\tif (B >= 4 && CB % B == 0 && j0 >= 0 && j0 + V <= n && A >= (unsigned long long)p &&\n"
	"\t    (off == 0 || A + B * (NB + 1) <= (unsigned long long)(p + n))) {\n"
	"\t\tconst fz_blk<B> *b = reinterpret_cast<const fz_blk<B> *>(A);\n"
	"\t\tunsigned w[(NB + 1) * W];\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < NB * W; i++)\n"
	"\t\t\tw[i] = b[i / W].w[i % W];\n"
	"\t\tfz_blk<B> last = {};\n"
	"\t\tif (off != 0)\n"
	"\t\t\tlast = b[NB];\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < W; i++)\n"
	"\t\t\tw[NB * W + i] = last.w[i];\n"
	"\t\tconst unsigned q = (unsigned)(off >> 2), sh = (unsigned)(off & 3) * 8;\n"
	"\t\tunsigned x[NB * W + 1];\n"
	"#pragma unroll\n"
	"\t\tfor (int k = 0; k <= NB * W; k++) {\n"
	"\t\t\tunsigned t = w[k];\n"
	"#pragma unroll\n"
	"\t\t\tfor (int c = 1; c < W; c++)\n"
	"\t\t\t\tt = q == (unsigned)c ? w[k + c] : t;\n"
	"\t\t\tx[k] = t;\n"
	"\t\t}\n"
	"\t\tfz_vec<S, V> v;\n"
	"\t\tunsigned *r = reinterpret_cast<unsigned *>(v.e);\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < NB * W; i++)\n"
	"\t\t\tr[i] = sizeof(S) >= 4 ? x[i] : (unsigned)((((unsigned long long)x[i + 1] << 32) | x[i]) >> sh);\n"
	"\t\tfz_unpack(o, v);\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = fz_inrow(j0 + u, n) ? fz_in(p[j0 + u]) : C(0);\n"
	"\t}\n"
	"\tfz_vec<C, V> r;\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tr.e[u] = o[u];\n"
	"\treturn r;\n"
	"}\n"
	"template <class C, class S, int V, class I>\n"
	"__device__ __forceinline__ void fz_ldc(C (&o)[V], const S *__restrict__ p, I j0, I n)\n"
	"{\n"
	"\tif (j0 >= 0 && j0 + V <= n && fz_aligned(p + j0, alignof(fz_vec<S, V>))) {\n"
	"\t\tfz_unpack(o, *reinterpret_cast<const fz_vec<S, V> *>(p + j0)); /* rows of a multiple of V */\n"
	"\t\treturn;\n"
	"\t}\n"
	"\tconst fz_vec<C, V> r = fz_ldc_chunk<C, S, V, I>(p, j0, n);\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\to[u] = r.e[u];\n"
	"}\n";

static const char pre_divr[] =
	"// Division by a value of the row (softmax's e / sum(e)): its reciprocal once a\n"
	"// row (fz_rcp_row, before the row's chunks) and one correction step. With\n"
	"// r = RN(1/d) and q = RN(x r), RN(q + (x - d q) r) is x / d correctly rounded\n"
	"// (Markstein's theorem) where nothing over- or underflows: d within 2^-40 ..\n"
	"// 2^40 (else r is NaN) and q within 2^-62 .. 2^62 (so x within 2^-102 ..\n"
	"// 2^102: the remainder x - d q is exact). Elsewhere (zeros, infinities, NaN,\n"
	"// extremes): x * r for a zero x, IEEE division otherwise, a call (inlined, the\n"
	"// compiler would compute it for every element and select). No MUFU.RCP and 8\n"
	"// instructions an element instead of 10; a zero x no longer takes the IEEE\n"
	"// division's slow path.\n"
	"__device__ __noinline__ float fz_div_ieee(float x, float d) { return x / d; }\n"
	"__device__ __forceinline__ float fz_rcp_row(float d)\n"
	"{\n"
	"\treturn (fabsf(d) >= 0x1p-40f) & (fabsf(d) < 0x1p40f) ? __frcp_rn(d) : __uint_as_float(0x7fc00000u);\n"
	"}\n"
	"__device__ __forceinline__ float fz_divr(float x, float d, float r)\n"
	"{\n"
	"\tconst float q = __fmul_rn(x, r), q1 = __fmaf_rn(__fmaf_rn(-d, q, x), r, q);\n"
	"\tif ((fabsf(q) >= 0x1p-62f) & (fabsf(q) < 0x1p62f))\n"
	"\t\treturn q1;\n"
	"\treturn x == 0.0f && r == r ? q : fz_div_ieee(x, d);\n"
	"}\n"
	"// The same without the slow path: fz_divr's result wherever it takes no call\n"
	"// (zeros too), else `slow` is set and the caller runs the chunk again through\n"
	"// fz_divr_call (a call: inlined, the compiler kept this run's tests for that\n"
	"// one, two more instructions an element). No branch an element.\n"
	"__device__ __noinline__ float fz_divr_call(float x, float d, float r) { return fz_divr(x, d, r); }\n"
	"__device__ __forceinline__ float fz_divq(float x, float d, float r, bool &slow)\n"
	"{\n"
	"\tconst float q = __fmul_rn(x, r), q1 = __fmaf_rn(__fmaf_rn(-d, q, x), r, q);\n"
	"\tconst bool in = (fabsf(q) >= 0x1p-62f) & (fabsf(q) < 0x1p62f);\n"
	"\tslow |= !in & !((x == 0.0f) & (r == r));\n"
	"\treturn in ? q1 : q;\n"
	"}\n";

static const char pre_cpa[] =
	"// Asynchronous copies into shared memory (cp.async, sm_80+: no registers held\n"
	"// while they fly) of B bytes: a 4 or 8-byte piece, or 16-byte pieces. The\n"
	"// cached rows fill their cache with them (fz_rowcp), the tiles stage their\n"
	"// inputs (fz_tin_async), and the rows in registers prefetch the same way\n"
	"// (fz_pf, which writes the copy out itself: its branches, placed by the\n"
	"// compiler around a call of this one, moved blocks of its PTX). A thread\n"
	"// waits for its own copies (fz_cpa_wait); the \"memory\" clobbers keep its\n"
	"// reads of shared memory on the right side of the copies.\n"
	"template <int B> __device__ __forceinline__ void fz_cpa(const void *d, const void *g)\n"
	"{\n"
	"\tstatic_assert(B == 4 || B == 8 || B % 16 == 0, \"cp.async copies 4, 8 or 16 bytes\");\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tunsigned a;\n"
	"\tasm(\"{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }\" : \"=r\"(a) : \"l\"(d));\n"
	"\tconst char *s = reinterpret_cast<const char *>(g);\n"
	"\tif (B == 8)\n"
	"\t\tasm volatile(\"cp.async.ca.shared.global [%0], [%1], 8;\" : : \"r\"(a), \"l\"(s) : \"memory\");\n"
	"\telse if (B == 4)\n"
	"\t\tasm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" : : \"r\"(a), \"l\"(s) : \"memory\");\n"
	"\telse\n"
	"#pragma unroll\n"
	"\t\tfor (int b = 0; b < B / 16; b++)\n"
	"\t\t\tasm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" : : \"r\"(a + 16 * b), \"l\"(s + 16 * b) : \"memory\");\n"
	"#endif\n"
	"}\n"
	"__device__ __forceinline__ void fz_cpa_wait()\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tasm volatile(\"cp.async.wait_all;\" : : : \"memory\");\n"
	"#endif\n"
	"}\n";

static const char pre_reg[] =
	"// Rows held in registers: a whole vector of a row whose length is a multiple\n"
	"// of V (no per-element bounds checks), 32-bit offsets. Element by element where\n"
	"// the launch's pointers are not aligned (rare): a call where `Call` says so (the\n"
	"// entries bound to 512 threads: their code, so NVRTC's time, shrinks by a fifth),\n"
	"// inline in the lean entries, whose registers are capped, where the call's register\n"
	"// convention cost 2% (H200, docs/performance.md).\n"
	"template <class C, class S, int V>\n"
	"__device__ __noinline__ fz_vec<C, V> fz_ldr_part(const S *__restrict__ p, int j0)\n"
	"{\n"
	"\tfz_vec<C, V> r;\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tr.e[u] = fz_in(p[j0 + u]);\n"
	"\treturn r;\n"
	"}\n"
	"template <class S, int V>\n"
	"__device__ __noinline__ void fz_str_part(S *__restrict__ p, int j0, fz_vec<S, V> v)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tp[j0 + u] = v.e[u];\n"
	"}\n"
	"template <class S, int V>\n"
	"__device__ __noinline__ void fz_pf_part(S *d, const S *__restrict__ p, int j0)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\td[u] = p[j0 + u];\n"
	"}\n"
	"template <bool Call, class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_ldr(C (&o)[V], const S *__restrict__ p, int j0, bool vec)\n"
	"{\n"
	"\tif (vec) {\n"
	"\t\tfz_vec<S, V> v = *reinterpret_cast<const fz_vec<S, V> *>(p + j0);\n"
	"\t\tfz_unpack(o, v);\n"
	"\t} else if (Call) {\n"
	"\t\tconst fz_vec<C, V> r = fz_ldr_part<C, S, V>(p, j0);\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = r.e[u];\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to[u] = fz_in(p[j0 + u]);\n"
	"\t}\n"
	"}\n"
	"template <bool Call, class C, class S, int V>\n"
	"__device__ __forceinline__ void fz_str(S *__restrict__ p, int j0, bool vec, const C (&o)[V])\n"
	"{\n"
	"\tfz_vec<S, V> v;\n"
	"\tfz_pack(v, o);\n"
	"\tif (vec) {\n"
	"\t\t*reinterpret_cast<fz_vec<S, V> *>(p + j0) = v;\n"
	"\t} else if (Call) {\n"
	"\t\tfz_str_part<S, V>(p, j0, v);\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\tp[j0 + u] = v.e[u];\n"
	"\t}\n"
	"}\n"
	"// Rows in registers, prefetched: while a block computes one row, the chunks of\n"
	"// its next row are copied into shared memory (cp.async on sm_80+: no registers\n"
	"// held, the loads in flight across the row's reductions). A thread reads back\n"
	"// only the chunks it copied, so it waits for its own copies, never for the\n"
	"// block; the \"memory\" clobbers keep its reads of a chunk before its next copy.\n"
	"// Element by element, a call, where the row is not aligned (only entries bound\n"
	"// to 512 threads prefetch).\n"
	"template <int V, class S> __device__ __forceinline__ void fz_pf(S *d, const S *__restrict__ p, int j0, bool vec)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tconst int n = (int)sizeof(S) * V; /* 16-byte pieces, or one of 8 or 4 bytes */\n"
	"\tif (vec && (n % 16 == 0 || n == 8 || n == 4)) {\n"
	"\t\tunsigned a;\n"
	"\t\tasm(\"{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }\" : \"=r\"(a) : \"l\"(d));\n"
	"\t\tconst char *g = reinterpret_cast<const char *>(p + j0);\n"
	"\t\tif (n == 8)\n"
	"\t\t\tasm volatile(\"cp.async.ca.shared.global [%0], [%1], 8;\" : : \"r\"(a), \"l\"(g) : \"memory\");\n"
	"\t\telse if (n == 4)\n"
	"\t\t\tasm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" : : \"r\"(a), \"l\"(g) : \"memory\");\n"
	"\t\telse\n"
	"#pragma unroll\n"
	"\t\t\tfor (int b = 0; b < n / 16; b++)\n"
	"\t\t\t\tasm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" : : \"r\"(a + 16 * b), \"l\"(g + 16 * b) : \"memory\");\n"
	"\t\treturn;\n"
	"\t}\n"
	"#endif\n"
	"\tfz_pf_part<S, V>(d, p, j0);\n"
	"}\n"
	"// The masked entries' copies of the row at offset r0 of stream b (of `total`\n"
	"// elements): a whole chunk as fz_pf copies it. So are the row's first and last\n"
	"// chunks, which start before the row and end past it, where they lie within\n"
	"// the tensor (all but the first and last rows, unless aligned): their elements\n"
	"// outside the row are never used (reductions and stores mask them). Element\n"
	"// by element only the rest, whose loads are not asynchronous: each row would\n"
	"// wait for them before its passes (H200: softmax f16 16761x1001 59.7 -> 53.8\n"
	"// us once copied whole).\n"
	"template <int V, class S>\n"
	"__device__ __forceinline__ void fz_pfm(S *d, const S *__restrict__ b, long long r0, long long total, int j0, int n,\n"
	"                                       bool vec)\n"
	"{\n"
	"\tif ((j0 >= 0 || r0 + j0 >= 0) && (j0 + V <= n || r0 + j0 + V <= total)) {\n"
	"\t\tfz_pf<V>(d, b + r0, j0, vec);\n"
	"\t\treturn;\n"
	"\t}\n"
	"\tconst S *p = b + r0;\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\td[u] = fz_inrow(j0 + u, n) ? p[j0 + u] : S();\n"
	"}\n";

static const char pre_rowcp[] =
	"// The cached paths' first pass (ROW, SPLIT): a thread's chunks of a row are\n"
	"// copied into its row cache before any is used, the whole of its share in\n"
	"// flight at once (cp.async into shared memory: no registers held), not one\n"
	"// chunk ahead of the one computed; the pass then reads them back as a later\n"
	"// pass does. A thread reads back only what it copied, so it waits for its own\n"
	"// copies (fz_cpa_wait), never for the block. `c` is the cache at the\n"
	"// thread's first chunk j of the row (or segment) at p, which ends at e; the\n"
	"// chunks that reach outside 0 .. e-1 (the row's first and last), and every\n"
	"// chunk where the stream is not aligned like the row's chunks (`vec`), go\n"
	"// element by element after the others are issued (zero outside the row). A\n"
	"// row cache in the workspace (`sh` false, rows too long for shared memory) is\n"
	"// filled by plain loads (batched, they cost the entries 20 registers).\n"
	"template <int V, class S>\n"
	"__device__ __forceinline__ void fz_rowcp(S *__restrict__ c, const S *__restrict__ p, long long j, long long e,\n"
	"                                      long long step, bool vec, bool sh)\n"
	"{\n"
	"\tconstexpr int B = (int)sizeof(S) * V;\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tif (sh && (B % 16 == 0 || B == 8 || B == 4)) {\n"
	"\t\tfor (long long k = j; k < e; k += step)\n"
	"\t\t\tif (vec && k >= 0 && k + V <= e)\n"
	"\t\t\t\tfz_cpa<B>(c + (k - j), p + k);\n"
	"\t} else\n"
	"#endif\n"
	"\t\tfor (long long k = j; k < e; k += step)\n"
	"\t\t\tif (vec && k >= 0 && k + V <= e)\n"
	"\t\t\t\t*reinterpret_cast<fz_vec<S, V> *>(c + (k - j)) = *reinterpret_cast<const fz_vec<S, V> *>(p + k);\n"
	"\tfor (long long k = j; k < e; k += step)\n"
	"\t\tif (!(vec && k >= 0 && k + V <= e))\n"
	"#pragma unroll\n"
	"\t\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\t\tc[k - j + u] = fz_inrow(k + u, e) ? p[k + u] : S();\n"
	"}\n";

static const char pre_split[] =
	"// Split rows: after a pass, the gridDim.y blocks of a row group publish\n"
	"// their partial results (as bits) in the workspace, wait for each other (they\n"
	"// are co-resident: cooperative launch) and all combine them in the same\n"
	"// order. The workspace's layout is the launch plan's (src/codegen/launch.c):\n"
	"// a counter per group, two alternating sets of partials per group (a block\n"
	"// may publish the next pass's while a slower one still reads these), then\n"
	"// the row caches of launches that keep them there.\n"
	"__device__ __forceinline__ unsigned long long fz_bits(float v) { return __float_as_uint(v); }\n"
	"__device__ __forceinline__ unsigned long long fz_bits(double v) { return (unsigned long long)__double_as_longlong(v); }\n"
	"__device__ __forceinline__ unsigned long long fz_bits(long long v) { return (unsigned long long)v; }\n"
	"__device__ __forceinline__ unsigned long long fz_bits(int v) { return (unsigned)v; }\n"
	"__device__ __forceinline__ void fz_unbits(float &v, unsigned long long b) { v = __uint_as_float((unsigned)b); }\n"
	"__device__ __forceinline__ void fz_unbits(double &v, unsigned long long b) { v = __longlong_as_double((long long)b); }\n"
	"__device__ __forceinline__ void fz_unbits(long long &v, unsigned long long b) { v = (long long)b; }\n"
	"__device__ __forceinline__ void fz_unbits(int &v, unsigned long long b) { v = (int)(unsigned)b; }\n"
	"__device__ __noinline__ void fz_barrier(unsigned long long *cnt, unsigned long long target)\n"
	"{\n"
	"\t__syncthreads();\n"
	"\tif (threadIdx.x == 0 && threadIdx.y == 0) {\n"
	"\t\t__threadfence();\n"
	"\t\tatomicAdd(cnt, 1ull);\n"
	"\t\twhile (*(volatile unsigned long long *)cnt < target)\n"
	"\t\t\t__nanosleep(64);\n"
	"\t\t__threadfence();\n"
	"\t}\n"
	"\t__syncthreads();\n"
	"}\n"
	"// The S partials of one reduction (stride nr), combined by every warp on its\n"
	"// own in one fixed order: lane l takes partials l, l + 32, ..., then a tree\n"
	"// over the lanes, and lane 0's result goes to all. So every block gets the\n"
	"// same bits, and a warp has its loads in flight together: one after another,\n"
	"// S of them (a row split over hundreds of blocks) took longer than the pass.\n"
	"// The SPLIT path's blocks are one row of whole warps.\n"
	"template <class Op, class T> __device__ __noinline__ T fz_gather(T a, const unsigned long long *p, int S, int nr)\n"
	"{\n"
	"\tconst int lane = threadIdx.x & 31;\n"
	"\tif (lane < S)\n"
	"\t\tfz_unbits(a, *(const volatile unsigned long long *)(p + (long long)lane * nr));\n"
	"\tfor (int s = lane + 32; s < S; s += 32) {\n"
	"\t\tT v;\n"
	"\t\tfz_unbits(v, *(const volatile unsigned long long *)(p + (long long)s * nr));\n"
	"\t\ta = Op::f(a, v);\n"
	"\t}\n"
	"#pragma unroll\n"
	"\tfor (int o = 16; o > 0; o >>= 1) {\n"
	"\t\tconst T v = __shfl_down_sync(0xffffffffu, a, o);\n"
	"\t\tif (lane + o < S && lane < o)\n"
	"\t\t\ta = Op::f(a, v);\n"
	"\t}\n"
	"\treturn __shfl_sync(0xffffffffu, a, 0);\n"
	"}\n";

static const char pre_tile[] =
	"// Short rows staged through shared memory (the TILE path): a block's rows are\n"
	"// one contiguous span b .. e-1 of each row stream, which the block's threads\n"
	"// copy between global memory and the stream's tile t as whole vectors, from the\n"
	"// stream's own alignment boundary before b (fz_toff elements before it: t[0]),\n"
	"// the span's first and last chunks element by element.\n"
	"template <int V, class S> __device__ __forceinline__ int fz_toff(const S *p, long long b)\n"
	"{\n"
	"\treturn (int)((unsigned long long)(p + b) / sizeof(S) % V);\n"
	"}\n"
	"// The elements of chunk c inside the span, one by one (its first and last).\n"
	"template <int V, class S>\n"
	"__device__ __forceinline__ void fz_tin_elems(S *d, const S *__restrict__ p, long long c, long long b, long long e)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tif (c + u >= b && c + u < e)\n"
	"\t\t\td[u] = p[c + u];\n"
	"}\n"
	"// Two chunks a thread at a time, their loads issued before any store: a thread\n"
	"// has two 16-byte loads in flight, not one (four cost NVRTC 10 ms more).\n"
	"template <int V, class S> __device__ __forceinline__ void fz_tin(S *t, const S *__restrict__ p, long long b, long long e, int o)\n"
	"{\n"
	"\tconst long long ts = b - o, step = (long long)blockDim.x * blockDim.y * V;\n"
	"\tconst unsigned A = sizeof(S) * V < 16 ? sizeof(S) * V : 16;\n"
	"\tfor (long long c0 = ts + (long long)(threadIdx.y * blockDim.x + threadIdx.x) * V; c0 < e; c0 += 2 * step) {\n"
	"\t\tfz_vec<S, V> v[2];\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < 2; i++) {\n"
	"\t\t\tconst long long c = c0 + i * step;\n"
	"\t\t\tif (c >= b && c + V <= e && fz_aligned(p + c, A))\n"
	"\t\t\t\tv[i] = *reinterpret_cast<const fz_vec<S, V> *>(p + c);\n"
	"\t\t}\n"
	"#pragma unroll\n"
	"\t\tfor (int i = 0; i < 2; i++) {\n"
	"\t\t\tconst long long c = c0 + i * step;\n"
	"\t\t\tS *d = t + (c - ts);\n"
	"\t\t\tif (c >= b && c + V <= e && fz_aligned(p + c, A)) {\n"
	"\t\t\t\t*reinterpret_cast<fz_vec<S, V> *>(d) = v[i];\n"
	"\t\t\t} else if (c < e) {\n"
	"\t\t\t\tfz_tin_elems<V>(d, p, c, b, e);\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t}\n"
	"}\n"
	"// The same copy, its whole 16-byte pieces by cp.async (sm_80+): every piece of\n"
	"// a thread in flight at once, in no registers, where fz_tin holds two at a\n"
	"// time (H200: softmax f32 66053x127 33.4 -> 30.3 us, layernorm f16 541200x31\n"
	"// 47.6 -> 46.0). fz_cpa_wait, once all the block's streams are issued, before\n"
	"// the block's barrier. Element by element at the span's ends; where a chunk is\n"
	"// not 16 bytes (a stream wider than the narrowest), fz_tin.\n"
	"template <int V, class S> __device__ __forceinline__ void fz_tin_async(S *t, const S *__restrict__ p, long long b, long long e, int o)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tif (sizeof(S) * V == 16) {\n"
	"\t\tconst long long ts = b - o, step = (long long)blockDim.x * blockDim.y * V;\n"
	"\t\tfor (long long c = ts + (long long)(threadIdx.y * blockDim.x + threadIdx.x) * V; c < e; c += step) {\n"
	"\t\t\tS *d = t + (c - ts);\n"
	"\t\t\tif (c >= b && c + V <= e && fz_aligned(p + c, 16)) {\n"
	"\t\t\t\tfz_cpa<16>(d, p + c);\n"
	"\t\t\t} else {\n"
	"\t\t\t\tfz_tin_elems<V>(d, p, c, b, e);\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t\treturn;\n"
	"\t}\n"
	"#endif\n"
	"\tfz_tin<V>(t, p, b, e, o);\n"
	"}\n"

	"template <int V, class S> __device__ __forceinline__ void fz_tout(S *__restrict__ p, const S *t, long long b, long long e, int o)\n"
	"{\n"
	"\tconst long long ts = b - o, nt = (long long)blockDim.x * blockDim.y;\n"
	"\tfor (long long c = ts + (long long)(threadIdx.y * blockDim.x + threadIdx.x) * V; c < e; c += nt * V) {\n"
	"\t\tconst S *d = t + (c - ts);\n"
	"\t\tif (c >= b && c + V <= e && fz_aligned(p + c, sizeof(S) * V < 16 ? sizeof(S) * V : 16)) {\n"
	"\t\t\t*reinterpret_cast<fz_vec<S, V> *>(p + c) = *reinterpret_cast<const fz_vec<S, V> *>(d);\n"
	"\t\t} else {\n"
	"#pragma unroll\n"
	"\t\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\t\tif (c + u >= b && c + u < e)\n"
	"\t\t\t\t\tp[c + u] = d[u];\n"
	"\t\t}\n"
	"\t}\n"
	"}\n"
	"// A row's elements j0 .. j0+V-1 in its tile (below n; zero beyond), and back.\n"
	"template <class C, class S, int V, class I> __device__ __forceinline__ void fz_tld(C (&o)[V], const S *t, I j0, I n)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\to[u] = fz_inrow(j0 + u, n) ? fz_in(t[j0 + u]) : C(0);\n"
	"}\n"
	"template <class C, class S, int V, class I> __device__ __forceinline__ void fz_tst(S *t, I j0, I n, const C (&o)[V])\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int u = 0; u < V; u++)\n"
	"\t\tif (fz_inrow(j0 + u, n))\n"
	"\t\t\tfz_out(t[j0 + u], o[u]);\n"
	"}\n";

/* ---- the ops' texts (ir/sem.def) ------------------------------------------------- */

/* The text of each op for each kind of operand, and whether it is a
 * function body rather than an expression. */
typedef struct SemText {
	const char *text;
	bool body;
} SemText;

#define SEM_NONE(op, ...)
#define SEM_EXPR(op, ...) [op] = {#__VA_ARGS__, false},
#define SEM_BODY(op, ...) [op] = {#__VA_ARGS__, true},

#define FLOAT SEM_EXPR
#define FLOAT_FN SEM_BODY
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_NONE
#define BOOL_FN SEM_NONE
#define ALL SEM_EXPR
static const SemText sem_float[OP_COUNT] = {
#include "ir/sem.def"
};
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#define FLOAT SEM_NONE
#define FLOAT_FN SEM_NONE
#define INT SEM_EXPR
#define INT_FN SEM_BODY
static const SemText sem_int[OP_COUNT] = {
#include "ir/sem.def"
};
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_EXPR
#define BOOL_FN SEM_BODY
static const SemText sem_bool[OP_COUNT] = {
#include "ir/sem.def"
};
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#undef ALL
#undef SEM_NONE
#undef SEM_EXPR
#undef SEM_BODY

/* The C types of each kind, and its unsigned partner (sem.def's T and U). */
static const char *const kind_type[CG_KIND_COUNT] = {"float", "double", "int", "long long", "bool"};
static const char *const kind_utype[CG_KIND_COUNT] = {NULL, NULL, "unsigned", "unsigned long long", NULL};

CgKind cg_kind(fz_dtype t)
{
	switch (t) {
	case FZ_BOOL: return CG_BOOL;
	case FZ_I32: return CG_I32;
	case FZ_I64: return CG_I64;
	case FZ_F64: return CG_F64;
	case FZ_F16:
	case FZ_BF16:
	case FZ_F32: return CG_F32;
	case FZ_DTYPE_COUNT: break;
	}
	return CG_KIND_COUNT;
}

const char *cg_sem_text(Op op, CgKind kind, bool *body)
{
	const SemText *t = kind == CG_F32 || kind == CG_F64 ? &sem_float[op]
	                   : kind == CG_I32 || kind == CG_I64 ? &sem_int[op]
	                   : kind == CG_BOOL                   ? &sem_bool[op]
	                                                        : NULL;
	if (!t || !t->text)
		return NULL;
	*body = t->body;
	return t->text;
}

/* fz_<name> of one op for one kind, from its text: the operands x, y, z and
 * the typedefs the text names. */
static void sem_helper(StrBuf *sb, Op op, CgKind kind)
{
	bool body = false;
	const char *text = cg_sem_text(op, kind, &body);
	if (!text)
		return; /* expr.c asked for it, so this cannot happen; NVRTC would say so */
	TypeRule rule = ir_ops[op].type;
	bool pred = rule == TY_COMPARE || rule == TY_LOGIC || rule == TY_PRED;
	const char *t = kind_type[kind];
	sb_printf(sb, "__device__ __forceinline__ %s fz_%s(", pred ? "bool" : t, ir_ops[op].name);
	static const char *const names[] = {"x", "y", "z"};
	for (int k = 0; k < ir_ops[op].arity; k++)
		sb_printf(sb, "%s%s %s", k ? ", " : "", t, names[k]);
	sb_puts(sb, ")\n{\n");
	if (cg_text_names(text, "T"))
		sb_printf(sb, "\ttypedef %s T;\n", t);
	if (cg_text_names(text, "U") && kind_utype[kind])
		sb_printf(sb, "\ttypedef %s U;\n", kind_utype[kind]);
	sb_printf(sb, body ? "\t%s\n}\n" : "\treturn %s;\n}\n", text);
}

void cg_prelude(StrBuf *sb, uint64_t helpers, const uint8_t *ophelp)
{
	static const struct {
		uint64_t bit;
		const char *text;
	} pieces[] = {
		{CGH_MINMAX, pre_minmax}, {CGH_ROUND, pre_round}, {CGH_PW, pre_pw}, {CGH_BCAST, pre_bcast},
		{CGH_ACC, pre_acc},       {CGH_ROW, pre_row},       {CGH_CPA, pre_cpa},     {CGH_REG, pre_reg},
		{CGH_SPLIT, pre_split},
		{CGH_TILE, pre_tile},     {CGH_DIVR, pre_divr},
		{CGH_ROWCP, pre_rowcp},
	};
	sb_puts(sb, pre_core);
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
		if (helpers & pieces[i].bit)
			sb_puts(sb, pieces[i].text);
	bool any = false;
	for (int op = 0; op < OP_COUNT; op++) {
		for (int kind = 0; kind < CG_KIND_COUNT; kind++) {
			if (!(ophelp[op] & (1u << kind)))
				continue;
			if (!any)
				sb_puts(sb, "// The ops that need their own function (their text is fusec's ir/sem.def,\n"
				            "// which the CPU reference runs too). Integers wrap; division never traps.\n");
			any = true;
			sem_helper(sb, (Op)op, (CgKind)kind);
		}
	}
}
