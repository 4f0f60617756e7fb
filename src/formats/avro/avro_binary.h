/* Avro's binary encoding of primitive values: zig-zag varints, little-endian
 * floats, length-prefixed bytes. Readers work on a bounded cursor and treat
 * every length as hostile; writers append to a tl_buf. */
#ifndef TL_FORMATS_AVRO_BINARY_H
#define TL_FORMATS_AVRO_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

/* A read position inside [start, end). Errors report offsets from `start`. */
typedef struct tl_avro_cursor {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
} tl_avro_cursor;

static inline tl_avro_cursor tl_avro_cursor_make(const uint8_t *data, size_t len)
{
    tl_avro_cursor c = {data, data, data + len};
    return c;
}

static inline size_t tl_avro_cursor_left(const tl_avro_cursor *c)
{
    return (size_t)(c->end - c->p);
}

static inline size_t tl_avro_cursor_offset(const tl_avro_cursor *c)
{
    return (size_t)(c->p - c->start);
}

static inline uint64_t tl_avro_zigzag_encode(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tl_avro_zigzag_decode(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

tl_status tl_avro_read_long(tl_avro_cursor *c, int64_t *out, tl_error *err);
/* A long that must fit in 32 bits. */
tl_status tl_avro_read_int(tl_avro_cursor *c, int32_t *out, tl_error *err);
tl_status tl_avro_read_bool(tl_avro_cursor *c, bool *out, tl_error *err);
tl_status tl_avro_read_float(tl_avro_cursor *c, float *out, tl_error *err);
tl_status tl_avro_read_double(tl_avro_cursor *c, double *out, tl_error *err);
/* A length-prefixed byte string; *data points into the cursor's input. */
tl_status tl_avro_read_bytes(tl_avro_cursor *c, const uint8_t **data, size_t *len, tl_error *err);
/* Exactly n raw bytes (fixed, sync markers). */
tl_status tl_avro_read_fixed(tl_avro_cursor *c, size_t n, const uint8_t **data, tl_error *err);

/* Each returns 0, or -1 when memory runs out. */
int tl_avro_write_long(tl_buf *b, int64_t v);
int tl_avro_write_bool(tl_buf *b, bool v);
int tl_avro_write_float(tl_buf *b, float v);
int tl_avro_write_double(tl_buf *b, double v);
int tl_avro_write_bytes(tl_buf *b, const void *data, size_t len);
int tl_avro_write_string(tl_buf *b, const char *s); /* NULL writes "" */

/* Maximum bytes of one encoded long. */
#define TL_AVRO_MAX_VARINT 10

#endif
