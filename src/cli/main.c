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
	"                 cuda (the default), ptx (compiled by NVRTC, no GPU needed) or\n"
	"                 launch (each kernel's path, grid, block, memory; needs --dim)\n"
	"  --dim N=SIZE   the sizes for --emit=launch; with cuda or ptx, only the\n"
	"                 entries these sizes use\n"
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

enum { OPT_EMIT = 256, OPT_ARCH, OPT_NO_FUSE, OPT_EXPLAIN, OPT_VERSION, OPT_DIM };

enum { MAX_DIM_OPTIONS = 64 };

typedef struct MainOptions {
	const char *emit;
	bool fuse, explain, version;
	int major, minor;
	const char *dimv[MAX_DIM_OPTIONS]; /* --dim NAME=SIZE */
	int ndim;
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
	case OPT_DIM:
		if (o->ndim == MAX_DIM_OPTIONS) {
			cli_error("more than %d --dim options", MAX_DIM_OPTIONS);
			return EXIT_USAGE;
		}
		o->dimv[o->ndim++] = arg;
		return -1;
	}
	cli_error("internal error: option %d has no handler", opt);
	return EXIT_ERROR;
}

static const struct {
	const char *name;
	PipeStage stage;
} stages[] = {
	{"tokens", STAGE_TOKENS}, {"ast", STAGE_AST},   {"ir", STAGE_IR},   {"fused", STAGE_FUSED},
	{"dot", STAGE_FUSED},     {"cuda", STAGE_CUDA}, {"ptx", STAGE_CUDA},  {"launch", STAGE_CUDA},
};

/* --dim for --emit=launch (printed into sb), cuda and ptx: each kernel's
 * launch for these sizes on the default device; returns the source of the
 * entries they use, or NULL (printed) when a dim is unknown or missing. */
static const char *sized_stage(Compilation *c, const MainOptions *o, StrBuf *sb)
{
	const Graph *g = &c->graph;
	int64_t *dims = ARENA_ARRAY(c->arena, int64_t, g->ndims + 1);
	for (int k = 0; k < g->ndims; k++)
		dims[k] = -1;
	for (int i = 0; i < o->ndim; i++) {
		const char *v = o->dimv[i], *eq = strchr(v, '=');
		int k = 0;
		while (eq && k < g->ndims && (strlen(g->dims[k]) != (size_t)(eq - v) || strncmp(g->dims[k], v, (size_t)(eq - v))))
			k++;
		if (!eq || k == g->ndims) {
			cli_error("--dim %s: expected NAME=SIZE, NAME a dim of the program", v);
			return NULL;
		}
		long long size;
		if (cli_parse_int("--dim", eq + 1, 0, 1LL << 62, &size) >= 0)
			return NULL;
		dims[k] = size;
	}
	for (int k = 0; k < g->ndims; k++)
		if (dims[k] < 0) {
			cli_error("dim '%s' has no size: pass --dim %s=SIZE", g->dims[k], g->dims[k]);
			return NULL;
		}
	CgDevice dev = cg_default_device();
	bool *want = ARENA_ARRAY(c->arena, bool, c->module.nentries + 1), launch = strcmp(o->emit, "launch") == 0;
	if (launch)
		cg_print_device(sb, &dev);
	for (int k = 0; k < c->plan.nkernels; k++) {
		CgLaunch l;
		if (!cg_launch(&c->module, &c->plan, k, dims, true, &dev, &l)) { /* buffers aligned, as allocated */
			cli_error("kernel '%s' cannot be launched for these sizes", c->plan.kernels[k].name);
			return NULL;
		}
		want[l.entry] |= !l.empty;
		if (launch)
			cg_print_launch(sb, &c->module, &c->plan, k, &l);
	}
	return cg_module_source(&c->module, want, c->arena);
}

/* Print the stage asked for of a compilation. */
static int emit(Compilation *c, const MainOptions *o)
{
	StrBuf sb;
	sb_init(&sb, c->arena);
	int rc = EXIT_OK;
	const char *source = c->module.source;
	if (o->ndim > 0 && !(source = sized_stage(c, o, &sb)))
		return EXIT_USAGE;
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
		sb_puts(&sb, source);
	else if (strcmp(o->emit, "ptx") == 0) {
		RtNvrtcResult r;
		if (!rt_nvrtc_compile(c->arena, source, c->graph.name, o->major, o->minor, false, &r)) {
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
		{"verbose", no_argument, NULL, 'v'},         {"dim", required_argument, NULL, OPT_DIM},
		{NULL, 0, NULL, 0},
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
		cli_error("unknown stage '%s' for --emit (tokens, ast, ir, fused, dot, cuda, ptx, launch)", o.emit);
		return EXIT_USAGE;
	}
	PipeStage stop = stages[si].stage;
	if ((o.ndim > 0 && stop != STAGE_CUDA) || (o.ndim == 0 && strcmp(o.emit, "launch") == 0)) {
		cli_error(o.ndim ? "--dim goes with --emit=launch, cuda or ptx" : "--emit=launch needs the sizes: --dim NAME=SIZE");
		return EXIT_USAGE;
	}
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
