/* Timelake's SQL beyond DuckDB's, by rewriting a query's syntax tree before
 * it is planned and run:
 *   - first_value(x ORDER BY t) and last_value(...) as aggregates (without
 *     OVER): DuckDB's first and last, the column keeping the name as written;
 *   - time_bucket_gapfill, locf and interpolate (sql_gapfill.h);
 *   - information_schema.<view>: the view's rows (sql_catalog.h);
 *   - the reference's planning errors for the arguments of m4,
 *     time_weighted_mean and time_weighted_state. */
#ifndef TL_QUERY_SQL_REWRITE_H
#define TL_QUERY_SQL_REWRITE_H

#include "query/engine.h"
#include "query/sql_catalog.h"

/* *out: the query to run instead of `query` (malloc'd), or NULL when it
 * stays as it is. A query DuckDB cannot parse is left to the plan to
 * report. */
tl_status tl_sql_rewrite(tl_query_engine *e, const tl_sql_scope *scope, const char *query,
                         char **out, tl_error *err);

#endif
