/*
 * json.h: the one JSON writer of fusec (`fusec bench --json`), so that what
 * it prints always parses with a strict parser (RFC 8259):
 *
 *   - strings are escaped: '"', '\\' and control characters, and bytes that
 *     are not valid UTF-8 (a path is any bytes) become U+FFFD, so the text
 *     is valid UTF-8 whatever the input;
 *   - numbers that are not finite (NaN, infinities: a rate over an empty
 *     tensor, a relative difference of outputs holding NaN) are written as
 *     null, since JSON has no literal for them;
 *   - commas and nesting are tracked by the writer, not by its callers.
 *
 * It appends to a StrBuf; the caller writes the buffer out.
 */
#ifndef FUSEC_JSON_H
#define FUSEC_JSON_H

#include "common.h"

enum { JSON_MAX_DEPTH = 16 };

typedef struct JsonWriter {
	StrBuf *sb;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no member yet at this depth */
	bool after_key;             /* a key was written: the value needs no comma */
} JsonWriter;

void json_init(JsonWriter *w, StrBuf *sb);
void json_object_begin(JsonWriter *w);
void json_object_end(JsonWriter *w);
/* A member's key; the next call writes its value. */
void json_key(JsonWriter *w, const char *key);
void json_string(JsonWriter *w, const char *s);
/* The shortest text that reads back as v; null if v is not finite. */
void json_number(JsonWriter *w, double v);
void json_int(JsonWriter *w, long long v);
void json_uint(JsonWriter *w, unsigned long long v);
void json_bool(JsonWriter *w, bool v);
void json_null(JsonWriter *w);

/* Just the escaping, with the quotes: for tests and one-off strings. */
void json_put_string(StrBuf *sb, const char *s);

#endif
