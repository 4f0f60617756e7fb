/* tl_lake_query (and tl_lake_sql, the same with a namespace only): resolve
 * the query's lake tables, register each as a view over its pruned (and
 * where needed deduplicated) Parquet files, or over its last-value index
 * when the query only wants the newest row per series; show its inputs as
 * temporary views; then let DuckDB run the query, within its time limit,
 * and stream its result (or its first rows) as Arrow. */
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "query/engine.h"
#include "query/local_file.h"
#include "query/projection.h"
#include "query/query_cache.h"
#include "query/result_stream.h"
#include "query/rollup.h"
#include "query/sql_count.h"
#include "query/sql_exact_where.h"
#include "query/rows_function.h"
#include "query/sql_deadline.h"
#include "query/sql_guess.h"
#include "query/sql_inputs.h"
#include "query/sql_plan.h"
#include "query/sql_explain.h"
#include "query/sql_rewrite.h"
#include "query/sql_route.h"
#include "query/sql_session.h"
#include "query/sql_statement.h"
#include "query/sql_run.h"
#include "query/statement_cache.h"
#include "query/sql_topk.h"
#include "table/settings.h"
#include "table/time_travel.h"
#include "table/version_cache.h"

/* Tables loaded ahead, on a guess, while DuckDB starts (sql_guess.h). */
#define MAX_PRELOADED 4

typedef struct lookup_ctx {
    tl_lake *lake;
    const char *ns;
    tl_table **tables;
    size_t n;
    tl_table *pre[MAX_PRELOADED]; /* loaded ahead; taken by lookup when named */
    size_t n_pre;
    const tl_sql_options *o;     /* its inputs are no lake tables; only_namespace */
    const char *const *settings; /* the session settings in force (sql_session.h) */
} lookup_ctx;

/* Loads the tables the query text seems to name (remote lakes, while the
 * engine starts in the background: the first round trip overlaps DuckDB's
 * start). Failures are left for the lookup to meet and report. */
static void preload(lookup_ctx *c, const char *query)
{
    tl_strlist names = {0};
    if (tl_sql_guess_tables(query, MAX_PRELOADED, &names) != 0) names.len = 0;
    for (size_t i = 0; i < names.len && c->n_pre < MAX_PRELOADED; i++) {
        tl_qname qn;
        if (tl_qname_parse(names.items[i], c->ns, &qn, NULL) != TL_OK) continue;
        if (tl_table_load_for_query(c->lake, &qn, c->settings, &c->pre[c->n_pre], NULL) == TL_OK)
            c->n_pre++;
    }
    tl_strlist_free(&names);
}

/* Hands over a preloaded handle of `full`, or NULL. */
static tl_table *take_preloaded(lookup_ctx *c, const char *full)
{
    for (size_t i = 0; i < c->n_pre; i++)
        if (c->pre[i] && strcmp(c->pre[i]->name.full, full) == 0) {
            tl_table *t = c->pre[i];
            c->pre[i] = NULL;
            return t;
        }
    return NULL;
}

/* SQL identifiers are case-insensitive (DuckDB's catalog and the
 * reference's both fold them) while lake table names keep their case: a
 * name no table has exactly resolves to the one table equal to it but for
 * (ASCII) case. */
static tl_status load_folded(lookup_ctx *c, const tl_qname *qn, tl_table **out, tl_error *err)
{
    char **names = NULL;
    TL_TRY(tl_lake_list_tables(c->lake, &names, err));
    const char *match = NULL;
    size_t matches = 0;
    for (char **n = names; *n; n++)
        if (strcasecmp(*n, qn->full) == 0) {
            match = *n;
            matches++;
        }
    tl_status st = TL_OK;
    tl_qname folded;
    if (matches == 0)
        st = tl_error_set(err, TL_ERR_NOT_FOUND, "table %s does not exist", qn->full);
    else if (matches > 1)
        st = tl_error_set(err, TL_ERR_INVALID,
                          "table %s is ambiguous: %zu tables differ from it only in case; "
                          "SQL cannot tell them apart",
                          qn->full, matches);
    else
        st = tl_qname_parse(match, "default", &folded, err);
    if (st == TL_OK) st = tl_table_load(c->lake, &folded, 0, out, err);
    if (st == TL_ERR_NOT_FOUND && matches == 1) /* dropped meanwhile */
        tl_error_set(err, TL_ERR_NOT_FOUND, "table %s does not exist", qn->full);
    tl_strings_free(names);
    return st;
}

static tl_status outside(const lookup_ctx *c, const tl_qname *qn, tl_error *err)
{
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "table %s is outside namespace %s: this query may read only the tables "
                        "of %s",
                        qn->full, c->ns, c->ns);
}

/* The handle of c's table t as of the snapshot `at` names: t itself when
 * that is its current snapshot, else a pinned handle kept with the others. */
static tl_status travel(lookup_ctx *c, tl_table *t, const tl_sql_at *at, tl_table **out,
                        tl_error *err)
{
    int64_t id = 0;
    tl_status st = at->kind == TL_SQL_AT_VERSION ? tl_table_snapshot_named(t, at->version, &id, err)
                                                 : tl_table_snapshot_at(t, at->us, &id, err);
    /* A handle within version-check-interval may predate a snapshot another
     * process just committed: an unknown id is looked for in the newest. */
    if (st == TL_ERR_NOT_FOUND && at->kind == TL_SQL_AT_VERSION) {
        TL_TRY(tl_table_reload(t, 0, err));
        st = tl_table_snapshot_named(t, at->version, &id, err);
    }
    TL_TRY(st);
    const tl_ice_snapshot *now = tl_ice_metadata_current_snapshot(t->md);
    *out = t;
    /* The current snapshot is the table itself, unless the schema changed
     * since it was taken (a rollback past a schema change, or a change that
     * wrote no snapshot): a snapshot reads under its own schema, as in
     * pyiceberg's scan(snapshot_id=...), while the table reads under the
     * current one. */
    if (now && now->snapshot_id == id &&
        (!now->has_schema_id || now->schema_id == t->md->current_schema_id))
        return TL_OK;
    for (size_t i = 0; i < c->n; i++)
        if (c->tables[i]->pinned_snapshot == id &&
            strcmp(c->tables[i]->name.full, t->name.full) == 0) {
            *out = c->tables[i];
            return TL_OK;
        }
    tl_table **ts = realloc(c->tables, (c->n + 1) * sizeof *ts);
    if (ts == NULL) return tl_error_nomem(err);
    c->tables = ts;
    TL_TRY(tl_table_pin(t, id, &ts[c->n], err));
    *out = ts[c->n++];
    return TL_OK;
}

static tl_status lookup(void *p, const char *schema, const char *table, const tl_sql_at *at,
                        tl_table **out, tl_error *err)
{
    lookup_ctx *c = p;
    *out = NULL;
    for (size_t i = 0; !*schema && i < c->o->inputs_len; i++)
        if (strcasecmp(c->o->inputs[i].name, table) == 0) return TL_OK; /* a temporary view */
    char *full = tl_strdup_printf("%s%s%s", schema, *schema ? "." : "", table);
    if (full == NULL) return tl_error_nomem(err);
    tl_qname qn;
    tl_status st = tl_qname_parse(full, c->ns, &qn, NULL);
    free(full);
    if (st != TL_OK) return TL_OK; /* not a name a lake table can have: DuckDB's to judge */
    if (c->o->only_namespace && strcasecmp(qn.namespace_, c->ns) != 0) return outside(c, &qn, err);
    for (size_t i = 0; i < c->n; i++)
        if (c->tables[i]->pinned_snapshot == 0 && strcmp(c->tables[i]->name.full, qn.full) == 0)
            return at ? travel(c, c->tables[i], at, out, err) : (*out = c->tables[i], TL_OK);
    tl_table **ts = realloc(c->tables, (c->n + 1) * sizeof *ts);
    if (ts == NULL) return tl_error_nomem(err);
    c->tables = ts;
    ts[c->n] = take_preloaded(c, qn.full);
    st = ts[c->n] ? TL_OK : tl_table_load_for_query(c->lake, &qn, c->settings, &ts[c->n], err);
    if (st == TL_ERR_NOT_FOUND) st = load_folded(c, &qn, &ts[c->n], err);
    TL_TRY(st);
    *out = ts[c->n++];
    if (c->o->only_namespace && strcmp((*out)->name.namespace_, c->ns) != 0)
        return outside(c, &(*out)->name, err);
    return at ? travel(c, *out, at, out, err) : TL_OK;
}

static const char *lvi_url(const tl_table *t)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    return s ? tl_ice_snapshot_summary(s, TL_SUMMARY_LVI) : NULL;
}

tl_status tl_query_lvi_sql(tl_query_engine *e, const tl_table *t, tl_buf *sql, tl_error *err)
{
    char *path = NULL;
    tl_status st = tl_query_local_file(e, t, lvi_url(t), &path, err);
    if (st != TL_OK)
        return tl_error_prefix(err, "reading the last-value index of %s", t->name.full);
    char *lit = tl_sql_literal(path);
    bool ok = lit && tl_buf_printf(sql, "SELECT * FROM read_parquet(%s", lit) == 0;
    free(path);
    free(lit);
    if (!ok) return tl_error_nomem(err);
    /* An index written under an older schema (a rollback past a schema change). */
    TL_TRY(tl_projection_option(t, sql, err));
    return tl_buf_append_str(sql, ", " TL_SCAN_OPTIONS ")") == 0 ? TL_OK : tl_error_nomem(err);
}

/* Whether the index has a null in any of `cols` (then arg_max over the data
 * would take an older row's value, and the index cannot answer). */
static tl_status index_has_nulls(tl_query_engine *e, const tl_table *t, const tl_strlist *cols,
                                 bool *out, tl_error *err)
{
    *out = false;
    if (cols->len == 0) return TL_OK;
    tl_buf sql = {0};
    bool ok = tl_buf_append_str(&sql, "SELECT count(*) FROM (") == 0;
    tl_status st = ok ? tl_query_lvi_sql(e, t, &sql, err) : tl_error_nomem(err);
    ok = st == TL_OK && tl_buf_append_str(&sql, ") WHERE false") == 0;
    for (size_t i = 0; ok && i < cols->len; i++) {
        char *id = tl_sql_ident(cols->items[i]);
        ok = id && tl_buf_printf(&sql, " OR %s IS NULL", id) == 0;
        free(id);
    }
    ok = ok && tl_buf_append_byte(&sql, 0) == 0;
    if (st == TL_OK && !ok) st = tl_error_nomem(err);
    char *n = NULL;
    if (st == TL_OK) st = tl_query_scalar_text(e, (const char *)sql.data, NULL, &n, err);
    *out = st == TL_OK && (n == NULL || strcmp(n, "0") != 0);
    free(n);
    tl_buf_free(&sql);
    return st;
}

/* Whether the index of an earlier snapshot can still be read: it is that
 * snapshot's own, exact for it, but a damaged or lost one is not rebuilt for
 * a past snapshot (the data is read instead). */
static bool index_readable(tl_query_engine *e, const tl_table *t)
{
    char *path = NULL;
    bool ok = tl_query_local_file(e, t, lvi_url(t), &path, NULL) == TL_OK &&
              access(path, R_OK) == 0; /* a local lake's own file is not fetched */
    free(path);
    return ok;
}

/* The view body of one table over all the references the query makes to it. */
static tl_status table_sql(tl_query_engine *e, const tl_table *t, const tl_sql_plan *plan,
                           tl_buf *sql, tl_scan_stats *stats, bool *from_index, tl_error *err)
{
    tl_scan_filter *filters = NULL;
    size_t n = 0;
    bool latest = true;
    tl_strlist nonnull = {0};
    bool ok = true;
    for (size_t i = 0; i < plan->n_refs; i++) {
        const tl_sql_ref *r = &plan->refs[i];
        if (r->t != t) continue;
        latest &= r->all_latest;
        for (size_t j = 0; ok && j < r->nonnull.len; j++)
            ok = tl_strlist_push(&nonnull, r->nonnull.items[j]) == 0;
        tl_scan_filter *f = realloc(filters, (n + r->n_filters + 1) * sizeof *f);
        if (f == NULL) {
            free(filters);
            tl_strlist_free(&nonnull);
            return tl_error_nomem(err);
        }
        filters = f;
        memcpy(filters + n, r->filters, r->n_filters * sizeof *f); /* borrowed */
        n += r->n_filters;
    }
    tl_status st = TL_OK;
    bool nulls = false;
    if (!ok) st = tl_error_nomem(err);
    if (st == TL_OK && latest && lvi_url(t) && t->pinned_snapshot) latest = index_readable(e, t);
    if (st == TL_OK && latest && lvi_url(t)) st = index_has_nulls(e, t, &nonnull, &nulls, err);
    tl_strlist_free(&nonnull);
    if (st != TL_OK) {
        free(filters);
        return st;
    }
    *from_index = latest && !nulls && lvi_url(t);
    if (*from_index) {
        st = tl_query_lvi_sql(e, t, sql, err);
    } else {
        const tl_live_files *lf = NULL;
        st = tl_query_live_files(e, t, &lf, err);
        if (st == TL_OK) st = tl_scan_sql(e, t, lf, filters, n, false, sql, stats, err);
    }
    free(filters);
    return st;
}

/* Past this many values, a series-key IN list prunes only with the
 * in-list-pruning setting on (the default), as the reference's reader: its
 * engine prunes shorter lists by itself. */
#define IN_LIST_PRUNING_MIN 20

/* Leaves long series-key IN lists out of pruning for tables (or a session)
 * with in-list-pruning false: every file, row group and page is then read
 * for them (DuckDB still filters the rows). */
static void apply_in_list_pruning(const tl_query_engine *e, tl_sql_plan *plan)
{
    for (size_t i = 0; i < plan->n_refs; i++) {
        tl_sql_ref *r = &plan->refs[i];
        if (tl_setting_flag(r->t->md, e->settings, "in-list-pruning", true)) continue;
        for (size_t j = 0; j < r->n_filters; j++)
            if (r->filters[j].has_keys && r->filters[j].n_keys > IN_LIST_PRUNING_MIN)
                r->filters[j].has_keys = false;
    }
}

/* Whether the plan reads t: the current handle of a table the query names
 * only AT an earlier snapshot is loaded to find that snapshot, not read. */
static bool referenced(const tl_sql_plan *plan, const tl_table *t)
{
    for (size_t i = 0; i < plan->n_refs; i++)
        if (plan->refs[i].t == t) return true;
    return plan->query == NULL; /* without time travel, every table looked up is read */
}

/* Registers the view of each of the first n tables the query looked up
 * (those of its plan: rollup routing looks up more, and registers their
 * views itself) but skip's (a raw table whose query routing rewrote); with
 * `reads` (n of them), tells what each reads, for EXPLAIN (*n_reads). */
static tl_status register_tables(tl_query_engine *e, const lookup_ctx *c, size_t n,
                                 const tl_sql_plan *plan, const tl_table *skip,
                                 tl_scan_stats *stats, tl_sql_table_read *reads, size_t *n_reads,
                                 tl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!referenced(plan, c->tables[i]) || c->tables[i] == skip) continue;
        tl_buf sql = {0};
        tl_scan_stats own = {.exact = true};
        bool from_index = false;
        tl_status st =
            table_sql(e, c->tables[i], plan, &sql, reads ? &own : stats, &from_index, err);
        if (st == TL_OK && tl_buf_append_byte(&sql, 0) != 0) st = tl_error_nomem(err);
        if (st == TL_OK) st = tl_query_register(e, c->tables[i], (const char *)sql.data, err);
        if (st == TL_OK && reads)
            reads[(*n_reads)++] = (tl_sql_table_read){
                c->tables[i], from_index, own, (char *)tl_buf_detach(&sql, NULL), NULL, 0, NULL};
        tl_buf_free(&sql);
        TL_TRY(st);
    }
    return TL_OK;
}

tl_status tl_query_run(tl_query_engine *e, const char *query, struct ArrowArrayStream *out,
                       tl_error *err)
{
    duckdb_prepared_statement ps = NULL;
    TL_TRY(tl_statement_get(e, query, &ps, err));
    duckdb_result r;
    duckdb_state ran = ps ? duckdb_execute_prepared(ps, &r) : duckdb_query(e->conn, query, &r);
    if (ran == DuckDBError) {
        tl_status st = tl_query_error(err, duckdb_result_error(&r));
        duckdb_destroy_result(&r);
        return st;
    }
    return tl_query_result_stream(&r, out, err);
}

/* Runs the query (a prepared statement, statement_cache.h), its rows read
 * into memory: all of them (DuckDB's materialised result), or the first
 * max_rows through a streaming one that stops there. */
static tl_status run(tl_query_engine *e, const char *query, int64_t max_rows,
                     struct ArrowArrayStream *out, bool *truncated, tl_error *err)
{
    *truncated = false;
    if (max_rows <= 0) return tl_query_run(e, query, out, err);
    duckdb_prepared_statement ps = NULL, own = NULL;
    duckdb_pending_result pending = NULL;
    duckdb_result r;
    tl_status st = tl_statement_get(e, query, &ps, err);
    if (st != TL_OK) return st;
    if (ps == NULL && duckdb_prepare(e->conn, query, &own) == DuckDBError)
        st = tl_query_error(err, duckdb_prepare_error(own));
    else if (duckdb_pending_prepared_streaming(ps ? ps : own, &pending) == DuckDBError)
        st = tl_query_error(err, duckdb_pending_error(pending));
    else if (duckdb_execute_pending(pending, &r) == DuckDBError) {
        st = tl_query_error(err, duckdb_result_error(&r));
        duckdb_destroy_result(&r);
    } else {
        st = tl_query_result_collect(&r, max_rows, out, truncated, err);
    }
    duckdb_destroy_pending(&pending);
    duckdb_destroy_prepare(&own);
    return st;
}

/* Reads every input (each stream consumed, whatever happens) into *out. */
static tl_status read_inputs(const tl_sql_options *o, tl_rowset ***out, tl_error *err)
{
    *out = calloc(o->inputs_len + 1, sizeof **out);
    tl_status st = *out ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; i < o->inputs_len; i++) {
        const tl_sql_input *in = &o->inputs[i];
        if (st == TL_OK && (in->name == NULL || !*in->name || in->stream == NULL))
            st = tl_error_set(err, TL_ERR_INVALID, "input %zu needs a name and a stream", i + 1);
        for (size_t j = 0; st == TL_OK && j < i; j++)
            if (strcasecmp(o->inputs[j].name, in->name) == 0)
                st = tl_error_set(err, TL_ERR_INVALID,
                                  "inputs \"%s\" and \"%s\" have one name (SQL folds case)",
                                  o->inputs[j].name, in->name);
        if (st == TL_OK)
            st = tl_sql_input_read(in->name, in->stream, &(*out)[i], err);
        else if (in->stream && in->stream->release)
            in->stream->release(in->stream);
    }
    return st;
}

static tl_status check_options(const char *query, const tl_sql_options *o, const char *ns,
                               tl_error *err)
{
    if (query == NULL) return tl_error_set(err, TL_ERR_INVALID, "sql needs a query");
    if (o->max_rows < 0 || o->timeout_ms < 0)
        return tl_error_set(err, TL_ERR_INVALID, "max_rows and timeout_ms must be 0 or more");
    if (o->inputs_len && o->inputs == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "inputs_len is %zu but inputs is NULL",
                            o->inputs_len);
    TL_TRY(tl_settings_check_session(o->settings, err));
    tl_qname check;
    return tl_qname_parse("x", ns, &check, err);
}

static tl_status show_inputs(tl_query_engine *e, const tl_sql_options *o, tl_rowset **inputs,
                             tl_error *err)
{
    tl_status st = TL_OK;
    for (size_t i = 0; i < o->inputs_len; i++) {
        if (st == TL_OK)
            st = tl_sql_input_show(e, o->inputs[i].name, inputs[i], err);
        else
            tl_rowset_free(inputs[i]);
        inputs[i] = NULL;
    }
    return st;
}

static void hide_inputs(tl_query_engine *e, const tl_sql_options *o)
{
    for (size_t i = 0; i < o->inputs_len; i++) tl_sql_input_hide(e, o->inputs[i].name);
    tl_rowsets_clear_inputs(e);
}

/* The lake's session settings followed by the query's (the last given wins:
 * the query's override the lake's); NULL when the lake has none. */
static const char **merged_settings(const tl_lake *lake, const tl_sql_options *o)
{
    if (lake->settings == NULL) return NULL;
    size_t a = 0, b = 0;
    while (lake->settings[a]) a++;
    while (o->settings && o->settings[b]) b++;
    const char **m = calloc(a + b + 1, sizeof *m);
    if (m == NULL) return NULL;
    memcpy(m, lake->settings, a * sizeof *m);
    if (b) memcpy(m + a, o->settings, b * sizeof *m);
    return m;
}

/* A result of no columns and no rows: what SET and RESET return. */
static tl_status empty_result(struct ArrowArrayStream *out, tl_error *err)
{
    struct ArrowSchema schema;
    TL_TRY(tl_schema_init(&schema, "+s", NULL, 0, 0, err));
    tl_status st = tl_stream_from_batches(&schema, NULL, 0, out, err);
    if (st != TL_OK) tl_schema_release(&schema); /* not taken */
    return st;
}

/* The settings in force (the lake's, the call's, then the namespace's SET ones), as a
 * NULL-terminated array of pairs pointing into *list; NULL when out of memory. */
static const char **settings_array(const tl_strlist *list)
{
    const char **a = calloc(list->len + 1, sizeof *a);
    for (size_t i = 0; a && i < list->len; i++) a[i] = list->items[i];
    return a;
}

/* A query (or the query of an EXPLAIN) once the engine is up. */
static tl_status run_query(tl_query_engine *e, lookup_ctx *c, const tl_sql_statement *stmt,
                           const tl_sql_options *o, const char *ns, tl_rowset **inputs,
                           struct ArrowArrayStream *out, tl_query_stats *stats, tl_error *err)
{
    const char *query = stmt->select ? stmt->select : stmt->query;
    bool explain = stmt->kind == TL_STMT_EXPLAIN;
    tl_sql_plan plan = {0};
    tl_scan_stats ss = {.exact = stats != NULL}; /* footers read only when asked */
    tl_deadline deadline = {0};
    bool answered = false, truncated = false; /* answered by a window of the newest data */
    bool topk_shape = false;
    tl_sql_topk topk;
    char *rewritten = NULL; /* Timelake's SQL in DuckDB's (sql_rewrite.h) */
    char *routed = NULL, *routing = NULL, *route_cost = NULL; /* through a rollup (sql_route.h) */
    char *preagg = NULL;           /* partial states from the scan (sql_route.h) */
    const char *unfiltered = NULL; /* without its exact WHERE (sql_exact_where.h) */
    tl_sql_table_read *reads = NULL;
    size_t n_reads = 0;
    tl_sql_scope scope = {c->lake, ns, o->only_namespace, c->settings};
    tl_status st = tl_deadline_start(&deadline, e, o->timeout_ms, err);
    if (st == TL_OK) st = tl_sql_rewrite(e, &scope, query, &rewritten, err);
    if (rewritten) query = rewritten;
    if (st == TL_OK) st = tl_sql_plan_build(e, query, o->only_namespace, lookup, c, &plan, err);
    if (st == TL_OK && plan.query) query = plan.query; /* time travel: views in place of AT */
    if (st == TL_OK) apply_in_list_pruning(e, &plan);
    if (st == TL_OK) st = show_inputs(e, o, inputs, err);
    if (st == TL_OK) st = tl_deadline_check(&deadline, err);
    if (st == TL_OK) e->query_text = query; /* for the columns remote fetches may leave out */
    if (st == TL_OK && c->n == 1) topk_shape = tl_sql_topk_shape(e, &plan, &topk);
    if (st == TL_OK && topk_shape && !explain)
        st = tl_query_topk(e, &plan, &topk, query, ns, o->max_rows, out, &truncated, &ss, &answered,
                           err);
    const char *count_name = NULL;
    if (st == TL_OK && c->n == 1 && !explain && !answered && tl_sql_count_shape(&plan, &count_name))
        st = tl_query_count(e, &plan, count_name, out, &ss, &answered, err);
    tl_scan_filter where = {0};
    if (st == TL_OK && c->n == 1 && !explain && !answered &&
        tl_sql_count_where_shape(&plan, &count_name, &where))
        st = tl_query_count_where(e, &plan, count_name, &where, out, &ss, &answered, err);
    tl_scan_filter_clear(&where);
    if (st == TL_OK && explain && (reads = calloc(c->n + 3, sizeof *reads)) == NULL)
        st = tl_error_nomem(err);
    if (st == TL_OK && !answered) st = tl_query_use_namespace(e, ns, err);
    /* Routing first: a routed query reads the rollup and raw's rows outside
     * its clean buckets, and raw's own view (its scan) is not made. */
    size_t planned = c->n;
    if (st == TL_OK && !answered)
        st = tl_sql_route(e, query, &plan, lookup, c, reads, &n_reads, &ss, &routed, &routing,
                          &route_cost, err);
    /* Routing that declines leaves the rollups it weighed in c: the query
     * still reads its one table. */
    if (st == TL_OK && !answered && !routed && planned == 1)
        st = tl_sql_preagg(e, &plan, &ss, &routed, &preagg, err);
    int64_t exact_views = ss.exact_views; /* routing's own scans are not the query's views */
    if (st == TL_OK && !answered)
        st = register_tables(e, c, planned, &plan, routed ? plan.refs[0].t : NULL, &ss, reads,
                             &n_reads, err);
    exact_views = ss.exact_views - exact_views;
    e->query_text = NULL;
    if (routed) query = routed;
    /* A view holding exactly the rows the WHERE selects: DuckDB need not
     * test them again (an IN list of keys costs it a join). */
    if (st == TL_OK && !answered && !explain && !routed && planned == 1 && exact_views == 1)
        st = tl_sql_without_exact_where(e, query, &plan, &unfiltered, err);
    if (unfiltered) query = unfiltered;
    if (st == TL_OK && !answered) st = tl_deadline_check(&deadline, err);
    if (st == TL_OK && explain) {
        tl_sql_explain_input x = {
            stmt->query, query,      reads,  n_reads,      &plan, topk_shape ? &topk : NULL,
            routing,     route_cost, preagg, stmt->analyze};
        st = tl_sql_explain(e, &x, out, err);
    } else if (st == TL_OK && !answered) {
        st = run(e, query, o->max_rows, out, &truncated, err);
    }
    tl_deadline_stop(&deadline);
    st = tl_deadline_status(&deadline, st, err);
    tl_rowsets_clear(e); /* the result holds its rows: the decoded ones can go */
    hide_inputs(e, o);
    if (st == TL_OK && stats)
        *stats = (tl_query_stats){ss.files_total,     ss.files_read, ss.row_groups_total,
                                  ss.row_groups_read, ss.bytes_read, truncated};
    for (size_t i = 0; reads && i < n_reads; i++) {
        free(reads[i].view_sql);
        free(reads[i].filters);
    }
    free(reads);
    tl_sql_plan_free(&plan);
    free(rewritten);
    free(routed);
    free(routing);
    free(route_cost);
    free(preagg);
    return st;
}

/* The statement's steps once its inputs are read; takes `inputs`. */
static tl_status query_lake(tl_lake *lake, const char *query, const tl_sql_options *o,
                            const char *ns, tl_rowset **inputs, struct ArrowArrayStream *out,
                            tl_query_stats *stats, tl_error *err)
{
    tl_query_engine *e = NULL;
    lookup_ctx c = {lake, ns, NULL, 0, {NULL}, 0, o, o->settings};
    if (lake->query == NULL && !tl_store_is_local(lake->store)) {
        tl_query_engine_start(lake);
        preload(&c, query);
    }
    tl_sql_statement stmt = {0};
    tl_strlist in_force = {0};
    const char **settings = NULL, **merged = merged_settings(lake, o);
    tl_status st = tl_query_engine_get(lake, &e, err);
    if (st == TL_OK && lake->settings && merged == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_sql_statement_read(e, ns, query, &stmt, err);
    if (st == TL_OK && stmt.kind != TL_STMT_DONE) {
        const char *const *call = merged ? merged : o->settings;
        st = tl_sql_session_settings(e, ns, call, &in_force, err);
        if (st == TL_OK && (settings = settings_array(&in_force)) == NULL) st = tl_error_nomem(err);
    }
    if (st == TL_OK && stmt.kind == TL_STMT_DONE) {
        st = empty_result(out, err);
    } else if (st == TL_OK) {
        c.settings = settings;
        e->settings = settings;
        st = run_query(e, &c, &stmt, o, ns, inputs, out, stats, err);
        e->settings = NULL;
    }
    for (size_t i = 0; i < o->inputs_len; i++) { /* not shown */
        tl_rowset_free(inputs[i]);
        inputs[i] = NULL;
    }
    for (size_t i = 0; i < c.n; i++) {
        if (c.tables[i]->pinned_snapshot && e) tl_query_forget(e, c.tables[i]);
        tl_table_close(c.tables[i]);
    }
    for (size_t i = 0; i < c.n_pre; i++) tl_table_close(c.pre[i]);
    free(c.tables);
    free(settings);
    free(merged);
    tl_strlist_free(&in_force);
    tl_sql_statement_free(&stmt);
    return st;
}

tl_status tl_lake_query(tl_lake *lake, const char *query, const tl_sql_options *options,
                        struct ArrowArrayStream *out, tl_query_stats *stats, tl_error *err)
{
    tl_sql_options o = options ? *options : (tl_sql_options){0};
    const char *ns = o.namespace_ ? o.namespace_ : "default";
    tl_status st = check_options(query, &o, ns, err);
    bool rollup = false; /* CREATE, REFRESH or DROP MATERIALIZED ROLLUP */
    if (st == TL_OK) st = tl_rollup_statement(lake, ns, query, &rollup, out, err);
    tl_rowset **inputs = NULL;
    if (st == TL_OK && !rollup) {
        st = read_inputs(&o, &inputs, err);
    } else {
        for (size_t i = 0; options && options->inputs && i < options->inputs_len; i++)
            if (options->inputs[i].stream && options->inputs[i].stream->release)
                options->inputs[i].stream->release(options->inputs[i].stream);
    }
    if (st == TL_OK && !rollup) st = query_lake(lake, query, &o, ns, inputs, out, stats, err);
    if (st == TL_OK && rollup && stats) *stats = (tl_query_stats){0};
    for (size_t i = 0; inputs && st != TL_OK && i < o.inputs_len; i++) tl_rowset_free(inputs[i]);
    free(inputs);
    return st;
}

tl_status tl_lake_sql(tl_lake *lake, const char *query, const char *namespace_,
                      struct ArrowArrayStream *out, tl_query_stats *stats, tl_error *err)
{
    tl_sql_options o = {.namespace_ = namespace_};
    return tl_lake_query(lake, query, &o, out, stats, err);
}
