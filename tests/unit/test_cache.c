/* The on-disk kernel cache (runtime/cache.c): keys, round trips, damaged
 * entries, concurrent writers, unusable directories, configuration from the
 * environment, LRU eviction, listing and clearing. Plus one real NVRTC cubin
 * through the cache (NVRTC needs no GPU). Every test works in its own
 * temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cache.h"
#include "runtime/nvrtc.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static char warnings[16384];
static int nwarnings;

static void collect(void *ud, const char *msg)
{
	(void)ud;
	size_t n = strlen(warnings);
	snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
	nwarnings++;
}

static void reset_warnings(void)
{
	warnings[0] = 0;
	nwarnings = 0;
}

static char tmpdir[256];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/fusec-test-cache-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	reset_warnings();
	unsetenv("FUSEC_CACHE");
	unsetenv("FUSEC_CACHE_DIR");
	unsetenv("FUSEC_CACHE_MAX_BYTES");
}

static void rm_rf(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[1024];
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

static void teardown(void)
{
	chmod(tmpdir, 0700);
	rm_rf(tmpdir);
}

static RtKey key_of(const char *src) { return rt_cache_key(src, strlen(src), 13000, "opts", 90); }

static const char *entry_file(RtKey k)
{
	static char path[512];
	char hex[33];
	rt_key_hex(k, hex);
	snprintf(path, sizeof path, "%s/%s.fzc", tmpdir, hex);
	return path;
}

/* Names in the directory, sorted, joined by spaces. */
static const char *dir_listing(const char *dir)
{
	static char buf[4096];
	char names[64][64];
	int n = 0;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *de;
	while ((de = readdir(d)) != NULL && n < 64)
		if (de->d_name[0] != '.' || (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0))
			snprintf(names[n++], sizeof names[0], "%.60s", de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		strcat(buf, i ? " " : "");
		strcat(buf, names[i]);
	}
	return buf;
}

static RtCache open_cache(uint64_t max)
{
	RtCache c;
	memset(&c, 0, sizeof c);
	ck_assert(rt_cache_open(&c, tmpdir, max, collect, NULL));
	return c;
}

static void set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = {{t, 0}, {t, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* ---- keys ---------------------------------------------------------------------------------- */

START_TEST(key_depends_on_everything)
{
	const char *s = "extern \"C\" __global__ void k() {}";
	RtKey base = rt_cache_key(s, strlen(s), 13000, "-std=c++17", 90);
	RtKey same = rt_cache_key(s, strlen(s), 13000, "-std=c++17", 90);
	ck_assert(base.hi == same.hi && base.lo == same.lo);
	RtKey variants[] = {
		rt_cache_key(s, strlen(s) - 1, 13000, "-std=c++17", 90),  /* source */
		rt_cache_key(s, strlen(s), 12080, "-std=c++17", 90),      /* NVRTC version */
		rt_cache_key(s, strlen(s), 13000, "-std=c++14", 90),      /* options */
		rt_cache_key(s, strlen(s), 13000, "-std=c++17", 80),      /* architecture */
		rt_cache_key(s, strlen(s), 13000, NULL, 90),
	};
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		ck_assert_msg(variants[i].hi != base.hi || variants[i].lo != base.lo, "variant %zu has the same key", i);
		for (size_t j = 0; j < i; j++)
			ck_assert(variants[i].hi != variants[j].hi || variants[i].lo != variants[j].lo);
	}
	/* fields are length-prefixed: moving a byte from options to source changes the key */
	RtKey a = rt_cache_key("bc", 2, 1, "a", 90), b = rt_cache_key("c", 1, 1, "ab", 90);
	ck_assert(a.hi != b.hi || a.lo != b.lo);
	char hex[33];
	rt_key_hex((RtKey){0x0123456789abcdefULL, 0xfedcba9876543210ULL}, hex);
	ck_assert_str_eq(hex, "0123456789abcdeffedcba9876543210");
}
END_TEST

/* ---- round trip ------------------------------------------------------------------------------- */

START_TEST(round_trip)
{
	char sub[512];
	snprintf(sub, sizeof sub, "%s/a/b/fusec", tmpdir);
	RtCache c;
	ck_assert(rt_cache_open(&c, sub, 1 << 20, collect, NULL));
	struct stat st;
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);

	RtKey k = key_of("program one");
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_MISS);
	const char payload[] = "\x7f" "ELF pretend cubin \0 with a NUL inside";
	ck_assert(rt_cache_store(&c, k, "prog", 90, 13000, payload, sizeof payload, collect, NULL));
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_HIT);
	ck_assert_uint_eq(len, sizeof payload);
	ck_assert_int_eq(memcmp(img, payload, len), 0);
	free(img);
	/* a different key is a miss; an empty payload round-trips too */
	ck_assert_int_eq(rt_cache_load(&c, key_of("program two"), &img, &len, collect, NULL), RTC_MISS);
	ck_assert(rt_cache_store(&c, key_of("empty"), "e", 90, 13000, "", 0, collect, NULL));
	ck_assert_int_eq(rt_cache_load(&c, key_of("empty"), &img, &len, collect, NULL), RTC_HIT);
	ck_assert_uint_eq(len, 0);
	free(img);

	char hex[33], path[1024];
	rt_key_hex(k, hex);
	snprintf(path, sizeof path, "%s/%s.fzc", sub, hex);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, 104 + (off_t)sizeof payload);
	ck_assert_int_eq(nwarnings, 0);
}
END_TEST

/* ---- damaged entries ------------------------------------------------------------------------------ */

static void damage_and_reload(void (*damage)(const char *path), const char *reason)
{
	RtCache c = open_cache(1 << 20);
	RtKey k = key_of("victim");
	char payload[1000];
	for (int i = 0; i < 1000; i++)
		payload[i] = (char)(i * 7);
	ck_assert(rt_cache_store(&c, k, "victim", 90, 13000, payload, sizeof payload, collect, NULL));
	damage(entry_file(k));
	void *img = NULL;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_CORRUPT);
	ck_assert_ptr_null(img);
	char want[1024];
	snprintf(want, sizeof want, "kernel cache: %s was damaged (%s): deleted it; the kernels were recompiled\n",
	         entry_file(k), reason);
	ck_assert_str_eq(warnings, want);
	ck_assert_int_eq(access(entry_file(k), F_OK), -1); /* deleted */
	/* rebuilt: the next store and load work, with no further warning */
	ck_assert(rt_cache_store(&c, k, "victim", 90, 13000, payload, sizeof payload, collect, NULL));
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_HIT);
	ck_assert_uint_eq(len, sizeof payload);
	ck_assert_int_eq(memcmp(img, payload, len), 0);
	free(img);
	ck_assert_int_eq(nwarnings, 1);
}

static void flip_payload_byte(const char *path)
{
	int fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	char b;
	ck_assert_int_eq(pread(fd, &b, 1, 104 + 500), 1);
	b ^= 0x10;
	ck_assert_int_eq(pwrite(fd, &b, 1, 104 + 500), 1);
	close(fd);
}

static void truncate_payload(const char *path) { ck_assert_int_eq(truncate(path, 104 + 999), 0); }
static void truncate_header(const char *path) { ck_assert_int_eq(truncate(path, 50), 0); }

static void flip_header_byte(const char *path)
{
	int fd = open(path, O_RDWR);
	char b = 'X';
	ck_assert_int_eq(pwrite(fd, &b, 1, 0), 1);
	close(fd);
}

static void append_garbage(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_eq(write(fd, "zz", 2), 2);
	close(fd);
}

START_TEST(corrupt_payload) { damage_and_reload(flip_payload_byte, "checksum mismatch"); }
END_TEST
START_TEST(truncated_payload) { damage_and_reload(truncate_payload, "truncated"); }
END_TEST
START_TEST(truncated_header) { damage_and_reload(truncate_header, "truncated header"); }
END_TEST
START_TEST(bad_magic) { damage_and_reload(flip_header_byte, "not a fusec cache entry"); }
END_TEST
START_TEST(trailing_bytes) { damage_and_reload(append_garbage, "trailing bytes"); }
END_TEST

START_TEST(entry_under_wrong_name)
{
	RtCache c = open_cache(1 << 20);
	RtKey a = key_of("a"), b = key_of("b");
	ck_assert(rt_cache_store(&c, a, "a", 90, 13000, "AAAA", 4, collect, NULL));
	char pa[512];
	snprintf(pa, sizeof pa, "%s", entry_file(a));
	ck_assert_int_eq(rename(pa, entry_file(b)), 0);
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, b, &img, &len, collect, NULL), RTC_CORRUPT);
	ck_assert_ptr_nonnull(strstr(warnings, "(key does not match the file name)"));
}
END_TEST

/* ---- concurrency -------------------------------------------------------------------------------- */

START_TEST(concurrent_writers)
{
	enum { PROCS = 8, ROUNDS = 25, SIZE = 200000 };
	char *payload = malloc(SIZE);
	for (int i = 0; i < SIZE; i++)
		payload[i] = (char)(i * 31 + 7);
	RtKey k = key_of("shared program");
	pid_t pids[PROCS];
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		ck_assert_int_ge(pids[p], 0);
		if (pids[p] == 0) {
			RtCache c;
			int bad = 0;
			if (!rt_cache_open(&c, tmpdir, 64 << 20, NULL, NULL))
				_exit(10);
			for (int r = 0; r < ROUNDS; r++) {
				if (!rt_cache_store(&c, k, "shared", 90, 13000, payload, SIZE, NULL, NULL))
					_exit(11);
				void *img;
				size_t len;
				/* a reader never sees a partial entry: hit with the full payload, or (never) a miss */
				RtCacheResult res = rt_cache_load(&c, k, &img, &len, NULL, NULL);
				if (res != RTC_HIT || len != SIZE || memcmp(img, payload, SIZE) != 0)
					bad++;
				if (res == RTC_HIT)
					free(img);
			}
			_exit(bad ? 12 : 0);
		}
	}
	for (int p = 0; p < PROCS; p++) {
		int st;
		ck_assert_int_eq(waitpid(pids[p], &st, 0), pids[p]);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed with status %d", p, st);
	}
	RtCache c = open_cache(64 << 20);
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_HIT);
	ck_assert_uint_eq(len, SIZE);
	ck_assert_int_eq(memcmp(img, payload, SIZE), 0);
	free(img);
	/* one entry, no temporary files left behind */
	char hex[33], want[64];
	rt_key_hex(k, hex);
	snprintf(want, sizeof want, "%s.fzc", hex);
	ck_assert_str_eq(dir_listing(tmpdir), want);
	free(payload);
}
END_TEST

/* ---- unusable directories ------------------------------------------------------------------------- */

/* In a child that cannot write to tmpdir (a non-root user when we are root,
 * since root ignores permissions), store and load; the results come back as
 * one line through a pipe. */
START_TEST(read_only_directory)
{
	RtCache c = open_cache(1 << 20);
	RtKey old = key_of("cached before"), fresh = key_of("new");
	ck_assert(rt_cache_store(&c, old, "old", 90, 13000, "OLD!", 4, collect, NULL));
	ck_assert_int_eq(chmod(entry_file(old), 0644), 0);
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		/* the user's own directory, read-only (root would ignore the mode:
		 * the child becomes nobody, and the directory nobody's) */
		if (geteuid() == 0 && (chown(tmpdir, 65534, 65534) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
			_exit(3);
		chmod(tmpdir, 0500);
		reset_warnings();
		RtCache rc;
		bool opened = rt_cache_open(&rc, tmpdir, 1 << 20, collect, NULL);
		bool w1 = rt_cache_store(&rc, fresh, "new", 90, 13000, "NEW!", 4, collect, NULL);
		bool w2 = rt_cache_store(&rc, fresh, "new", 90, 13000, "NEW!", 4, collect, NULL);
		void *img;
		size_t len;
		RtCacheResult hit = rt_cache_load(&rc, old, &img, &len, collect, NULL);
		char line[20000];
		int n = snprintf(line, sizeof line, "%d %d %d %d %d|%s", opened, w1, w2, hit == RTC_HIT && len == 4,
		                 nwarnings, warnings);
		if (write(fds[1], line, (size_t)n) != n)
			_exit(4);
		_exit(0);
	}
	close(fds[1]);
	char buf[20000] = {0};
	size_t got = 0;
	ssize_t r;
	while ((r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
		got += (size_t)r;
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	char want[2048];
	snprintf(want, sizeof want,
	         "1 0 0 1 1|kernel cache: cannot write to %s (Permission denied); kernels are compiled but not cached\n",
	         tmpdir);
	ck_assert_str_eq(buf, want);
}
END_TEST

START_TEST(uncreatable_directory)
{
	RtCache c;
	ck_assert(!rt_cache_open(&c, "/proc/fusec-no-such/cache", 1 << 20, collect, NULL));
	ck_assert(!c.enabled);
	ck_assert_str_eq(warnings, "kernel cache disabled: cannot create /proc/fusec-no-such/cache: No such file or directory\n");
	/* a disabled cache misses and does not write, silently */
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, key_of("x"), &img, &len, collect, NULL), RTC_MISS);
	ck_assert(!rt_cache_store(&c, key_of("x"), "x", 90, 1, "x", 1, collect, NULL));
	ck_assert_int_eq(nwarnings, 1);
}
END_TEST

START_TEST(directory_is_a_file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/file", tmpdir);
	FILE *f = fopen(path, "w");
	fclose(f);
	RtCache c;
	ck_assert(!rt_cache_open(&c, path, 1 << 20, collect, NULL));
	char want[1024];
	snprintf(want, sizeof want, "kernel cache disabled: %s is not a directory\n", path);
	ck_assert_str_eq(warnings, want);
}
END_TEST

START_TEST(shared_writable_directory)
{
	ck_assert_int_eq(chmod(tmpdir, 0777), 0);
	RtCache c;
	ck_assert(!rt_cache_open(&c, tmpdir, 1 << 20, collect, NULL));
	char want[1024];
	snprintf(want, sizeof want, "kernel cache disabled: %s is writable by other users (chmod 700 it)\n", tmpdir);
	ck_assert_str_eq(warnings, want);
}
END_TEST

/* ---- configuration ---------------------------------------------------------------------------------- */

START_TEST(env_disabled)
{
	setenv("FUSEC_CACHE", "0", 1);
	setenv("FUSEC_CACHE_DIR", tmpdir, 1);
	RtCache c;
	rt_cache_init(&c, collect, NULL);
	ck_assert(!c.enabled);
	ck_assert_int_eq(nwarnings, 0); /* the user asked for it: no warning */
	char dir[256], err[256];
	ck_assert(!rt_cache_default_dir(dir, sizeof dir, err, sizeof err));
	ck_assert_str_eq(err, "the disk cache is turned off (FUSEC_CACHE=0)");
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, key_of("p"), &img, &len, collect, NULL), RTC_MISS);
	ck_assert(!rt_cache_store(&c, key_of("p"), "p", 90, 1, "p", 1, collect, NULL));
	ck_assert_str_eq(dir_listing(tmpdir), "");
}
END_TEST

START_TEST(env_directories)
{
	char dir[4096], err[256], want[512];
	setenv("FUSEC_CACHE_DIR", tmpdir, 1);
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/someone", 1);
	ck_assert(rt_cache_default_dir(dir, sizeof dir, err, sizeof err));
	ck_assert_str_eq(dir, tmpdir);
	unsetenv("FUSEC_CACHE_DIR");
	ck_assert(rt_cache_default_dir(dir, sizeof dir, err, sizeof err));
	ck_assert_str_eq(dir, "/xdg/fusec");
	setenv("XDG_CACHE_HOME", "relative/ignored", 1);
	ck_assert(rt_cache_default_dir(dir, sizeof dir, err, sizeof err));
	ck_assert_str_eq(dir, "/home/someone/.cache/fusec");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	ck_assert(!rt_cache_default_dir(dir, sizeof dir, err, sizeof err));
	ck_assert_str_eq(err, "there is no cache directory (HOME is not set; set FUSEC_CACHE_DIR)");
	RtCache c;
	rt_cache_init(&c, collect, NULL);
	ck_assert(!c.enabled);
	ck_assert_str_eq(warnings,
	                 "kernel cache disabled: there is no cache directory (HOME is not set; set FUSEC_CACHE_DIR)\n");

	/* XDG: created under it, mode 0700 */
	reset_warnings();
	setenv("XDG_CACHE_HOME", tmpdir, 1);
	setenv("FUSEC_CACHE_MAX_BYTES", "3K", 1);
	rt_cache_init(&c, collect, NULL);
	snprintf(want, sizeof want, "%s/fusec", tmpdir);
	ck_assert(c.enabled);
	ck_assert_str_eq(c.dir, want);
	ck_assert_uint_eq(c.max_bytes, 3072);
	ck_assert_int_eq(nwarnings, 0);
	setenv("FUSEC_CACHE_MAX_BYTES", "lots", 1);
	rt_cache_init(&c, collect, NULL);
	ck_assert_uint_eq(c.max_bytes, RT_CACHE_DEFAULT_MAX_BYTES);
	ck_assert_str_eq(warnings, "kernel cache: ignoring FUSEC_CACHE_MAX_BYTES='lots' (expected a size such as 512M)\n");
}
END_TEST

/* ---- eviction ------------------------------------------------------------------------------------------ */

START_TEST(lru_eviction)
{
	/* each entry is 104 + 896 = 1000 bytes; the cap holds three */
	RtCache c = open_cache(3000);
	char payload[896];
	memset(payload, 'p', sizeof payload);
	RtKey a = key_of("A"), b = key_of("B"), cc = key_of("C"), d = key_of("D");
	ck_assert(rt_cache_store(&c, a, "A", 90, 1, payload, sizeof payload, collect, NULL));
	ck_assert(rt_cache_store(&c, b, "B", 90, 1, payload, sizeof payload, collect, NULL));
	ck_assert(rt_cache_store(&c, cc, "C", 90, 1, payload, sizeof payload, collect, NULL));
	time_t t0 = time(NULL) - 1000;
	set_mtime(entry_file(a), t0);
	set_mtime(entry_file(b), t0 + 1);
	set_mtime(entry_file(cc), t0 + 2);
	/* a hit makes A the most recently used */
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, a, &img, &len, collect, NULL), RTC_HIT);
	free(img);
	ck_assert(rt_cache_store(&c, d, "D", 90, 1, payload, sizeof payload, collect, NULL));
	ck_assert_int_eq(access(entry_file(b), F_OK), -1);
	ck_assert_int_eq(access(entry_file(a), F_OK), 0);
	ck_assert_int_eq(access(entry_file(cc), F_OK), 0);
	ck_assert_int_eq(access(entry_file(d), F_OK), 0);
	/* an entry larger than the cap is kept (it was just made) but evicts the rest */
	char big[5000];
	memset(big, 'b', sizeof big);
	RtKey e = key_of("E");
	ck_assert(rt_cache_store(&c, e, "E", 90, 1, big, sizeof big, collect, NULL));
	char hex[33], want[64];
	rt_key_hex(e, hex);
	snprintf(want, sizeof want, "%s.fzc", hex);
	ck_assert_str_eq(dir_listing(tmpdir), want);
	ck_assert_int_eq(nwarnings, 0);
}
END_TEST

START_TEST(stale_temporaries_removed)
{
	char tmp[512], fresh[512];
	snprintf(tmp, sizeof tmp, "%s/.deadbeef.123.0.tmp", tmpdir);
	snprintf(fresh, sizeof fresh, "%s/.cafe.124.0.tmp", tmpdir);
	fclose(fopen(tmp, "w"));
	fclose(fopen(fresh, "w"));
	set_mtime(tmp, time(NULL) - 7200);
	ck_assert_int_eq(rt_cache_evict(tmpdir, 1 << 20, NULL), 0);
	ck_assert_int_eq(access(tmp, F_OK), -1);   /* a writer that died two hours ago */
	ck_assert_int_eq(access(fresh, F_OK), 0);  /* maybe being written right now */
}
END_TEST

/* ---- listing, verification, clearing -------------------------------------------------------------------- */

START_TEST(list_verify_clear)
{
	RtCache c = open_cache(1 << 20);
	RtKey a = key_of("first"), b = key_of("second");
	ck_assert(rt_cache_store(&c, a, "first_prog", 90, 13000, "0123456789", 10, collect, NULL));
	ck_assert(rt_cache_store(&c, b, "second_prog", 89, 12080, "abc", 3, collect, NULL));
	set_mtime(entry_file(a), time(NULL) - 50);
	set_mtime(entry_file(b), time(NULL) - 100);
	char junk[512];
	snprintf(junk, sizeof junk, "%s/README", tmpdir);
	fclose(fopen(junk, "w")); /* not an entry: ignored */
	int n;
	char err[256];
	RtCacheEntry *v = rt_cache_list(tmpdir, true, &n, err, sizeof err);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(v[0].label, "second_prog"); /* least recently used first */
	ck_assert_int_eq(v[0].arch, 89);
	ck_assert_int_eq(v[0].nvrtc_version, 12080);
	ck_assert_uint_eq(v[0].bytes, 107);
	ck_assert_ptr_null(v[0].problem);
	ck_assert_str_eq(v[1].label, "first_prog");
	ck_assert_ptr_null(v[1].problem);
	free(v);

	flip_header_byte(entry_file(b));
	truncate_payload(entry_file(a)); /* 104 + 999 > its size: this "truncate" grows it */
	set_mtime(entry_file(a), time(NULL) - 50);
	set_mtime(entry_file(b), time(NULL) - 100);
	v = rt_cache_list(tmpdir, true, &n, err, sizeof err);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(v[0].problem, "not a fusec cache entry");
	ck_assert_int_eq(v[0].arch, 0);
	ck_assert_str_eq(v[1].problem, "trailing bytes");
	ck_assert(rt_cache_remove(tmpdir, v[0].file));
	free(v);
	v = rt_cache_list(tmpdir, false, &n, err, sizeof err);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_null(v[0].problem); /* not verified */
	free(v);

	uint64_t bytes;
	ck_assert_int_eq(rt_cache_clear(tmpdir, &bytes, err, sizeof err), 1);
	ck_assert_uint_eq(bytes, 104 + 999);
	ck_assert_str_eq(dir_listing(tmpdir), "README");
	/* a missing directory is an empty cache */
	char missing[512];
	snprintf(missing, sizeof missing, "%s/none", tmpdir);
	v = rt_cache_list(missing, false, &n, err, sizeof err);
	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(n, 0);
	free(v);
	ck_assert(!rt_cache_remove(tmpdir, "../etc/passwd"));
}
END_TEST

/* ---- fusec cache ----------------------------------------------------------------------------------------- */

/* Run the fusec binary (next to the tests directory in the build tree) with
 * a shell command line; stdout and stderr into out, exit status returned. */
static int fusec_cmd(const char *args, char *out, size_t n)
{
	char exe[4096], cmd[8192];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(len, 0);
	exe[len] = 0;
	*strrchr(exe, '/') = 0; /* .../build/tests */
	*strrchr(exe, '/') = 0; /* .../build */
	snprintf(cmd, sizeof cmd, "%s/fusec %s 2>&1", exe, args);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t got = fread(out, 1, n - 1, f);
	out[got] = 0;
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(cli_list_verify_clear)
{
	RtCache c = open_cache(1 << 20);
	RtKey a = key_of("layernorm"), b = key_of("softmax");
	char payload[3000];
	memset(payload, 7, sizeof payload);
	ck_assert(rt_cache_store(&c, a, "layernorm", 90, 13000, payload, sizeof payload, collect, NULL));
	ck_assert(rt_cache_store(&c, b, "softmax_f16", 90, 12080, payload, 100, collect, NULL));
	set_mtime(entry_file(a), time(NULL) - 3 * 3600 - 60);
	set_mtime(entry_file(b), time(NULL) - 5 * 86400 - 60);
	char ha[33], hb[33], args[512], out[8192], want[8192];
	rt_key_hex(a, ha);
	rt_key_hex(b, hb);

	snprintf(args, sizeof args, "cache list --dir %s", tmpdir);
	ck_assert_int_eq(fusec_cmd(args, out, sizeof out), 0);
	snprintf(want, sizeof want,
	         "%s: 2 entries, 3.2 KiB\n"
	         "KEY               PROGRAM                  ARCH    NVRTC        SIZE  LAST USED\n"
	         "%.16s  softmax_f16              sm_90   12.8        204 B  5 days ago\n"
	         "%.16s  layernorm                sm_90   13.0      3.0 KiB  3 h ago\n",
	         tmpdir, hb, ha);
	ck_assert_str_eq(out, want);

	flip_payload_byte(entry_file(a));
	snprintf(args, sizeof args, "cache verify --dir=%s", tmpdir);
	ck_assert_int_eq(fusec_cmd(args, out, sizeof out), 1);
	snprintf(want, sizeof want, "%s: 2 entries, 3.2 KiB\n%s.fzc: ok\n%s.fzc: damaged (checksum mismatch), deleted\n"
	         "1 ok, 1 damaged\n", tmpdir, hb, ha);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(access(entry_file(a), F_OK), -1);

	snprintf(args, sizeof args, "cache clear --dir %s", tmpdir);
	ck_assert_int_eq(fusec_cmd(args, out, sizeof out), 0);
	snprintf(want, sizeof want, "%s: deleted 1 entry, 204 B\n", tmpdir);
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(dir_listing(tmpdir), "");

	ck_assert_int_eq(fusec_cmd("cache shred", out, sizeof out), 2);
	ck_assert_str_eq(out, "fusec: unknown cache action 'shred' (list, verify or clear)\n");
	ck_assert_int_eq(fusec_cmd("cache list verify", out, sizeof out), 2);
	ck_assert_str_eq(out, "fusec: cache takes one action, got 'list' and 'verify'\n");
}
END_TEST

START_TEST(cli_disabled)
{
	char out[4096];
	setenv("FUSEC_CACHE", "0", 1);
	ck_assert_int_eq(fusec_cmd("cache list", out, sizeof out), 1);
	ck_assert_str_eq(out, "fusec: the disk cache is turned off (FUSEC_CACHE=0); use --dir DIR to name one\n");
	setenv("FUSEC_CACHE_DIR", tmpdir, 1);
	unsetenv("FUSEC_CACHE");
	ck_assert_int_eq(fusec_cmd("cache clear", out, sizeof out), 0);
	char want[512];
	snprintf(want, sizeof want, "%s: deleted 0 entries, 0 B\n", tmpdir);
	ck_assert_str_eq(out, want);
}
END_TEST

/* ---- a real cubin ----------------------------------------------------------------------------------------- */

START_TEST(nvrtc_cubin_round_trip)
{
	const char *src = "extern \"C\" __global__ void scale(float *x, float a, long long n) {\n"
	                  "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
	                  "  if (i < n) x[i] *= a;\n"
	                  "}\n";
	Arena *a = arena_new();
	RtNvrtcResult res;
	ck_assert_msg(rt_nvrtc_compile(a, src, "scale", 9, 0, true, &res), "%s", res.message);
	ck_assert_uint_gt(res.image_len, 64);
	ck_assert_int_eq(memcmp(res.image, "\x7f" "ELF", 4), 0);
	RtCache c = open_cache(1 << 20);
	RtKey k = rt_cache_key(src, strlen(src), rt_nvrtc_version(), "cubin", 90);
	ck_assert(rt_cache_store(&c, k, "scale", 90, rt_nvrtc_version(), res.image, res.image_len, collect, NULL));
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_HIT);
	ck_assert_uint_eq(len, res.image_len);
	ck_assert_int_eq(memcmp(img, res.image, len), 0);
	free(img);
	arena_free(a);
}
END_TEST

/* ---- what the cache does not trust (issue 14) --------------------------------------------------------- */

/* A directory owned by another user: its owner could plant cubins that are
 * loaded onto the GPU, so it is refused however its mode looks. */
START_TEST(other_users_directory)
{
	if (geteuid() != 0)
		return; /* making a directory another user's needs root */
	ck_assert_int_eq(chown(tmpdir, 65534, 65534), 0);
	ck_assert_int_eq(chmod(tmpdir, 0755), 0);
	RtCache c;
	ck_assert(!rt_cache_open(&c, tmpdir, 1 << 20, collect, NULL));
	ck_assert(!c.enabled);
	char want[1024];
	snprintf(want, sizeof want, "kernel cache disabled: %s belongs to another user (uid 65534, not 0)\n", tmpdir);
	ck_assert_str_eq(warnings, want);
	ck_assert_int_eq(chown(tmpdir, 0, 0), 0);
}
END_TEST

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* An entry whose header claims 4 GiB, in a sparse file of that size (so the
 * sizes agree): refused from its header at once, not read (20 s and 4 GB
 * before the cap). */
START_TEST(huge_sparse_entry)
{
	RtCache c = open_cache(1 << 20);
	RtKey k = key_of("huge");
	ck_assert(rt_cache_store(&c, k, "huge", 90, 13000, "tiny", 4, collect, NULL));
	uint64_t claim = (uint64_t)4 << 30;
	int fd = open(entry_file(k), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &claim, sizeof claim, 32), (ssize_t)sizeof claim); /* payload_bytes */
	ck_assert_int_eq(ftruncate(fd, (off_t)(104 + claim)), 0);
	close(fd);
	double t0 = now_s();
	int n;
	char err[256];
	RtCacheEntry *v = rt_cache_list(tmpdir, true, &n, err, sizeof err);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(v[0].problem, "larger than an entry may be");
	free(v);
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_CORRUPT);
	ck_assert_msg(now_s() - t0 < 2, "took %.1f s", now_s() - t0);
	ck_assert_ptr_nonnull(strstr(warnings, "was damaged (larger than an entry may be): deleted it"));
	ck_assert_int_eq(access(entry_file(k), F_OK), -1);
}
END_TEST

/* A FIFO under an entry's name: a lookup, a listing and a verification
 * must not wait for a writer that never comes. */
START_TEST(fifo_entry)
{
	RtCache c = open_cache(1 << 20);
	RtKey k = key_of("fifo");
	ck_assert_int_eq(mkfifo(entry_file(k), 0600), 0);
	int n;
	char err[256];
	RtCacheEntry *v = rt_cache_list(tmpdir, false, &n, err, sizeof err);
	ck_assert_int_eq(n, 1);
	free(v);
	v = rt_cache_list(tmpdir, true, &n, err, sizeof err);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(v[0].problem, "not a regular file");
	free(v);
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_CORRUPT);
	ck_assert_ptr_nonnull(strstr(warnings, "was damaged (not a regular file): deleted it"));
	ck_assert_int_eq(access(entry_file(k), F_OK), -1);
}
END_TEST

/* `fusec cache clear` beside a running program: the program's temporary
 * file (fresh) stays, a dead writer's (an hour old) goes. */
START_TEST(clear_keeps_fresh_temporaries)
{
	char dead[512], live[512];
	snprintf(dead, sizeof dead, "%s/.deadbeef.123.0.tmp", tmpdir);
	snprintf(live, sizeof live, "%s/.cafe.124.0.tmp", tmpdir);
	fclose(fopen(dead, "w"));
	fclose(fopen(live, "w"));
	set_mtime(dead, time(NULL) - RT_CACHE_STALE_SECONDS - 60);
	uint64_t bytes;
	char err[256];
	ck_assert_int_eq(rt_cache_clear(tmpdir, &bytes, err, sizeof err), 0);
	ck_assert_int_eq(access(dead, F_OK), -1);
	ck_assert_int_eq(access(live, F_OK), 0);
}
END_TEST

/* rename(2) as the library sees it in this test: while `vanish` is set, the
 * source is deleted first (what a concurrent `cache clear` did before it
 * kept fresh temporaries), then the real rename runs. */
static int vanish;

int rename(const char *from, const char *to)
{
	if (vanish > 0) {
		vanish--;
		unlink(from);
	}
	return renameat(AT_FDCWD, from, AT_FDCWD, to);
}

/* A writer whose temporary vanished writes it again: the entry is stored,
 * nothing is warned, and later writes still go to disk. */
START_TEST(writer_retries_vanished_temporary)
{
	RtCache c = open_cache(1 << 20);
	RtKey k = key_of("retried"), k2 = key_of("next");
	vanish = 1;
	ck_assert(rt_cache_store(&c, k, "retried", 90, 13000, "DATA", 4, collect, NULL));
	ck_assert_int_eq(vanish, 0);
	ck_assert_str_eq(warnings, "");
	void *img;
	size_t len;
	ck_assert_int_eq(rt_cache_load(&c, k, &img, &len, collect, NULL), RTC_HIT);
	free(img);
	/* always deleted: given up after three tries, with a warning that says
	 * so, and writing stays on */
	vanish = 3;
	ck_assert(!rt_cache_store(&c, k2, "next", 90, 13000, "MORE", 4, collect, NULL));
	char want[1024];
	snprintf(want, sizeof want, "kernel cache: an entry's temporary file in %s was deleted three times before it "
	         "was in place; that entry was not cached\n", tmpdir);
	ck_assert_str_eq(warnings, want);
	ck_assert(!atomic_load(&c.no_writes));
	ck_assert(rt_cache_store(&c, k2, "next", 90, 13000, "MORE", 4, collect, NULL));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cache");
	TCase *tc = tcase_create("cache");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, key_depends_on_everything);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, corrupt_payload);
	tcase_add_test(tc, truncated_payload);
	tcase_add_test(tc, truncated_header);
	tcase_add_test(tc, bad_magic);
	tcase_add_test(tc, trailing_bytes);
	tcase_add_test(tc, entry_under_wrong_name);
	tcase_add_test(tc, concurrent_writers);
	tcase_add_test(tc, read_only_directory);
	tcase_add_test(tc, uncreatable_directory);
	tcase_add_test(tc, directory_is_a_file);
	tcase_add_test(tc, shared_writable_directory);
	tcase_add_test(tc, env_disabled);
	tcase_add_test(tc, env_directories);
	tcase_add_test(tc, lru_eviction);
	tcase_add_test(tc, stale_temporaries_removed);
	tcase_add_test(tc, list_verify_clear);
	tcase_add_test(tc, cli_list_verify_clear);
	tcase_add_test(tc, cli_disabled);
	tcase_add_test(tc, nvrtc_cubin_round_trip);
	tcase_add_test(tc, other_users_directory);
	tcase_add_test(tc, huge_sparse_entry);
	tcase_add_test(tc, fifo_entry);
	tcase_add_test(tc, clear_keeps_fresh_temporaries);
	tcase_add_test(tc, writer_retries_vanished_temporary);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(suite()); }
