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

/* The shape, or with where set the shape but for a WHERE clause of any kind. */
bool tl_sql_count_select_shape(const tl_sql_plan *plan, bool where, const char **name);

/* A one-row, one-column (BIGINT, nullable) result holding rows. */
tl_status tl_count_result(const char *name, int64_t rows, struct ArrowArrayStream *out,
                          tl_error *err);

/* "SELECT count(*) FROM t WHERE <restrictions>" answered from the Parquet
 * footers of t's local files, reading only the time and key values of the
 * pages their statistics cannot decide (sql_count_where.c). The WHERE must be
 * an AND of restrictions whose meaning is exact here: the time column (a
 * TIMESTAMPTZ) compared (=, <, <=, >, >=, BETWEEN) with a time literal, and
 * at most one restriction of the first series-key column (a string) to
 * string literals (= or IN). *f receives them (tl_scan_filter_clear frees). */
bool tl_sql_count_where_shape(const tl_sql_plan *plan, const char **name, tl_scan_filter *f);

/* The count of rows of the plan's table that meet f, when no duplicates are
 * pending a merge on read, no delete file exists and every file it may need
 * is local and readable by our reader (*answered); else nothing is done. */
tl_status tl_query_count_where(tl_query_engine *e, const tl_sql_plan *plan, const char *name,
                               const tl_scan_filter *f, struct ArrowArrayStream *out,
                               tl_scan_stats *stats, bool *answered, tl_error *err);

/* The count of the table the plan references, as a one-row result in *out,
 * when the manifests know it (*answered); else nothing is done. */
tl_status tl_query_count(tl_query_engine *e, const tl_sql_plan *plan, const char *name,
                         struct ArrowArrayStream *out, tl_scan_stats *stats, bool *answered,
                         tl_error *err);

#endif
