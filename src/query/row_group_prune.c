#include "query/row_group_prune.h"

#include <stdlib.h>
#include <string.h>

int tl_pq_leaf_of_field(const tl_pq_file_meta *m, const tl_ice_field *field)
{
    if (!tl_pq_subset_flat(m)) return -1;
    for (size_t i = 1; i < m->n_schema; i++) {
        const tl_pq_schema_element *e = &m->schema[i];
        if (e->has_field_id ? e->field_id == field->id : strcmp(e->name, field->name) == 0)
            return (int)(i - 1);
    }
    return -1;
}

/* Skips the schema subtree at element *i, counting its leaves. */
static void subtree(const tl_pq_file_meta *m, size_t *i, size_t *leaves, int depth)
{
    const tl_pq_schema_element *e = &m->schema[(*i)++];
    if (e->has_type || depth > 64) {
        (*leaves)++;
        return;
    }
    for (int32_t k = 0; k < e->num_children && *i < m->n_schema; k++)
        subtree(m, i, leaves, depth + 1);
}

bool *tl_pq_leaves_read(const tl_table *t, const tl_pq_file_meta *m, const bool *fields, size_t *n)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    bool *keep = malloc(m->n_schema + 1);
    size_t i = 1, leaves = 0;
    while (keep && i < m->n_schema) {
        const tl_pq_schema_element *e = &m->schema[i];
        size_t first = leaves;
        subtree(m, &i, &leaves, 0);
        bool kept = true;
        for (size_t k = 0; k < s->n_fields; k++)
            if (e->has_field_id ? e->field_id == s->fields[k].id
                                : e->name && strcmp(e->name, s->fields[k].name) == 0)
                kept = fields == NULL || fields[k];
        for (size_t c = first; c < leaves; c++) keep[c] = kept;
    }
    *n = leaves;
    return keep;
}

/* The statistics of one column chunk, when they bound its values. */
static const tl_pq_statistics *stats_of(const tl_pq_file_meta *m, size_t g, int leaf)
{
    if (leaf < 0 || (size_t)leaf >= m->row_groups[g].n_columns) return NULL;
    const tl_pq_column_chunk *c = &m->row_groups[g].columns[leaf];
    if (!c->has_meta || !c->meta.has_statistics) return NULL;
    const tl_pq_statistics *s = &c->meta.statistics;
    return s->has_min_value && s->has_max_value ? s : NULL;
}

static int64_t le_int(const tl_pq_bytes *b)
{
    uint64_t v = 0;
    for (size_t i = 0; i < b->len && i < 8; i++) v |= (uint64_t)b->data[i] << (8 * i);
    return b->len == 4 ? (int32_t)(uint32_t)v : (int64_t)v;
}

/* Microseconds per unit of a timestamp column: 1000 for millis, 1 for
 * micros, -1000 for nanos (divide), 0 when not a timestamp. */
static int64_t time_scale(const tl_pq_schema_element *e)
{
    if (!e->has_type || e->type != TL_PQ_INT64) return 0;
    if (e->logical.kind == TL_PQ_LT_TIMESTAMP)
        return e->logical.unit == TL_PQ_MILLIS   ? 1000
               : e->logical.unit == TL_PQ_MICROS ? 1
               : e->logical.unit == TL_PQ_NANOS  ? -1000
                                                 : 0;
    if (e->has_converted && e->converted == TL_PQ_CT_TIMESTAMP_MILLIS) return 1000;
    if (e->has_converted && e->converted == TL_PQ_CT_TIMESTAMP_MICROS) return 1;
    return 0;
}

/* Floor of a value in the column's unit, in microseconds (saturating). */
static int64_t to_us(int64_t v, int64_t scale)
{
    if (scale == 1) return v;
    if (scale < 0) return v / 1000 - (v % 1000 < 0);
    if (v > INT64_MAX / 1000) return INT64_MAX;
    if (v < INT64_MIN / 1000) return INT64_MIN;
    return v * 1000;
}

static bool time_bounds_match(const tl_scan_filter *f, const tl_pq_bytes *min,
                              const tl_pq_bytes *max, int64_t scale)
{
    if (scale == 0 || min->len != 8 || max->len != 8) return true;
    int64_t lo = to_us(le_int(min), scale), hi = to_us(le_int(max), scale);
    if (f->has_lo && hi < f->lo) return false;
    if (f->has_hi && lo > f->hi) return false;
    return true;
}

/* Compares a key (text) with a statistic of the column's physical type; -2 when unknown. */
static int compare_key(const tl_pq_schema_element *e, const char *key, const tl_pq_bytes *b)
{
    if (e->type == TL_PQ_BYTE_ARRAY) {
        /* A DECIMAL in bytes is a big-endian number, not the key's text. */
        if (e->logical.kind == TL_PQ_LT_DECIMAL ||
            (e->has_converted && e->converted == TL_PQ_CT_DECIMAL))
            return -2;
        size_t n = strlen(key), m = b->len < n ? b->len : n;
        int c = m ? memcmp(key, b->data, m) : 0;
        if (c != 0) return c < 0 ? -1 : 1;
        return n == b->len ? 0 : (n < b->len ? -1 : 1);
    }
    if ((e->type == TL_PQ_INT32 && b->len == 4) || (e->type == TL_PQ_INT64 && b->len == 8)) {
        if (e->logical.kind == TL_PQ_LT_INTEGER && !e->logical.is_signed) return -2;
        /* Only plain integers hold the key's number itself: not a DECIMAL
         * (unscaled), DATE (days), TIME or TIMESTAMP. */
        if (e->logical.kind != TL_PQ_LT_NONE && e->logical.kind != TL_PQ_LT_INTEGER) return -2;
        if (e->has_converted && (e->converted < TL_PQ_CT_INT_8 || e->converted > TL_PQ_CT_INT_64))
            return -2;
        char *end;
        long long v = strtoll(key, &end, 10);
        if (*end || end == key) return -2;
        int64_t w = le_int(b);
        return v < w ? -1 : v > w;
    }
    return -2;
}

static bool time_may_match(const tl_scan_filter *f, const tl_pq_statistics *s, int64_t scale)
{
    return s == NULL || time_bounds_match(f, &s->min_value, &s->max_value, scale);
}

static bool key_bounds_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                             const tl_pq_bytes *min, const tl_pq_bytes *max)
{
    if (!f->has_keys || e == NULL) return true;
    for (size_t i = 0; i < f->n_keys; i++) {
        int a = compare_key(e, f->keys[i], min);
        int b = compare_key(e, f->keys[i], max);
        if (a == -2 || b == -2 || (a >= 0 && b <= 0)) return true;
    }
    return false;
}

static bool key_may_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                          const tl_pq_statistics *s)
{
    return s == NULL || key_bounds_match(f, e, &s->min_value, &s->max_value);
}

bool tl_time_bounds_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                          const tl_pq_bytes *min, const tl_pq_bytes *max)
{
    return time_bounds_match(f, min, max, time_scale(e));
}

bool tl_key_bounds_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                         const tl_pq_bytes *min, const tl_pq_bytes *max)
{
    return key_bounds_match(f, e, min, max);
}

bool tl_row_group_needed(const tl_table *t, const tl_pq_file_meta *m, size_t g,
                         const tl_scan_filter *filters, size_t n_filters)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int tl = c->time_index >= 0 ? tl_pq_leaf_of_field(m, &s->fields[c->time_index]) : -1;
    int kl = c->series_key.len ? tl_pq_leaf_of_field(m, &s->fields[c->series_index[0]]) : -1;
    const tl_pq_statistics *ts = stats_of(m, g, tl), *ks = stats_of(m, g, kl);
    int64_t scale = tl >= 0 ? time_scale(&m->schema[tl + 1]) : 0;
    const tl_pq_schema_element *ke = kl >= 0 ? &m->schema[kl + 1] : NULL;
    for (size_t i = 0; i < n_filters; i++)
        if (time_may_match(&filters[i], ts, scale) && key_may_match(&filters[i], ke, ks))
            return true;
    return n_filters == 0;
}

bool tl_row_group_time(const tl_table *t, const tl_pq_file_meta *m, size_t g, int64_t *lo,
                       int64_t *hi)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int tl = c->time_index >= 0 ? tl_pq_leaf_of_field(m, &s->fields[c->time_index]) : -1;
    const tl_pq_statistics *ts = stats_of(m, g, tl);
    int64_t scale = tl >= 0 ? time_scale(&m->schema[tl + 1]) : 0;
    if (ts == NULL || scale == 0 || ts->min_value.len != 8 || ts->max_value.len != 8) return false;
    *lo = to_us(le_int(&ts->min_value), scale);
    *hi = to_us(le_int(&ts->max_value), scale);
    return *lo <= *hi;
}

/* The part of [lo, hi] inside the filter's time range. */
static double time_share(const tl_scan_filter *f, int64_t lo, int64_t hi)
{
    int64_t a = f->has_lo && f->lo > lo ? f->lo : lo, b = f->has_hi && f->hi < hi ? f->hi : hi;
    if (b < a) return 0;
    return ((double)b - (double)a + 1) / ((double)hi - (double)lo + 1);
}

double tl_row_group_time_share(const tl_table *t, const tl_pq_file_meta *m, size_t g,
                               const tl_scan_filter *filters, size_t n_filters)
{
    int64_t lo, hi;
    if (n_filters == 0 || !tl_row_group_time(t, m, g, &lo, &hi)) return 1;
    double share = 0;
    for (size_t i = 0; i < n_filters; i++)
        if (tl_row_group_needed(t, m, g, &filters[i], 1)) share += time_share(&filters[i], lo, hi);
    return share > 1 ? 1 : share;
}
