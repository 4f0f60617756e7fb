#include "arrow/concat.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "arrow/nested.h"
#include "arrow/take.h"

static tl_status check_types(const tl_array_view *parts, size_t n, int64_t *total, tl_error *err)
{
    *total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!tl_type_equal(&parts[i].type, &parts[0].type)) {
            char got[96], want[96];
            tl_arrow_type_describe(&parts[i].type, got, sizeof got);
            tl_arrow_type_describe(&parts[0].type, want, sizeof want);
            return tl_error_set(err, TL_ERR_INVALID, "concat: part %zu is %s, expected %s", i, got,
                                want);
        }
        if (tl_atype_is_varbinary(parts[i].type.id) && !parts[i].is_dictionary)
            TL_TRY(tl_offsets_check(&parts[i], err));
        *total += parts[i].length;
    }
    if (parts[0].type.id == TL_ATYPE_STRUCT)
        return tl_error_set(err, TL_ERR_INVALID, "concat: struct arrays are not supported");
    return TL_OK;
}

static tl_status concat_validity(const tl_array_view *parts, size_t n, int64_t total,
                                 struct ArrowArray *out, tl_error *err)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) any |= parts[i].validity != NULL;
    out->null_count = 0;
    if (!any) return TL_OK;
    uint8_t *bits = tl_buffer_alloc(out, 0, (size_t)(total + 7) / 8);
    if (bits == NULL) return tl_error_nomem(err);
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_array_view *p = &parts[i];
        if (p->validity)
            tl_bitmap_copy(bits, at, p->validity, p->offset, p->length);
        else
            tl_bitmap_fill(bits, at, p->length, true);
        at += p->length;
    }
    out->null_count = total - tl_bitmap_count(bits, 0, total);
    if (out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    return TL_OK;
}

static tl_status concat_fixed(const tl_array_view *parts, size_t n, int64_t total,
                              struct ArrowArray *out, tl_error *err)
{
    size_t width = (size_t)tl_type_byte_width(&parts[0].type);
    uint8_t *dst = tl_buffer_alloc(out, 1, (size_t)total * width);
    if (dst == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        size_t bytes = (size_t)parts[i].length * width;
        if (bytes)
            memcpy(dst, (const uint8_t *)parts[i].values + (size_t)parts[i].offset * width, bytes);
        dst += bytes;
    }
    return TL_OK;
}

static tl_status concat_bits(const tl_array_view *parts, size_t n, int64_t total,
                             struct ArrowArray *out, tl_error *err)
{
    uint8_t *dst = tl_buffer_alloc(out, 1, (size_t)(total + 7) / 8);
    if (dst == NULL) return tl_error_nomem(err);
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        tl_bitmap_copy(dst, at, parts[i].values, parts[i].offset, parts[i].length);
        at += parts[i].length;
    }
    return TL_OK;
}

#define TL_DEFINE_CONCAT_OFFSETS(NAME, OT)                                                         \
    static void NAME(const tl_array_view *p, int64_t base, OT *dst)                                \
    {                                                                                              \
        const OT *o = (const OT *)p->values + p->offset;                                           \
        OT delta = (OT)(base - o[0]);                                                              \
        for (int64_t i = 1; i <= p->length; i++) dst[i] = (OT)(o[i] + delta);                      \
    }

TL_DEFINE_CONCAT_OFFSETS(concat_offsets32, int32_t)
TL_DEFINE_CONCAT_OFFSETS(concat_offsets64, int64_t)

static tl_status concat_varwidth(const tl_array_view *parts, size_t n, int64_t total,
                                 struct ArrowArray *out, tl_error *err)
{
    bool large = tl_atype_is_large(parts[0].type.id);
    int64_t size = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_array_view *p = &parts[i];
        size += tl_offset_at(p, p->offset + p->length) - tl_offset_at(p, p->offset);
    }
    if (!large && size > INT32_MAX)
        return tl_error_set(
            err, TL_ERR_INVALID,
            "concat: %lld bytes of data do not fit 32-bit offsets; use a large type",
            (long long)size);
    uint8_t *offsets = tl_buffer_alloc(out, 1, (size_t)(total + 1) * (large ? 8 : 4));
    uint8_t *data = offsets ? tl_buffer_alloc(out, 2, (size_t)size) : NULL;
    if (data == NULL) return tl_error_nomem(err);
    memset(offsets, 0, large ? 8 : 4);
    int64_t row = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_array_view *p = &parts[i];
        int64_t first = tl_offset_at(p, p->offset),
                bytes = tl_offset_at(p, p->offset + p->length) - first;
        if (large)
            concat_offsets64(p, at, (int64_t *)offsets + row);
        else
            concat_offsets32(p, at, (int32_t *)offsets + row);
        if (bytes) memcpy(data + at, p->data + first, (size_t)bytes);
        row += p->length;
        at += bytes;
    }
    return TL_OK;
}

static tl_status concat_plain(const tl_array_view *parts, size_t n, int64_t total,
                              struct ArrowArray *out, tl_error *err)
{
    const tl_arrow_type *type = &parts[0].type;
    if (type->id == TL_ATYPE_NULL) return tl_arrow_nulls(type, total, out, err);
    bool var = tl_atype_is_varbinary(type->id);
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = total;
    tl_status st = concat_validity(parts, n, total, out, err);
    if (st == TL_OK) {
        if (var)
            st = concat_varwidth(parts, n, total, out, err);
        else if (type->id == TL_ATYPE_BOOL)
            st = concat_bits(parts, n, total, out, err);
        else
            st = concat_fixed(parts, n, total, out, err);
    }
    if (st != TL_OK) tl_array_release(out);
    return st;
}

/* Decodes the dictionary parts into `decoded` and points `plain` at views of them. */
static tl_status decode_parts(const tl_array_view *parts, size_t n, tl_array_view *plain,
                              struct ArrowArray *decoded, tl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!parts[i].is_dictionary) {
            plain[i] = parts[i];
            continue;
        }
        TL_TRY(tl_arrow_dict_decode(&parts[i], &decoded[i], err));
        tl_view_of_owned(&parts[i].type, &decoded[i], &plain[i]);
    }
    return TL_OK;
}

tl_status tl_arrow_concat(const tl_array_view *parts, size_t n_parts, struct ArrowArray *out,
                          tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_parts == 0) return tl_error_set(err, TL_ERR_INVALID, "concat: no arrays");
    int64_t total;
    bool any_dict = false;
    for (size_t i = 0; i < n_parts; i++) any_dict |= parts[i].is_dictionary;
    if (!any_dict) {
        TL_TRY(check_types(parts, n_parts, &total, err));
        return concat_plain(parts, n_parts, total, out, err);
    }
    tl_array_view *plain = calloc(n_parts, sizeof *plain);
    struct ArrowArray *decoded = calloc(n_parts, sizeof *decoded);
    tl_status st =
        plain && decoded ? decode_parts(parts, n_parts, plain, decoded, err) : tl_error_nomem(err);
    if (st == TL_OK) st = check_types(plain, n_parts, &total, err);
    if (st == TL_OK) st = concat_plain(plain, n_parts, total, out, err);
    for (size_t i = 0; decoded && i < n_parts; i++) tl_array_release(&decoded[i]);
    free(plain);
    free(decoded);
    return st;
}

/* Column c of every struct array (their own offsets are 0, as for the flat columns). */
static tl_status concat_nested_column(const struct ArrowSchema *field,
                                      const struct ArrowArray *arrays, size_t n, int64_t c,
                                      struct ArrowArray *out, tl_error *err)
{
    struct ArrowArray *cols = calloc(n ? n : 1, sizeof *cols);
    if (cols == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        cols[i] = *arrays[i].children[c];
        cols[i].release = NULL; /* borrowed */
    }
    tl_status st = tl_arrow_concat_nested(field, cols, n, out, err);
    free(cols);
    return st;
}

tl_status tl_arrow_concat_struct(const struct ArrowSchema *schema, const struct ArrowArray *arrays,
                                 size_t n, struct ArrowArray *out, tl_error *err)
{
    int64_t nc = schema->n_children;
    TL_TRY(tl_array_init(out, 1, nc, err));
    for (size_t a = 0; a < n; a++) out->length += arrays[a].length;
    tl_array_view *parts = calloc(n ? n : 1, sizeof *parts);
    tl_status st = parts ? TL_OK : tl_error_nomem(err);
    for (int64_t c = 0; st == TL_OK && c < nc; c++) {
        if (tl_arrow_is_nested(schema->children[c])) {
            st = concat_nested_column(schema->children[c], arrays, n, c, out->children[c], err);
            continue;
        }
        size_t done = 0;
        for (; st == TL_OK && done < n; done++)
            st = tl_array_view_init(&parts[done], schema->children[c], arrays[done].children[c],
                                    err);
        if (st == TL_OK) st = tl_arrow_concat(parts, n, out->children[c], err);
        for (size_t i = 0; i < done; i++) tl_array_view_free(&parts[i]);
    }
    free(parts);
    if (st != TL_OK) tl_array_release(out);
    return st;
}
