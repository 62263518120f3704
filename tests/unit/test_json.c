/* The JSON writer (src/json.c) that `fusec bench --json` prints with: exact
 * text for every kind of value, the escaping of strings (quotes, control
 * characters, and bytes that are not UTF-8, as a path may hold), and null
 * for numbers JSON cannot write (NaN, infinities). test_bench.c checks the
 * command's output with a strict parser. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "testutil.h"

static const char *escaped(Arena *a, const char *s)
{
	StrBuf sb;
	sb_init(&sb, a);
	json_put_string(&sb, s);
	return sb_str(&sb);
}

START_TEST(strings)
{
	Arena *a = arena_new();
	ck_assert_str_eq(escaped(a, "plain"), "\"plain\"");
	ck_assert_str_eq(escaped(a, "q\"b\\s/"), "\"q\\\"b\\\\s/\"");
	ck_assert_str_eq(escaped(a, "\n\t\x01\x1f\x7f"), "\"\\u000a\\u0009\\u0001\\u001f\\u007f\"");
	/* well-formed UTF-8 of 2, 3 and 4 bytes is kept as is */
	ck_assert_str_eq(escaped(a, "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* each byte of an ill-formed sequence is one U+FFFD: a lone byte, a cut
	 * sequence, an overlong '/', a surrogate, past U+10FFFF */
	ck_assert_str_eq(escaped(a, "a\xff"), "\"a\xef\xbf\xbd\"");
	ck_assert_str_eq(escaped(a, "\xe2\x82"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	ck_assert_str_eq(escaped(a, "\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	ck_assert_str_eq(escaped(a, "\xed\xa0\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	ck_assert_str_eq(escaped(a, "\xf4\x90\x80\x80"), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	arena_free(a);
}
END_TEST

START_TEST(objects_and_numbers)
{
	Arena *a = arena_new();
	StrBuf sb;
	JsonWriter w;
	sb_init(&sb, a);
	json_init(&w, &sb);
	json_object_begin(&w);
	json_key(&w, "n");
	json_number(&w, 2.5);
	json_key(&w, "third");
	json_number(&w, 1.0 / 3);
	json_key(&w, "big");
	json_number(&w, 1e300);
	json_key(&w, "nan");
	json_number(&w, NAN);
	json_key(&w, "inf");
	json_number(&w, -INFINITY);
	json_key(&w, "inner");
	json_object_begin(&w);
	json_object_end(&w);
	json_key(&w, "o");
	json_object_begin(&w);
	json_key(&w, "i");
	json_int(&w, -7);
	json_key(&w, "u");
	json_uint(&w, 18446744073709551615ull);
	json_object_end(&w);
	json_key(&w, "t");
	json_bool(&w, true);
	json_key(&w, "z");
	json_null(&w);
	json_key(&w, "s\xff");
	json_string(&w, "v");
	json_object_end(&w);
	ck_assert_str_eq(sb_str(&sb), "{\"n\": 2.5, \"third\": 0.33333333333333331, \"big\": 1e+300, \"nan\": null, "
	                              "\"inf\": null, \"inner\": {}, \"o\": {\"i\": -7, \"u\": 18446744073709551615}, "
	                              "\"t\": true, \"z\": null, \"s\xef\xbf\xbd\": \"v\"}");
	/* every finite double reads back exactly */
	double vals[] = {0.1, 1e-310, 123456789.125, -0.0, 5e-324};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		sb_init(&sb, a);
		json_init(&w, &sb);
		json_number(&w, vals[i]);
		ck_assert_msg(strtod(sb_str(&sb), NULL) == vals[i], "%s", sb_str(&sb));
	}
	arena_free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");
	tcase_add_test(tc, strings);
	tcase_add_test(tc, objects_and_numbers);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
