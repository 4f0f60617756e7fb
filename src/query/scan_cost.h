/* What a scan of one table (scan.h) will read, estimated before it runs
 * from what the query has at hand: the manifests (which files), the
 * footers the engine keeps (footer_cache.h) and their row-group statistics;
 * no page index and no data is read. Rollup routing (sql_route.c) weighs
 * the scan of a query's raw data against that of a rollup and the raw rows
 * around it.
 *
 * The bytes are those read_parquet reads: the footers, and the column
 * chunks of the columns the query may use (query_columns.h) in the row
 * groups pruning leaves (row_group_prune.h). When the rows the filters want
 * are few enough for the selective scan (selective_scan.h), which decodes
 * those rows alone, only their share of the chunks counts: of each row
 * group, the part of its time bounds inside the filter's time range, and of
 * a file, for a filter on keys, an even share per key of `series` (the
 * table's number of series; 0 when unknown: no narrowing by key). Files
 * not on local disk, or whose footer cannot be read, count whole.
 *
 * Files whose time ranges overlap in a partition of a table read with dedup
 * are merged on read (scan.h): then no file of the scan is read selectively,
 * and each row the filters leave of the overlapping files is ranked by the
 * dedup window, which costs about as much as reading 200 bytes. */
#ifndef TL_QUERY_SCAN_COST_H
#define TL_QUERY_SCAN_COST_H

#include "query/engine.h"
#include "query/scan.h"

/* query: the text whose columns are read (NULL: every column). */
tl_status tl_scan_cost(tl_query_engine *e, const tl_table *t, const char *query,
                       const tl_scan_filter *filters, size_t n_filters, int64_t series,
                       int64_t *bytes, tl_error *err);

#endif
