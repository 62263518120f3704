/*
 * cache.h: the on-disk kernel cache.
 *
 * NVRTC takes a few hundred milliseconds per module; loading a cubin from
 * disk takes well under one. An entry is one file, <key>.fzc, in the cache
 * directory: a fixed header (magic, format version, key, payload length,
 * checksum, and for `fusec cache list` the architecture, NVRTC version and
 * program name) followed by the cubin. The key is XXH3-128 over everything
 * the cubin depends on: the generated source, NVRTC's version, the compile
 * options and the architecture.
 *
 * Entries are written to a temporary file in the same directory and renamed
 * into place, so concurrent processes writing the same entry never expose a
 * partial file (the last rename wins; all writers wrote the same bytes). A
 * truncated or corrupt entry fails its checksum: it is reported through the
 * warning callback, deleted and rebuilt. A hit touches the file's mtime; after
 * a write, the least recently used entries are deleted until the directory is
 * under its size cap.
 *
 * The cache is an optimisation only: a directory that is missing, read-only
 * or full turns the disk cache off (or off for writes) with one warning, and
 * compilation goes on.
 *
 * What is loaded onto the GPU must be ours: the directory must belong to the
 * user running fusec and be writable by nobody else (as other JIT caches
 * require), entries must be regular files (opened without blocking, so a
 * FIFO under an entry's name cannot hang a lookup) of at most
 * RT_CACHE_MAX_ENTRY_BYTES, and their header must agree with their size
 * before the payload is read. A writer whose temporary file was deleted
 * under it (`fusec cache clear` beside a running program) writes it again. The library never prints: warnings go to the caller's
 * callback (the context keeps them; the CLI prints them).
 *
 * Configuration (rt_cache_init): FUSEC_CACHE=0 disables the disk cache;
 * FUSEC_CACHE_DIR names the directory, else $XDG_CACHE_HOME/fusec, else
 * ~/.cache/fusec (created mode 0700); FUSEC_CACHE_MAX_BYTES caps its size
 * (a number with an optional K, M or G suffix; default 256M).
 */
#ifndef FUSEC_RT_CACHE_H
#define FUSEC_RT_CACHE_H

#include <stdatomic.h>
#include <time.h>

#include "common.h"

#define RT_CACHE_FORMAT 1
#define RT_CACHE_DEFAULT_MAX_BYTES ((uint64_t)256 << 20)
/* The largest cubin an entry may hold: far above any fusec makes (tens of
 * KB), so that a header claiming gigabytes (a sparse file) is refused
 * before anything is read. */
#define RT_CACHE_MAX_ENTRY_BYTES ((uint64_t)64 << 20)
/* A temporary file older than this was left by a process that died while
 * writing (an NVRTC compile takes seconds; the slowest measured, 51 s):
 * only such files are deleted, never a running writer's. */
#define RT_CACHE_STALE_SECONDS 3600
#define RT_CACHE_LABEL_MAX 48

typedef struct RtKey {
	uint64_t hi, lo; /* XXH3-128 */
} RtKey;

/* The key of a cubin: source text, NVRTC version, compile options and the
 * architecture (major * 10 + minor). */
RtKey rt_cache_key(const char *source, size_t len, int nvrtc_version, const char *options, int arch);
/* 32 lowercase hex digits and a NUL into buf[33]. */
void rt_key_hex(RtKey k, char buf[33]);

typedef void (*RtWarnFn)(void *ud, const char *message);

typedef struct RtCache {
	bool enabled;            /* false: no disk cache at all */
	atomic_bool no_writes;   /* set after the first failed write (warned once) */
	char dir[4096];
	uint64_t max_bytes;
} RtCache;

/* Configure from the environment (see above), creating the directory.
 * Problems are warned and leave the cache disabled. */
void rt_cache_init(RtCache *c, RtWarnFn warn, void *ud);
/* A cache in `dir` with a size cap (created if missing); for tests and the
 * CLI. Returns c->enabled. */
bool rt_cache_open(RtCache *c, const char *dir, uint64_t max_bytes, RtWarnFn warn, void *ud);
/* The directory rt_cache_init would use (it may not exist); false with a
 * reason in err when there is none (FUSEC_CACHE=0, no HOME). */
bool rt_cache_default_dir(char *buf, size_t n, char *err, size_t errlen);

typedef enum RtCacheResult {
	RTC_MISS,    /* no entry (or the cache is disabled) */
	RTC_HIT,     /* *image is a malloc'ed copy of the cubin */
	RTC_CORRUPT  /* there was an entry, but it was damaged: warned and deleted */
} RtCacheResult;

RtCacheResult rt_cache_load(RtCache *c, RtKey key, void **image, size_t *len, RtWarnFn warn, void *ud);

/* Write an entry (temporary file + rename), then evict down to the cap.
 * Returns true if the entry was written; failures are warned once per cache
 * and turn writes off. `label` names the program for listings. */
bool rt_cache_store(RtCache *c, RtKey key, const char *label, int arch, int nvrtc_version, const void *image,
                    size_t len, RtWarnFn warn, void *ud);

/* Delete least recently used entries until the directory holds at most
 * max_bytes, never deleting `keep` (may be NULL). Returns entries deleted. */
int rt_cache_evict(const char *dir, uint64_t max_bytes, const char *keep);

/* ---- listing, for `fusec cache` ---------------------------------------------- */

typedef struct RtCacheEntry {
	char file[64];           /* "<key>.fzc" */
	char label[RT_CACHE_LABEL_MAX];
	int arch;                /* 0 when the header is unreadable */
	int nvrtc_version;
	uint64_t bytes;          /* file size */
	time_t mtime;            /* last use */
	const char *problem;     /* NULL if the entry verified (or was not verified) */
} RtCacheEntry;

/* Entries of `dir`, least recently used first, in a malloc'ed array (free
 * it). With `verify`, each payload's checksum is checked and `problem` says
 * what is wrong. NULL with a message in err if the directory cannot be read;
 * a missing directory is an empty cache. */
RtCacheEntry *rt_cache_list(const char *dir, bool verify, int *n, char *err, size_t errlen);

/* Delete every entry and the temporary files left by dead writers (older
 * than RT_CACHE_STALE_SECONDS; a running writer's are kept); returns the
 * number of entries deleted and their bytes, or -1 with a message in err. */
int rt_cache_clear(const char *dir, uint64_t *bytes, char *err, size_t errlen);

/* Delete one entry file by name (for `fusec cache verify --fix`). */
bool rt_cache_remove(const char *dir, const char *file);

#endif
