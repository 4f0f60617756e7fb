#include "formats/parquet/thrift_compact.h"

#include <string.h>

/* ---- Writer ---- */

void tl_thrift_writer_init(tl_thrift_writer *w, tl_buf *out)
{
    memset(w, 0, sizeof *w);
    w->out = out;
}

tl_status tl_thrift_writer_finish(tl_thrift_writer *w, tl_error *err)
{
    if (w->misuse || w->depth != 0)
        return tl_error_set(err, TL_ERR_INTERNAL, "unbalanced thrift structure");
    if (w->failed) return tl_error_nomem(err);
    return TL_OK;
}

size_t tl_thrift_put_uvarint(uint8_t *dst, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        dst[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[n++] = (uint8_t)v;
    return n;
}

static void put_bytes(tl_thrift_writer *w, const void *p, size_t n)
{
    if (!w->failed && tl_buf_append(w->out, p, n) != 0) w->failed = true;
}

static void put_uvarint(tl_thrift_writer *w, uint64_t v)
{
    uint8_t tmp[10];
    put_bytes(w, tmp, tl_thrift_put_uvarint(tmp, v));
}

static void put_byte(tl_thrift_writer *w, uint8_t b)
{
    put_bytes(w, &b, 1);
}

void tl_thrift_field_header(tl_thrift_writer *w, uint8_t type, int16_t id)
{
    if (w->misuse) return;
    int16_t *last = &w->last_id[w->depth];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        put_byte(w, (uint8_t)(delta << 4 | type));
    } else {
        put_byte(w, type);
        put_uvarint(w, tl_zigzag64(id));
    }
    *last = id;
}

void tl_thrift_field_bool(tl_thrift_writer *w, int16_t id, bool v)
{
    tl_thrift_field_header(w, v ? TL_THRIFT_TRUE : TL_THRIFT_FALSE, id);
}

void tl_thrift_field_i8(tl_thrift_writer *w, int16_t id, int8_t v)
{
    tl_thrift_field_header(w, TL_THRIFT_BYTE, id);
    put_byte(w, (uint8_t)v);
}

void tl_thrift_field_i16(tl_thrift_writer *w, int16_t id, int16_t v)
{
    tl_thrift_field_header(w, TL_THRIFT_I16, id);
    put_uvarint(w, tl_zigzag64(v));
}

void tl_thrift_field_i32(tl_thrift_writer *w, int16_t id, int32_t v)
{
    tl_thrift_field_header(w, TL_THRIFT_I32, id);
    put_uvarint(w, tl_zigzag64(v));
}

void tl_thrift_field_i64(tl_thrift_writer *w, int16_t id, int64_t v)
{
    tl_thrift_field_header(w, TL_THRIFT_I64, id);
    put_uvarint(w, tl_zigzag64(v));
}

void tl_thrift_field_binary(tl_thrift_writer *w, int16_t id, const void *data, size_t len)
{
    tl_thrift_field_header(w, TL_THRIFT_BINARY, id);
    tl_thrift_elem_binary(w, data, len);
}

void tl_thrift_field_string(tl_thrift_writer *w, int16_t id, const char *s)
{
    tl_thrift_field_binary(w, id, s, strlen(s));
}

void tl_thrift_struct_begin(tl_thrift_writer *w)
{
    if (w->misuse || w->depth + 1 >= TL_THRIFT_MAX_DEPTH) {
        w->misuse = true;
        return;
    }
    w->last_id[++w->depth] = 0;
}

void tl_thrift_struct_end(tl_thrift_writer *w)
{
    put_byte(w, TL_THRIFT_STOP);
    if (w->misuse) return;
    if (w->depth == 0)
        w->misuse = true;
    else
        w->depth--;
}

void tl_thrift_field_struct(tl_thrift_writer *w, int16_t id)
{
    tl_thrift_field_header(w, TL_THRIFT_STRUCT, id);
    tl_thrift_struct_begin(w);
}

void tl_thrift_field_list(tl_thrift_writer *w, int16_t id, uint8_t elem_type, size_t n)
{
    tl_thrift_field_header(w, TL_THRIFT_LIST, id);
    if (n < 15) {
        put_byte(w, (uint8_t)(n << 4 | elem_type));
    } else {
        put_byte(w, (uint8_t)(0xF0 | elem_type));
        put_uvarint(w, n);
    }
}

void tl_thrift_elem_bool(tl_thrift_writer *w, bool v)
{
    put_byte(w, v ? TL_THRIFT_TRUE : TL_THRIFT_FALSE);
}

void tl_thrift_elem_i32(tl_thrift_writer *w, int32_t v)
{
    put_uvarint(w, tl_zigzag64(v));
}

void tl_thrift_elem_i64(tl_thrift_writer *w, int64_t v)
{
    put_uvarint(w, tl_zigzag64(v));
}

void tl_thrift_elem_binary(tl_thrift_writer *w, const void *data, size_t len)
{
    put_uvarint(w, len);
    put_bytes(w, data, len);
}

/* ---- Reader ---- */

void tl_thrift_reader_init(tl_thrift_reader *r, const void *data, size_t len, tl_error *err)
{
    r->start = r->p = data;
    r->end = r->start + len;
    r->depth = 0;
    r->err = err;
}

int tl_thrift_get_uvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p >= end) return -1;
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

static tl_status truncated(tl_thrift_reader *r)
{
    return tl_error_set(r->err, TL_ERR_INVALID, "thrift data truncated or malformed at byte %zu",
                        tl_thrift_reader_offset(r));
}

static tl_status get_uvarint(tl_thrift_reader *r, uint64_t *v)
{
    if (tl_thrift_get_uvarint(&r->p, r->end, v) != 0) return truncated(r);
    return TL_OK;
}

static tl_status get_signed(tl_thrift_reader *r, int64_t min, int64_t max, int64_t *v)
{
    uint64_t u = 0;
    TL_TRY(get_uvarint(r, &u));
    *v = tl_unzigzag64(u);
    if (*v < min || *v > max)
        return tl_error_set(r->err, TL_ERR_INVALID, "thrift integer out of range at byte %zu",
                            tl_thrift_reader_offset(r));
    return TL_OK;
}

tl_status tl_thrift_expect(tl_thrift_reader *r, uint8_t type, uint8_t want)
{
    bool ok = type == want || (want == TL_THRIFT_TRUE && type == TL_THRIFT_FALSE);
    if (!ok)
        return tl_error_set(r->err, TL_ERR_INVALID,
                            "thrift field has wire type %d, expected %d at byte %zu", type, want,
                            tl_thrift_reader_offset(r));
    return TL_OK;
}

tl_status tl_thrift_struct_enter(tl_thrift_reader *r)
{
    if (++r->depth > TL_THRIFT_MAX_DEPTH)
        return tl_error_set(r->err, TL_ERR_INVALID, "thrift structures nested too deeply");
    return TL_OK;
}

void tl_thrift_struct_leave(tl_thrift_reader *r)
{
    r->depth--;
}

tl_status tl_thrift_read_field(tl_thrift_reader *r, int16_t *last_id, uint8_t *type, int16_t *id)
{
    if (r->p >= r->end) return truncated(r);
    uint8_t b = *r->p++;
    *type = b & 0x0F;
    if (*type == TL_THRIFT_STOP) {
        *id = 0;
        return TL_OK;
    }
    if (*type > TL_THRIFT_STRUCT)
        return tl_error_set(r->err, TL_ERR_INVALID, "bad thrift wire type %d at byte %zu", *type,
                            tl_thrift_reader_offset(r));
    int delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last_id + delta);
    } else {
        int64_t v = 0;
        TL_TRY(get_signed(r, INT16_MIN, INT16_MAX, &v));
        *id = (int16_t)v;
    }
    *last_id = *id;
    return TL_OK;
}

tl_status tl_thrift_read_bool(tl_thrift_reader *r, uint8_t type, bool *v)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_TRUE));
    *v = type == TL_THRIFT_TRUE;
    return TL_OK;
}

tl_status tl_thrift_read_elem_bool(tl_thrift_reader *r, bool *v)
{
    if (r->p >= r->end) return truncated(r);
    *v = *r->p++ == TL_THRIFT_TRUE;
    return TL_OK;
}

tl_status tl_thrift_read_i8(tl_thrift_reader *r, uint8_t type, int8_t *v)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_BYTE));
    if (r->p >= r->end) return truncated(r);
    *v = (int8_t)*r->p++;
    return TL_OK;
}

tl_status tl_thrift_read_i16(tl_thrift_reader *r, uint8_t type, int16_t *v)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_I16));
    int64_t x = 0;
    TL_TRY(get_signed(r, INT16_MIN, INT16_MAX, &x));
    *v = (int16_t)x;
    return TL_OK;
}

tl_status tl_thrift_read_i32(tl_thrift_reader *r, uint8_t type, int32_t *v)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_I32));
    int64_t x = 0;
    TL_TRY(get_signed(r, INT32_MIN, INT32_MAX, &x));
    *v = (int32_t)x;
    return TL_OK;
}

tl_status tl_thrift_read_i64(tl_thrift_reader *r, uint8_t type, int64_t *v)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_I64));
    return get_signed(r, INT64_MIN, INT64_MAX, v);
}

tl_status tl_thrift_read_binary(tl_thrift_reader *r, uint8_t type, const uint8_t **data,
                                size_t *len)
{
    TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_BINARY));
    uint64_t n = 0;
    TL_TRY(get_uvarint(r, &n));
    if (n > (uint64_t)(r->end - r->p)) return truncated(r);
    *data = r->p;
    *len = (size_t)n;
    r->p += n;
    return TL_OK;
}

tl_status tl_thrift_read_list(tl_thrift_reader *r, uint8_t type, uint8_t *elem_type, size_t *n)
{
    if (type != TL_THRIFT_LIST && type != TL_THRIFT_SET)
        TL_TRY(tl_thrift_expect(r, type, TL_THRIFT_LIST));
    if (r->p >= r->end) return truncated(r);
    uint8_t b = *r->p++;
    *elem_type = b & 0x0F;
    uint64_t count = b >> 4;
    if (count == 15) TL_TRY(get_uvarint(r, &count));
    if (count > (uint64_t)(r->end - r->p)) return truncated(r);
    *n = (size_t)count;
    return TL_OK;
}

static tl_status skip_struct(tl_thrift_reader *r)
{
    TL_TRY(tl_thrift_struct_enter(r));
    int16_t last = 0, id = 0;
    uint8_t type = 0;
    for (;;) {
        TL_TRY(tl_thrift_read_field(r, &last, &type, &id));
        if (type == TL_THRIFT_STOP) break;
        TL_TRY(tl_thrift_skip(r, type));
    }
    tl_thrift_struct_leave(r);
    return TL_OK;
}

static tl_status skip_elements(tl_thrift_reader *r, uint8_t elem_type, uint64_t n)
{
    TL_TRY(tl_thrift_struct_enter(r));
    for (uint64_t i = 0; i < n; i++) {
        if (elem_type == TL_THRIFT_TRUE || elem_type == TL_THRIFT_FALSE) {
            bool b = false;
            TL_TRY(tl_thrift_read_elem_bool(r, &b));
        } else {
            TL_TRY(tl_thrift_skip(r, elem_type));
        }
    }
    tl_thrift_struct_leave(r);
    return TL_OK;
}

static tl_status skip_map(tl_thrift_reader *r)
{
    uint64_t n = 0;
    TL_TRY(get_uvarint(r, &n));
    if (n == 0) return TL_OK;
    if (n > (uint64_t)(r->end - r->p)) return truncated(r);
    if (r->p >= r->end) return truncated(r);
    uint8_t kv = *r->p++;
    TL_TRY(tl_thrift_struct_enter(r));
    for (uint64_t i = 0; i < n; i++) {
        TL_TRY(skip_elements(r, kv >> 4, 1));
        TL_TRY(skip_elements(r, kv & 0x0F, 1));
    }
    tl_thrift_struct_leave(r);
    return TL_OK;
}

tl_status tl_thrift_skip(tl_thrift_reader *r, uint8_t type)
{
    uint64_t u = 0;
    switch (type) {
    case TL_THRIFT_TRUE:
    case TL_THRIFT_FALSE:
        return TL_OK;
    case TL_THRIFT_BYTE:
        if (r->p >= r->end) return truncated(r);
        r->p++;
        return TL_OK;
    case TL_THRIFT_I16:
    case TL_THRIFT_I32:
    case TL_THRIFT_I64:
        return get_uvarint(r, &u);
    case TL_THRIFT_DOUBLE:
        if (r->end - r->p < 8) return truncated(r);
        r->p += 8;
        return TL_OK;
    case TL_THRIFT_BINARY: {
        const uint8_t *d;
        size_t n = 0;
        return tl_thrift_read_binary(r, type, &d, &n);
    }
    case TL_THRIFT_LIST:
    case TL_THRIFT_SET: {
        uint8_t et = 0;
        size_t n = 0;
        TL_TRY(tl_thrift_read_list(r, type, &et, &n));
        return skip_elements(r, et, n);
    }
    case TL_THRIFT_MAP:
        return skip_map(r);
    case TL_THRIFT_STRUCT:
        return skip_struct(r);
    }
    return tl_error_set(r->err, TL_ERR_INVALID, "bad thrift wire type %d at byte %zu", type,
                        tl_thrift_reader_offset(r));
}
