/* The scan of one lake table for DuckDB: the SQL of a view over the current
 * snapshot's Parquet files that survive pruning. Files of a partition whose
 * time ranges overlap are deduplicated on read (for dedup tables): the latest
 * write of each (series key..., time) wins, by higher ingest time, then
 * higher data sequence number, then the later row of a file. Files that
 * overlap nothing are read as they are, at no extra cost. */
#ifndef TL_QUERY_SCAN_H
#define TL_QUERY_SCAN_H

#include <stdbool.h>

#include "core/buf.h"
#include "query/engine.h"
#include "table/live_files.h"

/* Options of every read_parquet of lake files: the partition directories
 * (time_day=...) are not columns. */
#define TL_SCAN_OPTIONS "hive_partitioning = false"

/* A restriction of a partition column (a partition_by source column) by a
 * WHERE clause: to `values` (= or IN), to a bound, or to nulls or non-nulls.
 * Values are text in the column's form: a string as it is, a number in
 * decimal, "true"/"false", a date "YYYY-MM-DD", a timestamp in epoch
 * microseconds. */
typedef struct tl_scan_column {
    int column;    /* index in the current schema */
    char **values; /* NULL: not a list */
    size_t n_values;
    char *lo, *hi;             /* NULL: unbounded */
    bool lo_strict, hi_strict; /* the bound itself is excluded (exact values only) */
    int nulls;                 /* 1: IS NULL; -1: IS NOT NULL; 0: neither */
} tl_scan_column;

/* What one reference to a table in a query needs. */
typedef struct tl_scan_filter {
    bool has_lo, has_hi; /* time range in microseconds, inclusive */
    int64_t lo, hi;
    bool has_keys; /* first series-key column restricted to `keys` */
    char **keys;   /* values as text */
    size_t n_keys;
    tl_scan_column *columns; /* restrictions of partition columns, all of them to hold */
    size_t n_columns;
} tl_scan_filter;

void tl_scan_filter_clear(tl_scan_filter *f);

/* Whether the partition values of file f (of the table's default spec) meet
 * every partition column restriction of filter f (partition_prune.c). */
bool tl_scan_partition_admits(const tl_table *t, const tl_ice_data_file *f,
                              const tl_scan_filter *filter);

/* Whether file f may hold rows any of the filters want. */
bool tl_scan_file_needed(const tl_table *t, const tl_ice_data_file *f,
                         const tl_scan_filter *filters, size_t n_filters);

/* The time range (microseconds, inclusive) file f's manifest bounds give
 * for the table's time column; false when the table has none or either
 * bound is absent. */
bool tl_scan_time_bounds(const tl_table *t, const tl_ice_data_file *f, int64_t *lo, int64_t *hi);

/* The local path of a file URL of table t, or NULL when it is no local file
 * or t's warehouse is not local (a local lake copied to an object store or a
 * web server keeps file:// URLs: they are read through the store). Malloc'd. */
char *tl_scan_local_path(const tl_table *t, const char *url);

/* Whether tl_scan_local_path gives a path for url. */
bool tl_scan_is_local(const tl_table *t, const char *url);

typedef struct tl_scan_stats {
    /* in: count row groups and bytes of local files exactly, from their
     * footers (scan_local.h); otherwise whole local files are counted, at
     * no cost to the query */
    bool exact;
    int64_t files_total, files_read, row_groups_total, row_groups_read, bytes_read;
    /* out: views that hold exactly the rows their one filter selects, no
     * superset (a selective scan, selective_scan.h) */
    int64_t exact_views;
} tl_scan_stats;

/* Adds what `from` counted (files, row groups and bytes, looked at and
 * read) to `to`; `exact` and `exact_views` are the caller's. */
void tl_scan_stats_add(tl_scan_stats *to, const tl_scan_stats *from);

/* Appends to *sql the SELECT of table t over the live files that pass the
 * filters (all files when n_filters is 0 and all_files is true). Files of a
 * remote warehouse are fetched into the engine's directory first. */
tl_status tl_scan_sql(tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                      const tl_scan_filter *filters, size_t n_filters, bool all_files, tl_buf *sql,
                      tl_scan_stats *stats, tl_error *err);

/* The rows a scan of every live file in lf returns, from the manifests'
 * record counts alone: *known is false when the scan would have to read
 * files to know (dedup on read merges files whose time ranges overlap in a
 * partition, or delete files are present). */
tl_status tl_scan_count(const tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                        bool *known, int64_t *rows, tl_error *err);

/* pending[i] (lf->n entries): whether live file i may hold a row whose
 * (series key..., time) another file holds too, merged on read (it overlaps
 * another file of its partition in time, and the table reads with dedup);
 * the other files' rows are read as they are. */
tl_status tl_scan_pending(const tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                          bool *pending, tl_error *err);

/* dedup[i] (n entries): whether files[i] is read through the dedup window
 * when a scan reads these n files: the table reads with dedup and its time
 * range overlaps another of them in its partition (scan_cost.h weighs it). */
tl_status tl_scan_overlaps(const tl_query_engine *e, const tl_table *t,
                           const tl_live_file *const *files, size_t n, bool *dedup, tl_error *err);

/* The SQL type DuckDB reads a column of this field's type as (buf, of
 * TL_SCAN_DUCK_TYPE_MAX bytes, holds a decimal's or a nested type's). */
#define TL_SCAN_DUCK_TYPE_MAX 1024
const char *tl_scan_duck_type(const tl_ice_field *f, char *buf, size_t size);

/* A SELECT of no rows with the table's columns and types. */
tl_status tl_scan_empty_sql(const tl_table *t, tl_buf *sql, tl_error *err);

#endif
