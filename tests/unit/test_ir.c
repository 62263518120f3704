/*
 * test_ir.c: the op graph (src/ir): names, fn inlining, type rules,
 * broadcasting, folding, CSE, DCE, the printer and the limits.
 *
 * Programs go through the real pipeline up to STAGE_IR (tu_compile), so the
 * graph checked is the one later stages get (after DCE). Expected dtypes,
 * shapes, values and diagnostics are written out here from the language
 * contract and docs/language.md, not computed with the code under test.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

/* ---- helpers -------------------------------------------------------------------- */

static Compilation *ok(const char *src)
{
	Compilation *c = tu_compile(src, STAGE_IR);
	if (c->status != FZ_OK)
		ck_abort_msg("compile failed:\n%s\nfor program:\n%s", c->diag_text ? c->diag_text : "?", src);
	return c;
}

static const Node *node(const Compilation *c, NodeId id)
{
	ck_assert_int_ge(id, 0);
	ck_assert_int_lt(id, c->graph.n);
	return &c->graph.nodes[id];
}

static const Node *out_node(const Compilation *c, int k)
{
	ck_assert_int_lt(k, c->graph.noutputs);
	return node(c, c->graph.outputs[k].node);
}

static const Node *arg(const Compilation *c, const Node *n, int k) { return node(c, n->args[k]); }

static int count_op(const Compilation *c, Op op)
{
	int k = 0;
	for (int i = 0; i < c->graph.n; i++)
		k += c->graph.nodes[i].op == op;
	return k;
}

static const char *type_of(Compilation *c, const Node *n) { return ir_type_str(c->arena, &c->graph, n); }

/* The rendered diagnostic of a program that must fail. */
static void expect_error(const char *src, const char *want)
{
	const char *got = tu_error(src, STAGE_IR);
	if (!got)
		ck_abort_msg("expected an error for:\n%s", src);
	ck_assert_str_eq(got, want);
}

/* Only the first line of the diagnostic ("test.fz:L:C: error: MSG"). */
static void expect_error_line(const char *src, const char *want)
{
	const char *got = tu_error(src, STAGE_IR);
	if (!got)
		ck_abort_msg("expected an error for:\n%s", src);
	const char *nl = strchr(got, '\n');
	size_t n = nl ? (size_t)(nl - got) : strlen(got);
	ck_assert_msg(strlen(want) == n && memcmp(got, want, n) == 0, "got:\n%s\nwant:\n%s", got, want);
}

static const char *printed(Compilation *c)
{
	StrBuf sb;
	sb_init(&sb, c->arena);
	ir_print(&sb, &c->graph);
	return sb_str(&sb);
}

static const char *dtypes[] = {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"};

/* ---- promotion --------------------------------------------------------------------- */

/* The contract's table, written out: bool < i32 < i64 < {f16, bf16} < f32 < f64,
 * f16 with bf16 gives f32. */
static const fz_dtype promoted[7][7] = {
	/*          bool     i32     i64     f16     bf16     f32     f64 */
	/* bool */ {FZ_BOOL, FZ_I32, FZ_I64, FZ_F16, FZ_BF16, FZ_F32, FZ_F64},
	/* i32  */ {FZ_I32, FZ_I32, FZ_I64, FZ_F16, FZ_BF16, FZ_F32, FZ_F64},
	/* i64  */ {FZ_I64, FZ_I64, FZ_I64, FZ_F16, FZ_BF16, FZ_F32, FZ_F64},
	/* f16  */ {FZ_F16, FZ_F16, FZ_F16, FZ_F16, FZ_F32, FZ_F32, FZ_F64},
	/* bf16 */ {FZ_BF16, FZ_BF16, FZ_BF16, FZ_F32, FZ_BF16, FZ_F32, FZ_F64},
	/* f32  */ {FZ_F32, FZ_F32, FZ_F32, FZ_F32, FZ_F32, FZ_F32, FZ_F64},
	/* f64  */ {FZ_F64, FZ_F64, FZ_F64, FZ_F64, FZ_F64, FZ_F64, FZ_F64},
};

/* operand k of n is input `in` converted to dtype t: the input itself or an
 * implicit cast of it */
static void check_operand(const Compilation *c, const Node *n, int k, int in, fz_dtype t)
{
	const Node *a = arg(c, n, k);
	ck_assert_int_eq(a->dtype, t);
	if (c->graph.nodes[c->graph.inputs[in].node].dtype == t) {
		ck_assert_int_eq(n->args[k], c->graph.inputs[in].node);
	} else {
		ck_assert_int_eq(a->op, OP_CAST);
		ck_assert_int_eq(a->flags, NF_IMPLICIT);
		ck_assert_int_eq(a->args[0], c->graph.inputs[in].node);
	}
}

START_TEST(promotion_every_pair)
{
	for (int i = 0; i < 7; i++)
		for (int j = 0; j < 7; j++) {
			char src[256];
			snprintf(src, sizeof src, "in x: %s[N]\nin y: %s[N]\nout a = maximum(x, y)\nout c = x == y\n%s",
			         dtypes[i], dtypes[j], i == 0 && j == 0 ? "" : "out s = x + y\n");
			Compilation *c = ok(src);
			fz_dtype t = promoted[i][j];
			const Node *m = out_node(c, 0);
			ck_assert_int_eq(m->op, OP_MAXIMUM);
			ck_assert_int_eq(m->dtype, t);
			check_operand(c, m, 0, 0, t);
			check_operand(c, m, 1, 1, t);
			const Node *eq = out_node(c, 1);
			ck_assert_int_eq(eq->op, OP_EQ);
			ck_assert_int_eq(eq->dtype, FZ_BOOL);
			check_operand(c, eq, 0, 0, t);
			check_operand(c, eq, 1, 1, t);
			if (i || j) {
				const Node *s = out_node(c, 2);
				ck_assert_int_eq(s->op, OP_ADD);
				ck_assert_int_eq(s->dtype, t);
				check_operand(c, s, 0, 0, t);
				check_operand(c, s, 1, 1, t);
			}
			pipe_free(c);
		}
}
END_TEST

START_TEST(promotion_scalar_inputs_are_strong)
{
	/* in eps: f32 is typed like a tensor: f16 tensor + f32 scalar is f32 */
	Compilation *c = ok("in x: f16[N]\nin eps: f32\nout y = x + eps\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "f32[N]");
	check_operand(c, out_node(c, 0), 0, 0, FZ_F32);
	pipe_free(c);
	c = ok("in x: i32[N]\nin k: i64\nout y = x * k\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i64[N]");
	pipe_free(c);
}
END_TEST

/* ---- weak literals -------------------------------------------------------------------- */

START_TEST(weak_int_literal_with_every_dtype)
{
	for (int i = 0; i < 7; i++) {
		char src[128];
		snprintf(src, sizeof src, "in x: %s[N]\nout a = x + 3\nout b = 3 - x\n", dtypes[i]);
		Compilation *c = ok(src);
		fz_dtype t = i == FZ_BOOL ? FZ_I32 : (fz_dtype)i; /* an int literal next to bool gives i32 */
		for (int k = 0; k < 2; k++) {
			const Node *n = out_node(c, k);
			ck_assert_int_eq(n->dtype, t);
			check_operand(c, n, k, 0, t);
			const Node *lit = arg(c, n, 1 - k);
			ck_assert_int_eq(lit->op, OP_CONST);
			ck_assert_int_eq(lit->dtype, t);
			ck_assert_int_eq(lit->flags, NF_WEAK);
			if (dtype_is_float(t))
				ck_assert(lit->c.f == 3.0);
			else
				ck_assert_int_eq(lit->c.i, 3);
		}
		pipe_free(c);
	}
}
END_TEST

START_TEST(weak_float_literal_with_every_dtype)
{
	for (int i = 0; i < 7; i++) {
		char src[128];
		snprintf(src, sizeof src, "in x: %s[N]\nout a = x * 0.1\n", dtypes[i]);
		Compilation *c = ok(src);
		fz_dtype t = dtype_is_float((fz_dtype)i) ? (fz_dtype)i : FZ_F32;
		const Node *n = out_node(c, 0);
		ck_assert_int_eq(n->dtype, t);
		check_operand(c, n, 0, 0, t);
		const Node *lit = arg(c, n, 1);
		ck_assert_int_eq(lit->op, OP_CONST);
		ck_assert_int_eq(lit->dtype, t);
		ck_assert_int_eq(lit->flags, NF_WEAK);
		ck_assert(lit->c.f == 0.1); /* the literal's double, not rounded to f16/bf16/f32 */
		pipe_free(c);
	}
}
END_TEST

typedef struct {
	const char *expr;
	fz_dtype t;
	bool weak;
	double f; /* float dtypes */
	int64_t i; /* integer and bool dtypes */
} ConstCase;

static void check_const(const ConstCase *k)
{
	char src[256];
	snprintf(src, sizeof src, "out y = %s\n", k->expr);
	Compilation *c = ok(src);
	ck_assert_int_eq(c->graph.n, 1); /* folded: one constant, its operands gone */
	const Node *n = out_node(c, 0);
	ck_assert_msg(n->op == OP_CONST, "%s: not folded", k->expr);
	ck_assert_msg(n->dtype == k->t, "%s: dtype %s", k->expr, fz_dtype_name((fz_dtype)n->dtype));
	ck_assert_msg(((n->flags & NF_WEAK) != 0) == k->weak, "%s: weak flag", k->expr);
	if (dtype_is_float(k->t))
		ck_assert_msg(n->c.f == k->f || (isnan(n->c.f) && isnan(k->f)), "%s = %.17g, want %.17g", k->expr, n->c.f,
		              k->f);
	else
		ck_assert_msg(n->c.i == k->i, "%s = %lld, want %lld", k->expr, (long long)n->c.i, (long long)k->i);
	pipe_free(c);
}

START_TEST(literal_only_expressions)
{
	static const ConstCase cases[] = {
		{"2*3+1", FZ_I32, true, 0, 7},
		{"7/2", FZ_I32, true, 0, 3}, /* integers truncate, even literals */
		{"-7/2", FZ_I32, true, 0, -3},
		{"-7 % 2", FZ_I32, true, 0, -1},
		{"7 % -2", FZ_I32, true, 0, 1},
		{"1/0", FZ_I32, true, 0, 0},
		{"5 % 0", FZ_I32, true, 0, 0},
		{"1/3*3.0", FZ_F32, true, 0.0, 0}, /* 1/3 is integer division */
		{"2.0*3", FZ_F32, true, 6.0, 0},
		{"0.1+0.2", FZ_F32, true, 0.30000000000000004, 0}, /* folded in f64, as Python does */
		{"1e300*1e10", FZ_F32, true, INFINITY, 0},
		{"4611686018427387904 * 4", FZ_I32, true, 0, 0}, /* i64 wraps */
		{"pow(2, 10)", FZ_I32, true, 0, 1024},
		{"pow(2, -1)", FZ_I32, true, 0, 0},
		{"pow(-1, -3)", FZ_I32, true, 0, -1},
		{"pow(2.0, 0.5)", FZ_F32, true, 1.4142135623730951, 0},
		{"sqrt(2)", FZ_F32, true, 1.4142135623730951, 0},
		{"exp(0)", FZ_F32, true, 1.0, 0},
		{"abs(-3)", FZ_I32, true, 0, 3},
		{"maximum(2, 7.5)", FZ_F32, true, 7.5, 0},
		{"clamp(12, 0, 10)", FZ_I32, true, 0, 10},
		{"1 < 2", FZ_BOOL, false, 0, 1},
		{"!(1 < 2)", FZ_BOOL, false, 0, 0},
		{"1 == 1.0", FZ_BOOL, false, 0, 1},
		{"1 < 2 && 3 > 4", FZ_BOOL, false, 0, 0},
		{"1 < 2 ? 3 : 4.5", FZ_F32, true, 3.0, 0},
		{"where(2 < 1, 3, 4)", FZ_I32, true, 0, 4},
		{"isnan(0.0/0.0)", FZ_BOOL, false, 0, 1},
		{"isinf(-1.0/0.0)", FZ_BOOL, false, 0, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_const(&cases[i]);
}
END_TEST

START_TEST(weak_value_kept_across_uses)
{
	/* (0.1 + 0.2) is folded in f64 and meets x_f64 with its full value */
	Compilation *c = ok("in x: f64[N]\nout y = x * (0.1 + 0.2)\n");
	ck_assert(arg(c, out_node(c, 0), 1)->c.f == 0.30000000000000004);
	pipe_free(c);
	/* a binding of literals stays weak: k + x_i64 is i64, not i32 */
	c = ok("in x: i64[N]\nk = 2 * 3\nout y = k + x\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i64[N]");
	ck_assert_int_eq(arg(c, out_node(c, 0), 0)->c.i, 6);
	pipe_free(c);
	/* an integer literal with a float tensor is a float constant */
	c = ok("in x: bf16[N]\nout y = x / 3\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "bf16[N]");
	ck_assert(arg(c, out_node(c, 0), 1)->c.f == 3.0);
	pipe_free(c);
	/* where with weak branches and a tensor condition computes in i32/f32 */
	c = ok("in b: bool[N]\nout y = b ? 1 : 2\nout z = where(b, 1, 0.5)\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i32[N]");
	ck_assert_str_eq(type_of(c, out_node(c, 1)), "f32[N]");
	pipe_free(c);
}
END_TEST

START_TEST(weak_integer_must_fit_i32)
{
	expect_error("in x: i32[N]\nout y = x + 3000000000\n",
	             "test.fz:2:13: error: integer 3000000000 does not fit in i32\n"
	             "out y = x + 3000000000\n"
	             "            ^~~~~~~~~~\n");
	expect_error("out y = 2147483647 + 1\n",
	             "test.fz:1:9: error: integer 2147483648 does not fit in i32\n"
	             "out y = 2147483647 + 1\n"
	             "        ^~~~~~~~~~~~~~\n");
	/* fits: i64 operand, or a negative bound */
	Compilation *c = ok("in x: i64[N]\nout y = x + 3000000000\nout z = -2147483648\n");
	ck_assert_int_eq(arg(c, out_node(c, 0), 1)->c.i, 3000000000LL);
	ck_assert_int_eq(out_node(c, 1)->c.i, -2147483648LL);
	ck_assert_int_eq(out_node(c, 1)->dtype, FZ_I32);
	pipe_free(c);
}
END_TEST

/* ---- the other type rules ---------------------------------------------------------------- */

START_TEST(math_builtins_convert_integers)
{
	Compilation *c = ok("in x: i32[N]\nin b: bool[N]\nin h: f16[N]\n"
	                    "out e = exp(x)\nout a = abs(x)\nout n = isnan(x)\nout ab = abs(b)\nout eh = exp(h)\n");
	const Node *e = out_node(c, 0);
	ck_assert_str_eq(type_of(c, e), "f32[N]");
	check_operand(c, e, 0, 0, FZ_F32);
	ck_assert_str_eq(type_of(c, out_node(c, 1)), "i32[N]"); /* abs keeps integers */
	ck_assert_int_eq(out_node(c, 1)->args[0], c->graph.inputs[0].node);
	ck_assert_str_eq(type_of(c, out_node(c, 2)), "bool[N]");
	check_operand(c, out_node(c, 2), 0, 0, FZ_F32);
	ck_assert_str_eq(type_of(c, out_node(c, 3)), "f32[N]"); /* bool is not an integer */
	ck_assert_str_eq(type_of(c, out_node(c, 4)), "f16[N]"); /* halves keep their dtype */
	pipe_free(c);
}
END_TEST

START_TEST(comparisons_and_logic)
{
	Compilation *c = ok("in x: f32[N]\nin i: i32[N]\nout y = x < i && !(i == 2) || x >= 0.5\n");
	const Node *n = out_node(c, 0);
	ck_assert_int_eq(n->op, OP_OR);
	ck_assert_str_eq(type_of(c, n), "bool[N]");
	const Node *lt = arg(c, arg(c, n, 0), 0);
	ck_assert_int_eq(lt->op, OP_LT);
	check_operand(c, lt, 1, 1, FZ_F32);
	pipe_free(c);
	/* bools compare and select fine; minimum/maximum/clamp/where keep bool */
	c = ok("in a: bool[N]\nin b: bool[N]\nout y = a == b\nout z = maximum(a, b)\nout w = a ? b : a\n"
	       "out v = clamp(a, b, a)\n");
	ck_assert_str_eq(type_of(c, out_node(c, 1)), "bool[N]");
	ck_assert_str_eq(type_of(c, out_node(c, 2)), "bool[N]");
	ck_assert_str_eq(type_of(c, out_node(c, 3)), "bool[N]");
	pipe_free(c);
}
END_TEST

START_TEST(select_promotes_branches)
{
	Compilation *c = ok("in c: bool[N]\nin a: f16[N]\nin b: bf16[N]\nout y = c ? a : b\nout z = where(c, a, 1)\n");
	const Node *y = out_node(c, 0);
	ck_assert_int_eq(y->op, OP_WHERE);
	ck_assert_str_eq(type_of(c, y), "f32[N]");
	ck_assert_int_eq(y->args[0], c->graph.inputs[0].node);
	check_operand(c, y, 1, 1, FZ_F32);
	check_operand(c, y, 2, 2, FZ_F32);
	ck_assert_str_eq(type_of(c, out_node(c, 1)), "f16[N]");
	pipe_free(c);
}
END_TEST

START_TEST(casts)
{
	Compilation *c = ok("in x: f32[N]\nin h: f16[N]\nin g: f16[N]\n"
	                    "out a = i32(x)\nout b = f32(x)\nout c = f16(h)\nout d = f16(h * g)\nout e = bool(x)\n");
	ck_assert_int_eq(out_node(c, 0)->op, OP_CAST);
	ck_assert_int_eq(out_node(c, 0)->flags, 0);
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i32[N]");
	ck_assert_int_eq(c->graph.outputs[1].node, c->graph.inputs[0].node); /* to its own dtype: itself */
	ck_assert_int_eq(c->graph.outputs[2].node, c->graph.inputs[1].node); /* an f16 input is rounded already */
	const Node *d = out_node(c, 3);                                        /* f16(h * g) rounds the product */
	ck_assert_int_eq(d->op, OP_CAST);
	ck_assert_str_eq(type_of(c, d), "f16[N]");
	ck_assert_int_eq(arg(c, d, 0)->op, OP_MUL);
	ck_assert_str_eq(type_of(c, out_node(c, 4)), "bool[N]");
	pipe_free(c);
}
END_TEST

START_TEST(folding_casts_and_strong_constants)
{
	static const ConstCase cases[] = {
		{"i32(2.7)", FZ_I32, false, 0, 2},
		{"i32(-2.7)", FZ_I32, false, 0, -2},
		{"i64(1e30)", FZ_I64, false, 0, INT64_MAX}, /* saturates, as CUDA */
		{"i32(0.0/0.0)", FZ_I32, false, 0, 0},
		{"bool(0.5)", FZ_BOOL, false, 0, 1},
		{"bool(0)", FZ_BOOL, false, 0, 0},
		{"f16(0.1)", FZ_F16, false, 0.0999755859375, 0},
		{"bf16(0.1)", FZ_BF16, false, 0.10009765625, 0},
		{"f32(0.1)", FZ_F32, false, (double)0.1f, 0},
		{"f64(0.1)", FZ_F64, false, 0.1, 0},
		{"f32(1) / 3", FZ_F32, false, (double)(1.0f / 3.0f), 0}, /* f32 arithmetic */
		{"f64(1) / 3", FZ_F64, false, 1.0 / 3.0, 0},
		{"i32(7) / i32(-2)", FZ_I32, false, 0, -3},
		{"i32(7) / 0", FZ_I32, false, 0, 0},
		{"i32(-2147483648) / -1", FZ_I32, false, 0, INT32_MIN}, /* wraps, no trap */
		{"i32(2147483647) + 1", FZ_I32, false, 0, INT32_MIN},
		{"i32(5) % 0", FZ_I32, false, 0, 0},
		{"i64(3) * 2.5", FZ_F32, false, 7.5, 0},
		{"f16(1) + f16(2)", FZ_F16, false, 3.0, 0},
		{"f16(1) + bf16(2)", FZ_F32, false, 3.0, 0},
		{"bool(1) + 1", FZ_I32, false, 0, 2},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_const(&cases[i]);
}
END_TEST

START_TEST(arithmetic_on_bools_is_an_error)
{
	expect_error("in a: bool[N]\nin b: bool[N]\nout y = a + b\n",
	             "test.fz:3:11: error: '+' needs numbers, got bool and bool (cast with i32(...) first)\n"
	             "out y = a + b\n"
	             "          ^\n");
	expect_error("in a: bool[N]\nout y = -a\n",
	             "test.fz:2:9: error: '-' needs a number, got bool (cast with i32(...) first)\n"
	             "out y = -a\n"
	             "        ^\n");
	expect_error("in a: bool[N]\nout y = pow(a, a < a)\n",
	             "test.fz:2:9: error: 'pow' needs numbers, got bool and bool (cast with i32(...) first)\n"
	             "out y = pow(a, a < a)\n"
	             "        ^~~\n");
	expect_error_line("in a: bool[N]\nout y = a % a\n",
	                  "test.fz:2:11: error: '%' needs numbers, got bool and bool (cast with i32(...) first)");
	expect_error_line("in a: bool[N]\nout y = a * bool(1)\n",
	                  "test.fz:2:11: error: '*' needs numbers, got bool and bool (cast with i32(...) first)");
	expect_error_line("in a: bool[N]\nout y = a / a\n",
	                  "test.fz:2:11: error: '/' needs numbers, got bool and bool (cast with i32(...) first)");
	expect_error_line("in a: bool[N]\nout y = a - a\n",
	                  "test.fz:2:11: error: '-' needs numbers, got bool and bool (cast with i32(...) first)");
}
END_TEST

START_TEST(logic_needs_bool)
{
	expect_error("in x: f32[N]\nin b: bool[N]\nout z = x && b\n",
	             "test.fz:3:11: error: '&&' needs bool operands, got f32 and bool\n"
	             "out z = x && b\n"
	             "          ^~\n");
	expect_error_line("in b: bool[N]\nout z = b || 1\n",
	                  "test.fz:2:11: error: '||' needs bool operands, got bool and i32");
	expect_error_line("in b: bool[N]\nout z = b || 1.5\n",
	                  "test.fz:2:11: error: '||' needs bool operands, got bool and f32");
	expect_error("in i: i32[N]\nout z = !i\n",
	             "test.fz:2:9: error: '!' needs a bool operand, got i32\n"
	             "out z = !i\n"
	             "        ^\n");
	expect_error("in x: f32[N]\nout z = x ? 1 : 2\n",
	             "test.fz:2:11: error: the condition of '?:' must be bool, got f32\n"
	             "out z = x ? 1 : 2\n"
	             "          ^\n");
	expect_error("in x: i64[N]\nout z = where(x, 1, 2)\n",
	             "test.fz:2:9: error: the condition of 'where' must be bool, got i64\n"
	             "out z = where(x, 1, 2)\n"
	             "        ^~~~~\n");
	expect_error_line("out z = 1 ? 2 : 3\n", "test.fz:1:11: error: the condition of '?:' must be bool, got i32");
}
END_TEST

/* ---- reductions ------------------------------------------------------------------------- */

START_TEST(reduction_types_and_shapes)
{
	Compilation *c = ok("in x: f32[A, B, N]\nin i: i32[R, N]\nin h: bf16[R, N]\nin b: bool[R, N]\n"
	                    "out s = sum(x)\nout si = sum(i)\nout mi = mean(i)\nout mh = mean(h)\n"
	                    "out xb = max(b)\nout sb = sum(b)\nout ni = min(i)\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "f32[A, B, 1]");
	const Node *si = out_node(c, 1);
	ck_assert_int_eq(si->op, OP_SUM);
	ck_assert_str_eq(type_of(c, si), "i64[R, 1]");
	check_operand(c, si, 0, 1, FZ_I64); /* accumulated in i64: an explicit widening */
	const Node *mi = out_node(c, 2);
	ck_assert_int_eq(mi->op, OP_MEAN);
	ck_assert_str_eq(type_of(c, mi), "f32[R, 1]");
	ck_assert_int_eq(mi->args[0], si->args[0]); /* the same i64 cast, shared */
	ck_assert_str_eq(type_of(c, out_node(c, 3)), "bf16[R, 1]");
	ck_assert_str_eq(type_of(c, out_node(c, 4)), "bool[R, 1]");
	ck_assert_str_eq(type_of(c, out_node(c, 5)), "i64[R, 1]");
	ck_assert_str_eq(type_of(c, out_node(c, 6)), "i32[R, 1]");
	pipe_free(c);
}
END_TEST

START_TEST(reduction_over_size_one_folds)
{
	Compilation *c = ok("in x: f32[R, 1]\nin i: i32[R, 1]\n"
	                    "out a = sum(x)\nout b = max(x)\nout c = sum(i)\nout d = mean(i)\nout e = mean(x)\n");
	ck_assert_int_eq(c->graph.outputs[0].node, c->graph.inputs[0].node);
	ck_assert_int_eq(c->graph.outputs[1].node, c->graph.inputs[0].node);
	ck_assert_int_eq(c->graph.outputs[4].node, c->graph.inputs[0].node);
	const Node *s = out_node(c, 2);
	ck_assert_int_eq(s->op, OP_CAST);
	ck_assert_str_eq(type_of(c, s), "i64[R, 1]");
	const Node *m = out_node(c, 3);
	ck_assert_int_eq(m->op, OP_CAST);
	ck_assert_str_eq(type_of(c, m), "f32[R, 1]");
	ck_assert_int_eq(count_op(c, OP_SUM) + count_op(c, OP_MEAN) + count_op(c, OP_MAX), 0);
	pipe_free(c);
	/* a symbolic last dim is not known to be 1: reduced */
	c = ok("in x: f32[R, N]\nout y = sum(sum(x))\n");
	ck_assert_int_eq(count_op(c, OP_SUM), 1); /* the second sum is over [R, 1] */
	pipe_free(c);
}
END_TEST

START_TEST(reducing_a_scalar_is_an_error)
{
	expect_error("in s: f32\nout y = sum(s)\n",
	             "test.fz:2:9: error: 'sum' reduces the last axis of a tensor, got the scalar f32\n"
	             "out y = sum(s)\n"
	             "        ^~~\n");
	expect_error_line("out y = max(1)\n", "test.fz:1:9: error: 'max' reduces the last axis of a tensor, got the scalar i32");
	expect_error_line("in x: f32[N]\nout y = mean(sum(x) * 0 + mean(2.5))\n",
	                  "test.fz:2:27: error: 'mean' reduces the last axis of a tensor, got the scalar f32");
}
END_TEST

/* ---- broadcasting ------------------------------------------------------------------------- */

static void check_shape(const char *decls, const char *expr, const char *want)
{
	char src[512];
	snprintf(src, sizeof src, "%sout r = %s\n", decls, expr);
	Compilation *c = ok(src);
	ck_assert_str_eq(type_of(c, out_node(c, 0)), want);
	pipe_free(c);
}

START_TEST(broadcasting)
{
	check_shape("in x: f32[B, N]\nin y: f32[N]\n", "x + y", "f32[B, N]");
	check_shape("in x: f32[B, 1]\nin y: f32[N]\n", "x - y", "f32[B, N]");
	check_shape("in x: f32[1, N]\nin y: f32[B, 1]\n", "x * y", "f32[B, N]");
	check_shape("in x: f32[3, 1]\nin y: f32[1, 4]\n", "x / y", "f32[3, 4]");
	check_shape("in x: f32[1]\nin y: f32[N]\n", "x + y", "f32[N]");
	check_shape("in x: f32[A, B, C]\nin s: f32\n", "x * s + 1", "f32[A, B, C]");
	check_shape("in x: f32[N, N]\nin y: f32[N]\n", "x + y", "f32[N, N]");
	check_shape("in x: f32[A, B, C, D, E, F, G, H]\nin y: f32[H]\nin z: f32[D, 1, 1, 1, 1]\n", "x + y + z",
	            "f32[A, B, C, D, E, F, G, H]");
	check_shape("in x: f32[1, 2, 1, 4, 1, 6, 1, 8]\nin y: f32[7, 1, 3, 1, 5, 1, 7, 1]\n", "x * y",
	            "f32[7, 2, 3, 4, 5, 6, 7, 8]");
	check_shape("in c: bool[B, 1]\nin a: f32[N]\nin b: f32[1, 1]\n", "where(c, a, b)", "f32[B, N]");
	check_shape("in x: f32[B, N]\nin lo: f32[B, 1]\nin hi: f32[N]\n", "clamp(x, lo, hi)", "f32[B, N]");
	check_shape("in x: f32[B, N]\n", "x - max(x)", "f32[B, N]");
}
END_TEST

START_TEST(broadcast_errors)
{
	expect_error("in x: f32[N]\nin y: f32[M]\nout z = x + y\n",
	             "test.fz:3:11: error: cannot broadcast f32[N] with f32[M]: N and M differ\n"
	             "out z = x + y\n"
	             "          ^\n");
	expect_error_line("in x: f32[B, N]\nin y: f32[M]\nout z = x * y\n",
	                  "test.fz:3:11: error: cannot broadcast f32[B, N] with f32[M]: N and M differ");
	expect_error_line("in x: f32[N]\nin y: i32[4]\nout z = x + y\n",
	                  "test.fz:3:11: error: cannot broadcast f32[N] with i32[4]: N and 4 differ");
	expect_error_line("in x: f32[3]\nin y: f32[4]\nout z = x == y\n",
	                  "test.fz:3:11: error: cannot broadcast f32[3] with f32[4]: 3 and 4 differ");
	expect_error_line("in x: f32[B, N]\nin y: f32[N, N]\nout z = x - y\n",
	                  "test.fz:3:11: error: cannot broadcast f32[B, N] with f32[N, N]: B and N differ");
	expect_error("in c: bool[N]\nin a: f32[N]\nin b: f32[M]\nout y = where(c, a, b)\n",
	             "test.fz:4:9: error: cannot broadcast bool[N] with f32[M]: N and M differ\n"
	             "out y = where(c, a, b)\n"
	             "        ^~~~~\n");
	expect_error_line("in x: f32[N]\nin lo: f32[M]\nout y = clamp(x, 0, lo)\n",
	                  "test.fz:3:9: error: cannot broadcast f32[N] with f32[M]: N and M differ");
	expect_error_line("in c: bool[N]\nin a: f32[M]\nout y = c ? a : 0\n",
	                  "test.fz:3:11: error: cannot broadcast bool[N] with f32[M]: N and M differ");
	expect_error_line("in x: f32[A, B, C, D, E, F, G, H]\nin y: f32[H, 1]\nout y2 = x + y\n",
	                  "test.fz:3:12: error: cannot broadcast f32[A, B, C, D, E, F, G, H] with f32[H, 1]: G and H "
	                  "differ");
}
END_TEST

/* ---- folding and CSE ------------------------------------------------------------------------ */

START_TEST(folding_inside_tensor_expressions)
{
	Compilation *c = ok("in x: f32[N]\nout y = x * (2 * 3 + 1)\n");
	const Node *m = out_node(c, 0);
	ck_assert_int_eq(arg(c, m, 1)->op, OP_CONST);
	ck_assert(arg(c, m, 1)->c.f == 7.0);
	ck_assert_int_eq(c->graph.n, 3); /* x, 7, mul: the 2, 3 and 1 are gone */
	pipe_free(c);
	c = ok("in x: f32[N]\nin s: f32\nout y = x + s * f32(2)\n"); /* s is an input: not folded */
	ck_assert_int_eq(count_op(c, OP_MUL), 1);
	pipe_free(c);
}
END_TEST

START_TEST(cse)
{
	Compilation *c = ok("in x: f32[N]\nin y: f32[N]\nout z = (x + y) * (x + y)\n");
	ck_assert_int_eq(count_op(c, OP_ADD), 1);
	const Node *m = out_node(c, 0);
	ck_assert_int_eq(m->args[0], m->args[1]);
	ck_assert_int_eq(c->graph.n, 4);
	pipe_free(c);
	/* promotion casts and constants are shared too */
	c = ok("in a: i32[N]\nin b: f32[N]\nout y = a + b\nout z = a * b * 2 + 2\n");
	ck_assert_int_eq(count_op(c, OP_CAST), 1);
	ck_assert_int_eq(count_op(c, OP_CONST), 1);
	pipe_free(c);
	/* different flags: an implicit cast and an explicit one are different nodes */
	c = ok("in a: i32[N]\nin b: f32[N]\nout y = a + b\nout z = f32(a)\n");
	ck_assert_int_eq(count_op(c, OP_CAST), 2);
	pipe_free(c);
	/* equal expressions in different bindings */
	c = ok("in x: f32[B, N]\np = exp(x - max(x))\nq = exp(x - max(x))\nout y = p / sum(q)\n");
	ck_assert_int_eq(count_op(c, OP_EXP), 1);
	ck_assert_int_eq(count_op(c, OP_MAX), 1);
	pipe_free(c);
}
END_TEST

/* ---- DCE ------------------------------------------------------------------------------------ */

START_TEST(dce)
{
	Compilation *c = ok("in x: f32[N]\nin unused: f32[M]\nt = x * 2\nout y = x + 1\n");
	const Graph *g = &c->graph;
	ck_assert_int_eq(g->n, 4); /* x, unused, 1, add */
	ck_assert_int_eq(g->ninputs, 2);
	ck_assert_int_eq(g->nodes[g->inputs[1].node].op, OP_INPUT); /* an unused input keeps its node */
	ck_assert_int_eq(g->nodes[g->inputs[1].node].input, 1);
	ck_assert_str_eq(g->inputs[1].name, "unused");
	ck_assert_int_eq(g->ndims, 2);
	ck_assert_int_eq(count_op(c, OP_MUL), 0);
	for (int i = 0; i < g->n; i++) /* renumbered, still topological */
		for (int k = 0; k < ir_ops[g->nodes[i].op].arity; k++)
			ck_assert_int_lt(g->nodes[i].args[k], i);
	pipe_free(c);
}
END_TEST

/* ---- names ------------------------------------------------------------------------------------ */

START_TEST(name_errors)
{
	expect_error("in x: f32[N]\nin y: f32[N]\nx = y + 1\n",
	             "test.fz:3:1: error: 'x' is already defined (at 1:1)\n"
	             "x = y + 1\n"
	             "^\n");
	expect_error_line("in x: f32[N]\nout y = x\nfn y(a) = a\n", "test.fz:3:4: error: 'y' is already defined (at 2:1)");
	expect_error_line("fn f(a) = a\nin f: f32[N]\n", "test.fz:2:4: error: 'f' is already defined (at 1:1)");
	expect_error_line("in x: f32[N]\nin x: f32[N]\n", "test.fz:2:4: error: 'x' is already defined (at 1:1)");
	expect_error("in exp: f32[N]\n",
	             "test.fz:1:4: error: 'exp' is a builtin function and cannot be redefined\n"
	             "in exp: f32[N]\n"
	             "   ^~~\n");
	expect_error_line("sum = 1\n", "test.fz:1:1: error: 'sum' is a builtin function and cannot be redefined");
	expect_error_line("fn where(a) = a\n", "test.fz:1:4: error: 'where' is a builtin function and cannot be redefined");
	expect_error_line("fn f(a, relu) = a\n", "test.fz:1:9: error: 'relu' is a builtin function and cannot be redefined");
	expect_error("in x: f32[N]\nout y = foo(x)\n",
	             "test.fz:2:9: error: unknown name 'foo'\n"
	             "out y = foo(x)\n"
	             "        ^~~\n");
	expect_error_line("out y = z + 1\nz = 2\n", "test.fz:1:9: error: unknown name 'z'");
	expect_error_line("x = x + 1\nout x\n", "test.fz:1:5: error: unknown name 'x'");
	expect_error_line("in x: f32[N]\nout y = exp\n", "test.fz:2:9: error: 'exp' is a builtin function, not a value");
	expect_error_line("in x: f32[N]\nout y = x(1)\n", "test.fz:2:9: error: 'x' is not a function");
	expect_error_line("fn f(a) = a\nin x: f32[N]\nout y = f + x\n", "test.fz:3:9: error: 'f' is a function, not a value");
	expect_error_line("in x: f32[N]\nout y = exp(x, x)\n", "test.fz:2:9: error: 'exp' takes 1 argument, got 2");
	expect_error_line("in x: f32[N]\nout y = clamp(x, 0)\n", "test.fz:2:9: error: 'clamp' takes 3 arguments, got 2");
	expect_error_line("in x: f32[N]\nout y = sum()\n", "test.fz:2:9: error: 'sum' takes 1 argument, got 0");
	expect_error_line("fn f(a, b) = a * b\nin x: f32[N]\nout y = f(x)\n",
	                  "test.fz:3:9: error: 'f' takes 2 arguments, got 1");
	expect_error_line("fn k() = 1\nout y = k(2)\n", "test.fz:2:9: error: 'k' takes 0 arguments, got 1");
}
END_TEST

START_TEST(out_statements)
{
	Compilation *c = ok("in x: f32[N]\ny = x + 1\nout z = x * 2\nout y\nout x\n");
	const Graph *g = &c->graph;
	ck_assert_int_eq(g->noutputs, 3);
	ck_assert_str_eq(g->outputs[0].name, "z");
	ck_assert_str_eq(g->outputs[1].name, "y");
	ck_assert_str_eq(g->outputs[2].name, "x");
	ck_assert_int_eq(g->outputs[2].node, g->inputs[0].node);
	ck_assert_int_eq(out_node(c, 1)->op, OP_ADD);
	pipe_free(c);
	expect_error("in x: f32[N]\nout y = x\nout y\n",
	             "test.fz:3:5: error: 'y' is already an output (at 2:1)\n"
	             "out y\n"
	             "    ^\n");
	expect_error_line("in x: f32[N]\nout x\nout x\n", "test.fz:3:5: error: 'x' is already an output (at 2:1)");
	expect_error_line("in x: f32[N]\nout w\n", "test.fz:2:5: error: unknown name 'w'");
	expect_error_line("fn f(a) = a\nout f\n", "test.fz:2:5: error: 'f' is a function, not a value");
	expect_error_line("in x: f32[N]\nout exp\n", "test.fz:2:5: error: 'exp' is a builtin function, not a value");
	/* two names for one value are two outputs */
	c = ok("in x: f32[N]\nout a = x + 1\nout b = x + 1\n");
	ck_assert_int_eq(c->graph.outputs[0].node, c->graph.outputs[1].node);
	pipe_free(c);
}
END_TEST

START_TEST(no_outputs)
{
	expect_error("", "test.fz:1:1: error: program has no outputs (mark a value with 'out')\n\n^\n");
	expect_error("\n\n  \n", "test.fz:1:1: error: program has no outputs (mark a value with 'out')\n\n^\n");
	expect_error("in x: f32[N]\ny = x\n\n",
	             "test.fz:2:6: error: program has no outputs (mark a value with 'out')\n"
	             "y = x\n"
	             "     ^\n");
	expect_error_line("in x: f32[N]  # the input\n", "test.fz:1:26: error: program has no outputs (mark a value with 'out')");
}
END_TEST

START_TEST(dims_in_order_of_first_use)
{
	Compilation *c = ok("in x: f32[B, N]\nin y: f32[M, B, 4]\nin z: f32[N]\nout s = sum(x) + z\n");
	const Graph *g = &c->graph;
	ck_assert_int_eq(g->ndims, 3);
	ck_assert_str_eq(g->dims[0], "B");
	ck_assert_str_eq(g->dims[1], "N");
	ck_assert_str_eq(g->dims[2], "M");
	const Node *y = &g->nodes[g->inputs[1].node];
	ck_assert_int_eq(y->shape[0], DIM_SYM(2));
	ck_assert_int_eq(y->shape[1], DIM_SYM(0));
	ck_assert_int_eq(y->shape[2], 4);
	ck_assert_int_eq(g->nodes[g->inputs[2].node].shape[0], g->nodes[g->inputs[0].node].shape[1]);
	pipe_free(c);
}
END_TEST

/* ---- the graph's invariants, over every golden IR program ------------------------------------- */

/* After ir_build: arguments come first, and every operand already has the
 * op's operand dtype (promotions are explicit), as later stages assume. */
static void check_invariants(const Graph *g, const char *file)
{
	for (NodeId id = 0; id < g->n; id++) {
		const Node *n = &g->nodes[id];
		int arity = ir_ops[n->op].arity;
		fz_dtype t = (fz_dtype)n->dtype, a0 = arity ? (fz_dtype)g->nodes[n->args[0]].dtype : t;
		for (int k = 0; k < arity; k++)
			ck_assert_msg(n->args[k] >= 0 && n->args[k] < id, "%s: %%%d arg %d", file, id, k);
		for (int k = arity; k < 3; k++)
			ck_assert_int_eq(n->args[k], -1);
		bool ok = true;
		switch (ir_ops[n->op].cls) {
		case OC_LEAF: ok = n->op != OP_INPUT || g->inputs[n->input].node == id; break;
		case OC_ARITH:
			for (int k = 0; k < arity; k++)
				ok = ok && g->nodes[n->args[k]].dtype == t;
			break;
		case OC_COMPARE: ok = t == FZ_BOOL && g->nodes[n->args[1]].dtype == a0; break;
		case OC_LOGIC:
			for (int k = 0; k < arity; k++)
				ok = ok && g->nodes[n->args[k]].dtype == FZ_BOOL;
			break;
		case OC_SELECT:
			ok = a0 == FZ_BOOL && g->nodes[n->args[1]].dtype == t && g->nodes[n->args[2]].dtype == t;
			break;
		case OC_CAST: ok = a0 != t || dtype_is_half(t); break;
		case OC_MATH:
			for (int k = 0; k < arity; k++)
				ok = ok && g->nodes[n->args[k]].dtype == a0;
			ok = ok && (ir_ops[n->op].type == TY_PRED ? t == FZ_BOOL && dtype_is_float(a0)
			                                          : a0 == t && (dtype_is_float(t) || ir_ops[n->op].type == TY_ABS));
			break;
		case OC_REDUCE:
			ok = a0 == t || (n->op == OP_MEAN && a0 == FZ_I64 && t == FZ_F32);
			ok = ok && n->rank == g->nodes[n->args[0]].rank && n->shape[n->rank - 1] == 1;
			break;
		}
		/* the node records its value operands' dtype */
		if (arity > 0)
			ok = ok && n->operand == g->nodes[n->args[ir_ops[n->op].cls == OC_SELECT ? 1 : 0]].dtype;
		ck_assert_msg(ok, "%s: %%%d (%s) breaks its class's dtype rule", file, id, ir_ops[n->op].name);
	}
}

/* ---- fn inlining ------------------------------------------------------------------------------ */

START_TEST(fn_inlining)
{
	Compilation *c = ok("fn sq(a) = a * a\nfn f(a, b) = sq(a) + sq(b)\nin x: f32[N]\nin y: f32[N]\nout z = f(x, y)\n"
	                    "out w = sq(x)\n");
	const Node *z = out_node(c, 0);
	ck_assert_int_eq(z->op, OP_ADD);
	ck_assert_int_eq(arg(c, z, 0)->op, OP_MUL);
	ck_assert_int_eq(arg(c, z, 0)->args[0], c->graph.inputs[0].node);
	ck_assert_int_eq(arg(c, z, 1)->args[0], c->graph.inputs[1].node);
	ck_assert_int_eq(z->args[0], c->graph.outputs[1].node); /* sq(x) inlined once */
	ck_assert_int_eq(c->graph.n, 5);
	pipe_free(c);
	/* a parameter wins over an input of the same name; types follow the argument */
	c = ok("in x: f32[N]\nin y: i32[M]\nfn f(x) = x * 2\nout z = f(y)\nout w = f(2.5)\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i32[M]");
	ck_assert_int_eq(out_node(c, 1)->op, OP_CONST);
	ck_assert(out_node(c, 1)->c.f == 5.0);
	pipe_free(c);
	/* a fn of no parameters */
	c = ok("fn two() = 2\nin x: i64[N]\nout y = x * two()\n");
	ck_assert_str_eq(type_of(c, out_node(c, 0)), "i64[N]");
	pipe_free(c);
}
END_TEST

/* fn f0(a) = a + a; fn fK(a) = f{K-1}(a) * f{K-1}(a): 2^40 calls without memoisation. */
START_TEST(fn_memoisation)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	sb_puts(&sb, "fn g0(a) = a + a\n");
	for (int k = 1; k <= 40; k++)
		sb_printf(&sb, "fn g%d(a) = g%d(a) * g%d(a)\n", k, k - 1, k - 1);
	sb_puts(&sb, "in x: f32[N]\nout y = g40(x)\nout z = g40(3)\n");
	clock_t t0 = clock();
	Compilation *c = ok(sb_str(&sb));
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	ck_assert_msg(secs < 2.0, "took %.2f s", secs);
	ck_assert_int_eq(count_op(c, OP_MUL), 40);
	ck_assert_int_eq(count_op(c, OP_ADD), 1);
	/* the constant one folds: 3+3 = 6, then squared 40 times in i64, wrapping */
	const Node *z = out_node(c, 1);
	ck_assert_int_eq(z->op, OP_CONST);
	pipe_free(c);
	arena_free(a);
}
END_TEST

START_TEST(fn_errors)
{
	expect_error("in x: f32[N]\nfn f(a) = a + x\nout y = f(x)\n",
	             "test.fz:2:15: error: unknown name 'x' (a fn sees only its parameters and earlier fns)\n"
	             "fn f(a) = a + x\n"
	             "              ^\n");
	expect_error_line("fn f(a) = g(a)\nfn g(a) = a\nin x: f32[N]\nout y = f(x)\n",
	                  "test.fz:1:11: error: unknown name 'g' (a fn sees only its parameters and earlier fns)");
	expect_error_line("fn f(a) = f(a)\n", "test.fz:1:11: error: unknown name 'f' (a fn sees only its parameters and earlier fns)");
	/* found where the fn is defined, even if nothing calls it */
	expect_error_line("fn f(a) = a + q\nin x: f32[N]\nout y = x\n",
	                  "test.fz:1:15: error: unknown name 'q' (a fn sees only its parameters and earlier fns)");
	expect_error_line("fn f(a) = a(1)\n", "test.fz:1:11: error: 'a' is not a function");
	expect_error_line("fn g(a) = a\nfn f(a) = g\n", "test.fz:2:11: error: 'g' is a function, not a value");
	expect_error_line("fn g(a) = a\nfn f(a) = g(a, a)\n", "test.fz:2:11: error: 'g' takes 1 argument, got 2");
	expect_error_line("fn f(a) = exp(a, 1)\n", "test.fz:1:11: error: 'exp' takes 1 argument, got 2");
	/* type and shape errors show up at a call, inside the body, with the call site */
	expect_error("fn f(a, b) = a + b\nin x: f32[N]\nin y: f32[M]\nout z = f(x, y)\n",
	             "test.fz:1:16: error: cannot broadcast f32[N] with f32[M]: N and M differ (in 'f' called at 4:9)\n"
	             "fn f(a, b) = a + b\n"
	             "               ^\n");
	expect_error_line("fn g(a) = a && a\nfn f(a) = g(a * 2)\nin x: f32[N]\nout z = f(x)\n",
	                  "test.fz:1:13: error: '&&' needs bool operands, got f32 and f32 (in 'g' called at 2:11)");
	/* an error in the arguments is the caller's */
	expect_error_line("fn f(a) = a\nin x: f32[N]\nin b: bool[N]\nout z = f(x && b)\n",
	                  "test.fz:4:13: error: '&&' needs bool operands, got f32 and bool");
	/* an unused fn with a type error compiles: types are known only at a call */
	Compilation *c = ok("fn f(a) = a && 1\nin x: f32[N]\nout y = x\n");
	pipe_free(c);
}
END_TEST

/* A chain of fns whose bodies are each 900 levels deep, every call at the
 * bottom: the third level of nesting goes past IR_MAX_INLINE_DEPTH (2000). */
START_TEST(fn_nesting_limit)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	for (int k = 0; k < 3; k++) {
		sb_printf(&sb, "fn f%d(a) = ", k);
		if (k == 0)
			sb_puts(&sb, "a");
		else
			sb_printf(&sb, "f%d(a)", k - 1);
		for (int i = 0; i < 900; i++)
			sb_puts(&sb, "+1");
		sb_puts(&sb, "\n");
	}
	sb_puts(&sb, "in x: f32[N]\nout y = f1(x)\n");
	Compilation *c = ok(sb_str(&sb)); /* two levels: 1800 */
	ck_assert_int_eq(count_op(c, OP_ADD), 1800);
	pipe_free(c);
	/* f1(x) is memoised (no inlining, no recursion); f1(x * 2) is not */
	sb_puts(&sb, "out z = f2(x)\nout w = f2(x * 2)\n");
	expect_error_line(sb_str(&sb), "test.fz:2:12: error: functions nested too deeply (the limit is 2000 levels of "
	                               "expression, counting the bodies of called fns) (in 'f1' called at 3:12)");
	arena_free(a);
}
END_TEST

/* 100,000 bindings, each using the one before: no pass may recurse over the graph's depth. */
START_TEST(long_binding_chain)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	sb_puts(&sb, "in x: f32[N]\nb0 = x\n");
	for (int i = 1; i <= 100000; i++)
		sb_printf(&sb, "b%d = b%d * 0.5 + b%d\n", i, i - 1, i - 1);
	sb_puts(&sb, "out y = b100000\n");
	Compilation *c = ok(sb_str(&sb));
	ck_assert_int_eq(count_op(c, OP_MUL), 100000);
	ck_assert_int_eq(count_op(c, OP_ADD), 100000);
	ck_assert_int_eq(c->graph.n, 200002);
	check_invariants(&c->graph, "chain");
	pipe_free(c);
	arena_free(a);
}
END_TEST

/* ---- limits ------------------------------------------------------------------------------------ */

START_TEST(limit_inputs_and_outputs)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	for (int i = 0; i < FZ_MAX_INPUTS; i++)
		sb_printf(&sb, "in x%d: f32\n", i);
	sb_puts(&sb, "out y = x0\n");
	Compilation *c = ok(sb_str(&sb));
	ck_assert_int_eq(c->graph.ninputs, FZ_MAX_INPUTS);
	pipe_free(c);
	sb_puts(&sb, "in extra: f32\n");
	expect_error_line(sb_str(&sb), "test.fz:258:4: error: too many inputs (the limit is 256)");

	sb_init(&sb, a);
	sb_puts(&sb, "in x: f32[N]\n");
	for (int i = 0; i < FZ_MAX_OUTPUTS; i++)
		sb_printf(&sb, "out y%d = x + %d\n", i, i);
	c = ok(sb_str(&sb));
	ck_assert_int_eq(c->graph.noutputs, FZ_MAX_OUTPUTS);
	pipe_free(c);
	sb_puts(&sb, "out x\n");
	expect_error_line(sb_str(&sb), "test.fz:258:5: error: too many outputs (the limit is 256)");
	arena_free(a);
}
END_TEST

START_TEST(limit_elements)
{
	expect_error_line("in x: f32[2147483648, 2147483648, 2]\nout y = x\n",
	                  "test.fz:1:35: error: 'x' has more than 2^62 elements");
	Compilation *c = ok("in x: f32[2147483648, 2147483648, N]\nout y = x\n"); /* 2^62 exactly, symbolic N */
	pipe_free(c);
}
END_TEST

/* fK(a) = f{K-1}(a * 2) + f{K-1}(a * 3): 2^K distinct nodes, past FZ_MAX_NODES at K = 21 */
START_TEST(limit_nodes)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	sb_puts(&sb, "fn g0(a) = a\n");
	for (int k = 1; k <= 21; k++)
		sb_printf(&sb, "fn g%d(a) = g%d(a * 2) + g%d(a * 3)\n", k, k - 1, k - 1);
	sb_puts(&sb, "in x: f32[N]\nout y = g21(x)\n");
	const char *err = tu_error(sb_str(&sb), STAGE_IR);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "error: program too large: more than 1048576 nodes in the op graph") != NULL, "%s", err);
	arena_free(a);
}
END_TEST

START_TEST(numel_and_strings)
{
	Dim s3[] = {2, 3, 4};
	int64_t n = -1;
	ck_assert(ir_numel(3, s3, NULL, &n));
	ck_assert_int_eq(n, 24);
	ck_assert(ir_numel(0, s3, NULL, &n));
	ck_assert_int_eq(n, 1);
	int64_t dims[] = {5, 0, -1};
	Dim sym[] = {DIM_SYM(0), 3};
	ck_assert(ir_numel(2, sym, dims, &n));
	ck_assert_int_eq(n, 15);
	Dim big[] = {(Dim)1 << 40, (Dim)1 << 40, DIM_SYM(1)}; /* overflowing, but one dim is 0 */
	ck_assert(ir_numel(3, big, dims, &n));
	ck_assert_int_eq(n, 0);
	ck_assert(!ir_numel(2, big, dims, &n));
	Dim exact[] = {(Dim)1 << 31, (Dim)1 << 31};
	ck_assert(ir_numel(2, exact, dims, &n));
	ck_assert_int_eq(n, (int64_t)1 << 62);
	Dim over[] = {(Dim)1 << 31, (Dim)1 << 31, 2};
	ck_assert(!ir_numel(3, over, dims, &n));
	Dim unbound[] = {DIM_SYM(2)};
	ck_assert(!ir_numel(1, unbound, dims, &n));

	Compilation *c = ok("in x: f16[B, 3, N]\nin s: i64\nout y = s\n");
	const Graph *g = &c->graph;
	ck_assert_str_eq(ir_type_str(c->arena, g, &g->nodes[g->inputs[0].node]), "f16[B, 3, N]");
	ck_assert_str_eq(ir_type_str(c->arena, g, &g->nodes[g->inputs[1].node]), "i64");
	ck_assert_str_eq(ir_shape_str(c->arena, g, 3, g->nodes[g->inputs[0].node].shape), "[B, 3, N]");
	ck_assert_str_eq(ir_shape_str(c->arena, g, 0, NULL), "[]");
	pipe_free(c);
}
END_TEST

/* ---- printer ------------------------------------------------------------------------------------ */

START_TEST(printer)
{
	Compilation *c = ok("# softmax\nin x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n");
	ck_assert_str_eq(printed(c), "# program test: dims B, N\n"
	                             "in  %0 x: f32[B, N]\n"
	                             "%1 f32[B, 1] = max %0                   # max(x)  (3:13)\n"
	                             "%2 f32[B, N] = sub %0, %1               # x - max(x)  (3:9)\n"
	                             "%3 f32[B, N] = exp %2                   # exp(x - max(x))  (3:5)\n"
	                             "%4 f32[B, 1] = sum %3                   # sum(e)  (4:13)\n"
	                             "%5 f32[B, N] = div %3, %4               # e / sum(e)  (4:9)\n"
	                             "out y = %5\n");
	pipe_free(c);
	c = ok("in i: i32[N]\nin b: bool\nout y = (i +   # a comment\n  0.25) * 1e20\nout t = b\nout k = 3\n"
	       "out f = f16(0.1)\nout n = -1.0/0.0\n");
	ck_assert_str_eq(printed(c), "# program test: dims N\n"
	                             "in  %0 i: i32[N]\n"
	                             "in  %1 b: bool\n"
	                             "%2 f32[N] = cast %0 (implicit)          # i  (3:10)\n"
	                             "%3 f32 = const 0.25 (weak)              # 0.25  (4:3)\n"
	                             "%4 f32[N] = add %2, %3                  # (i + 0.25)  (3:9)\n"
	                             "%5 f32 = const 1e+20 (weak)             # 1e20  (4:11)\n"
	                             "%6 f32[N] = mul %4, %5                  # (i + 0.25) * 1e20  (3:9)\n"
	                             "%7 i32 = const 3 (weak)                 # 3  (6:9)\n"
	                             "%8 f16 = const 0.099975586              # f16(0.1)  (7:9)\n"
	                             "%9 f32 = const -inf (weak)              # -1.0/0.0  (8:9)\n"
	                             "out y = %6\n"
	                             "out t = %1\n"
	                             "out k = %7\n"
	                             "out f = %8\n"
	                             "out n = %9\n");
	pipe_free(c);
}
END_TEST

START_TEST(invariants_of_golden_programs)
{
	DIR *dir = opendir(tu_path("tests/golden"));
	ck_assert_ptr_nonnull(dir);
	int seen = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "ir_", 3) != 0 || len < 4 || strcmp(e->d_name + len - 3, ".fz") != 0)
			continue;
		char rel[512];
		snprintf(rel, sizeof rel, "tests/golden/%s", e->d_name);
		FILE *f = fopen(tu_path(rel), "rb");
		ck_assert_ptr_nonnull(f);
		static char text[1 << 16];
		size_t n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = 0;
		Compilation *c = ok(text);
		check_invariants(&c->graph, e->d_name);
		pipe_free(c);
		seen++;
	}
	closedir(dir);
	ck_assert_int_ge(seen, 24); /* every example and the type-rule programs */
}
END_TEST

static Suite *ir_suite(void)
{
	Suite *s = suite_create("ir");
	TCase *t = tcase_create("types");
	tcase_add_test(t, promotion_every_pair);
	tcase_add_test(t, promotion_scalar_inputs_are_strong);
	tcase_add_test(t, weak_int_literal_with_every_dtype);
	tcase_add_test(t, weak_float_literal_with_every_dtype);
	tcase_add_test(t, literal_only_expressions);
	tcase_add_test(t, weak_value_kept_across_uses);
	tcase_add_test(t, weak_integer_must_fit_i32);
	tcase_add_test(t, math_builtins_convert_integers);
	tcase_add_test(t, comparisons_and_logic);
	tcase_add_test(t, select_promotes_branches);
	tcase_add_test(t, casts);
	tcase_add_test(t, folding_casts_and_strong_constants);
	tcase_add_test(t, arithmetic_on_bools_is_an_error);
	tcase_add_test(t, logic_needs_bool);
	suite_add_tcase(s, t);
	t = tcase_create("shapes");
	tcase_add_test(t, reduction_types_and_shapes);
	tcase_add_test(t, reduction_over_size_one_folds);
	tcase_add_test(t, reducing_a_scalar_is_an_error);
	tcase_add_test(t, broadcasting);
	tcase_add_test(t, broadcast_errors);
	suite_add_tcase(s, t);
	t = tcase_create("graph");
	tcase_add_test(t, folding_inside_tensor_expressions);
	tcase_add_test(t, cse);
	tcase_add_test(t, dce);
	tcase_add_test(t, name_errors);
	tcase_add_test(t, out_statements);
	tcase_add_test(t, no_outputs);
	tcase_add_test(t, dims_in_order_of_first_use);
	tcase_add_test(t, fn_inlining);
	tcase_add_test(t, fn_memoisation);
	tcase_add_test(t, fn_errors);
	tcase_add_test(t, fn_nesting_limit);
	tcase_add_test(t, long_binding_chain);
	tcase_add_test(t, limit_inputs_and_outputs);
	tcase_add_test(t, limit_elements);
	tcase_add_test(t, limit_nodes);
	tcase_add_test(t, numel_and_strings);
	tcase_add_test(t, printer);
	tcase_add_test(t, invariants_of_golden_programs);
	suite_add_tcase(s, t);
	return s;
}

int main(void) { return tu_run(ir_suite()); }
