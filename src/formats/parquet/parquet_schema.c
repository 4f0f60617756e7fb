#include "formats/parquet/parquet_schema.h"

#include <stdio.h>
#include <string.h>

int32_t tl_pq_decimal_bytes(int32_t precision)
{
    /* Largest precision that n bytes of two's complement hold: floor((8n - 1) * log10(2)). */
    static const int max_precision[17] = {0,  2,  4,  6,  9,  11, 14, 16, 18,
                                          21, 23, 26, 28, 31, 33, 35, 38};
    for (int32_t n = 1; n <= 16; n++)
        if (precision <= max_precision[n]) return n;
    return 16;
}

static void set_physical(tl_pq_column_desc *d, tl_pq_type type, tl_pq_conv conv, int width)
{
    d->elem.has_type = true;
    d->elem.type = type;
    d->conv = conv;
    d->phys_width = width;
}

static void set_int_logical(tl_pq_column_desc *d, int bits, bool is_signed, tl_pq_converted ct)
{
    d->elem.logical = (tl_pq_logical){
        .kind = TL_PQ_LT_INTEGER, .bit_width = (int8_t)bits, .is_signed = is_signed};
    d->elem.has_converted = true;
    d->elem.converted = ct;
}

static void set_time_logical(tl_pq_column_desc *d, tl_pq_logical_kind kind, bool utc,
                             tl_pq_time_unit unit)
{
    d->elem.logical = (tl_pq_logical){.kind = kind, .utc = utc, .unit = unit};
    static const tl_pq_converted ts_ct[] = {0, TL_PQ_CT_TIMESTAMP_MILLIS,
                                            TL_PQ_CT_TIMESTAMP_MICROS};
    static const tl_pq_converted time_ct[] = {0, TL_PQ_CT_TIME_MILLIS, TL_PQ_CT_TIME_MICROS};
    /* Converted types only exist for millis/micros, and mean "adjusted to UTC". */
    if (unit == TL_PQ_NANOS || !utc) return;
    d->elem.has_converted = true;
    d->elem.converted = kind == TL_PQ_LT_TIMESTAMP ? ts_ct[unit] : time_ct[unit];
}

static tl_status map_temporal(tl_pq_column_desc *d, tl_error *err)
{
    const tl_arrow_type *t = &d->arrow;
    switch (t->id) {
    case TL_ATYPE_DATE32:
    case TL_ATYPE_DATE64:
        set_physical(d, TL_PQ_INT32,
                     t->id == TL_ATYPE_DATE32 ? TL_PQ_CONV_COPY32 : TL_PQ_CONV_DATE64, 4);
        d->elem.logical.kind = TL_PQ_LT_DATE;
        d->elem.has_converted = true;
        d->elem.converted = TL_PQ_CT_DATE;
        return TL_OK;
    case TL_ATYPE_TIME32:
        set_physical(d, TL_PQ_INT32,
                     t->unit == TL_UNIT_SECOND ? TL_PQ_CONV_SCALE32 : TL_PQ_CONV_COPY32, 4);
        set_time_logical(d, TL_PQ_LT_TIME, true, TL_PQ_MILLIS);
        return TL_OK;
    case TL_ATYPE_TIME64:
        set_physical(d, TL_PQ_INT64, TL_PQ_CONV_COPY64, 8);
        set_time_logical(d, TL_PQ_LT_TIME, true,
                         t->unit == TL_UNIT_MICRO ? TL_PQ_MICROS : TL_PQ_NANOS);
        return TL_OK;
    case TL_ATYPE_TIMESTAMP: {
        static const tl_pq_time_unit units[] = {TL_PQ_MILLIS, TL_PQ_MILLIS, TL_PQ_MICROS,
                                                TL_PQ_NANOS};
        set_physical(d, TL_PQ_INT64,
                     t->unit == TL_UNIT_SECOND ? TL_PQ_CONV_SCALE64 : TL_PQ_CONV_COPY64, 8);
        set_time_logical(d, TL_PQ_LT_TIMESTAMP, t->has_tz, units[t->unit]);
        return TL_OK;
    }
    default:
        break;
    }
    char name[96];
    tl_arrow_type_describe(t, name, sizeof name);
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": Arrow type %s cannot be written",
                        d->name, name);
}

static tl_status map_arrow(tl_pq_column_desc *d, tl_error *err)
{
    const tl_arrow_type *t = &d->arrow;
    switch (t->id) {
    case TL_ATYPE_BOOL:
        set_physical(d, TL_PQ_BOOLEAN, TL_PQ_CONV_BOOL, 1);
        return TL_OK;
    case TL_ATYPE_INT8:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_I8, 4);
        set_int_logical(d, 8, true, TL_PQ_CT_INT_8);
        return TL_OK;
    case TL_ATYPE_UINT8:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_U8, 4);
        set_int_logical(d, 8, false, TL_PQ_CT_UINT_8);
        return TL_OK;
    case TL_ATYPE_INT16:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_I16, 4);
        set_int_logical(d, 16, true, TL_PQ_CT_INT_16);
        return TL_OK;
    case TL_ATYPE_UINT16:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_U16, 4);
        set_int_logical(d, 16, false, TL_PQ_CT_UINT_16);
        return TL_OK;
    case TL_ATYPE_INT32:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_COPY32, 4);
        return TL_OK;
    case TL_ATYPE_UINT32:
        set_physical(d, TL_PQ_INT32, TL_PQ_CONV_COPY32, 4);
        set_int_logical(d, 32, false, TL_PQ_CT_UINT_32);
        return TL_OK;
    case TL_ATYPE_INT64:
        set_physical(d, TL_PQ_INT64, TL_PQ_CONV_COPY64, 8);
        return TL_OK;
    case TL_ATYPE_UINT64:
        set_physical(d, TL_PQ_INT64, TL_PQ_CONV_COPY64, 8);
        set_int_logical(d, 64, false, TL_PQ_CT_UINT_64);
        return TL_OK;
    case TL_ATYPE_FLOAT16:
        set_physical(d, TL_PQ_FIXED_LEN_BYTE_ARRAY, TL_PQ_CONV_FIXED, 2);
        d->elem.type_length = 2;
        d->elem.logical.kind = TL_PQ_LT_FLOAT16;
        return TL_OK;
    case TL_ATYPE_FLOAT32:
        set_physical(d, TL_PQ_FLOAT, TL_PQ_CONV_COPY32, 4);
        return TL_OK;
    case TL_ATYPE_FLOAT64:
        set_physical(d, TL_PQ_DOUBLE, TL_PQ_CONV_COPY64, 8);
        return TL_OK;
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING:
        set_physical(d, TL_PQ_BYTE_ARRAY, TL_PQ_CONV_BYTES, 0);
        d->elem.logical.kind = TL_PQ_LT_STRING;
        d->elem.has_converted = true;
        d->elem.converted = TL_PQ_CT_UTF8;
        return TL_OK;
    case TL_ATYPE_BINARY:
    case TL_ATYPE_LARGE_BINARY:
        set_physical(d, TL_PQ_BYTE_ARRAY, TL_PQ_CONV_BYTES, 0);
        return TL_OK;
    case TL_ATYPE_FIXED_BINARY:
        set_physical(d, TL_PQ_FIXED_LEN_BYTE_ARRAY, TL_PQ_CONV_FIXED, t->byte_width);
        d->elem.type_length = t->byte_width;
        return TL_OK;
    case TL_ATYPE_DECIMAL128: {
        int32_t n = tl_pq_decimal_bytes(t->precision);
        set_physical(d, TL_PQ_FIXED_LEN_BYTE_ARRAY, TL_PQ_CONV_DECIMAL, n);
        d->elem.type_length = n;
        d->elem.logical =
            (tl_pq_logical){.kind = TL_PQ_LT_DECIMAL, .scale = t->scale, .precision = t->precision};
        d->elem.has_converted = true;
        d->elem.converted = TL_PQ_CT_DECIMAL;
        d->elem.scale = t->scale;
        d->elem.precision = t->precision;
        return TL_OK;
    }
    default:
        return map_temporal(d, err);
    }
}

tl_status tl_pq_column_from_arrow(const struct ArrowSchema *field, tl_pq_column_desc *out,
                                  tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = field->name ? field->name : "";
    if (field->dictionary)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": dictionary-encoded input is not supported; decode it "
                            "first",
                            out->name);
    tl_status st = tl_arrow_type_parse(field->format, &out->arrow, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", out->name);
    TL_TRY(map_arrow(out, err));
    out->nullable = (field->flags & ARROW_FLAG_NULLABLE) != 0;
    out->elem.name = out->name;
    out->elem.has_repetition = true;
    out->elem.repetition = out->nullable ? TL_PQ_OPTIONAL : TL_PQ_REQUIRED;
    out->order = tl_pq_column_order(&out->elem);
    return TL_OK;
}

/* ---- Reading ---- */

/* The logical type a legacy converted type stands for, for files without one. */
static tl_pq_logical from_converted(const tl_pq_schema_element *e)
{
    tl_pq_logical lt = {0};
    if (!e->has_converted) return lt;
    switch (e->converted) {
    case TL_PQ_CT_UTF8:
        lt.kind = TL_PQ_LT_STRING;
        break;
    case TL_PQ_CT_ENUM:
        lt.kind = TL_PQ_LT_ENUM;
        break;
    case TL_PQ_CT_JSON:
        lt.kind = TL_PQ_LT_JSON;
        break;
    case TL_PQ_CT_BSON:
        lt.kind = TL_PQ_LT_BSON;
        break;
    case TL_PQ_CT_DATE:
        lt.kind = TL_PQ_LT_DATE;
        break;
    case TL_PQ_CT_DECIMAL:
        lt =
            (tl_pq_logical){.kind = TL_PQ_LT_DECIMAL, .scale = e->scale, .precision = e->precision};
        break;
    case TL_PQ_CT_TIME_MILLIS:
    case TL_PQ_CT_TIME_MICROS:
        lt = (tl_pq_logical){.kind = TL_PQ_LT_TIME,
                             .utc = true,
                             .unit = e->converted == TL_PQ_CT_TIME_MILLIS ? TL_PQ_MILLIS
                                                                          : TL_PQ_MICROS};
        break;
    case TL_PQ_CT_TIMESTAMP_MILLIS:
    case TL_PQ_CT_TIMESTAMP_MICROS:
        lt = (tl_pq_logical){.kind = TL_PQ_LT_TIMESTAMP,
                             .utc = true,
                             .unit = e->converted == TL_PQ_CT_TIMESTAMP_MILLIS ? TL_PQ_MILLIS
                                                                               : TL_PQ_MICROS};
        break;
    case TL_PQ_CT_UINT_8:
    case TL_PQ_CT_UINT_16:
    case TL_PQ_CT_UINT_32:
    case TL_PQ_CT_UINT_64:
    case TL_PQ_CT_INT_8:
    case TL_PQ_CT_INT_16:
    case TL_PQ_CT_INT_32:
    case TL_PQ_CT_INT_64: {
        static const int8_t bits[] = {8, 16, 32, 64};
        int k = e->converted >= TL_PQ_CT_INT_8 ? e->converted - TL_PQ_CT_INT_8
                                               : e->converted - TL_PQ_CT_UINT_8;
        lt = (tl_pq_logical){.kind = TL_PQ_LT_INTEGER,
                             .bit_width = bits[k],
                             .is_signed = e->converted >= TL_PQ_CT_INT_8};
        break;
    }
    default:
        lt.kind = TL_PQ_LT_OTHER;
        break;
    }
    return lt;
}

static tl_pq_logical effective_logical(const tl_pq_schema_element *e)
{
    if (e->logical.kind != TL_PQ_LT_NONE && e->logical.kind != TL_PQ_LT_OTHER) return e->logical;
    return from_converted(e);
}

tl_pq_order tl_pq_column_order(const tl_pq_schema_element *e)
{
    tl_pq_logical lt = effective_logical(e);
    switch (e->type) {
    case TL_PQ_BOOLEAN:
        return TL_PQ_ORDER_BOOL;
    case TL_PQ_INT32:
        return lt.kind == TL_PQ_LT_INTEGER && !lt.is_signed ? TL_PQ_ORDER_U32 : TL_PQ_ORDER_I32;
    case TL_PQ_INT64:
        return lt.kind == TL_PQ_LT_INTEGER && !lt.is_signed ? TL_PQ_ORDER_U64 : TL_PQ_ORDER_I64;
    case TL_PQ_FLOAT:
        return TL_PQ_ORDER_FLOAT;
    case TL_PQ_DOUBLE:
        return TL_PQ_ORDER_DOUBLE;
    case TL_PQ_BYTE_ARRAY:
    case TL_PQ_FIXED_LEN_BYTE_ARRAY:
        if (lt.kind == TL_PQ_LT_DECIMAL) return TL_PQ_ORDER_DECIMAL_BE;
        if (lt.kind == TL_PQ_LT_FLOAT16 || lt.kind == TL_PQ_LT_OTHER) return TL_PQ_ORDER_NONE;
        if (e->has_converted && e->converted == TL_PQ_CT_INTERVAL) return TL_PQ_ORDER_NONE;
        return TL_PQ_ORDER_BYTES;
    default:
        return TL_PQ_ORDER_NONE;
    }
}

static tl_status unsupported(const tl_pq_schema_element *e, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID,
                        "column \"%s\": Parquet type %d with logical type %d is not supported",
                        e->name, (int)e->type, (int)e->logical.kind);
}

static void set_arrow(tl_pq_column_desc *d, tl_atype id, tl_pq_conv conv)
{
    d->arrow.id = id;
    d->conv = conv;
}

static tl_status read_decimal(tl_pq_column_desc *d, const tl_pq_logical *lt, tl_error *err)
{
    if (lt->precision < 1 || lt->precision > 38 || lt->scale < 0 || lt->scale > lt->precision)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": decimal(%d, %d) is not supported",
                            d->name, (int)lt->precision, (int)lt->scale);
    d->arrow.id = TL_ATYPE_DECIMAL128;
    d->arrow.precision = lt->precision;
    d->arrow.scale = lt->scale;
    d->arrow.byte_width = 16;
    switch (d->elem.type) {
    case TL_PQ_INT32:
        d->conv = TL_PQ_CONV_DECIMAL_I32;
        return TL_OK;
    case TL_PQ_INT64:
        d->conv = TL_PQ_CONV_DECIMAL_I64;
        return TL_OK;
    case TL_PQ_BYTE_ARRAY:
        d->conv = TL_PQ_CONV_DECIMAL;
        return TL_OK;
    case TL_PQ_FIXED_LEN_BYTE_ARRAY:
        if (d->elem.type_length > 16) break;
        d->conv = TL_PQ_CONV_DECIMAL;
        return TL_OK;
    default:
        break;
    }
    return unsupported(&d->elem, err);
}

static tl_status read_int32(tl_pq_column_desc *d, const tl_pq_logical *lt, tl_error *err)
{
    switch (lt->kind) {
    case TL_PQ_LT_NONE:
        set_arrow(d, TL_ATYPE_INT32, TL_PQ_CONV_COPY32);
        return TL_OK;
    case TL_PQ_LT_DATE:
        set_arrow(d, TL_ATYPE_DATE32, TL_PQ_CONV_COPY32);
        return TL_OK;
    case TL_PQ_LT_TIME:
        if (lt->unit != TL_PQ_MILLIS) break;
        set_arrow(d, TL_ATYPE_TIME32, TL_PQ_CONV_COPY32);
        d->arrow.unit = TL_UNIT_MILLI;
        return TL_OK;
    case TL_PQ_LT_INTEGER: {
        bool s = lt->is_signed;
        switch (lt->bit_width) {
        case 8:
            set_arrow(d, s ? TL_ATYPE_INT8 : TL_ATYPE_UINT8, s ? TL_PQ_CONV_I8 : TL_PQ_CONV_U8);
            return TL_OK;
        case 16:
            set_arrow(d, s ? TL_ATYPE_INT16 : TL_ATYPE_UINT16, s ? TL_PQ_CONV_I16 : TL_PQ_CONV_U16);
            return TL_OK;
        case 32:
            set_arrow(d, s ? TL_ATYPE_INT32 : TL_ATYPE_UINT32, TL_PQ_CONV_COPY32);
            return TL_OK;
        default:
            break;
        }
        break;
    }
    case TL_PQ_LT_DECIMAL:
        return read_decimal(d, lt, err);
    default:
        break;
    }
    return unsupported(&d->elem, err);
}

static tl_status read_int64(tl_pq_column_desc *d, const tl_pq_logical *lt, tl_error *err)
{
    static const tl_time_unit units[] = {TL_UNIT_MICRO, TL_UNIT_MILLI, TL_UNIT_MICRO, TL_UNIT_NANO};
    switch (lt->kind) {
    case TL_PQ_LT_NONE:
        set_arrow(d, TL_ATYPE_INT64, TL_PQ_CONV_COPY64);
        return TL_OK;
    case TL_PQ_LT_INTEGER:
        if (lt->bit_width != 64) break;
        set_arrow(d, lt->is_signed ? TL_ATYPE_INT64 : TL_ATYPE_UINT64, TL_PQ_CONV_COPY64);
        return TL_OK;
    case TL_PQ_LT_TIMESTAMP:
        if (lt->unit < TL_PQ_MILLIS || lt->unit > TL_PQ_NANOS) break;
        set_arrow(d, TL_ATYPE_TIMESTAMP, TL_PQ_CONV_COPY64);
        d->arrow.unit = units[lt->unit];
        d->arrow.has_tz = lt->utc;
        if (lt->utc) strcpy(d->arrow.tz, "UTC");
        return TL_OK;
    case TL_PQ_LT_TIME:
        if (lt->unit != TL_PQ_MICROS && lt->unit != TL_PQ_NANOS) break;
        set_arrow(d, TL_ATYPE_TIME64, TL_PQ_CONV_COPY64);
        d->arrow.unit = units[lt->unit];
        return TL_OK;
    case TL_PQ_LT_DECIMAL:
        return read_decimal(d, lt, err);
    default:
        break;
    }
    return unsupported(&d->elem, err);
}

static tl_status read_binary(tl_pq_column_desc *d, const tl_pq_logical *lt, tl_error *err)
{
    const tl_pq_schema_element *e = &d->elem;
    if (lt->kind == TL_PQ_LT_DECIMAL) return read_decimal(d, lt, err);
    if (e->type == TL_PQ_BYTE_ARRAY) {
        bool text =
            lt->kind == TL_PQ_LT_STRING || lt->kind == TL_PQ_LT_ENUM || lt->kind == TL_PQ_LT_JSON;
        set_arrow(d, text ? TL_ATYPE_STRING : TL_ATYPE_BINARY, TL_PQ_CONV_BYTES);
        return TL_OK;
    }
    if (e->type_length <= 0 || e->type_length > (1 << 20))
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": bad fixed length %d", e->name,
                            (int)e->type_length);
    if (lt->kind == TL_PQ_LT_FLOAT16 && e->type_length == 2) {
        set_arrow(d, TL_ATYPE_FLOAT16, TL_PQ_CONV_FIXED);
        return TL_OK;
    }
    set_arrow(d, TL_ATYPE_FIXED_BINARY, TL_PQ_CONV_FIXED);
    d->arrow.byte_width = e->type_length;
    return TL_OK;
}

tl_status tl_pq_column_to_arrow(const tl_pq_schema_element *e, tl_pq_column_desc *out,
                                tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->elem = *e;
    out->name = e->name;
    out->nullable = !e->has_repetition || e->repetition != TL_PQ_REQUIRED;
    out->order = tl_pq_column_order(e);
    tl_pq_logical lt = effective_logical(e);
    if (lt.kind == TL_PQ_LT_OTHER) lt.kind = TL_PQ_LT_NONE; /* unknown annotations: raw type */
    static const int widths[] = {1, 4, 8, 12, 4, 8, 0, 0};
    if ((unsigned)e->type > TL_PQ_FIXED_LEN_BYTE_ARRAY)
        return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": unknown physical type %d", e->name,
                            (int)e->type);
    out->phys_width = e->type == TL_PQ_FIXED_LEN_BYTE_ARRAY ? e->type_length : widths[e->type];
    switch (e->type) {
    case TL_PQ_BOOLEAN:
        set_arrow(out, TL_ATYPE_BOOL, TL_PQ_CONV_BOOL);
        return TL_OK;
    case TL_PQ_INT32:
        return read_int32(out, &lt, err);
    case TL_PQ_INT64:
        return read_int64(out, &lt, err);
    case TL_PQ_INT96:
        set_arrow(out, TL_ATYPE_TIMESTAMP, TL_PQ_CONV_INT96);
        out->arrow.unit = TL_UNIT_NANO;
        return TL_OK;
    case TL_PQ_FLOAT:
        set_arrow(out, TL_ATYPE_FLOAT32, TL_PQ_CONV_COPY32);
        return TL_OK;
    case TL_PQ_DOUBLE:
        set_arrow(out, TL_ATYPE_FLOAT64, TL_PQ_CONV_COPY64);
        return TL_OK;
    default:
        return read_binary(out, &lt, err);
    }
}
