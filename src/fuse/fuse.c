/*
 * fuse.c: the plan, from a partition to kernels with parameters.
 *
 * fuse_plan marks what the outputs need, lets a partition decide what is
 * stored and which kernel writes it (partition.c in fused mode, per_op below
 * otherwise), then builds every kernel the same way: a walk back from its
 * seeds, with an explicit stack (chains of 100,000 nodes are legal), that
 * computes every node it meets except leaves (parameters or constants) and
 * values another kernel stored for it (parameters read). The walk gives the
 * nodes, the reductions, the parameters, the dependencies and the edges that
 * cross kernels, so the two modes cannot disagree on what a kernel needs.
 *
 * Parameter order, which codegen and the runtime follow: tensors read
 * (ascending node id), tensors written (ascending node id, then output
 * index), scalar inputs (ascending node id), symbolic dims (ascending).
 */
#include "fuse/fuse_int.h"

#include <stdlib.h>
#include <string.h>

bool fuse_shape_eq(int ra, const Dim *a, int rb, const Dim *b)
{
	return ra == rb && (ra == 0 || memcmp(a, b, sizeof(Dim) * (size_t)ra) == 0);
}

int fuse_proto_new(FuseCtx *c, KernelKind kind, int rank, const Dim *domain, int level)
{
	Proto k = {.kind = kind, .rank = rank, .domain = domain, .level = level, .key = -1};
	VEC_PUSH(c->a, c->protos, c->nprotos, c->capprotos, k);
	return c->nprotos - 1;
}

void fuse_proto_seed(FuseCtx *c, int proto, NodeId n)
{
	Proto *k = &c->protos[proto];
	if (k->key < 0)
		k->key = n;
	VEC_PUSH(c->a, k->seeds, k->nseeds, k->capseeds, n);
}

/* ---- per-op mode -------------------------------------------------------------- */

/* Every node its own kernel, as eager PyTorch runs them, except promotions
 * (NF_IMPLICIT casts), which the consumer's kernel computes as it loads. An
 * output that is a leaf gets a copy (or fill) kernel. */
static void per_op(FuseCtx *c)
{
	const Graph *g = c->g;
	for (NodeId n = 0; n < c->n; n++) {
		const Node *nd = &g->nodes[n];
		bool out = c->first_out[n] >= 0;
		if (!c->live[n] || (fuse_is_leaf(nd) && !out))
			continue;
		if (nd->op == OP_CAST && (nd->flags & NF_IMPLICIT) && !out)
			continue;
		bool red = fuse_is_reduce(nd);
		const Node *dom = red ? &g->nodes[nd->args[0]] : nd;
		int k = fuse_proto_new(c, red ? KERNEL_ROW : KERNEL_POINTWISE, dom->rank, dom->shape, c->nprotos);
		c->stored[n] = 1;
		c->byref[n] = !fuse_is_leaf(nd);
		c->home[n] = k;
		fuse_proto_seed(c, k, n);
	}
}

/* ---- building kernels ------------------------------------------------------------ */

typedef struct Builder {
	FuseCtx *c;
	int *mark;          /* per node: the walk that last met it */
	int stamp;
	int *kid;           /* proto -> kernel id */
	uint8_t *dimseen;
	NodeId *stack;
	int nstack, capstack;
	NodeId *members, *reads, *scalars;
	int nmembers, capmembers, nreads, capreads, nscalars, capscalars;
	Unfused *unf;
	int nunf, capunf;
} Builder;

static int cmp_node(const void *a, const void *b)
{
	NodeId x = *(const NodeId *)a, y = *(const NodeId *)b;
	return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* qsort and memcpy must not see the NULL of an empty arena vector. */
static void sort(void *base, int n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, (size_t)n, size, cmp);
}

/* Does kernel `proto` read n from memory (rather than compute it)? */
static bool reads_ref(const FuseCtx *c, NodeId n, int proto)
{
	return c->stored[n] && c->byref[n] && c->home[n] != proto && !fuse_is_leaf(&c->g->nodes[n]);
}

static void walk(Builder *b, int proto)
{
	FuseCtx *c = b->c;
	const Proto *K = &c->protos[proto];
	int stamp = ++b->stamp;
	b->nstack = b->nmembers = b->nreads = b->nscalars = 0;
	for (int i = 0; i < K->nseeds; i++)
		VEC_PUSH(c->a, b->stack, b->nstack, b->capstack, K->seeds[i]);
	while (b->nstack > 0) {
		NodeId n = b->stack[--b->nstack];
		if (b->mark[n] == stamp)
			continue;
		b->mark[n] = stamp;
		const Node *nd = &c->g->nodes[n];
		if (nd->op == OP_INPUT && nd->rank == 0)
			VEC_PUSH(c->a, b->scalars, b->nscalars, b->capscalars, n);
		else if (nd->op == OP_INPUT || reads_ref(c, n, proto))
			VEC_PUSH(c->a, b->reads, b->nreads, b->capreads, n);
		else if (!fuse_is_leaf(nd)) {
			VEC_PUSH(c->a, b->members, b->nmembers, b->capmembers, n);
			for (int k = 0; k < ir_ops[nd->op].arity; k++)
				if (b->mark[nd->args[k]] != stamp)
					VEC_PUSH(c->a, b->stack, b->nstack, b->capstack, nd->args[k]);
		}
	}
	sort(b->members, b->nmembers, sizeof(NodeId), cmp_node);
	sort(b->reads, b->nreads, sizeof(NodeId), cmp_node);
	sort(b->scalars, b->nscalars, sizeof(NodeId), cmp_node);
}

static void add_param(Builder *b, Kernel *k, int *cap, KParam prm)
{
	VEC_PUSH(b->c->a, k->params, k->nparams, *cap, prm);
}

static void note_dims(Builder *b, int rank, const Dim *s)
{
	for (int i = 0; i < rank; i++)
		if (dim_is_sym(s[i]))
			b->dimseen[dim_sym(s[i])] = 1;
}

static void make_params(Builder *b, int proto, Kernel *k)
{
	FuseCtx *c = b->c;
	const Graph *g = c->g;
	const Proto *K = &c->protos[proto];
	int cap = 0;
	for (int i = 0; i < b->nreads; i++) {
		NodeId n = b->reads[i];
		int out = g->nodes[n].op == OP_INPUT ? -1 : c->first_out[n];
		add_param(b, k, &cap, (KParam){PARAM_IN, n, out, -1});
	}
	for (int i = 0; i < K->nseeds; i++) {
		NodeId n = K->seeds[i];
		if (!c->stored[n] || c->home[n] != proto)
			continue;
		if (c->first_out[n] < 0)
			add_param(b, k, &cap, (KParam){PARAM_OUT, n, -1, -1});
		for (int o = c->first_out[n]; o >= 0; o = c->next_out[o])
			add_param(b, k, &cap, (KParam){PARAM_OUT, n, o, -1});
	}
	for (int i = 0; i < b->nscalars; i++)
		add_param(b, k, &cap, (KParam){PARAM_SCALAR, b->scalars[i], -1, -1});
	note_dims(b, k->rank, k->domain);
	for (int i = 0; i < k->nparams; i++)
		note_dims(b, g->nodes[k->params[i].node].rank, g->nodes[k->params[i].node].shape);
	for (int i = 0; i < b->nmembers; i++)
		note_dims(b, g->nodes[b->members[i]].rank, g->nodes[b->members[i]].shape);
	for (int d = 0; d < g->ndims; d++)
		if (b->dimseen[d]) {
			b->dimseen[d] = 0;
			add_param(b, k, &cap, (KParam){PARAM_DIM, -1, -1, d});
		}
}

/* Everything but the id, name and dependencies. */
static void fill_kernel(Builder *b, int proto, Kernel *k)
{
	FuseCtx *c = b->c;
	const Proto *K = &c->protos[proto];
	k->kind = K->kind;
	k->rank = K->rank;
	if (K->rank > 0)
		memcpy(k->domain, K->domain, sizeof(Dim) * (size_t)K->rank);
	walk(b, proto);
	k->nnodes = b->nmembers;
	k->nodes = ARENA_ARRAY(c->a, NodeId, b->nmembers);
	if (b->nmembers > 0)
		memcpy(k->nodes, b->members, sizeof(NodeId) * (size_t)b->nmembers);
	k->reductions = ARENA_ARRAY(c->a, NodeId, b->nmembers);
	for (int i = 0; i < b->nmembers; i++)
		if (fuse_is_reduce(&c->g->nodes[b->members[i]]))
			k->reductions[k->nreductions++] = b->members[i];
	make_params(b, proto, k);
}

/* Dependencies (kernels that wrote what it reads) and the unfused edges. */
static bool make_deps(Builder *b, int proto, Kernel *k)
{
	FuseCtx *c = b->c;
	const Graph *g = c->g;
	int cap = 0;
	for (int i = 0; i < k->nparams && k->params[i].kind == PARAM_IN; i++) {
		NodeId n = k->params[i].node;
		if (g->nodes[n].op == OP_INPUT)
			continue;
		int dep = b->kid[c->home[n]];
		if (dep >= k->id)
			return diag_error(c->d, c->a, g->nodes[n].span,
			                  "internal error: kernel %d reads %%%d from kernel %d, which runs later", k->id, n, dep);
		VEC_PUSH(c->a, k->deps, k->ndeps, cap, dep);
	}
	sort(k->deps, k->ndeps, sizeof(int), cmp_int);
	int nd = 0;
	for (int i = 0; i < k->ndeps; i++)
		if (nd == 0 || k->deps[nd - 1] != k->deps[i])
			k->deps[nd++] = k->deps[i];
	k->ndeps = nd;
	for (int i = 0; i < k->nnodes; i++) {
		const Node *m = &g->nodes[k->nodes[i]];
		for (int j = 0; j < ir_ops[m->op].arity; j++)
			if (reads_ref(c, m->args[j], proto)) {
				Unfused u = {m->args[j], k->nodes[i], k->id, NULL};
				VEC_PUSH(c->a, b->unf, b->nunf, b->capunf, u);
			}
	}
	return true;
}

/* ---- kernel parameter space ---------------------------------------------------------- */

/* CUDA's classic 4 KiB of kernel parameters, less what codegen may add
 * (a workspace pointer and its size for split rows). */
enum { CG_RESERVED_PARAM_BYTES = 32, PARAM_BYTES = FZ_MAX_KERNEL_PARAM_BYTES - CG_RESERVED_PARAM_BYTES };

static size_t param_bytes(const Graph *g, const Kernel *k)
{
	size_t bytes = 0;
	for (int j = 0; j < k->nparams; j++) {
		size_t sz = 8;
		if (k->params[j].kind == PARAM_SCALAR)
			sz = fz_dtype_size((fz_dtype)g->nodes[k->params[j].node].dtype);
		bytes = (bytes + sz - 1) / sz * sz + sz;
	}
	return bytes;
}

/* A pointwise kernel with too many parameters (hundreds of inputs and
 * outputs) becomes several, each writing some of the outputs: they are
 * sinks, so any split is valid. */
static void split_wide(Builder *b)
{
	FuseCtx *c = b->c;
	for (int i = 0; i < c->nprotos; i++) {
		Proto *K = &c->protos[i];
		Kernel k = {0};
		if (K->kind != KERNEL_POINTWISE || K->nseeds < 2)
			continue;
		fill_kernel(b, i, &k);
		if (param_bytes(c->g, &k) <= PARAM_BYTES)
			continue;
		int half = K->nseeds / 2;
		int j = fuse_proto_new(c, K->kind, K->rank, K->domain, K->level);
		K = &c->protos[i];
		for (int s = half; s < K->nseeds; s++) {
			fuse_proto_seed(c, j, K->seeds[s]);
			c->home[K->seeds[s]] = j;
		}
		K->nseeds = half;
		i--;
	}
}

static bool check_param_space(Builder *b, const Kernel *k)
{
	const Graph *g = b->c->g;
	size_t bytes = param_bytes(g, k);
	if (bytes <= PARAM_BYTES)
		return true;
	Span sp = {0, 0, 1, 1};
	for (int j = 0; j < k->nparams; j++)
		if (k->params[j].kind == PARAM_OUT) {
			sp = k->params[j].output >= 0 ? g->outputs[k->params[j].output].span : g->nodes[k->params[j].node].span;
			break;
		}
	return diag_error(b->c->d, b->c->a, sp, "kernel %s would take %zu bytes of parameters; the limit is %d", k->name,
	                  bytes, PARAM_BYTES);
}

/* ---- launch order ---------------------------------------------------------------------- */

typedef struct Order {
	int level;
	NodeId key;
	int proto;
} Order;

static int cmp_order(const void *a, const void *b)
{
	const Order *x = a, *y = b;
	if (x->level != y->level)
		return (x->level > y->level) - (x->level < y->level);
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->proto > y->proto) - (x->proto < y->proto);
}

static int cmp_unfused(const void *a, const void *b)
{
	const Unfused *x = a, *y = b;
	if (x->consumer != y->consumer)
		return (x->consumer > y->consumer) - (x->consumer < y->consumer);
	return (x->producer > y->producer) - (x->producer < y->producer);
}

static void finish_unfused(Builder *b, Plan *p)
{
	sort(b->unf, b->nunf, sizeof(Unfused), cmp_unfused);
	int n = 0;
	for (int i = 0; i < b->nunf; i++)
		if (n == 0 || b->unf[n - 1].producer != b->unf[i].producer || b->unf[n - 1].consumer != b->unf[i].consumer)
			b->unf[n++] = b->unf[i];
	p->unfused = b->unf;
	p->nunfused = n;
}

static bool build(FuseCtx *c, Plan *p)
{
	Builder b = {.c = c};
	b.mark = ARENA_ARRAY(c->a, int, c->n + 1);
	b.dimseen = ARENA_ARRAY(c->a, uint8_t, c->g->ndims + 1);
	split_wide(&b);
	Order *order = ARENA_ARRAY(c->a, Order, c->nprotos + 1);
	b.kid = ARENA_ARRAY(c->a, int, c->nprotos + 1);
	for (int i = 0; i < c->nprotos; i++)
		order[i] = (Order){c->protos[i].level, c->protos[i].key, i};
	sort(order, c->nprotos, sizeof(Order), cmp_order);
	for (int i = 0; i < c->nprotos; i++)
		b.kid[order[i].proto] = i;
	p->nkernels = c->nprotos;
	p->kernels = ARENA_ARRAY(c->a, Kernel, c->nprotos + 1);
	for (int i = 0; i < c->nprotos; i++) {
		Kernel *k = &p->kernels[i];
		k->id = i;
		k->name = arena_printf(c->a, "%s_k%d", c->g->name, i);
		fill_kernel(&b, order[i].proto, k);
		if (!make_deps(&b, order[i].proto, k) || !check_param_space(&b, k))
			return false;
	}
	finish_unfused(&b, p);
	return true;
}

/* ---- the plan ---------------------------------------------------------------------- */

static void mark_live(FuseCtx *c)
{
	const Graph *g = c->g;
	for (int i = g->noutputs - 1; i >= 0; i--) {
		NodeId o = g->outputs[i].node;
		c->next_out[i] = c->first_out[o];
		c->first_out[o] = i;
		c->live[o] = 1;
	}
	for (NodeId n = c->n - 1; n >= 0; n--) {
		const Node *nd = &g->nodes[n];
		if (c->live[n])
			for (int k = 0; k < ir_ops[nd->op].arity; k++)
				c->live[nd->args[k]] = 1;
	}
}

bool fuse_plan(const Graph *g, bool fused, Arena *a, Plan *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	out->g = g;
	out->fused = fused;
	FuseCtx c = {.g = g, .a = a, .d = d, .fused = fused, .n = g->n};
	c.live = ARENA_ARRAY(a, uint8_t, g->n + 1);
	c.stored = ARENA_ARRAY(a, uint8_t, g->n + 1);
	c.byref = ARENA_ARRAY(a, uint8_t, g->n + 1);
	c.home = ARENA_ARRAY(a, int, g->n + 1);
	c.first_out = ARENA_ARRAY(a, int, g->n + 1);
	c.next_out = ARENA_ARRAY(a, int, g->noutputs + 1);
	for (NodeId n = 0; n < g->n; n++)
		c.home[n] = c.first_out[n] = -1;
	mark_live(&c);
	if (fused)
		fuse_partition(&c);
	else
		per_op(&c);
	if (!build(&c, out))
		return false;
	out->stored = c.stored;
	int cap = 0;
	for (NodeId n = 0; n < g->n; n++)
		if (c.stored[n] && c.first_out[n] < 0 && !fuse_is_leaf(&g->nodes[n]))
			VEC_PUSH(a, out->temps, out->ntemps, cap, n);
	fuse_explain_edges(out, a);
	return true;
}
