/* .npy reading and writing (npy.c) and host tensors (tensor.c): round trips
 * of every dtype and rank, the exact bytes NumPy writes, header variants
 * NumPy may produce, and malformed files with their exact messages. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/eval.h"
#include "tensor.h"
#include "testutil.h"

static char dir[256];

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/fusec_test_npy.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char p[512];
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && (e->d_name[1] != '.' || e->d_name[2]));
	closedir(d);
	return n;
}

static const char *path(const char *name)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static void write_bytes(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(path(name), "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, n, f), n);
	fclose(f);
}

/* A file with a v1 preamble, the given header text (not padded) and n data bytes. */
static void write_npy(const char *name, int major, const char *header, size_t ndata)
{
	unsigned char buf[4096];
	size_t hl = strlen(header), off;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	if (major == 1) {
		buf[8] = (unsigned char)hl;
		buf[9] = (unsigned char)(hl >> 8);
		off = 10;
	} else {
		buf[8] = (unsigned char)hl;
		buf[9] = (unsigned char)(hl >> 8);
		buf[10] = buf[11] = 0;
		off = 12;
	}
	memcpy(buf + off, header, hl);
	for (size_t k = 0; k < ndata; k++)
		buf[off + hl + k] = (unsigned char)k;
	write_bytes(name, buf, off + hl + ndata);
}

/* Read expecting failure; returns the message. */
static const char *read_error(const char *name)
{
	static char err[1024];
	Tensor t;
	err[0] = 0;
	ck_assert_msg(!npy_read(path(name), &t, err, sizeof err), "%s read without error", name);
	ck_assert_ptr_null(t.data);
	/* every message names the file */
	ck_assert_msg(strncmp(err, path(name), strlen(path(name))) == 0, "message does not name the file: %s", err);
	return err + strlen(path(name)) + 2;
}

START_TEST(tensor_basics)
{
	Tensor t = {.dtype = FZ_F32, .rank = 2, .shape = {3, 4}};
	ck_assert_int_eq(tensor_numel(&t), 12);
	ck_assert_uint_eq(tensor_nbytes(&t), 48);
	ck_assert(tensor_alloc(&t));
	for (int k = 0; k < 12; k++)
		ck_assert(tensor_get(&t, k) == 0.0);
	char buf[64];
	tensor_type_str(&t, buf, sizeof buf);
	ck_assert_str_eq(buf, "f32[3, 4]");
	tensor_free(&t);
	ck_assert_ptr_null(t.data);
	Tensor s = {.dtype = FZ_BF16, .rank = 0};
	ck_assert_int_eq(tensor_numel(&s), 1);
	tensor_type_str(&s, buf, sizeof buf);
	ck_assert_str_eq(buf, "bf16");
	Tensor e = {.dtype = FZ_I64, .rank = 3, .shape = {2, 0, 5}};
	ck_assert_int_eq(tensor_numel(&e), 0);
	ck_assert(tensor_alloc(&e));
	ck_assert_ptr_nonnull(e.data);
	tensor_free(&e);
	Tensor big = {.dtype = FZ_F64, .rank = 3, .shape = {1LL << 40, 1LL << 40, 1LL << 40}};
	ck_assert_int_eq(tensor_numel(&big), -1);
	ck_assert(!tensor_alloc(&big));
	Tensor big2 = {.dtype = FZ_F64, .rank = 2, .shape = {1LL << 31, 1LL << 31}};
	ck_assert_int_eq(tensor_numel(&big2), 1LL << 62);
	ck_assert(!tensor_alloc(&big2)); /* 2^65 bytes */
	tensor_type_str(&t, buf, 4); /* truncates, stays terminated */
	ck_assert_str_eq(buf, "f32");
}
END_TEST

static void fill(Tensor *t, unsigned seed)
{
	int64_t n = tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		double v = (double)((i * 7 + seed) % 23) - 11.5;
		Scalar s = dtype_is_float(t->dtype) ? (Scalar){.f = v / 4} : (Scalar){.i = (int64_t)v * 1000003};
		if (t->dtype == FZ_BOOL)
			s.i = (i + seed) % 3 == 0;
		eval_store(t->dtype, t->data, i, s);
	}
}

START_TEST(round_trip_every_dtype_and_rank)
{
	make_dir();
	fz_dtype types[] = {FZ_BOOL, FZ_I32, FZ_I64, FZ_F16, FZ_F32, FZ_F64};
	for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
		for (int rank = 0; rank <= FZ_MAX_RANK; rank++) {
			Tensor t = {.dtype = types[ti], .rank = rank};
			for (int k = 0; k < rank; k++)
				t.shape[k] = (k % 3) + 1 + (rank < 4 ? 3 : 0);
			ck_assert(tensor_alloc(&t));
			fill(&t, (unsigned)(ti + rank));
			char err[512];
			ck_assert_msg(npy_write(path("t.npy"), &t, err, sizeof err), "%s", err);
			Tensor u;
			ck_assert_msg(npy_read(path("t.npy"), &u, err, sizeof err), "%s", err);
			ck_assert_int_eq(u.dtype, t.dtype);
			ck_assert_int_eq(u.rank, rank);
			for (int k = 0; k < rank; k++)
				ck_assert_int_eq(u.shape[k], t.shape[k]);
			ck_assert(memcmp(u.data, t.data, tensor_nbytes(&t)) == 0);
			struct stat st;
			ck_assert_int_eq(stat(path("t.npy"), &st), 0);
			ck_assert_int_eq((st.st_size - (off_t)tensor_nbytes(&t)) % 64, 0); /* header padded to 64 */
			tensor_free(&t);
			tensor_free(&u);
		}
	}
	ck_assert_int_eq(count_files(), 1); /* no temporary file left */
	remove_dir();
}
END_TEST

START_TEST(empty_arrays)
{
	make_dir();
	Tensor t = {.dtype = FZ_F32, .rank = 2, .shape = {0, 5}};
	ck_assert(tensor_alloc(&t));
	char err[256];
	ck_assert(npy_write(path("e.npy"), &t, err, sizeof err));
	Tensor u;
	ck_assert(npy_read(path("e.npy"), &u, err, sizeof err));
	ck_assert_int_eq(u.rank, 2);
	ck_assert_int_eq(u.shape[0], 0);
	ck_assert_int_eq(u.shape[1], 5);
	ck_assert_ptr_nonnull(u.data);
	tensor_free(&t);
	tensor_free(&u);
	remove_dir();
}
END_TEST

START_TEST(exact_bytes_as_numpy_writes)
{
	make_dir();
	Tensor t = {.dtype = FZ_F32, .rank = 2, .shape = {2, 3}};
	ck_assert(tensor_alloc(&t));
	float *f = t.data;
	for (int k = 0; k < 6; k++)
		f[k] = (float)k;
	char err[256];
	ck_assert(npy_write(path("a.npy"), &t, err, sizeof err));
	unsigned char buf[200];
	FILE *fp = fopen(path("a.npy"), "rb");
	size_t n = fread(buf, 1, sizeof buf, fp);
	fclose(fp);
	ck_assert_uint_eq(n, 128 + 24); /* a 60-character dict pads to 128 */
	ck_assert(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
	const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	ck_assert(memcmp(buf + 10, dict, strlen(dict)) == 0);
	for (size_t k = 10 + strlen(dict); k < 127; k++)
		ck_assert_int_eq(buf[k], ' ');
	ck_assert_int_eq(buf[127], '\n');
	ck_assert(memcmp(buf + 128, t.data, 24) == 0);
	tensor_free(&t);

	/* rank 1 and rank 0 shapes are written as Python writes tuples */
	Tensor v = {.dtype = FZ_BOOL, .rank = 1, .shape = {5}};
	ck_assert(tensor_alloc(&v));
	ck_assert(npy_write(path("b.npy"), &v, err, sizeof err));
	fp = fopen(path("b.npy"), "rb");
	n = fread(buf, 1, sizeof buf, fp);
	fclose(fp);
	ck_assert_uint_eq(n, 128 + 5);
	dict = "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }";
	ck_assert(memcmp(buf + 10, dict, strlen(dict)) == 0);
	tensor_free(&v);
	Tensor s = {.dtype = FZ_I64, .rank = 0};
	ck_assert(tensor_alloc(&s));
	ck_assert(npy_write(path("c.npy"), &s, err, sizeof err));
	fp = fopen(path("c.npy"), "rb");
	n = fread(buf, 1, sizeof buf, fp);
	fclose(fp);
	ck_assert_uint_eq(n, 128 + 8);
	dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }";
	ck_assert(memcmp(buf + 10, dict, strlen(dict)) == 0);
	tensor_free(&s);
	remove_dir();
}
END_TEST

START_TEST(bf16_is_written_as_f32)
{
	make_dir();
	Tensor t = {.dtype = FZ_BF16, .rank = 1, .shape = {4}};
	ck_assert(tensor_alloc(&t));
	double vals[] = {1.0, -0.5, 3.140625, 1e30};
	for (int k = 0; k < 4; k++)
		eval_store(FZ_BF16, t.data, k, (Scalar){.f = vals[k]});
	char err[256];
	ck_assert(npy_write(path("h.npy"), &t, err, sizeof err));
	Tensor u;
	ck_assert(npy_read(path("h.npy"), &u, err, sizeof err));
	ck_assert_int_eq(u.dtype, FZ_F32);
	for (int k = 0; k < 4; k++)
		ck_assert(tensor_get(&u, k) == tensor_get(&t, k));
	ck_assert(tensor_get(&u, 2) == 3.140625);
	tensor_free(&t);
	tensor_free(&u);
	remove_dir();
}
END_TEST

START_TEST(header_variants)
{
	make_dir();
	Tensor t;
	char err[256];
	/* double quotes, keys in another order, no trailing comma, odd spacing */
	write_npy("a.npy", 1, "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<i4\"}\n", 24);
	ck_assert_msg(npy_read(path("a.npy"), &t, err, sizeof err), "%s", err);
	ck_assert_int_eq(t.dtype, FZ_I32);
	ck_assert_int_eq(t.rank, 2);
	ck_assert_int_eq(t.shape[1], 3);
	ck_assert_int_eq(((unsigned char *)t.data)[5], 5);
	tensor_free(&t);
	/* version 2 and 3 headers (4-byte length) */
	write_npy("b.npy", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 24);
	ck_assert_msg(npy_read(path("b.npy"), &t, err, sizeof err), "%s", err);
	ck_assert_int_eq(t.dtype, FZ_F64);
	ck_assert_int_eq(t.shape[0], 3);
	tensor_free(&t);
	write_npy("c.npy", 3, "{'descr': '<f2', 'fortran_order': False, 'shape': (  ), }", 2);
	ck_assert_msg(npy_read(path("c.npy"), &t, err, sizeof err), "%s", err);
	ck_assert_int_eq(t.dtype, FZ_F16);
	ck_assert_int_eq(t.rank, 0);
	tensor_free(&t);
	/* Python 2 longs, and a bool array with bytes other than 0 and 1 */
	write_npy("d.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2L, 2L), }", 4);
	ck_assert_msg(npy_read(path("d.npy"), &t, err, sizeof err), "%s", err);
	ck_assert_int_eq(t.dtype, FZ_BOOL);
	unsigned char *b = t.data;
	ck_assert(b[0] == 0 && b[1] == 1 && b[2] == 1 && b[3] == 1);
	tensor_free(&t);
	remove_dir();
}
END_TEST

#define GOOD_DICT(descr, shape) "{'descr': '" descr "', 'fortran_order': False, 'shape': " shape ", }"

START_TEST(malformed_files)
{
	make_dir();
	write_bytes("empty.npy", "", 0);
	ck_assert_str_eq(read_error("empty.npy"), "not a .npy file (bad magic)");
	write_bytes("magic.npy", "\x93NUMPZ\x01\x00\x10\x00{}              ", 26);
	ck_assert_str_eq(read_error("magic.npy"), "not a .npy file (bad magic)");
	write_bytes("short.npy", "\x93NUMPY\x01", 7);
	ck_assert_str_eq(read_error("short.npy"), "truncated header");
	write_bytes("trunc.npy", "\x93NUMPY\x01\x00\x40\x00{'descr': '<f4',", 27);
	ck_assert_str_eq(read_error("trunc.npy"), "truncated header");
	write_bytes("trunc2.npy", "\x93NUMPY\x02\x00\x40\x00", 10);
	ck_assert_str_eq(read_error("trunc2.npy"), "truncated header");
	write_bytes("ver.npy", "\x93NUMPY\x04\x00\x00\x00", 10);
	ck_assert_str_eq(read_error("ver.npy"), "unsupported .npy format version 4.0");
	write_bytes("huge.npy", "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
	ck_assert_str_eq(read_error("huge.npy"), "header length 2147483647 is not plausible");

	write_npy("notdict.npy", 1, "['descr', '<f4']", 0);
	ck_assert_str_eq(read_error("notdict.npy"), "bad header: the header is not a dict");
	write_npy("nokey.npy", 1, "{'descr': '<f4', 'shape': (2,), }", 8);
	ck_assert_str_eq(read_error("nokey.npy"), "bad header: the header lacks 'descr', 'fortran_order' or 'shape'");
	write_npy("extra.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8);
	ck_assert_str_eq(read_error("extra.npy"), "bad header: the header has an unexpected key");
	write_npy("dup.npy", 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8);
	ck_assert_str_eq(read_error("dup.npy"), "bad header: the header repeats a key");
	write_npy("unterm.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8);
	ck_assert_str_eq(read_error("unterm.npy"), "bad header: the header dict is malformed");
	write_npy("after.npy", 1, GOOD_DICT("<f4", "(2,)") " x", 8);
	ck_assert_str_eq(read_error("after.npy"), "bad header: the header has text after its dict");
	write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8);
	ck_assert_str_eq(read_error("fo.npy"), "bad header: 'fortran_order' is not True or False");
	write_npy("struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", 8);
	ck_assert_str_eq(read_error("struct.npy"),
	                 "bad header: 'descr' is not a simple dtype string (structured arrays are not supported)");
	write_npy("shape1.npy", 1, GOOD_DICT("<f4", "[2, 3]"), 24);
	ck_assert_str_eq(read_error("shape1.npy"), "bad header: 'shape' is not a tuple");
	write_npy("shape2.npy", 1, GOOD_DICT("<f4", "(2, -3)"), 24);
	ck_assert_str_eq(read_error("shape2.npy"), "bad header: 'shape' must be a tuple of non-negative integers");
	write_npy("shape3.npy", 1, GOOD_DICT("<f4", "(2 3)"), 24);
	ck_assert_str_eq(read_error("shape3.npy"), "bad header: 'shape' is not a well-formed tuple");
	write_npy("shape4.npy", 1, GOOD_DICT("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4);
	ck_assert_str_eq(read_error("shape4.npy"), "bad header: 'shape' has more than 8 dimensions (fusec's limit)");
	write_npy("shape5.npy", 1, GOOD_DICT("<f4", "(99999999999999999999,)"), 4);
	ck_assert_str_eq(read_error("shape5.npy"), "bad header: a dimension of 'shape' is too large");
	write_npy("shape6.npy", 1, GOOD_DICT("<f4", "(4294967296, 4294967296, 4294967296)"), 4);
	ck_assert_str_eq(read_error("shape6.npy"), "shape of f32[4294967296, 4294967296, 4294967296] is too large");

	write_npy("u1.npy", 1, GOOD_DICT("|u1", "(2,)"), 2);
	ck_assert_str_eq(read_error("u1.npy"),
	                 "unsupported dtype '|u1' (fusec reads f2 f4 f8 i4 i8 b1 in either byte order, and V2 as bf16)");
	write_npy("c8.npy", 1, GOOD_DICT("<c8", "(2,)"), 16);
	ck_assert_str_eq(read_error("c8.npy"),
	                 "unsupported dtype '<c8' (fusec reads f2 f4 f8 i4 i8 b1 in either byte order, and V2 as bf16)");
	write_npy("nobo.npy", 1, GOOD_DICT("|f4", "(2,)"), 8); /* a 4-byte number needs a byte order */
	ck_assert_str_eq(read_error("nobo.npy"),
	                 "unsupported dtype '|f4' (fusec reads f2 f4 f8 i4 i8 b1 in either byte order, and V2 as bf16)");
	/* a NUL inside the descr would make '<f4\0junk' read as '<f4' */
	static const char nul[] = "{'descr': '<f4\0junk', 'fortran_order': False, 'shape': (2,), }";
	unsigned char buf[256] = "\x93NUMPY\x01\x00";
	buf[8] = (unsigned char)(sizeof nul - 1);
	memcpy(buf + 10, nul, sizeof nul - 1);
	write_bytes("nul.npy", buf, 10 + sizeof nul - 1 + 8);
	ck_assert_str_eq(read_error("nul.npy"),
	                 "bad header: 'descr' is not a simple dtype string (structured arrays are not supported)");

	/* the data must be exactly as long as the shape says */
	write_npy("lie.npy", 1, GOOD_DICT("<f4", "(10,)"), 20);
	ck_assert_str_eq(read_error("lie.npy"), "data size does not match the header: expected 40 bytes for f32[10], got 20");
	write_npy("long.npy", 1, GOOD_DICT("<i8", "(2, 2)"), 33);
	ck_assert_str_eq(read_error("long.npy"), "data size does not match the header: expected 32 bytes for i64[2, 2], got 33");
	write_npy("short2.npy", 1, GOOD_DICT("<f8", "()"), 7);
	ck_assert_str_eq(read_error("short2.npy"), "data size does not match the header: expected 8 bytes for f64, got 7");

	ck_assert_str_eq(read_error("missing.npy"), "cannot open: No such file or directory");
	remove_dir();
}
END_TEST

/* A v1 file with this header dict and these data bytes. */
static void write_npy_data(const char *name, const char *dict, const void *data, size_t n)
{
	unsigned char buf[4096];
	size_t hl = strlen(dict);
	ck_assert_uint_lt(10 + hl + n, sizeof buf);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)hl;
	buf[9] = (unsigned char)(hl >> 8);
	memcpy(buf + 10, dict, hl);
	memcpy(buf + 10 + hl, data, n);
	write_bytes(name, buf, 10 + hl + n);
}

static Tensor read_ok(const char *name)
{
	Tensor t;
	char err[1024];
	ck_assert_msg(npy_read(path(name), &t, err, sizeof err), "%s", err);
	return t;
}

/* Big-endian arrays, as NumPy saves '>f4' and friends: swapped, exactly. */
START_TEST(big_endian)
{
	make_dir();
	static const unsigned char f4[] = {0x3F, 0xC0, 0, 0, 0xC0, 0x10, 0, 0};          /* 1.5, -2.25 */
	static const unsigned char f2[] = {0x3C, 0x00, 0xC5, 0x00};                      /* 1, -5 */
	static const unsigned char f8[] = {0x40, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18}; /* pi */
	static const unsigned char i4[] = {0xFF, 0xFF, 0xFF, 0xFE, 0, 0, 1, 2};           /* -2, 258 */
	static const unsigned char i8[] = {1, 2, 3, 4, 5, 6, 7, 8};
	static const unsigned char b1[] = {0, 7};
	static const unsigned char v2[] = {0x3F, 0xC0};                                    /* bf16 1.5 */
	write_npy_data("f4.npy", GOOD_DICT(">f4", "(2,)"), f4, sizeof f4);
	write_npy_data("f2.npy", GOOD_DICT(">f2", "(2,)"), f2, sizeof f2);
	write_npy_data("f8.npy", GOOD_DICT(">f8", "()"), f8, sizeof f8);
	write_npy_data("i4.npy", GOOD_DICT(">i4", "(2,)"), i4, sizeof i4);
	write_npy_data("i8.npy", GOOD_DICT(">i8", "(1,)"), i8, sizeof i8);
	write_npy_data("b1.npy", GOOD_DICT(">b1", "(2,)"), b1, sizeof b1);
	write_npy_data("v2.npy", GOOD_DICT(">V2", "(1,)"), v2, sizeof v2);
	Tensor t = read_ok("f4.npy");
	ck_assert_int_eq(t.dtype, FZ_F32);
	ck_assert(tensor_get(&t, 0) == 1.5 && tensor_get(&t, 1) == -2.25);
	tensor_free(&t);
	t = read_ok("f2.npy");
	ck_assert_int_eq(t.dtype, FZ_F16);
	ck_assert(tensor_get(&t, 0) == 1 && tensor_get(&t, 1) == -5);
	tensor_free(&t);
	t = read_ok("f8.npy");
	ck_assert(tensor_get(&t, 0) == 3.141592653589793);
	tensor_free(&t);
	t = read_ok("i4.npy");
	ck_assert(tensor_get(&t, 0) == -2 && tensor_get(&t, 1) == 258);
	tensor_free(&t);
	t = read_ok("i8.npy");
	ck_assert(((int64_t *)t.data)[0] == 0x0102030405060708LL);
	tensor_free(&t);
	t = read_ok("b1.npy");
	ck_assert(tensor_get(&t, 0) == 0 && tensor_get(&t, 1) == 1);
	tensor_free(&t);
	t = read_ok("v2.npy");
	ck_assert_int_eq(t.dtype, FZ_BF16);
	ck_assert(tensor_get(&t, 0) == 1.5);
	tensor_free(&t);
	remove_dir();
}
END_TEST

/* Fortran-order arrays are transposed into C order: a[i][j][k] = 12i + 4j + k
 * stored with i fastest reads back as 0, 1, ..., 23. */
START_TEST(fortran_order)
{
	make_dir();
	float f[24];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			for (int k = 0; k < 4; k++)
				f[i + 2 * j + 6 * k] = (float)(12 * i + 4 * j + k);
	write_npy_data("f3.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }", f, sizeof f);
	Tensor t = read_ok("f3.npy");
	ck_assert_int_eq(t.rank, 3);
	ck_assert(t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 4);
	for (int e = 0; e < 24; e++)
		ck_assert_msg(tensor_get(&t, e) == e, "element %d is %g", e, tensor_get(&t, e));
	tensor_free(&t);
	/* big-endian and Fortran at once: int64 [[1, 2, 3], [4, 5, 6]] */
	unsigned char be[48] = {0};
	int64_t want_f[6] = {1, 4, 2, 5, 3, 6};
	for (int e = 0; e < 6; e++)
		be[8 * e + 7] = (unsigned char)want_f[e];
	write_npy_data("i8.npy", "{'descr': '>i8', 'fortran_order': True, 'shape': (2, 3), }", be, sizeof be);
	t = read_ok("i8.npy");
	for (int e = 0; e < 6; e++)
		ck_assert(tensor_get(&t, e) == e + 1);
	tensor_free(&t);
	/* empty and one-dimensional Fortran arrays are their C bytes */
	write_npy_data("e.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 3), }", f, 0);
	t = read_ok("e.npy");
	ck_assert_int_eq(tensor_numel(&t), 0);
	tensor_free(&t);
	remove_dir();
}
END_TEST

/* ml_dtypes.bfloat16 arrays are saved as '<V2': read as bf16, bit for bit. */
START_TEST(bfloat16_from_ml_dtypes)
{
	make_dir();
	static const unsigned char v2[] = {0xC0, 0x3F, 0x10, 0xC0, 0x80, 0x7F}; /* 1.5, -2.25, inf */
	/* the exact header NumPy 2 and ml_dtypes write */
	write_npy_data("bf.npy", "{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }             \n", v2,
	               sizeof v2);
	Tensor t = read_ok("bf.npy");
	ck_assert_int_eq(t.dtype, FZ_BF16);
	ck_assert(tensor_get(&t, 0) == 1.5 && tensor_get(&t, 1) == -2.25 && isinf(tensor_get(&t, 2)));
	tensor_free(&t);
	write_npy_data("bf2.npy", GOOD_DICT("|V2", "(1,)"), v2, 2);
	t = read_ok("bf2.npy");
	ck_assert(tensor_get(&t, 0) == 1.5);
	tensor_free(&t);
	remove_dir();
}
END_TEST

/* Only regular files are read: a FIFO is refused at once, never waited on. */
START_TEST(fifo_is_refused)
{
	make_dir();
	ck_assert_int_eq(mkfifo(path("f.npy"), 0600), 0);
	ck_assert_str_eq(read_error("f.npy"), "not a regular file (a FIFO)");
	ck_assert_str_eq(read_error("."), "cannot open: Is a directory");
	unlink(path("f.npy"));
	remove_dir();
}
END_TEST

START_TEST(write_failures_leave_nothing)
{
	make_dir();
	Tensor t = {.dtype = FZ_F32, .rank = 1, .shape = {3}};
	ck_assert(tensor_alloc(&t));
	char err[1024], want[1024];
	/* a missing directory */
	const char *p = path("nodir/x.npy");
	ck_assert(!npy_write(p, &t, err, sizeof err));
	snprintf(want, sizeof want, "%s: cannot create: No such file or directory", p);
	ck_assert_str_eq(err, want);
	/* the target is a directory: the temporary file is removed again */
	ck_assert_int_eq(mkdir(path("d.npy"), 0777), 0);
	ck_assert(!npy_write(path("d.npy"), &t, err, sizeof err));
	ck_assert_msg(strstr(err, "cannot write: ") != NULL, "%s", err);
	ck_assert_int_eq(count_files(), 1);
	rmdir(path("d.npy"));
	/* a bad tensor */
	Tensor bad = {.dtype = FZ_DTYPE_COUNT, .rank = 1, .shape = {3}, .data = t.data};
	ck_assert(!npy_write(path("bad.npy"), &bad, err, sizeof err));
	ck_assert(strstr(err, "cannot write this tensor") != NULL);
	/* overwriting an existing file replaces it whole */
	ck_assert(npy_write(path("x.npy"), &t, err, sizeof err));
	Tensor u = {.dtype = FZ_I64, .rank = 1, .shape = {100}};
	ck_assert(tensor_alloc(&u));
	ck_assert(npy_write(path("x.npy"), &u, err, sizeof err));
	Tensor r;
	ck_assert(npy_read(path("x.npy"), &r, err, sizeof err));
	ck_assert_int_eq(r.dtype, FZ_I64);
	ck_assert_int_eq(count_files(), 1);
	tensor_free(&r);
	tensor_free(&u);
	tensor_free(&t);
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("npy");
	tcase_add_test(tc, tensor_basics);
	tcase_add_test(tc, round_trip_every_dtype_and_rank);
	tcase_add_test(tc, empty_arrays);
	tcase_add_test(tc, exact_bytes_as_numpy_writes);
	tcase_add_test(tc, bf16_is_written_as_f32);
	tcase_add_test(tc, header_variants);
	tcase_add_test(tc, malformed_files);
	tcase_add_test(tc, write_failures_leave_nothing);
	tcase_add_test(tc, big_endian);
	tcase_add_test(tc, fortran_order);
	tcase_add_test(tc, bfloat16_from_ml_dtypes);
	tcase_add_test(tc, fifo_is_refused);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
