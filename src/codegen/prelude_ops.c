/*
 * prelude_ops.c: the prelude's pieces that compute values: NaN-propagating
 * minimum and maximum, rounding to f16/bf16, the correctly rounded
 * reciprocal, division by a value of the row, the half-precision math, and
 * the helpers fz_<name> written from ir/sem.def's texts (for each dtype a
 * kernel uses).
 *
 * Math functions are CUDA's accurate ones (expf, tanhf, erff: at most 2 ulp;
 * the module is compiled without -use_fast_math), so results match the
 * interpreter up to the ulps of those functions; exp, sigmoid, silu and
 * division of f16 and bf16 values are the exception (cg_pre_halfmath:
 * approximations far below a half's rounding; accurate math made these
 * kernels issue-bound).
 */
#include "codegen/cgint.h"

const char cg_pre_minmax[] =
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

const char cg_pre_round[] =
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

const char cg_pre_rcp[] =
	"// RN(1 / d) for a normal d below 2^126 in magnitude, in the steps ptxas takes\n"
	"// there for rcp.rn (an approximation and one correction; correctly rounded),\n"
	"// inline: ptxas's rcp.rn and sqrt.rn call their slow paths for the other\n"
	"// inputs, and it kept the registers live across those calls in local memory,\n"
	"// stored before the branch that skips them (fz_rcp_row, fz_rsqrt).\n"
	"__device__ __forceinline__ float fz_rcp_near(float d)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tfloat q, t;\n"
	"\tasm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(q) : \"f\"(d));\n"
	"\tasm(\"fma.rn.f32 %0, %1, %2, 0fBF800000;\" : \"=f\"(t) : \"f\"(q), \"f\"(d)); // q d - 1\n"
	"\tasm(\"fma.rn.f32 %0, %1, %2, %3;\" : \"=f\"(q) : \"f\"(q), \"f\"(-t), \"f\"(q));\n"
	"\treturn q;\n"
	"#else\n"
	"\treturn 1.0f / d;\n"
	"#endif\n"
	"}\n";

const char cg_pre_halfmath[] =
	"// exp, sigmoid, silu and division of f16 or bf16 values (computed in f32, rounded\n"
	"// where stored), approximately. exp is 2^(x log2 e) by the hardware's exp2 (CUDA's\n"
	"// __expf: at most 2 + 1.2 |x| ulps of f32, so under 2^-16 of the value wherever a\n"
	"// bf16 is finite, 2^-18 over an f16's range; results under 2^-126 flush to zero;\n"
	"// torch.compile's kernels reduce the range first, libdevice's expf with flush to\n"
	"// zero). Division is div.full.f32 (at most 2 ulps at any range), as torch.compile's.\n"
	"// That is under a hundredth of the half's own rounding step: the stored half is the\n"
	"// accurate formula's, or its neighbour where that lies within the error of a\n"
	"// rounding boundary. (A division by a value of the row multiplies by its\n"
	"// reciprocal: fz_divqh.) Accurate expf and IEEE division made these kernels\n"
	"// issue-bound: silu bf16's entry was 408 instructions for its 9 elements, 184 with\n"
	"// these (docs/performance.md, \"Half-precision math\").\n"
	"__device__ __forceinline__ float fz_exp_h(float x)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tfloat y;\n"
	"\tasm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x * 1.44269504088896341f));\n"
	"\treturn y;\n"
	"#else\n"
	"\treturn expf(x);\n"
	"#endif\n"
	"}\n"
	"__device__ __forceinline__ float fz_div_h(float x, float d)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tfloat q;\n"
	"\tasm(\"div.full.f32 %0, %1, %2;\" : \"=f\"(q) : \"f\"(x), \"f\"(d));\n"
	"\treturn q;\n"
	"#else\n"
	"\treturn x / d;\n"
	"#endif\n"
	"}\n"
	"__device__ __forceinline__ float fz_sigmoid_h(float x) { return fz_div_h(1.0f, 1.0f + fz_exp_h(-x)); }\n"
	"__device__ __forceinline__ float fz_silu_h(float x) { return fz_div_h(x, 1.0f + fz_exp_h(-x)); }\n";

const char cg_pre_divr[] =
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
	"\treturn (fabsf(d) >= 0x1p-40f) & (fabsf(d) < 0x1p40f) ? fz_rcp_near(d) : __uint_as_float(0x7fc00000u);\n"
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

const char cg_pre_divrh[] =
	"// Division of f16/bf16 values (computed in f32, rounded where stored) by a\n"
	"// value of the row, with the row's reciprocal as fz_divr's (fz_rcp_row):\n"
	"// x r alone, within 1.5 ulps of f32 (far below the half's rounding step), and\n"
	"// where the row's divisor has no reciprocal (r is NaN) the halves' division\n"
	"// (fz_div_h, 2 ulps at any range), inline: no call, whose register convention\n"
	"// spilled the line entries' 32 registers (launch_rules.c's line_rule). fz_divqh\n"
	"// flags the chunk for fz_divrh instead, as fz_divq does for fz_divr_call.\n"
	"__device__ __forceinline__ float fz_divrh(float x, float d, float r)\n"
	"{\n"
	"\treturn r == r ? x * r : fz_div_h(x, d);\n"
	"}\n"
	"__device__ __forceinline__ float fz_divqh(float x, float d, float r, bool &slow)\n"
	"{\n"
	"\tslow |= r != r;\n"
	"\treturn x * r;\n"
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

/* f32 rsqrt, 1 / sqrt(x), rounded twice as sem.def's text is: inline where x
 * is a normal of 2^-101 .. FLT_MAX, in the steps ptxas itself takes there for
 * sqrt.rn and rcp.rn (an approximation and one correction each, correctly
 * rounded in that range); elsewhere (zeros, denormals, negatives, infinity,
 * NaN) the text, in a function that is called. Compiled from the text, the
 * rsqrt of a row's variance took ptxas's calls to its slow paths, and ptxas
 * stored the live registers to local memory around them, before the branch
 * that skips them, in every row: the short rows' entries of layernorm f16
 * (rows of 2, 4, 5 and 8) spilled 12 to 28 bytes under their bound of 32
 * registers (0 to 8 without the calls; ptxas -v, sm_90). Every f32 input
 * gives the text's bits (tests/python/test_gpu.py: all 2^32 of them, on
 * the GPU). */
static const char pre_rsqrt[] =
	"__device__ __forceinline__ float fz_rsqrt(float x)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tif (__float_as_uint(x) - 0x0d000000u <= 0x727fffffu) {\n"
	"\t\tfloat r, s, h, e;\n"
	"\t\tasm(\"rsqrt.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n"
	"\t\tasm(\"mul.ftz.f32 %0, %1, %2;\" : \"=f\"(s) : \"f\"(x), \"f\"(r));\n"
	"\t\tasm(\"mul.ftz.f32 %0, %1, 0f3F000000;\" : \"=f\"(h) : \"f\"(r)); // r / 2\n"
	"\t\tasm(\"fma.rn.f32 %0, %1, %2, %3;\" : \"=f\"(e) : \"f\"(-s), \"f\"(s), \"f\"(x));\n"
	"\t\tasm(\"fma.rn.f32 %0, %1, %2, %3;\" : \"=f\"(s) : \"f\"(e), \"f\"(h), \"f\"(s)); // sqrt(x)\n"
	"\t\treturn fz_rcp_near(s);\n"
	"\t}\n"
	"#endif\n"
	"\treturn fz_rsqrt_text(x);\n"
	"}\n";

/* fz_<name> of one op for one kind, from its text: the operands x, y, z and
 * the typedefs the text names. f32 rsqrt's is fz_rsqrt_text, not inlined,
 * under pre_rsqrt's fz_rsqrt. */
void cg_sem_helper(StrBuf *sb, Op op, CgKind kind)
{
	bool body = false;
	const char *text = cg_sem_text(op, kind, &body);
	if (!text)
		return; /* expr.c asked for it, so this cannot happen; NVRTC would say so */
	TypeRule rule = ir_ops[op].type;
	bool pred = rule == TY_COMPARE || rule == TY_LOGIC || rule == TY_PRED;
	const char *t = kind_type[kind];
	bool fast = op == OP_RSQRT && kind == CG_F32;
	sb_printf(sb, "__device__ %s %s fz_%s%s(", fast ? "__noinline__" : "__forceinline__", pred ? "bool" : t,
	          ir_ops[op].name, fast ? "_text" : "");
	static const char *const names[] = {"x", "y", "z"};
	for (int k = 0; k < ir_ops[op].arity; k++)
		sb_printf(sb, "%s%s %s", k ? ", " : "", t, names[k]);
	sb_puts(sb, ")\n{\n");
	if (cg_text_names(text, "T"))
		sb_printf(sb, "\ttypedef %s T;\n", t);
	if (cg_text_names(text, "U") && kind_utype[kind])
		sb_printf(sb, "\ttypedef %s U;\n", kind_utype[kind]);
	sb_printf(sb, body ? "\t%s\n}\n" : "\treturn %s;\n}\n", text);
	if (fast)
		sb_puts(sb, pre_rsqrt);
}
