/*
 * common.h: what every stage of the compiler shares.
 *
 * - Arena: everything built for one compilation (tokens, AST, graph, plan,
 *   generated source) comes from one arena and is freed at once. Allocation
 *   never returns NULL: when malloc fails the arena longjmps to the handler
 *   that the pipeline installed, which turns it into FZ_ERR_NOMEM. So the
 *   library neither exits nor checks every allocation by hand.
 * - Span: a place in the source (offset, length, line, column).
 * - The dtype table (FZ_DTYPES), driving names, sizes and promotion.
 * - The documented limits (docs/limits.md).
 */
#ifndef FUSEC_COMMON_H
#define FUSEC_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fusec.h"

/* ---- limits (docs/limits.md) ---------------------------------------------- */

#define FZ_MAX_SOURCE_BYTES (16u << 20) /* 16 MiB of program text */
#define FZ_MAX_DEPTH 1000               /* nesting of expressions and calls */
#define FZ_MAX_NODES (1 << 20)          /* IR nodes after folding and CSE */
#define FZ_MAX_RANK 8                   /* tensor rank */
#define FZ_MAX_INPUTS 256               /* inputs of a program */
#define FZ_MAX_OUTPUTS 256              /* outputs of a program */
#define FZ_MAX_FN_PARAMS 64             /* parameters of one fn */
#define FZ_MAX_KERNEL_PARAM_BYTES 4096  /* CUDA's classic kernel parameter space */

/* ---- arena ------------------------------------------------------------------ */

typedef struct Arena Arena;

/* A fresh arena; NULL only if the first block cannot be allocated. */
Arena *arena_new(void);
void arena_free(Arena *a);
/* Where to longjmp when memory runs out (value 1); NULL aborts the process,
 * which only tests should allow. */
void arena_set_oom(Arena *a, jmp_buf *on_oom);
/* Zeroed memory, 16-byte aligned. */
void *arena_alloc(Arena *a, size_t size);
/* Grow an array allocated in the arena to `new_size` bytes (copying). */
void *arena_realloc(Arena *a, void *old, size_t old_size, size_t new_size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *arena_vprintf(Arena *a, const char *fmt, va_list ap);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* Append to a growable array {T *items; int n, cap;} kept in an arena. */
#define VEC_PUSH(a, vec_items, vec_n, vec_cap, value)                                  \
	do {                                                                               \
		if ((vec_n) == (vec_cap)) {                                                    \
			int nc_ = (vec_cap) ? (vec_cap) * 2 : 8;                                   \
			(vec_items) = arena_realloc((a), (vec_items), sizeof(*(vec_items)) * (size_t)(vec_cap), \
			                            sizeof(*(vec_items)) * (size_t)nc_);           \
			(vec_cap) = nc_;                                                           \
		}                                                                              \
		(vec_items)[(vec_n)++] = (value);                                              \
	} while (0)

/* A growable string in an arena, for printers and code generators. */
typedef struct {
	Arena *arena;
	char *buf;
	size_t len, cap;
} StrBuf;

void sb_init(StrBuf *sb, Arena *a);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NUL-terminated contents (owned by the arena). */
const char *sb_str(StrBuf *sb);

/* ---- messages ------------------------------------------------------------------ */

/* Names a message echoes (an unknown identifier, a --dim name) may be of any
 * length; a run of more than MSG_NAME_MAX name characters ([A-Za-z0-9_]) is
 * cut in place to its first MSG_NAME_KEEP and "...", so that a 100,000
 * character name makes a short line. Used by diag_error and cli_error. */
#define MSG_NAME_MAX 128
#define MSG_NAME_KEEP 64
void msg_shorten(char *msg);

/* ---- source positions --------------------------------------------------------- */

typedef struct Source {
	const char *name; /* file name as given, "<stdin>" for standard input */
	const char *text; /* not necessarily NUL-terminated */
	size_t len;
} Source;

typedef struct Span {
	uint32_t off, len; /* byte range in the source */
	int32_t line, col; /* 1-based line and column of `off` */
} Span;

/* The smallest span covering a and b. */
Span span_join(Span a, Span b);

/* ---- dtypes ------------------------------------------------------------------- */

/*      enum     name    bytes  float  int   C type for storage */
#define FZ_DTYPES(X)                                     \
	X(FZ_BOOL, "bool", 1, 0, 0, "bool")                  \
	X(FZ_I32, "i32", 4, 0, 1, "int")                     \
	X(FZ_I64, "i64", 8, 0, 1, "long long")               \
	X(FZ_F16, "f16", 2, 1, 0, "__half")                  \
	X(FZ_BF16, "bf16", 2, 1, 0, "__nv_bfloat16")         \
	X(FZ_F32, "f32", 4, 1, 0, "float")                   \
	X(FZ_F64, "f64", 8, 1, 0, "double")

static inline bool dtype_is_float(fz_dtype t) { return t >= FZ_F16; }
static inline bool dtype_is_int(fz_dtype t) { return t == FZ_I32 || t == FZ_I64; }
static inline bool dtype_is_half(fz_dtype t) { return t == FZ_F16 || t == FZ_BF16; }
/* The type arithmetic is done in: f32 for f16 and bf16, else the type itself. */
static inline fz_dtype dtype_compute(fz_dtype t) { return dtype_is_half(t) ? FZ_F32 : t; }
/* The language's promotion of two (strong) dtypes. */
fz_dtype dtype_promote(fz_dtype a, fz_dtype b);
/* Parse a dtype name of length n; returns -1 if it is none. */
int dtype_from_name(const char *s, size_t n);

/* ---- half-precision rounding (round to nearest even), shared by the
 *      interpreter and .npy I/O ------------------------------------------------ */

uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(uint16_t h);
/* Round f to the nearest value representable in dtype t (identity for f32). */
float round_to_half(fz_dtype t, float f);

#endif /* FUSEC_COMMON_H */
