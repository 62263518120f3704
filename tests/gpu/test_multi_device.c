/* Several GPUs in one process: a context per device, each program compiled
 * once per context, runs on every device at the same time from one thread
 * each, and pointers of one device refused by runs on another.
 *
 *   1. In device order, every example is compiled (fused and per-op) on each
 *      device's context and run once, against a fresh disk cache: the first
 *      device compiles with NVRTC; every later device of the same
 *      architecture finds each module on disk (no NVRTC compile at all).
 *   2. One thread per device runs every example, both modes, at several
 *      sizes, on data of its own (seeds differ by device), with the programs
 *      of step 1, each checked against the interpreter; twice over, so the
 *      devices' work overlaps.
 *   3. Memory of device 1 bound to a run on device 0, as an input or an
 *      output, is refused with FZ_ERR_BINDING, and a program loaded on
 *      device 0 cannot make a run on device 1.
 *
 * Exits 77 (skipped) with fewer than two devices. Prints the devices, the
 * cache figures and "N passed, N failed". FUSEC_CACHE_DIR is replaced by a
 * fresh directory, removed at the end. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpucheck.h"
#include "testutil.h"

enum { MAX_DEVICES = 8, MAX_EXAMPLES = 64 };

typedef struct SizeSet {
	int64_t rows, row;
} SizeSet;

/* Sizes every path sees: tiny, odd, a block per row, long rows, short rows,
 * empty leading dims and empty rows. */
static const SizeSet sets[] = {{3, 5}, {64, 1000}, {300, 4097}, {2, 300007}, {100000, 3}, {0, 17}, {5, 0}};

typedef struct Device {
	fz_context *ctx;
	fz_device_info info;
	fz_program *prog[MAX_EXAMPLES][2];
	int passed, failed;
} Device;

static Device devs[MAX_DEVICES];
static int ndev, nex;
static char *names[MAX_EXAMPLES], *texts[MAX_EXAMPLES];
static int failures;

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

static bool run_example(Device *d, int i, const SizeSet *s, uint64_t seed)
{
	GcExample e = {.name = names[i], .text = texts[i], .rows = s->rows, .row = s->row, .seed = seed,
	               .prog = {d->prog[i][0], d->prog[i][1]}};
	char msg[8192];
	bool ok = gc_example_run(d->ctx, &e, msg, sizeof msg);
	if (!ok)
		printf("FAIL device %d: %s\n", d->info.ordinal, msg);
	ok ? d->passed++ : d->failed++;
	return ok;
}

/* Step 1 for one device: compile and run every example once. */
static void compile_all(Device *d)
{
	for (int i = 0; i < nex; i++) {
		GcCase c = {.name = names[i], .text = texts[i], .disk_cache = 1};
		char msg[2048];
		for (int fuse = 0; fuse < 2; fuse++)
			if (!(d->prog[i][fuse] = gc_compile(d->ctx, &c, fuse, msg, sizeof msg)))
				bad("%s: %s", names[i], msg);
		if (d->prog[i][0] && d->prog[i][1])
			run_example(d, i, &sets[1], 7);
	}
}

/* Step 1's cache figures: the first device compiles, the others read. */
static void check_cache(void)
{
	fz_cache_stats first;
	fz_context_cache_stats(devs[0].ctx, &first);
	printf("device 0: %llu NVRTC compiles, %llu disk hits, %llu memory hits\n",
	       (unsigned long long)first.nvrtc_compiles, (unsigned long long)first.disk_hits,
	       (unsigned long long)first.memory_hits);
	if (first.nvrtc_compiles == 0 || first.disk_hits != 0)
		bad("device 0 should compile every module with a fresh cache");
	for (int k = 1; k < ndev; k++) {
		fz_cache_stats st;
		fz_context_cache_stats(devs[k].ctx, &st);
		printf("device %d: %llu NVRTC compiles, %llu disk hits, %llu memory hits\n", k,
		       (unsigned long long)st.nvrtc_compiles, (unsigned long long)st.disk_hits,
		       (unsigned long long)st.memory_hits);
		bool same_arch = devs[k].info.cc_major == devs[0].info.cc_major &&
		                 devs[k].info.cc_minor == devs[0].info.cc_minor;
		if (!same_arch)
			printf("device %d is of another architecture: its modules are its own\n", k);
		else if (st.nvrtc_compiles != 0 || st.disk_hits != first.nvrtc_compiles)
			bad("device %d (same architecture): every module should be a disk hit", k);
	}
}

/* Step 2: a device's thread. */
static void *run_all(void *arg)
{
	Device *d = arg;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < nex; i++)
			for (size_t k = 0; d->prog[i][0] && d->prog[i][1] && k < sizeof sets / sizeof sets[0]; k++)
				run_example(d, i, &sets[k], 1000 + 100 * (uint64_t)d->info.ordinal + (uint64_t)round);
	return NULL;
}

static void expect_refused(fz_status s, fz_run *r, const char *want)
{
	if (s != FZ_ERR_BINDING || strcmp(fz_run_error(r), want) != 0)
		bad("binding memory of device 1 on device 0: got \"%s\", want \"%s\"", fz_run_error(r), want);
}

/* Step 3, with the softmax example: x is f32[B, N]. */
static void cross_device_pointers(void)
{
	int i = 0;
	while (i < nex && strcmp(names[i], "softmax.fz") != 0)
		i++;
	if (i == nex) {
		bad("no softmax.fz in examples/");
		return;
	}
	fz_program *p = devs[0].prog[i][1];
	fz_run *r = NULL, *other = NULL;
	void *mem1 = NULL;
	int64_t shape[2] = {4, 8};
	if (!p || fz_run_create(p, devs[0].ctx, &r) != FZ_OK ||
	    fz_device_alloc(devs[1].ctx, sizeof(float) * 32, &mem1) != FZ_OK) {
		bad("step 3 setup: %s", fz_last_error());
	} else {
		expect_refused(fz_run_bind_input(r, "x", mem1, FZ_F32, 2, shape), r,
		               "input 'x' is memory of device 1, but this run is on device 0");
		expect_refused(fz_run_bind_output(r, "y", mem1, FZ_F32, 2, shape), r,
		               "output 'y' is memory of device 1, but this run is on device 0");
		fz_status s = fz_run_create(p, devs[1].ctx, &other);
		if (s != FZ_ERR_ARGUMENT)
			bad("a run on device 1 of a program loaded on device 0: %s (%s)", fz_status_string(s), fz_last_error());
	}
	fz_run_destroy(other);
	fz_run_destroy(r);
	fz_device_free(devs[1].ctx, mem1);
}

static bool open_devices(int *rc)
{
	if ((*rc = gc_context("test_multi_device", &devs[0].ctx)) != 0)
		return false;
	for (ndev = 1; ndev < MAX_DEVICES; ndev++) {
		fz_status s = fz_context_create(ndev, &devs[ndev].ctx);
		if (s == FZ_ERR_NO_DEVICE)
			break;
		if (s != FZ_OK) {
			printf("FAIL device %d: %s: %s\n", ndev, fz_status_string(s), fz_last_error());
			*rc = 1;
			return false;
		}
	}
	if (ndev < 2) {
		printf("test_multi_device: skipped: one device (%s)\n", fz_last_error());
		*rc = 77;
		return false;
	}
	for (int k = 0; k < ndev; k++) {
		fz_context_info(devs[k].ctx, &devs[k].info);
		printf("device %d: %s (sm_%d%d, %d SMs)\n", k, devs[k].info.name, devs[k].info.cc_major,
		       devs[k].info.cc_minor, devs[k].info.sm_count);
	}
	return true;
}

static void load_examples(void)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", tu_path("examples"));
	char **list = gc_list_examples(dir, &nex);
	if (nex > MAX_EXAMPLES)
		nex = MAX_EXAMPLES;
	for (int i = 0; i < nex; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, list[i]);
		names[i] = list[i];
		if (!(texts[i] = gc_read_text(path)))
			bad("cannot read %s", path);
	}
	free(list);
	if (nex == 0)
		bad("no examples in %s (set FUSEC_SOURCE_DIR to the source tree)", dir);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	char cache[] = "/tmp/fusec-multi-device-XXXXXX";
	if (!mkdtemp(cache)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("FUSEC_CACHE_DIR", cache, 1); /* before any context opens the cache */
	int rc;
	if (open_devices(&rc)) {
		load_examples();
		for (int k = 0; k < ndev; k++)
			compile_all(&devs[k]);
		check_cache();
		pthread_t th[MAX_DEVICES];
		for (int k = 0; k < ndev; k++)
			pthread_create(&th[k], NULL, run_all, &devs[k]);
		for (int k = 0; k < ndev; k++)
			pthread_join(th[k], NULL);
		cross_device_pointers();
		int passed = 0;
		for (int k = 0; k < ndev; k++) {
			printf("device %d: %d cases passed, %d failed\n", k, devs[k].passed, devs[k].failed);
			passed += devs[k].passed;
			failures += devs[k].failed;
		}
		printf("%d passed, %d failed\n", passed, failures);
		rc = failures ? 1 : 0;
	}
	for (int k = 0; k < MAX_DEVICES; k++) {
		for (int i = 0; i < nex; i++)
			for (int f = 0; f < 2; f++)
				fz_program_destroy(devs[k].prog[i][f]);
		fz_context_destroy(devs[k].ctx);
	}
	for (int i = 0; i < nex; i++) {
		free(names[i]);
		free(texts[i]);
	}
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
	if (system(cmd) != 0 && rc == 0)
		rc = 1;
	return rc;
}
