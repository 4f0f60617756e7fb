/* Timelake's time_bucket and date_bin for DuckDB (see time_bucket.c). */
#ifndef TL_QUERY_TIME_BUCKET_H
#define TL_QUERY_TIME_BUCKET_H

#include <duckdb.h>

#include "core/error.h"

#define TL_BIN_FUNCTION "__tl_time_bin"

/* Registers __tl_time_bin(INTERVAL, TIMESTAMP[TZ] [, origin TIMESTAMPTZ])
 * on the connection. */
tl_status tl_query_register_bucket(duckdb_connection conn, tl_error *err);

#endif
