/*
 * interpret_abi.h: what the GPU interpreter's kernels (interpret.cu,
 * compiled to cubins when libfusec is built) and the host code that launches
 * them (interpret.c) share: the codes and the parameter blocks, passed by
 * value. Plain C with fixed-width types and no includes, so that both
 * compilers read it and lay the blocks out alike (interpret.c checks the
 * codes against fz_dtype).
 */
#ifndef FUSEC_INTERPRET_ABI_H
#define FUSEC_INTERPRET_ABI_H

#define FZI_MAX_RANK 8 /* FZ_MAX_RANK */

/* dtypes, in fz_dtype's order */
enum { FZI_BOOL, FZI_I32, FZI_I64, FZI_F16, FZI_BF16, FZI_F32, FZI_F64 };

/* What a map computes per element: an op of sem.def, where, a cast, or a
 * copy of its first operand (an output written from a value). */
enum { FZI_SEM, FZI_SELECT, FZI_CAST, FZI_COPY };

/* A value in its dtype's compute type, as the CPU interpreter's Scalar:
 * floats (f16, bf16 and f32 holding f32 numbers) in f, integers and bool in i. */
typedef union FziValue {
	double f;
	long long i;
} FziValue;

/* An operand: `dtype` elements at ptr, element (i0, i1, ...) of the result
 * at sum(ik * stride[k]) (stride 0 where it broadcasts); ptr 0: the value
 * v everywhere (a constant or a scalar input). */
typedef struct FziOperand {
	unsigned long long ptr;
	int dtype;
	int unused;
	FziValue v;
	long long stride[FZI_MAX_RANK];
} FziOperand;

/* An elementwise node over its n elements of shape[rank]. */
typedef struct FziMap {
	int how;      /* FZI_SEM ... */
	int op;       /* the Op, for FZI_SEM */
	int result;   /* the node's dtype */
	int operand;  /* Node.operand: the value operands' dtype (of a cast: the source's) */
	int store;    /* the dtype written at out */
	int round;    /* round the value to `result` (a half type) before storing: per-op mode */
	int rank;
	int arity;
	long long n;
	long long shape[FZI_MAX_RANK];
	unsigned long long out;
	FziOperand a[3];
} FziMap;

/* A last-axis reduction: `rows` results, each of `len` contiguous elements
 * of a (its strides unused). */
typedef struct FziReduce {
	int op;       /* OP_SUM, OP_MEAN, OP_MAX or OP_MIN */
	int result;
	int operand;
	int store;
	int round;
	int unused;
	long long rows;
	long long len;
	unsigned long long out;
	FziOperand a;
} FziReduce;

#endif
