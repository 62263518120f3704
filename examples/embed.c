/*
 * embed.c: fusec as a library. JIT-compiles an expression given as a string,
 * runs it on data in device memory and checks the result on the host.
 *
 *     embed                      z = relu(x * a + y) - 0.5 * y, checked
 *     embed 'EXPR'               any expression of x, y (f32[N]) and a (f32);
 *                                its first values are printed
 *
 * Build it against a fusec installed with `cmake --install build --prefix
 * PREFIX` (for pkg-config: export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, or
 * PREFIX/lib64/pkgconfig where the libraries went there) with either of
 *
 *     cc embed.c $(pkg-config --cflags --libs fusec) -Wl,-rpath,$(pkg-config --variable=libdir fusec) -lm -o embed
 *     find_package(fusec) + target_link_libraries(embed fusec::fusec m)
 *
 * The rpath lets the program find libfusec.so.0 in PREFIX, which the system's
 * loader does not search; CMake adds it by itself. To need no library at run
 * time, link the static one instead: fusec::fusec_static in CMake.
 * tests/install_test.sh runs the cc line above as written.
 *
 * Exit status: 0 success, 1 failure, 77 no GPU (as CTest counts a skip).
 */
#include <fusec.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_EXPR "relu(x * a + y) - 0.5 * y"

static float reference(float x, float y, float a)
{
	float t = x * a + y;
	return (t > 0 ? t : 0) - 0.5f * y;
}

/* The program: two vectors and a scalar in, one vector out. */
static char *program_text(const char *expr)
{
	static const char head[] = "in x: f32[N]\nin y: f32[N]\nin a: f32\nout z = ";
	char *s = malloc(sizeof head + strlen(expr) + 2);
	if (s)
		sprintf(s, "%s%s\n", head, expr);
	return s;
}

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "embed: %s: %s\n", what, why);
	return 1;
}

/* Inputs to the device, one launch, the result back to the host. */
static int run(fz_context *ctx, fz_program *p, const float *hx, const float *hy, float a, float *hz, int64_t n)
{
	size_t bytes = (size_t)n * sizeof(float);
	void *dx = NULL, *dy = NULL, *dz = NULL;
	fz_run *r = NULL;
	int rc = 1;
	if (fz_device_alloc(ctx, bytes, &dx) || fz_device_alloc(ctx, bytes, &dy) || fz_device_alloc(ctx, bytes, &dz) ||
	    fz_copy_to_device(ctx, dx, hx, bytes) || fz_copy_to_device(ctx, dy, hy, bytes)) {
		fail("device memory", fz_last_error());
	} else if (fz_run_create(p, NULL, &r) != FZ_OK) {
		fail("fz_run_create", fz_last_error());
	} else if (fz_run_bind_input(r, "x", dx, FZ_F32, 1, &n) || fz_run_bind_input(r, "y", dy, FZ_F32, 1, &n) ||
	           fz_run_bind_scalar(r, "a", a) || fz_run_bind_output(r, "z", dz, FZ_F32, 1, &n) ||
	           fz_run_launch(r) || fz_run_synchronize(r)) {
		fail("run", fz_run_error(r));
	} else if (fz_copy_to_host(ctx, hz, dz, bytes) != FZ_OK) {
		fail("copy back", fz_last_error());
	} else {
		rc = 0;
	}
	fz_run_destroy(r);
	fz_device_free(ctx, dx);
	fz_device_free(ctx, dy);
	fz_device_free(ctx, dz);
	return rc;
}

static int check(const float *hx, const float *hy, float a, const float *hz, int64_t n)
{
	int64_t bad = 0;
	for (int64_t i = 0; i < n; i++) {
		float want = reference(hx[i], hy[i], a);
		if (fabsf(hz[i] - want) > 1e-5f + 1e-5f * fabsf(want)) {
			if (bad++ < 5)
				fprintf(stderr, "embed: z[%lld] = %.9g, expected %.9g\n", (long long)i, hz[i], want);
		}
	}
	if (bad) {
		fprintf(stderr, "embed: %lld of %lld values are wrong\n", (long long)bad, (long long)n);
		return 1;
	}
	printf("embed: z = %s: %lld values match the host\n", DEFAULT_EXPR, (long long)n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *expr = argc > 1 ? argv[1] : DEFAULT_EXPR;
	fz_context *ctx;
	fz_status s = fz_context_create(0, &ctx);
	if (s == FZ_ERR_NO_DRIVER || s == FZ_ERR_NO_DEVICE) {
		printf("embed: skipped: %s\n", fz_last_error());
		return 77;
	}
	if (s != FZ_OK)
		return fail("fz_context_create", fz_last_error());

	char *src = program_text(expr);
	fz_program *p = NULL;
	fz_diag d;
	if (!src || fz_program_compile(ctx, "embed", src, strlen(src), NULL, &p, &d) != FZ_OK) {
		fputs(src ? d.rendered : "embed: out of memory\n", stderr);
		free(src);
		fz_context_destroy(ctx);
		return 1;
	}
	enum { N = 1 << 20 };
	float *hx = malloc(N * sizeof(float)), *hy = malloc(N * sizeof(float)), *hz = malloc(N * sizeof(float));
	const float a = 1.5f;
	int rc = 1;
	if (hx && hy && hz) {
		for (int i = 0; i < N; i++) {
			hx[i] = (float)((int)((i * 7919LL) % 2001) - 1000) / 1000.0f;
			hy[i] = (float)((int)((i * 104729LL) % 1999) - 999) / 999.0f;
		}
		rc = run(ctx, p, hx, hy, a, hz, N);
		if (rc == 0 && argc <= 1)
			rc = check(hx, hy, a, hz, N);
		else if (rc == 0)
			printf("embed: z = %s: z[0..3] = %g %g %g %g\n", expr, hz[0], hz[1], hz[2], hz[3]);
	}
	free(hx);
	free(hy);
	free(hz);
	free(src);
	fz_program_destroy(p);
	fz_context_destroy(ctx);
	return rc;
}
