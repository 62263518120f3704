/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "frontend/diag.h"
#include <stdio.h>
#include <string.h>
bool diag_error(Diag *d, Arena *a, Span span, const char *fmt, ...) { if (!d->set) { va_list ap; va_start(ap, fmt); d->message = arena_vprintf(a, fmt, ap); va_end(ap); d->span = span; d->set = true; } return false; }
char *diag_render(Arena *a, const Source *src, const Diag *d) { return arena_printf(a, "%s:%d:%d: error: %s\n", src->name, d->span.line, d->span.col, d->message); }
void diag_to_public(const Source *src, const Diag *d, const char *rendered, fz_diag *out) { memset(out, 0, sizeof *out); }
