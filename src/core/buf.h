/* A growable byte buffer. Zero-initialise (`tl_buf b = {0};`) to start empty;
 * tl_buf_free releases it. Appends keep one spare NUL byte after the data so the
 * contents can be used as a C string when they are text. */
#ifndef TL_CORE_BUF_H
#define TL_CORE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"

typedef struct tl_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} tl_buf;

/* The out-of-line part of tl_buf_reserve: reallocates. */
int tl_buf_grow(tl_buf *b, size_t extra);

/* Each returns 0 on success, -1 when memory runs out (the buffer is unchanged).
 * Reserve and the appends are inline: parsers call them per field and byte. */
static inline int tl_buf_reserve(tl_buf *b, size_t extra)
{
    return extra < b->cap - b->len ? 0 : tl_buf_grow(b, extra); /* room for the NUL too */
}

/* Room for exactly `extra` more bytes (and the NUL), where tl_buf_reserve
 * may round up to twice that: for a caller that knows the final size. */
int tl_buf_reserve_exact(tl_buf *b, size_t extra);

static inline int tl_buf_append(tl_buf *b, const void *data, size_t len)
{
    if (tl_buf_reserve(b, len) != 0) return -1;
    if (len) memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

static inline int tl_buf_append_byte(tl_buf *b, uint8_t byte)
{
    if (tl_buf_reserve(b, 1) != 0) return -1;
    b->data[b->len++] = byte;
    b->data[b->len] = '\0';
    return 0;
}
int tl_buf_append_str(tl_buf *b, const char *s);
int tl_buf_printf(tl_buf *b, const char *fmt, ...) TL_PRINTF(2, 3);
/* Writes v in decimal, as "%lld" would, with its NUL, into out (21 bytes
 * suffice) and returns its length. Hot writers use it instead of snprintf:
 * a process that loaded libquadmath (numpy does) has glibc format every
 * printf through its slow positional path. */
size_t tl_format_i64(char out[21], int64_t v);
/* Appends v in decimal. */
int tl_buf_append_i64(tl_buf *b, int64_t v);
/* Appends zeroed bytes and returns a pointer to them, or NULL. */
void *tl_buf_extend(tl_buf *b, size_t len);

void tl_buf_free(tl_buf *b);
/* Hands the allocation to the caller (free() it) and leaves the buffer empty. */
uint8_t *tl_buf_detach(tl_buf *b, size_t *len);

/* Little-endian fixed-width appends, used by the binary formats. */
int tl_buf_append_le32(tl_buf *b, uint32_t v);
int tl_buf_append_le64(tl_buf *b, uint64_t v);

static inline uint32_t tl_load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tl_load_le64(const uint8_t *p)
{
    return (uint64_t)tl_load_le32(p) | (uint64_t)tl_load_le32(p + 4) << 32;
}

static inline void tl_store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void tl_store_le64(uint8_t *p, uint64_t v)
{
    tl_store_le32(p, (uint32_t)v);
    tl_store_le32(p + 4, (uint32_t)(v >> 32));
}

/* Whether n bytes at a and b are equal: 4 to 16 bytes (most keys: names,
 * ids) as two overlapping words each, for loops that compare a value per
 * row, where a memcmp call cost more than the comparison. */
static inline bool tl_bytes_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8);
        memcpy(&b0, b, 8);
        memcpy(&a1, a + n - 8, 8);
        memcpy(&b1, b + n - 8, 8);
        return a0 == b0 && a1 == b1;
    }
    if (n >= 4 && n < 8) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4);
        memcpy(&b0, b, 4);
        memcpy(&a1, a + n - 4, 4);
        memcpy(&b1, b + n - 4, 4);
        return a0 == b0 && a1 == b1;
    }
    return n == 0 || memcmp(a, b, n) == 0;
}

#endif
