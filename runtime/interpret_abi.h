/*
 * interpret_abi.h: what the GPU interpreter's kernels (interpret.cu,
 * compiled to cubins when libfusec is built) and the host code that launches
 * them (interpret.c) share: the codes and the parameter blocks, passed by
 * value (under the 4 KiB a kernel's parameters may take). Plain C with
 * fixed-width types and no includes, so that both compilers read it and lay
 * the blocks out alike (interpret.c checks the codes against fz_dtype).
 */
#ifndef FUSEC_INTERPRET_ABI_H
#define FUSEC_INTERPRET_ABI_H

#define FZI_MAX_RANK 8 /* FZ_MAX_RANK */

/* dtypes, in fz_dtype's order */
enum { FZI_BOOL, FZI_I32, FZI_I64, FZI_F16, FZI_BF16, FZI_F32, FZI_F64 };

/* An instruction's kind: a load of operand a[0], an op of sem.def, where,
 * or a cast. */
enum { FZI_LOAD, FZI_SEM, FZI_SELECT, FZI_CAST };

/* How an operand's offset follows from the element's: the same index (its
 * shape is the expression's), by strides, or none (a value). */
enum { FZI_DENSE, FZI_STRIDED, FZI_VALUE };

enum { FZI_MAX_CODE = 48, FZI_MAX_LOADS = 12 };

/* A value in its dtype's compute type, as the CPU interpreter's Scalar:
 * floats (f16, bf16 and f32 holding f32 numbers) in f, integers and bool in i. */
typedef union FziValue {
	double f;
	long long i;
} FziValue;

/* An operand: `dtype` elements at ptr, element (i0, i1, ...) of the
 * expression's shape at sum(ik * stride[k]) (stride 0 where it broadcasts),
 * or the value v everywhere (a constant or a scalar input). */
typedef struct FziOperand {
	unsigned long long ptr;
	int dtype;
	int kind;     /* FZI_DENSE ... */
	FziValue v;
	long long stride[FZI_MAX_RANK];
} FziOperand;

/* One instruction; its value is register i (its position in the code). */
typedef struct FziInstr {
	unsigned char how;     /* FZI_LOAD ... */
	unsigned char op;      /* the Op, for FZI_SEM */
	unsigned char result;  /* the node's dtype */
	unsigned char operand; /* Node.operand: the value operands' dtype (of a cast: the source's) */
	unsigned char round;   /* round the value to `result` (a half type): per-op mode stores every value */
	unsigned char a[3];    /* argument registers; of a load, the operand */
} FziInstr;

/* The elementwise nodes under one node, evaluated per element of `shape`
 * (registers in the code's order, the last one the value), down to
 * operands: inputs, constants and values computed before (reductions). */
typedef struct FziExpr {
	int ncode;
	int nloads;
	int rank;
	int strided;  /* some operand is FZI_STRIDED: the element's index is needed */
	long long shape[FZI_MAX_RANK];
	FziOperand load[FZI_MAX_LOADS];
	FziInstr code[FZI_MAX_CODE];
} FziExpr;

/* An expression over its n elements, stored at out in dtype `store`. */
typedef struct FziMap {
	long long n;
	unsigned long long out;
	int store;
	int unused;
	FziExpr x;
} FziMap;

/* A last-axis reduction of an expression of shape [..., len]: `rows`
 * results, stored at out in dtype `store`. */
typedef struct FziReduce {
	long long rows;
	long long len;
	unsigned long long out;
	int op;       /* OP_SUM, OP_MEAN, OP_MAX or OP_MIN */
	int result;
	int operand;
	int store;
	int round;
	int unused;
	FziExpr x;
} FziReduce;

#endif
