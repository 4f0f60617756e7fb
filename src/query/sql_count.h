/* Answering "SELECT count(*) FROM t" from the manifests' record counts,
 * without reading a data file, whenever the scan would return exactly the
 * rows the manifests count: no delete files, and no duplicates pending a
 * merge on read (dedup on read off for the table or session, or no two live
 * files of a partition whose time ranges overlap, since each file is free of
 * duplicates by itself). Otherwise the query runs as any other. The shape:
 * one count(*) (or count()), optionally aliased, over one lake table, with no
 * WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, DISTINCT, sample or time travel. */
#ifndef TL_QUERY_SQL_COUNT_H
#define TL_QUERY_SQL_COUNT_H

#include <stdbool.h>

#include "query/scan.h"
#include "query/sql_plan.h"

/* Whether the planned query has the shape; *name receives the result
 * column's name as DuckDB gives it (the alias, else "count_star()"). */
bool tl_sql_count_shape(const tl_sql_plan *plan, const char **name);

/* The count of the table the plan references, as a one-row result in *out,
 * when the manifests know it (*answered); else nothing is done. */
tl_status tl_query_count(tl_query_engine *e, const tl_sql_plan *plan, const char *name,
                         struct ArrowArrayStream *out, tl_scan_stats *stats, bool *answered,
                         tl_error *err);

#endif
