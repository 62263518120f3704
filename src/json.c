/*
 * json.c: the JSON writer (see json.h).
 *
 * UTF-8 is checked as the Unicode standard defines it (no overlong forms,
 * no surrogates, nothing above U+10FFFF); each byte of an ill-formed
 * sequence becomes one U+FFFD, as decoders do. Numbers are printed with
 * %.15g, or %.17g when that does not read back exactly: "2.5" stays "2.5"
 * and no double loses a bit.
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void json_init(JsonWriter *w, StrBuf *sb)
{
	w->sb = sb;
	w->depth = 0;
	w->first[0] = true;
	w->after_key = false;
}

/* The separator before a value (or a key) at the current depth. */
static void before_value(JsonWriter *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->first[w->depth])
		sb_puts(w->sb, ", ");
	w->first[w->depth] = false;
}

void json_object_begin(JsonWriter *w)
{
	before_value(w);
	sb_puts(w->sb, "{");
	if (w->depth + 1 < JSON_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

void json_object_end(JsonWriter *w)
{
	if (w->depth > 0)
		w->depth--;
	sb_puts(w->sb, "}");
}

void json_key(JsonWriter *w, const char *key)
{
	before_value(w);
	json_put_string(w->sb, key);
	sb_puts(w->sb, ": ");
	w->after_key = true;
}

/* Length of the well-formed UTF-8 sequence at s (1 to 4), or 0. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
	if (c > 0xF4 || n == 0)
		return 0;
	for (int k = 1; k < n; k++)
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
	    (c == 0xF4 && s[1] > 0x8F))
		return 0; /* overlong, surrogate, or past U+10FFFF */
	return n;
}

void json_put_string(StrBuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	sb_puts(sb, "\"");
	while (*s) {
		unsigned c = *s;
		if (c == '"' || c == '\\') {
			sb_printf(sb, "\\%c", (char)c);
			s++;
		} else if (c < 0x20 || c == 0x7F) {
			sb_printf(sb, "\\u%04x", c);
			s++;
		} else if (c < 0x80) {
			sb_putn(sb, (const char *)s, 1);
			s++;
		} else {
			int n = utf8_len(s);
			if (n) {
				sb_putn(sb, (const char *)s, (size_t)n);
				s += n;
			} else {
				sb_puts(sb, "\xEF\xBF\xBD"); /* U+FFFD */
				s++;
			}
		}
	}
	sb_puts(sb, "\"");
}

void json_string(JsonWriter *w, const char *s)
{
	before_value(w);
	json_put_string(w->sb, s);
}

void json_number(JsonWriter *w, double v)
{
	before_value(w);
	if (!isfinite(v)) {
		sb_puts(w->sb, "null");
		return;
	}
	char buf[32];
	snprintf(buf, sizeof buf, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	sb_puts(w->sb, buf);
}

void json_int(JsonWriter *w, long long v)
{
	before_value(w);
	sb_printf(w->sb, "%lld", v);
}

void json_uint(JsonWriter *w, unsigned long long v)
{
	before_value(w);
	sb_printf(w->sb, "%llu", v);
}

void json_bool(JsonWriter *w, bool v)
{
	before_value(w);
	sb_puts(w->sb, v ? "true" : "false");
}

void json_null(JsonWriter *w)
{
	before_value(w);
	sb_puts(w->sb, "null");
}
