/* Unit tests of the lexer (src/frontend/lexer.re): every token class, the
 * positions, number values, every error with its exact rendering, and
 * robustness on hostile input. Sources are lexed from a heap copy of exactly
 * their length (not NUL-terminated), so that a read past the end is caught
 * under AddressSanitizer. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/lex.h"

static char result[1 << 16];
static bool lex_ok;

/* Lexes `len` bytes; returns the --emit=tokens dump, or the rendered
 * diagnostic (lex_ok tells which). */
static const char *lex_n(const char *text, size_t len)
{
	Arena *a = arena_new();
	char *copy = malloc(len ? len : 1);
	memcpy(copy, text, len);
	Source src = {"test.fz", copy, len};
	TokenList toks;
	Diag d = {0};
	lex_ok = fe_lex(&src, a, &toks, &d);
	StrBuf sb;
	sb_init(&sb, a);
	if (lex_ok)
		fe_print_tokens(&sb, &src, &toks);
	else
		sb_puts(&sb, diag_render(a, &src, &d));
	snprintf(result, sizeof result, "%s", sb_str(&sb));
	free(copy);
	arena_free(a);
	return result;
}

static const char *lex(const char *text) { return lex_n(text, strlen(text)); }

#define LEX_EQ(text, expected)                       \
	do {                                             \
		ck_assert_str_eq(lex(text), expected);       \
		ck_assert(lex_ok);                           \
	} while (0)

#define LEX_ERR(text, expected)                      \
	do {                                             \
		ck_assert_str_eq(lex(text), expected);       \
		ck_assert(!lex_ok);                          \
	} while (0)

/* Lexes a single-token source and returns the token (in a static). */
static Token one_token(const char *text)
{
	static Token t;
	Arena *a = arena_new();
	Source src = {"test.fz", text, strlen(text)};
	TokenList toks;
	Diag d = {0};
	ck_assert(fe_lex(&src, a, &toks, &d));
	ck_assert_int_eq(toks.n, 2);
	ck_assert_int_eq(toks.items[1].kind, TK_EOF);
	t = toks.items[0];
	arena_free(a);
	return t;
}

/* ---- token classes --------------------------------------------------------------- */

START_TEST(test_punctuation_and_operators)
{
	LEX_EQ("()[],:;=?||&&==!=< <=> >=+-*/%!",
	       "1:1 LPAREN '('\n1:2 RPAREN ')'\n1:3 LBRACKET '['\n1:4 RBRACKET ']'\n1:5 COMMA ','\n"
	       "1:6 COLON ':'\n1:7 SEMI ';'\n1:8 ASSIGN '='\n1:9 QUESTION '?'\n1:10 OROR '||'\n"
	       "1:12 ANDAND '&&'\n1:14 EQ '=='\n1:16 NE '!='\n1:18 LT '<'\n1:20 LE '<='\n1:22 GT '>'\n"
	       "1:24 GE '>='\n1:26 PLUS '+'\n1:27 MINUS '-'\n1:28 STAR '*'\n1:29 SLASH '/'\n"
	       "1:30 PERCENT '%'\n1:31 BANG '!'\n1:32 EOF ''\n");
	/* version 1.1: the bitwise operators; the longest match wins (<<= is << =) */
	LEX_EQ("&|^~<<>><<=>>=&&&",
	       "1:1 AMP '&'\n1:2 PIPE '|'\n1:3 CARET '^'\n1:4 TILDE '~'\n1:5 SHL '<<'\n1:7 SHR '>>'\n"
	       "1:9 SHL '<<'\n1:11 ASSIGN '='\n1:12 SHR '>>'\n1:14 ASSIGN '='\n1:15 ANDAND '&&'\n1:17 AMP '&'\n"
	       "1:18 EOF ''\n");
	/* longest match: "===" is "==" then "=", "!==" is "!=" then "=" */
	LEX_EQ("=== !==", "1:1 EQ '=='\n1:3 ASSIGN '='\n1:5 NE '!='\n1:7 ASSIGN '='\n1:8 EOF ''\n");
}
END_TEST

START_TEST(test_keywords_and_identifiers)
{
	LEX_EQ("in out fn", "1:1 IN 'in'\n1:4 OUT 'out'\n1:8 FN 'fn'\n1:10 EOF ''\n");
	/* keywords are whole words; case matters */
	LEX_EQ("inx input outer fn_ fn2 In OUT _ _a1 Z9_z",
	       "1:1 IDENT 'inx'\n1:5 IDENT 'input'\n1:11 IDENT 'outer'\n1:17 IDENT 'fn_'\n"
	       "1:21 IDENT 'fn2'\n1:25 IDENT 'In'\n1:28 IDENT 'OUT'\n1:32 IDENT '_'\n1:34 IDENT '_a1'\n"
	       "1:38 IDENT 'Z9_z'\n1:42 EOF ''\n");
	/* builtin names are ordinary identifiers */
	LEX_EQ("relu sum where", "1:1 IDENT 'relu'\n1:6 IDENT 'sum'\n1:10 IDENT 'where'\n1:15 EOF ''\n");
}
END_TEST

START_TEST(test_dtype_names)
{
	static const struct {
		const char *text;
		int dtype;
	} cases[] = {{"f16", FZ_F16}, {"bf16", FZ_BF16}, {"f32", FZ_F32}, {"f64", FZ_F64},
	             {"i32", FZ_I32}, {"i64", FZ_I64},   {"bool", FZ_BOOL}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		Token t = one_token(cases[i].text);
		ck_assert_int_eq(t.kind, TK_DTYPE);
		ck_assert_int_eq(t.dtype, cases[i].dtype);
		ck_assert_int_eq(t.span.len, strlen(cases[i].text));
	}
	/* near misses are identifiers */
	LEX_EQ("f8 f32x F32 bool_ i16 bf", "1:1 IDENT 'f8'\n1:4 IDENT 'f32x'\n1:9 IDENT 'F32'\n"
	                                   "1:13 IDENT 'bool_'\n1:19 IDENT 'i16'\n1:23 IDENT 'bf'\n1:25 EOF ''\n");
}
END_TEST

START_TEST(test_integers)
{
	LEX_EQ("0 7 007 42", "1:1 INT '0' 0\n1:3 INT '7' 7\n1:5 INT '007' 7\n1:9 INT '42' 42\n1:11 EOF ''\n");
	Token t = one_token("9223372036854775807");
	ck_assert_int_eq(t.kind, TK_INT);
	ck_assert(t.ival == (uint64_t)INT64_MAX);
	/* leading zeros do not count toward the limit */
	t = one_token("000000000000000000000000009223372036854775807");
	ck_assert(t.ival == (uint64_t)INT64_MAX);
}
END_TEST

START_TEST(test_floats)
{
	LEX_EQ("1.0 .5 2. 1e-5 3.5E+2 1e3 0.1",
	       "1:1 FLOAT '1.0' 1.0\n1:5 FLOAT '.5' 0.5\n1:8 FLOAT '2.' 2.0\n1:11 FLOAT '1e-5' 0.00001\n"
	       "1:16 FLOAT '3.5E+2' 350.0\n1:23 FLOAT '1e3' 1000.0\n1:27 FLOAT '0.1' 0.1\n1:30 EOF ''\n");
	/* a literal is never negative: - is an operator */
	LEX_EQ("-1.5", "1:1 MINUS '-'\n1:2 FLOAT '1.5' 1.5\n1:5 EOF ''\n");
	/* correctly rounded: the same double strtod gives for the full text */
	static const char *const texts[] = {
		"0.1", "2.2250738585072014e-308", "1.7976931348623157e308", "4.9e-324",
		"9007199254740993", /* an integer literal: checked below as a float form */
		"9007199254740993.0", "0.30000000000000004", "123456789012345678901234567890.5",
		"1e-400", /* underflow to zero is fine */
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		if (!strchr(texts[i], '.') && !strchr(texts[i], 'e'))
			continue;
		Token t = one_token(texts[i]);
		ck_assert_int_eq(t.kind, TK_FLOAT);
		ck_assert_msg(t.fval == strtod(texts[i], NULL), "%s", texts[i]);
	}
	/* 2^53 + 1 is a tie: rounds to even, 2^53 */
	ck_assert(one_token("9007199254740993.0").fval == 9007199254740992.0);
	ck_assert(one_token("1e-400").fval == 0.0);
}
END_TEST

START_TEST(test_float_longer_than_the_copy_buffer)
{
	/* 1 followed by 300 zeros and ".5": the copy for strtod goes to the arena */
	char text[400];
	size_t n = 0;
	text[n++] = '1';
	for (int i = 0; i < 300; i++)
		text[n++] = '0';
	memcpy(text + n, ".5", 3);
	Token t = one_token(text);
	ck_assert_int_eq(t.kind, TK_FLOAT);
	ck_assert(t.fval == 1e300);
	ck_assert_int_eq(t.span.len, 303);
}
END_TEST

START_TEST(test_number_at_the_buffer_limit)
{
	/* the buffer ends inside what would be a longer number: only the bytes
	 * within the length count */
	ck_assert_str_eq(lex_n("x = 1.25", 7), "1:1 IDENT 'x'\n1:3 ASSIGN '='\n1:5 FLOAT '1.2' 1.2\n1:8 EOF ''\n");
	ck_assert_str_eq(lex_n("12345", 3), "1:1 INT '123' 123\n1:4 EOF ''\n");
	ck_assert_str_eq(lex_n("1e5", 2), "test.fz:1:1: error: invalid number '1e' (the exponent has no digits)\n"
	                                  "1e\n^~\n");
	ck_assert_str_eq(lex_n("abc", 0), "1:1 EOF ''\n");
}
END_TEST

START_TEST(test_comments_and_whitespace)
{
	/* columns count bytes: é is 2, → and ∑ are 3 */
	LEX_EQ("x # a comment, with UTF-8: é → ∑\ny",
	       "1:1 IDENT 'x'\n1:38 NEWLINE '\\n'\n2:1 IDENT 'y'\n2:2 EOF ''\n");
	LEX_EQ("#only a comment", "1:1 EOF ''\n");
	/* a carriage return inside a comment is comment text */
	LEX_EQ("# a\rb\r\r\nx", "1:7 NEWLINE '\\r\\n'\n2:1 IDENT 'x'\n2:2 EOF ''\n");
	LEX_EQ("\t x\t\t= 1", "1:3 IDENT 'x'\n1:6 ASSIGN '='\n1:8 INT '1' 1\n1:9 EOF ''\n");
	LEX_EQ("a#b#c\n#\n", "1:1 IDENT 'a'\n1:6 NEWLINE '\\n'\n2:2 NEWLINE '\\n'\n1:2 EOF ''\n");
}
END_TEST

START_TEST(test_newlines_and_positions)
{
	LEX_EQ("a\n\n  b\n", "1:1 IDENT 'a'\n1:2 NEWLINE '\\n'\n2:1 NEWLINE '\\n'\n3:3 IDENT 'b'\n"
	                     "3:4 NEWLINE '\\n'\n3:4 EOF ''\n");
	/* \r\n is one newline; a comment may end with it */
	LEX_EQ("a\r\nb # c\r\nc", "1:1 IDENT 'a'\n1:2 NEWLINE '\\r\\n'\n2:1 IDENT 'b'\n2:6 NEWLINE '\\r\\n'\n"
	                         "3:1 IDENT 'c'\n3:2 EOF ''\n");
	/* the end of file sits just past the last token before it */
	LEX_EQ("", "1:1 EOF ''\n");
	LEX_EQ("\n", "1:1 NEWLINE '\\n'\n1:1 EOF ''\n");
	LEX_EQ("x +\n\n  # done\n\n", "1:1 IDENT 'x'\n1:3 PLUS '+'\n1:4 NEWLINE '\\n'\n2:1 NEWLINE '\\n'\n"
	                            "3:9 NEWLINE '\\n'\n4:1 NEWLINE '\\n'\n1:4 EOF ''\n");
	LEX_EQ("ab\r\n", "1:1 IDENT 'ab'\n1:3 NEWLINE '\\r\\n'\n1:3 EOF ''\n");
	LEX_EQ("ab", "1:1 IDENT 'ab'\n1:3 EOF ''\n");
}
END_TEST

START_TEST(test_token_spans)
{
	Arena *a = arena_new();
	const char *text = "in x: f32\n  y = 1.5";
	Source src = {"t.fz", text, strlen(text)};
	TokenList toks;
	Diag d = {0};
	ck_assert(fe_lex(&src, a, &toks, &d));
	ck_assert_int_eq(toks.n, 9);
	const Token *y = &toks.items[5];
	ck_assert_int_eq(y->kind, TK_IDENT);
	ck_assert_int_eq(y->span.off, 12);
	ck_assert_int_eq(y->span.len, 1);
	ck_assert_int_eq(y->span.line, 2);
	ck_assert_int_eq(y->span.col, 3);
	const Token *f = &toks.items[7];
	ck_assert_int_eq(f->span.off, 16);
	ck_assert_int_eq(f->span.len, 3);
	ck_assert_int_eq(toks.items[8].kind, TK_EOF);
	ck_assert_int_eq(toks.items[8].span.off, 19);
	ck_assert_str_eq(fe_token_name(TK_RPAREN), "')'");
	ck_assert_str_eq(fe_token_name(TK_IDENT), "identifier");
	ck_assert_str_eq(fe_token_name(TK_EOF), "end of file");
	arena_free(a);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------ */

START_TEST(test_unexpected_characters)
{
	LEX_ERR("y = x @ 2", "test.fz:1:7: error: unexpected character '@'\ny = x @ 2\n      ^\n");
	LEX_ERR("a\n  $", "test.fz:2:3: error: unexpected character '$'\n  $\n  ^\n");
	LEX_ERR("x = a . b", "test.fz:1:7: error: unexpected character '.'\nx = a . b\n      ^\n");
	LEX_ERR("x = a ` b", "test.fz:1:7: error: unexpected character '`'\nx = a ` b\n      ^\n");
	LEX_ERR("x = 'a'", "test.fz:1:5: error: unexpected character \"'\"\nx = 'a'\n    ^\n");
	LEX_ERR("x = \"a\"", "test.fz:1:5: error: unexpected character '\"'\nx = \"a\"\n    ^\n");
	LEX_ERR("x = a \\ b", "test.fz:1:7: error: unexpected character '\\'\nx = a \\ b\n      ^\n");
}
END_TEST

START_TEST(test_non_ascii_and_control_bytes)
{
	/* U+00D7 (x) is 0xC3 0x97: the first byte is reported, shown as '?' */
	LEX_ERR("y = x \xC3\x97 2", "test.fz:1:7: error: unexpected byte 0xC3 (only ASCII is allowed outside comments)\n"
	                            "y = x ?? 2\n      ^\n");
	LEX_ERR("\xEF\xBB\xBFx = 1", "test.fz:1:1: error: unexpected byte 0xEF (only ASCII is allowed outside comments)\n"
	                            "???x = 1\n^\n");
	LEX_ERR("x = \x01", "test.fz:1:5: error: unexpected byte 0x01 (a control character)\nx = ?\n    ^\n");
	LEX_ERR("x\f= 1", "test.fz:1:2: error: unexpected byte 0x0C (a control character)\nx?= 1\n ^\n");
	LEX_ERR("x = 1\x7f", "test.fz:1:6: error: unexpected byte 0x7F (a control character)\nx = 1?\n     ^\n");
	LEX_ERR("x = 1\ry = 2",
	        "test.fz:1:6: error: unexpected byte 0x0D (a carriage return not followed by a newline)\n"
	        "x = 1?y = 2\n     ^\n");
}
END_TEST

START_TEST(test_nul_bytes)
{
	ck_assert_str_eq(lex_n("x = \0 1", 7), "test.fz:1:5: error: NUL byte in source\nx = ? 1\n    ^\n");
	ck_assert(!lex_ok);
	/* inside a comment too: a NUL is never text */
	ck_assert_str_eq(lex_n("x # a\0b\ny", 9), "test.fz:1:6: error: NUL byte in source\nx # a?b\n     ^\n");
	ck_assert(!lex_ok);
	ck_assert_str_eq(lex_n("\0", 1), "test.fz:1:1: error: NUL byte in source\n?\n^\n");
	ck_assert(!lex_ok);
	/* a NUL right after a token that could continue */
	ck_assert_str_eq(lex_n("1e\0", 3), "test.fz:1:1: error: invalid number '1e' (the exponent has no digits)\n"
	                                   "1e?\n^~\n");
	ck_assert_str_eq(lex_n("abc\0", 4), "test.fz:1:4: error: NUL byte in source\nabc?\n   ^\n");
}
END_TEST

START_TEST(test_invalid_numbers)
{
	LEX_ERR("x = 1e", "test.fz:1:5: error: invalid number '1e' (the exponent has no digits)\nx = 1e\n    ^~\n");
	LEX_ERR("x = 1e+", "test.fz:1:5: error: invalid number '1e+' (the exponent has no digits)\nx = 1e+\n    ^~~\n");
	LEX_ERR("x = 2.5E- 3", "test.fz:1:5: error: invalid number '2.5E-' (the exponent has no digits)\n"
	                       "x = 2.5E- 3\n    ^~~~~\n");
	LEX_ERR("x = 1ex", "test.fz:1:5: error: invalid number '1ex' (the exponent has no digits)\nx = 1ex\n    ^~~\n");
	const char *letter = "a number cannot be followed directly by a letter, digit, '_' or '.'";
	char want[512];
	snprintf(want, sizeof want, "test.fz:1:11: error: invalid number '2x' (%s)\nin x: f32[2x]\n          ^~\n", letter);
	LEX_ERR("in x: f32[2x]", want);
	snprintf(want, sizeof want, "test.fz:1:5: error: invalid number '1.5f' (%s)\nx = 1.5f\n    ^~~~\n", letter);
	LEX_ERR("x = 1.5f", want);
	snprintf(want, sizeof want, "test.fz:1:5: error: invalid number '1e5x' (%s)\nx = 1e5x\n    ^~~~\n", letter);
	LEX_ERR("x = 1e5x", want);
	snprintf(want, sizeof want, "test.fz:1:5: error: invalid number '3_000' (%s)\nx = 3_000\n    ^~~~~\n", letter);
	LEX_ERR("x = 3_000", want);
	snprintf(want, sizeof want, "test.fz:1:5: error: invalid number '1.2.3' (%s)\nx = 1.2.3\n    ^~~~~\n", letter);
	LEX_ERR("x = 1.2.3", want);
	snprintf(want, sizeof want, "test.fz:1:5: error: invalid number '.5e' (the exponent has no digits)\n"
	                            "x = .5e\n    ^~~\n");
	LEX_ERR("x = .5e", want);
	/* a sign after an exponent that is complete belongs to the next token */
	LEX_EQ("1e+2+3", "1:1 FLOAT '1e+2' 100.0\n1:5 PLUS '+'\n1:6 INT '3' 3\n1:7 EOF ''\n");
}
END_TEST

START_TEST(test_integer_too_large)
{
	LEX_ERR("x = 9223372036854775808",
	        "test.fz:1:5: error: integer literal 9223372036854775808 is too large (the limit is 9223372036854775807)\n"
	        "x = 9223372036854775808\n    ^~~~~~~~~~~~~~~~~~~\n");
	LEX_ERR("x = 99999999999999999999999",
	        "test.fz:1:5: error: integer literal 99999999999999999999999 is too large (the limit is 9223372036854775807)\n"
	        "x = 99999999999999999999999\n    ^~~~~~~~~~~~~~~~~~~~~~~\n");
	/* a very long literal is cut in the message */
	char text[200] = "x = ";
	for (int i = 0; i < 100; i++)
		strcat(text, "9");
	lex(text);
	ck_assert(!lex_ok);
	ck_assert_ptr_nonnull(strstr(result, "error: integer literal 9999999999999999999999999999999999999999... is too large"));
}
END_TEST

START_TEST(test_float_out_of_range)
{
	LEX_ERR("x = 1e999", "test.fz:1:5: error: float literal 1e999 is out of range (the largest f64 is about 1.8e308)\n"
	                     "x = 1e999\n    ^~~~~\n");
	LEX_ERR("x = 1.8e308", "test.fz:1:5: error: float literal 1.8e308 is out of range (the largest f64 is about 1.8e308)\n"
	                       "x = 1.8e308\n    ^~~~~~~\n");
	ck_assert(one_token("1.7976931348623157e308").fval == 1.7976931348623157e308);
}
END_TEST

START_TEST(test_first_error_wins)
{
	LEX_ERR("x = 1e\ny = @", "test.fz:1:5: error: invalid number '1e' (the exponent has no digits)\nx = 1e\n    ^~\n");
}
END_TEST

/* ---- robustness ------------------------------------------------------------------------ */

START_TEST(test_random_bytes)
{
	/* random binary input: never crashes, always a clean result */
	srand(12345);
	enum { N = 4096 };
	char buf[N];
	int errors = 0;
	for (int round = 0; round < 200; round++) {
		size_t len = (size_t)(rand() % N);
		for (size_t i = 0; i < len; i++)
			buf[i] = (char)(rand() & 0xFF);
		lex_n(buf, len);
		if (!lex_ok) {
			errors++;
			ck_assert_ptr_nonnull(strstr(result, "test.fz:"));
			ck_assert_ptr_nonnull(strstr(result, ": error: "));
		}
	}
	ck_assert_int_ge(errors, 190); /* almost all random buffers hold an invalid byte */
}
END_TEST

START_TEST(test_random_token_soup)
{
	/* random sequences of valid fragments (and a few bad ones) */
	static const char *const frag[] = {"x", " ", "1", ".", "e", "+", "-", "\n", "\r\n", "#c", "(", ")",
	                                   "in", "f32", "[", "]", ",", "=", "?", ":", "&&", "|", "0", "_"};
	srand(777);
	char buf[2048];
	for (int round = 0; round < 500; round++) {
		size_t len = 0;
		while (len < sizeof buf - 8) {
			const char *f = frag[rand() % (int)(sizeof frag / sizeof frag[0])];
			memcpy(buf + len, f, strlen(f));
			len += strlen(f);
			if (rand() % 50 == 0)
				break;
		}
		lex_n(buf, len);
		if (!lex_ok)
			ck_assert_ptr_nonnull(strstr(result, ": error: "));
	}
}
END_TEST

START_TEST(test_large_input)
{
	/* 1 MB of x+x+...: linear time, every token present */
	size_t len = 1 << 20;
	char *text = malloc(len);
	for (size_t i = 0; i < len; i++)
		text[i] = i % 2 ? '+' : 'x';
	Arena *a = arena_new();
	Source src = {"big.fz", text, len};
	TokenList toks;
	Diag d = {0};
	ck_assert(fe_lex(&src, a, &toks, &d));
	ck_assert_int_eq(toks.n, (int)len + 1);
	ck_assert_int_eq(toks.items[len - 1].kind, TK_PLUS);
	ck_assert_int_eq(toks.items[len - 1].span.col, (int)len);
	arena_free(a);
	free(text);
}
END_TEST

START_TEST(test_unterminated_comment_at_end)
{
	LEX_EQ("x # no newline at the end", "1:1 IDENT 'x'\n1:2 EOF ''\n");
	LEX_EQ("#", "1:1 EOF ''\n");
}
END_TEST

Suite *lexer_suite(void)
{
	Suite *s = suite_create("lexer");
	TCase *tc = tcase_create("tokens");
	tcase_add_test(tc, test_punctuation_and_operators);
	tcase_add_test(tc, test_keywords_and_identifiers);
	tcase_add_test(tc, test_dtype_names);
	tcase_add_test(tc, test_integers);
	tcase_add_test(tc, test_floats);
	tcase_add_test(tc, test_float_longer_than_the_copy_buffer);
	tcase_add_test(tc, test_number_at_the_buffer_limit);
	tcase_add_test(tc, test_comments_and_whitespace);
	tcase_add_test(tc, test_newlines_and_positions);
	tcase_add_test(tc, test_token_spans);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_unexpected_characters);
	tcase_add_test(tc, test_non_ascii_and_control_bytes);
	tcase_add_test(tc, test_nul_bytes);
	tcase_add_test(tc, test_invalid_numbers);
	tcase_add_test(tc, test_integer_too_large);
	tcase_add_test(tc, test_float_out_of_range);
	tcase_add_test(tc, test_first_error_wins);
	suite_add_tcase(s, tc);
	tc = tcase_create("robustness");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_random_bytes);
	tcase_add_test(tc, test_random_token_soup);
	tcase_add_test(tc, test_large_input);
	tcase_add_test(tc, test_unterminated_comment_at_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(lexer_suite()); }
