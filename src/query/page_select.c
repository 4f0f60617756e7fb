#include "query/page_select.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "query/row_group_prune.h"

#define push tl_row_ranges_push

void tl_row_ranges_free(tl_row_ranges *rr)
{
    free(rr->r);
    memset(rr, 0, sizeof *rr);
}

int64_t tl_row_ranges_rows(const tl_row_ranges *rr)
{
    int64_t n = 0;
    for (size_t i = 0; i < rr->n; i++) n += rr->r[i].end - rr->r[i].start;
    return n;
}

int tl_row_ranges_push(tl_row_ranges *rr, int64_t s, int64_t e)
{
    if (e <= s) return 0;
    if (rr->n && rr->r[rr->n - 1].end >= s) {
        if (e > rr->r[rr->n - 1].end) rr->r[rr->n - 1].end = e;
        return 0;
    }
    if (TL_GROW(rr->r, rr->cap, rr->n + 1, 8) != 0) return -1;
    rr->r[rr->n++] = (tl_pq_row_range){s, e};
    return 0;
}

static int intersect(const tl_row_ranges *a, const tl_row_ranges *b, tl_row_ranges *out)
{
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        int64_t s = a->r[i].start > b->r[j].start ? a->r[i].start : b->r[j].start;
        int64_t e = a->r[i].end < b->r[j].end ? a->r[i].end : b->r[j].end;
        if (push(out, s, e) != 0) return -1;
        if (a->r[i].end < b->r[j].end)
            i++;
        else
            j++;
    }
    return 0;
}

static int unite(const tl_row_ranges *a, const tl_row_ranges *b, tl_row_ranges *out)
{
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        bool take_a = j >= b->n || (i < a->n && a->r[i].start <= b->r[j].start);
        const tl_pq_row_range *x = take_a ? &a->r[i++] : &b->r[j++];
        if (push(out, x->start, x->end) != 0) return -1;
    }
    return 0;
}

/* The page index of one filtered column, when it can prune. */
typedef struct column_pages {
    const tl_pq_schema_element *elem;
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
    bool usable;
} column_pages;

static tl_status load(tl_parquet_reader *r, int g, int leaf, column_pages *cp, tl_error *err)
{
    memset(cp, 0, sizeof *cp);
    if (leaf < 0) return TL_OK;
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    const tl_pq_column_chunk *cc = &m->row_groups[g].columns[leaf];
    cp->elem = &m->schema[leaf + 1];
    if (!cc->has_offset_index || !cc->has_column_index) return TL_OK;
    tl_status st = tl_parquet_reader_page_index(r, g, leaf, &cp->ci, &cp->oi, err);
    if (st == TL_ERR_NOT_FOUND) return TL_OK;
    TL_TRY(st);
    cp->usable = cp->ci.n_pages > 0 && cp->ci.n_pages == cp->oi.n_pages;
    return TL_OK;
}

/* The rows of the pages of cp that may match f (time when is_time, else key);
 * all rows when the index is not consistent. */
static int page_rows(const column_pages *cp, const tl_scan_filter *f, bool is_time, int64_t rows,
                     tl_row_ranges *out)
{
    for (size_t k = 0; k < cp->ci.n_pages; k++) {
        int64_t s = cp->oi.pages[k].first_row_index;
        int64_t e = k + 1 < cp->oi.n_pages ? cp->oi.pages[k + 1].first_row_index : rows;
        if ((k == 0 && s != 0) || e > rows || e <= s) {
            out->n = 0;
            return push(out, 0, rows);
        }
        const tl_pq_bytes *lo = &cp->ci.min_values[k], *hi = &cp->ci.max_values[k];
        bool may = cp->ci.null_pages[k] || (is_time ? tl_time_bounds_match(f, cp->elem, lo, hi)
                                                    : tl_key_bounds_match(f, cp->elem, lo, hi));
        if (may && push(out, s, e) != 0) return -1;
    }
    return 0;
}

/* The rows one filter may want: the intersection of its time and key pages. */
static int filter_rows(const column_pages *time, const column_pages *key, const tl_scan_filter *f,
                       int64_t rows, tl_row_ranges *out)
{
    tl_row_ranges a = {0}, b = {0};
    int rc = time->usable && (f->has_lo || f->has_hi) ? page_rows(time, f, true, rows, &a)
                                                      : push(&a, 0, rows);
    if (rc == 0)
        rc = key->usable && f->has_keys ? page_rows(key, f, false, rows, &b) : push(&b, 0, rows);
    if (rc == 0) rc = intersect(&a, &b, out);
    tl_row_ranges_free(&a);
    tl_row_ranges_free(&b);
    return rc;
}

tl_status tl_page_select(const tl_table *t, tl_parquet_reader *r, int g,
                         const tl_scan_filter *filters, size_t n_filters, tl_row_ranges *out,
                         tl_error *err)
{
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    int64_t rows = m->row_groups[g].num_rows;
    if (rows == 0 || (n_filters > 0 && !tl_row_group_needed(t, m, (size_t)g, filters, n_filters)))
        return TL_OK;
    if (n_filters == 0) return push(out, 0, rows) == 0 ? TL_OK : tl_error_nomem(err);
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int tl = c->time_index >= 0 ? tl_pq_leaf_of_field(m, &s->fields[c->time_index]) : -1;
    int kl = c->series_key.len ? tl_pq_leaf_of_field(m, &s->fields[c->series_index[0]]) : -1;
    column_pages time, key;
    TL_TRY(load(r, g, tl, &time, err));
    TL_TRY(load(r, g, kl, &key, err));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n_filters; i++) {
        tl_row_ranges one = {0}, prev = *out;
        *out = (tl_row_ranges){0};
        rc = filter_rows(&time, &key, &filters[i], rows, &one);
        if (rc == 0) rc = unite(&prev, &one, out);
        tl_row_ranges_free(&one);
        tl_row_ranges_free(&prev);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}
