/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "codegen/cg.h"
CgDevice cg_default_device(void) { CgDevice d = {9, 0, 132, 2048, 232448, 50 << 20}; return d; }
bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d) { return diag_error(d, a, (Span){0,0,1,1}, "codegen not implemented"); }
bool cg_launch(const CgModule *m, const Plan *p, int k, const int64_t *dims, const CgDevice *dev, CgLaunch *out) { return false; }
