/*
 * print.c: --emit=ir, the graph as stable text.
 *
 *   # program softmax: dims B, N
 *   in  %0 x: f32[B, N]
 *   %1 f32[B, 1] = max %0                   # max(x)  (3:9)
 *   ...
 *   out y = %6
 *
 * One node a line, in array (topological) order, each with its dtype and
 * shape, its op and arguments, and as a comment the source expression it
 * came from with its position. Nothing in the text depends on addresses or
 * hash order, so the golden tests can diff it. Constants are printed in the
 * shortest form that reads back to the same value (f32 and half constants as
 * floats, weak ones and f64 as doubles); "(weak)" marks a constant made from
 * literals only, whose value is kept unrounded, and "(implicit)" a cast that
 * promotion inserted.
 */
#include "ir/ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COMMENT_COL = 40, SNIPPET_MAX = 48 };

/* The shortest %g text that reads back to v (as a float when `single`). */
static void put_float(StrBuf *sb, double v, bool single)
{
	if (isnan(v)) {
		sb_puts(sb, "nan");
		return;
	}
	if (isinf(v)) {
		sb_puts(sb, v < 0 ? "-inf" : "inf");
		return;
	}
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		double back = strtod(buf, NULL);
		if (single ? (float)back == (float)v : back == v)
			break;
	}
	sb_puts(sb, buf);
	if (!strpbrk(buf, ".e"))
		sb_puts(sb, ".0");
}

static void put_const(StrBuf *sb, const Node *n)
{
	fz_dtype t = (fz_dtype)n->dtype;
	if (t == FZ_BOOL)
		sb_puts(sb, n->c.i ? "true" : "false");
	else if (!dtype_is_float(t))
		sb_printf(sb, "%" PRId64, n->c.i);
	else
		put_float(sb, n->c.f, t != FZ_F64 && !(n->flags & NF_WEAK));
	if (n->flags & NF_WEAK)
		sb_puts(sb, " (weak)");
}

/* The source text of a span on one line: white space runs and line breaks
 * become one space, comments are dropped, long text is cut with "...". */
static void put_snippet(StrBuf *sb, const Source *src, Span sp)
{
	char buf[SNIPPET_MAX + 4];
	size_t n = 0;
	bool space = false, cut = false;
	size_t end = (size_t)sp.off + sp.len < src->len ? (size_t)sp.off + sp.len : src->len;
	for (size_t i = sp.off; i < end; i++) {
		char ch = src->text[i];
		if (ch == '#') {
			while (i + 1 < end && src->text[i + 1] != '\n')
				i++;
			space = true;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			space = true;
			continue;
		}
		if (n + 2 > SNIPPET_MAX) {
			cut = true;
			break;
		}
		if (space && n > 0)
			buf[n++] = ' ';
		space = false;
		buf[n++] = (ch >= ' ' && ch < 0x7f) ? ch : '?';
	}
	sb_putn(sb, buf, n);
	if (cut)
		sb_puts(sb, "...");
}

static void put_node(StrBuf *sb, const Graph *g, NodeId id)
{
	const Node *n = &g->nodes[id];
	size_t start = sb->len;
	sb_printf(sb, "%%%d %s = %s", id, ir_type_str(sb->arena, g, n), ir_ops[n->op].name);
	if (n->op == OP_CONST) {
		sb_puts(sb, " ");
		put_const(sb, n);
	}
	for (int k = 0; k < ir_ops[n->op].arity; k++)
		sb_printf(sb, "%s%%%d", k ? ", " : " ", n->args[k]);
	if (n->flags & NF_IMPLICIT)
		sb_puts(sb, " (implicit)");
	if (g->src && n->span.line > 0) {
		size_t len = sb->len - start;
		for (size_t k = len; k < COMMENT_COL; k++)
			sb_puts(sb, " ");
		sb_puts(sb, len < COMMENT_COL ? "# " : "  # ");
		put_snippet(sb, g->src, n->span);
		sb_printf(sb, "  (%d:%d)", n->span.line, n->span.col);
	}
	sb_puts(sb, "\n");
}

void ir_print(StrBuf *sb, const Graph *g)
{
	sb_printf(sb, "# program %s", g->name ? g->name : "?");
	for (int k = 0; k < g->ndims; k++)
		sb_printf(sb, "%s%s", k ? ", " : ": dims ", g->dims[k]);
	sb_puts(sb, "\n");
	for (NodeId id = 0; id < g->n; id++) {
		const Node *n = &g->nodes[id];
		if (n->op == OP_INPUT)
			sb_printf(sb, "in  %%%d %s: %s\n", id, g->inputs[n->input].name, ir_type_str(sb->arena, g, n));
		else
			put_node(sb, g, id);
	}
	for (int i = 0; i < g->noutputs; i++)
		sb_printf(sb, "out %s = %%%d\n", g->outputs[i].name, g->outputs[i].node);
}
