#include "query/sql_route.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arrow/parse.h"
#include "core/buf.h"
#include "query/preagg_scan.h"
#include "query/query_cache.h"
#include "query/rollup_fold.h"
#include "query/rows_function.h"
#include "query/scan_cost.h"
#include "query/sql_plan_json.h"
#include "query/sql_plan_time.h"
#include "query/sql_shape.h"
#include "table/rollup_def.h"
#include "table/settings.h"

/* Clean bucket ranges kept at most; more changed spans are merged. */
#define MAX_RANGES 64

typedef enum need_fn {
    N_COUNT_STAR,
    N_COUNT,
    N_SUM,
    N_MIN,
    N_MAX,
    N_AVG,
    N_FIRST,
    N_LAST,
    N_M4,
    N_TWM,
    N_TWM_LINEAR
} need_fn;

typedef struct need {
    need_fn fn;
    const char *column; /* the schema's name; NULL for count(*) */
} need;

typedef struct agg_node {
    json_t *node; /* in the query's copy, replaced in place */
    size_t need;
} agg_node;

typedef struct span {
    int64_t lo, hi; /* [lo, hi) */
} span;

/* What the query asks, read from (a copy of) its syntax tree. */
typedef struct query_shape {
    tl_shape x;
    const tl_table *raw;
    const json_t *bucket; /* the time_bucket grouping key */
    int64_t width;
    tl_strlist group_keys, where_keys; /* schema names */
    need needs[32];
    size_t n_needs;
    agg_node aggs[64];
    size_t n_aggs;
    int64_t lo, hi; /* the time range of WHERE, inclusive */
} query_shape;

static void shape_free(query_shape *q)
{
    tl_strlist_free(&q->group_keys);
    tl_strlist_free(&q->where_keys);
}

/* The schema's name of the table column e references (bare or qualified
 * by the table's alias), or NULL. */
static const char *column_of(const query_shape *q, const json_t *e)
{
    const json_t *names = json_object_get(e, "column_names");
    size_t n = json_array_size(names);
    if (!tl_js_is_class(e, "COLUMN_REF") || n < 1 || n > 2) return NULL;
    if (n == 2 && strcasecmp(json_string_value(json_array_get(names, 0)), q->x.alias) != 0)
        return NULL;
    const char *name = json_string_value(json_array_get(names, n - 1));
    for (size_t i = 0; name && i < q->x.s->n_fields; i++)
        if (strcasecmp(q->x.s->fields[i].name, name) == 0) return q->x.s->fields[i].name;
    return NULL;
}

static bool listed(const tl_strlist *l, const char *name)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcasecmp(l->items[i], name) == 0) return true;
    return false;
}

static bool add_name(tl_strlist *l, const char *name)
{
    return listed(l, name) || tl_strlist_push(l, name) == 0;
}

/* Scalar functions whose value depends only on their arguments: allowed
 * over grouping keys and aggregates. Any other function may be an
 * aggregate whose state the rollup does not keep. */
static bool plain_scalar(const json_t *e)
{
    static const char *const names[] = {"round",    "abs",    "ceil",   "floor",  "coalesce",
                                        "greatest", "least",  "sqrt",   "ln",     "log",
                                        "exp",      "power",  "pow",    "sign",   "lower",
                                        "upper",    "concat", "length", "nullif", NULL};
    if (!tl_shape_absent(e, "filter") || json_is_true(json_object_get(e, "distinct")) ||
        json_array_size(json_object_get(json_object_get(e, "order_bys"), "orders")) ||
        *tl_js_str(e, "schema") || *tl_js_str(e, "catalog"))
        return false;
    const char *name = tl_js_str(e, "function_name");
    if (json_is_true(json_object_get(e, "is_operator"))) return true;
    if (strlen(name) <= 2 && strspn(name, "+-*/%^") == strlen(name)) return true;
    for (size_t i = 0; names[i]; i++)
        if (strcasecmp(name, names[i]) == 0) return true;
    return false;
}

static bool walk_children(query_shape *q, const json_t *e, bool (*f)(query_shape *, const json_t *))
{
    static const char *const keys[] = {"children", "left",  "right",     "child", "input",
                                       "lower",    "upper", "else_expr", NULL};
    for (size_t k = 0; keys[k]; k++) {
        const json_t *v = json_object_get(e, keys[k]);
        if (v == NULL || json_is_null(v)) continue;
        if (json_is_array(v)) {
            size_t i;
            const json_t *c;
            json_array_foreach(v, i, c) if (!f(q, c)) return false;
        } else if (!f(q, v)) {
            return false;
        }
    }
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(e, "case_checks"), i, c)
    {
        if (!f(q, json_object_get(c, "when_expr")) || !f(q, json_object_get(c, "then_expr")))
            return false;
    }
    return true;
}

/* Expression classes routing looks through. */
static bool plain_class(const json_t *e)
{
    static const char *const classes[] = {"CONSTANT",   "CAST",    "COMPARISON", "CONJUNCTION",
                                          "OPERATOR",   "BETWEEN", "CASE",       "FUNCTION",
                                          "COLUMN_REF", NULL};
    for (size_t i = 0; classes[i]; i++)
        if (tl_js_is_class(e, classes[i])) return true;
    return false;
}

static bool add_need(query_shape *q, json_t *node, need_fn fn, const char *column)
{
    size_t i = 0;
    while (i < q->n_needs && !(q->needs[i].fn == fn && q->needs[i].column == column)) i++;
    if (i == q->n_needs) {
        if (q->n_needs == sizeof q->needs / sizeof q->needs[0]) return false;
        q->needs[q->n_needs++] = (need){fn, column};
    }
    if (q->n_aggs == sizeof q->aggs / sizeof q->aggs[0]) return false;
    q->aggs[q->n_aggs++] = (agg_node){node, i};
    return true;
}

/* Whether an ORDER BY item is ascending, with nulls first (nulls_first) or
 * last (DuckDB's default), by expression e. */
static bool ascending_by(const json_t *o, bool nulls_first,
                         bool (*is)(const query_shape *, const json_t *), const query_shape *q,
                         const char *column)
{
    const char *type = tl_js_str(o, "type"), *nulls = tl_js_str(o, "null_order");
    const json_t *x = json_object_get(o, "expression");
    bool nulls_ok = nulls_first
                        ? strcmp(nulls, "NULLS FIRST") == 0
                        : strcmp(nulls, "ORDER_DEFAULT") == 0 || strcmp(nulls, "NULLS LAST") == 0;
    return (strcmp(type, "ORDER_DEFAULT") == 0 || strcmp(type, "ASCENDING") == 0) && nulls_ok &&
           (is ? is(q, x) : column_of(q, x) == column);
}

static bool is_time(const query_shape *q, const json_t *e)
{
    return tl_shape_is_time(&q->x, e);
}

/* first(x ORDER BY time [, x]) or last(...) (first_value / last_value as
 * sql_rewrite.h leaves them, the tie broken by x, nulls at the far end):
 * 0 when e is neither. */
static int first_or_last(query_shape *q, const json_t *e)
{
    const char *name = tl_js_str(e, "function_name");
    bool first = strcasecmp(name, "first") == 0 || strcasecmp(name, "first_value") == 0;
    if (!first && strcasecmp(name, "last") != 0 && strcasecmp(name, "last_value") != 0) return 0;
    const json_t *ch = json_object_get(e, "children");
    const json_t *orders = json_object_get(json_object_get(e, "order_bys"), "orders");
    size_t n = json_array_size(orders);
    const char *col = json_array_size(ch) == 1 ? column_of(q, json_array_get(ch, 0)) : NULL;
    bool ok = col && strcmp(col, q->x.time) != 0 && tl_shape_absent(e, "filter") &&
              !json_is_true(json_object_get(e, "distinct")) && !*tl_js_str(e, "schema") &&
              !*tl_js_str(e, "catalog") && !json_is_true(json_object_get(e, "export_state")) &&
              (n == 1 || n == 2) &&
              ascending_by(json_array_get(orders, 0), false, is_time, q, NULL) &&
              (n == 1 || ascending_by(json_array_get(orders, 1), !first, NULL, q, col));
    return ok && add_need(q, (json_t *)e, first ? N_FIRST : N_LAST, col) ? 1 : -1;
}

/* The method of time_weighted_mean's third argument (a string literal):
 * N_TWM or N_TWM_LINEAR, -1 when not one. */
static int method_of(const json_t *m)
{
    const json_t *v = json_object_get(m, "value");
    const char *text = json_string_value(json_object_get(v, "value"));
    if (!tl_js_is_class(m, "CONSTANT") ||
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "VARCHAR") != 0 || text == NULL)
        return -1;
    if (strcasecmp(text, "linear") == 0) return N_TWM_LINEAR;
    return strcasecmp(text, "forward_fill") == 0 || strcasecmp(text, "ffill") == 0 ? N_TWM : -1;
}

/* m4(time, x) or time_weighted_mean(time, x [, method]): 0 when e is
 * neither. */
static int points_aggregate(query_shape *q, const json_t *e, bool plain)
{
    const char *name = tl_js_str(e, "function_name");
    const json_t *ch = json_object_get(e, "children");
    size_t n = json_array_size(ch);
    bool m4 = strcasecmp(name, "m4") == 0;
    if (!m4 && strcasecmp(name, "time_weighted_mean") != 0) return 0;
    const char *col = n >= 2 ? column_of(q, json_array_get(ch, 1)) : NULL;
    int fn = m4       ? (n == 2 ? N_M4 : -1)
             : n == 2 ? N_TWM
             : n == 3 ? method_of(json_array_get(ch, 2))
                      : -1;
    bool ok = plain && fn >= 0 && col && strcmp(col, q->x.time) != 0 &&
              is_time(q, json_array_get(ch, 0)) && add_need(q, (json_t *)e, (need_fn)fn, col);
    return ok ? 1 : -1;
}

/* An aggregate routing can merge: count(*), count, sum, min, max, avg of a
 * column, m4 and time_weighted_mean of a column by time, plain (no
 * DISTINCT, FILTER or ORDER BY), and first / last of a column by time. 0:
 * not an aggregate routing knows, 1: taken, -1: one it cannot route. */
static int aggregate(query_shape *q, const json_t *e)
{
    int fl = first_or_last(q, e);
    if (fl) return fl;
    static const struct {
        const char *name;
        need_fn fn;
    } fns[] = {{"count", N_COUNT}, {"sum", N_SUM}, {"min", N_MIN},
               {"max", N_MAX},     {"avg", N_AVG}, {"mean", N_AVG}};
    const char *name = tl_js_str(e, "function_name");
    const json_t *ch = json_object_get(e, "children");
    bool plain = tl_shape_absent(e, "filter") && !json_is_true(json_object_get(e, "distinct")) &&
                 json_array_size(json_object_get(json_object_get(e, "order_bys"), "orders")) == 0 &&
                 !*tl_js_str(e, "schema") && !*tl_js_str(e, "catalog") &&
                 !json_is_true(json_object_get(e, "export_state"));
    int pa = points_aggregate(q, e, plain);
    if (pa) return pa;
    if (strcasecmp(name, "count_star") == 0)
        return plain && json_array_size(ch) == 0 && add_need(q, (json_t *)e, N_COUNT_STAR, NULL)
                   ? 1
                   : -1;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        if (strcasecmp(name, fns[i].name) != 0) continue;
        const char *col = json_array_size(ch) == 1 ? column_of(q, json_array_get(ch, 0)) : NULL;
        bool ok =
            plain && col && strcmp(col, q->x.time) != 0 && add_need(q, (json_t *)e, fns[i].fn, col);
        return ok ? 1 : -1;
    }
    return 0;
}

static bool is_alias(const query_shape *q, const json_t *e)
{
    const json_t *names = json_object_get(e, "column_names");
    const json_t *item;
    size_t i;
    if (json_array_size(names) != 1) return false;
    json_array_foreach(json_object_get(q->x.select, "select_list"), i, item)
    {
        if (strcasecmp(tl_js_str(item, "alias"), json_string_value(json_array_get(names, 0))) == 0)
            return true;
    }
    return false;
}

/* An expression of the select list, HAVING or ORDER BY: grouping keys,
 * aggregates routing can merge, constants and plain scalar functions. */
static bool outer_expr(query_shape *q, const json_t *e)
{
    if (!plain_class(e)) return false;
    if (tl_js_is_class(e, "COLUMN_REF")) {
        const char *col = column_of(q, e);
        return col ? listed(&q->group_keys, col) : is_alias(q, e);
    }
    if (tl_js_is_class(e, "FUNCTION")) {
        int a = aggregate(q, e);
        if (a) return a > 0;
        if (tl_js_same_expr(e, q->bucket)) return true;
        if (!plain_scalar(e)) return false;
    }
    return walk_children(q, e, outer_expr);
}

/* A condition on rollup keys only (checked against the rollup's keys
 * later), with no aggregate or time in it. */
static bool key_condition(query_shape *q, const json_t *e)
{
    if (!plain_class(e)) return false;
    if (tl_js_is_class(e, "COLUMN_REF")) {
        const char *col = column_of(q, e);
        return col && strcmp(col, q->x.time) != 0 && add_name(&q->where_keys, col);
    }
    if (tl_js_is_class(e, "FUNCTION") && !plain_scalar(e)) return false;
    return walk_children(q, e, key_condition);
}

/* The microseconds of a time literal: 'text' or CAST('text' AS TIMESTAMP,
 * TIMESTAMPTZ or DATE), read as DuckDB reads it in UTC. */
static bool time_literal(const json_t *e, int64_t *us)
{
    if (tl_js_is_class(e, "CAST")) {
        const char *type = tl_js_str(json_object_get(e, "cast_type"), "id");
        if (json_is_true(json_object_get(e, "try_cast")) ||
            (strcmp(type, "TIMESTAMP") != 0 && strcmp(type, "TIMESTAMP WITH TIME ZONE") != 0 &&
             strcmp(type, "DATE") != 0))
            return false;
        e = json_object_get(e, "child");
    }
    const json_t *v = json_object_get(e, "value");
    if (!tl_js_is_class(e, "CONSTANT") ||
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "VARCHAR") != 0)
        return false;
    const char *s = json_string_value(json_object_get(v, "value"));
    return s && tl_sql_parse_time(s, us);
}

static void narrow(query_shape *q, int64_t lo, int64_t hi)
{
    if (lo > q->lo) q->lo = lo;
    if (hi < q->hi) q->hi = hi;
}

/* time <op> literal (either way round): narrows the range. */
static bool time_comparison(query_shape *q, const json_t *e)
{
    const json_t *l = json_object_get(e, "left"), *r = json_object_get(e, "right");
    const char *type = tl_js_str(e, "type");
    bool flip = !tl_shape_is_time(&q->x, l);
    int64_t t;
    if (!tl_js_is_class(e, "COMPARISON") || !tl_shape_is_time(&q->x, flip ? r : l) ||
        !time_literal(flip ? l : r, &t))
        return false;
    bool gt = strstr(type, "GREATERTHAN") != NULL, lt = strstr(type, "LESSTHAN") != NULL;
    bool eq = strstr(type, "EQUAL") != NULL && strstr(type, "NOT") == NULL;
    if (flip) { /* literal <op> time */
        bool tmp = gt;
        gt = lt;
        lt = tmp;
    }
    if (t == INT64_MIN || t == INT64_MAX) return false;
    if (gt)
        narrow(q, eq ? t : t + 1, INT64_MAX);
    else if (lt)
        narrow(q, INT64_MIN, eq ? t : t - 1);
    else if (eq && strcmp(type, "COMPARE_EQUAL") == 0)
        narrow(q, t, t);
    else
        return false;
    return true;
}

static bool time_between(query_shape *q, const json_t *e)
{
    int64_t lo, hi;
    if (!tl_js_is_class(e, "BETWEEN") || !tl_shape_is_time(&q->x, json_object_get(e, "input")) ||
        !time_literal(json_object_get(e, "lower"), &lo) ||
        !time_literal(json_object_get(e, "upper"), &hi))
        return false;
    narrow(q, lo, hi);
    return true;
}

static bool where_conjunct(query_shape *q, const json_t *e)
{
    if (tl_js_is_type(e, "CONJUNCTION_AND")) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(e, "children"), i,
                           c) if (!where_conjunct(q, c)) return false;
        return true;
    }
    return time_comparison(q, e) || time_between(q, e) || key_condition(q, e);
}

/* The grouping keys: one time_bucket of the time column, columns else. */
static bool group_keys(query_shape *q)
{
    const json_t *groups = json_object_get(q->x.select, "group_expressions");
    const json_t *sets = json_object_get(q->x.select, "group_sets");
    size_t n = json_array_size(groups);
    if (n == 0 || json_array_size(sets) != 1 || json_array_size(json_array_get(sets, 0)) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *g = tl_shape_group_expr(&q->x, json_array_get(groups, i));
        const char *col = g ? column_of(q, g) : NULL;
        if (g && tl_shape_is_bucket(&q->x, g) && q->bucket == NULL) {
            q->bucket = g; /* its width is read last (bucket_width) */
        } else if (col == NULL || strcmp(col, q->x.time) == 0 || !add_name(&q->group_keys, col)) {
            return false;
        }
    }
    return q->bucket != NULL;
}

static bool modifiers(query_shape *q)
{
    size_t i, j;
    const json_t *m, *o;
    json_array_foreach(json_object_get(q->x.select, "modifiers"), i, m)
    {
        if (tl_js_is_type(m, "LIMIT_MODIFIER")) continue;
        if (!tl_js_is_type(m, "ORDER_MODIFIER")) return false;
        json_array_foreach(json_object_get(m, "orders"), j, o)
        {
            if (!outer_expr(q, json_object_get(o, "expression"))) return false;
        }
    }
    return true;
}

/* Whether e holds a call of an aggregate routing knows. */
static bool has_aggregate(const json_t *e)
{
    static const char *const names[] = {"count_star",
                                        "count",
                                        "sum",
                                        "min",
                                        "max",
                                        "avg",
                                        "mean",
                                        "first",
                                        "first_value",
                                        "last_value",
                                        "last",
                                        "m4",
                                        "time_weighted_mean",
                                        NULL};
    if (tl_js_is_class(e, "FUNCTION"))
        for (size_t i = 0; names[i]; i++)
            if (strcasecmp(tl_js_str(e, "function_name"), names[i]) == 0) return true;
    const char *k;
    const json_t *v;
    size_t i;
    if (json_is_object(e)) json_object_foreach((json_t *)e, k, v) if (has_aggregate(v)) return true;
    if (json_is_array(e)) json_array_foreach(e, i, v) if (has_aggregate(v)) return true;
    return false;
}

/* Whether the select groups by ALL (no grouping expressions of its own). */
static bool groups_all(const json_t *select)
{
    return strcmp(tl_js_str(select, "aggregate_handling"), "FORCE_AGGREGATES") == 0 &&
           json_array_size(json_object_get(select, "group_expressions")) == 0;
}

/* GROUP BY ALL made explicit in the query's copy: each select item without
 * an aggregate becomes a grouping expression, as DuckDB binds it (an item
 * that is no column or bucket then keeps the query from routing). False
 * when out of memory. */
static bool expand_group_all(json_t *select)
{
    if (!groups_all(select)) return true;
    json_t *groups = json_array(), *set = json_array(), *sets = json_array();
    bool ok = groups && set && sets && json_array_append(sets, set) == 0;
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        if (!ok || has_aggregate(item)) continue;
        json_t *g = json_deep_copy(item);
        ok = g && json_object_set_new(g, "alias", json_string("")) == 0 &&
             json_array_append_new(set, json_integer((json_int_t)json_array_size(groups))) == 0 &&
             json_array_append(groups, g) == 0;
        json_decref(g);
    }
    ok = ok && json_object_set(select, "group_expressions", groups) == 0 &&
         json_object_set(select, "group_sets", sets) == 0 &&
         json_object_set_new(select, "aggregate_handling", json_string("STANDARD_HANDLING")) == 0;
    json_decref(groups);
    json_decref(set);
    json_decref(sets);
    return ok;
}

/* The bucket's width, epoch-aligned: read after every other check, as
 * a width that is not a plain interval literal costs an engine query. */
static bool bucket_width(query_shape *q)
{
    int64_t origin = 0;
    return tl_shape_bucket_geometry(&q->x, q->bucket, &q->width, &origin) && origin == 0;
}

/* Reads the query (select: a copy the caller may change) over raw; the
 * checks that walk the whole tree, and the width, after the cheap ones. */
static bool read_query(query_shape *q)
{
    const json_t *select = q->x.select;
    if (!tl_js_is_type(select, "SELECT_NODE") || !group_keys(q)) return false;
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        if (!outer_expr(q, item)) return false;
    }
    const json_t *having = json_object_get(select, "having");
    if (having && !json_is_null(having) && !outer_expr(q, having)) return false;
    const json_t *where = json_object_get(select, "where_clause");
    if (where && !json_is_null(where) && !where_conjunct(q, where)) return false;
    if (!modifiers(q) || q->n_aggs == 0) return false;
    /* A copy of a tree read before: the same clauses, the same width. */
    return q->width > 0 || (tl_shape_plain_select(select) &&
                            !tl_shape_has_class(select, "SUBQUERY") && bucket_width(q));
}

/* How each need is met from a rollup. */
typedef struct merge {
    const char *stored[2]; /* the rollup's columns: the state, and avg's count */
    bool avg_exact;        /* avg from the stored mean */
} merge;

static const tl_rollup_agg *stored(const tl_rollup_def *d, tl_rollup_fn fn, const char *column)
{
    for (size_t i = 0; i < d->n_aggs; i++) {
        const tl_rollup_agg *a = &d->aggs[i];
        if (a->fn != fn) continue;
        if (column == NULL ? a->column == NULL : a->column && strcasecmp(a->column, column) == 0)
            return a;
    }
    return NULL;
}

static bool same_keys(const tl_strlist *a, const tl_strlist *b)
{
    for (size_t i = 0; i < a->len; i++)
        if (!listed(b, a->items[i])) return false;
    for (size_t i = 0; i < b->len; i++)
        if (!listed(a, b->items[i])) return false;
    return true;
}

/* Whether rollup d can answer q; fills merges[q->n_needs]. */
static bool rollup_fits(const query_shape *q, const tl_rollup_def *d, merge *merges)
{
    if (!d->routing || d->source_snapshot == 0 || d->bucket_us <= 0 || q->width % d->bucket_us)
        return false;
    for (size_t i = 0; i < q->group_keys.len; i++)
        if (!listed(&d->keys, q->group_keys.items[i])) return false;
    for (size_t i = 0; i < q->where_keys.len; i++)
        if (!listed(&d->keys, q->where_keys.items[i])) return false;
    bool exact = q->width == d->bucket_us && same_keys(&q->group_keys, &d->keys);
    static const tl_rollup_fn fns[] = {[N_COUNT_STAR] = TL_ROLLUP_COUNT,
                                       [N_COUNT] = TL_ROLLUP_COUNT,
                                       [N_SUM] = TL_ROLLUP_SUM,
                                       [N_MIN] = TL_ROLLUP_MIN,
                                       [N_MAX] = TL_ROLLUP_MAX,
                                       [N_AVG] = TL_ROLLUP_AVG,
                                       [N_FIRST] = TL_ROLLUP_FIRST,
                                       [N_LAST] = TL_ROLLUP_LAST,
                                       [N_M4] = TL_ROLLUP_M4,
                                       [N_TWM] = TL_ROLLUP_TWM,
                                       [N_TWM_LINEAR] = TL_ROLLUP_TWM_LINEAR};
    for (size_t i = 0; i < q->n_needs; i++) {
        const need *n = &q->needs[i];
        merge *m = &merges[i];
        memset(m, 0, sizeof *m);
        const tl_rollup_agg *a = stored(d, fns[n->fn], n->column);
        /* A stored first or last value has no time beside it: the rollup's
         * rows of one group order by their buckets only at its own keys. */
        if ((n->fn == N_FIRST || n->fn == N_LAST) && !same_keys(&q->group_keys, &d->keys))
            return false;
        /* States of one series merge (consecutive buckets, raw readings
         * before or after them); at a subset of the keys a group would
         * mix series whose states overlap in time. */
        if ((n->fn == N_TWM || n->fn == N_TWM_LINEAR) && !same_keys(&q->group_keys, &d->keys))
            return false;
        if (n->fn == N_AVG && !(exact && a)) {
            const tl_rollup_agg *s = stored(d, TL_ROLLUP_SUM, n->column);
            const tl_rollup_agg *c = stored(d, TL_ROLLUP_COUNT, n->column);
            if (s == NULL || c == NULL) return false;
            m->stored[0] = s->name;
            m->stored[1] = c->name;
        } else if (a) {
            m->stored[0] = a->name;
            m->avg_exact = n->fn == N_AVG;
        } else {
            return false;
        }
    }
    return true;
}

/* Whether every snapshot after the rollup's source snapshot, back from the
 * current one, only added rows (appends) or rewrote them (compactions):
 * then the rows of the clean buckets are those the rollup was made from.
 * Fills *after with their ids. */
static bool history_clean(const tl_table *raw, int64_t source, tl_buf *after)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(raw->md);
    while (s && s->snapshot_id != source) {
        const char *op = tl_ice_snapshot_summary(s, "operation");
        if (op == NULL || (strcmp(op, "append") != 0 && strcmp(op, "replace") != 0)) return false;
        if (tl_buf_append(after, &s->snapshot_id, sizeof s->snapshot_id) != 0) return false;
        s = tl_ice_metadata_parent(raw->md, s);
    }
    return s != NULL;
}

static bool added_after(const tl_buf *after, int64_t snapshot_id)
{
    const int64_t *ids = (const int64_t *)after->data;
    for (size_t i = 0; i < after->len / sizeof *ids; i++)
        if (ids[i] == snapshot_id) return true;
    return false;
}

static int64_t floor_to(int64_t t, int64_t w)
{
    int64_t r = t % w;
    return r < 0 ? t - r - w : t - r;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The clean ranges: [lo, hi) less the changed spans (sorted, merged; merged
 * further when there are many, which only reads more from raw). */
static size_t clean_ranges(span *changed, size_t n, int64_t lo, int64_t hi, span *out)
{
    qsort(changed, n, sizeof *changed, cmp_span);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && changed[i].lo <= changed[m - 1].hi) {
            if (changed[i].hi > changed[m - 1].hi) changed[m - 1].hi = changed[i].hi;
        } else {
            changed[m++] = changed[i];
        }
    }
    while (m > MAX_RANGES) { /* merge pairs */
        size_t k = 0;
        for (size_t i = 0; i < m; i += 2)
            changed[k++] = i + 1 < m ? (span){changed[i].lo, changed[i + 1].hi} : changed[i];
        m = k;
    }
    size_t c = 0;
    int64_t at = lo;
    for (size_t i = 0; i <= m && at < hi; i++) {
        int64_t end = i < m ? changed[i].lo : hi;
        if (end > hi) end = hi;
        if (end > at) out[c++] = (span){at, end};
        if (i < m && changed[i].hi > at) at = changed[i].hi;
    }
    return c;
}

/* The files of raw added since the source snapshot give the changed spans
 * (whole rollup buckets); the first data of raw and of the rollup bound
 * the clean range below. False when a file has no time bounds, or delete
 * files exist. */
static tl_status clean_buckets(tl_query_engine *e, const query_shape *q, const tl_table *rollup,
                               const tl_rollup_def *d, span *out, size_t *n_out, bool *ok,
                               tl_error *err)
{
    *ok = false;
    *n_out = 0;
    tl_buf after = {0};
    if (!history_clean(q->raw, d->source_snapshot, &after)) {
        tl_buf_free(&after);
        return TL_OK;
    }
    const tl_live_files *rf = NULL;
    tl_status st = tl_query_live_files(e, rollup, &rf, err);
    int64_t roll_min = INT64_MAX, lo, hi;
    bool fine = st == TL_OK && rf->delete_files == 0;
    for (size_t i = 0; fine && i < rf->n; i++) {
        fine = tl_scan_time_bounds(rollup, &rf->files[i].file, &lo, &hi);
        if (fine && lo < roll_min) roll_min = lo;
    }
    const tl_live_files *lf = NULL;
    if (st == TL_OK && fine) st = tl_query_live_files(e, q->raw, &lf, err);
    span *changed = st == TL_OK && fine ? calloc(lf->n + 1, sizeof *changed) : NULL;
    size_t n = 0;
    int64_t raw_min = INT64_MAX, w = d->bucket_us;
    fine = fine && changed && lf->delete_files == 0;
    for (size_t i = 0; fine && i < lf->n; i++) {
        fine = tl_scan_time_bounds(q->raw, &lf->files[i].file, &lo, &hi) && hi < INT64_MAX - w;
        if (!fine) break;
        if (lo < raw_min) raw_min = lo;
        if (added_after(&after, lf->files[i].snapshot_id))
            changed[n++] = (span){floor_to(lo, w), floor_to(hi, w) + w};
    }
    if (fine && roll_min != INT64_MAX && raw_min != INT64_MAX) {
        /* Whole buckets inside the query's range, from the first data on
         * both sides (older data may have been dropped from either). */
        int64_t from = q->lo == INT64_MIN ? INT64_MIN : floor_to(q->lo - 1, w) + w;
        int64_t first = floor_to(raw_min - 1, w) + w, roll_first = floor_to(roll_min - 1, w) + w;
        if (first > from) from = first;
        if (roll_first > from) from = roll_first;
        int64_t to = q->hi >= INT64_MAX - w ? INT64_MAX : floor_to(q->hi + 1, w);
        if (from < to) {
            *n_out = clean_ranges(changed, n, from, to, out);
            *ok = *n_out > 0;
        }
    }
    free(changed);
    tl_buf_free(&after);
    return st;
}

/* 'YYYY-MM-DD HH:MM:SS.ffffff+00' of t microseconds. */
static int print_time(tl_buf *b, int64_t t)
{
    int64_t days = floor_to(t, 86400000000LL) / 86400000000LL;
    int64_t rest = t - days * 86400000000LL, y;
    int mo, d;
    tl_civil_from_days(days, &y, &mo, &d);
    return tl_buf_printf(b, "TIMESTAMPTZ '%04" PRId64 "-%02d-%02d %02d:%02d:%02d.%06d+00'", y, mo,
                         d, (int)(rest / 3600000000LL), (int)(rest / 60000000LL % 60),
                         (int)(rest / 1000000 % 60), (int)(rest % 1000000));
}

/* (col >= lo AND col < hi) OR ... over the ranges. */
static int ranges_sql(tl_buf *b, const char *col, const span *r, size_t n)
{
    int rc = tl_buf_append_str(b, "(");
    for (size_t i = 0; i < n; i++) {
        rc |= tl_buf_printf(b, "%s(", i ? " OR " : "");
        if (r[i].lo != INT64_MIN) {
            rc |= tl_buf_printf(b, "%s >= ", col);
            rc |= print_time(b, r[i].lo);
        }
        if (r[i].hi != INT64_MAX) {
            rc |= tl_buf_printf(b, "%s%s < ", r[i].lo != INT64_MIN ? " AND " : "", col);
            rc |= print_time(b, r[i].hi);
        }
        if (r[i].lo == INT64_MIN && r[i].hi == INT64_MAX) rc |= tl_buf_append_str(b, "true");
        rc |= tl_buf_append_str(b, ")");
    }
    return rc | tl_buf_append_str(b, ")");
}

/* The suffix of the name of a raw table's view narrowed to the rows
 * outside the clean buckets: apart from its own, so that neither changes
 * (no DDL) from one routed query to the next. */
#define RAW_VIEW "@routed"

static char *view_name(const tl_table *t, const char *suffix)
{
    char *name = tl_strdup_printf("%s%s", t->name.table, suffix);
    char *ns = tl_sql_ident(t->name.namespace_), *tb = name ? tl_sql_ident(name) : NULL;
    free(name);
    char *v = ns && tb ? tl_strdup_printf("%s.%s", ns, tb) : NULL;
    free(ns);
    free(tb);
    return v;
}

/* A raw row's m4 points or time-weighted state (one reading: both ends at
 * its time, spans and area 0), as the rollup stores them; NULL without a
 * time or a value, which the merging aggregate skips. */
static int raw_state_sql(tl_buf *b, need_fn fn, const char *time, const char *c, size_t p)
{
    int rc = tl_buf_printf(b, ", CASE WHEN %s IS NULL OR %s IS NULL THEN NULL ELSE ", time, c);
    if (fn == N_M4)
        rc |= tl_buf_printf(b, "[{'time': %s, 'value': CAST(%s AS DOUBLE)}]", time, c);
    else
        rc |= tl_buf_printf(b,
                            "[{'first_time': epoch_us(%s), 'first_value': CAST(%s AS DOUBLE), "
                            "'first_span': CAST(0 AS BIGINT), 'last_time': epoch_us(%s), "
                            "'last_value': CAST(%s AS DOUBLE), 'last_span': CAST(0 AS BIGINT), "
                            "'area': CAST(0 AS DOUBLE)}]",
                            time, c, time, c);
    return rc | tl_buf_printf(b, " END AS __tl_p%zu", p);
}

/* The UNION ALL of raw rows outside the clean ranges and rollup rows in
 * them, both as keys, time and partial states __tl_p<i>; *rollup_sql: the
 * rollup's part alone, which names the columns read of it. */
static char *union_sql(const query_shape *q, const tl_table *rollup, const tl_rollup_def *d,
                       const merge *merges, const span *r, size_t n, char **rollup_sql)
{
    tl_buf raw = {0}, roll = {0};
    char *rv = view_name(q->raw, RAW_VIEW), *ov = view_name(rollup, ""),
         *time = tl_sql_ident(q->x.time);
    char *bucket = tl_sql_ident(d->bucket_column);
    int rc = !rv || !ov || !time || !bucket;
    rc |= tl_buf_append_str(&raw, "SELECT ") | tl_buf_append_str(&roll, "SELECT ");
    for (int pass = 0; pass < 2; pass++) {
        const tl_strlist *keys = pass ? &q->where_keys : &q->group_keys;
        for (size_t i = 0; i < keys->len; i++) {
            if (pass && listed(&q->group_keys, keys->items[i])) continue;
            char *k = tl_sql_ident(keys->items[i]);
            rc |= !k || tl_buf_printf(&raw, "%s, ", k) || tl_buf_printf(&roll, "%s, ", k);
            free(k);
        }
    }
    rc |= tl_buf_printf(&raw, "%s", time) | tl_buf_printf(&roll, "%s AS %s", bucket, time);
    size_t p = 0;
    for (size_t i = 0; i < q->n_needs; i++) {
        const need *nd = &q->needs[i];
        char *c = nd->column ? tl_sql_ident(nd->column) : strdup("1");
        char *s0 = tl_sql_ident(merges[i].stored[0]);
        char *s1 = merges[i].stored[1] ? tl_sql_ident(merges[i].stored[1]) : NULL;
        rc |= !c || !s0 || (merges[i].stored[1] && !s1);
        if (!rc && nd->fn == N_COUNT)
            rc |=
                tl_buf_printf(&raw, ", CASE WHEN %s IS NULL THEN 0 ELSE 1 END AS __tl_p%zu", c, p);
        else if (!rc && (nd->fn == N_M4 || nd->fn == N_TWM || nd->fn == N_TWM_LINEAR))
            rc |= raw_state_sql(&raw, nd->fn, time, c, p);
        else if (!rc)
            rc |= tl_buf_printf(&raw, ", %s AS __tl_p%zu", c, p);
        rc |= rc || tl_buf_printf(&roll, ", %s AS __tl_p%zu", s0, p);
        p++;
        if (!rc && s1) {
            rc |=
                tl_buf_printf(&raw, ", CASE WHEN %s IS NULL THEN 0 ELSE 1 END AS __tl_p%zu", c, p);
            rc |= tl_buf_printf(&roll, ", %s AS __tl_p%zu", s1, p);
            p++;
        }
        free(c);
        free(s0);
        free(s1);
    }
    rc |= rc || tl_buf_printf(&raw, " FROM %s WHERE %s IS NULL OR NOT ", rv, time) ||
          ranges_sql(&raw, time, r, n);
    rc |= rc || tl_buf_printf(&roll, " FROM %s WHERE ", ov) || ranges_sql(&roll, bucket, r, n);
    rc |= rc || tl_buf_append_byte(&raw, 0) || tl_buf_append_byte(&roll, 0);
    char *sql = rc ? NULL
                   : tl_strdup_printf("SELECT * FROM (%s UNION ALL %s) AS routed",
                                      (const char *)raw.data, (const char *)roll.data);
    *rollup_sql = sql ? strdup((const char *)roll.data) : NULL;
    if (*rollup_sql == NULL) {
        free(sql);
        sql = NULL;
    }
    tl_buf_free(&raw);
    tl_buf_free(&roll);
    free(rv);
    free(ov);
    free(time);
    free(bucket);
    return sql;
}

/* The aggregate over partial states that replaces need i; time: the
 * union's time column (a rollup row's bucket), which orders first and last
 * values (a raw row outside the clean buckets is before or after a whole
 * rollup bucket, never inside it). */
static int merged_sql(tl_buf *b, const need *n, const merge *m, const char *time, size_t *p)
{
    size_t i = (*p)++;
    switch (n->fn) {
    case N_FIRST:
    case N_LAST:
        return tl_buf_printf(b, "%s(__tl_p%zu ORDER BY %s, __tl_p%zu NULLS %s)",
                             n->fn == N_FIRST ? "first" : "last", i, time, i,
                             n->fn == N_FIRST ? "LAST" : "FIRST");
    case N_COUNT_STAR:
    case N_COUNT:
        return tl_buf_printf(b, "CAST(sum(__tl_p%zu) AS BIGINT)", i);
    case N_SUM:
        return tl_buf_printf(b, "sum(__tl_p%zu)", i);
    case N_MIN:
        return tl_buf_printf(b, "min(__tl_p%zu)", i);
    case N_MAX:
        return tl_buf_printf(b, "max(__tl_p%zu)", i);
    case N_M4:
        return tl_buf_printf(b, "m4(__tl_p%zu)", i);
    case N_TWM:
    case N_TWM_LINEAR:
        return tl_buf_printf(b, "time_weighted_mean(__tl_p%zu%s)", i,
                             n->fn == N_TWM_LINEAR ? ", 'linear'" : "");
    case N_AVG:
        if (m->avg_exact) return tl_buf_printf(b, "avg(__tl_p%zu)", i);
        (*p)++;
        return tl_buf_printf(b, "(sum(__tl_p%zu) / sum(__tl_p%zu))", i, i + 1);
    }
    return -1;
}

/* The first statement's first select item of `sql`, a new reference. */
static json_t *parse_select(tl_query_engine *e, const char *sql, const char *member)
{
    json_t *tree = NULL;
    if (tl_sql_syntax_tree(e, sql, &tree, NULL) != TL_OK) return NULL;
    const json_t *node =
        json_object_get(json_array_get(json_object_get(tree, "statements"), 0), "node");
    json_t *copy = json_deep_copy(json_object_get(node, member));
    json_decref(tree);
    return copy;
}

static bool contains_agg(const query_shape *q, const json_t *e)
{
    for (size_t i = 0; i < q->n_aggs; i++)
        if (q->aggs[i].node == e) return true;
    const char *k;
    const json_t *v;
    size_t i;
    if (json_is_object(e))
        json_object_foreach((json_t *)e, k, v) if (contains_agg(q, v)) return true;
    if (json_is_array(e)) json_array_foreach(e, i, v) if (contains_agg(q, v)) return true;
    return false;
}

/* Rewrites the copy: FROM the union, each aggregate merged; select items
 * keep the names DuckDB gives them as written. */
static bool rewrite_tree(tl_query_engine *e, query_shape *q, json_t *select, const char *from_sql,
                         const merge *merges)
{
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        if (*tl_js_str(item, "alias") || !contains_agg(q, item)) continue;
        json_t *one = json_pack("[O]", item);
        char *text = one ? tl_sql_select_text(e, one) : NULL;
        json_decref(one);
        bool ok = text && strncmp(text, "SELECT ", 7) == 0 &&
                  json_object_set_new(item, "alias", json_string(text + 7)) == 0;
        free(text);
        if (!ok) return false;
    }
    tl_buf b = {0};
    char *time = tl_sql_ident(q->x.time);
    int rc = time ? tl_buf_append_str(&b, "SELECT ") : -1;
    size_t p = 0;
    for (size_t k = 0; rc == 0 && k < q->n_needs; k++) {
        rc |= k ? tl_buf_append_str(&b, ", ") : 0;
        rc |= merged_sql(&b, &q->needs[k], &merges[k], time, &p);
    }
    free(time);
    rc |= tl_buf_append_byte(&b, 0);
    json_t *list = rc ? NULL : parse_select(e, (const char *)b.data, "select_list");
    tl_buf_free(&b);
    json_t *from = parse_select(e, from_sql, "from_table");
    bool ok = list && from && json_array_size(list) == q->n_needs;
    if (ok) {
        json_t *table = json_object_get(select, "from_table");
        const char *alias = tl_js_str(table, "alias");
        ok = json_object_set_new(from, "alias", json_string(*alias ? alias : q->x.alias)) == 0 &&
             json_object_set(select, "from_table", from) == 0;
    }
    for (size_t k = 0; ok && k < q->n_aggs; k++) {
        json_t *node = q->aggs[k].node;
        json_t *alias = json_incref(json_object_get(node, "alias"));
        ok = json_object_clear(node) == 0 &&
             json_object_update(node, json_array_get(list, q->aggs[k].need)) == 0 &&
             json_object_set_new(node, "alias", alias ? alias : json_string("")) == 0;
    }
    json_decref(list);
    json_decref(from);
    return ok;
}

/* DESCRIBE's names and types of a query, one string. */
static char *describe(tl_query_engine *e, const char *query)
{
    char *sql = tl_strdup_printf("SELECT string_agg(column_name || ' ' || column_type, ', ' ORDER "
                                 "BY rowid) FROM (SELECT *, row_number() OVER () AS rowid FROM "
                                 "(DESCRIBE %s))",
                                 query);
    char *v = NULL;
    if (sql == NULL || tl_query_scalar_text(e, sql, NULL, &v, NULL) != TL_OK) v = NULL;
    free(sql);
    return v;
}

/* Registers raw's own view with its columns and no rows: routing runs
 * before the query's views are registered (a routed query does not read
 * raw's), and the original query is described against it. */
static tl_status schema_view(tl_query_engine *e, const tl_table *raw, tl_error *err)
{
    tl_buf sql = {0};
    tl_status st = tl_scan_empty_sql(raw, &sql, err);
    if (st == TL_OK && tl_buf_append_byte(&sql, 0) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_query_register(e, raw, (const char *)sql.data, err);
    tl_buf_free(&sql);
    return st;
}

/* Whether routed query b gives the columns (names, types) of the query of
 * raw whose syntax tree is `doc`; kept for the engine's recent routed
 * queries, which repeat (the query's text is made only when checked). */
static bool same_result(tl_query_engine *e, const tl_table *raw, const json_t *doc, const char *b)
{
    size_t n = sizeof e->routes_checked / sizeof e->routes_checked[0];
    for (size_t i = 0; i < n; i++)
        if (e->routes_checked[i] && strcmp(e->routes_checked[i], b) == 0) return true;
    char *a = tl_sql_tree_text(e, doc);
    if (a == NULL || schema_view(e, raw, NULL) != TL_OK) {
        free(a);
        return false;
    }
    char *x = describe(e, a), *y = describe(e, b);
    bool same = x && y && strcmp(x, y) == 0;
    free(a);
    free(x);
    free(y);
    char *copy = same ? strdup(b) : NULL;
    if (copy) {
        size_t slot = e->next_route_check++ % n;
        free(e->routes_checked[slot]);
        e->routes_checked[slot] = copy;
    }
    return same;
}

/* The filters of the plan's reference, each narrowed to each range ([lo,
 * hi); times inclusive in the filters), for t: the raw table of ref or its
 * rollup. Malloc'd, *k of them, at least one (a range nothing passes when
 * the ranges leave nothing). */
static tl_scan_filter *ranged_filters(const tl_table *t, const tl_sql_ref *ref, const span *r,
                                      size_t n, size_t *k)
{
    /* The raw table's first series-key column, when it is t's too: its
     * values prune t's files, row groups and pages as well. */
    const tl_strlist *own = &t->contract.series_key, *refs = &ref->t->contract.series_key;
    bool same_keys = own->len && refs->len && strcasecmp(own->items[0], refs->items[0]) == 0;
    tl_scan_filter none = {0};
    const tl_scan_filter *base = ref->n_filters ? ref->filters : &none;
    size_t nb = ref->n_filters ? ref->n_filters : 1;
    tl_scan_filter *f = calloc(nb * n + 1, sizeof *f);
    *k = 0;
    for (size_t i = 0; f && i < nb; i++)
        for (size_t j = 0; j < n; j++) {
            tl_scan_filter x = base[i]; /* borrows its keys and columns */
            if (t != ref->t) {          /* another table: its own partition columns */
                x.has_keys &= same_keys;
                x.columns = NULL;
                x.n_columns = 0;
            }
            int64_t lo = r[j].lo, hi = r[j].hi == INT64_MAX ? INT64_MAX : r[j].hi - 1;
            if (r[j].lo != INT64_MIN && (!x.has_lo || x.lo < lo)) x.lo = lo, x.has_lo = true;
            if (r[j].hi != INT64_MAX && (!x.has_hi || x.hi > hi)) x.hi = hi, x.has_hi = true;
            if (!x.has_lo || !x.has_hi || x.lo <= x.hi) f[(*k)++] = x;
        }
    if (f && *k == 0) {
        f[0] = (tl_scan_filter){.has_lo = true, .lo = 1, .has_hi = true, .hi = 0};
        *k = 1;
    }
    return f;
}

#define ROLLUP_NOTE "rollup: the clean buckets"
#define FOLD_NOTE "rollup: the clean buckets, aggregated in the scan"

/* Where the routed views' reads go: EXPLAIN's rows, or the query's stats. */
typedef struct view_reads {
    tl_sql_table_read *reads; /* NULL: counted into stats */
    size_t *n;
    tl_scan_stats *stats;
    bool exact; /* reads: counted from the footers (stats say for themselves) */
} view_reads;

/* fold: the rollup's rows aggregated in the scan (rollup_fold.h), or NULL. */
static tl_status register_view(tl_query_engine *e, const tl_table *t, const char *suffix,
                               const tl_scan_filter *f, size_t k, const tl_rollup_fold *fold,
                               const char *note, const view_reads *vr, tl_error *err)
{
    const tl_live_files *lf = NULL;
    tl_buf sql = {0};
    tl_scan_stats own = {.exact = vr->exact};
    tl_scan_stats *stats = vr->reads ? &own : vr->stats;
    bool folded = false;
    tl_status st = tl_query_live_files(e, t, &lf, err);
    if (st == TL_OK && fold) st = tl_rollup_fold_sql(e, t, fold, f, k, &sql, stats, &folded, err);
    if (folded) note = FOLD_NOTE;
    if (st == TL_OK && !folded) st = tl_scan_sql(e, t, lf, f, k, false, &sql, stats, err);
    if (st == TL_OK && tl_buf_append_byte(&sql, 0) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_query_register_as(e, t, suffix, (const char *)sql.data, err);
    tl_scan_filter *copy = st == TL_OK && vr->reads ? calloc(k + 1, sizeof *copy) : NULL;
    if (st == TL_OK && vr->reads && copy == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && vr->reads) {
        memcpy(copy, f, k * sizeof *copy); /* borrowing the plan's keys, as f does */
        vr->reads[(*vr->n)++] =
            (tl_sql_table_read){t, false, own, (char *)tl_buf_detach(&sql, NULL), copy, k, note};
    }
    tl_buf_free(&sql);
    return st;
}

/* Moves the reads into vr (NULL: drops them). */
static void publish(tl_sql_table_read *r, size_t n, const view_reads *vr)
{
    for (size_t i = 0; i < n; i++) {
        if (vr && vr->reads) {
            vr->reads[(*vr->n)++] = r[i];
            continue;
        }
        if (vr) tl_scan_stats_add(vr->stats, &r[i].stats);
        free(r[i].view_sql);
        free(r[i].filters);
    }
}

#define RAW_NOTE "outside the rollup's clean buckets"

/* The rollup's view over the clean ranges and raw's outside them, each
 * decoding (or fetching, and counting) the columns its query names: raw's
 * those of e->query_text (the routed query reads no others of raw), the
 * rollup's those of rollup_sql, the routed query's SELECT of it. */
static tl_status register_views(tl_query_engine *e, const tl_table *raw, const tl_table *rollup,
                                const char *rollup_sql, const tl_rollup_fold *fold,
                                const tl_scan_filter *rf, size_t nrf, const tl_scan_filter *wf,
                                size_t nwf, const view_reads *vr, tl_error *err)
{
    const char *text = e->query_text;
    e->query_text = rollup_sql;
    tl_status st = register_view(e, rollup, "", rf, nrf, fold, ROLLUP_NOTE, vr, err);
    e->query_text = text;
    return st == TL_OK ? register_view(e, raw, RAW_VIEW, wf, nwf, NULL, RAW_NOTE, vr, err) : st;
}

/* The complement of the clean ranges: what raw still reads. */
static size_t complement(const span *r, size_t n, span *out)
{
    size_t c = 0;
    int64_t at = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (r[i].lo > at) out[c++] = (span){at, r[i].lo};
        at = r[i].hi;
    }
    if (at != INT64_MAX) out[c++] = (span){at, INT64_MAX};
    return c;
}

static char *explain_text(const query_shape *q, const tl_table *rollup, const tl_rollup_def *d,
                          const span *r, size_t n)
{
    tl_buf b = {0};
    int rc = tl_buf_printf(&b,
                           "%s answered from rollup %s (buckets of %" PRId64
                           " microseconds, refreshed from snapshot %" PRId64
                           ") for these whole buckets:",
                           q->raw->name.full, rollup->name.full, d->bucket_us, d->source_snapshot);
    for (size_t i = 0; i < n; i++) {
        rc |= tl_buf_append_str(&b, "\n  ");
        rc |= r[i].lo == INT64_MIN ? tl_buf_append_str(&b, "-inf") : print_time(&b, r[i].lo);
        rc |= tl_buf_append_str(&b, " to ");
        rc |= r[i].hi == INT64_MAX ? tl_buf_append_str(&b, "+inf") : print_time(&b, r[i].hi);
    }
    rc |= tl_buf_printf(&b,
                        "\nthe rest from %s (changed since the refresh, partial buckets at "
                        "the edges of the time range, newer data)",
                        q->raw->name.full);
    rc |= tl_buf_append_byte(&b, 0);
    if (rc) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

typedef struct candidate {
    tl_table *t;
    tl_rollup_def def;
    merge merges[32];
} candidate;

/* The widest rollup of raw that fits the query. */
static tl_status pick(const query_shape *q, const tl_strlist *names, tl_sql_lookup lookup,
                      void *ctx, candidate *best, bool *found, tl_error *err)
{
    *found = false;
    for (size_t i = 0; i < names->len; i++) {
        tl_qname qn;
        candidate c = {0};
        if (tl_qname_parse(names->items[i], q->raw->name.namespace_, &qn, NULL) != TL_OK ||
            lookup(ctx, qn.namespace_, qn.table, NULL, &c.t, NULL) != TL_OK || c.t == NULL)
            continue; /* dropped, or out of the query's reach: not a candidate */
        if (tl_rollup_def_parse(c.t->md, c.t->name.full, &c.def, NULL) != TL_OK) continue;
        bool fits = strcasecmp(c.def.source, q->raw->name.full) == 0 &&
                    rollup_fits(q, &c.def, c.merges) &&
                    (!*found || c.def.bucket_us > best->def.bucket_us);
        if (fits) {
            if (*found) tl_rollup_def_free(&best->def);
            *best = c;
            *found = true;
        } else {
            tl_rollup_def_free(&c.def);
        }
    }
    (void)err;
    return TL_OK;
}

static bool routing_on(const tl_query_engine *e, const tl_table *raw)
{
    const tl_contract *c = &raw->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(raw->md);
    return c->time_index >= 0 && s->fields[c->time_index].type.id == TL_ICE_TIMESTAMPTZ &&
           tl_setting_flag(raw->md, e->settings, "rollup-routing", true) &&
           (!c->dedup || tl_setting_flag(raw->md, e->settings, "read-dedup", true)) &&
           tl_ice_metadata_property(raw->md, TL_ROLLUPS_KEY) != NULL;
}

/* The series of a rollup, by its files: each file's rows over the buckets
 * its bounds span (every series in every bucket: fewer series, were some
 * missing from some buckets). 0 when no file tells. */
static tl_status rollup_series(tl_query_engine *e, const tl_table *rollup, int64_t width,
                               int64_t *series, tl_error *err)
{
    const tl_live_files *lf = NULL;
    int64_t lo, hi;
    *series = 0;
    TL_TRY(tl_query_live_files(e, rollup, &lf, err));
    for (size_t i = 0; i < lf->n; i++) {
        const tl_ice_data_file *f = &lf->files[i].file;
        if (!tl_scan_time_bounds(rollup, f, &lo, &hi) || hi < lo || hi - lo >= INT64_MAX / 2)
            continue;
        int64_t n = f->record_count / ((hi - lo) / width + 1);
        if (n > *series) *series = n;
    }
    return TL_OK;
}

/* EXPLAIN's account of the choice (a timelake_route_cost row). */
static char *cost_text(const tl_table *raw, const tl_table *rollup, int64_t roll, int64_t rest,
                       int64_t before)
{
    bool routes = roll + rest < before;
    return tl_strdup_printf(
        "rollup %s: its clean buckets %" PRId64 " bytes + %s around them %" PRId64
        " bytes = %" PRId64 " bytes, against %s alone %" PRId64 " bytes (estimated): %s",
        rollup->name.full, roll, raw->name.full, rest, roll + rest, raw->name.full, before,
        routes ? "the rollup reads less, routed" : "raw data reads less, not routed");
}

/* Whether reading the rollup's clean buckets and raw's rows outside them
 * reads fewer bytes than raw alone, as each scan would read them
 * (scan_cost.h): a narrow query that decodes a few pages of raw gains
 * nothing from a rollup whose row groups hold every series. rollup_sql: the
 * routed query's SELECT of the rollup, which names the columns it reads.
 * *text: the estimates and the choice, for EXPLAIN (malloc'd). */
static tl_status worth_it(tl_query_engine *e, const tl_sql_ref *ref, const tl_table *rollup,
                          const tl_rollup_def *d, const char *rollup_sql, const tl_scan_filter *rf,
                          size_t nrf, const tl_scan_filter *wf, size_t nwf, bool *out, char **text,
                          tl_error *err)
{
    int64_t series, before, roll, rest;
    const char *query = e->query_text;
    TL_TRY(rollup_series(e, rollup, d->bucket_us, &series, err));
    TL_TRY(tl_scan_cost(e, ref->t, query, ref->filters, ref->n_filters, series, &before, err));
    TL_TRY(tl_scan_cost(e, rollup, rollup_sql, rf, nrf, series, &roll, err));
    TL_TRY(tl_scan_cost(e, ref->t, query, wf, nwf, series, &rest, err));
    *out = roll + rest < before;
    if ((*text = cost_text(ref->t, rollup, roll, rest, before)) == NULL) return tl_error_nomem(err);
    return TL_OK;
}

/* What routing found for one query over given versions of its tables. */
struct route_memo {
    char *key;     /* the query, its raw table's version, the session (memo_key) */
    char *rollups; /* the rollups of raw as found (rollups_seen); NULL: routes nowhere */
    char *rollup;  /* the full name of the rollup that answers, or NULL */
    char *routed, *explain;
    char *rollup_sql;            /* the routed query's SELECT of the rollup (union_sql) */
    char *cost;                  /* the cost rule's estimates and choice (cost_text), or NULL */
    span ranges[MAX_RANGES + 1]; /* its clean buckets */
    size_t n;
    bool folds; /* the rollup's rows aggregated in the scan, as `fold` says */
    tl_rollup_fold fold;
};

#define MEMOS 16

/* The filters of the rollup's view and of raw's outside the clean ranges;
 * false when out of memory. */
static bool split_filters(const tl_sql_ref *ref, const tl_table *rollup, const span *ranges,
                          size_t n, tl_scan_filter **rf, size_t *nrf, tl_scan_filter **wf,
                          size_t *nwf)
{
    span all = {ranges[0].lo, ranges[n - 1].hi}, rest[MAX_RANGES + 2];
    *rf = ranged_filters(rollup, ref, &all, 1, nrf);
    *wf = ranged_filters(ref->t, ref, rest, complement(ranges, n, rest), nwf);
    return *rf && *wf;
}

/* How the rollup's rows of the one clean range fold in the scan
 * (rollup_fold.h): each need's stored columns by the merge of their
 * states; false (f left empty) when a need merges otherwise, as first and
 * last values, m4, time-weighted means and a stored mean do, or the clean
 * buckets are several ranges. */
static bool fold_of(const query_shape *q, const candidate *c, const span *r, size_t n,
                    tl_rollup_fold *f)
{
    static const tl_run_op ops[] = {[N_COUNT_STAR] = TL_RUN_SUM_INT,
                                    [N_COUNT] = TL_RUN_SUM_INT,
                                    [N_SUM] = TL_RUN_SUM,
                                    [N_MIN] = TL_RUN_MIN,
                                    [N_MAX] = TL_RUN_MAX};
    *f = (tl_rollup_fold){.split = {q->width, r[0].lo, r[0].hi - 1}};
    bool ok = n == 1 && r[0].lo != INT64_MIN && r[0].hi != INT64_MAX;
    for (int pass = 0; ok && pass < 2; pass++) {
        const tl_strlist *keys = pass ? &q->where_keys : &q->group_keys;
        for (size_t i = 0; ok && i < keys->len; i++)
            ok = tl_rollup_fold_key(f, c->t, keys->items[i]);
    }
    for (size_t i = 0; ok && i < q->n_needs; i++) {
        need_fn fn = q->needs[i].fn;
        const merge *m = &c->merges[i];
        if (fn == N_AVG)
            ok = !m->avg_exact && m->stored[1] &&
                 tl_rollup_fold_value(f, c->t, m->stored[0], TL_RUN_SUM) &&
                 tl_rollup_fold_value(f, c->t, m->stored[1], TL_RUN_SUM_INT);
        else
            ok = fn <= N_MAX && tl_rollup_fold_value(f, c->t, m->stored[0], ops[fn]);
    }
    if (!ok) tl_rollup_fold_free(f);
    return ok;
}

/* Routes the analysed query through rollup c: the views and the text; m
 * records the clean ranges. */
static tl_status route_to(tl_query_engine *e, tl_sql_plan *plan, const json_t *plan_doc,
                          query_shape *q, json_t *doc, json_t *select, candidate *c,
                          struct route_memo *m, const view_reads *vr, char **routed, char **explain,
                          tl_error *err)
{
    span *ranges = m->ranges;
    size_t n = 0, nrf = 0, nwf = 0;
    bool ok = false;
    const tl_sql_ref *ref = &plan->refs[0];
    TL_TRY(clean_buckets(e, q, c->t, &c->def, ranges, &n, &ok, err));
    if (!ok) return TL_OK;
    m->n = n;
    tl_scan_filter *rf = NULL, *wf = NULL;
    tl_status st =
        split_filters(ref, c->t, ranges, n, &rf, &nrf, &wf, &nwf) ? TL_OK : tl_error_nomem(err);
    char *from =
        st == TL_OK ? union_sql(q, c->t, &c->def, c->merges, ranges, n, &m->rollup_sql) : NULL;
    if (st == TL_OK && from == NULL) st = tl_error_nomem(err);
    if (st == TL_OK)
        st = worth_it(e, ref, c->t, &c->def, m->rollup_sql, rf, nrf, wf, nwf, &ok, &m->cost, err);
    ok = st == TL_OK && ok && rewrite_tree(e, q, select, from, c->merges);
    free(from);
    char *text = ok ? tl_sql_tree_text(e, doc) : NULL;
    /* Registered for the check below; what they read counts once routed. */
    tl_sql_table_read own[2] = {{0}};
    size_t n_own = 0;
    view_reads ov = {own, &n_own, NULL, vr->reads != NULL || vr->stats->exact};
    if (st == TL_OK && text) m->folds = fold_of(q, c, ranges, n, &m->fold);
    if (st == TL_OK && text)
        st = register_views(e, q->raw, c->t, m->rollup_sql, m->folds ? &m->fold : NULL, rf, nrf, wf,
                            nwf, &ov, err);
    bool same = st == TL_OK && text && same_result(e, q->raw, plan_doc, text);
    publish(own, n_own, same ? vr : NULL);
    if (st == TL_OK && same) {
        if ((*explain = explain_text(q, c->t, &c->def, ranges, n)) == NULL)
            st = tl_error_nomem(err);
        if (st == TL_OK) {
            *routed = text;
            text = NULL;
        }
    }
    free(text);
    free(rf);
    free(wf);
    return st;
}

static void memo_clear(struct route_memo *m)
{
    free(m->key);
    free(m->rollups);
    free(m->rollup);
    free(m->routed);
    free(m->explain);
    free(m->rollup_sql);
    free(m->cost);
    tl_rollup_fold_free(&m->fold);
    memset(m, 0, sizeof *m);
}

/* The query's text, its raw table (uuid, version) and the session's
 * settings: what fixes its shape, filters and raw files. */
static char *memo_key(const tl_query_engine *e, const char *query, const tl_table *raw)
{
    tl_buf b = {0};
    const char *uuid = raw->md->table_uuid ? raw->md->table_uuid : "";
    int rc =
        tl_buf_printf(&b, "%s\x1f%s\x1f%s\x1f%" PRId64, query, raw->name.full, uuid, raw->version);
    for (size_t i = 0; e->settings && e->settings[i]; i += 2)
        rc |= tl_buf_printf(&b, "\x1f%s=%s", e->settings[i],
                            e->settings[i + 1] ? e->settings[i + 1] : "");
    rc |= tl_buf_append_byte(&b, 0);
    if (rc) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

static struct route_memo *memo_find(tl_query_engine *e, const char *key)
{
    for (size_t i = 0; e->route_memos && i < MEMOS; i++)
        if (e->route_memos[i].key && strcmp(e->route_memos[i].key, key) == 0)
            return &e->route_memos[i];
    return NULL;
}

/* Keeps m (taken) in the engine's next slot. */
static void memo_keep(tl_query_engine *e, struct route_memo *m)
{
    if (e->route_memos == NULL &&
        (e->route_memos = calloc(MEMOS, sizeof *e->route_memos)) == NULL) {
        memo_clear(m);
        return;
    }
    struct route_memo *slot = &e->route_memos[e->next_route_memo++ % MEMOS];
    memo_clear(slot);
    *slot = *m;
}

/* Each rollup raw lists as the lookup finds it now (name, uuid, version):
 * a refresh, a new rollup, a drop or another process's commit changes it. */
static char *rollups_seen(const tl_table *raw, const tl_strlist *names, tl_sql_lookup lookup,
                          void *ctx)
{
    tl_buf b = {0};
    int rc = tl_buf_append_str(&b, "");
    for (size_t i = 0; i < names->len; i++) {
        tl_qname qn;
        tl_table *t = NULL;
        if (tl_qname_parse(names->items[i], raw->name.namespace_, &qn, NULL) != TL_OK ||
            lookup(ctx, qn.namespace_, qn.table, NULL, &t, NULL) != TL_OK)
            t = NULL;
        if (t)
            rc |= tl_buf_printf(&b, "%s@%s@%" PRId64 ";", t->name.full,
                                t->md->table_uuid ? t->md->table_uuid : "", t->version);
        else
            rc |= tl_buf_printf(&b, "%s@-;", names->items[i]);
    }
    rc |= tl_buf_append_byte(&b, 0);
    if (rc) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

/* Routes the query as m found, over the same versions: the rollup's view,
 * raw's narrowed, the text kept. */
static tl_status replay(tl_query_engine *e, tl_sql_plan *plan, const struct route_memo *m,
                        tl_sql_lookup lookup, void *ctx, const view_reads *vr, char **routed,
                        char **explain, char **cost, tl_error *err)
{
    tl_qname qn;
    if (m->cost && (*cost = strdup(m->cost)) == NULL) return tl_error_nomem(err);
    tl_table *rollup = NULL;
    if (m->rollup == NULL || tl_qname_parse(m->rollup, "default", &qn, NULL) != TL_OK ||
        lookup(ctx, qn.namespace_, qn.table, NULL, &rollup, NULL) != TL_OK || rollup == NULL)
        return TL_OK;
    tl_scan_filter *rf = NULL, *wf = NULL;
    size_t nrf = 0, nwf = 0;
    tl_status st = split_filters(&plan->refs[0], rollup, m->ranges, m->n, &rf, &nrf, &wf, &nwf)
                       ? TL_OK
                       : tl_error_nomem(err);
    if (st == TL_OK)
        st = register_views(e, plan->refs[0].t, rollup, m->rollup_sql, m->folds ? &m->fold : NULL,
                            rf, nrf, wf, nwf, vr, err);
    if (st == TL_OK &&
        ((*routed = strdup(m->routed)) == NULL || (*explain = strdup(m->explain)) == NULL))
        st = tl_error_nomem(err);
    if (st != TL_OK) {
        free(*routed);
        *routed = NULL;
    }
    free(rf);
    free(wf);
    return st;
}

/* Reads the plan's statement `stmt` (the plan's own or a copy) into *q:
 * whether it has the shape routing reads. width: the bucket's, when a
 * reading of the same tree found it (its whole-tree checks then passed
 * too), else 0. */
static bool read_plan(tl_query_engine *e, const tl_sql_plan *plan, json_t *stmt, int64_t width,
                      query_shape *q)
{
    const tl_table *raw = plan->refs[0].t;
    json_t *select = json_object_get(stmt, "node");
    const json_t *from = json_object_get(select, "from_table");
    const char *alias = *tl_js_str(from, "alias") ? tl_js_str(from, "alias") : plan->refs[0].table;
    *q = (query_shape){
        .x = {e, tl_ice_metadata_current_schema(raw->md), select, alias, raw->contract.time_column},
        .raw = raw,
        .width = width,
        .lo = INT64_MIN,
        .hi = INT64_MAX};
    return strcasecmp(tl_js_str(from, "table_name"), plan->refs[0].table) == 0 &&
           strcmp(tl_js_str(from, "schema_name"), plan->refs[0].schema) == 0 &&
           !*tl_js_str(from, "catalog_name") && read_query(q);
}

/* Analyses the query, of the routing shape with this bucket width, and
 * routes it when a rollup fits; fills m. */
static tl_status analyse(tl_query_engine *e, tl_sql_plan *plan, int64_t width,
                         const tl_strlist *names, tl_sql_lookup lookup, void *ctx,
                         struct route_memo *m, const view_reads *vr, char **routed, char **explain,
                         char **cost, tl_error *err)
{
    /* A copy: routing rewrites it in place. */
    json_t *stmt = json_deep_copy(plan->stmt);
    json_t *doc = stmt ? json_pack("{s:b, s:[o]}", "error", 0, "statements", stmt) : NULL;
    if (doc == NULL) return tl_error_nomem(err);
    json_t *select = json_object_get(stmt, "node");
    query_shape q = {0};
    candidate best = {0};
    bool found = false;
    tl_status st = TL_OK;
    if (!expand_group_all(select)) st = tl_error_nomem(err);
    bool shape = st == TL_OK && read_plan(e, plan, stmt, width, &q);
    if (shape) st = pick(&q, names, lookup, ctx, &best, &found, err);
    if (!shape) {
        free(m->rollups); /* routes nowhere, whatever the rollups */
        m->rollups = NULL;
    }
    json_t *plan_doc =
        found ? json_pack("{s:b, s:[O]}", "error", 0, "statements", plan->stmt) : NULL;
    if (found && plan_doc == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && found)
        st = route_to(e, plan, plan_doc, &q, doc, select, &best, m, vr, routed, explain, err);
    if (st == TL_OK && m->cost && (*cost = strdup(m->cost)) == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && *routed &&
        ((m->rollup = strdup(best.t->name.full)) == NULL || (m->routed = strdup(*routed)) == NULL ||
         (m->explain = strdup(*explain)) == NULL))
        st = tl_error_nomem(err);
    json_decref(plan_doc);
    if (found) tl_rollup_def_free(&best.def);
    shape_free(&q);
    json_decref(doc);
    return st;
}

tl_status tl_sql_route(tl_query_engine *e, const char *query, tl_sql_plan *plan,
                       tl_sql_lookup lookup, void *ctx, tl_sql_table_read *reads, size_t *n_reads,
                       tl_scan_stats *stats, char **routed, char **explain, char **cost,
                       tl_error *err)
{
    *routed = *explain = *cost = NULL;
    view_reads vr = {reads, n_reads, stats, true};
    if (plan->n_refs != 1 || plan->refs[0].t == NULL || plan->query /* time travel */ ||
        !routing_on(e, plan->refs[0].t))
        return TL_OK;
    const tl_table *raw = plan->refs[0].t;
    struct route_memo m = {.key = memo_key(e, query, raw)};
    if (m.key == NULL) return tl_error_nomem(err);
    const struct route_memo *seen = memo_find(e, m.key);
    tl_strlist names = {0};
    tl_status st = TL_OK;
    if (seen && seen->rollups == NULL) goto done; /* its shape routes nowhere */
    int64_t width = 0;
    /* The shape first, read in place: no rollup loaded, nothing copied
     * (GROUP BY ALL is read from the copy, where it is made explicit). */
    if (seen == NULL && !groups_all(json_object_get(plan->stmt, "node"))) {
        query_shape q;
        bool shape = read_plan(e, plan, plan->stmt, 0, &q);
        width = q.width;
        shape_free(&q);
        if (!shape) {
            memo_keep(e, &m); /* takes it: routes nowhere, whatever the rollups */
            memset(&m, 0, sizeof m);
            goto done;
        }
    }
    if (tl_rollup_list(raw->md, &names, NULL) != TL_OK) goto done;
    if ((m.rollups = rollups_seen(raw, &names, lookup, ctx)) == NULL) {
        st = tl_error_nomem(err);
        goto done;
    }
    if (seen && strcmp(seen->rollups, m.rollups) == 0) {
        st = replay(e, plan, seen, lookup, ctx, &vr, routed, explain, cost, err);
        goto done;
    }
    st = analyse(e, plan, width, &names, lookup, ctx, &m, &vr, routed, explain, cost, err);
    if (st == TL_OK) {
        memo_keep(e, &m); /* takes it */
        memset(&m, 0, sizeof m);
    }
done:
    memo_clear(&m);
    tl_strlist_free(&names);
    if (st != TL_OK) {
        free(*routed);
        free(*explain);
        free(*cost);
        *routed = *explain = *cost = NULL;
    }
    return st;
}

/* ---- A rollup computed on the fly from raw pages (preagg_scan.h) ---- */

#define PREAGG_VIEW "@preagg"

static bool field_is(const tl_table *t, const char *name, tl_ice_type_id id)
{
    const tl_ice_field *f = tl_ice_schema_find(tl_ice_metadata_current_schema(t->md), name);
    return f && f->type.id == id;
}

/* The partial states the query needs (avg: a sum and a count), their
 * columns and names, and how each need merges them; false when a need or a
 * key is of a kind the scan does not aggregate. */
typedef struct preagg_states {
    tl_run_state states[64];
    char names[64][16];
    const char *name_ptrs[64];
    const char *values[64];
    size_t n_states, n_values;
    merge merges[32];
    const char *keys[64];
    size_t n_keys;
} preagg_states;

static size_t value_index(preagg_states *ps, const char *column)
{
    for (size_t i = 0; i < ps->n_values; i++)
        if (strcmp(ps->values[i], column) == 0) return i;
    ps->values[ps->n_values] = column;
    return ps->n_values++;
}

static bool add_state(preagg_states *ps, tl_run_op op, const char *column)
{
    if (ps->n_states >= 64) return false;
    size_t k = ps->n_states++;
    ps->states[k] = (tl_run_state){op, column ? value_index(ps, column) : 0};
    snprintf(ps->names[k], sizeof ps->names[k], "__tl_p%zu", k);
    ps->name_ptrs[k] = ps->names[k];
    return true;
}

static bool preagg_states_of(const query_shape *q, preagg_states *ps)
{
    for (size_t pass = 0; pass < 2; pass++) {
        const tl_strlist *keys = pass ? &q->where_keys : &q->group_keys;
        for (size_t i = 0; i < keys->len; i++) {
            if (pass && listed(&q->group_keys, keys->items[i])) continue;
            if (!field_is(q->raw, keys->items[i], TL_ICE_STRING) || ps->n_keys >= 64) return false;
            ps->keys[ps->n_keys++] = keys->items[i];
        }
    }
    for (size_t i = 0; i < q->n_needs; i++) {
        const need *nd = &q->needs[i];
        if (nd->fn != N_COUNT_STAR && !field_is(q->raw, nd->column, TL_ICE_DOUBLE)) return false;
        bool ok = true;
        size_t first = ps->n_states;
        switch (nd->fn) {
        case N_COUNT_STAR:
            ok = add_state(ps, TL_RUN_COUNT_STAR, NULL);
            break;
        case N_COUNT:
            ok = add_state(ps, TL_RUN_COUNT, nd->column);
            break;
        case N_SUM:
            ok = add_state(ps, TL_RUN_SUM, nd->column);
            break;
        case N_MIN:
            ok = add_state(ps, TL_RUN_MIN, nd->column);
            break;
        case N_MAX:
            ok = add_state(ps, TL_RUN_MAX, nd->column);
            break;
        case N_AVG:
            ok = add_state(ps, TL_RUN_SUM, nd->column) && add_state(ps, TL_RUN_COUNT, nd->column);
            break;
        default:
            return false;
        }
        if (!ok) return false;
        ps->merges[i] =
            (merge){{ps->names[first], nd->fn == N_AVG ? ps->names[first + 1] : NULL}, false};
    }
    return ps->n_values <= 62;
}

/* The view's body: its alias names the columns and their types, so that the
 * view (kept by name from one query to the next, and rowset ids restart at
 * each query) is replaced whenever they change. */
static char *preagg_view_sql(const preagg_states *ps, int64_t id, const char *pending)
{
    tl_buf b = {0};
    int rc = tl_buf_printf(&b, "SELECT * FROM " TL_ROWS_FUNCTION "(%lld) AS ", (long long)id);
    tl_buf alias = {0};
    for (size_t i = 0; i < ps->n_keys; i++) rc |= tl_buf_printf(&alias, "%s,", ps->keys[i]);
    for (size_t i = 0; i < ps->n_states; i++)
        rc |= tl_buf_append_str(&alias, ps->states[i].op == TL_RUN_COUNT_STAR ||
                                                ps->states[i].op == TL_RUN_COUNT
                                            ? ";l"
                                            : ";g");
    rc |= tl_buf_append_byte(&alias, 0);
    char *quoted = rc ? NULL : tl_sql_ident((const char *)alias.data);
    rc |= !quoted || tl_buf_append_str(&b, quoted);
    if (pending) rc |= tl_buf_printf(&b, " UNION ALL %s", pending); /* their rows as states */
    rc |= tl_buf_append_byte(&b, 0);
    free(quoted);
    tl_buf_free(&alias);
    if (rc) {
        tl_buf_free(&b);
        return NULL;
    }
    return (char *)tl_buf_detach(&b, NULL);
}

/* Registers the view of the partial states and rewrites the query over it;
 * *routed stays NULL when the scan declines or the result would differ in
 * names or types. */
static tl_status preagg_route(tl_query_engine *e, tl_sql_plan *plan, query_shape *q, json_t *doc,
                              json_t *select, preagg_states *ps, tl_scan_stats *stats,
                              char **routed, char **explain, tl_error *err)
{
    const tl_sql_ref *ref = &plan->refs[0];
    tl_preagg_request r = {q->raw,     ref->filters,  ref->n_filters, {q->width, q->lo, q->hi},
                           ps->keys,   ps->n_keys,    ps->values,     ps->n_values,
                           ps->states, ps->name_ptrs, ps->n_states};
    int64_t id = 0;
    char *pending = NULL;
    tl_scan_stats read = {.exact = stats->exact};
    TL_TRY(tl_preagg_scan(e, &r, &id, &pending, &read, err));
    if (id == 0) return TL_OK;
    char *body = preagg_view_sql(ps, id, pending);
    free(pending);
    char *view = view_name(q->raw, PREAGG_VIEW);
    char *from = view ? tl_strdup_printf("SELECT * FROM %s", view) : NULL;
    tl_status st = body && view && from ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) st = tl_query_register_as(e, q->raw, PREAGG_VIEW, body, err);
    json_t *plan_doc =
        st == TL_OK ? json_pack("{s:b, s:[O]}", "error", 0, "statements", plan->stmt) : NULL;
    bool ok = plan_doc && rewrite_tree(e, q, select, from, ps->merges);
    char *text = ok ? tl_sql_tree_text(e, doc) : NULL;
    if (st == TL_OK && text && same_result(e, q->raw, plan_doc, text)) {
        *explain = tl_strdup_printf("%s aggregated on the fly from its pages (runs of rows of "
                                    "one group and bucket of %" PRId64 " microseconds)",
                                    q->raw->name.full, q->width);
        if (*explain == NULL) st = tl_error_nomem(err);
        if (st == TL_OK) {
            *routed = text;
            text = NULL;
            tl_scan_stats_add(stats, &read);
        }
    }
    json_decref(plan_doc);
    free(text);
    free(body);
    free(view);
    free(from);
    return st;
}

tl_status tl_sql_preagg(tl_query_engine *e, tl_sql_plan *plan, tl_scan_stats *stats, char **routed,
                        char **explain, tl_error *err)
{
    *routed = *explain = NULL;
    if (plan->n_refs != 1 || plan->refs[0].t == NULL || plan->query || plan->refs[0].n_filters > 1)
        return TL_OK;
    const tl_table *raw = plan->refs[0].t;
    const tl_contract *c = &raw->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(raw->md);
    if (c->time_index < 0 || s->fields[c->time_index].type.id != TL_ICE_TIMESTAMPTZ ||
        tl_preagg_off())
        return TL_OK;
    query_shape q = {0};
    int64_t width = 0;
    if (!groups_all(json_object_get(plan->stmt, "node"))) { /* the shape first, read in place */
        bool shape = read_plan(e, plan, plan->stmt, 0, &q);
        width = q.width;
        shape_free(&q);
        if (!shape) return TL_OK;
    }
    json_t *stmt = json_deep_copy(plan->stmt);
    json_t *doc = stmt ? json_pack("{s:b, s:[o]}", "error", 0, "statements", stmt) : NULL;
    if (doc == NULL) return tl_error_nomem(err);
    json_t *select = json_object_get(stmt, "node");
    preagg_states *ps = calloc(1, sizeof *ps);
    tl_status st = ps && expand_group_all(select) ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && read_plan(e, plan, stmt, width, &q) && preagg_states_of(&q, ps))
        st = preagg_route(e, plan, &q, doc, select, ps, stats, routed, explain, err);
    free(ps);
    shape_free(&q);
    json_decref(doc);
    return st;
}

void tl_sql_route_cache_free(tl_query_engine *e)
{
    for (size_t i = 0; e->route_memos && i < MEMOS; i++) memo_clear(&e->route_memos[i]);
    free(e->route_memos);
    e->route_memos = NULL;
    for (size_t i = 0; i < sizeof e->routes_checked / sizeof e->routes_checked[0]; i++) {
        free(e->routes_checked[i]);
        e->routes_checked[i] = NULL;
    }
}
