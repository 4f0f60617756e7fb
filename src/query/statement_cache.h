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

#include "query/engine.h"

#define TL_STATEMENT_CACHE_SIZE 16

/* *out is the prepared statement of `query` (owned by the engine, valid
 * until the next call or tl_query_exec), or NULL when DuckDB cannot prepare
 * it (the caller runs it as it is, for DuckDB's own message). */
tl_status tl_statement_get(tl_query_engine *e, const char *query, duckdb_prepared_statement *out,
                           tl_error *err);

void tl_statement_cache_free(tl_query_engine *e);

#endif
