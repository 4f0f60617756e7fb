/* The selective scan of a table reference: when a query's filters (time
 * ranges, series keys) select a small part of the rows of the files left
 * after file pruning, Timelake decodes just those rows itself and hands them
 * to DuckDB (rows_function.h) instead of a read_parquet of whole files.
 *
 * For each local file: the footer (footer_cache.h), the row groups and
 * pages that may match (page_select.h), then, when the rows chosen are at
 * most a quarter of the files' rows and TL_SELECTIVE_MAX_ROWS, the data
 * pages holding them of only the columns the query uses (query_columns.h),
 * sliced to those rows; files are decoded in parallel. The rows are a
 * superset of those the query's WHERE keeps (DuckDB still applies it).
 *
 * Declined (the caller reads the files with read_parquet) when the files'
 * schemas differ or hold a type the rows function does not map, or when our
 * reader finds one it cannot decode (TL_ERR_INVALID). The table's (or the
 * session's) filter-pushdown setting chooses: false never, true whenever the
 * pages narrow the rows, auto by the rule. The environment variable
 * TL_SELECTIVE_SCAN=off|always|auto overrides it (for tests and benchmarks). */
#ifndef TL_QUERY_SELECTIVE_SCAN_H
#define TL_QUERY_SELECTIVE_SCAN_H

#include <stdbool.h>

#include "query/engine.h"
#include "query/scan.h"

#define TL_SELECTIVE_MAX_ROWS 2000000

/* What the scan read of one file. */
typedef struct tl_selective_file {
    const char *path;                                                 /* in: a local path */
    int64_t row_groups_total, row_groups_read, bytes_read, rows_read; /* out */
} tl_selective_file;

/* The automatic rule: `chosen` rows of files holding `total` are few enough
 * for the selective scan to decode them itself (the aggregation in the scan
 * takes the others). */
bool tl_selective_rows_narrow(int64_t chosen, int64_t total);

/* Whether rows whose pages are most of the files' `total` rows, but of
 * which the time bounds of their row groups say `timed` match, are refined
 * by their times: the time column read whole, and every page holding a row
 * wanted of each other column decoded, pays when they are a small share
 * (the edges of a range: 4,000 of 720,000 rows; not 5 minutes of an hour). */
bool tl_selective_time_refines(int64_t timed, int64_t total);

/* Whether the scan would decode `chosen` rows of files holding `total`
 * itself, by the setting and the rule above (scan_cost.h's estimate). */
bool tl_selective_scan_takes(const tl_query_engine *e, const tl_table *t, int64_t chosen,
                             int64_t total);

/* Whether the setting (or TL_SELECTIVE_SCAN) turns filter pushdown off. */
bool tl_filter_pushdown_off(const tl_query_engine *e, const tl_table *t);

/* Whether a utf8 array's values are valid UTF-8, as DuckDB, which takes
 * VARCHAR values on trust, needs them (its read_parquet checks them). */
bool tl_strings_valid(const struct ArrowArray *a);

/* On success *id is the rowset to scan (rows_function.h), or 0 when the scan
 * is declined. n_filters > 0. *exact: the rowset holds exactly the rows that
 * pass the one filter (row_refine.h), not a superset. */
tl_status tl_selective_scan(tl_query_engine *e, const tl_table *t, tl_selective_file *files,
                            size_t n, const tl_scan_filter *filters, size_t n_filters, int64_t *id,
                            bool *exact, tl_error *err);

#endif
