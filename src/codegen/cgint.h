/*
 * cgint.h: what the files of the code generator share.
 *
 *   cg.c         cg_generate: checks the plan, runs the kernel emitters, and
 *                assembles the module (prelude first, then the kernels)
 *   prelude.c    the device helpers (fz_*), emitted only where used
 *   expr.c       names, comments, constants and the C expression of each op
 *   pointwise.c  pointwise kernels
 *   row.c        row kernels (reductions), one entry for every schedule
 *   launch.c     cg_launch: entry, grid, block, shared memory, workspace
 *
 * Generated code is in SSA style: the value of node N is `tN` (or an array
 * element where a loop computes V of them at once); no expression is nested
 * beyond one op, so nothing recurses over the graph's depth.
 */
#ifndef FUSEC_CGINT_H
#define FUSEC_CGINT_H

#include "codegen/cg.h"

/* What cg_launch needs about each plan kernel (CgModule.kinfo[k]). */
struct CgKernelInfo {
	KernelKind kind;
	int entry;                     /* index in CgModule.entries */
	int vec;                       /* elements per chunk (V): 16 bytes of the narrowest stream */
	int max_threads;               /* the entry's __launch_bounds__ */
	int nslots;                    /* row: shared-memory cache slots */
	int *slot_bytes;               /* row: bytes per element of each slot */
	int nred;                      /* row: most reductions finished in one pass */
	int npasses;                   /* row: passes over each row, the epilogue included */
	bool rowc_store;               /* row: writes per-row values (runs even when N = 0) */
	int rk;                        /* row: chunks a thread holds in registers when a whole
	                                  row fits (length a multiple of vec, one block or
	                                  less a row); 0: no register path */
	bool heavy;                    /* long math (tanh, erf, sin, pow, ...) per element */
	int pf_bytes;                  /* row: shared memory a thread of the register path
	                                  copies its next row's chunks into (0: none) */
};

/* Prelude pieces: which helpers the module uses. */
enum {
	CGH_MINMAX = 1u << 1,  /* NaN-propagating minimum, maximum, clamp */
	CGH_ROUND = 1u << 3,   /* rounding to f16/bf16 (explicit casts) */
	CGH_BCAST = 1u << 4,   /* loads of broadcast operands */
	CGH_ROW = 1u << 5,     /* reductions, the row cache, split-row exchange */
};
/* The kinds of compute type an op's text is written for (ir/sem.def). */
typedef enum CgKind { CG_F32, CG_F64, CG_I32, CG_I64, CG_BOOL, CG_KIND_COUNT } CgKind;

typedef struct Cg {
	const Plan *p;
	const Graph *g;
	Arena *a;
	Diag *d;
	StrBuf *sb;                    /* the kernels' text (the prelude is prepended) */
	uint64_t helpers;              /* CGH_* bits */
	uint8_t ophelp[OP_COUNT];      /* per op: 1 << CgKind for each helper fz_<name> used */
	/* Scratch indexed by node, valid for the kernel being emitted. */
	const char **vname;            /* how the current scope names a node's value */
	int32_t *pin;                  /* PARAM_IN/PARAM_SCALAR index loading the node, or -1 */
	int32_t *mark, *mark2, *mark3; /* stamps for closures and sets */
	int32_t stamp;
	int32_t *ph;                   /* row kernels: reductions on the way from the leaves */
	int32_t *lastread;             /* row kernels: last pass reading a cached value, -1 */
	uint8_t *nflags;               /* row kernels: NK_* (row.c) */
	/* The kernel being emitted. */
	const Kernel *k;
	const char *kname;             /* its name as a C identifier */
	int kid;
	int vec;
	struct CgKernelInfo *info;
} Cg;

/* ---- expr.c --------------------------------------------------------------- */

/* C types: how a dtype is stored in memory and what it is computed in. */
const char *cg_store_type(fz_dtype t);
const char *cg_compute_type(fz_dtype t);
/* Bytes of the type a node is cached in (storage for leaves, else compute). */
int cg_compute_size(fz_dtype t);
/* The identifier of kernel parameter i ("in_x", "out_y", "tmp7", "dim_N"). */
const char *cg_param_name(Cg *c, int i);
/* A dimension as a C expression ("dim_N" or "7LL"). */
const char *cg_dim_expr(Cg *c, const Kernel *k, Dim d);
/* The source text of a node for a // comment: one line, printable, no line
 * splice, truncated, followed by its position. */
const char *cg_comment(Cg *c, const Node *n);
/* The C expression computing node n from its arguments' names. NULL (with a
 * diagnostic) for an op the kernel cannot compute. */
const char *cg_node_expr(Cg *c, NodeId id);
/* The value of a node in the current scope: vname, or a literal constant. */
const char *cg_value(Cg *c, NodeId id);
/* Mark a new stamp; returns it. */
int32_t cg_new_stamp(Cg *c);
/* An internal error: the plan is not what the code generator expects. */
bool cg_internal(Cg *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Kernel parameter list "(const float *__restrict__ in_x, ...)". */
void cg_signature(Cg *c, const Kernel *k, bool workspace);
/* Record that `node` is loaded by parameter `i`, for every PARAM_IN/SCALAR. */
void cg_bind_params(Cg *c, const Kernel *k);
void cg_unbind_params(Cg *c, const Kernel *k);
/* Is node id computed by kernel k (listed in k->nodes)? Uses c->mark with the given stamp. */
bool cg_is_leaf(Cg *c, NodeId id);
/* Ops whose CUDA math takes tens of instructions an element (tanhf, erff,
 * sinf, powf, ...), which change what bounds a memory-bound kernel. */
bool cg_long_math(Op op);
/* Node shape aligned to a domain of rank r: dim of axis ax (1 where missing). */
Dim cg_dim_at(const Node *n, int r, int ax);

/* ---- index.c -------------------------------------------------------------- */

/* A run of axes lo .. hi-1 that an operand keeps (or broadcasts) alike. */
typedef struct CgRun {
	int lo, hi;
	bool kept;
} CgRun;

/* The runs of node n over axes 0 .. hi-1 of a domain of rank r, innermost
 * first, axes of literal size 1 left out; -1 if a dim neither matches nor
 * broadcasts. */
int cg_runs(const Node *n, int r, const Dim *dom, int hi, CgRun *runs);
/* Product of the kernel domain's dims lo .. hi-1 as a C expression. */
const char *cg_extent(Cg *c, const Kernel *k, int lo, int hi);
/* The offset of element `var` of an index space of axes 0 .. hi-1 in an
 * operand with these runs; its constants are declared now (named after px). */
const char *cg_offset(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                      const char *indent);
/* Chunk width: 16 bytes of the narrowest per-element stream, at most 8. */
int cg_vec_width(Cg *c, bool row);
/* Alignment a streamed pointer of dtype t needs for chunks of vec elements. */
int cg_vec_align(int vec, fz_dtype t);

/* ---- prelude.c ------------------------------------------------------------ */

void cg_prelude(StrBuf *sb, const Cg *c);
/* The kind of a dtype's compute type. */
CgKind cg_kind(fz_dtype t);
/* An op's text in ir/sem.def for a kind of operand (NULL if it has none);
 * *body: a function body rather than an expression. */
const char *cg_sem_text(Op op, CgKind kind, bool *body);
/* Whether a text names the identifier `id` as a whole word. */
bool cg_text_names(const char *text, const char *id);

/* ---- pointwise.c, row.c ----------------------------------------------------- */

bool cg_pointwise(Cg *c);
bool cg_row(Cg *c);

#endif
