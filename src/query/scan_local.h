/* What a query reads of one local data file, from the file's footer: the
 * row groups that survive statistics pruning (row_group_prune.h) and the
 * bytes DuckDB then reads (the footer, and the column chunks of the columns
 * the query may use in those row groups). Used for `--stats` of local
 * tables, and to leave out files none of whose row groups can match. */
#ifndef TL_QUERY_SCAN_LOCAL_H
#define TL_QUERY_SCAN_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include "query/scan.h"

typedef struct tl_scan_local_read {
    int64_t row_groups_total, row_groups_read;
    int64_t bytes_read; /* 0 when no row group is read: the file is left out */
} tl_scan_local_read;

/* path: a local Parquet file of table t. fields: per field of t's current
 * schema, whether the query may use it (NULL: all). filters as for
 * tl_scan_file_needed (n_filters 0: every row group). */
tl_status tl_scan_local_read_of(const tl_table *t, const char *path, const bool *fields,
                                const tl_scan_filter *filters, size_t n_filters,
                                tl_scan_local_read *out, tl_error *err);

#endif
