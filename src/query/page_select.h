/* Page pruning: the rows of one row group of a Parquet file that may hold
 * rows a query's filters want. Row groups go by their statistics
 * (row_group_prune.h); within a row group, the pages of the time and first
 * series-key columns go by their ColumnIndex min/max, and their rows by the
 * OffsetIndex: for each filter the rows whose time page and key page both
 * may match, then the union over the filters. A superset: a row outside the
 * ranges can match no filter. */
#ifndef TL_QUERY_PAGE_SELECT_H
#define TL_QUERY_PAGE_SELECT_H

#include "formats/parquet/parquet_reader.h"
#include "query/scan.h"

/* Sorted, disjoint, non-empty row ranges (malloc'd). */
typedef struct tl_row_ranges {
    tl_pq_row_range *r;
    size_t n, cap;
} tl_row_ranges;

void tl_row_ranges_free(tl_row_ranges *rr);
int64_t tl_row_ranges_rows(const tl_row_ranges *rr);

/* Appends [s, e) (s at or after the last range's start), merged with the
 * last range when they touch; -1 when out of memory. */
int tl_row_ranges_push(tl_row_ranges *rr, int64_t s, int64_t e);

/* Sets *out (empty on entry) to the rows of row group g of the file r reads
 * that may match. Without page indexes the ranges are the whole row group
 * (or nothing, when its statistics rule it out). */
tl_status tl_page_select(const tl_table *t, tl_parquet_reader *r, int g,
                         const tl_scan_filter *filters, size_t n_filters, tl_row_ranges *out,
                         tl_error *err);

#endif
