/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "ir/interp.h"
fz_status interp_run(const Graph *g, const int64_t *dims, const Tensor *inputs, Tensor *outputs, char *err, size_t errlen) { return FZ_ERR_INTERNAL; }
fz_status ir_bind_dims(const Graph *g, const Tensor *inputs, int64_t *dims, char *err, size_t errlen) { return FZ_ERR_INTERNAL; }
