#include "arrow/cast.h"

#include <string.h>

#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "arrow/cast_internal.h"
#include "arrow/take.h"
#include "arrow/view_decode.h"

static bool is_temporal(tl_atype id)
{
    return id == TL_ATYPE_DATE32 || id == TL_ATYPE_DATE64 || id == TL_ATYPE_TIMESTAMP;
}

static bool is_time(tl_atype id)
{
    return id == TL_ATYPE_TIME32 || id == TL_ATYPE_TIME64;
}

static bool is_binary(tl_atype id)
{
    return id == TL_ATYPE_BINARY || id == TL_ATYPE_LARGE_BINARY || id == TL_ATYPE_BINARY_VIEW;
}

static bool string_parses_to(tl_atype id)
{
    return tl_atype_is_integer(id) || id == TL_ATYPE_FLOAT32 || id == TL_ATYPE_FLOAT64 ||
           id == TL_ATYPE_BOOL || id == TL_ATYPE_DATE32 || id == TL_ATYPE_DATE64 ||
           id == TL_ATYPE_TIMESTAMP || id == TL_ATYPE_DECIMAL128;
}

bool tl_arrow_can_cast(const tl_arrow_type *from, const tl_arrow_type *to)
{
    tl_atype f = from->id, t = to->id;
    if (f == TL_ATYPE_STRUCT || t == TL_ATYPE_STRUCT) return false;
    if (tl_type_equal(from, to) || f == TL_ATYPE_NULL) return true;
    if (t == TL_ATYPE_FLOAT16 || t == TL_ATYPE_NULL || tl_atype_is_view(t)) return false;
    if (tl_atype_is_integer(f))
        return tl_atype_is_integer(t) || tl_atype_is_float(t) || t == TL_ATYPE_DECIMAL128;
    if (tl_atype_is_float(f)) return tl_atype_is_integer(t) || tl_atype_is_float(t);
    if (f == TL_ATYPE_BOOL) return tl_atype_is_integer(t);
    if (f == TL_ATYPE_DECIMAL128) return t == TL_ATYPE_DECIMAL128;
    if (is_temporal(f)) return is_temporal(t);
    if (is_time(f)) return is_time(t);
    if (tl_atype_is_string(f)) return tl_atype_is_string(t) || is_binary(t) || string_parses_to(t);
    if (is_binary(f)) return is_binary(t);
    return false;
}

tl_status tl_cast_range_error(const tl_cast *c, int64_t row, const char *value, tl_error *err)
{
    char to[96];
    tl_arrow_type_describe(c->to, to, sizeof to);
    return tl_error_set(err, TL_ERR_INVALID,
                        "column \"%s\": value %s (row %lld) out of range for %s", c->column, value,
                        (long long)row, to);
}

tl_status tl_cast_value_error(const tl_cast *c, int64_t row, const char *value, const char *reason,
                              tl_error *err)
{
    char to[96];
    tl_arrow_type_describe(c->to, to, sizeof to);
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": cannot cast %s (row %lld) to %s%s%s",
                        c->column, value, (long long)row, to, reason ? ": " : "",
                        reason ? reason : "");
}

tl_status tl_cast_begin(const tl_cast *c, size_t value_bytes, struct ArrowArray *out, void **values,
                        tl_error *err)
{
    TL_TRY(tl_array_init(out, 2, 0, err));
    out->length = c->src->length;
    tl_status st = tl_validity_copy(c->src, out, err);
    if (st == TL_OK) {
        *values = tl_buffer_alloc(out, 1, value_bytes);
        if (*values == NULL) st = tl_error_nomem(err);
    }
    if (st != TL_OK) tl_array_release(out);
    return st;
}

static tl_status type_error(const tl_arrow_type *from, const tl_arrow_type *to, const char *column,
                            tl_error *err)
{
    char f[96], t[96];
    tl_arrow_type_describe(from, f, sizeof f);
    tl_arrow_type_describe(to, t, sizeof t);
    return tl_error_set(err, TL_ERR_INVALID, "column \"%s\": cannot cast %s to %s", column, f, t);
}

/* Only the time zone label differs (or nothing): the values are the same. */
static bool same_values(const tl_arrow_type *from, const tl_arrow_type *to)
{
    if (from->id == TL_ATYPE_TIMESTAMP && to->id == TL_ATYPE_TIMESTAMP)
        return from->unit == to->unit;
    return tl_type_equal(from, to);
}

static tl_status cast_plain(const tl_array_view *src, const tl_arrow_type *to, const char *column,
                            struct ArrowArray *out, tl_error *err)
{
    tl_cast c = {src, to, column};
    tl_atype f = src->type.id;
    if (f == TL_ATYPE_NULL) return tl_arrow_nulls(to, src->length, out, err);
    if (tl_atype_is_varbinary(f)) {
        tl_status st = tl_offsets_check(src, err);
        if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", column);
    }
    if (same_values(&src->type, to)) return tl_arrow_copy(src, out, err);
    if (tl_atype_is_varbinary(f) && tl_atype_is_varbinary(to->id))
        return tl_cast_varwidth(&c, out, err);
    if (tl_atype_is_string(f)) return tl_cast_parse(&c, out, err);
    if (is_temporal(f) || is_time(f)) return tl_cast_temporal(&c, out, err);
    return tl_cast_numeric(&c, out, err);
}

/* Casts the (small) dictionary once and gathers it through the indices. If
 * that fails, decoding first and casting the rows gives the failing row. */
static tl_status cast_dictionary(const tl_array_view *src, const tl_arrow_type *to,
                                 const char *column, struct ArrowArray *out, tl_error *err)
{
    if (tl_type_equal(&src->type, to)) {
        tl_status st = tl_arrow_dict_decode(src, out, err);
        return st == TL_OK ? st : tl_error_prefix(err, "column \"%s\"", column);
    }
    struct ArrowArray dict;
    tl_status st = cast_plain(src->dictionary, to, column, &dict, NULL);
    if (st == TL_OK) {
        tl_array_view dict_view, gather = *src;
        tl_view_of_owned(to, &dict, &dict_view);
        gather.dictionary = &dict_view;
        gather.type = *to;
        st = tl_arrow_dict_decode(&gather, out, err);
        tl_array_release(&dict);
        return st == TL_OK ? st : tl_error_prefix(err, "column \"%s\"", column);
    }
    struct ArrowArray decoded;
    st = tl_arrow_dict_decode(src, &decoded, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", column);
    tl_array_view plain;
    tl_view_of_owned(&src->type, &decoded, &plain);
    st = cast_plain(&plain, to, column, out, err);
    tl_array_release(&decoded);
    return st;
}

/* String and binary views are first copied into large string/binary arrays. */
static tl_status cast_views(const tl_array_view *src, const tl_arrow_type *to, const char *column,
                            struct ArrowArray *out, tl_error *err)
{
    struct ArrowArray plain;
    tl_status st = tl_arrow_views_decode(src, &plain, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", column);
    tl_arrow_type type = {.id = src->type.id == TL_ATYPE_STRING_VIEW ? TL_ATYPE_LARGE_STRING
                                                                     : TL_ATYPE_LARGE_BINARY};
    if (tl_type_equal(&type, to)) {
        tl_array_move(&plain, out);
        return TL_OK;
    }
    tl_array_view v;
    tl_view_of_owned(&type, &plain, &v);
    st = cast_plain(&v, to, column, out, err);
    tl_array_release(&plain);
    return st;
}

tl_status tl_arrow_cast(const tl_array_view *src, const tl_arrow_type *target, const char *column,
                        struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (column == NULL) column = "";
    if (!tl_arrow_can_cast(&src->type, target)) return type_error(&src->type, target, column, err);
    if (tl_atype_is_view(src->type.id)) return cast_views(src, target, column, out, err);
    if (src->is_dictionary) return cast_dictionary(src, target, column, out, err);
    return cast_plain(src, target, column, out, err);
}
