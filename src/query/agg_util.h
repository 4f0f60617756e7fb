/* Helpers of Timelake's aggregate functions for DuckDB (m4.c,
 * time_weighted.c): defining overloads, the total order of doubles the
 * reference compares values by, and LIST results written in finalize. */
#ifndef TL_QUERY_AGG_UTIL_H
#define TL_QUERY_AGG_UTIL_H

#include <duckdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"

/* The total order of doubles (IEEE 754 totalOrder, Rust's f64::total_cmp):
 * -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN. */
static inline int tl_f64_total_cmp(double a, double b)
{
    int64_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    x ^= (int64_t)((uint64_t)(x >> 63) >> 1);
    y ^= (int64_t)((uint64_t)(y >> 63) >> 1);
    return (x > y) - (x < y);
}

static inline double tl_f64_total_max(double a, double b)
{
    return tl_f64_total_cmp(a, b) >= 0 ? a : b;
}

typedef struct tl_agg_callbacks {
    duckdb_aggregate_state_size size;
    duckdb_aggregate_init_t init;
    duckdb_aggregate_update_t update;
    duckdb_aggregate_combine_t combine;
    duckdb_aggregate_finalize_t finalize;
    duckdb_aggregate_destroy_t destroy; /* may be NULL */
} tl_agg_callbacks;

/* Adds an overload named `name` taking `params` and returning `ret` (types
 * borrowed) to `set`; `extra` (static, may be NULL) is what
 * duckdb_aggregate_function_get_extra_info gives its callbacks. */
tl_status tl_agg_add(duckdb_aggregate_function_set set, const char *name,
                     duckdb_logical_type const *params, size_t n_params, duckdb_logical_type ret,
                     const tl_agg_callbacks *cb, const void *extra, tl_error *err);

/* Registers the set on the connection and destroys it. */
tl_status tl_agg_register(duckdb_connection conn, duckdb_aggregate_function_set *set,
                          const char *name, tl_error *err);

/* LIST(STRUCT(time <time>, value DOUBLE)): the points m4 returns. */
duckdb_logical_type tl_points_type(duckdb_type time);

/* Makes row `row` of a LIST result vector a list of n new entries; *first
 * is the index of the first in the child vector. false when out of memory. */
bool tl_list_result_add(duckdb_vector result, idx_t row, idx_t n, idx_t *first);

/* Marks row `row` of a result vector NULL. */
void tl_result_set_null(duckdb_vector result, idx_t row);

#endif
