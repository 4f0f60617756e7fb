/* Timelake's integer time bucketing for DuckDB (see time_bucket.c). */
#ifndef TL_QUERY_TIME_BUCKET_H
#define TL_QUERY_TIME_BUCKET_H

#include <duckdb.h>

#include "core/error.h"

#define TL_BUCKET_FUNCTION "__tl_bucket_us"

/* Registers __tl_bucket_us(BIGINT, TIMESTAMP[TZ]) on the connection. */
tl_status tl_query_register_bucket(duckdb_connection conn, tl_error *err);

#endif
