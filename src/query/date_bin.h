/* The reference's date_bin for DuckDB (see date_bin.c): the time_bucket and
 * date_bin macros of the engine (engine.c) call it for widths with months,
 * widths that are not positive, and origins. */
#ifndef TL_QUERY_DATE_BIN_H
#define TL_QUERY_DATE_BIN_H

#include <duckdb.h>

#include "core/error.h"

#define TL_DATE_BIN_FUNCTION "__tl_date_bin"

/* Registers __tl_date_bin(months BIGINT, width_us BIGINT, ts TIMESTAMP[TZ],
 * origin TIMESTAMPTZ) on the connection. */
tl_status tl_query_register_date_bin(duckdb_connection conn, tl_error *err);

#endif
