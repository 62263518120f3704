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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	src = replace(src, "asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(r));", "r = emu_dyn_smem();", false);
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

/* How a row kernel is launched in a run: the launch's own choice, or forced.
 * Under a forced schedule, pointwise kernels run on a small grid (two blocks
 * of a warp), so that a thread takes several iterations of its grid-stride
 * loop. */
typedef enum { SCHED_AUTO, SCHED_WARP4, SCHED_BLOCK, SCHED_LOOP, SCHED_SPLIT, SCHED_SPLIT_NOCACHE, NSCHED } Sched;

static const char *sched_name[] = {"auto", "warp4", "block64", "loop", "split3", "split3-nocache"};

static CgDevice emu_device(void)
{
	CgDevice d = {.cc_major = 9, .cc_minor = 0, .sm_count = 2, .max_threads_per_sm = 2048,
	              .smem_per_block_optin = 232448, .l2_bytes = 1 << 20};
	return d;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t cache_bytes(const struct CgKernelInfo *ki, int64_t len)
{
	int64_t lp = cdiv(len, ki->vec) * ki->vec, b = 0;
	for (int s = 0; s < ki->nslots; s++)
		b += cdiv(lp * ki->slot_bytes[s], 16) * 16;
	return b;
}

static void force(const struct CgKernelInfo *ki, Sched s, int64_t rows, int64_t n, CgLaunch *l)
{
	if (s == SCHED_AUTO || l->empty)
		return;
	int64_t S = s == SCHED_SPLIT || s == SCHED_SPLIT_NOCACHE ? 3 : 1;
	int64_t len = S == 1 ? n : cdiv(cdiv(n, S), ki->vec) * ki->vec;
	unsigned G = s == SCHED_WARP4 ? 4 : 64, R = s == SCHED_WARP4 ? 8 : 1;
	for (int i = 0; i < 3; i++)
		l->grid[i] = l->block[i] = 1;
	l->block[0] = G;
	l->block[1] = R;
	l->grid[0] = (unsigned)(S > 1 ? 2 : cdiv(rows, R) < 3 ? cdiv(rows, R) : 3);
	l->grid[1] = (unsigned)S;
	bool global = s == SCHED_LOOP || s == SCHED_SPLIT_NOCACHE;
	l->smem = global ? 0 : (unsigned)(cache_bytes(ki, len) * R);
	l->cooperative = S > 1;
	int64_t gx = l->grid[0], words = (gx + gx * 2 * S * (ki->nred > 0 ? ki->nred : 1) + 1) / 2 * 2;
	l->workspace = words * 8 + (global ? gx * S * R * cache_bytes(ki, len) : 0);
}

typedef struct Run {
	Compilation *c;
	EmuModule *m;
	const int64_t *dims;
	Sched sched;
	bool misalign, nans;
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

/* Run the plan and compare what the kernels write with the interpreter. */
static void run_plan(Run *run)
{
	Compilation *c = run->c;
	const Graph *g = &c->graph;
	const Plan *p = &c->plan;
	Tensor *in = xmalloc(sizeof(Tensor) * (size_t)(g->ninputs + 1));
	Tensor *want = xmalloc(sizeof(Tensor) * (size_t)(g->noutputs + 1));
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
	if (st == FZ_ERR_RUNTIME) /* max of an empty row: the runtime rejects it before launching */
		goto out;
	ck_assert_msg(st == FZ_OK, "%s: interpreter: %s", run->what, err);
	/* per node: where kernels read it; inputs possibly one element off alignment */
	void **slot = xmalloc(sizeof(void *) * (size_t)(g->n + 1));
	void **own = xmalloc(sizeof(void *) * (size_t)(g->n + g->ninputs + g->noutputs + 1));
	int nown = 0;
	for (int i = 0; i < g->ninputs; i++) {
		size_t es = fz_dtype_size(in[i].dtype), bytes = tensor_nbytes(&in[i]);
		char *buf = xmalloc(bytes + 32);
		own[nown++] = buf;
		char *at = buf + (run->misalign ? es : 0);
		memcpy(at, in[i].data, bytes);
		slot[g->inputs[i].node] = at;
	}
	void **outp = xmalloc(sizeof(void *) * (size_t)(g->noutputs + 1));
	bool *written = xmalloc(sizeof(bool) * (size_t)(g->noutputs + 1));
	for (int i = 0; i < g->noutputs; i++) {
		size_t bytes = tensor_nbytes(&want[i]);
		char *buf = xmalloc(bytes + 32);
		memset(buf, 0xab, bytes + 32);
		own[nown++] = buf;
		outp[i] = buf;
	}
	for (int t = 0; t < p->ntemps; t++) {
		const Node *n = &g->nodes[p->temps[t]];
		int64_t numel;
		ck_assert(ir_numel(n->rank, n->shape, run->dims, &numel));
		void *buf = xmalloc((size_t)numel * fz_dtype_size((fz_dtype)n->dtype) + 32);
		own[nown++] = buf;
		slot[p->temps[t]] = buf;
	}
	CgDevice dev = emu_device();
	for (int k = 0; k < p->nkernels; k++) {
		const Kernel *kn = &p->kernels[k];
		CgLaunch l;
		ck_assert(cg_launch(&c->module, p, k, run->dims, &dev, &l));
		if (kn->kind == KERNEL_ROW) {
			int64_t rows = 1;
			for (int ax = 0; ax + 1 < kn->rank; ax++)
				rows *= ir_dim_value(kn->domain[ax], run->dims);
			force(&c->module.kinfo[k], run->sched, rows, ir_dim_value(kn->domain[kn->rank - 1], run->dims), &l);
		} else if (run->sched != SCHED_AUTO && !l.empty) {
			l.grid[0] = l.grid[0] < 2 ? l.grid[0] : 2;
			l.block[0] = 32;
		}
		for (int j = 0; j < kn->nparams; j++)
			if (kn->params[j].kind == PARAM_OUT && kn->params[j].output >= 0)
				written[kn->params[j].output] = true;
		if (l.empty)
			continue;
		const CgEntry *e = &c->module.entries[l.entry];
		void **args = xmalloc(sizeof(void *) * (size_t)(e->nargs + 1));
		void **ptrs = xmalloc(sizeof(void *) * (size_t)(e->nargs + 1));
		void *ws = l.workspace > 0 ? xmalloc((size_t)l.workspace) : NULL;
		for (int j = 0; j < e->nargs; j++) {
			const CgArg *a = &e->args[j];
			if (a->kind == CGARG_WORKSPACE) {
				ptrs[j] = ws;
				args[j] = &ptrs[j];
				continue;
			}
			const KParam *kp = &kn->params[a->index];
			switch (kp->kind) {
			case PARAM_IN: ptrs[j] = slot[kp->node]; args[j] = &ptrs[j]; break;
			case PARAM_OUT:
				ptrs[j] = kp->output >= 0 ? outp[kp->output] : slot[kp->node];
				args[j] = &ptrs[j];
				break;
			case PARAM_SCALAR: args[j] = in[g->nodes[kp->node].input].data; break;
			case PARAM_DIM: args[j] = (void *)&run->dims[kp->dim]; break;
			}
			ck_assert_msg(kp->kind == PARAM_SCALAR || kp->kind == PARAM_DIM || ptrs[j], "%s: no buffer for %s",
			              run->what, e->symbol);
		}
		int rc = run->m->launch(run->m->entries[l.entry], args, l.grid, l.block, l.smem, l.cooperative);
		ck_assert_msg(rc == 0, "%s: %s deadlocked", run->what, e->symbol);
		if (getenv("FUSEC_EMU_DUMP")) /* what each kernel wrote, for debugging */
			for (int j = 0; j < kn->nparams; j++) {
				const KParam *kp = &kn->params[j];
				if (kp->kind != PARAM_OUT)
					continue;
				const Node *n = &g->nodes[kp->node];
				Tensor t = {.dtype = (fz_dtype)n->dtype, .rank = n->rank};
				for (int d = 0; d < n->rank; d++)
					t.shape[d] = ir_dim_value(n->shape[d], run->dims);
				t.data = kp->output >= 0 ? outp[kp->output] : slot[kp->node];
				printf("%s grid %u,%u block %u,%u smem %u wrote %%%d:", e->symbol, l.grid[0], l.grid[1], l.block[0],
				       l.block[1], l.smem, kp->node);
				for (int64_t x = 0; x < tensor_numel(&t) && x < 80; x++)
					printf(" %.5g", tensor_get(&t, x));
				printf("\n");
			}
		/* a stored output is also what later kernels read */
		for (int j = 0; j < kn->nparams; j++)
			if (kn->params[j].kind == PARAM_OUT && kn->params[j].output >= 0 && !slot[kn->params[j].node])
				slot[kn->params[j].node] = outp[kn->params[j].output];
		free(ws);
		free(args);
		free(ptrs);
	}
	int64_t nred = rt_longest_reduction(g, run->dims);
	for (int i = 0; i < g->noutputs; i++) {
		if (!written[i])
			continue; /* the runtime copies it */
		Tensor got = want[i];
		got.data = outp[i];
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
		RtTolerance tol = rt_tolerance(want[i].dtype, nred, !p->fused);
		ck_assert(rt_compare(&got, &want[i], tol, &cmp));
		if (cmp.bad > 0) {
			char idx[128];
			rt_index_str(&want[i], cmp.worst, idx, sizeof idx);
			ck_abort_msg("%s: output %s: %lld of %lld elements differ; at %s got %.9g want %.9g (source: %s)",
			             run->what, g->outputs[i].name, (long long)cmp.bad, (long long)cmp.n, idx, cmp.worst_got,
			             cmp.worst_want, run->m->path);
		}
	}
	for (int i = 0; i < nown; i++)
		free(own[i]);
	free(own);
	free(slot);
	free(outp);
	free(written);
out:
	for (int i = 0; i < g->noutputs; i++)
		if (st == FZ_OK)
			tensor_free(&want[i]);
	for (int i = 0; i < g->ninputs; i++)
		tensor_free(&in[i]);
	free(in);
	free(want);
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
