/* __tl_time_bin(width, ts [, origin]): the reference's time_bucket and
 * date_bin (DataFusion's date_bin), which the engine's time_bucket and
 * date_bin macros (engine.c) are. Bins start at the Unix epoch unless an
 * origin is given. A positive width without months is floored in plain
 * integer arithmetic: DuckDB's own time_bucket on TIMESTAMPTZ goes through
 * ICU calendar arithmetic for every row and was most of the time of a
 * bucketed query. The rest (months, widths that are not positive, origins)
 * take date_bin.c. One function call rather than a CASE over the width's
 * parts in SQL: binding that expression cost a small query most of a
 * millisecond. */
#include "query/time_bucket.h"

#include <stdbool.h>
#include <stdint.h>

#include "query/date_bin.h"
#include "query/time_floor.h"

#define US_PER_DAY INT64_C(86400000000)

/* The width's months, and the rest of it in microseconds; false when the
 * rest does not fit in 64 bits. */
static bool width_of(duckdb_interval w, int64_t *months, int64_t *us)
{
    *months = w.months;
    return !__builtin_mul_overflow((int64_t)w.days, US_PER_DAY, us) &&
           !__builtin_add_overflow(*us, w.micros, us);
}

/* The common case: valid rows and one positive width without months for
 * the whole chunk, binned from the epoch. */
static bool bin_uniform(const duckdb_interval *w, const int64_t *ts, idx_t n, int64_t *out)
{
    if (n == 0) return true;
    int64_t months, width;
    if (!width_of(w[0], &months, &width) || months != 0 || width <= 0) return false;
    for (idx_t i = 1; i < n; i++)
        if (w[i].months != w[0].months || w[i].days != w[0].days || w[i].micros != w[0].micros)
            return false;
    double inv = 1.0 / (double)width;
    bool ok = true;
    for (idx_t i = 0; i < n; i++) ok &= tl_time_floor(ts[i], width, inv, &out[i]);
    return ok;
}

/* One row's bin; false with *error set. */
static bool bin_row(duckdb_interval w, int64_t ts, const int64_t *origin, int64_t *out,
                    const char **error)
{
    int64_t months, width;
    if (!width_of(w, &months, &width)) {
        *error = "date_bin: the width is out of range";
        return false;
    }
    if (origin == NULL && months == 0 && width > 0) {
        if (tl_time_floor_exact(ts, width, out)) return true;
        *error = "time_bucket: the bucket is out of range";
        return false;
    }
    return tl_date_bin_row(months, width, ts, origin ? *origin : 0, out, error);
}

static void bin(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output)
{
    idx_t n = duckdb_data_chunk_get_size(input), cols = duckdb_data_chunk_get_column_count(input);
    duckdb_vector wv = duckdb_data_chunk_get_vector(input, 0);
    duckdb_vector tv = duckdb_data_chunk_get_vector(input, 1);
    duckdb_vector ov = cols > 2 ? duckdb_data_chunk_get_vector(input, 2) : NULL;
    const duckdb_interval *w = duckdb_vector_get_data(wv);
    const int64_t *ts = duckdb_vector_get_data(tv);
    const int64_t *origin = ov ? duckdb_vector_get_data(ov) : NULL;
    uint64_t *wvalid = duckdb_vector_get_validity(wv);
    uint64_t *tvalid = duckdb_vector_get_validity(tv);
    uint64_t *ovalid = ov ? duckdb_vector_get_validity(ov) : NULL;
    int64_t *out = duckdb_vector_get_data(output);
    uint64_t *outvalid = NULL;
    if (ov == NULL && wvalid == NULL && tvalid == NULL && bin_uniform(w, ts, n, out)) return;
    for (idx_t i = 0; i < n; i++) {
        out[i] = 0;
        if (!duckdb_validity_row_is_valid(wvalid, i) || !duckdb_validity_row_is_valid(tvalid, i) ||
            (ov && !duckdb_validity_row_is_valid(ovalid, i))) {
            if (outvalid == NULL) {
                duckdb_vector_ensure_validity_writable(output);
                outvalid = duckdb_vector_get_validity(output);
            }
            duckdb_validity_set_row_invalid(outvalid, i);
            continue;
        }
        const char *error = NULL;
        if (!bin_row(w[i], ts[i], origin ? &origin[i] : NULL, &out[i], &error)) {
            duckdb_scalar_function_set_error(info, error);
            return;
        }
    }
}

static tl_status add_overload(duckdb_scalar_function_set set, duckdb_type ts_type, bool origin,
                              tl_error *err)
{
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_logical_type width = duckdb_create_logical_type(DUCKDB_TYPE_INTERVAL);
    duckdb_logical_type ts = duckdb_create_logical_type(ts_type);
    duckdb_logical_type tz = duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP_TZ);
    duckdb_scalar_function_set_name(f, TL_BIN_FUNCTION);
    duckdb_scalar_function_add_parameter(f, width);
    duckdb_scalar_function_add_parameter(f, ts);
    if (origin) duckdb_scalar_function_add_parameter(f, tz);
    duckdb_scalar_function_set_return_type(f, ts);
    duckdb_scalar_function_set_function(f, bin);
    duckdb_state s = duckdb_add_scalar_function_to_set(set, f);
    duckdb_destroy_logical_type(&width);
    duckdb_destroy_logical_type(&ts);
    duckdb_destroy_logical_type(&tz);
    duckdb_destroy_scalar_function(&f);
    return s == DuckDBSuccess ? TL_OK
                              : tl_error_set(err, TL_ERR_QUERY, "cannot define " TL_BIN_FUNCTION);
}

tl_status tl_query_register_bucket(duckdb_connection conn, tl_error *err)
{
    duckdb_scalar_function_set set = duckdb_create_scalar_function_set(TL_BIN_FUNCTION);
    tl_status st = TL_OK;
    for (int origin = 0; st == TL_OK && origin < 2; origin++) {
        st = add_overload(set, DUCKDB_TYPE_TIMESTAMP, origin, err);
        if (st == TL_OK) st = add_overload(set, DUCKDB_TYPE_TIMESTAMP_TZ, origin, err);
    }
    if (st == TL_OK && duckdb_register_scalar_function_set(conn, set) != DuckDBSuccess)
        st = tl_error_set(err, TL_ERR_QUERY, "cannot register " TL_BIN_FUNCTION);
    duckdb_destroy_scalar_function_set(&set);
    return st;
}
