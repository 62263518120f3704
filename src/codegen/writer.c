/*
 * writer.c: the indent-tracking writer of the emitters.
 *
 * Emitters say what they write, not where: a line goes at the writer's
 * depth, cw_open and cw_close open and close a level with its braces, so a
 * piece of code moved into a loop or out of one needs no edit of tab
 * strings. An emitter that must write a part later than it decides it (a
 * prologue that depends on what the body used) gives that part a writer of
 * its own at the depth it will land at, and appends it.
 */
#include <stdarg.h>

#include "codegen/cgint.h"

void cw_init(CgW *w, StrBuf *sb, int depth)
{
	w->sb = sb;
	w->depth = depth;
}

static void indent(CgW *w)
{
	for (int i = 0; i < w->depth; i++)
		sb_putn(w->sb, "\t", 1);
}

static void vline(CgW *w, const char *fmt, va_list ap, const char *end)
{
	indent(w);
	sb_puts(w->sb, arena_vprintf(w->sb->arena, fmt, ap));
	sb_puts(w->sb, end);
}

void cw_line(CgW *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(w, fmt, ap, "\n");
	va_end(ap);
}

void cw_open(CgW *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(w, fmt, ap, " {\n");
	va_end(ap);
	w->depth++;
}

void cw_begin(CgW *w)
{
	indent(w);
	sb_puts(w->sb, "{\n");
	w->depth++;
}

void cw_close(CgW *w)
{
	w->depth--;
	indent(w);
	sb_puts(w->sb, "}\n");
}

void cw_else(CgW *w)
{
	w->depth--;
	indent(w);
	sb_puts(w->sb, "} else {\n");
	w->depth++;
}

void cw_in(CgW *w) { w->depth++; }

void cw_out(CgW *w) { w->depth--; }

void cw_unroll(CgW *w) { sb_puts(w->sb, "#pragma unroll\n"); }

void cw_append(CgW *w, const StrBuf *text)
{
	if (text->len > 0)
		sb_putn(w->sb, text->buf, text->len);
}
