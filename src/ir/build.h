/*
 * build.h: the graph builder, shared by the files of the ir stage (not used
 * outside src/ir).
 *
 * ir_build (build.c) walks the AST and makes nodes through one constructor
 * (fold.c: constant folding and hash-consing); every operator goes through
 * the type rules (types.c) and the broadcasting rules (shape.c) first. The
 * Builder carries what they share: the graph being built, the diagnostic and
 * the hash-consing table.
 *
 * Weak values. A literal, or an expression of literals only, is a weak
 * constant: an OP_CONST with NF_WEAK whose dtype is i64 (integers) or f64
 * (floats), the types it is folded in, as Python scalars are. It takes a
 * dtype when it meets a typed operand (irb_convert re-types it, keeping the
 * value); a weak value that reaches an output, or an operation with no typed
 * operand that is not folded, takes its default dtype, i32 or f32. Messages
 * name a weak value by that default dtype. A weak constant is always a
 * scalar, so weakness never needs a shape.
 */
#ifndef FUSEC_IR_BUILD_H
#define FUSEC_IR_BUILD_H

#include "ir/eval.h"
#include "ir/ir.h"

typedef struct Builder {
	Arena *a;
	const Source *src;
	Graph *g;
	Diag *d;
	/* hash-consing (fold.c): open addressing over node ids, -1 = empty */
	NodeId *table;
	uint32_t table_cap;   /* a power of two, at least twice the nodes */
	uint64_t *hashes;     /* per node, the hash of its key */
	int hashes_cap;
	/* inlining (build.c) */
	int depth;            /* build_expr frames on the C stack, across fn bodies */
	struct Scope *scope;  /* the fn body being inlined, NULL at top level */
	struct Syms *syms;    /* the program's names */
	struct Memo *memo;    /* fn calls already inlined */
	bool call_noted;      /* the diagnostic already names the fn call it is in */
} Builder;

/* Combined expression depth across inlined fn bodies: each fn body is at
 * most FZ_MAX_DEPTH high (the parser's bound); calls nest them. Past this a
 * call is "functions nested too deeply", which keeps the C stack bounded. */
#define IR_MAX_INLINE_DEPTH (2 * FZ_MAX_DEPTH)

/* ---- fold.c: the node constructor ------------------------------------------------ */

/* Start the hash-consing table for an empty graph. */
void irb_init(Builder *b);
/* The node (op, dtype, shape, args, flags): a constant when every argument
 * is one (folded with eval.c, so it agrees with the interpreter), else the
 * existing identical node, else a new one with `span`. The arguments must
 * already have the op's operand dtypes. -1 when the graph reaches
 * FZ_MAX_NODES (the diagnostic is at `span`). */
NodeId irb_make(Builder *b, Op op, fz_dtype t, int rank, const Dim *shape, const NodeId *args, uint8_t flags,
                Span span);
/* A scalar constant (hash-consed by its bits). -1 at the node limit. */
NodeId irb_const(Builder *b, fz_dtype t, Scalar v, uint8_t flags, Span span);
/* A program input (never merged with another). -1 at the node limit. */
NodeId irb_input(Builder *b, int index, fz_dtype t, int rank, const Dim *shape, Span span);

static inline Node *irb_node(Builder *b, NodeId id) { return &b->g->nodes[id]; }
static inline bool irb_is_weak(Builder *b, NodeId id) { return (b->g->nodes[id].flags & NF_WEAK) != 0; }

/* ---- types.c: the type rules ------------------------------------------------------ */

typedef struct OpType {
	fz_dtype operand; /* the dtype the value operands are converted to */
	fz_dtype result;  /* the node's dtype */
	bool weak;        /* the result is a weak constant (all operands weak) */
} OpType;

/* The type rule of `op` (any class but OC_LEAF and OC_CAST) over its
 * argument nodes. `what` names the operator in messages ("'+'", "'sum'");
 * errors are reported at `at` and return false. */
bool irb_type(Builder *b, Op op, const NodeId *args, Span at, const char *what, OpType *out);

/* The dtype a value has where it is used alone (an output, a message): its
 * own, or i32/f32 for a weak constant. */
fz_dtype irb_value_dtype(Builder *b, NodeId id);

/* `id` converted to dtype t for use as an operand: itself if it has that
 * dtype, a re-typed constant if it is weak (value kept; an integer that does
 * not fit is an error at `span`), else an implicit OP_CAST (folded if
 * constant). `span` is the operand's expression, the new node's span. -1 on
 * error. */
NodeId irb_convert(Builder *b, NodeId id, fz_dtype t, Span span);

/* ---- shape.c: broadcasting ---------------------------------------------------------- */

/* The broadcast shape of the nodes' shapes (NumPy rules over symbolic dims).
 * A mismatch is an error at `at` that shows both shapes. */
bool irb_broadcast(Builder *b, int n, const NodeId *args, Span at, int *rank, Dim *shape);

/* "f32[B, N]" for a node's value (a weak constant shows its default dtype). */
const char *irb_type_str(Builder *b, NodeId id);

#endif
