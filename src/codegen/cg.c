/*
 * cg.c: a plan to CUDA C entries, and module sources made of them.
 *
 * Every kernel of the plan becomes one extern "C" entry per path it can take
 * (pointwise.c, row_*.c): a pointwise kernel one, a row kernel its register
 * path (when its rows can be held in registers), its general loop and its
 * split rows. Each entry's text is kept apart, with the prelude pieces it
 * uses, so that a module source can be made of any set of entries: all of
 * them (--emit=cuda, the golden tests, the emulator), or the ones a launch
 * needs (the runtime's JIT, --emit=cuda --dim). NVRTC's time grows with the
 * code of a module's entries, so a program whose sizes take one path
 * compiles one path.
 *
 * Generation walks each kernel's node list, never the graph's depth, with
 * scratch arrays indexed by node that are allocated once per plan and
 * cleaned per kernel, so per-op plans of 100,000 kernels cost time linear in
 * their size. Module sources include nothing; the prelude is only the
 * pieces their entries use.
 */
#include "codegen/cgint.h"

#include <string.h>

CgDevice cg_default_device(void)
{
	CgDevice d = {.cc_major = 9, .cc_minor = 0, .sm_count = 132, .max_threads_per_sm = 2048,
	              .smem_per_block_optin = 232448, .smem_per_sm = 233472, .smem_reserved_per_block = 1024,
	              .l2_bytes = 50 << 20};
	return d;
}

const char *cg_path_name(CgPath path)
{
	switch (path) {
	case CG_PATH_POINTWISE: return "pointwise";
	case CG_PATH_REG: return "reg";
	case CG_PATH_ROW: return "row";
	case CG_PATH_SPLIT: return "split";
	case CG_PATH_TILE: return "tile";
	case CG_NPATHS: break;
	}
	return "?";
}

/* The kernel's name as a C identifier (the plan promises one; make sure). */
static const char *kernel_ident(Arena *a, const char *name)
{
	name = name && *name ? name : "fz_kernel";
	char *s = arena_alloc(a, strlen(name) + 2);
	size_t j = 0;
	if (name[0] >= '0' && name[0] <= '9')
		s[j++] = 'k';
	for (const char *p = name; *p; p++) {
		char ch = *p;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
		s[j++] = ok ? ch : '_';
	}
	s[j] = 0;
	return s;
}

/* ---- entries ------------------------------------------------------------------------ */

void cg_begin_entry(Cg *c, CgPath path, int K, const char *suffix, const CgArg *args, int nargs)
{
	CgEntry e = {.kernel = c->k->id, .path = path, .K = K, .nargs = nargs};
	e.symbol = arena_printf(c->a, "%s_%s", c->kname, suffix);
	e.args = ARENA_ARRAY(c->a, CgArg, nargs + 1);
	memcpy(e.args, args, sizeof *args * (size_t)nargs);
	VEC_PUSH(c->a, c->m->entries, c->m->nentries, c->ecap, e);
	c->info->nentries++;
	StrBuf *sb = ARENA_NEW(c->a, StrBuf);
	sb_init(sb, c->a);
	c->w = ARENA_NEW(c->a, CgW);
	cw_init(c->w, sb, 0);
	c->helpers = 0;
	memset(c->ophelp, 0, sizeof c->ophelp);
}

const CgEntry *cg_entry(const Cg *c) { return &c->m->entries[c->m->nentries - 1]; }

void cg_end_entry(Cg *c)
{
	CgEntry *e = &c->m->entries[c->m->nentries - 1];
	e->text = sb_str(c->w->sb);
	e->helpers = c->helpers;
	uint8_t *oh = ARENA_ARRAY(c->a, uint8_t, OP_COUNT);
	memcpy(oh, c->ophelp, sizeof c->ophelp);
	e->ophelp = oh;
	c->w = NULL;
}

const char *cg_arg_name(Cg *c, const CgArg *a)
{
	switch (a->kind) {
	case CGARG_PARAM: return cg_param_name(c, a->index);
	case CGARG_WORKSPACE: return "fz_ws";
	case CGARG_SEG: return "fz_len";
	case CGARG_CSTRIDE: return "fz_cstride";
	case CGARG_CWS: return "fz_cws";
	case CGARG_PARTIALS: return "fz_wpart";
	case CGARG_SLOT: return arena_printf(c->a, "fz_so%d", a->index);
	case CGARG_TILE: return arena_printf(c->a, "fz_tile%d", a->index);
	case CGARG_DIVMAGIC: return arena_printf(c->a, "fz_m%d_%d", a->index / CG_DIV_AXES, a->index % CG_DIV_AXES);
	}
	cg_internal(c, "argument kind %d", (int)a->kind);
	return "fz_bad";
}

static const char *arg_decl(Cg *c, const CgArg *a)
{
	const char *name = cg_arg_name(c, a);
	if (a->kind == CGARG_WORKSPACE)
		return arena_printf(c->a, "unsigned long long *__restrict__ %s", name);
	if (a->kind != CGARG_PARAM)
		return arena_printf(c->a, "long long %s", name);
	const KParam *kp = &c->k->params[a->index];
	fz_dtype t = kp->kind == PARAM_DIM ? FZ_I64 : (fz_dtype)c->g->nodes[kp->node].dtype;
	switch (kp->kind) {
	case PARAM_IN: return arena_printf(c->a, "const %s *__restrict__ %s", cg_store_type(t), name);
	case PARAM_OUT: return arena_printf(c->a, "%s *__restrict__ %s", cg_store_type(t), name);
	case PARAM_SCALAR: return arena_printf(c->a, "%s %s", cg_store_type(t), name);
	case PARAM_DIM: return arena_printf(c->a, "long long %s", name);
	}
	cg_internal(c, "parameter kind %d", (int)kp->kind);
	return name;
}

void cg_entry_signature(Cg *c, const char *attrs)
{
	const CgEntry *e = cg_entry(c);
	StrBuf *sb = c->w->sb;
	sb_printf(sb, "extern \"C\" __global__ void %s %s(", attrs, e->symbol);
	for (int i = 0; i < e->nargs; i++)
		sb_printf(sb, "%s%s", i ? ",\n\t" : "\n\t", arg_decl(c, &e->args[i]));
	sb_puts(sb, ")\n");
}

void cg_entry_header(Cg *c, const char *kernel, const char *path)
{
	const CgEntry *e = cg_entry(c);
	sb_puts(c->w->sb, "\n");
	cw_line(c->w, "// ---- kernel %s: %s", c->kname, kernel);
	cw_line(c->w, "// %s: %s", e->symbol, path);
	cw_line(c->w, "// %s", cg_entry_when(c->m, e, c->a));
}

/* ---- kernels ------------------------------------------------------------------------ */

/* Forget what the last kernel's scopes named. */
static void clean_kernel(Cg *c, const Kernel *k)
{
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		c->vname[id] = NULL;
		const Node *n = &c->g->nodes[id];
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			c->vname[n->args[a]] = NULL;
	}
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind != PARAM_DIM)
			c->vname[k->params[i].node] = NULL;
	cg_unbind_params(c, k);
}

static bool check_kernel(Cg *c, const Kernel *k)
{
	const Graph *g = c->g;
	if (k->rank < 0 || k->rank > FZ_MAX_RANK)
		return cg_internal(c, "kernel %s has rank %d", k->name, k->rank);
	for (int i = 0; i < k->nnodes; i++)
		if (k->nodes[i] < 0 || k->nodes[i] >= g->n)
			return cg_internal(c, "kernel %s lists node %d of %d", k->name, k->nodes[i], g->n);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_DIM ? (kp->dim < 0 || kp->dim >= g->ndims) : (kp->node < 0 || kp->node >= g->n))
			return cg_internal(c, "kernel %s has a parameter out of range", k->name);
	}
	if (k->kind == KERNEL_ROW && k->rank == 0)
		return cg_internal(c, "row kernel %s has no rows", k->name);
	return true;
}

static bool gen_kernels(Cg *c)
{
	const Plan *p = c->p;
	struct CgKernelInfo *info = ARENA_ARRAY(c->a, struct CgKernelInfo, p->nkernels + 1);
	c->m->kinfo = info;
	c->m->nkernels = p->nkernels;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (!check_kernel(c, k))
			return false;
		c->k = k;
		c->kid = i;
		c->kname = kernel_ident(c->a, k->name);
		c->info = &info[i];
		info[i].kind = k->kind;
		info[i].first_entry = c->m->nentries;
		cg_bind_params(c, k);
		if (!(k->kind == KERNEL_ROW ? cg_row(c) : cg_pointwise(c)) || c->d->set)
			return false;
		clean_kernel(c, k);
	}
	return true;
}

const char *cg_module_source(const CgModule *m, const bool *want, Arena *a)
{
	uint64_t helpers = 0;
	uint8_t ophelp[OP_COUNT] = {0};
	int n = 0;
	for (int e = 0; e < m->nentries; e++)
		if (!want || want[e]) {
			helpers |= m->entries[e].helpers;
			for (int op = 0; op < OP_COUNT; op++)
				ophelp[op] |= m->entries[e].ophelp[op];
			n++;
		}
	StrBuf sb;
	sb_init(&sb, a);
	sb_printf(&sb, "// %s: generated by fusec %d.%d.%d; %d kernel%s, ", m->name, FUSEC_VERSION_MAJOR,
	          FUSEC_VERSION_MINOR, FUSEC_VERSION_PATCH, m->nkernels, m->nkernels == 1 ? "" : "s");
	if (n == m->nentries)
		sb_printf(&sb, "%d entr%s.\n", n, n == 1 ? "y" : "ies");
	else
		sb_printf(&sb, "%d of %s %d entries.\n", n, m->nkernels == 1 ? "its" : "their", m->nentries);
	cg_prelude(&sb, helpers, ophelp);
	for (int e = 0; e < m->nentries; e++)
		if (!want || want[e])
			sb_puts(&sb, m->entries[e].text);
	return sb_str(&sb);
}

/* The casts whose rounding their stores do (cg_store_cast): to f16 or bf16,
 * of a value computed in float (f32, f16, bf16: not f64, whose conversion
 * rounds to odd first, nor integers), read by no node. fz_out rounds once
 * what the cast would round twice (round(round(v)) = round(v)), and ptxas
 * does not see that a half's value rounds to itself: a cast before the store
 * cost a conversion, a shift and a second conversion an element (f16: two
 * conversions), each output of layernorm bf16 and rmsnorm f16. */
static bool *find_store_casts(const Graph *g, Arena *a)
{
	bool *read = ARENA_ARRAY(a, bool, g->n + 1), *cast = ARENA_ARRAY(a, bool, g->n + 1);
	for (int i = 0; i < g->n; i++)
		for (int j = 0; j < ir_ops[g->nodes[i].op].arity && j < 3; j++)
			if (g->nodes[i].args[j] >= 0)
				read[g->nodes[i].args[j]] = true;
	for (int i = 0; i < g->n; i++) {
		const Node *n = &g->nodes[i];
		bool half = n->dtype == FZ_F16 || n->dtype == FZ_BF16;
		bool from = n->operand == FZ_F32 || n->operand == FZ_F16 || n->operand == FZ_BF16;
		cast[i] = n->op == OP_CAST && half && from && !read[i];
	}
	return cast;
}

bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	const Graph *g = p->g;
	Cg c = {.p = p, .g = g, .a = a, .d = d, .m = out};
	int n = g ? g->n : 0;
	c.vname = ARENA_ARRAY(a, const char *, n + 1);
	c.pin = ARENA_ARRAY(a, int32_t, n + 1);
	c.mark = ARENA_ARRAY(a, int32_t, n + 1);
	c.mark2 = ARENA_ARRAY(a, int32_t, n + 1);
	c.mark3 = ARENA_ARRAY(a, int32_t, n + 1);
	for (int i = 0; i < n; i++)
		c.pin[i] = -1;
	if (!g)
		return cg_internal(&c, "the plan has no graph");
	out->name = kernel_ident(a, g->name);
	c.store_cast = find_store_casts(g, a);
	if (!gen_kernels(&c))
		return false;
	out->source = cg_module_source(out, NULL, a);
	return true;
}
