/*
 * run.c: `fusec run FILE.fz`: compute a program's outputs.
 *
 * The steps, in order: parse the options (usage errors exit 2 before any
 * work); compile; bind dims from --dim, then from the .npy inputs (whose
 * shapes must agree with the declarations and each other); make the inputs
 * that were not read: filled from a number, or seeded random; run on the CPU
 * reference interpreter (--cpu) or the GPU (run_gpu.c); write the outputs.
 *
 * Random inputs come from splitmix64 seeded with the seed and the input's
 * name, so they are the same on every machine and an input's values do not
 * change when another input is given. Floats are uniform in [-1, 1) on a grid
 * that the dtype holds exactly (no rounding up to 1), integers uniform in
 * [-8, 8], bools even odds.
 */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/eval.h"
#include "ir/interp.h"

static const char run_usage[] =
	"usage: fusec run FILE.fz [OPTIONS]\n"
	"\n"
	"Compute the program's outputs and write each to OUT_DIR/NAME.npy, printing\n"
	"one line per output: name, type, the min, max and mean of its non-NaN\n"
	"values, its NaN count, and the file.\n"
	"\n"
	"options (--opt=VALUE or --opt VALUE):\n"
	"  --cpu               run the CPU reference interpreter instead of the GPU\n"
	"  --dim NAME=SIZE     bind a dimension (dims are also read off input arrays)\n"
	"  --in NAME=FILE.npy  read an input from a .npy file of the input's dtype (any\n"
	"                      byte order, C or Fortran order)\n"
	"  --in NAME=NUMBER    fill an input (scalar or tensor) with a number (a VALUE\n"
	"                      that reads as a number is one; anything else is a file)\n"
	"  --out-dir DIR       where the outputs go (default '.'; created, with its\n"
	"                      parents, when the outputs are written)\n"
	"  --seed N            seed of the random inputs (default 0)\n"
	"  --device N          GPU ordinal (default 0)\n"
	"  --no-fuse           one kernel per op, as eager PyTorch runs them (GPU)\n"
	"  --check             also run the CPU reference and compare (GPU)\n"
	"  --interpret         run on fusec's GPU interpreter, compiling no kernel (GPU)\n"
	"  -v, --verbose       log each JIT compile and launch geometry to stderr\n"
	"  -h, --help          this text\n"
	"\n"
	"Inputs not given are random, the same on every machine for a seed: floats\n"
	"uniform in [-1, 1), integers uniform in [-8, 8], bools true or false with\n"
	"even odds. An input's values depend only on the seed and its name.\n"
	"\n"
	"bf16 values travel as float32 files: NumPy has no bf16, so a bf16 input\n"
	"reads an <f4 file (rounded to nearest even) and a bf16 output is written\n"
	"as <f4 (exactly). A bf16 input also reads 2-byte '<V2' files, as NumPy saves\n"
	"ml_dtypes.bfloat16 arrays, bit for bit.\n"
	"\n"
	"Outputs replace existing files only when all of them were written: nothing\n"
	"is replaced if any output cannot be.\n"
	"\n" CLI_EXIT_STATUS_TEXT;

typedef struct NamedArg {
	const char *name; /* up to '=' (not terminated) */
	size_t len;
	const char *value;
} NamedArg;

typedef struct RunOptions {
	const char *file;
	const char *out_dir;
	uint64_t seed;
	int device;
	bool cpu, no_fuse, check, interpret;
	NamedArg *dims, *ins;
	int ndims, nins;
} RunOptions;

/* ---- options ------------------------------------------------------------------------ */

static bool split_named(const char *opt, const char *s, NamedArg *out)
{
	const char *eq = strchr(s, '=');
	if (!eq || eq == s || !eq[1]) {
		cli_error("%s expects NAME=VALUE, got '%s'", opt, s);
		return false;
	}
	*out = (NamedArg){s, (size_t)(eq - s), eq + 1};
	return true;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	if (!*s || *s < '0' || *s > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE || v > max)
		return false;
	*out = v;
	return true;
}

enum { OPT_CPU = 256, OPT_NO_FUSE, OPT_CHECK, OPT_INTERPRET, OPT_DIM, OPT_IN, OPT_OUT_DIR, OPT_SEED, OPT_DEVICE };

static int run_option(void *ctx, int opt, const char *v)
{
	RunOptions *o = ctx;
	uint64_t u;
	switch (opt) {
	case OPT_CPU: o->cpu = true; return -1;
	case OPT_NO_FUSE: o->no_fuse = true; return -1;
	case OPT_CHECK: o->check = true; return -1;
	case OPT_INTERPRET: o->interpret = true; return -1;
	case OPT_DIM:
		if (!split_named("--dim", v, &o->dims[o->ndims]))
			return EXIT_USAGE;
		if (!parse_u64(o->dims[o->ndims].value, (uint64_t)1 << 62, &u)) {
			cli_error("--dim %s: the size must be an integer from 0 to 2^62", v);
			return EXIT_USAGE;
		}
		o->ndims++;
		return -1;
	case OPT_IN: return split_named("--in", v, &o->ins[o->nins++]) ? -1 : EXIT_USAGE;
	case OPT_OUT_DIR:
		if (!*v) {
			cli_error("--out-dir expects a directory");
			return EXIT_USAGE;
		}
		o->out_dir = v;
		return -1;
	case OPT_SEED:
		if (!parse_u64(v, UINT64_MAX, &o->seed)) {
			cli_error("--seed expects a non-negative integer, got '%s'", v);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_DEVICE: return cli_parse_device(v, &o->device);
	}
	cli_error("internal error: option %d has no handler", opt);
	return EXIT_ERROR;
}

/* Returns -1 to go on, else the exit code. */
static int parse_run_options(int argc, char **argv, RunOptions *o)
{
	static const struct option opts[] = {
		{"cpu", no_argument, NULL, OPT_CPU},
		{"no-fuse", no_argument, NULL, OPT_NO_FUSE},
		{"check", no_argument, NULL, OPT_CHECK},
		{"interpret", no_argument, NULL, OPT_INTERPRET},
		{"dim", required_argument, NULL, OPT_DIM},
		{"in", required_argument, NULL, OPT_IN},
		{"out-dir", required_argument, NULL, OPT_OUT_DIR},
		{"seed", required_argument, NULL, OPT_SEED},
		{"device", required_argument, NULL, OPT_DEVICE},
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	int first, rc = cli_getopt(argc, argv, opts, "fusec run", run_usage, run_option, o, &first);
	if (rc >= 0)
		return rc;
	if (first == argc) {
		fputs(run_usage, stderr);
		return EXIT_USAGE;
	}
	if (argc - first > 1) {
		cli_error("more than one program file ('%s' and '%s')", argv[first], argv[first + 1]);
		return EXIT_USAGE;
	}
	o->file = argv[first];
	if (o->check && o->cpu) {
		cli_error("--check compares the GPU with the CPU reference: it cannot be used with --cpu");
		return EXIT_USAGE;
	}
	if (o->interpret && o->cpu) {
		cli_error("--interpret runs on the GPU's interpreter: it cannot be used with --cpu");
		return EXIT_USAGE;
	}
	return -1;
}

/* ---- binding --------------------------------------------------------------------------- */

static int find_name(const char *const *names, int n, const NamedArg *a)
{
	for (int k = 0; k < n; k++)
		if (strlen(names[k]) == a->len && memcmp(names[k], a->name, a->len) == 0)
			return k;
	return -1;
}

static int input_index(const Graph *g, const NamedArg *a)
{
	for (int k = 0; k < g->ninputs; k++)
		if (strlen(g->inputs[k].name) == a->len && memcmp(g->inputs[k].name, a->name, a->len) == 0)
			return k;
	return -1;
}

/* "x, y" */
static const char *name_list(Arena *arena, const char *const *names, int n)
{
	StrBuf sb;
	sb_init(&sb, arena);
	for (int k = 0; k < n; k++)
		sb_printf(&sb, "%s%s", k ? ", " : "", names[k]);
	return n ? sb_str(&sb) : "none";
}

static int apply_dim_options(const Graph *g, const RunOptions *o, int64_t *dims)
{
	for (int k = 0; k < o->ndims; k++) {
		const NamedArg *a = &o->dims[k];
		int d = find_name(g->dims, g->ndims, a);
		if (d < 0) {
			cli_error("--dim: the program has no dim '%.*s' (its dims: %s)", (int)a->len, a->name,
			          name_list(g->arena, g->dims, g->ndims));
			return EXIT_ERROR;
		}
		int64_t v = strtoll(a->value, NULL, 10);
		if (dims[d] >= 0 && dims[d] != v) {
			cli_error("--dim: dim '%s' is given twice (%lld and %lld)", g->dims[d], (long long)dims[d],
			          (long long)v);
			return EXIT_USAGE;
		}
		dims[d] = v;
	}
	return -1;
}

/* Which input each --in names (-1 for none given). */
static int match_inputs(const Graph *g, const RunOptions *o, int *given)
{
	for (int k = 0; k < g->ninputs; k++)
		given[k] = -1;
	for (int k = 0; k < o->nins; k++) {
		const NamedArg *a = &o->ins[k];
		int i = input_index(g, a);
		if (i < 0) {
			const char **names = ARENA_ARRAY(g->arena, const char *, g->ninputs + 1);
			for (int j = 0; j < g->ninputs; j++)
				names[j] = g->inputs[j].name;
			cli_error("--in: the program has no input '%.*s' (its inputs: %s)", (int)a->len, a->name,
			          name_list(g->arena, names, g->ninputs));
			return EXIT_ERROR;
		}
		if (given[i] >= 0) {
			cli_error("--in: input '%s' is given twice", g->inputs[i].name);
			return EXIT_USAGE;
		}
		given[i] = k;
	}
	return -1;
}

/* A value that reads as a number is one; anything else names a file. */
static bool looks_numeric(const char *s)
{
	char *end;
	strtod(s, &end);
	return end != s && !*end;
}

/* Read input i from a .npy file. A bf16 input also reads an f32 file,
 * rounding each value to nearest even. */
static int read_input(const Graph *g, int i, const char *path, Tensor *t)
{
	const Node *n = &g->nodes[g->inputs[i].node];
	fz_dtype want = (fz_dtype)n->dtype;
	char err[1024];
	if (!npy_read(path, t, err, sizeof err)) {
		cli_error("input '%s': %s", g->inputs[i].name, err);
		return EXIT_ERROR;
	}
	bool widened = want == FZ_BF16 && t->dtype == FZ_F32;
	if (t->dtype != want && !widened) {
		char ty[256];
		tensor_type_str(t, ty, sizeof ty);
		cli_error("input '%s': %s holds %s, but the input is %s%s%s", g->inputs[i].name, path, ty,
		          fz_dtype_name(want), want == FZ_BF16 ? " (read from <f4 or '<V2' files)" : "",
		          t->dtype == FZ_F64 && want == FZ_F32 ? " (save it with .astype(np.float32))" : "");
		tensor_free(t);
		return EXIT_ERROR;
	}
	if (widened) {
		int64_t numel = tensor_numel(t);
		uint16_t *h = (uint16_t *)t->data; /* narrowed in place: element k <= 4k */
		for (int64_t k = 0; k < numel; k++)
			h[k] = f32_to_bf16_bits((float)tensor_get(t, k));
		t->dtype = FZ_BF16;
	}
	return -1;
}

/* Bind dims from the arrays read: ir_bind_dims over a view of the graph
 * that has only those inputs, so its messages name them. */
static int bind_from_files(const Graph *g, const Tensor *inputs, const int *is_file, int64_t *dims)
{
	Graph view = *g;
	view.inputs = ARENA_ARRAY(g->arena, IrInput, g->ninputs + 1);
	Tensor *ts = ARENA_ARRAY(g->arena, Tensor, g->ninputs + 1);
	view.ninputs = 0;
	for (int k = 0; k < g->ninputs; k++) {
		if (!is_file[k])
			continue;
		ts[view.ninputs] = inputs[k];
		view.inputs[view.ninputs++] = g->inputs[k];
	}
	char err[1024];
	if (ir_bind_dims(&view, ts, dims, err, sizeof err) != FZ_OK) {
		cli_error("%s", err);
		return EXIT_ERROR;
	}
	return -1;
}

static int check_bound(const Graph *g, const int64_t *dims)
{
	for (int k = 0; k < g->ninputs; k++) { /* in the order a user reads the declarations */
		const Node *n = &g->nodes[g->inputs[k].node];
		for (int d = 0; d < n->rank; d++) {
			if (dim_is_sym(n->shape[d]) && dims[dim_sym(n->shape[d])] < 0) {
				const char *name = g->dims[dim_sym(n->shape[d])];
				cli_error("dim '%s' is not bound: pass --dim %s=SIZE or an input that has it", name, name);
				return EXIT_ERROR;
			}
		}
	}
	for (int k = 0; k < g->ndims; k++) {
		if (dims[k] < 0) {
			cli_error("dim '%s' is not bound: pass --dim %s=SIZE or an input that has it", g->dims[k], g->dims[k]);
			return EXIT_ERROR;
		}
	}
	return -1;
}

/* ---- inputs made here ------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return h;
}

/* Uniform in [-1, 1) on a grid of 2^-(b-1), b the dtype's significand bits,
 * so every value is exact in the dtype. */
static Scalar random_value(fz_dtype t, uint64_t *state)
{
	uint64_t x = splitmix64(state);
	Scalar v;
	if (t == FZ_BOOL) {
		v.i = (int64_t)(x >> 63);
	} else if (dtype_is_int(t)) {
		v.i = (int64_t)((x >> 32) % 17) - 8;
	} else {
		int b = t == FZ_F64 ? 53 : t == FZ_F32 ? 24 : t == FZ_F16 ? 11 : 8;
		v.f = ldexp((double)(x >> (64 - b)), -(b - 1)) - 1.0;
	}
	return v;
}

typedef enum ScalarParse { SCALAR_OK, SCALAR_INVALID, SCALAR_RANGE } ScalarParse;

/* A number for dtype t. A value the dtype cannot hold is refused, for
 * floats as for integers: 70000 is no f16 (it would become inf), 1e400 no
 * f64; inf and nan written out are taken as given. */
static ScalarParse parse_scalar(const char *s, fz_dtype t, Scalar *v)
{
	char *end;
	errno = 0;
	if (t == FZ_BOOL) {
		if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
			v->i = s[0] == 't';
			return SCALAR_OK;
		}
		long long x = strtoll(s, &end, 10);
		v->i = x;
		return *s && !*end && (x == 0 || x == 1) ? SCALAR_OK : SCALAR_INVALID;
	}
	if (dtype_is_int(t)) {
		long long x = strtoll(s, &end, 10);
		v->i = x;
		if (!*s || *end)
			return SCALAR_INVALID;
		return errno != ERANGE && (t == FZ_I64 || (x >= INT32_MIN && x <= INT32_MAX)) ? SCALAR_OK : SCALAR_RANGE;
	}
	Scalar d = {.f = strtod(s, &end)};
	if (!*s || *end)
		return SCALAR_INVALID;
	bool overflow = errno == ERANGE && isinf(d.f);
	*v = eval_cast(FZ_F64, t, d);
	return overflow || (isfinite(d.f) && isinf(v->f)) ? SCALAR_RANGE : SCALAR_OK;
}

/* Make input i: filled with `number`, or random when it is NULL. */
static int make_input(const Graph *g, int i, const int64_t *dims, const char *number, uint64_t seed, Tensor *t)
{
	const Node *n = &g->nodes[g->inputs[i].node];
	memset(t, 0, sizeof *t);
	t->dtype = (fz_dtype)n->dtype;
	t->rank = n->rank;
	for (int d = 0; d < n->rank; d++)
		t->shape[d] = ir_dim_value(n->shape[d], dims);
	Scalar fill = {.i = 0};
	ScalarParse sp = number ? parse_scalar(number, t->dtype, &fill) : SCALAR_OK;
	if (sp != SCALAR_OK) {
		cli_error("input '%s': '%s' is not a valid %s%s", g->inputs[i].name, number, fz_dtype_name(t->dtype),
		          sp == SCALAR_RANGE ? " (out of range)" : "");
		return EXIT_ERROR;
	}
	if (!tensor_alloc(t)) {
		char ty[256];
		tensor_type_str(t, ty, sizeof ty);
		cli_error("input '%s': cannot allocate %s", g->inputs[i].name, ty);
		return EXIT_ERROR;
	}
	uint64_t state = seed ^ name_hash(g->inputs[i].name);
	int64_t numel = tensor_numel(t);
	for (int64_t e = 0; e < numel; e++)
		eval_store(t->dtype, t->data, e, number ? fill : random_value(t->dtype, &state));
	return -1;
}

/* ---- outputs --------------------------------------------------------------------------- */

static void print_summary(const char *name, const Tensor *t, const char *path)
{
	char ty[256];
	tensor_type_str(t, ty, sizeof ty);
	int64_t numel = tensor_numel(t), nans = 0, count = 0;
	double lo = 0, hi = 0, sum = 0;
	for (int64_t e = 0; e < numel; e++) {
		double v = tensor_get(t, e);
		if (v != v) {
			nans++;
			continue;
		}
		lo = count == 0 || v < lo ? v : lo;
		hi = count == 0 || v > hi ? v : hi;
		sum += v;
		count++;
	}
	if (count)
		printf("%s %s min=%.6g max=%.6g mean=%.6g nan=%lld %s\n", name, ty, lo, hi, sum / (double)count,
		       (long long)nans, path);
	else
		printf("%s %s %s nan=%lld %s\n", name, ty, numel ? "all-nan" : "empty", (long long)nans, path);
}

static char *join_path(Arena *a, const char *dir, const char *name)
{
	size_t n = strlen(dir);
	return arena_printf(a, "%s%s%s.npy", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

/* mkdir -p, each directory 0777 less the umask: done only once there are
 * outputs to write, so a failed run creates nothing. */
static int make_out_dir(Arena *a, const char *dir)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return -1;
		cli_error("output directory '%s' is not a directory", dir);
		return EXIT_ERROR;
	}
	char *buf = arena_strdup(a, dir);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char saved = *p;
		*p = 0;
		if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
			cli_error("cannot create output directory '%s': %s", dir, strerror(errno));
			return EXIT_ERROR;
		}
		if (!(*p = saved))
			break;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		cli_error("cannot create output directory '%s': %s", dir, strerror(errno ? errno : ENOTDIR));
		return EXIT_ERROR;
	}
	return -1;
}

/* Why `path` in `dir` cannot be replaced by a rename, or NULL: a directory
 * there, or another user's file in a sticky directory (only its owner, the
 * directory's or root may replace it). Checked for every output before any
 * is replaced. */
static const char *replace_problem(const struct stat *dir, const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return NULL;
	if (S_ISDIR(st.st_mode))
		return strerror(EISDIR);
	uid_t me = geteuid();
	if ((dir->st_mode & S_ISVTX) && st.st_uid != me && dir->st_uid != me && me != 0)
		return "Operation not permitted (another user's file in a sticky directory)";
	return NULL;
}

/* "a, b" of outputs [from, to), or "none". */
static const char *output_names(Arena *a, const Graph *g, int from, int to)
{
	StrBuf sb;
	sb_init(&sb, a);
	for (int k = from; k < to; k++)
		sb_printf(&sb, "%s%s", k > from ? ", " : "", g->outputs[k].name);
	return from < to ? sb_str(&sb) : "none";
}

/* Rename every temporary into place; a rename that still fails after the
 * checks says exactly which outputs were replaced. */
static int replace_outputs(const RunJob *job, char **tmp, char **final)
{
	const Graph *g = &job->comp->graph;
	for (int k = 0; k < g->noutputs; k++) {
		if (rename(tmp[k], final[k]) != 0) {
			int e = errno;
			for (int j = k; j < g->noutputs; j++)
				unlink(tmp[j]);
			cli_error("cannot write output '%s': %s: %s (outputs replaced: %s; not written: %s)", g->outputs[k].name,
			          final[k], strerror(e), output_names(g->arena, g, 0, k),
			          output_names(g->arena, g, k, g->noutputs));
			return EXIT_ERROR;
		}
	}
	return -1;
}

int cli_run_write_outputs(const RunJob *job, const Tensor *outputs)
{
	const Graph *g = &job->comp->graph;
	Arena *a = job->comp->arena;
	char **final = ARENA_ARRAY(a, char *, g->noutputs + 1);
	char **tmp = ARENA_ARRAY(a, char *, g->noutputs + 1);
	char err[1024];
	struct stat dir;
	int rc = make_out_dir(a, job->out_dir);
	if (rc >= 0)
		return rc;
	if (stat(job->out_dir, &dir) != 0)
		memset(&dir, 0, sizeof dir);
	for (int k = 0; k < g->noutputs; k++) {
		final[k] = join_path(a, job->out_dir, g->outputs[k].name);
		const char *why = replace_problem(&dir, final[k]);
		if (why) {
			cli_error("cannot write output '%s': %s: %s", g->outputs[k].name, final[k], why);
			return EXIT_ERROR;
		}
	}
	progress_phase("writing the outputs");
	int done = 0;
	for (; done < g->noutputs; done++) {
		tmp[done] = arena_printf(a, "%s.part%ld", final[done], (long)getpid());
		if (!npy_write(tmp[done], &outputs[done], err, sizeof err))
			break;
	}
	if (done < g->noutputs) {
		for (int k = 0; k < done; k++)
			unlink(tmp[k]);
		cli_error("cannot write output '%s': %s", g->outputs[done].name, err);
		return EXIT_ERROR;
	}
	if ((rc = replace_outputs(job, tmp, final)) >= 0)
		return rc;
	progress_stop();
	for (int k = 0; k < g->noutputs; k++)
		print_summary(g->outputs[k].name, &outputs[k], final[k]);
	return EXIT_OK;
}

/* ---- the command ------------------------------------------------------------------------ */

static int run_cpu(const RunJob *job)
{
	const Graph *g = &job->comp->graph;
	Tensor *outs = calloc((size_t)g->noutputs + 1, sizeof(Tensor));
	if (!outs) {
		cli_error("out of memory");
		return EXIT_ERROR;
	}
	char err[1024];
	int rc;
	progress_phase("running on the CPU reference interpreter");
	if (interp_run(g, job->dims, job->inputs, outs, err, sizeof err) != FZ_OK) {
		cli_error("%s: %s", job->path, err);
		rc = EXIT_ERROR;
	} else {
		rc = cli_run_write_outputs(job, outs);
		for (int k = 0; k < g->noutputs; k++)
			tensor_free(&outs[k]);
	}
	free(outs);
	return rc;
}

/* Everything after compiling; -1 from a step means "go on". */
static int run_program(const RunOptions *o, Compilation *c, int64_t *dims, Tensor *inputs, int *given)
{
	const Graph *g = &c->graph;
	int *is_file = ARENA_ARRAY(c->arena, int, g->ninputs + 1);
	int rc;
	if ((rc = apply_dim_options(g, o, dims)) >= 0 || (rc = match_inputs(g, o, given)) >= 0)
		return rc;
	progress_phase("preparing the inputs");
	for (int k = 0; k < g->ninputs; k++) {
		is_file[k] = given[k] >= 0 && !looks_numeric(o->ins[given[k]].value);
		if (is_file[k] && (rc = read_input(g, k, o->ins[given[k]].value, &inputs[k])) >= 0)
			return rc;
	}
	if ((rc = bind_from_files(g, inputs, is_file, dims)) >= 0 || (rc = check_bound(g, dims)) >= 0)
		return rc;
	for (int k = 0; k < g->ninputs; k++) {
		const char *number = given[k] >= 0 ? o->ins[given[k]].value : NULL;
		if (!is_file[k] && (rc = make_input(g, k, dims, number, o->seed, &inputs[k])) >= 0)
			return rc;
	}
	RunJob job = {o->file, c, dims, inputs, o->out_dir, o->seed, o->device, o->no_fuse, o->check, o->interpret};
	return o->cpu ? run_cpu(&job) : cli_run_gpu(&job);
}

int cmd_run(int argc, char **argv)
{
	RunOptions o = {.out_dir = "."};
	o.dims = calloc((size_t)argc, sizeof(NamedArg));
	o.ins = calloc((size_t)argc, sizeof(NamedArg));
	int rc = -1;
	if (!o.dims || !o.ins) {
		cli_error("out of memory");
		rc = EXIT_ERROR;
	}
	if (rc < 0)
		rc = parse_run_options(argc, argv, &o);
	if (rc < 0)
		progress_start("run");
	progress_phase("compiling");
	Compilation *c = NULL;
	if (rc < 0 && !(c = cli_compile(o.file, o.cpu ? STAGE_IR : STAGE_CUDA, !o.no_fuse)))
		rc = EXIT_ERROR;
	if (rc < 0) {
		const Graph *g = &c->graph;
		int64_t *dims = malloc(sizeof(int64_t) * ((size_t)g->ndims + 1));
		Tensor *inputs = calloc((size_t)g->ninputs + 1, sizeof(Tensor));
		int *given = malloc(sizeof(int) * ((size_t)g->ninputs + 1));
		if (!dims || !inputs || !given) {
			cli_error("out of memory");
			rc = EXIT_ERROR;
		} else {
			for (int k = 0; k < g->ndims; k++)
				dims[k] = -1;
			rc = run_program(&o, c, dims, inputs, given);
			if (rc < 0)
				rc = EXIT_OK;
		}
		for (int k = 0; inputs && k < g->ninputs; k++)
			tensor_free(&inputs[k]);
		free(dims);
		free(inputs);
		free(given);
	}
	progress_stop();
	pipe_free(c);
	free(o.dims);
	free(o.ins);
	return rc;
}
