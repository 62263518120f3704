/* Launch modes on a GPU: every example, fused and per-op, gives the same
 * bits kernel by kernel (graphs off), replaying a forced graph, and in the
 * default automatic mode through its whole life (kernel by kernel, the
 * capture, replays, a rebinding to other buffers that drops the graph);
 * and the host time per call of back-to-back
 * launches in each mode, printed (tests/unit/test_launch_calls.c says which
 * driver calls each makes; this says what they cost here).
 *
 * Exits 77 (skipped) where there is no driver or no device. Tests run in
 * this process (CK_NOFORK): a CUDA context does not survive fork. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusec.h"
#include "runtime/rt.h"
#include "gpucheck.h"
#include "testutil.h"

static fz_context *ctx;
static char cache_dir[] = "/tmp/fusec-gpu-modes-XXXXXX";

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A program's buffers at one size: per input and output, device memory (a
 * scalar input keeps its value), host copies of the outputs. */
typedef struct Bufs {
	int n;                 /* inputs + outputs */
	void **dev;
	size_t *bytes;
	int64_t (*shape)[FZ_TENSOR_MAX_RANK];
	int *rank;
	fz_dtype *dtype;
	double *scalar;
} Bufs;

static void bufs_make(const fz_program *p, const int64_t *dims, uint64_t seed, Bufs *b)
{
	int ni = fz_program_num_inputs(p), no = fz_program_num_outputs(p);
	b->n = ni + no;
	b->dev = calloc((size_t)b->n, sizeof *b->dev);
	b->bytes = calloc((size_t)b->n, sizeof *b->bytes);
	b->shape = calloc((size_t)b->n, sizeof *b->shape);
	b->rank = calloc((size_t)b->n, sizeof *b->rank);
	b->dtype = calloc((size_t)b->n, sizeof *b->dtype);
	b->scalar = calloc((size_t)b->n, sizeof *b->scalar);
	for (int j = 0; j < b->n; j++) {
		fz_tensor_info ti;
		ck_assert_int_eq(j < ni ? fz_program_input(p, j, &ti) : fz_program_output(p, j - ni, &ti), FZ_OK);
		size_t numel = 1;
		for (int k = 0; k < ti.rank; k++) {
			int64_t d = ti.dim_names[k] ? -1 : ti.shape[k];
			for (int q = 0; d < 0 && q < fz_program_num_dims(p); q++)
				if (strcmp(fz_program_dim_name(p, q), ti.dim_names[k]) == 0)
					d = dims[q];
			b->shape[j][k] = d;
			numel *= (size_t)d;
		}
		b->rank[j] = ti.rank;
		b->dtype[j] = ti.dtype;
		b->bytes[j] = numel * fz_dtype_size(ti.dtype);
		if (j < ni && ti.rank == 0) {
			b->scalar[j] = 0.25 + (double)(splitmix(&seed) % 100) / 200;
			continue;
		}
		ck_assert_int_eq(fz_device_alloc(ctx, b->bytes[j] ? b->bytes[j] : 1, &b->dev[j]), FZ_OK);
		if (j >= ni || !b->bytes[j])
			continue;
		/* random bits of a sane range: floats in [-1, 1), small integers, bools */
		unsigned char *h = malloc(b->bytes[j]);
		size_t es = fz_dtype_size(ti.dtype);
		for (size_t e = 0; e < numel; e++) {
			double u = (double)(splitmix(&seed) >> 11) / 9007199254740992.0;
			float f = (float)(2 * u - 1);
			uint16_t half = ti.dtype == FZ_F16 ? f32_to_f16_bits(f) : f32_to_bf16_bits(f);
			int32_t i32 = (int32_t)(u * 17) - 8;
			int64_t i64 = i32;
			double d = 2 * u - 1;
			const void *src = ti.dtype == FZ_F32 ? (const void *)&f : ti.dtype == FZ_F64 ? (const void *)&d
			                : ti.dtype == FZ_I32 ? (const void *)&i32 : ti.dtype == FZ_I64 ? (const void *)&i64
			                : (const void *)&half;
			if (ti.dtype == FZ_BOOL)
				h[e] = u < 0.5;
			else
				memcpy(h + e * es, src, es);
		}
		ck_assert_int_eq(fz_copy_to_device(ctx, b->dev[j], h, b->bytes[j]), FZ_OK);
		free(h);
	}
}

static void bufs_free(Bufs *b)
{
	for (int j = 0; j < b->n; j++)
		fz_device_free(ctx, b->dev[j]);
	free(b->dev), free(b->bytes), free(b->shape), free(b->rank), free(b->dtype), free(b->scalar);
}

static void bind(fz_run *r, const fz_program *p, const Bufs *b)
{
	int ni = fz_program_num_inputs(p);
	for (int j = 0; j < b->n; j++) {
		fz_tensor_info ti;
		fz_status s;
		if (j < ni) {
			fz_program_input(p, j, &ti);
			s = ti.rank == 0 ? fz_run_bind_scalar(r, ti.name, b->scalar[j])
			                 : fz_run_bind_input(r, ti.name, b->dev[j], b->dtype[j], b->rank[j], b->shape[j]);
		} else {
			fz_program_output(p, j - ni, &ti);
			s = fz_run_bind_output(r, ti.name, b->dev[j], b->dtype[j], b->rank[j], b->shape[j]);
		}
		ck_assert_msg(s == FZ_OK, "binding %s: %s", ti.name, fz_run_error(r));
	}
}

/* The outputs, concatenated on the host (malloc'ed). */
static unsigned char *outputs(const fz_program *p, const Bufs *b, size_t *len)
{
	int ni = fz_program_num_inputs(p);
	size_t n = 0;
	for (int j = ni; j < b->n; j++)
		n += b->bytes[j];
	unsigned char *h = malloc(n + 1), *at = h;
	for (int j = ni; j < b->n; j++) {
		if (b->bytes[j])
			ck_assert_int_eq(fz_copy_to_host(ctx, at, b->dev[j], b->bytes[j]), FZ_OK);
		at += b->bytes[j];
	}
	*len = n;
	return h;
}

/* Launch `times` times on buffers b (poisoned first, so a
 * launch that writes nothing shows), then the outputs. */
static unsigned char *run_mode(fz_run *r, const fz_program *p, const Bufs *b, int times, size_t *len)
{
	int ni = fz_program_num_inputs(p);
	for (int j = ni; j < b->n; j++) {
		unsigned char *junk = malloc(b->bytes[j] + 1);
		memset(junk, 0x7b, b->bytes[j] + 1);
		if (b->bytes[j])
			ck_assert_int_eq(fz_copy_to_device(ctx, b->dev[j], junk, b->bytes[j]), FZ_OK);
		free(junk);
	}
	bind(r, p, b);
	for (int i = 0; i < times; i++)
		ck_assert_msg(fz_run_launch(r) == FZ_OK, "%s", fz_run_error(r));
	ck_assert_int_eq(fz_run_synchronize(r), FZ_OK);
	return outputs(p, b, len);
}

static void same_bits(const char *what, const char *file, int fuse, const unsigned char *a, size_t na,
                      const unsigned char *b, size_t nb)
{
	ck_assert_int_eq(na, nb);
	ck_assert_msg(memcmp(a, b, na) == 0, "%s (%s): %s differs from kernel by kernel", file,
	              fuse ? "fused" : "per-op", what);
}

static void check_modes(const char *file, const char *src, int fuse)
{
	fz_compile_options o = fz_compile_options_default();
	o.fuse = fuse;
	fz_program *p;
	fz_diag d;
	ck_assert_msg(fz_program_compile(ctx, file, src, strlen(src), &o, &p, &d) == FZ_OK, "%s", d.rendered);
	int64_t dims[16];
	for (int k = 0; k < fz_program_num_dims(p); k++)
		dims[k] = k == fz_program_num_dims(p) - 1 ? 515 : 37;
	Bufs b1, b2;
	bufs_make(p, dims, 1, &b1);
	bufs_make(p, dims, 2, &b2);
	fz_run *plain, *forced, *autom;
	ck_assert_int_eq(fz_run_create(p, NULL, &plain), FZ_OK);
	ck_assert_int_eq(fz_run_create(p, NULL, &forced), FZ_OK);
	ck_assert_int_eq(fz_run_create(p, NULL, &autom), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(plain, 0), FZ_OK);
	ck_assert_int_eq(fz_run_set_graph(forced, 1), FZ_OK);
	size_t n1, n2, n;
	unsigned char *want1 = run_mode(plain, p, &b1, 1, &n1), *want2 = run_mode(plain, p, &b2, 1, &n2), *got;
	got = run_mode(forced, p, &b1, 3, &n);
	same_bits("a forced graph", file, fuse, want1, n1, got, n);
	free(got);
	got = run_mode(forced, p, &b2, 1, &n); /* captured again */
	same_bits("a forced graph, rebound", file, fuse, want2, n2, got, n);
	free(got);
	/* automatic: every stage of its life */
	const int stages[] = {1, RT_GRAPH_AFTER - 2, 1, 5};
	for (int s = 0; s < 4; s++) {
		got = run_mode(autom, p, &b1, stages[s], &n);
		same_bits("the automatic mode", file, fuse, want1, n1, got, n);
		free(got);
	}
	got = run_mode(autom, p, &b2, RT_GRAPH_AFTER + 2, &n); /* other buffers: kernel by kernel, then a graph */
	same_bits("the automatic mode, rebound", file, fuse, want2, n2, got, n);
	free(got);
	fz_run_destroy(plain);
	fz_run_destroy(forced);
	fz_run_destroy(autom);
	free(want1);
	free(want2);
	bufs_free(&b1);
	bufs_free(&b2);
	fz_program_destroy(p);
}

START_TEST(examples_same_bits_in_every_mode)
{
	DIR *dir = opendir(tu_path("examples"));
	ck_assert_ptr_nonnull(dir);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 3, ".fz") != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof path, "examples/%s", de->d_name);
		FILE *f = fopen(tu_path(path), "rb");
		ck_assert_ptr_nonnull(f);
		static char src[1 << 16];
		src[fread(src, 1, sizeof src - 1, f)] = 0;
		fclose(f);
		check_modes(de->d_name, src, 1);
		check_modes(de->d_name, src, 0);
		n++;
	}
	closedir(dir);
	ck_assert_int_ge(n, 10);
}
END_TEST

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Host microseconds per call of `reps` back-to-back launches, after warm-up. */
static double host_per_call(fz_run *r, int reps)
{
	for (int i = 0; i < RT_GRAPH_AFTER + 8; i++)
		ck_assert_int_eq(fz_run_launch(r), FZ_OK);
	ck_assert_int_eq(fz_run_synchronize(r), FZ_OK);
	double t0 = now_us();
	for (int i = 0; i < reps; i++)
		fz_run_launch(r);
	double t1 = now_us();
	ck_assert_int_eq(fz_run_synchronize(r), FZ_OK);
	return (t1 - t0) / reps;
}

/* Printed for the record; the unit tests hold the call counts. */
START_TEST(host_time_per_mode)
{
	const char *src = "in x: f32[N]\nin y: f32[N]\nin bias: f32[N]\nin s: f32\nout z = relu((x + y) * s + bias)\n";
	for (int fuse = 1; fuse >= 0; fuse--) {
		fz_compile_options o = fz_compile_options_default();
		o.fuse = fuse;
		fz_program *p;
		fz_diag d;
		ck_assert_int_eq(fz_program_compile(ctx, "asbr.fz", src, strlen(src), &o, &p, &d), FZ_OK);
		int64_t dims[1] = {4096};
		Bufs b;
		bufs_make(p, dims, 3, &b);
		fz_run *r;
		ck_assert_int_eq(fz_run_create(p, NULL, &r), FZ_OK);
		bind(r, p, &b);
		double t[3];
		const int modes[3] = {0, 1, -1};
		for (int m = 0; m < 3; m++) {
			ck_assert_int_eq(fz_run_set_graph(r, modes[m]), FZ_OK);
			t[m] = host_per_call(r, 2000);
		}
		printf("host us per launch, add_scale_bias_relu N=4096 %s (%d kernels), no context current: "
		       "kernel by kernel %.2f, graph %.2f, automatic %.2f\n",
		       fuse ? "fused" : "per-op", fz_program_num_kernels(p), t[0], t[1], t[2]);
		fz_run_destroy(r);
		bufs_free(&b);
		fz_program_destroy(p);
	}
}
END_TEST

int main(void)
{
	if (!mkdtemp(cache_dir))
		return 1;
	setenv("FUSEC_CACHE_DIR", cache_dir, 1);
	int rc = gc_context("test_launch_modes", &ctx);
	if (rc != 0) {
		rmdir(cache_dir);
		return rc;
	}
	Suite *su = suite_create("launch_modes");
	TCase *tc = tcase_create("gpu");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, examples_same_bits_in_every_mode);
	tcase_add_test(tc, host_time_per_mode);
	suite_add_tcase(su, tc);
	SRunner *sr = srunner_create(su);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	fz_context_destroy(ctx);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? 1 : 0;
}
