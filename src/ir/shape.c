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
 */
#include "ir/build.h"

#include <inttypes.h>

static void put_dim(StrBuf *sb, const Graph *g, Dim d)
{
	if (!dim_is_sym(d))
		sb_printf(sb, "%" PRId64, d);
	else if (dim_sym(d) < g->ndims)
		sb_puts(sb, g->dims[dim_sym(d)]);
	else
		sb_printf(sb, "?%d", dim_sym(d));
}

const char *ir_shape_str(Arena *a, const Graph *g, int rank, const Dim *shape)
{
	StrBuf sb;
	sb_init(&sb, a);
	sb_puts(&sb, "[");
	for (int k = 0; k < rank; k++) {
		if (k)
			sb_puts(&sb, ", ");
		put_dim(&sb, g, shape[k]);
	}
	sb_puts(&sb, "]");
	return sb_str(&sb);
}

const char *ir_type_str(Arena *a, const Graph *g, const Node *n)
{
	const char *t = fz_dtype_name((fz_dtype)n->dtype);
	if (n->rank == 0)
		return t;
	return arena_printf(a, "%s%s", t, ir_shape_str(a, g, n->rank, n->shape));
}

const char *irb_type_str(Builder *b, NodeId id)
{
	const Node *n = irb_node(b, id);
	const char *t = fz_dtype_name(irb_value_dtype(b, id));
	if (n->rank == 0)
		return t;
	return arena_printf(b->a, "%s%s", t, ir_shape_str(b->a, b->g, n->rank, n->shape));
}

static const char *dim_str(Builder *b, Dim d)
{
	StrBuf sb;
	sb_init(&sb, b->a);
	put_dim(&sb, b->g, d);
	return sb_str(&sb);
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
