/*
 * main.c: the fusec command.
 *
 *   fusec [OPTIONS] FILE.fz       print the generated CUDA C (or another stage)
 *   fusec run FILE.fz ...         compute outputs (GPU, or --cpu reference)
 *   fusec bench FILE.fz ...       time fused vs per-op on the GPU
 *   fusec cache list|verify|clear the on-disk kernel cache
 *
 * Whatever the command, main() flushes and closes standard output itself and
 * fails (exit 1, with a message) if any of it could not be written: a full
 * disk or a file-size limit must never leave a truncated output behind an
 * exit status of 0.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "runtime/nvrtc.h"

static const char usage[] =
	"usage: fusec [OPTIONS] FILE.fz          print the generated CUDA C ('-' reads stdin)\n"
	"       fusec run FILE.fz [RUN OPTIONS]  compute the outputs (see fusec run --help)\n"
	"       fusec bench FILE.fz [OPTIONS]    time fused vs per-op kernels on the GPU\n"
	"       fusec cache list|verify|clear    manage the on-disk kernel cache\n"
	"\n"
	"options (--opt=VALUE or --opt VALUE):\n"
	"  --emit=STAGE   print a stage instead of CUDA C: tokens, ast, ir, fused, dot,\n"
	"                 cuda (the default) or ptx (compiled by NVRTC, no GPU needed)\n"
	"  --arch=sm_XY   target architecture for --emit=ptx (default sm_90)\n"
	"  --no-fuse      one kernel per op, as eager PyTorch runs them\n"
	"  --explain      say, for every edge of the graph that was not fused, why\n"
	"  -v, --verbose  log each JIT compile and launch geometry to stderr (as FUSEC_LOG=1)\n"
	"  -h, --help     this text\n"
	"  --version      the version\n"
	"\n" CLI_EXIT_STATUS_TEXT;

void cli_error(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	msg_shorten(buf);
	progress_stop(); /* the message starts on a clean line */
	fprintf(stderr, "fusec: %s\n", buf);
}

char *cli_read_file(const char *path, size_t *len)
{
	char err[1024], *text;
	if (strcmp(path, "-") == 0) {
		text = file_read_fd(0, (size_t)FZ_MAX_SOURCE_BYTES * 2, len, err, sizeof err);
		if (!text)
			cli_error("cannot read standard input: %s", err);
	} else if (!(text = file_read_source(path, len, err, sizeof err))) {
		cli_error("%s", err);
	}
	return text;
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

/* ---- options ----------------------------------------------------------------------- */

static const char *long_name(const struct option *opts, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

int cli_getopt(int argc, char **argv, const struct option *opts, const char *cmd, const char *usage_text,
               CliOptionFn fn, void *ctx, int *first)
{
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, ":hv", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_OK;
		} else if (c == 'v') {
			setenv("FUSEC_LOG", "1", 1);
		} else if (c == ':') {
			cli_error("--%s expects a value", long_name(opts, optopt));
			return EXIT_USAGE;
		} else if (c == '?') {
			if (optopt > ' ' && optopt < 127 && optopt != '?') /* a short option */
				cli_error("unknown option '-%c' (see %s --help)", optopt, cmd);
			else
				cli_error("unknown option '%s' (see %s --help)", argv[optind - 1], cmd);
			return EXIT_USAGE;
		} else {
			int rc = fn(ctx, c, optarg);
			if (rc >= 0)
				return rc;
		}
	}
	*first = optind;
	return -1;
}

int cli_parse_int(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long x = *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : (end = (char *)v, 0);
	if (end == v || *end || errno == ERANGE || x < lo || x > hi) {
		cli_error("%s expects an integer from %lld to %lld, got '%s'", opt, lo, hi, v);
		return EXIT_USAGE;
	}
	*out = x;
	return -1;
}

int cli_parse_device(const char *v, int *device)
{
	long long d = 0;
	int rc = cli_parse_int("--device", v, 0, 1023, &d);
	if (rc < 0)
		*device = (int)d;
	return rc;
}

int cli_gpu_exit(fz_status s)
{
	return s == FZ_ERR_NO_DRIVER || s == FZ_ERR_NO_DEVICE ? EXIT_NO_GPU : EXIT_ERROR;
}

/* ---- fusec FILE.fz ------------------------------------------------------------------- */

enum { OPT_EMIT = 256, OPT_ARCH, OPT_NO_FUSE, OPT_EXPLAIN, OPT_VERSION };

typedef struct MainOptions {
	const char *emit;
	bool fuse, explain, version;
	int major, minor;
} MainOptions;

/* sm_XY or compute_XY, where NVRTC compiles for XY (nvrtcGetSupportedArchs). */
static int parse_arch(const char *s, MainOptions *o)
{
	const char *d = strncmp(s, "sm_", 3) == 0 ? s + 3 : strncmp(s, "compute_", 8) == 0 ? s + 8 : NULL;
	char *end = NULL, list[512];
	long v = d && *d >= '1' && *d <= '9' ? strtol(d, &end, 10) : -1;
	bool known = rt_nvrtc_arch_supported(v >= 0 && v < 10000 ? (int)v : -1, list, sizeof list);
	if (v < 0 || *end || !known) {
		cli_error("invalid architecture '%s': this NVRTC compiles for %s", s, list);
		return EXIT_USAGE;
	}
	o->major = (int)(v / 10);
	o->minor = (int)(v % 10);
	return -1;
}

static int main_option(void *ctx, int opt, const char *arg)
{
	MainOptions *o = ctx;
	switch (opt) {
	case OPT_EMIT: o->emit = arg; return -1;
	case OPT_ARCH: return parse_arch(arg, o);
	case OPT_NO_FUSE: o->fuse = false; return -1;
	case OPT_EXPLAIN: o->explain = true; return -1;
	case OPT_VERSION: o->version = true; return -1;
	}
	cli_error("internal error: option %d has no handler", opt);
	return EXIT_ERROR;
}

static const struct {
	const char *name;
	PipeStage stage;
} stages[] = {
	{"tokens", STAGE_TOKENS}, {"ast", STAGE_AST},   {"ir", STAGE_IR},   {"fused", STAGE_FUSED},
	{"dot", STAGE_FUSED},     {"cuda", STAGE_CUDA}, {"ptx", STAGE_CUDA},
};

/* Print the stage asked for of a compilation. */
static int emit(Compilation *c, const MainOptions *o)
{
	StrBuf sb;
	sb_init(&sb, c->arena);
	int rc = EXIT_OK;
	if (o->explain)
		fuse_explain(&sb, &c->plan);
	else if (strcmp(o->emit, "tokens") == 0)
		fe_print_tokens(&sb, &c->src, &c->tokens);
	else if (strcmp(o->emit, "ast") == 0)
		fe_print_ast(&sb, &c->src, &c->ast);
	else if (strcmp(o->emit, "ir") == 0)
		ir_print(&sb, &c->graph);
	else if (strcmp(o->emit, "fused") == 0)
		fuse_print(&sb, &c->plan);
	else if (strcmp(o->emit, "dot") == 0)
		fuse_print_dot(&sb, &c->plan);
	else if (strcmp(o->emit, "cuda") == 0)
		sb_puts(&sb, c->module.source);
	else {
		RtNvrtcResult r;
		if (!rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, o->major, o->minor, false, &r)) {
			fputs(r.message, stderr);
			rc = EXIT_ERROR;
		} else {
			sb_putn(&sb, r.image, r.image_len);
		}
	}
	cli_write(sb.buf, sb.len);
	return rc;
}

static int cmd_compile(int argc, char **argv)
{
	static const struct option opts[] = {
		{"emit", required_argument, NULL, OPT_EMIT}, {"arch", required_argument, NULL, OPT_ARCH},
		{"no-fuse", no_argument, NULL, OPT_NO_FUSE}, {"explain", no_argument, NULL, OPT_EXPLAIN},
		{"version", no_argument, NULL, OPT_VERSION}, {"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},         {NULL, 0, NULL, 0},
	};
	MainOptions o = {.emit = "cuda", .fuse = true, .major = 9, .minor = 0};
	int first, rc = cli_getopt(argc, argv, opts, "fusec", usage, main_option, &o, &first);
	if (rc >= 0)
		return rc;
	if (o.version) {
		printf("fusec %d.%d.%d\n", FUSEC_VERSION_MAJOR, FUSEC_VERSION_MINOR, FUSEC_VERSION_PATCH);
		return EXIT_OK;
	}
	if (first == argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if (argc - first > 1) {
		cli_error("more than one program file ('%s' and '%s')", argv[first], argv[first + 1]);
		return EXIT_USAGE;
	}
	int si = -1;
	for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
		if (strcmp(o.emit, stages[i].name) == 0)
			si = (int)i;
	if (si < 0) {
		cli_error("unknown stage '%s' for --emit (tokens, ast, ir, fused, dot, cuda, ptx)", o.emit);
		return EXIT_USAGE;
	}
	PipeStage stop = stages[si].stage;
	if (o.explain && stop < STAGE_FUSED)
		stop = STAGE_FUSED;
	Compilation *c = cli_compile(argv[first], stop, o.fuse);
	if (!c)
		return EXIT_ERROR;
	rc = emit(c, &o);
	pipe_free(c);
	return rc;
}

static int out_errno; /* why the last cli_write failed */

void cli_write(const void *buf, size_t n)
{
	if (fwrite(buf, 1, n, stdout) != n && !out_errno)
		out_errno = errno;
}

/* Flush and close standard output; a write that failed at any point makes
 * the command fail. */
static int finish_output(int rc)
{
	int e = 0;
	if (fflush(stdout) != 0)
		e = errno;
	else if (ferror(stdout))
		e = out_errno;
	bool bad = ferror(stdout) != 0;
	if (fclose(stdout) != 0 && !e)
		e = errno;
	if (!bad && !e)
		return rc;
	if (e)
		cli_error("cannot write the output: %s", strerror(e));
	else
		cli_error("cannot write the output: a write to standard output failed");
	return rc == EXIT_OK ? EXIT_ERROR : rc;
}

int main(int argc, char **argv)
{
	int rc;
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		rc = cmd_run(argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "bench") == 0)
		rc = cmd_bench(argc - 1, argv + 1);
	else if (argc >= 2 && strcmp(argv[1], "cache") == 0)
		rc = cmd_cache(argc - 1, argv + 1);
	else
		rc = cmd_compile(argc, argv);
	return finish_output(rc);
}
