/*
 * test_codegen_emu.c: the generated kernels, run, against the interpreter.
 *
 * No GPU here, so the generated CUDA C is compiled by the host's C++
 * compiler against tests/emu/cuda_emu.h, which runs every CUDA thread as a
 * fiber (barriers, warp shuffles and per-block shared memory included), and
 * loaded with dlopen. Each program runs kernel by kernel in launch order, the
 * way the runtime does (temporaries, zeroed workspaces, scalar and dim
 * arguments), and every output a kernel writes is compared with the
 * interpreter under the GPU tests' tolerances (runtime/compare.h).
 *
 * Every row kernel runs under every schedule (the launch's own choice, part
 * of a warp a row, a block a row with the row cache in shared memory and in
 * the workspace, split rows with and without the cache, the register path
 * where the row fits it), forced through cg_launch_forced so that the rest
 * of the launch is what cg_launch would make; every pointwise kernel on the
 * launch's grid
 * and on a small one (several chunks a thread), every program at odd and
 * vector-friendly sizes, with inputs aligned and misaligned (the scalar
 * path), and with NaN in float inputs. Without a C++ compiler the test
 * passes with a note.
 */
#include "emu/emu_harness.h"
#include "ir/eval.h"

/* Compile `src` (fused and per-op) and run it for each size set under the
 * first `nsched` schedules (NSCHED: every one; SCHED_AUTO first); sizes:
 * `ndims` values for each of `nsets` sets. */
static void check_scheds(const char *name, const char *src, int nsets, int ndims, const int64_t *sizes, int nsched)
{
	if (!have_cxx)
		return;
	for (int fused = 1; fused >= 0; fused--) {
		PipeOptions opt = pipe_default_options();
		opt.fuse = fused;
		Compilation *c = pipe_new(name, src, strlen(src), &opt);
		ck_assert_ptr_nonnull(c);
		ck_assert_msg(pipe_run(c) == FZ_OK, "%s: %s", name, c->diag_text ? c->diag_text : "?");
		ck_assert_int_eq(c->graph.ndims, ndims);
		EmuModule m;
		emu_build(c, &m);
		bool rows = false;
		for (int k = 0; k < c->plan.nkernels; k++)
			rows |= c->plan.kernels[k].kind == KERNEL_ROW;
		/* pointwise only: the launch's grid, then a small one (SCHED_WARP4) */
		for (int s = 0; s < nsets; s++)
			for (int sched = 0; sched < (rows || nsched < 2 ? nsched : 2); sched++)
				for (int variant = 0; variant < 3; variant++) {
					if (variant > 0 && rows && sched != SCHED_AUTO && sched != SCHED_LOOP)
						continue; /* the scalar path and NaN: under the launch's choice and uncached */
					Run run = {.c = c, .m = &m, .dims = sizes + s * ndims, .sched = (Sched)sched,
					           .misalign = variant == 1, .nans = variant == 2};
					snprintf(run.what, sizeof run.what, "%s (%s, sizes #%d, %s%s%s)", name, fused ? "fused" : "per-op",
					         s, rows || !sched ? sched_name[sched] : "small grid", run.misalign ? ", misaligned" : "",
					         run.nans ? ", NaN" : "");
					run_plan(&run);
				}
		emu_free(&m);
		pipe_free(c);
	}
}

static void check_program(const char *name, const char *src, int nsets, int ndims, const int64_t *sizes)
{
	check_scheds(name, src, nsets, ndims, sizes, NSCHED);
}

static char *read_text(const char *rel)
{
	FILE *f = fopen(tu_path(rel), "rb");
	ck_assert_msg(f != NULL, "cannot open %s", rel);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}


/* ---- the examples ------------------------------------------------------------------------- */

static const struct {
	const char *file;
	int ndims;
	int64_t sizes[3][3];
} examples[] = {
	{"examples/adam.fz", 1, {{1001}, {4096}, {0}}},
	{"examples/add_scale_bias_relu.fz", 1, {{1027}, {64}, {1}}},
	{"examples/bias_gelu_residual_layernorm.fz", 2, {{3, 37}, {4, 128}, {2, 1}}},
	{"examples/gelu_tanh.fz", 1, {{999}, {256}, {3}}},
	{"examples/l2norm.fz", 2, {{5, 33}, {2, 512}, {3, 0}}},
	{"examples/layernorm.fz", 2, {{3, 37}, {4, 256}, {1, 2}}},
	{"examples/layernorm_bf16.fz", 2, {{3, 37}, {4, 256}, {2, 8}}},
	{"examples/layernorm_f16.fz", 2, {{3, 37}, {4, 256}, {2, 9}}},
	{"examples/log_softmax.fz", 2, {{3, 37}, {4, 256}, {7, 1}}},
	{"examples/logsumexp.fz", 2, {{3, 37}, {4, 256}, {7, 1}}},
	{"examples/rmsnorm.fz", 2, {{3, 37}, {4, 256}, {0, 5}}},
	{"examples/rowsum_sq.fz", 2, {{3, 37}, {4, 256}, {5, 0}}},
	{"examples/softmax.fz", 2, {{3, 37}, {4, 256}, {5, 1}}},
	{"examples/softmax_bf16.fz", 2, {{3, 37}, {4, 256}, {2, 3}}},
	{"examples/softmax_f16.fz", 2, {{3, 37}, {4, 256}, {2, 3}}},
	{"examples/spec_layernorm_gelu.fz", 2, {{3, 37}, {2, 64}, {1, 3}}},
	{"examples/spec_relu.fz", 1, {{1001}, {64}, {0}}},
	{"examples/spec_softmax.fz", 2, {{3, 37}, {4, 256}, {1, 1}}},
};

START_TEST(example_runs)
{
	check_program(examples[_i].file, read_text(examples[_i].file), 3, examples[_i].ndims,
	              &examples[_i].sizes[0][0]);
}
END_TEST

/* ---- programs that exercise the generator ---------------------------------------------------- */

static const struct {
	const char *name, *src;
	int ndims;
	int64_t sizes[2][4];
} programs[] = {
	/* broadcasting patterns: suffix, per-row, a middle axis, scalars */
	{"bcast", "in x: f32[A, B, N]\nin s: f32[N]\nin r: f32[A, B, 1]\nin m: f32[A, 1, N]\nin k: f32\nin o: f32[1]\n"
	          "out y = x * s + r - m * k + o\n", 3, {{2, 3, 5}, {2, 2, 8}}},
	{"bcast_out", "in s: f32[N]\nin r: f32[B, 1]\nout y = s + r\nout z = r * 2\n", 2, {{3, 7}, {4, 16}}},
	/* broadcasts decided chunk by chunk (chunks of 8): inner runs of 13 and 3
	 * elements (chunks crossing one run's end, or several), of 40 (every
	 * chunk inside one: vectors, or element by element when misaligned), a
	 * bool operand (8-byte chunks), a kept middle axis inside broadcast ones */
	{"bcast_chunks", "in x: f16[A, B, N]\nin s: f32[N]\nin r: bf16[A, B, 1]\nin m: f32[A, 1, N]\nin k: bool[N]\n"
	                 "in c: f32[1, B, 1]\nout y = where(k, x * s, r) - m + c\nout z = f16(m * c)\n",
	 3, {{2, 3, 13}, {3, 5, 3}}},
	{"bcast_chunks40", "in x: f16[A, B, N]\nin s: f32[N]\nin r: bf16[A, B, 1]\nin m: f32[A, 1, N]\nin k: bool[N]\n"
	                   "in c: f32[1, B, 1]\nout y = where(k, x * s, r) - m + c\nout z = f16(m * c)\n",
	 3, {{2, 2, 40}, {1, 7, 8}}},
	/* every math op, f32 and f64 */
	{"math32", "in x: f32[N]\nout a = abs(x) + exp(x) + exp2(x) + log(abs(x) + 1) + log2(abs(x) + 1)\n"
	           "out b = log1p(abs(x)) + expm1(x) + sqrt(abs(x)) + rsqrt(abs(x) + 1) + sin(x) + cos(x)\n"
	           "out c = tanh(x) + erf(x) + sigmoid(x) + relu(x) + silu(x) + gelu(x) + gelu_tanh(x)\n"
	           "out d = floor(x * 3) + ceil(x * 3) + round(x * 2.5)\nout e = isnan(log(x))\nout f = isinf(1 / (x - x))\n",
	 1, {{37}, {64}}},
	{"math64", "in x: f64[N]\nout a = abs(x) + exp(x) + exp2(x) + log(abs(x) + 1) + log2(abs(x) + 1)\n"
	           "out b = log1p(abs(x)) + expm1(x) + sqrt(abs(x)) + rsqrt(abs(x) + 1) + sin(x) + cos(x)\n"
	           "out c = tanh(x) + erf(x) + sigmoid(x) + relu(x) + silu(x) + gelu(x) + gelu_tanh(x)\n"
	           "out d = floor(x * 3) + ceil(x * 3) + round(x * 2.5)\nout e = isnan(log(x))\n",
	 1, {{37}, {64}}},
	/* integers: wrapping, division and modulo by zero, pow, abs, min/max/clamp */
	{"ints", "in a: i32[N]\nin b: i32[N]\nin c: i64[N]\nout q = a / b\nout r = a % b\nout p = pow(a, b % 4)\n"
	         "out s = abs(a) * 2147483647 + minimum(a, b) - maximum(a, b) + clamp(a, -3, 7)\n"
	         "out t = c / (c - b) + c % 3 + pow(c, 3)\nout n = -a\nout w = a * 65536 * 65536\n",
	 1, {{41}, {64}}},
	/* casts between every dtype */
	{"casts", "in x: f32[N]\nin i: i32[N]\nin l: i64[N]\nin d: f64[N]\nin h: f16[N]\nin g: bf16[N]\n"
	          "out a = i32(x * 1e9)\nout b = i64(x * 1e18)\nout c = f16(x * 1000)\nout e = bf16(d * 1000)\n"
	          "out f = f16(l * 100003)\nout k = bool(x) && bool(i)\nout m = f32(h) + f32(g) + f64(x)\n"
	          "out n = i32(l * 4294967296) + i32(d)\nout o = f16(i * 977)\nout p = bf16(l)\n",
	 1, {{37}, {64}}},
	/* comparisons, logic, select */
	{"logic", "in x: f32[N]\nin y: f32[N]\nout a = where(x < y && !(x == 0) || x >= 1, x, y)\n"
	          "out b = (x != y) ? maximum(x, y) : minimum(x, y)\nout c = clamp(x, -0.5, y)\n",
	 1, {{37}, {64}}},
	/* every reduction over every dtype */
	{"reduce32", "in x: f32[B, N]\nout s = sum(x)\nout m = mean(x)\nout a = max(x)\nout b = min(x)\n", 2,
	 {{3, 37}, {2, 64}}},
	{"reduce64", "in x: f64[B, N]\nout s = sum(x)\nout m = mean(x)\nout a = max(x)\nout b = min(x)\n", 2,
	 {{3, 37}, {2, 64}}},
	/* (half results stay half: per-op mode rounds every intermediate to its dtype) */
	{"reduce_half", "in x: f16[B, N]\nin y: bf16[B, N]\nout s = sum(x)\nout t = sum(y)\nout m = mean(x)\n"
	                "out n = mean(y)\nout a = max(x)\nout b = min(y)\n", 2, {{3, 37}, {2, 64}}},
	{"reduce_int", "in x: i32[B, N]\nin y: i64[B, N]\nout s = sum(x)\nout t = sum(y)\nout m = mean(x)\n"
	               "out a = max(x)\nout b = min(y)\n", 2, {{3, 37}, {2, 64}}},
	{"reduce_bool", "in x: f32[B, N]\nout any = max(x > 1)\nout all = min(x > -1.5)\nout cnt = sum(x > 0)\n", 2,
	 {{3, 37}, {2, 64}}},
	/* (per op, t's kernel is empty at N = 0, and u's, which reads t, is not) */
	{"empty_rows", "in x: f32[B, N]\nin i: i32[B, N]\nout s = sum(x)\nout m = mean(x)\nout k = mean(i)\n"
	               "out y = x - mean(x)\nout t = x * 2\nout u = sum(t)\n", 2, {{3, 0}, {0, 4}}},
	/* a mask broadcast over heads and queries (its row a division of the
	 * row's index), odd and aligned key lengths */
	{"mask4", "in x: f16[B, H, Q, K]\nin m: bool[B, 1, 1, K]\ns = where(m, x * 0.125, -30000.0)\n"
	          "e = exp(s - max(s))\nout y = e / sum(e)\n", 4, {{2, 3, 5, 37}, {3, 2, 2, 64}}},
	/* rows of rank 3, per-row outputs, a per-row input, several reductions in a pass */
	{"rank3", "in x: f32[A, B, N]\nin r: f32[A, B, 1]\nmu = mean(x)\nv = mean(x * x) - mu * mu\n"
	          "out y = (x - mu) * rsqrt(v + 1e-5) + r\nout m = max(x) + r\nout v2 = v\n", 3, {{2, 3, 17}, {1, 2, 64}}},
	/* chains of dependent reductions (four passes) */
	{"chain", "in x: f32[B, N]\na = x - max(x)\nb = a * sum(exp(a))\nc = b - mean(b)\nout y = c / sum(c * c)\n", 2,
	 {{3, 29}, {2, 128}}},
	/* a derived value worth caching, stored in the first pass too */
	{"cache_derived", "in x: f32[B, N]\nin b: f32[N]\nh = gelu_tanh(x + b)\nout hh = h\nmu = mean(h)\n"
	                  "out y = (h - mu) * rsqrt(mean((h - mu) * (h - mu)) + 1e-5)\n", 2, {{3, 37}, {2, 64}}},
	/* bool values cached across passes, and bool outputs */
	{"bools", "in x: f32[B, N]\nk = x > 0\nout c = sum(k)\nout y = where(k, x, 0) / (sum(where(k, x, 0)) + 1)\n"
	          "out z = k && (x < mean(x))\n", 2, {{3, 37}, {2, 64}}},
	/* inputs only the epilogue reads (a modulated rmsnorm): the masked
	 * class copies s's and h's next rows in the epilogue, chunk by chunk,
	 * into the places it has just read; g (a row a batch, not aligned with
	 * x's rows) it loads there */
	{"modulated", "in x: bf16[B, T, C]\nin s: bf16[B, T, C]\nin h: bf16[B, T, C]\nin g: bf16[B, 1, C]\n"
	              "out y = bf16(x * rsqrt(mean(x * x) + 1e-5) * (1 + s) + h + g)\n", 3, {{2, 5, 37}, {3, 3, 64}}},
	/* and read first by a middle pass (q): three groups of copies a row */
	{"late_passes", "in x: bf16[R, C]\nin q: bf16[R, C]\nin s: bf16[R, C]\nxc = x - mean(x)\n"
	                "out y = bf16(xc * rsqrt(mean(xc * xc * (q * q + 0.5)) + 1e-5) + s)\n", 2, {{7, 37}, {5, 64}}},
	/* one row over everything (rank-1 input) */
	{"vector_rows", "in x: f32[N]\nout s = sum(x)\nout y = x / max(x)\n", 1, {{1000}, {4096}}},
	/* pointwise kernels of one, two and three streams (f32 and f16) at sizes
	 * giving several grid-stride iterations and a partial chunk on the small grid */
	{"grid_stride", "in x: f32[N]\nin y: f32[N]\nin h: f16[N]\nout a = gelu_tanh(x)\nout b = x * y + 1\n"
	           "out c = f16(h * 2)\n", 1, {{2999}, {4100}}},
	/* broadcast operands reading the same elements (w and b: one offset a
	 * chunk) beside one of its own (r), chunks crossing a row's end */
	{"shared_offsets", "in x: f32[T, C]\nin w: bf16[C]\nin b: f32[C]\nin r: f32[T, 1]\n"
	                   "out y = tanh(0.5 * x) * w + b + r\nout z = bf16(x * w - b)\n", 2, {{3, 37}, {5, 64}}},
	/* chunks of 8 halves crossing the end of a broadcast operand's run once
	 * (the next run's offset once a chunk): w's run of B * C elements, v's
	 * of C = 11 and s's per-row value (one element a run of C); and runs
	 * shorter than a chunk (v's and s's at C = 5: element by element) */
	{"crossing_runs", "in x: f16[A, B, C]\nin w: f16[B, C]\nin v: f32[A, 1, C]\nin s: bf16[A, B, 1]\n"
	                  "out y = f16(x * w + v)\nout z = f16(x * s)\n", 3, {{2, 3, 5}, {3, 5, 11}}},
	/* casts to halves that only their stores round (codegen's store casts):
	 * per element and per row, beside a cast another node reads (h) and
	 * casts from f64 and i32, which keep their rounding */
	{"casts_stored", "in x: f32[R, N]\nin d: f64[R, N]\nin i: i32[R, N]\nin w: bf16[N]\nh = f16(x * 2)\n"
	                 "out y = bf16(x * rsqrt(mean(x * x) + 1) * w)\nout s = f16(sum(x))\nout z = h + 1\nout g = h\n"
	                 "out q = bf16(d * 3)\nout k = f16(i)\n", 2, {{3, 37}, {4, 64}}},
	/* a scalar output, a constant output, an input as output */
	{"odd_outputs", "in x: f32[N]\nin s: f32\nout a = s * 2\nout b = x\nout c = 3.5\nout d = x + s\n", 1,
	 {{5}, {64}}},
};

START_TEST(program_runs)
{
	check_program(programs[_i].name, programs[_i].src, 2, programs[_i].ndims, &programs[_i].sizes[0][0]);
}
END_TEST

/* The split schedule really exchanges partial results: rows long enough
 * for several chunks a thread in each of three segments. */
START_TEST(split_long_rows)
{
	int64_t sizes[2][2] = {{2, 3000}, {3, 2051}};
	check_program("split", "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\nout s = sum(x)\n", 2, 2,
	              &sizes[0][0]);
}
END_TEST

/* Rows long enough for several groups of chunks a thread in the stream
 * entry (row_loop.c's group_chunks: f32), with an input stored as it is (its
 * group's chunk, not the first), and of halves (its ring, row_ring.c). */
START_TEST(stream_groups)
{
	int64_t sizes[2][2] = {{2, 40001}, {1, 70000}};
	check_program("groups", "in x: f32[B, N]\nout c = x\nout y = x / sum(x)\n", 2, 2, &sizes[0][0]);
	check_program("groups_bf16", "in x: bf16[B, N]\nout c = x\nout y = bf16(x / sum(x))\n", 2, 2, &sizes[0][0]);
}
END_TEST

/* Rows long enough for many turns of the stream entry's ring (row_ring.c,
 * kernels of halves) a thread, with an input stored as it is, a column
 * operand of f32 beside rows of bf16 (two pieces a chunk), a mask of bools
 * (loaded where it is used) and rows not a multiple of the chunk (the rows'
 * ends, and every chunk of a column operand not aligned like them, loaded
 * where used). */
START_TEST(stream_ring)
{
	int64_t sizes[2][2] = {{2, 40001}, {1, 70000}};
	check_program("ring_f16", "in x: f16[B, N]\nout c = x\nout y = f16(x / sum(x))\n", 2, 2, &sizes[0][0]);
	check_program("ring_cols",
	              "in x: bf16[B, N]\nin w: f32[N]\nin r: bf16[B, N]\nin m: bool[B, N]\n"
	              "out y = bf16(where(m, x * rsqrt(mean(x * x) + 1e-6) * w + r, 0.0))\n",
	              2, 2, &sizes[0][0]);
}
END_TEST

/* The stream entry's online sums (row_plan.c's plan_online: sum(exp(u -
 * max(u))) in max(u)'s pass, sum((u - mean(u))^2) in mean(u)'s), over rows
 * whose maximum grows from -inf, from chunk to chunk, or stays -inf, rows
 * with +inf and NaN, and far from 0 (row 9): the results are the program's
 * as written (a row all -inf gives NaN, not the limit).
 * Three segments a row, several groups of chunks a thread; fused, under
 * the stream entry and the launch's choice. Loop index: the program. */
START_TEST(online_sums)
{
	static const char *const srcs[] = {
		"in x: %s[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n",
		"in x: %s[B, N]\nm = max(x)\nout y = m + log(sum(exp(x - m)))\nout z = x - m - log(mean(exp(x - m)))\n",
		"in x: %s[B, N]\ns = where(x > -2, x * 0.5, x)\ne = exp(s - max(s))\nout y = e / sum(e)\nout t = sum(e)\n",
		/* the variance's kind: a mean and the sums of squared deviations from it */
		"in x: %s[B, N]\nmu = mean(x)\nxc = x - mu\nv = mean(xc * xc)\nout y = xc * rsqrt(v + 1e-5)\nout v2 = v\n"
		"out s = sum(xc * xc)\n",
	};
	enum { B = 10, N = 3001 };
	static const fz_dtype ts[] = {FZ_F32, FZ_BF16};
	for (int ti = 0; ti < 2 && have_cxx; ti++) {
		char src[512];
		snprintf(src, sizeof src, srcs[_i], fz_dtype_name(ts[ti]));
		Tensor in = {.dtype = ts[ti], .rank = 2, .shape = {B, N}};
		ck_assert(tensor_alloc(&in));
		uint64_t z = 12345;
		for (int64_t r = 0; r < B; r++)
			for (int64_t j = 0; j < N; j++) {
				z = z * 6364136223846793005ull + 1442695040888963407ull;
				double v = (double)(z >> 11) / 9007199254740992.0 * 10 - 5;
				switch (r) {
				case 1: v = -INFINITY; break;                              /* all -inf: NaN */
				case 2: v = j == N - 7 ? v : -INFINITY; break;             /* one finite, in the last segment */
				case 3: v = j < N / 2 ? -INFINITY : v; break;              /* the maximum from -inf */
				case 4: v = j == N / 2 ? INFINITY : v; break;              /* +inf: NaN */
				case 5: v = j == N - 1 ? NAN : v; break;                   /* NaN */
				case 6: v = (double)j * 0.03 - 10; break;                  /* growing at every chunk */
				case 7: v = j % 5 ? 80 + v : -INFINITY; break;             /* exp(x) would overflow */
				case 8: v = (double)(N - j) * 0.03 - 10; break;            /* the first chunk's maximum */
				case 9: v = 3000 + v * 0.01; break;                        /* a mean far from 0 */
				}
				eval_store(ts[ti], in.data, r * N + j, (Scalar){.f = v});
			}
		PipeOptions opt = pipe_default_options();
		Compilation *c = pipe_new("online", src, strlen(src), &opt);
		ck_assert_msg(pipe_run(c) == FZ_OK, "%s", c->diag_text ? c->diag_text : "?");
		EmuModule m;
		emu_build(c, &m);
		const Sched scheds[] = {SCHED_SPLIT_STREAM, SCHED_AUTO};
		for (int si = 0; si < 2; si++) {
			Run run = {.c = c, .m = &m, .dims = (int64_t[2]){B, N}, .sched = scheds[si], .given = &in};
			snprintf(run.what, sizeof run.what, "online #%d %s (%s)", _i, fz_dtype_name(ts[ti]), sched_name[scheds[si]]);
			run_plan(&run);
		}
		emu_free(&m);
		pipe_free(c);
		tensor_free(&in);
	}
}
END_TEST

/* Many short rows, as the launch's own choice stages them (TILE on the
 * emulator's device of two SMs: a tile a block on each), with column
 * operands (layernorm's weight and bias) and per-row outputs; the fourth
 * size's rows are aligned and short enough for a thread (the direct
 * entries' vector loads), rmsnorm's and softmax_bf16's one vector (the
 * entries that stage nothing, `_tile1n<V>`: stored where they lie, as one
 * vector where aligned and element by element where not); rmsnorm's 3
 * stages nothing either, softmax_bf16's 7 does. The fifth are fewer rows
 * than fill the device, a thread's each all the same (CG_RULE_TILE_FEW),
 * the last block's rows partly past the end (a thread leaves the loop).
 * The sixth are longer rows that the stage holds in half the chunks of the
 * register path's masked class (CG_RULE_TILE_SHIFT: 255 f32, 64 chunks in
 * 16 threads; 511 and 509 halves, 64 in 32 threads of 2), an odd number of
 * them. The seventh are as long, not a multiple of V, and many enough for
 * the register path's lane class (a warp a row, an element at a time); the
 * eighth too, at its ends: 17 to 32 elements a lane (513 to 1024), and 3
 * elements a lane of f32 rows in kernels that write rows (layernorm's and
 * rmsnorm's third size, 127, is that class's 4, no longer staged). */
START_TEST(staged_rows)
{
	static const struct {
		const char *file;
		int64_t sizes[8][2];
	} cases[] = {
		{"examples/layernorm.fz",
		 {{300, 31}, {600, 7}, {70, 127}, {600, 16}, {100, 5}, {41, 255}, {67, 131}, {66, 1001}}},
		{"examples/layernorm_bf16.fz",
		 {{600, 31}, {600, 7}, {70, 127}, {600, 16}, {200, 5}, {21, 511}, {65, 257}, {67, 999}}},
		{"examples/rmsnorm.fz", {{300, 31}, {600, 3}, {70, 127}, {900, 4}, {100, 2}, {37, 255}, {66, 509}, {65, 93}}},
		{"examples/logsumexp.fz", {{300, 31}, {600, 7}, {70, 127}, {600, 8}, {100, 3}, {35, 254}, {69, 301}, {68, 1001}}},
		{"examples/softmax_bf16.fz",
		 {{300, 31}, {600, 7}, {1000, 8}, {600, 8}, {200, 6}, {19, 509}, {65, 506}, {66, 513}}},
	};
	check_program(cases[_i].file, read_text(cases[_i].file), 8, 2, &cases[_i].sizes[0][0]);
}
END_TEST

/* Many rows of 2 and of 4 halves (two adjacent rows a thread, each
 * stream's span of the pair moved as one vector: row_tile_span; of 2
 * halves four) and of 3 (a pair a block's rows apart), odd in number, so
 * that the last pair (or four) is one row;
 * as the launch chooses (the schedules that force a path would not take
 * these entries), aligned, misaligned (the spans element by element) and
 * with NaN. */
START_TEST(paired_rows)
{
	static const struct {
		const char *file, *src;
		int64_t sizes[2][2];
	} cases[] = {
		{"examples/layernorm.fz", NULL, {{1001, 2}, {1003, 3}}},
		{"examples/layernorm_bf16.fz", NULL, {{1001, 2}, {1001, 4}}},
		{"examples/rmsnorm.fz", NULL, {{1001, 2}, {2049, 2}}},
		{"examples/logsumexp.fz", NULL, {{1001, 2}, {513, 2}}},
		{"examples/softmax_bf16.fz", NULL, {{1501, 2}, {1001, 4}}},
		/* streams of three sizes: spans of 4 to 32 bytes (bool, f16, f32);
		 * the f32 and bool outputs do not read mean(s), which per op is
		 * rounded to f16 where it is stored */
		{"mixed", "in x: f16[B, N]\nin k: bool[B, N]\ns = where(k, x, 0.0)\nout y = s - mean(s)\n"
		          "out w = f32(x) * 0.5\nout z = k && (x > 0.0)\n", {{1001, 2}, {1001, 4}}},
	};
	const char *src = cases[_i].src ? cases[_i].src : read_text(cases[_i].file);
	check_scheds(cases[_i].file, src, 2, 2, &cases[_i].sizes[0][0], 1);
}
END_TEST

/* The line entries (launch_rules.c's line_rule) forced over rows of one
 * and two 128-byte lines and lengths between: 8 threads a row of one chunk
 * (two for f32 rows of more than a line), 16 of one chunk for rows of more
 * than a line of halves (fz_reduce_line's shuffle more), in kernels whose
 * other aligned entries prefetch (a fused add + RMSNorm of halves, two
 * outputs, its weight held) or not, with NaN rows too; each run takes the
 * line entry and matches the interpreter. */
START_TEST(line_rows)
{
	static const struct {
		const char *name, *src;
		int64_t lens[4];
	} cases[] = {
		{"softmax_f16", "in x: f16[B, N]\ne = exp(x - max(x))\nout y = f16(e / sum(e))\n", {64, 72, 120, 128}},
		{"add_rmsnorm_bf16", "in x: bf16[B, N]\nin r: bf16[B, N]\nin w: bf16[N]\nout h = bf16(x + r)\n"
		                     "out y = bf16(h * rsqrt(mean(h * h) + 1e-6) * w)\n", {8, 64, 96, 128}},
		{"rmsnorm", "in x: f32[B, N]\nin w: f32[N]\nout y = x * rsqrt(mean(x * x) + 1e-6) * w\n", {4, 32, 36, 64}},
	};
	if (!have_cxx)
		return;
	PipeOptions opt = pipe_default_options();
	Compilation *c = pipe_new(cases[_i].name, cases[_i].src, strlen(cases[_i].src), &opt);
	ck_assert_msg(pipe_run(c) == FZ_OK, "%s: %s", cases[_i].name, c->diag_text);
	ck_assert(c->module.kinfo[0].reg_line);
	EmuModule m;
	emu_build(c, &m);
	for (int li = 0; li < 4; li++)
		for (int nans = 0; nans < 2; nans++) {
			int64_t dims[2] = {5, cases[_i].lens[li]};
			Run run = {.c = c, .m = &m, .dims = dims, .sched = SCHED_LINE, .nans = nans};
			snprintf(run.what, sizeof run.what, "%s (B=5 N=%lld, line%s)", cases[_i].name, (long long)dims[1],
			         nans ? ", NaN" : "");
			ck_assert_msg(run_plan(&run) == 1, "%s: not the line entry", run.what);
		}
	emu_free(&m);
	pipe_free(c);
}
END_TEST

/* ---- the launch plan and the kernel agree ----------------------------------------------- */

/* Every path of these row kernels, over row lengths around every chunk and
 * group boundary, runs inside what its launch plan gave it: the emulator's
 * shared memory and the harness's workspaces and tensors end where an
 * inaccessible page begins (a fault fails the test, saying so), the
 * workspace is garbage beyond what the plan says to zero, and the outputs
 * match the interpreter. Kernels whose sizes a forced path cannot take run
 * as cg_launch chooses; each path must have run at least once. */
static const struct {
	const char *name, *src;
} bounds_programs[] = {
	/* one slot, f32 chunks of 4 */
	{"softmax", "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n"},
	/* two slots (x as f16, xc as f32), chunks of 8, the register path prefetching */
	{"layernorm_f16", "in x: f16[B, N]\nin w: f16[N]\nmu = mean(x)\nxc = x - mu\n"
	                  "out y = f16(xc * rsqrt(mean(xc * xc) + 1e-5) * w)\n"},
	/* halves, one column operand in one pass: the prefetching entries of
	 * 4, 2 and 1 chunks and the line entry (8 or 16 threads a row, held w) */
	{"rmsnorm_f16", "in x: f16[B, N]\nin w: f16[N]\nout y = f16(x * rsqrt(mean(x * x) + 1e-5) * w)\n"},
	/* long math, three streams, two leaves prefetched, a per-row output */
	{"heavy", "in x: f32[B, N]\nin b: f32[N]\nin r: f32[B, N]\nh = gelu_tanh(x + b) + r\nmu = mean(h)\n"
	          "hc = h - mu\nout y = hc * rsqrt(mean(hc * hc) + 1e-5)\nout m = mu\n"},
	/* slots of three sizes (f64, f32, bool) alive at once */
	{"slots", "in x: f64[B, N]\nin y: f32[B, N]\nk = y > 0\na = x * 2\nb = y * 3\nout z = a * mean(a)\n"
	          "out u = b * mean(b)\nout v = k && (mean(b) > -100.0)\n"},
	/* one pass, nothing cached */
	{"rowsum", "in x: f32[B, N]\nout s = sum(x * x)\n"},
	/* lean, with column operands read after the first pass: the register
	 * path's entry that holds them (row_plan_reg.c's row_plan_hold), two and one,
	 * and one read in the first pass too */
	{"layernorm", "in x: f32[B, N]\nin w: f32[N]\nin b: f32[N]\nmu = mean(x)\nxc = x - mu\n"
	              "out y = xc * rsqrt(mean(xc * xc) + 1e-5) * w + b\n"},
	{"rmsnorm", "in x: f32[B, N]\nin w: f32[N]\nout y = x * rsqrt(mean(x * x) + 1e-5) * w\n"},
	{"weighted", "in x: f32[B, N]\nin w: f32[N]\nout y = x * w - mean(x * w) * w\n"},
};

START_TEST(plan_bounds)
{
	/* 20, 48, 96: aligned rows whose threads hold chunks past the row
	 * (row_chunk.c's row_skips_dead) */
	static const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 20, 31, 32, 33, 48, 63, 64, 65, 96, 97, 127, 128, 129,
	                               256, 257, 511, 513, 1000, 1001, 1024, 1031, 2048, 4100};
	static const int64_t rows[] = {1, 2, 3, 7, 100}; /* 100: several tiles a block (TILE) */
	if (!have_cxx)
		return;
	int ran[NSCHED] = {0};
	for (size_t pi = 0; pi < sizeof bounds_programs / sizeof bounds_programs[0]; pi++) {
		const char *src = bounds_programs[pi].src;
		PipeOptions opt = pipe_default_options();
		Compilation *c = pipe_new(bounds_programs[pi].name, src, strlen(src), &opt);
		ck_assert_msg(pipe_run(c) == FZ_OK, "%s: %s", bounds_programs[pi].name, c->diag_text);
		EmuModule m;
		emu_build(c, &m);
		for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
			for (int sched = 0; sched < NSCHED; sched++) {
				int64_t dims[2] = {rows[(li + (size_t)sched) % 5], lens[li]};
				Run run = {.c = c, .m = &m, .dims = dims, .sched = (Sched)sched, .misalign = (int)(li % 3)};
				snprintf(run.what, sizeof run.what, "%s (B=%lld N=%lld, %s%s)", bounds_programs[pi].name,
				         (long long)dims[0], (long long)dims[1], sched_name[sched],
				         run.misalign == 1 ? ", inputs misaligned" : run.misalign == 2 ? ", all misaligned" : "");
				ran[sched] += run_plan(&run);
			}
		emu_free(&m);
		pipe_free(c);
	}
	/* reg-narrow: the aligned rows of layernorm_f16 and rmsnorm_f16 alone
	 * (their entries' kernels); line: aligned rows of up to two lines;
	 * reg-held: the aligned class only, so aligned buffers only (a third of
	 * the runs: cg_launch_forced refuses it for misaligned buffers) */
	for (int s = 0; s < NSCHED; s++)
		ck_assert_msg(ran[s] > (s == SCHED_REGN || s == SCHED_LANE || s == SCHED_LINE ? 8 : s == SCHED_REGH ? 12 : 20),
		              "schedule %s ran %d kernels", sched_name[s], ran[s]);
}
END_TEST

/* ---- special values, bit for bit ------------------------------------------------------------ */

/* The generated code and the interpreter run the same texts (ir/sem.def)
 * and, here, the same libm: on NaN, infinities, signed zeros, denormals,
 * overflow and the ends of each op's domain they must agree bit for bit, in
 * every float dtype, fused and per op. Binary ops see every pair. */
static const double fvals[] = {
	NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.9, -0.9, 2.0, -3.0, 3.0, 6.0, -6.0, 20.0,
	20.5, -20.0, 88.8, -104.0, 710.0, 1e-40, -1e-40, 1e-310, 3.4028234663852886e38, -3.4028234663852886e38, 1e30,
	65504.0, 7.5e-5,
};
static const int64_t ivals[] = {0, 1, -1, 5, -8, 7, 31, 32, 33, 63, 64, 100, -100, INT32_MAX, INT32_MIN,
                                INT64_MAX, INT64_MIN};
enum { NF = sizeof fvals / sizeof fvals[0], NI = sizeof ivals / sizeof ivals[0] };

static const char *const float_unary[] = {
	"tan", "atan", "asin", "acos", "sinh", "cosh", "reciprocal", "sign", "trunc", "softplus", "mish", "hardswish",
	"hardsigmoid", "elu", "isfinite", "isnan", "isinf", "abs", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt",
	"sin", "tanh", "erf", "sigmoid", "relu", "silu", "gelu", "gelu_tanh", "floor", "ceil", "round",
};
static const char *const float_binary[] = {"atan2", "hypot", "logaddexp", "leaky_relu", "minimum", "maximum", "pow"};
static const char *const int_binary[] = {"&", "|", "^", "<<", ">>", "+", "-", "*", "/", "%"};

/* Inputs a (and b) of dtype t: every value, or every pair of them. */
static void special_inputs(fz_dtype t, bool pairs, Tensor *in)
{
	bool fl = dtype_is_float(t);
	int64_t k = fl ? NF : NI, n = pairs ? k * k : k;
	for (int j = 0; j < (pairs ? 2 : 1); j++) {
		in[j] = (Tensor){.dtype = t, .rank = 1, .shape = {n}};
		ck_assert(tensor_alloc(&in[j]));
		for (int64_t e = 0; e < n; e++) {
			int64_t v = pairs ? (j ? e % k : e / k) : e;
			Scalar s;
			if (fl)
				s.f = fvals[v];
			else
				s.i = t == FZ_BOOL ? ivals[v] & 1 : ivals[v];
			eval_store(t, in[j].data, e, s);
		}
	}
}

static void check_exact_dims(const char *name, const char *src, const Tensor *in, const int64_t *dims)
{
	if (!have_cxx)
		return;
	for (int fused = 1; fused >= 0; fused--) {
		PipeOptions opt = pipe_default_options();
		opt.fuse = fused;
		Compilation *c = pipe_new(name, src, strlen(src), &opt);
		ck_assert_ptr_nonnull(c);
		ck_assert_msg(pipe_run(c) == FZ_OK, "%s: %s", name, c->diag_text ? c->diag_text : "?");
		EmuModule m;
		emu_build(c, &m);
		Run run = {.c = c, .m = &m, .dims = dims, .sched = SCHED_AUTO, .given = in, .exact = true};
		snprintf(run.what, sizeof run.what, "%s (%s)", name, fused ? "fused" : "per-op");
		run_plan(&run);
		emu_free(&m);
		pipe_free(c);
	}
}

static void check_exact(const char *name, const char *src, const Tensor *in, int64_t n)
{
	check_exact_dims(name, src, in, (int64_t[1]){n});
}

/* Loop index: a float dtype (f32, f64, f16, bf16), one-argument ops, then
 * two-argument ones. */
START_TEST(special_values_float)
{
	static const fz_dtype ts[] = {FZ_F32, FZ_F64, FZ_F16, FZ_BF16};
	fz_dtype t = ts[_i / 2];
	bool pairs = _i % 2;
	const char *d = fz_dtype_name(t);
	char src[4096];
	size_t len = (size_t)snprintf(src, sizeof src, "in a: %s[N]\n%s", d, pairs ? "" : "");
	if (pairs) {
		len += (size_t)snprintf(src + len, sizeof src - len, "in b: %s[N]\n", d);
		for (size_t k = 0; k < sizeof float_binary / sizeof float_binary[0]; k++)
			len += (size_t)snprintf(src + len, sizeof src - len, "out y%zu = %s(a, b)\n", k, float_binary[k]);
	} else {
		for (size_t k = 0; k < sizeof float_unary / sizeof float_unary[0]; k++)
			len += (size_t)snprintf(src + len, sizeof src - len, "out y%zu = %s(a)\n", k, float_unary[k]);
	}
	Tensor in[2];
	special_inputs(t, pairs, in);
	check_exact(pairs ? "special2" : "special1", src, in, in[0].shape[0]);
	tensor_free(&in[0]);
	if (pairs)
		tensor_free(&in[1]);
}
END_TEST

/* Division by a value of the row (a / max(b): row kernels divide by the
 * row's reciprocal and correct the quotient, fz_divr) bit for bit against
 * IEEE division: every special value by every special value, then random
 * operands over the whole exponent range (denormals to near overflow). Loop
 * index: the storage dtype (f32, f16, bf16). */
START_TEST(row_division_exact)
{
	static const fz_dtype ts[] = {FZ_F32, FZ_F16, FZ_BF16};
	fz_dtype t = ts[_i];
	char src[256];
	snprintf(src, sizeof src, "in a: %s[R, N]\nin b: %s[R, N]\nout y = a / max(b)\n", fz_dtype_name(t),
	         fz_dtype_name(t));
	enum { NR = NF + 97, NC = NF + 203 };
	Tensor in[2];
	uint64_t z = 0x9e3779b97f4a7c15ull;
	for (int j = 0; j < 2; j++) {
		in[j] = (Tensor){.dtype = t, .rank = 2, .shape = {NR, NC}};
		ck_assert(tensor_alloc(&in[j]));
	}
	for (int64_t r = 0; r < NR; r++)
		for (int64_t col = 0; col < NC; col++) {
			z ^= z << 13, z ^= z >> 7, z ^= z << 17;
			/* random: a sign, a significand, an exponent of 2^-140 .. 2^140 */
			double rnd = ldexp((z & 1 ? -1.0 : 1.0) * (1.0 + (double)(z >> 11 & 0xfffff) / 0x100000),
			                   (int)(z >> 40 & 0xffff) % 281 - 140);
			Scalar sa = {.f = col < NF ? fvals[col] : rnd};
			Scalar sb = {.f = col > 0 ? -INFINITY : r < NF ? fvals[r] : rnd}; /* the row's max: its first */
			eval_store(t, in[0].data, r * NC + col, sa);
			eval_store(t, in[1].data, r * NC + col, sb);
		}
	check_exact_dims("row_division", src, in, (int64_t[2]){NR, NC});
	tensor_free(&in[0]);
	tensor_free(&in[1]);
}
END_TEST

/* The bitwise operators and integer arithmetic on every pair of values
 * (shift counts negative, within and past the width), i32 and i64; the
 * logical ones on bools. */
START_TEST(special_values_int)
{
	static const fz_dtype ts[] = {FZ_I32, FZ_I64, FZ_BOOL};
	fz_dtype t = ts[_i];
	char src[4096];
	size_t len = (size_t)snprintf(src, sizeof src, "in a: %s[N]\nin b: %s[N]\nout n = ~a\n", fz_dtype_name(t),
	                              fz_dtype_name(t));
	for (size_t k = 0; k < sizeof int_binary / sizeof int_binary[0]; k++) {
		bool logical = int_binary[k][0] == '&' || int_binary[k][0] == '|' || int_binary[k][0] == '^';
		if (t != FZ_BOOL || logical)
			len += (size_t)snprintf(src + len, sizeof src - len, "out y%zu = a %s b\n", k, int_binary[k]);
	}
	Tensor in[2];
	if (t == FZ_I32) { /* ivals that fit */
		special_inputs(FZ_I64, true, in);
		for (int j = 0; j < 2; j++) {
			Tensor w = {.dtype = FZ_I32, .rank = 1, .shape = {in[j].shape[0]}};
			ck_assert(tensor_alloc(&w));
			for (int64_t e = 0; e < tensor_numel(&w); e++)
				eval_store(FZ_I32, w.data, e, eval_load(FZ_I64, in[j].data, e));
			tensor_free(&in[j]);
			in[j] = w;
		}
	} else {
		special_inputs(t, true, in);
	}
	check_exact("special_int", src, in, in[0].shape[0]);
	tensor_free(&in[0]);
	tensor_free(&in[1]);
}
END_TEST

static Suite *emu_suite(void)
{
	Suite *s = suite_create("codegen_emu");
	emu_setup("test_codegen_emu");
	TCase *t = tcase_create("examples");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, example_runs, 0, (int)(sizeof examples / sizeof examples[0]));
	suite_add_tcase(s, t);
	t = tcase_create("programs");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, program_runs, 0, (int)(sizeof programs / sizeof programs[0]));
	suite_add_tcase(s, t);
	/* the paths' own programs, in tcases of their own: each tcase is a ctest
	 * test and a gpu-check step, and "programs" with them took 433 s */
	t = tcase_create("paths");
	tcase_set_timeout(t, 300);
	tcase_add_test(t, split_long_rows);
	tcase_add_test(t, stream_groups);
	tcase_add_test(t, stream_ring);
	tcase_add_loop_test(t, online_sums, 0, 4);
	tcase_add_loop_test(t, line_rows, 0, 3);
	suite_add_tcase(s, t);
	t = tcase_create("staged_norms"); /* about 70 s a program */
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, staged_rows, 0, 3);
	suite_add_tcase(s, t);
	t = tcase_create("staged_exp");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, staged_rows, 3, 5);
	suite_add_tcase(s, t);
	t = tcase_create("paired");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, paired_rows, 0, 6);
	suite_add_tcase(s, t);
	t = tcase_create("bounds");
	tcase_set_timeout(t, 600);
	tcase_add_test(t, plan_bounds);
	suite_add_tcase(s, t);
	t = tcase_create("special_values");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, special_values_float, 0, 8);
	tcase_add_loop_test(t, special_values_int, 0, 3);
	tcase_add_loop_test(t, row_division_exact, 0, 3);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	int rc = tu_run(emu_suite());
	emu_cleanup();
	return rc;
}
