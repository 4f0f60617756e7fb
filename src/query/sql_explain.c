#include "query/sql_explain.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "query/query_cache.h"
#include "query/sql_run.h"

typedef struct rows {
    tl_buf values; /* "('type', 'plan'), ..." */
    bool oom;
} rows;

static void add(rows *r, const char *type, const char *plan)
{
    char *t = tl_sql_literal(type), *p = tl_sql_literal(plan);
    r->oom |= t == NULL || p == NULL ||
              tl_buf_printf(&r->values, "%s(%s, %s)", r->values.len ? ", " : "", t, p) != 0;
    free(t);
    free(p);
}

/* The filters the query puts on table t (all its references'). */
static const tl_sql_ref *ref_of(const tl_sql_plan *plan, const tl_table *t)
{
    for (size_t i = 0; plan && i < plan->n_refs; i++)
        if (plan->refs[i].t == t) return &plan->refs[i];
    return NULL;
}

/* What one table's view reads, as text. */
static tl_status scan_text(tl_query_engine *e, const tl_sql_explain_input *x,
                           const tl_sql_table_read *read, tl_buf *b, tl_error *err)
{
    const tl_table *t = read->t;
    const tl_ice_snapshot *snap = tl_ice_metadata_current_snapshot(t->md);
    int rc = t->pinned_snapshot
                 ? tl_buf_printf(b,
                                 "%s as of snapshot %" PRId64
                                 " (time travel; the table is at version %" PRId64 ")",
                                 t->name.full, t->pinned_snapshot, t->version)
                 : tl_buf_printf(b, "%s at version %" PRId64, t->name.full, t->version);
    if (snap && !t->pinned_snapshot)
        rc |= tl_buf_printf(b, ", snapshot %" PRId64, snap->snapshot_id);
    if (read->note) rc |= tl_buf_printf(b, " (%s)", read->note);
    if (read->from_index) {
        const char *url = tl_ice_snapshot_summary(snap, TL_SUMMARY_LVI);
        rc |= tl_buf_printf(b,
                            ": the newest row of each series, answered from the last-value "
                            "index %s",
                            url ? url : "");
        return rc == 0 ? TL_OK : tl_error_nomem(err);
    }
    const tl_scan_stats *s = &read->stats;
    rc |= tl_buf_printf(b,
                        ": %" PRId64 " of %" PRId64 " files, %" PRId64 " of %" PRId64
                        " row groups, %" PRId64 " bytes read",
                        s->files_read, s->files_total, s->row_groups_read, s->row_groups_total,
                        s->bytes_read);
    const tl_live_files *lf = NULL;
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    const tl_sql_ref *ref = ref_of(x->plan, t);
    const tl_scan_filter *filters = read->filters ? read->filters : ref ? ref->filters : NULL;
    size_t n_filters = read->filters ? read->n_filters : ref ? ref->n_filters : 0;
    for (size_t i = 0; rc == 0 && i < lf->n; i++) {
        const tl_ice_data_file *f = &lf->files[i].file;
        if (n_filters && !tl_scan_file_needed(t, f, filters, n_filters)) continue;
        rc |= tl_buf_printf(b, "\n  %s (%" PRId64 " rows)", f->file_path, f->record_count);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static void topk_text(const tl_sql_topk *k, tl_buf *b, bool *oom)
{
    const char *end = k->desc ? "newest" : "oldest";
    *oom |= tl_buf_printf(b, "the %s %" PRId64 " rows (or groups) by %s: first over a window of ",
                          end, k->need, k->width_us > 1 ? "bucket" : "time") != 0;
    if (k->width_us > 1)
        *oom |= tl_buf_printf(b, "whole buckets of %" PRId64 " microseconds", k->width_us) != 0;
    else
        *oom |= tl_buf_append_str(b, "times") != 0;
    *oom |= tl_buf_printf(b,
                          " at the %s end of the time range, widened sixteenfold up to four "
                          "times while it holds fewer; then over all the files above",
                          end) != 0;
}

/* DuckDB's EXPLAIN [ANALYZE] of the query: its plan text. */
static tl_status duckdb_plan(tl_query_engine *e, const char *query, bool analyze, rows *r,
                             tl_error *err)
{
    char *sql = tl_strdup_printf("EXPLAIN %s%s", analyze ? "ANALYZE " : "", query);
    if (sql == NULL) return tl_error_nomem(err);
    duckdb_result res;
    tl_status st = TL_OK;
    if (duckdb_query(e->conn, sql, &res) == DuckDBError) {
        st = tl_query_error(err, duckdb_result_error(&res));
    } else {
        tl_buf text = {0};
        for (idx_t i = 0; i < duckdb_row_count(&res); i++) {
            char *v = duckdb_value_varchar(&res, 1, i);
            r->oom |= tl_buf_printf(&text, "%s%s", text.len ? "\n" : "", v ? v : "") != 0;
            duckdb_free(v);
        }
        r->oom |= tl_buf_append_byte(&text, 0) != 0;
        if (!r->oom)
            add(r, analyze ? "Plan with Metrics" : "physical_plan", (const char *)text.data);
        tl_buf_free(&text);
    }
    duckdb_destroy_result(&res);
    free(sql);
    return st;
}

tl_status tl_sql_explain(tl_query_engine *e, const tl_sql_explain_input *x,
                         struct ArrowArrayStream *out, tl_error *err)
{
    rows r = {{0}, false};
    tl_status st = TL_OK;
    if (strcmp(x->original, x->query) != 0) add(&r, "rewritten_query", x->query);
    for (size_t i = 0; st == TL_OK && i < x->n_reads; i++) {
        tl_buf text = {0};
        st = scan_text(e, x, &x->reads[i], &text, err);
        r.oom |= tl_buf_append_byte(&text, 0) != 0;
        if (st == TL_OK && !r.oom) add(&r, "timelake_scan", (const char *)text.data);
        tl_buf_free(&text);
    }
    if (st == TL_OK && x->topk) {
        tl_buf text = {0};
        topk_text(x->topk, &text, &r.oom);
        r.oom |= tl_buf_append_byte(&text, 0) != 0;
        if (!r.oom) add(&r, "timelake_topk", (const char *)text.data);
        tl_buf_free(&text);
    }
    if (st == TL_OK && x->routing) add(&r, "timelake_rollup", x->routing);
    if (st == TL_OK && x->route_cost) add(&r, "timelake_route_cost", x->route_cost);
    if (st == TL_OK && x->preagg) add(&r, "timelake_preagg", x->preagg);
    if (st == TL_OK) st = duckdb_plan(e, x->query, x->analyze, &r, err);
    if (st == TL_OK && r.oom) st = tl_error_nomem(err);
    char *sql = st == TL_OK ? tl_strdup_printf("SELECT * FROM (VALUES %s) AS e(plan_type, plan)",
                                               (const char *)r.values.data)
                            : NULL;
    if (st == TL_OK && sql == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_query_run(e, sql, out, err);
    free(sql);
    tl_buf_free(&r.values);
    return st;
}
