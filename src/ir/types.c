/*
 * types.c: the type rules (one per TypeRule, which each op of ops.def
 * names) and the conversions that make promotions explicit.
 *
 * Promotion is PyTorch's: strong dtypes (inputs, and values computed from
 * them) promote by the table bool < i32 < i64 < {f16, bf16} < f32 < f64,
 * with f16 and bf16 giving f32 (dtype_promote in common.c). Weak constants
 * (literals and literal-only expressions, see build.h) do not take part in
 * that table; they only lift the category: a weak float next to integers or
 * bools gives f32, a weak integer next to bools gives i32. With no strong
 * operand at all the operation itself stays weak and is folded in f64 or
 * i64, as Python computes with its scalars.
 *
 * Each op names its rule in ops.def (TypeRule, ir.h). A rule answers two
 * dtypes: the operand dtype every value operand is converted to (irb_convert
 * inserts the OP_CAST, marked NF_IMPLICIT, or re-types a weak constant in
 * place, keeping its value; the node keeps it as Node.operand), and the
 * result dtype. Reductions and the float builtins are the ops where they
 * differ from the promotion; docs/language.md lists the rules as the user
 * sees them.
 */
#include "ir/build.h"

#include <inttypes.h>
#include <string.h>

fz_dtype irb_value_dtype(Builder *b, NodeId id)
{
	const Node *n = irb_node(b, id);
	if (n->flags & NF_WEAK)
		return dtype_is_float((fz_dtype)n->dtype) ? FZ_F32 : FZ_I32;
	return (fz_dtype)n->dtype;
}

static const char *dname(Builder *b, NodeId id) { return fz_dtype_name(irb_value_dtype(b, id)); }

/* Promotion over value operands. *all_weak: none of them is strong, and the
 * answer is the weak compute type (i64 or f64). */
static fz_dtype promote(Builder *b, int n, const NodeId *args, bool *all_weak)
{
	bool strong = false, weak_float = false, weak_int = false;
	fz_dtype t = FZ_BOOL;
	for (int k = 0; k < n; k++) {
		fz_dtype d = (fz_dtype)irb_node(b, args[k])->dtype;
		if (irb_is_weak(b, args[k])) {
			*(dtype_is_float(d) ? &weak_float : &weak_int) = true;
		} else {
			t = strong ? dtype_promote(t, d) : d;
			strong = true;
		}
	}
	*all_weak = !strong;
	if (!strong)
		return weak_float ? FZ_F64 : FZ_I64;
	if (weak_float && !dtype_is_float(t))
		return FZ_F32;
	if (weak_int && t == FZ_BOOL)
		return FZ_I32;
	return t;
}

/* A weak operation that will not be folded (its other arguments are not
 * constants) computes in the default dtype of its weak operands. */
static fz_dtype weak_default(fz_dtype t) { return t == FZ_F64 ? FZ_F32 : t == FZ_I64 ? FZ_I32 : t; }

/* TY_NUM and TY_ORDER: promoted together; two bools are an error for
 * arithmetic (TY_NUM), fine for minimum, maximum and clamp. */
static bool arith_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out)
{
	int n = ir_ops[op].arity;
	bool all_weak;
	fz_dtype t = promote(b, n, args, &all_weak);
	if (t == FZ_BOOL && ir_ops[op].type == TY_NUM) {
		if (n == 1)
			return diag_error(b->d, b->a, at, "%s needs a number, got bool (cast with i32(...) first)", what);
		return diag_error(b->d, b->a, at, "%s needs numbers, got bool and bool (cast with i32(...) first)",
		                  what);
	}
	out->operand = out->result = t;
	out->weak = all_weak;
	return true;
}

static bool compare_type(Builder *b, const NodeId *args, OpType *out)
{
	bool all_weak;
	out->operand = promote(b, 2, args, &all_weak);
	out->result = FZ_BOOL;
	out->weak = false;
	return true;
}

static bool logic_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out)
{
	if (ir_ops[op].arity == 1) {
		if (irb_value_dtype(b, args[0]) != FZ_BOOL)
			return diag_error(b->d, b->a, at, "%s needs a bool operand, got %s", what, dname(b, args[0]));
	} else if (irb_value_dtype(b, args[0]) != FZ_BOOL || irb_value_dtype(b, args[1]) != FZ_BOOL) {
		return diag_error(b->d, b->a, at, "%s needs bool operands, got %s and %s", what, dname(b, args[0]),
		                  dname(b, args[1]));
	}
	out->operand = out->result = FZ_BOOL;
	out->weak = false;
	return true;
}

static bool select_type(Builder *b, const NodeId *args, Span at, const char *what, OpType *out)
{
	if (irb_value_dtype(b, args[0]) != FZ_BOOL)
		return diag_error(b->d, b->a, at, "the condition of %s must be bool, got %s", what, dname(b, args[0]));
	bool all_weak;
	fz_dtype t = promote(b, 2, args + 1, &all_weak);
	out->weak = all_weak && irb_node(b, args[0])->op == OP_CONST;
	out->operand = out->result = (out->weak || !all_weak) ? t : weak_default(t);
	return true;
}

/* TY_FLOAT, TY_ABS, TY_PRED: the operands promoted together, then computed
 * in a float type: integers and bools go to f32 (weak ones to f64, to be
 * folded), except that abs keeps integers. A predicate gives bool. */
static bool float_type(Builder *b, Op op, const NodeId *args, OpType *out)
{
	TypeRule rule = ir_ops[op].type;
	bool all_weak;
	fz_dtype t = promote(b, ir_ops[op].arity, args, &all_weak);
	if (!dtype_is_float(t) && !(rule == TY_ABS && dtype_is_int(t)))
		t = all_weak ? FZ_F64 : FZ_F32;
	out->operand = t;
	out->result = rule == TY_PRED ? FZ_BOOL : t;
	out->weak = all_weak && rule != TY_PRED;
	return true;
}

/* TY_BITS and TY_SHIFT: promoted together, and the result must be an
 * integer (or, for & | ^ ~, a bool: logical and, or, xor, not). */
static bool bits_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out)
{
	int n = ir_ops[op].arity;
	bool all_weak, shift = ir_ops[op].type == TY_SHIFT;
	fz_dtype t = promote(b, n, args, &all_weak);
	if (dtype_is_float(t) || (shift && t == FZ_BOOL)) {
		const char *want = shift ? "integer" : "integer or bool";
		const char *hint = t == FZ_BOOL ? " (cast with i32(...) first)" : "";
		if (n == 1)
			return diag_error(b->d, b->a, at, "%s needs an %s operand, got %s%s", what, want, dname(b, args[0]), hint);
		return diag_error(b->d, b->a, at, "%s needs %s operands, got %s and %s%s", what, want, dname(b, args[0]),
		                  dname(b, args[1]), hint);
	}
	out->operand = out->result = t;
	out->weak = all_weak;
	return true;
}

/* Reductions: sum of integers and bools is i64 (accumulated in i64), their
 * mean is f32 (f32(sum_i64) / N); everything else keeps its dtype, half
 * types included (accumulated in f32 by the interpreter and the generated
 * code). */
static bool reduce_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out)
{
	const Node *x = irb_node(b, args[0]);
	if (x->rank == 0)
		return diag_error(b->d, b->a, at, "%s reduces the last axis of a tensor, got the scalar %s", what,
		                  dname(b, args[0]));
	fz_dtype d = (fz_dtype)x->dtype;
	TypeRule rule = ir_ops[op].type;
	out->operand = out->result = d;
	out->weak = false;
	if (!dtype_is_float(d) && rule != TY_EXTREMUM) {
		out->operand = FZ_I64;
		out->result = rule == TY_SUM ? FZ_I64 : FZ_F32;
	}
	return true;
}

bool irb_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out)
{
	switch (ir_ops[op].type) {
	case TY_NUM:
	case TY_ORDER: return arith_type(b, op, args, at, what, out);
	case TY_COMPARE: return compare_type(b, args, out);
	case TY_LOGIC: return logic_type(b, op, args, at, what, out);
	case TY_SELECT: return select_type(b, args, at, what, out);
	case TY_FLOAT:
	case TY_ABS:
	case TY_PRED: return float_type(b, op, args, out);
	case TY_BITS:
	case TY_SHIFT: return bits_type(b, op, args, at, what, out);
	case TY_SUM:
	case TY_MEAN:
	case TY_EXTREMUM: return reduce_type(b, op, args, at, what, out);
	case TY_NONE:
	case TY_CAST: break;
	}
	return diag_error(b->d, b->a, at, "internal error: no type rule for '%s'", ir_ops[op].name);
}

/* A weak constant given dtype t: the value is kept (as Python keeps a
 * scalar's value until it meets a tensor), only its representation changes. */
static NodeId retype(Builder *b, NodeId id, fz_dtype t, Span span)
{
	const Node *n = irb_node(b, id);
	fz_dtype from = (fz_dtype)n->dtype;
	Scalar v;
	memcpy(&v, &n->c, sizeof v);
	if (dtype_is_float(t)) {
		if (!dtype_is_float(from))
			v.f = (double)v.i;
	} else if (dtype_is_float(from) || t == FZ_BOOL) {
		v = eval_cast(from, t, v); /* promotion never asks for these; stay defined */
	} else if (t == FZ_I32 && (v.i < INT32_MIN || v.i > INT32_MAX)) {
		diag_error(b->d, b->a, span, "integer %" PRId64 " does not fit in i32", v.i);
		return -1;
	}
	return irb_const(b, t, v, NF_WEAK, span); /* the span of the use */
}

NodeId irb_convert(Builder *b, NodeId id, fz_dtype t, Span span)
{
	const Node *n = irb_node(b, id);
	if (n->dtype == t)
		return id;
	if (n->flags & NF_WEAK)
		return retype(b, id, t, span);
	int rank = n->rank;
	Dim shape[FZ_MAX_RANK];
	memcpy(shape, n->shape, sizeof shape);
	return irb_make(b, OP_CAST, t, rank, shape, &id, NF_IMPLICIT, span);
}
