/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "fuse/fuse.h"
bool fuse_plan(const Graph *g, bool fused, Arena *a, Plan *out, Diag *d) { return diag_error(d, a, (Span){0,0,1,1}, "fusion not implemented"); }
void fuse_print(StrBuf *sb, const Plan *p) { }
void fuse_print_dot(StrBuf *sb, const Plan *p) { }
void fuse_explain(StrBuf *sb, const Plan *p) { }
