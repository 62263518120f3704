/*
 * pipeline.c: the passes, in order.
 *
 *   lex       src/frontend/lexer.re   text -> tokens
 *   parse     src/frontend/parse.c    tokens -> AST
 *   build     src/ir/build.c          AST -> typed op graph (fns inlined,
 *                                     constants folded, CSE by hash-consing)
 *   dce       src/ir/passes.c         drop nodes no output needs
 *   fuse      src/fuse/fuse.c         graph -> kernels
 *   codegen   src/codegen/cg.c        kernels -> CUDA C
 *
 * Running out of memory anywhere longjmps back here (see common.h).
 */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

PipeOptions pipe_default_options(void)
{
	PipeOptions o = {.stop = STAGE_CUDA, .fuse = true};
	return o;
}

const char *pipe_program_name(Arena *a, const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	const char *dot = strrchr(base, '.');
	if (dot && dot != base)
		n = (size_t)(dot - base);
	if (n == 0 || strcmp(path, "-") == 0 || strcmp(path, "<stdin>") == 0)
		return "stdin";
	char *s = arena_alloc(a, n + 2);
	size_t j = 0;
	if (!((base[0] >= 'A' && base[0] <= 'Z') || (base[0] >= 'a' && base[0] <= 'z') || base[0] == '_'))
		s[j++] = 'p';
	for (size_t i = 0; i < n && j < 48; i++) {
		char ch = base[i];
		bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
		s[j++] = ok ? ch : '_';
	}
	s[j] = 0;
	return s;
}

Compilation *pipe_new(const char *name, const char *text, size_t len, const PipeOptions *opt)
{
	Arena *a = arena_new();
	if (!a)
		return NULL;
	Compilation *c = calloc(1, sizeof *c);
	if (!c) {
		arena_free(a);
		return NULL;
	}
	c->arena = a;
	c->opt = opt ? *opt : pipe_default_options();
	jmp_buf oom;
	arena_set_oom(a, &oom);
	if (setjmp(oom)) {
		arena_free(a);
		free(c);
		return NULL;
	}
	c->src.name = arena_strdup(a, name);
	/* Text over the limit is refused by pipe_run from its length alone:
	 * copying it first (a terabyte, or SIZE_MAX bytes) would only fail. */
	c->src.text = len <= FZ_MAX_SOURCE_BYTES ? arena_strndup(a, text, len) : "";
	c->src.len = len;
	arena_set_oom(a, NULL);
	return c;
}

static fz_status fail_program(Compilation *c)
{
	c->status = FZ_ERR_PROGRAM;
	c->diag_text = diag_render(c->arena, &c->src, &c->diag);
	return c->status;
}

fz_status pipe_run(Compilation *c)
{
	jmp_buf oom;
	arena_set_oom(c->arena, &oom);
	if (setjmp(oom)) {
		arena_set_oom(c->arena, NULL);
		c->status = FZ_ERR_NOMEM;
		c->diag_text = "out of memory while compiling";
		return c->status;
	}
	c->status = FZ_OK;
	if (c->src.len > FZ_MAX_SOURCE_BYTES) {
		c->status = FZ_ERR_LIMIT;
		c->diag_text = arena_printf(c->arena, "%s: error: program is %zu bytes; the limit is %u bytes\n",
		                            c->src.name, c->src.len, FZ_MAX_SOURCE_BYTES);
		goto done;
	}
	if (!fe_lex(&c->src, c->arena, &c->tokens, &c->diag)) {
		fail_program(c);
		goto done;
	}
	if (c->opt.stop == STAGE_TOKENS)
		goto done;
	if (!fe_parse(&c->src, &c->tokens, c->arena, &c->ast, &c->diag)) {
		fail_program(c);
		goto done;
	}
	if (c->opt.stop == STAGE_AST)
		goto done;
	const char *pname = pipe_program_name(c->arena, c->src.name);
	if (!ir_build(&c->src, &c->ast, c->arena, pname, &c->graph, &c->diag)) {
		fail_program(c);
		goto done;
	}
	c->graph.src = &c->src;
	ir_dce(&c->graph);
	if (c->opt.stop == STAGE_IR)
		goto done;
	if (!fuse_plan(&c->graph, c->opt.fuse, c->arena, &c->plan, &c->diag)) {
		fail_program(c);
		goto done;
	}
	if (c->opt.stop == STAGE_FUSED)
		goto done;
	if (!cg_generate(&c->plan, c->arena, &c->module, &c->diag)) {
		fail_program(c);
		goto done;
	}
done:
	arena_set_oom(c->arena, NULL);
	return c->status;
}

void pipe_free(Compilation *c)
{
	if (!c)
		return;
	arena_free(c->arena);
	free(c);
}
