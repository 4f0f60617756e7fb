#include "iceberg/transform.h"

#include "iceberg/manifest.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/parse.h"

#define TL_ICE_MICROS_PER_HOUR INT64_C(3600000000)
#define TL_ICE_MICROS_PER_DAY INT64_C(86400000000)

static const char *const tl_ice_transform_names[] = {
    [TL_ICE_TRANSFORM_IDENTITY] = "identity", [TL_ICE_TRANSFORM_YEAR] = "year",
    [TL_ICE_TRANSFORM_MONTH] = "month",       [TL_ICE_TRANSFORM_DAY] = "day",
    [TL_ICE_TRANSFORM_HOUR] = "hour",         [TL_ICE_TRANSFORM_BUCKET] = "bucket",
    [TL_ICE_TRANSFORM_TRUNCATE] = "truncate", [TL_ICE_TRANSFORM_VOID] = "void",
};

/* ---- Parsing ---- */

/* "name[N]" with 1 <= N <= INT32_MAX. */
static bool parse_param(const char *s, size_t name_len, int32_t *out)
{
    const char *p = s + name_len;
    if (*p++ != '[') return false;
    int64_t v = 0;
    int digits = 0;
    for (; isdigit((unsigned char)*p); p++) {
        if (++digits > 10) return false;
        v = v * 10 + (*p - '0');
    }
    if (digits == 0 || p[0] != ']' || p[1] != '\0' || v < 1 || v > INT32_MAX) return false;
    *out = (int32_t)v;
    return true;
}

tl_status tl_ice_transform_parse(const char *s, tl_ice_transform *out, tl_error *err)
{
    out->kind = TL_ICE_TRANSFORM_IDENTITY;
    out->param = 0;
    if (s == NULL) return tl_error_set(err, TL_ERR_INVALID, "missing transform");
    for (int k = TL_ICE_TRANSFORM_IDENTITY; k <= TL_ICE_TRANSFORM_VOID; k++) {
        const char *name = tl_ice_transform_names[k];
        size_t len = strlen(name);
        if (strncasecmp(s, name, len) != 0) continue;
        bool takes_param = k == TL_ICE_TRANSFORM_BUCKET || k == TL_ICE_TRANSFORM_TRUNCATE;
        if (takes_param ? parse_param(s, len, &out->param) : s[len] == '\0') {
            out->kind = (tl_ice_transform_kind)k;
            return TL_OK;
        }
    }
    return tl_error_set(err, TL_ERR_INVALID, "unsupported partition transform \"%.64s\"", s);
}

void tl_ice_transform_format(tl_ice_transform t, char *buf, size_t size)
{
    if ((unsigned)t.kind > TL_ICE_TRANSFORM_VOID) {
        snprintf(buf, size, "?");
        return;
    }
    if (t.kind == TL_ICE_TRANSFORM_BUCKET || t.kind == TL_ICE_TRANSFORM_TRUNCATE)
        snprintf(buf, size, "%s[%d]", tl_ice_transform_names[t.kind], (int)t.param);
    else
        snprintf(buf, size, "%s", tl_ice_transform_names[t.kind]);
}

/* ---- Types ---- */

static bool is_timestamp_us(tl_ice_type_id id)
{
    return id == TL_ICE_TIMESTAMP || id == TL_ICE_TIMESTAMPTZ;
}

static bool computable(tl_ice_transform_kind k, tl_ice_type_id id)
{
    switch (k) {
    case TL_ICE_TRANSFORM_IDENTITY:
        return id == TL_ICE_BOOLEAN || id == TL_ICE_INT || id == TL_ICE_LONG || id == TL_ICE_DATE ||
               id == TL_ICE_TIME || is_timestamp_us(id) || id == TL_ICE_STRING;
    case TL_ICE_TRANSFORM_YEAR:
    case TL_ICE_TRANSFORM_MONTH:
    case TL_ICE_TRANSFORM_DAY:
        return id == TL_ICE_DATE || is_timestamp_us(id);
    case TL_ICE_TRANSFORM_HOUR:
        return is_timestamp_us(id);
    default:
        return false;
    }
}

tl_status tl_ice_transform_check(tl_ice_transform t, const tl_ice_type *source, tl_error *err)
{
    if (computable(t.kind, source->id)) return TL_OK;
    char tname[TL_ICE_TRANSFORM_STR_MAX], type[TL_ICE_TYPE_STR_MAX];
    tl_ice_transform_format(t, tname, sizeof tname);
    tl_ice_type_format(source, type, sizeof type);
    return tl_error_set(err, TL_ERR_INVALID,
                        "partition transform %s on a %s column is not supported", tname, type);
}

void tl_ice_transform_result_type(tl_ice_transform t, const tl_ice_type *source, tl_ice_type *out)
{
    memset(out, 0, sizeof *out);
    switch (t.kind) {
    case TL_ICE_TRANSFORM_YEAR:
    case TL_ICE_TRANSFORM_MONTH:
    case TL_ICE_TRANSFORM_HOUR:
    case TL_ICE_TRANSFORM_BUCKET:
        out->id = TL_ICE_INT;
        return;
    case TL_ICE_TRANSFORM_DAY:
        out->id = TL_ICE_DATE;
        return;
    default:
        *out = *source;
        return;
    }
}

/* ---- Computing ---- */

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - (a % b < 0);
}

/* Proleptic Gregorian year and month (1..12) of a day count (H. Hinnant's algorithm). */
static void civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    days += 719468;
    int64_t era = floor_div(days, 146097);
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}

static int64_t months_from_days(int64_t days)
{
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    return (y - 1970) * 12 + (m - 1);
}

static int64_t years_from_days(int64_t days)
{
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    return y - 1970;
}

int64_t tl_ice_transform_apply(tl_ice_transform t, int64_t micros)
{
    switch (t.kind) {
    case TL_ICE_TRANSFORM_IDENTITY:
        return micros;
    case TL_ICE_TRANSFORM_YEAR:
        return years_from_days(floor_div(micros, TL_ICE_MICROS_PER_DAY));
    case TL_ICE_TRANSFORM_MONTH:
        return months_from_days(floor_div(micros, TL_ICE_MICROS_PER_DAY));
    case TL_ICE_TRANSFORM_DAY:
        return floor_div(micros, TL_ICE_MICROS_PER_DAY);
    case TL_ICE_TRANSFORM_HOUR:
        return floor_div(micros, TL_ICE_MICROS_PER_HOUR);
    default:
        return 0;
    }
}

static void apply_floor_div(const int64_t *in, size_t n, int64_t unit, int64_t *out)
{
    for (size_t i = 0; i < n; i++) out[i] = floor_div(in[i], unit);
}

/* Time series arrive mostly sorted, so consecutive rows share a day: the calendar
 * math runs once per distinct day run. */
static void apply_calendar(const int64_t *in, size_t n, bool years, int64_t *out)
{
    int64_t last_day = 0, last_value = 0;
    bool have_last = false;
    for (size_t i = 0; i < n; i++) {
        int64_t day = floor_div(in[i], TL_ICE_MICROS_PER_DAY);
        if (!have_last || day != last_day) {
            last_value = years ? years_from_days(day) : months_from_days(day);
            last_day = day;
            have_last = true;
        }
        out[i] = last_value;
    }
}

void tl_ice_transform_apply_many(tl_ice_transform t, const int64_t *micros, size_t n, int64_t *out)
{
    switch (t.kind) {
    case TL_ICE_TRANSFORM_IDENTITY:
        if (out != micros) memmove(out, micros, n * sizeof *out);
        return;
    case TL_ICE_TRANSFORM_DAY:
        apply_floor_div(micros, n, TL_ICE_MICROS_PER_DAY, out);
        return;
    case TL_ICE_TRANSFORM_HOUR:
        apply_floor_div(micros, n, TL_ICE_MICROS_PER_HOUR, out);
        return;
    case TL_ICE_TRANSFORM_YEAR:
        apply_calendar(micros, n, true, out);
        return;
    case TL_ICE_TRANSFORM_MONTH:
        apply_calendar(micros, n, false, out);
        return;
    default:
        memset(out, 0, n * sizeof *out);
        return;
    }
}

int64_t tl_ice_transform_apply_date(tl_ice_transform t, int32_t days)
{
    switch (t.kind) {
    case TL_ICE_TRANSFORM_IDENTITY:
    case TL_ICE_TRANSFORM_DAY:
        return days;
    case TL_ICE_TRANSFORM_YEAR:
        return years_from_days(days);
    case TL_ICE_TRANSFORM_MONTH:
        return months_from_days(days);
    case TL_ICE_TRANSFORM_HOUR:
        return (int64_t)days * 24;
    default:
        return 0;
    }
}

/* ---- Human forms ---- */

/* ISO-8601 date as java.time prints it: 4+ digit years, '+' above 9999. */
static int format_date(int64_t days, char *buf, size_t size)
{
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    const char *sign = y > 9999 ? "+" : y < 0 ? "-" : "";
    long long ay = y < 0 ? -(long long)y : (long long)y;
    return snprintf(buf, size, "%s%04lld-%02d-%02d", sign, ay, m, d);
}

void tl_ice_transform_format_value(tl_ice_transform t, int64_t value, char *buf, size_t size)
{
    switch (t.kind) {
    case TL_ICE_TRANSFORM_YEAR:
        snprintf(buf, size, "%04lld", (long long)(1970 + value));
        return;
    case TL_ICE_TRANSFORM_MONTH:
        snprintf(buf, size, "%04lld-%02d", (long long)(1970 + floor_div(value, 12)),
                 (int)(value - floor_div(value, 12) * 12 + 1));
        return;
    case TL_ICE_TRANSFORM_DAY:
        format_date(value, buf, size);
        return;
    case TL_ICE_TRANSFORM_HOUR: {
        int64_t day = floor_div(value, 24);
        int n = format_date(day, buf, size);
        if (n > 0 && (size_t)n < size)
            snprintf(buf + n, size - (size_t)n, "-%02d", (int)(value - day * 24));
        return;
    }
    default:
        snprintf(buf, size, "%lld", (long long)value);
        return;
    }
}

tl_status tl_ice_partition_field_name(const char *column, tl_ice_transform t, char **out,
                                      tl_error *err)
{
    static const char *const suffixes[] = {
        [TL_ICE_TRANSFORM_IDENTITY] = "",       [TL_ICE_TRANSFORM_YEAR] = "_year",
        [TL_ICE_TRANSFORM_MONTH] = "_month",    [TL_ICE_TRANSFORM_DAY] = "_day",
        [TL_ICE_TRANSFORM_HOUR] = "_hour",      [TL_ICE_TRANSFORM_BUCKET] = "_bucket",
        [TL_ICE_TRANSFORM_TRUNCATE] = "_trunc", [TL_ICE_TRANSFORM_VOID] = "_null",
    };
    if ((unsigned)t.kind > TL_ICE_TRANSFORM_VOID)
        return tl_error_set(err, TL_ERR_INTERNAL, "bad transform kind %d", (int)t.kind);
    size_t a = strlen(column), b = strlen(suffixes[t.kind]);
    *out = malloc(a + b + 1);
    if (*out == NULL) return tl_error_nomem(err);
    memcpy(*out, column, a);
    memcpy(*out + a, suffixes[t.kind], b + 1);
    return TL_OK;
}

/* URL form encoding as Java's URLEncoder does, except that space is %20. */
static int append_escaped(tl_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '.' || *p == '-' || *p == '_' || *p == '*') {
            if (tl_buf_append_byte(out, *p) != 0) return -1;
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            if (tl_buf_append(out, esc, 3) != 0) return -1;
        }
    }
    return 0;
}

tl_status tl_ice_partition_value_text(tl_ice_transform t, const tl_ice_type *source,
                                      const tl_ice_value *value, tl_buf *out, tl_error *err)
{
    char text[48];
    int rc;
    if (value->kind == TL_ICE_VALUE_NULL) {
        rc = tl_buf_append_str(out, "null");
    } else if (value->kind == TL_ICE_VALUE_STRING || value->kind == TL_ICE_VALUE_BYTES) {
        rc = tl_buf_append(out, value->bytes, value->len);
    } else if (value->kind == TL_ICE_VALUE_BOOL) {
        rc = tl_buf_append_str(out, value->i ? "true" : "false");
    } else if (value->kind == TL_ICE_VALUE_FLOAT || value->kind == TL_ICE_VALUE_DOUBLE) {
        tl_double_format(value->d, text, sizeof text);
        rc = tl_buf_append_str(out, text);
    } else {
        if (t.kind == TL_ICE_TRANSFORM_IDENTITY && source && source->id == TL_ICE_DATE)
            format_date(value->i, text, sizeof text);
        else
            tl_ice_transform_format_value(t, value->i, text, sizeof text);
        rc = tl_buf_append_str(out, text);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

tl_status tl_ice_partition_path_segment(const char *field_name, tl_ice_transform t,
                                        const tl_ice_type *source, const tl_ice_value *value,
                                        tl_buf *out, tl_error *err)
{
    tl_buf text = {0};
    size_t mark = out->len;
    tl_status st = tl_ice_partition_value_text(t, source, value, &text, err);
    if (st == TL_OK && tl_buf_append_byte(&text, 0) != 0) st = tl_error_nomem(err);
    if (st == TL_OK && (append_escaped(out, field_name) != 0 || tl_buf_append_byte(out, '=') != 0 ||
                        append_escaped(out, (const char *)text.data) != 0)) {
        out->len = mark;
        if (out->data) out->data[mark] = '\0';
        st = tl_error_nomem(err);
    }
    tl_buf_free(&text);
    return st;
}
