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

const char *cg_offset(Cg *c, const Kernel *k, const CgRun *runs, int nr, int hi, const char *px, const char *var,
                      CgW *w)
{
	StrBuf sb;
	sb_init(&sb, c->a);
	int terms = 0;
	const char *stride = NULL; /* product of the kept extents to the right */
	for (int i = 0; i < nr; i++) {
		const CgRun *R = &runs[i];
		const char *ext = cg_extent(c, k, R->lo, R->hi);
		if (!R->kept)
			continue;
		bool innermost = strcmp(cg_extent(c, k, R->hi, hi), "1LL") == 0;
		bool outermost = i == nr - 1;
		const char *below = arena_printf(c->a, "%s_b%d", px, i);
		const char *ext_n = arena_printf(c->a, "%s_e%d", px, i);
		const char *str_n = arena_printf(c->a, "%s_s%d", px, i);
		if (!innermost)
			cw_line(w, "const long long %s = %s;", below, cg_extent(c, k, R->hi, hi));
		if (!outermost)
			cw_line(w, "const long long %s = %s;", ext_n, ext);
		if (stride)
			cw_line(w, "const long long %s = %s;", str_n, stride);
		const char *idx = innermost ? var : arena_printf(c->a, "%s / %s", var, below);
		const char *term = outermost ? idx : arena_printf(c->a, innermost ? "%s %% %s" : "(%s) %% %s", idx, ext_n);
		if (stride)
			term = arena_printf(c->a, "(%s) * %s", term, str_n);
		sb_printf(&sb, "%s%s", terms++ ? " + " : "", term);
		stride = stride ? arena_printf(c->a, "%s * %s", stride, ext) : ext;
	}
	return terms ? sb_str(&sb) : "0LL";
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
