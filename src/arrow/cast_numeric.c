/* Casts among integers, floats, bool and decimal128. Each kernel converts a
 * chunk without branching on validity, then re-checks a chunk that had a bad
 * value against validity: garbage under a null slot is never an error. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/cast_internal.h"
#include "arrow/parse.h"

#define TL_LOAD(T, DST)                                                                            \
    do {                                                                                           \
        const T *p = (const T *)v->values + v->offset + start;                                     \
        for (int64_t i = 0; i < n; i++) DST[i] = p[i];                                             \
    } while (0)

/* Rows [start, start + n) of an integer or bool view as int64 (uint64 values
 * above INT64_MAX wrap to negatives; callers treat them as out of range). */
static void load_ints(const tl_array_view *v, int64_t start, int64_t n, int64_t *dst)
{
    switch (v->type.id) {
    case TL_ATYPE_INT8:
        TL_LOAD(int8_t, dst);
        break;
    case TL_ATYPE_UINT8:
        TL_LOAD(uint8_t, dst);
        break;
    case TL_ATYPE_INT16:
        TL_LOAD(int16_t, dst);
        break;
    case TL_ATYPE_UINT16:
        TL_LOAD(uint16_t, dst);
        break;
    case TL_ATYPE_INT32:
        TL_LOAD(int32_t, dst);
        break;
    case TL_ATYPE_UINT32:
        TL_LOAD(uint32_t, dst);
        break;
    case TL_ATYPE_BOOL:
        for (int64_t i = 0; i < n; i++) dst[i] = tl_bit_get(v->values, v->offset + start + i);
        break;
    default:
        TL_LOAD(int64_t, dst);
        break;
    }
}

static double half_to_double(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = exp == 0    ? ldexp(mant, -24)
               : exp == 31 ? (mant ? NAN : INFINITY)
                           : ldexp(mant | 0x400, exp - 25);
    return h & 0x8000 ? -v : v;
}

static void load_doubles(const tl_array_view *v, int64_t start, int64_t n, double *dst)
{
    if (v->type.id == TL_ATYPE_FLOAT32) {
        TL_LOAD(float, dst);
    } else if (v->type.id == TL_ATYPE_FLOAT64) {
        TL_LOAD(double, dst);
    } else {
        const uint16_t *p = (const uint16_t *)v->values + v->offset + start;
        for (int64_t i = 0; i < n; i++) dst[i] = half_to_double(p[i]);
    }
}

#define TL_STORE(T)                                                                                \
    do {                                                                                           \
        T *d = (T *)values + start;                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = (T)src[i];                                          \
    } while (0)

static void store_ints(tl_atype id, void *values, int64_t start, int64_t n, const int64_t *src)
{
    switch (id) {
    case TL_ATYPE_INT8:
    case TL_ATYPE_UINT8:
        TL_STORE(uint8_t);
        break;
    case TL_ATYPE_INT16:
    case TL_ATYPE_UINT16:
        TL_STORE(uint16_t);
        break;
    case TL_ATYPE_INT32:
    case TL_ATYPE_UINT32:
        TL_STORE(uint32_t);
        break;
    default:
        TL_STORE(uint64_t);
        break;
    }
}

/* The target's range in int64 terms (uint64: only what an int64 can hold;
 * larger values only come from uint64 sources, which are copied). */
static void int_limits(tl_atype id, int64_t *lo, int64_t *hi)
{
    switch (id) {
    case TL_ATYPE_INT8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        return;
    case TL_ATYPE_UINT8:
        *lo = 0, *hi = UINT8_MAX;
        return;
    case TL_ATYPE_INT16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        return;
    case TL_ATYPE_UINT16:
        *lo = 0, *hi = UINT16_MAX;
        return;
    case TL_ATYPE_INT32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        return;
    case TL_ATYPE_UINT32:
        *lo = 0, *hi = UINT32_MAX;
        return;
    case TL_ATYPE_UINT64:
        *lo = 0, *hi = INT64_MAX;
        return;
    default:
        *lo = INT64_MIN, *hi = INT64_MAX;
        return;
    }
}

static void int_text(const tl_cast *c, int64_t v, char *buf, size_t size)
{
    if (c->src->type.id == TL_ATYPE_UINT64)
        snprintf(buf, size, "%llu", (unsigned long long)(uint64_t)v);
    else
        snprintf(buf, size, "%lld", (long long)v);
}

static tl_status int_to_int(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    int64_t lo, hi, tmp[TL_CAST_CHUNK];
    int_limits(c->to->id, &lo, &hi);
    if (v->type.id == TL_ATYPE_UINT64 && lo < 0) lo = 0; /* wrapped values are huge */
    void *values;
    TL_TRY(
        tl_cast_begin(c, (size_t)v->length * (size_t)tl_type_byte_width(c->to), out, &values, err));
    for (int64_t start = 0; start < v->length; start += TL_CAST_CHUNK) {
        int64_t n = v->length - start < TL_CAST_CHUNK ? v->length - start : TL_CAST_CHUNK;
        load_ints(v, start, n, tmp);
        bool bad = false;
        for (int64_t i = 0; i < n; i++) bad |= (tmp[i] < lo) | (tmp[i] > hi);
        for (int64_t i = 0; bad && i < n; i++) {
            if ((tmp[i] >= lo && tmp[i] <= hi) || tl_view_is_null(v, start + i)) continue;
            char text[32];
            int_text(c, tmp[i], text, sizeof text);
            tl_array_release(out);
            return tl_cast_range_error(c, start + i, text, err);
        }
        store_ints(c->to->id, values, start, n, tmp);
    }
    return TL_OK;
}

static tl_status int_to_float(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    bool f32 = c->to->id == TL_ATYPE_FLOAT32, from_u64 = v->type.id == TL_ATYPE_UINT64;
    int64_t tmp[TL_CAST_CHUNK];
    void *values;
    TL_TRY(tl_cast_begin(c, (size_t)v->length * (f32 ? 4 : 8), out, &values, err));
    for (int64_t start = 0; start < v->length; start += TL_CAST_CHUNK) {
        int64_t n = v->length - start < TL_CAST_CHUNK ? v->length - start : TL_CAST_CHUNK;
        load_ints(v, start, n, tmp);
        if (f32) {
            float *d = (float *)values + start;
            for (int64_t i = 0; i < n; i++)
                d[i] = from_u64 ? (float)(uint64_t)tmp[i] : (float)tmp[i];
        } else {
            double *d = (double *)values + start;
            for (int64_t i = 0; i < n; i++)
                d[i] = from_u64 ? (double)(uint64_t)tmp[i] : (double)tmp[i];
        }
    }
    return TL_OK;
}

static tl_status float_error(const tl_cast *c, int64_t row, double x, tl_error *err)
{
    char text[40];
    tl_double_format(x, text, sizeof text);
    if (x == trunc(x)) return tl_cast_range_error(c, row, text, err); /* includes infinities */
    return tl_cast_value_error(c, row, text, "not an integer", err);
}

/* Converts a chunk of doubles to integers of the target; ok[i] = exact and in range. */
static void doubles_to_ints(tl_atype to, const double *x, int64_t n, int64_t *dst, bool *ok)
{
    if (to == TL_ATYPE_UINT64) {
        for (int64_t i = 0; i < n; i++) {
            bool in = x[i] >= 0.0 && x[i] < 18446744073709551616.0;
            uint64_t u = in ? (uint64_t)x[i] : 0;
            ok[i] = in && (double)u == x[i];
            dst[i] = (int64_t)u;
        }
        return;
    }
    int64_t lo, hi;
    int_limits(to, &lo, &hi);
    /* Both bounds are exact doubles: -2^k and 2^k (hi + 1). */
    double dlo = (double)lo, dhi = to == TL_ATYPE_INT64 ? 9223372036854775808.0 : (double)hi + 1;
    for (int64_t i = 0; i < n; i++) {
        bool in = x[i] >= dlo && x[i] < dhi;
        int64_t v = in ? (int64_t)x[i] : 0;
        ok[i] = in && (double)v == x[i];
        dst[i] = v;
    }
}

static tl_status float_to_int(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    double x[TL_CAST_CHUNK];
    int64_t tmp[TL_CAST_CHUNK];
    bool ok[TL_CAST_CHUNK];
    void *values;
    TL_TRY(
        tl_cast_begin(c, (size_t)v->length * (size_t)tl_type_byte_width(c->to), out, &values, err));
    for (int64_t start = 0; start < v->length; start += TL_CAST_CHUNK) {
        int64_t n = v->length - start < TL_CAST_CHUNK ? v->length - start : TL_CAST_CHUNK;
        load_doubles(v, start, n, x);
        doubles_to_ints(c->to->id, x, n, tmp, ok);
        bool all = true;
        for (int64_t i = 0; i < n; i++) all &= ok[i];
        for (int64_t i = 0; !all && i < n; i++) {
            if (ok[i] || tl_view_is_null(v, start + i)) continue;
            tl_array_release(out);
            return float_error(c, start + i, x[i], err);
        }
        store_ints(c->to->id, values, start, n, tmp);
    }
    return TL_OK;
}

static tl_status float_to_float(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    bool f32 = c->to->id == TL_ATYPE_FLOAT32;
    double x[TL_CAST_CHUNK];
    void *values;
    TL_TRY(tl_cast_begin(c, (size_t)v->length * (f32 ? 4 : 8), out, &values, err));
    for (int64_t start = 0; start < v->length; start += TL_CAST_CHUNK) {
        int64_t n = v->length - start < TL_CAST_CHUNK ? v->length - start : TL_CAST_CHUNK;
        load_doubles(v, start, n, x);
        if (!f32) {
            memcpy((double *)values + start, x, (size_t)n * sizeof(double));
            continue;
        }
        float *d = (float *)values + start;
        bool bad = false;
        for (int64_t i = 0; i < n; i++) {
            d[i] = (float)x[i];
            bad |= isinf(d[i]) && !isinf(x[i]);
        }
        for (int64_t i = 0; bad && i < n; i++) {
            if (!isinf(d[i]) || isinf(x[i]) || tl_view_is_null(v, start + i)) continue;
            char text[40];
            tl_double_format(x[i], text, sizeof text);
            tl_array_release(out);
            return tl_cast_range_error(c, start + i, text, err);
        }
    }
    return TL_OK;
}

/* ---- Decimals ---- */

static tl_status decimal_error(const tl_cast *c, int64_t row, tl_i128 v, int32_t scale, bool lost,
                               tl_error *err)
{
    char text[64];
    tl_decimal128_format(v, scale, text, sizeof text);
    if (lost) return tl_cast_value_error(c, row, text, "digits would be lost", err);
    return tl_cast_range_error(c, row, text, err);
}

/* Rescales one value; returns false when digits are lost or it overflows. */
static bool rescale(tl_i128 v, int32_t from_scale, const tl_arrow_type *to, tl_i128 *out,
                    bool *lost)
{
    tl_i128 limit = tl_i128_pow10(to->precision);
    *lost = false;
    if (to->scale >= from_scale) {
        tl_i128 factor = tl_i128_pow10(to->scale - from_scale), bound = limit / factor;
        if (v >= bound || v <= -bound) return false;
        *out = v * factor;
        return true;
    }
    tl_i128 divisor = tl_i128_pow10(from_scale - to->scale);
    if (v % divisor != 0) {
        *lost = true;
        return false;
    }
    *out = v / divisor;
    return *out<limit && * out> - limit;
}

static tl_i128 load_decimal_source(const tl_array_view *v, int64_t row, int64_t *ibuf)
{
    if (v->type.id == TL_ATYPE_DECIMAL128)
        return tl_load_i128((const uint8_t *)v->values + (size_t)(v->offset + row) * 16);
    load_ints(v, row, 1, ibuf);
    if (v->type.id == TL_ATYPE_UINT64) return (tl_i128)(uint64_t)ibuf[0];
    return ibuf[0];
}

static tl_status to_decimal(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    const tl_array_view *v = c->src;
    int32_t from_scale = v->type.id == TL_ATYPE_DECIMAL128 ? v->type.scale : 0;
    void *values;
    TL_TRY(tl_cast_begin(c, (size_t)v->length * 16, out, &values, err));
    for (int64_t i = 0; i < v->length; i++) {
        int64_t ibuf[1];
        tl_i128 x = load_decimal_source(v, i, ibuf), y = 0;
        bool lost;
        if (!rescale(x, from_scale, c->to, &y, &lost)) {
            if (tl_view_is_null(v, i)) {
                y = 0;
            } else {
                tl_array_release(out);
                return decimal_error(c, i, x, from_scale, lost, err);
            }
        }
        tl_store_i128((uint8_t *)values + (size_t)i * 16, y);
    }
    return TL_OK;
}

tl_status tl_cast_numeric(const tl_cast *c, struct ArrowArray *out, tl_error *err)
{
    tl_atype f = c->src->type.id, t = c->to->id;
    if (t == TL_ATYPE_DECIMAL128) return to_decimal(c, out, err);
    if (tl_atype_is_float(f)) {
        if (tl_atype_is_integer(t)) return float_to_int(c, out, err);
        return float_to_float(c, out, err);
    }
    if (tl_atype_is_integer(t)) return int_to_int(c, out, err); /* from an integer or bool */
    if (tl_atype_is_float(t)) return int_to_float(c, out, err);
    return tl_error_set(err, TL_ERR_INTERNAL, "column \"%s\": no numeric cast kernel", c->column);
}
