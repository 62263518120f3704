/*
 * test_ops.c: every op of the op table has every piece it needs.
 *
 * The table (src/ir/ops.def) says what an op is; its semantics (src/ir/
 * sem.def) say what it computes, for the interpreter and the generated CUDA
 * alike. An op is complete when, for every dtype its type rule admits:
 *
 *   - a program using it compiles (the type rule) and the op is in its graph;
 *   - eval_op computes it on sample values (host semantics) and the
 *     interpreter runs the program;
 *   - the code generator writes CUDA for it, fused and per op, and NVRTC
 *     compiles that CUDA with an empty log;
 *
 * and besides: the random-program generator (tests/progen*) writes it, so
 * the random tests cover it on the emulator and the GPU, and docs/language.md
 * names it. The test walks every op of the table, so an op added without one
 * of these fails here with a message that names the op and the missing
 * piece, instead of computing zeros somewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/interp.h"
#include "progen.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

/* How the language writes the ops that are not called by name (a, b, c are
 * the operands). A new operator needs its spelling here: the grammar is the
 * front end's, not the table's. */
static const struct {
	Op op;
	const char *text;
} spellings[] = {
	{OP_NEG, "-a"},       {OP_NOT, "!a"},       {OP_ADD, "a + b"},    {OP_SUB, "a - b"},
	{OP_MUL, "a * b"},    {OP_DIV, "a / b"},    {OP_MOD, "a % b"},    {OP_EQ, "a == b"},
	{OP_NE, "a != b"},    {OP_LT, "a < b"},     {OP_LE, "a <= b"},    {OP_GT, "a > b"},
	{OP_GE, "a >= b"},    {OP_AND, "a && b"},   {OP_OR, "a || b"},    {OP_CAST, "bf16(a)"},
	{OP_BITNOT, "~a"},    {OP_BITAND, "a & b"}, {OP_BITOR, "a | b"},  {OP_BITXOR, "a ^ b"},
	{OP_SHL, "a << b"},   {OP_SHR, "a >> b"},
};

/* The program text that applies op to inputs a, b, c (NULL: no spelling). */
static const char *spell(Op op, char *buf, size_t n)
{
	if (ir_ops[op].call) {
		static const char *const args[] = {"", "a", "a, b", "a, b, c"};
		snprintf(buf, n, "%s(%s)", ir_ops[op].name, args[ir_ops[op].arity]);
		return buf;
	}
	for (size_t i = 0; i < sizeof spellings / sizeof spellings[0]; i++)
		if (spellings[i].op == op)
			return spellings[i].text;
	return NULL;
}

/* A value of dtype t for operand k: small, distinct, and valid for every op
 * (no division by zero, positive where a logarithm wants it). */
static Scalar sample(fz_dtype t, int k)
{
	static const double f[] = {1.5, 0.5, 2.25};
	static const int64_t i[] = {3, 1, 2};
	Scalar s;
	if (dtype_is_float(t))
		s.f = f[k];
	else
		s.i = t == FZ_BOOL ? (k != 1) : i[k];
	return s;
}

static const Node *find_op(const Graph *g, Op op)
{
	for (int i = 0; i < g->n; i++)
		if (g->nodes[i].op == op)
			return &g->nodes[i];
	return NULL;
}

/* The host semantics on sample values, and the interpreter over a tensor. */
static void check_host(Op op, const Graph *g, const Node *n, const char *prog)
{
	if (ir_ops[op].cls != OC_REDUCE) {
		Scalar args[3], r;
		for (int k = 0; k < ir_ops[op].arity; k++)
			args[k] = sample(ir_ops[op].cls == OC_SELECT && k == 0 ? FZ_BOOL : (fz_dtype)n->operand, k);
		ck_assert_msg(eval_op(op, (fz_dtype)n->dtype, (fz_dtype)n->operand, args, &r),
		              "'%s' has no host semantics on %s (src/ir/sem.def)\n%s", ir_ops[op].name,
		              fz_dtype_name((fz_dtype)n->operand), prog);
	}
	Tensor in[3], out[1];
	for (int k = 0; k < g->ninputs; k++) {
		const Node *x = &g->nodes[g->inputs[k].node];
		in[k] = (Tensor){.dtype = (fz_dtype)x->dtype, .rank = 1, .shape = {3}};
		ck_assert(tensor_alloc(&in[k]));
		for (int e = 0; e < 3; e++)
			eval_store(in[k].dtype, in[k].data, e, sample(in[k].dtype, e));
	}
	int64_t dims[1] = {-1};
	char err[512];
	fz_status s = interp_run(g, dims, in, out, err, sizeof err);
	ck_assert_msg(s == FZ_OK, "'%s' on %s: the interpreter fails: %s\n%s", ir_ops[op].name,
	              fz_dtype_name((fz_dtype)n->operand), err, prog);
	tensor_free(&out[0]);
	for (int k = 0; k < g->ninputs; k++)
		tensor_free(&in[k]);
}

/* CUDA for the op, fused and per op, that NVRTC compiles cleanly. */
static void check_cuda(Op op, const char *prog, fz_dtype t)
{
	for (int fused = 1; fused >= 0; fused--) {
		PipeOptions o = pipe_default_options();
		o.fuse = fused;
		Compilation *c = pipe_new("walk.fz", prog, strlen(prog), &o);
		ck_assert_ptr_nonnull(c);
		ck_assert_msg(pipe_run(c) == FZ_OK, "'%s' with %s inputs has no CUDA (%s): %s\n%s", ir_ops[op].name,
		              fz_dtype_name(t), fused ? "fused" : "per op", c->diag_text ? c->diag_text : "?", prog);
		if (fused) {
			RtNvrtcResult r;
			bool ok = rt_nvrtc_compile(c->arena, c->module.source, "walk", 8, 0, false, &r);
			ck_assert_msg(ok && r.log && !r.log[0], "'%s' with %s inputs: NVRTC: %s%s\n%s", ir_ops[op].name, fz_dtype_name(t),
			              r.message ? r.message : "", r.log ? r.log : "", c->module.source);
		}
		pipe_free(c);
	}
}

/* Every dtype: compiled where the type rule admits it, then checked. */
START_TEST(types_semantics_and_cuda)
{
	Op op = (Op)_i;
	if (ir_ops[op].cls == OC_LEAF)
		return; /* inputs and constants: every program has them */
	char call[64];
	const char *text = spell(op, call, sizeof call);
	ck_assert_msg(text != NULL, "operator '%s' has no spelling in tests/unit/test_ops.c", ir_ops[op].name);
	int admitted = 0;
	static char why[512];
	why[0] = 0;
	for (int t = 0; t < FZ_DTYPE_COUNT; t++) {
		const char *d = fz_dtype_name((fz_dtype)t);
		const char *cond = ir_ops[op].cls == OC_SELECT ? "bool" : d;
		char prog[512];
		snprintf(prog, sizeof prog, "in a: %s[N]\nin b: %s[N]\nin c: %s[N]\nout y = %s\n", cond, d, d, text);
		Compilation *c = tu_compile(prog, STAGE_IR);
		if (c->status != FZ_OK) {
			ck_assert_msg(!strstr(c->diag_text, "internal error"), "'%s' with %s inputs: %s", ir_ops[op].name, d,
			              c->diag_text);
			snprintf(why, sizeof why, "\n%s", c->diag_text);
			pipe_free(c);
			continue;
		}
		const Node *n = find_op(&c->graph, op);
		if (n) {
			admitted++;
			check_host(op, &c->graph, n, prog);
			check_cuda(op, prog, (fz_dtype)t);
		}
		pipe_free(c);
	}
	ck_assert_msg(admitted > 0, "'%s': no dtype compiles to it (its type rule?)%s", ir_ops[op].name, why);
}
END_TEST

/* The table's own facts agree with each other. */
START_TEST(table_is_consistent)
{
	for (int i = 0; i < OP_COUNT; i++) {
		const OpInfo *o = &ir_ops[i];
		bool leaf = o->cls == OC_LEAF, red = o->cls == OC_REDUCE;
		ck_assert_msg(o->name && o->name[0], "op %d has no name", i);
		ck_assert_msg(leaf == (o->arity == 0), "'%s': arity %d for its class", o->name, o->arity);
		ck_assert_msg(leaf == (o->type == TY_NONE), "'%s': %s", o->name, leaf ? "a leaf with a type rule" : "no type rule");
		ck_assert_msg((leaf || red) == (o->cuda == CU_NONE), "'%s': %s", o->name,
		              leaf || red ? "a leaf or reduction computed as an expression" : "no CUDA (CU_NONE)");
		ck_assert_msg(red == (o->type == TY_SUM || o->type == TY_MEAN || o->type == TY_EXTREMUM),
		              "'%s': a reduction's type rule", o->name);
		ck_assert_msg((o->cls == OC_CAST) == (o->cuda == CU_CAST && o->type == TY_CAST), "'%s': cast", o->name);
		ck_assert_msg((o->cls == OC_SELECT) == (o->cuda == CU_SELECT), "'%s': select", o->name);
		ck_assert_msg(!o->call || ir_builtin(o->name, strlen(o->name)) == i, "'%s': the builtin of its name",
		              o->name);
		for (int j = 0; j < i; j++)
			ck_assert_msg(strcmp(o->name, ir_ops[j].name) != 0, "two ops are named '%s'", o->name);
	}
}
END_TEST

/* The ops random programs use: 300 programs, as tests/unit/test_progen.c's
 * coverage test draws them. */
static bool progen_uses[OP_COUNT];

static void progen_setup(void)
{
	for (uint64_t s = 1; s <= 300; s++) {
		ProgenOptions o = progen_default_options(s % 2 ? PROGEN_SMALL : PROGEN_TINY);
		ProgenInfo info;
		char *text = progen_program(s, &o, &info);
		ck_assert_ptr_nonnull(text);
		Compilation *c = tu_compile(text, STAGE_IR);
		for (int i = 0; c->status == FZ_OK && i < c->graph.n; i++)
			progen_uses[c->graph.nodes[i].op] = true;
		pipe_free(c);
		free(text);
	}
}

START_TEST(random_programs_use_it)
{
	Op op = (Op)_i;
	ck_assert_msg(progen_uses[op], "'%s': no random program uses it (give it a generator entry in tests/progen*)",
	              ir_ops[op].name);
}
END_TEST

static char *language_md;

static void docs_setup(void)
{
	FILE *f = fopen(tu_path("docs/language.md"), "rb");
	ck_assert_msg(f != NULL, "cannot open docs/language.md");
	static char buf[1 << 18];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	language_md = buf;
}

/* `word` as a whole word inside a code span (`...`) of the text. */
static bool in_code(const char *text, const char *word)
{
	size_t n = strlen(word);
	bool code = false;
	for (const char *p = text; *p; p++) {
		if (*p == '`') {
			code = !code;
			continue;
		}
		if (!code || strncmp(p, word, n) != 0)
			continue;
		bool before = p > text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'));
		bool after = p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9');
		if (!before && !after)
			return true;
	}
	return false;
}

START_TEST(documented)
{
	Op op = (Op)_i;
	if (ir_ops[op].cls == OC_LEAF || op == OP_CAST)
		return; /* not written by users as such (casts are documented by dtype) */
	char call[64];
	const char *text = spell(op, call, sizeof call);
	char sym[16] = "";
	if (!ir_ops[op].call && text) /* the operator's symbol: "a + b" -> "+" */
		sscanf(text[0] == 'a' ? text + 2 : text, "%15[^ ab]", sym);
	const char *word = ir_ops[op].call ? ir_ops[op].name : sym;
	ck_assert_msg(word[0] && in_code(language_md, word), "'%s' is not in docs/language.md (as `%s`)", ir_ops[op].name,
	              word);
}
END_TEST

static Suite *ops_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *t = tcase_create("table");
	tcase_add_test(t, table_is_consistent);
	tcase_add_loop_test(t, documented, 0, OP_COUNT);
	tcase_add_unchecked_fixture(t, docs_setup, NULL);
	suite_add_tcase(s, t);
	t = tcase_create("pieces");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, types_semantics_and_cuda, 0, OP_COUNT);
	suite_add_tcase(s, t);
	t = tcase_create("progen");
	tcase_set_timeout(t, 300);
	tcase_add_unchecked_fixture(t, progen_setup, NULL);
	tcase_add_loop_test(t, random_programs_use_it, 0, OP_COUNT);
	suite_add_tcase(s, t);
	return s;
}

int main(void) { return tu_run(ops_suite()); }
