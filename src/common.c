/*
 * common.c: dtypes, status strings, spans and half-precision rounding.
 *
 * The f16 and bf16 conversions are exact round-to-nearest-even on the bit
 * patterns, so the interpreter, .npy I/O and the GPU (which rounds the same
 * way in __float2half_rn / __float2bfloat16_rn) agree bit for bit.
 */
#include "common.h"

#include <math.h>
#include <string.h>

const char *fz_status_string(fz_status s)
{
	switch (s) {
	case FZ_OK: return "success";
	case FZ_ERR_PROGRAM: return "error in the program";
	case FZ_ERR_ARGUMENT: return "invalid argument";
	case FZ_ERR_NOMEM: return "out of host memory";
	case FZ_ERR_LIMIT: return "limit exceeded";
	case FZ_ERR_IO: return "input/output error";
	case FZ_ERR_BINDING: return "missing or mismatched binding";
	case FZ_ERR_RUNTIME: return "run-time error";
	case FZ_ERR_NO_DRIVER: return "CUDA driver not available";
	case FZ_ERR_NO_DEVICE: return "no CUDA device";
	case FZ_ERR_CUDA: return "CUDA driver error";
	case FZ_ERR_DEVICE_MEMORY: return "out of device memory";
	case FZ_ERR_NVRTC: return "NVRTC compilation failed";
	case FZ_ERR_CACHE: return "kernel cache error";
	case FZ_ERR_INTERNAL: return "internal error";
	}
	return "unknown status";
}

static const struct {
	const char *name;
	size_t size;
} dtype_info[] = {
#define X(e, name, bytes, isf, isi, ctype) [e] = {name, bytes},
	FZ_DTYPES(X)
#undef X
};

const char *fz_dtype_name(fz_dtype t)
{
	return (unsigned)t < FZ_DTYPE_COUNT ? dtype_info[t].name : "?";
}

size_t fz_dtype_size(fz_dtype t) { return (unsigned)t < FZ_DTYPE_COUNT ? dtype_info[t].size : 0; }

int dtype_from_name(const char *s, size_t n)
{
	for (int t = 0; t < FZ_DTYPE_COUNT; t++)
		if (strlen(dtype_info[t].name) == n && memcmp(dtype_info[t].name, s, n) == 0)
			return t;
	return -1;
}

fz_dtype dtype_promote(fz_dtype a, fz_dtype b)
{
	if ((a == FZ_F16 && b == FZ_BF16) || (a == FZ_BF16 && b == FZ_F16))
		return FZ_F32;
	return a > b ? a : b;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void msg_shorten(char *msg)
{
	char *out = msg;
	for (const char *p = msg; *p;) {
		size_t n = 0;
		while (name_char(p[n]))
			n++;
		if (n == 0) {
			*out++ = *p++;
			continue;
		}
		if (n > MSG_NAME_MAX) {
			memmove(out, p, MSG_NAME_KEEP);
			memcpy(out + MSG_NAME_KEEP, "...", 3);
			out += MSG_NAME_KEEP + 3;
		} else {
			memmove(out, p, n);
			out += n;
		}
		p += n;
	}
	*out = 0;
}

Span span_join(Span a, Span b)
{
	if (b.off < a.off) {
		Span t = a;
		a = b;
		b = t;
	}
	uint32_t end = a.off + a.len > b.off + b.len ? a.off + a.len : b.off + b.len;
	a.len = end - a.off;
	return a;
}

/* ---- half precision ------------------------------------------------------------------ */

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

uint16_t f32_to_f16_bits(float f)
{
	uint32_t x = f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t absx = x & 0x7fffffffu;
	if (absx > 0x7f800000u) /* NaN: keep it quiet and non-zero */
		return (uint16_t)(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
	if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (absx < 0x38800000u) { /* below the smallest normal: subnormal or zero */
		/* value * 2^24 rounded to an integer is the subnormal's mantissa */
		float v = bits_f32(absx) * 16777216.0f;
		float r = nearbyintf(v); /* default rounding: to nearest even */
		return (uint16_t)(sign | (uint32_t)r);
	}
	uint32_t mant = absx & 0x7fffffu;
	uint32_t exp = (absx >> 23) - 127 + 15;
	uint32_t h = (exp << 10) | (mant >> 13);
	uint32_t rest = mant & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
		h++; /* may carry into the exponent, which is right */
	return (uint16_t)(sign | h);
}

float f16_bits_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t mant = h & 0x3ffu;
	if (exp == 0) {
		float v = (float)mant / 16777216.0f;
		return sign ? -v : v;
	}
	if (exp == 31)
		return bits_f32(sign | 0x7f800000u | (mant << 13));
	return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t f32_to_bf16_bits(float f)
{
	uint32_t x = f32_bits(f);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
	uint32_t lsb = (x >> 16) & 1u;
	x += 0x7fffu + lsb;
	return (uint16_t)(x >> 16);
}

float bf16_bits_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

float round_to_half(fz_dtype t, float f)
{
	if (t == FZ_F16)
		return f16_bits_to_f32(f32_to_f16_bits(f));
	if (t == FZ_BF16)
		return bf16_bits_to_f32(f32_to_bf16_bits(f));
	return f;
}
