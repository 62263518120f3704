/* The CPU-side fuzz of the compiler, through the random program generator
 * (tests/progen.h):
 *
 * - for a few hundred seeds (TINY and SMALL sizes) every program compiles
 *   through the whole pipeline in fused and per-op modes, fused plans have no
 *   more kernels than per-op plans, the interpreter runs it (or fails with
 *   exactly the empty-axis error when a max/min row is empty), and its
 *   outputs are within the generator's tolerance of the f64 "shadow"
 *   program's (which checks the generator's error analysis, hence the
 *   tolerances the GPU tests use, and that "exact" values are exact);
 * - every 10th program's CUDA C compiles with NVRTC for sm_90 with an empty
 *   log (fused; every 20th also per-op);
 * - MEDIUM and BIG programs compile (they are too large to interpret here);
 * - the generator is deterministic, varied, and covers every op of the op
 *   table, every dtype, ranks 1 to 4, fns, re-exports, both where syntaxes,
 *   NaN/inf inputs and empty axes;
 * - the comparison's rules (NaN, infinities, exact integers, tolerances) and
 *   its messages.
 *
 * FUSEC_PROGEN_COUNT=N runs N seeds per size instead of the default. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/interp.h"
#include "progen.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

static int seed_count(int dflt)
{
	const char *e = getenv("FUSEC_PROGEN_COUNT");
	return e && atoi(e) > 0 ? atoi(e) : dflt;
}

/* FUSEC_PROGEN_STAGE=fused stops before code generation: a way to fuzz the
 * front end, types and fusion alone while codegen is broken. */
static PipeStage last_stage(void)
{
	const char *e = getenv("FUSEC_PROGEN_STAGE");
	return e && strcmp(e, "fused") == 0 ? STAGE_FUSED : STAGE_CUDA;
}

static Compilation *compile_to(const char *text, bool fuse, PipeStage stop)
{
	PipeOptions o = pipe_default_options();
	o.fuse = fuse;
	o.stop = stop;
	Compilation *c = pipe_new("progen.fz", text, strlen(text), &o);
	ck_assert_ptr_nonnull(c);
	pipe_run(c);
	return c;
}

static Compilation *compile(const char *text, bool fuse)
{
	PipeOptions o = pipe_default_options();
	o.fuse = fuse;
	o.stop = last_stage();
	Compilation *c = pipe_new("progen.fz", text, strlen(text), &o);
	ck_assert_ptr_nonnull(c);
	pipe_run(c);
	return c;
}

/* Failures are gathered, so that one run reports every failing seed. */
typedef struct Report {
	int failed, checked;
	char text[3000]; /* Check's messages are limited to 4 KiB */
	size_t len;
} Report;

static void report(Report *r, uint64_t seed, const char *what, const char *detail, const char *program)
{
	r->failed++;
	if (r->len + 200 >= sizeof r->text)
		return;
	int n = snprintf(r->text + r->len, sizeof r->text - r->len, "seed %llu: %s: %.600s\n", (unsigned long long)seed,
	                 what, detail);
	r->len += (size_t)n < sizeof r->text - r->len ? (size_t)n : 0;
	if (r->failed == 1 && program && r->len < sizeof r->text)
		r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, "%.1500s\n", program);
	if (r->len >= sizeof r->text)
		r->len = sizeof r->text - 1;
}

static void nvrtc_check(Report *r, uint64_t seed, Compilation *c, const char *text)
{
	RtNvrtcResult res;
	if (!rt_nvrtc_compile(c->arena, c->module.source, c->graph.name, 9, 0, false, &res))
		report(r, seed, c->opt.fuse ? "NVRTC (fused)" : "NVRTC (per-op)", res.message, text);
	else if (res.log && res.log[0])
		report(r, seed, "NVRTC log not empty", res.log, text);
}

/* Outputs of the program against its f64 shadow, within the generator's
 * tolerances; the shadow is compiled and run here. */
static void shadow_check(Report *r, uint64_t seed, const ProgenOptions *opt, const ProgenInfo *info, const Tensor *out,
                         const char *text)
{
	ProgenOptions so = *opt;
	so.shadow_f64 = true;
	ProgenInfo si;
	char *st = progen_program(seed, &so, &si), err[512];
	ck_assert_ptr_nonnull(st);
	Compilation *c = compile_to(st, true, STAGE_IR);
	int64_t dims[FZ_MAX_INPUTS];
	Tensor in[FZ_MAX_INPUTS], sout[FZ_MAX_OUTPUTS];
	if (c->status != FZ_OK) {
		report(r, seed, "the f64 shadow does not compile", c->diag_text, st);
	} else if (!progen_dims(&si, &c->graph, dims, err, sizeof err) ||
	           !progen_inputs(&si, &c->graph, dims, in, err, sizeof err)) {
		report(r, seed, "shadow inputs", err, st);
	} else {
		if (interp_run(&c->graph, dims, in, sout, err, sizeof err) != FZ_OK) {
			report(r, seed, "the f64 shadow fails", err, st);
		} else {
			for (int k = 0; k < info->noutputs; k++) {
				ProgenTol tol = info->outputs[k].tol;
				tol.any_dtype = true;
				char msg[1024], what[128];
				if (!progen_compare_tol(&out[k], &sout[k], &tol, msg, sizeof msg)) {
					snprintf(what, sizeof what, "output %s differs from the f64 shadow's", info->outputs[k].name);
					report(r, seed, what, msg, text);
				}
			}
			progen_free_tensors(sout, c->graph.noutputs);
		}
		progen_free_tensors(in, c->graph.ninputs);
	}
	pipe_free(c);
	free(st);
}

/* Interpret the fused compilation's graph; compare with the shadow. */
static void run_check(Report *r, uint64_t seed, const ProgenOptions *opt, const ProgenInfo *info, Compilation *c,
                      const char *text)
{
	int64_t dims[FZ_MAX_INPUTS];
	Tensor in[FZ_MAX_INPUTS], out[FZ_MAX_OUTPUTS];
	char err[512];
	if (!progen_dims(info, &c->graph, dims, err, sizeof err) || !progen_inputs(info, &c->graph, dims, in, err, sizeof err)) {
		report(r, seed, "inputs", err, text);
		return;
	}
	fz_status want = progen_expect(&c->graph, dims);
	fz_status got = interp_run(&c->graph, dims, in, out, err, sizeof err);
	if (got != want) {
		char msg[700];
		snprintf(msg, sizeof msg, "interpreter status %s, expected %s: %s", fz_status_string(got),
		         fz_status_string(want), err);
		report(r, seed, "run", msg, text);
	} else if (got == FZ_ERR_RUNTIME) {
		/* the contract: the error names the reduction and the dimension */
		char want_dim[64];
		snprintf(want_dim, sizeof want_dim, "reduces an empty axis (%s = 0)",
		         info->zero_dim >= 0 ? info->dim_names[info->zero_dim] : "?");
		if ((strncmp(err, "max at ", 7) != 0 && strncmp(err, "min at ", 7) != 0) || !strstr(err, want_dim))
			report(r, seed, "the empty-axis error does not name the reduction and the dim", err, text);
	} else if (got == FZ_OK) {
		shadow_check(r, seed, opt, info, out, text);
		progen_free_tensors(out, c->graph.noutputs);
	}
	progen_free_tensors(in, c->graph.ninputs);
}

/* One seed through the pipeline; `interp`: also run it, `nvrtc`: 0 none,
 * 1 fused, 2 fused and per-op. */
static void fuzz_one(Report *r, uint64_t seed, ProgenSize size, bool interp, int nvrtc)
{
	ProgenOptions opt = progen_default_options(size);
	ProgenInfo info;
	char *text = progen_program(seed, &opt, &info);
	ck_assert_ptr_nonnull(text);
	r->checked++;
	Compilation *fused = compile(text, true), *perop = compile(text, false);
	if (fused->status != FZ_OK) {
		report(r, seed, "fused compilation", fused->diag_text, text);
	} else if (perop->status != FZ_OK) {
		report(r, seed, "per-op compilation", perop->diag_text, text);
	} else {
		if (fused->plan.nkernels > perop->plan.nkernels) {
			char msg[128];
			snprintf(msg, sizeof msg, "%d fused kernels > %d per-op kernels", fused->plan.nkernels,
			         perop->plan.nkernels);
			report(r, seed, "fusion", msg, text);
		}
		if (fused->graph.noutputs != info.noutputs)
			report(r, seed, "outputs", "the graph's output count is not the generator's", text);
		if (nvrtc >= 1 && last_stage() == STAGE_CUDA)
			nvrtc_check(r, seed, fused, text);
		if (nvrtc >= 2 && last_stage() == STAGE_CUDA)
			nvrtc_check(r, seed, perop, text);
		if (interp && fused->graph.noutputs == info.noutputs)
			run_check(r, seed, &opt, &info, fused, text);
	}
	pipe_free(fused);
	pipe_free(perop);
	free(text);
}

static void fuzz_range(uint64_t first, int count, bool interp)
{
	Report r = {0};
	for (int i = 0; i < count; i++) {
		uint64_t seed = first + (uint64_t)i;
		ProgenSize size = interp ? (seed % 2 ? PROGEN_SMALL : PROGEN_TINY) : (seed % 2 ? PROGEN_BIG : PROGEN_MEDIUM);
		int nvrtc = seed % 10 == 0 ? (seed % 20 == 0 ? 2 : 1) : 0;
		fuzz_one(&r, seed, size, interp, interp ? nvrtc : 0);
	}
	ck_assert_msg(r.failed == 0, "%d of %d programs failed:\n%s", r.failed, r.checked, r.text);
}

/* 4 x 100 interpreted seeds, 100 compiled only. */
START_TEST(fuzz_small)
{
	int n = seed_count(100);
	fuzz_range(1 + (uint64_t)_i * (uint64_t)n, n, true);
}
END_TEST

START_TEST(fuzz_large_compile)
{
	fuzz_range(100000, seed_count(100), false);
}
END_TEST

/* ---- the generator itself ----------------------------------------------------------------- */

START_TEST(deterministic)
{
	for (int size = 0; size < PROGEN_SIZE_COUNT; size++) {
		ProgenOptions o = progen_default_options(size);
		ProgenInfo a, b, c;
		char *ta = progen_program(42, &o, &a), *tb = progen_program(42, &o, &b), *tc = progen_program(43, &o, &c);
		ck_assert_str_eq(ta, tb);
		ck_assert(memcmp(&a, &b, sizeof a) == 0);
		ck_assert_str_ne(ta, tc);
		/* the shadow has the same structure: only float dtypes change */
		o.shadow_f64 = true;
		char *ts = progen_program(42, &o, &c);
		ck_assert_int_eq(c.ninputs, a.ninputs);
		ck_assert_int_eq(c.noutputs, a.noutputs);
		ck_assert_int_eq(c.ndims, a.ndims);
		static const char *const gone[] = {": f32", ": f16", ": bf16", "f32(", "f16("};
		for (int i = 0; i < 5; i++)
			ck_assert_msg(!strstr(ts, gone[i]), "'%s' in the shadow:\n%s", gone[i], ts);
		free(ta), free(tb), free(tc), free(ts);
	}
}
END_TEST

/* Consecutive seeds must not share long stretches of text (splitmix64 with a
 * raw seed as state would replay seed s's draws in seed s + 1). */
START_TEST(seeds_independent)
{
	ProgenOptions o = progen_default_options(PROGEN_SMALL);
	ProgenInfo info;
	char *prev = NULL;
	int similar = 0;
	for (uint64_t s = 1; s <= 50; s++) {
		char *t = progen_program(s, &o, &info);
		const char *last = strrchr(t, '\n') ? t + strlen(t) - 40 : t;
		if (prev && strlen(t) > 60 && strstr(prev, last > t ? last : t))
			similar++;
		free(prev);
		prev = t;
	}
	free(prev);
	ck_assert_int_le(similar, 2);
}
END_TEST

typedef struct Coverage {
	bool op[OP_COUNT], dtype_in[FZ_DTYPE_COUNT], dtype_out[FZ_DTYPE_COUNT], rank[5];
	int fns, reexport, ternary, where_call, nonfinite, zero, empty_error, scalar_in, two_universes;
} Coverage;

static void cover(Coverage *cv, const char *text, const ProgenInfo *info, const Graph *g)
{
	for (int i = 0; i < g->n; i++) {
		const Node *n = &g->nodes[i];
		cv->op[n->op] = true;
		if (n->op == OP_INPUT) {
			cv->dtype_in[n->dtype] = true;
			cv->rank[n->rank > 4 ? 4 : n->rank] = true;
			cv->scalar_in += n->rank == 0;
		}
	}
	for (int k = 0; k < g->noutputs; k++)
		cv->dtype_out[g->nodes[g->outputs[k].node].dtype] = true;
	cv->fns += strncmp(text, "fn ", 3) == 0 || strstr(text, "\nfn ") != NULL;
	cv->ternary += strstr(text, " ? ") != NULL;
	cv->where_call += strstr(text, "where(") != NULL;
	cv->nonfinite += info->nonfinite;
	cv->zero += info->zero_dim >= 0;
	for (const char *p = text; (p = strstr(p, "out ")) != NULL; p++) {
		size_t n = strcspn(p, "\n;#");
		if ((p == text || p[-1] == '\n' || p[-1] == ' ') && !memchr(p, '=', n)) {
			cv->reexport++;
			break;
		}
	}
}

START_TEST(coverage)
{
	Coverage cv = {0};
	for (uint64_t s = 1; s <= 300; s++) {
		ProgenOptions o = progen_default_options(s % 2 ? PROGEN_SMALL : PROGEN_TINY);
		ProgenInfo info;
		char *text = progen_program(s, &o, &info);
		Compilation *c = compile_to(text, true, STAGE_IR);
		if (c->status == FZ_OK) {
			cover(&cv, text, &info, &c->graph);
			int64_t dims[FZ_MAX_INPUTS];
			char err[256];
			if (progen_dims(&info, &c->graph, dims, err, sizeof err))
				cv.empty_error += progen_expect(&c->graph, dims) == FZ_ERR_RUNTIME;
		}
		pipe_free(c);
		free(text);
	}
	for (int op = 0; op < OP_COUNT; op++)
		ck_assert_msg(cv.op[op], "no program uses '%s'", ir_ops[op].name);
	for (int t = 0; t < FZ_DTYPE_COUNT; t++) {
		ck_assert_msg(cv.dtype_in[t], "no %s input", fz_dtype_name(t));
		ck_assert_msg(cv.dtype_out[t], "no %s output", fz_dtype_name(t));
	}
	for (int r = 0; r <= 4; r++)
		ck_assert_msg(cv.rank[r], "no input of rank %d", r);
	ck_assert_int_ge(cv.fns, 30);
	ck_assert_int_ge(cv.reexport, 30);
	ck_assert_int_ge(cv.ternary, 30);
	ck_assert_int_ge(cv.where_call, 30);
	ck_assert_int_ge(cv.nonfinite, 15);
	ck_assert_int_ge(cv.zero, 5);
	ck_assert_int_ge(cv.empty_error, 1);
}
END_TEST

/* The size classes give what they promise. */
START_TEST(size_classes)
{
	int long_rows = 0, mega_rows = 0, many_rows = 0;
	for (uint64_t s = 1; s <= 60; s++) {
		for (int size = 0; size < PROGEN_SIZE_COUNT; size++) {
			ProgenOptions o = progen_default_options(size);
			o.zero_dim_pct = 0;
			ProgenInfo info;
			char *text = progen_program(s, &o, &info);
			Compilation *c = compile_to(text, true, STAGE_IR);
			ck_assert_msg(c->status == FZ_OK, "seed %llu: %s", (unsigned long long)s, c->diag_text);
			int64_t dims[FZ_MAX_INPUTS], most = 0, longest = 0;
			char err[256];
			ck_assert(progen_dims(&info, &c->graph, dims, err, sizeof err));
			for (int i = 0; i < c->graph.ninputs; i++) {
				const Node *n = &c->graph.nodes[c->graph.inputs[i].node];
				int64_t e = 1, row = n->rank ? ir_dim_value(n->shape[n->rank - 1], dims) : 1;
				for (int k = 0; k < n->rank; k++)
					e *= ir_dim_value(n->shape[k], dims);
				most = e > most ? e : most;
				longest = row > longest ? row : longest;
				if (size == PROGEN_BIG && e >= 900000 && row <= 8)
					many_rows++;
			}
			static const int64_t limit[] = {1024, 32768, 2000000, 8400000};
			ck_assert_msg(most <= limit[size], "seed %llu size %d: %lld elements", (unsigned long long)s, size,
			              (long long)most);
			if (size == PROGEN_BIG) {
				long_rows += longest >= 262147 && longest < 900000;
				mega_rows += longest >= 999983;
			}
			pipe_free(c);
			free(text);
		}
	}
	ck_assert_int_ge(long_rows, 5);
	ck_assert_int_ge(mega_rows, 5);
	ck_assert_int_ge(many_rows, 5);
}
END_TEST

/* ---- the comparison --------------------------------------------------------------------------- */

static Tensor vec(fz_dtype t, int n, const double *v)
{
	Tensor x = {.dtype = t, .rank = 1, .shape = {n}};
	ck_assert(progen_fill(&x, 1, 0, 0, t, false));
	for (int i = 0; i < n; i++) {
		switch (t) {
		case FZ_F32: ((float *)x.data)[i] = (float)v[i]; break;
		case FZ_F64: ((double *)x.data)[i] = v[i]; break;
		case FZ_F16: ((uint16_t *)x.data)[i] = f32_to_f16_bits((float)v[i]); break;
		case FZ_I64: ((int64_t *)x.data)[i] = (int64_t)v[i]; break;
		case FZ_BOOL: ((uint8_t *)x.data)[i] = (uint8_t)v[i]; break;
		default: ((int32_t *)x.data)[i] = (int32_t)v[i]; break;
		}
	}
	return x;
}

static bool cmp(fz_dtype t, int n, const double *got, const double *want, char *msg)
{
	Tensor g = vec(t, n, got), w = vec(t, n, want);
	bool ok = progen_compare(&g, &w, t, msg, 512);
	progen_free_tensors(&g, 1);
	progen_free_tensors(&w, 1);
	return ok;
}

START_TEST(compare_rules)
{
	char msg[512];
	double w[] = {1, NAN, INFINITY, -INFINITY, 0};
	ck_assert(cmp(FZ_F32, 5, w, w, msg));
	ck_assert_str_eq(msg, "ok (max abs err 0, max rel err 0)");
	double nan_for_num[] = {NAN, NAN, INFINITY, -INFINITY, 0};
	ck_assert(!cmp(FZ_F32, 5, nan_for_num, w, msg));
	ck_assert_str_eq(msg, "1 of 5 elements of f32[5] differ (max abs err 0, max rel err 0); worst [0]: got nan, "
	                      "want 1, allowed error 1.91e-06 (atol 9.54e-07, rtol 9.54e-07)");
	double num_for_nan[] = {1, 0, INFINITY, -INFINITY, 0};
	ck_assert(!cmp(FZ_F32, 5, num_for_nan, w, msg));
	ck_assert_ptr_nonnull(strstr(msg, "worst [1]: got 0, want nan"));
	double wrong_inf[] = {1, NAN, -INFINITY, -INFINITY, 0};
	ck_assert(!cmp(FZ_F32, 5, wrong_inf, w, msg));
	ck_assert_ptr_nonnull(strstr(msg, "worst [2]: got -inf, want inf"));
	double finite_for_inf[] = {1, NAN, 3e38, -INFINITY, 0};
	ck_assert(!cmp(FZ_F32, 5, finite_for_inf, w, msg));
	/* f32 default: 16 ulps of the largest value, plus 16 ulps relative */
	double a[] = {1000, 1}, near[] = {1000, 1 + 5e-5}, far[] = {1000, 1 + 3e-3};
	ck_assert(cmp(FZ_F32, 2, near, a, msg));
	ck_assert(!cmp(FZ_F32, 2, far, a, msg));
	ck_assert_ptr_nonnull(strstr(msg, "1 of 2 elements of f32[2] differ"));
	ck_assert_ptr_nonnull(strstr(msg, "worst [1]"));
	/* f16: 16 ulps of 2^-11 */
	double h[] = {1, 2}, hn[] = {1.0078125, 2}, hf[] = {1.03125, 2};
	ck_assert(cmp(FZ_F16, 2, hn, h, msg));
	ck_assert(!cmp(FZ_F16, 2, hf, h, msg));
	/* integers and bool: exact */
	double i[] = {5, -7, 123456789012.0}, i2[] = {5, -7, 123456789013.0};
	ck_assert(cmp(FZ_I64, 3, i, i, msg));
	ck_assert(!cmp(FZ_I64, 3, i2, i, msg));
	ck_assert_str_eq(msg, "1 of 3 elements of i64[3] differ; first [2]: got 123456789013, want 123456789012");
	double b[] = {1, 0}, bad_bool[] = {255, 0};
	ck_assert(!cmp(FZ_BOOL, 2, bad_bool, b, msg));
	ck_assert_str_eq(msg, "1 of 2 elements of bool[2] differ; first [0]: got 255, want 1");
}
END_TEST

START_TEST(compare_types_and_tolerances)
{
	char msg[512];
	double v[] = {1, 2, 3, 4, 5, 6};
	Tensor a = vec(FZ_F32, 6, v), b = vec(FZ_F64, 6, v), c = vec(FZ_F32, 6, v);
	ck_assert(!progen_compare(&a, &b, FZ_F32, msg, sizeof msg));
	ck_assert_str_eq(msg, "type mismatch: got f32[6], want f64[6]");
	ProgenTol any = {.dtype = FZ_F32, .any_dtype = true};
	ck_assert(progen_compare_tol(&a, &b, &any, msg, sizeof msg));
	c.rank = 2, c.shape[0] = 2, c.shape[1] = 3;
	ck_assert(!progen_compare(&c, &a, FZ_F32, msg, sizeof msg));
	ck_assert_str_eq(msg, "type mismatch: got f32[2, 3], want f32[6]");
	/* an analysed tolerance of zero: bit-identical only */
	ProgenTol exact = {.dtype = FZ_F32, .analysed = true};
	((float *)c.data)[5] = nextafterf(6, 7);
	c.rank = 1, c.shape[0] = 6;
	ck_assert(!progen_compare_tol(&c, &a, &exact, msg, sizeof msg));
	ck_assert_ptr_nonnull(strstr(msg, "worst [5]: got 6.00000048, want 6"));
	/* rows: the relative tolerance grows with sqrt(row) */
	ProgenTol row = {.dtype = FZ_F32, .row = 1000000};
	((float *)c.data)[5] = 6 * (1 + 1e-4f);
	ck_assert(progen_compare_tol(&c, &a, &row, msg, sizeof msg));
	row.row = 0;
	ck_assert(!progen_compare_tol(&c, &a, &row, msg, sizeof msg));
	progen_free_tensors(&a, 1), progen_free_tensors(&b, 1), progen_free_tensors(&c, 1);
}
END_TEST

/* Inputs follow the plan: ranges, dtypes' rounding, NaN/inf only where asked. */
START_TEST(inputs_follow_plan)
{
	int with_nonfinite = 0;
	for (uint64_t s = 1; s <= 40; s++) {
		ProgenOptions o = progen_default_options(PROGEN_SMALL);
		o.nonfinite_pct = 50;
		ProgenInfo info;
		char *text = progen_program(s, &o, &info);
		Compilation *c = compile_to(text, true, STAGE_IR);
		ck_assert_msg(c->status == FZ_OK, "%s", c->diag_text);
		int64_t dims[FZ_MAX_INPUTS];
		Tensor in[FZ_MAX_INPUTS], again[FZ_MAX_INPUTS];
		char err[256];
		ck_assert(progen_dims(&info, &c->graph, dims, err, sizeof err));
		ck_assert(progen_inputs(&info, &c->graph, dims, in, err, sizeof err));
		ck_assert(progen_inputs(&info, &c->graph, dims, again, err, sizeof err));
		for (int i = 0; i < c->graph.ninputs; i++) {
			const ProgenInput *spec = &info.inputs[i];
			ck_assert_str_eq(spec->name, c->graph.inputs[i].name);
			ck_assert_int_eq(in[i].dtype, spec->dtype);
			size_t bytes = fz_dtype_size(in[i].dtype);
			int64_t n = 1, nonfinite = 0;
			for (int k = 0; k < in[i].rank; k++)
				n *= in[i].shape[k];
			ck_assert(memcmp(in[i].data, again[i].data, (size_t)n * bytes) == 0);
			for (int64_t e = 0; e < n; e++) {
				Tensor one = in[i];
				one.rank = 0;
				one.data = (char *)in[i].data + e * (int64_t)bytes;
				double v = 0;
				switch (one.dtype) {
				case FZ_BOOL: v = *(uint8_t *)one.data; break;
				case FZ_I32: v = *(int32_t *)one.data; break;
				case FZ_I64: v = (double)*(int64_t *)one.data; break;
				case FZ_F16: v = f16_bits_to_f32(*(uint16_t *)one.data); break;
				case FZ_BF16: v = bf16_bits_to_f32(*(uint16_t *)one.data); break;
				case FZ_F32: v = *(float *)one.data; break;
				default: v = *(double *)one.data; break;
				}
				if (!isfinite(v)) {
					ck_assert(spec->nonfinite);
					nonfinite++;
					continue;
				}
				ck_assert_msg(v >= spec->lo && v <= spec->hi, "%s: %g not in [%g, %g]", spec->name, v, spec->lo,
				              spec->hi);
			}
			with_nonfinite += nonfinite > 0;
		}
		progen_free_tensors(in, c->graph.ninputs);
		progen_free_tensors(again, c->graph.ninputs);
		pipe_free(c);
		free(text);
	}
	ck_assert_int_ge(with_nonfinite, 3);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("progen");
	TCase *t = tcase_create("generator");
	tcase_add_test(t, deterministic);
	tcase_add_test(t, seeds_independent);
	tcase_add_test(t, coverage);
	tcase_add_test(t, size_classes);
	tcase_add_test(t, inputs_follow_plan);
	tcase_add_test(t, compare_rules);
	tcase_add_test(t, compare_types_and_tolerances);
	tcase_set_timeout(t, 300);
	suite_add_tcase(s, t);
	TCase *f = tcase_create("fuzz");
	tcase_add_loop_test(f, fuzz_small, 0, 4);
	tcase_add_test(f, fuzz_large_compile);
	tcase_set_timeout(f, 600);
	suite_add_tcase(s, f);
	return s;
}

int main(void) { return tu_run(suite()); }
