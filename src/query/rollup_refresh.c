/* Computing a rollup's rows and refreshing it: the buckets that the raw
 * table's data files added since the rollup's recorded source snapshot
 * touch are computed again from raw data and appended (the rollup's dedup
 * on series key and bucket lets the newer rows win); when that snapshot
 * left the raw table's history (a rollback), every bucket is computed and
 * the rows replace the rollup's. Files that only left the raw table
 * (retention) change nothing: the rollup keeps their aggregates. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "iceberg/metadata.h"
#include "query/engine.h"
#include "query/rollup.h"
#include "query/scan.h"
#include "table/append.h"
#include "table/live_files.h"

/* At most this many time ranges in one refresh query: closer ones merge. */
#define MAX_RANGES 32

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static const tl_ice_field *raw_field(const tl_table *raw, const char *name)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(raw->md);
    for (size_t i = 0; s && i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, name) == 0) return &s->fields[i];
    return NULL;
}

/* The column of `fine` holding fn(column), or NULL. */
static const char *fine_column(const tl_rollup_def *fine, tl_rollup_fn fn, const char *column)
{
    for (size_t i = 0; i < fine->n_aggs; i++) {
        const tl_rollup_agg *a = &fine->aggs[i];
        if (a->fn == fn &&
            (a->column && column ? strcmp(a->column, column) == 0 : a->column == column))
            return a->name;
    }
    return NULL;
}

/* Whether rollup d can be computed from the rows of the finer rollup `fine`
 * of the same raw table: its width a multiple, its keys among fine's, and
 * each aggregate one of fine's merged (avg from a sum and a count, m4 from
 * m4 points, a time-weighted state from states at the same keys). */
static bool derivable(const tl_rollup_def *fine, const tl_rollup_def *d)
{
    if (fine->bucket_us >= d->bucket_us || d->bucket_us % fine->bucket_us != 0) return false;
    for (size_t i = 0; i < d->keys.len; i++)
        if (!tl_strlist_contains(&fine->keys, d->keys.items[i])) return false;
    for (size_t i = 0; i < d->n_aggs; i++) {
        const tl_rollup_agg *a = &d->aggs[i];
        bool merged = a->fn == TL_ROLLUP_COUNT || a->fn == TL_ROLLUP_SUM ||
                      a->fn == TL_ROLLUP_MIN || a->fn == TL_ROLLUP_MAX;
        if (merged && fine_column(fine, a->fn, a->column) == NULL) return false;
        if (a->fn == TL_ROLLUP_AVG && (fine_column(fine, TL_ROLLUP_SUM, a->column) == NULL ||
                                       fine_column(fine, TL_ROLLUP_COUNT, a->column) == NULL))
            return false;
        /* States of one series merge; a subset of the keys would mix
         * series whose states overlap in time. */
        bool state = a->fn == TL_ROLLUP_TWM || a->fn == TL_ROLLUP_TWM_LINEAR;
        if ((a->fn == TL_ROLLUP_M4 || state) && fine_column(fine, a->fn, a->column) == NULL)
            return false;
        if (state && d->keys.len != fine->keys.len) return false;
        if (!merged && a->fn != TL_ROLLUP_AVG && a->fn != TL_ROLLUP_M4 && !state) return false;
    }
    return true;
}

/* Appends the SQL of one aggregate of d computed from the rows of `fine`. */
static int append_merged(tl_buf *b, const tl_rollup_agg *a, const tl_rollup_def *fine,
                         const char *sum_type)
{
    char *src = tl_sql_ident(a->fn == TL_ROLLUP_AVG ? fine_column(fine, TL_ROLLUP_SUM, a->column)
                                                    : fine_column(fine, a->fn, a->column));
    char *cnt =
        a->fn == TL_ROLLUP_AVG ? tl_sql_ident(fine_column(fine, TL_ROLLUP_COUNT, a->column)) : NULL;
    int rc = -1;
    if (src && (a->fn != TL_ROLLUP_AVG || cnt)) {
        if (a->fn == TL_ROLLUP_COUNT)
            rc = tl_buf_printf(b, "CAST(sum(%s) AS BIGINT)", src);
        else if (a->fn == TL_ROLLUP_SUM)
            rc = sum_type ? tl_buf_printf(b, "CAST(sum(%s) AS %s)", src, sum_type)
                          : tl_buf_printf(b, "sum(%s)", src);
        else if (a->fn == TL_ROLLUP_AVG)
            rc = tl_buf_printf(b, "CAST(sum(%s) / nullif(sum(%s), 0) AS DOUBLE)", src, cnt);
        else if (a->fn == TL_ROLLUP_M4)
            rc = tl_buf_printf(b, "m4(%s)", src);
        else if (a->fn == TL_ROLLUP_TWM || a->fn == TL_ROLLUP_TWM_LINEAR)
            rc = tl_buf_printf(b, "time_weighted_state(%s%s)", src,
                               a->fn == TL_ROLLUP_TWM_LINEAR ? ", 'linear'" : "");
        else
            rc = tl_buf_printf(b, "%s(%s)", a->fn == TL_ROLLUP_MIN ? "min" : "max", src);
    }
    free(src);
    free(cnt);
    return rc;
}

/* Appends the SQL of one aggregate, as the reference stores it. */
static int append_agg(tl_buf *b, const tl_rollup_agg *a, const tl_table *raw, const char *time_q,
                      const tl_rollup_def *fine)
{
    char *col = a->column ? tl_sql_ident(a->column) : NULL;
    char *as = tl_sql_ident(a->name);
    const tl_ice_field *f = a->column ? raw_field(raw, a->column) : NULL;
    bool integer = f && (f->type.id == TL_ICE_INT || f->type.id == TL_ICE_LONG);
    bool floating = f && (f->type.id == TL_ICE_FLOAT || f->type.id == TL_ICE_DOUBLE);
    int rc = -1;
    if (as == NULL || (a->column && col == NULL)) goto done;
    if (fine) {
        rc = append_merged(b, a, fine, integer ? "BIGINT" : floating ? "DOUBLE" : NULL);
        if (rc == 0) rc = tl_buf_printf(b, " AS %s", as);
        goto done;
    }
    switch (a->fn) {
    case TL_ROLLUP_COUNT:
        rc = tl_buf_printf(b, "CAST(count(%s) AS BIGINT)", col ? col : "*");
        break;
    case TL_ROLLUP_SUM:
        rc = tl_buf_printf(b,
                           integer    ? "CAST(sum(%s) AS BIGINT)"
                           : floating ? "CAST(sum(%s) AS DOUBLE)"
                                      : "sum(%s)",
                           col);
        break;
    case TL_ROLLUP_MIN:
    case TL_ROLLUP_MAX:
        rc = tl_buf_printf(b, "%s(%s)", a->fn == TL_ROLLUP_MIN ? "min" : "max", col);
        break;
    case TL_ROLLUP_AVG:
        rc = tl_buf_printf(b, "CAST(avg(%s) AS DOUBLE)", col);
        break;
    case TL_ROLLUP_FIRST:
    case TL_ROLLUP_LAST:
        /* Ties on time broken by the value, as sql_rewrite.h does. */
        rc = tl_buf_printf(b, "%s(%s ORDER BY %s, %s NULLS %s)",
                           a->fn == TL_ROLLUP_FIRST ? "first" : "last", col, time_q, col,
                           a->fn == TL_ROLLUP_FIRST ? "LAST" : "FIRST");
        break;
    case TL_ROLLUP_M4:
        rc = tl_buf_printf(b, "m4(%s, %s)", time_q, col);
        break;
    case TL_ROLLUP_TWM:
    case TL_ROLLUP_TWM_LINEAR:
        rc = tl_buf_printf(b, "time_weighted_state(%s, %s%s)", time_q, col,
                           a->fn == TL_ROLLUP_TWM_LINEAR ? ", 'linear'" : "");
        break;
    }
    if (rc == 0) rc = tl_buf_printf(b, " AS %s", as);
done:
    free(col);
    free(as);
    return rc;
}

/* A timestamp literal of t (µs since the epoch, UTC). */
static int append_time(tl_buf *b, int64_t t)
{
    time_t secs = (time_t)floor_div(t, TL_MICROS_PER_SECOND);
    int64_t us = t - (int64_t)secs * TL_MICROS_PER_SECOND;
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL) return -1;
    return tl_buf_printf(b, "TIMESTAMPTZ '%04d-%02d-%02d %02d:%02d:%02d.%06" PRId64 "+00'",
                         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                         tm.tm_sec, us);
}

/* The SELECT of d's rows from the raw table, or (fine non-NULL) from the
 * rows of the finer rollup fine_t, restricted to the ranges. */
static char *select_sql(const tl_rollup_def *d, const tl_table *raw, const int64_t *ranges,
                        size_t n, const tl_rollup_def *fine, const tl_table *fine_t)
{
    tl_buf b = {0};
    const tl_table *from = fine ? fine_t : raw;
    char *time_q = tl_sql_ident(fine ? fine->bucket_column : raw->contract.time_column);
    char *ns = tl_sql_ident(from->name.namespace_), *tbl = tl_sql_ident(from->name.table);
    char *bucket = tl_sql_ident(d->bucket_column);
    int rc = time_q && ns && tbl && bucket ? tl_buf_append_str(&b, "SELECT ") : -1;
    for (size_t i = 0; rc == 0 && i < d->keys.len; i++) {
        char *k = tl_sql_ident(d->keys.items[i]);
        rc = k ? tl_buf_printf(&b, "%s, ", k) : -1;
        free(k);
    }
    if (rc == 0)
        rc = tl_buf_printf(&b, "time_bucket(INTERVAL '%" PRId64 " microseconds', %s) AS %s",
                           d->bucket_us, time_q, bucket);
    for (size_t i = 0; rc == 0 && i < d->n_aggs; i++)
        rc = tl_buf_append_str(&b, ", ") || append_agg(&b, &d->aggs[i], raw, time_q, fine);
    if (rc == 0) rc = tl_buf_printf(&b, " FROM %s.%s", ns, tbl);
    /* At the handle's snapshot, the one the refresh records: a commit
     * since (an append, a rollback) is not read. Unless that snapshot was
     * taken under another schema than the current one (a rollback past a
     * schema change): time travel would read it under its own schema, and
     * the aggregates name the current one's columns. The table as it is
     * then, whose snapshot is the handle's unless a commit came since, in
     * which case the buckets read are computed again at the next refresh. */
    const tl_ice_snapshot *at = tl_ice_metadata_current_snapshot(from->md);
    if (at && at->has_schema_id && at->schema_id != from->md->current_schema_id) at = NULL;
    if (rc == 0 && at) rc = tl_buf_printf(&b, " AT (VERSION => %" PRId64 ")", at->snapshot_id);
    if (rc == 0 && ranges) rc = tl_buf_append_str(&b, n ? " WHERE " : " WHERE false");
    for (size_t i = 0; rc == 0 && ranges && i < n; i++)
        rc = tl_buf_printf(&b, "%s(%s >= ", i ? " OR " : "", time_q) ||
             append_time(&b, ranges[2 * i]) || tl_buf_printf(&b, " AND %s < ", time_q) ||
             append_time(&b, ranges[2 * i + 1]) || tl_buf_append_str(&b, ")");
    if (rc == 0) rc = tl_buf_append_str(&b, " GROUP BY ");
    for (size_t i = 0; rc == 0 && i <= d->keys.len; i++)
        rc = tl_buf_printf(&b, "%s%zu", i ? ", " : "", i + 1);
    free(time_q);
    free(ns);
    free(tbl);
    free(bucket);
    if (rc != 0) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

tl_status tl_rollup_compute(tl_lake *lake, const tl_rollup_def *d, const tl_table *raw,
                            const int64_t *ranges, size_t n, struct ArrowArrayStream *out,
                            tl_error *err)
{
    return tl_rollup_compute_from(lake, d, raw, ranges, n, NULL, NULL, out, err);
}

tl_status tl_rollup_compute_from(tl_lake *lake, const tl_rollup_def *d, const tl_table *raw,
                                 const int64_t *ranges, size_t n, const tl_rollup_def *fine,
                                 const tl_table *fine_t, struct ArrowArrayStream *out,
                                 tl_error *err)
{
    char *sql = select_sql(d, raw, ranges, n, fine, fine_t);
    if (sql == NULL) return tl_error_nomem(err);
    /* The raw table's rows themselves, not what a rollup (maybe this one)
     * holds of them; its snapshot is checked in the store. */
    const char *settings[] = {"version-check-interval", "0s", "rollup-routing", "false", NULL};
    tl_sql_options o = {.namespace_ = raw->name.namespace_, .settings = settings};
    tl_status st = tl_lake_query(lake, sql, &o, out, NULL, err);
    free(sql);
    return st;
}

tl_status tl_rollup_commit(tl_table *rollup, struct ArrowArrayStream *rows, bool replace,
                           const tl_ice_snapshot *source, int64_t *written, tl_error *err)
{
    char id[24], seq[24];
    snprintf(id, sizeof id, "%" PRId64, source->snapshot_id);
    snprintf(seq, sizeof seq, "%" PRId64, source->sequence_number);
    const char *own[] = {TL_ROLLUP_SOURCE_SNAPSHOT_KEY, id, TL_ROLLUP_SOURCE_SEQUENCE_KEY, seq,
                         NULL};
    tl_append_options o = {.maintain = -1};
    tl_append_result r;
    TL_TRY(tl_table_commit_rows(rollup, rows, &o, replace, own, &r, err));
    *written = r.rows;
    return TL_OK;
}

/* ---- Which buckets changed ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_range(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts and merges the n ranges (pairs) in place, then merges the closest
 * until at most MAX_RANGES are left. */
static size_t merge_ranges(int64_t *r, size_t n)
{
    if (n == 0) return 0;
    qsort(r, n, 2 * sizeof *r, cmp_range);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (r[2 * i] <= r[2 * m + 1]) {
            if (r[2 * i + 1] > r[2 * m + 1]) r[2 * m + 1] = r[2 * i + 1];
        } else {
            m++;
            r[2 * m] = r[2 * i];
            r[2 * m + 1] = r[2 * i + 1];
        }
    }
    for (m++; m > MAX_RANGES; m--) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < m; i++)
            if (r[2 * i + 2] - r[2 * i + 1] < r[2 * best + 2] - r[2 * best + 1]) best = i;
        r[2 * best + 1] = r[2 * best + 3];
        memmove(&r[2 * best + 2], &r[2 * best + 4], (m - best - 2) * 2 * sizeof *r);
    }
    return m;
}

static const tl_ice_snapshot *ancestor(const tl_ice_metadata *md, const tl_ice_snapshot *s,
                                       int64_t id)
{
    for (; s; s = tl_ice_metadata_parent(md, s))
        if (s->snapshot_id == id) return s;
    return NULL;
}

/* The bucket-aligned time ranges of the files in `now` but not in `then`;
 * *full when one has no time bounds. */
static tl_status new_file_ranges(const tl_table *raw, const tl_rollup_def *d,
                                 const tl_live_files *then, const tl_live_files *now, int64_t **out,
                                 size_t *n, bool *full, tl_error *err)
{
    char **old = calloc(then->n + 1, sizeof *old);
    int64_t *r = calloc(2 * now->n + 2, sizeof *r);
    if (old == NULL || r == NULL) {
        free(old);
        free(r);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < then->n; i++) old[i] = then->files[i].file.file_path;
    qsort(old, then->n, sizeof *old, cmp_str);
    size_t k = 0;
    for (size_t i = 0; i < now->n && !*full; i++) {
        char *path = now->files[i].file.file_path;
        if (bsearch(&path, old, then->n, sizeof *old, cmp_str)) continue;
        int64_t lo, hi;
        if (!tl_scan_time_bounds(raw, &now->files[i].file, &lo, &hi)) {
            *full = true;
            break;
        }
        r[2 * k] = floor_div(lo, d->bucket_us) * d->bucket_us;
        r[2 * k + 1] = (floor_div(hi, d->bucket_us) + 1) * d->bucket_us;
        k++;
    }
    free(old);
    *n = merge_ranges(r, k);
    *out = r;
    return TL_OK;
}

/* The ranges to compute again since d's source snapshot; *full when every
 * bucket must be (never refreshed, or the snapshot left the history). */
static tl_status changed_ranges(const tl_table *raw, const tl_rollup_def *d,
                                const tl_ice_snapshot *cur, int64_t **out, size_t *n, bool *full,
                                tl_error *err)
{
    *out = NULL;
    *n = 0;
    *full = true;
    const tl_ice_snapshot *old =
        d->source_snapshot ? ancestor(raw->md, cur, d->source_snapshot) : NULL;
    if (old == NULL) return TL_OK;
    tl_live_files then = {0}, now = {0};
    tl_error ignored = {0};
    /* An expired snapshot whose manifests are gone: start over. */
    if (tl_live_files_read(raw, old, &then, &ignored) != TL_OK) return TL_OK;
    tl_status st = tl_live_files_read(raw, cur, &now, err);
    *full = false;
    if (st == TL_OK) st = new_file_ranges(raw, d, &then, &now, out, n, full, err);
    tl_live_files_free(&then);
    tl_live_files_free(&now);
    return st;
}

/* ---- Refresh ---- */

typedef struct listed {
    tl_table *t;
    tl_rollup_def d;
} listed;

/* The raw snapshot a rollup (its handle's version) was refreshed from. */
static int64_t source_of(const tl_table *rollup)
{
    return tl_rollup_source_snapshot(rollup->md, NULL);
}

static tl_status open_source(tl_table *rollup, const tl_rollup_def *d, tl_table **raw,
                             tl_error *err)
{
    tl_status st = tl_lake_open_table(rollup->lake, d->source, raw, err);
    if (st == TL_ERR_NOT_FOUND)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "rollup %s: its raw table %s does not exist",
                            rollup->name.full, d->source);
    return st;
}

/* Refreshes rollup d from raw (its source, opened by the caller); `finer`
 * (may be NULL) is a finer rollup it can be computed from, used when it was
 * refreshed from the same raw snapshot. */
static tl_status refresh_def(tl_table *rollup, const tl_rollup_def *d, const tl_table *raw,
                             const listed *finer, int64_t *rows, tl_error *err)
{
    *rows = 0;
    const tl_ice_snapshot *cur = tl_ice_metadata_current_snapshot(raw->md);
    int64_t *ranges = NULL;
    size_t n = 0;
    bool full = true;
    tl_status st = TL_OK;
    if (cur && cur->snapshot_id != d->source_snapshot)
        st = changed_ranges(raw, d, cur, &ranges, &n, &full, err);
    struct ArrowArrayStream rows_stream = {0};
    bool from_finer = finer && cur && source_of(finer->t) == cur->snapshot_id;
    if (st == TL_OK && cur && cur->snapshot_id != d->source_snapshot)
        st = tl_rollup_compute_from(rollup->lake, d, raw, full ? NULL : ranges, n,
                                    from_finer ? &finer->d : NULL, from_finer ? finer->t : NULL,
                                    &rows_stream, err);
    if (st == TL_OK && rows_stream.release)
        st = tl_rollup_commit(rollup, &rows_stream, full, cur, rows, err);
    free(ranges);
    return st;
}

static tl_status open_rollups(tl_table *t, listed **out, size_t *n, tl_error *err);

static void close_rollups(listed *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tl_table_close(l[i].t);
        tl_rollup_def_free(&l[i].d);
    }
    free(l);
}

tl_status tl_rollup_refresh(tl_table *rollup, int64_t *rows, tl_error *err)
{
    tl_rollup_def d;
    TL_TRY(tl_rollup_def_parse(rollup->md, rollup->name.full, &d, err));
    tl_table *raw = NULL;
    listed *l = NULL;
    size_t n = 0;
    tl_status st = open_source(rollup, &d, &raw, err);
    if (st == TL_OK) st = open_rollups(raw, &l, &n, err);
    /* The widest finer sibling it derives from: used when that one is
     * fresh at the raw table's snapshot (refresh_def checks). */
    const listed *finer = NULL;
    for (size_t i = 0; st == TL_OK && i < n; i++)
        if (strcmp(l[i].t->name.full, rollup->name.full) != 0 && derivable(&l[i].d, &d))
            finer = &l[i];
    if (st == TL_OK) st = refresh_def(rollup, &d, raw, finer, rows, err);
    close_rollups(l, n);
    tl_table_close(raw);
    tl_rollup_def_free(&d);
    return st;
}

static int cmp_width(const void *a, const void *b)
{
    int64_t x = ((const listed *)a)->d.bucket_us, y = ((const listed *)b)->d.bucket_us;
    return (x > y) - (x < y);
}

/* Whether a rollup is due for an inline refresh: its interval has passed
 * since its last commit. */
static bool due(const listed *l)
{
    if (l->d.refresh_interval_us <= 0) return false;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(l->t->md);
    int64_t last_us = s ? s->timestamp_ms * 1000 : 0;
    return tl_now_micros() - last_us >= l->d.refresh_interval_us;
}

/* Opens the rollups t lists (those gone or no longer rollups are left out),
 * narrowest first. */
static tl_status open_rollups(tl_table *t, listed **out, size_t *n, tl_error *err)
{
    tl_strlist names = {0};
    *out = NULL;
    *n = 0;
    tl_status st = tl_rollup_list(t->md, &names, err);
    listed *l = st == TL_OK ? calloc(names.len + 1, sizeof *l) : NULL;
    if (st == TL_OK && l == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < names.len; i++) {
        tl_error ignored = {0};
        if (tl_lake_open_table(t->lake, names.items[i], &l[*n].t, &ignored) != TL_OK) continue;
        if (tl_rollup_def_parse(l[*n].t->md, names.items[i], &l[*n].d, &ignored) != TL_OK ||
            strcmp(l[*n].d.source, t->name.full) != 0) {
            tl_table_close(l[*n].t);
            continue;
        }
        (*n)++;
    }
    tl_strlist_free(&names);
    if (l) qsort(l, *n, sizeof *l, cmp_width);
    *out = l;
    return st;
}

tl_status tl_rollups_refresh_of(tl_table *t, bool inline_mode, tl_maintain_report *r, tl_error *err)
{
    if (tl_ice_metadata_property(t->md, TL_ROLLUPS_KEY) == NULL) return TL_OK;
    listed *l = NULL;
    size_t n = 0;
    tl_table *raw = NULL; /* the latest version, opened once for all of them */
    tl_status st = open_rollups(t, &l, &n, err);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        if (inline_mode && !due(&l[i])) continue;
        int64_t rows = 0;
        const listed *finer = NULL; /* the widest narrower one it derives from */
        for (size_t j = 0; j < i; j++)
            if (derivable(&l[j].d, &l[i].d)) finer = &l[j];
        if (raw == NULL) st = open_source(l[i].t, &l[i].d, &raw, err);
        if (st == TL_OK) st = refresh_def(l[i].t, &l[i].d, raw, finer, &rows, err);
        if (st != TL_OK) tl_error_prefix(err, "%s", l[i].t->name.full);
        r->rollup_rows += rows;
        r->rollups_refreshed += rows > 0;
    }
    close_rollups(l, n);
    tl_table_close(raw);
    return st;
}

void tl_rollups_refresh_inline(tl_table *t, tl_append_result *out)
{
    if (tl_ice_metadata_property(t->md, TL_ROLLUPS_KEY) == NULL) return;
    tl_maintain_report r = {0};
    tl_error err = {0};
    tl_status st = tl_rollups_refresh_of(t, true, &r, &err);
    if (r.rollup_rows > 0 || r.rollups_refreshed > 0) {
        out->maintained = 1;
        out->maintenance.rollups_refreshed += r.rollups_refreshed;
        out->maintenance.rollup_rows += r.rollup_rows;
    }
    if (st != TL_OK) {
        tl_error_prefix(&err, "refreshing rollups");
        memcpy(out->maintenance_error, err.message, sizeof out->maintenance_error);
    }
}
