/*
 * arena.c: bump allocation in large blocks, freed all at once.
 *
 * Blocks grow geometrically; an allocation larger than a block gets a block
 * of its own. Running out of memory longjmps to the pipeline's handler, so no
 * caller has to check for NULL (see common.h); so does a size no block can
 * hold (above SIZE_MAX / 2), which would otherwise wrap when rounded up.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Block {
	struct Block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} Block;

struct Arena {
	Block *head;
	jmp_buf *on_oom;
};

enum { FIRST_BLOCK = 64 * 1024, MAX_BLOCK = 16 << 20 };

static Block *block_new(size_t size)
{
	Block *b = malloc(sizeof(Block) + size);
	if (!b)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

Arena *arena_new(void)
{
	Arena *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->head = block_new(FIRST_BLOCK);
	if (!a->head) {
		free(a);
		return NULL;
	}
	return a;
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	for (Block *b = a->head, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void arena_set_oom(Arena *a, jmp_buf *on_oom) { a->on_oom = on_oom; }

static void out_of_memory(Arena *a)
{
	if (a->on_oom)
		longjmp(*a->on_oom, 1);
	fputs("fusec: out of memory with no handler installed\n", stderr);
	abort();
}

void *arena_alloc(Arena *a, size_t size)
{
	if (size > SIZE_MAX / 2) /* no block can hold it; rounding up would wrap */
		out_of_memory(a);
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	Block *b = a->head;
	if (b->size - b->used < size) {
		size_t want = b->size * 2 > MAX_BLOCK ? MAX_BLOCK : b->size * 2;
		if (want < size)
			want = size;
		Block *nb = block_new(want);
		if (!nb)
			out_of_memory(a);
		nb->next = a->head;
		a->head = b = nb;
	}
	void *p = b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

void *arena_realloc(Arena *a, void *old, size_t old_size, size_t new_size)
{
	if (new_size <= old_size)
		return old;
	void *p = arena_alloc(a, new_size);
	if (old && old_size)
		memcpy(p, old, old_size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX) /* n + 1 would wrap to 0 */
		out_of_memory(a);
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_vprintf(Arena *a, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		n = 0;
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

/* ---- string buffers ------------------------------------------------------------ */

void sb_init(StrBuf *sb, Arena *a)
{
	sb->arena = a;
	sb->cap = 256;
	sb->len = 0;
	sb->buf = arena_alloc(a, sb->cap);
}

static void sb_reserve(StrBuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	size_t nc = sb->cap * 2;
	while (nc < sb->len + extra + 1)
		nc *= 2;
	sb->buf = arena_realloc(sb->arena, sb->buf, sb->len, nc);
	sb->cap = nc;
}

void sb_putn(StrBuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_printf(StrBuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	sb_reserve(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

const char *sb_str(StrBuf *sb) { return sb->buf; }
