/* time_weighted_mean and time_weighted_state, the reference's way.
 *
 * A group's readings (rows with a time and a value) are a signal sampled at
 * their times; readings at one time are one, the largest value (values
 * compared in their total order). Between two readings the signal holds the
 * earlier value ('forward_fill', 'ffill', the default) or runs straight to
 * the later one ('linear'). The mean is the area under the signal, in value
 * times microseconds, over the time from the first reading to the last;
 * with a single reading it is that reading's value; NULL with none.
 *
 * A state is what a group leaves for later merging: a list of at most one
 *   {first_time, first_value, first_span, last_time, last_value, last_span, area}
 * (times in microseconds; the spans the lengths of the first and last
 * intervals, 0 for a single reading; the area under the signal by the
 * method the state was made with; [] for no readings). States of groups
 * that follow one another in time merge exactly: the gap between two is
 * filled by the merge's method, and a reading at the time where one ends
 * and the next begins is the larger of the two, the intervals on either
 * side corrected by the spans. States that overlap in time cannot merge
 * (the readings between are gone): an error, as in the reference.
 *
 * Unlike the reference, time_weighted_mean(time, value) reads its rows in
 * any order (it keeps them, then sorts), where the reference's fails when
 * the runs it is handed overlap. */
#include "query/time_weighted.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/grow.h"
#include "query/agg_util.h"

/* A stretch of the signal: a reading (first_t == last_t, spans 0, area 0)
 * or a state. */
typedef struct run {
    int64_t first_t, first_span, last_t, last_span;
    double first_v, last_v, area;
} run;

enum method { METHOD_UNSET, METHOD_FFILL, METHOD_LINEAR };

typedef struct tw_state {
    run *runs;
    size_t n, cap;
    bool sorted; /* runs[] are in order of their first time (then last) */
    enum method method;
} tw_state;

/* What an overload takes and gives (the function's extra info). */
typedef struct tw_kind {
    bool states_in; /* its first argument is a state, not (time, value) */
    bool state_out; /* it returns a state, not the mean */
    const char *name;
} tw_kind;

static bool single(const run *r)
{
    return r->first_t == r->last_t;
}

/* Appends b to a (a ends at or before b's start): the gap filled by the
 * method, a reading where they touch the larger of the two. */
static void merge(run *a, const run *b, enum method m)
{
    bool linear = m == METHOD_LINEAR;
    int64_t span_after = single(b) ? 0 : b->last_span;
    if (a->last_t < b->first_t) {
        int64_t gap = b->first_t - a->last_t;
        double g = (double)gap;
        double fill = linear ? (a->last_v + b->first_v) / 2 * g : a->last_v * g;
        a->area = a->area + fill + b->area;
        if (single(a)) a->first_span = gap;
        a->last_span = single(b) ? gap : span_after;
        a->last_v = b->last_v;
    } else {
        double top = tl_f64_total_max(a->last_v, b->first_v);
        double fix = linear ? (top - a->last_v) / 2 * (double)a->last_span +
                                  (top - b->first_v) / 2 * (double)b->first_span
                            : (top - b->first_v) * (double)b->first_span;
        a->area = a->area + b->area + fix;
        if (single(a)) {
            a->first_v = top;
            a->first_span = b->first_span;
        }
        if (single(b)) {
            a->last_v = top;
        } else {
            a->last_v = b->last_v;
            a->last_span = span_after;
        }
    }
    a->last_t = b->last_t;
}

static int run_order(const void *pa, const void *pb)
{
    const run *a = pa, *b = pb;
    if (a->first_t != b->first_t) return (a->first_t > b->first_t) - (a->first_t < b->first_t);
    return (a->last_t > b->last_t) - (a->last_t < b->last_t);
}

static bool push(tw_state *s, const run *r)
{
    if (TL_GROW(s->runs, s->cap, s->n + 1, 8) != 0) return false;
    if (s->n && run_order(&s->runs[s->n - 1], r) > 0) s->sorted = false;
    s->runs[s->n++] = *r;
    return true;
}

/* The state's runs merged into one (*out), in time order; false when two
 * overlap. s->n must be positive. */
static bool merged(tw_state *s, run *out)
{
    if (!s->sorted) qsort(s->runs, s->n, sizeof *s->runs, run_order);
    s->sorted = true;
    *out = s->runs[0];
    for (size_t i = 1; i < s->n; i++) {
        if (s->runs[i].first_t < out->last_t) return false;
        merge(out, &s->runs[i], s->method);
    }
    return true;
}

static enum method parse_method(const char *text, size_t len)
{
    static const struct {
        const char *name;
        enum method m;
    } names[] = {
        {"forward_fill", METHOD_FFILL}, {"ffill", METHOD_FFILL}, {"linear", METHOD_LINEAR}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncasecmp(names[i].name, text, len) == 0)
            return names[i].m;
    return METHOD_UNSET;
}

/* The method a chunk's rows name (the argument is a string literal: the
 * plan checks it, sql_plan_functions.c), METHOD_FFILL without one, or
 * METHOD_UNSET (with the function's error set) for an unknown one. */
static enum method chunk_method(duckdb_function_info info, duckdb_data_chunk input, idx_t col,
                                const tw_kind *k)
{
    if (duckdb_data_chunk_get_column_count(input) <= col) return METHOD_FFILL;
    if (duckdb_data_chunk_get_size(input) == 0) return METHOD_FFILL;
    duckdb_vector mv = duckdb_data_chunk_get_vector(input, col);
    duckdb_string_t *str = duckdb_vector_get_data(mv);
    enum method m = duckdb_validity_row_is_valid(duckdb_vector_get_validity(mv), 0)
                        ? parse_method(duckdb_string_t_data(str), duckdb_string_t_length(*str))
                        : METHOD_UNSET;
    if (m == METHOD_UNSET) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: the method must be 'forward_fill' (or 'ffill') or 'linear'",
                 k->name);
        duckdb_aggregate_function_set_error(info, msg);
    }
    return m;
}

static idx_t state_size(duckdb_function_info info)
{
    (void)info;
    return sizeof(tw_state);
}

static void state_init(duckdb_function_info info, duckdb_aggregate_state state)
{
    (void)info;
    *(tw_state *)state = (tw_state){.sorted = true};
}

static void state_destroy(duckdb_aggregate_state *states, idx_t count)
{
    for (idx_t i = 0; i < count; i++) {
        tw_state *s = (tw_state *)states[i];
        free(s->runs);
        *s = (tw_state){.sorted = true};
    }
}

static void oom(duckdb_function_info info, const tw_kind *k)
{
    char msg[96];
    snprintf(msg, sizeof msg, "%s: out of memory", k->name);
    duckdb_aggregate_function_set_error(info, msg);
}

/* (time, value [, method]) */
static void update_points(duckdb_function_info info, duckdb_data_chunk input,
                          duckdb_aggregate_state *states)
{
    const tw_kind *k = duckdb_aggregate_function_get_extra_info(info);
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector tv = duckdb_data_chunk_get_vector(input, 0);
    duckdb_vector vv = duckdb_data_chunk_get_vector(input, 1);
    enum method m = chunk_method(info, input, 2, k);
    if (m == METHOD_UNSET) return;
    const int64_t *t = duckdb_vector_get_data(tv);
    const double *v = duckdb_vector_get_data(vv);
    uint64_t *tvalid = duckdb_vector_get_validity(tv), *vvalid = duckdb_vector_get_validity(vv);
    for (idx_t i = 0; i < n; i++) {
        tw_state *s = (tw_state *)states[i];
        s->method = m;
        if (!duckdb_validity_row_is_valid(tvalid, i) || !duckdb_validity_row_is_valid(vvalid, i))
            continue;
        run r = {t[i], 0, t[i], 0, v[i], v[i], 0};
        if (!push(s, &r)) return oom(info, k);
    }
}

/* (state [, method]): the list's runs, nulls skipped. */
static void update_states(duckdb_function_info info, duckdb_data_chunk input,
                          duckdb_aggregate_state *states)
{
    const tw_kind *k = duckdb_aggregate_function_get_extra_info(info);
    idx_t n = duckdb_data_chunk_get_size(input);
    duckdb_vector lv = duckdb_data_chunk_get_vector(input, 0);
    enum method m = chunk_method(info, input, 1, k);
    if (m == METHOD_UNSET) return;
    const duckdb_list_entry *entries = duckdb_vector_get_data(lv);
    uint64_t *lvalid = duckdb_vector_get_validity(lv);
    duckdb_vector rv = duckdb_list_vector_get_child(lv);
    uint64_t *rvalid = duckdb_vector_get_validity(rv);
    const int64_t *ints[4];
    const double *dbls[3];
    uint64_t *valid[7];
    static const int int_field[4] = {0, 2, 3, 5}, dbl_field[3] = {1, 4, 6};
    for (int f = 0; f < 7; f++)
        valid[f] = duckdb_vector_get_validity(duckdb_struct_vector_get_child(rv, (idx_t)f));
    for (int f = 0; f < 4; f++)
        ints[f] = duckdb_vector_get_data(duckdb_struct_vector_get_child(rv, (idx_t)int_field[f]));
    for (int f = 0; f < 3; f++)
        dbls[f] = duckdb_vector_get_data(duckdb_struct_vector_get_child(rv, (idx_t)dbl_field[f]));
    for (idx_t i = 0; i < n; i++) {
        tw_state *s = (tw_state *)states[i];
        s->method = m;
        if (!duckdb_validity_row_is_valid(lvalid, i)) continue;
        for (idx_t j = entries[i].offset; j < entries[i].offset + entries[i].length; j++) {
            bool ok = duckdb_validity_row_is_valid(rvalid, j);
            for (int f = 0; f < 7; f++) ok = ok && duckdb_validity_row_is_valid(valid[f], j);
            if (!ok) continue;
            run r = {ints[0][j], ints[1][j], ints[2][j], ints[3][j],
                     dbls[0][j], dbls[1][j], dbls[2][j]};
            if (r.last_t < r.first_t) {
                char msg[128];
                snprintf(msg, sizeof msg, "%s: a state ends before it begins", k->name);
                duckdb_aggregate_function_set_error(info, msg);
                return;
            }
            if (!push(s, &r)) return oom(info, k);
        }
    }
}

static void combine(duckdb_function_info info, duckdb_aggregate_state *source,
                    duckdb_aggregate_state *target, idx_t count)
{
    const tw_kind *k = duckdb_aggregate_function_get_extra_info(info);
    for (idx_t i = 0; i < count; i++) {
        const tw_state *s = (const tw_state *)source[i];
        tw_state *t = (tw_state *)target[i];
        if (t->method == METHOD_UNSET) t->method = s->method;
        for (size_t j = 0; j < s->n; j++)
            if (!push(t, &s->runs[j])) return oom(info, k);
    }
}

static void overlap(duckdb_function_info info, const tw_kind *k)
{
    char msg[400];
    snprintf(msg, sizeof msg,
             "%s: the states of a group overlap in time, and only states that follow one "
             "another merge: make them per series and per bucket, and merge them per series "
             "(GROUP BY the series key)",
             k->name);
    duckdb_aggregate_function_set_error(info, msg);
}

static void finalize_mean(duckdb_function_info info, duckdb_aggregate_state *source,
                          duckdb_vector result, idx_t count, idx_t offset)
{
    const tw_kind *k = duckdb_aggregate_function_get_extra_info(info);
    double *out = duckdb_vector_get_data(result);
    for (idx_t i = 0; i < count; i++) {
        tw_state *s = (tw_state *)source[i];
        run r;
        if (s->n == 0) {
            tl_result_set_null(result, offset + i);
            continue;
        }
        if (!merged(s, &r)) return overlap(info, k);
        out[offset + i] = single(&r) ? r.first_v : r.area / (double)(r.last_t - r.first_t);
    }
}

static void finalize_state(duckdb_function_info info, duckdb_aggregate_state *source,
                           duckdb_vector result, idx_t count, idx_t offset)
{
    const tw_kind *k = duckdb_aggregate_function_get_extra_info(info);
    for (idx_t i = 0; i < count; i++) {
        tw_state *s = (tw_state *)source[i];
        run r;
        if (s->n && !merged(s, &r)) return overlap(info, k);
        idx_t at;
        if (!tl_list_result_add(result, offset + i, s->n ? 1 : 0, &at)) return oom(info, k);
        if (s->n == 0) continue;
        duckdb_vector child = duckdb_list_vector_get_child(result);
        const int64_t ints[4] = {r.first_t, r.first_span, r.last_t, r.last_span};
        const double dbls[3] = {r.first_v, r.last_v, r.area};
        static const int int_field[4] = {0, 2, 3, 5}, dbl_field[3] = {1, 4, 6};
        for (int f = 0; f < 4; f++)
            ((int64_t *)duckdb_vector_get_data(
                duckdb_struct_vector_get_child(child, (idx_t)int_field[f])))[at] = ints[f];
        for (int f = 0; f < 3; f++)
            ((double *)duckdb_vector_get_data(
                duckdb_struct_vector_get_child(child, (idx_t)dbl_field[f])))[at] = dbls[f];
    }
}

duckdb_logical_type tl_time_weighted_state_type(void)
{
    static const char *const names[7] = {"first_time", "first_value", "first_span", "last_time",
                                         "last_value", "last_span",   "area"};
    duckdb_logical_type members[7];
    for (int f = 0; f < 7; f++)
        members[f] = duckdb_create_logical_type(f == 1 || f == 4 || f == 6 ? DUCKDB_TYPE_DOUBLE
                                                                           : DUCKDB_TYPE_BIGINT);
    duckdb_logical_type run_type = duckdb_create_struct_type(members, (const char **)names, 7);
    duckdb_logical_type list = duckdb_create_list_type(run_type);
    duckdb_destroy_logical_type(&run_type);
    for (int f = 0; f < 7; f++) duckdb_destroy_logical_type(&members[f]);
    return list;
}

/* The overloads of one function: (time, value [, method]) for both time
 * types, and (state [, method]). */
static tl_status add_overloads(duckdb_aggregate_function_set set, const tw_kind kinds[2],
                               tl_error *err)
{
    tl_agg_callbacks points = {state_size, state_init, update_points, combine, NULL, state_destroy};
    points.finalize = kinds[0].state_out ? finalize_state : finalize_mean;
    tl_agg_callbacks states = points;
    states.update = update_states;
    duckdb_logical_type value = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    duckdb_logical_type method = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type state = tl_time_weighted_state_type();
    duckdb_logical_type ret = kinds[0].state_out ? state : value;
    const duckdb_type times[2] = {DUCKDB_TYPE_TIMESTAMP, DUCKDB_TYPE_TIMESTAMP_TZ};
    tl_status st = TL_OK;
    for (size_t i = 0; i < 2 && st == TL_OK; i++) {
        duckdb_logical_type args[3] = {duckdb_create_logical_type(times[i]), value, method};
        for (size_t n = 2; n <= 3 && st == TL_OK; n++)
            st = tl_agg_add(set, kinds[0].name, args, n, ret, &points, &kinds[0], err);
        duckdb_destroy_logical_type(&args[0]);
    }
    duckdb_logical_type args[2] = {state, method};
    for (size_t n = 1; n <= 2 && st == TL_OK; n++)
        st = tl_agg_add(set, kinds[1].name, args, n, ret, &states, &kinds[1], err);
    duckdb_destroy_logical_type(&value);
    duckdb_destroy_logical_type(&method);
    duckdb_destroy_logical_type(&state);
    return st;
}

static tl_status register_one(duckdb_connection conn, const tw_kind kinds[2], tl_error *err)
{
    duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set(kinds[0].name);
    tl_status st = add_overloads(set, kinds, err);
    if (st != TL_OK) {
        duckdb_destroy_aggregate_function_set(&set);
        return st;
    }
    return tl_agg_register(conn, &set, kinds[0].name, err);
}

tl_status tl_query_register_time_weighted(duckdb_connection conn, tl_error *err)
{
    static const tw_kind mean[2] = {{false, false, "time_weighted_mean"},
                                    {true, false, "time_weighted_mean"}};
    static const tw_kind state[2] = {{false, true, "time_weighted_state"},
                                     {true, true, "time_weighted_state"}};
    TL_TRY(register_one(conn, mean, err));
    return register_one(conn, state, err);
}
