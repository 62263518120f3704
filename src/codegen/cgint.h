/*
 * cgint.h: what the files of the code generator share.
 *
 *   cg.c          cg_generate: checks the plan, runs the kernel emitters,
 *                 keeps each entry's text, and assembles module sources
 *   writer.c      the indent-tracking writer every emitter writes through
 *   prelude.c     the device helpers (fz_*), emitted only where used:
 *                 storage types and vectors, and the assembly of a module's
 *                 prelude; prelude_ops.c the helpers that compute values
 *                 (divisions, half-precision math, sem.def's texts);
 *                 prelude_row.c the row kernels' shared and cached
 *                 machinery, prelude_reg.c that of rows held in registers
 *   expr.c        names, comments, constants and the C expression of each op
 *   index.c       index arithmetic of broadcast operands
 *   pointwise.c   pointwise kernels (the POINTWISE path)
 *   row*.c        row kernels: row_plan.c plans a kernel once (passes, the
 *                 row cache; row_plan_reg.c the register path's part),
 *                 row_emit.c writes what every path shares (passes,
 *                 reductions, per-row values), row_chunk.c
 *                 a chunk's elements, accumulations, loads and stores, then
 *                 one file per path: row_reg.c (REG), row_loop.c (ROW),
 *                 row_split.c (SPLIT), row_tile.c (TILE); rowint.h is what
 *                 they share
 *   launch.c      cg_launch: the one place that completes a launch plan
 *                 (entry, shared memory, workspace, arguments);
 *                 launch_rules.c the rules that choose its path and
 *                 geometry; launchint.h what the two share
 *   launch_print.c  --emit=launch
 *
 * Generated code is in SSA style: the value of node N is `tN` (or an array
 * element where a loop computes V of them at once); no expression is nested
 * beyond one op, so nothing recurses over the graph's depth.
 */
#ifndef FUSEC_CGINT_H
#define FUSEC_CGINT_H

#include "codegen/cg.h"

/* Rows of at most this many chunks, not a multiple of V, are staged through
 * shared memory (the TILE path), when many (launch_rules.c's tile_rules;
 * docs/performance.md); longer ones, up to 32 threads of the most chunks,
 * where the stage holds them in fewer chunks than the register path's
 * masked class (CG_RULE_TILE_SHIFT) and its lane class does not take them
 * (too few rows). Its entries hold 1, 2, ... up to
 * CG_TILE_KMAX chunks a thread (CgKernelInfo.tile_kmax). */
enum { CG_TILE_CHUNKS = 32, CG_TILE_KMAX = 4 };
/* Rows of halves of at most this many chunks, a multiple of V, in a kernel
 * whose register path prefetches them, take that path's entries of 2 and 1
 * chunks a thread (CgKernelInfo.reg_narrow; launch_rules.c's reg_k). */
enum { CG_REG_NARROW_CHUNKS = 8 };
/* Rows of one or two 128-byte lines of chunks (8 or 16 of 16 bytes), many,
 * in a kernel that reads streams of the rows' layout and at most one column
 * operand: the line entries (`_line<K>`), which load them directly (no
 * prefetch), CG_LINE_THREADS threads a row, each a chunk of every line (16
 * threads of a chunk for two lines of halves), so that a warp's load covers
 * whole lines; CG_LINE_BLOCK threads a block, CG_LINE_BLOCKS blocks an SM
 * (32 registers a thread), at most CG_LINE_ELEMS elements a thread;
 * launch_rules.c's line_rule says why (CgKernelInfo.reg_line). */
enum { CG_LINE_THREADS = 8, CG_LINE_BLOCK = 256, CG_LINE_BLOCKS = 8, CG_LINE_ELEMS = 8 };
/* A staged block is CG_TILE_THREADS threads (its rows' groups): 64, not 256,
 * where a row takes several threads, so that a block's tile is a quarter as
 * long and the launch's last blocks leave the device sooner; 256 where a
 * thread takes a row (the direct entries), whose rows are short enough that
 * a block of 64 did not gain and made the grid four times as long (H200,
 * docs/performance.md, "Smaller tiles"). The rows are staged where they fill
 * CG_TILE_FILL threads an SM, as many as when that rule was measured with
 * blocks of 256 (launch_rules.c's tile_rules). The entries of one row length
 * stage nothing up to CG_TILE_UNSTAGED_MAX elements (row_tile.c's
 * row_tile_unstaged), and where the rows are many and shorter than V, up to
 * CG_TILE_PAIR_MAX, take two a thread (their `_tile1n<L>x2` twins). */
/* The f32 entries of staged rows that a group of threads holds (the class
 * of tile_kmax chunks, not the direct entries of one length), in kernels
 * without long math or 8-byte values that stage at most two streams
 * (row_emit.c's tile_light), are bound to CG_TILE_GROUP_THREADS threads an
 * SM: ptxas gave rmsnorm's and layernorm's 58 registers (17 blocks of 64),
 * bound 48 (20 blocks), no spill; a kernel of four staged streams spilled
 * 24 bytes, one of long math 72, so not those. H200,
 * bench/replay_ab.py, unbound -> bound (us): layernorm f32 270600x31 24.5 ->
 * 23.6, 66052x127 25.9 -> 25.3, 131072x63 25.2 -> 24.8, rmsnorm f32
 * 66052x127 23.3 -> 23.0, softmax f32 270601x31 24.0 -> 23.6, 66053x127
 * 24.2 -> 23.9; log_softmax and logsumexp f32 x127 within 0.2%. Not the
 * direct entries (rmsnorm f32 1048576x16's `_tile4n16` 38.4 -> 38.6). */
enum {
	CG_TILE_GROUP_THREADS = 1280,
	CG_TILE_THREADS = 64,
	CG_TILE_THREADS_DIRECT = 256,
	CG_TILE_FILL = 256,
	CG_TILE_UNSTAGED_MAX = 6,
	CG_TILE_PAIR_MAX = 5
};
static inline int cg_tile_threads(bool direct) { return direct ? CG_TILE_THREADS_DIRECT : CG_TILE_THREADS; }
/* The rows a thread of the twin of the entry of rows of `rowlen` (of a
 * kernel of chunks of `vec`) takes: 2, or 4 where rows of 2 halves make four
 * a 16-byte span (row_tile.c's row_tile_span); 1: no twin. Its one rule, for
 * the entries written (row_emit.c's emit_lengths), the launch's choice and
 * its words (launch.c). Four rows of 2 halves a thread against two, H200,
 * bench/replay_ab.py (us): softmax f16 8388608x2 29.8 -> 26.3, bf16 29.6 ->
 * 26.2, layernorm bf16 31.0 -> 25.4, f16 36.4 -> 34.0, rmsnorm f16 28.9 ->
 * 25.0, log_softmax bf16 28.8 -> 24.5. (Four f32 rows of 2, 32 bytes, lost
 * to two in a hand-written kernel: docs/performance.md, "Short rows that
 * stage nothing".) */
static inline int cg_tile_rpt(int rowlen, int vec)
{
	if (rowlen == 2 && vec == 8)
		return 4;
	return rowlen >= 2 && rowlen <= CG_TILE_PAIR_MAX && rowlen < vec ? 2 : 1;
}
/* The register path's entries that hold column operands (CgKernelInfo.reg_hold)
 * are bound to CG_HOLD_THREADS threads (128 registers), and hold at most
 * CG_HOLD_MAX of them. */
enum { CG_HOLD_THREADS = 512, CG_HOLD_MAX = 2 };
/* The masked register class's slots (row_reg.c) hold the column chunks of
 * one alignment of a row: its resident grids step over a multiple of this
 * many rows, so that every row a thread takes has the alignment of its
 * first (V = 8 elements of 2 bytes to a 16-byte chunk). */
enum { CG_SLOT_GRID = 8 };
/* The register path's lane class (`_reg<K>l`, row_reg.c): rows not a
 * multiple of V, a group of CG_LANE_THREADS threads a row (CG_LANE_ROWS rows
 * a block), K elements a thread, one at a time. Its entries hold from just
 * past the staged rows' elements (CG_TILE_CHUNKS chunks of V over the group),
 * or from CG_LANE_KMIN in kernels of f32 rows that write rows, up to
 * CG_LANE_KMAX elements (CgKernelInfo.lane_lo, lane_hi: row_emit.c's
 * emit_lanes; launch_rules.c's lane_rules says when they are taken). */
enum { CG_LANE_THREADS = 32, CG_LANE_ROWS = 4, CG_LANE_KMIN = 3, CG_LANE_KMAX = 32 };
/* Rows of n elements, a multiple of V, that the lane class may take (f32,
 * longer than the staged rows): launch_rules.c's lane_aligned decides, row_emit.c's
 * emit_lanes writes their entry where n is a literal. */
static inline bool cg_lane_aligned_len(int64_t n, int vec) { return vec == 4 && n > CG_TILE_CHUNKS * vec; }

/* Static shared memory of a row entry: fz_red, the block reductions' scratch
 * (two alternating halves of 32 words, prelude.c's fz_reduce). The launch
 * plan counts it against a block's and an SM's shared memory. */
enum { CG_RED_WORDS = 64 };

/* The split rows' entry without a row cache (_stream): blocks of this many
 * threads, this many resident an SM (its __launch_bounds__, and the grid
 * launch_rules.c's stream_rules sizes, which must be co-resident). */
enum { CG_STREAM_THREADS = 512, CG_STREAM_BLOCKS = 2 };
/* Its ring (row_ring.c): at most this many bytes of shared memory a thread,
 * in at most this many stages. */
enum { CG_RING_BYTES = 128, CG_RING_STAGES = 8 };

/* What cg_launch needs about each plan kernel (CgModule.kinfo[k]). */
struct CgKernelInfo {
	KernelKind kind;
	int first_entry, nentries;     /* its entries in CgModule.entries */
	int vec;                       /* elements per chunk (V): 16 bytes of the narrowest stream */
	int max_threads;               /* its entries' __launch_bounds__ */
	int static_smem;               /* bytes of static shared memory of its entries, the most */
	int nslots;                    /* row: row cache slots */
	int *slot_bytes;               /* row: bytes per element of each slot */
	int nred;                      /* row: most reductions finished in one pass */
	int npasses;                   /* row: passes over each row, the epilogue included */
	bool rowc_store;               /* row: writes per-row values (runs even when N = 0) */
	int rk;                        /* row: chunks a thread of the REG path holds (0: no REG path) */
	int tile_kmax;                 /* row: most chunks a thread of the TILE path holds (its
	                                  entries hold 1, 2, ... up to it) */
	bool heavy;                    /* long math (tanh, erf, sin, pow, ...) per element */
	bool colops;                   /* row: reads a column operand (a per-element input the
	                                  rows share, such as layernorm's weight) */
	bool rowcp;                    /* row: the cached paths' first pass copies an input into
	                                  the row cache at once (row_loop.c) */
	int pf_bytes;                  /* row: shared memory a thread of the REG path copies its
	                                  next row's chunks into (0: no prefetch) */
	bool reg_direct;               /* row: the REG path's aligned class prefetches nothing
	                                  (pf_bytes is its masked class's) */
	bool reg_hold;                 /* row: the REG path's aligned class has an entry that loads
	                                  the column operands of its later passes with the row and
	                                  holds them (row_plan.c), bound to CG_HOLD_THREADS */
	int col_bytes;                 /* row: the REG path's masked class keeps the column
	                                  operands its epilogue reads in shared memory, this many
	                                  bytes a thread after the prefetch buffer, at its rows'
	                                  alignment (row_reg.c's slots; 0: it loads them) */
	bool reg_narrow;               /* row: the REG path's aligned class also has entries of 2
	                                  and 1 chunks a thread, for rows of up to
	                                  CG_REG_NARROW_CHUNKS (launch_rules.c's reg_k) */
	bool reg_line;                 /* row: the REG path's aligned class has line entries
	                                  (`_line<K>`, K = 1, and 2 for f32) for rows of one or
	                                  two lines (CG_LINE_THREADS; launch_rules.c's line_rule) */
	int lane_lo, lane_hi;          /* row: the REG path's lane entries hold lane_lo .. lane_hi
	                                  elements a thread, an entry each (0: none) */
	bool one;                      /* row: has an entry for rows of one element (POINTWISE) */
	bool stream;                   /* row: has a SPLIT entry without a row cache (_stream) */
	int ring_bytes;                /* row: that entry's ring, bytes of shared memory a thread */
	int in_bytes;                  /* row: bytes an element of the inputs read row by row */
	int ntiles;                    /* row: streams the TILE path stages (the rows' layout) */
	int *tile_param;               /* their parameters */
	int *tile_bytes;               /* their element sizes */
	bool *tile_in;                 /* which are inputs (the direct TILE entries stage none) */
};

/* Does ki's line entry of K chunks a thread reduce among its row's
 * threads with shuffles alone (one chunk: row_emit.c's red_group), so that
 * it runs with groups of CG_LINE_THREADS only (or 16: cg_line_wide)? */
static inline bool cg_line_group(const struct CgKernelInfo *ki, int K) { return ki->reg_line && K == 1; }
/* The line entry's chunks a thread for rows of `chunks` (one or two lines):
 * a chunk of every line, at most CG_LINE_ELEMS elements (rows of two lines
 * of halves: one, 16 threads a row). */
static inline int cg_line_k(const struct CgKernelInfo *ki, int64_t chunks)
{
	int K = chunks > CG_LINE_THREADS ? 2 : 1;
	return K * ki->vec > CG_LINE_ELEMS ? 1 : K;
}
/* Whether a line entry of one chunk reduces among 8 or 16 threads (halves:
 * blockDim.x says which; row_emit.c's emit_block_reduce) or 8 alone. */
static inline bool cg_line_wide(const struct CgKernelInfo *ki) { return cg_line_k(ki, 2 * CG_LINE_THREADS) == 1; }

/* Prelude pieces: which helpers an entry uses. */
enum {
	CGH_MINMAX = 1u << 1,  /* NaN-propagating minimum, maximum, clamp */
	CGH_ROUND = 1u << 3,   /* rounding to f16/bf16 (explicit casts) */
	CGH_BCAST = 1u << 4,   /* loads of broadcast operands (needs CGH_PW) */
	CGH_ROW = 1u << 5,     /* row kernels: reductions, the row cache */
	CGH_REG = 1u << 6,     /* rows held in registers, their prefetch */
	CGH_SPLIT = 1u << 7,   /* split rows' exchange of partial results */
	CGH_TILE = 1u << 8,    /* short rows staged through shared memory */
	CGH_DIVR = 1u << 9,    /* row kernels: division by a value of the row */
	CGH_PW = 1u << 10,     /* pointwise kernels' vector chunks */
	CGH_ACC = 1u << 11,    /* reductions' combining functors (fz_sum, fz_max, fz_min) */
	CGH_ROWCP = 1u << 12,  /* cached rows: a row's chunks copied into the row cache at once */
	CGH_CPA = 1u << 13,    /* cp.async copies into shared memory and their wait (REG, TILE, ROWCP) */
	CGH_ONLINE = 1u << 14, /* online sums (row_plan.c), with CGH_SPLIT: the stream entry's */
	CGH_MASK = 1u << 15,   /* the masked register class's element bits (fz_cmask, fz_pick) */
	CGH_HALFMATH = 1u << 16, /* exp, sigmoid, silu, division of f16/bf16 values (fz_exp_h ...) */
	CGH_RING = 1u << 17,   /* the stream entry's ring (row_ring.c; needs CGH_CPA) */
	CGH_DIVRH = 1u << 18,  /* CGH_DIVR's division of f16/bf16 values (needs CGH_HALFMATH) */
};
/* The kinds of compute type an op's text is written for (ir/sem.def). */
typedef enum CgKind { CG_F32, CG_F64, CG_I32, CG_I64, CG_BOOL, CG_KIND_COUNT } CgKind;

/* ---- writer.c ------------------------------------------------------------- */

/* Text with its indentation tracked: every line is indented to the current
 * depth (tabs), braces open and close a level. */
typedef struct CgW {
	StrBuf *sb;
	int depth;
} CgW;

void cw_init(CgW *w, StrBuf *sb, int depth);
/* One line at the current depth. */
void cw_line(CgW *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "TEXT {" at the current depth, then one level deeper. */
void cw_open(CgW *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "{" on a line of its own (a function's body, a scope), then one level deeper. */
void cw_begin(CgW *w);
/* One level up, then "}". */
void cw_close(CgW *w);
/* "} else {" one level up: the open block's else, at the same depth. */
void cw_else(CgW *w);
/* One level deeper or up, for a statement under an if without braces. */
void cw_in(CgW *w);
void cw_out(CgW *w);
/* "#pragma unroll" (preprocessor lines start in column 0). */
void cw_unroll(CgW *w);
/* Text already indented (another writer's), as it is. */
void cw_append(CgW *w, const StrBuf *text);

typedef struct Cg {
	const Plan *p;
	const Graph *g;
	Arena *a;
	Diag *d;
	CgW *w;                        /* where the current entry's text goes */
	CgModule *m;
	int ecap;                      /* capacity of m->entries */
	uint64_t helpers;              /* CGH_* bits of the current entry */
	uint8_t ophelp[OP_COUNT];      /* the current entry's: per op, 1 << CgKind for each
	                                  helper fz_<name> it uses */
	/* Scratch indexed by node, valid for the kernel being emitted. */
	const char **vname;            /* how the current scope names a node's value */
	int32_t *pin;                  /* PARAM_IN/PARAM_SCALAR index loading the node, or -1 */
	int32_t *mark, *mark2, *mark3; /* stamps for closures and sets */
	int32_t stamp;
	int32_t *ph;                   /* row kernels: reductions on the way from the leaves */
	int32_t *lastread;             /* row kernels: last pass reading a cached value, -1 */
	uint8_t *nflags;               /* row kernels: NK_* (rowint.h) */
	bool *store_cast;              /* casts the store rounds (cg_store_cast), by node */
	/* The kernel being emitted. */
	const Kernel *k;
	const char *kname;             /* its name as a C identifier */
	int kid;
	int vec;
	struct CgKernelInfo *info;
} Cg;

/* ---- cg.c ----------------------------------------------------------------- */

/* Start entry `<kernel>_<suffix>` of the current kernel, of this path, with
 * these arguments: its text goes to a writer of its own (c->w) and the
 * helpers it uses are counted from here until cg_end_entry. */
void cg_begin_entry(Cg *c, CgPath path, int K, const char *suffix, const CgArg *args, int nargs);
void cg_end_entry(Cg *c);
/* The current entry (between cg_begin_entry and cg_end_entry). */
const CgEntry *cg_entry(const Cg *c);
/* "extern "C" __global__ void ATTRS NAME(ARGS)" of the current entry, from
 * its arguments (names: cg_param_name, fz_ws, and cg_arg_name for the
 * launch plan's values). */
void cg_entry_signature(Cg *c, const char *attrs);
const char *cg_arg_name(Cg *c, const CgArg *a);
/* The comment that opens the current entry: the kernel (what it computes),
 * the path (how this entry runs it) and when cg_launch chooses it. */
void cg_entry_header(Cg *c, const char *kernel, const char *path);

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
/* A row reduction's accumulator: its C type (f16/bf16 and f32 sums in float,
 * integers in long long), its combining functor (fz_sum, fz_max, fz_min), its
 * identity, and the reduction's value from accumulator `acc` over `n`
 * elements (mean divides; bool extrema compare). */
const char *cg_acc_type(Cg *c, NodeId red);
const char *cg_acc_op(const Node *n);
const char *cg_acc_identity(Cg *c, NodeId red);
/* The reduction's argument in the current scope, cast to its accumulator's type. */
const char *cg_acc_arg(Cg *c, NodeId red);
const char *cg_acc_result(Cg *c, NodeId red, const char *acc, const char *n);
/* A cast to f16 or bf16 of a value computed in float that no node reads, only
 * an output stores (Cg.store_cast, cg.c): the store rounds it (fz_out), so
 * the cast writes a comment to w instead of a line and its value is its
 * operand's; true where it did. */
bool cg_store_cast(Cg *c, CgW *w, NodeId id);
/* The value of a node in the current scope: vname, or a literal constant. */
const char *cg_value(Cg *c, NodeId id);
/* Mark a new stamp; returns it. */
int32_t cg_new_stamp(Cg *c);
/* An internal error: the plan is not what the code generator expects. */
bool cg_internal(Cg *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
 * operand with these runs; its constants are declared now, in w (named after
 * px). */
const char *cg_offset(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                      CgW *w);
/* cg_offset in 32-bit unsigned arithmetic (its constants declared
 * unsigned, `var` an unsigned expression), for index spaces of fewer than
 * 2^32 elements, which the caller tests: a 64-bit division is a call of
 * about 100 instructions (SASS), a 32-bit one a few. */
const char *cg_offset_u32(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                          CgW *w);
/* How many divisions cg_offset_lambda makes: by the extents of runs[0 .. Q). */
int cg_offset_divisions(const CgRun *runs, int nr);
/* A pointwise kernel's broadcast operand: `auto px = [=](long long i, long
 * long &r, auto div)` giving the offset of element i of the kernel's index
 * space in an operand with these runs, and in r the position of i in the
 * operand's innermost run (a chunk of V elements from i stays in that run
 * when r + V <= its extent), dividing with div; declared in w with its
 * constants. Returns the innermost run's extent (the name of a constant). */
const char *cg_offset_lambda(Cg *c, const Kernel *k, const CgRun *runs, int nr, const char *px, CgW *w);
/* Chunk width: 16 bytes of the narrowest per-element stream, at most 8. */
int cg_vec_width(Cg *c, bool row);
/* Alignment a streamed pointer of dtype t needs for chunks of vec elements. */
int cg_vec_align(int vec, fz_dtype t);

/* ---- prelude.c, prelude_ops.c, prelude_row.c, prelude_reg.c ---------------- */

/* The prelude of a module whose entries use these pieces and op helpers. */
void cg_prelude(StrBuf *sb, uint64_t helpers, const uint8_t *ophelp);
/* The pieces (CUDA text) cg_prelude assembles, in its order. */
extern const char cg_pre_minmax[], cg_pre_round[], cg_pre_rcp[], cg_pre_halfmath[], cg_pre_divr[],
    cg_pre_divrh[];
extern const char cg_pre_acc[], cg_pre_row[], cg_pre_mask[], cg_pre_cpa[], cg_pre_ring[], cg_pre_reg[],
    cg_pre_rowcp[], cg_pre_split[], cg_pre_online[], cg_pre_tile[];
/* fz_<name> of one op for one kind, written from its text in ir/sem.def. */
void cg_sem_helper(StrBuf *sb, Op op, CgKind kind);
/* The kind of a dtype's compute type. */
CgKind cg_kind(fz_dtype t);
/* An op's text in ir/sem.def for a kind of operand (NULL if it has none);
 * *body: a function body rather than an expression. */
const char *cg_sem_text(Op op, CgKind kind, bool *body);
/* Whether a text names the identifier `id` as a whole word. */
bool cg_text_names(const char *text, const char *id);

/* ---- launch.c ------------------------------------------------------------- */

/* One line saying when cg_launch chooses entry e (the comment above it). */
const char *cg_entry_when(const CgModule *m, const CgEntry *e, Arena *a);
/* The bytes of a row's cache for segments of len elements, and the offset of
 * each slot in it (slot_off may be NULL): the layout the kernel is given. */
int64_t cg_cache_layout(const struct CgKernelInfo *ki, int64_t len, int64_t *slot_off);
/* TILE: the bytes of a block's tiles for R rows of n, and the offset of each
 * (off may be NULL): each R * n + V elements (the span and its alignment),
 * 16-byte aligned. */
int64_t cg_tile_layout(const struct CgKernelInfo *ki, const CgEntry *e, int64_t R, int64_t n, int64_t *off);
/* Does a TILE entry stage tile t through shared memory? Not the inputs in
 * the entries of a thread a row (direct: row_tile.c), which read them where
 * they are, and nothing in the entries of one row length (unstaged). */
bool cg_tile_staged(const struct CgKernelInfo *ki, bool direct, bool unstaged, int t);
/* Has the kernel per-element outputs of the rows' layout (tiles not inputs)? */
bool cg_tile_outputs(const struct CgKernelInfo *ki);
/* Does a thread of the entry of rows of `rowlen`, `rpt` rows a thread, take
 * adjacent rows and move each stream's span of them as whole vectors (its
 * bytes a power of two up to 16, or a multiple of 16: rows of 2, and of 4
 * halves; row_tile.c's row_tile_span)? Else a thread's rows are a block's
 * rows apart (row_emit.c's emit_row_loop). */
bool cg_tile_span(const struct CgKernelInfo *ki, int rowlen, int rpt);

/* ---- pointwise.c, row_emit.c ---------------------------------------------- */

bool cg_pointwise(Cg *c);
/* A row kernel's entry for rows of one element (POINTWISE, `_one`), with the
 * row paths' chunk width vec. */
bool cg_rows_of_one(Cg *c, int vec);
bool cg_row(Cg *c);

#endif
