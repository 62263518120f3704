/*
 * progen.c: random valid fz programs (see progen.h), the statement level.
 *
 * A program is planned before it is written: its universes (one or two
 * broadcast shapes, rank 1 to 4, axes symbolic or literal) and the sizes of
 * its dims for the size class, so that the expression generators
 * (progen_expr.c) know how long the rows they reduce are. Then come fns
 * (bodies over their parameters, re-analysed at each call), inputs (each
 * universe's first input is a finite float of the full shape, the "anchor"
 * every generator can fall back on; other inputs broadcast: [B, 1], [N],
 * scalars), and statements: random expressions of every kind, and the shapes
 * real programs have (softmax, log-softmax, logsumexp, layernorm, rmsnorm,
 * l2norm) followed by random epilogues. Some bindings are outputs, some are
 * re-exported later with `out NAME`, some are dead.
 *
 * The text varies as programs do: `c ? a : b` and where(), minimal and extra
 * parentheses, `;` between statements, comments, blank lines, expressions
 * wrapped over lines inside parentheses, inputs declared late, names that
 * start like keywords (fn0, in_x, f32x). Cosmetic choices draw from their own
 * generator, so they never change the program's structure.
 */
#include "progen_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------ */

static const char *const in_stems[] = {"x", "y", "w", "b", "a", "v", "g", "in_", "outx", "fn_", "f32x",
                                       "data", "_p", "Q", "k", "scale", "bias", "mask", "idx", "eps"};
static const char *const let_stems[] = {"t", "h", "tmp", "e", "acc", "sum_", "maxv", "mu", "_u",
                                        "r", "y", "z", "o", "exp_", "inx", "relu_"};
static const char *const fn_stems[] = {"f", "fn", "g_", "my_", "act", "norm"};
static const char *const dim_pool[] = {"N", "B", "R", "C", "M", "K", "T", "H", "W",
                                       "D", "L", "S", "rows", "cols", "Dk", "batch", "seq"};

static const char *new_name(G *g, const char *const *stems, int n)
{
	return arena_printf(g->a, "%s%d", stems[rng_int(&g->rng, 0, n - 1)], g->names++);
}

static const char *dt_name(const G *g, fz_dtype t)
{
	return g->opt->shadow_f64 && dtype_is_float(t) ? "f64" : fz_dtype_name(t);
}

/* ---- universes and sizes ---------------------------------------------------------------- */

typedef struct SizeClass {
	const int64_t *row;   /* sizes of the last axis */
	int nrow;
	const int64_t *lead;  /* sizes of the other axes */
	int nlead;
	const int64_t *lit;   /* literal sizes written in the program for the last axis */
	int nlit;
	int64_t budget;       /* elements of a universe */
} SizeClass;

#define SC(r, l, t, b) {r, COUNT(r), l, COUNT(l), t, COUNT(t), b}
static const int64_t tiny_r[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 17}, tiny_l[] = {1, 2, 3, 4, 5, 7},
                     tiny_t[] = {1, 2, 3, 4, 5, 8};
static const int64_t small_r[] = {1, 2, 3, 5, 8, 16, 31, 32, 33, 64, 100, 127, 128, 129, 255, 256, 257, 500, 1024,
                                  1025, 2049},
                     small_l[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 33, 64}, small_t[] = {1, 2, 3, 4, 7, 8, 16, 32, 33, 100};
static const int64_t med_r[] = {1, 2, 3, 5, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512,
                                513, 1000, 1023, 1024, 1025, 2047, 2048, 2049, 3000, 4095, 4096, 4097, 8191, 8192,
                                8193, 12289, 16384, 30011, 65537},
                     med_l[] = {1, 2, 3, 5, 7, 8, 16, 31, 64, 100, 128, 255, 256, 1000, 1024, 4097},
                     med_t[] = {1, 2, 3, 4, 8, 32, 33, 128, 256, 1000, 1024, 4096};
static const int64_t big_long[] = {300007, 300000, 262147, 327680}, big_mega[] = {1000000, 999983, 1048576},
                     big_few[] = {1, 2, 3, 4, 5, 7}, big_rows[] = {1000000, 999983, 1048576},
                     big_split[] = {2, 3, 4, 8, 16, 100, 1000}, big_lead[] = {1, 2, 3, 5};
static const SizeClass classes[] = {
	SC(tiny_r, tiny_l, tiny_t, 1024), SC(small_r, small_l, small_t, 32768), SC(med_r, med_l, med_t, 2000000),
	SC(med_r, med_l, med_t, 2000000), /* BIG's second universe, and its fallbacks */
};

static int64_t pick64(Rng *r, const int64_t *v, int n) { return v[rng_int(r, 0, n - 1)]; }

static int new_dim(G *g, int64_t size)
{
	ProgenInfo *in = g->info;
	int k = in->ndims++, start = rng_int(&g->rng, 0, COUNT(dim_pool) - 1);
	for (int i = 0; i < COUNT(dim_pool); i++) {
		const char *name = dim_pool[(start + i) % COUNT(dim_pool)];
		bool used = false;
		for (int j = 0; j < k; j++)
			used |= strcmp(in->dim_names[j], name) == 0;
		if (!used) {
			snprintf(in->dim_names[k], PROGEN_NAME, "%s", name);
			break;
		}
	}
	in->dim_sizes[k] = size;
	return k;
}

static void set_axis(G *g, Axis *ax, bool literal, int64_t size)
{
	ax->dim = literal ? -1 : new_dim(g, size);
	ax->lit = literal ? size : 0;
}

/* Sizes of the leading axes: as many rows as the budget allows. BIG's
 * million rows: `rows` set, split over the symbolic leading axes. */
static void lead_sizes(G *g, Uni *u, const SizeClass *sc, int64_t budget, int64_t rows)
{
	int64_t prod = 1;
	int nsym = 0;
	for (int i = 0; i < u->rank - 1; i++) {
		bool literal = rows == 0 && rng_pct(&g->rng, 25);
		if (rows && i == u->rank - 2 && nsym == 0)
			literal = false;
		int64_t s = 1;
		if (literal) {
			s = rng_int(&g->rng, 1, 5);
			while (s > 1 && s * prod > budget)
				s--;
		} else if (rows) {
			s = i == u->rank - 2 ? (rows + prod - 1) / prod : pick64(&g->rng, big_split, COUNT(big_split));
			s = s < 1 ? 1 : s;
		} else {
			for (int t = 0; t < 8; t++) {
				int64_t c = pick64(&g->rng, sc->lead, sc->nlead);
				if (c * prod <= budget) {
					s = c;
					break;
				}
			}
		}
		prod *= s;
		nsym += !literal;
		set_axis(g, &u->ax[i], literal, s);
	}
}

static void plan_universe(G *g, Uni *u, ProgenSize size, bool second)
{
	static const int rank_w[] = {20, 45, 25, 10};
	const SizeClass *sc = &classes[second && size == PROGEN_BIG ? 3 : size];
	int plan = size == PROGEN_BIG && !second ? rng_int(&g->rng, 0, 2) : -1;
	u->rank = second ? rng_int(&g->rng, 1, 2) : 1 + PICK(&g->rng, rank_w);
	if (plan == 2 && u->rank < 2)
		u->rank = 2;
	int64_t budget = second ? sc->budget / 8 : sc->budget, n;
	Axis *last = &u->ax[u->rank - 1];
	if (plan == 0 || plan == 1) {
		n = plan == 0 ? pick64(&g->rng, big_long, COUNT(big_long)) : pick64(&g->rng, big_mega, COUNT(big_mega));
		set_axis(g, last, false, n);
		int64_t rows = 1, most = plan == 0 ? 6 : 3;
		for (int i = 0; i < u->rank - 1; i++) {
			int64_t s = pick64(&g->rng, big_lead, COUNT(big_lead));
			s = s * rows <= most ? s : 1;
			rows *= s;
			set_axis(g, &u->ax[i], rng_pct(&g->rng, 30), s);
		}
		return;
	}
	if (plan == 2) {
		n = pick64(&g->rng, big_few, COUNT(big_few));
		set_axis(g, last, rng_pct(&g->rng, 40), n);
		lead_sizes(g, u, sc, 0, pick64(&g->rng, big_rows, COUNT(big_rows)));
		return;
	}
	bool literal = !second && rng_pct(&g->rng, 20);
	n = literal ? pick64(&g->rng, sc->lit, sc->nlit) : pick64(&g->rng, sc->row, sc->nrow);
	set_axis(g, last, literal, n);
	lead_sizes(g, u, sc, budget / (n ? n : 1), 0);
}

static void plan_sizes(G *g)
{
	ProgenSize size = g->opt->size;
	g->nuni = rng_pct(&g->rng, 20) ? 2 : 1;
	for (int i = 0; i < g->nuni; i++)
		plan_universe(g, &g->uni[i], size, i > 0);
	/* fn parameters: rows like universe 0's */
	g->uni[FN_UNI].rank = 1;
	g->uni[FN_UNI].ax[0] = g->uni[0].ax[g->uni[0].rank - 1];
	g->info->zero_dim = -1;
	if (g->info->ndims > 0 && rng_pct(&g->rng, g->opt->zero_dim_pct)) {
		int k = rng_int(&g->rng, 0, g->info->ndims - 1);
		g->info->dim_sizes[k] = 0;
		g->info->zero_dim = k;
	}
}

/* ---- inputs ------------------------------------------------------------------------------- */

typedef struct Range {
	double lo, hi;
} Range;

static const Range float_ranges[] = {{-1, 1}, {-2, 2}, {-4, 4}, {0, 1}, {0.5, 2}, {-8, 8}, {0.25, 4}, {-2, 2}};
static const Range int_ranges[] = {{-8, 8}, {0, 16}, {-100, 100}, {1, 5}, {-3, 3}};
static const Range eps_ranges[] = {{0.015625, 0.25}, {-2, 2}, {0.5, 2}};

static fz_dtype pick_dtype(G *g, bool float_only)
{
	static const fz_dtype dts[] = {FZ_F32, FZ_F16, FZ_BF16, FZ_F64, FZ_I32, FZ_I64, FZ_BOOL};
	static const int w[] = {55, 9, 9, 7, 8, 5, 7};
	static const int wf[] = {70, 10, 10, 10, 0, 0, 0};
	return dts[float_only ? PICK(&g->rng, wf) : PICK(&g->rng, w)];
}

static void make_input(G *g, int uni, int rank, unsigned mask, fz_dtype dt, bool anchor)
{
	PVal *v = &g->vals[g->nvals++];
	v->name = new_name(g, in_stems, COUNT(in_stems));
	v->input = true;
	PAttr *a = &v->at;
	a->dt = dt;
	a->uni = rank ? uni : -1;
	a->rank = rank;
	a->mask = mask;
	a->det = true;
	Range r = {0, 1};
	if (dtype_is_float(dt))
		r = rank ? float_ranges[rng_int(&g->rng, 0, COUNT(float_ranges) - 1)]
		         : eps_ranges[rng_int(&g->rng, 0, COUNT(eps_ranges) - 1)];
	else if (dt != FZ_BOOL)
		r = int_ranges[rng_int(&g->rng, 0, COUNT(int_ranges) - 1)];
	if (!rank && dtype_is_int(dt))
		r = (Range){1, 8};
	v->lo = a->lo = r.lo;
	v->hi = a->hi = r.hi;
	a->nonfin = !anchor && dtype_is_float(dt) && g->info->nonfinite && rng_pct(&g->rng, 60);
}

static void make_inputs(G *g)
{
	for (int u = 0; u < g->nuni; u++) {
		int r = g->uni[u].rank;
		unsigned full = (1u << r) - 1;
		make_input(g, u, r, full, pick_dtype(g, true), true);
		int n = rng_int(&g->rng, 0, u ? 2 : 4);
		for (int i = 0; i < n; i++) {
			int rank = rng_pct(&g->rng, 60) ? r : rng_int(&g->rng, 1, r);
			unsigned mask = 0;
			for (int ax = r - rank; ax < r; ax++)
				if (rng_pct(&g->rng, 80))
					mask |= 1u << ax;
			make_input(g, u, rank, mask, pick_dtype(g, false), false);
		}
	}
	int ns = rng_int(&g->rng, 0, 2);
	for (int i = 0; i < ns; i++)
		make_input(g, -1, 0, 0, rng_pct(&g->rng, 70) ? FZ_F32 : pick_dtype(g, false), false);
}

static void print_dim(G *g, const Axis *ax)
{
	if (ax->dim >= 0)
		sb_puts(&g->sb, g->info->dim_names[ax->dim]);
	else
		sb_printf(&g->sb, "%lld", (long long)ax->lit);
}

static void declare(G *g, PVal *v)
{
	const PAttr *a = &v->at;
	sb_printf(&g->sb, "in %s: %s", v->name, dt_name(g, a->dt));
	if (a->rank) {
		const Uni *u = &g->uni[a->uni];
		sb_puts(&g->sb, "[");
		for (int ax = u->rank - a->rank; ax < u->rank; ax++) {
			if (ax > u->rank - a->rank)
				sb_puts(&g->sb, rng_pct(&g->style, 80) ? ", " : ",");
			if ((a->mask >> ax) & 1)
				print_dim(g, &u->ax[ax]);
			else
				sb_puts(&g->sb, "1");
		}
		sb_puts(&g->sb, "]");
	}
	sb_puts(&g->sb, "\n");
	v->declared = true;
	ProgenInfo *in = g->info;
	if (in->ninputs < PROGEN_MAX_INPUTS) {
		ProgenInput *pi = &in->inputs[in->ninputs++];
		snprintf(pi->name, PROGEN_NAME, "%s", v->name);
		pi->dtype = a->dt, pi->lo = v->lo, pi->hi = v->hi, pi->nonfinite = a->nonfin;
	}
}

/* Declare one input not yet declared; false if none is left. */
static bool declare_next(G *g)
{
	for (int i = 0; i < g->nvals; i++)
		if (g->vals[i].input && !g->vals[i].declared) {
			declare(g, &g->vals[i]);
			return true;
		}
	return false;
}

/* ---- printing expressions ------------------------------------------------------------------- */

/* The contract's precedence levels, loosest first; calls and leaves bind
 * tightest. */
enum { PREC_UNARY = 12, PREC_PRIMARY = 13 };

static int prec_of(const PNode *n)
{
	if (n->kind != PK_OP)
		return PREC_PRIMARY;
	switch (n->op) {
	case OP_WHERE: return n->ternary ? 1 : PREC_PRIMARY;
	case OP_OR: return 2;
	case OP_AND: return 3;
	case OP_EQ: case OP_NE: return 4;
	case OP_LT: case OP_LE: case OP_GT: case OP_GE: return 5;
	case OP_BITOR: return 6;
	case OP_BITXOR: return 7;
	case OP_BITAND: return 8;
	case OP_SHL: case OP_SHR: return 9;
	case OP_ADD: case OP_SUB: return 10;
	case OP_MUL: case OP_DIV: case OP_MOD: return 11;
	case OP_NEG: case OP_NOT: case OP_BITNOT: return PREC_UNARY;
	default: return PREC_PRIMARY; /* calls */
	}
}

static const char *op_sym(Op op)
{
	switch (op) {
	case OP_OR: return "||";
	case OP_AND: return "&&";
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LT: return "<";
	case OP_LE: return "<=";
	case OP_GT: return ">";
	case OP_GE: return ">=";
	case OP_ADD: return "+";
	case OP_SUB: return "-";
	case OP_MUL: return "*";
	case OP_DIV: return "/";
	case OP_MOD: return "%";
	case OP_NEG: return "-";
	case OP_NOT: return "!";
	case OP_BITNOT: return "~";
	case OP_BITAND: return "&";
	case OP_BITOR: return "|";
	case OP_BITXOR: return "^";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	default: return "?";
	}
}

static void print_expr(G *g, const PNode *n, int minprec);

static void print_args(G *g, const char *callee, const PNode *n)
{
	sb_printf(&g->sb, "%s(", callee);
	for (int i = 0; i < n->nargs; i++) {
		if (i)
			sb_puts(&g->sb, ", ");
		print_expr(g, n->arg[i], 1);
	}
	sb_puts(&g->sb, ")");
}

static void print_op(G *g, const PNode *n, int p)
{
	if (n->op == OP_CAST) {
		print_args(g, dt_name(g, n->to), n);
	} else if (n->op == OP_WHERE && n->ternary) {
		print_expr(g, n->arg[0], 2);
		sb_puts(&g->sb, " ? ");
		print_expr(g, n->arg[1], 2);
		sb_puts(&g->sb, " : ");
		print_expr(g, n->arg[2], 1);
	} else if (p == PREC_UNARY) {
		sb_puts(&g->sb, op_sym(n->op));
		print_expr(g, n->arg[0], prec_of(n->arg[0]) == PREC_UNARY ? PREC_PRIMARY : PREC_UNARY);
	} else if (p < PREC_UNARY) {
		print_expr(g, n->arg[0], p);
		bool tight = p == 11 && rng_pct(&g->style, 15);
		sb_printf(&g->sb, tight ? "%s" : " %s ", op_sym(n->op));
		print_expr(g, n->arg[1], p + 1);
	} else {
		print_args(g, ir_ops[n->op].name, n);
	}
}

static void print_expr(G *g, const PNode *n, int minprec)
{
	int p = prec_of(n);
	bool paren = p < minprec || (p < PREC_PRIMARY && rng_pct(&g->style, 4));
	if (paren)
		sb_puts(&g->sb, "(");
	switch (n->kind) {
	case PK_LIT: sb_puts(&g->sb, n->text); break;
	case PK_VAL: sb_puts(&g->sb, g->vals[n->index].name); break;
	case PK_PARAM: sb_puts(&g->sb, g->printing->pnames[n->index]); break;
	case PK_CALL: print_args(g, g->fns[n->index].name, n); break;
	case PK_OP: print_op(g, n, p); break;
	}
	if (paren)
		sb_puts(&g->sb, ")");
}

/* ---- statements ------------------------------------------------------------------------------ */

/* Between statements: mostly a newline, sometimes `;`, a comment, a blank line. */
static void end_stmt(G *g)
{
	static const int w[] = {80, 7, 7, 6};
	switch (PICK(&g->style, w)) {
	case 1: sb_puts(&g->sb, rng_pct(&g->style, 50) ? "; " : ";\n"); break;
	case 2: sb_printf(&g->sb, "  # note %d\n", g->names); break;
	case 3: sb_puts(&g->sb, "\n\n"); break;
	default: sb_puts(&g->sb, "\n"); break;
	}
}

static void add_output(G *g, int vi)
{
	ProgenInfo *in = g->info;
	PVal *v = &g->vals[vi];
	const PAttr *a = &v->at;
	v->output = true;
	ProgenOutput *o = &in->outputs[in->noutputs++];
	snprintf(o->name, PROGEN_NAME, "%s", v->name);
	o->tol.analysed = true;
	o->tol.row = a->row;
	o->tol.dtype = a->ulow >= pg_unit_of(FZ_BF16) ? FZ_BF16 : a->ulow >= pg_unit_of(FZ_F16) ? FZ_F16 : a->dt;
	if (!a->det) {
		o->tol.atol = 4 * a->abs;
		o->tol.rtol = 4 * a->rel + 2 * pg_unit_of(a->dt);
	}
}

static bool can_output(const G *g) { return g->info->noutputs < PROGEN_MAX_OUTPUTS; }

/* `[out] NAME = EXPR`; returns a reference to the new binding. */
static PNode *bind(G *g, PNode *e, bool out)
{
	if (!e || g->nvals >= MAX_VALS)
		return NULL;
	out = out && can_output(g);
	int vi = g->nvals++;
	PVal *v = &g->vals[vi];
	v->name = new_name(g, let_stems, COUNT(let_stems));
	v->at = e->at;
	sb_printf(&g->sb, "%s%s = ", out ? "out " : "", v->name);
	bool wrap = rng_pct(&g->style, 8);
	sb_puts(&g->sb, wrap ? "(\n    " : "");
	print_expr(g, e, 1);
	sb_puts(&g->sb, wrap ? "\n)" : "");
	end_stmt(g);
	g->info->nbindings++;
	if (out)
		add_output(g, vi);
	return pg_mk_ref(g, vi);
}

static PNode *maybe_bind(G *g, PNode *e, int pct)
{
	return e && e->kind != PK_VAL && rng_pct(&g->rng, pct) ? bind(g, e, false) : e;
}

static PNode *eps_of(G *g)
{
	return pg_mk_lit(g, &pg_lit_eps[rng_int(&g->rng, 0, 5)], true);
}

/* The normalisations: layernorm, rmsnorm, l2norm. */
static PNode *norm_pattern(G *g, PNode *a, int kind)
{
	PNode *c = a, *v;
	if (kind == 0) { /* layernorm */
		PNode *mu = maybe_bind(g, pg_mk(g, OP_MEAN, 1, a, NULL, NULL), 60);
		c = maybe_bind(g, pg_mk(g, OP_SUB, 2, a, mu, NULL), 60);
	}
	if (kind == 2) {
		PNode *s = pg_mk(g, OP_SUM, 1, pg_mk(g, OP_MUL, 2, c, c, NULL), NULL, NULL);
		v = pg_mk(g, OP_MAXIMUM, 2, s, eps_of(g), NULL);
	} else {
		v = pg_mk(g, OP_MEAN, 1, pg_mk(g, OP_MUL, 2, c, c, NULL), NULL, NULL);
		v = maybe_bind(g, v, 40);
		PNode *ve = pg_mk(g, OP_ADD, 2, v, eps_of(g), NULL);
		v = ve ? ve : pg_mk(g, OP_ADD, 2, v, pg_mk_lit(g, &pg_lit_eps[5], true), NULL);
	}
	PNode *y = pg_mk(g, OP_MUL, 2, c, pg_mk(g, OP_RSQRT, 1, v, NULL, NULL), NULL);
	if (y && rng_pct(&g->rng, 50)) { /* the affine part: * w + b */
		PNode *w = pg_mk(g, OP_MUL, 2, y, pg_gen_small(g, 1, 2), NULL);
		PNode *b = w ? pg_mk(g, OP_ADD, 2, w, pg_gen_small(g, 1, 2), NULL) : NULL;
		y = b ? b : y;
	}
	return y;
}

/* softmax, log-softmax, logsumexp of a bounded row. */
static PNode *softmax_pattern(G *g, PNode *a, int kind)
{
	PNode *m = maybe_bind(g, pg_mk(g, OP_MAX, 1, a, NULL, NULL), 50);
	PNode *s = pg_mk(g, OP_SUB, 2, a, m, NULL);
	if (!s)
		return NULL;
	s->at.hi = fmin(s->at.hi, 0); /* x - max(x) <= 0, computed too */
	PNode *e = maybe_bind(g, pg_mk(g, OP_EXP, 1, s, NULL, NULL), 60);
	PNode *z = pg_mk(g, OP_SUM, 1, e, NULL, NULL);
	bool full = (a->at.mask >> (g->uni[a->at.uni].rank - 1)) & 1;
	if (!z || (full && pg_axis_size(g, a->at.uni, g->uni[a->at.uni].rank - 1) == 0))
		return NULL;
	z->at.lo = fmax(z->at.lo, 1); /* the row's max contributes exp(0) = 1 */
	z = maybe_bind(g, z, 30);
	switch (kind) {
	case 0: return pg_mk(g, OP_DIV, 2, e, z, NULL);
	case 1: return pg_mk(g, OP_SUB, 2, s, pg_mk(g, OP_LOG, 1, z, NULL, NULL), NULL);
	default: return pg_mk(g, OP_ADD, 2, m, pg_mk(g, OP_LOG, 1, z, NULL, NULL), NULL);
	}
}

static PNode *pattern(G *g, int d)
{
	PNode *a = pg_gen_small(g, d, 4);
	if (!a || a->at.rank == 0 || a->at.uni < 0)
		a = pg_mk(g, OP_TANH, 1, pg_anchor(g), NULL, NULL);
	a = maybe_bind(g, a, 50);
	if (!a)
		return NULL;
	int kind = rng_int(&g->rng, 0, 5);
	return kind < 3 ? softmax_pattern(g, a, kind) : norm_pattern(g, a, kind - 3);
}

/* `out NAME` for a binding (or, rarely, an input) that is no output yet. */
static void reexport(G *g)
{
	int start = rng_int(&g->rng, 0, g->nvals - 1);
	for (int i = 0; i < g->nvals && can_output(g); i++) {
		PVal *v = &g->vals[(start + i) % g->nvals];
		if (v->output || (v->input && (!v->declared || rng_pct(&g->rng, 70))))
			continue;
		sb_printf(&g->sb, "out %s", v->name);
		end_stmt(g);
		add_output(g, (int)(v - g->vals));
		return;
	}
}

static void statement(G *g)
{
	enum { PATTERN, FLOAT, INT, BOOL, EXACT, CONST, REEXPORT };
	static const int w[] = {16, 56, 7, 8, 5, 2, 6};
	bool big = g->opt->size == PROGEN_BIG;
	g->cur = g->nuni > 1 && rng_pct(&g->rng, 30) ? 1 : 0;
	g->budget = big ? rng_int(&g->rng, 4, 12) : rng_int(&g->rng, 6, 24);
	int d = rng_int(&g->rng, 1, 4);
	PNode *e = NULL;
	switch (PICK(&g->rng, w)) {
	case PATTERN: e = pattern(g, d); break;
	case FLOAT: e = pg_gen_float(g, d); break;
	case INT: e = pg_gen_int(g, d); break;
	case BOOL: e = pg_gen_bool(g, d); break;
	case EXACT: e = pg_gen_exact(g, d); break;
	case CONST:
		e = pg_mk(g, OP_MUL, 2, pg_mk_lit(g, &pg_lit_exact[rng_int(&g->rng, 0, 13)], true),
		          pg_mk_lit(g, &pg_lit_exact[rng_int(&g->rng, 0, 13)], true), NULL);
		break;
	default: reexport(g); return;
	}
	if (!e)
		e = pg_gen_float(g, 1);
	bind(g, e, rng_pct(&g->rng, 25));
}

static void make_fn(G *g)
{
	static const int np_w[] = {50, 35, 15};
	PFn *f = &g->fns[g->nfns++];
	f->name = new_name(g, fn_stems, COUNT(fn_stems));
	f->nparams = 1 + PICK(&g->rng, np_w);
	static const char *const pstems[] = {"p", "v", "q", "z_"};
	for (int i = 0; i < f->nparams; i++) {
		f->pnames[i] = new_name(g, pstems, COUNT(pstems));
		PAttr *a = &g->params[i];
		memset(a, 0, sizeof *a);
		a->dt = FZ_F32, a->uni = FN_UNI, a->rank = 1, a->mask = 1;
		a->lo = -4, a->hi = 4, a->rel = 1e-6;
	}
	g->nparams = f->nparams;
	g->cur = FN_UNI;
	g->budget = 8;
	f->body = pg_gen_float(g, rng_int(&g->rng, 1, 3));
	g->nparams = 0;
	if (!f->body) {
		g->nfns--;
		return;
	}
	g->info->nfns++;
	sb_printf(&g->sb, "fn %s(", f->name);
	for (int i = 0; i < f->nparams; i++)
		sb_printf(&g->sb, "%s%s", i ? ", " : "", f->pnames[i]);
	sb_puts(&g->sb, ") = ");
	g->printing = f;
	print_expr(g, f->body, 1);
	g->printing = NULL;
	sb_puts(&g->sb, "\n");
}

/* The first input of a universe (make_inputs makes it first). */
static bool is_anchor(const G *g, int i)
{
	if (!g->vals[i].input || g->vals[i].at.uni < 0)
		return false;
	for (int j = 0; j < i; j++)
		if (g->vals[j].input && g->vals[j].at.uni == g->vals[i].at.uni)
			return false;
	return true;
}

static void write_program(G *g)
{
	if (rng_pct(&g->style, 30))
		sb_printf(&g->sb, "# progen seed %llu\n", (unsigned long long)g->info->seed);
	int nfns = rng_pct(&g->rng, 35) ? rng_int(&g->rng, 1, MAX_FNS) : 0;
	for (int i = 0; i < nfns; i++)
		make_fn(g);
	make_inputs(g);
	/* every anchor and most other inputs now, the rest between statements */
	for (int i = 0; i < g->nvals; i++)
		if (is_anchor(g, i) || rng_pct(&g->rng, 70))
			declare(g, &g->vals[i]);
	bool big = g->opt->size == PROGEN_BIG;
	int n = big ? rng_int(&g->rng, 2, 8) : rng_int(&g->rng, 2, 14);
	for (int i = 0; i < n; i++) {
		if (rng_pct(&g->rng, 15))
			declare_next(g);
		statement(g);
	}
	while (declare_next(g))
		;
	if (g->info->noutputs == 0 || rng_pct(&g->rng, 30))
		for (int i = g->nvals - 1; i >= 0; i--)
			if (!g->vals[i].input && !g->vals[i].output) {
				sb_printf(&g->sb, "out %s\n", g->vals[i].name);
				add_output(g, i);
				break;
			}
	if (g->info->noutputs == 0) { /* no binding at all: export an input */
		sb_printf(&g->sb, "out %s\n", g->vals[0].name);
		add_output(g, 0);
	}
}

ProgenOptions progen_default_options(ProgenSize size)
{
	ProgenOptions o = {.size = size, .nonfinite_pct = 15, .zero_dim_pct = 5, .shadow_f64 = false};
	return o;
}

char *progen_program(uint64_t seed, const ProgenOptions *opt, ProgenInfo *info)
{
	G *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->a = arena_new();
	if (!g->a) {
		free(g);
		return NULL;
	}
	memset(info, 0, sizeof *info);
	info->seed = seed;
	info->size = opt->size;
	g->opt = opt;
	g->info = info;
	/* splitmix64 steps its state by a constant: hash the seed, or seed s + 1
	 * would replay seed s's draws shifted by one */
	Rng h = {seed};
	g->rng.s = rng_next(&h);
	g->style.s = rng_next(&h);
	sb_init(&g->sb, g->a);
	plan_sizes(g);
	info->nonfinite = rng_pct(&g->rng, opt->nonfinite_pct);
	write_program(g);
	bool any = false;
	for (int i = 0; i < info->ninputs; i++)
		any |= info->inputs[i].nonfinite;
	info->nonfinite = any;
	info->nreductions = g->nreductions;
	char *text = strdup(sb_str(&g->sb));
	arena_free(g->a);
	free(g);
	return text;
}
