/* Fetching the data files a query needs from a remote warehouse, in as few
 * round trips as the files allow:
 *  - one parallel batch: small files (below TL_RANGED_READ_MIN) whole, and
 *    the tail of each large file (its footer, usually in one piece);
 *  - then, for large files, one parallel batch of ranged reads of just the
 *    column chunks the query needs (the row groups its time / series-key
 *    restrictions may match, the columns it names; neighbouring ranges
 *    coalesced), written out as a smaller valid Parquet file for DuckDB
 *    (formats/parquet/parquet_subset.h).
 * Files of a local warehouse are read where they are. */
#ifndef TL_QUERY_REMOTE_FETCH_H
#define TL_QUERY_REMOTE_FETCH_H

#include "query/engine.h"
#include "query/scan.h"

/* Files at least this large are read by ranges. */
#define TL_RANGED_READ_MIN (UINT64_C(1) << 20)
/* The first read of a large file's tail: the footer and usually the page
 * index before it, in one request. */
#define TL_FOOTER_READ (UINT64_C(64) << 10)
/* Ranges closer than this are read as one. */
#define TL_COALESCE_GAP (UINT64_C(64) << 10)

typedef struct tl_fetch_file {
    const tl_live_file *f; /* in */
    char *path;            /* out (malloc'd): where DuckDB reads it; NULL: no row group can match */
    int64_t bytes_read;    /* out: bytes fetched for it (0 when local or already fetched) */
    int64_t row_groups_total, row_groups_read; /* out */
} tl_fetch_file;

/* Resolves every file to a local path. `filters` are the query's
 * restrictions on t (as for tl_scan_file_needed; n_filters 0: everything). */
tl_status tl_query_fetch(tl_query_engine *e, const tl_table *t, tl_fetch_file *files, size_t n,
                         const tl_scan_filter *filters, size_t n_filters, tl_error *err);

#endif
