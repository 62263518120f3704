/*
 * nvrtc.h: compiling generated CUDA C with NVRTC (linked from the toolkit;
 * needs no GPU). Used by --emit=ptx and by the JIT.
 */
#ifndef FUSEC_RT_NVRTC_H
#define FUSEC_RT_NVRTC_H

#include "common.h"

typedef struct RtNvrtcResult {
	char *image;        /* PTX text (NUL-terminated) or a cubin */
	size_t image_len;
	const char *log;    /* NVRTC's log (may be empty) */
	const char *message;/* on failure: the log and the numbered source */
} RtNvrtcResult;

/* Compile `source` for sm_<major><minor>: PTX, or a cubin when `cubin`.
 * Everything is allocated in `a`. */
bool rt_nvrtc_compile(Arena *a, const char *source, const char *name, int major, int minor, bool cubin,
                      RtNvrtcResult *out);

/* The options every compile uses besides the architecture, as one string
 * (part of the kernel cache's key, so changing them invalidates entries). */
const char *rt_nvrtc_options(void);

/* Whether this NVRTC compiles for architecture `arch` (major * 10 + minor,
 * nvrtcGetSupportedArchs); `list` gets them all as "sm_75, sm_80, ...". If
 * NVRTC cannot say, every architecture is taken (and list is "?"). */
bool rt_nvrtc_arch_supported(int arch, char *list, size_t n);

/* NVRTC's version as major*1000 + minor*10 (for cache keys). */
int rt_nvrtc_version(void);

#endif
