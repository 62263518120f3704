/*
 * test_codegen.c: CUDA C generation (src/codegen) and NVRTC (runtime/nvrtc.c).
 *
 * What is checked, without a GPU:
 *   - every example and every golden program that compiles, fused and per
 *     op, is valid CUDA: NVRTC compiles it for sm_80 and sm_90 with an EMPTY
 *     log (no warnings either);
 *   - user identifiers cannot inject code: names that are CUDA keywords or
 *     clash with generated names, and source text with comment closers,
 *     backslashes at line ends and trigraph-like sequences;
 *   - the generated text: one entry per kernel named <program>_k<id>_<pw|row>,
 *     no #include, every computing line commented with its source;
 *   - launch configurations: the schedule chosen per row length and row
 *     count (warp, block, split, loop), the row cache sized by the kernel's
 *     own formula, grids for zero sizes, pointwise grids.
 *
 * The schedule design (row.c, launch.c, docs/performance.md): one entry per
 * row kernel runs every schedule, chosen at launch by geometry alone
 * (threads per row, rows per block, blocks per row, shared memory for the
 * row cache). The trade-off: a kernel specialised per schedule could keep a
 * short row in registers and drop the unused branches, but every entry
 * costs NVRTC time (a cold compile must stay near NVRTC's own start-up
 * cost); the shared-memory cache costs a little bandwidth of the SM's
 * shared memory, which memory-bound kernels have to spare.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "codegen/cgint.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static Compilation *compile_mode(const char *src, bool fused)
{
	PipeOptions opt = pipe_default_options();
	opt.fuse = fused;
	Compilation *c = pipe_new("test.fz", src, strlen(src), &opt);
	ck_assert_ptr_nonnull(c);
	if (pipe_run(c) != FZ_OK)
		ck_abort_msg("compile failed:\n%s\nfor program:\n%s", c->diag_text ? c->diag_text : "?", src);
	return c;
}

/* NVRTC compiles the module for sm_<arch> with an empty log. */
static void assert_nvrtc_clean(Compilation *c, int arch, const char *what)
{
	RtNvrtcResult r;
	bool ok = rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, arch / 10, arch % 10, false, &r);
	ck_assert_msg(ok, "%s: NVRTC failed:\n%s", what, r.message ? r.message : "?");
	ck_assert_msg(r.log && r.log[0] == 0, "%s: NVRTC log for sm_%d is not empty:\n%s\n--- source ---\n%s", what, arch,
	              r.log, c->module.source);
	ck_assert_ptr_nonnull(r.image);
	ck_assert_msg(strstr(r.image, ".entry") != NULL, "%s: no entry in the PTX", what);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	buf[got] = 0;
	fclose(f);
	return buf;
}

/* Programs under examples/ and tests/golden/ (sorted, so loop indices are stable). */
enum { MAX_PROGRAMS = 512 };
static char *programs[MAX_PROGRAMS];
static int nprograms;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void find_programs(const char *dir)
{
	DIR *d = opendir(tu_path(dir));
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && nprograms < MAX_PROGRAMS) {
		size_t n = strlen(e->d_name);
		if (n > 3 && strcmp(e->d_name + n - 3, ".fz") == 0) {
			char rel[512];
			snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
			programs[nprograms++] = strdup(rel);
		}
	}
	closedir(d);
}

/* ---- every program is valid CUDA ----------------------------------------------------------- */

/* Loop index i: program i / 4, fused or per-op, sm_80 or sm_90. */
START_TEST(program_compiles_clean)
{
	int p = _i % nprograms, mode = _i / nprograms;
	bool fused = (mode & 2) == 0;
	int arch = (mode & 1) ? 90 : 80;
	char *text = read_file(tu_path(programs[p]));
	ck_assert_ptr_nonnull(text);
	PipeOptions opt = pipe_default_options();
	opt.fuse = fused;
	Compilation *c = pipe_new(programs[p], text, strlen(text), &opt);
	ck_assert_ptr_nonnull(c);
	if (pipe_run(c) == FZ_OK) { /* golden error cases stop earlier: nothing to check */
		char what[600];
		snprintf(what, sizeof what, "%s (%s)", programs[p], fused ? "fused" : "per-op");
		ck_assert_ptr_null(strstr(c->module.source, "#include"));
		assert_nvrtc_clean(c, arch, what);
	} else {
		ck_assert_int_ne(c->status, FZ_ERR_INTERNAL);
		ck_assert_ptr_null(strstr(c->diag_text ? c->diag_text : "", "internal error"));
	}
	pipe_free(c);
	free(text);
}
END_TEST

/* ---- names and source text cannot inject code ---------------------------------------------- */

START_TEST(keywords_as_identifiers)
{
	const char *src = "in int: f32[float, __global__]\n"
	                  "in t1: f32[__global__]\n"
	                  "in fz_in: f32\n"
	                  "in l0: f32[float, __global__]\n"
	                  "return = int * t1 + fz_in\n"
	                  "out void = return - max(return) + l0\n"
	                  "out extern = sum(exp(int))\n";
	for (int fused = 0; fused < 2; fused++) {
		Compilation *c = compile_mode(src, fused);
		const char *s = c->module.source;
		ck_assert_ptr_nonnull(strstr(s, "const float *__restrict__ in_int"));
		ck_assert_ptr_nonnull(strstr(s, "float *__restrict__ out_void"));
		ck_assert_ptr_nonnull(strstr(s, "long long dim___global__"));
		ck_assert_ptr_nonnull(strstr(s, "float in_fz_in"));
		assert_nvrtc_clean(c, 90, fused ? "keywords (fused)" : "keywords (per-op)");
		pipe_free(c);
	}
}
END_TEST

/* No generated line may end in a backslash (it would splice the next line
 * into a // comment). */
static void assert_no_splice(const char *s)
{
	for (const char *p = strchr(s, '\n'); p; p = strchr(p + 1, '\n'))
		ck_assert_msg(p == s || p[-1] != '\\', "a generated line ends in a backslash:\n%.*s", (int)(p - s), s);
}

START_TEST(source_text_in_comments)
{
	const char *src = "in x: f32[N]\n"
	                  "out y = (x * 2 # a comment */ with a backslash \\\n"
	                  "  + 1) # ?\?/ and */ /* \\\n"
	                  "out z = (x # \\\n"
	                  " # \\\n"
	                  " * x # ?\?/\n"
	                  ")\n";
	for (int fused = 0; fused < 2; fused++) {
		Compilation *c = compile_mode(src, fused);
		assert_no_splice(c->module.source);
		ck_assert_ptr_null(strstr(c->module.source, "?\?/"));
		assert_nvrtc_clean(c, 90, "comments");
		pipe_free(c);
	}
}
END_TEST

START_TEST(comment_sanitized)
{
	Compilation *c = compile_mode("in x: f32[N]\nout y = (x\n   *   3 # \\\n)\n", true);
	/* the expression's text on one line, spaces collapsed, the backslash escaped, not last */
	ck_assert_ptr_nonnull(strstr(c->module.source, "// (x * 3 # \\\\ )\n"));
	pipe_free(c);
	c = compile_mode("in x: f32[N]\nout y = x + 1 # trailing \\\n", true);
	ck_assert_ptr_nonnull(strstr(c->module.source, "// x + 1\n"));
	pipe_free(c);
}
END_TEST

/* A long expression is cut in its comment, never in the code. */
START_TEST(long_comment_truncated)
{
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	sb_puts(&sb, "in x: f32[N]\nout y = x");
	for (int i = 0; i < 60; i++)
		sb_printf(&sb, " + x * %d", i + 2);
	sb_puts(&sb, "\n");
	Compilation *c = compile_mode(sb_str(&sb), true);
	const char *s = c->module.source;
	ck_assert_ptr_nonnull(strstr(s, " ...\n"));
	for (const char *p = s, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		ck_assert_int_lt((int)(nl - p), 400);
	assert_nvrtc_clean(c, 90, "long expression");
	pipe_free(c);
	arena_free(a);
}
END_TEST

/* ---- the generated text -------------------------------------------------------------------- */

/* The arguments a path's entry takes after the kernel's parameters. */
static const CgArgKind path_args[CG_NPATHS][5] = {
	[CG_PATH_ROW] = {CGARG_WORKSPACE, CGARG_CSTRIDE, CGARG_CWS},
	[CG_PATH_SPLIT] = {CGARG_WORKSPACE, CGARG_SEG, CGARG_PARTIALS, CGARG_CSTRIDE, CGARG_CWS},
	[CG_PATH_TILE] = {CGARG_TILE, CGARG_TILE},
};

/* One entry per path a kernel can take, named after it, its arguments the
 * kernel's parameters then what its path is told; each defined in the
 * source, and alone in a source made of it. */
START_TEST(entries_and_arguments)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nin z: f32[N]\nin s: f32\nout y = z * s\nout m = x / sum(x)\n", true);
	const CgModule *m = &c->module;
	ck_assert_int_eq(c->plan.nkernels, 2);
	/* the pointwise entry; reg4, its line entries of 2 and 1 chunks for
	 * rows of one or two lines (launch_rules.c's line_rule) and its masked class,
	 * its lane class (3 to
	 * 32 elements a thread: f32 rows, written), the tile's classes
	 * of a thread a row (an entry a row length: of one chunk 2 to 4, below
	 * V with its twin of two rows a thread; of two chunks 5 to 8; of four
	 * 9 to 16) and its class of groups (the paths in registers), row and its
	 * aligned class, split (the cached ones), split rows without a cache and
	 * rows of one element */
	ck_assert_int_eq(m->nentries, 1 + 57);
	static const char *names[] = {
	    "test_k0_pw",       "test_k1_reg4",      "test_k1_line2",    "test_k1_line1",    "test_k1_reg4m",    "test_k1_reg3l",    "test_k1_reg4l",
	    "test_k1_reg5l",    "test_k1_reg6l",     "test_k1_reg7l",    "test_k1_reg8l",    "test_k1_reg9l",
	    "test_k1_reg10l",   "test_k1_reg11l",    "test_k1_reg12l",   "test_k1_reg13l",   "test_k1_reg14l",
	    "test_k1_reg15l",   "test_k1_reg16l",    "test_k1_reg17l",   "test_k1_reg18l",   "test_k1_reg19l",
	    "test_k1_reg20l",   "test_k1_reg21l",    "test_k1_reg22l",   "test_k1_reg23l",   "test_k1_reg24l",
	    "test_k1_reg25l",   "test_k1_reg26l",    "test_k1_reg27l",   "test_k1_reg28l",   "test_k1_reg29l",
	    "test_k1_reg30l",   "test_k1_reg31l",    "test_k1_reg32l",
	    "test_k1_tile1n2",  "test_k1_tile1n2x2",
	    "test_k1_tile1n3",  "test_k1_tile1n3x2", "test_k1_tile1n4",  "test_k1_tile2n5",  "test_k1_tile2n6",
	    "test_k1_tile2n7",  "test_k1_tile2n8",   "test_k1_tile4",    "test_k1_tile4n9",  "test_k1_tile4n10",
	    "test_k1_tile4n11", "test_k1_tile4n12",  "test_k1_tile4n13", "test_k1_tile4n14", "test_k1_tile4n15",
	    "test_k1_tile4n16", "test_k1_row",       "test_k1_rowa",     "test_k1_split",    "test_k1_stream",
	    "test_k1_one"};
	for (int i = 0; i < m->nentries; i++) {
		const CgEntry *e = &m->entries[i];
		const Kernel *k = &c->plan.kernels[e->kernel];
		ck_assert_str_eq(e->symbol, names[i]);
		ck_assert_int_ge(i, m->kinfo[e->kernel].first_entry);
		ck_assert_int_lt(i, m->kinfo[e->kernel].first_entry + m->kinfo[e->kernel].nentries);
		for (int j = 0; j < k->nparams; j++) {
			ck_assert_int_eq(e->args[j].kind, CGARG_PARAM);
			ck_assert_int_eq(e->args[j].index, j);
		}
		for (int j = k->nparams; j < e->nargs; j++)
			ck_assert_int_eq(e->args[j].kind, path_args[e->path][j - k->nparams]);
		ck_assert_int_eq(e->nargs, k->nparams + (e->path == CG_PATH_ROW     ? 3
		                                          : e->path == CG_PATH_SPLIT ? (e->stream ? 3 : 5)
		                                          : e->path == CG_PATH_TILE  ? (e->unstaged ? 0 : e->direct ? 1 : 2)
		                                                                     : 0));
		char decl[160];
		snprintf(decl, sizeof decl, " %s(\n", e->symbol);
		ck_assert_msg(strstr(m->source, decl) != NULL, "no definition of %s", e->symbol);
		bool want[1 + 57] = {0};
		want[i] = true;
		const char *alone = cg_module_source(m, want, c->arena);
		ck_assert_ptr_nonnull(strstr(alone, decl));
		for (int o = 0; o < m->nentries; o++) {
			snprintf(decl, sizeof decl, " %s(\n", m->entries[o].symbol);
			ck_assert_int_eq(strstr(alone, decl) != NULL, o == i);
		}
		/* only the code of its path: the register path no workspace, only split rows exchange */
		ck_assert_int_eq(strstr(alone, "fz_ws") != NULL, e->path == CG_PATH_ROW || e->path == CG_PATH_SPLIT);
		ck_assert_int_eq(strstr(alone, "fz_barrier") != NULL, e->path == CG_PATH_SPLIT);
		/* whole chunks tested once for the launch (fz_vec): the register path and the row cache's aligned class */
		bool rowa = e->path == CG_PATH_ROW && !e->masked;
		ck_assert_int_eq(strstr(alone, "fz_ldr") != NULL, e->path == CG_PATH_REG || rowa);
		ck_assert_int_eq(strstr(alone, "fz_rowcpa<") != NULL, rowa);
		/* the chunks aligned row by row: every row path but the classes for multiples of V and the staged
		 * rows (from the row's start in its tile) */
		ck_assert_int_eq(strstr(alone, "fz_s = ") != NULL,
		                 e->path == CG_PATH_SPLIT || ((e->path == CG_PATH_REG || e->path == CG_PATH_ROW) && e->masked));
		ck_assert_int_eq(strstr(alone, "fz_tin<") != NULL, e->path == CG_PATH_TILE);
		ck_assert_int_eq(strstr(alone, "fz_reduce") != NULL, e->path != CG_PATH_POINTWISE);
	}
	pipe_free(c);
}
END_TEST

/* Each entry alone is valid CUDA (the runtime compiles the entries a size
 * plan needs, nothing else). */
START_TEST(entries_compile_alone)
{
	const char *progs[] = {
		"in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n",
		"in x: f32[R, C]\nin b: f32[C]\nin r: f32[R, C]\nh = gelu_tanh(x + b) + r\nmu = mean(h)\n"
		"hc = h - mu\nout y = hc * rsqrt(mean(hc * hc) + 1e-5)\nout m = mu\n",
	};
	for (int p = 0; p < 2; p++) {
		Compilation *c = compile_mode(progs[p], true);
		for (int i = 0; i < c->module.nentries; i++) {
			bool *want = calloc((size_t)c->module.nentries, sizeof *want);
			want[i] = true;
			RtNvrtcResult r;
			const char *src = cg_module_source(&c->module, want, c->arena);
			ck_assert_msg(rt_nvrtc_compile(c->arena, src, "alone", 9, 0, false, &r), "%s", r.message);
			ck_assert_msg(r.log && r.log[0] == 0, "%s: %s", c->module.entries[i].symbol, r.log);
			free(want);
		}
		pipe_free(c);
	}
}
END_TEST

/* Every line that computes a node (`const T tN = ...;`) quotes its source. */
START_TEST(lines_commented)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nin b: f32[N]\nh = gelu_tanh(x + b)\nout y = h - mean(h)\n", true);
	int lines = 0;
	for (const char *p = c->module.source; (p = strstr(p, "\tconst float t")); p++) {
		const char *nl = strchr(p, '\n');
		const char *cm = strstr(p, "; // ");
		ck_assert_msg(cm && cm < nl, "uncommented: %.*s", (int)(nl - p), p);
		lines++;
	}
	/* x + b and gelu in pass 1, mean(h), h - mean(h) in the epilogue, in
	 * each of the fifty-three entries (the register path's two classes and
	 * its thirty lane entries, the general loop and its aligned class, which
	 * writes each pass twice (b a column operand: row_emit.c's vec_test),
	 * split rows, the eighteen entries of staged rows); split
	 * rows without a cache compute x + b and gelu again in the epilogue; and
	 * both parts of the entry for rows of one element, with b loaded once */
	ck_assert_int_eq(lines, 230);
	ck_assert_ptr_nonnull(strstr(c->module.source, "fz_gelu_tanh(t"));
	ck_assert_ptr_nonnull(strstr(c->module.source, "; // gelu_tanh(x + b)\n"));
	pipe_free(c);
}
END_TEST

/* Broadcast operands that read the same elements share one offset
 * function, computed once a chunk: a weight and a bias [C] over [T, C];
 * a per-row operand [T, 1] has its own. */
START_TEST(broadcast_offsets_shared)
{
	Compilation *c = compile_mode("in x: bf16[T, C]\nin w: bf16[C]\nin b: f32[C]\nin r: f32[T, 1]\n"
	                              "out y = tanh(x) * w + b + r\n", true);
	const char *src = c->module.source;
	int lambdas = 0, chunk_offsets = 0;
	for (const char *p = src; (p = strstr(p, "auto fz_o")); p++)
		lambdas++;
	for (const char *p = src; (p = strstr(p, "= fz_o")); p++)
		chunk_offsets++;
	ck_assert_int_eq(lambdas, 2); /* w's (b reads where w does) and r's */
	ck_assert_int_eq(chunk_offsets, 3); /* fz_b1 and fz_b3, and the group test's fz_o1_e0 */
	ck_assert_ptr_nonnull(strstr(src, "// in_b broadcasts: [C] in [T, C], read where in_w is (fz_o1)\n"));
	/* w and b: one test for both, vectors kept in the caches, else fz_ldb */
	ck_assert_ptr_nonnull(strstr(src, "const bool fz_a1 = fz_aligned(in_w, 16) && fz_aligned(in_b, 16);\n"));
	ck_assert_ptr_nonnull(strstr(src, "\t\tif (fz_r1 + 8 <= fz_o1_e0 && (fz_b1 & 7) == 0 && fz_a1) {\n"
	                                  "\t\t\tfz_ldk(l1, in_w + fz_b1);\n"
	                                  "\t\t\tfz_ldk(l2, in_b + fz_b1);\n"
	                                  "\t\t} else {\n"
	                                  "\t\t\tfz_ldb<true>(l1, in_w, fz_b1, fz_r1, fz_o1_e0, fz_c * 8, fz_o1);\n"
	                                  "\t\t\tfz_ldb<true>(l2, in_b, fz_b1, fz_r1, fz_o1_e0, fz_c * 8, fz_o1);\n"
	                                  "\t\t}\n"));
	/* r is one element of its run: no vectors, no group test */
	ck_assert_ptr_nonnull(strstr(src, "\t\tfz_ldb<false>(l3, in_r, fz_b3, fz_r3, fz_o3_e0, fz_c * 8, fz_o3);"));
	ck_assert_ptr_null(strstr(src, "fz_a3"));
	pipe_free(c);
}
END_TEST

/* fz_divm's quotient from cg_div_magic's number, as the kernel computes it. */
static uint64_t magic_quotient(uint64_t a, uint64_t magic)
{
	return (uint64_t)(uint32_t)((a * (uint32_t)magic) >> 32) >> (magic >> 32);
}

/* A divisor's magic number gives a / d for every index below 2^31: each d
 * up to 2^16 and a spread of larger ones, against the values next to each
 * multiple of d that matter (just below and at it) and the largest index;
 * none where the kernel must divide. */
START_TEST(division_magic)
{
	ck_assert_uint_eq(cg_div_magic(1), 0);
	ck_assert_uint_eq(cg_div_magic(0), 0);
	ck_assert_uint_eq(cg_div_magic(-3), 0);
	ck_assert_uint_eq(cg_div_magic(INT64_C(1) << 31), 0);
	const uint64_t top = (UINT64_C(1) << 31) - 1;
	uint64_t x = 88172645463325252u, bad_a = 0, checked = 0;
	int64_t bad_d = 0;
	for (int64_t d = 2; d <= INT32_MAX && !bad_d; d = d < (1 << 16) ? d + 1 : d + d / 61 + 1) {
		const uint64_t m = cg_div_magic(d), ud = (uint64_t)d, last = top / ud * ud;
		if (m == 0) {
			bad_d = d;
			break;
		}
		const uint64_t as[] = {0, 1, ud - 1, ud, ud + 1, 2 * ud - 1, last - 1, last, top - 1, top};
		for (size_t i = 0; i < sizeof as / sizeof as[0] && !bad_d; i++, checked++)
			if (as[i] <= top && magic_quotient(as[i], m) != as[i] / ud)
				bad_d = d, bad_a = as[i];
		for (int r = 0; r < 4 && !bad_d; r++) { /* multiples of d and their neighbours, anywhere below 2^31 */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const uint64_t q = (x % (top / ud + 1)) * ud;
			for (uint64_t a = q ? q - 1 : 0; a <= q + 1 && a <= top && !bad_d; a++, checked++)
				if (magic_quotient(a, m) != a / ud)
					bad_d = d, bad_a = a;
		}
	}
	ck_assert_msg(!bad_d, "%llu / %lld", (unsigned long long)bad_a, (long long)bad_d);
	ck_assert_uint_gt(checked, 1000000);
	const uint64_t m = cg_div_magic(INT32_MAX); /* the largest divisor with a magic number */
	ck_assert_uint_eq(magic_quotient(top, m), 1);
	ck_assert_uint_eq(magic_quotient(top - 1, m), 0);
}
END_TEST

/* A broadcast operand's offset divides by its run's extent with the magic
 * number the launch passes (fz_m<lo>_<hi>), one per range of axes; the
 * elements one by one still divide. */
START_TEST(division_magic_arguments)
{
	Compilation *c = compile_mode("in x: f32[A, B, C]\nin w: f32[B, C]\nin r: f32[A, 1, 1]\nin v: f32[B, 1]\n"
	                              "out y = x * w + r + v\n", true);
	const CgModule *m = &c->module;
	const CgEntry *e = &m->entries[m->kinfo[0].first_entry];
	int magic[4], n = 0;
	for (int i = 0; i < e->nargs; i++)
		if (e->args[i].kind == CGARG_DIVMAGIC && n < 4)
			magic[n++] = e->args[i].index;
	/* w [B, C] and r [A, 1, 1] divide by B * C (axes 1 .. 2, once for both);
	 * v [B, 1] by C, then by B */
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(magic[0], 1 * CG_DIV_AXES + 3);
	ck_assert_int_eq(magic[1], 2 * CG_DIV_AXES + 3);
	ck_assert_int_eq(magic[2], 1 * CG_DIV_AXES + 2);
	const char *s = m->source;
	ck_assert_ptr_nonnull(strstr(s, "\tlong long fz_m1_3,\n\tlong long fz_m2_3,\n\tlong long fz_m1_2)\n"));
	ck_assert_ptr_nonnull(strstr(s, "const long long q1 = div(q0, fz_o3_e1, fz_m1_2);"));
	ck_assert_ptr_nonnull(strstr(s, "= fz_o1(fz_c * 4, fz_r1, fz_divm());"));
	ck_assert_ptr_nonnull(strstr(s, "fz_o1(fz_i, fz_r, fz_div64())"));
	int64_t dims[3] = {5, 6, 7};
	CgDevice dev = {.sm_count = 4, .max_threads_per_sm = 2048, .smem_per_block_optin = 48 << 10};
	CgLaunch l;
	ck_assert(cg_launch(m, &c->plan, 0, dims, true, &dev, &l));
	CgArg a = {CGARG_DIVMAGIC, 1 * CG_DIV_AXES + 3};
	ck_assert_uint_eq((uint64_t)cg_launch_arg(m, 0, &l, &a), cg_div_magic(42));
	a.index = 2 * CG_DIV_AXES + 3;
	ck_assert_uint_eq((uint64_t)cg_launch_arg(m, 0, &l, &a), cg_div_magic(7));
	a.index = 1 * CG_DIV_AXES + 2;
	ck_assert_uint_eq((uint64_t)cg_launch_arg(m, 0, &l, &a), cg_div_magic(6));
	pipe_free(c);
}
END_TEST

/* Only the prelude pieces a module uses are in it. */
START_TEST(prelude_pieces)
{
	Compilation *c = compile_mode("in x: f32[N]\nout y = x * 2\n", true);
	ck_assert_ptr_null(strstr(c->module.source, "fz_reduce"));
	ck_assert_ptr_null(strstr(c->module.source, "fz_sigmoid("));
	ck_assert_ptr_null(strstr(c->module.source, "fz_div("));
	pipe_free(c);
	/* an op whose text names its types gets a helper, for the kinds used
	 * only; one over its operands alone is written in place */
	c = compile_mode("in x: i32[N]\nin y: i32[N]\nout q = x / y\nout e = exp(x)\nout s = sigmoid(x)\n", true);
	ck_assert_ptr_nonnull(strstr(c->module.source, "int fz_div(int x, int y)\n{\n\ttypedef int T;\n"
	                                               "\ttypedef unsigned U;\n"));
	ck_assert_ptr_null(strstr(c->module.source, "long long fz_div("));
	ck_assert_ptr_nonnull(strstr(c->module.source, "float fz_sigmoid(float x)"));
	ck_assert_ptr_null(strstr(c->module.source, "double fz_sigmoid("));
	ck_assert_ptr_null(strstr(c->module.source, "fz_exp"));
	ck_assert_ptr_nonnull(strstr(c->module.source, "= (float)l"));
	ck_assert_ptr_nonnull(strstr(c->module.source, "= exp(t"));
	ck_assert_ptr_nonnull(strstr(c->module.source, "= fz_sigmoid(t"));
	assert_nvrtc_clean(c, 80, "prelude_pieces");
	pipe_free(c);
}
END_TEST

/* exp, sigmoid, silu and division of f16/bf16 values take the prelude's
 * approximate forms (fz_<name>_h; a division by a value of the row,
 * fz_divqh); of f32 values, and where a half is converted to f32 first, the
 * accurate ones of sem.def. */
START_TEST(half_math)
{
	Compilation *c = compile_mode("in x: f16[N]\nin y: f16[N]\nin b: bf16[N]\nout e = exp(x)\n"
	                              "out s = sigmoid(b)\nout u = silu(x)\nout q = x / y\nout f = exp(f32(x))\n"
	                              "out r = x / b\n",
	                              true);
	const char *src = c->module.source;
	ck_assert_ptr_nonnull(strstr(src, "__device__ __forceinline__ float fz_exp_h(float x)"));
	ck_assert_ptr_nonnull(strstr(src, "ex2.approx.ftz.f32"));
	ck_assert_ptr_nonnull(strstr(src, "div.full.f32"));
	ck_assert_ptr_nonnull(strstr(src, "= fz_exp_h(l"));
	ck_assert_ptr_nonnull(strstr(src, "= fz_sigmoid_h(l"));
	ck_assert_ptr_nonnull(strstr(src, "= fz_silu_h(l"));
	ck_assert_ptr_nonnull(strstr(src, "= fz_div_h(l0[u], l1[u])")); /* x / y */
	ck_assert_ptr_nonnull(strstr(src, "= exp(t"));                  /* exp(f32(x)): an f32 value */
	ck_assert_ptr_nonnull(strstr(src, "= t9 / t10; // x / b"));       /* f16 with bf16 is f32 */
	ck_assert_ptr_null(strstr(src, "float fz_silu(float x)"));
	ck_assert_ptr_null(strstr(src, "float fz_sigmoid(float x)"));
	assert_nvrtc_clean(c, 80, "half_math");
	pipe_free(c);
	c = compile_mode("in x: f32[N]\nout e = exp(x)\nout u = silu(x)\n", true);
	ck_assert_ptr_null(strstr(c->module.source, "fz_exp_h"));
	ck_assert_ptr_null(strstr(c->module.source, "div.full"));
	ck_assert_ptr_nonnull(strstr(c->module.source, "float fz_silu(float x)"));
	pipe_free(c);
	/* softmax: the quotient of halves by the row's sum is a product */
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n", true);
	ck_assert_ptr_nonnull(strstr(c->module.source, "= fz_divqh("));
	ck_assert_ptr_nonnull(strstr(c->module.source, "= fz_divrh("));
	ck_assert_ptr_null(strstr(c->module.source, "= fz_divq("));
	pipe_free(c);
	c = compile_mode("in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	ck_assert_ptr_nonnull(strstr(c->module.source, "= fz_divq("));
	ck_assert_ptr_null(strstr(c->module.source, "= fz_divqh("));
	pipe_free(c);
}
END_TEST

/* A cast to a half type that only an output stores is rounded by the store
 * alone (cg.c's find_store_casts); one that a node reads, or from f64 (which
 * rounds to odd first), keeps its rounding. */
START_TEST(casts_rounded_by_stores)
{
	static const struct {
		const char *src, *kept; /* kept: the rounding that stays, or NULL */
	} cases[] = {
	    {"in x: f32[N]\nout y = bf16(x * 2)\n", NULL},
	    {"in x: f32[R, C]\nin w: f32[C]\nout y = f16(x * rsqrt(mean(x * x)) * w)\nout s = bf16(sum(x))\n", NULL},
	    {"in x: f32[N]\nh = f16(x * 2)\nout y = h\nout z = h + 1\n", "fz_round_f16(t"},
	    {"in d: f64[N]\nout y = f16(d * 2)\n", "fz_round_f16(fz_odd("},
	    {"in i: i32[N]\nout y = bf16(i)\n", "fz_round_bf16(fz_odd("},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Compilation *c = compile_mode(cases[i].src, true);
		const char *s = c->module.source;
		if (cases[i].kept) {
			ck_assert_msg(strstr(s, cases[i].kept) != NULL, "case %zu: no %s", i, cases[i].kept);
		} else {
			ck_assert_msg(!strstr(s, "fz_round_"), "case %zu rounds before its store", i);
			ck_assert_msg(strstr(s, ": rounded where it is stored") != NULL, "case %zu: no comment", i);
		}
		assert_nvrtc_clean(c, 90, "casts_rounded_by_stores");
		pipe_free(c);
	}
}
END_TEST

/* The register path's chunks past the row skip their math in kernels that
 * divide by a value of the row (softmax: each of its three passes), only in
 * the aligned class, and not in kernels of light math (layernorm) nor with
 * a broadcast stream (a masked softmax's mask, a row offset of its own). */
static int count_of(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

START_TEST(dead_chunks_skipped)
{
	static const struct {
		const char *src;
		int guards; /* in the aligned register entry */
	} cases[] = {
	    {"in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", 3},
	    {"in x: f32[B, N]\nmu = mean(x)\nxc = x - mu\nout y = xc * rsqrt(mean(xc * xc) + 1e-5)\n", 0},
	    {"in x: f16[B, H, Q, K]\nin m: bool[B, 1, 1, K]\ns = where(m, x * 0.125, -30000.0)\ne = exp(s - max(s))\n"
	     "out y = e / sum(e)\n",
	     0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Compilation *c = compile_mode(cases[i].src, true);
		int reg = 0;
		for (int e = 0; e < c->module.nentries; e++) {
			const CgEntry *en = &c->module.entries[e];
			bool aligned = en->path == CG_PATH_REG && !en->masked && !en->lane;
			reg += aligned;
			ck_assert_int_eq(count_of(en->text, "if (j0 < fz_ei) {"), aligned ? cases[i].guards : 0);
		}
		ck_assert_int_gt(reg, 0);
		assert_nvrtc_clean(c, 90, "dead_chunks_skipped");
		pipe_free(c);
	}
}
END_TEST

/* Constants keep their value exactly, in the operation's precision. */
START_TEST(literals)
{
	Compilation *c = compile_mode("in x: f32[N]\nin d: f64[N]\nin i: i64[N]\nin j: i32[N]\n"
	                              "out a = x * 0.1 + 1e30\nout b = d * 0.1\nout c = i * -9223372036854775807 - 1\n"
	                              "out e = j * 3 - 2147483647\n", true);
	const char *s = c->module.source;
	ck_assert_ptr_nonnull(strstr(s, "* 0.100000001f;"));
	ck_assert_ptr_nonnull(strstr(s, "+ 1.00000002e+30f;"));
	ck_assert_ptr_nonnull(strstr(s, "* 0.10000000000000001;"));
	ck_assert_ptr_nonnull(strstr(s, "(-9223372036854775807LL)"));
	ck_assert_ptr_nonnull(strstr(s, "fz_sub(t11, 1LL);"));
	ck_assert_ptr_nonnull(strstr(s, "fz_sub(t15, 2147483647);"));
	assert_nvrtc_clean(c, 90, "literals");
	pipe_free(c);
}
END_TEST

/* A chain of 100,000 bindings: generation walks node lists, never the
 * graph's depth (no recursion), fused (one kernel) and per op (100,000). */
START_TEST(deep_chain)
{
	enum { DEPTH = 100000 };
	StrBuf sb;
	Arena *a = arena_new();
	sb_init(&sb, a);
	sb_puts(&sb, "in x: f32[N]\nv0 = x\n");
	for (int i = 1; i < DEPTH; i++)
		sb_printf(&sb, "v%d = v%d * 1.5 + %d\n", i, i - 1, i);
	sb_printf(&sb, "out y = v%d - sum(v%d)\n", DEPTH - 1, DEPTH - 1);
	for (int fused = 1; fused >= 0; fused--) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		Compilation *c = compile_mode(sb_str(&sb), fused);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		ck_assert_int_eq(c->plan.nkernels, fused ? 1 : 2 * (DEPTH - 1) + 2);
		/* a pointwise kernel has one entry, the row kernel seven (one row of
		 * rank 1: nothing to stage; the row cache's two classes; the stream
		 * entry; rows of one element) */
		ck_assert_int_eq(c->module.nentries, c->plan.nkernels + 6);
		ck_assert_msg(s < 60, "%s: %.1f s to compile", fused ? "fused" : "per-op", s);
		/* the last link of the chain, in both */
		char want[64];
		snprintf(want, sizeof want, "+ %d.0f; // v%d * 1.5 + %d\n", DEPTH - 1, DEPTH - 2, DEPTH - 1);
		ck_assert_ptr_nonnull(strstr(c->module.source, want));
		pipe_free(c);
	}
	arena_free(a);
}
END_TEST

/* ---- launches ---------------------------------------------------------------------------------- */

static CgDevice h100(void) { return cg_default_device(); }

/* Launch kernel k of a compiled program for dims (in the graph's dim order). */
static CgLaunch launch(Compilation *c, int k, const int64_t *dims)
{
	CgLaunch l;
	CgDevice d = h100();
	ck_assert(cg_launch(&c->module, &c->plan, k, dims, true, &d, &l));
	return l;
}

static const char *softmax = "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n";

START_TEST(row_schedules_by_length)
{
	Compilation *c = compile_mode(softmax, true);
	ck_assert_int_eq(c->plan.nkernels, 1);
	ck_assert_int_eq(c->module.kinfo[0].rk, 4); /* 4 chunks of 4 a thread in registers */
	ck_assert_int_eq(c->module.kinfo[0].pf_bytes, 0); /* light f32 rows: no prefetch */
	/* short rows not a multiple of V, many: a block's rows staged through
	 * shared memory, each row in registers: 63 is 16 chunks, 4 threads of
	 * 4 chunks, 16 rows a block of 64 threads; tiles of 16 * 63 + 8 elements
	 * of x and y (fz_tld reads whole chunks, up to 3 elements past the last
	 * row) */
	CgLaunch l = launch(c, 0, (int64_t[]){1 << 20, 63});
	ck_assert_int_eq(l.path, CG_PATH_TILE);
	ck_assert_int_eq(l.rule, CG_RULE_TILE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile4");
	ck_assert_uint_eq(l.block[0], 4);
	ck_assert_uint_eq(l.block[1], 16);
	ck_assert_uint_eq(l.grid[0], 65536);
	ck_assert_int_eq(l.tiles, 2 * (16 * 63 + 8) * 4);
	ck_assert_uint_eq(l.smem, l.tiles);
	ck_assert(!l.cooperative);
	const CgEntry *te = &c->module.entries[l.entry];
	ck_assert_int_eq(te->args[te->nargs - 1].kind, CGARG_TILE); /* y's tile after x's */
	ck_assert_int_eq(cg_launch_arg(&c->module, 0, &l, &te->args[te->nargs - 1]), (16 * 63 + 8) * 4);
	ck_assert(!te->direct && strstr(te->text, "fz_tin") && !strstr(te->text, "fz_gld"));
	/* the rows staged are those that give every SM 256 threads of them, as
	 * many as with blocks of 256 (CG_TILE_FILL): 64 rows of 4 threads an
	 * SM, not a block's 16 */
	int64_t fill = (int64_t)h100().sm_count * 64;
	ck_assert_int_eq(launch(c, 0, (int64_t[]){fill, 63}).path, CG_PATH_TILE);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){fill - 1, 63}).path, CG_PATH_REG);
	/* fewer rows that a thread holds, not a multiple of V, are a thread's
	 * each all the same (CG_RULE_TILE_FEW: the register path's masked
	 * class would compute 4 chunks a thread); of a multiple of V they take
	 * the register path, whose thread holds no dead chunk */
	l = launch(c, 0, (int64_t[]){3000, 3});
	ck_assert_int_eq(l.rule, CG_RULE_TILE_FEW);
	te = &c->module.entries[l.entry];
	ck_assert_str_eq(te->symbol, "test_k0_tile1n3"); /* a row a thread: as many threads as rows */
	ck_assert_int_eq(te->rpt, 1);
	ck_assert_uint_eq(l.grid[0], 12);
	ck_assert(strstr(te->text, "if (fz_row >= fz_rows) // a thread a row, nothing staged or shared: past the rows, "
	                           "done\n\t\t\tbreak;\n"));
	l = launch(c, 0, (int64_t[]){1, 7});
	ck_assert_int_eq(l.rule, CG_RULE_TILE_FEW);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile2n7");
	ck_assert_uint_eq(l.grid[0], 1);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){3000, 8}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){3000, 4}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){(int64_t)h100().sm_count * 256, 3}).rule, CG_RULE_TILE);
	/* rows of 65 to 1024, many, not a multiple of V, in a kernel that
	 * writes rows: the lane class, a warp a row, the fewest elements a
	 * thread that hold the row (131: 5; 255: 8; 509 and 512 - 1: 16; 127:
	 * 4; 65: 3; 513: 17; 1023: 32), 4 rows a block; not few rows, nor past
	 * 1024 (the masked class), nor 64 and fewer (the stage), nor aligned
	 * rows but those below */
	l = launch(c, 0, (int64_t[]){65536, 131});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_int_eq(l.rule, CG_RULE_REG_LANE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg5l");
	ck_assert(c->module.entries[l.entry].lane && !c->module.entries[l.entry].masked);
	ck_assert_uint_eq(l.block[0], 32);
	ck_assert_uint_eq(l.block[1], 4);
	ck_assert_uint_eq(l.grid[0], 16384);
	ck_assert_uint_eq(l.smem, 0);
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 129}).entry].symbol, "test_k0_reg5l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 255}).entry].symbol, "test_k0_reg8l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 509}).entry].symbol, "test_k0_reg16l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 511}).entry].symbol, "test_k0_reg16l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 127}).entry].symbol, "test_k0_reg4l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 65}).entry].symbol, "test_k0_reg3l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 513}).entry].symbol, "test_k0_reg17l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 1023}).entry].symbol, "test_k0_reg32l");
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 63}).rule, CG_RULE_TILE);
	/* a multiple of V, past the staged rows, where the aligned class's
	 * threads would hold a fifth or more of their chunks past the row (300:
	 * 75 chunks in 32 threads of 4; 200 and 400: 50 in 64, 100 in 128): the
	 * lane class too; not where they would hold it whole (256: 64 chunks in
	 * 16 threads; 1000: 250 in 256), nor rows as short as the stage's */
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 300}).entry].symbol, "test_k0_reg10l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 200}).entry].symbol, "test_k0_reg7l");
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){65536, 400}).entry].symbol, "test_k0_reg13l");
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 1000}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 96}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 256}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 1025}).rule, CG_RULE_REG_MASKED);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){16, 255}).rule, CG_RULE_REG_MASKED);
	ck_assert_int_ne(launch(c, 0, (int64_t[]){4223, 255}).rule, CG_RULE_REG_LANE);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){4224, 255}).rule, CG_RULE_REG_LANE);
	for (int K = 3; K <= 32; K++) /* an entry each */
		ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 32 * K - 1}).rule, CG_RULE_REG_LANE);
	/* a kernel that writes only a value a row: from past the staged rows
	 * (where the lane class lost to the stage) */
	Compilation *cv = compile_mode("in x: f32[B, N]\nm = max(x)\nout s = m + log(sum(exp(x - m)))\n", true);
	ck_assert_int_eq(launch(cv, 0, (int64_t[]){65536, 127}).rule, CG_RULE_TILE);
	ck_assert_int_eq(launch(cv, 0, (int64_t[]){65536, 129}).rule, CG_RULE_REG_LANE);
	ck_assert_str_eq(cv->module.entries[launch(cv, 0, (int64_t[]){65536, 1001}).entry].symbol, "test_k0_reg32l");
	pipe_free(cv);
	/* not kernels of 8-byte values, where it was not measured */
	Compilation *c64 = compile_mode("in x: f64[B, N]\nout y = x - mean(x)\n", true);
	for (int i = 0; i < c64->module.nentries; i++)
		ck_assert_msg(!c64->module.entries[i].lane, "%s", c64->module.entries[i].symbol);
	ck_assert_int_eq(launch(c64, 0, (int64_t[]){100000, 101}).rule, CG_RULE_REG_MASKED);
	pipe_free(c64);
	/* rows of halves: a multiple of V keeps the aligned class (the lane
	 * class lost there) */
	Compilation *ch = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n", true);
	ck_assert_int_eq(launch(ch, 0, (int64_t[]){100000, 303}).rule, CG_RULE_REG_LANE);
	ck_assert_int_eq(launch(ch, 0, (int64_t[]){100000, 304}).rule, CG_RULE_REG);
	pipe_free(ch);
	/* the shortest: a thread a row of the fewest chunks, 256 rows a block,
	 * its input read from global memory (fz_gld), only y staged: one tile
	 * of 256 * 7 + 8 elements, rounded to 16 bytes; the entry of that
	 * length, its fz_n a constant */
	l = launch(c, 0, (int64_t[]){1 << 20, 7});
	te = &c->module.entries[l.entry];
	ck_assert_str_eq(te->symbol, "test_k0_tile2n7");
	ck_assert_int_eq(te->rowlen, 7);
	ck_assert(strstr(te->text, "const long long fz_n = 7; // dim_N: this entry's rows are 7 long\n"));
	ck_assert_uint_eq(l.block[0], 1);
	ck_assert_uint_eq(l.block[1], 256);
	ck_assert(te->direct);
	ck_assert(strstr(te->text, "fz_gld(") && strstr(te->text, "fz_tout_warp<4>(out_y"));
	ck_assert(!strstr(te->text, "fz_tin") && !strstr(te->text, "__syncthreads"));
	ck_assert_int_eq(l.tiles, 7200);
	ck_assert_uint_eq(l.smem, 7200);
	int ntile = 0;
	for (int a = 0; a < te->nargs; a++)
		ntile += te->args[a].kind == CGARG_TILE;
	ck_assert_int_eq(ntile, 1);
	ck_assert_int_eq(te->args[te->nargs - 1].kind, CGARG_TILE); /* y's, first in the layout */
	ck_assert_int_eq(cg_launch_arg(&c->module, 0, &l, &te->args[te->nargs - 1]), 0);
	/* shorter than a vector, many: the entry of that length, its fz_n a
	 * constant, which stages nothing (no tile, no shared memory), each row
	 * stored where it lies, two rows a thread a block's rows apart (the
	 * grid half as long); a thread past the rows leaves the loop */
	l = launch(c, 0, (int64_t[]){1 << 20, 3});
	te = &c->module.entries[l.entry];
	ck_assert_str_eq(te->symbol, "test_k0_tile1n3x2");
	ck_assert(te->direct && te->unstaged);
	ck_assert_int_eq(te->rowlen, 3);
	ck_assert_int_eq(te->rpt, 2);
	ck_assert_uint_eq(l.grid[0], (1 << 20) / 512);
	ck_assert(strstr(te->text, "const long long fz_n = 3; // dim_N: this entry's rows are 3 long\n"));
	ck_assert(strstr(te->text, "for (int fz_p = 0; fz_p < 2; fz_p++) {\n\t\t\tconst long long fz_rb = fz_rbs + "
	                           "(long long)fz_p * blockDim.y; // a block's rows apart\n"));
	ck_assert(strstr(te->text, "if (fz_row >= fz_rows) // a thread's rows, nothing staged or shared: past the rows, "
	                           "done\n\t\t\t\tbreak;\n"));
	ck_assert_int_eq(l.tiles, 0);
	ck_assert_uint_eq(l.smem, 0);
	for (int a = 0; a < te->nargs; a++)
		ck_assert_int_ne(te->args[a].kind, CGARG_TILE);
	/* rows of 2: the pair's rows adjacent, each stream's span of them (4
	 * f32) read and written as one vector, the rows' chunks moved from and
	 * to it; past the rows, the pair leaves too */
	l = launch(c, 0, (int64_t[]){1 << 20, 2});
	te = &c->module.entries[l.entry];
	ck_assert_str_eq(te->symbol, "test_k0_tile1n2x2");
	ck_assert_int_eq(te->rpt, 2);
	ck_assert(cg_tile_span(&c->module.kinfo[0], te->rowlen, te->rpt));
	ck_assert_uint_eq(l.grid[0], (1 << 20) / 512);
	ck_assert(strstr(te->text, "const long long fz_rt = fz_rbs + (long long)threadIdx.y * 2; // the thread's rows\n"
	                           "\t\tif (fz_rt >= fz_rows)\n\t\t\tbreak;\n"));
	ck_assert(strstr(te->text, "float fz_sp0[4]; // in_x\n\t\tfz_gld(fz_sp0, in_x + fz_rt * fz_n, 0, fz_spn);\n"));
	ck_assert(strstr(te->text, "const long long fz_row = fz_rt + fz_p;\n"));
	ck_assert(strstr(te->text, "fz_spld<2>(l0[k], fz_sp0, fz_p, j0);"));
	ck_assert(strstr(te->text, "fz_spst<2>(fz_sp1, fz_p, j0, "));
	ck_assert(strstr(te->text, "fz_spout(out_y + fz_rt * fz_n, fz_spn, fz_sp1);\n"));
	ck_assert_ptr_null(strstr(te->text, "fz_tr0"));
	ck_assert_int_eq(launch(c, 0, (int64_t[]){1 << 20, 1}).path, CG_PATH_POINTWISE); /* rows of one element */
	/* and up to tile_kmax chunks: 13 takes the class of 4's entry of its length */
	l = launch(c, 0, (int64_t[]){1 << 20, 13});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile4n13");
	ck_assert_uint_eq(l.block[0], 1);
	ck_assert_int_eq(l.tiles, 256 * 13 * 4 + 32);
	/* a multiple of 4 that a thread holds in fewer chunks than the register
	 * path's 4: the direct entries, as the odd widths (the register path's
	 * thread would compute its dead chunks) */
	l = launch(c, 0, (int64_t[]){1 << 20, 8});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile2n8");
	l = launch(c, 0, (int64_t[]){1 << 20, 12});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile4n12");
	ck_assert_uint_eq(l.block[0], 1);
	/* rows of one vector: a direct entry of their own, which stages
	 * nothing (no tile, no shared memory), each row's output stored where
	 * it lies (fz_tst: one vector where aligned) */
	l = launch(c, 0, (int64_t[]){1 << 20, 4});
	te = &c->module.entries[l.entry];
	ck_assert_str_eq(te->symbol, "test_k0_tile1n4");
	ck_assert(te->direct && te->unstaged);
	ck_assert_int_eq(te->rowlen, 4);
	ck_assert_uint_eq(l.block[1], 256);
	ck_assert_int_eq(l.tiles, 0);
	ck_assert_uint_eq(l.smem, 0);
	for (int a = 0; a < te->nargs; a++)
		ck_assert_int_ne(te->args[a].kind, CGARG_TILE);
	ck_assert(strstr(te->text, "float *fz_tr1 = out_y + fz_row * fz_n;") &&
	          strstr(te->text, "fz_tst(fz_tr1, j0, fz_ei, v5);") &&
	          strstr(te->text, "fz_gld(l0[k], fz_tr0, j0, (int)fz_n);"));
	ck_assert(!strstr(te->text, "fz_smem") && !strstr(te->text, "fz_tout") && !strstr(te->text, "__syncwarp"));
	/* a multiple of 4 of as many chunks as the register path's thread
	 * holds: the entry of that length, its outputs staged (faster,
	 * measured); of more: the register path's aligned vectors, rk chunks a
	 * thread, or the line entries for rows of one or two lines
	 * (row_lines_take_line_entries) */
	l = launch(c, 0, (int64_t[]){1 << 20, 16});
	ck_assert_int_eq(l.path, CG_PATH_TILE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_tile4n16");
	ck_assert_uint_eq(l.block[0], 1);
	l = launch(c, 0, (int64_t[]){1 << 20, 20});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	l = launch(c, 0, (int64_t[]){1 << 20, 96});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_uint_eq(l.block[1], 16);
	ck_assert_uint_eq(l.smem, 0);
	l = launch(c, 0, (int64_t[]){1 << 20, 64});
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_uint_eq(l.block[1], 32);
	/* too few rows to fill the device a tile a block: the register path,
	 * more threads a row while the device is idle (a chunk each) */
	l = launch(c, 0, (int64_t[]){1000, 64});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 16);
	ck_assert_uint_eq(l.block[1], 8);
	ck_assert_uint_eq(l.smem, 0);
	/* longer: part of a warp a row, several rows a block, the row in
	 * registers (no shared memory) */
	l = launch(c, 0, (int64_t[]){1 << 20, 128});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_uint_eq(l.block[1], 16);
	ck_assert_uint_eq(l.grid[0], 65536);
	ck_assert_uint_eq(l.smem, 0);
	/* 127, many rows: a warp a row, 4 elements a lane (the lane class),
	 * where the stage took 8 threads of 4 chunks a row; fewer (a warp a
	 * row would not fill half the device, nor would the stage's 8
	 * threads): the masked class, its group widened */
	l = launch(c, 0, (int64_t[]){1 << 20, 127});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4l");
	l = launch(c, 0, (int64_t[]){4000, 127});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	/* longer, not a multiple of 4: a warp a row of 5 elements a lane (the
	 * lane class); few such rows, the masked class, 34 chunks counted from
	 * each row's alignment, its group widened to fill the device */
	l = launch(c, 0, (int64_t[]){1 << 20, 133});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_int_eq(l.rule, CG_RULE_REG_LANE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg5l");
	ck_assert_uint_eq(l.block[0], 32);
	ck_assert_uint_eq(l.block[1], 4);
	ck_assert_uint_eq(l.smem, 0);
	l = launch(c, 0, (int64_t[]){1000, 133});
	ck_assert_int_eq(l.rule, CG_RULE_REG_MASKED);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	ck_assert_uint_eq(l.block[0], 64);
	/* 1024: two warps a row, 4 chunks a lane */
	l = launch(c, 0, (int64_t[]){32768, 1024});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 64);
	ck_assert_uint_eq(l.block[1], 1);
	ck_assert_uint_eq(l.grid[0], 32768);
	ck_assert_uint_eq(l.smem, 0);
	/* 4096: a block of 256 a row, the row in registers */
	l = launch(c, 0, (int64_t[]){4096, 4096});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_int_eq(l.rule, CG_RULE_REG);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_uint_eq(l.block[0], 256);
	ck_assert_uint_eq(l.block[1], 1);
	ck_assert_uint_eq(l.grid[0], 4096);
	ck_assert_uint_eq(l.smem, 0);
	/* 4098 (not a multiple of 4): up to 1026 chunks, 9 warps a row (4
	 * chunks a thread, not 512 threads of 2) */
	l = launch(c, 0, (int64_t[]){4096, 4098});
	ck_assert_int_eq(l.rule, CG_RULE_REG_MASKED);
	ck_assert_uint_eq(l.block[0], 288);
	ck_assert_uint_eq(l.smem, 0);
	/* 16383: one chunk more than 1024 threads hold from an unaligned
	 * start; the row cache over 16388 elements (the row and its shift, in
	 * whole chunks) */
	l = launch(c, 0, (int64_t[]){1024, 16383});
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_int_eq(l.rule, CG_RULE_ROW_LONG);
	ck_assert_uint_eq(l.smem, 16388 * 4);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_row"); /* any length */
	/* 16384: the register path would take 1024 threads a row (one row an
	 * SM): the row cache instead, 8 chunks a thread, 64 KiB a block */
	l = launch(c, 0, (int64_t[]){1024, 16384});
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_int_eq(l.rule, CG_RULE_ROW_WIDE);
	ck_assert_uint_eq(l.block[0], 512);
	ck_assert_uint_eq(l.smem, 65536 + 16);
	/* a multiple of V: the row cache's aligned class, whose launch is the
	 * same but for its entry; forced to the masked class, `_row` */
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	CgDevice dev = h100();
	CgLaunch lm;
	CgForce f = {.path = CG_PATH_ROW, .threads = 512, .rows = 1, .grid = 1024, .masked = true};
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){1024, 16384}, &dev, &f, &lm));
	ck_assert_str_eq(c->module.entries[lm.entry].symbol, "test_k0_row");
	ck_assert_uint_eq(lm.smem, l.smem);
	f.masked = false;
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){1024, 16384}, &dev, &f, &lm));
	ck_assert_str_eq(c->module.entries[lm.entry].symbol, "test_k0_rowa");
	/* no more rows than SMs: each SM's one row in registers */
	l = launch(c, 0, (int64_t[]){132, 16384});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 1024);
	/* 8192: 512 threads a row hold it in registers */
	l = launch(c, 0, (int64_t[]){1024, 8192});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_uint_eq(l.block[0], 512);
	/* 32768: a block of 1024 a row, 128 KiB cached (and a chunk for a
	 * misaligned start) */
	l = launch(c, 0, (int64_t[]){1024, 32768});
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_int_eq(l.rule, CG_RULE_ROW_LONG);
	ck_assert_uint_eq(l.block[0], 1024);
	ck_assert_uint_eq(l.smem, 131072 + 16);
	ck_assert_int_eq(l.workspace, 0);
	ck_assert_int_eq(l.cstride, 131072 + 16);
	ck_assert_int_eq(l.cws, -1); /* the kernel is told: in shared memory */
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	/* too long to cache in one block: split with each segment cached */
	l = launch(c, 0, (int64_t[]){1024, 1 << 20});
	ck_assert_int_eq(l.path, CG_PATH_SPLIT);
	ck_assert_int_eq(l.rule, CG_RULE_SPLIT_LONG);
	ck_assert(l.cooperative);
	ck_assert_uint_eq(l.block[0], 512);
	ck_assert_uint_gt(l.grid[1], 1);
	ck_assert_uint_le((uint64_t)l.grid[0] * l.grid[1], 132 * 2);
	ck_assert_uint_gt(l.smem, 0);
	ck_assert_uint_le(l.smem, 232448);
	ck_assert_int_eq(l.grid[1], 37); /* 4 MiB a row in segments of 113 KiB (two blocks an SM) */
	ck_assert_int_eq(l.smem, 113360);
	ck_assert_int_eq(l.seg, 28340);
	ck_assert_int_eq(l.grid[0], 7);
	ck_assert_int_eq(l.partials, 7); /* after the counters */
	/* a counter per row group, two sets of partials (rounded to 16 bytes):
	 * two a block, the most a pass of any entry finishes (the stream
	 * entry's, an online sum beside its max) */
	ck_assert_int_eq(c->module.kinfo[0].nred, 2);
	ck_assert_int_eq(l.workspace, ((int64_t)l.grid[0] + (int64_t)l.grid[0] * 2 * l.grid[1] * 2 + 1) / 2 * 2 * 8);
	ck_assert_int_eq(l.workspace_zero, (int64_t)l.grid[0] * 8);
	/* longer still: a block a row, the row cache in the workspace (global memory) */
	l = launch(c, 0, (int64_t[]){1024, 1 << 24});
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_int_eq(l.cache, CG_CACHE_GLOBAL);
	ck_assert_int_eq(l.rule, CG_RULE_ROW_GLOBAL);
	ck_assert(!l.cooperative);
	ck_assert_uint_eq(l.block[0], 1024);
	ck_assert_uint_eq(l.grid[0], 16); /* 64 MiB of cache a row: at most 1 GiB in all */
	ck_assert_uint_eq(l.smem, 0);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	/* rows of 2^30 and more keep `_row` (the aligned class's offsets are 32-bit) */
	CgLaunch lg = launch(c, 0, (int64_t[]){1024, (int64_t)1 << 30});
	ck_assert_int_eq(lg.path, CG_PATH_ROW);
	ck_assert_int_eq(lg.cache, CG_CACHE_GLOBAL);
	ck_assert_str_eq(c->module.entries[lg.entry].symbol, "test_k0_row");
	lg = launch(c, 0, (int64_t[]){1024, ((int64_t)1 << 30) - 4});
	ck_assert_str_eq(c->module.entries[lg.entry].symbol, "test_k0_rowa");
	ck_assert_int_eq(l.workspace, 16 * (((int64_t)4 << 24) + 16));
	ck_assert_int_eq(l.workspace_zero, 0);
	ck_assert_int_eq(l.cws, 0);
	/* few long rows: split to fill the device */
	l = launch(c, 0, (int64_t[]){4, 1 << 18});
	ck_assert_int_eq(l.path, CG_PATH_SPLIT);
	ck_assert_int_eq(l.rule, CG_RULE_SPLIT_FEW);
	ck_assert_uint_eq(l.grid[0], 4);
	ck_assert_uint_eq(l.smem, 4100 * 4); /* 64 segments of whole chunks over the row and its shift */
	ck_assert_uint_eq(l.grid[1], 64); /* 2 chunks a thread; 66 would fill the device */
	pipe_free(c);
}
END_TEST

/* Many rows of one or two 128-byte lines in a kernel that reads its rows,
 * and at most one column operand in one pass (launch_rules.c's line_rule):
 * the line entries (`_line<K>`), 8 threads a row, one chunk of every line
 * each (16 threads of one chunk for two lines of halves), 256 threads a
 * block, bound to 8 blocks an SM (32 registers), their rows loaded
 * directly (no prefetch, no shared memory) and their reductions shuffles
 * among the row's threads. Not fewer rows than fill the device once, nor
 * other lengths, nor kernels with a broadcast operand, two column
 * operands, a column operand and two passes, or a value a row alone. */
START_TEST(row_lines_take_line_entries)
{
	Compilation *c = compile_mode(softmax, true);
	const int64_t many = (int64_t)h100().sm_count * 2048 / 8; /* 33792 */
	CgLaunch l = launch(c, 0, (int64_t[]){262144, 32});
	const CgEntry *e = &c->module.entries[l.entry];
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_str_eq(e->symbol, "test_k0_line1");
	ck_assert(e->line && e->K == 1 && !e->masked && !e->hold && !e->lane);
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_uint_eq(l.block[1], 32);
	ck_assert_uint_eq(l.grid[0], 262144 / 32);
	ck_assert(!l.resident && l.smem == 0);
	ck_assert(strstr(e->text, "__launch_bounds__(256, 8) test_k0_line1("));
	ck_assert(strstr(e->text, "fz_reduce_group<fz_max, 8>(") && strstr(e->text, "fz_reduce_group<fz_sum, 8>("));
	ck_assert(!strstr(e->text, "fz_red[") && e->static_smem == 0);
	l = launch(c, 0, (int64_t[]){131072, 64});
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_line2");
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){many, 32}).rule, CG_RULE_REG_LINE);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){many - 1, 32}).rule, CG_RULE_REG);
	ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){many - 1, 32}).entry].symbol, "test_k0_reg4");
	ck_assert_int_eq(launch(c, 0, (int64_t[]){262144, 48}).rule, CG_RULE_REG);
	ck_assert_int_eq(launch(c, 0, (int64_t[]){65536, 128}).rule, CG_RULE_REG);
	ck_assert_int_ne(launch(c, 0, (int64_t[]){524288, 16}).rule, CG_RULE_REG_LINE);
	ck_assert_int_ne(launch(c, 0, (int64_t[]){262144, 31}).rule, CG_RULE_REG_LINE);
	/* the rest of the module's register entries keep their bound */
	ck_assert(strstr(c->module.entries[launch(c, 0, (int64_t[]){100, 32}).entry].text, "FZ_LEAN_ROW"));
	/* a forced launch of a line entry: up to its bound's 256 threads */
	CgDevice dev = h100();
	CgLaunch lf;
	CgForce f = {.path = CG_PATH_REG, .line = true, .K = 1, .threads = 8, .rows = 32, .grid = 100};
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){3200, 32}, &dev, &f, &lf));
	ck_assert_str_eq(c->module.entries[lf.entry].symbol, "test_k0_line1");
	f.rows = 64;
	ck_assert(!cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){3200, 32}, &dev, &f, &lf));
	/* its reductions shuffle among 8 threads (f32: never 16); the entry of
	 * two chunks (fz_reduce_in) takes any group */
	f = (CgForce){.path = CG_PATH_REG, .line = true, .K = 1, .threads = 4, .rows = 32, .grid = 100};
	ck_assert(!cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){3200, 16}, &dev, &f, &lf));
	f.threads = 16, f.rows = 16;
	ck_assert(!cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){3200, 64}, &dev, &f, &lf));
	f = (CgForce){.path = CG_PATH_REG, .line = true, .K = 2, .threads = 4, .rows = 32, .grid = 100};
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){3200, 16}, &dev, &f, &lf));
	ck_assert_str_eq(c->module.entries[lf.entry].symbol, "test_k0_line2");
	ck_assert(strstr(c->module.entries[lf.entry].text, "fz_reduce_in<fz_max>"));
	pipe_free(c);
	/* halves: a line is 64 elements, 8 threads; two lines 16 threads of one
	 * chunk (no entry of two: 16 elements a thread), which reduce among the
	 * block's x threads */
	Compilation *ch = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n", true);
	l = launch(ch, 0, (int64_t[]){262144, 64});
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_str_eq(ch->module.entries[l.entry].symbol, "test_k0_line1");
	ck_assert_uint_eq(l.block[0], 8);
	ck_assert_uint_eq(l.block[1], 32);
	l = launch(ch, 0, (int64_t[]){131072, 128});
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_str_eq(ch->module.entries[l.entry].symbol, "test_k0_line1");
	ck_assert_uint_eq(l.block[0], 16);
	ck_assert_uint_eq(l.block[1], 16);
	ck_assert_uint_eq(l.grid[0], 131072 / 16);
	ck_assert(strstr(ch->module.entries[l.entry].text, "fz_reduce_line<fz_sum>("));
	ck_assert_int_eq(launch(ch, 0, (int64_t[]){16896, 128}).rule, CG_RULE_REG_LINE); /* 16 threads fill it */
	ck_assert_int_ne(launch(ch, 0, (int64_t[]){16895, 128}).rule, CG_RULE_REG_LINE);
	ck_assert_int_ne(launch(ch, 0, (int64_t[]){262144, 32}).rule, CG_RULE_REG_LINE);
	for (int i = 0; i < ch->module.nentries; i++)
		ck_assert_str_ne(ch->module.entries[i].symbol, "test_k0_line2");
	f = (CgForce){.path = CG_PATH_REG, .line = true, .K = 1, .threads = 16, .rows = 16, .grid = 100};
	ck_assert(cg_launch_forced(&ch->module, &ch->plan, 0, (int64_t[]){3200, 128}, &dev, &f, &lf));
	f.threads = 32, f.rows = 8;
	ck_assert(!cg_launch_forced(&ch->module, &ch->plan, 0, (int64_t[]){3200, 128}, &dev, &f, &lf));
	pipe_free(ch);
	/* one column operand in one pass, and more streams: an rmsnorm of
	 * halves with a residual add (two outputs), whose other entries
	 * prefetch; the line entries do not, and hold w where the kernel's
	 * aligned entries of halves do (an rmsnorm's) */
	const char *ones[] = {
	    "in x: bf16[B, N]\nin w: bf16[N]\nout y = bf16(x * rsqrt(mean(x * x) + 1e-6) * w)\n",
	    "in x: bf16[B, N]\nin r: bf16[B, N]\nin w: bf16[N]\nout h = x + r\n"
	    "out y = bf16(h * rsqrt(mean(h * h) + 1e-6) * w)\n",
	    "in x: f32[B, N]\nin w: f32[N]\nout y = x * rsqrt(mean(x * x) + 1e-6) * w\n",
	};
	for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++) {
		Compilation *o = compile_mode(ones[i], true);
		const struct CgKernelInfo *ki = &o->module.kinfo[0];
		ck_assert(ki->reg_line);
		ck_assert(i == 2 || (ki->reg_narrow && ki->pf_bytes > 0 && !ki->reg_direct));
		l = launch(o, 0, (int64_t[]){262144, (int64_t)CG_LINE_THREADS * ki->vec}); /* one line */
		e = &o->module.entries[l.entry];
		ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
		ck_assert_str_eq(e->symbol, "test_k0_line1");
		ck_assert(!l.resident && l.smem == 0);
		ck_assert(!strstr(e->text, "fz_pf<") && !strstr(e->text, "fz_cpa_wait"));
		ck_assert(i != 0 || strstr(e->text, "fz_ldh(fz_h"));
		/* the prefetching entries keep their buffer and resident grid */
		l = launch(o, 0, (int64_t[]){4096, 4096});
		ck_assert(!o->module.entries[l.entry].line);
		ck_assert(i == 2 || (l.resident && l.smem > 0));
		pipe_free(o);
	}
	/* a value a row alone (logsumexp), two column operands (layernorm's w
	 * and b), one in a kernel of two passes (layernorm without a bias), a
	 * broadcast operand (a mask [B, 1, N] over [B, H, N]): not taken, and
	 * no such entries */
	const char *others[] = {
	    "in x: f32[B, N]\nm = max(x)\nout s = m + log(sum(exp(x - m)))\n",
	    "in x: f32[R, C]\nin w: f32[C]\nin b: f32[C]\nd = x - mean(x)\n"
	    "out y = d * rsqrt(mean(d * d) + 1e-5) * w + b\n",
	    "in x: f16[R, C]\nin w: f16[C]\nd = x - mean(x)\nout y = f16(d * rsqrt(mean(d * d) + 1e-5) * w)\n",
	    "in x: f32[B, H, N]\nin m: bool[B, 1, N]\ns = where(m, x, -1e30)\ne = exp(s - max(s))\n"
	    "out y = e / sum(e)\n",
	};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		Compilation *o = compile_mode(others[i], true);
		ck_assert(!o->module.kinfo[0].reg_line);
		int64_t dims[3] = {262144, 32, 0};
		if (i == 3)
			dims[0] = 4096, dims[1] = 64, dims[2] = 32;
		ck_assert_int_ne(launch(o, 0, dims).rule, CG_RULE_REG_LINE);
		for (int k = 0; k < o->module.nentries; k++)
			ck_assert(!o->module.entries[k].line);
		pipe_free(o);
	}
}
END_TEST

/* The cached split takes rows in rounds; each round's rows get every block
 * the device holds, in the fewest rounds the cache allows, spread evenly. */
START_TEST(split_rounds_fill_the_device)
{
	Compilation *c = compile_mode(softmax, true);
	const int64_t cap = 132 * 2; /* two blocks of 512 an SM (the entry is bound to 1024) */
	/* 17 rows of 1000001 f32 need 35 blocks a row to cache a segment (7
	 * rows a round: 3 rounds); the same 3 rounds of 6 rows take 44 blocks
	 * each, shorter segments */
	CgLaunch l = launch(c, 0, (int64_t[]){17, 1000001});
	ck_assert_int_eq(l.path, CG_PATH_SPLIT);
	ck_assert_int_eq(l.cache, CG_CACHE_SHARED);
	ck_assert_uint_eq(l.grid[0], 6);
	ck_assert_uint_eq(l.grid[1], 44);
	ck_assert_int_eq(l.seg, 22728);
	/* every length and row count: each round takes every row its blocks
	 * allow, and no row of a round leaves a block it could use (past two
	 * chunks a thread a row gets no more) */
	for (int64_t n = 100003; n <= 3000001; n += 300008)
		for (int64_t rows = 1; rows <= 300; rows += 13) {
			l = launch(c, 0, (int64_t[]){rows, n});
			if (l.path != CG_PATH_SPLIT || c->module.entries[l.entry].stream)
				continue;
			int64_t k = l.grid[0], S = l.grid[1], rounds = (rows + k - 1) / k, smax = ((n + 3) / 4 + 1023) / 1024;
			ck_assert_int_le(k * S, cap);
			ck_assert_msg(k == (rows < cap / S ? rows : cap / S), "%lld x %lld: %lld rounds of %lld rows",
			              (long long)rows, (long long)n, (long long)rounds, (long long)k);
			ck_assert_msg(k * (S + 1) > cap || S >= smax, "%lld x %lld: %lld rows of %lld blocks leave blocks idle",
			              (long long)rows, (long long)n, (long long)k, (long long)S);
		}
	pipe_free(c);
	/* f16, x cached alone (2 bytes an element): 133 rows of 3000001 need 26
	 * blocks a row of 225 KiB, one an SM; a round takes the 5 rows that fit
	 * 132 SMs */
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	l = launch(c, 0, (int64_t[]){133, 3000001});
	ck_assert_int_eq(l.path, CG_PATH_SPLIT);
	ck_assert_int_eq(l.cache, CG_CACHE_SHARED);
	ck_assert_uint_eq(l.grid[0], 5);
	ck_assert_uint_eq(l.grid[1], 26);
	pipe_free(c);
}
END_TEST

/* Inputs of the rows only the epilogue reads (modulated RMSNorm's scale and
 * shift): the aligned register class copies them a row ahead with x, in
 * pass 0; every other entry loads them in the epilogue, and the row cache
 * holds x alone. */
static const CgEntry *entry_of(const Compilation *c, CgPath path, bool masked)
{
	const CgModule *m = &c->module;
	for (int e = 0; e < m->nentries; e++)
		if (m->entries[e].path == path && m->entries[e].masked == masked && !m->entries[e].stream)
			return &m->entries[e];
	return NULL;
}

/* Does `needle` occur in `text` between the markers `from` and `to`? */
static bool occurs_between(const char *text, const char *from, const char *to, const char *needle)
{
	const char *a = strstr(text, from), *b = a ? strstr(a, to) : NULL, *n = a ? strstr(a, needle) : NULL;
	ck_assert_msg(a && b, "markers '%s' and '%s' not in the entry", from, to);
	return n && n < b;
}

/* The number of arrays an entry holds across the row (fz_g<id>). */
static int held_arrays(const char *text)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, "float fz_g")); p++)
		n++;
	return n;
}

START_TEST(late_inputs)
{
	Compilation *c = compile_mode("in x: bf16[T, C]\nin scale: bf16[T, C]\nin shift: bf16[T, C]\n"
	                              "out y = bf16(x * rsqrt(mean(x * x) + 1e-6) * (1 + scale) + shift)\n", true);
	const struct CgKernelInfo *ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 1);
	ck_assert_int_eq(ki->slot_bytes[0], 2);
	ck_assert_int_eq(ki->pf_bytes, 3 * 64); /* x, scale and shift, 4 chunks of 8 bf16 a thread */
	const CgEntry *reg = entry_of(c, CG_PATH_REG, false), *regm = entry_of(c, CG_PATH_REG, true);
	const CgEntry *row = entry_of(c, CG_PATH_ROW, true);
	ck_assert_ptr_nonnull(reg);
	ck_assert_ptr_nonnull(regm);
	ck_assert_ptr_nonnull(row);
	/* the aligned class: scale and shift copied in pass 1 with x, held across the row */
	ck_assert(occurs_between(reg->text, "// pass 1", "// epilogue:", "in_scale"));
	ck_assert(!occurs_between(reg->text, "// epilogue:", "\n}", "in_scale"));
	ck_assert_int_eq(held_arrays(reg->text), 3);
	/* the masked class and ROW: read in the epilogue only, x alone held (the
	 * masked class reads scale from its buffer, pass 1 copying the block's
	 * first row, the epilogue each next row) */
	ck_assert(!occurs_between(regm->text, "fz_cpa_wait_but<1>();", "// epilogue:", "in_scale"));
	ck_assert(occurs_between(regm->text, "// pass 1", "fz_cpa_wait_but<1>();", "in_scale, fz_r0"));
	ck_assert(occurs_between(regm->text, "// epilogue:", "\n}", "in_scale, fz_q0"));
	ck_assert_int_eq(held_arrays(regm->text), 1);
	ck_assert(!occurs_between(row->text, "// pass 1", "// epilogue:", "in_shift"));
	ck_assert(occurs_between(row->text, "// epilogue:", "\n}", "in_scale"));
	ck_assert(occurs_between(row->text, "// epilogue:", "\n}", "in_shift"));
	/* the row cache's aligned class too: no input ahead of its chunk */
	row = entry_of(c, CG_PATH_ROW, false);
	ck_assert_ptr_nonnull(row);
	ck_assert(!occurs_between(row->text, "// pass 1", "// epilogue:", "in_shift"));
	ck_assert(occurs_between(row->text, "// epilogue:", "\n}", "fz_ldr<true>(l"));
	ck_assert_ptr_null(strstr(row->text, "j0 + fz_step"));
	pipe_free(c);
}
END_TEST

/* The stream entry (no row cache) accumulates sum(exp(u - max(u))) in
 * max(u)'s pass (row_plan.c's plan_online): softmax reads x twice there,
 * not three times; the cached entries keep their two passes; a sum of
 * anything else stays in its own pass. */
static const CgEntry *stream_entry(const Compilation *c)
{
	for (int e = 0; e < c->module.nentries; e++)
		if (c->module.entries[e].stream)
			return &c->module.entries[e];
	return NULL;
}

START_TEST(online_sums_planned)
{
	Compilation *c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	const CgEntry *st = stream_entry(c), *split = entry_of(c, CG_PATH_SPLIT, false);
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(split);
	ck_assert_ptr_nonnull(strstr(st->text, "// pass 1 of 1: max(x), sum(e)\n"));
	ck_assert_ptr_nonnull(strstr(st->text, "fz_gather_online("));
	ck_assert_ptr_nonnull(strstr(split->text, "// pass 2 of 2: sum(e)\n"));
	ck_assert_ptr_null(strstr(split->text, "fz_rescale"));
	/* two partials a block in the stream entry's one pass: the workspace holds them */
	ck_assert_int_eq(c->module.kinfo[0].nred, 2);
	ck_assert_int_eq(c->module.kinfo[0].npasses, 3);
	pipe_free(c);
	/* layernorm's variance, in its mean's pass, combined after it */
	c = compile_mode("in x: f32[B, N]\nmu = mean(x)\nxc = x - mu\nout y = xc * rsqrt(mean(xc * xc) + 1e-5)\n", true);
	st = stream_entry(c);
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(strstr(st->text, "// pass 1 of 1: mean(x), mean(xc * xc)\n"));
	ck_assert_ptr_null(strstr(st->text, "// pass 2"));
	/* two exchanges, the deviations moved to the row's mean between them */
	const char *x1 = strstr(st->text, "fz_barrier("), *x2 = x1 ? strstr(x1 + 1, "fz_barrier(") : NULL;
	const char *mv = x1 ? strstr(x1, "* ((fz_m") : NULL;
	ck_assert(x1 && x2 && mv && mv < x2 && !strstr(x2 + 1, "fz_barrier("));
	ck_assert_ptr_nonnull(strstr(entry_of(c, CG_PATH_SPLIT, false)->text, "// pass 2 of 2: mean(xc * xc)\n"));
	pipe_free(c);
	/* exp of something else, a sum of exp times x: not online */
	c = compile_mode("in x: f32[B, N]\nin w: f32[B, N]\nm = max(x)\nout y = sum(exp(w - m))\n"
	                 "out z = sum(exp(x - m) * x)\n", true);
	st = stream_entry(c);
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(strstr(st->text, "// pass 2 of 2: "));
	ck_assert_ptr_null(strstr(st->text, "fz_rescale"));
	ck_assert_int_eq(c->module.kinfo[0].nred, 2);
	pipe_free(c);
}
END_TEST

/* The masked register class of f32 rows masks its elements by the bits of
 * fz_mk and loads whole chunks within the tensor (fz_ldw); the class of
 * halves and the tiles keep a bounds check an element (row_reg.c says why). */
START_TEST(masked_bits)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nm = max(x)\nout y = m + log(sum(exp(x - m)))\n", true);
	const CgEntry *e = entry_of(c, CG_PATH_REG, true), *t = entry_of(c, CG_PATH_TILE, false);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(e->text, "fz_mk |= fz_cmask<4>(j0, fz_ei) << (k * 4);"));
	ck_assert_ptr_nonnull(strstr(e->text, "p1 = fz_max::f(p1, fz_pick(fz_mk, 1u << (k * 4 + u), l0[k][u], "));
	ck_assert_ptr_nonnull(strstr(e->text, "fz_pick(fz_mk, 1u << (k * 4 + u), t3, -0.0f)"));
	ck_assert_ptr_nonnull(strstr(e->text, "fz_ldw(l0[k], in_x + fz_r0, j0, fz_ei, fz_v0, fz_w0);"));
	ck_assert_ptr_nonnull(strstr(e->text, "const bool fz_w0 = fz_v0 && fz_r0 - fz_s >= 0 && "));
	ck_assert_ptr_null(strstr(e->text, "fz_inrow"));
	ck_assert_ptr_null(strstr(t->text, "fz_pick"));
	/* (an entry of one row length: its constant, row_chunk.c's row_end) */
	ck_assert_ptr_nonnull(strstr(t->text, t->rowlen ? "fz_inrow(j0 + u, (int)fz_n)" : "fz_inrow(j0 + u, fz_ei)"));
	/* a row reduction alone: its entries of one length never test fz_ei
	 * (rows past the last computed on the last row's values, nothing
	 * stored an element) */
	for (int i = 0; i < c->module.nentries; i++)
		if (c->module.entries[i].rowlen > 0)
			ck_assert_msg(!strstr(c->module.entries[i].text, "fz_ei"), "%s", c->module.entries[i].symbol);
	ck_assert_ptr_nonnull(strstr(c->module.source, "fz_cmask(int j0, int n)"));
	pipe_free(c);
	c = compile_mode("in x: f16[B, N]\nm = max(x)\nout y = m + log(sum(exp(x - m)))\n", true);
	e = entry_of(c, CG_PATH_REG, true);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_null(strstr(e->text, "fz_pick"));
	ck_assert_ptr_nonnull(strstr(e->text, "fz_inrow(j0 + u, fz_ei)"));
	/* its lane entries mask by bits, set once (all but a thread's last
	 * element in the row: the entry of K takes rows of 32 (K - 1) + 1 to
	 * 32 K) */
	for (int i = 0; i < c->module.nentries; i++) {
		const CgEntry *en = &c->module.entries[i];
		ck_assert_msg(!strstr(en->text, "fz_pick") == !en->lane && !strstr(en->text, "fz_cmask"), "%s", en->symbol);
		if (en->K == 9 && en->lane)
			ck_assert(strstr(en->text, "const unsigned fz_mk = 0xffu | (fz_ji + 256 < (int)fz_n ? 0x100u : 0u);"));
	}
	pipe_free(c);
	/* a column operand of halves: a load an element in the register rows
	 * (fz_ldc<true>, into their slots, once an alignment: masked_slots),
	 * whole blocks in the general loops; kept in the caches in the general
	 * loops only (row_keeps) */
	c = compile_mode("in x: bf16[B, N]\nin w: bf16[N]\nm = mean(x)\nout y = bf16((x - m) * w)\n", true);
	e = entry_of(c, CG_PATH_REG, true);
	const CgEntry *row = entry_of(c, CG_PATH_ROW, true), *rowa = entry_of(c, CG_PATH_ROW, false);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(row);
	ck_assert_ptr_nonnull(rowa);
	ck_assert_ptr_nonnull(strstr(e->text, "fz_ldc<true>(c1, in_w, j0, fz_nr);"));
	ck_assert_ptr_nonnull(strstr(e->text, "fz_cld(l1, fz_c1 + k * fz_pfk * 8);"));
	ck_assert_ptr_null(strstr(e->text, ", true>("));
	ck_assert_ptr_nonnull(strstr(row->text, "fz_ldc<false, true>(l"));
	/* each pass written twice, for pointers aligned and not, each answer a
	 * constant (w a column operand: the kernel tests fz_vec, row_emit.c's
	 * vec_test, though cg_launch takes the class for aligned buffers only) */
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_ldr<true, true>(l1, in_w, j0, true);"));
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_ldr<true, true>(l1, in_w, j0, false);"));
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_strg(out_y + fz_r0, j0, true, v"));
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_strg(out_y + fz_r0, j0, false, v"));
	ck_assert_ptr_null(strstr(rowa->text, ", fz_vec)"));
	pipe_free(c);
	/* f32: plain loads in the register rows, kept in the general loop */
	c = compile_mode("in x: f32[B, N]\nin w: f32[N]\nm = mean(x)\nout y = (x - m) * w\n", true);
	e = entry_of(c, CG_PATH_REG, false);
	row = entry_of(c, CG_PATH_ROW, true);
	rowa = entry_of(c, CG_PATH_ROW, false);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(row);
	ck_assert_ptr_nonnull(rowa);
	ck_assert_ptr_nonnull(strstr(e->text, "fz_ldr<false>(l"));
	ck_assert_ptr_null(strstr(e->text, ", true>("));
	ck_assert_ptr_nonnull(strstr(row->text, "fz_ldc<false, true>(l1, in_w, j0, fz_e);"));
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_ldr<true, true>(l1, in_w, j0, true);"));
	/* its loops and its copy: 32-bit offsets from the row's start, no element checked */
	ck_assert_ptr_nonnull(strstr(rowa->text, "for (int j0 = fz_j; j0 < fz_e; j0 += fz_step)"));
	ck_assert_ptr_nonnull(strstr(rowa->text, "fz_rowcpa<4>(fz_c0 + fz_j, in_x + fz_r0, fz_j, fz_e, fz_step, true, "));
	ck_assert_ptr_null(strstr(rowa->text, "fz_inrow"));
	pipe_free(c);
}
END_TEST

/* The split rows' entry without a row cache (row_chunk.c, row_hint): a row's
 * stream loaded again by a later pass kept in the caches (fz_ldm<true>), its
 * last pass's loads leaving them first (fz_ldm<false, true>), an input read
 * in one pass only left first too, the outputs stored past them
 * (fz_stm<true>); the column operand plain, as before. No other entry
 * hints a row's stream. */
START_TEST(stream_hints)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nin r: f32[B, N]\nin w: f32[N]\nin eps: f32\n"
	                              "out y = x * rsqrt(mean(x * x) + eps) * w + r\n", true);
	const CgModule *m = &c->module;
	const CgEntry *s = NULL;
	for (int e = 0; e < m->nentries; e++) {
		const CgEntry *en = &m->entries[e];
		if (en->stream)
			s = en;
		else
			ck_assert_msg(!strstr(en->text, "fz_ldm<") && !strstr(en->text, "fz_stm<"), "%s hints", en->symbol);
	}
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(strstr(s->text, "fz_ldm<true>(l0[fz_g], in_x + fz_r0, fz_jb + fz_g * fz_step, fz_e, fz_v0);"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ldm<false, true>(l0[1], in_x + fz_r0, j0 + fz_step, fz_e, fz_v0);"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ldm<false, true>(l1[1], in_r + fz_r0, j0 + fz_step, fz_e, fz_v1);"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ldc(l2, in_w, j0, fz_e);"));
	ck_assert_ptr_nonnull(strstr(s->text, "fz_stm<true>(out_y + fz_r0, j0, fz_e, fz_v3, v10);"));
	ck_assert_ptr_null(strstr(s->text, "fz_ldm<true>(l1"));
	ck_assert_ptr_null(strstr(s->text, "fz_ldm(l"));
	assert_nvrtc_clean(c, 90, "stream hints");
	pipe_free(c);
}
END_TEST

/* The stream entry's ring (row_ring.c): each pass's streams whose chunks are
 * 16-byte multiples, while a stage stays within half of CG_RING_BYTES, in
 * stages of a power of two filling CG_RING_BYTES; the launch gives the
 * most a pass takes, a thread, as dynamic shared memory. x (bf16) and w
 * (f32: two pieces a chunk) and r (bf16): pass 0 copies x (8 stages of 16
 * bytes); the epilogue x, w and r (64 bytes: 2 stages), but m, a mask of
 * one byte an element, is loaded where it is used. */
START_TEST(stream_ring)
{
	Compilation *c = compile_mode("in x: bf16[B, N]\nin w: f32[N]\nin r: bf16[B, N]\nin m: bool[B, N]\n"
	                              "out y = bf16(where(m, x * rsqrt(mean(x * x) + 1e-6) * w + r, 0.0))\n", true);
	const CgEntry *s = stream_entry(c);
	ck_assert_ptr_nonnull(s);
	ck_assert(occurs_between(s->text, "// pass 1 of 1", "// epilogue", "// the ring: 8 stages of 16 bytes a thread, 7 ahead"));
	ck_assert(occurs_between(s->text, "// pass 1 of 1", "// epilogue", "#pragma unroll 1\n\t\t\tfor (int fz_i = 0; fz_i < 7; fz_i++) {"));
	ck_assert(occurs_between(s->text, "// pass 1 of 1", "// epilogue", "fz_cpa_wait_but<7>();"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "// the ring: 2 stages of 64 bytes a thread, 1 ahead"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "for (int fz_i = 0; fz_i < 1; fz_i++) {"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_cpa_wait_but<1>();"));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ringcp<32>("));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ringrd<float>("));
	ck_assert(occurs_between(s->text, "// epilogue", "fz_stm", "fz_ringrd<fz_bf16>("));
	ck_assert_int_eq(count_of(s->text, "fz_ringcp<"), 2 * 1 + 2 * 3); /* before a pass's loop and in it */
	ck_assert_int_eq(count_of(s->text, "fz_ringrd<"), 1 + 3);
	ck_assert_ptr_null(strstr(s->text, "in_m + fz_r0 + ji"));
	ck_assert_int_eq(c->module.nkernels, 1);
	ck_assert_int_eq(c->module.kinfo[0].ring_bytes, 128);
	int64_t dims[2] = {4, 8388608};
	CgLaunch l = launch(c, 0, dims);
	ck_assert_int_eq(l.entry, (int)(s - c->module.entries));
	ck_assert_uint_eq(l.smem, 128 * CG_STREAM_THREADS);
	assert_nvrtc_clean(c, 90, "stream ring");
	pipe_free(c);
}
END_TEST

/* The masked register class of halves keeps the column operands its
 * epilogue reads in slots of shared memory at the row's alignment
 * (row_reg.c): filled at the top of a row whose alignment they do not
 * hold, read whole in the epilogue, which loads none of them; the launch
 * gives it the prefetch buffer and the slots, and a resident grid of a
 * multiple of 8. The aligned class holds them in registers, as before; a
 * column operand whose chunk is not 16 bytes (f32 beside rows of halves)
 * and kernels of f32 rows have no slots. */
START_TEST(masked_slots)
{
	Compilation *c = compile_mode("in x: f16[R, C]\nin w: f16[C]\nin b: f16[C]\nin eps: f32\nmu = mean(x)\n"
	                              "xc = x - mu\nout y = f16(xc * rsqrt(mean(xc * xc) + eps) * w + b)\n", true);
	const CgEntry *m = entry_of(c, CG_PATH_REG, true), *a = entry_of(c, CG_PATH_REG, false);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(c->module.kinfo[0].pf_bytes, 64);
	ck_assert_int_eq(c->module.kinfo[0].col_bytes, 2 * 4 * 16);
	ck_assert(occurs_between(m->text, "int fz_sl = -1;", "// pass 1 of 2", "if (fz_s != fz_sl) {"));
	ck_assert(occurs_between(m->text, "if (fz_s != fz_sl) {", "// pass 1 of 2", "fz_ldc<true>(c1, in_w, j0, fz_nr);"));
	ck_assert(occurs_between(m->text, "if (fz_s != fz_sl) {", "// pass 1 of 2", "fz_cst(fz_c1 + k * fz_pfk * 8, c1);"));
	ck_assert(occurs_between(m->text, "// epilogue", "fz_stm", "fz_cld(l1, fz_c1 + k * fz_pfk * 8);"));
	ck_assert(occurs_between(m->text, "// epilogue", "fz_stm", "fz_cld(l2, fz_c2 + k * fz_pfk * 8);"));
	ck_assert_ptr_null(strstr(strstr(m->text, "// epilogue"), "fz_ldc"));
	ck_assert_ptr_null(strstr(a->text, "fz_sl"));
	int64_t dims[2] = {4093, 4099};
	CgLaunch l = launch(c, 0, dims);
	ck_assert_int_eq(l.entry, (int)(m - c->module.entries));
	ck_assert_uint_eq(l.block[0], 160);
	ck_assert_uint_eq(l.smem, 160 * (64 + 128));
	ck_assert(l.resident);
	ck_assert_uint_eq(l.grid_step, 8);
	ck_assert_uint_eq(l.grid[0] % 8, 0);
	int64_t few[2] = {100, 4099}; /* a row a block: no cut */
	l = launch(c, 0, few);
	ck_assert_uint_eq(l.grid[0], 100);
	assert_nvrtc_clean(c, 90, "masked slots");
	pipe_free(c);
	static const char *const none[] = {
		"in x: bf16[B, N]\nin w: f32[N]\nout y = bf16(x * rsqrt(mean(x * x) + 1e-6) * w)\n",
		"in x: f32[R, C]\nin w: f32[C]\nin b: f32[C]\nmu = mean(x)\nxc = x - mu\n"
		"out y = xc * rsqrt(mean(xc * xc) + 1e-5) * w + b\n",
	};
	for (int i = 0; i < 2; i++) {
		c = compile_mode(none[i], true);
		ck_assert_int_eq(c->module.kinfo[0].col_bytes, 0);
		ck_assert_ptr_null(strstr(c->module.source, "fz_sl"));
		pipe_free(c);
	}
}
END_TEST

/* The staged rows' entries (row_emit.c): each chunk read from the tile
 * whole; their reductions inline shuffles, with no fz_red (no static
 * shared memory), but in the classes of f32 rows below tile_kmax chunks (a
 * thread a row), which keep fz_reduce's call; their register bounds
 * (tile_threads): 5 blocks of 256 an SM for halves (20 of 64 where several
 * threads take a row; 8 in the entries that stage nothing), 8 for those f32
 * classes, the kernel's thread bound alone for f32 rows of tile_kmax
 * chunks. A thread a row: an entry a row length (of one chunk 2 to V, of
 * K chunks K/2 V + 1 to K V). */
/* Short aligned rows of halves in a kernel whose register path prefetches
 * them (an rmsnorm with its weight) take that path's entries of 2 and 1
 * chunks a thread, up to CG_REG_NARROW_CHUNKS; longer rows, rows not a
 * multiple of V and kernels that load their rows directly (softmax) take
 * rk chunks as before, and have no such entries. */
START_TEST(narrow_register_rows)
{
	Compilation *c = compile_mode("in x: bf16[B, N]\nin w: bf16[N]\nout y = bf16(x * rsqrt(mean(x * x) + 1e-6) * w)\n",
	                              true);
	const struct CgKernelInfo *ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->rk, 4);
	ck_assert(ki->reg_narrow && !ki->reg_direct);
	ck_assert_int_eq(ki->pf_bytes, 64); /* x's next row: 4 chunks of 8 bf16 a thread */
	static const struct {
		int64_t rows, n;
		const char *entry;
		unsigned G, R;
	} cases[] = {
	    {1048576, 16, "test_k0_reg1", 2, 64}, /* 2 chunks: a thread each */
	    {699050, 24, "test_k0_reg2", 2, 64},  /* 3 chunks: 2 threads of 2, one dead */
	    {32768, 64, "test_k0_reg2", 8, 16},   /* 8 chunks, too few rows for the line entry */
	    {16384, 128, "test_k0_reg4", 16, 8},  /* 16 chunks: rk a thread */
	    {16384, 1024, "test_k0_reg4", 32, 4},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CgLaunch l = launch(c, 0, (int64_t[]){cases[i].rows, cases[i].n});
		ck_assert_int_eq(l.path, CG_PATH_REG);
		ck_assert_int_eq(l.rule, CG_RULE_REG);
		ck_assert_str_eq(c->module.entries[l.entry].symbol, cases[i].entry);
		ck_assert_uint_eq(l.block[0], cases[i].G);
		ck_assert_uint_eq(l.block[1], cases[i].R);
		/* the prefetch buffer as rk's (its leaves rk chunks apart) */
		ck_assert_uint_eq(l.smem, 64 * 128);
	}
	const CgEntry *e2 = &c->module.entries[launch(c, 0, (int64_t[]){32768, 64}).entry];
	ck_assert_int_eq(e2->K, 2);
	ck_assert(!e2->masked && !e2->hold);
	ck_assert(strstr(e2->text, "float fz_g0[2][8];"));
	/* not a multiple of V, too few rows for the lane class: the masked
	 * class, rk chunks a thread */
	CgLaunch l = launch(c, 0, (int64_t[]){4000, 1001});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	pipe_free(c);
	/* softmax of halves loads its rows directly: its entries of 1 and 2
	 * chunks are the lines' (row_lines_take_line_entries), not these: rows
	 * of 4 chunks keep rk */
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n", true);
	ck_assert(!c->module.kinfo[0].reg_narrow && c->module.kinfo[0].reg_direct && c->module.kinfo[0].reg_line);
	l = launch(c, 0, (int64_t[]){262144, 32});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_uint_eq(l.block[0], 1);
	l = launch(c, 0, (int64_t[]){262144, 64});
	ck_assert_int_eq(l.rule, CG_RULE_REG_LINE);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_line1");
	ck_assert_uint_eq(l.block[0], 8);
	for (int i = 0; i < c->module.nentries; i++)
		ck_assert_str_ne(c->module.entries[i].symbol, "test_k0_reg1");
	pipe_free(c);
	/* nor rows of f32 */
	c = compile_mode("in x: f32[B, N]\nin w: f32[N]\nout y = x * rsqrt(mean(x * x) + 1e-6) * w\n", true);
	ck_assert(!c->module.kinfo[0].reg_narrow);
	pipe_free(c);
}
END_TEST

START_TEST(tile_entries)
{
	static const struct {
		const char *ty, *bounds[24];
	} cases[] = {
	    {"f32", {"__launch_bounds__(256, 8) test_k0_tile1n2(", "__launch_bounds__(256, 8) test_k0_tile1n2x2(",
	             "__launch_bounds__(256, 8) test_k0_tile1n3(", "__launch_bounds__(256, 8) test_k0_tile1n3x2(",
	             "__launch_bounds__(256, 8) test_k0_tile1n4(", "__launch_bounds__(256, 8) test_k0_tile2n5(",
	             "__launch_bounds__(256, 8) test_k0_tile2n6(", "__launch_bounds__(256, 8) test_k0_tile2n7(",
	             "__launch_bounds__(256, 8) test_k0_tile2n8(", "__launch_bounds__(64, 20) test_k0_tile4(",
	             "__launch_bounds__(1024) test_k0_tile4n9(", "__launch_bounds__(1024) test_k0_tile4n10(",
	             "__launch_bounds__(1024) test_k0_tile4n11(", "__launch_bounds__(1024) test_k0_tile4n12(",
	             "__launch_bounds__(1024) test_k0_tile4n13(", "__launch_bounds__(1024) test_k0_tile4n14(",
	             "__launch_bounds__(1024) test_k0_tile4n15(", "__launch_bounds__(1024) test_k0_tile4n16(", NULL}},
	    {"f16", {"__launch_bounds__(256, 8) test_k0_tile1n2(", "__launch_bounds__(256, 8) test_k0_tile1n2x4(",
	             "__launch_bounds__(256, 8) test_k0_tile1n3(", "__launch_bounds__(256, 8) test_k0_tile1n3x2(",
	             "__launch_bounds__(256, 8) test_k0_tile1n4(", "__launch_bounds__(256, 8) test_k0_tile1n4x2(",
	             "__launch_bounds__(256, 8) test_k0_tile1n5(", "__launch_bounds__(256, 8) test_k0_tile1n5x2(",
	             "__launch_bounds__(256, 8) test_k0_tile1n6(", "__launch_bounds__(256, 5) test_k0_tile1n7(",
	             "__launch_bounds__(256, 8) test_k0_tile1n8(", "__launch_bounds__(64, 20) test_k0_tile2(",
	             "__launch_bounds__(256, 5) test_k0_tile2n9(", "__launch_bounds__(256, 5) test_k0_tile2n10(",
	             "__launch_bounds__(256, 5) test_k0_tile2n11(", "__launch_bounds__(256, 5) test_k0_tile2n12(",
	             "__launch_bounds__(256, 5) test_k0_tile2n13(", "__launch_bounds__(256, 5) test_k0_tile2n14(",
	             "__launch_bounds__(256, 5) test_k0_tile2n15(", "__launch_bounds__(256, 5) test_k0_tile2n16(", NULL}},
	};
	for (int i = 0; i < 2; i++) {
		char prog[160];
		snprintf(prog, sizeof prog, "in x: %s[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", cases[i].ty);
		Compilation *c = compile_mode(prog, true);
		const CgModule *m = &c->module;
		int ntiles = 0;
		for (int e = 0; e < m->nentries; e++) {
			const CgEntry *t = &m->entries[e];
			if (t->path != CG_PATH_TILE)
				continue;
			const char *bound = cases[i].bounds[ntiles++];
			ck_assert_msg(bound && strstr(m->source, bound), "%s: no %s", cases[i].ty, bound);
			/* a thread a row (every class below tile_kmax, a twin of
			 * tile_kmax's), its input read where it is, its chunks at
			 * constant offsets and nothing to combine; a group a row
			 * reduces by shuffles */
			char lname[64]; /* `_tile<K>n<L>`, and its twins' x2, x4 */
			snprintf(lname, sizeof lname, "test_k0_tile%dn%d", t->K, t->rowlen);
			bool direct = t->rowlen > 0 && strncmp(t->symbol, lname, strlen(lname)) == 0;
			ck_assert_int_eq(t->direct, direct);
			int V = m->kinfo[t->kernel].vec;
			ck_assert_int_eq(t->unstaged, t->rowlen > 0 && (t->rowlen <= CG_TILE_UNSTAGED_MAX || t->rowlen == V) &&
			                                  t->rowlen <= V);
			ck_assert_int_eq(strstr(t->text, "fz_tout_warp") != NULL, direct && !t->unstaged);
			/* every entry of a thread a row takes one length, of its class */
			ck_assert(!direct || (t->rowlen > t->K / 2 * V && t->rowlen <= t->K * V));
			int rpt = !t->rowlen ? 1 : strstr(t->symbol, "x4") ? 4 : strstr(t->symbol, "x2") ? 2 : 1;
			ck_assert_int_eq(t->rpt, rpt);
			ck_assert(rpt == 1 || rpt == cg_tile_rpt(t->rowlen, m->kinfo[t->kernel].vec));
			ck_assert(direct || t->K == m->kinfo[t->kernel].tile_kmax);
			ck_assert_int_eq(strstr(t->text, "a1 = fz_reduce_warp<fz_max>(a1);") != NULL, !direct);
			ck_assert_int_eq(strstr(t->text, "fz_ji = 0, fz_stepi = ") != NULL, direct);
			ck_assert_ptr_null(strstr(t->text, "fz_reduce<"));
			ck_assert_ptr_null(strstr(t->text, "__shared__ unsigned long long fz_red["));
			ck_assert_int_eq(t->static_smem, 0);
			/* rows of 2 (of halves four a thread) and of 4 halves, two:
			 * the rows' span (row_tile_span), 16 bytes */
			bool span = cg_tile_span(&m->kinfo[t->kernel], t->rowlen, t->rpt);
			ck_assert_int_eq(span, (t->rowlen == 2 || (t->rowlen == 4 && i == 1)) && t->rpt > 1);
			ck_assert_ptr_nonnull(strstr(t->text, span     ? (t->rowlen == 2 ? "fz_spld<2>(l0[k], fz_sp0, fz_p, j0);"
			                                                                   : "fz_spld<4>(l0[k], fz_sp0, fz_p, j0);")
			                                      : direct ? "fz_gld(l0[k], fz_tr0, j0, (int)fz_n);"
			                                               : "fz_tld(l0[k], fz_tr0, j0, fz_ei);"));
		}
		ck_assert_int_eq(ntiles, i == 0 ? 18 : 20);
		const CgEntry *r = entry_of(c, CG_PATH_REG, false);
		ck_assert_int_eq(r->static_smem, CG_RED_WORDS * 8);
		pipe_free(c);
	}
	/* a literal row length: the entries of that length alone, a row and
	 * two rows a thread (a symbol's lengths are the launch's to choose) */
	{
		Compilation *c = compile_mode("in x: f32[B, 3]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
		static const char *lens[] = {"test_k0_tile1n3", "test_k0_tile1n3x2"};
		int nlen = 0;
		for (int e = 0; e < c->module.nentries; e++)
			if (c->module.entries[e].rowlen) {
				ck_assert_int_lt(nlen, 2);
				ck_assert_str_eq(c->module.entries[e].symbol, lens[nlen++]);
			}
		ck_assert_int_eq(nlen, 2);
		ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){1 << 20, 3}).entry].symbol, "test_k0_tile1n3x2");
		ck_assert_str_eq(c->module.entries[launch(c, 0, (int64_t[]){1000, 3}).entry].symbol, "test_k0_tile1n3");
		pipe_free(c);
	}
	/* kernels the bounds were not measured on, which spill under them
	 * (tile_light): 8-byte values, long math, f32 staged beside a bool */
	static const char *unbound[] = {
	    "in x: f64[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n",
	    "in x: f32[B, N]\nh = gelu_tanh(x)\nout y = h - mean(h)\n",
	    "in x: f32[B, N]\nin m: bool[B, N]\ns = where(m, x, -1e9)\nout y = s - max(s)\n",
	};
	for (int i = 0; i < 3; i++) {
		Compilation *c = compile_mode(unbound[i], true);
		ck_assert_ptr_nonnull(entry_of(c, CG_PATH_TILE, false));
		ck_assert_msg(!strstr(c->module.source, "__launch_bounds__(256, "), "%s", unbound[i]);
		pipe_free(c);
	}
}
END_TEST

/* Register bounds chosen by what a kernel carries: the f32 groups' tiles
 * (`_tile4`) of light kernels staging at most two streams at 1280 threads
 * an SM (CG_TILE_GROUP_THREADS), not one staging five (its kernel's bound,
 * 512 threads, alone); the register path's masked class of f32 rows that
 * writes values of each row alone, from at most two streams, at 40
 * registers (FZ_MASKED_REDUCE_ROW), not softmax's (which writes its row)
 * nor four streams'. */
START_TEST(register_bounds)
{
	static const struct {
		const char *src, *want, *not;
	} cases[] = {
	    {"in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", "__launch_bounds__(64, 20) test_k0_tile4(",
	     "FZ_MASKED_REDUCE_ROW test"},
	    {"in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", "FZ_MASKED_ROW test_k0_reg4m(", NULL},
	    {"in x: f32[B, N]\nm = max(x)\nout y = m + log(sum(exp(x - m)))\n", "FZ_MASKED_REDUCE_ROW test_k0_reg4m(",
	     NULL},
	    {"in x: f32[B, N]\nin a: f32[B, N]\nin b: f32[B, N]\nin d: f32[B, N]\nout y = x * a + b * d - sum(x)\n",
	     "__launch_bounds__(512) test_k0_tile4(", "__launch_bounds__(64, 20)"},
	    {"in x: f32[B, N]\nin a: f32[B, N]\nin b: f32[B, N]\nin d: f32[B, N]\nout y = sum(x * a + b * d)\n",
	     "FZ_MASKED_ROW test_k0_reg4m(", "FZ_MASKED_REDUCE_ROW test"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Compilation *c = compile_mode(cases[i].src, true);
		ck_assert_msg(strstr(c->module.source, cases[i].want), "case %zu: no %s", i, cases[i].want);
		ck_assert_msg(!cases[i].not || !strstr(c->module.source, cases[i].not), "case %zu: %s", i, cases[i].not);
		pipe_free(c);
	}
}
END_TEST

/* A column operand (w) in the TILE entries of one row length: shorter than
 * a vector, its elements inline (fz_lde: constant bounds, no call a row) and
 * no alignment test; at the vector's length, and in the entries of any
 * length, fz_ldm (a vector where aligned). rsqrt and the division by a row
 * value in f32 take their fast paths inline (fz_rsqrt over fz_rsqrt_text,
 * fz_rcp_near); a module with neither has none of them. */
START_TEST(tile_column_operands)
{
	Compilation *c = compile_mode("in x: f16[R, C]\nin w: f16[C]\nout y = f16(x * rsqrt(mean(x * x) + 1e-5) * w)\n"
	                              "out s = x / sum(x)\n",
	                              true);
	const CgModule *m = &c->module;
	int V = m->kinfo[0].vec, nshort = 0;
	for (int e = 0; e < m->nentries; e++) {
		const CgEntry *t = &m->entries[e];
		if (t->path != CG_PATH_TILE)
			continue;
		bool elems = t->rowlen && t->rowlen < V;
		nshort += elems;
		ck_assert_msg((strstr(t->text, "fz_lde(l") != NULL) == elems, "%s", t->symbol);
		ck_assert_msg((strstr(t->text, "fz_ldm(l") != NULL) == !elems, "%s", t->symbol);
		ck_assert_msg((strstr(t->text, "fz_aligned(in_w") != NULL) == !elems, "%s", t->symbol);
		/* in every entry of one length, w's bound is that length, also in
		 * the rows past the last (fz_ei would make its chunks partial) */
		ck_assert_msg(t->rowlen == 0 || strstr(t->text, elems ? "in_w, j0, (int)fz_n);" : "in_w, j0, (int)fz_n, fz_v"),
		              "%s", t->symbol);
		ck_assert_msg(t->rowlen == 0 || !strstr(t->text, "in_w, j0, fz_ei"), "%s", t->symbol);
	}
	ck_assert_int_eq(nshort, 10); /* rows of 2 to 7, and the twins of 2 to 5 */
	ck_assert_ptr_nonnull(strstr(m->source, "__device__ __noinline__ float fz_rsqrt_text(float x)"));
	ck_assert_ptr_nonnull(strstr(m->source, "\t\treturn fz_rcp_near(s);"));
	ck_assert_ptr_nonnull(strstr(m->source, "? fz_rcp_near(d) :"));
	pipe_free(c);
	c = compile_mode("in x: f32[N]\nout y = sqrt(x) / x\n", true);
	ck_assert_ptr_null(strstr(c->module.source, "fz_rcp_near"));
	ck_assert_ptr_null(strstr(c->module.source, "fz_rsqrt"));
	pipe_free(c);
}
END_TEST

START_TEST(row_cache_slots)
{
	/* layernorm: x is read again in pass 2, xc (derived) in the epilogue:
	 * both f32, so one slot serves both (xc overwrites x) */
	Compilation *c = compile_mode("in x: f32[R, C]\nin w: f32[C]\nin b: f32[C]\nin eps: f32\nmu = mean(x)\n"
	                              "xc = x - mu\nout y = xc * rsqrt(mean(xc * xc) + eps) * w + b\n", true);
	const struct CgKernelInfo *ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 1);
	ck_assert_int_eq(ki->slot_bytes[0], 4);
	ck_assert_int_eq(ki->npasses, 3);
	CgLaunch l = launch(c, 0, (int64_t[]){8192, 4096});
	ck_assert_uint_eq(l.smem, 0); /* the row in registers */
	l = launch(c, 0, (int64_t[]){8192, 4095});
	ck_assert_uint_eq(l.smem, 0); /* the masked class */
	l = launch(c, 0, (int64_t[]){8192, 16383});
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_uint_eq(l.smem, 16388 * 4);
	/* it reads column operands (w, b) after its first pass: the register
	 * path's aligned class holds them from pass 0 in groups of up to 256
	 * threads (row_plan_reg.c's row_plan_hold, launch_rules.c's hold_rule) */
	ck_assert(ki->colops);
	ck_assert(ki->reg_hold);
	l = launch(c, 0, (int64_t[]){8192, 1024});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4h");
	ck_assert_uint_eq(l.block[0], 64);
	l = launch(c, 0, (int64_t[]){8192, 4096});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4h");
	ck_assert_uint_eq(l.block[0], 256);
	/* more threads: the lean entry, two blocks of 512 an SM where the
	 * holding one keeps one; a row of 16384, which the registers of 1024
	 * threads would hold (a block an SM), takes the row cache's aligned
	 * class at 512 (launch_rules.c's wide_rule), and so does a row of 20000 at 8
	 * chunks a thread (long_group), not 1024 */
	l = launch(c, 0, (int64_t[]){8192, 8192});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_uint_eq(l.block[0], 512);
	l = launch(c, 0, (int64_t[]){8192, 16384});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	ck_assert_uint_eq(l.block[0], 512);
	ck_assert_uint_eq(l.smem, 16388 * 4);
	l = launch(c, 0, (int64_t[]){8192, 20000});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	ck_assert_uint_eq(l.block[0], 512);
	l = launch(c, 0, (int64_t[]){8192, 32768});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_rowa");
	ck_assert_uint_eq(l.block[0], 1024); /* one block an SM anyway (widen) */
	/* not a multiple of V, too few rows for the lane class: the masked class */
	l = launch(c, 0, (int64_t[]){4000, 1001});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	/* but not past 512 threads (640 for a row of 10007): the row cache's
	 * masked class, about 8 chunks a thread */
	l = launch(c, 0, (int64_t[]){8192, 10007});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_row");
	ck_assert_uint_eq(l.block[0], 320);
	pipe_free(c);
	/* f16: x cached as f16 (2 bytes); xc = x - mu, one subtraction of a
	 * cached value, is recomputed where it is read, not cached as f32 */
	c = compile_mode("in x: f16[R, C]\nmu = mean(x)\nxc = x - mu\nout y = f16(xc * rsqrt(mean(xc * xc) + 1e-5))\n",
	                 true);
	ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 1);
	ck_assert_int_eq(ki->slot_bytes[0], 2);
	ck_assert_int_eq(ki->vec, 8);
	pipe_free(c);
	/* a cast of an input is recomputed from it: rmsnorm bf16 caches x as
	 * bf16 (2 bytes), not f32(x) (4) */
	c = compile_mode("in x: bf16[R, C]\nin w: bf16[C]\nout y = bf16(x * rsqrt(mean(x * x) + 1e-6) * w)\n", true);
	ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 1);
	ck_assert_int_eq(ki->slot_bytes[0], 2);
	pipe_free(c);
	/* and, where the cache is in memory (ROW, SPLIT), an exponential of
	 * one: softmax f16 caches x alone (2 bytes), not x and e (6) */
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 1);
	ck_assert_int_eq(ki->slot_bytes[0], 2);
	const CgEntry *row = &c->module.entries[ki->first_entry];
	while (row->path != CG_PATH_ROW)
		row++;
	ck_assert_ptr_nonnull(strstr(row->text, "exp(")); /* recomputed in pass 2 and in the epilogue */
	ck_assert_ptr_nonnull(strstr(strstr(row->text, "// epilogue:"), "exp("));
	/* the register path keeps e in registers: its epilogue has no exp */
	const CgEntry *reg = &c->module.entries[ki->first_entry];
	ck_assert_int_eq(reg->path, CG_PATH_REG);
	ck_assert_ptr_null(strstr(strstr(reg->text, "// epilogue:"), "exp("));
	pipe_free(c);
	/* but not long math: tanh's softmax caches x (2 bytes) and e (4) */
	c = compile_mode("in x: f16[B, N]\ne = tanh(x - max(x))\nout y = e / sum(e)\n", true);
	ki = &c->module.kinfo[0];
	ck_assert_int_eq(ki->nslots, 2);
	ck_assert_int_eq(ki->slot_bytes[0] + ki->slot_bytes[1], 6);
	/* past what 512 threads hold counted from an unaligned start: a block a
	 * row, x cached as f16 and e as f32, each slot over 16392 elements (the
	 * row and its shift, in whole chunks) */
	l = launch(c, 0, (int64_t[]){4096, 16383});
	ck_assert(!l.resident);
	ck_assert_uint_eq(l.smem, 16392 * 2 + 16392 * 4);
	ck_assert_uint_eq(l.block[0], 512);
	/* the kernel is told where each slot is: x (f16) first, then e (f32) */
	const CgEntry *e = &c->module.entries[l.entry];
	ck_assert_int_eq(e->path, CG_PATH_ROW);
	ck_assert_int_eq(e->args[e->nargs - 1].kind, CGARG_SLOT);
	ck_assert_int_eq(cg_launch_arg(&c->module, 0, &l, &e->args[e->nargs - 1]), 16392 * 2);
	ck_assert_int_eq(l.cstride, 16392 * 2 + 16392 * 4);
	pipe_free(c);
	/* f16 softmax: a 4096-row in registers (4 chunks of 8 a thread, 128
	 * threads, the entry bound to 512); at 4095 (not a multiple of 8) x
	 * cached as f16 and e as f32, 24 KiB a row */
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	ck_assert_int_eq(c->module.kinfo[0].rk, 4);
	ck_assert_int_eq(c->module.kinfo[0].max_threads, 512);
	ck_assert_int_eq(c->module.kinfo[0].pf_bytes, 64); /* x's next row prefetched, as f16 */
	/* ... but by the masked class alone (row_plan_reg.c's reg_direct: halves, no
	 * column operand, two streams): the aligned class loads its rows, a
	 * block of 128 threads a row, no shared memory, no loop over rows */
	ck_assert(c->module.kinfo[0].reg_direct);
	l = launch(c, 0, (int64_t[]){4096, 4096});
	ck_assert_int_eq(l.path, CG_PATH_REG);
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_ptr_null(strstr(c->module.entries[l.entry].text, "fz_pf"));
	ck_assert_uint_eq(l.smem, 0);
	ck_assert_uint_eq(l.block[0], 128);
	ck_assert(!l.resident);
	ck_assert_uint_eq(l.grid[0], 4096);
	l = launch(c, 0, (int64_t[]){100, 4096}); /* few rows: a block each */
	ck_assert_uint_eq(l.grid[0], 100);
	/* the masked class, prefetching: up to 513 chunks from an unaligned
	 * start, 5 warps, the blocks looping over rows (as many as threads and
	 * shared memory let fit; the runtime cuts that to what registers do) */
	l = launch(c, 0, (int64_t[]){4096, 4095});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	ck_assert_ptr_nonnull(strstr(c->module.entries[l.entry].text, "fz_pfm<8>"));
	ck_assert(l.resident);
	ck_assert_uint_eq(l.block[0], 160);
	ck_assert_uint_eq(l.smem, 160 * 64);
	pipe_free(c);
	/* with a column operand (an f16 rmsnorm's weight) the aligned class
	 * prefetches too */
	c = compile_mode("in x: f16[B, N]\nin w: f16[N]\nout y = f16(x * rsqrt(mean(x * x) + 1e-5) * w)\n", true);
	ck_assert(!c->module.kinfo[0].reg_direct);
	l = launch(c, 0, (int64_t[]){4096, 4096});
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_ptr_nonnull(strstr(c->module.entries[l.entry].text, "fz_pf<8>"));
	ck_assert(l.resident);
	ck_assert_uint_eq(l.smem, 128 * 64);
	pipe_free(c);
	/* inputs of the rows that only the epilogue reads (a modulated rmsnorm's
	 * s and h): the aligned class reads them in pass 0 with x, prefetched in
	 * one group; the masked class (late plan) reads them in the epilogue,
	 * from the buffer, where each chunk's next row is copied once read: two
	 * groups of copies a row, each pass waiting for its own. A stream not
	 * aligned with x's rows (g, a row a batch) is loaded there as before. */
	c = compile_mode("in x: bf16[B, T, C]\nin s: bf16[B, T, C]\nin h: bf16[B, T, C]\nin g: bf16[B, 1, C]\n"
	                 "out y = bf16(x * rsqrt(mean(x * x) + 1e-5) * (1 + s) + h + g)\n", true);
	ck_assert_int_eq(c->module.kinfo[0].pf_bytes, 4 * 64); /* x, s, h and g: rk chunks of 8 each */
	l = launch(c, 0, (int64_t[]){2, 2048, 2048});
	const char *t = c->module.entries[l.entry].text;
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4");
	ck_assert_ptr_null(strstr(t, "fz_cpa_wait_but"));
	ck_assert_ptr_null(strstr(t, "fz_cpa_commit"));
	l = launch(c, 0, (int64_t[]){2, 2048, 2047});
	t = c->module.entries[l.entry].text;
	ck_assert_str_eq(c->module.entries[l.entry].symbol, "test_k0_reg4m");
	ck_assert(l.resident);
	ck_assert_uint_eq(l.smem, l.block[0] * 4 * 64);
	ck_assert_int_eq(count_of(t, "fz_cpa_wait_but<1>();"), 2);
	ck_assert_int_eq(count_of(t, "fz_cpa_commit();"), 4); /* the first row's two groups, then a group a pass */
	ck_assert_int_eq(count_of(t, "const int jn = fz_ji + k * fz_stepi - fz_sn;"), 1);
	ck_assert_int_eq(count_of(t, ", jn, fz_nr, fz_vn"), 2); /* s's and h's next rows, chunk by chunk */
	ck_assert_int_eq(count_of(t, "fz_ldw("), 0);
	ck_assert_int_eq(count_of(t, "in_g"), 2); /* its parameter, and its load in the epilogue */
	pipe_free(c);
	c = compile_mode("in x: f16[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n", true);
	/* past what 512 threads hold counted from an unaligned start: a block a
	 * row, x cached as f16 alone, over 16392 elements (the row and its
	 * shift, in whole chunks) */
	l = launch(c, 0, (int64_t[]){4096, 16383});
	ck_assert(!l.resident);
	ck_assert_int_eq(l.path, CG_PATH_ROW);
	ck_assert_uint_eq(l.smem, 16392 * 2);
	ck_assert_uint_eq(l.cstride, 16392 * 2);
	ck_assert_uint_eq(l.block[0], 512);
	pipe_free(c);
	/* heavy (gelu, three streams): bound to 512 threads, x and r prefetched
	 * (not b, the same every row): 2 blocks of 256 resident an SM */
	c = compile_mode("in x: f32[R, C]\nin b: f32[C]\nin r: f32[R, C]\nh = gelu_tanh(x + b) + r\nmu = mean(h)\n"
	                 "hc = h - mu\nout y = hc * rsqrt(mean(hc * hc) + 1e-5)\n", true);
	ck_assert_int_eq(c->module.kinfo[0].max_threads, 512);
	ck_assert_int_eq(c->module.kinfo[0].pf_bytes, 2 * 64);
	l = launch(c, 0, (int64_t[]){8192, 4096});
	ck_assert_uint_eq(l.block[0], 256);
	ck_assert_uint_eq(l.smem, 256 * 128);
	ck_assert_uint_eq(l.grid[0], 132 * 6); /* 6 blocks' buffers fit in an SM's 228 KiB */
	pipe_free(c);
	/* one pass: nothing to carry, no cache */
	c = compile_mode("in x: f32[R, C]\nout s = sum(x * x)\n", true);
	ck_assert_int_eq(c->module.kinfo[0].nslots, 0);
	CgLaunch l2 = launch(c, 0, (int64_t[]){8192, 4096});
	ck_assert_uint_eq(l2.smem, 0);
	pipe_free(c);
}
END_TEST

START_TEST(zero_sizes)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nout y = x * 2\nout s = sum(x)\nout m = x - max(x)\n", true);
	for (int k = 0; k < c->plan.nkernels; k++) {
		/* no rows: nothing to do */
		ck_assert(launch(c, k, (int64_t[]){0, 100}).empty);
		CgLaunch l = launch(c, k, (int64_t[]){5, 0});
		if (c->plan.kernels[k].kind == KERNEL_POINTWISE)
			ck_assert(l.empty);
	}
	pipe_free(c);
	/* empty rows still write per-row values (sum of nothing is 0) */
	c = compile_mode("in x: f32[B, N]\nout s = sum(x)\n", true);
	CgLaunch l = launch(c, 0, (int64_t[]){5, 0});
	ck_assert(!l.empty);
	ck_assert_uint_ge((uint64_t)l.grid[0] * l.block[1], 5);
	pipe_free(c);
	/* empty rows with only per-element outputs: nothing to do */
	c = compile_mode(softmax, true);
	ck_assert(launch(c, 0, (int64_t[]){5, 0}).empty);
	pipe_free(c);
}
END_TEST

START_TEST(pointwise_grids)
{
	/* a chunk a thread, 256 a block, light or long math alike */
	const char *progs[] = {"in x: f32[N]\nin y: f32[N]\nout z = x + y\n", "in x: f32[N]\nout y = tanh(x) * x\n"};
	for (int i = 0; i < 2; i++) {
		Compilation *c = compile_mode(progs[i], true);
		CgLaunch l = launch(c, 0, (int64_t[]){64 << 20});
		ck_assert_int_eq(l.path, CG_PATH_POINTWISE);
		ck_assert_int_eq(l.rule, CG_RULE_PW);
		ck_assert_uint_eq(l.block[0], 256);
		ck_assert_uint_eq(l.grid[0], (64 << 20) / 4 / 256);
		ck_assert(!l.resident);
		l = launch(c, 0, (int64_t[]){(64 << 20) + 3}); /* the last partial chunk: a thread of a block of its own */
		ck_assert_uint_eq(l.grid[0], (64 << 20) / 4 / 256 + 1);
		/* the kernel's element loop takes what a grid of INT_MAX blocks leaves */
		ck_assert_uint_eq(launch(c, 0, (int64_t[]){(int64_t)1 << 62}).grid[0], INT_MAX);
		l = launch(c, 0, (int64_t[]){4096});
		ck_assert_uint_eq(l.block[0], 256);
		ck_assert_uint_eq(l.grid[0], 4); /* 1024 chunks of 4 */
		l = launch(c, 0, (int64_t[]){5});
		ck_assert_uint_eq(l.block[0], 32);
		ck_assert_uint_eq(l.grid[0], 1);
		ck_assert(launch(c, 0, (int64_t[]){0}).empty);
		pipe_free(c);
	}
}
END_TEST

/* A pointwise kernel's vector part is taken where every full-shape pointer
 * is aligned; broadcast operands are decided chunk by chunk (an odd row
 * length does not send the launch to the element loop). A row kernel's
 * aligned classes test nothing: the host takes them only for rows of whole
 * chunks at aligned addresses (aligned_classes_on_the_host). */
START_TEST(vector_conditions)
{
	Compilation *c = compile_mode("in x: f32[B, N]\nin b: f32[N]\nin r: f32[B, 1]\nin h: f16[B, N]\n"
	                              "out y = x + b + r + h\n", true);
	const char *s = c->module.source;
	ck_assert_ptr_nonnull(
		strstr(s, "const bool fz_valign = fz_aligned(in_x, 16) && fz_aligned(in_h, 16) && fz_aligned(out_y, 16);"));
	ck_assert_ptr_nonnull(strstr(s, "fz_ldb<true>(l1, in_b, fz_b1, fz_r1, fz_o1_e0, fz_c * 8, fz_o1);"));
	ck_assert_ptr_nonnull(strstr(s, "fz_ldb<false>(l2, in_r, fz_b2, fz_r2, fz_o2_e0, fz_c * 8, fz_o2);"));
	ck_assert_int_eq(c->module.kinfo[0].vec, 8);
	pipe_free(c);
	c = compile_mode(softmax, true);
	ck_assert_ptr_nonnull(strstr(c->module.source, "const bool fz_vec = true; // dim_N % 4 == 0, every buffer "
	                                               "16-byte aligned (cg_launch's aligned class)\n"));
	pipe_free(c);
}
END_TEST

/* The aligned classes (`_reg<K>`, `_reg<K>h`, `_rowa`: fz_vec a constant
 * but in kernels with column operands) take only buffers the caller says
 * are 16-byte aligned; a ragged buffer takes the classes for rows of any
 * length, as a ragged row length does, and --emit=launch says why. */
static bool assumes_aligned(const Compilation *c, const CgLaunch *l)
{
	const CgEntry *e = &c->module.entries[l->entry];
	return !l->empty && (e->path == CG_PATH_REG || e->path == CG_PATH_ROW) && !e->masked && !e->lane;
}

START_TEST(aligned_classes_on_the_host)
{
	static const char *srcs[] = {
		"in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n",
		"in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n",
		"in x: f32[B, N]\nin w: f32[N]\nin b: f32[N]\nm = mean(x)\nd = x - m\n"
		"out y = d * rsqrt(mean(d * d) + 1e-5) * w + b\n",
		"in x: bf16[B, N]\nin w: bf16[N]\nout y = bf16(x * rsqrt(mean(x * x) + 1e-6) * w)\n",
	};
	static const int64_t rows[] = {1, 100, 8191, 262144};
	CgDevice d = h100();
	Arena *a = arena_new();
	int taken = 0;
	for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
		Compilation *c = compile_mode(srcs[i], true);
		int V = c->module.kinfo[0].vec;
		for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
			for (int64_t n = V; n <= 65536; n = n < 256 ? n + V : n * 2) {
				int64_t dims[2] = {rows[r], n};
				CgLaunch al, un;
				ck_assert(cg_launch(&c->module, &c->plan, 0, dims, true, &d, &al));
				ck_assert(cg_launch(&c->module, &c->plan, 0, dims, false, &d, &un));
				ck_assert(al.aligned && !un.aligned);
				ck_assert_msg(!assumes_aligned(c, &un), "%s at %lldx%lld: ragged buffers take %s", srcs[i],
				              (long long)rows[r], (long long)n, c->module.entries[un.entry].symbol);
				if (!assumes_aligned(c, &al))
					continue;
				taken++;
				StrBuf sb;
				sb_init(&sb, a);
				cg_print_launch(&sb, &c->module, &c->plan, 0, &un);
				ck_assert_msg(strstr(sb_str(&sb), "\n  buffers    not all 16-byte aligned: no aligned class, "
				                                  "only those for rows of any length\n"),
				              "%s", sb_str(&sb));
				if (un.rule == CG_RULE_REG_MASKED)
					ck_assert_msg(strstr(sb_str(&sb), "is a multiple of 8, but a buffer is not 16-byte aligned: "
					                                  "its chunks start at each row's alignment") ||
					                  strstr(sb_str(&sb), "is a multiple of 4, but a buffer is not 16-byte aligned: "
					                                      "its chunks start at each row's alignment"),
					              "%s", sb_str(&sb));
			}
		pipe_free(c);
	}
	ck_assert_int_gt(taken, 100);
	/* the constant where the kernel reads no column operand; the test where
	 * it does (row_emit.c's vec_test) */
	Compilation *sm = compile_mode(srcs[0], true), *ln = compile_mode(srcs[2], true);
	ck_assert_ptr_nonnull(strstr(entry_of(sm, CG_PATH_REG, false)->text, "const bool fz_vec = true; //"));
	ck_assert_ptr_nonnull(strstr(entry_of(sm, CG_PATH_ROW, false)->text, "const bool fz_vec = true; //"));
	ck_assert_ptr_nonnull(strstr(entry_of(ln, CG_PATH_REG, false)->text, "const bool fz_vec = fz_n % 4 == 0 && "));
	ck_assert_ptr_nonnull(strstr(entry_of(ln, CG_PATH_ROW, false)->text, "if (fz_vec)"));
	pipe_free(sm);
	pipe_free(ln);
	/* forced: the register path's aligned class becomes the masked one; the
	 * entry holding column operands (aligned class only) is refused */
	Compilation *c = compile_mode(srcs[2], true);
	CgLaunch l;
	CgForce f = {.path = CG_PATH_REG, .threads = 64, .rows = 1, .grid = 10};
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){40, 1000}, &d, &f, &l));
	ck_assert(assumes_aligned(c, &l));
	f.unaligned = true;
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){40, 1000}, &d, &f, &l));
	ck_assert(!assumes_aligned(c, &l) && c->module.entries[l.entry].masked);
	f.hold = true;
	ck_assert(!cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){40, 1000}, &d, &f, &l));
	f.unaligned = false;
	ck_assert(cg_launch_forced(&c->module, &c->plan, 0, (int64_t[]){40, 1000}, &d, &f, &l));
	ck_assert(assumes_aligned(c, &l) && c->module.entries[l.entry].hold);
	pipe_free(c);
	arena_free(a);
}
END_TEST

/* ---- NVRTC ------------------------------------------------------------------------------------- */

START_TEST(nvrtc_failure_message)
{
	Arena *a = arena_new();
	RtNvrtcResult r;
	ck_assert(!rt_nvrtc_compile(a, "extern \"C\" __global__ void k() {\n  int x = ;\n}\n", "bad", 9, 0, false, &r));
	ck_assert_ptr_nonnull(strstr(r.message, "NVRTC compilation failed"));
	ck_assert_ptr_nonnull(strstr(r.message, "--- NVRTC log ---\n"));
	ck_assert_ptr_nonnull(strstr(r.message, "bad.cu(2)"));
	ck_assert_ptr_nonnull(strstr(r.message, "    2|   int x = ;\n"));
	ck_assert(rt_nvrtc_version() >= 11000);
	arena_free(a);
}
END_TEST

START_TEST(nvrtc_cubin)
{
	Compilation *c = compile_mode("in x: f32[N]\nout y = exp(x)\n", true);
	RtNvrtcResult r;
	ck_assert(rt_nvrtc_compile(c->arena, c->module.source, "t", 9, 0, true, &r));
	ck_assert_uint_gt(r.image_len, 64);
	ck_assert(memcmp(r.image, "\177ELF", 4) == 0);
	pipe_free(c);
}
END_TEST

/* Best of 3 NVRTC compiles of src to PTX for sm_90, in ms. */
static double nvrtc_ms(Compilation *c, const char *src)
{
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		struct timespec t0, t1;
		RtNvrtcResult r;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert(rt_nvrtc_compile(c->arena, src, "t", 9, 0, false, &r));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		best = ms < best ? ms : best;
	}
	return best;
}

/* A cold compile of a one-kernel program, of each of its entries alone (what
 * the first launch on a path compiles) and of all of them (printed; the
 * figure depends on the machine, see docs/performance.md). All of them is
 * only what `--emit=ptx` without --dim compiles: softmax's 55 entries took
 * 2.3 s on the 2-core development machine, 5.0 s in the ASan build (NVRTC's
 * allocations intercepted), so its bound is looser than an entry's. */
START_TEST(nvrtc_time)
{
	const char *progs[] = {"in x: f32[N]\nin y: f32[N]\nin b: f32[N]\nin s: f32\nout z = relu((x + y) * s + b)\n",
	                       softmax};
	for (int i = 0; i < 2; i++) {
		Compilation *c = compile_mode(progs[i], true);
		const CgModule *m = &c->module;
		for (int e = 0; e <= m->nentries; e++) {
			bool *want = calloc((size_t)m->nentries + 1, sizeof *want);
			for (int o = 0; o < m->nentries; o++)
				want[o] = e == m->nentries || o == e;
			double ms = nvrtc_ms(c, cg_module_source(m, want, c->arena));
			printf("nvrtc: %s, %s: %.1f ms (PTX, sm_90, best of 3)\n", i ? "softmax" : "add_scale_bias_relu",
			       e < m->nentries ? m->entries[e].symbol : "every entry", ms);
			ck_assert_msg(ms < (e == m->nentries ? 30000 : 5000), "%.1f ms", ms);
			free(want);
		}
		pipe_free(c);
	}
}
END_TEST

/* Every program in one mode (fused or per-op, sm_80 or sm_90): bits of the
 * loop index program_compiles_clean reads. */
static void programs_case(Suite *s, TCase *t, int mode)
{
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, program_compiles_clean, mode * nprograms, (mode + 1) * nprograms);
	suite_add_tcase(s, t);
}

static Suite *codegen_suite(void)
{
	Suite *s = suite_create("codegen");
	find_programs("examples");
	find_programs("tests/golden");
	qsort(programs, (size_t)nprograms, sizeof programs[0], cmp_str);
	/* A tcase a mode, so that ctest and gpu-check run them side by side
	 * (whole, 195 s here and past 420 s on the GPU machine beside its
	 * pytest, 2026-11-30). The names literal: CMake and gpu-check read them. */
	programs_case(s, tcase_create("programs_fused_sm80"), 0);
	programs_case(s, tcase_create("programs_fused_sm90"), 1);
	programs_case(s, tcase_create("programs_perop_sm80"), 2);
	programs_case(s, tcase_create("programs_perop_sm90"), 3);
	TCase *t = tcase_create("text");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, keywords_as_identifiers);
	tcase_add_test(t, source_text_in_comments);
	tcase_add_test(t, comment_sanitized);
	tcase_add_test(t, long_comment_truncated);
	tcase_add_test(t, entries_and_arguments);
	tcase_add_test(t, entries_compile_alone);
	tcase_add_test(t, lines_commented);
	tcase_add_test(t, broadcast_offsets_shared);
	tcase_add_test(t, prelude_pieces);
	tcase_add_test(t, half_math);
	tcase_add_test(t, casts_rounded_by_stores);
	tcase_add_test(t, dead_chunks_skipped);
	tcase_add_test(t, literals);
	tcase_add_test(t, deep_chain);
	suite_add_tcase(s, t);
	t = tcase_create("launch");
	tcase_add_test(t, row_schedules_by_length);
	tcase_add_test(t, row_lines_take_line_entries);
	tcase_add_test(t, split_rounds_fill_the_device);
	tcase_add_test(t, row_cache_slots);
	tcase_add_test(t, late_inputs);
	tcase_add_test(t, masked_bits);
	tcase_add_test(t, stream_hints);
	tcase_add_test(t, stream_ring);
	tcase_add_test(t, masked_slots);
	tcase_add_test(t, tile_entries);
	tcase_add_test(t, register_bounds);
	tcase_add_test(t, narrow_register_rows);
	tcase_add_test(t, tile_column_operands);
	tcase_add_test(t, online_sums_planned);
	tcase_add_test(t, zero_sizes);
	tcase_add_test(t, pointwise_grids);
	tcase_add_test(t, division_magic);
	tcase_add_test(t, division_magic_arguments);
	tcase_add_test(t, vector_conditions);
	tcase_add_test(t, aligned_classes_on_the_host);
	suite_add_tcase(s, t);
	t = tcase_create("nvrtc");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, nvrtc_failure_message);
	tcase_add_test(t, nvrtc_cubin);
	tcase_add_test(t, nvrtc_time);
	suite_add_tcase(s, t);
	return s;
}

int main(void) { return tu_run(codegen_suite()); }
