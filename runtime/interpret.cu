// interpret.cu: fusec's GPU interpreter, the kernels that run a program
// without compiling it. libfusec's build compiles this file once (NVRTC,
// tools/embed_kernels.c) to a cubin per architecture and embeds them, so a
// program's first launch can run here while NVRTC compiles its own kernels
// (interpret.c says when).
//
// It is the CPU interpreter (ir/interp.c, ir/eval.c) on the GPU, with the
// elementwise nodes under a reduction or an output evaluated per element
// from a small code (interpret_abi.h's FziExpr: a register per node), so
// that only reductions' results go through memory: every value in its
// dtype's compute type (f16/bf16 as f32, rounded only where stored),
// operands by strides (0 where they broadcast), the ops' formulas from
// ir/sem.def, the same text the CPU interpreter and the generated kernels
// use. Sums of floats accumulate in f64, as the CPU interpreter's. Simple
// over fast: a value is an 8-byte union, an op a switch; it runs only until
// the real kernels load.

#include "runtime/interpret_abi.h"

enum Op {
#define OP(e, name, arity, cls, type, cost, call, cuda) e,
#include "ir/ops.def"
#undef OP
	OP_COUNT
};

typedef FziValue V;

__device__ static bool is_float(int t) { return t >= FZI_F16; }

__device__ static float fz_nanf() { return __int_as_float(0x7fffffff); }

// ---- the formulas of sem.def, per compute type ----------------------------

#define SEM_FN __device__ static
#define SEM_I32 int
#define SEM_U32 unsigned
#define SEM_I64 long long
#define SEM_U64 unsigned long long
#define SEM_NAN fz_nanf()
#include "ir/sem_fns.h"

// An op on values of the operand's compute type (eval.c's eval_sem; which
// ops and dtypes meet here the host checked against the program's graph).
__device__ static V sem(int op, int result, int operand, const V *v)
{
	V r;
	if (is_float(operand)) {
		double d = operand == FZI_F64 ? sem_f64(op, v[0].f, v[1].f, v[2].f)
		                              : (double)sem_f32(op, (float)v[0].f, (float)v[1].f, (float)v[2].f);
		if (result == FZI_BOOL)
			r.i = d != 0;
		else
			r.f = d;
	} else if (operand == FZI_BOOL) {
		r.i = sem_bool(op, v[0].i != 0, v[1].i != 0, v[2].i != 0);
	} else {
		long long x = operand == FZI_I32 ? sem_i32(op, (int)v[0].i, (int)v[1].i, (int)v[2].i)
		                                 : sem_i64(op, v[0].i, v[1].i, v[2].i);
		r.i = result == FZI_BOOL ? x != 0 : x;
	}
	return r;
}

// ---- storage and conversions (eval.c's, with the generated code's cvt) ----

__device__ static float half_bits_to_f32(unsigned short b)
{
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
	return f;
}

__device__ static unsigned short f32_to_half_bits(float v)
{
	unsigned short b;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));
	return b;
}

__device__ static unsigned short f32_to_bf16_bits(float v)
{
	unsigned u = __float_as_uint(v); // round to nearest even, a NaN kept quiet
	return (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)
	                                       : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__device__ static float round_half(int t, float v)
{
	if (t == FZI_F16)
		return half_bits_to_f32(f32_to_half_bits(v));
	return __uint_as_float((unsigned)f32_to_bf16_bits(v) << 16);
}

__device__ static V load(const FziOperand &a, long long i)
{
	V r;
	if (!a.ptr)
		return a.v;
	const void *p = (const void *)a.ptr;
	switch (a.dtype) {
	case FZI_BOOL: r.i = ((const unsigned char *)p)[i] != 0; break;
	case FZI_I32: r.i = ((const int *)p)[i]; break;
	case FZI_I64: r.i = ((const long long *)p)[i]; break;
	case FZI_F16: r.f = half_bits_to_f32(((const unsigned short *)p)[i]); break;
	case FZI_BF16: r.f = __uint_as_float((unsigned)((const unsigned short *)p)[i] << 16); break;
	case FZI_F32: r.f = ((const float *)p)[i]; break;
	default: r.f = ((const double *)p)[i]; break;
	}
	return r;
}

__device__ static void store(int t, unsigned long long out, long long i, V v)
{
	void *p = (void *)out;
	switch (t) {
	case FZI_BOOL: ((unsigned char *)p)[i] = v.i != 0; break;
	case FZI_I32: ((int *)p)[i] = (int)v.i; break;
	case FZI_I64: ((long long *)p)[i] = v.i; break;
	case FZI_F16: ((unsigned short *)p)[i] = f32_to_half_bits((float)v.f); break;
	case FZI_BF16: ((unsigned short *)p)[i] = f32_to_bf16_bits((float)v.f); break;
	case FZI_F32: ((float *)p)[i] = (float)v.f; break;
	default: ((double *)p)[i] = v.f; break;
	}
}

// f64 -> f32 rounded to odd, integers -> f32 with a sticky bit: a second
// rounding to a half type is then the only one (the prelude's fz_odd).
__device__ static float odd_of_f64(double d)
{
	float f = __double2float_rz(d);
	return (double)f == d || d != d ? f : __uint_as_float(__float_as_uint(f) | 1u);
}

__device__ static float odd_of_i64(long long v)
{
	float f = __ll2float_rz(v);
	return __float2ll_rz(f) == v ? f : __uint_as_float(__float_as_uint(f) | 1u);
}

// eval_cast: float -> integer truncates and saturates, NaN -> 0 (cvt.rzi);
// integers wrap; halves round once.
__device__ static V cast(int from, int to, V v)
{
	V r;
	bool ff = is_float(from);
	if (to == FZI_BOOL)
		r.i = ff ? v.f != 0 : v.i != 0;
	else if (to == FZI_I32)
		r.i = ff ? __double2int_rz(v.f) : (long long)(int)(unsigned)(unsigned long long)v.i;
	else if (to == FZI_I64)
		r.i = ff ? __double2ll_rz(v.f) : v.i;
	else if (to == FZI_F64)
		r.f = ff ? v.f : (double)v.i;
	else if (to == FZI_F32)
		r.f = ff ? (double)(float)v.f : (double)(float)v.i;
	else
		r.f = round_half(to, ff ? (from == FZI_F64 ? odd_of_f64(v.f) : (float)v.f) : odd_of_i64(v.i));
	return r;
}

// ---- kernels --------------------------------------------------------------

// The expression at one element, its operands at offsets off[] (of x.load).
__device__ static V eval(const FziExpr &x, const long long *off)
{
	V reg[FZI_MAX_CODE];
	for (int i = 0; i < x.ncode; i++) {
		const FziInstr &in = x.code[i];
		V r;
		if (in.how == FZI_LOAD) {
			r = load(x.load[in.a[0]], off[in.a[0]]);
		} else if (in.how == FZI_SELECT) {
			r = reg[in.a[0]].i ? reg[in.a[1]] : reg[in.a[2]];
		} else {
			V v[3] = {reg[in.a[0]], reg[in.a[1]], reg[in.a[2]]};
			r = in.how == FZI_CAST ? cast(in.operand, in.result, v[0]) : sem(in.op, in.result, in.operand, v);
		}
		if (in.round)
			r.f = round_half(in.result, (float)r.f);
		reg[i] = r;
	}
	return reg[x.ncode - 1];
}

// Offsets of every operand at the element whose index over x.shape[0..rank)
// is idx (only the strided ones read it).
__device__ static void offsets(const FziExpr &x, long long e, const long long *idx, long long *off)
{
	for (int l = 0; l < x.nloads; l++) {
		const FziOperand &o = x.load[l];
		long long v = o.kind == FZI_DENSE ? e : 0;
		if (o.kind == FZI_STRIDED)
			for (int k = 0; k < x.rank; k++)
				v += idx[k] * o.stride[k];
		off[l] = v;
	}
}

extern "C" __global__ void fzi_map(const FziMap m)
{
	for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m.n;
	     e += (long long)gridDim.x * blockDim.x) {
		long long idx[FZI_MAX_RANK], off[FZI_MAX_LOADS];
		if (m.x.strided)
			for (long long k = m.x.rank - 1, rest = e; k >= 0; k--) {
				idx[k] = rest % m.x.shape[k];
				rest /= m.x.shape[k];
			}
		offsets(m.x, e, idx, off);
		store(m.store, m.out, e, eval(m.x, off));
	}
}

// A thread's share of a row: a float sum with its compensation (Neumaier,
// as eval.c), an integer sum (wrapping), or the max/min so far.
struct Acc {
	double sum, comp;
	unsigned long long isum;
	V best;
	long long n;
};

__device__ static void acc_add(Acc &a, int op, bool fl, V v)
{
	if (op == OP_SUM || op == OP_MEAN) {
		if (!fl) {
			a.isum += (unsigned long long)v.i;
		} else {
			double s = a.sum, t = s + v.f;
			a.comp += fabs(s) >= fabs(v.f) ? (s - t) + v.f : (v.f - t) + s;
			a.sum = t;
		}
	} else if (a.n == 0) {
		a.best = v;
	} else if (fl) {
		bool take = op == OP_MAX ? v.f > a.best.f : v.f < a.best.f;
		if (!isnan(a.best.f) && (isnan(v.f) || take))
			a.best = v;
	} else {
		bool take = op == OP_MAX ? v.i > a.best.i : v.i < a.best.i;
		if (take)
			a.best = v;
	}
	a.n++;
}

__device__ static void acc_merge(Acc &a, int op, bool fl, const Acc &b)
{
	if (op == OP_SUM || op == OP_MEAN) {
		a.isum += b.isum;
		double s = a.sum, t = s + b.sum; // b's sum, then its compensation
		a.comp += (fabs(s) >= fabs(b.sum) ? (s - t) + b.sum : (b.sum - t) + s) + b.comp;
		a.sum = t;
		a.n += b.n;
	} else if (b.n > 0) {
		long long n = a.n + b.n;
		acc_add(a, op, fl, b.best);
		a.n = n;
	}
}

extern "C" __global__ void fzi_reduce(const FziReduce m)
{
	__shared__ Acc part[256];
	const bool fl = is_float(m.operand);
	const int last = m.x.rank - 1;
	for (long long row = blockIdx.x; row < m.rows; row += gridDim.x) {
		// the row's operand offsets once; an element k further along the row
		long long idx[FZI_MAX_RANK] = {0}, base[FZI_MAX_LOADS], off[FZI_MAX_LOADS];
		for (long long k = last - 1, rest = row; k >= 0; k--) {
			idx[k] = rest % m.x.shape[k];
			rest /= m.x.shape[k];
		}
		offsets(m.x, row * m.len, idx, base);
		Acc a = {0, 0, 0, {0}, 0};
		for (long long k = threadIdx.x; k < m.len; k += blockDim.x) {
			for (int l = 0; l < m.x.nloads; l++)
				off[l] = base[l] + (m.x.load[l].kind == FZI_DENSE ? k : k * m.x.load[l].stride[last]);
			acc_add(a, m.op, fl, eval(m.x, off));
		}
		part[threadIdx.x] = a;
		__syncthreads();
		for (unsigned h = blockDim.x / 2; h > 0; h /= 2) { // threads in order: one result whatever the timing
			if (threadIdx.x < h)
				acc_merge(part[threadIdx.x], m.op, fl, part[threadIdx.x + h]);
			__syncthreads();
		}
		if (threadIdx.x == 0) {
			const Acc &t = part[0];
			double fsum = isfinite(t.sum) ? t.sum + t.comp : t.sum;
			V r;
			switch (m.op) {
			case OP_SUM:
				if (fl)
					r.f = fsum;
				else
					r.i = (long long)t.isum;
				break;
			case OP_MEAN:
				if (t.n == 0)
					r.f = (double)fz_nanf();
				else if (fl)
					r.f = fsum / (double)t.n;
				else
					r.f = (double)((float)(long long)t.isum / (float)t.n);
				break;
			default: r = t.best; break;
			}
			if (is_float(m.result) && m.result != FZI_F64)
				r.f = (double)(float)r.f; // the result's compute type (eval_normalize)
			else if (m.result == FZI_I32)
				r.i = (long long)(int)(unsigned)(unsigned long long)r.i;
			if (m.round)
				r.f = round_half(m.result, (float)r.f);
			store(m.store, m.out, row, r);
		}
		__syncthreads();
	}
}
