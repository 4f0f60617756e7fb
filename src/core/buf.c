#include "core/buf.h"
#include "core/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tl_buf_grow(tl_buf *b, size_t extra)
{
    /* +1 keeps room for the trailing NUL. */
    if (extra > SIZE_MAX - b->len - 1) return -1;
    return TL_GROW(b->data, b->cap, b->len + extra + 1, 64);
}

int tl_buf_reserve_exact(tl_buf *b, size_t extra)
{
    if (extra < b->cap - b->len) return 0;
    if (extra > SIZE_MAX - b->len - 1 || tl_realloc_array(&b->data, b->len + extra + 1, 1) != 0)
        return -1;
    b->cap = b->len + extra + 1;
    return 0;
}

int tl_buf_append_str(tl_buf *b, const char *s)
{
    return tl_buf_append(b, s, strlen(s));
}

int tl_buf_printf(tl_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || tl_buf_reserve(b, (size_t)n) != 0) return -1;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void *tl_buf_extend(tl_buf *b, size_t len)
{
    if (tl_buf_reserve(b, len) != 0) return NULL;
    void *p = b->data + b->len;
    memset(p, 0, len);
    b->len += len;
    b->data[b->len] = '\0';
    return p;
}

void tl_buf_free(tl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

uint8_t *tl_buf_detach(tl_buf *b, size_t *len)
{
    uint8_t *p = b->data;
    if (len) *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

int tl_buf_append_le32(tl_buf *b, uint32_t v)
{
    uint8_t tmp[4];
    tl_store_le32(tmp, v);
    return tl_buf_append(b, tmp, 4);
}

int tl_buf_append_le64(tl_buf *b, uint64_t v)
{
    uint8_t tmp[8];
    tl_store_le64(tmp, v);
    return tl_buf_append(b, tmp, 8);
}

/* Two digits at a time: half the divisions of the digit-by-digit loop, and
 * metadata documents format two numbers per snapshot-log entry. */
static const char DIGIT_PAIRS[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t tl_format_i64(char out[21], int64_t v)
{
    char digits[20];
    size_t n = sizeof digits, o = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        const char *pair = DIGIT_PAIRS + 2 * (u % 100);
        u /= 100;
        digits[--n] = pair[1];
        digits[--n] = pair[0];
    }
    if (u >= 10) {
        digits[--n] = DIGIT_PAIRS[2 * u + 1];
        digits[--n] = DIGIT_PAIRS[2 * u];
    } else {
        digits[--n] = (char)('0' + u);
    }
    if (v < 0) out[o++] = '-';
    memcpy(out + o, digits + n, sizeof digits - n);
    o += sizeof digits - n;
    out[o] = '\0';
    return o;
}

int tl_buf_append_i64(tl_buf *b, int64_t v)
{
    char num[21];
    return tl_buf_append(b, num, tl_format_i64(num, v));
}
