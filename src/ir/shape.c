/*
 * shape.c: broadcasting over symbolic dims, and the text of types and shapes.
 *
 * Shapes are checked at compile time with NumPy's rule, using only what is
 * known then: trailing dims are aligned and each pair must be equal (the same
 * literal size, or the same symbolic name), or one of them is the literal 1,
 * or missing. Two different names are a mismatch even though they might be
 * bound to the same size at run time, and so is a name against a literal
 * other than 1: the contract wants such programs rejected, and it makes every
 * node's shape a compile-time fact (no run-time broadcasting checks, no
 * shape-dependent kernels). A dimension of size 1 that is symbolic is not
 * broadcast: N is N, whatever it is bound to.
 *
 * For ops of three operands (where, clamp) every pair is checked, so a
 * mismatch names the two operands that disagree; since a position's dims
 * broadcast when no two of them disagree, the pairwise check is the whole
 * check.
 *
 * The text of a type, "f32[B, 4, N]", is written here for every stage: the
 * IR printer, diagnostics, fusion's dumps, the interpreter's and the
 * runtime's binding errors, and tensors (whose dims are all literal).
 */
#include "ir/build.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* snprintf at offset `at` of buf; the length it would write, as snprintf
 * gives it, so a caller can size the buffer first. */
static size_t put(char *buf, size_t cap, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static size_t put(char *buf, size_t cap, size_t at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, fmt, ap);
	va_end(ap);
	return n > 0 ? (size_t)n : 0;
}

static size_t put_dim(char *buf, size_t cap, size_t at, const Graph *g, Dim d)
{
	if (!dim_is_sym(d))
		return put(buf, cap, at, "%" PRId64, d);
	if (g && dim_sym(d) < g->ndims)
		return put(buf, cap, at, "%s", g->dims[dim_sym(d)]);
	return put(buf, cap, at, "?%d", dim_sym(d));
}

size_t ir_type_text(char *buf, size_t cap, const Graph *g, const char *dtype, int rank, const Dim *shape)
{
	if (cap)
		buf[0] = 0;
	size_t n = put(buf, cap, 0, "%s", dtype ? dtype : "");
	if (dtype && rank == 0)
		return n;
	n += put(buf, cap, n, "[");
	for (int k = 0; k < rank; k++) {
		if (k)
			n += put(buf, cap, n, ", ");
		n += put_dim(buf, cap, n, g, shape[k]);
	}
	return n + put(buf, cap, n, "]");
}

/* ir_type_text in the arena, whatever its length. */
static const char *type_in(Arena *a, const Graph *g, const char *dtype, int rank, const Dim *shape)
{
	size_t n = ir_type_text(NULL, 0, g, dtype, rank, shape);
	char *buf = arena_alloc(a, n + 1);
	ir_type_text(buf, n + 1, g, dtype, rank, shape);
	return buf;
}

const char *ir_shape_str(Arena *a, const Graph *g, int rank, const Dim *shape)
{
	return type_in(a, g, NULL, rank, shape);
}

const char *ir_type_str(Arena *a, const Graph *g, const Node *n)
{
	return type_in(a, g, fz_dtype_name((fz_dtype)n->dtype), n->rank, n->shape);
}

const char *irb_type_str(Builder *b, NodeId id)
{
	const Node *n = irb_node(b, id);
	return type_in(b->a, b->g, fz_dtype_name(irb_value_dtype(b, id)), n->rank, n->shape);
}

static const char *dim_str(Builder *b, Dim d)
{
	size_t n = put_dim(NULL, 0, 0, b->g, d);
	char *buf = arena_alloc(b->a, n + 1);
	put_dim(buf, n + 1, 0, b->g, d);
	return buf;
}

/* Whether x and y broadcast; if not, a diagnostic naming the first
 * disagreeing pair of dims from the right. */
static bool pair_check(Builder *b, NodeId x, NodeId y, Span at)
{
	const Node *nx = irb_node(b, x), *ny = irb_node(b, y);
	int rx = nx->rank, ry = ny->rank;
	for (int k = 1; k <= rx && k <= ry; k++) {
		Dim dx = nx->shape[rx - k], dy = ny->shape[ry - k];
		if (dx == dy || dx == 1 || dy == 1)
			continue;
		return diag_error(b->d, b->a, at, "cannot broadcast %s with %s: %s and %s differ", irb_type_str(b, x),
		                  irb_type_str(b, y), dim_str(b, dx), dim_str(b, dy));
	}
	return true;
}

bool irb_broadcast(Builder *b, int n, const NodeId *args, Span at, int *rank, Dim *shape)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (!pair_check(b, args[i], args[j], at))
				return false;
	int r = 0;
	for (int i = 0; i < n; i++)
		if (irb_node(b, args[i])->rank > r)
			r = irb_node(b, args[i])->rank;
	for (int k = 1; k <= r; k++) {
		Dim d = 1;
		for (int i = 0; i < n; i++) {
			const Node *x = irb_node(b, args[i]);
			if (k <= x->rank && x->shape[x->rank - k] != 1)
				d = x->shape[x->rank - k];
		}
		shape[r - k] = d;
	}
	*rank = r;
	/* Literal dims of operands can multiply past 2^62 only here (inputs are
	 * checked when declared); symbolic dims are checked when bound. */
	int64_t literal = 1;
	for (int k = 0; k < r; k++) {
		if (dim_is_sym(shape[k]) || shape[k] == 0)
			continue;
		if (shape[k] > ((int64_t)1 << 62) / literal)
			return diag_error(b->d, b->a, at, "the result of '%.*s' has more than 2^62 elements: %s", (int)at.len,
			                  b->src->text + at.off, ir_shape_str(b->a, b->g, r, shape));
		literal *= shape[k];
	}
	return true;
}

bool ir_numel(int rank, const Dim *shape, const int64_t *dims, int64_t *out)
{
	const int64_t limit = (int64_t)1 << 62;
	int64_t n = 1;
	bool overflow = false;
	for (int k = 0; k < rank; k++) {
		int64_t d = dims ? ir_dim_value(shape[k], dims) : shape[k];
		if (d < 0)
			return false; /* unbound */
		if (d == 0) {
			*out = 0; /* an empty tensor has no elements, however large the rest */
			for (int j = k + 1; j < rank; j++)
				if ((dims ? ir_dim_value(shape[j], dims) : shape[j]) < 0)
					return false;
			return true;
		}
		if (!overflow && n > limit / d)
			overflow = true;
		else if (!overflow)
			n *= d;
	}
	if (overflow)
		return false;
	*out = n;
	return true;
}
