/* tl_lake_latest: the newest row of every series, read from the table's
 * last-value index; a table without one (empty, or written before indexes
 * existed) gets the same rows computed over its data files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/latest_index.h"
#include "query/query_cache.h"
#include "query/scan.h"
#include "query/sql_run.h"

/* The newest row per series over the (deduplicated) data, sorted by key. */
static tl_status computed_sql(tl_query_engine *e, const tl_table *t, tl_buf *sql, tl_error *err)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const tl_live_files *lf = NULL;
    tl_scan_stats stats = {0};
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    bool ok = tl_buf_append_str(sql, "SELECT * FROM (") == 0;
    tl_status st =
        ok ? tl_scan_sql(e, t, lf, NULL, 0, true, sql, &stats, err) : tl_error_nomem(err);
    TL_TRY(st);
    tl_buf keys = {0};
    for (size_t i = 0; ok && i < c->series_key.len; i++) {
        char *id = tl_sql_ident(s->fields[c->series_index[i]].name);
        ok = id && tl_buf_printf(&keys, "%s%s", i ? ", " : "", id) == 0;
        free(id);
    }
    char *time = tl_sql_ident(s->fields[c->time_index].name);
    char *ingest = c->ingest_column ? tl_sql_ident(c->ingest_column) : NULL;
    ok = ok && time && tl_buf_append_byte(&keys, 0) == 0;
    const char *k = keys.data ? (const char *)keys.data : "";
    if (ok && c->series_key.len)
        ok = tl_buf_printf(sql,
                           ") QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s DESC%s%s%s) = "
                           "1 ORDER BY %s",
                           k, time, ingest ? ", " : "", ingest ? ingest : "", ingest ? " DESC" : "",
                           k) == 0;
    else if (ok)
        ok = tl_buf_printf(sql, ") ORDER BY %s DESC%s%s%s LIMIT 1", time, ingest ? ", " : "",
                           ingest ? ingest : "", ingest ? " DESC" : "") == 0;
    free(time);
    free(ingest);
    tl_buf_free(&keys);
    return ok ? TL_OK : tl_error_nomem(err);
}

/* Reads the index; one that is gone or is not an index is bypassed (*url
 * cleared) with a warning, as appends rebuild it: a store that fails (or no
 * memory) is an error, not a reason to read every file. */
static tl_status from_index(const tl_table *t, const char **url, bool *done,
                            struct ArrowArrayStream *out, char *warning, tl_error *err)
{
    tl_error why = {0};
    tl_status st = tl_latest_from_index(t, *url, done, out, &why);
    if (st == TL_OK) return TL_OK;
    if (st != TL_ERR_NOT_FOUND && st != TL_ERR_INVALID) {
        *err = why;
        return st;
    }
    snprintf(warning, TL_ERROR_MESSAGE_MAX,
             "%.200s: %.600s; computed the newest rows from the data files instead (the next "
             "append or `timelake maintain` rebuilds the index)",
             t->name.full, why.message);
    *url = NULL;
    return TL_OK;
}

tl_status tl_lake_latest_report(tl_lake *lake, const char *table, struct ArrowArrayStream *out,
                                tl_latest_report *report, tl_error *err)
{
    char warning[TL_ERROR_MESSAGE_MAX] = "";
    if (report) report->warning[0] = 0;
    if (table == NULL) return tl_error_set(err, TL_ERR_INVALID, "latest needs a table name");
    tl_qname qn;
    TL_TRY(tl_qname_parse(table, "default", &qn, err));
    tl_table *t = NULL;
    TL_TRY(tl_table_load(lake, &qn, 0, &t, err));
    tl_status st = TL_OK;
    if (t->contract.time_index < 0)
        st = tl_error_set(err, TL_ERR_INVALID, "%s has no time column: it has no newest rows",
                          qn.full);
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    const char *url = s ? tl_ice_snapshot_summary(s, TL_SUMMARY_LVI) : NULL;
    /* The index answers alone, without starting the SQL engine: what makes
     * a cold latest() cheap. */
    bool done = false;
    if (st == TL_OK && url) st = from_index(t, &url, &done, out, warning, err);
    if (st == TL_OK && done && report) memcpy(report->warning, warning, sizeof warning);
    if (st != TL_OK || done) {
        tl_table_close(t);
        return st;
    }
    tl_query_engine *e = NULL;
    st = tl_query_engine_get(lake, &e, err);
    tl_buf sql = {0};
    if (st == TL_OK) st = url ? tl_query_lvi_sql(e, t, &sql, err) : computed_sql(e, t, &sql, err);
    if (st == TL_OK && tl_buf_append_byte(&sql, 0) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_query_run(e, (const char *)sql.data, out, err);
    if (st == TL_OK && report) memcpy(report->warning, warning, sizeof warning);
    tl_buf_free(&sql);
    tl_table_close(t);
    return st;
}

tl_status tl_lake_latest(tl_lake *lake, const char *table, struct ArrowArrayStream *out,
                         tl_error *err)
{
    return tl_lake_latest_report(lake, table, out, NULL, err);
}
