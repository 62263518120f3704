/*
 * eval.h: the scalar semantics of every op, one element at a time.
 *
 * What each elementwise op computes is written once, in sem.def, and this
 * file applies it: the interpreter over whole tensors, constant folding to
 * literals, so the two agree bit for bit, and the code generator pastes the
 * same text into the CUDA it writes.
 *
 * A value is a Scalar: floats in .f, integers and bool (0 or 1) in .i. Values
 * are kept in their dtype's compute type: an f32, f16 or bf16 value is a
 * double that holds an f32 number (half values are NOT rounded to half except
 * by an explicit cast), an i32 value is an int64 in i32 range.
 *
 * The choices, where libm or C leave freedom (see docs/language.md):
 *   - f32 (and f16/bf16) arithmetic is float arithmetic: every result is
 *     rounded to float; f64 is double. libm in the compute type (expf for
 *     f32, exp for f64).
 *   - integers wrap (two's complement, computed unsigned, no C UB); `/` and
 *     `%` by zero give 0; INT_MIN / -1 gives INT_MIN, INT_MIN % -1 gives 0.
 *   - casts: float -> int truncates, NaN -> 0, out of range saturates (as
 *     CUDA's cvt.rzi); to f16/bf16 rounds once to nearest even, also from f64
 *     and from integers (no double rounding); bool(x) is x != 0.
 */
#ifndef FUSEC_IR_EVAL_H
#define FUSEC_IR_EVAL_H

#include "ir/ir.h"

typedef union Scalar {
	double f;  /* float dtypes, in the compute type */
	int64_t i; /* integers and bool */
} Scalar;

/* One element of an elementwise op (every class but OC_LEAF and OC_REDUCE)
 * into *out. `result` is the node's dtype, `operand` its Node.operand. args
 * has the op's arity values, each in the operand's compute type (the
 * condition of where: bool). false when the op has no semantics for that
 * operand dtype (sem.def has no text for it): an internal error for the
 * caller to report, never a value. */
bool eval_op(Op op, fz_dtype result, fz_dtype operand, const Scalar *args, Scalar *out);

/* Convert a value of dtype `from` to dtype `to` (an explicit cast: rounds to
 * f16/bf16 when `to` is a half type). */
Scalar eval_cast(fz_dtype from, fz_dtype to, Scalar v);

/* A value in canonical form for dtype t's compute type: (float) for f32 and
 * the half types (not rounded to half), wrapped to 32 bits for i32, 0/1 for
 * bool. Used for constants, whose value is kept in full precision. */
Scalar eval_normalize(fz_dtype t, Scalar v);

/* Storage: element i of an array in t's storage format (half types as their
 * bit patterns, bool one byte). eval_store rounds f16/bf16. */
Scalar eval_load(fz_dtype t, const void *data, int64_t i);
void eval_store(fz_dtype t, void *data, int64_t i, Scalar v);

/* A row reduction, fed one element at a time. f32, f16 and bf16 sums
 * accumulate in f64 (the best reference; the result is rounded once), f64
 * sums are compensated (Neumaier), integer and bool sums in wrapping i64;
 * max/min propagate NaN (max of bool is "any"). */
typedef struct EvalAcc {
	Op op;            /* OP_SUM, OP_MEAN, OP_MAX or OP_MIN */
	fz_dtype operand; /* dtype of the row's elements */
	int64_t n;        /* elements seen */
	double sum, comp; /* float sum and its compensation */
	uint64_t isum;    /* integer sum, wrapping */
	Scalar best;      /* max/min so far */
} EvalAcc;

void eval_acc_init(EvalAcc *acc, Op op, fz_dtype operand);
void eval_acc_add(EvalAcc *acc, Scalar v);
/* The reduction's value in the result dtype's compute type. false for max
 * or min of an empty row (ir_check_empty_rows reports those before anything
 * runs) and for an op that is not a reduction; sum of an empty row is 0,
 * mean of one is NaN. */
bool eval_acc_result(const EvalAcc *acc, fz_dtype result, Scalar *out);
/* The same over n contiguous values. */
bool eval_reduce(Op op, fz_dtype result, fz_dtype operand, const Scalar *row, int64_t n, Scalar *out);

#endif
