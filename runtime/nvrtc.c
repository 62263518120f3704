/*
 * nvrtc.c: generated CUDA C to PTX or a cubin with NVRTC.
 *
 * The generated source is self-contained (no #include), so a compile costs
 * only NVRTC's own start-up and the code itself. Options are the accurate
 * defaults: no -use_fast_math (IEEE division and square root, denormals kept,
 * which the interpreter's results assume), C++17 for the templates of the
 * prelude. PTX targets the virtual architecture compute_XY so that the driver
 * can JIT it for the device (and newer ones); a cubin targets sm_XY exactly.
 *
 * NVRTC's failures are fusec bugs (the code generator wrote invalid CUDA), so
 * the message carries everything needed to report one: NVRTC's log and the
 * whole source with line numbers. With FUSEC_LOG every compile logs its time
 * and NVRTC's log, even an empty one (log.h).
 */
#include "runtime/nvrtc.h"

#include <nvrtc.h>
#include <time.h>

#include "log.h"

/* Options that only make compiles faster: --minimal leaves out NVRTC's
 * built-in headers (textures, the runtime API's types; nothing the
 * generated code uses). NVRTCs older than 12.8 reject it; then it is
 * dropped for the rest of the process.
 *
 * Not -Ofc=min, NVRTC's fast-compile level, which fusec used until
 * 2026-11-27: its NVVM stage leaves the row entries far more registers
 * (add_rmsnorm bf16's 62 -> 108, a tile of softmax f16 40 -> 62), and so
 * fewer blocks an SM. With the prelude's register caps raised where the
 * full optimizer spilled, it was faster by more than 3% at 31 of 54 shapes
 * and slower at 3 (geometric mean of the times 0.956; logsumexp 2097152x7
 * 38.4 -> 29.9 us, layernorm bf16 16760x1001 58.6 -> 47.2, log_softmax f32
 * 167x50257 44.6 -> 56.6; H100, docs/performance.md, "Compile options").
 * It costs compile time: softmax 4096x4096 225 -> 239 ms,
 * layernorm 8192x4096 146 -> 168 (best of 10 here), about a quarter more
 * over those 54 shapes on the GPU machine. */
#define FAST_OPTIONS "--minimal"
/* No FMA contraction: every +, -, *, / and sqrt is then rounded exactly as
 * the interpreter (and eager PyTorch, op by op) rounds it, so the GPU agrees
 * with the reference to the bit outside the math library, and tests can be
 * strict. Memory-bound kernels lose nothing measurable by it. */
#define BASE_OPTIONS "-std=c++17", "--fmad=false", "-default-device"
static volatile int fast_ok = 1;
#include <stdio.h>
#include <string.h>

/* "   12| text" for every line of the source. */
static void numbered_source(StrBuf *sb, const char *src)
{
	int line = 1;
	const char *p = src;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		sb_printf(sb, "%5d| ", line++);
		sb_putn(sb, p, n);
		sb_puts(sb, "\n");
		p += n + (nl ? 1 : 0);
	}
}

static bool fail(Arena *a, RtNvrtcResult *out, const char *what, nvrtcResult r, const char *source)
{
	StrBuf sb;
	sb_init(&sb, a);
	sb_printf(&sb, "fusec: NVRTC %s failed (%s); this is a fusec bug, please report it\n", what,
	          nvrtcGetErrorString(r));
	if (out->log && *out->log) {
		sb_puts(&sb, "--- NVRTC log ---\n");
		sb_puts(&sb, out->log);
		if (out->log[strlen(out->log) - 1] != '\n')
			sb_puts(&sb, "\n");
	}
	if (source) {
		sb_puts(&sb, "--- generated source ---\n");
		numbered_source(&sb, source);
	}
	out->message = sb_str(&sb);
	return false;
}

static const char *program_log(Arena *a, nvrtcProgram prog)
{
	size_t n = 0;
	if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
		return "";
	char *log = arena_alloc(a, n + 1);
	if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
		return "";
	log[n] = 0;
	/* NVRTC reports an empty log as a lone NUL or newline. */
	size_t len = strlen(log);
	while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == ' '))
		log[--len] = 0;
	return log;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* FUSEC_LOG: the compile's time, then NVRTC's log a line at a time. */
static void log_compile(const char *fname, const char *arch, double ms, const char *log)
{
	if (!log_enabled())
		return;
	log_line("nvrtc: %s (%s) compiled in %.1f ms; %s", fname, arch + strlen("--gpu-architecture="), ms,
	         *log ? "its log:" : "its log is empty");
	for (const char *p = log; *p;) {
		size_t n = strcspn(p, "\n");
		log_line("nvrtc log: %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static bool fetch_image(Arena *a, nvrtcProgram prog, bool cubin, RtNvrtcResult *out, nvrtcResult *err)
{
	size_t n = 0;
	nvrtcResult r = cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n);
	if (r != NVRTC_SUCCESS) {
		*err = r;
		return false;
	}
	char *img = arena_alloc(a, n + 1);
	r = cubin ? nvrtcGetCUBIN(prog, img) : nvrtcGetPTX(prog, img);
	if (r != NVRTC_SUCCESS) {
		*err = r;
		return false;
	}
	img[n] = 0;
	out->image = img;
	/* PTX size includes its NUL; the text is what callers print. */
	out->image_len = cubin ? n : strlen(img);
	return true;
}

bool rt_nvrtc_compile(Arena *a, const char *source, const char *name, int major, int minor, bool cubin,
                      RtNvrtcResult *out)
{
	memset(out, 0, sizeof *out);
	out->log = "";
	char arch[64];
	snprintf(arch, sizeof arch, "--gpu-architecture=%s_%d%d", cubin ? "sm" : "compute", major, minor);
	const char *opts[] = {arch, BASE_OPTIONS, FAST_OPTIONS}, *fast[] = {FAST_OPTIONS};
	int nopts = (int)(sizeof opts / sizeof opts[0]), nbase = nopts - (int)(sizeof fast / sizeof fast[0]);
	char fname[128];
	snprintf(fname, sizeof fname, "%.100s.cu", name && *name ? name : "fusec");

	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nvrtcProgram prog;
	nvrtcResult r = nvrtcCreateProgram(&prog, source, fname, 0, NULL, NULL);
	if (r != NVRTC_SUCCESS)
		return fail(a, out, "program creation", r, NULL);
	r = nvrtcCompileProgram(prog, fast_ok ? nopts : nbase, opts);
	if (r == NVRTC_ERROR_INVALID_OPTION && fast_ok) { /* an older NVRTC */
		fast_ok = 0;
		nvrtcDestroyProgram(&prog);
		if ((r = nvrtcCreateProgram(&prog, source, fname, 0, NULL, NULL)) != NVRTC_SUCCESS)
			return fail(a, out, "program creation", r, NULL);
		r = nvrtcCompileProgram(prog, nbase, opts);
	}
	out->log = program_log(a, prog);
	log_compile(fname, arch, ms_since(&t0), out->log);
	if (r != NVRTC_SUCCESS) {
		fail(a, out, "compilation", r, source);
		nvrtcDestroyProgram(&prog);
		return false;
	}
	nvrtcResult err = NVRTC_SUCCESS;
	bool ok = fetch_image(a, prog, cubin, out, &err);
	nvrtcDestroyProgram(&prog);
	if (!ok)
		return fail(a, out, cubin ? "cubin retrieval" : "PTX retrieval", err, NULL);
	return true;
}

bool rt_nvrtc_arch_supported(int arch, char *list, size_t n)
{
	int count = 0, archs[128];
	snprintf(list, n, "?");
	if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0 || count > 128 ||
	    nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
		return true;
	bool found = false;
	size_t used = 0;
	for (int i = 0; i < count; i++) {
		found |= archs[i] == arch;
		int w = snprintf(list + used, used < n ? n - used : 0, "%ssm_%d", i ? ", " : "", archs[i]);
		used += w > 0 ? (size_t)w : 0;
	}
	return found;
}

int rt_nvrtc_version(void)
{
	int major = 0, minor = 0;
	if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
		return 0;
	return major * 1000 + minor * 10;
}

const char *rt_nvrtc_options(void)
{
	static const char *const opts[] = {BASE_OPTIONS, FAST_OPTIONS};
	static char joined[256];
	if (!joined[0]) {
		size_t n = 0;
		for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
			n += (size_t)snprintf(joined + n, sizeof joined - n, "%s%s", i ? " " : "", opts[i]);
	}
	return joined;
}
