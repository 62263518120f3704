/*
 * main.c: the fusec command.
 *
 *   fusec [OPTIONS] FILE.fz       print the generated CUDA C (or another stage)
 *   fusec run FILE.fz ...         compute outputs (GPU, or --cpu reference)
 *   fusec bench FILE.fz ...       time fused vs per-op on the GPU
 *   fusec cache list|verify|clear the on-disk kernel cache
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/nvrtc.h"

static const char usage[] =
	"usage: fusec [OPTIONS] FILE.fz          print the generated CUDA C ('-' reads stdin)\n"
	"       fusec run FILE.fz [RUN OPTIONS]  compute the outputs (see fusec run --help)\n"
	"       fusec bench FILE.fz [OPTIONS]    time fused vs per-op kernels on the GPU\n"
	"       fusec cache list|verify|clear    manage the on-disk kernel cache\n"
	"\n"
	"options:\n"
	"  --emit=STAGE   print a stage instead of CUDA C: tokens, ast, ir, fused, dot,\n"
	"                 cuda (the default) or ptx (compiled by NVRTC, no GPU needed)\n"
	"  --arch=sm_XX   target architecture for --emit=ptx (default sm_90)\n"
	"  --no-fuse      one kernel per op, as eager PyTorch runs them\n"
	"  --explain      say, for every edge of the graph that was not fused, why\n"
	"  -h, --help     this text\n"
	"  --version      the version\n";

void cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fusec: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

const char *cli_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing)
{
	size_t n = strlen(opt);
	const char *a = argv[*i];
	if (strncmp(a, opt, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = true;
		return NULL;
	}
	return argv[++*i];
}

char *cli_read_file(const char *path, size_t *len)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		cli_error("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			cli_error("cannot read %s: out of memory", path);
			break;
		}
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		if (cap > (size_t)FZ_MAX_SOURCE_BYTES * 2) {
			/* past the limit: stop reading, the pipeline reports the size */
			break;
		}
		cap *= 2;
		char *nb = realloc(buf, cap);
		if (!nb) {
			free(buf);
			buf = NULL;
			continue;
		}
		buf = nb;
	}
	if (buf && ferror(f)) {
		cli_error("cannot read %s: %s", path, strerror(errno));
		free(buf);
		buf = NULL;
	}
	if (!is_stdin)
		fclose(f);
	*len = n;
	return buf;
}

Compilation *cli_compile(const char *path, PipeStage stop, bool fuse)
{
	size_t len;
	char *text = cli_read_file(path, &len);
	if (!text)
		return NULL;
	PipeOptions opt = pipe_default_options();
	opt.stop = stop;
	opt.fuse = fuse;
	Compilation *c = pipe_new(strcmp(path, "-") == 0 ? "<stdin>" : path, text, len, &opt);
	free(text);
	if (!c) {
		cli_error("out of memory");
		return NULL;
	}
	if (pipe_run(c) != FZ_OK) {
		fputs(c->diag_text ? c->diag_text : "fusec: compilation failed\n", stderr);
		pipe_free(c);
		return NULL;
	}
	return c;
}

static int parse_arch(const char *s, int *major, int *minor)
{
	if (strncmp(s, "sm_", 3) != 0 && strncmp(s, "compute_", 8) != 0)
		return 0;
	const char *d = strchr(s, '_') + 1;
	char *end;
	long v = strtol(d, &end, 10);
	if (end == d || (*end && strcmp(end, "a") != 0) || v < 50 || v > 200)
		return 0;
	*major = (int)(v / 10);
	*minor = (int)(v % 10);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "bench") == 0)
		return cmd_bench(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "cache") == 0)
		return cmd_cache(argc - 1, argv + 1);

	const char *file = NULL, *emit = "cuda";
	bool fuse = true, explain = false;
	int major = 9, minor = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			return EXIT_OK;
		} else if (strcmp(a, "--version") == 0) {
			printf("fusec %d.%d.%d\n", FUSEC_VERSION_MAJOR, FUSEC_VERSION_MINOR, FUSEC_VERSION_PATCH);
			return EXIT_OK;
		} else if (strncmp(a, "--emit=", 7) == 0) {
			emit = a + 7;
		} else if (strncmp(a, "--arch=", 7) == 0) {
			if (!parse_arch(a + 7, &major, &minor)) {
				cli_error("invalid architecture '%s' (expected sm_XX, e.g. sm_90)", a + 7);
				return EXIT_USAGE;
			}
		} else if (strcmp(a, "--no-fuse") == 0) {
			fuse = false;
		} else if (strcmp(a, "--explain") == 0) {
			explain = true;
		} else if (a[0] == '-' && a[1] != 0) {
			cli_error("unknown option '%s' (see fusec --help)", a);
			return EXIT_USAGE;
		} else if (file) {
			cli_error("more than one input file ('%s' and '%s')", file, a);
			return EXIT_USAGE;
		} else {
			file = a;
		}
	}
	if (!file) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}

	static const struct {
		const char *name;
		PipeStage stage;
	} stages[] = {
		{"tokens", STAGE_TOKENS}, {"ast", STAGE_AST},   {"ir", STAGE_IR},   {"fused", STAGE_FUSED},
		{"dot", STAGE_FUSED},     {"cuda", STAGE_CUDA}, {"ptx", STAGE_CUDA},
	};
	int si = -1;
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
		if (strcmp(emit, stages[i].name) == 0)
			si = (int)i;
	if (si < 0) {
		cli_error("unknown stage '%s' for --emit (tokens, ast, ir, fused, dot, cuda, ptx)", emit);
		return EXIT_USAGE;
	}
	PipeStage stop = stages[si].stage;
	if (explain && stop < STAGE_FUSED)
		stop = STAGE_FUSED;

	Compilation *c = cli_compile(file, stop, fuse);
	if (!c)
		return EXIT_ERROR;
	StrBuf sb;
	sb_init(&sb, c->arena);
	int rc = EXIT_OK;
	if (explain)
		fuse_explain(&sb, &c->plan);
	else if (strcmp(emit, "tokens") == 0)
		fe_print_tokens(&sb, &c->src, &c->tokens);
	else if (strcmp(emit, "ast") == 0)
		fe_print_ast(&sb, &c->src, &c->ast);
	else if (strcmp(emit, "ir") == 0)
		ir_print(&sb, &c->graph);
	else if (strcmp(emit, "fused") == 0)
		fuse_print(&sb, &c->plan);
	else if (strcmp(emit, "dot") == 0)
		fuse_print_dot(&sb, &c->plan);
	else if (strcmp(emit, "cuda") == 0)
		sb_puts(&sb, c->module.source);
	else {
		RtNvrtcResult r;
		if (!rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, major, minor, false, &r)) {
			fputs(r.message, stderr);
			rc = EXIT_ERROR;
		} else {
			sb_putn(&sb, r.image, r.image_len);
		}
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	pipe_free(c);
	return rc;
}
