/*
 * cache.c: the on-disk kernel cache (see cache.h for the design).
 *
 * Every check an entry must pass is in check_entry, which loading, listing
 * and verification share, so `fusec cache verify` finds exactly what a load
 * would reject. The header is written in the host's byte order: an entry is
 * only ever read back on the kind of machine that compiled it (its key holds
 * the GPU architecture), and a foreign one fails the magic check.
 */
#define XXH_STATIC_LINKING_ONLY
#include "runtime/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

static const char cache_magic[8] = {'F', 'U', 'S', 'E', 'C', 'K', 'C', '\n'};

typedef struct Header {
	char magic[8];
	uint32_t format;          /* RT_CACHE_FORMAT */
	uint32_t header_bytes;    /* sizeof(Header) */
	uint64_t key_hi, key_lo;  /* must match the file name */
	uint64_t payload_bytes;   /* the cubin's length */
	uint64_t checksum;        /* XXH3-64 of this header (checksum 0) and the payload */
	uint32_t arch;            /* major * 10 + minor */
	uint32_t nvrtc_version;
	char label[RT_CACHE_LABEL_MAX]; /* program name, NUL-terminated */
} Header;

_Static_assert(sizeof(Header) == 104, "the entry header is part of the file format");

/* ---- keys ------------------------------------------------------------------- */

static void hash_field(XXH3_state_t *st, const void *p, size_t n)
{
	uint64_t len = n;
	XXH3_128bits_update(st, &len, sizeof len);
	XXH3_128bits_update(st, p, n);
}

RtKey rt_cache_key(const char *source, size_t len, int nvrtc_version, const char *options, int arch)
{
	XXH3_state_t st;
	XXH3_128bits_reset(&st);
	static const char tag[] = "fusec kernel cache";
	uint32_t ints[3] = {RT_CACHE_FORMAT, (uint32_t)nvrtc_version, (uint32_t)arch};
	hash_field(&st, tag, sizeof tag - 1);
	hash_field(&st, ints, sizeof ints);
	hash_field(&st, options ? options : "", options ? strlen(options) : 0);
	hash_field(&st, source, len);
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	RtKey k = {h.high64, h.low64};
	return k;
}

void rt_key_hex(RtKey k, char buf[33])
{
	snprintf(buf, 33, "%016llx%016llx", (unsigned long long)k.hi, (unsigned long long)k.lo);
}

static bool parse_entry_name(const char *name, RtKey *k)
{
	size_t n = strlen(name);
	if (n != 36 || strcmp(name + 32, ".fzc") != 0)
		return false;
	uint64_t v[2] = {0, 0};
	for (int i = 0; i < 32; i++) {
		char ch = name[i];
		int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
		if (d < 0)
			return false;
		v[i / 16] = v[i / 16] << 4 | (uint64_t)d;
	}
	k->hi = v[0];
	k->lo = v[1];
	return true;
}

static uint64_t entry_checksum(const Header *h, const void *payload, size_t len)
{
	Header z = *h;
	z.checksum = 0;
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, &z, sizeof z);
	XXH3_64bits_update(&st, payload, len);
	return XXH3_64bits_digest(&st);
}

/* ---- configuration ---------------------------------------------------------- */

static void warnf(RtWarnFn warn, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warnf(RtWarnFn warn, void *ud, const char *fmt, ...)
{
	if (!warn)
		return;
	char buf[8192 + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	warn(ud, buf);
}

bool rt_cache_default_dir(char *buf, size_t n, char *err, size_t errlen)
{
	const char *off = getenv("FUSEC_CACHE");
	if (off && strcmp(off, "0") == 0) {
		snprintf(err, errlen, "the disk cache is turned off (FUSEC_CACHE=0)");
		return false;
	}
	const char *dir = getenv("FUSEC_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int w;
	if (dir && *dir)
		w = snprintf(buf, n, "%s", dir);
	else if (xdg && xdg[0] == '/') /* the XDG spec: relative paths are ignored */
		w = snprintf(buf, n, "%s/fusec", xdg);
	else if (home && *home)
		w = snprintf(buf, n, "%s/.cache/fusec", home);
	else {
		snprintf(err, errlen, "there is no cache directory (HOME is not set; set FUSEC_CACHE_DIR)");
		return false;
	}
	if (w < 0 || (size_t)w >= n) {
		snprintf(err, errlen, "the cache directory's path is too long");
		return false;
	}
	return true;
}

/* mkdir -p, every component created mode 0700 (the XDG spec's mode). */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		char saved = buf[i];
		buf[i] = 0;
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		buf[i] = saved;
	}
	return 0;
}

static uint64_t parse_bytes(const char *s, bool *ok)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	*ok = end != s && *end == 0 && errno == 0 && s[0] != '-' && v <= (UINT64_MAX >> shift);
	return (uint64_t)v << shift;
}

bool rt_cache_open(RtCache *c, const char *dir, uint64_t max_bytes, RtWarnFn warn, void *ud)
{
	c->enabled = false;
	atomic_store(&c->no_writes, false);
	c->max_bytes = max_bytes;
	if (strlen(dir) >= sizeof c->dir) {
		warnf(warn, ud, "kernel cache disabled: the directory's path is too long");
		return false;
	}
	snprintf(c->dir, sizeof c->dir, "%s", dir);
	struct stat st;
	if (make_dirs(dir) != 0 || stat(dir, &st) != 0) {
		warnf(warn, ud, "kernel cache disabled: cannot create %s: %s", dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode)) {
		warnf(warn, ud, "kernel cache disabled: %s is not a directory", dir);
		return false;
	}
	/* Anyone who can write here can make us load their code onto the GPU:
	 * its owner as much as other users with write permission. */
	if (st.st_uid != geteuid()) {
		warnf(warn, ud, "kernel cache disabled: %s belongs to another user (uid %u, not %u)", dir,
		      (unsigned)st.st_uid, (unsigned)geteuid());
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		warnf(warn, ud, "kernel cache disabled: %s is writable by other users (chmod 700 it)", dir);
		return false;
	}
	c->enabled = true;
	return true;
}

void rt_cache_init(RtCache *c, RtWarnFn warn, void *ud)
{
	char dir[4096], err[256];
	memset(c, 0, sizeof *c);
	if (!rt_cache_default_dir(dir, sizeof dir, err, sizeof err)) {
		const char *off = getenv("FUSEC_CACHE");
		if (!(off && strcmp(off, "0") == 0))
			warnf(warn, ud, "kernel cache disabled: %s", err);
		return;
	}
	uint64_t max = RT_CACHE_DEFAULT_MAX_BYTES;
	const char *m = getenv("FUSEC_CACHE_MAX_BYTES");
	if (m && *m) {
		bool ok;
		uint64_t v = parse_bytes(m, &ok);
		if (ok)
			max = v;
		else
			warnf(warn, ud, "kernel cache: ignoring FUSEC_CACHE_MAX_BYTES='%s' (expected a size such as 512M)", m);
	}
	rt_cache_open(c, dir, max, warn, ud);
}

/* ---- entries ---------------------------------------------------------------- */

static bool read_full(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* Read and check an open entry. Returns NULL if it is sound (with the
 * payload in *payload when payload is not NULL), else what is wrong. */
static const char *check_entry(int fd, const RtKey *key, Header *h, void **payload)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return "cannot be read";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if ((uint64_t)st.st_size > sizeof *h + RT_CACHE_MAX_ENTRY_BYTES)
		return "larger than an entry may be";
	if ((uint64_t)st.st_size < sizeof *h || !read_full(fd, h, sizeof *h))
		return "truncated header";
	if (memcmp(h->magic, cache_magic, sizeof cache_magic) != 0)
		return "not a fusec cache entry";
	if (h->format != RT_CACHE_FORMAT || h->header_bytes != sizeof *h)
		return "unknown format version";
	if (h->key_hi != key->hi || h->key_lo != key->lo)
		return "key does not match the file name";
	h->label[RT_CACHE_LABEL_MAX - 1] = 0;
	if (h->payload_bytes > RT_CACHE_MAX_ENTRY_BYTES)
		return "larger than an entry may be";
	if (h->payload_bytes != (uint64_t)st.st_size - sizeof *h)
		return h->payload_bytes > (uint64_t)st.st_size - sizeof *h ? "truncated" : "trailing bytes";
	size_t len = (size_t)h->payload_bytes;
	void *buf = malloc(len ? len : 1);
	if (!buf)
		return "too large to read";
	if (!read_full(fd, buf, len)) {
		free(buf);
		return "truncated";
	}
	if (entry_checksum(h, buf, len) != h->checksum) {
		free(buf);
		return "checksum mismatch";
	}
	if (payload)
		*payload = buf;
	else
		free(buf);
	return NULL;
}

static void entry_path(const RtCache *c, RtKey key, char *buf, size_t n)
{
	char hex[33];
	rt_key_hex(key, hex);
	snprintf(buf, n, "%s/%s.fzc", c->dir, hex);
}

RtCacheResult rt_cache_load(RtCache *c, RtKey key, void **image, size_t *len, RtWarnFn warn, void *ud)
{
	*image = NULL;
	*len = 0;
	if (!c->enabled)
		return RTC_MISS;
	char path[4096 + 64];
	entry_path(c, key, path, sizeof path);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block */
	if (fd < 0)
		return RTC_MISS;
	Header h;
	void *payload = NULL;
	const char *problem = check_entry(fd, &key, &h, &payload);
	if (problem) {
		close(fd);
		bool gone = unlink(path) == 0 || errno == ENOENT;
		warnf(warn, ud, "kernel cache: %s was damaged (%s): %s; the kernels were recompiled", path, problem,
		      gone ? "deleted it" : "could not delete it");
		return RTC_CORRUPT;
	}
	futimens(fd, NULL); /* least recently used is by mtime */
	close(fd);
	*image = payload;
	*len = (size_t)h.payload_bytes;
	return RTC_HIT;
}

enum { WRITE_OK, WRITE_FAILED, WRITE_VANISHED };

/* Write the entry to a fresh temporary file and rename it into place.
 * WRITE_VANISHED: the temporary was deleted before its rename; WRITE_FAILED:
 * errno says why. */
static int write_entry(const RtCache *c, const char *hex, const char *path, const Header *h, const void *image,
                        size_t len)
{
	static atomic_uint seq;
	char tmp[4096 + 128];
	snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%u.tmp", c->dir, hex, (long)getpid(), atomic_fetch_add(&seq, 1));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && write_full(fd, h, sizeof *h) && write_full(fd, image, len);
	int err = errno;
	if (fd >= 0 && close(fd) != 0 && ok) {
		ok = false;
		err = errno;
	}
	if (ok && rename(tmp, path) != 0) {
		if (errno == ENOENT)
			return WRITE_VANISHED;
		ok = false;
		err = errno;
	}
	if (!ok && fd >= 0)
		unlink(tmp);
	errno = err;
	return ok ? WRITE_OK : WRITE_FAILED;
}

bool rt_cache_store(RtCache *c, RtKey key, const char *label, int arch, int nvrtc_version, const void *image,
                    size_t len, RtWarnFn warn, void *ud)
{
	if (!c->enabled || atomic_load(&c->no_writes) || len > RT_CACHE_MAX_ENTRY_BYTES)
		return false;
	char hex[33], path[4096 + 64];
	rt_key_hex(key, hex);
	snprintf(path, sizeof path, "%s/%s.fzc", c->dir, hex);

	Header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, cache_magic, sizeof h.magic);
	h.format = RT_CACHE_FORMAT;
	h.header_bytes = sizeof h;
	h.key_hi = key.hi;
	h.key_lo = key.lo;
	h.payload_bytes = len;
	h.arch = (uint32_t)arch;
	h.nvrtc_version = (uint32_t)nvrtc_version;
	snprintf(h.label, sizeof h.label, "%s", label ? label : "");
	h.checksum = entry_checksum(&h, image, len);

	/* A temporary that vanished before its rename was deleted by someone
	 * clearing the directory: the directory is fine, so write it again. */
	int r = WRITE_VANISHED;
	for (int attempt = 0; attempt < 3 && r == WRITE_VANISHED; attempt++)
		r = write_entry(c, hex, path, &h, image, len);
	if (r == WRITE_VANISHED) {
		warnf(warn, ud, "kernel cache: an entry's temporary file in %s was deleted three times before it "
		      "was in place; that entry was not cached", c->dir);
		return false;
	}
	if (r == WRITE_FAILED) {
		int err = errno;
		if (!atomic_exchange(&c->no_writes, true))
			warnf(warn, ud, "kernel cache: cannot write to %s (%s); kernels are compiled but not cached", c->dir,
			      strerror(err));
		return false;
	}
	char keep[64];
	snprintf(keep, sizeof keep, "%s.fzc", hex);
	rt_cache_evict(c->dir, c->max_bytes, keep);
	return true;
}

/* ---- scanning ------------------------------------------------------------------- */

static bool is_temp_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' && n > 5 && strcmp(name + n - 4, ".tmp") == 0;
}

static int by_mtime(const void *a, const void *b)
{
	const RtCacheEntry *x = a, *y = b;
	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->file, y->file);
}

/* Stat an entry, and open it when its header is wanted. false if it is gone
 * (deleted meanwhile by another process); an entry that is there but cannot
 * be opened (permission) is kept with *unreadable saying so. Eviction needs
 * only sizes and times, so it opens nothing. */
static bool stat_entry(int dfd, const char *name, bool open_it, struct stat *st, int *fd, const char **unreadable)
{
	*fd = -1;
	*unreadable = NULL;
	if (!open_it)
		return fstatat(dfd, name, st, 0) == 0;
	*fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block */
	if (*fd >= 0) {
		if (fstat(*fd, st) == 0)
			return true;
		close(*fd);
		*fd = -1;
		return false;
	}
	if (errno == ENOENT)
		return false;
	*unreadable = errno == EACCES ? "cannot be read (permission denied)" : "cannot be read";
	return fstatat(dfd, name, st, 0) == 0;
}

/* What the header says (and with verify, what is wrong with the entry). */
static void describe_entry(int fd, const RtKey *key, bool verify, RtCacheEntry *e)
{
	Header h;
	memset(&h, 0, sizeof h);
	if (verify)
		e->problem = check_entry(fd, key, &h, NULL);
	else if (!read_full(fd, &h, sizeof h))
		memset(&h, 0, sizeof h);
	h.label[RT_CACHE_LABEL_MAX - 1] = 0;
	if (memcmp(h.magic, cache_magic, sizeof cache_magic) == 0) {
		e->arch = (int)h.arch;
		e->nvrtc_version = (int)h.nvrtc_version;
		snprintf(e->label, sizeof e->label, "%s", h.label);
	}
}

/* Entries with sizes and mtimes (and headers if asked), sorted LRU first. */
static RtCacheEntry *scan(const char *dir, bool read_headers, bool verify, int *count, char *err, size_t errlen)
{
	*count = 0;
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return calloc(1, sizeof(RtCacheEntry));
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		return NULL;
	}
	int n = 0, cap = 16, fd;
	RtCacheEntry *v = malloc(sizeof *v * (size_t)cap);
	struct dirent *de;
	struct stat st;
	const char *unreadable;
	while (v && (de = readdir(d)) != NULL) {
		RtKey key;
		if (!parse_entry_name(de->d_name, &key) ||
		    !stat_entry(dirfd(d), de->d_name, read_headers, &st, &fd, &unreadable))
			continue;
		if (n == cap) {
			RtCacheEntry *nv = realloc(v, sizeof *v * (size_t)(cap *= 2));
			if (!nv && fd >= 0)
				close(fd);
			if (!nv)
				break;
			v = nv;
		}
		RtCacheEntry *e = &v[n++];
		memset(e, 0, sizeof *e);
		memcpy(e->file, de->d_name, 37); /* parse_entry_name checked: 36 chars */
		e->bytes = (uint64_t)st.st_size;
		e->mtime = st.st_mtime;
		e->problem = unreadable;
		if (fd >= 0) {
			describe_entry(fd, &key, verify, e);
			close(fd);
		}
	}
	closedir(d);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	qsort(v, (size_t)n, sizeof *v, by_mtime);
	*count = n;
	return v;
}

RtCacheEntry *rt_cache_list(const char *dir, bool verify, int *n, char *err, size_t errlen)
{
	return scan(dir, true, verify, n, err, errlen);
}

/* Temporary files left by a process that died while writing. */
static void remove_stale_temps(const char *dir, time_t older_than)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	struct stat st;
	while ((de = readdir(d)) != NULL)
		if (is_temp_name(de->d_name) && fstatat(dirfd(d), de->d_name, &st, 0) == 0 && st.st_mtime < older_than)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int rt_cache_evict(const char *dir, uint64_t max_bytes, const char *keep)
{
	char err[256];
	int n;
	RtCacheEntry *v = scan(dir, false, false, &n, err, sizeof err);
	if (!v)
		return 0;
	uint64_t total = 0;
	for (int i = 0; i < n; i++)
		total += v[i].bytes;
	int deleted = 0;
	char path[4096 + 64];
	for (int i = 0; i < n && total > max_bytes; i++) {
		if (keep && strcmp(v[i].file, keep) == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, v[i].file);
		if (unlink(path) == 0 || errno == ENOENT) {
			total -= v[i].bytes;
			deleted++;
		}
	}
	free(v);
	remove_stale_temps(dir, time(NULL) - RT_CACHE_STALE_SECONDS);
	return deleted;
}

int rt_cache_clear(const char *dir, uint64_t *bytes, char *err, size_t errlen)
{
	int n;
	*bytes = 0;
	RtCacheEntry *v = scan(dir, false, false, &n, err, errlen);
	if (!v)
		return -1;
	int deleted = 0;
	char path[4096 + 64];
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, v[i].file);
		if (unlink(path) == 0) {
			deleted++;
			*bytes += v[i].bytes;
		} else if (errno != ENOENT) {
			snprintf(err, errlen, "cannot delete %s: %s", path, strerror(errno));
			free(v);
			return -1;
		}
	}
	free(v);
	remove_stale_temps(dir, time(NULL) - RT_CACHE_STALE_SECONDS);
	return deleted;
}

bool rt_cache_remove(const char *dir, const char *file)
{
	RtKey k;
	char path[4096 + 64];
	if (!parse_entry_name(file, &k))
		return false;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return unlink(path) == 0 || errno == ENOENT;
}
