/*
 * ir.h: the op graph.
 *
 * Nodes live in one dense array and refer to their arguments by index; every
 * argument has a smaller index than its user, so the array order is a
 * topological order. Every node carries its dtype and its full shape, in which
 * each dimension is a literal size or a symbolic name bound at run time.
 *
 * The graph is built from the AST by ir_build (build.c): names are resolved,
 * fns inlined, types promoted (types.c), shapes broadcast (shape.c), constants
 * folded and common subexpressions merged as nodes are made (hash-consing).
 * After ir_build every operand of an op already has the op's operand dtype:
 * implicit promotions are explicit OP_CAST nodes (or re-typed constants), so
 * later stages never promote.
 */
#ifndef FUSEC_IR_H
#define FUSEC_IR_H

#include "common.h"
#include "frontend/ast.h"

typedef enum OpClass {
	OC_LEAF,    /* no arguments */
	OC_ARITH,   /* arithmetic: operands and result of one dtype */
	OC_COMPARE, /* a comparison: bool result */
	OC_LOGIC,   /* on bool */
	OC_SELECT,  /* bool condition, two branches */
	OC_CAST,    /* conversion to the node's dtype */
	OC_MATH,    /* float math (abs also on integers) */
	OC_REDUCE   /* last-axis reduction */
} OpClass;

/* The type rules (types.c), as the user sees them in docs/language.md. */
typedef enum TypeRule {
	TY_NONE,    /* leaves: the node's own dtype */
	TY_CAST,    /* an explicit cast: the target dtype */
	TY_NUM,     /* numbers, promoted together; two bools are an error */
	TY_ORDER,   /* promoted together, bools allowed (minimum, maximum, clamp) */
	TY_COMPARE, /* promoted together; bool result */
	TY_LOGIC,   /* bool operands, bool result */
	TY_SELECT,  /* a bool condition; the branches promoted together */
	TY_FLOAT,   /* promoted together, then integers and bools to f32 (weak: f64) */
	TY_ABS,     /* as TY_FLOAT, but integers stay integers */
	TY_PRED,    /* as TY_FLOAT; bool result */
	TY_BITS,    /* integers or bools, promoted together; floats are an error */
	TY_SHIFT,   /* integers, promoted together; floats and bools are errors */
	TY_SUM,     /* reduction: integers and bools sum in i64 */
	TY_MEAN,    /* reduction: integers and bools give f32 */
	TY_EXTREMUM /* reduction: the operand's dtype */
} TypeRule;

/* ops.def's LIGHT and LONG. */
typedef enum OpCost { COST_LIGHT, COST_LONG } OpCost;

/* How the generated CUDA computes an op (codegen/expr.c). */
typedef enum OpCuda {
	CU_NONE,   /* not an expression: leaves, and reductions (the kernels' loops) */
	CU_SEM,    /* its text in sem.def, inline or as a helper fz_<name> */
	CU_MINMAX, /* the prelude's NaN-propagating fz_<name>, shared with the reductions */
	CU_SELECT, /* c ? a : b */
	CU_CAST    /* a conversion (codegen/expr.c cast_expr) */
} OpCuda;

typedef enum Op {
#define OP(e, name, arity, cls, type, cost, call, cuda) e,
#include "ir/ops.def"
#undef OP
	OP_COUNT
} Op;

typedef struct OpInfo {
	const char *name;
	int arity;
	OpClass cls;
	TypeRule type;
	OpCost cost;
	bool call;      /* a builtin: the language calls it by name */
	OpCuda cuda;
} OpInfo;

extern const OpInfo ir_ops[OP_COUNT];

/* ops.c: the builtin called `name` (-1 if none). */
int ir_builtin(const char *name, size_t len);

/* A dimension: a literal size (>= 0) or symbolic dim k, encoded as -(k+1). */
typedef int64_t Dim;
#define DIM_SYM(k) (-(Dim)(k)-1)
static inline bool dim_is_sym(Dim d) { return d < 0; }
static inline int dim_sym(Dim d) { return (int)(-d - 1); }

typedef int32_t NodeId;

enum {
	NF_WEAK = 1 << 0,     /* a literal, or made of literals only: weakly typed. Always an
	                         OP_CONST; its value is the literal's, never rounded to the
	                         node's dtype (i64/f64 while untyped; re-typed operands of
	                         f32 or half ops keep the flag and the full value) */
	NF_IMPLICIT = 1 << 1, /* an OP_CAST inserted by promotion, not written by the user
	                         (per-op mode folds it into its consumer, as eager PyTorch does) */
};

typedef struct Node {
	uint16_t op;     /* Op */
	uint8_t dtype;   /* fz_dtype of the value */
	uint8_t rank;    /* 0 for a scalar */
	uint8_t flags;   /* NF_* */
	uint8_t operand; /* fz_dtype of the value operands, as converted by the type
	                    rule (of where: the branches'; of a cast: the source's;
	                    of a reduction: the elements'); of a leaf, its dtype */
	NodeId args[3];  /* -1 where unused */
	Dim shape[FZ_MAX_RANK];
	union {
		double f;    /* OP_CONST of a float dtype (full double precision, as Python) */
		int64_t i;   /* OP_CONST of an integer or bool dtype */
	} c;
	int32_t input;   /* OP_INPUT: index in Graph.inputs */
	Span span;       /* the source expression it came from */
} Node;

typedef struct IrInput {
	const char *name;
	NodeId node;
	Span span;
} IrInput;

typedef struct IrOutput {
	const char *name;
	NodeId node;
	Span span;
} IrOutput;

typedef struct Graph {
	Arena *arena;
	const char *name;     /* program name (file stem), used for kernel names */
	const Source *src;    /* the program text, for comments in generated code */
	Node *nodes;
	int n, cap;
	const char **dims;    /* names of the symbolic dims, in order of first use */
	int ndims;
	IrInput *inputs;      /* in declaration order */
	int ninputs;
	IrOutput *outputs;    /* in order of their out statements */
	int noutputs;
} Graph;

/* AST -> graph, with folding and CSE (build.c). The pipeline then runs
 * ir_dce. Also sets out->src. Errors fill *d and return false. */
bool ir_build(const Source *src, const AstProgram *p, Arena *a, const char *name, Graph *out, Diag *d);

/* Remove nodes no output depends on, renumbering the rest (keeps order).
 * Every input keeps its OP_INPUT node even when nothing uses it, so
 * Graph.inputs[k].node is always valid (passes.c). */
void ir_dce(Graph *g);

/* --emit=ir: stable text, one node a line:
 *   %3 f32[B,N] = add %1, %2        # x + y  (line:col)
 * followed by the outputs. */
void ir_print(StrBuf *sb, const Graph *g);

/* The one writer of type text (shape.c): "f32[B, 4, N]" for dtype name
 * `dtype` over a shape whose symbolic dims g names (g may be NULL when all
 * are literal, as a tensor's are); "f32" for rank 0; "[B, N]" (always with
 * brackets) when dtype is NULL. Writes at most cap bytes, always terminated
 * when cap > 0, and returns the length of the whole text, as snprintf. */
size_t ir_type_text(char *buf, size_t cap, const Graph *g, const char *dtype, int rank, const Dim *shape);
/* The same in the arena: a node's type, and a shape alone. */
const char *ir_type_str(Arena *a, const Graph *g, const Node *n);
const char *ir_shape_str(Arena *a, const Graph *g, int rank, const Dim *shape);

/* Number of elements of a shape for bound dims; false on overflow of 2^62. */
bool ir_numel(int rank, const Dim *shape, const int64_t *dims, int64_t *out);
static inline int64_t ir_dim_value(Dim d, const int64_t *dims) { return dim_is_sym(d) ? dims[dim_sym(d)] : d; }

#endif
