#include "formats/avro/avro_binary.h"

#include <string.h>

static tl_status tl_avro_truncated(const tl_avro_cursor *c, const char *what, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "truncated %s at offset %zu", what,
                        tl_avro_cursor_offset(c));
}

tl_status tl_avro_read_long(tl_avro_cursor *c, int64_t *out, tl_error *err)
{
    uint64_t u = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->p >= c->end) return tl_avro_truncated(c, "varint", err);
        uint8_t byte = *c->p++;
        /* The tenth byte may only carry the single remaining bit. */
        if (shift == 63 && (byte & 0xfe) != 0)
            return tl_error_set(err, TL_ERR_INVALID, "varint overflows 64 bits at offset %zu",
                                tl_avro_cursor_offset(c) - 1);
        u |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *out = tl_avro_zigzag_decode(u);
            return TL_OK;
        }
    }
    return TL_ERR_INTERNAL; /* unreachable: the tenth byte always ends the loop */
}

tl_status tl_avro_read_int(tl_avro_cursor *c, int32_t *out, tl_error *err)
{
    size_t at = tl_avro_cursor_offset(c);
    int64_t v = 0;
    TL_TRY(tl_avro_read_long(c, &v, err));
    if (v < INT32_MIN || v > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "int %lld out of range at offset %zu",
                            (long long)v, at);
    *out = (int32_t)v;
    return TL_OK;
}

tl_status tl_avro_read_bool(tl_avro_cursor *c, bool *out, tl_error *err)
{
    if (c->p >= c->end) return tl_avro_truncated(c, "boolean", err);
    uint8_t byte = *c->p;
    if (byte > 1)
        return tl_error_set(err, TL_ERR_INVALID, "boolean byte %u at offset %zu", byte,
                            tl_avro_cursor_offset(c));
    c->p++;
    *out = byte == 1;
    return TL_OK;
}

tl_status tl_avro_read_float(tl_avro_cursor *c, float *out, tl_error *err)
{
    if (tl_avro_cursor_left(c) < 4) return tl_avro_truncated(c, "float", err);
    uint32_t bits = tl_load_le32(c->p);
    memcpy(out, &bits, 4);
    c->p += 4;
    return TL_OK;
}

tl_status tl_avro_read_double(tl_avro_cursor *c, double *out, tl_error *err)
{
    if (tl_avro_cursor_left(c) < 8) return tl_avro_truncated(c, "double", err);
    uint64_t bits = tl_load_le64(c->p);
    memcpy(out, &bits, 8);
    c->p += 8;
    return TL_OK;
}

tl_status tl_avro_read_bytes(tl_avro_cursor *c, const uint8_t **data, size_t *len, tl_error *err)
{
    size_t at = tl_avro_cursor_offset(c);
    int64_t n = 0;
    TL_TRY(tl_avro_read_long(c, &n, err));
    if (n < 0)
        return tl_error_set(err, TL_ERR_INVALID, "negative byte length %lld at offset %zu",
                            (long long)n, at);
    if ((uint64_t)n > tl_avro_cursor_left(c))
        return tl_error_set(err, TL_ERR_INVALID,
                            "byte length %lld at offset %zu runs past the end (%zu bytes left)",
                            (long long)n, at, tl_avro_cursor_left(c));
    *data = c->p;
    *len = (size_t)n;
    c->p += n;
    return TL_OK;
}

tl_status tl_avro_read_fixed(tl_avro_cursor *c, size_t n, const uint8_t **data, tl_error *err)
{
    if (tl_avro_cursor_left(c) < n) return tl_avro_truncated(c, "fixed", err);
    *data = c->p;
    c->p += n;
    return TL_OK;
}

int tl_avro_write_long(tl_buf *b, int64_t v)
{
    if (tl_buf_reserve(b, TL_AVRO_MAX_VARINT) != 0) return -1;
    uint64_t u = tl_avro_zigzag_encode(v);
    uint8_t *p = b->data + b->len;
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    b->len = (size_t)(p - b->data);
    b->data[b->len] = '\0';
    return 0;
}

int tl_avro_write_bool(tl_buf *b, bool v)
{
    return tl_buf_append_byte(b, v ? 1 : 0);
}

int tl_avro_write_float(tl_buf *b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return tl_buf_append_le32(b, bits);
}

int tl_avro_write_double(tl_buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return tl_buf_append_le64(b, bits);
}

int tl_avro_write_bytes(tl_buf *b, const void *data, size_t len)
{
    if (len > INT64_MAX || tl_avro_write_long(b, (int64_t)len) != 0) return -1;
    return tl_buf_append(b, data, len);
}

int tl_avro_write_string(tl_buf *b, const char *s)
{
    return tl_avro_write_bytes(b, s ? s : "", s ? strlen(s) : 0);
}
