/* An exact WHERE: an AND of restrictions of a lake table's time column (a
 * TIMESTAMPTZ compared by =, <, <=, >, >= or BETWEEN with a time literal)
 * and of its first series-key column (a string, = or IN string literals, at
 * most one such restriction), whose meaning a tl_scan_filter holds exactly.
 * count(*) answers such a WHERE from the files (sql_count.h); a query whose
 * table view already holds exactly the rows it selects (selective_scan.h)
 * runs without it. */
#ifndef TL_QUERY_SQL_EXACT_WHERE_H
#define TL_QUERY_SQL_EXACT_WHERE_H

#include <stdbool.h>

#include "query/scan.h"
#include "query/sql_plan.h"

/* Whether the WHERE of the plan's SELECT (a SELECT over the plan's one
 * table) is exact; *f (zeroed first; tl_scan_filter_clear frees) receives
 * its restrictions, or is left empty. */
bool tl_sql_exact_where(const tl_sql_plan *plan, tl_scan_filter *f);

/* *out: the plan's query (`query`, its text) without its WHERE (borrowed
 * from the engine until the next call), when it is one plain SELECT over the
 * plan's one table, referenced once, whose WHERE is exact and the very
 * filter its view was made by; else NULL. Call it only when the view holds
 * exactly the rows that filter selects (tl_scan_stats.exact_views). The text
 * of a recent query is remembered (DuckDB renders it). */
tl_status tl_sql_without_exact_where(tl_query_engine *e, const char *query, const tl_sql_plan *plan,
                                     const char **out, tl_error *err);

/* Frees the texts the engine remembers. */
void tl_sql_exact_where_cache_free(tl_query_engine *e);

#endif
