/*
 * pipeline.h: one compilation, from source text to CUDA C.
 *
 * pipeline.c lists the passes in order on one screen; every stage's result
 * stays in the Compilation so that --emit can print any of them. Everything
 * is allocated in the compilation's arena.
 */
#ifndef FUSEC_PIPELINE_H
#define FUSEC_PIPELINE_H

#include "codegen/cg.h"
#include "frontend/ast.h"
#include "fuse/fuse.h"
#include "ir/ir.h"

typedef enum PipeStage {
	STAGE_TOKENS,
	STAGE_AST,
	STAGE_IR,
	STAGE_FUSED,
	STAGE_CUDA
} PipeStage;

typedef struct PipeOptions {
	PipeStage stop;   /* last stage to run */
	bool fuse;        /* false: one kernel per op (--no-fuse) */
} PipeOptions;

PipeOptions pipe_default_options(void);

typedef struct Compilation {
	Arena *arena;
	Source src;
	PipeOptions opt;
	fz_status status;       /* FZ_OK, or why it stopped */
	Diag diag;              /* the first error, when status == FZ_ERR_PROGRAM */
	const char *diag_text;  /* the rendered diagnostic (or a message without location) */
	TokenList tokens;
	AstProgram ast;
	Graph graph;
	Plan plan;
	CgModule module;
} Compilation;

/* A compilation of `len` bytes of `text` (copied) named `name` (its stem
 * names the kernels). NULL if out of memory. */
Compilation *pipe_new(const char *name, const char *text, size_t len, const PipeOptions *opt);
/* Run the stages up to opt.stop; returns c->status. */
fz_status pipe_run(Compilation *c);
void pipe_free(Compilation *c);

/* A C identifier made from a file name's stem ("my-prog.fz" -> "my_prog"). */
const char *pipe_program_name(Arena *a, const char *path);

#endif
