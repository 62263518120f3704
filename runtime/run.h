/*
 * run.h: what a run is, shared by the files that make one up (internal to
 * the runtime):
 *
 *   launch.c  creation, launching (kernel by kernel or a CUDA graph, or the
 *             GPU interpreter), the results
 *   bind.c    the bindings: inputs, scalars, outputs and dims, checked
 *             against the program's declarations
 *   plans.c   the size plans: what a launch at given sizes needs, computed
 *             once per size (entries, geometry, arguments, temporaries)
 */
#ifndef FUSEC_RUNTIME_RUN_H
#define FUSEC_RUNTIME_RUN_H

#include "runtime/rt.h"

enum { RT_MAX_PLANS = 16, RT_ALIGN = 256 };

/* fz_run_set_graph: off, on, automatic (the default) */
enum { RT_GRAPH_OFF, RT_GRAPH_ON, RT_GRAPH_AUTO };

typedef enum BindKind { BIND_NONE, BIND_DEVICE, BIND_HOST } BindKind;

typedef struct RtInput {
	BindKind kind;
	fz_dtype dtype;
	int rank;
	int64_t shape[FZ_MAX_RANK];
	CUdeviceptr host_copy;    /* BIND_HOST tensors: device memory the run owns */
	size_t host_cap;
	unsigned char scalar[8];  /* scalar inputs: the value in the dtype's storage format */
	bool ragged;              /* BIND_DEVICE: the caller's pointer is not 16-byte aligned */
} RtInput;

typedef struct RtOutput {
	CUdeviceptr user;         /* caller memory, or 0 */
	bool ragged;              /* user: not 16-byte aligned */
	fz_dtype dtype;
	int rank;
	int64_t shape[FZ_MAX_RANK]; /* of the caller's buffer */
	CUdeviceptr own;          /* run-owned memory */
	size_t own_cap;
	int64_t cur[FZ_MAX_RANK]; /* shape at the last launch */
	size_t bytes;             /* size at the last launch */
	bool written;             /* some kernel writes it (else it is copied) */
	void *host;               /* constant outputs: the value, expanded */
	size_t host_cap;
} RtOutput;

typedef struct RtLaunch {
	CUfunction f;
	unsigned grid[3], block[3], smem;
	bool cooperative;         /* its blocks must be co-resident (split rows) */
	bool l2_stream;           /* an L2 window over its inputs (CgLaunch.l2_stream) */
	void **params;
	int nparams;
	size_t *in_bytes;         /* l2_stream: per argument, the bytes of a tensor input
	                             (0 for any other argument), at the plan's sizes */
	CUdeviceptr ws;           /* workspace */
	size_t ws_bytes;
	size_t ws_zero;           /* its leading bytes zeroed before each launch */
} RtLaunch;

typedef struct RtSizePlan {
	int64_t *dims;            /* the key, with aligned */
	bool aligned;             /* every buffer 16-byte aligned (rt_bindings_aligned, cg_launch's
	                             aligned): a ragged buffer takes another plan */
	RtLaunch *launches;
	int nlaunches;
	void **params;            /* every launch's argument pointers */
	int64_t *vals;            /* the launch plans' values the kernels receive (CgArg) */
	size_t *in_bytes;         /* every launch's RtLaunch.in_bytes */
	CUdeviceptr scratch;      /* temporaries and workspaces */
	CUdeviceptr *temp_ptr;    /* per Plan.temps */
	CUgraphExec exec;         /* captured with the values in snap, or NULL */
	uint64_t *snap;           /* the bound values of this plan's last launch */
	int streak;               /* launches in a row with those values (capped) */
	bool no_graph;            /* capture failed once: launch kernel by kernel */
	uint64_t last_use;
} RtSizePlan;

struct fz_run {
	fz_program *p;
	fz_context *ctx;
	const Graph *g;
	const Plan *plan;
	const CgModule *m;
	CUstream stream, capture;
	int graph_mode;           /* RT_GRAPH_* */
	bool graph_ok;            /* no host copies (which cannot be captured) */
	int ncopies;              /* outputs copied after the kernels, at these sizes */
	RtInput *in;
	RtOutput *out;
	int64_t *dims_set;        /* by fz_run_bind_dim; -1 where not */
	int64_t *dims;            /* at the last launch: kernel arguments point here */
	CUdeviceptr *slot;        /* per node: the memory kernels read it from */
	CUdeviceptr *out_slot;    /* per output: the memory it is written to */
	int *writer;              /* per node: the output index a kernel writes it as, or -1 */
	bool dirty;               /* a shape changed since the last launch */
	bool launched;            /* outputs have values (a launch went out) */
	RtSizePlan *plans[RT_MAX_PLANS];
	int nplans;
	RtSizePlan *cur;
	uint64_t tick;
	int nsnap;
	uint64_t *snap;           /* scratch for graph snapshots */
	char err[RT_ERR_MAX];
};

static inline size_t align_up(size_t n) { return (n + RT_ALIGN - 1) / RT_ALIGN * RT_ALIGN; }

static inline fz_status cu_fail(fz_run *r, CUresult res, const char *what) { return rt_fail_cu(r->err, res, what); }

/* bind.c */
/* Output i goes to ptr; a node a kernel writes as output i is read from there. */
void rt_set_out_ptr(fz_run *r, int i, CUdeviceptr ptr);
/* The index of the dim called name, or -1. */
int rt_find_dim(const Graph *g, const char *name);
/* FZ_ERR_BINDING: the program has no `what` named name. */
fz_status rt_no_such(fz_run *r, const char *what, const char *name);
/* Node n's type as the program declares it, for messages. */
const char *rt_decl_text(fz_run *r, const Node *n, char *buf, size_t cap);
bool rt_same_shape(int rank, const int64_t *a, const int64_t *b);
/* Whether every caller's buffer bound now is 16-byte aligned (bind.c). */
bool rt_bindings_aligned(const fz_run *r);
/* Make sure *buf holds `bytes` (waiting for the stream before freeing). */
fz_status rt_ensure_buffer(fz_run *r, CUdeviceptr *buf, size_t *cap, size_t bytes, const char *what);
/* A double as a value of dtype t, in storage format; false if an integer
 * dtype cannot hold it exactly. */
bool rt_scalar_bytes(fz_dtype t, double v, unsigned char out[8]);

/* plans.c */
void rt_plan_free(RtSizePlan *sp);
/* Every input bound; the dims bound from their shapes. */
fz_status rt_resolve_dims(fz_run *r, int64_t *dims);
/* max/min of an empty row: an error before anything runs. */
fz_status rt_check_reductions(fz_run *r, const int64_t *dims);
/* Output i's shape and bytes at these sizes, checked against the caller's
 * buffer, or run-owned memory for it. */
fz_status rt_prepare_output(fz_run *r, int i, const int64_t *dims);
/* Bindings changed: find (or make) the plan for the new sizes. */
fz_status rt_prepare(fz_run *r);

#endif
