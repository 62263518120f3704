/*
 * cache.c: `fusec cache list|verify|clear`, the on-disk kernel cache seen
 * from the command line. The directory is the one the library uses
 * (FUSEC_CACHE_DIR, $XDG_CACHE_HOME/fusec or ~/.cache/fusec) unless --dir
 * names another. verify runs the same checks a load does and deletes what a
 * load would delete (a damaged entry would only be rebuilt anyway).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cache.h"

static const char cache_usage[] =
	"usage: fusec cache list|verify|clear [--dir DIR]\n"
	"\n"
	"  list     the entries, least recently used first: key, program, architecture,\n"
	"           NVRTC version, size and when each was last used\n"
	"  verify   check every entry's checksum; delete the damaged ones (exit 1 if any)\n"
	"  clear    delete every entry\n"
	"\n"
	"  --dir DIR  the cache directory (default: $FUSEC_CACHE_DIR, else\n"
	"             $XDG_CACHE_HOME/fusec, else ~/.cache/fusec)\n"
	"  -h, --help this text\n"
	"\n" CLI_EXIT_STATUS_TEXT;

/* "12.3 KiB" */
static const char *human_bytes(uint64_t n, char *buf, size_t cap)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, cap, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, cap, "%.1f %s", v, units[u]);
	return buf;
}

/* "3 min ago" */
static const char *human_age(time_t then, char *buf, size_t cap)
{
	long long s = (long long)(time(NULL) - then);
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, cap, "%lld s ago", s);
	else if (s < 2 * 3600)
		snprintf(buf, cap, "%lld min ago", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, cap, "%lld h ago", s / 3600);
	else
		snprintf(buf, cap, "%lld days ago", s / 86400);
	return buf;
}

static void print_entry(const RtCacheEntry *e)
{
	char size[32], age[32], arch[16] = "?", nvrtc[16] = "?";
	if (e->arch)
		snprintf(arch, sizeof arch, "sm_%d", e->arch);
	if (e->nvrtc_version)
		snprintf(nvrtc, sizeof nvrtc, "%d.%d", e->nvrtc_version / 1000, e->nvrtc_version % 1000 / 10);
	printf("%.16s  %-24s %-7s %-6s %10s  %s\n", e->file, e->label[0] ? e->label : "?", arch, nvrtc,
	       human_bytes(e->bytes, size, sizeof size), human_age(e->mtime, age, sizeof age));
}

static int cache_list(const char *dir, bool verify)
{
	char err[512];
	int n;
	RtCacheEntry *v = rt_cache_list(dir, verify, &n, err, sizeof err);
	if (!v) {
		cli_error("%s", err);
		return EXIT_ERROR;
	}
	uint64_t total = 0;
	int damaged = 0;
	for (int i = 0; i < n; i++)
		total += v[i].bytes;
	char size[32];
	printf("%s: %d entr%s, %s\n", dir, n, n == 1 ? "y" : "ies", human_bytes(total, size, sizeof size));
	if (n > 0 && !verify)
		printf("%-16s  %-24s %-7s %-6s %10s  %s\n", "KEY", "PROGRAM", "ARCH", "NVRTC", "SIZE", "LAST USED");
	for (int i = 0; i < n; i++) {
		if (!verify) {
			print_entry(&v[i]);
		} else if (v[i].problem) {
			damaged++;
			bool gone = rt_cache_remove(dir, v[i].file);
			printf("%s: damaged (%s), %s\n", v[i].file, v[i].problem, gone ? "deleted" : "could not delete it");
		} else {
			printf("%s: ok\n", v[i].file);
		}
	}
	if (verify)
		printf("%d ok, %d damaged\n", n - damaged, damaged);
	free(v);
	return damaged ? EXIT_ERROR : EXIT_OK;
}

static int cache_clear(const char *dir)
{
	char err[512], size[32];
	uint64_t bytes;
	int n = rt_cache_clear(dir, &bytes, err, sizeof err);
	if (n < 0) {
		cli_error("%s", err);
		return EXIT_ERROR;
	}
	printf("%s: deleted %d entr%s, %s\n", dir, n, n == 1 ? "y" : "ies", human_bytes(bytes, size, sizeof size));
	return EXIT_OK;
}

enum { OPT_DIR = 256 };

static int cache_option(void *ctx, int opt, const char *arg)
{
	if (opt != OPT_DIR) {
		cli_error("internal error: option %d has no handler", opt);
		return EXIT_ERROR;
	}
	*(const char **)ctx = arg;
	return -1;
}

int cmd_cache(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dir", required_argument, NULL, OPT_DIR},
		{"help", no_argument, NULL, 'h'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL;
	int first, rc = cli_getopt(argc, argv, opts, "fusec cache", cache_usage, cache_option, &dir, &first);
	if (rc >= 0)
		return rc;
	if (first == argc) {
		fputs(cache_usage, stderr);
		return EXIT_USAGE;
	}
	if (argc - first > 1) {
		cli_error("cache takes one action, got '%s' and '%s'", argv[first], argv[first + 1]);
		return EXIT_USAGE;
	}
	const char *action = argv[first];
	bool list = strcmp(action, "list") == 0, verify = strcmp(action, "verify") == 0;
	if (!list && !verify && strcmp(action, "clear") != 0) {
		cli_error("unknown cache action '%s' (list, verify or clear)", action);
		return EXIT_USAGE;
	}
	char buf[4096], err[256];
	if (!dir) {
		if (!rt_cache_default_dir(buf, sizeof buf, err, sizeof err)) {
			cli_error("%s; use --dir DIR to name one", err);
			return EXIT_ERROR;
		}
		dir = buf;
	}
	return list || verify ? cache_list(dir, verify) : cache_clear(dir);
}
