/* The reference interpreter (ir/interp.c): broadcasting, reductions, empty
 * axes, half-precision storage rules, binding messages and limits, on graphs
 * built by hand (independent of the front end), then the programs of
 * examples/ and small programs compiled by the pipeline, against values
 * computed here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/eval.h"
#include "ir/interp.h"
#include "testutil.h"

/* ---- graphs by hand ----------------------------------------------------------------- */

static Graph *g_new(const char **dims, int ndims)
{
	Arena *a = arena_new();
	ck_assert_ptr_nonnull(a);
	Graph *g = ARENA_NEW(a, Graph);
	g->arena = a;
	g->name = "hand";
	g->dims = dims;
	g->ndims = ndims;
	g->inputs = ARENA_ARRAY(a, IrInput, 16);
	g->outputs = ARENA_ARRAY(a, IrOutput, 16);
	return g;
}

static void g_free(Graph *g) { arena_free(g->arena); }

static NodeId g_node(Graph *g, Op op, fz_dtype t, int rank, const Dim *shape, NodeId a0, NodeId a1, NodeId a2)
{
	Node n;
	memset(&n, 0, sizeof n);
	n.op = (uint16_t)op;
	n.dtype = (uint8_t)t;
	n.rank = (uint8_t)rank;
	n.args[0] = a0;
	n.args[1] = a1;
	n.args[2] = a2;
	/* what the IR's node constructor records: its value operands' dtype */
	n.operand = (uint8_t)(a0 < 0 ? t : g->nodes[op == OP_WHERE ? a1 : a0].dtype);
	if (rank)
		memcpy(n.shape, shape, sizeof(Dim) * (size_t)rank);
	n.span = (Span){0, 1, 3, 9};
	VEC_PUSH(g->arena, g->nodes, g->n, g->cap, n);
	return g->n - 1;
}

static NodeId g_input(Graph *g, const char *name, fz_dtype t, int rank, const Dim *shape)
{
	NodeId id = g_node(g, OP_INPUT, t, rank, shape, -1, -1, -1);
	g->nodes[id].input = g->ninputs;
	g->inputs[g->ninputs++] = (IrInput){name, id, {0}};
	return id;
}

static NodeId g_const(Graph *g, fz_dtype t, double v)
{
	NodeId id = g_node(g, OP_CONST, t, 0, NULL, -1, -1, -1);
	if (dtype_is_float(t))
		g->nodes[id].c.f = v;
	else
		g->nodes[id].c.i = (int64_t)v;
	return id;
}

/* An op whose shape is the (already broadcast) shape of a reference node. */
static NodeId g_op(Graph *g, Op op, fz_dtype t, NodeId like, NodeId a0, NodeId a1, NodeId a2)
{
	return g_node(g, op, t, g->nodes[like].rank, g->nodes[like].shape, a0, a1, a2);
}

static NodeId g_reduce(Graph *g, Op op, fz_dtype t, NodeId x)
{
	Node *n = &g->nodes[x];
	Dim shape[FZ_MAX_RANK];
	memcpy(shape, n->shape, sizeof shape);
	shape[n->rank - 1] = 1;
	return g_node(g, op, t, n->rank, shape, x, -1, -1);
}

static void g_output(Graph *g, const char *name, NodeId id) { g->outputs[g->noutputs++] = (IrOutput){name, id, {0}}; }

static Tensor tens(fz_dtype t, int rank, const int64_t *shape, const double *vals)
{
	Tensor x = {.dtype = t, .rank = rank};
	for (int k = 0; k < rank; k++)
		x.shape[k] = shape[k];
	ck_assert(tensor_alloc(&x));
	for (int64_t i = 0; vals && i < tensor_numel(&x); i++) /* NULL: zeros */
		eval_store(t, x.data, i, dtype_is_float(t) ? (Scalar){.f = vals[i]} : (Scalar){.i = (int64_t)vals[i]});
	return x;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const double[]){__VA_ARGS__})
#define DIMS(...) ((const Dim[]){__VA_ARGS__})

static int64_t unbound[16] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

static void expect(const Tensor *t, const double *want, int64_t n)
{
	ck_assert_int_eq(tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++) {
		double v = tensor_get(t, i);
		ck_assert_msg(v == want[i] || (isnan(v) && isnan(want[i])), "element %lld = %.17g, expected %.17g",
		              (long long)i, v, want[i]);
	}
}

static void expect_near(const Tensor *t, const double *want, int64_t n, double rel)
{
	ck_assert_int_eq(tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++) {
		double v = tensor_get(t, i);
		ck_assert_msg(fabs(v - want[i]) <= rel * fmax(1.0, fabs(want[i])), "element %lld = %.9g, expected %.9g",
		              (long long)i, v, want[i]);
	}
}

static void free_all(Tensor *t, int n)
{
	for (int k = 0; k < n; k++)
		tensor_free(&t[k]);
}

START_TEST(broadcasting)
{
	static const char *dims[] = {"B", "N"};
	Graph *g = g_new(dims, 2);
	NodeId x = g_input(g, "x", FZ_F32, 2, DIMS(DIM_SYM(0), DIM_SYM(1)));
	NodeId b = g_input(g, "b", FZ_F32, 1, DIMS(DIM_SYM(1)));
	NodeId s = g_input(g, "s", FZ_F32, 0, NULL);
	NodeId col = g_input(g, "col", FZ_F32, 2, DIMS(DIM_SYM(0), 1));
	NodeId add = g_op(g, OP_ADD, FZ_F32, x, x, b, -1);
	NodeId mul = g_op(g, OP_MUL, FZ_F32, x, add, s, -1);
	g_output(g, "y", mul);
	NodeId outer = g_op(g, OP_MUL, FZ_F32, x, col, b, -1); /* [B, 1] * [N] */
	g_output(g, "outer", outer);
	NodeId two = g_const(g, FZ_F32, 2.0);
	g_output(g, "z", g_op(g, OP_SUB, FZ_F32, col, two, col, -1)); /* [B, 1] */
	Tensor in[4] = {
		tens(FZ_F32, 2, SHAPE(2, 3), VALS(1, 2, 3, 4, 5, 6)),
		tens(FZ_F32, 1, SHAPE(3), VALS(10, 20, 30)),
		tens(FZ_F32, 0, NULL, VALS(0.5)),
		tens(FZ_F32, 2, SHAPE(2, 1), VALS(-1, 2)),
	};
	Tensor out[3];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(out[0].rank, 2);
	ck_assert_int_eq(out[0].shape[0], 2);
	ck_assert_int_eq(out[0].shape[1], 3);
	expect(&out[0], VALS(5.5, 11, 16.5, 7, 12.5, 18), 6);
	expect(&out[1], VALS(-10, -20, -30, 20, 40, 60), 6);
	ck_assert_int_eq(out[2].shape[1], 1);
	expect(&out[2], VALS(3, 0), 2);
	free_all(out, 3);
	free_all(in, 4);
	g_free(g);
}
END_TEST

START_TEST(row_reductions)
{
	static const char *dims[] = {"A", "B", "N"};
	Graph *g = g_new(dims, 3);
	NodeId x = g_input(g, "x", FZ_F32, 3, DIMS(DIM_SYM(0), DIM_SYM(1), DIM_SYM(2)));
	g_output(g, "sum", g_reduce(g, OP_SUM, FZ_F32, x));
	g_output(g, "mean", g_reduce(g, OP_MEAN, FZ_F32, x));
	NodeId mx = g_reduce(g, OP_MAX, FZ_F32, x);
	g_output(g, "max", mx);
	g_output(g, "min", g_reduce(g, OP_MIN, FZ_F32, x));
	g_output(g, "centred", g_op(g, OP_SUB, FZ_F32, x, x, mx, -1));
	Tensor in = tens(FZ_F32, 3, SHAPE(2, 1, 3), VALS(1, 5, 3, -2, NAN, 0));
	Tensor out[5];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(out[0].rank, 3);
	ck_assert_int_eq(out[0].shape[2], 1);
	expect(&out[0], VALS(9, NAN), 2);
	expect(&out[1], VALS(3, NAN), 2);
	expect(&out[2], VALS(5, NAN), 2);
	expect(&out[3], VALS(1, NAN), 2);
	expect(&out[4], VALS(-4, 0, -2, NAN, NAN, NAN), 6);
	free_all(out, 5);
	tensor_free(&in);
	g_free(g);
}
END_TEST

static Graph *reductions_graph(Op op)
{
	static const char *dims[] = {"B", "N"};
	Graph *g = g_new(dims, 2);
	NodeId x = g_input(g, "x", FZ_F32, 2, DIMS(DIM_SYM(0), DIM_SYM(1)));
	g_output(g, "r", g_reduce(g, op, FZ_F32, x));
	return g;
}

START_TEST(empty_axes)
{
	Tensor in = tens(FZ_F32, 2, SHAPE(3, 0), NULL);
	Tensor out[1];
	char err[256];
	Graph *g = reductions_graph(OP_SUM);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	expect(&out[0], VALS(0, 0, 0), 3);
	tensor_free(&out[0]);
	g_free(g);
	g = reductions_graph(OP_MEAN);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	expect(&out[0], VALS(NAN, NAN, NAN), 3);
	tensor_free(&out[0]);
	g_free(g);
	g = reductions_graph(OP_MAX);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_ERR_RUNTIME);
	ck_assert_str_eq(err, "max at 3:9 reduces an empty axis (N = 0)");
	g_free(g);
	g = reductions_graph(OP_MIN);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_ERR_RUNTIME);
	ck_assert_str_eq(err, "min at 3:9 reduces an empty axis (N = 0)");
	tensor_free(&in);
	/* a zero-size leading dim: no rows, no work, empty outputs, no error */
	in = tens(FZ_F32, 2, SHAPE(0, 0), NULL);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(out[0].shape[0], 0);
	ck_assert_int_eq(out[0].shape[1], 1);
	ck_assert_ptr_nonnull(out[0].data);
	tensor_free(&out[0]);
	tensor_free(&in);
	in = tens(FZ_F32, 2, SHAPE(0, 5), NULL);
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(tensor_numel(&out[0]), 0);
	tensor_free(&out[0]);
	tensor_free(&in);
	g_free(g);
}
END_TEST

START_TEST(dead_nodes_are_not_run)
{
	static const char *dims[] = {"N"};
	Graph *g = g_new(dims, 1);
	NodeId x = g_input(g, "x", FZ_F32, 1, DIMS(DIM_SYM(0)));
	g_reduce(g, OP_MAX, FZ_F32, x); /* no output uses it */
	g_output(g, "y", g_op(g, OP_NEG, FZ_F32, x, x, -1, -1));
	Tensor in = tens(FZ_F32, 1, SHAPE(0), NULL), out[1];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(tensor_numel(&out[0]), 0);
	tensor_free(&out[0]);
	tensor_free(&in);
	g_free(g);
}
END_TEST

START_TEST(half_values_rounded_only_where_stored)
{
	static const char *dims[] = {"N"};
	Graph *g = g_new(dims, 1);
	NodeId a = g_input(g, "a", FZ_F16, 1, DIMS(DIM_SYM(0)));
	NodeId b = g_input(g, "b", FZ_F16, 1, DIMS(DIM_SYM(0)));
	NodeId sum = g_op(g, OP_ADD, FZ_F16, a, a, b, -1);
	/* (a + b) - a: exact in f32, 0 if a + b were rounded to f16 */
	g_output(g, "kept", g_op(g, OP_SUB, FZ_F16, a, sum, a, -1));
	NodeId cast = g_op(g, OP_CAST, FZ_F16, a, sum, -1, -1);
	g_output(g, "cast", g_op(g, OP_SUB, FZ_F16, a, cast, a, -1));
	/* a * a is rounded once, when it is written */
	g_output(g, "sq", g_op(g, OP_MUL, FZ_F16, a, a, a, -1));
	/* bf16: the same rules */
	NodeId ab = g_op(g, OP_CAST, FZ_BF16, a, a, -1, -1);
	NodeId bb = g_op(g, OP_CAST, FZ_BF16, a, b, -1, -1);
	NodeId sb = g_op(g, OP_ADD, FZ_BF16, a, ab, bb, -1);
	g_output(g, "kept_bf16", g_op(g, OP_SUB, FZ_BF16, a, sb, ab, -1));
	Tensor in[2] = {
		tens(FZ_F16, 1, SHAPE(2), VALS(1.0, 1.0 + 0x1p-10)),
		tens(FZ_F16, 1, SHAPE(2), VALS(0x1p-11, 0x1p-11)),
	};
	Tensor out[4];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, in, out, err, sizeof err), FZ_OK);
	ck_assert_int_eq(out[0].dtype, FZ_F16);
	expect(&out[0], VALS(0x1p-11, 0x1p-11), 2);
	/* f16(1 + 2^-11) = 1 and f16(1 + 3 * 2^-11) = 1 + 2^-9 (ties to even) */
	expect(&out[1], VALS(0, 0x1p-10), 2);
	/* (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> 1 + 2^-9 */
	expect(&out[2], VALS(1, 1 + 0x1p-9), 2);
	uint16_t bits;
	memcpy(&bits, (char *)out[2].data + 2, 2);
	ck_assert_int_eq(bits, 0x3c02);
	ck_assert_int_eq(out[3].dtype, FZ_BF16);
	/* bf16(1 + 2^-10) = 1, so ab = 1 and ab + bb - ab = 2^-11 either way */
	expect(&out[3], VALS(0x1p-11, 0x1p-11), 2);
	free_all(out, 4);
	free_all(in, 2);
	g_free(g);
}
END_TEST

START_TEST(weak_constant_keeps_f32_value_in_half_ops)
{
	static const char *dims[] = {"N"};
	Graph *g = g_new(dims, 1);
	NodeId x = g_input(g, "x", FZ_F16, 1, DIMS(DIM_SYM(0)));
	NodeId c = g_const(g, FZ_F16, 0.1); /* a literal re-typed to f16: used as 0.1f */
	NodeId m = g_op(g, OP_MUL, FZ_F16, x, x, c, -1);
	g_output(g, "y", g_op(g, OP_CAST, FZ_F32, x, m, -1, -1));
	Tensor in = tens(FZ_F16, 1, SHAPE(1), VALS(1000)), out[1];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	/* 1000 * 0.1f = 100.0000015 in f32; with 0.1 rounded to f16 it would be 99.975586 */
	expect(&out[0], VALS((double)(1000.0f * 0.1f)), 1);
	tensor_free(&out[0]);
	tensor_free(&in);
	g_free(g);
}
END_TEST

START_TEST(integers_and_bools)
{
	static const char *dims[] = {"N"};
	Graph *g = g_new(dims, 1);
	NodeId a = g_input(g, "a", FZ_I32, 1, DIMS(DIM_SYM(0)));
	NodeId b = g_input(g, "b", FZ_I32, 1, DIMS(DIM_SYM(0)));
	g_output(g, "q", g_op(g, OP_DIV, FZ_I32, a, a, b, -1));
	g_output(g, "r", g_op(g, OP_MOD, FZ_I32, a, a, b, -1));
	NodeId lt = g_op(g, OP_LT, FZ_BOOL, a, a, b, -1);
	g_output(g, "lt", lt);
	g_output(g, "sel", g_op(g, OP_WHERE, FZ_I32, a, lt, a, b));
	g_output(g, "any", g_reduce(g, OP_MAX, FZ_BOOL, lt));
	g_output(g, "count", g_reduce(g, OP_SUM, FZ_I64, lt));
	Tensor in[2] = {
		tens(FZ_I32, 1, SHAPE(5), VALS(7, -7, 7, INT32_MIN, 5)),
		tens(FZ_I32, 1, SHAPE(5), VALS(2, 2, 0, -1, -1)),
	};
	Tensor out[6];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, in, out, err, sizeof err), FZ_OK);
	expect(&out[0], VALS(3, -3, 0, INT32_MIN, -5), 5);
	expect(&out[1], VALS(1, -1, 0, 0, 0), 5);
	ck_assert_int_eq(out[2].dtype, FZ_BOOL);
	expect(&out[2], VALS(0, 1, 0, 1, 0), 5);
	expect(&out[3], VALS(2, -7, 0, INT32_MIN, -1), 5);
	expect(&out[4], VALS(1), 1);
	ck_assert_int_eq(out[5].dtype, FZ_I64);
	expect(&out[5], VALS(2), 1);
	free_all(out, 6);
	free_all(in, 2);
	g_free(g);
}
END_TEST

START_TEST(binding_messages)
{
	static const char *dims[] = {"B", "N"};
	Graph *g = g_new(dims, 2);
	g_input(g, "w", FZ_F32, 1, DIMS(DIM_SYM(0)));
	NodeId x = g_input(g, "x", FZ_F32, 2, DIMS(DIM_SYM(0), DIM_SYM(1)));
	NodeId sq = g_input(g, "sq", FZ_F32, 2, DIMS(DIM_SYM(1), DIM_SYM(1)));
	NodeId k = g_input(g, "k", FZ_I64, 2, DIMS(DIM_SYM(0), 4));
	g_output(g, "y", x);
	(void)sq;
	(void)k;
	char err[256];
	int64_t d[2];
	struct {
		Tensor in[4];
		const char *msg;
	} cases[] = {
		{{tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F32, 2, SHAPE(5, 8), NULL), tens(FZ_F32, 2, SHAPE(8, 8), NULL),
		  tens(FZ_I64, 2, SHAPE(4, 4), NULL)},
		 "input 'x': expected f32[B, N] with B = 4, got f32[5, 8]"},
		{{tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F64, 2, SHAPE(4, 8), NULL), tens(FZ_F32, 2, SHAPE(8, 8), NULL),
		  tens(FZ_I64, 2, SHAPE(4, 4), NULL)},
		 "input 'x': expected f32[B, N] with B = 4, got f64[4, 8]"},
		{{tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F32, 1, SHAPE(32), NULL), tens(FZ_F32, 2, SHAPE(8, 8), NULL),
		  tens(FZ_I64, 2, SHAPE(4, 4), NULL)},
		 "input 'x': expected f32[B, N] with B = 4, got f32[32]"},
		{{tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F32, 2, SHAPE(4, 8), NULL), tens(FZ_F32, 2, SHAPE(8, 7), NULL),
		  tens(FZ_I64, 2, SHAPE(4, 4), NULL)},
		 "input 'sq': expected f32[N, N] with N = 8, got f32[8, 7]"},
		{{tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F32, 2, SHAPE(4, 8), NULL), tens(FZ_F32, 2, SHAPE(8, 8), NULL),
		  tens(FZ_I64, 2, SHAPE(4, 5), NULL)},
		 "input 'k': expected i64[B, 4] with B = 4, got i64[4, 5]"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		d[0] = d[1] = -1;
		ck_assert_int_eq(ir_bind_dims(g, cases[c].in, d, err, sizeof err), FZ_ERR_BINDING);
		ck_assert_str_eq(err, cases[c].msg);
		Tensor out[1];
		ck_assert_int_eq(interp_run(g, unbound, cases[c].in, out, err, sizeof err), FZ_ERR_BINDING);
		ck_assert_str_eq(err, cases[c].msg);
		free_all(cases[c].in, 4);
	}
	/* a repeated dim within one input, nothing bound before */
	Graph *g2 = g_new(dims, 2);
	g_output(g2, "y", g_input(g2, "m", FZ_F32, 2, DIMS(DIM_SYM(1), DIM_SYM(1))));
	Tensor m = tens(FZ_F32, 2, SHAPE(3, 4), NULL);
	d[0] = d[1] = -1;
	ck_assert_int_eq(ir_bind_dims(g2, &m, d, err, sizeof err), FZ_ERR_BINDING);
	ck_assert_str_eq(err, "input 'm': expected f32[N, N], got f32[3, 4]");
	ck_assert_int_eq(d[1], -1);
	/* dims given up front are checked too */
	int64_t pre[2] = {-1, 3};
	Tensor m4 = tens(FZ_F32, 2, SHAPE(4, 4), NULL), out[1];
	ck_assert_int_eq(interp_run(g2, pre, &m4, out, err, sizeof err), FZ_ERR_BINDING);
	ck_assert_str_eq(err, "input 'm': expected f32[N, N] with N = 3, got f32[4, 4]");
	/* success binds */
	Tensor ok[4] = {tens(FZ_F32, 1, SHAPE(4), NULL), tens(FZ_F32, 2, SHAPE(4, 8), NULL),
	                tens(FZ_F32, 2, SHAPE(8, 8), NULL), tens(FZ_I64, 2, SHAPE(4, 4), NULL)};
	d[0] = d[1] = -1;
	ck_assert_int_eq(ir_bind_dims(g, ok, d, err, sizeof err), FZ_OK);
	ck_assert_int_eq(d[0], 4);
	ck_assert_int_eq(d[1], 8);
	free_all(ok, 4);
	tensor_free(&m);
	tensor_free(&m4);
	g_free(g);
	g_free(g2);
}
END_TEST

START_TEST(unbound_dims_and_limits)
{
	static const char *dims[] = {"A", "K"};
	Graph *g = g_new(dims, 2);
	NodeId s = g_input(g, "s", FZ_F32, 0, NULL);
	NodeId c = g_node(g, OP_CONST, FZ_F32, 2, DIMS(DIM_SYM(0), DIM_SYM(1)), -1, -1, -1);
	NodeId add = g_op(g, OP_ADD, FZ_F32, c, c, s, -1);
	g->nodes[add].span = (Span){0, 1, 2, 7};
	g_output(g, "y", add);
	Tensor in = tens(FZ_F32, 0, NULL, VALS(1.5)), out[1];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_ERR_BINDING);
	ck_assert_str_eq(err, "dim 'A' is not bound");
	int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
	ck_assert_int_eq(interp_run(g, huge, &in, out, err, sizeof err), FZ_ERR_LIMIT);
	ck_assert_str_eq(err, "const at 3:9 has too many elements for its bound dims");
	int64_t small[2] = {2, 3};
	ck_assert_int_eq(interp_run(g, small, &in, out, err, sizeof err), FZ_OK);
	expect(&out[0], VALS(1.5, 1.5, 1.5, 1.5, 1.5, 1.5), 6);
	tensor_free(&out[0]);
	tensor_free(&in);
	g_free(g);
}
END_TEST

START_TEST(long_chain)
{
	/* 100,000 nodes deep: no recursion, intermediates freed as they die */
	static const char *dims[] = {"N"};
	Graph *g = g_new(dims, 1);
	NodeId x = g_input(g, "x", FZ_I64, 1, DIMS(DIM_SYM(0)));
	NodeId one = g_const(g, FZ_I64, 1);
	NodeId v = x;
	for (int k = 0; k < 100000; k++)
		v = g_op(g, OP_ADD, FZ_I64, x, v, one, -1);
	g_output(g, "y", v);
	Tensor in = tens(FZ_I64, 1, SHAPE(3), VALS(0, 5, -100000)), out[1];
	char err[256];
	ck_assert_int_eq(interp_run(g, unbound, &in, out, err, sizeof err), FZ_OK);
	expect(&out[0], VALS(100000, 100005, 0), 3);
	tensor_free(&out[0]);
	tensor_free(&in);
	g_free(g);
}
END_TEST

/* ---- programs through the pipeline ------------------------------------------------------ */

static Compilation *compile_src(const char *src)
{
	Compilation *c = tu_compile(src, STAGE_IR);
	ck_assert_msg(c->status == FZ_OK, "compile failed: %s", c->diag_text ? c->diag_text : "?");
	return c;
}

static Compilation *compile_example(const char *name)
{
	char rel[256];
	snprintf(rel, sizeof rel, "examples/%s", name);
	FILE *f = fopen(tu_path(rel), "rb");
	ck_assert_msg(f != NULL, "cannot open %s", tu_path(rel));
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return compile_src(buf);
}

/* Inputs by name, in any order; returns the outputs. */
static void run_named(Compilation *c, int nin, const char *const *names, Tensor *given, Tensor *out)
{
	const Graph *g = &c->graph;
	ck_assert_int_eq(g->ninputs, nin);
	Tensor ordered[16];
	for (int i = 0; i < g->ninputs; i++) {
		int k = 0;
		while (k < nin && strcmp(names[k], g->inputs[i].name) != 0)
			k++;
		ck_assert_msg(k < nin, "no value for input %s", g->inputs[i].name);
		ordered[i] = given[k];
	}
	char err[512];
	int64_t dims[16];
	for (int k = 0; k < 16; k++)
		dims[k] = -1;
	fz_status s = interp_run(g, dims, ordered, out, err, sizeof err);
	ck_assert_msg(s == FZ_OK, "interp_run: %s", err);
}

static Tensor scalar32(double v) { return tens(FZ_F32, 0, NULL, &v); }

START_TEST(example_spec_relu)
{
	Compilation *c = compile_example("spec_relu.fz");
	Tensor in[4] = {tens(FZ_F32, 1, SHAPE(4), VALS(1, -2, 3, 0.5)), tens(FZ_F32, 1, SHAPE(4), VALS(0.5, 0.5, -4, 0)),
	                tens(FZ_F32, 1, SHAPE(4), VALS(0, 1, 0.25, -1)), scalar32(2)};
	Tensor out[1];
	run_named(c, 4, (const char *[]){"x", "y", "bias", "scale"}, in, out);
	expect(&out[0], VALS(3, 0, 0, 0), 4);
	free_all(out, 1);
	free_all(in, 4);
	pipe_free(c);
}
END_TEST

START_TEST(example_softmax_family)
{
	static const double x[] = {1, 2, 3, 0, 0, 0};
	double lse[2], want[6];
	for (int r = 0; r < 2; r++) {
		double m = fmax(fmax(x[3 * r], x[3 * r + 1]), x[3 * r + 2]), s = 0;
		for (int k = 0; k < 3; k++)
			s += exp(x[3 * r + k] - m);
		lse[r] = m + log(s);
		for (int k = 0; k < 3; k++)
			want[3 * r + k] = exp(x[3 * r + k] - m) / s;
	}
	const char *files[] = {"softmax.fz", "spec_softmax.fz", "log_softmax.fz", "logsumexp.fz"};
	for (int f = 0; f < 4; f++) {
		Compilation *c = compile_example(files[f]);
		Tensor in = tens(FZ_F32, 2, SHAPE(2, 3), x), out[1];
		run_named(c, 1, (const char *[]){"x"}, &in, out);
		if (f < 2) {
			expect_near(out, want, 6, 1e-6);
		} else if (f == 2) {
			double ls[6];
			for (int k = 0; k < 6; k++)
				ls[k] = x[k] - lse[k / 3];
			expect_near(out, ls, 6, 1e-6);
		} else {
			ck_assert_int_eq(out[0].shape[1], 1);
			expect_near(out, lse, 2, 1e-6);
		}
		tensor_free(&out[0]);
		tensor_free(&in);
		pipe_free(c);
	}
	/* half storage: the same values, rounded where stored */
	const char *half[] = {"softmax_f16.fz", "softmax_bf16.fz"};
	fz_dtype ht[] = {FZ_F16, FZ_BF16};
	for (int f = 0; f < 2; f++) {
		Compilation *c = compile_example(half[f]);
		Tensor in = tens(ht[f], 2, SHAPE(2, 3), x), out[1];
		run_named(c, 1, (const char *[]){"x"}, &in, out);
		ck_assert_int_eq(out[0].dtype, ht[f]);
		double rounded[6];
		for (int k = 0; k < 6; k++)
			rounded[k] = round_to_half(ht[f], (float)want[k]);
		expect(out, rounded, 6);
		tensor_free(&out[0]);
		tensor_free(&in);
		pipe_free(c);
	}
}
END_TEST

static void layernorm_ref(const double *x, const double *w, const double *b, double eps, int rows, int n, double *y)
{
	for (int r = 0; r < rows; r++) {
		double mu = 0, var = 0;
		for (int k = 0; k < n; k++)
			mu += x[r * n + k] / n;
		for (int k = 0; k < n; k++)
			var += (x[r * n + k] - mu) * (x[r * n + k] - mu) / n;
		for (int k = 0; k < n; k++)
			y[r * n + k] = (x[r * n + k] - mu) / sqrt(var + eps) * w[k] + b[k];
	}
}

START_TEST(example_layernorms)
{
	static const double x[] = {1, 2, 3, 4, 2, 2, 2, 2, -1, 0.5, 0.25, 8};
	static const double w[] = {1, 2, 1, 0.5}, b[] = {0, 0, 1, -1};
	double want[12];
	layernorm_ref(x, w, b, 1e-5, 3, 4, want);
	Compilation *c = compile_example("layernorm.fz");
	Tensor in[4] = {tens(FZ_F32, 2, SHAPE(3, 4), x), tens(FZ_F32, 1, SHAPE(4), w), tens(FZ_F32, 1, SHAPE(4), b),
	                scalar32(1e-5)};
	Tensor out[1];
	run_named(c, 4, (const char *[]){"x", "w", "b", "eps"}, in, out);
	expect_near(out, want, 12, 1e-6);
	tensor_free(&out[0]);
	pipe_free(c);

	/* rmsnorm and l2norm and rowsum_sq on the same rows */
	double rms[12], l2[12], ss[3];
	for (int r = 0; r < 3; r++) {
		double s = 0;
		for (int k = 0; k < 4; k++)
			s += x[4 * r + k] * x[4 * r + k];
		ss[r] = s;
		for (int k = 0; k < 4; k++) {
			rms[4 * r + k] = x[4 * r + k] / sqrt(s / 4 + 1e-5) * w[k];
			l2[4 * r + k] = x[4 * r + k] / sqrt(fmax(s, 1e-5 * 1e-5));
		}
	}
	c = compile_example("rmsnorm.fz");
	run_named(c, 3, (const char *[]){"x", "w", "eps"}, (Tensor[]){in[0], in[1], in[3]}, out);
	expect_near(out, rms, 12, 1e-6);
	tensor_free(&out[0]);
	pipe_free(c);
	c = compile_example("l2norm.fz");
	run_named(c, 2, (const char *[]){"x", "eps"}, (Tensor[]){in[0], in[3]}, out);
	expect_near(out, l2, 12, 1e-6);
	tensor_free(&out[0]);
	pipe_free(c);
	c = compile_example("rowsum_sq.fz");
	run_named(c, 1, (const char *[]){"x"}, in, out);
	expect(out, ss, 3); /* small integers and quarters: exact */
	tensor_free(&out[0]);
	pipe_free(c);
	free_all(in, 4);

	/* f16 and bf16 storage: statistics in f32, one rounding at the output */
	const char *files[] = {"layernorm_f16.fz", "layernorm_bf16.fz"};
	fz_dtype ht[] = {FZ_F16, FZ_BF16};
	for (int f = 0; f < 2; f++) {
		c = compile_example(files[f]);
		Tensor hin[4] = {tens(ht[f], 2, SHAPE(3, 4), x), tens(ht[f], 1, SHAPE(4), w), tens(ht[f], 1, SHAPE(4), b),
		                 scalar32(1e-5)};
		run_named(c, 4, (const char *[]){"x", "w", "b", "eps"}, hin, out);
		ck_assert_int_eq(out[0].dtype, ht[f]);
		for (int k = 0; k < 12; k++) {
			double got = tensor_get(&out[0], k);
			double lo = round_to_half(ht[f], nextafterf((float)want[k], -INFINITY) - 1e-4f);
			double hi = round_to_half(ht[f], nextafterf((float)want[k], INFINITY) + 1e-4f);
			ck_assert_msg(got >= lo && got <= hi, "%s[%d] = %g, expected about %g", files[f], k, got, want[k]);
			/* and it is a value of the half type */
			ck_assert(got == round_to_half(ht[f], (float)got));
		}
		tensor_free(&out[0]);
		free_all(hin, 4);
		pipe_free(c);
	}
}
END_TEST

START_TEST(example_adam)
{
	Compilation *c = compile_example("adam.fz");
	static const double p[] = {1, 2}, gr[] = {0.5, -0.5}, m[] = {0.1, 0.2}, v[] = {0.01, 0.04};
	double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, bc1 = 0.1, bc2 = 0.001;
	double want_p[2], want_m[2], want_v[2];
	for (int k = 0; k < 2; k++) {
		want_m[k] = b1 * m[k] + (1 - b1) * gr[k];
		want_v[k] = b2 * v[k] + (1 - b2) * gr[k] * gr[k];
		want_p[k] = p[k] - lr * (want_m[k] / bc1) / (sqrt(want_v[k] / bc2) + eps);
	}
	Tensor in[10] = {tens(FZ_F32, 1, SHAPE(2), p), tens(FZ_F32, 1, SHAPE(2), gr), tens(FZ_F32, 1, SHAPE(2), m),
	                 tens(FZ_F32, 1, SHAPE(2), v), scalar32(lr), scalar32(b1), scalar32(b2), scalar32(eps),
	                 scalar32(bc1), scalar32(bc2)};
	Tensor out[3];
	run_named(c, 10, (const char *[]){"p", "g", "m", "v", "lr", "beta1", "beta2", "eps", "bc1", "bc2"}, in, out);
	ck_assert_str_eq(c->graph.outputs[0].name, "p_new");
	expect_near(&out[0], want_p, 2, 1e-6);
	expect_near(&out[1], want_m, 2, 1e-6);
	expect_near(&out[2], want_v, 2, 1e-6);
	free_all(out, 3);
	free_all(in, 10);
	pipe_free(c);
}
END_TEST

START_TEST(example_gelu)
{
	static const double x[] = {-3, -1, -0.5, 0, 0.5, 1, 2, 10};
	double want[8];
	for (int k = 0; k < 8; k++)
		want[k] = 0.5 * x[k] * (1 + tanh(0.79788456 * (x[k] + 0.044715 * x[k] * x[k] * x[k])));
	Compilation *c = compile_example("gelu_tanh.fz");
	Tensor in = tens(FZ_F32, 1, SHAPE(8), x), out[1];
	run_named(c, 1, (const char *[]){"x"}, &in, out);
	expect_near(out, want, 8, 1e-6);
	tensor_free(&out[0]);
	tensor_free(&in);
	pipe_free(c);

	/* the transformer tail: bias, builtin gelu_tanh, residual, layernorm */
	static const double xs[] = {0.5, -1, 2, 0, 1, 1, -2, 3}, bias[] = {0.1, 0.2, -0.3, 0};
	static const double res[] = {1, 0, 0, -1, 0.5, 0.5, 0.5, 0.5}, w[] = {1, 1, 2, 1}, b[] = {0, 1, 0, 0};
	double h[8], y[8];
	for (int k = 0; k < 8; k++) {
		double t = xs[k] + bias[k % 4];
		h[k] = 0.5 * t * (1 + tanh(sqrt(2 / M_PI) * (t + 0.044715 * t * t * t))) + res[k];
	}
	layernorm_ref(h, w, b, 1e-5, 2, 4, y);
	c = compile_example("bias_gelu_residual_layernorm.fz");
	Tensor tin[6] = {tens(FZ_F32, 2, SHAPE(2, 4), xs), tens(FZ_F32, 1, SHAPE(4), bias),
	                 tens(FZ_F32, 2, SHAPE(2, 4), res), tens(FZ_F32, 1, SHAPE(4), w),
	                 tens(FZ_F32, 1, SHAPE(4), b), scalar32(1e-5)};
	run_named(c, 6, (const char *[]){"x", "bias", "res", "w", "b", "eps"}, tin, out);
	expect_near(out, y, 8, 1e-5);
	tensor_free(&out[0]);
	free_all(tin, 6);
	pipe_free(c);
}
END_TEST

START_TEST(example_spec_layernorm_gelu)
{
	/* y is rounded to bf16 by its explicit cast, so act is computed from the
	 * rounded y (in f32, in the program's order) and rounded once more */
	Compilation *c = compile_example("spec_layernorm_gelu.fz");
	static const double x[] = {1, 2, 3, 4, -1, 0.5, 0.25, 8}, w[] = {1, 2, 1, 0.5}, b[] = {0, 0, 1, -1};
	Tensor in[4] = {tens(FZ_BF16, 2, SHAPE(2, 4), x), tens(FZ_BF16, 1, SHAPE(4), w), tens(FZ_BF16, 1, SHAPE(4), b),
	                scalar32(1e-5)};
	Tensor out[2];
	run_named(c, 4, (const char *[]){"x", "w", "b", "eps"}, in, out);
	double want[8];
	layernorm_ref(x, w, b, 1e-5, 2, 4, want);
	ck_assert_int_eq(out[0].dtype, FZ_BF16);
	ck_assert_int_eq(out[1].dtype, FZ_BF16);
	for (int k = 0; k < 8; k++) {
		float y = (float)tensor_get(&out[0], k);
		ck_assert_msg(fabs(y - want[k]) <= 0x1p-7 * fmax(1, fabs(want[k])), "y[%d] = %g, expected %g", k, y,
		              want[k]);
		float act = 0.5f * y * (1.0f + tanhf(0.7978845608f * (y + 0.044715f * y * y * y)));
		ck_assert_msg(tensor_get(&out[1], k) == round_to_half(FZ_BF16, act), "act[%d] = %.9g, expected %.9g", k,
		              tensor_get(&out[1], k), (double)round_to_half(FZ_BF16, act));
	}
	free_all(out, 2);
	free_all(in, 4);
	pipe_free(c);
}
END_TEST

START_TEST(program_semantics)
{
	/* integer division and modulo, integer mean, bool reductions */
	Compilation *c = compile_src("in a: i32[N]\nin b: i32[N]\nout q = a / b\nout r = a % b\n"
	                             "out m = mean(a)\nout s = sum(a)\nout any = max(a < b)\n");
	Tensor in[2] = {tens(FZ_I32, 1, SHAPE(5), VALS(7, -7, 7, INT32_MIN, 5)),
	                tens(FZ_I32, 1, SHAPE(5), VALS(2, 2, 0, -1, -1))};
	Tensor out[6];
	run_named(c, 2, (const char *[]){"a", "b"}, in, out);
	expect(&out[0], VALS(3, -3, 0, INT32_MIN, -5), 5);
	expect(&out[1], VALS(1, -1, 0, 0, 0), 5);
	ck_assert_int_eq(out[2].dtype, FZ_F32);
	expect(&out[2], VALS((double)((float)(12.0 + INT32_MIN) / 5.0f)), 1);
	ck_assert_int_eq(out[3].dtype, FZ_I64);
	expect(&out[3], VALS(12.0 + INT32_MIN), 1);
	ck_assert_int_eq(out[4].dtype, FZ_BOOL);
	expect(&out[4], VALS(1), 1);
	free_all(out, 5);
	free_all(in, 2);
	pipe_free(c);

	/* NaN through maximum, clamp and max; round half to even; casts */
	c = compile_src("in x: f32[N]\nout a = maximum(x, 0)\nout b = clamp(x, -1, 1)\nout c = max(x)\n"
	                "out d = round(x)\nout e = i32(x)\nout f = isnan(x)\n");
	Tensor xin = tens(FZ_F32, 1, SHAPE(5), VALS(NAN, 2.5, -3.5, 0.5, 1e10));
	run_named(c, 1, (const char *[]){"x"}, &xin, out);
	expect(&out[0], VALS(NAN, 2.5, 0, 0.5, 1e10), 5);
	expect(&out[1], VALS(NAN, 1, -1, 0.5, 1), 5);
	expect(&out[2], VALS(NAN), 1);
	expect(&out[3], VALS(NAN, 2, -4, 0, 1e10), 5);
	expect(&out[4], VALS(0, 2, -3, 0, INT32_MAX), 5);
	expect(&out[5], VALS(1, 0, 0, 0, 0), 5);
	free_all(out, 6);
	tensor_free(&xin);
	pipe_free(c);
}
END_TEST

START_TEST(program_empty_axis_error)
{
	Compilation *c = compile_src("in x: f32[B, N]\nout s = sum(x)\nout y = min(x)\n");
	Tensor in = tens(FZ_F32, 2, SHAPE(2, 0), NULL), out[2];
	char err[256];
	int64_t dims[2] = {-1, -1};
	ck_assert_int_eq(interp_run(&c->graph, dims, &in, out, err, sizeof err), FZ_ERR_RUNTIME);
	ck_assert_str_eq(err, "min at 3:9 reduces an empty axis (N = 0)");
	tensor_free(&in);
	pipe_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("interp");
	TCase *tc = tcase_create("graphs");
	tcase_add_test(tc, broadcasting);
	tcase_add_test(tc, row_reductions);
	tcase_add_test(tc, empty_axes);
	tcase_add_test(tc, dead_nodes_are_not_run);
	tcase_add_test(tc, half_values_rounded_only_where_stored);
	tcase_add_test(tc, weak_constant_keeps_f32_value_in_half_ops);
	tcase_add_test(tc, integers_and_bools);
	tcase_add_test(tc, binding_messages);
	tcase_add_test(tc, unbound_dims_and_limits);
	tcase_add_test(tc, long_chain);
	suite_add_tcase(s, tc);
	TCase *tp = tcase_create("programs");
	tcase_add_test(tp, example_spec_relu);
	tcase_add_test(tp, example_softmax_family);
	tcase_add_test(tp, example_layernorms);
	tcase_add_test(tp, example_adam);
	tcase_add_test(tp, example_gelu);
	tcase_add_test(tp, example_spec_layernorm_gelu);
	tcase_add_test(tp, program_semantics);
	tcase_add_test(tp, program_empty_axis_error);
	suite_add_tcase(s, tp);
	return tu_run(s);
}
