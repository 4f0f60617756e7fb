#include "arrow/arrow_type.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_unit(char c, tl_time_unit *unit)
{
    switch (c) {
    case 's':
        *unit = TL_UNIT_SECOND;
        return 0;
    case 'm':
        *unit = TL_UNIT_MILLI;
        return 0;
    case 'u':
        *unit = TL_UNIT_MICRO;
        return 0;
    case 'n':
        *unit = TL_UNIT_NANO;
        return 0;
    }
    return -1;
}

static const char unit_chars[] = {'s', 'm', 'u', 'n'};
static const char *const unit_names[] = {"s", "ms", "us", "ns"};

static tl_status parse_decimal(const char *format, tl_arrow_type *out, tl_error *err)
{
    /* "d:P,S" or "d:P,S,128"; other bit widths are not supported. */
    int p = 0, s = 0, bits = 128, n = 0;
    int got = sscanf(format, "d:%d,%d%n,%d", &p, &s, &n, &bits);
    if (got < 2 || p <= 0 || p > 38 || s < 0 || s > p || bits != 128)
        return tl_error_set(err, TL_ERR_INVALID, "unsupported decimal type \"%s\"", format);
    out->id = TL_ATYPE_DECIMAL128;
    out->precision = p;
    out->scale = s;
    out->byte_width = 16;
    return TL_OK;
}

static tl_status parse_temporal(const char *format, tl_arrow_type *out, tl_error *err)
{
    /* format[0] == 't' */
    if (strcmp(format, "tdD") == 0) {
        out->id = TL_ATYPE_DATE32;
        return TL_OK;
    }
    if (strcmp(format, "tdm") == 0) {
        out->id = TL_ATYPE_DATE64;
        return TL_OK;
    }
    if (format[1] == 't' && format[2] && !format[3] && parse_unit(format[2], &out->unit) == 0) {
        out->id = out->unit <= TL_UNIT_MILLI ? TL_ATYPE_TIME32 : TL_ATYPE_TIME64;
        return TL_OK;
    }
    if (format[1] == 's' && format[2] && format[3] == ':' &&
        parse_unit(format[2], &out->unit) == 0) {
        const char *tz = format + 4;
        if (strlen(tz) >= TL_TZ_MAX)
            return tl_error_set(err, TL_ERR_INVALID, "time zone too long in \"%s\"", format);
        out->id = TL_ATYPE_TIMESTAMP;
        out->has_tz = tz[0] != '\0';
        strcpy(out->tz, tz);
        return TL_OK;
    }
    return tl_error_set(err, TL_ERR_INVALID, "unsupported Arrow type \"%s\"", format);
}

tl_status tl_arrow_type_parse(const char *format, tl_arrow_type *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (format == NULL || format[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "missing Arrow format string");
    if (format[1] == '\0') {
        static const struct {
            char c;
            tl_atype id;
        } simple[] = {
            {'n', TL_ATYPE_NULL},    {'b', TL_ATYPE_BOOL},         {'c', TL_ATYPE_INT8},
            {'C', TL_ATYPE_UINT8},   {'s', TL_ATYPE_INT16},        {'S', TL_ATYPE_UINT16},
            {'i', TL_ATYPE_INT32},   {'I', TL_ATYPE_UINT32},       {'l', TL_ATYPE_INT64},
            {'L', TL_ATYPE_UINT64},  {'e', TL_ATYPE_FLOAT16},      {'f', TL_ATYPE_FLOAT32},
            {'g', TL_ATYPE_FLOAT64}, {'u', TL_ATYPE_STRING},       {'U', TL_ATYPE_LARGE_STRING},
            {'z', TL_ATYPE_BINARY},  {'Z', TL_ATYPE_LARGE_BINARY},
        };
        for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
            if (simple[i].c == format[0]) {
                out->id = simple[i].id;
                return TL_OK;
            }
    }
    if (strcmp(format, "+s") == 0) {
        out->id = TL_ATYPE_STRUCT;
        return TL_OK;
    }
    if (strcmp(format, "vu") == 0 || strcmp(format, "vz") == 0) {
        out->id = format[1] == 'u' ? TL_ATYPE_STRING_VIEW : TL_ATYPE_BINARY_VIEW;
        return TL_OK;
    }
    if (format[0] == 'w' && format[1] == ':') {
        char *end = NULL;
        long w = strtol(format + 2, &end, 10);
        if (*end != '\0' || w <= 0 || w > (1 << 20))
            return tl_error_set(err, TL_ERR_INVALID, "bad fixed-size binary type \"%s\"", format);
        out->id = TL_ATYPE_FIXED_BINARY;
        out->byte_width = (int32_t)w;
        return TL_OK;
    }
    if (format[0] == 'd' && format[1] == ':') return parse_decimal(format, out, err);
    if (format[0] == 't') return parse_temporal(format, out, err);
    return tl_error_set(err, TL_ERR_INVALID, "unsupported Arrow type \"%s\"", format);
}

void tl_arrow_type_format(const tl_arrow_type *t, char *buf, size_t size)
{
    static const char simple[] = {
        [TL_ATYPE_NULL] = 'n',    [TL_ATYPE_BOOL] = 'b',         [TL_ATYPE_INT8] = 'c',
        [TL_ATYPE_UINT8] = 'C',   [TL_ATYPE_INT16] = 's',        [TL_ATYPE_UINT16] = 'S',
        [TL_ATYPE_INT32] = 'i',   [TL_ATYPE_UINT32] = 'I',       [TL_ATYPE_INT64] = 'l',
        [TL_ATYPE_UINT64] = 'L',  [TL_ATYPE_FLOAT16] = 'e',      [TL_ATYPE_FLOAT32] = 'f',
        [TL_ATYPE_FLOAT64] = 'g', [TL_ATYPE_STRING] = 'u',       [TL_ATYPE_LARGE_STRING] = 'U',
        [TL_ATYPE_BINARY] = 'z',  [TL_ATYPE_LARGE_BINARY] = 'Z',
    };
    switch (t->id) {
    case TL_ATYPE_FIXED_BINARY:
        snprintf(buf, size, "w:%d", (int)t->byte_width);
        return;
    case TL_ATYPE_DECIMAL128:
        snprintf(buf, size, "d:%d,%d", (int)t->precision, (int)t->scale);
        return;
    case TL_ATYPE_DATE32:
        snprintf(buf, size, "tdD");
        return;
    case TL_ATYPE_DATE64:
        snprintf(buf, size, "tdm");
        return;
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
        snprintf(buf, size, "tt%c", unit_chars[t->unit]);
        return;
    case TL_ATYPE_TIMESTAMP:
        snprintf(buf, size, "ts%c:%s", unit_chars[t->unit], t->has_tz ? t->tz : "");
        return;
    case TL_ATYPE_STRUCT:
        snprintf(buf, size, "+s");
        return;
    case TL_ATYPE_STRING_VIEW:
    case TL_ATYPE_BINARY_VIEW:
        snprintf(buf, size, "v%c", t->id == TL_ATYPE_STRING_VIEW ? 'u' : 'z');
        return;
    default:
        snprintf(buf, size, "%c", simple[t->id]);
        return;
    }
}

void tl_arrow_type_describe(const tl_arrow_type *t, char *buf, size_t size)
{
    static const char *const names[] = {
        [TL_ATYPE_NULL] = "null",
        [TL_ATYPE_BOOL] = "bool",
        [TL_ATYPE_INT8] = "int8",
        [TL_ATYPE_UINT8] = "uint8",
        [TL_ATYPE_INT16] = "int16",
        [TL_ATYPE_UINT16] = "uint16",
        [TL_ATYPE_INT32] = "int32",
        [TL_ATYPE_UINT32] = "uint32",
        [TL_ATYPE_INT64] = "int64",
        [TL_ATYPE_UINT64] = "uint64",
        [TL_ATYPE_FLOAT16] = "float16",
        [TL_ATYPE_FLOAT32] = "float32",
        [TL_ATYPE_FLOAT64] = "float64",
        [TL_ATYPE_STRING] = "string",
        [TL_ATYPE_LARGE_STRING] = "large_string",
        [TL_ATYPE_BINARY] = "binary",
        [TL_ATYPE_LARGE_BINARY] = "large_binary",
        [TL_ATYPE_DATE32] = "date32",
        [TL_ATYPE_DATE64] = "date64",
        [TL_ATYPE_STRUCT] = "struct",
        [TL_ATYPE_STRING_VIEW] = "string_view",
        [TL_ATYPE_BINARY_VIEW] = "binary_view",
    };
    switch (t->id) {
    case TL_ATYPE_FIXED_BINARY:
        snprintf(buf, size, "fixed_size_binary[%d]", (int)t->byte_width);
        return;
    case TL_ATYPE_DECIMAL128:
        snprintf(buf, size, "decimal128(%d, %d)", (int)t->precision, (int)t->scale);
        return;
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
        snprintf(buf, size, "time[%s]", unit_names[t->unit]);
        return;
    case TL_ATYPE_TIMESTAMP:
        if (t->has_tz)
            snprintf(buf, size, "timestamp[%s, tz=%s]", unit_names[t->unit], t->tz);
        else
            snprintf(buf, size, "timestamp[%s]", unit_names[t->unit]);
        return;
    default:
        snprintf(buf, size, "%s", names[t->id]);
        return;
    }
}

int tl_arrow_type_bit_width(const tl_arrow_type *t)
{
    switch (t->id) {
    case TL_ATYPE_BOOL:
        return 1;
    case TL_ATYPE_INT8:
    case TL_ATYPE_UINT8:
        return 8;
    case TL_ATYPE_INT16:
    case TL_ATYPE_UINT16:
    case TL_ATYPE_FLOAT16:
        return 16;
    case TL_ATYPE_INT32:
    case TL_ATYPE_UINT32:
    case TL_ATYPE_FLOAT32:
    case TL_ATYPE_DATE32:
    case TL_ATYPE_TIME32:
        return 32;
    case TL_ATYPE_INT64:
    case TL_ATYPE_UINT64:
    case TL_ATYPE_FLOAT64:
    case TL_ATYPE_DATE64:
    case TL_ATYPE_TIME64:
    case TL_ATYPE_TIMESTAMP:
        return 64;
    case TL_ATYPE_DECIMAL128:
        return 128;
    case TL_ATYPE_FIXED_BINARY:
        return t->byte_width * 8;
    default:
        return 0;
    }
}
