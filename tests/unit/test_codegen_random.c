/*
 * test_codegen_random.c: random programs (tests/progen.h) through the code
 * generator, run on the host emulator against the interpreter.
 *
 * Every construct of the language in combinations nobody wrote by hand,
 * fused and per op, each row kernel under the launch's own choice and every
 * path forced: the register path (where the rows fit it) and its masked
 * class (from one thread, four and three warps a row), part of a warp a
 * row, a block a row with the row cache in the workspace, split rows with
 * the cache in the workspace, and rows staged a tile at a time (a thread a
 * row, and four). The
 * comparison uses the generator's own error analysis for each output.
 * Without a C++ compiler the test passes with a note (see emu_harness.h).
 */
#include "emu/emu_harness.h"

enum { NRANDOM = 40 };

START_TEST(random_program_runs)
{
	if (!have_cxx)
		return;
	uint64_t seed = 0x5eed0000u + (uint64_t)_i;
	ProgenOptions opt = progen_default_options(PROGEN_TINY);
	ProgenInfo info;
	char *src = progen_program(seed, &opt, &info);
	ck_assert_ptr_nonnull(src);
	for (int fused = 1; fused >= 0; fused--) {
		PipeOptions po = pipe_default_options();
		po.fuse = fused;
		Compilation *c = pipe_new("random.fz", src, strlen(src), &po);
		ck_assert_ptr_nonnull(c);
		ck_assert_msg(pipe_run(c) == FZ_OK, "seed %llu: %s\n%s", (unsigned long long)seed,
		              c->diag_text ? c->diag_text : "?", src);
		int64_t dims[PROGEN_MAX_DIMS + 1];
		char err[256];
		ck_assert_msg(progen_dims(&info, &c->graph, dims, err, sizeof err), "%s", err);
		if (progen_expect(&c->graph, dims) == FZ_OK) {
			EmuModule m;
			emu_build(c, &m);
			static const Sched scheds[] = {SCHED_AUTO,          SCHED_REG,          SCHED_REGM,  SCHED_REGM1,
			                               SCHED_REGM96,        SCHED_WARP4,        SCHED_LOOP,  SCHED_SPLIT_NOCACHE,
			                               SCHED_SPLIT_STREAM, SCHED_TILE1,        SCHED_TILE4, SCHED_REGH};
			for (int s = 0; s < (int)(sizeof scheds / sizeof scheds[0]); s++) {
				Run run = {.c = c, .m = &m, .dims = dims, .sched = scheds[s], .pg = &info};
				snprintf(run.what, sizeof run.what, "random seed %llu (%s, %s)", (unsigned long long)seed,
				         fused ? "fused" : "per-op", sched_name[scheds[s]]);
				run_plan(&run);
			}
			emu_free(&m);
		}
		pipe_free(c);
	}
	free(src);
}
END_TEST

static Suite *random_suite(void)
{
	Suite *s = suite_create("codegen_random");
	emu_setup("test_codegen_random");
	TCase *t = tcase_create("random");
	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, random_program_runs, 0, NRANDOM);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	int rc = tu_run(random_suite());
	emu_cleanup();
	return rc;
}
