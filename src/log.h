/*
 * log.h: what fusec reports about its own work when asked to (FUSEC_LOG=1 in
 * the environment, or `fusec -v`): each JIT compile (cache hit or miss, the
 * key, NVRTC's time and log, even when empty) and the launch geometry chosen
 * for each kernel at a new size.
 *
 * The library never prints otherwise. A log line goes to stderr whole (one
 * write under the stream's lock, so threads do not interleave within a
 * line), prefixed "fusec: ". FUSEC_LOG is read at every call, so a program
 * can turn it on and off around the calls it wants to see.
 */
#ifndef FUSEC_LOG_H
#define FUSEC_LOG_H

#include <stdbool.h>

/* FUSEC_LOG is set, non-empty and not "0". */
bool log_enabled(void);
/* One line (no trailing newline in fmt) to stderr, if log_enabled(). */
void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
