/*
 * cuda_emu.h: just enough of CUDA to run fusec's generated kernels on the
 * host, for tests on machines without a GPU (test_codegen_emu.c).
 *
 * Every CUDA thread is a fiber (ucontext) with its own stack; the fibers
 * of a launch run one at a time, switching only where a kernel waits: at
 * __syncthreads and __syncwarp, at a warp shuffle (all lanes of the warp
 * deposit their value, then all read), and in __nanosleep (the split-row
 * spin wait). So the kernels run exactly as written, barriers and shuffles
 * included, with the same per-block shared memory (exactly the launch's
 * dynamic amount, ending at an inaccessible page, so that an access beyond
 * it faults). Blocks run one after the other, or all together for
 * cooperative launches (whose blocks wait for each other). Arithmetic is
 * the host's: libm instead of CUDA's math library, no FMA contraction; the
 * tests compare with the interpreter under the same tolerances the GPU
 * tests use.
 *
 * The generated code is compiled unchanged except for its few inline PTX
 * statements and its shared-memory declarations, which the test replaces
 * with the emu_* calls below.
 */
#ifndef FUSEC_CUDA_EMU_H
#define FUSEC_CUDA_EMU_H

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

struct emu_dim3 {
	unsigned x, y, z;
};

struct emu_fiber {
	ucontext_t ctx;
	emu_dim3 tid, bid;
	int block;     /* index in the launch's running blocks */
	int warp;      /* global warp index */
	int lane;
	bool done;
	char *stack;
};

struct emu_sync {
	int count = 0, n = 0;
	unsigned long long gen = 0;
};

/* n bytes (16-byte aligned) that end where an inaccessible page begins and
 * start after another: an access past the end (or before the start of the
 * page they start in) faults, so a kernel that reaches beyond the shared
 * memory its launch gave it crashes the test instead of reading garbage. */
struct emu_guarded {
	char *map = nullptr;
	size_t len = 0;
	unsigned char *p = nullptr;
	void alloc(size_t n)
	{
		size_t pg = (size_t)sysconf(_SC_PAGESIZE), data = (n + pg - 1) / pg * pg;
		len = data + 2 * pg;
		map = (char *)mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED || mprotect(map + pg, data, PROT_READ | PROT_WRITE) != 0) {
			fprintf(stderr, "emu: cannot map %zu bytes\n", n);
			abort();
		}
		p = (unsigned char *)((uintptr_t)(map + pg + data - n) & ~(uintptr_t)15);
	}
	void release()
	{
		if (map)
			munmap(map, len);
		map = nullptr;
	}
};

struct emu_block {
	emu_sync bar;
	emu_guarded smem;
	unsigned long long red[64];
};

struct emu_warp {
	emu_sync bar;
	unsigned long long slot[32];
};

struct emu_state {
	emu_dim3 grid, block;
	unsigned dyn_smem;
	std::vector<emu_fiber> fibers;
	std::vector<emu_block> blocks;
	std::vector<emu_warp> warps;
	emu_fiber *cur;
	ucontext_t sched;
	void (*entry)(void **);
	void **args;
	long long switches;
};

static emu_state emu;

#define threadIdx (emu.cur->tid)
#define blockIdx (emu.cur->bid)
#define blockDim (emu.block)
#define gridDim (emu.grid)

static inline void emu_yield() { swapcontext(&emu.cur->ctx, &emu.sched); }

/* A barrier among n fibers (sense by generation). */
static inline void emu_arrive(emu_sync &s)
{
	unsigned long long g = s.gen;
	if (++s.count == s.n) {
		s.count = 0;
		s.gen++;
		return;
	}
	while (s.gen == g)
		emu_yield();
}

static inline void __syncthreads() { emu_arrive(emu.blocks[emu.cur->block].bar); }
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_arrive(emu.warps[emu.cur->warp].bar); }
static inline void __threadfence() {}
static inline void __nanosleep(unsigned) { emu_yield(); }

/* Lane `from` of the warp's values (all lanes deposit theirs, then read). */
template <class T> static inline T emu_shfl(T v, int from)
{
	emu_warp &w = emu.warps[emu.cur->warp];
	unsigned long long bits = 0;
	memcpy(&bits, &v, sizeof v);
	w.slot[emu.cur->lane] = bits;
	emu_arrive(w.bar);
	if (from >= w.bar.n) {
		fprintf(stderr, "emu: shuffle from lane %d of a %d-lane warp\n", from, w.bar.n);
		abort();
	}
	T r;
	memcpy(&r, &w.slot[from], sizeof r);
	emu_arrive(w.bar);
	return r;
}

template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o) { return emu_shfl(v, emu.cur->lane ^ o); }
template <class T> static inline T __shfl_sync(unsigned, T v, int lane) { return emu_shfl(v, lane); }
/* Lane + o's value, or the lane's own where lane + o is past the warp. */
template <class T> static inline T __shfl_down_sync(unsigned, T v, int o)
{
	const int from = emu.cur->lane + o;
	return emu_shfl(v, from < emu.warps[emu.cur->warp].bar.n ? from : emu.cur->lane);
}

static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
	unsigned long long old = *p;
	*p = old + v;
	return old;
}

static inline unsigned long long *emu_red() { return emu.blocks[emu.cur->block].red; }
static inline void *emu_smem() { return emu.blocks[emu.cur->block].smem.p; }

/* ---- intrinsics ------------------------------------------------------------------- */

static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
/* mul.hi.u32: the high word of a * b */
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
/* shf.r.wrap: the low word of (hi:lo) >> (sh & 31) */
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh)
{
	return (unsigned)((((unsigned long long)hi << 32) | lo) >> (sh & 31));
}
struct alignas(16) uint4 { unsigned x, y, z, w; };
/* IEEE round-to-nearest operations, as on the device (the emulator is
 * compiled without contraction, so a * b is rounded alone). */
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
/* CUDA overloads its math functions for float in the global namespace, so
 * exp(x) of a float is expf; here the same, from <cmath>. */
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::ceil;
using std::cos;
using std::cosh;
using std::erf;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::floor;
using std::fmax;
using std::fmod;
using std::hypot;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::log;
using std::log1p;
using std::log2;
using std::pow;
using std::rint;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;
using std::trunc;
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }

/* cvt.rzi: truncate, saturate, NaN -> 0 */
template <class I> static inline I emu_f2i(double x, double lo, double hi, I ilo, I ihi)
{
	if (x != x)
		return 0;
	if (x >= hi)
		return ihi;
	if (x <= lo)
		return ilo;
	return (I)x;
}
static inline int __float2int_rz(float x) { return emu_f2i<int>(x, -2147483649.0, 2147483648.0, INT32_MIN, INT32_MAX); }
static inline int __double2int_rz(double x) { return emu_f2i<int>(x, -2147483649.0, 2147483648.0, INT32_MIN, INT32_MAX); }
static inline long long __float2ll_rz(float x)
{
	if (x != x)
		return 0;
	if (x >= 9223372036854775808.0f)
		return INT64_MAX;
	if (x < -9223372036854775808.0f)
		return INT64_MIN;
	return (long long)x;
}
static inline long long __double2ll_rz(double x)
{
	if (x != x)
		return 0;
	if (x >= 9223372036854775808.0)
		return INT64_MAX;
	if (x < -9223372036854775808.0)
		return INT64_MIN;
	return (long long)x;
}
static inline float __double2float_rz(double d)
{
	float f = (float)d;
	if (d != d || std::isinf(d))
		return f;
	if (std::fabs((double)f) > std::fabs(d))
		f = std::nextafter(f, 0.0f);
	return f;
}
static inline float __ll2float_rz(long long v)
{
	float f = (float)v;
	if (std::fabs((long double)f) > std::fabs((long double)v))
		f = std::nextafter(f, 0.0f);
	return f;
}

/* f16 <-> f32, round to nearest even (the host conversions of common.c) */
static inline float emu_h2f(unsigned short h)
{
	unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
	if (exp == 0) {
		float v = (float)mant / 16777216.0f;
		return sign ? -v : v;
	}
	if (exp == 31)
		return __uint_as_float(sign | 0x7f800000u | (mant << 13));
	return __uint_as_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}
static inline unsigned short emu_f2h(float f)
{
	unsigned x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
	if (absx > 0x7f800000u)
		return (unsigned short)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
	if (absx >= 0x477ff000u)
		return (unsigned short)(sign | 0x7c00u);
	if (absx < 0x38800000u)
		return (unsigned short)(sign | (unsigned)nearbyintf(__uint_as_float(absx) * 16777216.0f));
	unsigned mant = absx & 0x7fffffu, exp = (absx >> 23) - 127 + 15;
	unsigned h = (exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
		h++;
	return (unsigned short)(sign | h);
}

/* ---- launching ---------------------------------------------------------------------- */

enum { EMU_STACK = 64 << 10 };

static void emu_trampoline()
{
	emu.entry(emu.args);
	emu.cur->done = true;
	swapcontext(&emu.cur->ctx, &emu.sched);
}

/* Run blocks [b0, b1) (linear block ids) together. */
static int emu_run_blocks(unsigned b0, unsigned b1)
{
	unsigned nt = emu.block.x * emu.block.y * emu.block.z;
	unsigned nb = b1 - b0, nw = (nt + 31) / 32;
	emu.blocks.assign(nb, emu_block());
	emu.warps.assign((size_t)nb * nw, emu_warp());
	emu.fibers.assign((size_t)nb * nt, emu_fiber());
	for (unsigned b = 0; b < nb; b++) {
		emu.blocks[b].bar.n = (int)nt;
		emu.blocks[b].smem.alloc(emu.dyn_smem);
		memset(emu.blocks[b].smem.p, 0xcd, emu.dyn_smem); /* garbage, as on a GPU */
		for (unsigned w = 0; w < nw; w++)
			emu.warps[b * nw + w].bar.n = (int)(nt - w * 32 < 32 ? nt - w * 32 : 32);
	}
	for (unsigned b = 0; b < nb; b++) {
		unsigned lb = b0 + b;
		for (unsigned t = 0; t < nt; t++) {
			emu_fiber &f = emu.fibers[(size_t)b * nt + t];
			f.bid = {lb % emu.grid.x, (lb / emu.grid.x) % emu.grid.y, lb / (emu.grid.x * emu.grid.y)};
			f.tid = {t % emu.block.x, (t / emu.block.x) % emu.block.y, t / (emu.block.x * emu.block.y)};
			f.block = (int)b;
			f.warp = (int)(b * nw + t / 32);
			f.lane = (int)(t % 32);
			f.stack = (char *)malloc(EMU_STACK);
			getcontext(&f.ctx);
			f.ctx.uc_stack.ss_sp = f.stack;
			f.ctx.uc_stack.ss_size = EMU_STACK;
			f.ctx.uc_link = NULL;
			makecontext(&f.ctx, emu_trampoline, 0);
		}
	}
	size_t live = emu.fibers.size();
	long long spins = 0;
	while (live > 0) {
		for (size_t i = 0; i < emu.fibers.size(); i++) {
			emu_fiber &f = emu.fibers[i];
			if (f.done)
				continue;
			emu.cur = &f;
			swapcontext(&emu.sched, &f.ctx);
			emu.switches++;
			if (f.done) {
				live--;
				free(f.stack);
				f.stack = NULL;
			}
		}
		if (++spins > 50000000) {
			fprintf(stderr, "emu: the launch does not finish (a deadlock?)\n");
			return -1;
		}
	}
	for (unsigned b = 0; b < nb; b++)
		emu.blocks[b].smem.release();
	return 0;
}

/* Run entry(args) over the grid. Returns 0, or -1 on a deadlock. */
static int emu_launch(void (*entry)(void **), void **args, const unsigned grid[3], const unsigned block[3],
                      unsigned smem, bool cooperative)
{
	emu.grid = {grid[0], grid[1], grid[2]};
	emu.block = {block[0], block[1], block[2]};
	emu.dyn_smem = smem;
	emu.entry = entry;
	emu.args = args;
	unsigned nb = grid[0] * grid[1] * grid[2];
	if (cooperative)
		return emu_run_blocks(0, nb);
	for (unsigned b = 0; b < nb; b++)
		if (emu_run_blocks(b, b + 1) != 0)
			return -1;
	return 0;
}

#endif
