#include "query/agg_util.h"

tl_status tl_agg_add(duckdb_aggregate_function_set set, const char *name,
                     duckdb_logical_type const *params, size_t n_params, duckdb_logical_type ret,
                     const tl_agg_callbacks *cb, const void *extra, tl_error *err)
{
    duckdb_aggregate_function f = duckdb_create_aggregate_function();
    duckdb_aggregate_function_set_name(f, name);
    for (size_t i = 0; i < n_params; i++) duckdb_aggregate_function_add_parameter(f, params[i]);
    duckdb_aggregate_function_set_return_type(f, ret);
    duckdb_aggregate_function_set_functions(f, cb->size, cb->init, cb->update, cb->combine,
                                            cb->finalize);
    if (cb->destroy) duckdb_aggregate_function_set_destructor(f, cb->destroy);
    /* Rows with a NULL argument reach update, which skips them. */
    duckdb_aggregate_function_set_special_handling(f);
    if (extra) duckdb_aggregate_function_set_extra_info(f, (void *)extra, NULL);
    duckdb_state s = duckdb_add_aggregate_function_to_set(set, f);
    duckdb_destroy_aggregate_function(&f);
    return s == DuckDBSuccess ? TL_OK : tl_error_set(err, TL_ERR_QUERY, "cannot define %s", name);
}

tl_status tl_agg_register(duckdb_connection conn, duckdb_aggregate_function_set *set,
                          const char *name, tl_error *err)
{
    duckdb_state s = duckdb_register_aggregate_function_set(conn, *set);
    duckdb_destroy_aggregate_function_set(set);
    return s == DuckDBSuccess ? TL_OK : tl_error_set(err, TL_ERR_QUERY, "cannot register %s", name);
}

duckdb_logical_type tl_points_type(duckdb_type time)
{
    duckdb_logical_type members[2] = {duckdb_create_logical_type(time),
                                      duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE)};
    const char *names[2] = {"time", "value"};
    duckdb_logical_type point = duckdb_create_struct_type(members, names, 2);
    duckdb_logical_type list = duckdb_create_list_type(point);
    duckdb_destroy_logical_type(&point);
    for (size_t i = 0; i < 2; i++) duckdb_destroy_logical_type(&members[i]);
    return list;
}

bool tl_list_result_add(duckdb_vector result, idx_t row, idx_t n, idx_t *first)
{
    idx_t size = duckdb_list_vector_get_size(result);
    if (duckdb_list_vector_reserve(result, size + n) != DuckDBSuccess ||
        duckdb_list_vector_set_size(result, size + n) != DuckDBSuccess)
        return false;
    duckdb_list_entry *entries = duckdb_vector_get_data(result);
    entries[row] = (duckdb_list_entry){size, n};
    *first = size;
    return true;
}

void tl_result_set_null(duckdb_vector result, idx_t row)
{
    duckdb_vector_ensure_validity_writable(result);
    duckdb_validity_set_row_invalid(duckdb_vector_get_validity(result), row);
}
