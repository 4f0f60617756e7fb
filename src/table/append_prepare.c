/* Fitting input batches to the table: columns matched by name, cast to the
 * storage type, missing nullable columns filled with nulls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/buffers.h"
#include "arrow/cast.h"
#include "arrow/concat.h"
#include "arrow/nested.h"
#include "table/append.h"

void tl_rows_free(tl_rows *rows)
{
    tl_array_release(&rows->array);
    tl_schema_release(&rows->schema);
}

/* Strings and binaries are kept with 64-bit offsets internally so that one
 * append can carry more than 2 GiB of text; users get the reference's types. */
static void storage_format(const tl_ice_type *t, char *buf, size_t size)
{
    if (t->id == TL_ICE_STRING)
        snprintf(buf, size, "U");
    else if (t->id == TL_ICE_BINARY)
        snprintf(buf, size, "Z");
    else
        tl_ice_type_arrow_format(t, buf, size);
}

tl_status tl_storage_schema(const tl_ice_schema *schema, struct ArrowSchema *out, tl_error *err)
{
    TL_TRY(tl_schema_init(out, "+s", "", 0, (int64_t)schema->n_fields, err));
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < schema->n_fields; i++) {
        const tl_ice_field *f = &schema->fields[i];
        if (TL_ICE_TYPE_IS_NESTED(f->type.id)) {
            st = tl_ice_field_to_arrow(f, out->children[i], err);
            continue;
        }
        char format[64];
        storage_format(&f->type, format, sizeof format);
        st = tl_schema_init(out->children[i], format, f->name,
                            f->required ? 0 : ARROW_FLAG_NULLABLE, 0, err);
        if (st == TL_OK) st = tl_schema_set_field_id(out->children[i], f->id, err);
    }
    if (st != TL_OK) tl_schema_release(out);
    return st;
}

/* An array of `length` values of `type`, each null, or each `fill` (for
 * 64-bit types) when fill_valid. */
static tl_status constant_array(const char *format, int64_t length, bool fill_valid, int64_t fill,
                                struct ArrowArray *out, tl_error *err)
{
    tl_arrow_type type;
    TL_TRY(tl_arrow_type_parse(format, &type, err));
    bool var = tl_atype_is_varbinary(type.id);
    TL_TRY(tl_array_init(out, var ? 3 : 2, 0, err));
    out->length = length;
    out->null_count = fill_valid ? 0 : length;
    size_t bits = (size_t)length;
    size_t value_bytes = var ? (bits + 1) * (tl_atype_is_large(type.id) ? 8 : 4)
                             : (bits * (size_t)tl_arrow_type_bit_width(&type) + 7) / 8;
    bool ok = (fill_valid || tl_array_alloc_buffer(out, 0, (bits + 7) / 8)) &&
              tl_array_alloc_buffer(out, 1, value_bytes) &&
              (!var || tl_array_alloc_buffer(out, 2, 0));
    if (!ok) {
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    if (fill_valid) {
        int64_t *values = (int64_t *)out->buffers[1];
        for (int64_t i = 0; i < length; i++) values[i] = fill;
    }
    return TL_OK;
}

static int find_input(const struct ArrowSchema *schema, const char *name)
{
    for (int64_t i = 0; i < schema->n_children; i++)
        if (schema->children[i]->name && strcmp(schema->children[i]->name, name) == 0)
            return (int)i;
    return -1;
}

static tl_status check_input_columns(const tl_table *t, const struct ArrowSchema *schema,
                                     tl_error *err)
{
    if (schema->format == NULL || strcmp(schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "appended data must be a struct of columns");
    const tl_ice_schema *ts = tl_ice_metadata_current_schema(t->md);
    for (int64_t i = 0; i < schema->n_children; i++) {
        const char *name = schema->children[i]->name ? schema->children[i]->name : "";
        if (tl_ice_schema_find(ts, name) == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is not in the table schema",
                                name);
        if (find_input(schema, name) != i)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" appears twice", name);
    }
    return TL_OK;
}

/* A record batch is a struct array whose rows are never null, as Arrow's own
 * readers hold: a null row would have no meaning in a table. */
static tl_status check_no_null_rows(const struct ArrowArray *batch, tl_error *err)
{
    if (batch->null_count == 0 || batch->n_buffers < 1 || batch->buffers[0] == NULL) return TL_OK;
    const uint8_t *bits = batch->buffers[0];
    for (int64_t i = 0; i < batch->length; i++)
        if (!tl_bit_get(bits, batch->offset + i))
            return tl_error_set(err, TL_ERR_INVALID,
                                "row %lld of a batch is null as a whole: a record batch's rows "
                                "cannot be null (put the nulls in its columns)",
                                (long long)i);
    return TL_OK;
}

/* Column `input` of a batch as the batch's rows see it: a record batch's
 * offset and length apply to its columns (Arrow's struct layout), so row i is
 * the column's row offset + i. *out is a shallow, read-only copy of the
 * column with that slice applied: it borrows the batch's buffers and has no
 * release callback (never release or move it). */
static tl_status batch_column(const struct ArrowArray *batch, int input, const char *name,
                              struct ArrowArray *out, tl_error *err)
{
    const struct ArrowArray *col = batch->children[input];
    if (col->offset < 0 || col->length < 0 || col->length - batch->length < batch->offset)
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\" holds %lld rows but its batch reads rows %lld to "
                            "%lld of it: a batch's columns must cover its rows",
                            name, (long long)col->length, (long long)batch->offset,
                            (long long)(batch->offset + batch->length - 1));
    *out = *col;
    out->offset = col->offset + batch->offset;
    out->length = batch->length;
    /* The column's null count is of all its rows, not of the batch's. */
    if (out->null_count != 0 && (batch->offset != 0 || col->length != batch->length))
        out->null_count = -1;
    out->release = NULL;
    return TL_OK;
}

/* Casts nested column `input` of every batch to the field `want` and
 * concatenates them. */
static tl_status cast_nested_column(const struct ArrowSchema *schema,
                                    const struct ArrowArray *batches, size_t n_batches, int input,
                                    const struct ArrowSchema *want, const char *name,
                                    struct ArrowArray *out, tl_error *err)
{
    struct ArrowArray col;
    if (n_batches == 1) {
        TL_TRY(batch_column(&batches[0], input, name, &col, err));
        return tl_arrow_cast_nested(schema->children[input], &col, want, name, out, err);
    }
    struct ArrowArray *parts = calloc(n_batches ? n_batches : 1, sizeof *parts);
    tl_status st = parts ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < n_batches; i++) {
        st = batch_column(&batches[i], input, name, &col, err);
        if (st == TL_OK)
            st = tl_arrow_cast_nested(schema->children[input], &col, want, name, &parts[i], err);
    }
    if (st == TL_OK) st = tl_arrow_concat_nested(want, parts, n_batches, out, err);
    for (size_t i = 0; parts && i < n_batches; i++) tl_array_release(&parts[i]);
    free(parts);
    return st;
}

/* Whether a batch's column already holds the values of the storage type as
 * the later stages want them (offset 0, a known null count, var-width
 * offsets from 0): then it is moved, not copied. A time zone label may
 * differ: the values are the same. */
static bool movable(const struct ArrowArray *batch, int input, const tl_array_view *v,
                    const tl_arrow_type *target)
{
    const tl_arrow_type *from = &v->type;
    bool same = tl_type_equal(from, target) ||
                (from->id == TL_ATYPE_TIMESTAMP && target->id == TL_ATYPE_TIMESTAMP &&
                 from->unit == target->unit);
    if (!same || v->is_dictionary || tl_atype_is_view(from->id) || from->id == TL_ATYPE_NULL)
        return false;
    if (batch->offset != 0 || batch->children[input]->length != batch->length || v->offset != 0 ||
        v->null_count < 0)
        return false;
    if (!tl_atype_is_varbinary(from->id)) return true;
    bool large = tl_atype_is_large(from->id);
    return v->values &&
           (large ? ((const int64_t *)v->values)[0] : ((const int32_t *)v->values)[0]) == 0;
}

/* What becomes of a batch's column already in its storage form: copied
 * (the caller keeps using the batches), moved out (the caller is done with
 * them), or borrowed (the rows share its buffers while the batches live). */
typedef enum { PREPARE_COPY, PREPARE_TAKE, PREPARE_BORROW } prepare_mode;

/* Column `input` of one batch in the storage type: moved out of the batch or
 * borrowed from it when `mode` allows and it is movable, else cast (a copy). */
static tl_status cast_part(const struct ArrowSchema *schema, struct ArrowArray *batch, int input,
                           const tl_arrow_type *target, const char *name, prepare_mode mode,
                           struct ArrowArray *out, tl_error *err)
{
    struct ArrowArray col;
    TL_TRY(batch_column(batch, input, name, &col, err));
    tl_array_view v;
    tl_status st = tl_array_view_init(&v, schema->children[input], &col, err);
    if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", name);
    if (mode != PREPARE_COPY && movable(batch, input, &v, target)) {
        /* What the cast checks of var-width input, it checks here too. */
        st = tl_atype_is_varbinary(v.type.id) ? tl_offsets_check(&v, err) : TL_OK;
        if (st != TL_OK)
            tl_error_prefix(err, "column \"%s\"", name);
        else if (mode == PREPARE_TAKE)
            tl_array_move(batch->children[input], out);
        else
            st = tl_array_borrow_flat(batch->children[input], out, err);
    } else {
        st = tl_arrow_cast(&v, target, name, out, err);
    }
    tl_array_view_free(&v);
    return st;
}

/* Casts column `input` of every batch to `format` and concatenates them. */
static tl_status cast_column(const struct ArrowSchema *schema, struct ArrowArray *batches,
                             size_t n_batches, int input, const char *format, const char *name,
                             prepare_mode mode, struct ArrowArray *out, tl_error *err)
{
    tl_arrow_type target;
    TL_TRY(tl_arrow_type_parse(format, &target, err));
    if (n_batches == 0) return constant_array(format, 0, false, 0, out, err);
    struct ArrowArray *parts = calloc(n_batches ? n_batches : 1, sizeof *parts);
    tl_array_view *views = calloc(n_batches ? n_batches : 1, sizeof *views);
    tl_status st = parts && views ? TL_OK : tl_error_nomem(err);
    size_t done = 0;
    for (; st == TL_OK && done < n_batches; done++)
        st = cast_part(schema, &batches[done], input, &target, name, mode, &parts[done], err);
    if (st == TL_OK && n_batches == 1) {
        tl_array_move(&parts[0], out);
    } else if (st == TL_OK) {
        for (size_t i = 0; i < n_batches; i++) tl_view_of_owned(&target, &parts[i], &views[i]);
        st = tl_arrow_concat(views, n_batches, out, err);
    }
    for (size_t i = 0; parts && i < n_batches; i++) tl_array_release(&parts[i]);
    free(parts);
    free(views);
    return st;
}

static tl_status fill_column(const tl_table *t, const tl_ice_field *f, const char *format,
                             int64_t length, int64_t ingest_micros, struct ArrowArray *out,
                             tl_error *err)
{
    bool is_ingest = t->contract.ingest_column && strcmp(f->name, t->contract.ingest_column) == 0;
    if (is_ingest) return constant_array(format, length, true, ingest_micros, out, err);
    if (f->required)
        return tl_error_set(err, TL_ERR_INVALID, "required column \"%s\" is missing", f->name);
    return constant_array(format, length, false, 0, out, err);
}

/* First row of a large string or binary column (64-bit offsets: the storage
 * types) whose value is longer than max bytes, or -1; its length in *len. */
static int64_t first_longer(const struct ArrowArray *a, const char *format, int64_t max,
                            int64_t *len)
{
    if (strcmp(format, "U") != 0 && strcmp(format, "Z") != 0) return -1;
    const int64_t *off = (const int64_t *)a->buffers[1] + a->offset;
    for (int64_t i = 0; i < a->length; i++)
        if ((*len = off[i + 1] - off[i]) > max) return i;
    return -1;
}

/* A series key value is carried into every later last-value index (and is
 * a series' name in queries): an oversized one would bloat each append's
 * index for good, so it is refused. */
static tl_status check_series_key(const tl_table *t, const tl_ice_field *f, const char *format,
                                  const struct ArrowArray *col, tl_error *err)
{
    if (!tl_strlist_contains(&t->contract.series_key, f->name)) return TL_OK;
    int64_t len = 0, row = first_longer(col, format, TL_SERIES_KEY_MAX_BYTES, &len);
    if (row < 0) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "series key column \"%s\": row %lld holds %lld bytes, over the limit of "
                        "%d for a series key value (it names a series: an id, a name)",
                        f->name, (long long)row, (long long)len, TL_SERIES_KEY_MAX_BYTES);
}

static tl_status prepare(const tl_table *t, const struct ArrowSchema *schema,
                         struct ArrowArray *batches, size_t n_batches, int64_t ingest_micros,
                         prepare_mode mode, tl_rows *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(check_input_columns(t, schema, err));
    const tl_ice_schema *ts = tl_ice_metadata_current_schema(t->md);
    int64_t length = 0;
    for (size_t b = 0; b < n_batches; b++) {
        if (batches[b].n_children != schema->n_children)
            return tl_error_set(err, TL_ERR_INVALID, "a batch does not match its stream's schema");
        if (batches[b].offset < 0 || batches[b].length < 0)
            return tl_error_set(err, TL_ERR_INVALID,
                                "a batch has a negative offset or length (%lld, %lld)",
                                (long long)batches[b].offset, (long long)batches[b].length);
        TL_TRY(check_no_null_rows(&batches[b], err));
        length += batches[b].length;
    }
    TL_TRY(tl_storage_schema(ts, &out->schema, err));
    tl_status st = tl_array_init(&out->array, 1, (int64_t)ts->n_fields, err);
    out->array.length = length;
    for (size_t i = 0; st == TL_OK && i < ts->n_fields; i++) {
        const tl_ice_field *f = &ts->fields[i];
        const char *format = out->schema.children[i]->format;
        struct ArrowArray *col = out->array.children[i];
        int input = find_input(schema, f->name);
        const struct ArrowSchema *want = out->schema.children[i];
        bool nested = TL_ICE_TYPE_IS_NESTED(f->type.id);
        if (nested && input < 0)
            st = f->required ? tl_error_set(err, TL_ERR_INVALID,
                                            "required column \"%s\" is missing", f->name)
                             : tl_arrow_nulls_nested(want, length, col, err);
        else if (nested)
            st = cast_nested_column(schema, batches, n_batches, input, want, f->name, col, err);
        else
            st = input < 0 ? fill_column(t, f, format, length, ingest_micros, col, err)
                           : cast_column(schema, batches, n_batches, input, format, f->name, mode,
                                         col, err);
        int64_t row = st == TL_OK && f->required ? tl_array_first_null(col) : -1;
        if (row >= 0)
            st = tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is required but row %lld is null",
                              f->name, (long long)row);
        if (st == TL_OK) st = check_series_key(t, f, format, col, err);
    }
    if (st != TL_OK) tl_rows_free(out);
    return st;
}

tl_status tl_append_prepare(const tl_table *t, const struct ArrowSchema *schema,
                            const struct ArrowArray *batches, size_t n_batches,
                            int64_t ingest_micros, tl_rows *out, tl_error *err)
{
    /* Nothing is moved out of the batches: they are only read. */
    return prepare(t, schema, (struct ArrowArray *)batches, n_batches, ingest_micros, PREPARE_COPY,
                   out, err);
}

tl_status tl_append_prepare_borrow(const tl_table *t, const struct ArrowSchema *schema,
                                   const struct ArrowArray *batches, size_t n_batches,
                                   int64_t ingest_micros, tl_rows *out, tl_error *err)
{
    /* Borrowing only reads the batches, as a copy does. */
    return prepare(t, schema, (struct ArrowArray *)batches, n_batches, ingest_micros,
                   PREPARE_BORROW, out, err);
}

tl_status tl_append_prepare_take(const tl_table *t, const struct ArrowSchema *schema,
                                 struct ArrowArray *batches, size_t n_batches,
                                 int64_t ingest_micros, tl_rows *out, tl_error *err)
{
    return prepare(t, schema, batches, n_batches, ingest_micros, PREPARE_TAKE, out, err);
}
