/*
 * fuse_int.h: what the files of the fusion stage share.
 *
 * Planning is two steps. A partition step decides, for every node, whether it
 * is stored and which kernel writes it, and lists the kernels as Protos (a
 * kind, a domain, a launch level and seeds: the nodes the kernel must
 * compute). partition.c does it for fused mode, fuse.c for per-op mode. Then
 * one builder (fuse.c) turns the Protos into Kernels by walking back from the
 * seeds: a leaf is a parameter, a stored node written by another kernel is
 * read from memory when it is marked `byref`, anything else is computed in
 * the kernel (recomputed, if other kernels compute it too). So both modes get
 * their parameter lists, dependencies and unfused edges from the same code.
 *
 * Levels make the kernel graph acyclic by construction: a kernel only reads
 * values written by kernels of a strictly lower level, and kernels launch in
 * order of level.
 */
#ifndef FUSEC_FUSE_INT_H
#define FUSEC_FUSE_INT_H

#include "fuse/fuse.h"
#include "frontend/diag.h"

typedef struct Proto {
	KernelKind kind;
	int rank;
	const Dim *domain;      /* points into a node's shape */
	int level;              /* launch level: reads only from lower levels */
	NodeId key;             /* tie-break in launch order: its first seed */
	NodeId *seeds;          /* written nodes, and (row) its reductions; ascending */
	int nseeds, capseeds;
} Proto;

typedef struct FuseCtx {
	const Graph *g;
	Arena *a;
	Diag *d;
	bool fused;
	int n;                  /* g->n */
	uint8_t *live;          /* some output depends on it */
	uint8_t *stored;        /* written to device memory by a kernel */
	uint8_t *byref;         /* stored, and other kernels read it rather than recompute it */
	int *home;              /* stored: the Proto that writes it; else -1 */
	int *first_out;         /* per node: its first index in g->outputs, or -1 */
	int *next_out;          /* per output: the next output of the same node, or -1 */
	Proto *protos;
	int nprotos, capprotos;
} FuseCtx;

static inline bool fuse_is_leaf(const Node *nd) { return ir_ops[nd->op].arity == 0; }
static inline bool fuse_is_reduce(const Node *nd) { return ir_ops[nd->op].cls == OC_REDUCE; }

bool fuse_shape_eq(int ra, const Dim *a, int rb, const Dim *b);
/* A new Proto; returns its index. */
int fuse_proto_new(FuseCtx *c, KernelKind kind, int rank, const Dim *domain, int level);
void fuse_proto_seed(FuseCtx *c, int proto, NodeId n);

/* partition.c: fused mode. Fills stored, byref, home and the Protos. */
void fuse_partition(FuseCtx *c);

/* explain.c: fill Plan.unfused[i].why. */
void fuse_explain_edges(Plan *p, Arena *a);

/* print.c: per node: the kernel that writes it, or -1. */
int *fuse_writers(const Plan *p, Arena *a);

#endif
