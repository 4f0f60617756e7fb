/* Gap filling as TimescaleDB's users write it:
 *
 *   SELECT time_bucket_gapfill(INTERVAL '1 hour', time) AS hour, device_id,
 *          avg(temp), locf(avg(temp)), interpolate(avg(temp))
 *   FROM iot.readings WHERE time >= '2026-01-01' AND time < '2026-01-02'
 *   GROUP BY hour, device_id ORDER BY hour
 *
 * A SELECT grouped by time_bucket_gapfill(width, time [, start [, finish]])
 * returns a row for every bucket from start to finish (exclusive) for every
 * combination of its other group keys that has rows; a bucket without rows
 * has NULL for everything but the bucket and the keys. start and finish
 * default to the bounds the WHERE clause puts on the time column (>, >=,
 * BETWEEN; <, <=, BETWEEN inclusive). Rows outside the range stay.
 *   locf(x [, prev [, treat_null_as_missing]]): in a filled row, the value
 *     of the last row before it (a NULL included, unless
 *     treat_null_as_missing, which also fills NULLs); prev when there is
 *     none.
 *   interpolate(x [, prev [, next]]): in a filled row, the straight line
 *     between the nearest rows before and after it with a value (prev and
 *     next, (time, value) rows, stand in for them beyond the range); NULL
 *     without both. A double.
 * Both must be the outermost call of their select item.
 *
 * The SELECT is rewritten into plain SQL: the aggregation itself, with
 * time_bucket for time_bucket_gapfill (its WHERE still prunes the lake's
 * files), materialized once as a CTE; a grid of the buckets crossed with
 * the keys that occur; the two joined; window functions for locf and
 * interpolate. */
#include "query/sql_gapfill.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "query/sql_plan.h"
#include "query/sql_plan_json.h"

#define GAPFILL "time_bucket_gapfill"

typedef enum kind { ITEM_VALUE, ITEM_BUCKET, ITEM_KEY, ITEM_LOCF, ITEM_INTERPOLATE } kind;

typedef struct item {
    kind kind;
    size_t key;       /* ITEM_KEY: which */
    const json_t *fn; /* ITEM_LOCF, ITEM_INTERPOLATE: the call */
    char *name;       /* the output column's name */
} item;

typedef struct gapfill {
    tl_query_engine *e;
    json_t *select; /* the SELECT being rewritten */
    const json_t *call;
    const json_t *width, *time, *start,
        *finish;  /* the call's arguments (start, finish may be NULL) */
    json_t *keys; /* the other group keys, resolved */
    item *items;
    size_t n_items;
    struct bounds {
        tl_buf lower, upper_excl, upper_incl; /* SQL, comma-separated */
    } range;                                  /* the buckets to fill */
} gapfill;

static bool is_call(const json_t *e, const char *name)
{
    return tl_js_is_class(e, "FUNCTION") && strcasecmp(tl_js_str(e, "function_name"), name) == 0 &&
           !*tl_js_str(e, "schema") && !*tl_js_str(e, "catalog");
}

/* Whether e holds a node that `match`es, not counting subqueries (their
 * own SELECTs). */
static bool holds(const json_t *e, bool (*match)(const json_t *, const char *), const char *what)
{
    if (json_is_array(e)) {
        size_t i;
        const json_t *v;
        json_array_foreach(e, i, v) if (holds(v, match, what)) return true;
        return false;
    }
    if (!json_is_object(e) || tl_js_is_class(e, "SUBQUERY")) return false;
    if (match(e, what)) return true;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)e, k, v) if (holds(v, match, what)) return true;
    return false;
}

static bool holds_call(const json_t *e, const char *name)
{
    return holds(e, is_call, name);
}

static tl_status misuse(tl_error *err, const char *what)
{
    return tl_error_set(err, TL_ERR_QUERY, "time_bucket_gapfill: %s", what);
}

static json_t *unaliased(const json_t *e, const char *alias);

/* The SQL text of an expression (malloc'd), as DuckDB writes it back,
 * without its alias. */
static char *expr_sql(gapfill *g, const json_t *e)
{
    json_t *one = json_pack("[o]", unaliased(e, ""));
    char *select = one ? tl_sql_select_text(g->e, one) : NULL;
    json_decref(one);
    if (select == NULL || strncmp(select, "SELECT ", 7) != 0) {
        free(select);
        return NULL;
    }
    memmove(select, select + 7, strlen(select + 7) + 1);
    return select;
}

/* ---- The call and its range ---- */

static tl_status read_call(gapfill *g, tl_error *err)
{
    const json_t *ch = json_object_get(g->call, "children"), *a;
    size_t i, positional = 0;
    json_array_foreach(ch, i, a)
    {
        const char *name = tl_js_str(a, "alias");
        const json_t **slot = NULL;
        if (strcasecmp(name, "start") == 0)
            slot = &g->start;
        else if (strcasecmp(name, "finish") == 0)
            slot = &g->finish;
        else if (*name)
            return misuse(err, "its arguments are (width, time [, start [, finish]])");
        else if (positional < 4) {
            const json_t **order[4] = {&g->width, &g->time, &g->start, &g->finish};
            slot = order[positional++];
        } else {
            return misuse(err, "its arguments are (width, time [, start [, finish]])");
        }
        if (!(tl_js_is_class(a, "CONSTANT") &&
              json_is_true(json_object_get(json_object_get(a, "value"), "is_null"))))
            *slot = a;
    }
    if (g->width == NULL || g->time == NULL)
        return misuse(err, "it needs a width and a time: time_bucket_gapfill(INTERVAL '1 hour', "
                           "time)");
    return TL_OK;
}

/* Whether e is the time argument: the same expression, or the same column
 * named with or without its table (time, r.time). */
static bool is_time(const gapfill *g, const json_t *e)
{
    const json_t *a = json_object_get(e, "column_names"),
                 *b = json_object_get(g->time, "column_names");
    size_t na = json_array_size(a), nb = json_array_size(b);
    if (!tl_js_is_class(e, "COLUMN_REF") || !tl_js_is_class(g->time, "COLUMN_REF") || !na || !nb)
        return tl_js_same_expr(e, g->time);
    for (size_t i = 1; i <= na && i <= nb; i++)
        if (strcasecmp(json_string_value(json_array_get(a, na - i)),
                       json_string_value(json_array_get(b, nb - i))) != 0)
            return false;
    return true;
}

/* Bounds, as SQL lists for greatest() and least(). */
typedef struct bounds bounds;

static void bounds_free(bounds *b)
{
    tl_buf_free(&b->lower);
    tl_buf_free(&b->upper_excl);
    tl_buf_free(&b->upper_incl);
}

/* dir 1: a lower bound, -1 an upper one; incl: the bound itself included. */
static tl_status add_bound(gapfill *g, bounds *to, const json_t *v, int dir, bool incl,
                           tl_error *err)
{
    char *sql = expr_sql(g, v);
    if (sql == NULL) return tl_error_nomem(err);
    tl_buf *b = dir > 0 ? &to->lower : incl ? &to->upper_incl : &to->upper_excl;
    int rc = tl_buf_printf(b, "%s(%s)::TIMESTAMPTZ", b->len ? ", " : "", sql);
    free(sql);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* Bounds on the time argument in the WHERE clause's conjuncts. */
static tl_status where_bounds(gapfill *g, bounds *to, const json_t *e, tl_error *err)
{
    const char *type = tl_js_str(e, "type");
    if (strcmp(type, "CONJUNCTION_AND") == 0) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(e, "children"), i, c)
            TL_TRY(where_bounds(g, to, c, err));
        return TL_OK;
    }
    if (strcmp(type, "COMPARE_BETWEEN") == 0 && is_time(g, json_object_get(e, "input"))) {
        TL_TRY(add_bound(g, to, json_object_get(e, "lower"), 1, true, err));
        return add_bound(g, to, json_object_get(e, "upper"), -1, true, err);
    }
    static const struct {
        const char *type;
        int dir;
        bool incl;
    } ops[] = {{"COMPARE_GREATERTHAN", 1, false},
               {"COMPARE_GREATERTHANOREQUALTO", 1, true},
               {"COMPARE_LESSTHAN", -1, false},
               {"COMPARE_LESSTHANOREQUALTO", -1, true}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(type, ops[i].type) != 0) continue;
        const json_t *l = json_object_get(e, "left"), *r = json_object_get(e, "right");
        if (is_time(g, l)) return add_bound(g, to, r, ops[i].dir, ops[i].incl, err);
        if (is_time(g, r)) return add_bound(g, to, l, -ops[i].dir, ops[i].incl, err);
    }
    return TL_OK;
}

/* start and finish: the call's, else the WHERE clause's. */
static tl_status find_range(gapfill *g, tl_error *err)
{
    bounds where = {0};
    const json_t *clause = json_object_get(g->select, "where_clause");
    tl_status st = json_is_object(clause) ? where_bounds(g, &where, clause, err) : TL_OK;
    if (st == TL_OK && g->start) st = add_bound(g, &g->range, g->start, 1, true, err);
    if (st == TL_OK && g->finish) st = add_bound(g, &g->range, g->finish, -1, false, err);
    if (st == TL_OK && g->start == NULL) {
        g->range.lower = where.lower;
        where.lower = (tl_buf){0};
    }
    if (st == TL_OK && g->finish == NULL) {
        g->range.upper_excl = where.upper_excl;
        g->range.upper_incl = where.upper_incl;
        where.upper_excl = where.upper_incl = (tl_buf){0};
    }
    bounds_free(&where);
    TL_TRY(st);
    if (g->range.lower.len == 0 || g->range.upper_excl.len + g->range.upper_incl.len == 0)
        return misuse(err, "it needs the range to fill: bound the time column in WHERE (time >= "
                           "... AND time < ...), or give start and finish");
    return TL_OK;
}

/* ---- GROUP BY and the select list ---- */

/* A group expression as the expression it stands for: a position or an
 * alias of the select list, or itself. */
static const json_t *resolve_group(const json_t *select_list, const json_t *e)
{
    json_int_t pos = 0;
    const json_t *v = json_object_get(e, "value");
    if (tl_js_is_class(e, "CONSTANT") && json_is_integer(json_object_get(v, "value")) &&
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "INTEGER") == 0)
        pos = json_integer_value(json_object_get(v, "value"));
    if (pos >= 1 && (size_t)pos <= json_array_size(select_list))
        return json_array_get(select_list, (size_t)pos - 1);
    const json_t *names = json_object_get(e, "column_names");
    if (tl_js_is_class(e, "COLUMN_REF") && json_array_size(names) == 1) {
        const char *name = json_string_value(json_array_get(names, 0));
        size_t i;
        const json_t *it;
        json_array_foreach(select_list, i, it) if (strcasecmp(tl_js_str(it, "alias"), name) == 0 &&
                                                   !tl_js_same_expr(it, e)) return it;
    }
    return e;
}

static tl_status read_groups(gapfill *g, tl_error *err)
{
    const json_t *list = json_object_get(g->select, "select_list");
    const json_t *groups = json_object_get(g->select, "group_expressions");
    const json_t *sets = json_object_get(g->select, "group_sets");
    size_t n = json_array_size(groups);
    bool all = strcmp(tl_js_str(g->select, "aggregate_handling"), "STANDARD_HANDLING") != 0;
    if (n == 0 && !all)
        return misuse(err, "the query must GROUP BY it (by the call, its alias or its position)");
    if (all || json_array_size(sets) != 1 || json_array_size(json_array_get(sets, 0)) != n)
        return misuse(err, "it needs a plain GROUP BY of the bucket (and other keys): no "
                           "GROUP BY ALL, ROLLUP, CUBE or GROUPING SETS");
    g->keys = json_array();
    if (g->keys == NULL) return tl_error_nomem(err);
    size_t i;
    const json_t *e;
    json_array_foreach(groups, i, e)
    {
        const json_t *r = resolve_group(list, e);
        if (is_call(r, GAPFILL)) {
            if (g->call) return misuse(err, "a query may group by one time_bucket_gapfill only");
            g->call = r;
        } else if (holds_call(r, GAPFILL)) {
            return misuse(err, "group by time_bucket_gapfill(...) itself, not an expression of it");
        } else if (json_array_append(g->keys, (json_t *)r) != 0) {
            return tl_error_nomem(err);
        }
    }
    if (g->call == NULL)
        return misuse(err, "the query must GROUP BY it (by the call, its alias or its position)");
    return TL_OK;
}

static bool is_filler(const json_t *e)
{
    return is_call(e, "locf") || is_call(e, "interpolate");
}

static tl_status classify(gapfill *g, tl_error *err)
{
    const json_t *list = json_object_get(g->select, "select_list");
    g->n_items = json_array_size(list);
    g->items = calloc(g->n_items ? g->n_items : 1, sizeof *g->items);
    if (g->items == NULL) return tl_error_nomem(err);
    size_t i;
    const json_t *it;
    json_array_foreach(list, i, it)
    {
        item *x = &g->items[i];
        if (tl_js_is_class(it, "STAR")) return misuse(err, "name the columns (no *)");
        if (holds(it, tl_js_is_class, "WINDOW"))
            return misuse(err, "window functions cannot be mixed with gap filling");
        x->name = *tl_js_str(it, "alias") ? strdup(tl_js_str(it, "alias")) : expr_sql(g, it);
        if (x->name == NULL) return tl_error_nomem(err);
        if (tl_js_same_expr(it, g->call)) {
            x->kind = ITEM_BUCKET;
            continue;
        }
        size_t k;
        const json_t *key;
        json_array_foreach(g->keys, k, key) if (x->kind == ITEM_VALUE && tl_js_same_expr(it, key))
        {
            x->kind = ITEM_KEY;
            x->key = k;
        }
        if (x->kind == ITEM_KEY) continue;
        if (is_filler(it)) {
            x->kind = is_call(it, "locf") ? ITEM_LOCF : ITEM_INTERPOLATE;
            x->fn = it;
            size_t nargs = json_array_size(json_object_get(it, "children"));
            if (nargs < 1 || nargs > 3)
                return tl_error_set(err, TL_ERR_QUERY, "%s takes (value [, %s])",
                                    x->kind == ITEM_LOCF ? "locf" : "interpolate",
                                    x->kind == ITEM_LOCF ? "prev [, treat_null_as_missing]"
                                                         : "prev [, next]");
            if (holds_call(json_object_get(it, "children"), GAPFILL) ||
                holds_call(json_object_get(it, "children"), "locf") ||
                holds_call(json_object_get(it, "children"), "interpolate"))
                return tl_error_set(err, TL_ERR_QUERY,
                                    "locf and interpolate take an aggregate, not each other");
            continue;
        }
        if (holds_call(it, "locf") || holds_call(it, "interpolate"))
            return tl_error_set(err, TL_ERR_QUERY,
                                "locf() and interpolate() must be the outermost call of a select "
                                "item: write locf(avg(x)) AS name, not an expression around it");
        if (holds_call(it, GAPFILL))
            return misuse(err, "select the bucket as time_bucket_gapfill(...) itself");
    }
    return TL_OK;
}

/* ---- The rewritten query ---- */

/* A copy of e without its alias; NULL when out of memory. */
static json_t *unaliased(const json_t *e, const char *alias)
{
    json_t *c = json_deep_copy(e);
    if (c && json_object_set_new(c, "alias", json_string(alias)) != 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* time_bucket(width, time): what the aggregation groups by. */
static json_t *bucket_call(const gapfill *g)
{
    json_t *call = json_deep_copy(g->call);
    json_t *args = json_array();
    json_t *w = unaliased(g->width, ""), *t = unaliased(g->time, "");
    bool ok = call && args && w && t && json_array_append(args, w) == 0 &&
              json_array_append(args, t) == 0 &&
              json_object_set_new(call, "function_name", json_string("time_bucket")) == 0 &&
              json_object_set_new(call, "alias", json_string("")) == 0 &&
              json_object_set(call, "children", args) == 0;
    json_decref(args);
    json_decref(w);
    json_decref(t);
    if (!ok) json_decref(call);
    return ok ? call : NULL;
}

static json_t *true_marker(void)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:{s:{s:s, s:n}, s:b, s:b}}", "class", "CONSTANT",
                     "type", "VALUE_CONSTANT", "alias", "__tl_real", "query_location",
                     (json_int_t)0, "value", "type", "id", "BOOLEAN", "type_info", "is_null", 0,
                     "value", 1);
}

/* The aggregation's select list: __tl_b (time_bucket), __tl_k<i> (the
 * keys), __tl_v<i> (each item's value, a filler's argument), __tl_real. */
static json_t *inner_list(const gapfill *g, const json_t *groups)
{
    json_t *list = json_array();
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < json_array_size(groups); i++) {
        char name[32];
        if (i == 0)
            snprintf(name, sizeof name, "__tl_b");
        else
            snprintf(name, sizeof name, "__tl_k%zu", i - 1);
        ok = json_array_append_new(list, unaliased(json_array_get(groups, i), name)) == 0;
    }
    const json_t *items = json_object_get(g->select, "select_list");
    for (size_t i = 0; ok && i < g->n_items; i++) {
        const item *x = &g->items[i];
        if (x->kind == ITEM_BUCKET || x->kind == ITEM_KEY) continue;
        const json_t *src = x->fn ? json_array_get(json_object_get(x->fn, "children"), 0)
                                  : json_array_get(items, i);
        char name[32];
        snprintf(name, sizeof name, "__tl_v%zu", i);
        ok = json_array_append_new(list, unaliased(src, name)) == 0;
    }
    ok = ok && json_array_append_new(list, true_marker()) == 0;
    if (!ok) json_decref(list);
    return ok ? list : NULL;
}

/* The SELECT as an aggregation by (time_bucket, keys) alone, without the
 * original's ORDER BY and LIMIT. */
static char *inner_sql(gapfill *g, tl_error *err)
{
    json_t *node = json_deep_copy(g->select), *groups = json_array(), *set = json_array();
    bool ok = node && groups && set && json_array_append_new(groups, bucket_call(g)) == 0;
    size_t k;
    json_t *key;
    json_array_foreach(g->keys, k, key) if (ok) ok =
        json_array_append_new(groups, unaliased(key, "")) == 0;
    for (size_t i = 0; ok && i < json_array_size(groups); i++)
        ok = json_array_append_new(set, json_integer((json_int_t)i)) == 0;
    json_t *list = ok ? inner_list(g, groups) : NULL;
    ok = list && json_object_set_new(node, "select_list", list) == 0 &&
         json_object_set(node, "group_expressions", groups) == 0 &&
         json_object_set_new(node, "group_sets", json_pack("[O]", set)) == 0 &&
         json_object_set_new(node, "modifiers", json_array()) == 0;
    json_t *doc = ok ? json_pack("{s:b, s:[{s:O, s:[]}]}", "error", 0, "statements", "node", node,
                                 "named_param_map")
                     : NULL;
    char *sql = doc ? tl_sql_tree_text(g->e, doc) : NULL;
    json_decref(doc);
    json_decref(node);
    json_decref(groups);
    json_decref(set);
    if (sql == NULL)
        tl_error_set(err, TL_ERR_QUERY, "time_bucket_gapfill: cannot rewrite the query");
    return sql;
}

/* "(PARTITION BY __tl_k0, ... ORDER BY __tl_b ROWS BETWEEN <frame>)" */
static int window(const gapfill *g, const char *frame, tl_buf *b)
{
    size_t n = json_array_size(g->keys);
    int rc = tl_buf_append_str(b, n ? " OVER (PARTITION BY " : " OVER (");
    for (size_t k = 0; k < n; k++) rc |= tl_buf_printf(b, "%s__tl_k%zu", k ? ", " : "", k);
    return rc | tl_buf_printf(b, " ORDER BY __tl_b ROWS BETWEEN %s)", frame);
}

#define UP_TO_HERE "UNBOUNDED PRECEDING AND CURRENT ROW"

/* The SQL of argument `i` of a filler's call, or "NULL" when not given. */
static char *filler_arg(gapfill *g, const item *x, size_t i)
{
    const json_t *a = json_array_get(json_object_get(x->fn, "children"), i);
    return a ? expr_sql(g, a) : strdup("NULL");
}

/* locf's window columns: __tl_l<i>, the last row's value (wrapped, so a
 * row's NULL is carried too), and __tl_n<i>, the last non-NULL value. */
static int locf_windows(const gapfill *g, size_t i, tl_buf *b)
{
    int rc = tl_buf_printf(b,
                           ", last_value(CASE WHEN __tl_real THEN {'v': __tl_v%zu} END IGNORE "
                           "NULLS)",
                           i);
    rc |= window(g, UP_TO_HERE, b);
    rc |= tl_buf_printf(b, " AS __tl_l%zu, last_value(__tl_v%zu IGNORE NULLS)", i, i);
    rc |= window(g, UP_TO_HERE, b);
    return rc | tl_buf_printf(b, " AS __tl_n%zu", i);
}

/* interpolate's: __tl_p<i> and __tl_q<i>, {t: microseconds, v: value} of
 * the nearest row with a value before and after, or from prev and next
 * ((time, value) rows). */
static int anchor_window(const gapfill *g, size_t i, bool before, const char *fallback, tl_buf *b)
{
    int rc = tl_buf_printf(b,
                           ", coalesce(%s(CASE WHEN __tl_v%zu IS NOT NULL THEN {'t': "
                           "epoch_us(__tl_b), 'v': __tl_v%zu::DOUBLE} END IGNORE NULLS)",
                           before ? "last_value" : "first_value", i, i);
    rc |= window(
        g, before ? "UNBOUNDED PRECEDING AND 1 PRECEDING" : "1 FOLLOWING AND UNBOUNDED FOLLOWING",
        b);
    if (strcmp(fallback, "NULL") == 0)
        rc |= tl_buf_append_str(b, ", NULL)");
    else
        rc |= tl_buf_printf(b,
                            ", (SELECT {'t': epoch_us(struct_extract(r, 1)::TIMESTAMPTZ), 'v': "
                            "struct_extract(r, 2)::DOUBLE} FROM (SELECT %s AS r)))",
                            fallback);
    return rc | tl_buf_printf(b, " AS __tl_%c%zu", before ? 'p' : 'q', i);
}

/* An item of the final select list. */
static int item_sql(gapfill *g, size_t i, tl_buf *b, bool *oom)
{
    const item *x = &g->items[i];
    int rc = 0;
    if (x->kind == ITEM_BUCKET) rc |= tl_buf_append_str(b, "__tl_b");
    if (x->kind == ITEM_KEY) rc |= tl_buf_printf(b, "__tl_k%zu", x->key);
    if (x->kind == ITEM_VALUE) rc |= tl_buf_printf(b, "__tl_v%zu", i);
    if (x->kind == ITEM_LOCF) {
        char *prev = filler_arg(g, x, 1), *skip = filler_arg(g, x, 2);
        *oom = prev == NULL || skip == NULL;
        if (!*oom)
            rc |= tl_buf_printf(b,
                                "CASE WHEN coalesce((%s)::BOOLEAN, false) THEN coalesce(__tl_n%zu, "
                                "%s) ELSE coalesce(__tl_l%zu, {'v': %s}).v END",
                                skip, i, prev, i, prev);
        free(prev);
        free(skip);
    }
    if (x->kind == ITEM_INTERPOLATE)
        rc |= tl_buf_printf(b,
                            "CASE WHEN __tl_real THEN __tl_v%zu ELSE __tl_p%zu.v + (__tl_q%zu.v - "
                            "__tl_p%zu.v) * (epoch_us(__tl_b) - __tl_p%zu.t) / (__tl_q%zu.t - "
                            "__tl_p%zu.t) END",
                            i, i, i, i, i, i, i);
    char *name = tl_sql_ident(x->name);
    rc |= name ? tl_buf_printf(b, " AS %s", name) : -1;
    free(name);
    return rc;
}

/* The buckets to fill: "generate_series(first, last, width)". The width is
 * cast because a string literal ('1 hour', as time_bucket takes it) matches
 * none of generate_series's overloads on its own. */
static int series_sql(const gapfill *g, const char *width, tl_buf *b)
{
    const struct bounds *r = &g->range;
    int rc = tl_buf_printf(b, "generate_series(time_bucket(%s, greatest(%s)), least(", width,
                           (const char *)r->lower.data);
    if (r->upper_excl.len)
        rc |= tl_buf_printf(b, "time_bucket(%s, least(%s) - INTERVAL '1 microsecond')%s", width,
                            (const char *)r->upper_excl.data, r->upper_incl.len ? ", " : "");
    if (r->upper_incl.len)
        rc |=
            tl_buf_printf(b, "time_bucket(%s, least(%s))", width, (const char *)r->upper_incl.data);
    return rc | tl_buf_printf(b, "), CAST(%s AS INTERVAL))", width);
}

/* The whole SELECT, without the original's ORDER BY and LIMIT. */
static tl_status outer_sql(gapfill *g, const char *inner, tl_buf *b, tl_error *err)
{
    char *width = expr_sql(g, g->width);
    if (width == NULL) return tl_error_nomem(err);
    size_t nk = json_array_size(g->keys);
    int rc =
        tl_buf_printf(b, "WITH __tl_gf AS MATERIALIZED (%s), __tl_grid AS (SELECT __tl_b", inner);
    for (size_t k = 0; k < nk; k++) rc |= tl_buf_printf(b, ", __tl_k%zu", k);
    rc |= tl_buf_append_str(b, " FROM ");
    rc |= series_sql(g, width, b);
    rc |= tl_buf_append_str(b, " AS s(__tl_b)");
    if (nk) {
        rc |= tl_buf_append_str(b, " CROSS JOIN (SELECT DISTINCT ");
        for (size_t k = 0; k < nk; k++) rc |= tl_buf_printf(b, "%s__tl_k%zu", k ? ", " : "", k);
        rc |= tl_buf_append_str(b, " FROM __tl_gf)");
    }
    /* the grid and the aggregation joined (rows outside the grid kept) */
    rc |= tl_buf_append_str(b, "), __tl_rows AS (SELECT coalesce(g.__tl_b, f.__tl_b) AS __tl_b");
    for (size_t k = 0; k < nk; k++)
        rc |= tl_buf_printf(b, ", coalesce(g.__tl_k%zu, f.__tl_k%zu) AS __tl_k%zu", k, k, k);
    for (size_t i = 0; i < g->n_items; i++)
        if (g->items[i].kind != ITEM_BUCKET && g->items[i].kind != ITEM_KEY)
            rc |= tl_buf_printf(b, ", f.__tl_v%zu", i);
    rc |= tl_buf_append_str(b, ", coalesce(f.__tl_real, false) AS __tl_real FROM __tl_grid g FULL "
                               "JOIN __tl_gf f ON g.__tl_b = f.__tl_b");
    for (size_t k = 0; k < nk; k++)
        rc |= tl_buf_printf(b, " AND g.__tl_k%zu IS NOT DISTINCT FROM f.__tl_k%zu", k, k);
    /* the fillers' window columns */
    rc |= tl_buf_append_str(b, "), __tl_win AS (SELECT *");
    tl_status st = TL_OK;
    for (size_t i = 0; i < g->n_items && rc == 0 && st == TL_OK; i++) {
        const item *x = &g->items[i];
        if (x->kind == ITEM_LOCF) rc |= locf_windows(g, i, b);
        if (x->kind != ITEM_INTERPOLATE) continue;
        char *prev = filler_arg(g, x, 1), *next = filler_arg(g, x, 2);
        if (prev && next)
            rc |= anchor_window(g, i, true, prev, b) | anchor_window(g, i, false, next, b);
        else
            st = tl_error_nomem(err);
        free(prev);
        free(next);
    }
    rc |= tl_buf_append_str(b, " FROM __tl_rows) SELECT ");
    for (size_t i = 0; i < g->n_items && rc == 0 && st == TL_OK; i++) {
        bool oom = false;
        if (i) rc |= tl_buf_append_str(b, ", ");
        rc |= item_sql(g, i, b, &oom);
        if (oom) st = tl_error_nomem(err);
    }
    rc |= tl_buf_append_str(b, " FROM __tl_win");
    free(width);
    TL_TRY(st);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* The original's ORDER BY keys that repeat a select item, as its position
 * (the rewritten query has no such expression to order by). */
static tl_status order_by_positions(gapfill *g, json_t *modifiers, tl_error *err)
{
    const json_t *list = json_object_get(g->select, "select_list");
    size_t i;
    json_t *m;
    json_array_foreach(modifiers, i, m)
    {
        size_t j;
        json_t *o;
        json_array_foreach(json_object_get(m, "orders"), j, o)
        {
            const json_t *e = json_object_get(o, "expression");
            size_t k;
            const json_t *it;
            json_array_foreach(list, k, it)
            {
                if (!tl_js_same_expr(e, it) || tl_js_is_class(e, "COLUMN_REF")) continue;
                json_t *pos = json_pack(
                    "{s:s, s:s, s:s, s:I, s:{s:{s:s, s:n}, s:b, s:I}}", "class", "CONSTANT", "type",
                    "VALUE_CONSTANT", "alias", "", "query_location", (json_int_t)0, "value", "type",
                    "id", "INTEGER", "type_info", "is_null", 0, "value", (json_int_t)(k + 1));
                if (pos == NULL || json_object_set_new(o, "expression", pos) != 0)
                    return tl_error_nomem(err);
                break;
            }
        }
    }
    return TL_OK;
}

static tl_status rewrite_select(gapfill *g, tl_error *err)
{
    TL_TRY(read_groups(g, err));
    TL_TRY(read_call(g, err));
    TL_TRY(find_range(g, err));
    TL_TRY(classify(g, err));
    if (json_is_object(json_object_get(g->select, "qualify")))
        return misuse(err, "QUALIFY cannot be mixed with gap filling");
    char *inner = inner_sql(g, err);
    if (inner == NULL) return TL_ERR_QUERY;
    tl_buf sql = {0};
    tl_status st = outer_sql(g, inner, &sql, err);
    free(inner);
    json_t *tree = NULL;
    if (st == TL_OK && tl_buf_append_byte(&sql, 0) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_sql_syntax_tree(g->e, (const char *)sql.data, &tree, err);
    tl_buf_free(&sql);
    json_t *node = json_deep_copy(
        json_object_get(json_array_get(json_object_get(tree, "statements"), 0), "node"));
    if (st == TL_OK && node == NULL)
        st = tl_error_set(err, TL_ERR_QUERY, "time_bucket_gapfill: cannot rewrite the query (%s)",
                          tl_js_str(tree, "error_message"));
    json_decref(tree);
    json_t *modifiers =
        st == TL_OK ? json_deep_copy(json_object_get(g->select, "modifiers")) : NULL;
    if (st == TL_OK && modifiers == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = order_by_positions(g, modifiers, err);
    /* A MATERIALIZED CTE parses as a CTE_NODE around the SELECT: the
     * modifiers go on the SELECT. */
    json_t *body = node;
    while (tl_js_is_type(body, "CTE_NODE")) body = json_object_get(body, "child");
    if (st == TL_OK &&
        (json_object_set(body, "modifiers", modifiers) != 0 || json_object_clear(g->select) != 0 ||
         json_object_update(g->select, node) != 0))
        st = tl_error_nomem(err);
    json_decref(modifiers);
    json_decref(node);
    return st;
}

static void gapfill_free(gapfill *g)
{
    for (size_t i = 0; g->items && i < g->n_items; i++) free(g->items[i].name);
    free(g->items);
    json_decref(g->keys);
    bounds_free(&g->range);
}

/* Rewrites, innermost first, each SELECT whose own select list or GROUP BY
 * calls time_bucket_gapfill. */
static tl_status walk(tl_query_engine *e, json_t *node, bool *changed, tl_error *err)
{
    if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) TL_TRY(walk(e, v, changed, err));
        return TL_OK;
    }
    if (!json_is_object(node)) return TL_OK;
    const char *k;
    json_t *v;
    json_object_foreach(node, k, v) TL_TRY(walk(e, v, changed, err));
    if (!tl_js_is_type(node, "SELECT_NODE") ||
        !(holds_call(json_object_get(node, "select_list"), GAPFILL) ||
          holds_call(json_object_get(node, "group_expressions"), GAPFILL)))
        return TL_OK;
    gapfill g = {.e = e, .select = node};
    tl_status st = rewrite_select(&g, err);
    gapfill_free(&g);
    *changed = *changed || st == TL_OK;
    return st;
}

/* locf, interpolate or time_bucket_gapfill left after the rewrite: used
 * outside a query grouped by time_bucket_gapfill. */
static tl_status check_leftovers(const json_t *node, tl_error *err)
{
    if (json_is_array(node)) {
        size_t i;
        const json_t *v;
        json_array_foreach(node, i, v) TL_TRY(check_leftovers(v, err));
        return TL_OK;
    }
    if (!json_is_object(node)) return TL_OK;
    static const char *const names[] = {"locf", "interpolate", GAPFILL};
    for (size_t i = 0; i < 3; i++)
        if (is_call(node, names[i]))
            return tl_error_set(err, TL_ERR_QUERY,
                                "%s() works only in a SELECT grouped by time_bucket_gapfill(...)",
                                names[i]);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)node, k, v) TL_TRY(check_leftovers(v, err));
    return TL_OK;
}

tl_status tl_sql_gapfill(tl_query_engine *e, json_t *statements, bool *changed, tl_error *err)
{
    *changed = false;
    TL_TRY(walk(e, statements, changed, err));
    return check_leftovers(statements, err);
}
