/*
 * log.c: the FUSEC_LOG lines (see log.h). The line is formatted into a
 * buffer first and written with one fputs under the stream lock, so that
 * lines from several threads never mix.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool log_enabled(void)
{
	const char *v = getenv("FUSEC_LOG");
	return v && *v && strcmp(v, "0") != 0;
}

void log_line(const char *fmt, ...)
{
	if (!log_enabled())
		return;
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	flockfile(stderr);
	fputs("fusec: ", stderr);
	fputs(buf, stderr);
	if ((size_t)n >= sizeof buf)
		fputs("...", stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
}
