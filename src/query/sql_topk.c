#include "query/sql_topk.h"

#include <stdlib.h>
#include <string.h>

#include "query/query_cache.h"
#include "query/result_stream.h"
#include "query/rows_function.h"
#include "query/time_floor.h"

#define ATTEMPTS 4
#define WIDEN 16

/* The time range of the files a query's filter leaves, and the file at the
 * end the window starts from (for the density of its rows). */
typedef struct extent {
    int64_t lo, hi;
    int64_t edge_rows, edge_span;
} extent;

/* False when no file is left or one lacks time bounds (then no window). */
static bool data_extent(const tl_table *t, const tl_live_files *lf, const tl_scan_filter *f,
                        bool desc, extent *x)
{
    bool any = false;
    for (size_t i = 0; i < lf->n; i++) {
        const tl_ice_data_file *df = &lf->files[i].file;
        if (!tl_scan_file_needed(t, df, f, 1)) continue;
        int64_t lo, hi;
        if (!tl_scan_time_bounds(t, df, &lo, &hi) || lo > hi) return false;
        bool edge = !any || (desc ? hi > x->hi : lo < x->lo);
        if (edge) {
            x->edge_rows = df->record_count;
            x->edge_span = hi - lo;
        }
        x->lo = any && x->lo < lo ? x->lo : lo;
        x->hi = any && x->hi > hi ? x->hi : hi;
        any = true;
    }
    return any;
}

/* The first window's length: k buckets, or more when the edge file's rows
 * are sparser than that (twice their mean spacing per row wanted). */
static int64_t first_span(const tl_sql_topk *k, const extent *x)
{
    double per_row = x->edge_rows > 0 ? ((double)x->edge_span + 1) / (double)x->edge_rows : 1;
    double est = per_row * (double)k->need * 2, buckets = (double)k->width_us * (double)k->need;
    double span = est > buckets ? est : buckets;
    return span >= 9e18 ? INT64_MAX : (int64_t)span;
}

/* Where the window starts: the newest time the files can hold, capped by
 * the query's upper bound (DESC), or the oldest, by its lower bound. */
static int64_t edge_of(const tl_sql_topk *k, const tl_scan_filter *f, const extent *x)
{
    if (k->desc) return f->has_hi && f->hi < x->hi ? f->hi : x->hi;
    return f->has_lo && f->lo > x->lo ? f->lo : x->lo;
}

/* The window of `span` microseconds or more, in whole buckets, at the end
 * of the query's range: [*lo, INT64_MAX] for DESC, [INT64_MIN, *hi] for
 * ASC. False when it would hold the whole range (the query itself then). */
static bool window(const tl_sql_topk *k, const tl_scan_filter *f, const extent *x, int64_t span,
                   int64_t *lo, int64_t *hi)
{
    int64_t w = k->width_us, buckets = span / w + (span % w != 0), edge = edge_of(k, f, x), rel, b;
    int64_t len;
    if (__builtin_sub_overflow(edge, k->origin_us, &rel) || !tl_time_floor_exact(rel, w, &b) ||
        __builtin_add_overflow(b, k->origin_us, &b))
        return false;
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    if (k->desc) {
        if (__builtin_mul_overflow(buckets - 1, w, &len) || __builtin_sub_overflow(b, len, lo))
            return false;
        return *lo > x->lo && !(f->has_lo && *lo <= f->lo);
    }
    if (__builtin_mul_overflow(buckets, w, &len) || __builtin_add_overflow(b, len - 1, hi))
        return false;
    return *hi < x->hi && !(f->has_hi && *hi >= f->hi);
}

/* The next span after a window [lo, hi] of `span` found too few rows:
 * sixteen times as long, and at least reaching past a gap in the data into
 * the nearest file beyond the window (by `first`). */
static int64_t wider(const tl_table *t, const tl_live_files *lf, const tl_scan_filter *f,
                     const tl_sql_topk *k, int64_t edge, int64_t lo, int64_t hi, int64_t span,
                     int64_t first)
{
    int64_t next = span > INT64_MAX / WIDEN ? INT64_MAX : span * WIDEN, reach, near = 0;
    bool any = false;
    for (size_t i = 0; i < lf->n; i++) {
        const tl_ice_data_file *df = &lf->files[i].file;
        int64_t first_t, last_t;
        if (!tl_scan_file_needed(t, df, f, 1) || !tl_scan_time_bounds(t, df, &first_t, &last_t))
            continue;
        int64_t b = k->desc ? last_t : first_t;
        if (k->desc ? b >= lo : b <= hi) continue;
        if (!any || (k->desc ? b > near : b < near)) near = b;
        any = true;
    }
    if (!any) return next;
    if (__builtin_sub_overflow(k->desc ? edge : near, k->desc ? near : edge, &reach) ||
        __builtin_add_overflow(reach, first, &reach))
        return INT64_MAX;
    return reach > next ? reach : next;
}

/* The view body: the scan of the window, and only its rows. */
static tl_status window_view(tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                             const tl_scan_filter *f, const tl_sql_topk *k, tl_buf *sql,
                             tl_scan_stats *ss, tl_error *err)
{
    const tl_ice_field *tf = &tl_ice_metadata_current_schema(t->md)->fields[t->contract.time_index];
    if (tl_buf_append_str(sql, "SELECT * FROM (") != 0) return tl_error_nomem(err);
    TL_TRY(tl_scan_sql(e, t, lf, f, 1, false, sql, ss, err));
    char *id = tl_sql_ident(tf->name);
    const char *tz = tf->type.id == TL_ICE_TIMESTAMPTZ ? "::TIMESTAMPTZ" : "";
    bool ok = id && (k->desc ? tl_buf_printf(sql, ") WHERE %s >= make_timestamp(%lld)%s", id,
                                             (long long)f->lo, tz)
                             : tl_buf_printf(sql, ") WHERE %s <= make_timestamp(%lld)%s", id,
                                             (long long)f->hi, tz)) == 0;
    free(id);
    return ok && tl_buf_append_byte(sql, 0) == 0 ? TL_OK : tl_error_nomem(err);
}

/* One attempt: *r holds the materialised result when *ran. A query DuckDB
 * rejects is left to the usual run, which reports it. */
static tl_status attempt(tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                         const tl_scan_filter *f, const tl_sql_topk *k, const char *query,
                         const char *ns, duckdb_result *r, tl_scan_stats *ss, bool *ran,
                         tl_error *err)
{
    *ran = false;
    tl_buf body = {0};
    tl_status st = window_view(e, t, lf, f, k, &body, ss, err);
    if (st == TL_OK) st = tl_query_register(e, t, (const char *)body.data, err);
    tl_buf_free(&body);
    if (st == TL_OK) st = tl_query_use_namespace(e, ns, err);
    if (st == TL_OK) {
        *ran = duckdb_query(e->conn, query, r) != DuckDBError;
        if (!*ran) duckdb_destroy_result(r);
    }
    tl_rowsets_clear(e); /* a materialised result holds its rows */
    return st;
}

/* What an attempt read; the files and row groups it looked at only for
 * the attempt that answers (each attempt looks at the same files again). */
static void add_reads(tl_scan_stats *to, tl_scan_stats from, bool totals)
{
    if (!totals) from.files_total = from.row_groups_total = 0;
    tl_scan_stats_add(to, &from);
}

tl_status tl_query_topk(tl_query_engine *e, const tl_sql_plan *plan, const tl_sql_topk *k,
                        const char *query, const char *ns, int64_t max_rows,
                        struct ArrowArrayStream *out, bool *truncated, tl_scan_stats *stats,
                        bool *answered, tl_error *err)
{
    *answered = false;
    const tl_table *t = plan->refs[0].t;
    const tl_scan_filter *qf = &plan->refs[0].filters[0];
    const tl_live_files *lf = NULL;
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    extent x = {0};
    if (!data_extent(t, lf, qf, k->desc, &x)) return TL_OK;
    int64_t first = first_span(k, &x), span = first, lo = 0, hi = 0;
    for (int i = 0; i < ATTEMPTS; i++) {
        tl_scan_filter f = *qf; /* its keys borrowed */
        if (i > 0) span = wider(t, lf, qf, k, edge_of(k, qf, &x), lo, hi, span, first);
        if (!window(k, qf, &x, span, &lo, &hi)) return TL_OK;
        if (k->desc)
            f.has_lo = true, f.lo = lo;
        else
            f.has_hi = true, f.hi = hi;
        duckdb_result r;
        bool ran;
        tl_scan_stats ss = {.exact = stats->exact};
        tl_status st = attempt(e, t, lf, &f, k, query, ns, &r, &ss, &ran, err);
        if (st != TL_OK || !ran) return st;
        bool enough = duckdb_row_count(&r) >= (idx_t)k->limit; /* OFFSET rows were there too */
        add_reads(stats, ss, enough);
        if (enough) {
            *answered = true;
            return tl_query_result_collect(&r, max_rows, out, truncated, err);
        }
        duckdb_destroy_result(&r);
    }
    return TL_OK;
}
