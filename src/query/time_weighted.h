/* The time-weighted mean aggregates for DuckDB (see time_weighted.c). */
#ifndef TL_QUERY_TIME_WEIGHTED_H
#define TL_QUERY_TIME_WEIGHTED_H

#include <duckdb.h>

#include "core/error.h"

/* Registers time_weighted_mean and time_weighted_state, each over
 * (TIMESTAMP[TZ], DOUBLE [, VARCHAR]) and over (state [, VARCHAR]). */
tl_status tl_query_register_time_weighted(duckdb_connection conn, tl_error *err);

/* The state's type: LIST(STRUCT(first_time BIGINT, first_value DOUBLE,
 * first_span BIGINT, last_time BIGINT, last_value DOUBLE, last_span BIGINT,
 * area DOUBLE)); the caller destroys it. */
duckdb_logical_type tl_time_weighted_state_type(void);

#endif
