/* Laying rows out as the table wants them: grouped by time partition, sorted
 * by (series key..., time), and with dedup on, one row per (series key...,
 * time): the latest write wins (higher ingest time, then the later row). */
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/concat.h"
#include "arrow/sort.h"
#include "arrow/take.h"
#include "iceberg/transform.h"
#include "table/append.h"

void tl_partition_rows_free(tl_partition_rows *parts, size_t n)
{
    for (size_t i = 0; parts && i < n; i++) tl_array_release(&parts[i].array);
    free(parts);
}

static void view_column(const tl_rows *rows, int i, tl_array_view *out)
{
    tl_arrow_type type;
    tl_arrow_type_parse(rows->schema.children[i]->format, &type, NULL);
    tl_view_of_owned(&type, rows->array.children[i], out);
}

/* Whether rows a and b hold the same value (nulls equal each other). */
static bool same_value(const tl_array_view *v, int64_t a, int64_t b)
{
    bool na = tl_view_is_null(v, a), nb = tl_view_is_null(v, b);
    if (na || nb) return na && nb;
    if (tl_atype_is_varbinary(v->type.id)) {
        int64_t la, lb;
        const uint8_t *pa = tl_view_bytes(v, a, &la), *pb = tl_view_bytes(v, b, &lb);
        return la == lb && memcmp(pa, pb, (size_t)la) == 0;
    }
    if (v->type.id == TL_ATYPE_BOOL)
        return tl_bit_get(v->values, v->offset + a) == tl_bit_get(v->values, v->offset + b);
    size_t w = (size_t)tl_arrow_type_bit_width(&v->type) / 8;
    const uint8_t *base = v->values;
    return memcmp(base + (size_t)(v->offset + a) * w, base + (size_t)(v->offset + b) * w, w) == 0;
}

typedef struct layout {
    int64_t *partition;    /* per input row; NULL when unpartitioned */
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

static tl_status compute_partitions(const tl_table *t, const tl_rows *rows, layout *l,
                                    tl_error *err)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    if (t->contract.time_index < 0 || spec == NULL || spec->n_fields == 0) return TL_OK;
    tl_ice_transform tr;
    TL_TRY(tl_ice_transform_parse(spec->fields[0].transform, &tr, err));
    int64_t n = rows->array.length;
    l->partition = malloc((size_t)(n ? n : 1) * sizeof *l->partition);
    if (l->partition == NULL) return tl_error_nomem(err);
    const int64_t *times = rows->array.children[t->contract.time_index]->buffers[1];
    tl_ice_transform_apply_many(tr, times, (size_t)n, l->partition);
    return TL_OK;
}

/* A column whose values are all equal orders nothing: leave it out of the sort
 * (the common case for the partition of a small append, and for the ingest
 * time we fill in ourselves). */
static bool all_equal_int64(const int64_t *v, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        if (v[i] != v[0]) return false;
    return true;
}

static tl_status sort_rows(const tl_table *t, const tl_rows *rows, layout *l, tl_error *err)
{
    const tl_contract *c = &t->contract;
    tl_sort_key keys[10];
    size_t nk = 0;
    struct ArrowArray part_array = {0};
    tl_array_view part_view;
    const void *part_buffers[2] = {NULL, l->partition};
    if (l->partition && !all_equal_int64(l->partition, rows->array.length)) {
        /* Wrap the partition values as an int64 column (borrowed buffer). */
        tl_arrow_type lt;
        tl_arrow_type_parse("l", &lt, NULL);
        part_array.length = rows->array.length;
        part_array.n_buffers = 2;
        part_array.buffers = part_buffers;
        tl_view_of_owned(&lt, &part_array, &part_view);
        keys[nk++] = (tl_sort_key){&part_view, false, true};
    }
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

static tl_status split(const tl_rows *rows, const layout *l, tl_partition_rows **out, size_t *n_out,
                       tl_error *err)
{
    size_t n_parts = 0;
    for (int64_t i = 0; i < l->n; i++)
        if (i == 0 || (l->partition && l->partition[l->order[i]] != l->partition[l->order[i - 1]]))
            n_parts++;
    tl_partition_rows *parts = calloc(n_parts ? n_parts : 1, sizeof *parts);
    if (parts == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    size_t p = 0;
    for (int64_t start = 0; st == TL_OK && start < l->n; p++) {
        int64_t end = start + 1;
        while (end < l->n && l->partition &&
               l->partition[l->order[end]] == l->partition[l->order[start]])
            end++;
        if (!l->partition) end = l->n;
        parts[p].has_value = l->partition != NULL;
        parts[p].value = l->partition ? l->partition[l->order[start]] : 0;
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
    free(l.partition);
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
