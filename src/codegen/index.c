/*
 * index.c: index arithmetic shared by the kernel emitters.
 *
 * An operand broadcasts into an iteration space axis by axis: each axis is
 * kept (the operand has the space's dimension) or broadcast (size 1 or
 * missing). Adjacent axes with the same status form a run, and the offset of
 * element i is one term per kept run:
 *
 *     ((i / below) % extent) * stride
 *
 * where `below` is the product of the space's dims right of the run,
 * `extent` the run's own and `stride` the operand's (the kept extents right
 * of it). The innermost run needs no division and the outermost no modulo, so
 * [N] in [B, N] is `i % N` and [B, 1] in [B, N] is `i / N`. The constants
 * are computed once per thread before any loop.
 *
 * Pointwise kernels take the offset as the digits of i in the runs' mixed
 * radix instead (cg_offset_lambda): one division a run boundary, which also
 * gives i's position in the innermost run, so that a kernel can tell a chunk
 * that stays inside one run (contiguous in the operand, or one element of
 * it) from one that crosses a run's end.
 */
#include "codegen/cgint.h"

#include <string.h>

int cg_runs(const Node *n, int r, const Dim *dom, int hi, CgRun *runs)
{
	int nr = 0;
	for (int ax = hi - 1; ax >= 0; ax--) {
		if (dom[ax] == 1)
			continue; /* its index is always 0 */
		Dim d = cg_dim_at(n, r, ax);
		if (d != dom[ax] && d != 1)
			return -1;
		bool kept = d == dom[ax];
		if (nr > 0 && runs[nr - 1].kept == kept)
			runs[nr - 1].lo = ax; /* adjacent, or only literal-1 axes between */
		else
			runs[nr++] = (CgRun){ax, ax + 1, kept};
	}
	return nr;
}

const char *cg_extent(Cg *c, const Kernel *k, int lo, int hi)
{
	StrBuf sb;
	sb_init(&sb, c->a);
	int terms = 0;
	for (int ax = lo; ax < hi; ax++) {
		if (k->domain[ax] == 1)
			continue;
		sb_printf(&sb, "%s%s", terms++ ? " * " : "", cg_dim_expr(c, k, k->domain[ax]));
	}
	return terms ? sb_str(&sb) : "1LL";
}

/* The offset's text in 64-bit (long long) or 32-bit (unsigned) arithmetic:
 * the same terms, each extent cast in the narrow form. */
static const char *offset_in(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px,
                             const char *var, CgW *w, bool u32)
{
	const char *type = u32 ? "unsigned" : "long long";
	const char *cast = u32 ? "(unsigned)(%s)" : "%s";
	StrBuf sb;
	sb_init(&sb, c->a);
	int terms = 0;
	const char *stride = NULL; /* product of the kept extents to the right */
	for (int i = 0; i < nr; i++) {
		const CgRun *R = &runs[i];
		const char *ext = arena_printf(c->a, cast, cg_extent(c, k, R->lo, R->hi));
		if (!R->kept)
			continue;
		bool innermost = strcmp(cg_extent(c, k, R->hi, hi), "1LL") == 0;
		bool outermost = i == nr - 1;
		const char *below = arena_printf(c->a, "%s_b%d", px, i);
		const char *ext_n = arena_printf(c->a, "%s_e%d", px, i);
		const char *str_n = arena_printf(c->a, "%s_s%d", px, i);
		if (!innermost)
			cw_line(w, "const %s %s = %s;", type, below, arena_printf(c->a, cast, cg_extent(c, k, R->hi, hi)));
		if (!outermost)
			cw_line(w, "const %s %s = %s;", type, ext_n, ext);
		if (stride)
			cw_line(w, "const %s %s = %s;", type, str_n, stride);
		const char *idx = innermost ? var : arena_printf(c->a, "%s / %s", var, below);
		const char *term = outermost ? idx : arena_printf(c->a, innermost ? "%s %% %s" : "(%s) %% %s", idx, ext_n);
		if (stride)
			term = arena_printf(c->a, "(%s) * %s", term, str_n);
		sb_printf(&sb, "%s%s", terms++ ? " + " : "", term);
		stride = stride ? arena_printf(c->a, "%s * %s", stride, ext) : ext;
	}
	return terms ? sb_str(&sb) : u32 ? "0u" : "0LL";
}

const char *cg_offset(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                      CgW *w)
{
	return offset_in(c, k, runs, nr, hi, px, var, w, false);
}

const char *cg_offset_u32(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                          CgW *w)
{
	return offset_in(c, k, runs, nr, hi, px, var, w, true);
}

int cg_vec_width(Cg *c, bool row)
{
	const Kernel *k = c->k;
	int minsize = 16;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN && kp->kind != PARAM_OUT)
			continue;
		const Node *n = &c->g->nodes[kp->node];
		bool streamed = n->rank > 0;
		if (row)
			streamed = k->rank > 0 && k->domain[k->rank - 1] != 1 &&
			           cg_dim_at(n, k->rank, k->rank - 1) == k->domain[k->rank - 1];
		int size = (int)fz_dtype_size((fz_dtype)n->dtype);
		if (streamed && size < minsize)
			minsize = size;
	}
	int v = 16 / minsize;
	return v > 8 ? 8 : v;
}

int cg_vec_align(int vec, fz_dtype t)
{
	int b = vec * (int)fz_dtype_size(t);
	return b < 16 ? b : 16;
}

/* The outermost kept run, -1 if none. */
static int outermost_kept(const CgRun *runs, int nr)
{
	int L = -1;
	for (int i = 0; i < nr; i++)
		if (runs[i].kept)
			L = i;
	return L;
}

int cg_offset_divisions(const CgRun *runs, int nr)
{
	int L = outermost_kept(runs, nr);
	int Q = L == nr - 1 ? L : L + 1; /* quotients needed */
	return Q < 1 ? 1 : Q;            /* q0 for r, always */
}

/* The digits of i in the runs' mixed radix, innermost first: digit 0 is i
 * modulo the innermost run's extent, the outermost digit needs no modulo.
 * One division a run boundary, up to the outermost kept run, by the caller's
 * `div` (prelude.c: fz_divm, with the divisor's magic number fz_m<lo>_<hi>,
 * a launch value; fz_div64). */
const char *cg_offset_lambda(Cg *c, const Kernel *k, const CgRun *runs, int nr, const char *px, CgW *w)
{
	int L = outermost_kept(runs, nr), Q = cg_offset_divisions(runs, nr);
	const char **ext = ARENA_ARRAY(c->a, const char *, nr + 1);
	for (int i = 0; i < nr; i++) {
		ext[i] = arena_printf(c->a, "%s_e%d", px, i);
		if (i < Q)
			cw_line(w, "const long long %s = %s;", ext[i], cg_extent(c, k, runs[i].lo, runs[i].hi));
	}
	StrBuf off;
	sb_init(&off, c->a);
	const char *stride = NULL; /* product of the kept extents inside run i */
	for (int i = 0; i <= L; i++) {
		if (!runs[i].kept)
			continue;
		const char *digit = i == 0 ? "r" : i == nr - 1 ? arena_printf(c->a, "q%d", i - 1)
		                                              : arena_printf(c->a, "(q%d - q%d * %s)", i - 1, i, ext[i]);
		if (stride) {
			const char *s = arena_printf(c->a, "%s_s%d", px, i);
			cw_line(w, "const long long %s = %s;", s, stride);
			digit = arena_printf(c->a, "%s * %s", digit, s);
		}
		sb_printf(&off, "%s%s", off.len ? " + " : "", digit);
		const char *e = cg_extent(c, k, runs[i].lo, runs[i].hi);
		stride = stride ? arena_printf(c->a, "%s * %s", stride, e) : e;
	}
	cw_open(w, "auto %s = [=](long long i, long long &r, auto div)", px);
	for (int i = 0; i < Q; i++)
		cw_line(w, "const long long q%d = div(%s, %s, fz_m%d_%d);", i, i ? arena_printf(c->a, "q%d", i - 1) : "i",
		        ext[i], runs[i].lo, runs[i].hi);
	cw_line(w, "r = i - q0 * %s;", ext[0]);
	cw_line(w, "return %s;", off.len ? sb_str(&off) : "0LL");
	cw_out(w);
	cw_line(w, "};");
	return ext[0];
}
