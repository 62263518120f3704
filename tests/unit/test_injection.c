/* No code injection through the generated CUDA. A program's identifiers
 * (inputs, scalar inputs, dims, bindings, outputs, fn names, fn parameters)
 * named like C++ and CUDA keywords, macros, runtime names, and every name the
 * generator itself writes (prelude helpers, locals, parameters: collected
 * from the CUDA of every example, so the list follows codegen), and file
 * names with odd characters (the program name comes from the stem):
 *
 *  - the generated CUDA, comments stripped, is exactly the CUDA of the same
 *    program with neutral names (n0, n1, ...) in which the prefixed
 *    parameters in_n0, out_n0, dim_n0 are renamed in_H, out_H, dim_H: a
 *    user's name never appears where it could be code;
 *  - it compiles with NVRTC for sm_90 with an empty log;
 *  - source text quoted in comments cannot break out of them: only
 *    printable ASCII, no line ending in a backslash (a line splice), no
 *    trigraph, whatever the program's comments hold.
 *
 * Cache entries are checked (checksum and key) before they are loaded:
 * test_cache.c covers damaged and misnamed entries. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusec.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

/* ---- text helpers ----------------------------------------------------------------------------- */

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Buf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		ck_assert_int_ge(k, 0);
		if (b->s && b->n + (size_t)k < b->cap) {
			b->n += (size_t)k;
			return;
		}
		b->cap = (b->cap + (size_t)k + 1) * 2;
		b->s = realloc(b->s, b->cap);
		ck_assert_ptr_nonnull(b->s);
	}
}

/* Append n bytes (the scanners below append byte by byte: no printf). */
static void putn(Buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->cap + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		ck_assert_ptr_nonnull(b->s);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* The code without its comments (// to the end of the line, and block
 * comments); string and character literals are kept as they are. */
static char *strip_comments(const char *s)
{
	Buf b = {0};
	putn(&b, "", 0);
	while (*s) {
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			ck_assert_msg(e != NULL, "unterminated block comment in generated code");
			s = e + 2;
		} else if (*s == '"' || *s == '\'') {
			char q = *s;
			const char *t = s + 1;
			while (*t && *t != q)
				t += t[0] == '\\' && t[1] ? 2 : 1;
			putn(&b, s, (size_t)(t - s + (*t ? 1 : 0)));
			s = *t ? t + 1 : t;
		} else {
			putn(&b, s++, 1);
		}
	}
	return b.s;
}

/* s with identifier tokens renamed: from[i] -> to[i] (whole tokens only;
 * every from[i] starts with in_, out_ or dim_). */
static char *rename_tokens(const char *s, const char **from, const char **to, int n)
{
	Buf b = {0};
	putn(&b, "", 0);
	while (*s) {
		if (!ident_start(*s)) {
			/* a number's letters (1e5f, 0x7f800000u) are not identifiers */
			if (*s >= '0' && *s <= '9') {
				const char *t = s;
				while (ident_char(*t) || (*t == '.' && t != s))
					t++;
				putn(&b, s, (size_t)(t - s));
				s = t;
			} else {
				putn(&b, s++, 1);
			}
			continue;
		}
		const char *t = s;
		while (ident_char(*t))
			t++;
		size_t len = (size_t)(t - s);
		int k = -1;
		/* every name renamed here starts with a prefix: skip the rest fast */
		bool prefixed = strncmp(s, "in_", 3) == 0 || strncmp(s, "out_", 4) == 0 || strncmp(s, "dim_", 4) == 0;
		for (int i = 0; prefixed && i < n && k < 0; i++)
			if (strncmp(from[i], s, len) == 0 && from[i][len] == 0)
				k = i;
		if (k >= 0)
			putn(&b, to[k], strlen(to[k]));
		else
			putn(&b, s, len);
		s = t;
	}
	return b.s;
}

/* Every comment is harmless: printable ASCII (and tabs) only, no line that
 * ends in a backslash, no trigraph anywhere. */
static void check_harmless_text(const char *src)
{
	/* (plain ifs: a Check assertion per byte records a mark point each) */
	for (const char *p = src; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c != '\n' && c != '\t' && (c < 0x20 || c >= 0x7f))
			ck_abort_msg("byte 0x%02X in generated code", c);
		if (c == '\\' && p[1] == '\n')
			ck_abort_msg("a line ends in a backslash: %.60s", p > src + 60 ? p - 60 : src);
		if (c == '?' && p[1] == '?' && p[2] && strchr("=/'()!<>-", p[2]))
			ck_abort_msg("a trigraph in generated code: %.20s", p);
	}
}

static void nvrtc_clean(Compilation *c)
{
	RtNvrtcResult r;
	bool ok = rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, 9, 0, false, &r);
	ck_assert_msg(ok, "NVRTC failed: %s", r.message ? r.message : "");
	ck_assert_msg(!r.log || !r.log[0], "NVRTC's log is not empty: %s", r.log);
}

static Compilation *compile_named(const char *name, const char *src, bool fuse)
{
	PipeOptions o = pipe_default_options();
	o.fuse = fuse;
	Compilation *c = pipe_new(name, src, strlen(src), &o);
	ck_assert_ptr_nonnull(c);
	ck_assert_msg(pipe_run(c) == FZ_OK, "%s: %s", name, c->diag_text ? c->diag_text : "");
	return c;
}

/* ---- hostile names --------------------------------------------------------------------------- */

static const char *const static_names[] = {
	/* C and C++ */
	"int", "float", "double", "char", "void", "long", "short", "unsigned", "signed", "if", "else", "for", "while",
	"do", "switch", "case", "default", "break", "continue", "return", "goto", "struct", "class", "union", "enum",
	"typedef", "template", "typename", "namespace", "using", "new", "delete", "this", "operator", "sizeof",
	"alignof", "alignas", "static", "extern", "const", "volatile", "register", "inline", "auto", "asm", "friend",
	"virtual", "public", "private", "throw", "try", "catch", "true", "false", "nullptr", "NULL", "constexpr",
	"decltype", "static_assert", "explicit", "mutable", "export", "main", "printf", "malloc", "assert", "std",
	"size_t", "int64_t", "uint8_t", "and", "or", "not", "xor", "bitand", "compl",
	/* CUDA */
	"__global__", "__device__", "__host__", "__shared__", "__constant__", "__restrict__", "__forceinline__",
	"__noinline__", "__launch_bounds__", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
	"__syncthreads", "__shfl_xor_sync", "atomicAdd", "__nanosleep", "__threadfence", "__half", "__nv_bfloat16",
	"half", "float4", "expf", "sqrtf", "rsqrtf", "fminf", "fmaxf", "erff", "tanhf", "__expf", "fabs",
	"__float_as_uint", "__uint_as_float", "__int_as_float", "__double_as_longlong",
	/* macros */
	"__CUDA_ARCH__", "__CUDACC__", "__CUDACC_RTC__", "__LINE__", "__FILE__", "__COUNTER__", "__cplusplus",
	"__VA_ARGS__", "INFINITY", "NAN", "M_PI", "_Pragma", "defined", "__has_include",
	/* prefixes and shapes of generated names */
	"in_x", "out_y", "dim_N", "in_", "out_", "dim_", "st0", "st5", "t0", "t1", "a0", "l0", "f0", "s0", "v0",
	"fz", "fz_", "fz_x", "k0_pw", "k0_row", "test_k0_pw", "test_k0_row", "_", "__", "___x",
};

/* Names the generator wrote for the examples (fused and per-op), plus the
 * static list, without the fz language's own words and duplicates. */
static int hostile_names(const char ***out)
{
	static const char *names[2048];
	int n = 0;
	Buf all = {0};
	put(&all, " ");
	for (size_t i = 0; i < sizeof static_names / sizeof static_names[0]; i++)
		put(&all, "%s ", static_names[i]);
	static const char *examples[] = {"softmax", "layernorm", "adam", "rmsnorm", "layernorm_bf16", "log_softmax"};
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
		char path[256];
		snprintf(path, sizeof path, "examples/%s.fz", examples[e]);
		FILE *f = fopen(tu_path(path), "rb");
		ck_assert_ptr_nonnull(f);
		static char text[1 << 16];
		text[fread(text, 1, sizeof text - 1, f)] = 0;
		fclose(f);
		for (int fuse = 0; fuse < 2; fuse++) {
			Compilation *c = compile_named(path, text, fuse);
			char *code = strip_comments(c->module.source);
			for (const char *p = code; *p;) {
				if (!ident_start(*p) || (p > code && ident_char(p[-1]))) {
					p++;
					continue;
				}
				const char *t = p;
				while (ident_char(*t))
					t++;
				char word[128];
				snprintf(word, sizeof word, " %.*s ", (int)(t - p) < 120 ? (int)(t - p) : 120, p);
				if (!strstr(all.s, word))
					put(&all, "%s", word + 1);
				p = t;
			}
			free(code);
			pipe_free(c);
		}
	}
	/* keep the words a program may bind */
	for (char *w = strtok(all.s, " "); w && n < 2048; w = strtok(NULL, " ")) {
		char src[256];
		snprintf(src, sizeof src, "in %s: f32\nout %s_o = %s\n", w, w, w);
		Compilation *c = tu_compile(src, STAGE_AST);
		bool ok = c->status == FZ_OK && ir_builtin(w, strlen(w)) < 0;
		pipe_free(c);
		if (ok)
			names[n++] = strdup(w);
	}
	*out = names;
	return n;
}

/* ---- programs in which every name plays one role --------------------------------------------------- */

typedef enum Role { R_INPUT, R_SCALAR, R_DIM, R_BINDING, R_OUTPUT, R_FN, R_PARAM, R_COUNT } Role;
static const char *const role_names[R_COUNT] = {"input", "scalar input", "dim", "binding", "output", "fn",
                                                 "fn parameter"};

/* A program where names[0..n) all play `role`; n is at most 200 (64 for
 * fn parameters). A row reduction in each, so both kernel kinds see them. */
static char *role_program(Role role, const char **names, int n)
{
	Buf b = {0};
	switch (role) {
	case R_INPUT:
		for (int i = 0; i < n; i++)
			put(&b, "in %s: f32[B, N]\n", names[i]);
		put(&b, "zz_s = %s", names[0]);
		for (int i = 1; i < n; i++)
			put(&b, " + %s", names[i]);
		put(&b, "\nout zz_y = zz_s / sum(zz_s)\n");
		break;
	case R_SCALAR:
		for (int i = 0; i < n; i++)
			put(&b, "in %s: f32\n", names[i]);
		put(&b, "in zz_x: f32[B, N]\nout zz_y = zz_x");
		for (int i = 0; i < n; i++)
			put(&b, " * %s", names[i]);
		put(&b, "\nout zz_m = max(zz_x * %s)\n", names[0]);
		break;
	case R_DIM:
		for (int i = 0; i < n; i++)
			put(&b, "in zz_x%d: f32[%s]\nout zz_o%d = zz_x%d - max(zz_x%d)\n", i, names[i], i, i, i);
		break;
	case R_BINDING:
		put(&b, "in zz_x: f32[B, N]\n%s = zz_x + 1\n", names[0]);
		for (int i = 1; i < n; i++)
			put(&b, "%s = %s * 2\n", names[i], names[i - 1]);
		put(&b, "out zz_y = %s / sum(%s)\n", names[n - 1], names[0]);
		break;
	case R_OUTPUT:
		put(&b, "in zz_x: f32[B, N]\n");
		for (int i = 0; i < n; i++)
			put(&b, "out %s = zz_x * %d - %s\n", names[i], i + 1, i % 2 ? "sum(zz_x)" : "1");
		break;
	case R_FN:
		for (int i = 0; i < n; i++)
			put(&b, "fn %s(v) = v * %d\n", names[i], i + 2);
		put(&b, "in zz_x: f32[B, N]\nzz_s = %s(zz_x)", names[0]);
		for (int i = 1; i < n; i++)
			put(&b, " + %s(zz_x)", names[i]);
		put(&b, "\nout zz_y = zz_s - mean(zz_s)\n");
		break;
	case R_PARAM:
		put(&b, "fn zz_f(%s", names[0]);
		for (int i = 1; i < n; i++)
			put(&b, ", %s", names[i]);
		put(&b, ") = %s", names[0]);
		for (int i = 1; i < n; i++)
			put(&b, " + %s * %d", names[i], i);
		put(&b, "\nin zz_x: f32[B, N]\nin zz_w: f32[N]\nout zz_y = zz_f(zz_x");
		for (int i = 1; i < n; i++)
			put(&b, ", %s", i % 2 ? "zz_w" : "zz_x");
		put(&b, ")\nout zz_r = sum(zz_y)\n");
		break;
	default: ck_abort();
	}
	return b.s;
}

/* The hostile program's CUDA is the neutral program's, renamed. */
static void check_role(Role role, const char **names, int n, bool fuse, bool nvrtc)
{
	const char *neutral[256], *from[768], *to[768];
	char nb[256][16];
	for (int i = 0; i < n; i++) {
		snprintf(nb[i], sizeof nb[i], "n%d", i);
		neutral[i] = nb[i];
	}
	int m = 0;
	static const char *prefixes[3] = {"in_", "out_", "dim_"};
	for (int i = 0; i < n; i++)
		for (int p = 0; p < 3; p++) {
			char *f = malloc(strlen(names[i]) + 8), *t = malloc(strlen(names[i]) + 8);
			sprintf(f, "%s%s", prefixes[p], neutral[i]);
			sprintf(t, "%s%s", prefixes[p], names[i]);
			from[m] = f;
			to[m++] = t;
		}
	char *hsrc = role_program(role, names, n), *nsrc = role_program(role, neutral, n);
	Compilation *h = compile_named("test.fz", hsrc, fuse), *z = compile_named("test.fz", nsrc, fuse);
	check_harmless_text(h->module.source);
	char *hcode = strip_comments(h->module.source), *zcode = strip_comments(z->module.source);
	char *want = rename_tokens(zcode, from, to, m);
	if (strcmp(hcode, want) != 0) {
		size_t k = 0;
		while (hcode[k] && hcode[k] == want[k])
			k++;
		size_t back = k > 200 ? k - 200 : 0;
		ck_abort_msg("%s names (%s): the code differs from the neutral program's at byte %zu:\n%.300s\n"
		             "---- expected ----\n%.300s", role_names[role], fuse ? "fused" : "per-op", k, hcode + back,
		             want + back);
	}
	if (nvrtc)
		nvrtc_clean(h);
	for (int i = 0; i < m; i++) {
		free((void *)from[i]);
		free((void *)to[i]);
	}
	free(hcode);
	free(zcode);
	free(want);
	free(hsrc);
	free(nsrc);
	pipe_free(h);
	pipe_free(z);
}

START_TEST(hostile_identifiers)
{
	const char **names;
	int n = hostile_names(&names);
	ck_assert_int_gt(n, 150); /* the static list alone has more */
	for (Role role = 0; role < R_COUNT; role++) {
		int chunk = role == R_PARAM ? 64 : 200;
		for (int i = 0; i < n; i += chunk) {
			int k = n - i < chunk ? n - i : chunk;
			check_role(role, names + i, k, true, false);
			check_role(role, names + i, k < 24 ? k : 24, false, false);
		}
		/* NVRTC on 40 names in each role, a different 40 each time: a
		 * program of 200 inputs takes it a minute, and the comparison above
		 * already shows that the code is the neutral program's */
		int at = (int)role * 40 % n;
		check_role(role, names + at, n - at < 40 ? n - at : 40, true, true);
	}
	for (int i = 0; i < n; i++)
		free((void *)names[i]);
}
END_TEST

START_TEST(every_role_per_op_compiles)
{
	/* one small program with hostile names in every role, per-op mode, NVRTC */
	static const char src[] = "fn __global__(asm, threadIdx) = asm * threadIdx + 1\n"
	                          "in float: f32[int, return]\n"
	                          "in fz_in: f32[return]\n"
	                          "in __LINE__: f16\n"
	                          "t3 = __global__(float, fz_in)\n"
	                          "out in_x = t3 - max(t3) * __LINE__\n"
	                          "out fz_sum = sum(float)\n"
	                          "out float4 = float\n";
	for (int fuse = 0; fuse < 2; fuse++) {
		Compilation *c = compile_named("test.fz", src, fuse);
		check_harmless_text(c->module.source);
		char *code = strip_comments(c->module.source);
		/* the user's names appear only prefixed */
		ck_assert_ptr_nonnull(strstr(code, "in_float"));
		ck_assert_ptr_nonnull(strstr(code, "dim_int"));
		ck_assert_ptr_nonnull(strstr(code, "dim_return"));
		ck_assert_ptr_nonnull(strstr(code, "in___LINE__"));
		ck_assert_ptr_nonnull(strstr(code, "out_in_x"));
		ck_assert_ptr_nonnull(strstr(code, "out_fz_sum"));
		ck_assert_ptr_nonnull(strstr(code, "out_float4"));
		ck_assert_ptr_null(strstr(code, " __LINE__"));
		ck_assert_ptr_null(strstr(code, "__global__("));
		free(code);
		nvrtc_clean(c);
		pipe_free(c);
	}
}
END_TEST

/* ---- program names from odd file names ------------------------------------------------------------ */

START_TEST(odd_file_names)
{
	static const char prog[] = "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\nout z = x * 2\n";
	static const char *const files[] = {
		"my prog.fz", "a\nb.fz", "x\"y.fz", "*/.fz", "/*.fz", "a\\.fz", "a?\?/.fz", "..fz", ".fz", "1st.fz",
		"int.fz", "__global__.fz", "fz.fz", "fz_in.fz", "in.fz", "x-y+z.fz", "dir/sub/prog.v2.fz", "/", "",
		"\xc3\xbc\xc3\xb1\xc3\xaf.fz", "#define X.fz", "a\\\nb.fz",
		"0123456789012345678901234567890123456789012345678901234567890123456789.fz",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		Compilation *c = compile_named(files[i], prog, true);
		const char *name = c->graph.name;
		ck_assert_msg(ident_start(name[0]), "program name '%s' from '%s'", name, files[i]);
		for (const char *p = name; *p; p++)
			ck_assert_msg(ident_char(*p), "program name '%s' from '%s'", name, files[i]);
		ck_assert_uint_le(strlen(name), 49);
		check_harmless_text(c->module.source);
		/* the first line names the program, and is still a comment */
		char first[128];
		snprintf(first, sizeof first, "// %s: generated by fusec", name);
		ck_assert_msg(strncmp(c->module.source, first, strlen(first)) == 0, "%.80s", c->module.source);
		ck_assert_ptr_null(strchr(c->module.source, '\r'));
		/* the public API agrees */
		fz_program *p;
		fz_diag d;
		ck_assert_int_eq(fz_program_compile(NULL, files[i], prog, strlen(prog), NULL, &p, &d), FZ_OK);
		ck_assert_str_eq(fz_program_name(p), name);
		fz_program_destroy(p);
		if (i < 6 || strcmp(files[i], "in.fz") == 0)
			nvrtc_clean(c);
		pipe_free(c);
	}
}
END_TEST

START_TEST(program_name_meets_parameter_names)
{
	/* in.fz with an input k0_pw: the kernel in_k0_... and the parameter
	 * in_k0_pw look alike; both compile, each where it belongs */
	static const char src[] = "in k0_pw: f32[k0_row]\nin k0_row: f32[k0_row]\nout k1_pw = k0_pw + k0_row\n"
	                          "out k0 = k0_pw - max(k0_pw)\n";
	static const char *const files[] = {"in.fz", "out.fz", "dim.fz"};
	for (size_t i = 0; i < 3; i++)
		for (int fuse = 0; fuse < 2; fuse++) {
			Compilation *c = compile_named(files[i], src, fuse);
			nvrtc_clean(c);
			pipe_free(c);
		}
}
END_TEST

/* ---- source text in comments ---------------------------------------------------------------------- */

START_TEST(comments_cannot_break_out)
{
	/* comments and line breaks inside expressions end up in the spans that
	 * codegen quotes: backslashes at line ends, block-comment markers,
	 * trigraphs, carriage returns, control and non-ASCII bytes */
	static const char hostile[] =
		"in x: f32[B, N]\n"
		"in s: f32\n"
		"a = (x + # line splice \\\n"
		"     s * 2) # */ trailing \\\n"
		"b = (a * # /* open\n"
		"     3 + # ?\?/\n"
		"     s) # ?\?= ?\?' ?\?( ?\?) ?\?! ?\?< ?\?> ?\?-\n"
		"c = (b # \xc3\xa9\xe2\x80\xa8 \x01\x7f\r\n"
		"     - max(b)) # \\\\\\\n"
		"out y = (c / sum( # ends \\\n"
		"    exp(c)))\n"
		"out z = ((((((((((((((((((((x + s)))))))))))))))))))) # \\\n";
	static const char plain[] = "in x: f32[B, N]\n"
	                            "in s: f32\n"
	                            "a = (x + s * 2)\n"
	                            "b = (a * 3 + s)\n"
	                            "c = (b - max(b))\n"
	                            "out y = (c / sum(exp(c)))\n"
	                            "out z = x + s\n";
	for (int fuse = 0; fuse < 2; fuse++) {
		Compilation *h = compile_named("test.fz", hostile, fuse), *p = compile_named("test.fz", plain, fuse);
		check_harmless_text(h->module.source);
		/* the comments differ, the code does not */
		char *hc = strip_comments(h->module.source), *pc = strip_comments(p->module.source);
		ck_assert_str_eq(hc, pc);
		free(hc);
		free(pc);
		nvrtc_clean(h);
		pipe_free(h);
		pipe_free(p);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("injection");
	TCase *tc = tcase_create("injection");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, hostile_identifiers);
	tcase_add_test(tc, every_role_per_op_compiles);
	tcase_add_test(tc, odd_file_names);
	tcase_add_test(tc, program_name_meets_parameter_names);
	tcase_add_test(tc, comments_cannot_break_out);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
