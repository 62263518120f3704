/*
 * emu_harness.h: running a compiled plan's kernels on the host emulator
 * (cuda_emu.h) and comparing with the interpreter, shared by
 * test_codegen_emu.c and test_codegen_random.c. Header-only (static
 * functions): each test includes it once.
 *
 * The generated CUDA C is compiled by the host's C++ compiler against
 * cuda_emu.h, after replacing its few inline PTX statements and its shared
 * memory declarations with the emulator's, and loaded with dlopen; each
 * entry gets a wrapper taking its arguments as cuLaunchKernel does. A plan
 * runs kernel by kernel in launch order, as the runtime runs it
 * (temporaries, zeroed workspaces, scalar and dim arguments); row kernels
 * can be forced into any schedule.
 */
#ifndef FUSEC_EMU_HARNESS_H
#define FUSEC_EMU_HARNESS_H

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/cgint.h"
#include "ir/interp.h"
#include "progen.h"
#include "runtime/compare.h"
#include "testutil.h"

static char workdir[256];
static bool have_cxx;

/* ---- building the emulated module --------------------------------------------------- */

static char *replace(char *s, const char *from, const char *to, bool required)
{
	char *p = strstr(s, from);
	if (!p) {
		ck_assert_msg(!required, "the generated source no longer contains: %s", from);
		return s;
	}
	size_t nf = strlen(from), nt = strlen(to), ns = strlen(s);
	char *r = malloc(ns - nf + nt + 1);
	memcpy(r, s, (size_t)(p - s));
	memcpy(r + (p - s), to, nt);
	strcpy(r + (p - s) + nt, p + nf);
	free(s);
	return replace(r, from, to, false);
}

static const char *param_ctype(const Graph *g, const KParam *kp, char *buf, size_t n)
{
	fz_dtype t = kp->kind == PARAM_DIM ? FZ_I64 : (fz_dtype)g->nodes[kp->node].dtype;
	switch (kp->kind) {
	case PARAM_IN: snprintf(buf, n, "const %s *", cg_store_type(t)); break;
	case PARAM_OUT: snprintf(buf, n, "%s *", cg_store_type(t)); break;
	case PARAM_SCALAR: snprintf(buf, n, "%s", cg_store_type(t)); break;
	case PARAM_DIM: snprintf(buf, n, "long long"); break;
	}
	return buf;
}

typedef void (*EmuEntry)(void **);
typedef int (*EmuLaunch)(EmuEntry, void **, const unsigned *, const unsigned *, unsigned, bool);

typedef struct EmuModule {
	char path[512];
	void *dl;
	EmuEntry *entries;
	EmuLaunch launch;
} EmuModule;

static int build_seq;

/* The module's source for the host, plus a wrapper per entry that takes the
 * arguments as cuLaunchKernel does (an array of pointers to them). */
static bool emu_build(Compilation *c, EmuModule *m)
{
	char *src = strdup(c->module.source);
	src = replace(src, "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(s.b));", "f = emu_h2f(s.b);", true);
	src = replace(src, "asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(d.b) : \"f\"(v));", "d.b = emu_f2h(v);", true);
	src = replace(src, "extern __shared__ fz_a16 fz_smem[];", "fz_a16 *fz_smem = (fz_a16 *)emu_smem();", false);
	src = replace(src, "__shared__ unsigned long long fz_red[64];", "unsigned long long *fz_red = emu_red();", false);
	/* what remains of inline PTX is under #if __CUDA_ARCH__ >= 800 (false here) */
	char path[512], lib[512];
	int seq = build_seq++;
	snprintf(path, sizeof path, "%s/m%d.cpp", workdir, seq);
	snprintf(lib, sizeof lib, "%s/m%d.so", workdir, seq);
	snprintf(m->path, sizeof m->path, "%s", path);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#include \"cuda_emu.h\"\n%s\n", src);
	const Plan *p = &c->plan;
	for (int e = 0; e < c->module.nentries; e++) {
		const CgEntry *en = &c->module.entries[e];
		const Kernel *k = &p->kernels[en->kernel];
		fprintf(f, "extern \"C\" void fz_emu_e%d(void **a) { %s(", e, en->symbol);
		for (int j = 0; j < en->nargs; j++) {
			char ty[128];
			if (en->args[j].kind == CGARG_WORKSPACE)
				snprintf(ty, sizeof ty, "unsigned long long *");
			else if (en->args[j].kind != CGARG_PARAM) /* the launch plan's values */
				snprintf(ty, sizeof ty, "long long");
			else
				param_ctype(c->plan.g, &k->params[en->args[j].index], ty, sizeof ty);
			fprintf(f, "%s*(%s*)a[%d]", j ? ", " : "", ty, j);
		}
		fprintf(f, "); }\n");
	}
	fprintf(f, "extern \"C\" int fz_emu_launch(void (*e)(void **), void **a, const unsigned *g, const unsigned *b, "
	           "unsigned smem, bool coop) { return emu_launch(e, a, g, b, smem, coop); }\n");
	fclose(f);
	free(src);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "c++ -std=c++17 -O1 -w -fPIC -shared -I%s -o %s %s 2>%s/m%d.err", tu_path("tests/emu"),
	         lib, path, workdir, seq);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "%s/m%d.err", workdir, seq);
		FILE *e = fopen(cmd, "r");
		char buf[4096] = "";
		if (e) {
			size_t n = fread(buf, 1, sizeof buf - 1, e);
			buf[n] = 0;
			fclose(e);
		}
		ck_abort_msg("the host compiler rejected the generated code (%s):\n%s", path, buf);
	}
	m->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(m->dl != NULL, "dlopen: %s", dlerror());
	m->entries = calloc((size_t)c->module.nentries + 1, sizeof *m->entries);
	for (int e = 0; e < c->module.nentries; e++) {
		char name[64];
		snprintf(name, sizeof name, "fz_emu_e%d", e);
		*(void **)&m->entries[e] = dlsym(m->dl, name);
		ck_assert_ptr_nonnull(m->entries[e]);
	}
	*(void **)&m->launch = dlsym(m->dl, "fz_emu_launch");
	ck_assert_ptr_nonnull(m->launch);
	return true;
}

static void emu_free(EmuModule *m)
{
	dlclose(m->dl);
	free(m->entries);
}

/* ---- inputs ------------------------------------------------------------------------------ */

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill(Tensor *t, bool nans)
{
	int64_t n = tensor_numel(t);
	size_t es = fz_dtype_size(t->dtype);
	for (int64_t i = 0; i < n; i++) {
		unsigned char *p = (unsigned char *)t->data + (size_t)i * es;
		double v = (double)(next_rand() % 4001) / 1000.0 - 2.0;
		if (nans && next_rand() % 17 == 0)
			v = NAN;
		switch (t->dtype) {
		case FZ_BOOL: *p = next_rand() & 1; break;
		case FZ_I32: { int32_t x = (int32_t)(next_rand() % 101) - 50; memcpy(p, &x, 4); break; }
		case FZ_I64: { int64_t x = (int64_t)(next_rand() % 101) - 50; memcpy(p, &x, 8); break; }
		case FZ_F16: { uint16_t h = f32_to_f16_bits((float)v); memcpy(p, &h, 2); break; }
		case FZ_BF16: { uint16_t h = f32_to_bf16_bits((float)v); memcpy(p, &h, 2); break; }
		case FZ_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
		case FZ_F64: memcpy(p, &v, 8); break;
		default: break;
		}
	}
}

/* ---- running a plan ------------------------------------------------------------------------ */

/* How a row kernel is launched in a run: the launch's own choice, or a path
 * and geometry forced through cg_launch_forced (which completes the rest as
 * cg_launch does). Under a forced schedule, pointwise kernels run on a small
 * grid (two blocks of a warp), so that a thread takes several iterations of
 * its grid-stride loop. */
typedef enum {
	SCHED_AUTO, SCHED_WARP4, SCHED_BLOCK, SCHED_LOOP, SCHED_SPLIT, SCHED_SPLIT_NOCACHE, SCHED_SPLIT_STREAM,
	SCHED_REG, SCHED_REGM, SCHED_REGM1, SCHED_REGM96, SCHED_TILE1, SCHED_TILE4, SCHED_REGH, SCHED_REGN, SCHED_LANE,
	SCHED_LINE, NSCHED
} Sched;

static const char *sched_name[] = {"auto", "warp4", "block64", "loop", "split3", "split3-nocache", "split3-stream",
                                   "reg", "regm", "regm-thread", "regm-3warps", "tile1x32", "tile4x16",
                                   "reg-held", "reg-narrow", "lane", "line"};

static CgDevice emu_device(void)
{
	CgDevice d = cg_default_device();
	d.sm_count = 2;
	d.l2_bytes = 1 << 20;
	return d;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The forced launch of schedule s; false if the path cannot take these sizes
 * (the register path: a row not a positive multiple of V, or too long).
 * aligned: every buffer 16-byte aligned (else the classes for rows of any
 * length, as cg_launch takes them). */
static bool force(const CgModule *m, const Plan *p, int k, const int64_t *dims, bool aligned, Sched s, CgLaunch *l)
{
	const Kernel *kn = &p->kernels[k];
	const struct CgKernelInfo *ki = &m->kinfo[k];
	CgDevice dev = emu_device();
	CgForce f = {.path = CG_PATH_ROW, .threads = 64, .rows = 1, .splits = 1};
	if (kn->kind == KERNEL_POINTWISE) {
		f = (CgForce){.path = CG_PATH_POINTWISE, .threads = 32, .rows = 1};
		f.grid = l->grid[0] < 2 ? l->grid[0] : 2;
		f.unaligned = !aligned;
		return cg_launch_forced(m, p, k, dims, &dev, &f, l);
	}
	int64_t rows = l->rows, n = l->n;
	if (s == SCHED_WARP4 || s == SCHED_REG) {
		f.threads = 4;
		f.rows = 8;
	}
	if (s == SCHED_REG || s == SCHED_REGM || s == SCHED_REGM1 || s == SCHED_REGH) {
		/* the smallest group that holds the row (the masked class: from
		 * an unaligned start); regm-thread: from one thread a row;
		 * reg-held: the aligned class's entry holding the column operands,
		 * where the kernel has one */
		f.path = CG_PATH_REG;
		f.masked = s == SCHED_REGM || s == SCHED_REGM1;
		f.hold = s == SCHED_REGH;
		f.threads = s == SCHED_REGM1 ? 1 : 4;
		int64_t span = f.masked ? n + ki->vec - 1 : n;
		while (ki->rk > 0 && f.threads < 256 && span > (int64_t)f.threads * ki->rk * ki->vec)
			f.threads *= 2;
		f.rows = f.threads < 32 ? 32 / f.threads : 1;
	}
	if (s == SCHED_REGN) {
		/* the aligned class's entries of 2 and 1 chunks a thread, where
		 * the kernel has them (short rows of halves it prefetches): the
		 * smallest group that holds the row so */
		f.path = CG_PATH_REG;
		f.K = cdiv(n, ki->vec) > 2 ? 2 : 1;
		f.threads = 1;
		while (f.threads < 256 && n > (int64_t)f.threads * f.K * ki->vec)
			f.threads *= 2;
		f.rows = f.threads < 32 ? 32 / f.threads : 1;
	}
	if (s == SCHED_LINE) {
		/* the line entries, where the kernel has them (rows of up to two
		 * lines): a chunk of every line a thread, 8 threads a row, or 16
		 * of one chunk for two lines of halves */
		f.path = CG_PATH_REG;
		f.line = true;
		int64_t chunks = cdiv(n, ki->vec);
		f.K = cg_line_k(ki, chunks);
		f.threads = chunks > CG_LINE_THREADS && f.K == 1 ? 2 * CG_LINE_THREADS : CG_LINE_THREADS;
		f.rows = 32 / f.threads;
	}
	if (s == SCHED_LANE) { /* a warp a row, the entry of the fewest elements a lane, where the kernel has it */
		f.path = CG_PATH_REG;
		f.lane = true;
		f.threads = 32;
		f.rows = 4;
	}
	if (s == SCHED_REGM96) { /* a group of three warps (fz_reduce over a number of warps not a power of two) */
		f.path = CG_PATH_REG;
		f.masked = true;
		f.threads = 96;
	}
	if (s == SCHED_TILE1 || s == SCHED_TILE4) {
		/* staged rows: a thread a row holding the fewest chunks (1, 2 or
		 * 4), 32 rows a tile; 4 threads of 2 chunks a row, 16 rows */
		int64_t chunks = cdiv(n, ki->vec);
		f.path = CG_PATH_TILE;
		f.threads = s == SCHED_TILE1 ? 1 : 4;
		f.rows = s == SCHED_TILE1 ? 32 : 16;
		f.K = s == SCHED_TILE1 ? (chunks <= 1 ? 1 : chunks <= 2 ? 2 : 4) : 2;
	}
	f.global = s == SCHED_LOOP || s == SCHED_SPLIT_NOCACHE;
	if (s == SCHED_SPLIT || s == SCHED_SPLIT_NOCACHE || s == SCHED_SPLIT_STREAM) {
		f.path = CG_PATH_SPLIT;
		f.splits = 3;
		f.stream = s == SCHED_SPLIT_STREAM; /* the entry without a row cache (where the kernel has one) */
	}
	f.grid = (unsigned)(f.splits > 1 ? 2 : cdiv(rows, f.rows) < 3 ? cdiv(rows, f.rows) : 3);
	f.unaligned = !aligned;
	return cg_launch_forced(m, p, k, dims, &dev, &f, l);
}

/* Device memory for the emulated kernels: n bytes that end where an
 * inaccessible page begins (16-byte aligned, plus `shift`), so that a kernel
 * reaching past a buffer, a workspace or a row cache faults. */
typedef struct EmuBuf {
	char *map;
	size_t len;
	unsigned char *p;
} EmuBuf;

static EmuBuf emu_buf(size_t n, size_t shift, int fill)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (n + shift + 15 + pg - 1) / pg * pg;
	EmuBuf b = {.len = data + 2 * pg};
	b.map = mmap(NULL, b.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(b.map != MAP_FAILED);
	ck_assert_int_eq(mprotect(b.map + pg, data, PROT_READ | PROT_WRITE), 0);
	b.p = (unsigned char *)((uintptr_t)(b.map + pg + data - n - shift) & ~(uintptr_t)15) + shift;
	memset(b.map + pg, fill, data);
	return b;
}

/* A fault in a kernel is an access outside what its launch gave it (the
 * guard pages of the buffers above and of the emulator's shared memory):
 * say which launch, then die of the signal (Check reports it). */
static char fault_what[700];

static void emu_fault(int sig)
{
	static const char msg[] = ": a kernel accessed memory outside its buffers, workspace or shared memory\n";
	if (write(2, fault_what, strlen(fault_what)) < 0 || write(2, msg, sizeof msg - 1) < 0)
		_exit(128 + sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void emu_catch_faults(void)
{
	static char altstack[1 << 16];
	stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&st, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = emu_fault;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

static void emu_buf_free(EmuBuf *b)
{
	if (b->map)
		munmap(b->map, b->len);
	b->map = NULL;
}

typedef struct Run {
	Compilation *c;
	EmuModule *m;
	const int64_t *dims;
	Sched sched;
	int misalign;           /* 1: inputs one element off 16-byte alignment; 2: outputs too */
	bool nans;
	const ProgenInfo *pg;   /* a random program: its inputs and tolerances */
	const Tensor *given;    /* the inputs, instead of random ones */
	bool exact;             /* every output bit for bit (NaN matching any NaN) */
	char what[512];
} Run;

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* got and want, element by element, bit for bit (any NaN matches any NaN:
 * PyTorch makes no promise on payloads either). */
static void assert_same_bits(const Tensor *got, const Tensor *want, const char *what, const char *name, const char *src)
{
	size_t es = fz_dtype_size(want->dtype);
	for (int64_t e = 0; e < tensor_numel(want); e++) {
		const char *a = (const char *)got->data + (size_t)e * es, *b = (const char *)want->data + (size_t)e * es;
		double ga = tensor_get(got, e), wb = tensor_get(want, e);
		if (memcmp(a, b, es) == 0 || (dtype_is_float(want->dtype) && isnan(ga) && isnan(wb)))
			continue;
		ck_abort_msg("%s: output %s: element %lld is %.17g on the emulator, %.17g in the interpreter (source: %s)",
		             what, name, (long long)e, ga, wb, src);
	}
}

/* The buffers of a run: where kernels read each node (`slot`), where
 * outputs go, and every guarded allocation to free. */
typedef struct Bufs {
	void **slot, **outp;
	bool *written;
	EmuBuf *own;
	int nown;
} Bufs;

static void *new_buf(Bufs *b, size_t n, size_t shift, int fill)
{
	b->own[b->nown] = emu_buf(n, shift, fill);
	return b->own[b->nown++].p;
}

static void alloc_bufs(Run *run, const Tensor *in, const Tensor *want, Bufs *b)
{
	const Graph *g = &run->c->graph;
	const Plan *p = &run->c->plan;
	b->slot = xmalloc(sizeof(void *) * (size_t)(g->n + 1));
	b->outp = xmalloc(sizeof(void *) * (size_t)(g->noutputs + 1));
	b->written = xmalloc(sizeof(bool) * (size_t)(g->noutputs + 1));
	b->own = xmalloc(sizeof(EmuBuf) * (size_t)(g->ninputs + g->noutputs + p->ntemps + 2));
	for (int i = 0; i < g->ninputs; i++) { /* inputs possibly one element off alignment */
		size_t bytes = tensor_nbytes(&in[i]);
		void *at = new_buf(b, bytes, run->misalign ? fz_dtype_size(in[i].dtype) : 0, 0);
		memcpy(at, in[i].data, bytes);
		b->slot[g->inputs[i].node] = at;
	}
	for (int i = 0; i < g->noutputs; i++)
		b->outp[i] = new_buf(b, tensor_nbytes(&want[i]), run->misalign == 2 ? fz_dtype_size(want[i].dtype) : 0, 0xab);
	for (int t = 0; t < p->ntemps; t++) {
		const Node *n = &g->nodes[p->temps[t]];
		int64_t numel;
		ck_assert(ir_numel(n->rank, n->shape, run->dims, &numel));
		b->slot[p->temps[t]] = new_buf(b, (size_t)numel * fz_dtype_size((fz_dtype)n->dtype), 0, 0xab);
	}
}

/* Kernel k's launch: the run's forced schedule, or cg_launch's where there
 * is none or its path cannot take these sizes (then false). */
static bool plan_kernel(Run *run, int k, CgLaunch *l)
{
	Compilation *c = run->c;
	CgDevice dev = emu_device();
	bool aligned = run->misalign == 0; /* (as the runtime tests its bindings) */
	ck_assert(cg_launch(&c->module, &c->plan, k, run->dims, aligned, &dev, l));
	CgLaunch auto_l = *l;
	if (run->sched == SCHED_AUTO || l->empty)
		return run->sched == SCHED_AUTO;
	if (force(&c->module, &c->plan, k, run->dims, aligned, run->sched, l))
		return true;
	*l = auto_l;
	return false;
}

/* The argument pointers of kernel k's launch l (as cuLaunchKernel takes
 * them), its workspace in ws: garbage but its first workspace_zero bytes. */
static void **launch_args(Run *run, const Tensor *in, Bufs *b, int k, const CgLaunch *l, EmuBuf *ws,
                          int64_t *vals, void **ptrs)
{
	Compilation *c = run->c;
	const Kernel *kn = &c->plan.kernels[k];
	const CgEntry *e = &c->module.entries[l->entry];
	void **args = xmalloc(sizeof(void *) * (size_t)(e->nargs + 1));
	*ws = emu_buf((size_t)l->workspace, 0, 0xcd);
	memset(ws->p, 0, (size_t)l->workspace_zero);
	for (int j = 0; j < e->nargs; j++) {
		const CgArg *a = &e->args[j];
		if (a->kind != CGARG_PARAM) {
			ptrs[j] = ws->p;
			vals[j] = cg_launch_arg(&c->module, k, l, a);
			args[j] = a->kind == CGARG_WORKSPACE ? (void *)&ptrs[j] : (void *)&vals[j];
			continue;
		}
		const KParam *kp = &kn->params[a->index];
		switch (kp->kind) {
		case PARAM_IN: ptrs[j] = b->slot[kp->node]; args[j] = &ptrs[j]; break;
		case PARAM_OUT:
			ptrs[j] = kp->output >= 0 ? b->outp[kp->output] : b->slot[kp->node];
			args[j] = &ptrs[j];
			break;
		case PARAM_SCALAR: args[j] = in[c->graph.nodes[kp->node].input].data; break;
		case PARAM_DIM: args[j] = (void *)&run->dims[kp->dim]; break;
		}
		ck_assert_msg(kp->kind == PARAM_SCALAR || kp->kind == PARAM_DIM || ptrs[j], "%s: no buffer for %s",
		              run->what, e->symbol);
	}
	return args;
}

/* What each kernel wrote, for debugging (FUSEC_EMU_DUMP). */
static void dump_outputs(Run *run, Bufs *b, int k, const CgLaunch *l)
{
	const Graph *g = &run->c->graph;
	const Kernel *kn = &run->c->plan.kernels[k];
	for (int j = 0; j < kn->nparams; j++) {
		const KParam *kp = &kn->params[j];
		if (kp->kind != PARAM_OUT)
			continue;
		const Node *n = &g->nodes[kp->node];
		Tensor t = {.dtype = (fz_dtype)n->dtype, .rank = n->rank};
		for (int d = 0; d < n->rank; d++)
			t.shape[d] = ir_dim_value(n->shape[d], run->dims);
		t.data = kp->output >= 0 ? b->outp[kp->output] : b->slot[kp->node];
		printf("%s grid %u,%u block %u,%u smem %u wrote %%%d:", run->c->module.entries[l->entry].symbol, l->grid[0],
		       l->grid[1], l->block[0], l->block[1], l->smem, kp->node);
		for (int64_t x = 0; x < tensor_numel(&t) && x < 80; x++)
			printf(" %.5g", tensor_get(&t, x));
		printf("\n");
	}
}

/* Run kernel k as the runtime would; whether it ran as the run's schedule
 * says (forced, or the launch's own choice under SCHED_AUTO). */
static bool run_kernel(Run *run, const Tensor *in, Bufs *b, int k)
{
	const Kernel *kn = &run->c->plan.kernels[k];
	CgLaunch l;
	bool as_asked = plan_kernel(run, k, &l);
	/* a stored output is also what later kernels read, as the runtime binds
	 * it: also when this launch is empty and a later one is not (per op,
	 * t = x * 2 of no elements, then sum(t) over rows of none) */
	for (int j = 0; j < kn->nparams; j++)
		if (kn->params[j].kind == PARAM_OUT && kn->params[j].output >= 0) {
			b->written[kn->params[j].output] = true;
			if (!b->slot[kn->params[j].node])
				b->slot[kn->params[j].node] = b->outp[kn->params[j].output];
		}
	if (l.empty)
		return as_asked;
	const CgEntry *e = &run->c->module.entries[l.entry];
	ck_assert_msg(e->kernel == k && e->path == l.path, "%s: kernel %d launched with %s", run->what, k, e->symbol);
	int64_t *vals = xmalloc(sizeof(int64_t) * (size_t)(e->nargs + 1));
	void **ptrs = xmalloc(sizeof(void *) * (size_t)(e->nargs + 1));
	EmuBuf ws;
	void **args = launch_args(run, in, b, k, &l, &ws, vals, ptrs);
	snprintf(fault_what, sizeof fault_what, "%s, %s", run->what, e->symbol);
	emu_catch_faults();
	int rc = run->m->launch(run->m->entries[l.entry], args, l.grid, l.block, l.smem, l.cooperative);
	ck_assert_msg(rc == 0, "%s: %s deadlocked", run->what, e->symbol);
	if (getenv("FUSEC_EMU_DUMP"))
		dump_outputs(run, b, k, &l);
	emu_buf_free(&ws);
	free(args);
	free(ptrs);
	free(vals);
	return as_asked;
}

/* Every output a kernel wrote against the interpreter's. */
static void compare_outputs(Run *run, const Tensor *want, Bufs *b)
{
	const Graph *g = &run->c->graph;
	int64_t nred = rt_longest_reduction(g, run->dims);
	for (int i = 0; i < g->noutputs; i++) {
		if (!b->written[i])
			continue; /* the runtime copies it */
		Tensor got = want[i];
		got.data = b->outp[i];
		if (run->exact) {
			assert_same_bits(&got, &want[i], run->what, g->outputs[i].name, run->m->path);
			continue;
		}
		if (run->pg) {
			char msg[512];
			ck_assert_msg(progen_compare_tol(&got, &want[i], &run->pg->outputs[i].tol, msg, sizeof msg),
			              "%s: output %s: %s (source: %s)", run->what, g->outputs[i].name, msg, run->m->path);
			continue;
		}
		RtCompare cmp;
		RtTolerance tol = rt_tolerance(want[i].dtype, nred, !run->c->plan.fused);
		ck_assert(rt_compare(&got, &want[i], tol, &cmp));
		if (cmp.bad > 0) {
			char idx[128];
			rt_index_str(&want[i], cmp.worst, idx, sizeof idx);
			ck_abort_msg("%s: output %s: %lld of %lld elements differ; at %s got %.9g want %.9g (source: %s)",
			             run->what, g->outputs[i].name, (long long)cmp.bad, (long long)cmp.n, idx, cmp.worst_got,
			             cmp.worst_want, run->m->path);
		}
	}
}

/* The run's inputs (random, or the program generator's), and the
 * interpreter's outputs for them. */
static fz_status make_inputs(Run *run, Tensor *in, Tensor *want)
{
	const Graph *g = &run->c->graph;
	char err[512];
	for (int i = 0; i < g->ninputs && run->given; i++) {
		in[i] = run->given[i];
		ck_assert(tensor_alloc(&in[i]));
		memcpy(in[i].data, run->given[i].data, tensor_nbytes(&in[i]));
	}
	for (int i = 0; i < g->ninputs && !run->pg && !run->given; i++) {
		const Node *n = &g->nodes[g->inputs[i].node];
		in[i].dtype = (fz_dtype)n->dtype;
		in[i].rank = n->rank;
		for (int d = 0; d < n->rank; d++)
			in[i].shape[d] = ir_dim_value(n->shape[d], run->dims);
		ck_assert(tensor_alloc(&in[i]));
		fill(&in[i], run->nans && dtype_is_float(in[i].dtype));
		if (n->rank == 0 && in[i].dtype == FZ_F32) { /* eps, scales, bias corrections: positive */
			float v = 0.1f + (float)(next_rand() % 1000) / 1000.0f;
			memcpy(in[i].data, &v, 4);
		}
	}
	if (run->pg)
		ck_assert_msg(progen_inputs(run->pg, g, run->dims, in, err, sizeof err), "%s: %s", run->what, err);
	fz_status st = interp_run(g, run->dims, in, want, err, sizeof err);
	ck_assert_msg(st == FZ_OK || st == FZ_ERR_RUNTIME, "%s: interpreter: %s", run->what, err);
	return st;
}

/* Run the plan and compare what the kernels write with the interpreter.
 * Returns how many kernels ran under the run's schedule (a forced path that
 * cannot take a kernel's sizes leaves it to cg_launch's choice). */
static int run_plan(Run *run)
{
	const Graph *g = &run->c->graph;
	Tensor *in = xmalloc(sizeof(Tensor) * (size_t)(g->ninputs + 1));
	Tensor *want = xmalloc(sizeof(Tensor) * (size_t)(g->noutputs + 1));
	int ran = 0;
	/* max of an empty row: the runtime rejects it before launching */
	fz_status st = make_inputs(run, in, want);
	if (st == FZ_OK) {
		Bufs b = {0};
		alloc_bufs(run, in, want, &b);
		for (int k = 0; k < run->c->plan.nkernels; k++)
			ran += run_kernel(run, in, &b, k);
		compare_outputs(run, want, &b);
		for (int i = 0; i < b.nown; i++)
			emu_buf_free(&b.own[i]);
		free(b.own);
		free(b.slot);
		free(b.outp);
		free(b.written);
		for (int i = 0; i < g->noutputs; i++)
			tensor_free(&want[i]);
	}
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(&in[i]);
	free(in);
	free(want);
	return ran;
}

/* A private directory for the modules, and whether there is a C++ compiler. */
static void emu_setup(const char *test)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(workdir, sizeof workdir, "%s/fusec-emu.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(workdir)) {
		perror(workdir);
		exit(1);
	}
	have_cxx = system("c++ --version >/dev/null 2>&1") == 0;
	if (!have_cxx)
		printf("%s: no C++ compiler (c++): the generated kernels are not run\n", test);
}

static void emu_cleanup(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", workdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", workdir);
}

#endif
