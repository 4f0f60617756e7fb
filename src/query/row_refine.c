#include "query/row_refine.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "query/row_group_prune.h"

/* One filtered column's values over the ranges, as Parquet statistics
 * bytes (little-endian numbers, or the bytes of a string). */
typedef struct column_values {
    const tl_pq_schema_element *elem;
    struct ArrowArray a;
    int kind; /* 0: not usable, 4 or 8: fixed bytes, 1: offsets and data */
} column_values;

static tl_status read_values(tl_parquet_reader *r, int g, int leaf, const tl_row_ranges *rr,
                             column_values *cv, int64_t *bytes, bool *read, tl_error *err)
{
    memset(cv, 0, sizeof *cv);
    if (leaf < 0) return TL_OK;
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    cv->elem = &m->schema[leaf + 1];
    tl_pq_type t = cv->elem->type;
    if (t != TL_PQ_INT32 && t != TL_PQ_INT64 && t != TL_PQ_BYTE_ARRAY) return TL_OK;
    TL_TRY(tl_parquet_reader_read_rows(r, g, leaf, rr->r, rr->n, &cv->a, bytes, err));
    read[leaf] = true;
    /* The reader keeps INT32 / INT64 values as they are, unless a logical
     * type widens or narrows them (then the width tells). */
    int64_t width = cv->a.n_buffers == 2 ? (t == TL_PQ_INT32 ? 4 : 8) : 0;
    if (t == TL_PQ_BYTE_ARRAY && cv->a.n_buffers == 3) cv->kind = 1;
    if (width) {
        struct ArrowSchema s;
        TL_TRY(tl_parquet_reader_schema(r, &s, err));
        tl_arrow_type at;
        tl_status st = tl_arrow_type_parse(s.children[leaf]->format, &at, err);
        if (st == TL_OK && tl_arrow_type_bit_width(&at) == width * 8) cv->kind = (int)width;
        tl_schema_release(&s);
        TL_TRY(st);
    }
    return TL_OK;
}

/* Value i of cv as statistics bytes; false when null or not usable. */
static bool value_at(const column_values *cv, int64_t i, tl_pq_bytes *out)
{
    if (cv->kind == 0) return false;
    const struct ArrowArray *a = &cv->a;
    int64_t j = a->offset + i;
    if (a->null_count && a->buffers[0] && !tl_bit_get(a->buffers[0], j)) return false;
    if (cv->kind == 1) {
        const int32_t *off = a->buffers[1];
        out->data = (const uint8_t *)a->buffers[2] + off[j];
        out->len = (size_t)(off[j + 1] - off[j]);
    } else {
        out->data = (const uint8_t *)a->buffers[1] + j * cv->kind;
        out->len = (size_t)cv->kind;
    }
    return true;
}

static bool same(const tl_pq_bytes *a, const tl_pq_bytes *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* Whether row i passes any filter; key results are kept while the key
 * repeats (rows are usually sorted by it). */
typedef struct judge {
    const tl_scan_filter *filters;
    size_t n;
    column_values time, key;
    tl_pq_bytes last_key;
    bool have_last;
    bool *key_ok; /* per filter, for last_key */
    /* Microsecond times, none NULL: the times as numbers, and each
     * filter's bounds (most rows are judged by these alone). */
    const int64_t *times;
    int64_t *lo, *hi;
} judge;

/* Whether time t lies in filter f's range. */
static bool in_range(const judge *j, size_t f, int64_t t)
{
    return t >= j->lo[f] && t <= j->hi[f];
}

static bool passes(judge *j, int64_t i)
{
    if (j->times) {
        size_t f = 0;
        while (f < j->n && !in_range(j, f, j->times[i])) f++;
        if (f == j->n) return false;
    }
    tl_pq_bytes tv, kv;
    /* With times, the filters' time bounds are compared as numbers. */
    bool has_t = !j->times && value_at(&j->time, i, &tv), has_k = value_at(&j->key, i, &kv);
    if (has_k && !(j->have_last && same(&kv, &j->last_key))) {
        for (size_t f = 0; f < j->n; f++)
            j->key_ok[f] = tl_key_bounds_match(&j->filters[f], j->key.elem, &kv, &kv);
        j->last_key = kv;
        j->have_last = true;
    }
    for (size_t f = 0; f < j->n; f++) {
        if (has_k && !j->key_ok[f]) continue;
        if (j->times && !in_range(j, f, j->times[i])) continue;
        if (has_t && !tl_time_bounds_match(&j->filters[f], j->time.elem, &tv, &tv)) continue;
        return true;
    }
    return false;
}

/* The rows of rr whose times (j->times, in the rows' order) lie in a
 * filter's range, into *out, stretch by stretch: time alone decides (no
 * key read). -1 when out of memory. */
static int by_times(const judge *j, const tl_row_ranges *rr, tl_row_ranges *out)
{
    const int64_t *tv = j->times;
    for (size_t k = 0; k < rr->n; k++) {
        int64_t row = rr->r[k].start, end = rr->r[k].end;
        while (row < end) {
            while (row < end) { /* rows outside every range */
                size_t f = 0;
                while (f < j->n && !in_range(j, f, *tv)) f++;
                if (f < j->n) break;
                row++, tv++;
            }
            int64_t first = row;
            while (row < end) {
                size_t f = 0;
                while (f < j->n && !in_range(j, f, *tv)) f++;
                if (f == j->n) break;
                row++, tv++;
            }
            if (row > first && tl_row_ranges_push(out, first, row) != 0) return -1;
        }
    }
    return 0;
}

/* Whether cv holds a value, of the kind compared exactly, at every row: a
 * time in microseconds, or a string. */
static bool exact_values(const column_values *cv, bool time)
{
    if (cv->elem == NULL || (cv->a.null_count != 0 && cv->a.buffers[0] != NULL)) return false;
    const tl_pq_schema_element *e = cv->elem;
    if (!time)
        return cv->kind == 1 && e->type == TL_PQ_BYTE_ARRAY &&
               e->logical.kind != TL_PQ_LT_DECIMAL &&
               !(e->has_converted && e->converted == TL_PQ_CT_DECIMAL);
    return cv->kind == 8 && e->type == TL_PQ_INT64 &&
           ((e->logical.kind == TL_PQ_LT_TIMESTAMP && e->logical.unit == TL_PQ_MICROS) ||
            (e->logical.kind == TL_PQ_LT_NONE && e->has_converted &&
             e->converted == TL_PQ_CT_TIMESTAMP_MICROS));
}

static bool restricts(const tl_scan_filter *f, size_t n, bool time)
{
    for (size_t i = 0; i < n; i++)
        if (time ? f[i].has_lo || f[i].has_hi : f[i].has_keys) return true;
    return false;
}

tl_status tl_row_refine(const tl_table *t, tl_parquet_reader *r, int g,
                        const tl_scan_filter *filters, size_t n_filters, tl_row_ranges *rr,
                        int64_t *bytes, bool *read, bool *exact, tl_error *err)
{
    if (rr->n == 0) return TL_OK;
    if (n_filters != 1) *exact = false;
    if (n_filters == 0) return TL_OK;
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int tl = c->time_index >= 0 && restricts(filters, n_filters, true)
                 ? tl_pq_leaf_of_field(m, &s->fields[c->time_index])
                 : -1;
    int kl = c->series_key.len && restricts(filters, n_filters, false)
                 ? tl_pq_leaf_of_field(m, &s->fields[c->series_index[0]])
                 : -1;
    if ((restricts(filters, n_filters, true) && tl < 0) ||
        (restricts(filters, n_filters, false) && kl < 0))
        *exact = false; /* a restriction left to DuckDB */
    if (tl < 0 && kl < 0) return TL_OK;
    judge j = {.filters = filters,
               .n = n_filters,
               .key_ok = calloc(n_filters, sizeof(bool)),
               .lo = calloc(n_filters, sizeof(int64_t)),
               .hi = calloc(n_filters, sizeof(int64_t))};
    tl_row_ranges out = {0};
    tl_status st = j.key_ok && j.lo && j.hi ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) st = read_values(r, g, tl, rr, &j.time, bytes, read, err);
    if (st == TL_OK) st = read_values(r, g, kl, rr, &j.key, bytes, read, err);
    bool exact_time = st == TL_OK && tl >= 0 && exact_values(&j.time, true);
    if (st == TL_OK && ((tl >= 0 && !exact_time) || (kl >= 0 && !exact_values(&j.key, false))))
        *exact = false;
    if (exact_time) {
        j.times = (const int64_t *)j.time.a.buffers[1] + j.time.a.offset;
        for (size_t f = 0; f < n_filters; f++) {
            j.lo[f] = filters[f].has_lo ? filters[f].lo : INT64_MIN;
            j.hi[f] = filters[f].has_hi ? filters[f].hi : INT64_MAX;
        }
    }
    int64_t at = 0; /* row of the values */
    if (st == TL_OK && j.times && j.key.kind == 0) {
        st = by_times(&j, rr, &out) ? tl_error_nomem(err) : TL_OK;
        at = -1; /* judged */
    }
    for (size_t k = 0; st == TL_OK && at >= 0 && k < rr->n; k++)
        for (int64_t row = rr->r[k].start; row < rr->r[k].end; row++, at++)
            if (passes(&j, at) && tl_row_ranges_push(&out, row, row + 1) != 0) {
                st = tl_error_nomem(err);
                break;
            }
    tl_array_release(&j.time.a);
    tl_array_release(&j.key.a);
    free(j.key_ok);
    free(j.lo);
    free(j.hi);
    if (st != TL_OK) {
        tl_row_ranges_free(&out);
        return st;
    }
    tl_row_ranges_free(rr);
    *rr = out;
    return TL_OK;
}
