/*
 * fuse.h: partition of the op graph into kernels.
 *
 * Two kinds of kernel:
 *  - pointwise: a tree of elementwise ops over one iteration shape, with
 *    broadcast inputs and any number of outputs of that shape;
 *  - row: one or more last-axis reductions over the same rows [A..., N] with
 *    their elementwise producers, the per-row values computed from them
 *    ([A..., 1]) and the full-row epilogue that uses them.
 * Only outputs and values that cross a kernel boundary are stored; cheap
 * producers used by several consumers are recomputed. In per-op mode every
 * op is its own kernel, as eager PyTorch runs them.
 *
 * Kernel parameters are listed in order (KParam): codegen writes the kernel
 * signature from them and the runtime packs the launch arguments from them.
 * The order is: tensors read (PARAM_IN, ascending node id), tensors written
 * (PARAM_OUT, ascending node id then output index), scalar inputs
 * (PARAM_SCALAR, ascending node id), symbolic dims (PARAM_DIM, ascending).
 * Every operand of a kernel's nodes is one of its nodes, a PARAM_IN or
 * PARAM_SCALAR, or an OP_CONST (inlined by codegen).
 *
 * A node may be computed by several kernels (a recomputed producer), but a
 * stored node is written by exactly one, and a reduction is computed by
 * exactly one. Kernels are in launch order: every kernel a kernel reads from
 * has a smaller id (the plan is acyclic by construction, see partition.c).
 * Values stored for other kernels are rounded to their dtype there (f16/bf16).
 */
#ifndef FUSEC_FUSE_H
#define FUSEC_FUSE_H

#include "ir/ir.h"

typedef enum KernelKind {
	KERNEL_POINTWISE,
	KERNEL_ROW
} KernelKind;

typedef enum ParamKind {
	PARAM_IN,     /* const pointer to a tensor read: an input or a stored node */
	PARAM_OUT,    /* pointer to a tensor written: an output or a temporary */
	PARAM_SCALAR, /* a scalar input, by value in its dtype */
	PARAM_DIM     /* a symbolic dim's size, as int64 */
} ParamKind;

typedef struct KParam {
	ParamKind kind;
	NodeId node;  /* PARAM_IN, PARAM_OUT, PARAM_SCALAR */
	int output;   /* PARAM_OUT: index in Graph.outputs, or -1 for a temporary;
	                 PARAM_IN: the output whose buffer holds the node (its first
	                 output), or -1 for an input or a temporary */
	int dim;      /* PARAM_DIM: the symbolic dim */
} KParam;

/* A row kernel computes per-row nodes (shape [A..., 1], once per row) and
 * full-row nodes (shape broadcastable to the rows, once per element); its
 * PARAM_OUTs can be of either kind. A PARAM_OUT whose node is a leaf is a
 * copy (input, read through the PARAM_IN or PARAM_SCALAR of the same node)
 * or a fill (OP_CONST): a kernel with no nodes only copies and fills, and
 * copies can also sit among the outputs of a kernel that computes others. */
typedef struct Kernel {
	int id;                     /* index in Plan.kernels (launch order) */
	KernelKind kind;
	const char *name;           /* "<program>_k<id>", a valid C identifier */
	int rank;                   /* iteration domain: the output shape (pointwise) */
	Dim domain[FZ_MAX_RANK];    /* or the rows [A..., N] (row; N is reduced) */
	NodeId *nodes;              /* nodes computed here, in graph order (no leaves) */
	int nnodes;
	NodeId *reductions;         /* row kernels: reductions in dependency order */
	int nreductions;
	KParam *params;
	int nparams;
	int *deps;                  /* ids of kernels that must run first */
	int ndeps;
} Kernel;

typedef struct Unfused {
	NodeId producer, consumer;  /* an edge of the graph that crosses kernels */
	int kernel;                 /* the kernel that reads producer for consumer */
	const char *why;            /* one sentence for --explain */
} Unfused;

typedef struct Plan {
	const Graph *g;
	bool fused;                 /* false: per-op mode */
	Kernel *kernels;            /* in launch order */
	int nkernels;
	uint8_t *stored;            /* per node: written to device memory by a kernel
	                               (outputs, copies of leaf outputs, temporaries) */
	NodeId *temps;              /* stored nodes that are not outputs (runtime allocates),
	                               ascending */
	int ntemps;
	Unfused *unfused;
	int nunfused;
} Plan;

bool fuse_plan(const Graph *g, bool fused, Arena *a, Plan *out, Diag *d);

/* --emit=fused: each kernel's nodes, what it reads and writes, bytes moved. */
void fuse_print(StrBuf *sb, const Plan *p);
/* --emit=dot: the graph with one cluster per kernel. */
void fuse_print_dot(StrBuf *sb, const Plan *p);
/* --explain: why each cross-kernel edge was not fused. */
void fuse_explain(StrBuf *sb, const Plan *p);

#endif
