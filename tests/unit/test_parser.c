/* Unit tests of the parser (src/frontend/parse.c): every rule, the whole
 * precedence and associativity table (checked on the tree's shape), spans,
 * every syntax error with its exact position and rendering, the depth
 * limits, and robustness on hostile input. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------------ */

static char result[1 << 16];

/* The --emit=ast dump of a program, or its rendered diagnostic. */
static const char *ast_of(const char *src)
{
	Compilation *c = tu_compile(src, STAGE_AST);
	if (c->status == FZ_OK) {
		StrBuf sb;
		sb_init(&sb, c->arena);
		fe_print_ast(&sb, &c->src, &c->ast);
		snprintf(result, sizeof result, "%s", sb_str(&sb));
	} else {
		snprintf(result, sizeof result, "%s", c->diag_text ? c->diag_text : "(no diagnostic)");
	}
	pipe_free(c);
	return result;
}

static void put_sexpr(StrBuf *sb, const Ast *n)
{
	switch (n->kind) {
	case AST_INT: sb_printf(sb, "%llu", (unsigned long long)n->ival); return;
	case AST_FLOAT: sb_printf(sb, "%g", n->fval); return;
	case AST_NAME: sb_printf(sb, "%.*s", n->name_len, n->name); return;
	case AST_UNARY: sb_puts(sb, n->op == TK_MINUS ? "(neg " : n->op == TK_BANG ? "(not " : "(bitnot "); break;
	case AST_BINARY: sb_printf(sb, "(%s ", fe_token_name(n->op)); break;
	case AST_COND: sb_puts(sb, "(? "); break;
	case AST_CALL: sb_printf(sb, "(%.*s", n->name_len, n->name); break;
	case AST_CAST: sb_printf(sb, "(%s ", fz_dtype_name((fz_dtype)n->dtype)); break;
	}
	for (int i = 0; i < n->nargs; i++) {
		if (i || n->kind == AST_CALL)
			sb_puts(sb, " ");
		put_sexpr(sb, n->args[i]);
	}
	sb_puts(sb, ")");
}

/* The tree of `y = EXPR` as an s-expression with operators as their token
 * names: "('+' a ('*' b c))". */
static const char *tree(const char *expr)
{
	char src[4096];
	snprintf(src, sizeof src, "y = %s", expr);
	Compilation *c = tu_compile(src, STAGE_AST);
	if (c->status != FZ_OK) {
		snprintf(result, sizeof result, "%s", c->diag_text);
	} else {
		ck_assert_int_eq(c->ast.n, 1);
		StrBuf sb;
		sb_init(&sb, c->arena);
		put_sexpr(&sb, c->ast.stmts[0].expr);
		snprintf(result, sizeof result, "%s", sb_str(&sb));
	}
	pipe_free(c);
	return result;
}

static const char *error_of(const char *src)
{
	const char *e = tu_error(src, STAGE_AST);
	return e ? e : "(no error)";
}

#define ERR_EQ(src, expected) ck_assert_str_eq(error_of(src), expected)

/* ---- statements ------------------------------------------------------------------------ */

START_TEST(test_in_statements)
{
	ck_assert_str_eq(ast_of("in s: f32\nin x: bf16[N]\nin m: i64[B, 4, N]\nin b: bool[1]"),
	                 "1:1 in s: f32\n2:1 in x: bf16[N]\n3:1 in m: i64[B, 4, N]\n4:1 in b: bool[1]\n");
	ck_assert_str_eq(ast_of("in t: f16[a, b, c, d, e, f, g, h]"), "1:1 in t: f16[a, b, c, d, e, f, g, h]\n");
	Compilation *c = tu_compile("in x: f64[N, 3]", STAGE_AST);
	ck_assert_int_eq(c->status, FZ_OK);
	const Stmt *s = &c->ast.stmts[0];
	ck_assert_int_eq(s->kind, STMT_IN);
	ck_assert_int_eq(s->dtype, FZ_F64);
	ck_assert_int_eq(s->rank, 2);
	ck_assert_int_eq(s->dims[0].name_len, 1);
	ck_assert_int_eq(s->dims[0].name[0], 'N');
	ck_assert_ptr_null(s->dims[1].name);
	ck_assert_int_eq(s->dims[1].size, 3);
	ck_assert_int_eq(s->dims[1].span.col, 14);
	ck_assert_int_eq(s->name_span.col, 4);
	ck_assert_int_eq(s->span.col, 1);
	ck_assert_int_eq(s->span.len, 15);
	pipe_free(c);
	c = tu_compile("in s: i32", STAGE_AST);
	ck_assert_int_eq(c->ast.stmts[0].rank, 0);
	ck_assert_ptr_null(c->ast.stmts[0].dims);
	pipe_free(c);
}
END_TEST

START_TEST(test_let_and_out_statements)
{
	ck_assert_str_eq(ast_of("y = x\nout z = 2\nout y"),
	                 "1:1 let y =\n  1:5 name x\n2:1 out z =\n  2:9 int 2\n3:1 out y\n");
	Compilation *c = tu_compile("out z = a + b\nout a", STAGE_AST);
	ck_assert_int_eq(c->status, FZ_OK);
	ck_assert_int_eq(c->ast.n, 2);
	ck_assert_int_eq(c->ast.stmts[0].kind, STMT_LET);
	ck_assert(c->ast.stmts[0].is_out);
	ck_assert_int_eq(c->ast.stmts[0].span.len, 13);
	ck_assert_int_eq(c->ast.stmts[1].kind, STMT_OUT);
	ck_assert(!c->ast.stmts[1].is_out);
	ck_assert_ptr_null(c->ast.stmts[1].expr);
	ck_assert_int_eq(c->ast.stmts[1].name_span.line, 2);
	ck_assert_int_eq(c->ast.stmts[1].name_span.col, 5);
	pipe_free(c);
}
END_TEST

START_TEST(test_fn_statements)
{
	ck_assert_str_eq(ast_of("fn sq(v) = v * v\nfn two() = 2\nfn mix(a, b, t) = a + t * (b - a)"),
	                 "1:1 fn sq(v) =\n  1:12 binary *\n    1:12 name v\n    1:16 name v\n"
	                 "2:1 fn two() =\n  2:12 int 2\n"
	                 "3:1 fn mix(a, b, t) =\n  3:19 binary +\n    3:19 name a\n    3:23 binary *\n"
	                 "      3:23 name t\n      3:27 binary -\n        3:28 name b\n        3:32 name a\n");
	Compilation *c = tu_compile("fn f(alpha, b) = alpha", STAGE_AST);
	const Stmt *s = &c->ast.stmts[0];
	ck_assert_int_eq(s->kind, STMT_FN);
	ck_assert_int_eq(s->nparams, 2);
	ck_assert_int_eq(s->param_lens[0], 5);
	ck_assert(memcmp(s->params[0], "alpha", 5) == 0);
	ck_assert_int_eq(s->param_spans[1].col, 13);
	pipe_free(c);
	/* exactly FZ_MAX_FN_PARAMS parameters are fine */
	char src[1024] = "fn f(";
	for (int i = 0; i < FZ_MAX_FN_PARAMS; i++)
		sprintf(src + strlen(src), "%sp%d", i ? ", " : "", i);
	strcat(src, ") = p0");
	c = tu_compile(src, STAGE_AST);
	ck_assert_int_eq(c->status, FZ_OK);
	ck_assert_int_eq(c->ast.stmts[0].nparams, FZ_MAX_FN_PARAMS);
	pipe_free(c);
}
END_TEST

START_TEST(test_separators_and_blank_lines)
{
	ck_assert_str_eq(ast_of("\n in x: f32;;y = x ;\n\n  # comment\nout y\n\n"), "2:2 in x: f32\n2:13 let y =\n  2:17 name x\n5:1 out y\n");
	ck_assert_str_eq(ast_of(""), "");
	ck_assert_str_eq(ast_of("\n\n;\n# only comments\n"), "");
	ck_assert_str_eq(ast_of("a = 1; b = 2; out c = 3"),
	                 "1:1 let a =\n  1:5 int 1\n1:8 let b =\n  1:12 int 2\n1:15 out c =\n  1:23 int 3\n");
	ck_assert_str_eq(ast_of("in x: f32\r\nout y = x\r\n"), "1:1 in x: f32\n2:1 out y =\n  2:9 name x\n");
}
END_TEST

START_TEST(test_newlines_inside_brackets)
{
	ck_assert_str_eq(tree("(a +\n  b)"), "('+' a b)");
	ck_assert_str_eq(tree("f(\n a,\n\n b\n)"), "(f a b)");
	ck_assert_str_eq(tree("f32(\nx\n)"), "(f32 x)");
	ck_assert_str_eq(tree("(a\n ?\n b\n :\n c)"), "(? a b c)");
	ck_assert_str_eq(ast_of("in x: f32[\n  B,\n  N\n]\nfn f(\n a,\n b) = a\n"),
	                 "1:1 in x: f32[B, N]\n5:1 fn f(a, b) =\n  7:7 name a\n");
	/* a newline after the closing bracket ends the statement again */
	ERR_EQ("y = (a)\n+ b", "test.fz:2:1: error: expected statement, saw '+'\n+ b\n^\n");
}
END_TEST

START_TEST(test_full_program_dump)
{
	const char *src = "fn gelu_t(v) = 0.5 * v * (1 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))\n"
	                  "in x: bf16[R, C]\n"
	                  "in eps: f32\n"
	                  "mu = mean(x)\n"
	                  "out y = bf16((x - mu) * rsqrt(mean(x * x) + eps))\n"
	                  "out a = gelu_t(y) > 0 && !(y < 1e-5) ? -y : 2\n"
	                  "out a2 = where(isnan(y), 0.0, y)\n";
	ck_assert_str_eq(ast_of(src),
	                 "1:1 fn gelu_t(v) =\n"
	                 "  1:16 binary *\n"
	                 "    1:16 binary *\n"
	                 "      1:16 float 0.5\n"
	                 "      1:22 name v\n"
	                 "    1:26 binary +\n"
	                 "      1:27 int 1\n"
	                 "      1:31 call tanh\n"
	                 "        1:36 binary *\n"
	                 "          1:36 float 0.7978845608\n"
	                 "          1:51 binary +\n"
	                 "            1:52 name v\n"
	                 "            1:56 binary *\n"
	                 "              1:56 binary *\n"
	                 "                1:56 binary *\n"
	                 "                  1:56 float 0.044715\n"
	                 "                  1:67 name v\n"
	                 "                1:71 name v\n"
	                 "              1:75 name v\n"
	                 "2:1 in x: bf16[R, C]\n"
	                 "3:1 in eps: f32\n"
	                 "4:1 let mu =\n"
	                 "  4:6 call mean\n"
	                 "    4:11 name x\n"
	                 "5:1 out y =\n"
	                 "  5:9 cast bf16\n"
	                 "    5:14 binary *\n"
	                 "      5:14 binary -\n"
	                 "        5:15 name x\n"
	                 "        5:19 name mu\n"
	                 "      5:25 call rsqrt\n"
	                 "        5:31 binary +\n"
	                 "          5:31 call mean\n"
	                 "            5:36 binary *\n"
	                 "              5:36 name x\n"
	                 "              5:40 name x\n"
	                 "          5:45 name eps\n"
	                 "6:1 out a =\n"
	                 "  6:9 cond ?:\n"
	                 "    6:9 binary &&\n"
	                 "      6:9 binary >\n"
	                 "        6:9 call gelu_t\n"
	                 "          6:16 name y\n"
	                 "        6:21 int 0\n"
	                 "      6:26 unary !\n"
	                 "        6:27 binary <\n"
	                 "          6:28 name y\n"
	                 "          6:32 float 0.00001\n"
	                 "    6:40 unary -\n"
	                 "      6:41 name y\n"
	                 "    6:45 int 2\n"
	                 "7:1 out a2 =\n"
	                 "  7:10 call where\n"
	                 "    7:16 call isnan\n"
	                 "      7:22 name y\n"
	                 "    7:26 float 0.0\n"
	                 "    7:31 name y\n");
}
END_TEST

/* ---- expressions ------------------------------------------------------------------------- */

START_TEST(test_primaries)
{
	ck_assert_str_eq(tree("x"), "x");
	ck_assert_str_eq(tree("42"), "42");
	ck_assert_str_eq(tree("2.5"), "2.5");
	ck_assert_str_eq(tree("(x)"), "x");
	ck_assert_str_eq(tree("((((x))))"), "x");
	ck_assert_str_eq(tree("relu(x)"), "(relu x)");
	ck_assert_str_eq(tree("clamp(x, 0, 1)"), "(clamp x 0 1)");
	ck_assert_str_eq(tree("f()"), "(f)");
	ck_assert_str_eq(tree("f(g(h(x)), y)"), "(f (g (h x)) y)");
	ck_assert_str_eq(tree("f16(x)"), "(f16 x)");
	ck_assert_str_eq(tree("bool(i64(x))"), "(bool (i64 x))");
	ck_assert_str_eq(tree("f32(x + 1)"), "(f32 ('+' x 1))");
	Compilation *c = tu_compile("y = 9223372036854775807 + 1e300", STAGE_AST);
	const Ast *e = c->ast.stmts[0].expr;
	ck_assert(e->args[0]->ival == 9223372036854775807ull);
	ck_assert(e->args[1]->fval == 1e300);
	pipe_free(c);
}
END_TEST

START_TEST(test_unary)
{
	ck_assert_str_eq(tree("-x"), "(neg x)");
	ck_assert_str_eq(tree("!x"), "(not x)");
	ck_assert_str_eq(tree("- -x"), "(neg (neg x))");
	ck_assert_str_eq(tree("--x"), "(neg (neg x))");
	ck_assert_str_eq(tree("-!-x"), "(neg (not (neg x)))");
	ck_assert_str_eq(tree("-1"), "(neg 1)");
	ck_assert_str_eq(tree("-f(x)"), "(neg (f x))");
	ck_assert_str_eq(tree("-(a + b)"), "(neg ('+' a b))");
	ck_assert_str_eq(tree("a - -b"), "('-' a (neg b))");
	ck_assert_str_eq(tree("a--b"), "('-' a (neg b))");
	ck_assert_str_eq(tree("a * -b"), "('*' a (neg b))");
	ck_assert_str_eq(tree("!a && !b"), "('&&' (not a) (not b))");
	ck_assert_str_eq(tree("~x"), "(bitnot x)");
	ck_assert_str_eq(tree("~-~x"), "(bitnot (neg (bitnot x)))");
	ck_assert_str_eq(tree("~a & ~b"), "('&' (bitnot a) (bitnot b))");
	/* the contract's example: bitwise binds tighter than comparisons */
	ck_assert_str_eq(tree("x & 1 == 0"), "('==' ('&' x 1) 0)");
	ck_assert_str_eq(tree("a << 1 < b >> 2"), "('<' ('<<' a 1) ('>>' b 2))");
}
END_TEST

/* The precedence table of the contract, loosest first (cond is level 1). */
static const struct {
	const char *text;
	int level;
} binops[] = {
	{"||", 2}, {"&&", 3}, {"==", 4}, {"!=", 4}, {"<", 5},  {"<=", 5}, {">", 5}, {">=", 5},
	{"|", 6},  {"^", 7},  {"&", 8},  {"<<", 9}, {">>", 9}, {"+", 10}, {"-", 10}, {"*", 11},
	{"/", 11}, {"%", 11},
};
enum { NBINOPS = sizeof binops / sizeof binops[0] };

START_TEST(test_binary_precedence_and_associativity)
{
	/* every ordered pair of binary operators: tighter binds first, equal
	 * levels associate to the left */
	for (int i = 0; i < NBINOPS; i++) {
		for (int j = 0; j < NBINOPS; j++) {
			char src[64], want[128];
			snprintf(src, sizeof src, "a %s b %s c", binops[i].text, binops[j].text);
			if (binops[i].level >= binops[j].level)
				snprintf(want, sizeof want, "('%s' ('%s' a b) c)", binops[j].text, binops[i].text);
			else
				snprintf(want, sizeof want, "('%s' a ('%s' b c))", binops[i].text, binops[j].text);
			ck_assert_str_eq(tree(src), want);
		}
	}
}
END_TEST

START_TEST(test_unary_binds_tighter_than_every_binary)
{
	for (int i = 0; i < NBINOPS; i++) {
		char src[64], want[128];
		snprintf(src, sizeof src, "-a %s !b", binops[i].text);
		snprintf(want, sizeof want, "('%s' (neg a) (not b))", binops[i].text);
		ck_assert_str_eq(tree(src), want);
		snprintf(src, sizeof src, "~a %s ~b", binops[i].text);
		snprintf(want, sizeof want, "('%s' (bitnot a) (bitnot b))", binops[i].text);
		ck_assert_str_eq(tree(src), want);
	}
}
END_TEST

START_TEST(test_conditional)
{
	ck_assert_str_eq(tree("c ? a : b"), "(? c a b)");
	/* right-associative */
	ck_assert_str_eq(tree("a ? b : c ? d : e"), "(? a b (? c d e))");
	ck_assert_str_eq(tree("a ? b ? c : d : e"), "(? a (? b c d) e)");
	/* the loosest level: every binary operator binds tighter */
	for (int i = 0; i < NBINOPS; i++) {
		char src[64], want[160];
		const char *op = binops[i].text;
		snprintf(src, sizeof src, "a %s b ? c %s d : e %s f", op, op, op);
		snprintf(want, sizeof want, "(? ('%s' a b) ('%s' c d) ('%s' e f))", op, op, op);
		ck_assert_str_eq(tree(src), want);
	}
	ck_assert_str_eq(tree("(a ? b : c) + 1"), "('+' (? a b c) 1)");
	ck_assert_str_eq(tree("-a ? -b : -c"), "(? (neg a) (neg b) (neg c))");
	ck_assert_str_eq(tree("f(a ? b : c, d)"), "(f (? a b c) d)");
}
END_TEST

START_TEST(test_parentheses_override)
{
	ck_assert_str_eq(tree("(a + b) * c"), "('*' ('+' a b) c)");
	ck_assert_str_eq(tree("a - (b - c)"), "('-' a ('-' b c))");
	ck_assert_str_eq(tree("a / (b * c)"), "('/' a ('*' b c))");
	ck_assert_str_eq(tree("(a || b) && c"), "('&&' ('||' a b) c)");
	ck_assert_str_eq(tree("a == (b == c)"), "('==' a ('==' b c))");
	ck_assert_str_eq(tree("a + b * c - d / e % f"), "('-' ('+' a ('*' b c)) ('%' ('/' d e) f))");
}
END_TEST

START_TEST(test_spans)
{
	Compilation *c = tu_compile("y = (a + b) * c2\nz = relu(x)  # c\nw = f32( x )", STAGE_AST);
	ck_assert_int_eq(c->status, FZ_OK);
	const Ast *mul = c->ast.stmts[0].expr;
	ck_assert_int_eq(mul->span.col, 5); /* from the '(' */
	ck_assert_int_eq(mul->span.len, 12);
	ck_assert_int_eq(mul->op_span.col, 13);
	ck_assert_int_eq(mul->op_span.len, 1);
	const Ast *add = mul->args[0];
	ck_assert_int_eq(add->span.col, 5); /* the parentheses belong to it */
	ck_assert_int_eq(add->span.len, 7);
	ck_assert_int_eq(add->op_span.col, 8);
	ck_assert_int_eq(mul->args[1]->span.len, 2);
	ck_assert_int_eq(mul->depth, 2);
	ck_assert_int_eq(add->depth, 1);
	ck_assert_int_eq(add->args[0]->depth, 0);
	ck_assert_int_eq(c->ast.stmts[0].span.len, 16);
	const Ast *call = c->ast.stmts[1].expr;
	ck_assert_int_eq(call->span.line, 2);
	ck_assert_int_eq(call->span.col, 5);
	ck_assert_int_eq(call->span.len, 7);
	ck_assert_int_eq(call->op_span.len, 4);
	ck_assert_int_eq(c->ast.stmts[1].span.len, 11); /* not the comment */
	const Ast *cast = c->ast.stmts[2].expr;
	ck_assert_int_eq(cast->kind, AST_CAST);
	ck_assert_int_eq(cast->dtype, FZ_F32);
	ck_assert_int_eq(cast->span.len, 8);
	ck_assert_int_eq(cast->op_span.len, 3);
	pipe_free(c);
}
END_TEST

/* ---- errors -------------------------------------------------------------------------------- */

START_TEST(test_statement_errors)
{
	ERR_EQ("out y = x z", "test.fz:1:11: error: expected newline or ';' after statement, saw identifier\n"
	                      "out y = x z\n          ^\n");
	ERR_EQ("in x: f32 = 3", "test.fz:1:11: error: expected newline or ';' after statement, saw '='\n"
	                        "in x: f32 = 3\n          ^\n");
	ERR_EQ("3 = x", "test.fz:1:1: error: expected statement, saw integer\n3 = x\n^\n");
	ERR_EQ("x\n= 1", "test.fz:1:2: error: expected '=', saw newline\nx\n ^\n");
	ERR_EQ("y == 1", "test.fz:1:3: error: expected '=', saw '=='\ny == 1\n  ^~\n");
	ERR_EQ("y", "test.fz:1:2: error: expected '=', saw end of file\ny\n ^\n");
	ERR_EQ("f32 = 1", "test.fz:1:1: error: expected statement, saw type name\nf32 = 1\n^~~\n");
	ERR_EQ("out", "test.fz:1:4: error: expected identifier, saw end of file\nout\n   ^\n");
	ERR_EQ("out 1", "test.fz:1:5: error: expected identifier, saw integer\nout 1\n    ^\n");
	ERR_EQ("a = 1\n  ) = 2", "test.fz:2:3: error: expected statement, saw ')'\n  ) = 2\n  ^\n");
}
END_TEST

START_TEST(test_in_errors)
{
	ERR_EQ("in x f32", "test.fz:1:6: error: expected ':', saw type name\nin x f32\n     ^~~\n");
	ERR_EQ("in x: foo", "test.fz:1:7: error: expected type name, saw identifier\nin x: foo\n      ^~~\n");
	ERR_EQ("in x:", "test.fz:1:6: error: expected type name, saw end of file\nin x:\n     ^\n");
	ERR_EQ("in 3: f32", "test.fz:1:4: error: expected identifier, saw integer\nin 3: f32\n   ^\n");
	ERR_EQ("in out: f32", "test.fz:1:4: error: expected identifier, saw 'out'\nin out: f32\n   ^~~\n");
	ERR_EQ("in f32: f32", "test.fz:1:4: error: expected identifier, saw type name\nin f32: f32\n   ^~~\n");
	ERR_EQ("in x: f32[0]", "test.fz:1:11: error: dimension must be a positive integer\nin x: f32[0]\n          ^\n");
	ERR_EQ("in x: f32[N, 000]", "test.fz:1:14: error: dimension must be a positive integer\n"
	                            "in x: f32[N, 000]\n             ^~~\n");
	ERR_EQ("in x: f32[2.0]", "test.fz:1:11: error: dimension must be a positive integer\nin x: f32[2.0]\n          ^~~\n");
	ERR_EQ("in x: f32[-1]", "test.fz:1:11: error: expected dimension (a name or a positive integer), saw '-'\n"
	                        "in x: f32[-1]\n          ^\n");
	ERR_EQ("in x: f32[]", "test.fz:1:11: error: expected dimension (a name or a positive integer), saw ']'\n"
	                      "in x: f32[]\n          ^\n");
	ERR_EQ("in x: f32[a,b,c,d,e,f,g,h,i]", "test.fz:1:27: error: tensor rank 9 exceeds the limit of 8\n"
	                                       "in x: f32[a,b,c,d,e,f,g,h,i]\n                          ^\n");
	ERR_EQ("in x: f32[N M]", "test.fz:1:13: error: expected ',' or ']', saw identifier\nin x: f32[N M]\n            ^\n");
	ERR_EQ("in x: f32[N,", "test.fz:1:13: error: expected dimension (a name or a positive integer), saw end of file\n"
	                       "in x: f32[N,\n            ^\n");
	ERR_EQ("in x: f32[N\n", "test.fz:1:12: error: expected ',' or ']', saw end of file\nin x: f32[N\n           ^\n");
	ERR_EQ("in x: f32(N)", "test.fz:1:10: error: expected newline or ';' after statement, saw '('\n"
	                       "in x: f32(N)\n         ^\n");
}
END_TEST

START_TEST(test_fn_errors)
{
	ERR_EQ("fn f(a, b, a) = a", "test.fz:1:12: error: duplicate parameter 'a'\nfn f(a, b, a) = a\n           ^\n");
	ERR_EQ("fn f(a, 1) = a", "test.fz:1:9: error: expected identifier, saw integer\nfn f(a, 1) = a\n        ^\n");
	ERR_EQ("fn f a = a", "test.fz:1:6: error: expected '(', saw identifier\nfn f a = a\n     ^\n");
	ERR_EQ("fn f(a) a", "test.fz:1:9: error: expected '=', saw identifier\nfn f(a) a\n        ^\n");
	ERR_EQ("fn (a) = a", "test.fz:1:4: error: expected identifier, saw '('\nfn (a) = a\n   ^\n");
	ERR_EQ("fn f(a b) = a", "test.fz:1:8: error: expected ',' or ')', saw identifier\nfn f(a b) = a\n       ^\n");
	ERR_EQ("fn f(a,) = a", "test.fz:1:8: error: expected identifier, saw ')'\nfn f(a,) = a\n       ^\n");
	ERR_EQ("fn f(a) =", "test.fz:1:10: error: expected expression, saw end of file\nfn f(a) =\n         ^\n");
	char src[1024] = "fn f(";
	for (int i = 0; i <= FZ_MAX_FN_PARAMS; i++)
		sprintf(src + strlen(src), "%sp%d", i ? "," : "", i);
	strcat(src, ") = p0");
	const char *e = error_of(src);
	/* p64 starts after "fn f(" and 64 of "pN," (10 of 3 bytes, 54 of 4) */
	ck_assert_int_eq(strncmp(e, "test.fz:1:252: error: too many parameters (the limit is 64)\n", 60), 0);
}
END_TEST

START_TEST(test_expression_errors)
{
	ERR_EQ("y = f32(x, y)", "test.fz:1:10: error: expected ')', saw ','\ny = f32(x, y)\n         ^\n");
	ERR_EQ("y = x * * 2", "test.fz:1:9: error: expected expression, saw '*'\ny = x * * 2\n        ^\n");
	ERR_EQ("y = (a + b", "test.fz:1:11: error: expected ')', saw end of file\ny = (a + b\n          ^\n");
	ERR_EQ("y = (a + b\n", "test.fz:1:11: error: expected ')', saw end of file\ny = (a + b\n          ^\n");
	ERR_EQ("y = (a + b\n\nout y", "test.fz:3:1: error: expected ')', saw 'out'\nout y\n^~~\n");
	ERR_EQ("y = a +\nz = 1", "test.fz:1:8: error: expected expression, saw newline\ny = a +\n       ^\n");
	ERR_EQ("y = f32 + 1", "test.fz:1:9: error: expected '(' after a type name, saw '+'\ny = f32 + 1\n        ^\n");
	ERR_EQ("y = a ? b", "test.fz:1:10: error: expected ':', saw end of file\ny = a ? b\n         ^\n");
	ERR_EQ("y = a ? b\n: c", "test.fz:1:10: error: expected ':', saw newline\ny = a ? b\n         ^\n");
	ERR_EQ("y = f(a b)", "test.fz:1:9: error: expected ',' or ')', saw identifier\ny = f(a b)\n        ^\n");
	ERR_EQ("y = f(a,)", "test.fz:1:9: error: expected expression, saw ')'\ny = f(a,)\n        ^\n");
	ERR_EQ("y = )", "test.fz:1:5: error: expected expression, saw ')'\ny = )\n    ^\n");
	ERR_EQ("y = in", "test.fz:1:5: error: expected expression, saw 'in'\ny = in\n    ^~\n");
	ERR_EQ("y = ()", "test.fz:1:6: error: expected expression, saw ')'\ny = ()\n     ^\n");
	ERR_EQ("y = a b", "test.fz:1:7: error: expected newline or ';' after statement, saw identifier\ny = a b\n      ^\n");
	ERR_EQ("y = 1 2", "test.fz:1:7: error: expected newline or ';' after statement, saw integer\ny = 1 2\n      ^\n");
	ERR_EQ("y = a[0]", "test.fz:1:6: error: expected newline or ';' after statement, saw '['\ny = a[0]\n     ^\n");
	ERR_EQ("y = a = b", "test.fz:1:7: error: expected newline or ';' after statement, saw '='\ny = a = b\n      ^\n");
	ERR_EQ("y = -", "test.fz:1:6: error: expected expression, saw end of file\ny = -\n     ^\n");
	ERR_EQ("y = (a))", "test.fz:1:8: error: expected newline or ';' after statement, saw ')'\ny = (a))\n       ^\n");
	/* errors on later lines point there, tabs kept in the caret line */
	ERR_EQ("in x: f32\n\ty =\tx +\t* 2", "test.fz:2:10: error: expected expression, saw '*'\n\ty =\tx +\t* 2\n\t   \t   \t^\n");
}
END_TEST

START_TEST(test_lexing_comes_first)
{
	/* the whole source is lexed before parsing starts: a bad character is
	 * reported even when a syntax error comes earlier in the text */
	ERR_EQ("y = * 2\nz = @", "test.fz:2:5: error: unexpected character '@'\nz = @\n    ^\n");
	/* inside open parentheses the next line continues the expression */
	ERR_EQ("y = (\nz = 1", "test.fz:2:3: error: expected ')', saw '='\nz = 1\n  ^\n");
}
END_TEST

/* ---- depth limits ---------------------------------------------------------------------------- */

static char *repeat3(const char *pre, const char *unit, int n, const char *mid, const char *unit2, int n2, const char *post)
{
	size_t len = strlen(pre) + strlen(unit) * (size_t)n + strlen(mid) + strlen(unit2) * (size_t)n2 + strlen(post) + 1;
	char *s = malloc(len), *p = s;
	p += sprintf(p, "%s", pre);
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s", unit);
	p += sprintf(p, "%s", mid);
	for (int i = 0; i < n2; i++)
		p += sprintf(p, "%s", unit2);
	sprintf(p, "%s", post);
	return s;
}

/* "test.fz:1:COL: error: expression nested too deeply ..." for `src`. */
static void expect_too_deep(const char *src, int col)
{
	char want[128];
	snprintf(want, sizeof want, "test.fz:1:%d: error: expression nested too deeply (the limit is 1000 levels)\n", col);
	const char *e = error_of(src);
	ck_assert_msg(strncmp(e, want, strlen(want)) == 0, "got %.200s, want %s", e, want);
}

static void expect_ok(const char *src)
{
	Compilation *c = tu_compile(src, STAGE_AST);
	ck_assert_msg(c->status == FZ_OK, "%.300s", c->diag_text);
	pipe_free(c);
}

START_TEST(test_depth_limit_parentheses)
{
	char *ok = repeat3("y = ", "(", 1000, "x", ")", 1000, "");
	expect_ok(ok);
	char *deep = repeat3("y = ", "(", 1001, "x", ")", 1001, "");
	expect_too_deep(deep, 5 + 1000); /* the 1001st '(' */
	free(ok);
	free(deep);
}
END_TEST

START_TEST(test_depth_limit_unary)
{
	char *ok = repeat3("y = ", "-", 1000, "x", "", 0, "");
	expect_ok(ok);
	char *deep = repeat3("y = ", "!", 1001, "x", "", 0, "");
	expect_too_deep(deep, 5 + 1000);
	free(ok);
	free(deep);
	/* unary and parentheses share the budget: -( counts twice */
	ok = repeat3("y = ", "-(", 500, "x", ")", 500, "");
	expect_ok(ok);
	deep = repeat3("y = ", "-(", 501, "x", ")", 501, "");
	expect_too_deep(deep, 5 + 1000); /* the '-' of the 501st pair */
	free(ok);
	free(deep);
}
END_TEST

START_TEST(test_depth_limit_operator_chains)
{
	/* a+a+...: left-leaning, parsed by a loop, but its height is bounded */
	char *ok = repeat3("y = a", "+a", 1000, "", "", 0, "");
	expect_ok(ok);
	char *deep = repeat3("y = a", "*a", 1001, "", "", 0, "");
	expect_too_deep(deep, 6 + 2 * 1000); /* the 1001st operator */
	free(ok);
	free(deep);
	/* heights combine across levels: a*a*...*a + ... */
	deep = repeat3("y = a", "*a", 600, "", "+a", 401, "");
	expect_too_deep(deep, 6 + 2 * 600 + 2 * 400);
	free(deep);
	/* the conditional on top of a full-height chain is one level too many */
	ok = repeat3("y = a", " || a", 999, " ? b : c", "", 0, "");
	expect_ok(ok);
	deep = repeat3("y = a", " || a", 1000, " ? b : c", "", 0, "");
	expect_too_deep(deep, 6 + 5 * 1000 + 1); /* the '?' */
	free(ok);
	free(deep);
}
END_TEST

START_TEST(test_depth_limit_calls_and_conditionals)
{
	char *ok = repeat3("y = ", "f(", 1000, "x", ")", 1000, "");
	expect_ok(ok);
	char *deep = repeat3("y = ", "f(", 1001, "x", ")", 1001, "");
	expect_too_deep(deep, 5 + 2 * 1000 + 1); /* the '(' of the 1001st call */
	free(ok);
	free(deep);
	ok = repeat3("y = ", "c ? a : ", 1000, "b", "", 0, "");
	expect_ok(ok);
	deep = repeat3("y = ", "c ? a : ", 1001, "b", "", 0, "");
	expect_too_deep(deep, 5 + 8 * 1000 + 2);
	free(ok);
	free(deep);
	ok = repeat3("y = ", "f16(", 1000, "x", ")", 1000, "");
	expect_ok(ok);
	free(ok);
}
END_TEST

/* ---- robustness (each must finish quickly) ---------------------------------------------------- */

START_TEST(test_100k_parentheses)
{
	char *s = repeat3("y = ", "(", 100000, "x", ")", 100000, "\nout y\n");
	expect_too_deep(s, 1005);
	free(s);
	s = repeat3("y = ", "(", 100000, "", "", 0, ""); /* and never closed */
	expect_too_deep(s, 1005);
	free(s);
}
END_TEST

START_TEST(test_100k_unary_minus)
{
	char *s = repeat3("y = ", "-", 100000, "x", "", 0, "");
	expect_too_deep(s, 1005);
	free(s);
}
END_TEST

START_TEST(test_1mb_operator_chain)
{
	char *s = repeat3("y = x", "+x", 1 << 19, "", "", 0, "\nout y\n");
	expect_too_deep(s, 6 + 2 * 1000);
	free(s);
	s = repeat3("y = f(x", ",x", 1 << 19, "", "", 0, ")\nout y\n"); /* a wide call is fine */
	expect_ok(s);
	free(s);
}
END_TEST

START_TEST(test_many_statements)
{
	/* 1 MB of short statements: linear time, every one kept in order */
	enum { N = 1 << 18 };
	char *src = malloc(4 * N + 1), *q = src;
	for (int i = 0; i < N; i++, q += 4)
		memcpy(q, i % 2 ? "b=2;" : "a=1\n", 4);
	*q = 0;
	Compilation *c = tu_compile(src, STAGE_AST);
	ck_assert_int_eq(c->status, FZ_OK);
	ck_assert_int_eq(c->ast.n, N);
	ck_assert_int_eq(c->ast.stmts[N - 1].name[0], 'b');
	/* "a=1\n" "b=2;a=1\n" "b=2;a=1\n" ... "b=2;" */
	ck_assert_int_eq(c->ast.stmts[N - 1].span.line, N / 2 + 1);
	ck_assert_int_eq(c->ast.stmts[N - 1].span.col, 1);
	ck_assert_int_eq(c->ast.stmts[N - 2].span.line, N / 2);
	ck_assert_int_eq(c->ast.stmts[N - 2].span.col, 5);
	ck_assert(c->ast.stmts[N - 2].expr->ival == 1);
	pipe_free(c);
	free(src);
}
END_TEST

START_TEST(test_unterminated_everything)
{
	static const char *const cases[] = {
		"y = (", "y = f(a,", "y = f(", "in x: f32[N,", "in x: f32[", "in x: f32[N", "fn f(a,", "fn f(",
		"fn f(a)", "fn f(a) =", "y = a ?", "y = a ? b :", "y = a ? b", "y = f32(", "y = -", "in x:",
		"in", "out y =", "y =", "y = (((((", "y = [", "in x: f32[N]]", "y = a +", "y = a ||",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *e = error_of(cases[i]);
		ck_assert_msg(strncmp(e, "test.fz:1:", 10) == 0, "%s: %s", cases[i], e);
		ck_assert_msg(strstr(e, ": error: expected ") != NULL, "%s: %s", cases[i], e);
	}
}
END_TEST

START_TEST(test_random_token_sequences)
{
	static const char *const frag[] = {"x", "1", "2.5", "(", ")", "[", "]", ",", ":", ";", "=", "?", "||",
	                                   "&&", "==", "<", "+", "-", "*", "!", "in", "out", "fn", "f32", "\n",
	                                   " ", "relu(", "N"};
	srand(4242);
	char buf[1024];
	int ok = 0;
	for (int round = 0; round < 3000; round++) {
		size_t len = 0;
		int n = 1 + rand() % 40;
		for (int k = 0; k < n; k++) {
			const char *f = frag[rand() % (int)(sizeof frag / sizeof frag[0])];
			memcpy(buf + len, f, strlen(f));
			len += strlen(f);
			buf[len++] = ' ';
		}
		buf[len] = 0;
		Compilation *c = tu_compile(buf, STAGE_AST);
		if (c->status == FZ_OK) {
			ok++;
		} else {
			ck_assert_int_eq(c->status, FZ_ERR_PROGRAM);
			ck_assert_msg(strncmp(c->diag_text, "test.fz:", 8) == 0, "%s", c->diag_text);
		}
		pipe_free(c);
	}
	ck_assert_int_lt(ok, 3000);
}
END_TEST

START_TEST(test_nul_bytes_through_the_pipeline)
{
	PipeOptions opt = pipe_default_options();
	opt.stop = STAGE_AST;
	Compilation *c = pipe_new("nul.fz", "y = x\0 + 1\n", 11, &opt);
	ck_assert_int_eq(pipe_run(c), FZ_ERR_PROGRAM);
	ck_assert_str_eq(c->diag_text, "nul.fz:1:6: error: NUL byte in source\ny = x? + 1\n     ^\n");
	pipe_free(c);
}
END_TEST

Suite *parser_suite(void)
{
	Suite *s = suite_create("parser");
	TCase *tc = tcase_create("statements");
	tcase_add_test(tc, test_in_statements);
	tcase_add_test(tc, test_let_and_out_statements);
	tcase_add_test(tc, test_fn_statements);
	tcase_add_test(tc, test_separators_and_blank_lines);
	tcase_add_test(tc, test_newlines_inside_brackets);
	tcase_add_test(tc, test_full_program_dump);
	suite_add_tcase(s, tc);
	tc = tcase_create("expressions");
	tcase_add_test(tc, test_primaries);
	tcase_add_test(tc, test_unary);
	tcase_add_test(tc, test_binary_precedence_and_associativity);
	tcase_add_test(tc, test_unary_binds_tighter_than_every_binary);
	tcase_add_test(tc, test_conditional);
	tcase_add_test(tc, test_parentheses_override);
	tcase_add_test(tc, test_spans);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_statement_errors);
	tcase_add_test(tc, test_in_errors);
	tcase_add_test(tc, test_fn_errors);
	tcase_add_test(tc, test_expression_errors);
	tcase_add_test(tc, test_lexing_comes_first);
	suite_add_tcase(s, tc);
	tc = tcase_create("depth");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_depth_limit_parentheses);
	tcase_add_test(tc, test_depth_limit_unary);
	tcase_add_test(tc, test_depth_limit_operator_chains);
	tcase_add_test(tc, test_depth_limit_calls_and_conditionals);
	suite_add_tcase(s, tc);
	tc = tcase_create("robustness");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_100k_parentheses);
	tcase_add_test(tc, test_100k_unary_minus);
	tcase_add_test(tc, test_1mb_operator_chain);
	tcase_add_test(tc, test_many_statements);
	tcase_add_test(tc, test_unterminated_everything);
	tcase_add_test(tc, test_random_token_sequences);
	tcase_add_test(tc, test_nul_bytes_through_the_pipeline);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(parser_suite()); }
