/*
 * fold.c: the one node constructor, with constant folding and hash-consing.
 *
 * Every node of the graph is made here. An op whose arguments are all
 * constants is not made at all: its value is computed with eval.c, the same
 * scalar semantics the interpreter uses, and the result is a constant, so a
 * folded program and an interpreted one agree bit for bit. Every other node
 * is looked up by its key (op, dtype, shape, arguments, flags, constant
 * bits) in an open-addressing table of node ids, hashed with xxhash: an
 * identical node is returned instead of a new one, which is common
 * subexpression elimination for free, across fn bodies too.
 *
 * The node records the dtype its operands were converted to (Node.operand),
 * so that no later stage derives it again. The span is not part of the key:
 * a merged node keeps the span of its first occurrence. Constants are keyed by their bits, so 0.0 and -0.0 stay apart
 * and NaNs of one pattern merge.
 */
#include "ir/build.h"

#include <string.h>
#include <xxhash.h>

/* The hashed part of a node, with no padding left uninitialised. */
typedef struct NodeKey {
	uint32_t op, dtype, operand, rank, flags;
	int32_t input;
	NodeId args[3];
	Dim shape[FZ_MAX_RANK];
	uint64_t bits;
} NodeKey;

static uint64_t node_hash(const Node *n)
{
	NodeKey k;
	memset(&k, 0, sizeof k);
	k.op = n->op;
	k.dtype = n->dtype;
	k.operand = n->operand;
	k.rank = n->rank;
	k.flags = n->flags;
	k.input = n->input;
	memcpy(k.args, n->args, sizeof k.args);
	memcpy(k.shape, n->shape, sizeof(Dim) * n->rank);
	memcpy(&k.bits, &n->c, sizeof k.bits);
	return XXH3_64bits(&k, sizeof k);
}

static bool node_same(const Node *a, const Node *b)
{
	return a->op == b->op && a->dtype == b->dtype && a->operand == b->operand && a->rank == b->rank &&
	       a->flags == b->flags &&
	       a->input == b->input && memcmp(a->args, b->args, sizeof a->args) == 0 &&
	       memcmp(a->shape, b->shape, sizeof(Dim) * a->rank) == 0 && memcmp(&a->c, &b->c, sizeof a->c) == 0;
}

static void table_alloc(Builder *b, uint32_t cap)
{
	b->table = ARENA_ARRAY(b->a, NodeId, cap);
	memset(b->table, 0xff, sizeof(NodeId) * cap); /* -1: empty */
	b->table_cap = cap;
}

static void table_insert(Builder *b, NodeId id)
{
	uint32_t mask = b->table_cap - 1;
	for (uint32_t i = (uint32_t)b->hashes[id] & mask;; i = (i + 1) & mask)
		if (b->table[i] < 0) {
			b->table[i] = id;
			return;
		}
}

void irb_init(Builder *b)
{
	table_alloc(b, 1024);
	b->hashes = NULL;
	b->hashes_cap = 0;
}

/* The existing node equal to *n, or a new one; -1 at the node limit. */
static NodeId intern(Builder *b, Node *n, Span span)
{
	Graph *g = b->g;
	uint64_t h = node_hash(n);
	uint32_t mask = b->table_cap - 1;
	for (uint32_t i = (uint32_t)h & mask; b->table[i] >= 0; i = (i + 1) & mask) {
		NodeId id = b->table[i];
		if (b->hashes[id] == h && node_same(&g->nodes[id], n))
			return id;
	}
	if (g->n >= FZ_MAX_NODES) {
		diag_error(b->d, b->a, span, "program too large: more than %d nodes in the op graph",
		           FZ_MAX_NODES);
		return -1;
	}
	n->span = span;
	NodeId id = g->n;
	VEC_PUSH(b->a, g->nodes, g->n, g->cap, *n);
	if (b->hashes_cap < g->cap) {
		b->hashes = arena_realloc(b->a, b->hashes, sizeof(uint64_t) * (size_t)b->hashes_cap,
		                          sizeof(uint64_t) * (size_t)g->cap);
		b->hashes_cap = g->cap;
	}
	b->hashes[id] = h;
	if ((uint32_t)g->n * 2 > b->table_cap) {
		table_alloc(b, b->table_cap * 2);
		for (NodeId k = 0; k < g->n; k++)
			table_insert(b, k);
	} else {
		table_insert(b, id);
	}
	return id;
}

static void node_init(Node *n, Op op, fz_dtype t, int rank, const Dim *shape, uint8_t flags)
{
	memset(n, 0, sizeof *n);
	n->op = (uint16_t)op;
	n->dtype = (uint8_t)t;
	n->operand = (uint8_t)t;
	n->rank = (uint8_t)rank;
	n->flags = flags;
	n->args[0] = n->args[1] = n->args[2] = -1;
	if (rank)
		memcpy(n->shape, shape, sizeof(Dim) * (size_t)rank);
}

static Scalar const_value(const Node *n)
{
	Scalar v;
	memcpy(&v, &n->c, sizeof v);
	return eval_normalize((fz_dtype)n->dtype, v);
}

NodeId irb_const(Builder *b, fz_dtype t, Scalar v, uint8_t flags, Span span)
{
	Node n;
	node_init(&n, OP_CONST, t, 0, NULL, flags & NF_WEAK);
	memcpy(&n.c, &v, sizeof n.c);
	return intern(b, &n, span);
}

NodeId irb_input(Builder *b, int index, fz_dtype t, int rank, const Dim *shape, Span span)
{
	Node n;
	node_init(&n, OP_INPUT, t, rank, shape, 0);
	n.input = index;
	return intern(b, &n, span);
}

/* The dtype of op's value operands, once the type rule has converted them:
 * every one has it (where's condition aside), so the first tells. */
static fz_dtype operand_of(Builder *b, Op op, const NodeId *args)
{
	return (fz_dtype)irb_node(b, args[ir_ops[op].cls == OC_SELECT ? 1 : 0])->dtype;
}

/* op over constant arguments, computed as the interpreter would. */
static NodeId fold(Builder *b, Op op, fz_dtype t, const NodeId *args, uint8_t flags, Span span)
{
	Scalar v[3] = {{0}, {0}, {0}}, r;
	for (int k = 0; k < ir_ops[op].arity; k++)
		v[k] = const_value(irb_node(b, args[k]));
	fz_dtype operand = operand_of(b, op, args);
	if (!eval_op(op, t, operand, v, &r)) {
		diag_error(b->d, b->a, span, "internal error: '%s' has no semantics on %s", ir_ops[op].name,
		           fz_dtype_name(operand));
		return -1;
	}
	return irb_const(b, t, r, flags, span);
}

NodeId irb_make(Builder *b, Op op, fz_dtype t, int rank, const Dim *shape, const NodeId *args, uint8_t flags,
                Span span)
{
	int arity = ir_ops[op].arity;
	bool all_const = arity > 0 && ir_ops[op].cls != OC_REDUCE;
	for (int k = 0; k < arity; k++)
		if (irb_node(b, args[k])->op != OP_CONST)
			all_const = false;
	if (all_const)
		return fold(b, op, t, args, flags, span);
	Node n;
	node_init(&n, op, t, rank, shape, flags);
	if (arity > 0)
		n.operand = (uint8_t)operand_of(b, op, args);
	for (int k = 0; k < arity; k++)
		n.args[k] = args[k];
	return intern(b, &n, span);
}
