/* Helpers for the Arrow kernel tests: columns (schema + array + view) built
 * from C values, and readers of result arrays. Header-only; each test file
 * includes it once. */
#ifndef TEST_ARROW_HELPERS_H
#define TEST_ARROW_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/buffers.h"
#include "arrow/builder.h"
#include "unit.h"

typedef struct tcol {
    struct ArrowSchema schema;
    struct ArrowArray array;
    tl_array_view view;
    tl_arrow_type type;
} tcol;

/* Takes ownership of `array` (moved) and describes it with `format`. */
static inline void tcol_adopt(tcol *c, const char *format, struct ArrowArray *array)
{
    tl_error err;
    memset(c, 0, sizeof *c);
    CHECK_OK(tl_schema_init(&c->schema, format, "col", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_arrow_type_parse(format, &c->type, &err), &err);
    tl_array_move(array, &c->array);
    CHECK_OK(tl_array_view_init(&c->view, &c->schema, &c->array, &err), &err);
}

static inline void tcol_free(tcol *c)
{
    tl_array_view_free(&c->view);
    tl_array_release(&c->array);
    tl_schema_release(&c->schema);
}

static inline bool tcol_null_at(const char *nulls, int64_t i)
{
    return nulls != NULL && nulls[i] == 'x';
}

/* Integer-like column (ints, dates, times, timestamps, decimal unscaled);
 * nulls is NULL or a string with 'x' at null positions. */
static inline void tcol_ints(tcol *c, const char *format, const int64_t *v, const char *nulls,
                             int64_t n)
{
    tl_error err;
    tl_arrow_type t;
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_arrow_type_parse(format, &t, &err), &err);
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int64_t i = 0; i < n; i++) {
        if (tcol_null_at(nulls, i))
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
        else if (t.id == TL_ATYPE_BOOL)
            CHECK_OK(tl_builder_append_bool(&b, v[i] != 0, &err), &err);
        else if (t.id == TL_ATYPE_UINT64)
            CHECK_OK(tl_builder_append_uint(&b, (uint64_t)v[i], &err), &err);
        else
            CHECK_OK(tl_builder_append_int(&b, v[i], &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    tl_builder_free(&b);
    tcol_adopt(c, format, &a);
}

static inline void tcol_doubles(tcol *c, const char *format, const double *v, const char *nulls,
                                int64_t n)
{
    tl_error err;
    tl_arrow_type t;
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_arrow_type_parse(format, &t, &err), &err);
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int64_t i = 0; i < n; i++) {
        if (tcol_null_at(nulls, i))
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
        else
            CHECK_OK(tl_builder_append_double(&b, v[i], &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    tl_builder_free(&b);
    tcol_adopt(c, format, &a);
}

/* Var-width or fixed-width binary column; a NULL string is a null. */
static inline void tcol_strs(tcol *c, const char *format, const char *const *v, int64_t n)
{
    tl_error err;
    tl_arrow_type t;
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_arrow_type_parse(format, &t, &err), &err);
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == NULL)
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
        else
            CHECK_OK(tl_builder_append_bytes(&b, v[i], strlen(v[i]), &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    tl_builder_free(&b);
    tcol_adopt(c, format, &a);
}

/* A dictionary column: `indices` (format e.g. "i" or "c", nulls as above)
 * into a string dictionary `dict` (n_dict values, NULL entries are nulls). */
static inline void tcol_dict(tcol *c, const char *index_format, const int64_t *indices,
                             const char *nulls, int64_t n, const char *dict_format,
                             const char *const *dict, int64_t n_dict)
{
    tl_error err;
    tcol idx, values;
    tcol_ints(&idx, index_format, indices, nulls, n);
    tcol_strs(&values, dict_format, dict, n_dict);
    memset(c, 0, sizeof *c);
    CHECK_OK(tl_schema_init(&c->schema, index_format, "col", ARROW_FLAG_NULLABLE, 0, &err), &err);
    c->schema.dictionary = calloc(1, sizeof *c->schema.dictionary);
    CHECK_OK(tl_schema_init(c->schema.dictionary, dict_format, NULL, 0, 0, &err), &err);
    tl_array_move(&idx.array, &c->array);
    c->array.dictionary = calloc(1, sizeof *c->array.dictionary);
    tl_array_move(&values.array, c->array.dictionary);
    tcol_free(&idx);
    tcol_free(&values);
    CHECK_OK(tl_arrow_type_parse(dict_format, &c->type, &err), &err);
    CHECK_OK(tl_array_view_init(&c->view, &c->schema, &c->array, &err), &err);
}

/* A view of a result array of type `format` (no dictionary). */
static inline tl_array_view tview(const char *format, const struct ArrowArray *a)
{
    tl_arrow_type t;
    tl_array_view v;
    tl_arrow_type_parse(format, &t, NULL);
    tl_view_of_owned(&t, a, &v);
    return v;
}

static inline int64_t tv_int(const tl_array_view *v, int64_t i)
{
    int64_t j = v->offset + i;
    switch (v->type.id) {
    case TL_ATYPE_BOOL:
        return tl_bit_get(v->values, j);
    case TL_ATYPE_INT8:
        return ((const int8_t *)v->values)[j];
    case TL_ATYPE_UINT8:
        return ((const uint8_t *)v->values)[j];
    case TL_ATYPE_INT16:
        return ((const int16_t *)v->values)[j];
    case TL_ATYPE_UINT16:
        return ((const uint16_t *)v->values)[j];
    case TL_ATYPE_INT32:
    case TL_ATYPE_DATE32:
    case TL_ATYPE_TIME32:
        return ((const int32_t *)v->values)[j];
    case TL_ATYPE_UINT32:
        return ((const uint32_t *)v->values)[j];
    default:
        return ((const int64_t *)v->values)[j];
    }
}

static inline double tv_double(const tl_array_view *v, int64_t i)
{
    if (v->type.id == TL_ATYPE_FLOAT32) return ((const float *)v->values)[v->offset + i];
    return ((const double *)v->values)[v->offset + i];
}

/* Element i of a var-width view as a NUL-terminated string in buf. */
static inline const char *tv_str(const tl_array_view *v, int64_t i, char *buf, size_t size)
{
    int64_t len;
    const uint8_t *p = tl_view_bytes(v, i, &len);
    if ((size_t)len >= size) len = (int64_t)size - 1;
    memcpy(buf, p, (size_t)len);
    buf[len] = '\0';
    return buf;
}

/* Checks that an owned result array is well-formed: offset 0, exact null count,
 * NULL validity when there is no null. */
static inline void check_result_shape(const struct ArrowArray *a, int64_t length)
{
    CHECK_INT(a->length, length);
    CHECK_INT(a->offset, 0);
    if (a->n_buffers > 0) {
        const uint8_t *bits = a->buffers[0];
        if (a->null_count == 0) CHECK(bits == NULL);
        if (bits) CHECK_INT(length - tl_bitmap_count(bits, 0, length), a->null_count);
    }
}

/* *batch: a struct array of a tsu:UTC column and a "u" (string) column, the
 * shape ttable_create makes, from n times and keys. */
static inline void tbatch_time_key(struct ArrowArray *batch, const int64_t *times,
                                   const char *const *keys, int64_t n)
{
    tl_error err;
    tcol c0, c1;
    tcol_ints(&c0, "tsu:UTC", times, NULL, n);
    tcol_strs(&c1, "u", keys, n);
    CHECK_OK(tl_array_init(batch, 1, 2, &err), &err);
    batch->length = n;
    tl_array_move(&c0.array, batch->children[0]);
    tl_array_move(&c1.array, batch->children[1]);
    tcol_free(&c0);
    tcol_free(&c1);
}

/* A list<child_format> field (schema and array) of n rows: offsets (n + 1 of
 * them), list nulls ('x' in `nulls`), child values and child nulls. */
typedef struct tlist {
    struct ArrowSchema schema;
    struct ArrowArray array;
} tlist;

static inline void tlist_make(tlist *l, const char *list_format, const char *child_format,
                              const int32_t *offsets, const char *nulls, int64_t n,
                              const int64_t *values, const char *value_nulls, int64_t n_values)
{
    tl_error err;
    CHECK_OK(tl_schema_init(&l->schema, list_format, "l", ARROW_FLAG_NULLABLE, 1, &err), &err);
    CHECK_OK(tl_schema_init(l->schema.children[0], child_format, "element", ARROW_FLAG_NULLABLE, 0,
                            &err),
             &err);
    CHECK_OK(tl_array_init(&l->array, 2, 1, &err), &err);
    l->array.length = n;
    uint8_t *bits = tl_array_alloc_buffer(&l->array, 0, (size_t)(n + 7) / 8);
    int32_t *offs = tl_array_alloc_buffer(&l->array, 1, (size_t)(n + 1) * 4);
    for (int64_t i = 0; i < n; i++) {
        if (tcol_null_at(nulls, i))
            l->array.null_count++;
        else
            tl_bit_set(bits, i);
    }
    memcpy(offs, offsets, (size_t)(n + 1) * 4);
    tcol c;
    tcol_ints(&c, child_format, values, value_nulls, n_values);
    tl_array_move(&c.array, l->array.children[0]);
    tcol_free(&c);
}

static inline void tlist_free(tlist *l)
{
    tl_array_release(&l->array);
    tl_schema_release(&l->schema);
}

#endif
