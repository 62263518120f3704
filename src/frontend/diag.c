/*
 * diag.c: recording and rendering diagnostics.
 *
 * A diagnostic is a value (diag.h); rendering it needs the source, so it
 * happens once, at the end, in the form the language contract fixes:
 *
 *     FILE:LINE:COL: error: MESSAGE
 *     <the source line>
 *     <spaces, or the line's own tabs, up to the column>^~~~
 *
 * The line is found from the span's byte offset (every stage's spans come
 * from tokens), the header shows the span's line and column. The source line
 * is shown byte for byte, with bytes that are not printable ASCII as '?', so
 * that one byte is one column and the caret lines up; tabs before the column
 * are copied into the caret line so that it lines up whatever the tab width.
 * The underline (~) covers the rest of the span on its first line.
 */
#include "frontend/diag.h"

#include <stdio.h>
#include <string.h>

bool diag_error(Diag *d, Arena *a, Span span, const char *fmt, ...)
{
	if (d->set)
		return false;
	va_list ap;
	va_start(ap, fmt);
	d->message = arena_vprintf(a, fmt, ap);
	va_end(ap);
	msg_shorten(d->message); /* a 100,000-character name makes a short message */
	d->span = span;
	d->set = true;
	return false;
}

/* The line holding byte `off`: [*start, *end), without its line break. */
static void find_line(const Source *src, size_t off, size_t *start, size_t *end)
{
	if (off > src->len)
		off = src->len;
	size_t s = off;
	while (s > 0 && src->text[s - 1] != '\n')
		s--;
	size_t e = off;
	while (e < src->len && src->text[e] != '\n')
		e++;
	if (e > s && src->text[e - 1] == '\r' && e < src->len)
		e--; /* a CRLF line break */
	*start = s;
	*end = e;
}

static bool is_printable(unsigned char c) { return (c >= ' ' && c < 0x7F) || c == '\t'; }

/* Columns of the span to underline on its first line: at least 1. */
static size_t underline_len(const Source *src, const Span *span, size_t line_end)
{
	size_t off = span->off < src->len ? span->off : src->len;
	size_t n = span->len;
	if (n > line_end - off)
		n = line_end - off;
	return n ? n : 1;
}

/* Lines longer than this are shown as a window around the column, marked
 * with "..." where cut: a 1 MB line helps nobody. */
enum { LONG_LINE = 512, WINDOW = 200 };

static void put_source_line(StrBuf *sb, const Source *src, size_t start, size_t end)
{
	for (size_t i = start; i < end; i++) {
		unsigned char c = (unsigned char)src->text[i];
		char shown = is_printable(c) ? (char)c : '?';
		sb_putn(sb, &shown, 1);
	}
}

char *diag_render(Arena *a, const Source *src, const Diag *d)
{
	const char *msg = d->message ? d->message : "unknown error";
	StrBuf sb;
	sb_init(&sb, a);
	if (d->span.line <= 0) {
		sb_printf(&sb, "%s: error: %s\n", src->name, msg);
		return (char *)sb_str(&sb);
	}
	sb_printf(&sb, "%s:%d:%d: error: %s\n", src->name, d->span.line, d->span.col, msg);
	size_t start, end;
	find_line(src, d->span.off, &start, &end);
	size_t at = d->span.off < src->len ? d->span.off : src->len;
	size_t n = underline_len(src, &d->span, end);
	bool cut_left = false, cut_right = false;
	if (end - start > LONG_LINE) {
		cut_left = at - start > WINDOW;
		cut_right = end - at > WINDOW;
		start = cut_left ? at - WINDOW : start;
		end = cut_right ? at + WINDOW : end;
		n = n > end - at ? end - at : n;
	}
	sb_puts(&sb, cut_left ? "..." : "");
	put_source_line(&sb, src, start, end);
	sb_puts(&sb, cut_right ? "...\n" : "\n");
	sb_puts(&sb, cut_left ? "   " : "");
	for (size_t i = start; i < at; i++)
		sb_puts(&sb, src->text[i] == '\t' ? "\t" : " ");
	sb_puts(&sb, "^");
	for (size_t i = 1; i < n; i++)
		sb_puts(&sb, "~");
	sb_puts(&sb, "\n");
	return (char *)sb_str(&sb);
}

/* Copy a string into a fixed buffer; a cut never splits a UTF-8 sequence. */
static void copy_truncated(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(dst, s, n);
	dst[n] = 0;
}

void diag_to_public(const Source *src, const Diag *d, const char *rendered, fz_diag *out)
{
	memset(out, 0, sizeof *out);
	copy_truncated(out->file, sizeof out->file, src && src->name ? src->name : "");
	if (!d || !d->set)
		return;
	copy_truncated(out->message, sizeof out->message, d->message ? d->message : "");
	out->line = d->span.line > 0 ? d->span.line : 0;
	out->col = out->line ? d->span.col : 0;
	out->len = 1;
	if (out->line && src) {
		size_t start, end;
		find_line(src, d->span.off, &start, &end);
		out->len = (int)underline_len(src, &d->span, end);
	}
	if (rendered) {
		copy_truncated(out->rendered, sizeof out->rendered, rendered);
	} else if (out->line) {
		snprintf(out->rendered, sizeof out->rendered, "%s:%d:%d: error: %s\n", out->file, out->line,
		         out->col, out->message);
	} else {
		snprintf(out->rendered, sizeof out->rendered, "%s: error: %s\n", out->file, out->message);
	}
}
