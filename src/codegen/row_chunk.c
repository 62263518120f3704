/*
 * row_chunk.c: a row kernel's chunk, whatever the path: the values of its V
 * elements (the u-loop), their accumulation into the pass's reductions
 * (online sums too), and the loads and stores of its streams with the
 * caches' hints. The paths' chunk loops (row_reg.c, row_loop.c,
 * row_tile.c) call row_elements between their loads and their stores;
 * row_emit.c writes the passes around them.
 */
#include "codegen/rowint.h"

#include <string.h>

/* ---- loads and stores ---------------------------------------------------------------- */

/* Whether parameter i's chunks are loaded to stay in the caches (prelude.c,
 * fz_ldk): a column operand, the same for every row (layernorm's weight),
 * in the general loops (a row cache, or split rows), not in the register
 * and tile paths, nor in the entry without a row cache. The first two hold
 * short rows (a column of up to 16K halves, which the L2 keeps anyway) and
 * there the hint's load, an asm volatile that NVVM must leave in place,
 * won some and lost others by as much (H200, bench/replay_ab.py, one call:
 * rmsnorm bf16 4096x4096 -3.9%, layernorm bf16 4095x4096 -4.9%, rmsnorm
 * f32 66052x127 -4.8%, against add_rmsnorm bf16 +2.5% to +7.3% and rmsnorm
 * f32 1198373x7 +5.3%; the L2 hint alone, without the L1's, the same); the
 * stream entry reads its rows again from the L2 that kept columns would
 * crowd (layernorm f32 8x1000003 39.0 -> 40.4 us). In the general loops,
 * rows of 10K elements and more: layernorm bf16 511x32768 35.3 -> 33.3,
 * layernorm f16 333x50257 52.2 -> 47.4, rmsnorm bf16 334x50257 38.2 -> 35.3,
 * rmsnorm f32 256x32768 27.6 -> 25.4 (docs/performance.md, "Landed: packed
 * chunks, kept columns, magic numbers"). */
bool row_keeps(const RowK *R, int i)
{
	int path = R->path->path;
	return !R->roff[i] && !R->stream && (path == CG_PATH_ROW || path == CG_PATH_SPLIT);
}

/* The hint of parameter i's loads in the pass being written, in the entry
 * without a row cache, which loads a row's streams from global memory in
 * every pass that reads them: kept (evict_last, fz_ldk) where a later pass
 * loads them again, leaving first (evict_first, fz_ldlv) in the last pass
 * that does; its outputs are stored so that the caches do not keep them
 * (st.global.cs, row_store). The L2 then holds the chunks that will be read
 * again against the outputs and the chunks read for the last time, as
 * torch.compile's kernels ask it to. Measured on the H200 (bench/cubin_lab.py,
 * one call, rmsnorm bf16 4x4194304, µs): 43.4 as before; kept 41.4; kept and
 * streamed stores 41.1; all three 40.4; the stores alone 44.1, stores and
 * last loads 42.5 (docs/performance.md, "Split rows: cache hints"). */
typedef enum { HINT_NONE, HINT_KEEP, HINT_LAST } Hint;

static Hint row_hint(const RowK *R, int i)
{
	if (row_keeps(R, i))
		return HINT_KEEP;
	if (!R->stream || !R->roff[i] || R->lastload[i] < 0)
		return HINT_NONE;
	return R->q < R->lastload[i] ? HINT_KEEP : HINT_LAST;
}

const char *row_ptr(RowK *R, int i)
{
	R->used[i] = true;
	const char *name = cg_param_name(R->c, i);
	return R->roff[i] ? arena_printf(R->c->a, "%s + %s", name, R->roff[i]) : name;
}

/* In an entry of one row length a thread past the last row computes on the
 * last row's values (its loads clamped there) with every bound the
 * constant, so that each element's test of the row's end is decided at
 * compile time; only its stores test fz_ei (its per-row values fz_act).
 * Measured on the H200 (bench/replay_ab.py, fz_ei -> the constant, us):
 * softmax f16 1290555x13 28.0 -> 26.0, f32 645277x13 21.8 -> 20.2, 838861x10
 * 20.5 -> 19.4, logsumexp f32 2097152x7 19.3 -> 18.2, softmax f16
 * 1048576x16 24.6 -> 24.2; 12 of 13 staged shapes 0.93-1.00x, but
 * log_softmax bf16 1198373x14 23.0 -> 23.7. The register path's lane class
 * does the same: which elements of a thread lie in the row is then the same
 * in every row, set up once. */
const char *row_end(const RowK *R) { return R->rowlen || R->path->lane ? "(int)fz_n" : "fz_ei"; }

const char *row_load(RowK *R, int i, const char *o, const char *j0, const char *n)
{
	if (R->path->path == CG_PATH_TILE && row_tile_of(R, i) >= 0) {
		if (row_tile_span(R))
			return arena_printf(R->c->a, "fz_spld<%d>(%s, fz_sp%d, fz_p, %s);", R->rowlen, o, i, j0);
		return arena_printf(R->c->a, "%s(%s, fz_tr%d, %s, %s);", row_tile_direct(R) ? "fz_gld" : "fz_tld", o, i, j0,
		                    n);
	}
	const char *ptr = row_ptr(R, i);
	if (R->path->lane) /* one element, in the row or not (fz_mk's bit): no vector, no call */
		return arena_printf(R->c->a, "fz_ld1(%s, %s, %s, fz_mk >> k & 1u);", o, ptr, j0);
	/* a column operand of an entry of one row length: all of it, the rows
	 * past the last too (their values unused), so that its bound is the
	 * constant, not fz_ei: no partial chunk where the row has none */
	if (R->rowlen && !R->roff[i])
		n = "(int)fz_n";
	if (row_tile_elems(R))
		return arena_printf(R->c->a, "fz_lde(%s, %s, %s, %s);", o, ptr, j0, n);
	Hint hint = row_hint(R, i);
	bool keep = hint == HINT_KEEP;
	if (row_loop_aligned(R)) /* whole chunks */
		return arena_printf(R->c->a, "fz_ldr<true%s>(%s, %s, %s, %s);", keep ? ", true" : "", o, ptr, j0, R->vec_arg);
	if (R->aligned[i] || !R->path->shifted) /* chunks from the row's start: a column operand's too */
		return arena_printf(R->c->a, "fz_ldm%s(%s, %s, %s, %s, fz_v%d);",
		                    keep ? "<true>" : hint == HINT_LAST ? "<false, true>" : "", o, ptr, j0, n, i);
	/* halves one by one in the register path's rows (prelude.c, fz_ldc),
	 * which keep nothing (row_keeps) */
	const char *how = R->path->path == CG_PATH_REG ? "<true>" : keep ? "<false, true>" : "";
	return arena_printf(R->c->a, "fz_ldc%s(%s, %s, %s, %s);", how, o, ptr, j0, n);
}

const char *row_store(RowK *R, int i, const char *j0, const char *n, const char *o)
{
	if (R->path->path == CG_PATH_TILE && row_tile_of(R, i) >= 0) {
		if (row_tile_span(R))
			return arena_printf(R->c->a, "fz_spst<%d>(fz_sp%d, fz_p, %s, %s);", R->rowlen, i, j0, o);
		return arena_printf(R->c->a, "fz_tst(fz_tr%d, %s, %s, %s);", i, j0, n, o);
	}
	const char *ptr = row_ptr(R, i);
	if (R->path->lane) /* (its caller tests the bound) */
		return arena_printf(R->c->a, "fz_st1(%s, %s, %s);", ptr, j0, o);
	if (row_loop_aligned(R))
		return arena_printf(R->c->a, "fz_strg(%s, %s, %s, %s);", ptr, j0, R->vec_arg, o);
	return arena_printf(R->c->a, "fz_stm%s(%s, %s, %s, %s, %s);", R->stream ? "<true>" : "", ptr, j0, n,
	                    R->aligned[i] ? arena_printf(R->c->a, "fz_v%d", i) : "false", o);
}

/* ---- a chunk ------------------------------------------------------------------------- */

/* A float division by a value of the row (softmax's e / sum(e)): divided
 * by the row's reciprocal and corrected (fz_divr, bit for bit IEEE), not by
 * an IEEE division an element. Measured on the H200: masked softmax f16
 * 4x16x256x1024 76.6 -> 45.8 us, whose masked elements (exp = 0) each took
 * the IEEE division's slow path; softmax f16 8192x4096 64.7 -> 63.7. A
 * quotient of halves is the product alone (fz_divrh, fz_divqh: the
 * f16/bf16 math of prelude_ops.c): masked softmax 21.8 -> 19.5 us more;
 * where the divisor has no reciprocal, the halves' division inline
 * (fz_div_h), not an IEEE division's call, whose register convention
 * spilled or held registers: softmax f16 132105x127 (`_tile2`, 48 -> 44
 * registers) 29.4 -> 27.8 us, and the line entries of halves, 32
 * registers, spilled none (launch_rules.c's line_rule). */
static bool row_div(const RowK *R, const Node *n)
{
	return n->op == OP_DIV && !strcmp(cg_compute_type((fz_dtype)n->dtype), "float") && !row_is_colv(R, n->args[1]);
}

/* The reciprocals of the row's divisors of pass q's divisions, before its
 * chunks (fz_rc<d>, once a row). */
void row_recips(RowK *R, const Closure *m)
{
	Cg *c = R->c;
	int32_t s = cg_new_stamp(c);
	for (int i = 0; i < m->ncomp; i++) {
		const Node *n = &c->g->nodes[m->comp[i]];
		if (!row_div(R, n) || c->mark2[n->args[1]] == s)
			continue;
		c->mark2[n->args[1]] = s;
		c->helpers |= CGH_DIVR;
		cw_line(R->w, "const float fz_rc%d = fz_rcp_row(%s); // 1 / %s, once a row", n->args[1],
		        cg_value(c, n->args[1]), cg_comment(c, &c->g->nodes[n->args[1]]));
	}
}

/* How a chunk's divisions by a value of the row are written. */
typedef enum {
	DIV_CHECKED, /* fz_divr: each element checked, the IEEE division's slow path inline */
	DIV_FAST,    /* fz_divq: no slow path, the chunk flagged (fz_dx) for a second run */
	DIV_AGAIN,   /* fz_divr_call (halves: fz_divrh, no call): that second run */
} DivMode;

/* One line computing node id inside a chunk's u-loop. */
static bool emit_node(RowK *R, NodeId id, DivMode div)
{
	Cg *c = R->c;
	const Node *n = &c->g->nodes[id];
	if (cg_store_cast(c, R->w, id))
		return true;
	static const char *const fn[] = {"fz_divr(%s, %s, fz_rc%d)", "fz_divq(%s, %s, fz_rc%d, fz_dx)",
	                                 "fz_divr_call(%s, %s, fz_rc%d)"};
	/* a quotient of halves: x times the reciprocal (prelude_ops.c's cg_pre_divrh) */
	static const char *const fnh[] = {"fz_divrh(%s, %s, fz_rc%d)", "fz_divqh(%s, %s, fz_rc%d, fz_dx)",
	                                  "fz_divrh(%s, %s, fz_rc%d)"};
	bool half = n->dtype == FZ_F16 || n->dtype == FZ_BF16, rdiv = row_div(R, n);
	if (half && rdiv)
		c->helpers |= CGH_DIVRH | CGH_HALFMATH;
	const char *e = rdiv ? arena_printf(c->a, (half ? fnh : fn)[div], cg_value(c, n->args[0]),
	                                    cg_value(c, n->args[1]), n->args[1])
	                     : cg_node_expr(c, id);
	if (!e)
		return false;
	cw_line(R->w, "const %s t%d = %s; // %s", cg_compute_type((fz_dtype)n->dtype), id, e, cg_comment(c, n));
	c->vname[id] = arena_printf(c->a, "t%d", id);
	return true;
}

/* How a chunk's values reach the accumulators. */
typedef enum {
	ACC_ARRAY,     /* general loops: into the chunk's arrays r<red>, accumulated after the u-loop */
	ACC_CHUNK,     /* the register path: into the chunk's partials, a chunk all in the row or all past it */
	ACC_MASKED,    /* its masked entries: into the partials, each element checked (the row's ends) */
} AccMode;

/* The identity a chunk's partial of reduction red starts from: -0 for sums,
 * since -0 + x is x for every x (+0 + -0 is +0), so the first add folds away. */
static const char *part_identity(Cg *c, NodeId red)
{
	const char *id = cg_acc_identity(c, red);
	if (!strcmp(id, "0.0f") || !strcmp(id, "0.0"))
		return !strcmp(id, "0.0f") ? "-0.0f" : "-0.0";
	return id;
}

/* Accumulate the reductions of pass q (inside the u-loop): per element into
 * a<red>, or into the chunk's partials p<red> (see emit_partials). */
static void emit_accumulate(RowK *R, int q, AccMode mode)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1 || row_online_of(R, red) >= 0) /* (from its partner's array: emit_online_terms) */
			continue;
		const Node *n = &c->g->nodes[red];
		const char *v = cg_acc_arg(c, red), *op = cg_acc_op(n), *cm = cg_comment(c, n);
		switch (mode) {
		case ACC_CHUNK: cw_line(R->w, "p%d = %s::f(p%d, %s); // %s", red, op, red, v, cm); break;
		case ACC_MASKED:
			if (row_bitmask(R)) /* op(p, identity) is p, bit for bit (emit_partials) */
				cw_line(R->w, "p%d = %s::f(p%d, fz_pick(fz_mk, %s, %s, %s)); // %s", red, op, red,
				        R->vec == 1 ? "1u << k" : arena_printf(c->a, "1u << (k * %d + u)", R->vec), v,
				        part_identity(c, red), cm);
			else
				cw_line(R->w, "p%d = fz_inrow(j0 + u, %s) ? %s::f(p%d, %s) : p%d; // %s", red, row_end(R), op, red, v,
				        red, cm);
			break;
		case ACC_ARRAY: cw_line(R->w, "r%d[u] = %s; // %s", red, v, cm); break;
		}
	}
}

/* ---- online sums (row_plan.c's plan_online) ------------------------------------------ */

/* The terms of partner m's online sums over a chunk, from m's array r<m>
 * (u's values), computed as the program writes them with m's value named
 * `mval`, each added to `acc` (printf of the sum's node: "a%d" or
 * "fz_q%d"); each element checked where `checked`. */
static void emit_online_terms(RowK *R, int q, NodeId m, const char *mval, const char *acc, bool checked)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	CgW *w = R->w;
	NodeId u = c->g->nodes[m].args[0];
	const char *uname = c->vname[u], *mname = c->vname[m];
	c->vname[u] = arena_printf(c->a, "r%d[u]", m);
	c->vname[m] = mval;
	cw_unroll(w);
	cw_open(w, "for (int u = 0; u < %d; u++)", R->vec);
	if (checked)
		cw_open(w, "if (fz_inrow(j0 + u, fz_e))");
	int32_t done = cg_new_stamp(c);
	for (int i = 0; i < k->nreductions; i++) {
		NodeId s = k->reductions[i];
		if (c->ph[s] != q + 1 || row_online_of(R, s) != m)
			continue;
		NodeId e = c->g->nodes[s].args[0], d = c->g->nodes[e].args[0];
		for (int j = 0; j < 2; j++) {
			NodeId x = j ? e : d;
			if (c->mark2[x] == done)
				continue;
			c->mark2[x] = done;
			cw_line(w, "const float t%d = %s; // %s", x, cg_node_expr(c, x), cg_comment(c, &c->g->nodes[x]));
			c->vname[x] = arena_printf(c->a, "t%d", x);
		}
		const char *a = arena_printf(c->a, acc, s);
		cw_line(w, "%s = %s::f(%s, %s); // %s", a, cg_acc_op(&c->g->nodes[s]), a, cg_acc_arg(c, s),
		        cg_comment(c, &c->g->nodes[s]));
	}
	if (checked)
		cw_close(w);
	cw_close(w);
	c->vname[u] = uname;
	c->vname[m] = mname;
}

/* Partner m's online sums, for each of them a line of `fmt` (printf of the
 * sum's node, three times). */
static void each_online(RowK *R, int q, NodeId m, const char *fmt)
{
	const Kernel *k = R->k;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId s = k->reductions[i];
		if (R->c->ph[s] == q + 1 && row_online_of(R, s) == m)
			cw_line(R->w, fmt, s, s, s);
	}
}

/* The online sums of max m over a chunk, after the plain reductions: the
 * chunk's largest element, the sums brought to the new maximum where it grew
 * (`fz_o<m>`: the chunk's, then the new one), then each sum's terms. Where
 * the maximum is still -inf (every element so far -inf, or none), they are
 * taken relative to 0, which gives the 0 they add; emit_finish makes such a
 * row's sum NaN, as exp(-inf - -inf) is. */
static void emit_online_max(RowK *R, int q, NodeId m, bool checked)
{
	Cg *c = R->c;
	CgW *w = R->w;
	const char *id = cg_acc_identity(c, m);
	c->helpers |= CGH_ONLINE | CGH_SPLIT;
	cw_line(w, "float fz_o%d = %s;", m, id);
	cw_unroll(w);
	cw_open(w, "for (int u = 0; u < %d; u++)", R->vec);
	cw_line(w, "%sfz_o%d = fz_max::f(fz_o%d, r%d[u]);", checked ? "if (fz_inrow(j0 + u, fz_e)) " : "", m, m, m);
	cw_close(w);
	cw_line(w, "fz_o%d = fz_max::f(a%d, fz_o%d);", m, m, m);
	cw_open(w, "if (fz_o%d != a%d)", m, m);
	each_online(R, q, m, arena_printf(c->a, "a%%d = fz_rescale(a%%d, a%d, fz_o%d);", m, m));
	cw_line(w, "a%d = fz_o%d;", m, m);
	cw_close(w);
	cw_line(w, "const float fz_b%d = fz_o%d == %s ? 0.0f : fz_o%d;", m, m, id, m);
	emit_online_terms(R, q, m, arena_printf(c->a, "fz_b%d", m), "a%d", checked);
}

/* The online variances of mean m over a chunk: the chunk's sum (added to m's
 * accumulator), count and mean, each variance's squared deviations from
 * that mean (fz_q<s>), then merged into the thread's count fz_c<m>, mean
 * fz_m<m> and deviations a<s> (Chan et al.: + d^2 * count * k / (count +
 * k), d the difference of the means). A chunk of no element adds nothing. */
static void emit_online_mean(RowK *R, int q, NodeId m, bool checked)
{
	Cg *c = R->c;
	CgW *w = R->w;
	cw_line(w, "float fz_s%d = 0.0f;", m);
	if (checked)
		cw_line(w, "float fz_k%d = 0.0f;", m);
	cw_unroll(w);
	cw_open(w, "for (int u = 0; u < %d; u++)", R->vec);
	if (checked)
		cw_open(w, "if (fz_inrow(j0 + u, fz_e))");
	cw_line(w, "fz_s%d = fz_s%d + r%d[u];", m, m, m);
	if (checked) {
		cw_line(w, "fz_k%d = fz_k%d + 1.0f;", m, m);
		cw_close(w);
	}
	cw_close(w);
	if (!checked) /* V a power of two: 1/V exact */
		cw_line(w, "const float fz_k%d = %d.0f, fz_a%d = fz_s%d * %.17gf;", m, R->vec, m, m, 1.0 / R->vec);
	else
		cw_line(w, "const float fz_a%d = fz_k%d > 0.0f ? fz_s%d / fz_k%d : 0.0f;", m, m, m, m);
	cw_line(w, "a%d = fz_sum::f(a%d, fz_s%d);", m, m, m);
	each_online(R, q, m, "float fz_q%d = 0.0f;");
	emit_online_terms(R, q, m, arena_printf(c->a, "fz_a%d", m), "fz_q%d", checked);
	cw_line(w, "const float fz_n%d = fz_c%d + fz_k%d, fz_d%d = fz_a%d - fz_m%d;", m, m, m, m, m, m);
	cw_line(w, "const float fz_w%d = fz_n%d > 0.0f ? fz_k%d / fz_n%d : 0.0f;", m, m, m, m);
	cw_line(w, "fz_m%d = fz_m%d + fz_d%d * fz_w%d;", m, m, m, m);
	each_online(R, q, m,
	            arena_printf(c->a, "a%%d = a%%d + fz_q%%d + fz_d%d * fz_d%d * fz_c%d * fz_w%d;", m, m, m, m));
	cw_line(w, "fz_c%d = fz_n%d;", m, m);
}

/* The general loops' reductions of pass q, from the chunk's arrays r<red>:
 * declared before the u-loop (`open`), or added to the accumulators after
 * it, unchecked for a chunk all in the row (or segment), each element
 * checked (a 64-bit add and compare) for the row's first and last. Before,
 * every chunk paid the checks: pass 1 of layernorm bf16 511x32768's row
 * entry took 61 SASS instructions a chunk, now 38. Measured on the H100
 * (docs/performance.md, "General loops: whole chunks unchecked"), with the
 * store of fz_stg: log_softmax f16 525x32000 35.0 -> 30.4 us, f32 167x50257
 * 43.2 -> 40.8, layernorm bf16 511x32768 41.7 -> 40.2. */
static void emit_chunk_reductions(RowK *R, int q, bool open)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	CgW *w = R->w;
	NodeId *red = ARENA_ARRAY(c->a, NodeId, k->nreductions + 1);
	int nred = 0, nplain = 0;
	for (int i = 0; i < k->nreductions; i++)
		if (c->ph[k->reductions[i]] == q + 1 && row_online_of(R, k->reductions[i]) < 0)
			red[nred++] = k->reductions[i];
	if (open) {
		for (int i = 0; i < nred; i++)
			cw_line(w, "%s r%d[%d];", cg_acc_type(c, red[i]), red[i], R->vec);
		return;
	}
	for (int i = 0; i < nred; i++)
		nplain += !row_has_online(R, red[i]);
	if (nred == 0)
		return;
	/* the row cache's aligned class: every chunk all in the row */
	bool masked = R->path->masked;
	if (masked) {
		cw_line(w, "// a chunk all in the row: no element checked");
		cw_open(w, "if (j0 >= 0 && j0 + %d <= fz_e)", R->vec);
	}
	for (int checked = 0; checked < (masked ? 2 : 1); checked++) {
		if (checked)
			cw_else(w);
		if (nplain > 0) {
			cw_unroll(w);
			cw_open(w, "for (int u = 0; u < %d; u++)", R->vec);
		}
		for (int i = 0; i < nred; i++) {
			if (row_has_online(R, red[i]))
				continue;
			const char *op = cg_acc_op(&c->g->nodes[red[i]]);
			if (checked) {
				cw_line(w, "if (fz_inrow(j0 + u, fz_e))");
				cw_in(w);
			}
			cw_line(w, "a%d = %s::f(a%d, r%d[u]);", red[i], op, red[i], red[i]);
			if (checked)
				cw_out(w);
		}
		if (nplain > 0)
			cw_close(w);
		for (int i = 0; i < nred; i++) {
			if (!row_has_online(R, red[i]))
				continue;
			if (c->g->nodes[red[i]].op == OP_MAX)
				emit_online_max(R, q, red[i], checked);
			else
				emit_online_mean(R, q, red[i], checked);
		}
	}
	if (masked)
		cw_close(w);
}

/* The register path accumulates a chunk's V values into partials p<red>
 * (declared before its u-loop, PART_OPEN; set again before a chunk's second
 * run, PART_AGAIN), then adds them to the accumulators (PART_CLOSE): with
 * one select for the chunk where a chunk is all in the row or all past it,
 * unchecked where each element was (the masked entries: a partial of no
 * element is the identity). */
typedef enum { PART_OPEN, PART_AGAIN, PART_CLOSE } PartStep;

static void emit_partials(RowK *R, int q, PartStep step)
{
	Cg *c = R->c;
	const Kernel *k = R->k;
	for (int i = 0; i < k->nreductions; i++) {
		NodeId red = k->reductions[i];
		if (c->ph[red] != q + 1)
			continue;
		const char *t = cg_acc_type(c, red), *id = part_identity(c, red);
		const char *op = cg_acc_op(&c->g->nodes[red]);
		if (step == PART_AGAIN)
			cw_line(R->w, "p%d = %s;", red, id);
		else if (step == PART_OPEN)
			cw_line(R->w, "%s p%d = %s;", t, red, id);
		else if (R->path->masked)
			cw_line(R->w, "a%d = %s::f(a%d, p%d);", red, op, red, red);
		else
			cw_line(R->w, "a%d = j0 < %s ? %s::f(a%d, p%d) : a%d;", red, row_end(R), op, red, red, red);
	}
}

/* The u-loop over a chunk's V elements: pass q's values, its reductions'
 * accumulation, and the values kept in arrays (keep[i]: target t[i]). */
static bool emit_u_loop(RowK *R, int q, const Closure *m, const NodeId *t, int nt, const bool *keep, bool reg,
                        DivMode div)
{
	Cg *c = R->c;
	CgW *w = R->w;
	if (!reg)
		emit_chunk_reductions(R, q, true);
	cw_unroll(w);
	cw_open(w, "for (int u = 0; u < %d; u++)", R->vec);
	for (int i = 0; i < m->ncomp; i++)
		if (!emit_node(R, m->comp[i], div))
			return false;
	emit_accumulate(R, q, !reg ? ACC_ARRAY : R->path->masked ? ACC_MASKED : ACC_CHUNK);
	for (int i = 0; i < nt; i++)
		if (keep[i])
			cw_line(w, "v%d[u] = %s;", t[i], cg_value(c, t[i]));
	cw_close(w);
	if (!reg)
		emit_chunk_reductions(R, q, false);
	return true;
}

/* Does pass q divide by a value of the row (fz_divr)? */
static bool has_row_div(const RowK *R, const Closure *m)
{
	for (int i = 0; i < m->ncomp; i++)
		if (row_div(R, &R->c->g->nodes[m->comp[i]]))
			return true;
	return false;
}

/* Does the register path's chunk past the row (rk chunks a thread, the row
 * fewer: f16 x96 holds 12 chunks in 4 threads of 4) skip its math, a branch
 * the same in every lane of a warp? Where the kernel divides its elements
 * by a value of the row (softmax's e / sum(e): fz_divq an element). H200,
 * bench/replay_ab.py, us: softmax f16 174762x96 32.5 -> 22.4, 419430x40
 * 35.8 -> 25.3, f32 419430x20 25.8 -> 22.5, 87381x96 23.3 -> 19.1 (eight
 * shapes, 0.68-0.87x); rows with no such chunk within 1% (softmax f32
 * 8192x1024, 131072x64, f16 131072x128). Not the others, whose skipped
 * math cost less than the branches: layernorm f32 419430x20 21.1 -> 22.8,
 * bf16 174762x96 21.8 -> 22.5, 4095x4096 21.1 -> 21.8, log_softmax f32
 * 104857x80 19.6 -> 19.4 (docs/performance.md). Nor kernels with a
 * broadcast stream (a row offset of its own), where the branches took
 * registers, and threads an SM with them: masked softmax f16 (its mask
 * [B, 1, 1, K]) 83 -> 113 registers under a bound of 128, 4x16x256x1024
 * 26.6 -> 39.0 us in the sweeps of 2026-11-29 and -30, rows with no dead
 * chunk; plain softmax's entries took none. */
static bool row_skips_dead(const RowK *R)
{
	if (R->path->path != CG_PATH_REG || R->path->masked)
		return false;
	for (int i = 0, d = -1; i < R->k->nparams; i++) { /* a broadcast stream: a row offset of its own */
		if (R->roff[i] && d >= 0 && R->rdecl[i] != d)
			return false;
		d = R->roff[i] ? R->rdecl[i] : d;
	}
	for (int i = 0; i < R->k->nnodes; i++)
		if (row_div(R, &R->c->g->nodes[R->k->nodes[i]]))
			return true;
	return false;
}

bool row_elements(RowK *R, int q, const Closure *m, const NodeId *t, int nt, bool reg)
{
	Cg *c = R->c;
	CgW *w = R->w;
	int32_t arr = cg_new_stamp(c);
	bool *keep = ARENA_ARRAY(c->a, bool, nt + 1);
	/* arrays for the values stored or cached after the loop */
	for (int i = 0; i < nt; i++) {
		NodeId id = t[i];
		bool k = (row_is_colv(R, id) && c->ph[id] == q && row_param_of(R, id, PARAM_OUT) >= 0) ||
		         row_slot_of(R, id) >= 0;
		if (!k || cg_is_leaf(c, id) || c->mark2[id] == arr)
			continue;
		c->mark2[id] = arr;
		keep[i] = true;
		cw_line(w, "%s v%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
	}
	for (int i = 0; i < nt; i++)
		c->mark2[t[i]] = 0;
	/* the register path's class for rows of a multiple of V divides by the
	 * row's value without the per-element slow path (no branch an element),
	 * and runs the chunk again, each division checked, where one of its
	 * quotients needs it. Measured on the H200 (docs/performance.md, "Short
	 * and odd rows"): softmax f16 8192x4096 53.7 -> 49.9 us, masked_softmax
	 * f16 4x16x256x1024 41.2 -> 36.6, f32 within 1%; but the masked class
	 * lost (softmax f16 16761x1001 51.2 -> 54.6) and so did the staged rows
	 * (softmax f32 66053x127 30.3 -> 31.5), which keep fz_divr. */
	bool fast = reg && R->path->path == CG_PATH_REG && !R->path->masked && has_row_div(R, m);
	bool skip = reg && row_skips_dead(R);
	if (reg)
		emit_partials(R, q, PART_OPEN);
	if (skip)
		cw_open(w, "if (j0 < %s)", row_end(R));
	if (fast)
		cw_line(w, "bool fz_dx = false; /* a quotient of this chunk needs IEEE division's slow path */");
	if (!emit_u_loop(R, q, m, t, nt, keep, reg, fast ? DIV_FAST : DIV_CHECKED))
		return false;
	if (fast) {
		cw_open(w, "if (fz_dx)");
		emit_partials(R, q, PART_AGAIN);
		if (!emit_u_loop(R, q, m, t, nt, keep, reg, DIV_AGAIN))
			return false;
		cw_close(w);
	}
	if (skip)
		cw_close(w);
	if (reg)
		emit_partials(R, q, PART_CLOSE);
	return true;
}

const char *row_value_array(RowK *R, NodeId id)
{
	const char *v = R->c->vname[id];
	size_t n = v ? strlen(v) : 0;
	/* a leaf: the array its element is read from ("l3[0][u]", "l3[fz_g][u]") */
	if (cg_is_leaf(R->c, id) && n > 3 && strcmp(v + n - 3, "[u]") == 0)
		return arena_printf(R->c->a, "%.*s", (int)(n - 3), v);
	if (cg_is_leaf(R->c, id))
		cg_internal(R->c, "leaf %%%d of kernel %s has no chunk array", id, R->k->name);
	return arena_printf(R->c->a, "v%d", id);
}
