/*
 * row_reg.c: the REG path, each row held in registers.
 *
 * cg_launch takes it for rows whose length is a multiple of V and at most
 * K chunks of V a thread of the row's group (K = rk, a compile-time class
 * of the entry): chunk k of a thread is j0 = fz_ji + k * fz_stepi, the
 * values later passes need live in fz_g<id>[k] instead of a row cache, a
 * chunk is all in the row or all past it (loads past the row read its
 * start, accumulation by one select a chunk, stores guarded), offsets are
 * 32-bit, and no per-element bounds check is left. Pass 0 issues every load
 * of a lone stream before it uses any (all of the thread's bytes in flight
 * at once), or, where row_plan.c chose to prefetch, reads its row from
 * shared memory, where it was copied while the block computed the row
 * before, and has the next row's copied there (cp.async); in the masked
 * class's pf_late plan a later pass does the same with the inputs it reads
 * first, a chunk at a time (emit_pf_late_loads), each pass's copies a group.
 *
 * It is what brought row kernels from about half of the floor to 80-94% on
 * the H200 (docs/performance.md).
 *
 * Two compile-time classes of each K: `_reg<K>` for rows of a multiple of V
 * (as above), and `_reg<K>m` (masked) for any length: a row's chunks start
 * at its primary stream's 16-byte boundary before it (fz_s, a row's own),
 * j0 = fz_ji + k * fz_stepi - fz_s, so its first chunk may start before the
 * row and its last end past it. Every chunk loads as one vector where the
 * row's chunks lie within the tensor (fz_ldw: all rows but the tensor's
 * first and last), those two element by element otherwise; they accumulate
 * masked (by fz_mk's bits in rows of f32, row_bitmask; fz_inrow otherwise)
 * and store element by element (fz_stm). Streams whose rows are not aligned
 * with the primary's load whole chunks from the aligned blocks that hold
 * them, or 4-byte elements one by one (fz_ldc), and are not prefetched.
 * Column operands read after the reductions (a layernorm's w and b) are
 * kept in slots instead, where the rows are prefetched (emit_slots).
 *
 * And `_reg<K>l` (lane, written with V = 1): rows of 65 to 1024 elements
 * not a multiple of V (and f32 rows that the aligned class would hold with
 * many chunks past the row), a warp a row (CG_LANE_THREADS), K (up to 32,
 * fz_mk's bits) elements a thread,
 * element j = threadIdx.x + 32 k: each access of the warp is one coalesced
 * load or store whatever the row's alignment, no chunk is partial, and
 * which elements lie in the row (fz_mk) depends on the thread alone, all
 * but its last by construction (emit_lane_mask). The masked class's
 * chunks of such rows start at each row's alignment and end past it: the
 * row's two partial chunks element by element, a mask an element set up
 * row by row, a group of a power of two threads of rk chunks half past the
 * row (131 f32: 16 threads of 4 chunks for 34); the aligned class's group
 * of rows of 300 f32, 32 threads of 4 chunks for 75. launch_rules.c's lane_rules
 * and lane_aligned say where it is taken, and why.
 */
#include "codegen/rowint.h"

static int reg_args(RowK *R, CgArg *args)
{
	(void)R, (void)args;
	return 0; /* no workspace: never split, no row cache */
}

static bool any_pf(RowK *R)
{
	for (int i = 0; i < R->npf; i++)
		if (row_pf_here(R, R->pf[i]))
			return true;
	return false;
}

/* Is leaf id prefetched by this entry and read first by pass q, which
 * then copies it a row ahead (pass 0, and in a pf_late plan later passes)? */
static bool pf_at(RowK *R, NodeId id, int q) { return row_pf_here(R, id) && R->c->ph[id] == q; }

/* Does pass q copy leaves a row ahead? */
static bool pf_in(RowK *R, int q)
{
	for (int i = 0; i < R->npf; i++)
		if (pf_at(R, R->pf[i], q))
			return true;
	return false;
}

/* The passes that copy leaves a row ahead. Where more than one does, each
 * commits its copies as a group, and waits for its own alone (fz_cpa_wait_but):
 * the others' groups, committed after it, may be in flight. */
static int pf_groups(RowK *R)
{
	int n = 0;
	for (int q = 0; q <= R->P; q++)
		n += pf_in(R, q);
	return n;
}

/* Wait for this pass's copies: all (one group), or its group alone. */
static void emit_pf_wait(RowK *R)
{
	int g = pf_groups(R);
	if (g > 1)
		cw_line(R->w, "fz_cpa_wait_but<%d>(); // this pass's copies, not the %d group%s committed since", g - 1,
		        g - 1, g > 2 ? "s" : "");
	else
		cw_line(R->w, "fz_cpa_wait();");
}

static void emit_pf_commit(RowK *R)
{
	if (pf_groups(R) > 1)
		cw_line(R->w, "fz_cpa_commit();");
}

static const char *reg_describe(RowK *R)
{
	if (R->path->lane)
		return arena_printf(R->c->a, "each row in registers, a warp a row, %d elements a thread, one at a time: "
		                             "element k of a thread at threadIdx.x + %d k", R->K, CG_LANE_THREADS);
	return arena_printf(R->c->a, "each row in registers, %d chunk%s of %d elements a thread%s%s%s", R->K,
	                    R->K == 1 ? "" : "s", R->vec,
	                    R->path->shifted ? ", starting at the row's alignment, its first and last masked" : "",
	                    any_pf(R) ? "; the next row prefetched into shared memory" : "",
	                    R->hold    ? "; the column operands its passes read held in registers"
	                    : R->slots ? "; the column operands its passes read kept in shared memory at the row's "
	                                 "alignment"
	                               : "");
}

/* The prefetch buffer: leaf pf[i] at pf_off[i] bytes of every thread of the
 * block, chunk k of a thread at fz_pf<id> + k * fz_pfk * V, so that a warp's
 * copies and reads are consecutive 16-byte pieces. */
static void emit_pf_buffer(RowK *R, CgW *w)
{
	Cg *c = R->c;
	cw_line(w, "const int fz_nr = (int)fz_n, fz_pfk = blockDim.x * blockDim.y;");
	cw_line(w, "const long long fz_rstep = (long long)gridDim.x * blockDim.y;");
	cw_line(w, "const int fz_tid = threadIdx.y * blockDim.x + threadIdx.x;");
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		const char *ty = cg_store_type((fz_dtype)c->g->nodes[id].dtype);
		if (!row_pf_here(R, id))
			continue;
		if (R->pf_off[i] == 0)
			cw_line(w, "%s *fz_pf%d = reinterpret_cast<%s *>(fz_smem) + fz_tid * %d;", ty, id, ty, R->vec);
		else
			cw_line(w, "%s *fz_pf%d = reinterpret_cast<%s *>(reinterpret_cast<unsigned char *>(fz_smem) + "
			           "fz_pfk * %d) + fz_tid * %d;", ty, id, ty, R->pf_off[i], R->vec);
	}
}

void row_reg_start(RowK *R, CgW *w)
{
	if (row_tile_direct(R)) /* chunk k at k * V: every load's offset a constant */
		cw_line(w, "const int fz_ji = 0, fz_stepi = %d; // a thread a row (blockDim.x is 1)", R->vec);
	else if (R->path->lane) /* the same: a constant apart, not 64-bit arithmetic an element */
		cw_line(w, "const int fz_ji = (int)threadIdx.x, fz_stepi = %d; // a warp a row (blockDim.x is %d)",
		        CG_LANE_THREADS, CG_LANE_THREADS);
	else
		cw_line(w, "const int fz_ji = (int)threadIdx.x * %d, fz_stepi = (int)blockDim.x * %d;", R->vec, R->vec);
}

/* "for (int k ...) {" over the thread's chunks, with j0 declared (in the
 * masked class, shifted by the row's fz_s, or the next row's fz_sn) unless
 * `bare` (a masked loop that neither loads nor stores: fz_mk masks it). */
static void open_chunks_of(RowK *R, CgW *w, const char *shift, bool bare)
{
	cw_unroll(w);
	cw_open(w, "for (int k = 0; k < %d; k++)", R->K);
	if (bare)
		return;
	if (R->path->shifted)
		cw_line(w, "const int j0 = fz_ji + k * fz_stepi - %s;", shift);
	else
		cw_line(w, "const int j0 = fz_ji + k * fz_stepi;");
}

static void open_chunks(RowK *R, CgW *w, const char *shift) { open_chunks_of(R, w, shift, false); }

/* The held column operands' chunks (row_plan_reg.c's row_plan_hold), as stored; a
 * pass unpacks them where it reads them (emit_chunk_loads). The aligned
 * class's chunks of a thread are the same in every row: the entries that
 * loop over rows (rows of halves, prefetched: as many blocks as are
 * resident) load them once, before the block's rows; the lean kernels'
 * `_reg<K>h`, whose blocks take a row (group) each, in pass 0 just after
 * the row's own loads, which keeps them out of the registers live across
 * the row loop (ptxas: layernorm f32's `_reg4h` 76 registers, not 83).
 * Past the row (a group wider than it): its start, never used. */
static bool held_per_row(const RowK *R) { return R->c->info->reg_hold; }

static void emit_held_decl(RowK *R, CgW *w)
{
	Cg *c = R->c;
	cw_line(w, "// the column operands the passes read, held (the same chunks in every row)");
	for (int h = 0; h < R->nheld; h++) {
		NodeId id = R->held[h];
		cw_line(w, "::fz_vec<%s, %d> fz_h%d[%d];", cg_store_type((fz_dtype)c->g->nodes[id].dtype), R->vec, id, R->K);
	}
}

static void emit_held_loads(RowK *R, CgW *w)
{
	Cg *c = R->c;
	open_chunks(R, w, "fz_s");
	cw_line(w, "const int jl = j0 < fz_n ? j0 : 0;");
	for (int h = 0; h < R->nheld; h++)
		cw_line(w, "fz_ldh(fz_h%d[k], %s, jl, fz_vec);", R->held[h], cg_param_name(c, c->pin[R->held[h]]));
	cw_close(w);
}

static bool holds(const RowK *R) { return R->nheld > 0 && row_is_held(R, R->held[0]); }

/* The masked class's slots: a thread's chunks of the held column
 * operands, as stored, in shared memory after the prefetch buffer (chunk k
 * of a thread at fz_c<id> + k * fz_pfk * V, as the buffer's), for the
 * alignment fz_sl of a row (its fz_s). A row of another alignment fills
 * them again, at its top, before its values are live (emit_slot_fill);
 * the launch cuts a resident grid to a multiple of CG_SLOT_GRID, so that
 * every row a thread takes has the alignment of its first, and they are
 * filled once. The epilogue then reads a chunk with one 16-byte load from
 * shared memory, where it loaded each element from memory after the row's
 * reductions: H200, layernorm f16 5590x3001 37.3 -> 29.7 us, bf16 1676x10007
 * 44.9 -> 30.1 (docs/performance.md, "The masked class of halves"). */
static void emit_slots(RowK *R, CgW *w)
{
	Cg *c = R->c;
	int off = c->info->pf_bytes;
	for (int h = 0; h < R->nheld; h++) {
		NodeId id = R->held[h];
		const char *ty = cg_store_type((fz_dtype)c->g->nodes[id].dtype);
		cw_line(w, "%s *fz_c%d = reinterpret_cast<%s *>(reinterpret_cast<unsigned char *>(fz_smem) + fz_pfk * %d) + "
		           "fz_tid * %d;", ty, id, ty, off, R->vec);
		off += R->K * 16;
	}
	cw_line(w, "int fz_sl = -1; /* the row alignment (fz_s) the slots hold */");
}

static void emit_slot_fill(RowK *R, CgW *w)
{
	Cg *c = R->c;
	cw_line(w, "// the column operands' chunks at this row's alignment, unless the slots hold them");
	cw_open(w, "if (fz_s != fz_sl)");
	cw_line(w, "fz_sl = fz_s;");
	open_chunks(R, w, "fz_s");
	for (int h = 0; h < R->nheld; h++) {
		NodeId id = R->held[h];
		cw_line(w, "%s c%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		cw_line(w, "%s", row_load(R, c->pin[id], arena_printf(c->a, "c%d", id), "j0", "fz_nr"));
		cw_line(w, "fz_cst(fz_c%d + k * fz_pfk * %d, c%d);", id, R->vec, id);
	}
	cw_close(w);
	cw_close(w);
}

static void emit_held(RowK *R, CgW *w)
{
	if (R->slots) {
		emit_slots(R, w);
		return;
	}
	if (!holds(R) || held_per_row(R))
		return;
	emit_held_decl(R, w);
	emit_held_loads(R, w);
}

/* The lane class's elements in the row, fz_mk's bits, once: a lane entry
 * of K takes rows of 32 (K - 1) + 1 to 32 K elements (launch.c), so every
 * element of a thread but its last lies in the row, and NVVM, seeing those
 * bits constant, drops their tests (the loads, the reductions' fz_pick, the
 * stores); the last element's bit is set where the row reaches it. */
static void emit_lane_mask(RowK *R, CgW *w)
{
	int last = R->K - 1;
	R->c->helpers |= CGH_MASK; /* fz_pick */
	cw_line(w, "const unsigned fz_mk = 0x%xu | (fz_ji + %d < (int)fz_n ? 0x%xu : 0u); /* bit k: element k lies in "
	           "the row (all but the last: rows of %d to %d) */",
	        (1u << last) - 1, CG_LANE_THREADS * last, 1u << last, CG_LANE_THREADS * last + 1, CG_LANE_THREADS * R->K);
}

static void reg_prologue(RowK *R, CgW *w)
{
	bool pf = any_pf(R);
	if (pf)
		cw_line(w, "extern __shared__ fz_a16 fz_smem[];");
	row_reg_start(R, w);
	if (R->path->lane)
		emit_lane_mask(R, w);
	if (pf)
		emit_pf_buffer(R, w);
	emit_held(R, w);
}

/* The register path's masked class of rows of 4-byte values takes which of
 * a thread's elements lie in the row once a row, a bit each (fz_mk, at most
 * K * V = 16), and masks each element of a chunk's accumulation by its bit
 * (fz_pick) instead of a bounds check, which NVVM kept from pass to pass in
 * a register, two instructions an element, and branched around each
 * element's math. H100, one call, `bench/row_shapes.py --reps 100`, before
 * -> after (us): softmax f32 8381x1001 30.2 -> 27.9, 2047x4099 31.1 ->
 * 28.4, logsumexp f32 16744x1001 34.1 -> 29.9, log_softmax f32 8381x1001
 * 30.8 -> 27.8, rmsnorm f32 2047x4099 30.6 -> 29.3. Not for halves (32
 * elements a thread): masked_softmax f16 4x16x256x999 56.7 -> 62.7, softmax
 * f16 4094x4099 49.7 -> 50.9; nor for the tiles of short rows, whose few
 * elements a thread pay the bits' set-up a row: softmax f32 1198373x7 30.8
 * -> 34.5, bcast3 8x139811x7 33.4 -> 38.1 (docs/performance.md). */
bool row_bitmask(const RowK *R)
{
	return R->path->path == CG_PATH_REG && R->path->masked && R->vec <= 4 && R->K * R->vec <= 32;
}

/* The elements of leaf id's tensor (a product of its dims), which bounds
 * the chunks fz_pfm may copy whole. */
static const char *leaf_numel(RowK *R, NodeId id)
{
	const Node *n = &R->c->g->nodes[id];
	StrBuf sb;
	sb_init(&sb, R->c->a);
	sb_puts(&sb, "1LL");
	for (int i = 0; i < n->rank; i++)
		if (n->shape[i] != 1)
			sb_printf(&sb, " * %s", cg_dim_expr(R->c, R->k, n->shape[i]));
	return sb_str(&sb);
}

/* fz_w<i> for each stream masked_load read (written after the passes, placed
 * before them): whether the row's K chunks a thread of the group, from its
 * alignment, lie within the tensor. */
static void emit_whole_tests(RowK *R, CgW *w)
{
	Cg *c = R->c;
	for (int i = 0; i < R->k->nparams; i++) {
		if (!R->whole[i])
			continue;
		const char *off = R->roff[i] ? arena_printf(c->a, "fz_r%d", R->rdecl[i]) : "0LL";
		cw_line(w, "const bool fz_w%d = fz_v%d && %s - fz_s >= 0 && %s - fz_s + (long long)fz_stepi * %d <= %s;", i,
		        i, off, off, R->K, leaf_numel(R, R->k->params[i].node));
	}
}

void row_reg_row(RowK *R, CgW *w)
{
	Cg *c = R->c;
	/* (row_end: an entry of one length tests it only in its stores, of its output tiles) */
	if ((!R->rowlen || cg_tile_outputs(c->info)) && !R->path->lane)
		cw_line(w, "const int fz_ei = fz_act ? (int)fz_n : 0;");
	if (row_bitmask(R) && !R->path->lane) { /* the elements in the row, for emit_accumulate's ACC_MASKED */
		c->helpers |= CGH_MASK;
		cw_line(w, "unsigned fz_mk = 0; /* bit k * %d + u: element u of chunk k lies in the row */", R->vec);
		open_chunks(R, w, "fz_s");
		cw_line(w, "fz_mk |= fz_cmask<%d>(j0, %s) << (k * %d);", R->vec, row_end(R), R->vec);
		cw_close(w);
	}
	emit_whole_tests(R, w);
	if (R->slots)
		emit_slot_fill(R, w);
	if (holds(R) && held_per_row(R))
		emit_held_decl(R, w);
	for (int i = 0; i < R->ncached; i++) {
		const Node *n = &c->g->nodes[R->cached[i]];
		cw_line(w, "%s fz_g%d[%d][%d];", cg_compute_type((fz_dtype)n->dtype), R->cached[i], R->K, R->vec);
	}
}

static void load_start(CgW *w) { cw_line(w, "const int jl = j0 < fz_ei ? j0 : 0; /* past the row: load its start */"); }

/* fz_ldr's and fz_str's `Call`: a misaligned row's elements through a call,
 * but in lean entries (prelude.c says why). */
static const char *fallback_call(const RowK *R) { return R->lean ? "false" : "true"; }

/* The load of a masked row's chunk of parameter p into array o: fz_ldw for
 * the streams aligned with the primary in the shifted class (whole chunks
 * within the tensor, the row's ends too), row_load's otherwise. */
static const char *masked_load(RowK *R, int p, const char *o)
{
	Cg *c = R->c;
	if (!R->path->shifted || !R->aligned[p])
		return row_load(R, p, o, "j0", row_end(R));
	R->whole[p] = true;
	return arena_printf(c->a, "fz_ldw(%s, %s, j0, fz_ei, fz_v%d, fz_w%d);", o, row_ptr(R, p), p, p);
}

/* The load of chunk k of parameter p into array o: of an aligned row (past
 * the row: its start), or masked. */
static void emit_load(RowK *R, int p, const char *o)
{
	if (R->path->masked) {
		cw_line(R->w, "%s", masked_load(R, p, o));
		return;
	}
	load_start(R->w);
	cw_line(R->w, "fz_ldr<%s>(%s, %s, jl, fz_vec);", fallback_call(R), o, row_ptr(R, p));
}

/* The copy of chunk k (element j of the row) of prefetched leaf id for the
 * row at offsets `off` ("fz_r": this one, "fz_q": the next). */
static void emit_pf_copy(RowK *R, NodeId id, const char *off, const char *j)
{
	Cg *c = R->c;
	int p = c->pin[id];
	bool next = off[3] == 'q';
	row_ptr(R, p); /* marks it used */
	if (R->path->shifted)
		cw_line(R->w, "fz_pfm<%d>(fz_pf%d + k * fz_pfk * %d, %s, %s%d, %s, %s, fz_nr, fz_v%s%d);", R->vec, id,
		        R->vec, cg_param_name(c, p), off, R->rdecl[p], leaf_numel(R, id), j, next ? "n" : "", p);
	else
		cw_line(R->w, "fz_pf<%d>(fz_pf%d + k * fz_pfk * %d, %s + %s%d, %s, fz_vec);", R->vec, id, R->vec,
		        cg_param_name(c, p), off, R->rdecl[p], j);
}

/* The copies of the chunks of the leaves pass q prefetches for the row at
 * offsets `off`. */
static void emit_pf_issue(RowK *R, const char *off, int q)
{
	CgW *w = R->w;
	open_chunks(R, w, off[3] == 'q' ? "fz_sn" : "fz_s");
	cw_open(w, "if (j0 < fz_nr)");
	for (int i = 0; i < R->npf; i++)
		if (pf_at(R, R->pf[i], q))
			emit_pf_copy(R, R->pf[i], off, "j0");
	cw_close(w);
	cw_close(w);
}

/* Pass 0 reads its prefetched leaves from the buffer (the block's first row
 * copies its own first), then has the next row's copied while it computes
 * this one: the block's loads stay in flight across its reductions and
 * epilogue. */
static void emit_prefetched(RowK *R)
{
	Cg *c = R->c;
	CgW *w = R->w;
	cw_line(w, "// the block's first row was not prefetched: copy it now");
	cw_open(w, "if (fz_rb == (long long)blockIdx.x * blockDim.y)");
	for (int q = 0; q <= R->P; q++)
		if (pf_in(R, q)) {
			emit_pf_issue(R, "fz_r", q);
			emit_pf_commit(R);
		}
	cw_close(w);
	emit_pf_wait(R);
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		if (pf_at(R, id, 0))
			cw_line(w, "%s l%d[%d][%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->K, R->vec);
	}
	cw_unroll(w);
	cw_open(w, "for (int k = 0; k < %d; k++)", R->K);
	for (int i = 0; i < R->npf; i++) {
		NodeId id = R->pf[i];
		if (!pf_at(R, id, 0))
			continue;
		cw_line(w, "fz_cld(l%d[k], fz_pf%d + k * fz_pfk * %d);", id, id, R->vec);
		c->vname[id] = arena_printf(c->a, "l%d[k][u]", id);
	}
	cw_close(w);
	cw_line(w, "// the next row's copies, while this one is computed");
	cw_open(w, "if (fz_rb + fz_rstep < fz_rows)");
	emit_pf_issue(R, "fz_q", 0);
	cw_close(w);
	emit_pf_commit(R);
}

/* In a later pass q (of a pf_late plan), chunk k of the leaves it
 * prefetches: read from the buffer where the chunk is used (not all of a
 * thread's chunks at once, which would hold them all in registers), then
 * the next row's copied into its place (in the masked class, at the next
 * row's alignment: chunk k's element jn of that row). */
static void emit_pf_late_loads(RowK *R, int q, const Closure *m)
{
	Cg *c = R->c;
	CgW *w = R->w;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (!pf_at(R, id, q))
			continue;
		cw_line(w, "%s l%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		cw_line(w, "fz_cld(l%d, fz_pf%d + k * fz_pfk * %d);", id, id, R->vec);
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
	const char *j = "j0";
	cw_line(w, "// the next row's chunk, into its place");
	if (R->path->shifted) {
		cw_line(w, "const int jn = fz_ji + k * fz_stepi - fz_sn;");
		j = "jn";
	}
	cw_open(w, "if (fz_rb + fz_rstep < fz_rows && %s < fz_nr)", j);
	for (int i = 0; i < m->nleaf; i++)
		if (pf_at(R, m->leaf[i], q))
			emit_pf_copy(R, m->leaf[i], "fz_q", j);
	cw_close(w);
}

/* A lone stream of pass 0: every chunk's load issued before any is used. */
static void emit_hoisted(RowK *R, NodeId id)
{
	Cg *c = R->c;
	CgW *w = R->w;
	cw_line(w, "%s l%d[%d][%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->K, R->vec);
	open_chunks(R, w, "fz_s");
	emit_load(R, c->pin[id], arena_printf(c->a, "l%d[k]", id));
	cw_close(w);
	c->vname[id] = arena_printf(c->a, "l%d[k][u]", id);
}

/* The array of chunk k holding node id's values (`whole`: the leaves of
 * this pass are held for every chunk, l<id>[k]). */
static const char *reg_array(RowK *R, NodeId id, int q, bool whole)
{
	Cg *c = R->c;
	if (!cg_is_leaf(c, id))
		return arena_printf(c->a, "v%d", id);
	if (row_is_held(R, id))
		return arena_printf(c->a, "l%d", id);
	bool held = whole && (!any_pf(R) || (q == 0 && row_pf_here(R, id)));
	return arena_printf(c->a, held ? "l%d[k]" : "l%d", id);
}

/* Loads of the chunk's leaves not already held. */
static void emit_chunk_loads(RowK *R, int q, const Closure *m)
{
	Cg *c = R->c;
	CgW *w = R->w;
	bool first = true;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		if (row_is_held(R, id)) { /* unpacked (row_ptr marks the parameter used: fz_vec tests it) */
			row_ptr(R, c->pin[id]);
			cw_line(w, "%s l%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
			if (R->slots)
				cw_line(w, "fz_cld(l%d, fz_c%d + k * fz_pfk * %d);", id, id, R->vec);
			else
				cw_line(w, "fz_unpack(l%d, fz_h%d[k]);", id, id);
			c->vname[id] = arena_printf(c->a, "l%d[u]", id);
			continue;
		}
		if (pf_at(R, id, q))
			continue; /* emit_prefetched, emit_pf_late_loads */
		cw_line(w, "%s l%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		if (R->path->masked)
			cw_line(w, "%s", masked_load(R, c->pin[id], arena_printf(c->a, "l%d", id)));
		else {
			if (first)
				load_start(w);
			cw_line(w, "fz_ldr<%s>(l%d, %s, jl, fz_vec);", fallback_call(R), id, row_ptr(R, c->pin[id]));
		}
		first = false;
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
}

/* Does pass q's chunk loop store parameter i (an output of the rows' shape)? */
static bool stores_at(RowK *R, int i, int q)
{
	const KParam *kp = &R->k->params[i];
	return kp->kind == PARAM_OUT && row_is_colv(R, kp->node) && R->c->ph[kp->node] == q;
}

static bool stores_in(RowK *R, int q)
{
	for (int i = 0; i < R->k->nparams; i++)
		if (stores_at(R, i, q))
			return true;
	return false;
}

/* Does it load a leaf (emit_chunk_loads)? */
static bool loads_in(RowK *R, int q, const Closure *m, bool hoist)
{
	for (int i = 0; !hoist && i < m->nleaf; i++)
		if (!(q == 0 && row_pf_here(R, m->leaf[i])) && !row_is_held(R, m->leaf[i]))
			return true;
	return false;
}

bool row_reg_chunks(RowK *R, int q, const Closure *m, const NodeId *t, int nt)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	CgW *w = R->w;
	bool pf = any_pf(R);
	if (q == 0 && pf)
		emit_prefetched(R);
	bool hoist = q == 0 && m->nleaf == 1 && !pf && !row_is_held(R, m->leaf[0]);
	if (hoist)
		emit_hoisted(R, m->leaf[0]);
	if (q == 0 && holds(R) && held_per_row(R))
		emit_held_loads(R, w);
	bool late_pf = q > 0 && pf_in(R, q);
	if (late_pf)
		emit_pf_wait(R);
	bool whole = hoist || (q == 0 && pf);
	open_chunks_of(R, w, "fz_s", row_bitmask(R) && !loads_in(R, q, m, hoist) && !stores_in(R, q));
	if (!hoist)
		emit_chunk_loads(R, q, m);
	if (late_pf)
		emit_pf_late_loads(R, q, m);
	for (int i = 0; i < m->nfread; i++)
		c->vname[m->fread[i]] = arena_printf(c->a, "fz_g%d[k][u]", m->fread[i]);
	if (!row_elements(R, q, m, t, nt, true))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (!stores_at(R, i, q))
			continue;
		cw_line(w, R->path->lane ? "if (fz_act && (fz_mk >> k & 1u))" : "if (j0 < fz_ei)");
		cw_in(w);
		if (R->path->masked)
			cw_line(w, "%s", row_store(R, i, "j0", "fz_ei", reg_array(R, kp->node, q, whole)));
		else
			cw_line(w, "fz_str<%s>(%s, j0, fz_vec, %s);", fallback_call(R), row_ptr(R, i),
			        reg_array(R, kp->node, q, whole));
		cw_out(w);
	}
	for (int i = 0; i < R->ncached; i++)
		if (c->ph[R->cached[i]] == q)
			cw_line(w, "fz_mv(fz_g%d[k], %s);", R->cached[i], reg_array(R, R->cached[i], q, whole));
	cw_close(w);
	if (late_pf)
		emit_pf_commit(R);
	return true;
}

const RowPath row_reg_path = {
	.path = CG_PATH_REG,
	.helpers = CGH_REG | CGH_CPA,
	.args = reg_args,
	.describe = reg_describe,
	.prologue = reg_prologue,
	.row_head = row_reg_row,
	.chunks = row_reg_chunks,
	.exchange = NULL,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = false,
	.shifted = false,
};

const RowPath row_regm_path = {
	.path = CG_PATH_REG,
	.helpers = CGH_REG | CGH_CPA,
	.args = reg_args,
	.describe = reg_describe,
	.prologue = reg_prologue,
	.row_head = row_reg_row,
	.chunks = row_reg_chunks,
	.exchange = NULL,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = true,
	.shifted = true,
};

const RowPath row_regl_path = {
	.path = CG_PATH_REG,
	.helpers = CGH_REG,
	.args = reg_args,
	.describe = reg_describe,
	.prologue = reg_prologue,
	.row_head = row_reg_row,
	.chunks = row_reg_chunks,
	.exchange = NULL,
	.row_tail = NULL,
	.row_store_cond = "fz_act && threadIdx.x == 0",
	.masked = true,
	.shifted = false,
	.lane = true,
};
