/*
 * npy.c: NumPy's .npy files (format versions 1, 2 and 3).
 *
 * A file is the magic "\x93NUMPY", a version, the header's length, a header
 * that is a Python dict literal {'descr': ..., 'fortran_order': ...,
 * 'shape': (...)}, then the raw data. The header is parsed by a small
 * tokenizer rather than by pattern matching, so quoting, spacing and trailing
 * commas do not matter. The dtypes fusec can hold are read in whatever form
 * NumPy saved them, since every conversion is lossless: f2 f4 f8 i4 i8 b1 in
 * either byte order (big-endian data is swapped), C or Fortran order (a
 * Fortran array is transposed into C order), and 2-byte opaque values ('<V2',
 * which is how NumPy saves ml_dtypes.bfloat16) as bf16. Everything else is
 * refused with a message that says why. The data must be exactly as long as
 * the shape says. Only regular files are read (fileio.h): a FIFO or a device
 * given as an input is refused before a byte is read, never waited on.
 *
 * Writing goes to a temporary file next to the target that is renamed over
 * it at the end, so a failed write never leaves a half-written array.
 * The host is assumed little-endian (x86-64, AArch64), as the data is copied
 * as is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "tensor.h"

#define NPY_MAX_HEADER (1u << 20) /* far above any real header; guards allocation */

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static bool npy_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool npy_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	if (!err || !errlen)
		return false;
	int n = snprintf(err, errlen, "%s: ", path);
	if (n >= 0 && (size_t)n < errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* ---- the header dict ------------------------------------------------------------- */

typedef struct HeaderParser {
	const char *p, *end;
} HeaderParser;

static void hp_skip(HeaderParser *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

static bool hp_eat(HeaderParser *h, char c)
{
	hp_skip(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A quoted string ('...' or "..."), without escapes (none occur in headers),
 * of printable ASCII: a NUL inside would cut it short of what was written. */
static bool hp_string(HeaderParser *h, char *buf, size_t n)
{
	hp_skip(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return false;
	char q = *h->p++;
	const char *s = h->p;
	while (h->p < h->end && *h->p != q) {
		if (*h->p < ' ' || *h->p > '~')
			return false;
		h->p++;
	}
	if (h->p >= h->end || (size_t)(h->p - s) >= n)
		return false;
	memcpy(buf, s, (size_t)(h->p - s));
	buf[h->p - s] = 0;
	h->p++;
	return true;
}

static bool hp_word(HeaderParser *h, const char *w)
{
	hp_skip(h);
	size_t n = strlen(w);
	if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
		h->p += n;
		return true;
	}
	return false;
}

/* shape = "(" [int ("," int)* [","]] ")" ; a 1-tuple needs its comma in
 * Python, but a missing one is harmless and accepted. */
static const char *hp_shape(HeaderParser *h, int *rank, int64_t *shape)
{
	if (!hp_eat(h, '('))
		return "'shape' is not a tuple";
	*rank = 0;
	for (;;) {
		if (hp_eat(h, ')'))
			return NULL;
		hp_skip(h);
		if (h->p >= h->end || *h->p < '0' || *h->p > '9')
			return "'shape' must be a tuple of non-negative integers";
		int64_t v = 0;
		while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
			if (v > (INT64_MAX - 9) / 10)
				return "a dimension of 'shape' is too large";
			v = v * 10 + (*h->p++ - '0');
		}
		if (h->p < h->end && *h->p == 'L') /* Python 2 long */
			h->p++;
		if (*rank == FZ_MAX_RANK)
			return "'shape' has more than 8 dimensions (fusec's limit)";
		shape[(*rank)++] = v;
		if (!hp_eat(h, ',')) {
			if (!hp_eat(h, ')'))
				return "'shape' is not a well-formed tuple";
			return NULL;
		}
	}
}

typedef struct NpyHeader {
	char descr[32];
	bool fortran;
	int rank;
	int64_t shape[FZ_MAX_RANK];
} NpyHeader;

static const char *hp_value(HeaderParser *h, const char *key, NpyHeader *out)
{
	if (strcmp(key, "descr") == 0) {
		if (!hp_string(h, out->descr, sizeof out->descr))
			return "'descr' is not a simple dtype string (structured arrays are not supported)";
	} else if (strcmp(key, "fortran_order") == 0) {
		if (hp_word(h, "True"))
			out->fortran = true;
		else if (hp_word(h, "False"))
			out->fortran = false;
		else
			return "'fortran_order' is not True or False";
	} else if (strcmp(key, "shape") == 0) {
		return hp_shape(h, &out->rank, out->shape);
	} else {
		return "the header has an unexpected key";
	}
	return NULL;
}

/* dict = "{" (key ":" value ",")* [key ":" value] "}" with exactly the keys
 * descr, fortran_order and shape. */
static const char *npy_parse_header(const char *text, size_t len, NpyHeader *out)
{
	HeaderParser h = {text, text + len};
	unsigned seen = 0;
	static const char *const keys[] = {"descr", "fortran_order", "shape"};
	if (!hp_eat(&h, '{'))
		return "the header is not a dict";
	while (!hp_eat(&h, '}')) {
		char key[32];
		if (!hp_string(&h, key, sizeof key) || !hp_eat(&h, ':'))
			return "the header dict is malformed";
		unsigned bit = 0;
		for (unsigned k = 0; k < 3; k++)
			if (strcmp(key, keys[k]) == 0)
				bit = 1u << k;
		if (!bit)
			return "the header has an unexpected key";
		if (seen & bit)
			return "the header repeats a key";
		seen |= bit;
		const char *e = hp_value(&h, key, out);
		if (e)
			return e;
		if (!hp_eat(&h, ',')) {
			if (!hp_eat(&h, '}'))
				return "the header dict is malformed";
			break;
		}
	}
	if (seen != 7)
		return "the header lacks 'descr', 'fortran_order' or 'shape'";
	hp_skip(&h);
	if (h.p != h.end)
		return "the header has text after its dict";
	return NULL;
}

/* The dtype a descr names: a byte order ('<' little, '>' big, '=' native,
 * '|' none, for one-byte types and opaque ones) and a type code. *swap is set
 * for big-endian multi-byte data. -1 if fusec holds no such type. */
static int npy_dtype(const char *descr, bool *swap)
{
	static const struct {
		const char *code;
		fz_dtype t;
	} table[] = {
		{"f2", FZ_F16}, {"f4", FZ_F32}, {"f8", FZ_F64}, {"i4", FZ_I32},
		{"i8", FZ_I64}, {"b1", FZ_BOOL}, {"V2", FZ_BF16}, /* ml_dtypes.bfloat16 */
	};
	char order = descr[0];
	if (order != '<' && order != '>' && order != '=' && order != '|')
		return -1;
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		if (strcmp(descr + 1, table[k].code) != 0)
			continue;
		bool one_byte = table[k].t == FZ_BOOL;
		if (order == '|' && !one_byte && table[k].t != FZ_BF16)
			return -1; /* a multi-byte number needs a byte order */
		*swap = order == '>' && !one_byte;
		return (int)table[k].t;
	}
	return -1;
}

/* ---- reading ------------------------------------------------------------------------ */

static uint32_t le_u32(const unsigned char *b, int n)
{
	uint32_t v = 0;
	for (int k = n - 1; k >= 0; k--)
		v = (v << 8) | b[k];
	return v;
}

/* Read and check the preamble and header; leaves f at the data. */
static bool npy_read_header(FILE *f, const char *path, NpyHeader *h, long *data_off, char *err, size_t errlen)
{
	unsigned char pre[12];
	size_t got = fread(pre, 1, 10, f);
	if (got < 6 || memcmp(pre, npy_magic, 6) != 0)
		return npy_fail(err, errlen, path, "not a .npy file (bad magic)");
	if (got < 10)
		return npy_fail(err, errlen, path, "truncated header");
	int major = pre[6];
	if (major < 1 || major > 3)
		return npy_fail(err, errlen, path, "unsupported .npy format version %d.%d", major, pre[7]);
	uint32_t hlen = le_u32(pre + 8, 2);
	long start = 10;
	if (major >= 2) {
		if (fread(pre + 10, 1, 2, f) != 2)
			return npy_fail(err, errlen, path, "truncated header");
		hlen = le_u32(pre + 8, 4);
		start = 12;
	}
	if (hlen > NPY_MAX_HEADER)
		return npy_fail(err, errlen, path, "header length %u is not plausible", (unsigned)hlen);
	char *text = malloc(hlen + 1);
	if (!text)
		return npy_fail(err, errlen, path, "out of memory");
	if (fread(text, 1, hlen, f) != hlen) {
		free(text);
		return npy_fail(err, errlen, path, "truncated header");
	}
	memset(h, 0, sizeof *h);
	const char *e = npy_parse_header(text, hlen, h);
	free(text);
	if (e)
		return npy_fail(err, errlen, path, "bad header: %s", e);
	*data_off = start + (long)hlen;
	return true;
}

static bool npy_check_dtype(const char *path, const NpyHeader *h, fz_dtype *t, bool *swap, char *err,
                            size_t errlen)
{
	int dt = npy_dtype(h->descr, swap);
	if (dt < 0)
		return npy_fail(err, errlen, path,
		                "unsupported dtype '%s' (fusec reads f2 f4 f8 i4 i8 b1 in either byte order, and V2 as bf16)",
		                h->descr);
	*t = (fz_dtype)dt;
	return true;
}

/* Big-endian data to the host's order (little-endian, see above). */
static void npy_swap(Tensor *t)
{
	size_t size = fz_dtype_size(t->dtype), n = tensor_nbytes(t);
	unsigned char *b = t->data;
	for (size_t i = 0; i < n; i += size)
		for (size_t j = 0; j < size / 2; j++) {
			unsigned char c = b[i + j];
			b[i + j] = b[i + size - 1 - j];
			b[i + size - 1 - j] = c;
		}
}

/* A Fortran-order array into C order: element (i0, ..., ir-1) is at
 * sum(ik * stride_k) with stride_0 = 1 in the file. The output is walked in
 * C order with the multi-index and the source offset carried along. */
static bool npy_from_fortran(Tensor *t)
{
	size_t size = fz_dtype_size(t->dtype), n = tensor_nbytes(t);
	int64_t numel = tensor_numel(t), stride[FZ_MAX_RANK], idx[FZ_MAX_RANK] = {0};
	if (t->rank < 2 || numel <= 1)
		return true; /* the same bytes in either order */
	unsigned char *src = t->data, *dst = malloc(n);
	if (!dst)
		return false;
	stride[0] = 1;
	for (int d = 1; d < t->rank; d++)
		stride[d] = stride[d - 1] * t->shape[d - 1];
	int64_t off = 0;
	for (int64_t i = 0; i < numel; i++) {
		memcpy(dst + (size_t)i * size, src + (size_t)off * size, size);
		for (int d = t->rank - 1; d >= 0; d--) { /* the next index in C order */
			off += stride[d];
			if (++idx[d] < t->shape[d])
				break;
			off -= stride[d] * t->shape[d];
			idx[d] = 0;
		}
	}
	free(src);
	t->data = dst;
	return true;
}

bool npy_read(const char *path, Tensor *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	char why[512];
	int fd = file_open_regular(path, why, sizeof why);
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return npy_fail(err, errlen, path, "%s", fd >= 0 ? strerror(errno) : why);
	}
	NpyHeader h;
	long off = 0;
	struct stat st;
	Tensor t = {0};
	bool swap = false;
	bool ok = npy_read_header(f, path, &h, &off, err, errlen) &&
	          npy_check_dtype(path, &h, &t.dtype, &swap, err, errlen);
	if (ok && fstat(fileno(f), &st) != 0)
		ok = npy_fail(err, errlen, path, "cannot stat: %s", strerror(errno));
	if (ok) {
		t.rank = h.rank;
		memcpy(t.shape, h.shape, sizeof t.shape);
		char ty[128];
		tensor_type_str(&t, ty, sizeof ty);
		size_t need = tensor_nbytes(&t);
		long long have = (long long)st.st_size - off;
		if (need == SIZE_MAX)
			ok = npy_fail(err, errlen, path, "shape of %s is too large", ty);
		else if (have != (long long)need)
			ok = npy_fail(err, errlen, path, "data size does not match the header: expected %zu bytes for %s, got %lld",
			              need, ty, have);
		else if (!tensor_alloc(&t))
			ok = npy_fail(err, errlen, path, "out of memory for %s", ty);
		else if (need && fread(t.data, 1, need, f) != need)
			ok = npy_fail(err, errlen, path, "read error: %s", ferror(f) ? strerror(errno) : "file shrank");
		else if (h.fortran && !npy_from_fortran(&t))
			ok = npy_fail(err, errlen, path, "out of memory for %s", ty);
	}
	fclose(f);
	if (!ok) {
		tensor_free(&t);
		return false;
	}
	if (swap)
		npy_swap(&t);
	if (t.dtype == FZ_BOOL) { /* one byte 0 or 1, whatever NumPy stored */
		unsigned char *b = t.data;
		for (size_t k = 0; k < tensor_nbytes(&t); k++)
			b[k] = b[k] != 0;
	}
	*out = t;
	return true;
}

/* ---- writing ------------------------------------------------------------------------ */

static const char *npy_descr(fz_dtype t)
{
	switch (t) {
	case FZ_BOOL: return "|b1";
	case FZ_I32: return "<i4";
	case FZ_I64: return "<i8";
	case FZ_F16: return "<f2";
	case FZ_BF16: /* NumPy has no bf16: widened exactly to f32 */
	case FZ_F32: return "<f4";
	case FZ_F64: return "<f8";
	default: return NULL;
	}
}

/* The v1 preamble and header, padded with spaces to a multiple of 64 bytes
 * and ended by a newline, as NumPy writes it. Returns its length. */
static size_t npy_format_header(const Tensor *t, char *buf, size_t cap)
{
	char dict[400];
	int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t->dtype));
	for (int k = 0; k < t->rank; k++) /* Python's repr: (5,) and (2, 3) */
		n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld%s", k ? ", " : "", (long long)t->shape[k],
		              t->rank == 1 ? "," : "");
	n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
	size_t total = 10 + (size_t)n + 1;
	total = (total + 63) / 64 * 64;
	if (total > cap)
		return 0;
	size_t hlen = total - 10;
	memcpy(buf, npy_magic, 6);
	buf[6] = 1;
	buf[7] = 0;
	buf[8] = (char)(hlen & 0xff);
	buf[9] = (char)(hlen >> 8);
	memcpy(buf + 10, dict, (size_t)n);
	memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
	buf[total - 1] = '\n';
	return total;
}

/* Create a fresh temporary file next to `path` (O_EXCL, so never someone
 * else's); mode 0666 less the umask, as the final file should have. */
static int npy_open_temp(const char *path, char *tmp, size_t n)
{
	static unsigned counter;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

static bool npy_write_data(FILE *f, const Tensor *t)
{
	if (t->dtype != FZ_BF16)
		return fwrite(t->data, 1, tensor_nbytes(t), f) == tensor_nbytes(t);
	/* widened by its bits (bf16 is the top half of an f32), so that every
	 * value, a signaling NaN's payload too, comes out exactly; through a
	 * double, x86 quieted it (found by fuzz_npy) */
	float buf[1024];
	const unsigned char *b = t->data;
	int64_t n = tensor_numel(t);
	for (int64_t i = 0; i < n;) {
		size_t k = 0;
		for (; k < 1024 && i < n; k++, i++) {
			uint16_t h;
			memcpy(&h, b + 2 * i, 2);
			buf[k] = bf16_bits_to_f32(h);
		}
		if (fwrite(buf, sizeof buf[0], k, f) != k)
			return false;
	}
	return true;
}

bool npy_write(const char *path, const Tensor *t, char *err, size_t errlen)
{
	if (!npy_descr(t->dtype) || t->rank < 0 || t->rank > FZ_MAX_RANK || tensor_numel(t) < 0)
		return npy_fail(err, errlen, path, "cannot write this tensor (bad dtype or shape)");
	char header[512];
	size_t hn = npy_format_header(t, header, sizeof header);
	if (!hn)
		return npy_fail(err, errlen, path, "header too long");
	char tmp[4096];
	if (strlen(path) + 32 > sizeof tmp)
		return npy_fail(err, errlen, path, "path too long");
	int fd = npy_open_temp(path, tmp, sizeof tmp);
	if (fd < 0)
		return npy_fail(err, errlen, path, "cannot create: %s", strerror(errno));
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return npy_fail(err, errlen, path, "cannot write: %s", strerror(e));
	}
	bool ok = fwrite(header, 1, hn, f) == hn && npy_write_data(f, t);
	int e = errno;
	if (fclose(f) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && rename(tmp, path) != 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlink(tmp);
		return npy_fail(err, errlen, path, "cannot write: %s", strerror(e));
	}
	return true;
}
