/*
 * progen.h: random valid fz programs, their inputs, and a tolerant comparison
 * of results, for fuzzing the compiler on the CPU and checking the GPU against
 * the interpreter.
 *
 * A program is a function of its seed (an own splitmix64 generator: the same
 * seed gives the same text, sizes and inputs on every machine). The generator
 * keeps a small abstract interpretation of every value it writes: dtype
 * (with the language's weak literals), shape, an interval bounding its finite
 * values, an absolute error bound, and whether the value is computed bit for
 * bit the same everywhere ("exact": inputs, comparisons, floor, max, integer
 * arithmetic, ...). It uses this to stay valid and well-conditioned:
 *
 *  - discontinuous operations (comparisons, floor/ceil/round, fmod, casts to
 *    integers, isnan) only take exact values, so a one-ulp difference between
 *    the GPU and the interpreter can never flip them;
 *  - divisors, logarithms and square roots only see values bounded away from
 *    zero, exp only bounded arguments, half values stay far from overflow,
 *    integers from overflow;
 *  - the error bound follows per-op mode (every intermediate stored, f16/bf16
 *    rounded at every op; math functions off by a few ulps), which bounds
 *    fused mode too, so each output gets its own absolute tolerance.
 *
 * The bound is checked on the CPU by the "shadow" program: the same program
 * with every float dtype printed as f64, whose outputs must be within the
 * tolerance of the original's (tests/unit/test_progen.c).
 */
#ifndef FUSEC_PROGEN_H
#define FUSEC_PROGEN_H

#include "ir/ir.h"
#include "tensor.h"

/* Size classes of the symbolic dims. A class is chosen before the program is
 * written, so that sums of long rows are generated knowing their length. */
typedef enum ProgenSize {
	PROGEN_TINY,   /* dims up to ~17, at most ~1k elements: CPU fuzzing */
	PROGEN_SMALL,  /* rows up to ~2k, at most ~32k elements: CPU tests */
	PROGEN_MEDIUM, /* rows of 1 to 65537, up to ~2M elements: the GPU default */
	PROGEN_BIG,    /* rows of 300k or 1M elements, or ~1M rows of a few */
	PROGEN_SIZE_COUNT
} ProgenSize;

typedef struct ProgenOptions {
	ProgenSize size;
	int nonfinite_pct; /* percent of programs whose float inputs hold NaN/inf */
	int zero_dim_pct;  /* percent of programs with one symbolic dim bound to 0 */
	bool shadow_f64;   /* print every float dtype as f64 (same program, same draws) */
} ProgenOptions;

/* nonfinite 15%, zero dims 5%, no shadow. */
ProgenOptions progen_default_options(ProgenSize size);

/* How far a result may be from the reference. */
typedef struct ProgenTol {
	fz_dtype dtype;   /* least precise float dtype the value went through
	                     (the output's dtype when it went through none) */
	int64_t row;      /* longest reduced row the value depends on (0: none) */
	bool analysed;    /* atol and rtol come from the generator's error analysis
	                     (both 0: must be bit-identical); else they are derived
	                     from dtype, row and the data (see progen_check.c) */
	double atol, rtol;
	bool any_dtype;   /* accept a different dtype (the f64 shadow) */
} ProgenTol;

#define PROGEN_MAX_DIMS 8
#define PROGEN_MAX_INPUTS 32
#define PROGEN_MAX_OUTPUTS 16
#define PROGEN_NAME 24

typedef struct ProgenInput {
	char name[PROGEN_NAME];
	fz_dtype dtype;    /* as generated (the shadow program declares floats f64) */
	double lo, hi;     /* values are drawn in [lo, hi] (integers: whole numbers) */
	bool nonfinite;    /* some elements are NaN, +inf or -inf */
} ProgenInput;

typedef struct ProgenOutput {
	char name[PROGEN_NAME];
	ProgenTol tol;
} ProgenOutput;

typedef struct ProgenInfo {
	uint64_t seed;
	ProgenSize size;
	int ndims;
	char dim_names[PROGEN_MAX_DIMS][PROGEN_NAME];
	int64_t dim_sizes[PROGEN_MAX_DIMS];
	int zero_dim;      /* index of the dim bound to 0, or -1 */
	int ninputs;
	ProgenInput inputs[PROGEN_MAX_INPUTS];
	int noutputs;      /* in the order of their out statements */
	ProgenOutput outputs[PROGEN_MAX_OUTPUTS];
	bool nonfinite;    /* some input holds NaN/inf */
	int nbindings;     /* statistics: bindings, fns, reductions written */
	int nfns;
	int nreductions;
} ProgenInfo;

/* A random valid program for `seed` (malloc'ed text, caller frees), with its
 * dims' sizes, input ranges and output tolerances in *info. NULL only when
 * out of memory. */
char *progen_program(uint64_t seed, const ProgenOptions *opt, ProgenInfo *info);

/* The dim sizes in the graph's order (g->dims). false (with a message) if the
 * graph names a dim the program did not declare. */
bool progen_dims(const ProgenInfo *info, const Graph *g, int64_t *dims, char *err, size_t errlen);

/* FZ_ERR_RUNTIME when a max or min of the graph reduces an axis bound to 0
 * (the language makes that a run-time error), else FZ_OK. */
fz_status progen_expect(const Graph *g, const int64_t *dims);

/* Seeded random inputs for every input of g (in g's order and dtypes; values
 * as the program's generator planned them, matched by name, so the shadow
 * program gets the same values). Data is malloc'ed (tensor_free frees it).
 * false (with a message) when out of memory or an input is unknown. */
bool progen_inputs(const ProgenInfo *info, const Graph *g, const int64_t *dims, Tensor *inputs, char *err,
                   size_t errlen);

/* Allocate t (dtype, rank, shape set) and fill it with values drawn in [lo, hi]
 * and rounded to `values` (a dtype at most as precise as t's), a share of
 * them NaN/inf when `nonfinite`. false when out of memory. */
bool progen_fill(Tensor *t, uint64_t seed, double lo, double hi, fz_dtype values, bool nonfinite);

/* Free n tensors' data (and zero them). */
void progen_free_tensors(Tensor *t, int n);

/*
 * Compare a result with the reference. Integers and bool must be equal; NaN
 * matches only NaN; an infinity only the same infinity; finite floats must
 * satisfy |got - want| <= atol + rtol * |want| (see progen.c for the numbers).
 * On a mismatch (or a dtype or shape mismatch) returns false and writes one
 * line into msg: how many elements differ, the max abs and rel error, and the
 * worst element with its index, got, want and the allowed error.
 */
bool progen_compare_tol(const Tensor *got, const Tensor *want, const ProgenTol *tol, char *msg, size_t msglen);
/* The same with the default tolerance of `dtype`, no reduction. */
bool progen_compare(const Tensor *got, const Tensor *want, fz_dtype dtype, char *msg, size_t msglen);

#endif
