/* Row-group pruning from a Parquet footer: the same time-range and series-key
 * restrictions that prune whole files by their manifest bounds (scan.h),
 * applied to each row group's column statistics. A row group is left out
 * only when no reference of the query can want any of its rows; rows of one
 * (series key, time) share their key and time, so deduplication across files
 * never needs a row group the filters exclude. */
#ifndef TL_QUERY_ROW_GROUP_PRUNE_H
#define TL_QUERY_ROW_GROUP_PRUNE_H

#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/parquet_subset.h"
#include "query/scan.h"

/* The leaf column index in m of field `field` of t's current schema, or -1. */
int tl_pq_leaf_of_field(const tl_pq_file_meta *m, const tl_ice_field *field);

/* Per leaf column of m (*n of them): whether a query reading `fields` (per
 * field of t's current schema; NULL: every one) decodes it, by the
 * top-level column the leaf belongs to (a nested column has several
 * leaves); a column no field maps to is read. Malloc'd; NULL when out of
 * memory. */
bool *tl_pq_leaves_read(const tl_table *t, const tl_pq_file_meta *m, const bool *fields, size_t *n);

/* Whether row group g of m may hold rows any of the filters want. */
bool tl_row_group_needed(const tl_table *t, const tl_pq_file_meta *m, size_t g,
                         const tl_scan_filter *filters, size_t n_filters);

/* The time range (microseconds, inclusive) the statistics of row group g
 * give t's time column; false when they give none. */
bool tl_row_group_time(const tl_table *t, const tl_pq_file_meta *m, size_t g, int64_t *lo,
                       int64_t *hi);

/* The share of the rows of row group g of m that the filters' time ranges
 * hold, were its rows spread evenly over its time bounds (rows sorted by
 * series then time are: each series spans them); the filters' shares add
 * up, to 1 at most. 1 when the statistics give no time bounds; 0 when no
 * filter wants the row group. */
double tl_row_group_time_share(const tl_table *t, const tl_pq_file_meta *m, size_t g,
                               const tl_scan_filter *filters, size_t n_filters);

/* Whether values between min and max (statistics of a page or chunk of the
 * time column, schema element e) may fall in the filter's time range; true
 * when the bounds cannot tell. */
bool tl_time_bounds_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                          const tl_pq_bytes *min, const tl_pq_bytes *max);

/* The same for the first series-key column and the filter's keys. */
bool tl_key_bounds_match(const tl_scan_filter *f, const tl_pq_schema_element *e,
                         const tl_pq_bytes *min, const tl_pq_bytes *max);

#endif
