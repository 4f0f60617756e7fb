/* Laying rows out as the table wants them: grouped by time partition, sorted
 * by (series key..., time), and with dedup on, one row per (series key...,
 * time): the latest write wins (higher ingest time, then the later row). */
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/concat.h"
#include "arrow/sort.h"
#include "arrow/take.h"
#include "core/buf.h"
#include "iceberg/partition_value.h"
#include "iceberg/transform.h"
#include "table/append.h"

void tl_partition_rows_free(tl_partition_rows *parts, size_t n)
{
    for (size_t i = 0; parts && i < n; i++) {
        tl_array_release(&parts[i].array);
        tl_ice_values_free(parts[i].partition, parts[i].n_partition);
    }
    free(parts);
}

static void view_column(const tl_rows *rows, int i, tl_array_view *out)
{
    tl_arrow_type type;
    tl_arrow_type_parse(rows->schema.children[i]->format, &type, NULL);
    tl_view_of_owned(&type, rows->array.children[i], out);
}

/* Whether rows a and b hold the same value (nulls equal each other). Called
 * per row and key column (dedup, series ends, partitions): 64-bit values and
 * short strings are compared inline. */
static bool same_value(const tl_array_view *v, int64_t a, int64_t b)
{
    bool na = tl_view_is_null(v, a), nb = tl_view_is_null(v, b);
    if (na || nb) return na && nb;
    if (v->type.id == TL_ATYPE_INT64 || v->type.id == TL_ATYPE_TIMESTAMP) {
        const int64_t *x = (const int64_t *)v->values + v->offset;
        return x[a] == x[b];
    }
    if (tl_atype_is_varbinary(v->type.id)) {
        int64_t la, lb;
        const uint8_t *pa = tl_view_bytes(v, a, &la), *pb = tl_view_bytes(v, b, &lb);
        return la == lb && tl_bytes_equal(pa, pb, (size_t)la);
    }
    if (v->type.id == TL_ATYPE_BOOL)
        return tl_bit_get(v->values, v->offset + a) == tl_bit_get(v->values, v->offset + b);
    size_t w = (size_t)tl_arrow_type_bit_width(&v->type) / 8;
    const uint8_t *base = v->values;
    return memcmp(base + (size_t)(v->offset + a) * w, base + (size_t)(v->offset + b) * w, w) == 0;
}

/* One partition field's key of every row: the column itself (identity), or
 * the transform's results as an int64 column with the column's validity. */
typedef struct part_key {
    const tl_part_field *field;
    int64_t *computed; /* NULL for identity */
    struct ArrowArray array;
    const void *buffers[2];
    tl_array_view view;
    bool constant; /* every row has the same key: it splits and orders nothing */
} part_key;

typedef struct layout {
    part_key parts[TL_MAX_PARTITION_FIELDS];
    size_t n_parts;
    int64_t *order;        /* sorted row indices */
    int64_t n;             /* rows kept in order */
    tl_array_view keys[8]; /* series key views then time */
    size_t n_keys;
} layout;

/* Keeps the last row of each run of equal (series key..., time): the sort put
 * the winner last (ingest time ascending, then input order). */
static void dedup_sorted(layout *l)
{
    int64_t kept = 0;
    for (int64_t i = 0; i < l->n; i++) {
        bool same_as_next = i + 1 < l->n;
        /* Time, the last key, differs most often: compare it first. */
        for (size_t k = l->n_keys; same_as_next && k-- > 0;)
            same_as_next = same_value(&l->keys[k], l->order[i], l->order[i + 1]);
        if (!same_as_next) l->order[kept++] = l->order[i];
    }
    l->n = kept;
}

static tl_status part_key_init(const tl_rows *rows, const tl_part_field *f, part_key *k,
                               tl_error *err)
{
    k->field = f;
    view_column(rows, f->column, &k->view);
    int64_t n = rows->array.length;
    if (f->transform.kind != TL_ICE_TRANSFORM_IDENTITY) {
        const struct ArrowArray *col = rows->array.children[f->column];
        k->computed = malloc((size_t)(n ? n : 1) * sizeof *k->computed);
        if (k->computed == NULL) return tl_error_nomem(err);
        if (k->view.type.id == TL_ATYPE_DATE32) {
            const int32_t *days = k->view.values;
            for (int64_t i = 0; i < n; i++)
                k->computed[i] = tl_ice_transform_apply_date(f->transform, days[i]);
        } else {
            tl_ice_transform_apply_many(f->transform, k->view.values, (size_t)n, k->computed);
        }
        k->buffers[0] = col->buffers[0];
        k->buffers[1] = k->computed;
        k->array = (struct ArrowArray){
            .length = n, .null_count = col->null_count, .n_buffers = 2, .buffers = k->buffers};
        tl_arrow_type lt;
        tl_arrow_type_parse("l", &lt, NULL);
        tl_view_of_owned(&lt, &k->array, &k->view);
    }
    k->constant = true;
    for (int64_t i = 1; k->constant && i < n; i++) k->constant = same_value(&k->view, 0, i);
    return TL_OK;
}

static tl_status compute_partitions(const tl_table *t, const tl_rows *rows, layout *l,
                                    tl_error *err)
{
    const tl_contract *c = &t->contract;
    for (size_t i = 0; i < c->n_partition && i < TL_MAX_PARTITION_FIELDS; i++) {
        const tl_part_field *f = &c->partition[i];
        if (!f->writable) {
            char tr[TL_ICE_TRANSFORM_STR_MAX];
            tl_ice_transform_format(f->transform, tr, sizeof tr);
            return tl_error_set(err, TL_ERR_INVALID,
                                "cannot write this table: its partition field \"%s\" (%s) is "
                                "not one Timelake computes",
                                f->name, tr);
        }
        TL_TRY(part_key_init(rows, f, &l->parts[l->n_parts++], err));
    }
    if (c->n_partition > TL_MAX_PARTITION_FIELDS)
        return tl_error_set(err, TL_ERR_INVALID,
                            "cannot write this table: more than %d partition fields",
                            TL_MAX_PARTITION_FIELDS);
    return TL_OK;
}

/* A column whose values are all equal orders nothing: leave it out of the sort
 * (the common case for the ingest time we fill in ourselves). */
static bool all_equal_int64(const int64_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (v[i] != v[0]) return false;
    return true;
}

static tl_status sort_rows(const tl_table *t, const tl_rows *rows, layout *l, tl_error *err)
{
    const tl_contract *c = &t->contract;
    tl_sort_key keys[TL_MAX_PARTITION_FIELDS + 10];
    size_t nk = 0;
    for (size_t i = 0; i < l->n_parts; i++)
        if (!l->parts[i].constant) keys[nk++] = (tl_sort_key){&l->parts[i].view, false, true};
    for (size_t i = 0; i < c->series_key.len && l->n_keys < 7; i++)
        view_column(rows, c->series_index[i], &l->keys[l->n_keys++]);
    if (c->time_index >= 0) view_column(rows, c->time_index, &l->keys[l->n_keys++]);
    for (size_t i = 0; i < l->n_keys; i++) keys[nk++] = (tl_sort_key){&l->keys[i], false, true};
    tl_array_view ingest;
    const struct ArrowArray *ingest_col =
        c->ingest_index >= 0 ? rows->array.children[c->ingest_index] : NULL;
    if (c->dedup && ingest_col &&
        !all_equal_int64((const int64_t *)ingest_col->buffers[1] + ingest_col->offset,
                         ingest_col->length)) {
        view_column(rows, c->ingest_index, &ingest);
        keys[nk++] = (tl_sort_key){&ingest, false, true};
    }
    l->n = rows->array.length;
    if (nk == 0) {
        l->order = malloc((size_t)(l->n ? l->n : 1) * sizeof *l->order);
        if (l->order == NULL) return tl_error_nomem(err);
        for (int64_t i = 0; i < l->n; i++) l->order[i] = i;
        return TL_OK;
    }
    return tl_arrow_sort_indices(keys, nk, l->n, &l->order, err);
}

/* Whether sorted rows a and b lie in different partitions. */
static bool new_partition(const layout *l, int64_t a, int64_t b)
{
    for (size_t i = 0; i < l->n_parts; i++)
        if (!l->parts[i].constant && !same_value(&l->parts[i].view, a, b)) return true;
    return false;
}

/* The partition value of a row's key. */
static tl_status key_value(const part_key *k, int64_t row, tl_ice_value *out, tl_error *err)
{
    const tl_array_view *v = &k->view;
    memset(out, 0, sizeof *out);
    if (tl_view_is_null(v, row)) return TL_OK; /* TL_ICE_VALUE_NULL */
    if (k->computed) {
        out->kind = TL_ICE_VALUE_INT;
        out->i = k->computed[row];
        return TL_OK;
    }
    switch (v->type.id) {
    case TL_ATYPE_BOOL:
        out->kind = TL_ICE_VALUE_BOOL;
        out->i = tl_bit_get(v->values, v->offset + row);
        return TL_OK;
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING: {
        int64_t len;
        const uint8_t *p = tl_view_bytes(v, row, &len);
        out->kind = TL_ICE_VALUE_STRING;
        out->len = (size_t)len;
        if ((out->bytes = malloc((size_t)len + 1)) == NULL) return tl_error_nomem(err);
        memcpy(out->bytes, p, (size_t)len);
        out->bytes[len] = 0;
        return TL_OK;
    }
    default:
        out->kind = tl_arrow_type_bit_width(&v->type) == 64 ? TL_ICE_VALUE_LONG : TL_ICE_VALUE_INT;
        out->i = tl_view_int(v, row);
        return TL_OK;
    }
}

static tl_status part_values(const layout *l, int64_t row, tl_partition_rows *part, tl_error *err)
{
    if (l->n_parts == 0) return TL_OK;
    part->partition = calloc(l->n_parts, sizeof *part->partition);
    if (part->partition == NULL) return tl_error_nomem(err);
    part->n_partition = l->n_parts;
    for (size_t i = 0; i < l->n_parts; i++)
        TL_TRY(key_value(&l->parts[i], row, &part->partition[i], err));
    return TL_OK;
}

static tl_status split(const tl_rows *rows, const layout *l, tl_partition_rows **out, size_t *n_out,
                       tl_error *err)
{
    size_t n_parts = 0;
    for (int64_t i = 0; i < l->n; i++)
        if (i == 0 || new_partition(l, l->order[i - 1], l->order[i])) n_parts++;
    tl_partition_rows *parts = calloc(n_parts ? n_parts : 1, sizeof *parts);
    if (parts == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    size_t p = 0;
    for (int64_t start = 0; st == TL_OK && start < l->n; p++) {
        int64_t end = start + 1;
        while (end < l->n && !new_partition(l, l->order[end - 1], l->order[end])) end++;
        st = part_values(l, l->order[start], &parts[p], err);
        if (st == TL_OK)
            st = tl_arrow_take_struct(&rows->schema, &rows->array, l->order + start, end - start,
                                      &parts[p].array, err);
        start = end;
    }
    if (st != TL_OK) {
        tl_partition_rows_free(parts, n_parts);
        return st;
    }
    *out = parts;
    *n_out = n_parts;
    return TL_OK;
}

tl_status tl_append_layout(const tl_table *t, const tl_rows *rows, tl_partition_rows **out,
                           size_t *n_out, tl_error *err)
{
    layout l = {0};
    tl_status st = compute_partitions(t, rows, &l, err);
    if (st == TL_OK) st = sort_rows(t, rows, &l, err);
    if (st == TL_OK && t->contract.dedup && t->contract.time_index >= 0) dedup_sorted(&l);
    if (st == TL_OK) st = split(rows, &l, out, n_out, err);
    for (size_t i = 0; i < l.n_parts; i++) free(l.parts[i].computed);
    free(l.order);
    return st;
}

/* Row indices of a partition where a series ends (its last, newest row). */
static tl_status series_ends(const tl_table *t, const struct ArrowSchema *schema,
                             const struct ArrowArray *part, int64_t **out, int64_t *n,
                             tl_error *err)
{
    const tl_contract *c = &t->contract;
    tl_array_view keys[8];
    size_t nk = 0;
    for (size_t i = 0; i < c->series_key.len && nk < 8; i++) {
        tl_arrow_type type;
        tl_arrow_type_parse(schema->children[c->series_index[i]]->format, &type, NULL);
        tl_view_of_owned(&type, part->children[c->series_index[i]], &keys[nk++]);
    }
    *out = malloc((size_t)(part->length ? part->length : 1) * sizeof **out);
    if (*out == NULL) return tl_error_nomem(err);
    *n = 0;
    for (int64_t r = 0; r < part->length; r++) {
        bool same_as_next = r + 1 < part->length;
        for (size_t k = 0; same_as_next && k < nk; k++)
            same_as_next = same_value(&keys[k], r, r + 1);
        if (!same_as_next) (*out)[(*n)++] = r;
    }
    return TL_OK;
}

tl_status tl_append_series_tails(const tl_table *t, const struct ArrowSchema *schema,
                                 const tl_partition_rows *parts, size_t n_parts, tl_rows *out,
                                 tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(tl_schema_copy(schema, &out->schema, err));
    struct ArrowArray *tails = calloc(n_parts + 1, sizeof *tails);
    tl_status st = tails ? TL_OK : tl_error_nomem(err);
    size_t done = 0;
    for (; st == TL_OK && done < n_parts; done++) {
        int64_t *idx = NULL, n = 0;
        st = series_ends(t, schema, &parts[done].array, &idx, &n, err);
        if (st == TL_OK)
            st = tl_arrow_take_struct(schema, &parts[done].array, idx, n, &tails[done], err);
        free(idx);
        if (st != TL_OK) break;
    }
    if (st == TL_OK && n_parts == 1) {
        tl_array_move(&tails[0], &out->array);
    } else if (st == TL_OK) {
        st = tl_arrow_concat_struct(schema, tails, n_parts, &out->array, err);
    }
    for (size_t i = 0; i < done; i++) tl_array_release(&tails[i]);
    free(tails);
    if (st != TL_OK) tl_rows_free(out);
    return st;
}
