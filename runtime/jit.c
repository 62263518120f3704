/*
 * jit.c: from generated CUDA C to loaded kernels, entry by entry.
 *
 * A kernel has an entry per path (codegen/cg.h), and a program's sizes
 * usually take one path of each kernel, so nothing is compiled before a
 * launch says which: when a size plan (plans.c) needs entries not loaded
 * yet, a module is made of just those (cg_module_source) and loaded. The
 * first launch of a new path costs one compile; later launches of any size
 * that takes a loaded path cost none (sizes are kernel arguments). The cache
 * key is the module's source itself: two programs that generate the same
 * entries share a module. Three levels, cheapest first:
 *   1. the context's table of loaded modules (programs compiled again, or
 *      the same program compiled twice);
 *   2. the on-disk cache (a new process): read, checksum, cuModuleLoadData;
 *   3. NVRTC for the device's architecture, whose cubin is then stored.
 * A cached cubin that the driver refuses is treated like a damaged entry:
 * warned, replaced by a fresh compile.
 *
 * The table lock is not held while compiling: two threads compiling the same
 * new program both compile, and the second to finish uses the first's
 * module. Modules no program uses stay loaded (a program compiled again is
 * then free) up to RT_IDLE_MODULES, beyond which the least recently used are
 * unloaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "runtime/nvrtc.h"
#include "runtime/rt.h"

enum { RT_IDLE_MODULES = 64 };

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static RtModule *find_module(fz_context *ctx, RtKey key)
{
	for (int i = 0; i < ctx->nmodules; i++)
		if (ctx->modules[i]->key.hi == key.hi && ctx->modules[i]->key.lo == key.lo)
			return ctx->modules[i];
	return NULL;
}

/* Unload the least recently used idle modules beyond the cap (locked). */
static void trim_idle(fz_context *ctx)
{
	for (;;) {
		int idle = 0, oldest = -1;
		for (int i = 0; i < ctx->nmodules; i++) {
			if (ctx->modules[i]->refs > 0)
				continue;
			idle++;
			if (oldest < 0 || ctx->modules[i]->last_use < ctx->modules[oldest]->last_use)
				oldest = i;
		}
		if (idle <= RT_IDLE_MODULES)
			return;
		CU(cuModuleUnload)(ctx->modules[oldest]->mod);
		free(ctx->modules[oldest]);
		ctx->modules[oldest] = ctx->modules[--ctx->nmodules];
	}
}

/* Add a loaded module to the table, or, if another thread got there first,
 * unload ours and take theirs (locked). NULL if out of memory. */
static RtModule *insert_module(fz_context *ctx, RtKey key, CUmodule mod)
{
	RtModule *m = find_module(ctx, key);
	if (m) {
		CU(cuModuleUnload)(mod);
		return m;
	}
	if (ctx->nmodules == ctx->cap) {
		int nc = ctx->cap ? ctx->cap * 2 : 16;
		RtModule **nv = realloc(ctx->modules, sizeof *nv * (size_t)nc);
		if (!nv)
			return NULL;
		ctx->modules = nv;
		ctx->cap = nc;
	}
	m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->key = key;
	m->mod = mod;
	ctx->modules[ctx->nmodules++] = m;
	return m;
}

/* "jit 'NAME' for sm_XY, key K: WHAT" (FUSEC_LOG). */
static void log_jit(const fz_context *ctx, const fz_program *p, RtKey key, const char *what)
{
	if (!log_enabled())
		return;
	char hex[33];
	rt_key_hex(key, hex);
	log_line("jit '%s' for sm_%d%d, key %s: %s", p->c->graph.name, ctx->info.cc_major, ctx->info.cc_minor, hex,
	         what);
}

/* Compile src with NVRTC; the cubin is malloc'ed into *image. */
static fz_status compile_cubin(fz_context *ctx, fz_program *p, const char *src, void **image, size_t *len, char *err)
{
	Arena *a = arena_new();
	if (!a)
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	jmp_buf oom;
	arena_set_oom(a, &oom);
	if (setjmp(oom)) {
		arena_free(a);
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory while compiling with NVRTC");
	}
	RtNvrtcResult res;
	memset(&res, 0, sizeof res);
	const Compilation *c = p->c;
	bool ok = rt_nvrtc_compile(a, src, c->graph.name, ctx->info.cc_major, ctx->info.cc_minor, true, &res);
	fz_status s = FZ_OK;
	if (!ok) {
		const char *m = res.message ? res.message : "NVRTC failed without a message";
		if (strncmp(m, "fusec: ", 7) == 0) /* the library's messages carry no program name */
			m += 7;
		s = rt_fail(err, FZ_ERR_NVRTC, "%s", m);
	} else if (!(*image = malloc(res.image_len ? res.image_len : 1))) {
		s = rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	} else {
		memcpy(*image, res.image, res.image_len);
		*len = res.image_len;
	}
	arena_set_oom(a, NULL);
	arena_free(a);
	return s;
}

/* The module's image: from disk if cached and allowed, else NVRTC (then
 * stored). *from_disk says which. */
static fz_status get_image(fz_context *ctx, fz_program *p, const char *src, RtKey key, bool skip_disk, void **image,
                           size_t *len, bool *from_disk, char *err)
{
	bool use_disk = p->opt.disk_cache && ctx->disk.enabled;
	RtCacheResult r = RTC_MISS;
	*from_disk = false;
	if (use_disk && !skip_disk) {
		double t0 = now_ms();
		r = rt_cache_load(&ctx->disk, key, image, len, rt_warn, ctx);
		pthread_mutex_lock(&ctx->lock);
		if (r == RTC_HIT)
			ctx->stats.disk_hits++;
		else if (r == RTC_CORRUPT)
			ctx->stats.damaged++;
		pthread_mutex_unlock(&ctx->lock);
		if (r == RTC_HIT) {
			char what[160];
			snprintf(what, sizeof what, "disk cache hit, read in %.1f ms", now_ms() - t0);
			log_jit(ctx, p, key, what);
			*from_disk = true;
			return FZ_OK;
		}
	}
	double t0 = now_ms();
	fz_status s = compile_cubin(ctx, p, src, image, len, err);
	if (s != FZ_OK)
		return s;
	double nvrtc_ms = now_ms() - t0;
	int arch = ctx->info.cc_major * 10 + ctx->info.cc_minor;
	bool wrote = use_disk && rt_cache_store(&ctx->disk, key, p->c->graph.name, arch, rt_nvrtc_version(), *image,
	                                        *len, rt_warn, ctx);
	pthread_mutex_lock(&ctx->lock);
	ctx->stats.nvrtc_compiles++;
	ctx->stats.disk_writes += wrote;
	pthread_mutex_unlock(&ctx->lock);
	char what[200];
	snprintf(what, sizeof what, "%s, compiled by NVRTC in %.1f ms%s",
	         !use_disk ? "disk cache off" : skip_disk ? "cached module refused by the driver"
	         : r == RTC_CORRUPT ? "damaged disk cache entry" : "cache miss",
	         nvrtc_ms, wrote ? ", stored in the disk cache" : "");
	log_jit(ctx, p, key, what);
	return FZ_OK;
}

/* Find or make the module of source src, whose key is key (current context pushed). */
static fz_status load_module(fz_context *ctx, fz_program *p, const char *src, RtKey key, RtModule **out, char *err)
{
	pthread_mutex_lock(&ctx->lock);
	RtModule *m = find_module(ctx, key);
	if (m) {
		m->refs++;
		m->last_use = ++ctx->tick;
		ctx->stats.memory_hits++;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (m) {
		log_jit(ctx, p, key, "already loaded in this context");
		*out = m;
		return FZ_OK;
	}
	CUmodule mod = NULL;
	CUresult r = CUDA_SUCCESS;
	for (int attempt = 0; attempt < 2; attempt++) {
		void *image = NULL;
		size_t len = 0;
		bool from_disk;
		fz_status s = get_image(ctx, p, src, key, attempt > 0, &image, &len, &from_disk, err);
		if (s != FZ_OK)
			return s;
		r = rt_module_load(&mod, image);
		free(image);
		if (r == CUDA_SUCCESS || !from_disk)
			break;
		char why[256], msg[512];
		snprintf(msg, sizeof msg, "kernel cache: the driver refused a cached module of '%s' (%s); recompiled it",
		         p->c->graph.name, rt_cu_error(r, why, sizeof why));
		rt_warn(ctx, msg);
	}
	if (r != CUDA_SUCCESS)
		return rt_fail_cu(err, r, "loading the compiled kernels (cuModuleLoadData)");
	pthread_mutex_lock(&ctx->lock);
	m = insert_module(ctx, key, mod);
	if (m) {
		m->refs++;
		m->last_use = ++ctx->tick;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (!m) {
		CU(cuModuleUnload)(mod);
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	}
	*out = m;
	return FZ_OK;
}

fz_status rt_jit_bind(fz_context *ctx, fz_program *p, char *err)
{
	int n = p->c->module.nentries;
	p->funcs = calloc((size_t)(n ? n : 1), sizeof *p->funcs);
	p->smem_optin = calloc((size_t)(n ? n : 1), sizeof *p->smem_optin);
	if (!p->funcs || !p->smem_optin) {
		rt_jit_release(p);
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	}
	/* smem_optin 0: the default limit (48 KB) counts static memory too, so
	 * a launch opts in for any dynamic amount */
	p->ctx = ctx;
	return FZ_OK;
}

/* The entries of `want` that are not loaded; false if none. */
static bool missing(fz_program *p, const bool *need, bool *want)
{
	bool any = false;
	pthread_mutex_lock(&p->ctx->lock);
	for (int e = 0; e < p->c->module.nentries; e++)
		any |= want[e] = need[e] && !p->funcs[e];
	pthread_mutex_unlock(&p->ctx->lock);
	return any;
}

/* Keep a reference to m and take the functions of the entries in want from
 * it (where another thread has not already: its module has them too). */
static fz_status take_functions(fz_program *p, RtModule *m, const bool *want, char *err)
{
	const CgModule *cm = &p->c->module;
	fz_status s = FZ_OK;
	pthread_mutex_lock(&p->ctx->lock);
	if (p->nmodules == p->capmodules) {
		int nc = p->capmodules ? 2 * p->capmodules : 4;
		RtModule **nv = realloc(p->modules, sizeof *nv * (size_t)nc);
		if (!nv) {
			m->refs--;
			pthread_mutex_unlock(&p->ctx->lock);
			return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
		}
		p->modules = nv;
		p->capmodules = nc;
	}
	p->modules[p->nmodules++] = m;
	for (int e = 0; e < cm->nentries && s == FZ_OK; e++) {
		if (!want[e] || p->funcs[e])
			continue;
		CUresult r = CU(cuModuleGetFunction)(&p->funcs[e], m->mod, cm->entries[e].symbol);
		if (r != CUDA_SUCCESS) {
			char what[256];
			snprintf(what, sizeof what, "kernel '%s' is missing from the compiled module", cm->entries[e].symbol);
			p->funcs[e] = NULL;
			s = rt_fail_cu(err, r, what);
		}
	}
	pthread_mutex_unlock(&p->ctx->lock);
	return s;
}

fz_status rt_jit_entries(fz_program *p, const bool *need, char *err)
{
	fz_context *ctx = p->ctx;
	bool *want = calloc((size_t)p->c->module.nentries + 1, sizeof *want);
	Arena *a = arena_new();
	if (!want || !a) {
		free(want);
		arena_free(a);
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	}
	fz_status s = FZ_OK;
	jmp_buf oom;
	arena_set_oom(a, &oom);
	if (setjmp(oom)) {
		s = rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	} else if (missing(p, need, want)) {
		double t0 = now_ms();
		const char *src = cg_module_source(&p->c->module, want, a);
		int arch = ctx->info.cc_major * 10 + ctx->info.cc_minor;
		RtKey key = rt_cache_key(src, strlen(src), rt_nvrtc_version(), rt_nvrtc_options(), arch);
		RtModule *m = NULL;
		s = load_module(ctx, p, src, key, &m, err);
		if (s == FZ_OK)
			s = take_functions(p, m, want, err);
		pthread_mutex_lock(&ctx->lock);
		ctx->stats.jit_ms += now_ms() - t0;
		pthread_mutex_unlock(&ctx->lock);
	}
	arena_set_oom(a, NULL);
	arena_free(a);
	free(want);
	return s;
}

fz_status rt_jit_sizes(fz_program *p, const int64_t *dims, char *err)
{
	const CgModule *m = &p->c->module;
	const Plan *plan = &p->c->plan;
	bool *need = calloc((size_t)m->nentries + 1, sizeof *need);
	if (!need)
		return rt_fail(err, FZ_ERR_NOMEM, "out of memory");
	fz_status s = FZ_OK;
	for (int e = 0; !dims && e < m->nentries; e++)
		need[e] = true;
	/* the entries aligned buffers take (a run of ragged ones compiles its own
	 * on its first launch) */
	for (int k = 0; dims && k < plan->nkernels && s == FZ_OK; k++) {
		CgLaunch l;
		if (!cg_launch(m, plan, k, dims, true, &p->ctx->cg, &l))
			s = rt_fail(err, FZ_ERR_LIMIT, "kernel '%s' cannot be launched for these sizes", plan->kernels[k].name);
		else if (!l.empty)
			need[l.entry] = true;
	}
	if (s == FZ_OK)
		s = rt_jit_entries(p, need, err);
	free(need);
	return s;
}

void rt_jit_release(fz_program *p)
{
	fz_context *ctx = p->ctx;
	if (ctx && p->nmodules > 0) {
		pthread_mutex_lock(&ctx->lock);
		for (int i = 0; i < p->nmodules; i++)
			p->modules[i]->refs--;
		if (rt_push(ctx, NULL) == FZ_OK) {
			trim_idle(ctx);
			rt_pop();
		}
		pthread_mutex_unlock(&ctx->lock);
	}
	free(p->modules);
	free(p->funcs);
	free(p->smem_optin);
	p->modules = NULL;
	p->nmodules = p->capmodules = 0;
	p->funcs = NULL;
	p->smem_optin = NULL;
	p->ctx = NULL;
}

void rt_jit_unload_all(fz_context *ctx)
{
	for (int i = 0; i < ctx->nmodules; i++) {
		CU(cuModuleUnload)(ctx->modules[i]->mod);
		free(ctx->modules[i]);
	}
	free(ctx->modules);
	ctx->modules = NULL;
	ctx->nmodules = ctx->cap = 0;
}

fz_status rt_allow_smem(fz_program *p, int e, unsigned smem, char *err)
{
	fz_context *ctx = p->ctx;
	fz_status s = FZ_OK;
	pthread_mutex_lock(&ctx->lock);
	if (smem > p->smem_optin[e]) {
		CUresult r = CU(cuFuncSetAttribute)(p->funcs[e], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
		if (r == CUDA_SUCCESS)
			p->smem_optin[e] = smem;
		else
			s = rt_fail_cu(err, r, "allowing dynamic shared memory (cuFuncSetAttribute)");
	}
	pthread_mutex_unlock(&ctx->lock);
	return s;
}
