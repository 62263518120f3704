/*
 * partition.c: fused mode, the graph cut into row groups and pointwise kernels.
 *
 * One walk over the node array, in topological order, no recursion:
 *
 *  - A node is *anchored* to a row group when it depends, through values that
 *    are not stored, on a reduction of that group; otherwise it is *free*.
 *    Free nodes are never stored (outputs aside) and never placed: every
 *    kernel that needs one recomputes it, reading its leaves and stored values.
 *  - A reduction joins the group of its input when the input is anchored to
 *    a group over the same rows; with a free input it joins a recent group
 *    over the same rows (two softmaxes over one shape are one kernel) or
 *    starts one.
 *  - An elementwise node joins the group of its anchored operands when its
 *    shape is the group's rows [A..., N] or per-row shape [A..., 1]; operands
 *    of two groups over the same rows merge them. An operand that cannot join
 *    (another iteration space, another row length) is *cut*: its per-row
 *    frontier is stored, and the consumer's kernel recomputes the rest. A cut
 *    of a full-row value stores the per-row values it is made of, never the
 *    row itself: for exp(x - max(x)) that is max(x), B values, not B*N.
 *
 * Acyclicity: every group has a level; a kernel reads only from lower levels.
 * A group nobody reads from yet is *unsealed* and rises to whatever level its
 * members need; the first cut seals it at its level. A node joins a sealed
 * group only if everything it reads is below that level, and two groups merge
 * only if the levels stay consistent, so no grouping ever makes a cycle (the
 * fallback is a cut, which is always valid). Free nodes carry `rd`, the
 * highest level they read, so that the checks are O(1).
 *
 * Afterwards free outputs (and outputs that are inputs or constants) go to a
 * group over their shape when one can take them (an extra output of the row
 * kernel), else to one pointwise kernel per shape. Pointwise kernels are
 * sinks: nothing reads them, since free values are recomputed.
 */
#include "fuse/fuse_int.h"

#include <string.h>

typedef struct Group {
	int parent;         /* union-find */
	int rank;
	const Dim *rows;    /* [A..., N]: a reduction input's shape */
	int level;          /* unsealed: the least level its members need */
	bool sealed;        /* read by another kernel: level is fixed */
	int prev_same;      /* the group created before it over the same rows */
	int proto;
} Group;

typedef struct Part {
	FuseCtx *c;
	const Graph *g;
	Group *grp;
	int ngrp, capgrp;
	int *anc;           /* per node: its group (not yet find()ed), -1 if free */
	int *rd;            /* free nodes: the highest level read, -1 if none */
	uint8_t *cut;       /* per-row frontier stored for outside consumers */
	NodeId *stack;
	int nstack, capstack;
	int *tab;           /* rows hash -> latest group with those rows */
	uint32_t tabmask;
} Part;

enum { RECENT_GROUPS = 8 };  /* groups over the same rows a free reduction may try */

static int imax(int a, int b) { return a > b ? a : b; }

static int find(Part *p, int gi)
{
	while (p->grp[gi].parent != gi) {
		p->grp[gi].parent = p->grp[p->grp[gi].parent].parent;
		gi = p->grp[gi].parent;
	}
	return gi;
}

static int group_of(Part *p, NodeId n) { return p->anc[n] < 0 ? -1 : find(p, p->anc[n]); }

static bool is_perrow(int rank, const Dim *s, const Group *G)
{
	if (rank != G->rank || rank == 0 || s[rank - 1] != 1 || G->rows[rank - 1] == 1)
		return false;
	return memcmp(s, G->rows, sizeof(Dim) * (size_t)(rank - 1)) == 0;
}

/* A node of this shape can be computed in the group's kernel, one value per
 * row point or one per row. */
static bool fits(const Node *nd, const Group *G)
{
	return fuse_shape_eq(nd->rank, nd->shape, G->rank, G->rows) || is_perrow(nd->rank, nd->shape, G);
}

static bool same_rows(const Group *a, const Group *b) { return fuse_shape_eq(a->rank, a->rows, b->rank, b->rows); }

/* ---- the rows table ---------------------------------------------------------- */

static uint32_t rows_hash(int rank, const Dim *rows)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)rank;
	for (int i = 0; i < rank; i++)
		h = (h ^ (uint64_t)rows[i]) * 1099511628211ull;
	return (uint32_t)(h ^ (h >> 32));
}

static int *rows_slot(Part *p, int rank, const Dim *rows)
{
	uint32_t i = rows_hash(rank, rows) & p->tabmask;
	while (p->tab[i] >= 0) {
		const Group *G = &p->grp[p->tab[i]];
		if (fuse_shape_eq(G->rank, G->rows, rank, rows))
			break;
		i = (i + 1) & p->tabmask;
	}
	return &p->tab[i];
}

static int group_new(Part *p, const Node *input, int level)
{
	Group G = {.parent = p->ngrp, .rank = input->rank, .rows = input->shape, .level = level,
	           .prev_same = -1, .proto = -1};
	int *slot = rows_slot(p, input->rank, input->shape);
	G.prev_same = *slot;
	VEC_PUSH(p->c->a, p->grp, p->ngrp, p->capgrp, G);
	*slot = p->ngrp - 1;
	return p->ngrp - 1;
}

/* ---- cuts --------------------------------------------------------------------- */

/* Distinct operands of b anchored to group gi. */
static int anchored_operands(Part *p, NodeId b, int gi)
{
	const Node *nd = &p->g->nodes[b];
	int n = 0;
	for (int k = 0; k < ir_ops[nd->op].arity; k++) {
		bool again = false;
		for (int j = 0; j < k; j++)
			again |= nd->args[j] == nd->args[k];
		n += !again && group_of(p, nd->args[k]) == gi;
	}
	return n;
}

/* Make anchored node `a` readable outside its group, and seal the group.
 * What is stored is its per-row frontier: the per-row values that the rows
 * are made of; a per-row value that depends on one other (rsqrt(var + eps)
 * on var) gives way to it, since the reductions are what other consumers
 * most likely share. Outputs are stored already. Returns the level a reader
 * must be above. */
static int cut(Part *p, NodeId a)
{
	FuseCtx *c = p->c;
	int gi = group_of(p, a);
	Group *G = &p->grp[gi];
	G->sealed = true;
	p->nstack = 0;
	VEC_PUSH(c->a, p->stack, p->nstack, p->capstack, a);
	while (p->nstack > 0) {
		NodeId b = p->stack[--p->nstack];
		if (p->cut[b])
			continue;
		p->cut[b] = 1;
		const Node *nd = &p->g->nodes[b];
		if (c->stored[b])
			continue;
		bool full = fuse_shape_eq(nd->rank, nd->shape, G->rank, G->rows);
		if (fuse_is_reduce(nd) || (!full && anchored_operands(p, b, gi) > 1)) {
			c->stored[b] = 1;
			continue;
		}
		for (int k = 0; k < ir_ops[nd->op].arity; k++) {
			NodeId x = nd->args[k];
			if (!p->cut[x] && group_of(p, x) == gi)
				VEC_PUSH(c->a, p->stack, p->nstack, p->capstack, x);
		}
	}
	return G->level;
}

/* ---- placing nodes -------------------------------------------------------------- */

typedef struct GState {
	bool sealed;
	int level;
} GState;

/* Fold group h into the state of the group being formed; false (state kept)
 * if their levels cannot be reconciled. */
static bool merge_state(GState *s, const Group *h)
{
	if (!s->sealed && !h->sealed) {
		s->level = imax(s->level, h->level);
		return true;
	}
	if (s->sealed && h->sealed)
		return s->level == h->level;
	if (s->sealed)
		return h->level <= s->level;
	if (s->level > h->level)
		return false;
	*s = (GState){true, h->level};
	return true;
}

/* Node n joins group cand[pick], merging the candidates over the same rows
 * that can be merged and cutting the operands of the others. `reads` is the
 * highest level n reads already. Dry run unless `commit`; false if the level
 * of the group would not be above what n reads. */
static bool join(Part *p, NodeId n, const int *cand, int ncand, int pick, int reads, bool commit)
{
	Group *G = &p->grp[cand[pick]];
	GState st = {G->sealed, G->level};
	bool merged[3] = {false, false, false};
	for (int j = 0; j < ncand; j++) {
		if (j == pick)
			continue;
		const Group *H = &p->grp[cand[j]];
		if (same_rows(G, H) && merge_state(&st, H))
			merged[j] = true;
		else
			reads = imax(reads, H->level);
	}
	if (st.sealed && st.level <= reads)
		return false;
	if (!commit)
		return true;
	int root = cand[pick];
	for (int j = 0; j < ncand; j++)
		if (merged[j])
			p->grp[cand[j]].parent = root;
	p->grp[root].sealed = st.sealed;
	p->grp[root].level = st.sealed ? st.level : imax(st.level, reads + 1);
	const Node *nd = &p->g->nodes[n];
	for (int k = 0; k < ir_ops[nd->op].arity; k++) {
		int h = group_of(p, nd->args[k]);
		if (h >= 0 && h != root)
			cut(p, nd->args[k]);
	}
	p->anc[n] = root;
	return true;
}

static void place_elementwise(Part *p, NodeId n)
{
	const Node *nd = &p->g->nodes[n];
	int reads = -1, cand[3], ncand = 0;
	for (int k = 0; k < ir_ops[nd->op].arity; k++) {
		NodeId a = nd->args[k];
		int h = group_of(p, a);
		if (fuse_is_leaf(&p->g->nodes[a]))
			continue;
		if (h < 0) {
			reads = imax(reads, p->rd[a]);
		} else if (!fits(nd, &p->grp[h])) {
			reads = imax(reads, cut(p, a));
		} else {
			bool seen = false;
			for (int j = 0; j < ncand; j++)
				seen |= cand[j] == h;
			if (!seen)
				cand[ncand++] = h;
		}
	}
	for (int pick = 0; pick < ncand; pick++)
		if (join(p, n, cand, ncand, pick, reads, false)) {
			join(p, n, cand, ncand, pick, reads, true);
			return;
		}
	for (int k = 0; k < ir_ops[nd->op].arity; k++)
		if (group_of(p, nd->args[k]) >= 0)
			reads = imax(reads, cut(p, nd->args[k]));
	p->rd[n] = reads;
}

/* A recent group over these rows that can take a reduction reading levels up
 * to `reads`, or -1. */
static int recent_group(Part *p, const Node *input, int reads)
{
	int gi = *rows_slot(p, input->rank, input->shape);
	for (int tries = 0; gi >= 0 && tries < RECENT_GROUPS; tries++, gi = p->grp[gi].prev_same) {
		int r = find(p, gi);
		if (!p->grp[r].sealed || p->grp[r].level > reads)
			return r;
	}
	return -1;
}

static void place_reduction(Part *p, NodeId n)
{
	NodeId in = p->g->nodes[n].args[0];
	const Node *ind = &p->g->nodes[in];
	int h = group_of(p, in), reads = -1;
	if (h >= 0 && fuse_shape_eq(ind->rank, ind->shape, p->grp[h].rank, p->grp[h].rows)) {
		p->anc[n] = h;
		return;
	}
	if (h >= 0)
		reads = cut(p, in);
	else if (!fuse_is_leaf(ind))
		reads = p->rd[in];
	int gi = recent_group(p, ind, reads);
	if (gi < 0)
		gi = group_new(p, ind, reads + 1);
	else if (!p->grp[gi].sealed)
		p->grp[gi].level = imax(p->grp[gi].level, reads + 1);
	p->anc[n] = gi;
}

/* ---- kernels ---------------------------------------------------------------------- */

/* The kernel for a free output (or an output that is a leaf): a row group
 * over its shape that can take it, preferring full rows, else the pointwise
 * kernel of its shape. */
static int home_free_output(Part *p, NodeId o)
{
	FuseCtx *c = p->c;
	const Node *nd = &p->g->nodes[o];
	int reads = fuse_is_leaf(nd) ? -1 : p->rd[o];
	for (int pass = 0; pass < 2; pass++)
		for (int gi = 0; gi < p->ngrp; gi++) {
			Group *G = &p->grp[gi];
			if (G->parent != gi || G->proto < 0)
				continue;
			bool shape_ok = pass == 0 ? fuse_shape_eq(nd->rank, nd->shape, G->rank, G->rows) : is_perrow(nd->rank, nd->shape, G);
			if (!shape_ok || (G->sealed && G->level <= reads))
				continue;
			if (!G->sealed)
				G->level = imax(G->level, reads + 1);
			return G->proto;
		}
	for (int k = 0; k < c->nprotos; k++) {
		Proto *K = &c->protos[k];
		if (K->kind == KERNEL_POINTWISE && fuse_shape_eq(K->rank, K->domain, nd->rank, nd->shape)) {
			K->level = imax(K->level, reads + 1);
			return k;
		}
	}
	return fuse_proto_new(c, KERNEL_POINTWISE, nd->rank, nd->shape, reads + 1);
}

static void make_kernels(Part *p)
{
	FuseCtx *c = p->c;
	const Graph *g = p->g;
	for (NodeId n = 0; n < c->n; n++) {
		if (!c->live[n] || p->anc[n] < 0)
			continue;
		Group *G = &p->grp[find(p, p->anc[n])];
		if (G->proto < 0)
			G->proto = fuse_proto_new(c, KERNEL_ROW, G->rank, G->rows, 0);
		if (c->stored[n]) {
			c->home[n] = G->proto;
			c->byref[n] = 1;
		}
	}
	for (int i = 0; i < g->noutputs; i++) {
		NodeId o = g->outputs[i].node;
		if (c->home[o] < 0)
			c->home[o] = home_free_output(p, o);
	}
	for (int gi = 0; gi < p->ngrp; gi++)
		if (p->grp[gi].parent == gi && p->grp[gi].proto >= 0)
			c->protos[p->grp[gi].proto].level = p->grp[gi].level;
	for (NodeId n = 0; n < c->n; n++) {
		if (!c->live[n])
			continue;
		if (c->stored[n])
			fuse_proto_seed(c, c->home[n], n);
		else if (fuse_is_reduce(&g->nodes[n]))
			fuse_proto_seed(c, p->grp[find(p, p->anc[n])].proto, n);
	}
}

void fuse_partition(FuseCtx *c)
{
	const Graph *g = c->g;
	Part p = {.c = c, .g = g};
	p.anc = ARENA_ARRAY(c->a, int, c->n);
	p.rd = ARENA_ARRAY(c->a, int, c->n);
	p.cut = ARENA_ARRAY(c->a, uint8_t, c->n);
	int nred = 0;
	for (NodeId n = 0; n < c->n; n++) {
		p.anc[n] = -1;
		p.rd[n] = -1;
		nred += fuse_is_reduce(&g->nodes[n]);
	}
	uint32_t size = 16;
	while (size < 2u * (uint32_t)nred)
		size *= 2;
	p.tab = ARENA_ARRAY(c->a, int, size);
	memset(p.tab, 0xff, sizeof(int) * size);
	p.tabmask = size - 1;
	for (int i = 0; i < g->noutputs; i++)
		c->stored[g->outputs[i].node] = 1;
	for (NodeId n = 0; n < c->n; n++) {
		const Node *nd = &g->nodes[n];
		if (!c->live[n] || fuse_is_leaf(nd))
			continue;
		if (fuse_is_reduce(nd))
			place_reduction(&p, n);
		else
			place_elementwise(&p, n);
	}
	make_kernels(&p);
}
