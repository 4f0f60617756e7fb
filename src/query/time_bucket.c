/* __tl_bucket_us(width_us, ts): ts floored to a multiple of width_us
 * microseconds since the Unix epoch, in plain integer arithmetic. The
 * time_bucket macro of the engine (engine.c) uses it for every width without
 * months: DuckDB's own time_bucket on TIMESTAMPTZ goes through ICU calendar
 * arithmetic for every row and was most of the time of a bucketed query. */
#include "query/time_bucket.h"

#include <stdbool.h>
#include <stdint.h>

#include "query/time_floor.h"

/* The common case: valid rows and one positive width for the whole chunk. */
static bool bucket_uniform(const int64_t *w, const int64_t *ts, idx_t n, int64_t *out)
{
    if (n == 0) return true;
    int64_t width = w[0];
    if (width <= 0) return false;
    for (idx_t i = 1; i < n; i++)
        if (w[i] != width) return false;
    double inv = 1.0 / (double)width;
    bool ok = true;
    for (idx_t i = 0; i < n; i++) ok &= tl_time_floor(ts[i], width, inv, &out[i]);
    return ok;
}

static void bucket(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector wv = duckdb_data_chunk_get_vector(input, 0);
    duckdb_vector tv = duckdb_data_chunk_get_vector(input, 1);
    const int64_t *w = duckdb_vector_get_data(wv), *ts = duckdb_vector_get_data(tv);
    uint64_t *wvalid = duckdb_vector_get_validity(wv);
    uint64_t *tvalid = duckdb_vector_get_validity(tv);
    int64_t *out = duckdb_vector_get_data(output);
    uint64_t *ovalid = NULL;
    if (wvalid == NULL && tvalid == NULL && bucket_uniform(w, ts, n, out)) return;
    for (idx_t i = 0; i < n; i++) {
        if (!duckdb_validity_row_is_valid(wvalid, i) || !duckdb_validity_row_is_valid(tvalid, i)) {
            if (ovalid == NULL) {
                duckdb_vector_ensure_validity_writable(output);
                ovalid = duckdb_vector_get_validity(output);
            }
            duckdb_validity_set_row_invalid(ovalid, i);
            out[i] = 0;
            continue;
        }
        if (w[i] <= 0) {
            duckdb_scalar_function_set_error(info, "time_bucket: the width must be positive");
            return;
        }
        if (!tl_time_floor_exact(ts[i], w[i], &out[i])) {
            duckdb_scalar_function_set_error(info, "time_bucket: the bucket is out of range");
            return;
        }
    }
}

static tl_status add_overload(duckdb_scalar_function_set set, duckdb_type ts_type, tl_error *err)
{
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_logical_type width = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_logical_type ts = duckdb_create_logical_type(ts_type);
    duckdb_scalar_function_set_name(f, TL_BUCKET_FUNCTION);
    duckdb_scalar_function_add_parameter(f, width);
    duckdb_scalar_function_add_parameter(f, ts);
    duckdb_scalar_function_set_return_type(f, ts);
    duckdb_scalar_function_set_function(f, bucket);
    duckdb_state s = duckdb_add_scalar_function_to_set(set, f);
    duckdb_destroy_logical_type(&width);
    duckdb_destroy_logical_type(&ts);
    duckdb_destroy_scalar_function(&f);
    return s == DuckDBSuccess
               ? TL_OK
               : tl_error_set(err, TL_ERR_QUERY, "cannot define " TL_BUCKET_FUNCTION);
}

tl_status tl_query_register_bucket(duckdb_connection conn, tl_error *err)
{
    duckdb_scalar_function_set set = duckdb_create_scalar_function_set(TL_BUCKET_FUNCTION);
    tl_status st = add_overload(set, DUCKDB_TYPE_TIMESTAMP, err);
    if (st == TL_OK) st = add_overload(set, DUCKDB_TYPE_TIMESTAMP_TZ, err);
    if (st == TL_OK && duckdb_register_scalar_function_set(conn, set) != DuckDBSuccess)
        st = tl_error_set(err, TL_ERR_QUERY, "cannot register " TL_BUCKET_FUNCTION);
    duckdb_destroy_scalar_function_set(&set);
    return st;
}
