/*
 * cg.c: a plan to one CUDA C module.
 *
 * Every kernel of the plan becomes one extern "C" entry (pointwise.c,
 * row.c); the module is the prelude (only the helpers the kernels use)
 * followed by the kernels in launch order. Generation walks each kernel's
 * node list, never the graph's depth, with scratch arrays indexed by node
 * that are allocated once per plan and cleaned per kernel, so per-op plans
 * of 100,000 kernels cost time linear in their size.
 *
 * The module includes nothing and is compiled by NVRTC in well under a
 * tenth of a second for small programs (docs/performance.md has the
 * figures); the design choices that keep it so: one entry per kernel (row
 * schedules are launch configurations of the same code, not separate
 * kernels), vector loads in templates rather than unrolled copies, and only
 * the prelude pieces that are used.
 */
#include "codegen/cgint.h"

#include <string.h>

_Static_assert(OP_COUNT + 8 <= 64, "CGH_OP bits must fit in 64");

CgDevice cg_default_device(void)
{
	CgDevice d = {.cc_major = 9, .cc_minor = 0, .sm_count = 132, .max_threads_per_sm = 2048,
	              .smem_per_block_optin = 232448, .l2_bytes = 50 << 20};
	return d;
}

const char *cg_schedule_name(int schedule)
{
	static const char *names[] = {"pointwise", "warp", "block", "loop", "split"};
	return schedule >= 0 && schedule <= CG_SCHED_SPLIT ? names[schedule] : "?";
}

/* The kernel's name as a C identifier (the plan promises one; make sure). */
static const char *kernel_ident(Cg *c, const Kernel *k)
{
	const char *name = k->name && *k->name ? k->name : "fz_kernel";
	char *s = arena_alloc(c->a, strlen(name) + 2);
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

static void add_entry(Cg *c, CgModule *m, int *cap, const Kernel *k, const char *suffix, bool workspace)
{
	CgEntry e = {.kernel = k->id, .schedule = 0};
	e.symbol = arena_printf(c->a, "%s_%s", c->kname, suffix);
	e.nargs = k->nparams + (workspace ? 1 : 0);
	e.args = ARENA_ARRAY(c->a, CgArg, e.nargs + 1);
	for (int i = 0; i < k->nparams; i++)
		e.args[i] = (CgArg){CGARG_PARAM, i, 0};
	if (workspace)
		e.args[k->nparams] = (CgArg){CGARG_WORKSPACE, 0, 0};
	VEC_PUSH(c->a, m->entries, m->nentries, *cap, e);
}

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

static bool gen_kernels(Cg *c, CgModule *m)
{
	const Plan *p = c->p;
	int cap = 0;
	struct CgKernelInfo *info = ARENA_ARRAY(c->a, struct CgKernelInfo, p->nkernels + 1);
	m->kinfo = info;
	m->nkernels = p->nkernels;
	for (int i = 0; i < p->nkernels; i++) {
		const Kernel *k = &p->kernels[i];
		if (!check_kernel(c, k))
			return false;
		c->k = k;
		c->kid = i;
		c->kname = kernel_ident(c, k);
		c->info = &info[i];
		info[i].kind = k->kind;
		info[i].entry = m->nentries;
		cg_bind_params(c, k);
		bool row = k->kind == KERNEL_ROW;
		add_entry(c, m, &cap, k, row ? "row" : "pw", row);
		if (!(row ? cg_row(c) : cg_pointwise(c)) || c->d->set)
			return false;
		clean_kernel(c, k);
	}
	return true;
}

bool cg_generate(const Plan *p, Arena *a, CgModule *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	const Graph *g = p->g;
	StrBuf kernels;
	sb_init(&kernels, a);
	Cg c = {.p = p, .g = g, .a = a, .d = d, .sb = &kernels};
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
	if (!gen_kernels(&c, out))
		return false;
	StrBuf sb;
	sb_init(&sb, a);
	Kernel named = {.name = g->name};
	sb_printf(&sb, "// %s: generated by fusec %d.%d.%d; %d kernel%s.\n", kernel_ident(&c, &named),
	          FUSEC_VERSION_MAJOR, FUSEC_VERSION_MINOR, FUSEC_VERSION_PATCH, p->nkernels, p->nkernels == 1 ? "" : "s");
	cg_prelude(&sb, c.helpers);
	sb_putn(&sb, kernels.buf ? kernels.buf : "", kernels.len);
	out->source = sb_str(&sb);
	return true;
}
