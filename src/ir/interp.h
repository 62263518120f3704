/*
 * interp.h: the CPU reference interpreter, the oracle of every test.
 *
 * It evaluates the graph node by node over whole tensors, exactly as the
 * language defines: f16/bf16 values are computed in f32 and rounded only
 * where stored (outputs, and explicit casts to a half type); f32 sums
 * accumulate in f64 (the best reference); NaN propagates as in PyTorch;
 * integer division by zero gives 0 and never traps.
 */
#ifndef FUSEC_INTERP_H
#define FUSEC_INTERP_H

#include "ir/ir.h"
#include "tensor.h"

/* Run the graph. `dims` has g->ndims sizes; `inputs` has g->ninputs tensors
 * whose dtypes and shapes match the declarations (checked: a mismatch is an
 * error naming the input and what was expected). On success `outputs` (an
 * array of g->noutputs) is filled with freshly allocated tensors that the
 * caller frees with tensor_free. On failure returns a status (FZ_ERR_BINDING,
 * FZ_ERR_RUNTIME for a max/min over an empty axis, FZ_ERR_NOMEM, FZ_ERR_LIMIT)
 * and writes a message into err. */
fz_status interp_run(const Graph *g, const int64_t *dims, const Tensor *inputs, Tensor *outputs, char *err,
                     size_t errlen);

/* The same, and with `store_all` every f16/bf16 value is rounded to its dtype
 * as it is computed: what per-op mode computes, since it stores every value
 * (eager PyTorch does the same). The reference for --no-fuse. */
fz_status interp_run_ex(const Graph *g, const int64_t *dims, const Tensor *inputs, Tensor *outputs, bool store_all,
                        char *err, size_t errlen);

/* Check inputs against the declarations and bind symbolic dims from their
 * shapes: dims[k] < 0 means unbound; bound ones must agree. Shared by the
 * interpreter, `fusec run` and the runtime. */
fz_status ir_bind_dims(const Graph *g, const Tensor *inputs, int64_t *dims, char *err, size_t errlen);

/* FZ_ERR_RUNTIME, with a message naming the reduction and the dimension,
 * when a max or min of the graph reduces an axis bound to 0 under rows that
 * exist (every dim bound); else FZ_OK. The interpreter, the runtime and the
 * tests ask the same question here. */
fz_status ir_check_empty_rows(const Graph *g, const int64_t *dims, char *err, size_t errlen);

#endif
