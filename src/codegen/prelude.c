/*
 * prelude.c: the device helpers every generated module starts with.
 *
 * The generated source includes nothing (NVRTC compiles it without headers,
 * which keeps a cold compile fast), so everything a kernel calls beyond
 * NVRTC's built-in math functions and intrinsics is defined in the prelude:
 * here, storage types for f16/bf16 (bit patterns, converted with PTX cvt
 * instructions, round to nearest even) and vector loads and stores, and the
 * assembly of a module's prelude from the pieces its entries use;
 * prelude_ops.c has the pieces that compute values (minimum and maximum,
 * divisions, half-precision math, the helpers of sem.def's texts),
 * prelude_row.c the row-kernel machinery (reductions, the row cache,
 * split-row exchange), prelude_reg.c that of rows held in registers (the
 * register path, staged tiles). Only the pieces a module uses are emitted.
 */
#include "codegen/cgint.h"

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
	"// A chunk that other chunks read too (a weight [C] is read by every row):\n"
	"// loaded as 16-byte vectors that the L1 and the L2 keep before the streamed\n"
	"// tensors (evict_last), as torch.compile's kernels do (the loaders' Keep).\n"
	"// The load is volatile: a plain asm is a pure function to NVVM, which hoists\n"
	"// it above the bounds test that guards it (an empty row's null pointer was\n"
	"// read: progen seed 550).\n"
	"template <class S, int V> __device__ __forceinline__ void fz_ldk(fz_vec<S, V> &o, const S *p)\n"
	"{\n"
	"#if __CUDA_ARCH__ >= 800\n"
	"\tif constexpr (sizeof(o) % 16 == 0) {\n"
	"\t\tunsigned *w = reinterpret_cast<unsigned *>(o.e);\n"
	"\t\tunsigned long long pol;\n"
	"\t\tasm(\"createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\" : \"=l\"(pol));\n"
	"#pragma unroll\n"
	"\t\tfor (int k = 0; k < (int)sizeof(o) / 16; k++)\n"
	"\t\t\tasm volatile(\"ld.global.nc.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;\"\n"
	"\t\t\t    : \"=r\"(w[4 * k]), \"=r\"(w[4 * k + 1]), \"=r\"(w[4 * k + 2]), \"=r\"(w[4 * k + 3])\n"
	"\t\t\t    : \"l\"(reinterpret_cast<const char *>(p) + 16 * k), \"l\"(pol));\n"
	"\t\treturn;\n"
	"\t}\n"
	"#endif\n"
	"\to = *reinterpret_cast<const fz_vec<S, V> *>(p);\n"
	"}\n"
	"// fz_ldk's chunk as a value, for the row loaders' Keep: so written, layernorm\n"
	"// bf16's register entry took 89 registers, with fz_ldk inline 111 (the\n"
	"// register entries keep nothing since: row_chunk.c, row_keeps).\n"
	"template <class S, int V> __device__ __forceinline__ fz_vec<S, V> fz_ldkv(const S *p)\n"
	"{\n"
	"\tfz_vec<S, V> v;\n"
	"\tfz_ldk(v, p);\n"
	"\treturn v;\n"
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

static const char pre_pw[] =
	"// Pointwise kernels keep a chunk in its storage type, V elements in 16 bytes,\n"
	"// and convert an element where the math uses it (fz_get): eight halves\n"
	"// unpacked at the load held eight registers, not four, across the math (DyT\n"
	"// bf16: 40 -> 34; docs/performance.md, \"Broadcast chunks, packed and\n"
	"// kept\"). fz_ldv and fz_stv move chunk c of p (its V elements from element\n"
	"// c * V) as one vector access.\n"
	"template <class S, int V> __device__ __forceinline__ auto fz_get(const fz_vec<S, V> &v, int u) { return fz_in(v.e[u]); }\n"
	"template <int V> __device__ __forceinline__ float fz_get(const fz_vec<fz_bf16, V> &v, int u)\n"
	"{\n"
	"\tif (V % 2 && u == V - 1)\n"
	"\t\treturn fz_in(v.e[u]);\n"
	"\tconst unsigned w = reinterpret_cast<const unsigned *>(v.e)[u / 2];\n"
	"\treturn __uint_as_float(u % 2 ? w & 0xffff0000u : w << 16);\n"
	"}\n"
	"template <class S, int V>\n"
	"__device__ __forceinline__ void fz_ldv(fz_vec<S, V> &o, const S *__restrict__ p, long long c)\n"
	"{\n"
	"\to = reinterpret_cast<const fz_vec<S, V> *>(p)[c];\n"
	"}\n"
	"template <class S, int V>\n"
	"__device__ __forceinline__ void fz_stv(S *__restrict__ p, long long c, const fz_vec<S, V> &v)\n"
	"{\n"
	"\treinterpret_cast<fz_vec<S, V> *>(p)[c] = v;\n"
	"}\n";

static const char pre_bcast[] =
	"// Quotients of indices (a >= 0, b > 0) for the offsets of broadcast operands,\n"
	"// m being b's magic number, a launch value (launch.c, cg_div_magic: multiplier\n"
	"// and shift, 0 if none). fz_divm, once a chunk: a multiply-high and a shift\n"
	"// where a < 2^31, else a division (32-bit where both fit: a 64-bit one is a long\n"
	"// subroutine). fz_div64 always in 64 bits, for the elements loaded one by one\n"
	"// (fewer inlined paths: NVRTC's time).\n"
	"struct fz_divm {\n"
	"\t__device__ __forceinline__ long long operator()(long long a, long long b, long long m) const\n"
	"\t{\n"
	"\t\tconst unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;\n"
	"\t\tif ((unsigned)m != 0 && ua >> 31 == 0)\n"
	"\t\t\treturn (long long)(__umulhi((unsigned)ua, (unsigned)m) >> (unsigned)(m >> 32));\n"
	"\t\treturn (long long)((ua | ub) >> 32 ? ua / ub : (unsigned)ua / (unsigned)ub);\n"
	"\t}\n"
	"};\n"
	"struct fz_div64 {\n"
	"\t__device__ __forceinline__ long long operator()(long long a, long long b, long long) const\n"
	"\t{\n"
	"\t\treturn (long long)((unsigned long long)a / (unsigned long long)b);\n"
	"\t}\n"
	"};\n"
	"// A broadcast operand of a pointwise kernel: element i of the index space\n"
	"// reads p[off(i, r, div)], r being the position of i in the operand's innermost\n"
	"// run of axes (of extent e). The chunk from i0 starts at o0 = off(i0, r, ...),\n"
	"// computed by the caller (once for the operands that read the same elements).\n"
	"// The whole chunk stays in that run when r + V <= e: it is then contiguous in\n"
	"// the operand (Contig) or one element of it. A chunk crossing the run's end\n"
	"// once (V <= e) reads its first k = e - r elements from o0 on and the rest\n"
	"// from the next run's start, o1 = off(i0 + k): one more division a chunk, not\n"
	"// a 64-bit one an element, which the warp of the crossing thread waited for\n"
	"// (H200: dyt bf16 16383x1001 42.4 -> 35.6 us, 4095x4093 33.4 -> 31.0). Not\n"
	"// merged with the branch before (k = V there): that took 4095x4093 to 43.4.\n"
	"// Element by element only where runs are shorter than a chunk.\n"
	"template <bool Contig, class S, int V, class F>\n"
	"__device__ __forceinline__ void fz_ldb(fz_vec<S, V> &o, const S *__restrict__ p, long long o0, long long r, long long e,\n"
	"                                       long long i0, F off)\n"
	"{\n"
	"\tif (r + V <= e && !Contig) {\n"
	"\t\tconst S v = p[o0];\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to.e[u] = v;\n"
	"\t} else if (r + V <= e && fz_aligned(p + o0, sizeof(S) * V < 16 ? sizeof(S) * V : 16)) {\n"
	"\t\tfz_ldv(o, p + o0, 0);\n"
	"\t} else if (r + V <= e) {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to.e[u] = p[o0 + u];\n"
	"\t} else if (V <= e) {\n"
	"\t\tconst int k = (int)(e - r);\n"
	"\t\tlong long r1;\n"
	"\t\tconst long long o1 = off(i0 + k, r1, fz_divm());\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to.e[u] = p[u < k ? o0 + (Contig ? u : 0) : o1 + (Contig ? u - k : 0)];\n"
	"\t} else {\n"
	"#pragma unroll\n"
	"\t\tfor (int u = 0; u < V; u++)\n"
	"\t\t\to.e[u] = p[off(i0 + u, r, fz_div64())];\n"
	"\t}\n"
	"}\n";

void cg_prelude(StrBuf *sb, uint64_t helpers, const uint8_t *ophelp)
{
	static const struct {
		uint64_t bit;
		const char *text;
	} pieces[] = {
		{CGH_MINMAX, cg_pre_minmax}, {CGH_ROUND, cg_pre_round}, {CGH_PW, pre_pw}, {CGH_BCAST, pre_bcast},
		{CGH_ACC, cg_pre_acc},       {CGH_ROW, cg_pre_row},       {CGH_CPA, cg_pre_cpa},     {CGH_RING, cg_pre_ring},
		{CGH_REG, cg_pre_reg},       {CGH_SPLIT, cg_pre_split},   {CGH_ONLINE, cg_pre_online},
		{CGH_TILE, cg_pre_tile},     {CGH_DIVR, cg_pre_divr},
		{CGH_ROWCP, cg_pre_rowcp},   {CGH_MASK, cg_pre_mask},     {CGH_HALFMATH, cg_pre_halfmath},
		{CGH_DIVRH, cg_pre_divrh}, /* (after fz_div_h) */
	};
	sb_puts(sb, pre_core);
	if ((helpers & CGH_DIVR) || (ophelp[OP_RSQRT] & (1u << CG_F32)))
		sb_puts(sb, cg_pre_rcp);
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
			cg_sem_helper(sb, (Op)op, (CgKind)kind);
		}
	}
}
