/* Unit tests of diagnostics (src/frontend/diag.c): first error wins, the
 * rendered form (caret, tabs, span, non-printable bytes, CRLF, end of file,
 * long lines), and the public fz_diag with safe truncation. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static Arena *arena;

static void setup(void) { arena = arena_new(); }
static void teardown(void) { arena_free(arena); }

static Span at(uint32_t off, uint32_t len, int line, int col)
{
	Span s = {off, len, line, col};
	return s;
}

/* Renders `message` at `span` over `text` (exactly strlen(text) bytes). */
static const char *render(const char *text, Span span, const char *message)
{
	size_t n = strlen(text);
	char *copy = arena_alloc(arena, n + 1);
	memcpy(copy, text, n);
	Source src = {"prog.fz", copy, n};
	Diag d = {0};
	diag_error(&d, arena, span, "%s", message);
	return diag_render(arena, &src, &d);
}

START_TEST(test_first_error_wins)
{
	Diag d = {0};
	ck_assert(!diag_error(&d, arena, at(3, 1, 1, 4), "first %d", 1));
	ck_assert(d.set);
	ck_assert(!diag_error(&d, arena, at(0, 1, 1, 1), "second"));
	ck_assert_str_eq(d.message, "first 1");
	ck_assert_int_eq(d.span.col, 4);
}
END_TEST

START_TEST(test_caret_and_span)
{
	ck_assert_str_eq(render("out y = x @ 2", at(10, 1, 1, 11), "unexpected character '@'"),
	                 "prog.fz:1:11: error: unexpected character '@'\nout y = x @ 2\n          ^\n");
	ck_assert_str_eq(render("y = bad_name + 1", at(4, 8, 1, 5), "unknown name 'bad_name'"),
	                 "prog.fz:1:5: error: unknown name 'bad_name'\ny = bad_name + 1\n    ^~~~~~~~\n");
	/* the second line of three; the span is cut at the end of its line */
	ck_assert_str_eq(render("a = 1\nb = (c +\n d)\n", at(10, 10, 2, 5), "m"),
	                 "prog.fz:2:5: error: m\nb = (c +\n    ^~~~\n");
	ck_assert_str_eq(render("abc", at(0, 0, 1, 1), "empty span"), "prog.fz:1:1: error: empty span\nabc\n^\n");
}
END_TEST

START_TEST(test_tabs_are_kept)
{
	ck_assert_str_eq(render("\ty =\tx\t@", at(7, 1, 1, 8), "m"), "prog.fz:1:8: error: m\n\ty =\tx\t@\n\t   \t \t^\n");
	ck_assert_str_eq(render("\t\tzz", at(2, 2, 1, 3), "m"), "prog.fz:1:3: error: m\n\t\tzz\n\t\t^~\n");
}
END_TEST

START_TEST(test_non_printable_bytes)
{
	ck_assert_str_eq(render("x = \xC3\x97 y\x01", at(4, 1, 1, 5), "m"), "prog.fz:1:5: error: m\nx = ?? y?\n    ^\n");
	ck_assert_str_eq(render("a\x7f\x1b b", at(4, 1, 1, 5), "m"), "prog.fz:1:5: error: m\na?? b\n    ^\n");
	/* a NUL in the line: the line is not cut there */
	Source src = {"nul.fz", "ab\0cd\nef", 8};
	Diag d = {0};
	diag_error(&d, arena, at(2, 1, 1, 3), "NUL byte in source");
	ck_assert_str_eq(diag_render(arena, &src, &d), "nul.fz:1:3: error: NUL byte in source\nab?cd\n  ^\n");
}
END_TEST

START_TEST(test_crlf_lines)
{
	ck_assert_str_eq(render("a = 1\r\nb = %\r\nc = 2\r\n", at(11, 1, 2, 5), "m"), "prog.fz:2:5: error: m\nb = %\n    ^\n");
	/* a lone carriage return is shown, as '?' */
	ck_assert_str_eq(render("a\rb", at(1, 1, 1, 2), "m"), "prog.fz:1:2: error: m\na?b\n ^\n");
}
END_TEST

START_TEST(test_end_of_file)
{
	/* through the lexer and parser: the end of file is just past the last
	 * token, whatever blank lines and comments follow it */
	ck_assert_str_eq(tu_error("out y = x +", STAGE_AST),
	                 "test.fz:1:12: error: expected expression, saw end of file\nout y = x +\n           ^\n");
	ck_assert_str_eq(tu_error("out y = x +  # more\n\n", STAGE_AST),
	                 "test.fz:1:20: error: expected expression, saw newline\nout y = x +  # more\n                   ^\n");
	ck_assert_str_eq(tu_error("out y = (x +  # more\n\n", STAGE_AST),
	                 "test.fz:1:13: error: expected expression, saw end of file\nout y = (x +  # more\n            ^\n");
	ck_assert_str_eq(tu_error("in x: f32\nout y = (x +\r\n\r\n", STAGE_AST),
	                 "test.fz:2:13: error: expected expression, saw end of file\nout y = (x +\n            ^\n");
	ck_assert_str_eq(tu_error("y = (\n\n  # more to come\n", STAGE_AST),
	                 "test.fz:1:6: error: expected expression, saw end of file\ny = (\n     ^\n");
	/* a span at the very end of a buffer with no newline */
	ck_assert_str_eq(render("abc", at(3, 0, 1, 4), "m"), "prog.fz:1:4: error: m\nabc\n   ^\n");
	ck_assert_str_eq(render("", at(0, 0, 1, 1), "m"), "prog.fz:1:1: error: m\n\n^\n");
}
END_TEST

START_TEST(test_no_location)
{
	ck_assert_str_eq(render("x = 1", at(0, 0, 0, 0), "program has no outputs"),
	                 "prog.fz: error: program has no outputs\n");
}
END_TEST

START_TEST(test_long_lines_are_windowed)
{
	/* 2000 columns: a window of 200 either side of the column */
	enum { N = 2000 };
	char *line = arena_alloc(arena, N + 1);
	for (int i = 0; i < N; i++)
		line[i] = (char)('a' + i % 26);
	line[1000] = '@';
	const char *r = render(line, at(1000, 3, 1, 1001), "m");
	char want[1024], *p = want;
	p += sprintf(p, "prog.fz:1:1001: error: m\n...%.400s...\n", line + 800);
	p += sprintf(p, "%*s^~~\n", 203, "");
	ck_assert_str_eq(r, want);
	/* near the start: cut only on the right */
	r = render(line, at(5, 1, 1, 6), "m");
	p = want;
	p += sprintf(p, "prog.fz:1:6: error: m\n%.205s...\n     ^\n", line);
	ck_assert_str_eq(r, want);
	/* 512 bytes is not long yet */
	line[512] = 0;
	r = render(line, at(511, 1, 1, 512), "m");
	ck_assert_int_eq(strlen(r), strlen("prog.fz:1:512: error: m\n") + 513 + 513);
}
END_TEST

START_TEST(test_public_form)
{
	Source src = {"dir/prog.fz", "y = x +* 2\n", 11};
	Diag d = {0};
	diag_error(&d, arena, at(7, 4, 1, 8), "expected expression, saw '*'");
	const char *r = diag_render(arena, &src, &d);
	fz_diag pub;
	memset(&pub, 0x55, sizeof pub);
	diag_to_public(&src, &d, r, &pub);
	ck_assert_str_eq(pub.file, "dir/prog.fz");
	ck_assert_int_eq(pub.line, 1);
	ck_assert_int_eq(pub.col, 8);
	ck_assert_int_eq(pub.len, 3); /* the span is cut at the end of the line */
	ck_assert_str_eq(pub.message, "expected expression, saw '*'");
	ck_assert_str_eq(pub.rendered, "dir/prog.fz:1:8: error: expected expression, saw '*'\ny = x +* 2\n       ^~~\n");
	/* without a rendering: the first line alone */
	diag_to_public(&src, &d, NULL, &pub);
	ck_assert_str_eq(pub.rendered, "dir/prog.fz:1:8: error: expected expression, saw '*'\n");
	/* no error at all */
	Diag none = {0};
	diag_to_public(&src, &none, NULL, &pub);
	ck_assert_int_eq(pub.line, 0);
	ck_assert_str_eq(pub.message, "");
	ck_assert_str_eq(pub.rendered, "");
	/* no location */
	Diag nowhere = {0};
	diag_error(&nowhere, arena, at(0, 0, 0, 0), "program has no outputs");
	diag_to_public(&src, &nowhere, NULL, &pub);
	ck_assert_int_eq(pub.line, 0);
	ck_assert_int_eq(pub.col, 0);
	ck_assert_int_eq(pub.len, 1);
	ck_assert_str_eq(pub.rendered, "dir/prog.fz: error: program has no outputs\n");
}
END_TEST

START_TEST(test_public_form_truncates_safely)
{
	char name[400], msg[700];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	/* a message of two-byte UTF-8 characters, cut between sequences */
	for (size_t i = 0; i + 1 < sizeof msg - 1; i += 2) {
		msg[i] = (char)0xC3;
		msg[i + 1] = (char)0xA9;
	}
	msg[sizeof msg - 2] = 'x';
	msg[sizeof msg - 1] = 0;
	Source src = {name, "abc", 3};
	Diag d = {0};
	diag_error(&d, arena, at(1, 1, 1, 2), "%s", msg);
	const char *r = diag_render(arena, &src, &d);
	fz_diag pub;
	diag_to_public(&src, &d, r, &pub);
	ck_assert_int_eq(strlen(pub.file), sizeof pub.file - 1);
	ck_assert_int_eq(strlen(pub.message), sizeof pub.message - 2); /* 510: no half character */
	ck_assert_int_eq((unsigned char)pub.message[509], 0xA9);
	ck_assert_int_le(strlen(pub.rendered), sizeof pub.rendered - 1);
	ck_assert(strncmp(pub.rendered, name, 255) == 0);
	/* the unrendered fallback truncates too */
	diag_to_public(&src, &d, NULL, &pub);
	ck_assert_int_le(strlen(pub.rendered), sizeof pub.rendered - 1);
}
END_TEST

START_TEST(test_pipeline_diagnostic)
{
	/* the pipeline renders the first error through diag_render */
	ck_assert_str_eq(tu_error("in x: f32[N]\n\tout y = relu(x,, 2)\n", STAGE_AST),
	                 "test.fz:2:17: error: expected expression, saw ','\n\tout y = relu(x,, 2)\n\t               ^\n");
}
END_TEST

Suite *diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("render");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_first_error_wins);
	tcase_add_test(tc, test_caret_and_span);
	tcase_add_test(tc, test_tabs_are_kept);
	tcase_add_test(tc, test_non_printable_bytes);
	tcase_add_test(tc, test_crlf_lines);
	tcase_add_test(tc, test_end_of_file);
	tcase_add_test(tc, test_no_location);
	tcase_add_test(tc, test_long_lines_are_windowed);
	tcase_add_test(tc, test_public_form);
	tcase_add_test(tc, test_public_form_truncates_safely);
	tcase_add_test(tc, test_pipeline_diagnostic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(diag_suite()); }
