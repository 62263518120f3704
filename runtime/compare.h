/*
 * compare.h: how close a GPU result must be to the CPU reference.
 *
 * Shared by `fusec run --check` and the GPU tests, so both hold the GPU to
 * the same documented standard. An element passes when
 *
 *     |gpu - cpu| <= atol + rtol * |cpu|
 *
 * with, per dtype:
 *
 *     f64   atol 1e-12  rtol 1e-10
 *     f32   atol 1e-5   rtol 1e-4
 *     f16   atol 1e-2   rtol 1e-2    (about 10 units in the last place)
 *     bf16  atol 2e-2   rtol 2e-2    (about 2.5 units in the last place)
 *     i32, i64, bool: exact
 *
 * The reference sums f32 in f64 and rounds half values only where stored;
 * the GPU sums in f32 in a tree and may contract a*b+c into an FMA. So for
 * f32 and f64, when the program reduces rows of length N (the longest of
 * its reductions), atol and rtol are multiplied by max(1, sqrt(N) / 8). In
 * per-op mode every intermediate is stored, and so rounded, in its dtype:
 * f16 and bf16 tolerances are doubled there. NaN must meet NaN, and an
 * infinity the same infinity.
 */
#ifndef FUSEC_RT_COMPARE_H
#define FUSEC_RT_COMPARE_H

#include "ir/ir.h"
#include "tensor.h"

typedef struct RtTolerance {
	double atol, rtol;
	bool exact;        /* integers and bool */
} RtTolerance;

/* The tolerance for dtype t, for a program whose longest reduced row has
 * n_reduce elements (0 if it reduces nothing), fused or per-op. */
RtTolerance rt_tolerance(fz_dtype t, int64_t n_reduce, bool per_op);

/* The longest reduced row of g for these dims (0 if g reduces nothing). */
int64_t rt_longest_reduction(const Graph *g, const int64_t *dims);

typedef struct RtCompare {
	int64_t n;          /* elements compared */
	int64_t bad;        /* elements out of tolerance */
	double max_abs;     /* largest |gpu - cpu| over elements that are both finite */
	double max_rel;     /* largest |gpu - cpu| / |cpu| over those with cpu != 0 */
	int64_t worst;      /* the element furthest out of (or nearest to) tolerance; -1 if none */
	double worst_got, worst_want;
} RtCompare;

/* Compare got (the GPU) with want (the reference): same dtype and shape
 * (false if not). */
bool rt_compare(const Tensor *got, const Tensor *want, RtTolerance tol, RtCompare *out);

/* "[2, 17]": the index of flat element e of shape. */
void rt_index_str(const Tensor *t, int64_t e, char *buf, size_t n);

#endif
