/* Casts from strings: between var-width types (offset widths change, bytes are
 * copied once), and parsing text into numbers, bools, dates and timestamps. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/cast_internal.h"
#include "arrow/parse.h"

tl_status tl_cast_varwidth(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    bool large = tl_atype_is_large(c->to->id);
    int64_t n = v->length, first = tl_offset_at(v, v->offset);
    int64_t size = tl_offset_at(v, v->offset + n) - first;
    if (!large && size > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": %lld bytes of data do not fit 32-bit offsets",
                            c->column, (long long)size);
    TL_TRY(tl_array_init(out, 3, 0, err));
    out->length = n;
    tl_status st = tl_validity_copy(v, out, err);
    void *offsets = st == TL_OK ? tl_buffer_alloc(out, 1, (size_t)(n + 1) * (large ? 8 : 4)) : NULL;
    uint8_t *data = offsets ? tl_buffer_alloc(out, 2, (size_t)size) : NULL;
    if (data == NULL) {
        tl_array_release(out);
        return st != TL_OK ? st : tl_error_nomem(err);
    }
    for (int64_t i = 0; i <= n; i++) {
        int64_t o = tl_offset_at(v, v->offset + i) - first;
        if (large)
            ((int64_t *)offsets)[i] = o;
        else
            ((int32_t *)offsets)[i] = (int32_t)o;
    }
    if (size > 0) memcpy(data, v->data + first, (size_t)size);
    return TL_OK;
}

/* ---- Parsing ---- */

static tl_status parse_failed(const tl_cast *c, int64_t row, const uint8_t *s, int64_t len,
                              tl_error *err)
{
    char text[80];
    tl_text_quote(s, len, text, sizeof text);
    return tl_cast_value_error(c, row, text, NULL, err);
}

static tl_status parse_failed_range(const tl_cast *c, int64_t row, const uint8_t *s, int64_t len,
                                    tl_error *err)
{
    char text[80];
    tl_text_quote(s, len, text, sizeof text);
    return tl_cast_range_error(c, row, text, err);
}

static bool int_fits(tl_atype id, int64_t x)
{
    switch (id) {
    case TL_ATYPE_INT8:
        return x >= INT8_MIN && x <= INT8_MAX;
    case TL_ATYPE_UINT8:
        return x >= 0 && x <= UINT8_MAX;
    case TL_ATYPE_INT16:
        return x >= INT16_MIN && x <= INT16_MAX;
    case TL_ATYPE_UINT16:
        return x >= 0 && x <= UINT16_MAX;
    case TL_ATYPE_INT32:
        return x >= INT32_MIN && x <= INT32_MAX;
    case TL_ATYPE_UINT32:
        return x >= 0 && x <= UINT32_MAX;
    default:
        return true;
    }
}

/* Parses one non-null value into slot `row` of the values buffer. Returns
 * TL_ERR_INVALID (with no message) when the text is not a value, and sets
 * *range when it is one but does not fit the target. */
static tl_status parse_one(const tl_arrow_type *to, const char *s, size_t len, void *values,
                           int64_t row, bool *range)
{
    *range = false;
    switch (to->id) {
    case TL_ATYPE_BOOL: {
        bool b;
        TL_TRY(tl_parse_bool(s, len, &b, NULL));
        if (b) tl_bit_set(values, row);
        return TL_OK;
    }
    case TL_ATYPE_FLOAT32:
    case TL_ATYPE_FLOAT64: {
        double d;
        TL_TRY(tl_parse_double(s, len, &d, NULL));
        if (to->id == TL_ATYPE_FLOAT64) {
            ((double *)values)[row] = d;
            return TL_OK;
        }
        float f = (float)d;
        *range = isinf(f) && !isinf(d);
        ((float *)values)[row] = f;
        return *range ? TL_ERR_INVALID : TL_OK;
    }
    case TL_ATYPE_DATE32:
        return tl_parse_date32(s, len, (int32_t *)values + row, NULL);
    case TL_ATYPE_DATE64: {
        int32_t days;
        TL_TRY(tl_parse_date32(s, len, &days, NULL));
        ((int64_t *)values)[row] = (int64_t)days * 86400000;
        return TL_OK;
    }
    case TL_ATYPE_TIMESTAMP:
        return tl_parse_timestamp(s, len, to->unit, (int64_t *)values + row, NULL);
    case TL_ATYPE_DECIMAL128: {
        tl_i128 d;
        TL_TRY(tl_parse_decimal128(s, len, to->precision, to->scale, &d, NULL));
        tl_store_i128((uint8_t *)values + (size_t)row * 16, d);
        return TL_OK;
    }
    case TL_ATYPE_UINT64:
        return tl_parse_uint64(s, len, (uint64_t *)values + row, NULL);
    default:
        break;
    }
    int64_t x;
    TL_TRY(tl_parse_int64(s, len, &x, NULL));
    *range = !int_fits(to->id, x);
    if (*range) return TL_ERR_INVALID;
    switch (tl_arrow_type_bit_width(to)) {
    case 8:
        ((int8_t *)values)[row] = (int8_t)x;
        break;
    case 16:
        ((int16_t *)values)[row] = (int16_t)x;
        break;
    case 32:
        ((int32_t *)values)[row] = (int32_t)x;
        break;
    default:
        ((int64_t *)values)[row] = x;
        break;
    }
    return TL_OK;
}

tl_status tl_cast_parse(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    int bits = tl_arrow_type_bit_width(c->to);
    size_t bytes = bits == 1 ? (size_t)(v->length + 7) / 8 : (size_t)v->length * (size_t)(bits / 8);
    void *values;
    TL_TRY(tl_cast_begin(c, bytes, out, &values, err));
    memset(values, 0, bytes); /* null slots, and bool bits that are only ever set */
    for (int64_t i = 0; i < v->length; i++) {
        if (tl_view_is_null(v, i)) continue;
        int64_t len;
        const uint8_t *s = tl_view_bytes(v, i, &len);
        bool range;
        if (parse_one(c->to, (const char *)s, (size_t)len, values, i, &range) == TL_OK) continue;
        tl_array_release(out);
        if (range) return parse_failed_range(c, i, s, len, err);
        return parse_failed(c, i, s, len, err);
    }
    return TL_OK;
}
