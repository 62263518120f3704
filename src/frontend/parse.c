/*
 * parse.c: recursive descent from tokens to the AST.
 *
 * One function per grammar rule, the rule written above it. Binary operators
 * of one precedence level are parsed by a loop (left_assoc), so a long chain
 * like a+a+a+... costs no recursion; `?:` recurses to the right.
 *
 * Statements end at a newline or ';'. Inside ( ) and [ ] newlines are
 * skipped: the parser counts open brackets (nest) and its token reader steps
 * over newlines while any is open.
 *
 * Depth is bounded so that no stage recurses without limit: every open
 * parenthesis, call, unary operator and `?` adds a level while it is parsed
 * (this bounds the parser's own recursion), and every tree node's height (a
 * leaf is 0, an operator one more than its highest operand) is checked as it
 * is built (this bounds the recursion of later stages over left-leaning
 * chains, which the parser builds without recursing). Either past
 * FZ_MAX_DEPTH is an error at the token where the limit was crossed.
 *
 * A syntax error records its diagnostic and longjmps out of the descent to
 * fe_parse, as Lua's parser does: the rule functions stay free of error
 * plumbing. Everything is allocated in the compilation's arena, so nothing
 * leaks on the way out.
 */
#include "frontend/ast.h"

#include <setjmp.h>
#include <string.h>

typedef struct Parser {
	const Source *src;
	const Token *toks;
	int pos;
	int nest;      /* open ( and [: newlines inside them are skipped */
	int depth;     /* nesting levels entered (see the top of the file) */
	Span prev;     /* the last token consumed, for statement spans */
	Arena *arena;
	Diag *diag;
	jmp_buf fail;
} Parser;

static const char too_deep[] = "expression nested too deeply (the limit is %d levels)";

/* ---- tokens -------------------------------------------------------------------- */

static const Token *peek(Parser *p)
{
	if (p->nest > 0)
		while (p->toks[p->pos].kind == TK_NEWLINE)
			p->pos++;
	return &p->toks[p->pos];
}

static const Token *next(Parser *p)
{
	const Token *t = peek(p);
	if (t->kind != TK_EOF)
		p->pos++;
	p->prev = t->span;
	return t;
}

static _Noreturn void fail_at(Parser *p, Span at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static _Noreturn void fail_at(Parser *p, Span at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *message = arena_vprintf(p->arena, fmt, ap);
	va_end(ap);
	diag_error(p->diag, p->arena, at, "%s", message);
	longjmp(p->fail, 1);
}

/* "expected ')', saw ','" at the current token. */
static _Noreturn void fail_expected(Parser *p, const char *what)
{
	const Token *t = peek(p);
	fail_at(p, t->span, "expected %s, saw %s", what, fe_token_name(t->kind));
}

static bool accept(Parser *p, TokKind k)
{
	if (peek(p)->kind != k)
		return false;
	next(p);
	return true;
}

static const Token *expect(Parser *p, TokKind k)
{
	if (peek(p)->kind != k)
		fail_expected(p, fe_token_name(k));
	return next(p);
}

static void open_bracket(Parser *p, TokKind k)
{
	expect(p, k);
	p->nest++;
}

static void close_bracket(Parser *p, TokKind k)
{
	expect(p, k);
	p->nest--;
}

static void enter(Parser *p, Span at)
{
	if (++p->depth > FZ_MAX_DEPTH)
		fail_at(p, at, too_deep, FZ_MAX_DEPTH);
}

static void leave(Parser *p) { p->depth--; }

/* ---- nodes --------------------------------------------------------------------- */

static Ast *new_node(Parser *p, AstKind kind, const Token *t)
{
	Ast *n = ARENA_NEW(p->arena, Ast);
	n->kind = kind;
	n->span = t->span;
	n->op_span = t->span;
	n->dtype = -1;
	return n;
}

/* Sets n's height from its operands; past the limit is an error at `at`. */
static void set_height(Parser *p, Ast *n, Span at)
{
	int height = 0;
	for (int i = 0; i < n->nargs; i++)
		if (n->args[i]->depth > height)
			height = n->args[i]->depth;
	n->depth = height + 1;
	if (n->depth > FZ_MAX_DEPTH)
		fail_at(p, at, too_deep, FZ_MAX_DEPTH);
}

/* An operator node over `nargs` operands, spanning them all. */
static Ast *new_op(Parser *p, AstKind kind, const Token *op, Ast **args, int nargs)
{
	Ast *n = new_node(p, kind, op);
	n->op = op->kind;
	n->args = ARENA_ARRAY(p->arena, Ast *, nargs);
	n->nargs = nargs;
	for (int i = 0; i < nargs; i++) {
		n->args[i] = args[i];
		n->span = span_join(n->span, args[i]->span);
	}
	set_height(p, n, op->span);
	return n;
}

/* ---- expressions ----------------------------------------------------------------- */

static Ast *expr(Parser *p);

/* operand (op operand)*, for the operators listed in `ops` (ending with 0). */
static Ast *left_assoc(Parser *p, Ast *(*operand)(Parser *), const TokKind *ops)
{
	Ast *lhs = operand(p);
	for (;;) {
		const Token *t = peek(p);
		const TokKind *k = ops;
		while (*k && *k != t->kind)
			k++;
		if (!*k)
			return lhs;
		next(p);
		Ast *args[2] = {lhs, operand(p)};
		lhs = new_op(p, AST_BINARY, t, args, 2);
	}
}

/* After an item of a list closed by `close`: true if a comma follows. */
static bool list_continues(Parser *p, TokKind close)
{
	if (accept(p, TK_COMMA))
		return true;
	if (peek(p)->kind != close)
		fail_expected(p, close == TK_RPAREN ? "',' or ')'" : "',' or ']'");
	return false;
}

/* args = expr ("," expr)* */
static void args(Parser *p, Ast *call)
{
	Ast **items = NULL;
	int n = 0, cap = 0;
	do
		VEC_PUSH(p->arena, items, n, cap, expr(p));
	while (list_continues(p, TK_RPAREN));
	call->args = items;
	call->nargs = n;
}

/* call = IDENT "(" args? ")" */
static Ast *call(Parser *p, const Token *name)
{
	Ast *n = new_node(p, AST_CALL, name);
	n->name = p->src->text + name->span.off;
	n->name_len = (int)name->span.len;
	enter(p, peek(p)->span);
	open_bracket(p, TK_LPAREN);
	if (peek(p)->kind != TK_RPAREN)
		args(p, n);
	close_bracket(p, TK_RPAREN);
	leave(p);
	set_height(p, n, name->span);
	n->span = span_join(n->span, p->prev);
	return n;
}

/* cast = DTYPE "(" expr ")" */
static Ast *cast(Parser *p, const Token *type)
{
	if (peek(p)->kind != TK_LPAREN)
		fail_expected(p, "'(' after a type name");
	enter(p, peek(p)->span);
	open_bracket(p, TK_LPAREN);
	Ast *arg = expr(p);
	close_bracket(p, TK_RPAREN);
	leave(p);
	Ast *n = new_op(p, AST_CAST, type, &arg, 1);
	n->dtype = type->dtype;
	n->span = span_join(n->span, p->prev);
	return n;
}

/* paren = "(" expr ")"   (the node's span grows to cover the parentheses) */
static Ast *paren(Parser *p)
{
	Span open = peek(p)->span;
	enter(p, open);
	open_bracket(p, TK_LPAREN);
	Ast *n = expr(p);
	close_bracket(p, TK_RPAREN);
	leave(p);
	n->span = span_join(open, p->prev);
	return n;
}

/* primary = INT | FLOAT | paren | cast | call | IDENT */
static Ast *primary(Parser *p)
{
	const Token *t = peek(p);
	switch (t->kind) {
	case TK_INT: {
		Ast *n = new_node(p, AST_INT, next(p));
		n->ival = t->ival;
		return n;
	}
	case TK_FLOAT: {
		Ast *n = new_node(p, AST_FLOAT, next(p));
		n->fval = t->fval;
		return n;
	}
	case TK_LPAREN:
		return paren(p);
	case TK_DTYPE:
		return cast(p, next(p));
	case TK_IDENT: {
		next(p);
		if (peek(p)->kind == TK_LPAREN)
			return call(p, t);
		Ast *n = new_node(p, AST_NAME, t);
		n->name = p->src->text + t->span.off;
		n->name_len = (int)t->span.len;
		return n;
	}
	default:
		fail_expected(p, "expression");
	}
}

/* unary = ("-" | "!" | "~") unary | primary */
static Ast *unary(Parser *p)
{
	const Token *t = peek(p);
	if (t->kind != TK_MINUS && t->kind != TK_BANG && t->kind != TK_TILDE)
		return primary(p);
	enter(p, t->span);
	next(p);
	Ast *operand = unary(p);
	leave(p);
	return new_op(p, AST_UNARY, t, &operand, 1);
}

/* mul = unary (("*" | "/" | "%") unary)* */
static Ast *mul(Parser *p) { return left_assoc(p, unary, (const TokKind[]){TK_STAR, TK_SLASH, TK_PERCENT, 0}); }

/* add = mul (("+" | "-") mul)* */
static Ast *add(Parser *p) { return left_assoc(p, mul, (const TokKind[]){TK_PLUS, TK_MINUS, 0}); }

/* shift = add (("<<" | ">>") add)* */
static Ast *shift(Parser *p) { return left_assoc(p, add, (const TokKind[]){TK_SHL, TK_SHR, 0}); }

/* bitand = shift ("&" shift)*   (the bitwise operators bind tighter than
 * comparisons, as in Python and Rust: x & 1 == 0 is (x & 1) == 0) */
static Ast *bitand(Parser *p) { return left_assoc(p, shift, (const TokKind[]){TK_AMP, 0}); }

/* bitxor = bitand ("^" bitand)* */
static Ast *bitxor(Parser *p) { return left_assoc(p, bitand, (const TokKind[]){TK_CARET, 0}); }

/* bitor = bitxor ("|" bitxor)* */
static Ast *bitor(Parser *p) { return left_assoc(p, bitxor, (const TokKind[]){TK_PIPE, 0}); }

/* relational = bitor (("<" | "<=" | ">" | ">=") bitor)* */
static Ast *relational(Parser *p)
{
	return left_assoc(p, bitor, (const TokKind[]){TK_LT, TK_LE, TK_GT, TK_GE, 0});
}

/* equality = relational (("==" | "!=") relational)* */
static Ast *equality(Parser *p) { return left_assoc(p, relational, (const TokKind[]){TK_EQ, TK_NE, 0}); }

/* and = equality ("&&" equality)* */
static Ast *and_expr(Parser *p) { return left_assoc(p, equality, (const TokKind[]){TK_ANDAND, 0}); }

/* or = and ("||" and)* */
static Ast *or_expr(Parser *p) { return left_assoc(p, and_expr, (const TokKind[]){TK_OROR, 0}); }

/* cond = or ("?" expr ":" cond)? */
static Ast *cond(Parser *p)
{
	Ast *c = or_expr(p);
	const Token *q = peek(p);
	if (q->kind != TK_QUESTION)
		return c;
	enter(p, q->span);
	next(p);
	Ast *then = expr(p);
	expect(p, TK_COLON);
	Ast *otherwise = cond(p);
	leave(p);
	Ast *args[3] = {c, then, otherwise};
	return new_op(p, AST_COND, q, args, 3);
}

/* expr = cond */
static Ast *expr(Parser *p) { return cond(p); }

/* ---- statements ------------------------------------------------------------------- */

static const Token *name_token(Parser *p, Stmt *s)
{
	const Token *t = expect(p, TK_IDENT);
	s->name = p->src->text + t->span.off;
	s->name_len = (int)t->span.len;
	s->name_span = t->span;
	return t;
}

/* dim = IDENT | INT */
static void dim(Parser *p, AstDim *d)
{
	const Token *t = peek(p);
	d->span = t->span;
	if (t->kind == TK_IDENT) {
		d->name = p->src->text + t->span.off;
		d->name_len = (int)t->span.len;
	} else if (t->kind == TK_INT && t->ival > 0) {
		d->size = (int64_t)t->ival;
	} else if (t->kind == TK_INT || t->kind == TK_FLOAT) {
		fail_at(p, t->span, "dimension must be a positive integer");
	} else {
		fail_expected(p, "dimension (a name or a positive integer)");
	}
	next(p);
}

/* type = DTYPE ("[" dim ("," dim)* "]")? */
static void type(Parser *p, Stmt *s)
{
	if (peek(p)->kind != TK_DTYPE)
		fail_expected(p, "type name");
	s->dtype = next(p)->dtype;
	if (peek(p)->kind != TK_LBRACKET)
		return;
	open_bracket(p, TK_LBRACKET);
	AstDim dims[FZ_MAX_RANK];
	memset(dims, 0, sizeof dims);
	do {
		if (s->rank == FZ_MAX_RANK)
			fail_at(p, peek(p)->span, "tensor rank %d exceeds the limit of %d", FZ_MAX_RANK + 1, FZ_MAX_RANK);
		dim(p, &dims[s->rank++]);
	} while (list_continues(p, TK_RBRACKET));
	close_bracket(p, TK_RBRACKET);
	s->dims = ARENA_ARRAY(p->arena, AstDim, s->rank);
	memcpy(s->dims, dims, sizeof(AstDim) * (size_t)s->rank);
}

/* in_stmt = "in" IDENT ":" type */
static void in_stmt(Parser *p, Stmt *s)
{
	s->kind = STMT_IN;
	expect(p, TK_IN);
	name_token(p, s);
	expect(p, TK_COLON);
	type(p, s);
}

/* out_stmt = "out" IDENT ("=" expr)? */
static void out_stmt(Parser *p, Stmt *s)
{
	expect(p, TK_OUT);
	name_token(p, s);
	s->kind = STMT_OUT;
	if (accept(p, TK_ASSIGN)) {
		s->kind = STMT_LET;
		s->is_out = true;
		s->expr = expr(p);
	}
}

/* Checks parameter `t` against those before it. */
static void check_param(Parser *p, const Token *const *params, int n, const Token *t)
{
	const char *name = p->src->text + t->span.off;
	for (int i = 0; i < n; i++)
		if (params[i]->span.len == t->span.len && memcmp(p->src->text + params[i]->span.off, name, t->span.len) == 0)
			fail_at(p, t->span, "duplicate parameter '%.*s'", (int)t->span.len, name);
	if (n == FZ_MAX_FN_PARAMS)
		fail_at(p, t->span, "too many parameters (the limit is %d)", FZ_MAX_FN_PARAMS);
}

/* fn_stmt = "fn" IDENT "(" (IDENT ("," IDENT)*)? ")" "=" expr */
static void fn_stmt(Parser *p, Stmt *s)
{
	s->kind = STMT_FN;
	expect(p, TK_FN);
	name_token(p, s);
	open_bracket(p, TK_LPAREN);
	const Token *params[FZ_MAX_FN_PARAMS];
	int n = 0;
	if (peek(p)->kind != TK_RPAREN) {
		do {
			const Token *t = peek(p);
			if (t->kind == TK_IDENT)
				check_param(p, params, n, t);
			params[n++] = expect(p, TK_IDENT);
		} while (list_continues(p, TK_RPAREN));
	}
	close_bracket(p, TK_RPAREN);
	s->nparams = n;
	s->params = ARENA_ARRAY(p->arena, const char *, n);
	s->param_lens = ARENA_ARRAY(p->arena, int, n);
	s->param_spans = ARENA_ARRAY(p->arena, Span, n);
	for (int i = 0; i < n; i++) {
		s->params[i] = p->src->text + params[i]->span.off;
		s->param_lens[i] = (int)params[i]->span.len;
		s->param_spans[i] = params[i]->span;
	}
	expect(p, TK_ASSIGN);
	s->expr = expr(p);
}

/* let_stmt = IDENT "=" expr */
static void let_stmt(Parser *p, Stmt *s)
{
	s->kind = STMT_LET;
	name_token(p, s);
	expect(p, TK_ASSIGN);
	s->expr = expr(p);
}

/* stmt = in_stmt | out_stmt | fn_stmt | let_stmt */
static void stmt(Parser *p, Stmt *s)
{
	Span first = peek(p)->span;
	switch (peek(p)->kind) {
	case TK_IN: in_stmt(p, s); break;
	case TK_OUT: out_stmt(p, s); break;
	case TK_FN: fn_stmt(p, s); break;
	case TK_IDENT: let_stmt(p, s); break;
	default: fail_expected(p, "statement");
	}
	s->span = span_join(first, p->prev);
}

static bool at_separator(Parser *p)
{
	TokKind k = peek(p)->kind;
	return k == TK_NEWLINE || k == TK_SEMI;
}

/* program = (stmt? (NEWLINE | ";"))* stmt? EOF */
static void program(Parser *p, AstProgram *out)
{
	int cap = 0;
	while (peek(p)->kind != TK_EOF) {
		if (at_separator(p)) {
			next(p);
			continue;
		}
		Stmt s = {0};
		stmt(p, &s);
		VEC_PUSH(p->arena, out->stmts, out->n, cap, s);
		if (!at_separator(p) && peek(p)->kind != TK_EOF)
			fail_expected(p, "newline or ';' after statement");
	}
}

bool fe_parse(const Source *src, const TokenList *toks, Arena *a, AstProgram *out, Diag *d)
{
	Parser *p = ARENA_NEW(a, Parser);
	p->src = src;
	p->toks = toks->items;
	p->arena = a;
	p->diag = d;
	out->stmts = NULL;
	out->n = 0;
	if (setjmp(p->fail))
		return false;
	program(p, out);
	return true;
}
