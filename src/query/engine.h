/* The query engine of a lake: one in-memory DuckDB database and connection,
 * created on first use and freed with the lake. Set up once with UTC as the
 * session time zone and Timelake's time_bucket (aligned to the Unix epoch as
 * the reference's DataFusion date_bin, where DuckDB's own aligns sub-month
 * widths to 2000-01-03). */
#ifndef TL_QUERY_ENGINE_H
#define TL_QUERY_ENGINE_H

#include <duckdb.h>
#include <pthread.h>

#include "table/table_internal.h"

typedef struct tl_query_engine {
    duckdb_database db;
    duckdb_connection conn;
    /* A start in the background (tl_query_engine_start): joined, and its
     * outcome taken, by tl_query_engine_get. */
    bool starting;
    pthread_t starter;
    tl_status start_status;
    tl_error start_error;
    char *lake_dir;      /* a local lake's folder, the only one DuckDB may read; NULL: remote */
    int threads;         /* DuckDB's threads; 0: its default (the processor count) */
    char *fetch_dir;     /* private: files fetched from a remote store (local_file.h) */
    bool fetch_dir_made; /* fetch_dir exists (made on first use) */
    struct tl_query_cached *cached; /* per table (query_cache.h) */
    size_t n_cached;
    char *search_path; /* namespace last set */
    /* The query being prepared (borrowed, set by tl_lake_sql), so that remote
     * files can be fetched without the columns it does not use; NULL: all. */
    const char *query_text;
    /* The session settings of the query being prepared (borrowed, set by
     * tl_lake_query; NULL-terminated name, value pairs, or NULL): they
     * override the tables' own (table/settings.h). */
    const char *const *settings;
    /* Syntax trees of recent queries, by text (sql_plan.c). */
    struct tl_query_ast {
        char *query;
        void *doc; /* json_t */
    } asts[16];
    size_t next_ast; /* slot to replace next */
    /* SQL texts of recent syntax trees, by their JSON (sql_plan.c): a
     * rewrite repeated by each run of a query costs DuckDB nothing again. */
    struct tl_query_tree_text {
        char *tree, *sql;
    } tree_texts[16];
    size_t next_tree_text; /* slot to replace next */
    /* Rollup-routed queries found to give the unrouted one's columns
     * (sql_route.c), by text, and the slot to replace next. */
    char *routes_checked[16];
    size_t next_route_check;
    /* What routing found for recent queries, by text and table versions
     * (sql_route.c: struct route_memo), and the slot to replace next. */
    struct route_memo *route_memos;
    size_t next_route_memo;
    /* Recent queries as they run without their exact WHERE
     * (sql_exact_where.c), by text, and the slot to replace next. */
    struct tl_query_unfiltered {
        char *query, *text;
    } unfiltered[16];
    size_t next_unfiltered;
    struct tl_sql_session *sessions; /* SET per namespace (sql_session.h) */
    size_t n_sessions;
    struct tl_rowsets *rowsets;      /* rows decoded for the query (rows_function.h) */
    struct tl_footer_cache *footers; /* parsed footers of local files (footer_cache.h) */
    /* Prepared statements of recent queries (statement_cache.h), and the
     * number of statements tl_query_exec has run: views, schemas and the
     * search path, what a prepared statement was bound to. */
    struct tl_statement_cache *statements;
    uint64_t catalog_changes;
} tl_query_engine;

/* Statements run at each engine's start before its configuration is locked
 * (a process that must bound DuckDB, such as the fuzz target, sets it before
 * its first query); NULL: none. */
extern const char *tl_query_engine_settings;

/* The lake's engine, created on first use (owned by the lake); waits for a
 * start under way. A failed start is reported here and not kept. */
tl_status tl_query_engine_get(tl_lake *lake, tl_query_engine **out, tl_error *err);

/* Starts creating the lake's engine on a background thread, so that DuckDB
 * opens while the caller waits on the store; nothing when it exists or is
 * under way, or when no thread can be had. The lake must not be used from
 * another thread meanwhile; tl_query_engine_get (or closing the lake) joins. */
void tl_query_engine_start(tl_lake *lake);

/* TL_ERR_QUERY with DuckDB's message `msg` (may be NULL), told in the lake's
 * terms where DuckDB's own would mislead: a refused file access, a locked
 * setting, the expression depth limit (whose advice, a SET, is refused). */
tl_status tl_query_error(tl_error *err, const char *msg);

/* Runs a statement whose result is not needed (and forgets the prepared
 * statements, which may depend on what it changes); a failure is TL_ERR_QUERY
 * with DuckDB's message. */
tl_status tl_query_exec(tl_query_engine *e, const char *sql, tl_error *err);

/* Runs `sql` with one VARCHAR parameter and returns the first value of the
 * first row as a malloc'd string (NULL for SQL NULL) in *out. */
tl_status tl_query_scalar_text(tl_query_engine *e, const char *sql, const char *param, char **out,
                               tl_error *err);

/* Quotes an identifier ("x""y") or a string literal ('it''s') into a new string. */
char *tl_sql_ident(const char *name);
char *tl_sql_literal(const char *value);

#endif
