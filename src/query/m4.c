/* m4(time, value) and m4(points): the M4 downsampling of a group's points,
 * the reference's way. Of the points with a time and a value it keeps the
 * first and the last (by time, then value: the smallest value first at
 * equal times, the largest last), the smallest value (its earliest time)
 * and the largest (its earliest time), values compared in their total
 * order (NaN above infinity); it returns them once each, as a list of
 * {time, value} sorted by time, then value ([] for no points). m4 of lists
 * other m4 calls returned is the m4 of all their points: a rollup keeps the
 * lists, and coarser buckets merge them. */
#include "query/m4.h"

#include <stdbool.h>
#include <stdint.h>

#include "query/agg_util.h"

typedef struct point {
    int64_t t;
    double v;
} point;

typedef struct m4_state {
    bool any;
    point first, last, lo, hi;
} m4_state;

/* By time, then value. */
static int by_time(point a, point b)
{
    return a.t != b.t ? (a.t > b.t) - (a.t < b.t) : tl_f64_total_cmp(a.v, b.v);
}

/* By value, then the earlier time first. */
static int by_value(point a, point b)
{
    int c = tl_f64_total_cmp(a.v, b.v);
    return c ? c : (a.t > b.t) - (a.t < b.t);
}

static void add(m4_state *s, point p)
{
    if (!s->any) {
        *s = (m4_state){true, p, p, p, p};
        return;
    }
    if (by_time(p, s->first) < 0) s->first = p;
    if (by_time(p, s->last) > 0) s->last = p;
    if (by_value(p, s->lo) < 0) s->lo = p;
    int c = tl_f64_total_cmp(p.v, s->hi.v);
    if (c > 0 || (c == 0 && p.t < s->hi.t)) s->hi = p;
}

static idx_t state_size(duckdb_function_info info)
{
    (void)info;
    return sizeof(m4_state);
}

static void state_init(duckdb_function_info info, duckdb_aggregate_state state)
{
    (void)info;
    *(m4_state *)state = (m4_state){0};
}

/* m4(time, value) */
static void update_points(duckdb_function_info info, duckdb_data_chunk input,
                          duckdb_aggregate_state *states)
{
    (void)info;
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector tv = duckdb_data_chunk_get_vector(input, 0);
    duckdb_vector vv = duckdb_data_chunk_get_vector(input, 1);
    const int64_t *t = duckdb_vector_get_data(tv);
    const double *v = duckdb_vector_get_data(vv);
    uint64_t *tvalid = duckdb_vector_get_validity(tv), *vvalid = duckdb_vector_get_validity(vv);
    for (idx_t i = 0; i < n; i++)
        if (duckdb_validity_row_is_valid(tvalid, i) && duckdb_validity_row_is_valid(vvalid, i))
            add((m4_state *)states[i], (point){t[i], v[i]});
}

/* m4(points): each list's points, nulls (lists, points, times, values) skipped. */
static void update_lists(duckdb_function_info info, duckdb_data_chunk input,
                         duckdb_aggregate_state *states)
{
    (void)info;
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector lv = duckdb_data_chunk_get_vector(input, 0);
    const duckdb_list_entry *entries = duckdb_vector_get_data(lv);
    uint64_t *lvalid = duckdb_vector_get_validity(lv);
    duckdb_vector pv = duckdb_list_vector_get_child(lv);
    uint64_t *pvalid = duckdb_vector_get_validity(pv);
    duckdb_vector tv = duckdb_struct_vector_get_child(pv, 0);
    duckdb_vector vv = duckdb_struct_vector_get_child(pv, 1);
    const int64_t *t = duckdb_vector_get_data(tv);
    const double *v = duckdb_vector_get_data(vv);
    uint64_t *tvalid = duckdb_vector_get_validity(tv), *vvalid = duckdb_vector_get_validity(vv);
    for (idx_t i = 0; i < n; i++) {
        if (!duckdb_validity_row_is_valid(lvalid, i)) continue;
        for (idx_t j = entries[i].offset; j < entries[i].offset + entries[i].length; j++)
            if (duckdb_validity_row_is_valid(pvalid, j) &&
                duckdb_validity_row_is_valid(tvalid, j) && duckdb_validity_row_is_valid(vvalid, j))
                add((m4_state *)states[i], (point){t[j], v[j]});
    }
}

static void combine(duckdb_function_info info, duckdb_aggregate_state *source,
                    duckdb_aggregate_state *target, idx_t count)
{
    (void)info;
    for (idx_t i = 0; i < count; i++) {
        const m4_state *s = (const m4_state *)source[i];
        if (!s->any) continue;
        const point ps[4] = {s->first, s->last, s->lo, s->hi};
        for (size_t k = 0; k < 4; k++) add((m4_state *)target[i], ps[k]);
    }
}

/* The state's distinct points sorted by time, then value; returns how many. */
static size_t sorted_points(const m4_state *s, point out[4])
{
    if (!s->any) return 0;
    const point ps[4] = {s->first, s->lo, s->hi, s->last};
    size_t n = 0;
    for (size_t k = 0; k < 4; k++) {
        size_t at = n;
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++) dup = by_time(out[j], ps[k]) == 0;
        if (dup) continue;
        while (at > 0 && by_time(out[at - 1], ps[k]) > 0) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = ps[k];
        n++;
    }
    return n;
}

static void finalize(duckdb_function_info info, duckdb_aggregate_state *source,
                     duckdb_vector result, idx_t count, idx_t offset)
{
    duckdb_vector child = duckdb_list_vector_get_child(result);
    for (idx_t i = 0; i < count; i++) {
        point ps[4];
        size_t n = sorted_points((const m4_state *)source[i], ps);
        idx_t first;
        if (!tl_list_result_add(result, offset + i, n, &first)) {
            duckdb_aggregate_function_set_error(info, "m4: out of memory");
            return;
        }
        /* Reserving may move the child's buffers: read them after. */
        child = duckdb_list_vector_get_child(result);
        int64_t *t = duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 0));
        double *v = duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 1));
        for (size_t k = 0; k < n; k++) {
            t[first + k] = ps[k].t;
            v[first + k] = ps[k].v;
        }
    }
}

tl_status tl_query_register_m4(duckdb_connection conn, tl_error *err)
{
    static const tl_agg_callbacks points = {state_size, state_init, update_points,
                                            combine,    finalize,   NULL};
    static const tl_agg_callbacks lists = {state_size, state_init, update_lists,
                                           combine,    finalize,   NULL};
    duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set("m4");
    duckdb_logical_type value = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    const duckdb_type times[2] = {DUCKDB_TYPE_TIMESTAMP, DUCKDB_TYPE_TIMESTAMP_TZ};
    tl_status st = TL_OK;
    for (size_t i = 0; i < 2 && st == TL_OK; i++) {
        duckdb_logical_type time = duckdb_create_logical_type(times[i]);
        duckdb_logical_type list = tl_points_type(times[i]);
        duckdb_logical_type pair[2] = {time, value};
        st = tl_agg_add(set, "m4", pair, 2, list, &points, NULL, err);
        if (st == TL_OK) st = tl_agg_add(set, "m4", &list, 1, list, &lists, NULL, err);
        duckdb_destroy_logical_type(&time);
        duckdb_destroy_logical_type(&list);
    }
    duckdb_destroy_logical_type(&value);
    if (st != TL_OK) {
        duckdb_destroy_aggregate_function_set(&set);
        return st;
    }
    return tl_agg_register(conn, &set, "m4", err);
}
