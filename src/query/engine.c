#include "query/engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "query/footer_cache.h"
#include "query/local_file.h"
#include "query/query_cache.h"
#include "query/rows_function.h"
#include "query/sql_exact_where.h"
#include "query/sql_plan.h"
#include "query/sql_route.h"
#include "query/sql_session.h"
#include "query/statement_cache.h"
#include "query/m4.h"
#include "query/time_bucket.h"
#include "query/time_weighted.h"

/* time_bucket and date_bin are one function, the reference's (DataFusion's
 * date_bin): bins from the Unix epoch unless an origin is given
 * (time_bucket.c). */
#define TL_BIN_MACRO(name)                                                                         \
    "CREATE OR REPLACE MACRO " name "(w, ts) AS " TL_BIN_FUNCTION "(CAST(w AS INTERVAL), ts), "    \
    "(w, ts, origin) AS " TL_BIN_FUNCTION "(CAST(w AS INTERVAL), ts, CAST(origin AS TIMESTAMPTZ))"

static const char *const setup_sql[] = {
    "SET TimeZone = 'UTC'",
    "SET enable_progress_bar = false",
    /* Footers of immutable data files, kept across the lake's queries. */
    "SET parquet_metadata_cache = true",
    TL_BIN_MACRO("time_bucket"),
    TL_BIN_MACRO("date_bin"),
};

/* A query may name files, attach databases, load extensions or change
 * settings: DuckDB would do all of it with the caller's rights (read_csv of
 * /etc/passwd). So it reaches the file system only under the lake's own
 * folder (a local lake) and the engine's private directory (files fetched
 * from a remote lake, spills), and its configuration is then locked. Which
 * functions a user's query may call is judged by the plan (sql_plan.c); this
 * is the wall behind it. */
const char *tl_query_engine_settings;

static tl_status lock_down(tl_query_engine *e, tl_error *err)
{
    if (tl_query_engine_settings) TL_TRY(tl_query_exec(e, tl_query_engine_settings, err));
    /* Named now, made when a query first fetches a file: a local lake's
     * engine leaves no directory behind, even when never closed. */
    TL_TRY(tl_query_fetch_dir_name(e, err));
    char *spill = tl_strdup_printf("%s.spill", e->fetch_dir); /* DuckDB makes it if it spills */
    char *dirs[2] = {tl_strdup_printf("%s/", e->fetch_dir),
                     e->lake_dir ? tl_strdup_printf("%s/", e->lake_dir) : NULL};
    char *lits[3] = {spill ? tl_sql_literal(spill) : NULL, dirs[0] ? tl_sql_literal(dirs[0]) : NULL,
                     dirs[1] ? tl_sql_literal(dirs[1]) : NULL};
    bool ok = lits[0] && lits[1] && (e->lake_dir == NULL || lits[2]);
    char *sql =
        ok ? tl_strdup_printf("SET temp_directory = %s; SET allowed_directories = [%s%s%s]; "
                              "SET enable_external_access = false; "
                              "SET allow_community_extensions = false; "
                              "SET lock_configuration = true",
                              lits[0], lits[1], lits[2] ? ", " : "", lits[2] ? lits[2] : "")
           : NULL;
    tl_status st = sql ? tl_query_exec(e, sql, err) : tl_error_nomem(err);
    free(sql);
    free(spill);
    for (size_t i = 0; i < 3; i++) free(lits[i]);
    for (size_t i = 0; i < 2; i++) free(dirs[i]);
    return st;
}

/* Opening DuckDB (some 10 ms of CPU: its built-in functions are catalogued)
 * is what a cold query pays before its first round trip. Extensions are never
 * installed or loaded behind the caller's back: nothing is downloaded. */
static tl_status engine_open(tl_query_engine *e, tl_error *err)
{
    duckdb_config conf = NULL;
    if (duckdb_create_config(&conf) == DuckDBError) return tl_error_nomem(err);
    duckdb_set_config(conf, "autoinstall_known_extensions", "false");
    duckdb_set_config(conf, "autoload_known_extensions", "false");
    duckdb_set_config(conf, "allow_unsigned_extensions", "false");
    if (e->threads > 0) {
        char threads[16];
        snprintf(threads, sizeof threads, "%d", e->threads);
        duckdb_set_config(conf, "threads", threads);
    }
    char *msg = NULL;
    tl_status st = TL_OK;
    if (duckdb_open_ext(NULL, &e->db, conf, &msg) == DuckDBError) {
        st = tl_error_set(err, TL_ERR_QUERY, "cannot start DuckDB: %s", msg ? msg : "?");
        e->db = NULL;
    }
    duckdb_free(msg);
    duckdb_destroy_config(&conf);
    TL_TRY(st);
    if (duckdb_connect(e->db, &e->conn) == DuckDBError) {
        e->conn = NULL;
        return tl_error_set(err, TL_ERR_QUERY, "cannot connect to DuckDB");
    }
    if (tl_query_register_bucket(e->conn, err) != TL_OK ||
        tl_query_register_m4(e->conn, err) != TL_OK ||
        tl_query_register_time_weighted(e->conn, err) != TL_OK)
        return tl_error_prefix(err, "setting up DuckDB");
    if (tl_rows_register_function(e, err) != TL_OK)
        return tl_error_prefix(err, "setting up DuckDB");
    for (size_t i = 0; i < sizeof setup_sql / sizeof setup_sql[0]; i++)
        if (tl_query_exec(e, setup_sql[i], err) != TL_OK)
            return tl_error_prefix(err, "setting up DuckDB");
    if (lock_down(e, err) != TL_OK) return tl_error_prefix(err, "setting up DuckDB");
    return TL_OK;
}

static void *engine_open_thread(void *p)
{
    tl_query_engine *e = p;
    e->start_status = engine_open(e, &e->start_error);
    return NULL;
}

/* Waits for a background start; its outcome is the engine's status. */
static tl_status engine_join(tl_query_engine *e, tl_error *err)
{
    if (e->starting) {
        pthread_join(e->starter, NULL);
        e->starting = false;
    }
    if (e->start_status != TL_OK && err) *err = e->start_error;
    return e->start_status;
}

static void engine_free(void *p)
{
    tl_query_engine *e = p;
    if (e == NULL) return;
    engine_join(e, NULL);
    tl_query_cache_free(e);
    tl_sql_plan_cache_free(e);
    tl_sql_route_cache_free(e);
    tl_sql_exact_where_cache_free(e);
    tl_sql_sessions_free(e);
    tl_statement_cache_free(e); /* before the rowsets its statements were bound to */
    tl_rowsets_free(e);
    tl_footer_cache_free(e);
    if (e->conn) duckdb_disconnect(&e->conn);
    if (e->db) duckdb_close(&e->db); /* before its spill directory goes */
    tl_query_local_files_free(e);
    free(e->lake_dir);
    free(e);
}

tl_status tl_query_error(tl_error *err, const char *msg)
{
    if (msg == NULL) return tl_error_set(err, TL_ERR_QUERY, "the query failed");
    if (strstr(msg, "disabled by configuration") || strstr(msg, "disabled through configuration"))
        return tl_error_set(err, TL_ERR_QUERY,
                            "SQL over the lake reads only the lake's tables: files, databases "
                            "and extensions outside it are refused (%s)",
                            msg);
    if (strstr(msg, "configuration has been locked"))
        return tl_error_set(err, TL_ERR_QUERY,
                            "SQL over the lake cannot change DuckDB's settings (%s)", msg);
    const char *depth = strstr(msg, "Max expression depth limit of ");
    if (depth) {
        long limit = strtol(depth + strlen("Max expression depth limit of "), NULL, 10);
        return tl_error_set(err, TL_ERR_QUERY,
                            "the query nests expressions more than %ld levels deep: write it "
                            "flatter (for example IN (...) for a long chain of OR, or a CTE)",
                            limit);
    }
    return tl_error_set(err, TL_ERR_QUERY, "%s", msg);
}

tl_status tl_query_exec(tl_query_engine *e, const char *sql, tl_error *err)
{
    duckdb_result r;
    tl_status st = TL_OK;
    e->catalog_changes++;
    if (duckdb_query(e->conn, sql, &r) == DuckDBError)
        st = tl_query_error(err, duckdb_result_error(&r));
    duckdb_destroy_result(&r);
    return st;
}

/* A new engine, not yet open, for the lake (NULL: out of memory). */
static tl_query_engine *engine_new(const tl_lake *lake)
{
    tl_query_engine *e = calloc(1, sizeof *e);
    if (e) e->threads = lake->query_threads;
    if (e && tl_store_is_local(lake->store) &&
        (e->lake_dir = strdup(lake->store->url + 7)) == NULL) {
        free(e);
        return NULL;
    }
    return e;
}

void tl_query_engine_start(tl_lake *lake)
{
    if (lake->query) return;
    tl_query_engine *e = engine_new(lake);
    if (e == NULL) return; /* tl_query_engine_get reports it */
    e->starting = pthread_create(&e->starter, NULL, engine_open_thread, e) == 0;
    if (!e->starting) {
        free(e); /* no thread to spare: started on first use instead */
        return;
    }
    lake->query = e;
    lake->query_free = engine_free;
}

tl_status tl_query_engine_get(tl_lake *lake, tl_query_engine **out, tl_error *err)
{
    tl_query_engine *e = lake->query;
    if (e == NULL) {
        e = engine_new(lake);
        if (e == NULL) return tl_error_nomem(err);
        e->start_status = engine_open(e, &e->start_error);
        lake->query = e;
        lake->query_free = engine_free;
    }
    if (engine_join(e, err) != TL_OK) {
        /* Not kept: the next query tries again. */
        lake->query = NULL;
        lake->query_free = NULL;
        engine_free(e);
        return TL_ERR_QUERY;
    }
    *out = e;
    return TL_OK;
}

tl_status tl_query_scalar_text(tl_query_engine *e, const char *sql, const char *param, char **out,
                               tl_error *err)
{
    duckdb_prepared_statement ps;
    duckdb_result r;
    *out = NULL;
    tl_status st = TL_OK;
    if (duckdb_prepare(e->conn, sql, &ps) == DuckDBError) {
        st = tl_query_error(err, duckdb_prepare_error(ps));
        duckdb_destroy_prepare(&ps);
        return st;
    }
    if (param) duckdb_bind_varchar(ps, 1, param);
    if (duckdb_execute_prepared(ps, &r) == DuckDBError) {
        st = tl_query_error(err, duckdb_result_error(&r));
    } else if (duckdb_row_count(&r) > 0 && !duckdb_value_is_null(&r, 0, 0)) {
        char *v = duckdb_value_varchar(&r, 0, 0);
        *out = v ? strdup(v) : NULL;
        duckdb_free(v);
        if (*out == NULL) st = tl_error_nomem(err);
    }
    duckdb_destroy_result(&r);
    duckdb_destroy_prepare(&ps);
    return st;
}

static char *quote(const char *s, char q)
{
    tl_buf b = {0};
    bool ok = tl_buf_append_byte(&b, (uint8_t)q) == 0;
    for (const char *p = s; ok && *p; p++) {
        if (*p == q) ok = tl_buf_append_byte(&b, (uint8_t)q) == 0;
        if (ok) ok = tl_buf_append_byte(&b, (uint8_t)*p) == 0;
    }
    if (ok) ok = tl_buf_append_byte(&b, (uint8_t)q) == 0 && tl_buf_append_byte(&b, 0) == 0;
    if (!ok) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

char *tl_sql_ident(const char *name)
{
    return quote(name, '"');
}

char *tl_sql_literal(const char *value)
{
    return quote(value, '\'');
}
