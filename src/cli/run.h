/*
 * run.h: `fusec run`, shared by the CPU path (run.c) and the GPU path
 * (run_gpu.c). run.c parses the options, compiles the program, binds the dims
 * and prepares every input (read from .npy, filled from a number, or seeded
 * random); then either runs the reference interpreter (--cpu) or hands the
 * job to cli_run_gpu. Both finish with cli_run_write_outputs.
 */
#ifndef FUSEC_CLI_RUN_H
#define FUSEC_CLI_RUN_H

#include "cli.h"
#include "tensor.h"

typedef struct RunJob {
	const char *path;      /* the program file, as given */
	Compilation *comp;     /* STAGE_IR for --cpu, else STAGE_CUDA (fused unless no_fuse) */
	const int64_t *dims;   /* comp->graph.ndims sizes, all bound */
	const Tensor *inputs;  /* comp->graph.ninputs tensors matching the declarations */
	const char *out_dir;   /* where NAME.npy files go; created when they are written */
	uint64_t seed;         /* the seed random inputs were made with */
	int device;            /* --device: the GPU's ordinal */
	bool no_fuse;          /* --no-fuse: one kernel per op */
	bool check;            /* --check: also run the CPU interpreter and compare */
	bool interpret;        /* --interpret: on the GPU interpreter, no kernel compiled */
} RunJob;

/* Run the job on the GPU and write its outputs; returns the exit code. */
int cli_run_gpu(const RunJob *job);

/* Write every output (comp->graph.noutputs tensors) to OUT_DIR/NAME.npy and
 * print one summary line each. All or nothing: OUT_DIR is created (with its
 * parents) only now; every destination is checked first (a directory in the
 * way, another user's file in a sticky directory); all files are written
 * under temporary names, and renamed only when all succeeded. A rename that
 * fails even so is reported with the outputs already replaced. Returns the
 * exit code. */
int cli_run_write_outputs(const RunJob *job, const Tensor *outputs);

#endif
