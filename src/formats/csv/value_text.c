#include "formats/csv/value_text.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow/parse.h"

/* The view and index holding the value (the dictionary for dictionary arrays). */
static const tl_array_view *resolve(const tl_array_view *v, int64_t *i)
{
    if (!v->is_dictionary) return v;
    *i = tl_view_dict_index(v, *i);
    return v->dictionary;
}

bool tl_value_is_null(const tl_array_view *v, int64_t i)
{
    if (tl_view_is_null(v, i)) return true;
    const tl_array_view *d = resolve(v, &i);
    return d != v && tl_view_is_null(d, i);
}

static uint64_t uint_at(const tl_array_view *v, int64_t j)
{
    switch (tl_arrow_type_bit_width(&v->type)) {
    case 8:
        return ((const uint8_t *)v->values)[j];
    case 16:
        return ((const uint16_t *)v->values)[j];
    case 32:
        return ((const uint32_t *)v->values)[j];
    default:
        return ((const uint64_t *)v->values)[j];
    }
}

static const int64_t per_sec[] = {1, 1000, 1000000, 1000000000};
static const int digits[] = {0, 3, 6, 9};

/* DuckDB's infinite dates and timestamps reach Arrow as these sentinels. */
static const char *infinity_text(int64_t value, int64_t max)
{
    return value == max ? "infinity" : value == -max ? "-infinity" : NULL;
}

static void format_timestamp(int64_t value, tl_time_unit unit, bool utc, char *buf, size_t size)
{
    const char *inf = infinity_text(value, INT64_MAX);
    if (inf) {
        snprintf(buf, size, "%s", inf);
        return;
    }
    int64_t sub, secs = value / per_sec[unit];
    sub = value % per_sec[unit];
    if (sub < 0) {
        sub += per_sec[unit];
        secs--;
    }
    int64_t sod = secs % 86400, days = secs / 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t y;
    int m, d;
    tl_civil_from_days(days, &y, &m, &d);
    int n = snprintf(buf, size, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d", y, m, d,
                     (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
    if (sub && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".%0*" PRId64, digits[unit], sub);
    if (utc && n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, "Z");
}

/* A time of day as HH:MM:SS, with the unit's fraction digits when it has one. */
static void format_time(int64_t value, tl_time_unit unit, char *buf, size_t size)
{
    int64_t secs = value / per_sec[unit], sub = value % per_sec[unit];
    int n = snprintf(buf, size, "%02d:%02d:%02d", (int)(secs / 3600), (int)(secs / 60 % 60),
                     (int)(secs % 60));
    if (sub && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ".%0*" PRId64, digits[unit], sub);
}

/* A float as Python (and so pyarrow) and DuckDB's shell print it: a whole
 * number below 1e16 keeps a ".0" (100.0, not 1e+02), anything else is the
 * shortest text that reads back the same (0.1, 1e+16, 1.5e-07). */
static void float_text(double x, char *buf, size_t size)
{
    if (isnan(x))
        snprintf(buf, size, "nan"); /* not "-nan": DuckDB and Python print no sign */
    else if (isfinite(x) && x == trunc(x) && fabs(x) < 1e16)
        snprintf(buf, size, "%.1f", x);
    else
        tl_double_format(x, buf, size);
}

/* A float32 as DuckDB prints it: the shortest text that reads back as the
 * same float32 (0.1, not the double 0.10000000149011612). */
static void float32_text(float x, char *buf, size_t size)
{
    if (!isfinite(x) || (x == truncf(x) && fabsf(x) < 1e16f)) {
        float_text(x, buf, size);
        return;
    }
    for (int precision = 1; precision <= 9; precision++) {
        snprintf(buf, size, "%.*g", precision, (double)x);
        if (strtof(buf, NULL) == x) return;
    }
}

int tl_value_text(const tl_array_view *v, int64_t i, tl_buf *out)
{
    v = resolve(v, &i);
    int64_t j = v->offset + i, y, len;
    int m, d;
    char buf[96];
    switch (v->type.id) {
    case TL_ATYPE_BOOL:
        return tl_buf_append_str(out, tl_bit_get(v->values, j) ? "true" : "false");
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_INT32:
    case TL_ATYPE_INT64:
        return tl_buf_printf(out, "%" PRId64, tl_view_int(v, i));
    case TL_ATYPE_UINT8:
    case TL_ATYPE_UINT16:
    case TL_ATYPE_UINT32:
    case TL_ATYPE_UINT64:
        return tl_buf_printf(out, "%" PRIu64, uint_at(v, j));
    case TL_ATYPE_FLOAT32:
        float32_text(((const float *)v->values)[j], buf, sizeof buf);
        return tl_buf_append_str(out, buf);
    case TL_ATYPE_FLOAT64:
        float_text(((const double *)v->values)[j], buf, sizeof buf);
        return tl_buf_append_str(out, buf);
    case TL_ATYPE_DECIMAL128:
        tl_decimal128_format(tl_load_i128((const uint8_t *)v->values + 16 * j), v->type.scale, buf,
                             sizeof buf);
        return tl_buf_append_str(out, buf);
    case TL_ATYPE_DATE32:
    case TL_ATYPE_DATE64: {
        int64_t days = v->type.id == TL_ATYPE_DATE32 ? ((const int32_t *)v->values)[j]
                                                     : ((const int64_t *)v->values)[j] / 86400000;
        const char *inf = v->type.id == TL_ATYPE_DATE32 ? infinity_text(days, INT32_MAX) : NULL;
        if (inf) return tl_buf_append_str(out, inf);
        tl_civil_from_days(days, &y, &m, &d);
        return tl_buf_printf(out, "%04" PRId64 "-%02d-%02d", y, m, d);
    }
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
        format_time(tl_view_int(v, i), v->type.unit, buf, sizeof buf);
        return tl_buf_append_str(out, buf);
    case TL_ATYPE_TIMESTAMP:
        format_timestamp(((const int64_t *)v->values)[j], v->type.unit, v->type.has_tz, buf,
                         sizeof buf);
        return tl_buf_append_str(out, buf);
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING: {
        const uint8_t *p = tl_view_bytes(v, i, &len);
        return tl_buf_append(out, p, (size_t)len);
    }
    case TL_ATYPE_BINARY:
    case TL_ATYPE_LARGE_BINARY: {
        const uint8_t *p = tl_view_bytes(v, i, &len);
        for (int64_t k = 0; k < len; k++)
            if (tl_buf_printf(out, "%02x", p[k]) != 0) return -1;
        return 0;
    }
    default:
        tl_arrow_type_describe(&v->type, buf, sizeof buf);
        return tl_buf_printf(out, "<%s>", buf);
    }
}

bool tl_value_is_json_literal(const tl_array_view *v, int64_t i)
{
    v = resolve(v, &i);
    switch (v->type.id) {
    case TL_ATYPE_BOOL:
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_INT32:
    case TL_ATYPE_INT64:
    case TL_ATYPE_UINT8:
    case TL_ATYPE_UINT16:
    case TL_ATYPE_UINT32:
    case TL_ATYPE_UINT64:
        return true;
    case TL_ATYPE_FLOAT32:
        return isfinite(((const float *)v->values)[v->offset + i]);
    case TL_ATYPE_FLOAT64:
        return isfinite(((const double *)v->values)[v->offset + i]);
    default:
        return false;
    }
}
