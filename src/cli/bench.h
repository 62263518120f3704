/*
 * bench.h: what `fusec bench` knows of a run, shared by its files:
 *
 *   bench.c        the options, what the plans say (no GPU needed), the command
 *   bench_gpu.c    the GPU: seeded inputs, buffer sets, the copy bandwidth, timing
 *   bench_print.c  the table and the JSON
 */
#ifndef FUSEC_CLI_BENCH_H
#define FUSEC_CLI_BENCH_H

#include "cli.h"
#include "runtime/driver.h"
#include "runtime/rt.h"

enum { MODE_FUSED = 1, MODE_PER_OP = 2 };
enum { NMODES = 2 };

typedef struct BenchOptions {
	const char *file;
	const char **dim_names;  /* as given, up to '=' (NUL-terminated copies) */
	int64_t *dim_values;
	int ndims;
	bool json, dry_run, graph;
	int reps, warmup, modes, device;
	uint64_t seed;
} BenchOptions;

/* One mode: what its plan says, then what was measured. */
typedef struct ModeStats {
	const char *name;        /* "fused", "per_op" */
	const char *title;       /* "fused", "per-op" */
	bool fuse, on;
	Compilation *comp;       /* STAGE_FUSED: graph and plan */
	int kernels;             /* launched per call */
	int64_t bytes_moved;     /* the plan's kernels' bytes read + written */
	bool measured;
	double median_us, min_us;
	double host_us, wall_us; /* per call, back to back */
	double graph_host_us, graph_wall_us; /* the same replaying a CUDA graph (--graph) */
	double capture_us;       /* host time of the launch that captures the graph */
	double auto_host_us, auto_wall_us; /* the default mode, graphs automatic */
	double pushed_host_us, pushed_wall_us; /* graphs off, no context current */
	double compile_ms;       /* fz_program_compile_file and the first launch (JIT and load) */
	double jit_ms;           /* of which compiling, reading and loading modules */
	uint64_t compiles;       /* NVRTC compiles it caused */
	uint64_t disk_hits;
} ModeStats;

typedef struct Bench {
	BenchOptions o;
	ModeStats mode[NMODES];
	const Graph *g;          /* of the first mode that is on */
	int64_t *dims;           /* g->ndims bound sizes */
	int64_t min_bytes;
	/* GPU */
	fz_context *ctx;
	fz_device_info info;
	int l2_bytes;
	CUdevice dev;
	CUcontext cu;
	CUstream stream;
	int64_t copy_bytes;      /* read + written by one copy */
	double copy_us, copy_gbps;
	int nsets;
	void **slab;             /* per input/output (inputs first): nsets buffers */
	size_t *stride;          /* bytes between sets (0 for a scalar) */
	double *scalar;          /* per input: the value of a scalar input */
	double out_rel_diff;     /* fused vs per-op outputs, -1 if not compared */
	bool out_nan;
} Bench;

/* bench.c: the bytes of node id's value at sizes dims (-1 if too many). */
int64_t bench_value_bytes(const Graph *g, NodeId id, const int64_t *dims);

/* bench_gpu.c */
/* Open the device and its context: -1 to go on, else the exit status. */
int bench_gpu_open(Bench *b);
/* Measure every mode that is on (and the copy bandwidth); false on an error,
 * said on stderr. */
bool bench_measure(Bench *b);
void bench_gpu_close(Bench *b);

/* bench_print.c */
void bench_print_json(const Bench *b);
void bench_print_table(const Bench *b);

#endif
