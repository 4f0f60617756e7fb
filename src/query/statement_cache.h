/* Prepared statements of recent queries, by text. Parsing, binding and
 * optimising a query is most of what a small one costs DuckDB (a dashboard
 * repeats the same query text); a statement prepared once runs again
 * without them, while what it was bound to is unchanged. That is all of:
 *   - the query's text, as DuckDB is given it;
 *   - the views, schemas and search path: every statement tl_query_exec runs
 *     (the only way Timelake changes DuckDB's catalog) invalidates the cache;
 *   - the rowsets the query scans (rows_function.h): their ids, column names
 *     and types are part of the key. Their rows are not: the rows function
 *     looks its rowset up when the scan starts, so a statement reads the rows
 *     of the query running it. The row count a statement was planned with
 *     may be an older one (an estimate, which changes no result).
 * Session settings of DuckDB cannot change (its configuration is locked),
 * and functions whose value varies (now(), random()) are evaluated at each
 * execution, never folded into a plan. */
#ifndef TL_QUERY_STATEMENT_CACHE_H
#define TL_QUERY_STATEMENT_CACHE_H

#include <stdbool.h>

#include "query/engine.h"

#define TL_STATEMENT_CACHE_SIZE 16

/* Executions of one prepared statement before it is prepared again: each
 * execution of a DuckDB (1.4) prepared statement keeps some 600 bytes until
 * the statement is destroyed (the result collector's state of each run). */
#define TL_STATEMENT_RUNS_MAX 64

/* Set by a process that checks for leaks after each query (the fuzz
 * target): a cached statement's last execution state is referenced from
 * memory of DuckDB's own allocator, which LeakSanitizer does not scan, so it
 * would be reported as leaked. Then every query is prepared anew. */
extern bool tl_statement_cache_off;

/* *out is the prepared statement of `query` (owned by the engine, valid
 * until the next call or tl_query_exec), or NULL when DuckDB cannot prepare
 * it (the caller runs it as it is, for DuckDB's own message). */
tl_status tl_statement_get(tl_query_engine *e, const char *query, duckdb_prepared_statement *out,
                           tl_error *err);

void tl_statement_cache_free(tl_query_engine *e);

#endif
