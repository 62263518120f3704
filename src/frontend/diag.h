/*
 * diag.h: diagnostics as values.
 *
 * A stage that finds an error fills a Diag (a span and a message) and returns
 * failure; only the command-line tool prints. The rendered form is the one
 * the language contract fixes:
 *
 *     FILE:LINE:COL: error: MESSAGE
 *     <the source line>
 *         ^~~~
 *
 * Compilation stops at the first error, so a Diag holds one.
 */
#ifndef FUSEC_DIAG_H
#define FUSEC_DIAG_H

#include "common.h"

typedef struct Diag {
	bool set;      /* an error was reported */
	Span span;     /* where; line 0 when it has no location */
	char *message; /* arena-owned, no trailing newline or period */
} Diag;

/* Record an error at `span` unless one is already recorded (the first error
 * wins: later ones are usually consequences). Returns false, so that callers
 * can write `return diag_error(...)`. */
bool diag_error(Diag *d, Arena *a, Span span, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Render a diagnostic: "FILE:LINE:COL: error: MESSAGE\n" then the source
 * line and a caret line (with ~ under the rest of the span on that line).
 * Non-printable bytes of the source line are shown as '?', tabs are kept so
 * the caret lines up. */
char *diag_render(Arena *a, const Source *src, const Diag *d);

/* Fill the public form. */
void diag_to_public(const Source *src, const Diag *d, const char *rendered, fz_diag *out);

#endif
