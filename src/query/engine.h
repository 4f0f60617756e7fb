/* The query engine of a lake: one in-memory DuckDB database and connection,
 * created on first use and freed with the lake. Set up once with UTC as the
 * session time zone and Timelake's time_bucket (aligned to the Unix epoch as
 * the reference's DataFusion date_bin, where DuckDB's own aligns sub-month
 * widths to 2000-01-03). */
#ifndef TL_QUERY_ENGINE_H
#define TL_QUERY_ENGINE_H

#include <duckdb.h>

#include "table/table_internal.h"

typedef struct tl_query_engine {
    duckdb_database db;
    duckdb_connection conn;
    char *fetch_dir; /* files fetched from a remote store (local_file.h); NULL until needed */
    struct tl_query_cached *cached; /* per table (query_cache.h) */
    size_t n_cached;
    char *search_path; /* namespace last set */
    /* The query being prepared (borrowed, set by tl_lake_sql), so that remote
     * files can be fetched without the columns it does not use; NULL: all. */
    const char *query_text;
    /* Syntax trees of recent queries, by text (sql_plan.c). */
    struct tl_query_ast {
        char *query;
        void *doc; /* json_t */
    } asts[16];
    size_t next_ast; /* slot to replace next */
} tl_query_engine;

/* The lake's engine, created on first use (owned by the lake). */
tl_status tl_query_engine_get(tl_lake *lake, tl_query_engine **out, tl_error *err);

/* Runs a statement whose result is not needed; a failure is TL_ERR_QUERY
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
