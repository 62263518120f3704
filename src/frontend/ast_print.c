/*
 * ast_print.c: the front end's stable text forms, --emit=tokens and
 * --emit=ast, which the golden tests diff exactly.
 *
 * Tokens: one a line, "LINE:COL KIND 'TEXT'" and, for numbers, the value.
 * AST: one statement a line, its expression below it as a tree indented two
 * spaces a level, each node "LINE:COL KIND DETAIL" at the start of its span.
 * Floats are printed in the shortest form that reads back to the same double,
 * so the dumps are exact and still readable (0.1, not 0.10000000000000001).
 */
#include "frontend/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes the shortest decimal that reads back as v, as Python's repr does:
 * positional for exponents -5..15 ("1500.0", "0.0001"), else "1e+300". */
static void put_double(StrBuf *sb, double v)
{
	char buf[48];
	int prec = 1;
	for (; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
	char *e = strchr(buf, 'e');
	int exp = atoi(e + 1);
	char digits[24];
	size_t nd = 0;
	for (const char *c = buf; c < e; c++)
		if (*c >= '0' && *c <= '9')
			digits[nd++] = *c;
	if (buf[0] == '-')
		sb_puts(sb, "-");
	if (exp < -5 || exp > 15) {
		sb_printf(sb, "%c%s%.*se%c%02d", digits[0], nd > 1 ? "." : "", (int)nd - 1, digits + 1,
		          exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
		return;
	}
	if (exp < 0) {
		sb_printf(sb, "0.%.*s%.*s", -exp - 1, "0000", (int)nd, digits);
		return;
	}
	for (int i = 0; i <= exp; i++)
		sb_putn(sb, i < (int)nd ? &digits[i] : "0", 1);
	sb_puts(sb, ".");
	if ((int)nd > exp + 1)
		sb_putn(sb, digits + exp + 1, nd - (size_t)exp - 1);
	else
		sb_puts(sb, "0");
}

/* ---- tokens -------------------------------------------------------------------- */

static const char *token_kind_label(TokKind k)
{
	static const char *const labels[] = {
#define X(k, s) [k] = &#k[3], /* without "TK_" */
		FE_TOKENS(X)
#undef X
	};
	return (unsigned)k < TK_COUNT ? labels[k] : "?";
}

void fe_print_tokens(StrBuf *sb, const Source *src, const TokenList *toks)
{
	for (int i = 0; i < toks->n; i++) {
		const Token *t = &toks->items[i];
		sb_printf(sb, "%d:%d %s '", t->span.line, t->span.col, token_kind_label(t->kind));
		for (uint32_t j = 0; j < t->span.len; j++) {
			char c = src->text[t->span.off + j];
			if (c == '\n')
				sb_puts(sb, "\\n");
			else if (c == '\r')
				sb_puts(sb, "\\r");
			else
				sb_putn(sb, &c, 1);
		}
		sb_puts(sb, "'");
		if (t->kind == TK_INT) {
			sb_printf(sb, " %llu", (unsigned long long)t->ival);
		} else if (t->kind == TK_FLOAT) {
			sb_puts(sb, " ");
			put_double(sb, t->fval);
		}
		sb_puts(sb, "\n");
	}
}

/* ---- AST ----------------------------------------------------------------------- */

/* An operator as written: its token's name without the quotes. */
static void put_op(StrBuf *sb, const Ast *n)
{
	const char *name = fe_token_name(n->op); /* "'+'" */
	size_t len = strlen(name);
	sb_putn(sb, name + 1, len > 2 ? len - 2 : 0);
}

/* Recursion is bounded: the parser keeps every tree within FZ_MAX_DEPTH. */
static void print_expr(StrBuf *sb, const Source *src, const Ast *n, int indent)
{
	sb_printf(sb, "%*s%d:%d ", indent, "", n->span.line, n->span.col);
	switch (n->kind) {
	case AST_INT: sb_printf(sb, "int %llu", (unsigned long long)n->ival); break;
	case AST_FLOAT:
		sb_puts(sb, "float ");
		put_double(sb, n->fval);
		break;
	case AST_NAME: sb_printf(sb, "name %.*s", n->name_len, n->name); break;
	case AST_UNARY:
		sb_puts(sb, "unary ");
		put_op(sb, n);
		break;
	case AST_BINARY:
		sb_puts(sb, "binary ");
		put_op(sb, n);
		break;
	case AST_COND: sb_puts(sb, "cond ?:"); break;
	case AST_CALL: sb_printf(sb, "call %.*s", n->name_len, n->name); break;
	case AST_CAST: sb_printf(sb, "cast %s", fz_dtype_name((fz_dtype)n->dtype)); break;
	}
	sb_puts(sb, "\n");
	for (int i = 0; i < n->nargs; i++)
		print_expr(sb, src, n->args[i], indent + 2);
}

static void print_type(StrBuf *sb, const Stmt *s)
{
	sb_puts(sb, fz_dtype_name((fz_dtype)s->dtype));
	if (s->rank == 0)
		return;
	sb_puts(sb, "[");
	for (int i = 0; i < s->rank; i++) {
		const AstDim *d = &s->dims[i];
		if (i)
			sb_puts(sb, ", ");
		if (d->name)
			sb_printf(sb, "%.*s", d->name_len, d->name);
		else
			sb_printf(sb, "%lld", (long long)d->size);
	}
	sb_puts(sb, "]");
}

static void print_stmt(StrBuf *sb, const Source *src, const Stmt *s)
{
	sb_printf(sb, "%d:%d ", s->span.line, s->span.col);
	switch (s->kind) {
	case STMT_IN:
		sb_printf(sb, "in %.*s: ", s->name_len, s->name);
		print_type(sb, s);
		break;
	case STMT_LET: sb_printf(sb, "%s %.*s =", s->is_out ? "out" : "let", s->name_len, s->name); break;
	case STMT_OUT: sb_printf(sb, "out %.*s", s->name_len, s->name); break;
	case STMT_FN:
		sb_printf(sb, "fn %.*s(", s->name_len, s->name);
		for (int i = 0; i < s->nparams; i++)
			sb_printf(sb, "%s%.*s", i ? ", " : "", s->param_lens[i], s->params[i]);
		sb_puts(sb, ") =");
		break;
	}
	sb_puts(sb, "\n");
	if (s->expr)
		print_expr(sb, src, s->expr, 2);
}

void fe_print_ast(StrBuf *sb, const Source *src, const AstProgram *p)
{
	for (int i = 0; i < p->n; i++)
		print_stmt(sb, src, &p->stmts[i]);
}
