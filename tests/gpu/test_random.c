/* Random programs on the GPU (tests/progen.h) against the interpreter.
 *
 * Each seed's program runs through the public API in fused and in per-op
 * mode on seeded random inputs (NaN/inf in a share of them), with poisoned
 * output buffers, and every output is compared with interp_run (per-op mode,
 * when the program has f16/bf16 values, with interp_run_ex rounding every
 * half value where per-op mode stores it) within the generator's per-output
 * tolerance; a program whose max/min row is empty must
 * fail with FZ_ERR_RUNTIME in both modes, as the interpreter does. Fused plans
 * must not have more kernels than per-op plans.
 *
 * Sizes: every 25th seed is BIG (rows of 300k or 1M elements, or a million
 * rows of a few), one in ten TINY, two in ten SMALL, the rest MEDIUM.
 *
 * Environment:
 *   FUSEC_RANDOM_SEED0   first seed (default 1)
 *   FUSEC_RANDOM_COUNT   number of programs (default 1000)
 *   FUSEC_RANDOM_SIZE    tiny|small|medium|big: one size class for all
 *   FUSEC_RANDOM_SECONDS start no new program after this many seconds (0: no limit)
 *   FUSEC_TEST_JOBS      worker threads (default: cores, at most 12)
 *   FUSEC_TEST_OUT       where failing programs and their inputs are written
 *   FUSEC_RANDOM_DISK_CACHE  1: use the on-disk kernel cache (default 0)
 *
 * Prints one line per failing program and ends with "N passed, N failed".
 * Exits 77 (skipped) without a driver or device, 1 if any program failed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpucheck.h"
#include "ir/interp.h"
#include "pipeline.h"

typedef struct Shared {
	fz_context *ctx;
	pthread_mutex_t mu;
	uint64_t next, end;
	int passed, failed, skipped, done;
	double start, seconds;
	const char *outdir;
	int disk_cache;
	int size;           /* a ProgenSize, or -1 for the mix */
} Shared;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ProgenSize size_of(const Shared *sh, uint64_t seed)
{
	if (sh->size >= 0)
		return (ProgenSize)sh->size;
	if (seed % 25 == 0)
		return PROGEN_BIG;
	switch (seed % 10) {
	case 1: return PROGEN_TINY;
	case 2: case 3: return PROGEN_SMALL;
	default: return PROGEN_MEDIUM;
	}
}

static const char *const size_names[] = {"tiny", "small", "medium", "big"};

static void fail_line(Shared *sh, uint64_t seed, const GcCase *c, const char *what)
{
	char path[4200] = "";
	char stem[64];
	snprintf(stem, sizeof stem, "progen_%llu", (unsigned long long)seed);
	if (sh->outdir && c)
		gc_save(sh->outdir, stem, c, path, sizeof path);
	pthread_mutex_lock(&sh->mu);
	printf("FAIL %s: %s%s%s%s\n", c ? c->label : stem, what, path[0] ? " [" : "", path, path[0] ? "]" : "");
	fflush(stdout);
	pthread_mutex_unlock(&sh->mu);
}

/* Both modes of one prepared case. */
static bool run_modes(Shared *sh, uint64_t seed, const GcCase *c)
{
	int nk[2];
	char msg[2048];
	for (int fuse = 1; fuse >= 0; fuse--) {
		if (!gc_run(sh->ctx, c, fuse, &nk[fuse], msg, sizeof msg)) {
			fail_line(sh, seed, c, msg);
			return false;
		}
	}
	if (nk[1] > nk[0]) {
		snprintf(msg, sizeof msg, "%d fused kernels > %d per-op kernels", nk[1], nk[0]);
		fail_line(sh, seed, c, msg);
		return false;
	}
	return true;
}

static bool check_seed(Shared *sh, uint64_t seed)
{
	ProgenOptions opt = progen_default_options(size_of(sh, seed));
	ProgenInfo info;
	char *text = progen_program(seed, &opt, &info), err[512], name[64], label[128];
	if (!text)
		return fail_line(sh, seed, NULL, "out of memory"), false;
	snprintf(name, sizeof name, "progen_%llu.fz", (unsigned long long)seed);
	PipeOptions po = pipe_default_options();
	po.stop = STAGE_IR;
	Compilation *comp = pipe_new(name, text, strlen(text), &po);
	int64_t dims[FZ_MAX_INPUTS];
	Tensor in[FZ_MAX_INPUTS], want[FZ_MAX_OUTPUTS], want_perop[FZ_MAX_OUTPUTS];
	ProgenTol tols[FZ_MAX_OUTPUTS];
	bool ok = false, have_in = false, have_want = false, have_perop = false;
	GcCase c = {.label = label, .name = name, .text = text, .dims = dims, .inputs = in, .want = want, .tols = tols,
	            .disk_cache = sh->disk_cache};
	snprintf(label, sizeof label, "seed %llu (%s)", (unsigned long long)seed, size_names[opt.size]);
	if (!comp || pipe_run(comp) != FZ_OK) {
		snprintf(err, sizeof err, "reference compilation: %s", comp ? comp->diag_text : "out of memory");
		fail_line(sh, seed, NULL, err);
		goto done;
	}
	c.g = &comp->graph;
	if (!progen_dims(&info, c.g, dims, err, sizeof err) || !(have_in = progen_inputs(&info, c.g, dims, in, err, sizeof err))) {
		fail_line(sh, seed, NULL, err);
		goto done;
	}
	for (int k = 0; k < c.g->noutputs && k < FZ_MAX_OUTPUTS; k++)
		tols[k] = info.outputs[k].tol;
	c.expect = progen_expect(c.g, dims);
	fz_status s = interp_run(c.g, dims, in, want, err, sizeof err);
	have_want = s == FZ_OK;
	if (s == FZ_OK && gc_has_half(c.g)) { /* per-op mode rounds every half value it stores */
		s = interp_run_ex(c.g, dims, in, want_perop, true, err, sizeof err);
		have_perop = s == FZ_OK;
		c.want_perop = have_perop ? want_perop : NULL;
	}
	if (s != c.expect) {
		char m[700];
		snprintf(m, sizeof m, "interpreter: %s (expected %s): %s", fz_status_string(s), fz_status_string(c.expect), err);
		fail_line(sh, seed, &c, m);
		goto done;
	}
	ok = run_modes(sh, seed, &c);
done:
	if (have_want)
		progen_free_tensors(want, c.g->noutputs);
	if (have_perop)
		progen_free_tensors(want_perop, c.g->noutputs);
	if (have_in)
		progen_free_tensors(in, c.g->ninputs);
	pipe_free(comp);
	free(text);
	return ok;
}

static void *worker(void *arg)
{
	Shared *sh = arg;
	for (;;) {
		pthread_mutex_lock(&sh->mu);
		bool late = sh->seconds > 0 && now() - sh->start > sh->seconds;
		if (sh->next >= sh->end || late) {
			pthread_mutex_unlock(&sh->mu);
			return NULL;
		}
		uint64_t seed = sh->next++;
		pthread_mutex_unlock(&sh->mu);
		bool ok = check_seed(sh, seed);
		pthread_mutex_lock(&sh->mu);
		ok ? sh->passed++ : sh->failed++;
		if (++sh->done % 100 == 0) {
			fprintf(stderr, "test_random: %d programs, %d failed, %.0f s\n", sh->done, sh->failed, now() - sh->start);
			fflush(stderr);
		}
		pthread_mutex_unlock(&sh->mu);
	}
}

static int size_from_env(void)
{
	const char *e = getenv("FUSEC_RANDOM_SIZE");
	for (int i = 0; e && i < PROGEN_SIZE_COUNT; i++)
		if (strcmp(e, size_names[i]) == 0)
			return i;
	return -1;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	Shared sh = {.size = size_from_env(), .outdir = getenv("FUSEC_TEST_OUT")};
	int rc = gc_context("test_random", &sh.ctx);
	if (rc != 0)
		return rc;
	fz_device_info dev;
	fz_context_info(sh.ctx, &dev);
	sh.next = (uint64_t)gc_env_long("FUSEC_RANDOM_SEED0", 1);
	sh.end = sh.next + (uint64_t)gc_env_long("FUSEC_RANDOM_COUNT", 1000);
	sh.seconds = (double)gc_env_long("FUSEC_RANDOM_SECONDS", 0);
	sh.disk_cache = (int)gc_env_long("FUSEC_RANDOM_DISK_CACHE", 0);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int jobs = (int)gc_env_long("FUSEC_TEST_JOBS", cores < 1 ? 1 : cores > 12 ? 12 : cores);
	jobs = jobs < 1 ? 1 : jobs > 64 ? 64 : jobs;
	printf("test_random: seeds %llu..%llu on %s (sm_%d%d), %d threads\n", (unsigned long long)sh.next,
	       (unsigned long long)sh.end - 1, dev.name, dev.cc_major, dev.cc_minor, jobs);
	pthread_mutex_init(&sh.mu, NULL);
	sh.start = now();
	pthread_t th[64];
	for (int i = 0; i < jobs; i++)
		pthread_create(&th[i], NULL, worker, &sh);
	for (int i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
	sh.skipped = (int)(sh.end - sh.next);
	const char *warn = fz_context_warnings(sh.ctx);
	if (warn && *warn)
		printf("test_random: context warnings:\n%s", warn);
	fz_context_destroy(sh.ctx);
	if (sh.skipped)
		printf("test_random: time budget of %.0f s spent; %d programs not run\n", sh.seconds, sh.skipped);
	printf("test_random: %.0f s\n", now() - sh.start);
	if (sh.skipped)
		printf("%d passed, %d failed, %d skipped\n", sh.passed, sh.failed, sh.skipped);
	else
		printf("%d passed, %d failed\n", sh.passed, sh.failed);
	return sh.failed ? 1 : 0;
}
