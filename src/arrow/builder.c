#include "arrow/builder.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"

static bool builder_supports(tl_atype id)
{
    switch (id) {
    case TL_ATYPE_NULL:
    case TL_ATYPE_FLOAT16:
    case TL_ATYPE_STRUCT:
        return false;
    default:
        return true;
    }
}

tl_status tl_builder_init(tl_builder *b, const tl_arrow_type *type, tl_error *err)
{
    memset(b, 0, sizeof *b);
    if (!builder_supports(type->id)) {
        char name[96];
        tl_arrow_type_describe(type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "cannot build arrays of type %s", name);
    }
    b->type = *type;
    b->width = tl_type_byte_width(type);
    return TL_OK;
}

void tl_builder_free(tl_builder *b)
{
    tl_buf_free(&b->validity);
    tl_buf_free(&b->values);
    tl_buf_free(&b->data);
    b->length = b->null_count = 0;
}

static bool is_var(const tl_builder *b)
{
    return tl_atype_is_varbinary(b->type.id);
}

static int offset_width(const tl_builder *b)
{
    return tl_atype_is_large(b->type.id) ? 8 : 4;
}

tl_status tl_builder_reserve(tl_builder *b, int64_t values, int64_t bytes, tl_error *err)
{
    if (values < 0 || bytes < 0) return tl_error_set(err, TL_ERR_INVALID, "negative reserve");
    size_t per = b->type.id == TL_ATYPE_BOOL ? 1
                 : is_var(b)                 ? (size_t)offset_width(b)
                                             : (size_t)b->width;
    size_t value_bytes =
        b->type.id == TL_ATYPE_BOOL ? (size_t)values / 8 + 2 : (size_t)values * per + 8;
    if (tl_buf_reserve(&b->values, value_bytes) != 0) return tl_error_nomem(err);
    if (is_var(b) && tl_buf_reserve(&b->data, (size_t)bytes) != 0) return tl_error_nomem(err);
    return TL_OK;
}

/* Records validity of the value about to be appended at index b->length. */
static tl_status push_validity(tl_builder *b, bool valid, tl_error *err)
{
    if (valid && b->null_count == 0) return TL_OK; /* no bitmap until the first null */
    if (b->null_count == 0) {
        size_t bytes = (size_t)b->length / 8 + 1;
        uint8_t *bits = tl_buf_extend(&b->validity, bytes);
        if (bits == NULL) return tl_error_nomem(err);
        tl_bitmap_fill(bits, 0, b->length, true);
    } else if ((size_t)(b->length >> 3) >= b->validity.len) {
        if (tl_buf_append_byte(&b->validity, 0) != 0) return tl_error_nomem(err);
    }
    if (valid)
        tl_bit_set(b->validity.data, b->length);
    else
        tl_bit_clear(b->validity.data, b->length);
    return TL_OK;
}

/* Appends one fixed-width value; value NULL appends zeros. */
static tl_status push_fixed(tl_builder *b, const void *value, bool valid, tl_error *err)
{
    if (tl_buf_reserve(&b->values, (size_t)b->width) != 0) return tl_error_nomem(err);
    TL_TRY(push_validity(b, valid, err));
    if (value)
        memcpy(b->values.data + b->values.len, value, (size_t)b->width);
    else
        memset(b->values.data + b->values.len, 0, (size_t)b->width);
    b->values.len += (size_t)b->width;
    b->length++;
    b->null_count += !valid;
    return TL_OK;
}

static tl_status push_bit(tl_builder *b, bool value, bool valid, tl_error *err)
{
    if ((b->length & 7) == 0 && tl_buf_append_byte(&b->values, 0) != 0) return tl_error_nomem(err);
    TL_TRY(push_validity(b, valid, err));
    if (value) tl_bit_set(b->values.data, b->length);
    b->length++;
    b->null_count += !valid;
    return TL_OK;
}

/* Var-width offsets start with a 0, written lazily so an empty builder owns nothing. */
static tl_status push_offset(tl_builder *b, bool valid, tl_error *err)
{
    int w = offset_width(b);
    if (tl_buf_reserve(&b->values, 2 * (size_t)w) != 0) return tl_error_nomem(err);
    if (b->values.len == 0) {
        memset(b->values.data, 0, (size_t)w);
        b->values.len = (size_t)w;
    }
    TL_TRY(push_validity(b, valid, err));
    uint8_t *p = b->values.data + b->values.len;
    if (w == 8) {
        int64_t end = (int64_t)b->data.len;
        memcpy(p, &end, 8);
    } else {
        int32_t end = (int32_t)b->data.len;
        memcpy(p, &end, 4);
    }
    b->values.len += (size_t)w;
    b->length++;
    b->null_count += !valid;
    return TL_OK;
}

tl_status tl_builder_append_null(tl_builder *b, tl_error *err)
{
    if (b->type.id == TL_ATYPE_BOOL) return push_bit(b, false, false, err);
    if (is_var(b)) return push_offset(b, false, err);
    return push_fixed(b, NULL, false, err);
}

tl_status tl_builder_append_nulls(tl_builder *b, int64_t n, tl_error *err)
{
    for (int64_t i = 0; i < n; i++) TL_TRY(tl_builder_append_null(b, err));
    return TL_OK;
}

static tl_status kind_error(const tl_builder *b, const char *what, tl_error *err)
{
    char name[96];
    tl_arrow_type_describe(&b->type, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "cannot append %s to a %s column", what, name);
}

static tl_status int_range_error(const tl_builder *b, const char *value, tl_error *err)
{
    char name[96];
    tl_arrow_type_describe(&b->type, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "value %s out of range for %s", value, name);
}

/* Stores an integer already known to fit the builder's type. */
static tl_status push_int(tl_builder *b, int64_t v, tl_error *err)
{
    uint8_t bytes[8];
    switch (b->width) {
    case 1:
        bytes[0] = (uint8_t)v;
        break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(bytes, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(bytes, &x, 4);
        break;
    }
    default:
        memcpy(bytes, &v, 8);
        break;
    }
    return push_fixed(b, bytes, true, err);
}

static bool signed_limits(tl_atype id, int64_t *lo, int64_t *hi)
{
    switch (id) {
    case TL_ATYPE_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        return true;
    case TL_ATYPE_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        return true;
    case TL_ATYPE_INT32:
    case TL_ATYPE_DATE32:
    case TL_ATYPE_TIME32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        return true;
    case TL_ATYPE_INT64:
    case TL_ATYPE_DATE64:
    case TL_ATYPE_TIME64:
    case TL_ATYPE_TIMESTAMP:
        *lo = INT64_MIN, *hi = INT64_MAX;
        return true;
    default:
        return false;
    }
}

static bool unsigned_limit(tl_atype id, uint64_t *hi)
{
    switch (id) {
    case TL_ATYPE_UINT8:
        *hi = UINT8_MAX;
        return true;
    case TL_ATYPE_UINT16:
        *hi = UINT16_MAX;
        return true;
    case TL_ATYPE_UINT32:
        *hi = UINT32_MAX;
        return true;
    case TL_ATYPE_UINT64:
        *hi = UINT64_MAX;
        return true;
    default:
        return false;
    }
}

tl_status tl_builder_append_int(tl_builder *b, int64_t value, tl_error *err)
{
    int64_t lo, hi;
    uint64_t uhi;
    if (b->type.id == TL_ATYPE_DECIMAL128) return tl_builder_append_decimal(b, value, err);
    if (signed_limits(b->type.id, &lo, &hi)) {
        if (value >= lo && value <= hi) return push_int(b, value, err);
    } else if (!unsigned_limit(b->type.id, &uhi)) {
        return kind_error(b, "an integer", err);
    } else if (value >= 0 && (uint64_t)value <= uhi) {
        return push_int(b, value, err);
    }
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)value);
    return int_range_error(b, text, err);
}

tl_status tl_builder_append_uint(tl_builder *b, uint64_t value, tl_error *err)
{
    uint64_t uhi;
    if (unsigned_limit(b->type.id, &uhi)) {
        if (value > uhi) {
            char text[32];
            snprintf(text, sizeof text, "%llu", (unsigned long long)value);
            return int_range_error(b, text, err);
        }
        return push_int(b, (int64_t)value, err);
    }
    if (value > (uint64_t)INT64_MAX) {
        if (b->type.id == TL_ATYPE_DECIMAL128) return tl_builder_append_decimal(b, value, err);
        char text[32];
        snprintf(text, sizeof text, "%llu", (unsigned long long)value);
        return int_range_error(b, text, err);
    }
    return tl_builder_append_int(b, (int64_t)value, err);
}

tl_status tl_builder_append_double(tl_builder *b, double value, tl_error *err)
{
    if (b->type.id == TL_ATYPE_FLOAT64) return push_fixed(b, &value, true, err);
    if (b->type.id != TL_ATYPE_FLOAT32) return kind_error(b, "a floating-point number", err);
    if (isfinite(value) && fabs(value) > FLT_MAX) {
        char text[40];
        tl_double_format(value, text, sizeof text);
        return int_range_error(b, text, err);
    }
    float f = (float)value;
    if (isfinite(value) && isinf(f)) { /* rounds up past FLT_MAX */
        char text[40];
        tl_double_format(value, text, sizeof text);
        return int_range_error(b, text, err);
    }
    return push_fixed(b, &f, true, err);
}

tl_status tl_builder_append_bool(tl_builder *b, bool value, tl_error *err)
{
    if (b->type.id != TL_ATYPE_BOOL) return kind_error(b, "a bool", err);
    return push_bit(b, value, true, err);
}

tl_status tl_builder_append_decimal(tl_builder *b, tl_i128 value, tl_error *err)
{
    if (b->type.id != TL_ATYPE_DECIMAL128) return kind_error(b, "a decimal", err);
    tl_i128 limit = tl_i128_pow10(b->type.precision);
    if (value >= limit || value <= -limit) {
        char text[64];
        tl_decimal128_format(value, b->type.scale, text, sizeof text);
        return int_range_error(b, text, err);
    }
    uint8_t bytes[16];
    tl_store_i128(bytes, value);
    return push_fixed(b, bytes, true, err);
}

tl_status tl_builder_append_bytes(tl_builder *b, const void *data, size_t len, tl_error *err)
{
    if (b->type.id == TL_ATYPE_FIXED_BINARY) {
        if (len != (size_t)b->width)
            return tl_error_set(err, TL_ERR_INVALID,
                                "cannot append %zu bytes to a fixed_size_binary[%d] column", len,
                                b->width);
        return push_fixed(b, data, true, err);
    }
    if (!is_var(b)) return kind_error(b, "bytes", err);
    if (offset_width(b) == 4 && len > (size_t)INT32_MAX - b->data.len)
        return tl_error_set(err, TL_ERR_INVALID,
                            "more than 2 GiB of data in a 32-bit offset column; use a large type");
    if (tl_buf_append(&b->data, data, len) != 0) return tl_error_nomem(err);
    tl_status st = push_offset(b, true, err);
    if (st != TL_OK) b->data.len -= len;
    return st;
}

tl_status tl_builder_append_var_run(tl_builder *b, const uint8_t *data, const int64_t *offsets,
                                    int64_t n, tl_error *err)
{
    if (!is_var(b)) return kind_error(b, "bytes", err);
    if (b->null_count != 0)
        return tl_error_set(err, TL_ERR_INTERNAL, "a run of values after a null");
    if (n <= 0) return TL_OK;
    int64_t first = offsets[0];
    size_t bytes = (size_t)(offsets[n] - first), w = (size_t)offset_width(b);
    if (w == 4 && bytes > (size_t)INT32_MAX - b->data.len)
        return tl_error_set(err, TL_ERR_INVALID,
                            "more than 2 GiB of data in a 32-bit offset column; use a large type");
    if (tl_buf_reserve(&b->data, bytes) != 0 ||
        tl_buf_reserve(&b->values, ((size_t)n + 1) * w) != 0)
        return tl_error_nomem(err);
    if (b->values.len == 0) {
        memset(b->values.data, 0, w);
        b->values.len = w;
    }
    int64_t shift = (int64_t)b->data.len - first;
    if (bytes) memcpy(b->data.data + b->data.len, data + first, bytes);
    b->data.len += bytes;
    b->data.data[b->data.len] = '\0';
    uint8_t *p = b->values.data + b->values.len;
    for (int64_t i = 0; i < n; i++) {
        int64_t end = offsets[i + 1] + shift;
        if (w == 8) {
            memcpy(p + (size_t)i * 8, &end, 8);
        } else {
            int32_t end32 = (int32_t)end;
            memcpy(p + (size_t)i * 4, &end32, 4);
        }
    }
    b->values.len += (size_t)n * w;
    b->length += n;
    return TL_OK;
}

tl_status tl_builder_finish(tl_builder *b, struct ArrowArray *out, tl_error *err)
{
    bool var = is_var(b);
    /* Every buffer exists even when empty: consumers may not expect NULL values. */
    if (var && b->values.len == 0 && tl_buf_extend(&b->values, (size_t)offset_width(b)) == NULL)
        return tl_error_nomem(err);
    if (tl_buf_reserve(&b->values, 1) != 0 || (var && tl_buf_reserve(&b->data, 1) != 0))
        return tl_error_nomem(err);
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = b->length;
    out->null_count = b->null_count;
    if (b->null_count > 0) tl_array_set_buffer(out, 0, tl_buf_detach(&b->validity, NULL));
    tl_array_set_buffer(out, 1, tl_buf_detach(&b->values, NULL));
    if (var) tl_array_set_buffer(out, 2, tl_buf_detach(&b->data, NULL));
    tl_buf_free(&b->validity);
    b->length = b->null_count = 0;
    return TL_OK;
}

tl_status tl_arrow_nulls(const tl_arrow_type *type, int64_t length, struct ArrowArray *out,
                         tl_error *err)
{
    if (type->id == TL_ATYPE_STRUCT)
        return tl_error_set(err, TL_ERR_INVALID, "cannot make a struct array of nulls");
    if (type->id == TL_ATYPE_NULL) {
        TL_TRY(tl_array_init(out, 0, 0, err));
        out->length = out->null_count = length;
        return TL_OK;
    }
    bool var = tl_atype_is_varbinary(type->id);
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = length;
    out->null_count = length;
    size_t bits = (size_t)(length + 7) / 8;
    size_t values = type->id == TL_ATYPE_BOOL ? bits
                    : var ? (size_t)(length + 1) * (tl_atype_is_large(type->id) ? 8 : 4)
                          : (size_t)length * (size_t)tl_type_byte_width(type);
    bool ok = tl_array_alloc_buffer(out, 1, values) != NULL;
    if (length > 0) ok = ok && tl_array_alloc_buffer(out, 0, bits) != NULL;
    if (var) ok = ok && tl_array_alloc_buffer(out, 2, 1) != NULL;
    if (!ok) {
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    return TL_OK;
}
