/*
 * rowint.h: what the row-kernel files share.
 *
 * A row kernel is planned once (row_plan.c: phases, passes, the row cache,
 * the prefetch set, what cg_launch needs), then written once per path, each
 * entry by the same pass skeleton (row_emit.c) with the path's own pieces:
 * a RowPath says how that path declares its state, walks a row's chunks,
 * and combines a pass's partial results. Adding a path is a RowPath and its
 * file, an entry in row_emit.c's list, and a rule in launch_rules.c.
 */
#ifndef FUSEC_ROWINT_H
#define FUSEC_ROWINT_H

#include "codegen/cgint.h"

enum { NK_COLV = 1, NK_ROWVAR = 2, NK_SEEN = 4, NK_REMAT = 8, NK_ONLINE = 16 };

typedef struct Closure {
	NodeId *comp;   /* computed in the chunk loop, ascending */
	int ncomp;
	NodeId *leaf;   /* per-element leaves loaded from global memory */
	int nleaf, capleaf;
	NodeId *fread;  /* values of earlier passes (the cache, or recomputed) */
	int nfread, capfread;
} Closure;

typedef struct RowK RowK;

/* A path's part of a row entry. */
typedef struct RowPath {
	CgPath path;
	uint64_t helpers;       /* the prelude pieces it needs besides CGH_ROW */
	/* The entry's arguments after the kernel's parameters. */
	int (*args)(RowK *R, CgArg *args);
	/* What the path is (the entry's comment), its __launch_bounds__ or other attributes. */
	const char *(*describe)(RowK *R);
	/* Declarations before the loop over rows. */
	void (*prologue)(RowK *R, CgW *w);
	/* Declarations at the top of each row, before its row offsets. */
	void (*row_head)(RowK *R, CgW *w);
	/* Pass q's walk over this thread's chunks of the row. */
	bool (*chunks)(RowK *R, int q, const Closure *m, const NodeId *t, int nt);
	/* After pass q's block reductions of round `round` (row_round): combine
	 * the blocks of a row (or NULL). */
	void (*exchange)(RowK *R, int q, int round);
	/* After the row's body, at the end of each row of the block (or NULL). */
	void (*row_tail)(RowK *R, CgW *w);
	/* Per-row outputs are written by the group's first thread; of the first
	 * segment only, for split rows. */
	const char *row_store_cond;
	/* A row's chunks may be partial (any row length): loads, stores and
	 * reductions check each element of a chunk at the row's ends. false:
	 * the register path's and the row cache's classes for rows of a
	 * multiple of V. */
	bool masked;
	/* The row's chunks start where its primary stream is 16-byte aligned, row
	 * by row (fz_s elements before the row's start): any row alignment at
	 * full vector width. false: from the row's start (rows of a multiple of
	 * V at aligned addresses: cg_launch takes these classes only where
	 * every buffer is 16-byte aligned; or a row staged in shared memory,
	 * which needs no alignment). */
	bool shifted;
	/* The register path's lane class: chunks of one element (V = 1 while its
	 * entries are written), so that a group's accesses are coalesced at any
	 * alignment and which of a thread's elements lie in the row is the same
	 * in every row. */
	bool lane;
} RowPath;

extern const RowPath row_reg_path, row_regm_path, row_regl_path, row_loop_path, row_loopa_path, row_split_path,
	row_tile_path;

struct RowK {
	Cg *c;
	const Kernel *k;
	int r;                  /* domain rank */
	int vec;
	int P;                  /* passes before the epilogue */
	int rk;                 /* chunks a thread holds in registers (0: no register path) */
	int K;                  /* the entry being written: chunks a thread holds (REG: rk; TILE: its class) */
	int32_t rowc;           /* mark3 stamp: per-row values needed */
	bool stream;            /* planned without a row cache: every pass recomputes its values
	                           from the inputs (the _stream entry) */
	bool narrow;            /* planned for a row cache in memory (the ROW and SPLIT entries):
	                           light math of cached values recomputed too (plan_remat) */
	bool late;              /* inputs loaded, and values of them computed, by the first pass
	                           that reads them (plan_late): all entries but the aligned
	                           register class, which prefetches pass 0's inputs */
	bool pf_late;           /* register path, late plan (its masked class): the leaves that
	                           later passes read first prefetched too, each pass copying the
	                           next row's where it has read this one's (row_plan_prefetch) */
	int pf_room;            /* pf_late: the buffer's bytes (rk chunks of every thread), the
	                           first plan's, which the launch gives; leaves past it are not
	                           prefetched */
	NodeId *touched;        /* nodes whose scratch entries are set */
	int ntouched, captouched;
	NodeId *cached;         /* nodes with a cache slot, and their slots */
	int *cslot;
	int ncached;
	NodeId *pf;             /* register path: leaves prefetched a row ahead (fz_pf) */
	int *pf_off;            /* their buffers: bytes a thread of the block before each */
	int npf;
	NodeId *held;           /* register path: column operands loaded with the row, held (fz_h) */
	int nheld;
	int *lastload;          /* per param: the last pass that loads it in the entry without a
	                           row cache (-1: none, or another entry) */
	const char **roff;      /* per param: row offset expression "fz_r<d>", or NULL */
	int *rdecl;             /* per param: d, the parameter declaring that offset */
	int prim;               /* the stream whose alignment places a row's chunks (shifted paths), or -1 */
	bool *aligned;          /* per param: a per-element stream whose rows are aligned like prim's
	                           when the pointers are (same row offset); the others load whole
	                           chunks through fz_ldc */
	/* The entry being written. */
	const RowPath *path;
	int q;                  /* the pass being written (P: the epilogue) */
	int rowlen;             /* TILE: a thread a row (direct), its inputs read straight from global
	                           memory: its rows' length, a constant (0: a group a row, staged) */
	int rpt;                /* TILE, rowlen: rows a thread (2 or 4, adjacent, or 2 a block's rows apart:
	                           row_tile_span, cg_tile_rpt; else 1) */
	bool line;              /* REG: a line entry (`_line<K>`, launch_rules.c's line_rule): its
	                           rows loaded directly, never prefetched */
	bool hold;              /* REG: holds the column operands `held` (fz_h<id>) */
	bool slots;             /* REG, masked: holds them in shared memory instead, at the row's
	                           alignment (fz_c<id>, row_reg.c) */
	bool lean;              /* its kernel is lean (entries bound to 1024 threads; else 512) */
	bool red_inline;        /* its block reductions inlined (fz_reduce_in), not calls */
	bool red_group;         /* REG, a line entry of one chunk (launch_rules.c's line_rule): its
	                           reductions shuffles within the row's CG_LINE_THREADS, or 16
	                           (fz_reduce_group, fz_reduce_line), no shared memory */
	CgW *w;                 /* its body */
	bool *used;             /* per param: used by its code */
	bool *whole;            /* per param: loaded by fz_ldw (the masked register class), which
	                           reads the row's whole-chunk test fz_w<i> */
	int ring_bytes;         /* the stream entry: bytes of its ring a thread, the most of any
	                           pass (row_ring.c) */
	bool vec_test;          /* the aligned classes of kernels that read column operands test
	                           the launch's alignment anyway (row_emit.c's emit_vec_test) */
	const char *vec_arg;    /* the pass being written's answer to fz_vec: "fz_vec", or in
	                           ROW's aligned class with vec_test "true" and "false"
	                           (row_loop.c writes each pass for both) */
};

/* ---- row_plan.c ------------------------------------------------------------ */

/* Analyse and plan kernel c->k: phases, the row cache, row offsets,
 * prefetch, and c->info. false on an internal error. */
bool row_plan(RowK *R);
/* Forget the kernel's scratch flags. */
void row_reset(RowK *R);
bool row_is_red(const RowK *R, NodeId id);
bool row_is_colv(const RowK *R, NodeId id);
bool row_is_rowvar(const RowK *R, NodeId id);
/* A column-varying value of an earlier pass, which pass q reads from the
 * cache rather than computes. */
bool row_is_fread(const RowK *R, NodeId id, int q);
/* An online sum (row_plan.c's plan_online): sum(exp(u - max(u))) or
 * sum((u - mean(u))^2) accumulated in its partner's pass (max(u), mean(u)).
 * row_online_of gives its partner, or -1 for any other node; row_online_var
 * whether it is the second kind; row_has_online whether reduction m is the
 * partner of one. */
NodeId row_online_of(const RowK *R, NodeId s);
bool row_online_var(const RowK *R, NodeId s);
bool row_has_online(const RowK *R, NodeId m);
/* Is reduction red finished by pass q in round `round`: 1, all but the
 * online variances; 2, those, once their means are known (row_emit.c's
 * emit_finish)? */
bool row_in_round(const RowK *R, int q, NodeId red, int round);
/* Those reductions, in the order they are combined (an online sum of a max
 * after the max) into out; returns how many. */
int row_round(const RowK *R, int q, int round, NodeId *out);
/* The targets of pass q (operands of its reductions, per-element outputs of
 * its phase, values it caches) into t; returns how many. */
int row_targets(RowK *R, int q, NodeId *t);
/* Everything pass q computes for its targets. */
void row_closure(RowK *R, int q, const NodeId *t, int nt, Closure *out);
/* The cache slot of node id, or -1. */
int row_slot_of(const RowK *R, NodeId id);
/* Parameter i of kind `kind` loading or storing node id, or -1. */
int row_param_of(const RowK *R, NodeId id, ParamKind kind);
/* Is parameter i a per-element stream (an input or output with the row's last axis)? */
bool row_is_stream(const RowK *R, int i);
/* Has every per-element input the rows' layout, but for one column operand
 * (the same elements in every row, as rmsnorm's weight) in a kernel of one
 * pass before its epilogue? The line entries' kernels (row_emit.c,
 * launch_rules.c's line_rule says why). */
bool row_line_operands(const RowK *R);
/* Is leaf id cached as it is, in a stream whose chunks are the row's: the
 * cached paths' first pass copies it into the cache at once (row_loop.c)? */
bool row_is_copied(const RowK *R, NodeId id);
/* The TILE path: parameter i's tile (its index in CgKernelInfo.tile_param), or -1. */
int row_tile_of(const RowK *R, int i);
/* row_tile.c: is the entry being written a TILE entry of a thread a row,
 * its inputs read straight from global memory? */
bool row_tile_direct(const RowK *R);
/* And one of one row length (rowlen), which stages nothing? */
bool row_tile_unstaged(const RowK *R);
/* And of two adjacent rows a thread, moved as one span (cg_tile_span)? Its
 * loop writes the span's head and tail around the pair's rows. */
bool row_tile_span(const RowK *R);
/* Is the entry's one row length shorter than a vector, so that its other
 * streams' chunks (column operands) are never whole vectors: read element by
 * element, inline (fz_lde), with no alignment test? */
bool row_tile_elems(const RowK *R);
void row_tile_span_head(RowK *R, CgW *w);
void row_tile_span_tail(RowK *R, CgW *w);

/* ---- row_plan_reg.c: the register path's part of the plan ------------------- */

/* Chunks a thread of the register path holds (rk; 0: no register path). */
int row_plan_rk(RowK *R);
/* Most chunks a thread of the TILE path holds. */
int row_tile_kmax(const RowK *R);
/* The entries' thread bound (__launch_bounds__). */
int row_max_threads(RowK *R);
/* The leaves copied a row ahead and their buffers (R->pf, c->info->pf_bytes). */
void row_plan_prefetch(RowK *R);
/* The column operands the aligned class holds from pass 0 (R->held). */
void row_plan_hold(RowK *R);
/* Each leaf's last load in the entry. */
void row_plan_lastload(RowK *R);
bool row_is_pf(const RowK *R, NodeId id);
/* Does the entry being written prefetch leaf id (a REG entry, and in its
 * masked class a stream aligned with the row's chunks)? */
bool row_pf_here(const RowK *R, NodeId id);
/* Does the entry being written hold leaf id, a column operand, in registers
 * (fz_h<id>) or in its slots (fz_c<id>)? */
bool row_is_held(const RowK *R, NodeId id);
/* The register path's masked class of halves bound to 80 registers (FZ_MASKED_HALF_ROW)? */
bool row_masked_half(const RowK *R);
/* The register path's masked class of f32 rows that writes only values of each
 * row, bound to 40 registers (FZ_MASKED_REDUCE_ROW)? */
bool row_masked_reduce(const RowK *R);
/* Does the kernel write a row (an output of the rows' layout), not only values
 * of each row? */
bool row_writes_rows(const RowK *R);

/* ---- row_chunk.c ----------------------------------------------------------- */

/* Whether parameter i's chunks are loaded to stay in the caches (fz_ldk). */
bool row_keeps(const RowK *R, int i);
/* The pointer to a row of parameter i ("in_x + fz_r0"), marked used. */
const char *row_ptr(RowK *R, int i);
/* A chunk's V elements (the u-loop), with per-element checks (general
 * loops) or per-chunk partials (the register path). */
bool row_elements(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool reg);
/* The array holding node id's V values after the u-loop of a general loop
 * (for stores and cache writes). */
const char *row_value_array(RowK *R, NodeId id);
/* Shifted paths: the load of the chunk at j0 of stream i (`o`: the array),
 * and its store; `n` is the row's (or segment's) end. */
const char *row_load(RowK *R, int i, const char *o, const char *j0, const char *n);
/* The end of a row's loads and reductions in the register and staged paths:
 * fz_ei (0 past the last row), but the constant in an entry of one row
 * length (row_chunk.c says why). */
const char *row_end(const RowK *R);
const char *row_store(RowK *R, int i, const char *j0, const char *n, const char *o);
/* The reciprocals of the row's divisors of pass q's divisions (fz_rc<d>),
 * before its chunks. */
void row_recips(RowK *R, const Closure *m);

/* ---- the paths ----------------------------------------------------------- */

/* row_reg.c: rows in registers, K chunks a thread, shared with staged rows
 * (row_tile.c): the declarations before the loop over rows, a row's
 * registers, and pass q's chunks. */
void row_reg_start(RowK *R, CgW *w);
void row_reg_row(RowK *R, CgW *w);
/* Does the entry mask a chunk's elements by the bits of fz_mk (a masked
 * register entry of f32 rows), not by a bounds check an element? */
bool row_bitmask(const RowK *R);
bool row_reg_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt);

/* row_ring.c: the stream entry's ring, where row_ring_here says (chunks of 8
 * elements or more). row_ring_open opens pass m's loop over the thread's
 * chunks from `start` (its leaves read as l<id>[u]; the caller closes it);
 * row_ring_prologue declares the ring (after the body: only where
 * R->ring_bytes says a pass uses it). */
bool row_ring_here(const RowK *R);
void row_ring_open(RowK *R, const Closure *m, const char *start);
void row_ring_prologue(RowK *R, CgW *w);

/* row_loop.c: the general loop's chunks and cache pointers, shared with
 * split rows (seg: from the segment's start). */
bool row_loop_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool seg);
void row_cache_pointers(RowK *R, CgW *w, bool split);
int row_cache_args(RowK *R, CgArg *args);
/* Is the entry being written the row cache's aligned class (`_rowa`: chunks
 * from the row's start, every one whole)? */
bool row_loop_aligned(const RowK *R);

#endif
