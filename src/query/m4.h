/* The m4 aggregate for DuckDB (see m4.c). */
#ifndef TL_QUERY_M4_H
#define TL_QUERY_M4_H

#include <duckdb.h>

#include "core/error.h"

/* Registers m4(TIMESTAMP[TZ], DOUBLE) and m4(LIST(STRUCT(time, value))). */
tl_status tl_query_register_m4(duckdb_connection conn, tl_error *err);

#endif
