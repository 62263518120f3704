/* Hostile and broken run-time input: `fusec run --cpu` and `fusec cache`
 * facing .npy files that lie about their size, shape or dtype, missing and
 * odd files (directories, devices, symlink loops, unreadable ones), output
 * and cache directories that cannot be written (read-only as another user,
 * since root ignores permissions; under /proc; under a regular file), a full
 * disk (simulated with RLIMIT_FSIZE: writes past the limit fail with EFBIG,
 * as they fail with ENOSPC on a full disk), damaged cache entries, and
 * processes writing the same outputs at once.
 *
 * Every case asserts the same three things: fusec does not crash (it exits,
 * it is not killed by a signal), it says what went wrong (exact messages),
 * and it loses or half-writes nothing (no partial or temporary files, an
 * earlier good file untouched).
 *
 * fusec is the binary next to the tests (build/tests/.. /fusec) or $FUSEC_BIN;
 * the library's own cache behaviours are in test_cache.c, the .npy reader's
 * messages in test_npy.c: here they are seen end to end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cache.h"
#include "testutil.h"

enum { NOBODY = 65534 };

static char tmpdir[256];
static char out_buf[1 << 16], err_buf[1 << 16];

/* ---- helpers ----------------------------------------------------------------------------- */

static const char *fusec_bin(void)
{
	static char buf[PATH_MAX + 16];
	const char *env = getenv("FUSEC_BIN");
	if (env && *env)
		return env;
	ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
	ck_assert_int_gt(n, 0);
	buf[n] = 0;
	strcpy(strrchr(buf, '/'), "/../fusec"); /* build/tests/test_hostile -> build/fusec */
	return buf;
}

static void rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[PATH_MAX];
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			chmod(path, 0700);
			rm_rf(path);
		} else {
			unlink(path);
		}
	}
	closedir(d);
	rmdir(dir);
}

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/fusec-test-hostile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(chmod(tmpdir, 0755), 0); /* NOBODY may enter, not write */
	ck_assert_int_eq(chdir(tmpdir), 0);
}

static void teardown(void)
{
	if (chdir("/") != 0)
		return;
	rm_rf(tmpdir);
}

static void write_file(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(name, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *name, const char *text) { write_file(name, text, strlen(text)); }

static size_t read_file(const char *name, char *buf, size_t cap)
{
	FILE *f = fopen(name, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", name);
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* A .npy v1 file with header dict `dict` (padded so the data is 64-byte
 * aligned, as NumPy writes it) and `data_bytes` bytes of data. */
static void write_npy(const char *name, const char *dict, size_t data_bytes)
{
	char buf[4096];
	size_t hl = strlen(dict) + 1;
	size_t pad = (64 - (10 + hl) % 64) % 64;
	ck_assert_uint_lt(10 + hl + pad + data_bytes, sizeof buf);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)((hl + pad) & 0xff);
	buf[9] = (char)((hl + pad) >> 8);
	memcpy(buf + 10, dict, hl - 1);
	memset(buf + 10 + hl - 1, ' ', pad);
	buf[10 + hl - 1 + pad] = '\n';
	for (size_t i = 0; i < data_bytes; i++)
		buf[10 + hl + pad + i] = (char)i;
	write_file(name, buf, 10 + hl + pad + data_bytes);
}

/* Names in a directory, sorted, space-separated ("" if empty or missing). */
static const char *listing(const char *dir)
{
	static char buf[8192];
	char names[128][128];
	int n = 0;
	buf[0] = 0;
	DIR *d = opendir(dir);
	if (!d)
		return buf;
	struct dirent *de;
	while ((de = readdir(d)) != NULL && n < 128)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			snprintf(names[n++], sizeof names[0], "%.120s", de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	for (int i = 0; i < n; i++) {
		strcat(buf, i ? " " : "");
		strcat(buf, names[i]);
	}
	return buf;
}

/* How the child is set up before it runs fusec. */
typedef struct Child {
	uid_t uid;          /* run as this user (0: stay root) */
	rlim_t fsize;       /* RLIMIT_FSIZE in bytes (0: none) */
	const char *cache;  /* FUSEC_CACHE_DIR (NULL: caching off) */
	const char *stdin_path;  /* standard input from this file (NULL: inherited) */
	const char *stdout_path; /* standard output to this file (NULL: into out_buf) */
} Child;

static void slurp(int fd, char *buf, size_t cap)
{
	ck_assert(lseek(fd, 0, SEEK_SET) == 0);
	ssize_t n = read(fd, buf, cap - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
}

/* Run fusec with args (NULL-terminated) in tmpdir, stdout and stderr into
 * out_buf and err_buf; the exit status. A signal is a test failure. */
static int run_as(const Child *ch, const char *const *args)
{
	char out_path[] = "/tmp/fusec-hostile-out-XXXXXX", err_path[] = "/tmp/fusec-hostile-err-XXXXXX";
	int fo = mkstemp(out_path), fe = mkstemp(err_path);
	ck_assert(fo >= 0 && fe >= 0);
	unlink(out_path);
	unlink(err_path);
	const char *argv[64] = {fusec_bin()};
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		int fd;
		if (ch && ch->stdout_path && ((fd = open(ch->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
		                              dup2(fd, 1) < 0))
			_exit(122);
		if (ch && ch->stdin_path && ((fd = open(ch->stdin_path, O_RDONLY)) < 0 || dup2(fd, 0) < 0))
			_exit(123);
		setenv("FUSEC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
		if (ch && ch->cache)
			setenv("FUSEC_CACHE_DIR", ch->cache, 1);
		else
			setenv("FUSEC_CACHE", "0", 1);
		if (ch && ch->fsize) {
			signal(SIGXFSZ, SIG_IGN); /* so writes fail with EFBIG instead */
			struct rlimit rl = {ch->fsize, ch->fsize};
			if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
				_exit(120);
		}
		if (ch && ch->uid && (setgid(ch->uid) != 0 || setuid(ch->uid) != 0))
			_exit(121);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	slurp(fo, out_buf, sizeof out_buf);
	slurp(fe, err_buf, sizeof err_buf);
	ck_assert_msg(WIFEXITED(status), "fusec was killed by signal %d; stderr: %s", WTERMSIG(status), err_buf);
	ck_assert_msg(WEXITSTATUS(status) < 120, "the child could not be set up (%d)", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

#define RUN(...) run_as(NULL, (const char *const[]){__VA_ARGS__, NULL})
#define RUN_AS(ch, ...) run_as((ch), (const char *const[]){__VA_ARGS__, NULL})

static bool root(void) { return geteuid() == 0; }

/* ---- .npy inputs that lie ------------------------------------------------------------------- */

static const char scale_fz[] = "in x: f32[N]\nout y = x * 2\n";

/* fusec run scale.fz --cpu --in x=FILE fails with exactly `msg` and writes nothing. */
static void input_refused(const char *file, const char *msg)
{
	char in[PATH_MAX];
	snprintf(in, sizeof in, "x=%s", file);
	ck_assert_int_eq(RUN("run", "scale.fz", "--cpu", "--in", in, "--out-dir", "out"), 1);
	ck_assert_str_eq(err_buf, msg);
	ck_assert_str_eq(out_buf, "");
	ck_assert_str_eq(listing("out"), "");
}

START_TEST(npy_lies)
{
	write_text("scale.fz", scale_fz);
	/* the header claims 4 TiB: refused from the file size, nothing allocated */
	write_npy("huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", 8);
	input_refused("huge.npy", "fusec: input 'x': huge.npy: data size does not match the header: expected "
	                          "4398046511104 bytes for f32[1099511627776], got 8\n");
	/* a product of dims past 2^63 */
	write_npy("over.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 8);
	input_refused("over.npy", "fusec: input 'x': over.npy: shape of f32[4294967296, 4294967296] is too large\n");
	/* cut in the middle of the data, or with bytes after it */
	write_npy("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 37);
	input_refused("short.npy", "fusec: input 'x': short.npy: data size does not match the header: expected 40 "
	                           "bytes for f32[10], got 37\n");
	write_npy("long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 13);
	input_refused("long.npy", "fusec: input 'x': long.npy: data size does not match the header: expected 12 "
	                          "bytes for f32[3], got 13\n");
	/* a header length past the end of the file */
	write_file("hlen.npy", "\x93NUMPY\x01\x00\xff\x7f{'descr': '<f4'", 25);
	input_refused("hlen.npy", "fusec: input 'x': hlen.npy: truncated header\n");
	/* the right size for another dtype: the dtype is checked against the program */
	write_npy("f64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16);
	input_refused("f64.npy", "fusec: input 'x': f64.npy holds f64[2], but the input is f32 (save it with "
	                         ".astype(np.float32))\n");
	write_npy("i32.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", 16);
	input_refused("i32.npy", "fusec: input 'x': i32.npy holds i32[4], but the input is f32\n");
	/* the right bytes in another shape */
	write_npy("rank2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 16);
	input_refused("rank2.npy", "fusec: input 'x': expected f32[N], got f32[2, 2]\n");
	write_npy("scalar.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
	input_refused("scalar.npy", "fusec: input 'x': expected f32[N], got f32\n");
	/* another byte order or layout is read (converted); its shape is still checked */
	write_npy("fortran.npy", "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
	input_refused("fortran.npy", "fusec: input 'x': expected f32[N], got f32[2, 2]\n");
}
END_TEST

START_TEST(npy_shapes_disagree)
{
	/* two arrays that each fit their declaration but not each other */
	write_text("add.fz", "in a: f32[N]\nin b: f32[N]\nout y = a + b\n");
	write_npy("a.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12);
	write_npy("b.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
	ck_assert_int_eq(RUN("run", "add.fz", "--cpu", "--in", "a=a.npy", "--in", "b=b.npy", "--out-dir", "out"), 1);
	ck_assert_str_eq(err_buf, "fusec: input 'b': expected f32[N] with N = 3, got f32[4]\n");
	ck_assert_str_eq(listing("out"), "");
	/* and a --dim that disagrees with an array */
	ck_assert_int_eq(RUN("run", "add.fz", "--cpu", "--in", "a=a.npy", "--dim", "N=5", "--out-dir", "out"), 1);
	ck_assert_str_eq(err_buf, "fusec: input 'a': expected f32[N] with N = 5, got f32[3]\n");
	ck_assert_str_eq(listing("out"), "");
}
END_TEST

/* ---- missing and odd files -------------------------------------------------------------------- */

START_TEST(odd_input_files)
{
	write_text("scale.fz", scale_fz);
	ck_assert_int_eq(mkdir("adir", 0755), 0);
	ck_assert_int_eq(symlink("loop", "loop"), 0);
	input_refused("nothere.npy", "fusec: input 'x': nothere.npy: cannot open: No such file or directory\n");
	input_refused("adir", "fusec: input 'x': adir: cannot open: Is a directory\n");
	input_refused("/dev/null", "fusec: input 'x': /dev/null: not a regular file (a character device)\n");
	input_refused("/dev/zero", "fusec: input 'x': /dev/zero: not a regular file (a character device)\n");
	/* a FIFO nobody writes: refused at once, never waited on */
	ck_assert_int_eq(mkfifo("fifo.npy", 0600), 0);
	input_refused("fifo.npy", "fusec: input 'x': fifo.npy: not a regular file (a FIFO)\n");
	input_refused("loop", "fusec: input 'x': loop: cannot open: Too many levels of symbolic links\n");
	input_refused("scale.fz/x.npy", "fusec: input 'x': scale.fz/x.npy: cannot open: Not a directory\n");
	if (root()) {
		/* a file its reader may not open */
		write_npy("secret.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
		ck_assert_int_eq(chmod("secret.npy", 0600), 0);
		ck_assert_int_eq(mkdir("pub", 0777), 0);
		Child nobody = {.uid = NOBODY};
		ck_assert_int_eq(RUN_AS(&nobody, "run", "scale.fz", "--cpu", "--in", "x=secret.npy", "--out-dir", "pub"), 1);
		ck_assert_str_eq(err_buf, "fusec: input 'x': secret.npy: cannot open: Permission denied\n");
		ck_assert_str_eq(listing("pub"), "");
	}
}
END_TEST

START_TEST(odd_program_files)
{
	ck_assert_int_eq(mkdir("adir.fz", 0755), 0);
	ck_assert_int_eq(RUN("run", "adir.fz", "--cpu"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read adir.fz: Is a directory\n");
	ck_assert_int_eq(RUN("--emit=ir", "adir.fz"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read adir.fz: Is a directory\n");
	/* a program must be a regular file: devices and FIFOs are refused before
	 * a byte is read (a FIFO with no writer used to hang) */
	ck_assert_int_eq(RUN("--emit=ir", "/dev/null"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read /dev/null: not a regular file (a character device)\n");
	ck_assert_int_eq(mkfifo("fifo.fz", 0600), 0);
	ck_assert_int_eq(RUN("--emit=ir", "fifo.fz"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read fifo.fz: not a regular file (a FIFO)\n");
	ck_assert_int_eq(RUN("run", "fifo.fz", "--cpu"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read fifo.fz: not a regular file (a FIFO)\n");
	/* standard input is read as it comes; an endless one up to twice the
	 * limit, then refused by size */
	Child zero = {.stdin_path = "/dev/zero"};
	ck_assert_int_eq(RUN_AS(&zero, "--emit=ir", "-"), 1);
	ck_assert_str_eq(err_buf, "<stdin>: error: program is 33554433 bytes; the limit is 16777216 bytes\n");
	write_text("prog.fz", scale_fz);
	Child in = {.stdin_path = "prog.fz"};
	ck_assert_int_eq(RUN_AS(&in, "--emit=ir", "-"), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "# program stdin"));
	/* binary garbage: the first bad byte, shown as '?' */
	write_file("bin.fz", "in x: f32\n\x7f\x45\x4c\x46\x02\x01\x01", 17);
	ck_assert_int_eq(RUN("--emit=cuda", "bin.fz"), 1);
	ck_assert_str_eq(err_buf, "bin.fz:2:1: error: unexpected byte 0x7F (a control character)\n"
	                          "?ELF???\n^\n");
	ck_assert_str_eq(out_buf, "");
}
END_TEST

/* ---- output directories that cannot be written ------------------------------------------------- */

START_TEST(unwritable_output_dirs)
{
	write_text("scale.fz", scale_fz);
	write_text("afile", "x");
	/* under a regular file */
	ck_assert_int_eq(RUN("run", "scale.fz", "--cpu", "--dim", "N=2", "--out-dir", "afile/sub"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot create output directory 'afile/sub': Not a directory\n");
	/* on /proc, where even root cannot create files */
	ck_assert_int_eq(RUN("run", "scale.fz", "--cpu", "--dim", "N=2", "--out-dir", "/proc/fusec-hostile"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot create output directory '/proc/fusec-hostile': No such file or directory\n");
	ck_assert_int_eq(RUN("run", "scale.fz", "--cpu", "--dim", "N=2", "--out-dir", "/proc/self"), 1);
	ck_assert_msg(strncmp(err_buf, "fusec: cannot write output 'y': /proc/self/y.npy", 48) == 0, "%s", err_buf);
	ck_assert_str_eq(out_buf, "");
	ck_assert_str_eq(listing("afile"), "");
	if (root()) {
		/* read-only for its writer: a root-owned 0755 directory, written by nobody */
		ck_assert_int_eq(mkdir("ro", 0755), 0);
		Child nobody = {.uid = NOBODY};
		ck_assert_int_eq(RUN_AS(&nobody, "run", "scale.fz", "--cpu", "--dim", "N=2", "--out-dir", "ro"), 1);
		ck_assert_msg(strncmp(err_buf, "fusec: cannot write output 'y': ro/y.npy.part", 45) == 0 &&
		                  strstr(err_buf, ": cannot create: Permission denied\n"),
		              "%s", err_buf);
		ck_assert_str_eq(listing("ro"), "");
	}
}
END_TEST

/* ---- a full disk ----------------------------------------------------------------------------------- */

START_TEST(disk_full_outputs)
{
	/* two outputs of 4000 floats, 16 KB each; the disk holds 10 KB per file */
	write_text("two.fz", "in x: f32[N]\nout a = x + 1\nout b = x * 2\n");
	ck_assert_int_eq(RUN("run", "two.fz", "--cpu", "--dim", "N=4000", "--out-dir", "out"), 0);
	static char a0[1 << 15], b0[1 << 15], a1[1 << 15];
	size_t na = read_file("out/a.npy", a0, sizeof a0), nb = read_file("out/b.npy", b0, sizeof b0);
	ck_assert_uint_eq(na, 16128);
	Child full = {.fsize = 10000};
	ck_assert_int_eq(RUN_AS(&full, "run", "two.fz", "--cpu", "--dim", "N=4000", "--seed", "9", "--out-dir", "out"), 1);
	ck_assert_msg(strstr(err_buf, "cannot write output 'a': ") && strstr(err_buf, "File too large"), "%s", err_buf);
	/* nothing half-written: the earlier outputs are whole and unchanged, no temporaries */
	ck_assert_str_eq(listing("out"), "a.npy b.npy");
	ck_assert_uint_eq(read_file("out/a.npy", a1, sizeof a1), na);
	ck_assert_int_eq(memcmp(a0, a1, na), 0);
	ck_assert_uint_eq(read_file("out/b.npy", a1, sizeof a1), nb);
	ck_assert_int_eq(memcmp(b0, a1, nb), 0);

	/* the first output fits, the second does not: neither is replaced */
	write_text("uneven.fz", "in x: f32[N]\nout a = x + 1\nout b = f64(x) * 2\n");
	ck_assert_int_eq(mkdir("out2", 0755), 0);
	Child tight = {.fsize = 20000};
	ck_assert_int_eq(RUN_AS(&tight, "run", "uneven.fz", "--cpu", "--dim", "N=4000", "--out-dir", "out2"), 1);
	ck_assert_msg(strstr(err_buf, "cannot write output 'b': ") && strstr(err_buf, "File too large"), "%s", err_buf);
	ck_assert_str_eq(listing("out2"), "");
}
END_TEST

static char warned[4096];
static int nwarned;

static void warn_collect(void *ud, const char *msg)
{
	(void)ud;
	size_t n = strlen(warned);
	snprintf(warned + n, sizeof warned - n, "%s\n", msg);
	nwarned++;
}

START_TEST(disk_full_cache)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/cache", tmpdir);
	RtCache c;
	memset(&c, 0, sizeof c);
	ck_assert(rt_cache_open(&c, dir, 1 << 20, warn_collect, NULL));
	RtKey old = rt_cache_key("old", 3, 13000, "", 90), big = rt_cache_key("big", 3, 13000, "", 90);
	ck_assert(rt_cache_store(&c, old, "old", 90, 13000, "OLD!", 4, warn_collect, NULL));
	const char *before = strdup(listing(dir));

	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {8192, 8192};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(3);
		static char payload[50000];
		memset(payload, 0xAB, sizeof payload);
		warned[0] = 0;
		nwarned = 0;
		bool w1 = rt_cache_store(&c, big, "big", 90, 13000, payload, sizeof payload, warn_collect, NULL);
		bool w2 = rt_cache_store(&c, big, "big", 90, 13000, payload, sizeof payload, warn_collect, NULL);
		void *img;
		size_t len;
		RtCacheResult r_old = rt_cache_load(&c, old, &img, &len, warn_collect, NULL);
		RtCacheResult r_big = rt_cache_load(&c, big, &img, &len, warn_collect, NULL);
		char line[8192];
		int n = snprintf(line, sizeof line, "%d %d %d %d %d|%s", w1, w2, r_old == RTC_HIT, r_big == RTC_MISS,
		                 nwarned, warned);
		_exit(write(fds[1], line, (size_t)n) == n ? 0 : 4);
	}
	close(fds[1]);
	char buf[8192] = {0};
	size_t got = 0;
	ssize_t r;
	while ((r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)r;
	close(fds[0]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* the write fails, is warned once and turns writes off; the old entry still loads */
	char want[8192];
	snprintf(want, sizeof want, "0 0 1 1 1|kernel cache: cannot write to %s (File too large); kernels are compiled "
	                            "but not cached\n", dir);
	ck_assert_str_eq(buf, want);
	/* nothing half-written: the directory is as before */
	ck_assert_str_eq(listing(dir), before);
	free((void *)before);
}
END_TEST

/* ---- fusec cache on damaged and unwritable caches ------------------------------------------------ */

/* A cache in tmpdir/cache with three good entries; their file names. */
static void make_cache(char names[3][64])
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/cache", tmpdir);
	RtCache c;
	memset(&c, 0, sizeof c);
	ck_assert(rt_cache_open(&c, dir, 1 << 20, NULL, NULL));
	const char *labels[3] = {"alpha", "beta", "gamma"};
	for (int i = 0; i < 3; i++) {
		RtKey k = rt_cache_key(labels[i], strlen(labels[i]), 13000, "", 90);
		char payload[1000];
		memset(payload, 'a' + i, sizeof payload);
		ck_assert(rt_cache_store(&c, k, labels[i], 90, 13000, payload, sizeof payload, NULL, NULL));
		char hex[33];
		rt_key_hex(k, hex);
		snprintf(names[i], 64, "%s.fzc", hex);
	}
}

static void damage(const char *file, bool truncate_it)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "cache/%s", file);
	if (truncate_it) {
		ck_assert_int_eq(truncate(path, 100), 0);
		return;
	}
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	char byte;
	off_t end = lseek(fd, -1, SEEK_END);
	ck_assert(pread(fd, &byte, 1, end) == 1);
	byte ^= 0x5A;
	ck_assert(pwrite(fd, &byte, 1, end) == 1);
	close(fd);
}

START_TEST(cache_cli_damaged)
{
	char names[3][64];
	make_cache(names);
	damage(names[1], false);
	damage(names[2], true);
	write_text("cache/stray.txt", "not an entry");
	ck_assert_int_eq(RUN("cache", "list", "--dir", "cache"), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "cache: 3 entries"));
	char want[4096];
	ck_assert_int_eq(RUN("cache", "verify", "--dir", "cache"), 1);
	snprintf(want, sizeof want, "%s: ok\n", names[0]);
	ck_assert_ptr_nonnull(strstr(out_buf, want));
	snprintf(want, sizeof want, "%s: damaged (checksum mismatch), deleted\n", names[1]);
	ck_assert_msg(strstr(out_buf, want) != NULL, "%s", out_buf);
	snprintf(want, sizeof want, "%s: damaged (truncated", names[2]);
	ck_assert_msg(strstr(out_buf, want) != NULL, "%s", out_buf);
	ck_assert_ptr_nonnull(strstr(out_buf, "1 ok, 2 damaged\n"));
	/* the damaged entries are gone, the good one and the stranger stay */
	snprintf(want, sizeof want, "%s stray.txt", names[0]);
	ck_assert_str_eq(listing("cache"), want);
	ck_assert_int_eq(RUN("cache", "verify", "--dir", "cache"), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "1 ok, 0 damaged\n"));
}
END_TEST

START_TEST(cache_cli_unwritable)
{
	if (!root())
		return; /* needs another user to make a directory read-only for */
	char names[3][64];
	make_cache(names);
	damage(names[0], false);
	ck_assert_int_eq(chmod("cache", 0755), 0);
	char path[PATH_MAX], want[4096];
	for (int i = 0; i < 2; i++) { /* names[2] stays 0600: its reader cannot open it */
		snprintf(path, sizeof path, "cache/%s", names[i]);
		ck_assert_int_eq(chmod(path, 0644), 0);
	}
	Child nobody = {.uid = NOBODY};
	/* verify cannot delete: it says so and fails; an unreadable entry is named, not skipped */
	ck_assert_int_eq(RUN_AS(&nobody, "cache", "verify", "--dir", "cache"), 1);
	snprintf(want, sizeof want, "%s: damaged (checksum mismatch), could not delete it\n", names[0]);
	ck_assert_msg(strstr(out_buf, want) != NULL, "%s", out_buf);
	snprintf(want, sizeof want, "%s: damaged (cannot be read (permission denied)), could not delete it\n", names[2]);
	ck_assert_msg(strstr(out_buf, want) != NULL, "%s", out_buf);
	ck_assert_ptr_nonnull(strstr(out_buf, "1 ok, 2 damaged\n"));
	/* clear cannot delete: an error, and every entry is still there */
	const char *before = strdup(listing("cache"));
	ck_assert_int_eq(RUN_AS(&nobody, "cache", "clear", "--dir", "cache"), 1);
	ck_assert_msg(strstr(err_buf, "fusec: cannot delete cache/") && strstr(err_buf, ": Permission denied\n"), "%s",
	              err_buf);
	ck_assert_str_eq(listing("cache"), before);
	free((void *)before);
	/* a directory it cannot read */
	ck_assert_int_eq(chmod("cache", 0700), 0);
	ck_assert_int_eq(RUN_AS(&nobody, "cache", "list", "--dir", "cache"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot read cache: Permission denied\n");
}
END_TEST

START_TEST(cache_cli_odd_dirs)
{
	write_text("afile", "x");
	ck_assert_int_eq(RUN("cache", "list", "--dir", "afile"), 1);
	ck_assert_msg(strstr(err_buf, "afile") != NULL && strstr(err_buf, "fusec: ") == err_buf, "%s", err_buf);
	ck_assert_int_eq(RUN("cache", "clear", "--dir", "afile"), 1);
	ck_assert_msg(strstr(err_buf, "afile") != NULL, "%s", err_buf);
	ck_assert_str_eq(listing("."), "afile");
	/* a missing directory is an empty cache, and is not created by listing it */
	ck_assert_int_eq(RUN("cache", "list", "--dir", "/proc/fusec-no-cache"), 0);
	ck_assert_str_eq(out_buf, "/proc/fusec-no-cache: 0 entries, 0 B\n");
}
END_TEST

/* ---- processes writing the same outputs at once ---------------------------------------------------- */

START_TEST(concurrent_runs_same_outputs)
{
	enum { PROCS = 4, ROUNDS = 5 };
	write_text("three.fz", "in x: f32[N]\nout a = x + 1\nout b = x * 2\nout c = sum(x)\n");
	/* what each seed writes, run alone */
	static char want[PROCS][3][1 << 14];
	size_t want_n[PROCS][3];
	const char *outs[3] = {"a.npy", "b.npy", "c.npy"};
	for (int p = 0; p < PROCS; p++) {
		char dir[32], seed[16], path[64];
		snprintf(dir, sizeof dir, "alone%d", p);
		snprintf(seed, sizeof seed, "%d", p + 1);
		ck_assert_int_eq(RUN("run", "three.fz", "--cpu", "--dim", "N=1000", "--seed", seed, "--out-dir", dir), 0);
		for (int o = 0; o < 3; o++) {
			snprintf(path, sizeof path, "%s/%s", dir, outs[o]);
			want_n[p][o] = read_file(path, want[p][o], sizeof want[p][o]);
		}
	}
	for (int round = 0; round < ROUNDS; round++) {
		pid_t pids[PROCS];
		for (int p = 0; p < PROCS; p++) {
			pids[p] = fork();
			ck_assert_int_ge(pids[p], 0);
			if (pids[p] == 0) {
				char seed[16];
				snprintf(seed, sizeof seed, "%d", p + 1);
				int fd = open("/dev/null", O_WRONLY);
				dup2(fd, 1);
				dup2(fd, 2);
				setenv("FUSEC_CACHE", "0", 1);
				execl(fusec_bin(), "fusec", "run", "three.fz", "--cpu", "--dim", "N=1000", "--seed", seed,
				      "--out-dir", "shared", (char *)NULL);
				_exit(127);
			}
		}
		for (int p = 0; p < PROCS; p++) {
			int st;
			ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
			ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "run %d: status %d", p, st);
		}
		/* each file is whole: exactly what one of the runs wrote */
		ck_assert_str_eq(listing("shared"), "a.npy b.npy c.npy");
		for (int o = 0; o < 3; o++) {
			static char got[1 << 14];
			char path[64];
			snprintf(path, sizeof path, "shared/%s", outs[o]);
			size_t n = read_file(path, got, sizeof got);
			bool match = false;
			for (int p = 0; p < PROCS; p++)
				match |= n == want_n[p][o] && memcmp(got, want[p][o], n) == 0;
			ck_assert_msg(match, "round %d: %s is no run's output", round, outs[o]);
		}
	}
}
END_TEST

/* ---- standard output that cannot be written (issue 14) ---------------------------------------------- */

/* Every command checks its output: on a full device (/dev/full) it fails
 * with the reason instead of exiting 0 having printed nothing. */
START_TEST(stdout_write_errors)
{
	write_text("scale.fz", scale_fz);
	char cache[PATH_MAX];
	snprintf(cache, sizeof cache, "%s/cache", tmpdir);
	static const char *const cmds[][8] = {
		{"scale.fz"},
		{"--emit=ir", "scale.fz"},
		{"--emit=ptx", "scale.fz"},
		{"--help"},
		{"--version"},
		{"run", "scale.fz", "--cpu", "--dim", "N=3", "--out-dir", "out"},
		{"run", "--help"},
		{"cache", "list", "--dir", "cache"},
		{"bench", "scale.fz", "--dim", "N=3", "--dry-run", "--json"},
	};
	Child full = {.stdout_path = "/dev/full"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		const char *args[9] = {0};
		memcpy(args, cmds[i], sizeof cmds[i]);
		ck_assert_msg(run_as(&full, args) == 1, "fusec %s ... to /dev/full", cmds[i][0]);
		ck_assert_str_eq(err_buf, "fusec: cannot write the output: No space left on device\n");
	}
	/* a file-size limit: 2 KiB of the 19 KiB of CUDA C, and a failure, not 0 */
	write_text("softmax.fz", "in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n");
	Child small = {.fsize = 2048, .stdout_path = "half.cu"};
	ck_assert_int_eq(RUN_AS(&small, "softmax.fz"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot write the output: File too large\n");
	struct stat st;
	ck_assert_int_eq(stat("half.cu", &st), 0);
	ck_assert_int_le(st.st_size, 2048);
}
END_TEST

/* ---- several outputs: all replaced or none (issue 14) ------------------------------------------------- */

START_TEST(outputs_all_or_nothing)
{
	write_text("two.fz", "in x: f32[N]\nout a = x + 1\nout b = x * 2\n");
	/* b.npy is a directory: a.npy must not be written either */
	ck_assert_int_eq(mkdir("out", 0755), 0);
	ck_assert_int_eq(mkdir("out/b.npy", 0755), 0);
	ck_assert_int_eq(RUN("run", "two.fz", "--cpu", "--dim", "N=3", "--out-dir", "out"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot write output 'b': out/b.npy: Is a directory\n");
	ck_assert_str_eq(listing("out"), "b.npy");
	if (!root())
		return;
	/* b.npy is another user's file in a sticky directory (as in /tmp): its
	 * rename would fail, so a.npy, which could be replaced, is not */
	ck_assert_int_eq(mkdir("sticky", 0777), 0);
	ck_assert_int_eq(chmod("sticky", 01777), 0);
	write_text("sticky/a.npy", "old a");
	ck_assert_int_eq(chown("sticky/a.npy", NOBODY, NOBODY), 0);
	write_text("sticky/b.npy", "root's b");
	Child nobody = {.uid = NOBODY};
	ck_assert_int_eq(RUN_AS(&nobody, "run", "two.fz", "--cpu", "--dim", "N=3", "--out-dir", "sticky"), 1);
	ck_assert_str_eq(err_buf, "fusec: cannot write output 'b': sticky/b.npy: Operation not permitted (another "
	                          "user's file in a sticky directory)\n");
	char buf[64] = {0};
	read_file("sticky/a.npy", buf, sizeof buf - 1);
	ck_assert_str_eq(buf, "old a");
	ck_assert_str_eq(listing("sticky"), "a.npy b.npy");
}
END_TEST

/* ---- a FIFO in the cache (issue 14) -------------------------------------------------------------------- */

START_TEST(cache_cli_fifo_entry)
{
	char names[3][64], path[PATH_MAX];
	make_cache(names);
	/* a FIFO under an entry's name: list and verify do not wait on it */
	ck_assert_int_eq(unlink(strcat(strcpy(path, "cache/"), names[1])), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(RUN("cache", "list", "--dir", "cache"), 0);
	ck_assert_ptr_nonnull(strstr(out_buf, "cache: 3 entries"));
	ck_assert_int_eq(RUN("cache", "verify", "--dir", "cache"), 1);
	char want[256];
	snprintf(want, sizeof want, "%s: damaged (not a regular file), deleted\n", names[1]);
	ck_assert_msg(strstr(out_buf, want) != NULL, "%s", out_buf);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, npy_lies);
	tcase_add_test(tc, npy_shapes_disagree);
	tcase_add_test(tc, odd_input_files);
	tcase_add_test(tc, odd_program_files);
	tcase_add_test(tc, unwritable_output_dirs);
	tcase_add_test(tc, disk_full_outputs);
	tcase_add_test(tc, disk_full_cache);
	tcase_add_test(tc, cache_cli_damaged);
	tcase_add_test(tc, cache_cli_unwritable);
	tcase_add_test(tc, cache_cli_odd_dirs);
	tcase_add_test(tc, concurrent_runs_same_outputs);
	tcase_add_test(tc, stdout_write_errors);
	tcase_add_test(tc, outputs_all_or_nothing);
	tcase_add_test(tc, cache_cli_fifo_entry);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
