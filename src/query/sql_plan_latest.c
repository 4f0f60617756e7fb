#include "query/sql_plan_latest.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_plan_json.h"

typedef struct shape_ctx {
    const tl_table *t;
    const tl_ice_schema *s;
    const char *alias;
    const char *time;
} shape_ctx;

static const char *key_name(const shape_ctx *x, size_t k)
{
    return x->s->fields[x->t->contract.series_index[k]].name;
}

/* The schema field a column reference of this table names, or NULL. */
static const tl_ice_field *field_of(const shape_ctx *x, const json_t *e)
{
    for (size_t i = 0; i < x->s->n_fields; i++)
        if (tl_js_names_column(e, x->alias, x->s->fields[i].name)) return &x->s->fields[i];
    return NULL;
}

static bool is_key_column(const shape_ctx *x, const json_t *e)
{
    for (size_t k = 0; k < x->t->contract.series_key.len; k++)
        if (tl_js_names_column(e, x->alias, key_name(x, k))) return true;
    return false;
}

/* Whether `exprs` (n of them, through `get`) name every series-key column
 * once and nothing else. */
static bool names_whole_key(const shape_ctx *x, const json_t *const *exprs, size_t n)
{
    size_t nk = x->t->contract.series_key.len;
    if (n != nk) return false;
    for (size_t k = 0; k < nk; k++) {
        size_t hits = 0;
        for (size_t j = 0; j < n; j++)
            hits += tl_js_names_column(exprs[j], x->alias, key_name(x, k));
        if (hits != 1) return false;
    }
    return true;
}

static bool is_null_or_absent(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v == NULL || json_is_null(v);
}

/* Each conjunct of `where` is `series key column = constant`. */
static bool key_equalities_only(const shape_ctx *x, const json_t *where)
{
    if (tl_js_is_type(where, "CONJUNCTION_AND")) {
        const json_t *ch;
        size_t i;
        json_array_foreach(json_object_get(where, "children"), i, ch)
        {
            if (!key_equalities_only(x, ch)) return false;
        }
        return true;
    }
    if (!tl_js_is_type(where, "COMPARE_EQUAL")) return false;
    const json_t *l = json_object_get(where, "left"), *r = json_object_get(where, "right");
    return (tl_js_is_class(r, "CONSTANT") && is_key_column(x, l)) ||
           (tl_js_is_class(l, "CONSTANT") && is_key_column(x, r));
}

static bool where_keys_only(const shape_ctx *x, const json_t *select)
{
    const json_t *where = json_object_get(select, "where_clause");
    return where == NULL || json_is_null(where) || key_equalities_only(x, where);
}

/* row_number() or rank() OVER (PARTITION BY key... ORDER BY time DESC): 1
 * exactly on the newest row of each series, times being unique per series. */
static bool is_newest_window(const shape_ctx *x, const json_t *w)
{
    if (!tl_js_is_class(w, "WINDOW")) return false;
    const char *type = tl_js_str(w, "type");
    if (strcmp(type, "WINDOW_ROW_NUMBER") && strcmp(type, "WINDOW_RANK") &&
        strcmp(type, "WINDOW_RANK_DENSE"))
        return false;
    if (json_array_size(json_object_get(w, "children")) ||
        json_array_size(json_object_get(w, "arg_orders")) || !is_null_or_absent(w, "filter_expr") ||
        json_is_true(json_object_get(w, "distinct")) ||
        json_is_true(json_object_get(w, "ignore_nulls")))
        return false;
    const json_t *parts = json_object_get(w, "partitions");
    size_t n = json_array_size(parts);
    if (n != x->t->contract.series_key.len) return false; /* (and p[] stays small) */
    const json_t *p[n + 1];
    for (size_t i = 0; i < n; i++) p[i] = json_array_get(parts, i);
    const json_t *orders = json_object_get(w, "orders");
    const json_t *o = json_array_get(orders, 0);
    return names_whole_key(x, p, n) && json_array_size(orders) == 1 &&
           tl_js_is_type(o, "DESCENDING") &&
           tl_js_names_column(json_object_get(o, "expression"), x->alias, x->time);
}

/* A select list of plain columns, constants and newest-row windows: nothing
 * that would see the older rows the index lacks. */
static bool plain_select_list(const shape_ctx *x, const json_t *select)
{
    const json_t *e;
    size_t i;
    json_array_foreach(json_object_get(select, "select_list"), i, e)
    {
        if (tl_js_is_class(e, "STAR")) {
            if (json_is_true(json_object_get(e, "columns")) || !is_null_or_absent(e, "expr") ||
                json_array_size(json_object_get(e, "replace_list")))
                return false;
        } else if (!tl_js_is_class(e, "COLUMN_REF") && !tl_js_is_class(e, "CONSTANT") &&
                   !is_newest_window(x, e)) {
            return false;
        }
    }
    return true;
}

static bool no_grouping(const json_t *select)
{
    return json_array_size(json_object_get(select, "group_expressions")) == 0 &&
           is_null_or_absent(select, "having");
}

/* ---- DISTINCT ON (key...) ... ORDER BY key..., time DESC ---- */

static bool distinct_on(const shape_ctx *x, const json_t *select)
{
    if (!is_null_or_absent(select, "where_clause") || !no_grouping(select) ||
        !is_null_or_absent(select, "qualify") || !plain_select_list(x, select))
        return false;
    const json_t *distinct = NULL, *orders = NULL, *m;
    size_t i;
    json_array_foreach(json_object_get(select, "modifiers"), i, m)
    {
        if (tl_js_is_type(m, "DISTINCT_MODIFIER") && distinct == NULL)
            distinct = json_object_get(m, "distinct_on_targets");
        else if (tl_js_is_type(m, "ORDER_MODIFIER") && orders == NULL)
            orders = json_object_get(m, "orders");
        else if (!tl_js_is_type(m, "LIMIT_MODIFIER"))
            return false; /* a LIMIT applies to the rows DISTINCT ON keeps */
    }
    size_t nk = x->t->contract.series_key.len;
    if (json_array_size(distinct) != nk || json_array_size(orders) < nk + 1) return false;
    const json_t *d[nk + 1], *o[nk + 1];
    for (size_t k = 0; k < nk; k++) {
        d[k] = json_array_get(distinct, k);
        o[k] = json_object_get(json_array_get(orders, k), "expression");
    }
    const json_t *last = json_array_get(orders, nk);
    return names_whole_key(x, d, nk) && names_whole_key(x, o, nk) &&
           tl_js_is_type(last, "DESCENDING") &&
           tl_js_names_column(json_object_get(last, "expression"), x->alias, x->time);
}

/* ---- WHERE key = c ORDER BY time DESC LIMIT 1 ---- */

static bool newest_of_one_series(const shape_ctx *x, const json_t *select)
{
    if (is_null_or_absent(select, "where_clause") || !where_keys_only(x, select) ||
        !no_grouping(select) || !is_null_or_absent(select, "qualify") ||
        !plain_select_list(x, select))
        return false;
    const json_t *orders = NULL, *limit = NULL, *m;
    size_t i;
    json_array_foreach(json_object_get(select, "modifiers"), i, m)
    {
        if (tl_js_is_type(m, "ORDER_MODIFIER") && orders == NULL)
            orders = json_object_get(m, "orders");
        else if (tl_js_is_type(m, "LIMIT_MODIFIER") && limit == NULL &&
                 is_null_or_absent(m, "offset"))
            limit = json_object_get(m, "limit");
        else
            return false; /* DISTINCT, a second ORDER BY, OFFSET, ... */
    }
    const json_t *o = json_array_get(orders, 0);
    return limit && tl_js_is_int(limit, 1) && orders && tl_js_is_type(o, "DESCENDING") &&
           tl_js_names_column(json_object_get(o, "expression"), x->alias, x->time);
}

/* ---- row_number() ... = 1, by QUALIFY or by the enclosing WHERE ---- */

/* Whether exactly one select-list item is named `name`: with two, DuckDB
 * renames one (name_1), and which one a reference means is not the window's
 * to decide. */
static bool named_once(const json_t *select, const char *name)
{
    const json_t *e;
    size_t i, n = 0;
    json_array_foreach(json_object_get(select, "select_list"), i, e)
    {
        const char *a = tl_js_str(e, "alias");
        const json_t *cn = json_object_get(e, "column_names");
        if (!*a && tl_js_is_class(e, "COLUMN_REF"))
            a = json_string_value(json_array_get(cn, json_array_size(cn) - 1));
        n += a && strcasecmp(a, name) == 0;
    }
    return n == 1;
}

/* The alias of a newest-row window of the select list named by `e`. */
static bool names_window_alias(const shape_ctx *x, const json_t *select, const json_t *e)
{
    const json_t *item;
    size_t i;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        const char *a = tl_js_str(item, "alias");
        if (*a && is_newest_window(x, item) && tl_js_names_column(e, NULL, a))
            return named_once(select, a);
    }
    return false;
}

/* QUALIFY made only of `<newest window> = 1` conjuncts. */
static bool qualify_first(const shape_ctx *x, const json_t *select, const json_t *q)
{
    if (tl_js_is_type(q, "CONJUNCTION_AND")) {
        const json_t *ch;
        size_t i;
        json_array_foreach(json_object_get(q, "children"), i, ch)
        {
            if (!qualify_first(x, select, ch)) return false;
        }
        return true;
    }
    if (!tl_js_is_type(q, "COMPARE_EQUAL")) return false;
    for (int side = 0; side < 2; side++) {
        const json_t *w = json_object_get(q, side ? "right" : "left");
        const json_t *one = json_object_get(q, side ? "left" : "right");
        if (tl_js_is_int(one, 1) && (is_newest_window(x, w) || names_window_alias(x, select, w)))
            return true;
    }
    return false;
}

/* Whether the name is also a column of the table (then a reference to it
 * would not be the window's). */
static bool is_table_column(const shape_ctx *x, const char *name)
{
    for (size_t i = 0; i < x->s->n_fields; i++)
        if (strcasecmp(x->s->fields[i].name, name) == 0) return true;
    return false;
}

static bool numbered_first(const shape_ctx *x, const json_t *select, const char *first_only)
{
    if (!where_keys_only(x, select) || !no_grouping(select) || !plain_select_list(x, select))
        return false;
    const json_t *q = json_object_get(select, "qualify");
    if (q && !json_is_null(q)) return qualify_first(x, select, q);
    /* Kept where = 1 outside: no modifier may act before that filter. */
    if (first_only == NULL || is_table_column(x, first_only) ||
        json_array_size(json_object_get(select, "modifiers")))
        return false;
    json_t *ref = json_pack("{s:s, s:[s]}", "class", "COLUMN_REF", "column_names", first_only);
    bool ok = ref && names_window_alias(x, select, ref);
    json_decref(ref);
    return ok;
}

/* ---- SELECT key..., max(time), arg_max(col, time) ... GROUP BY key... ---- */

/* A group expression, resolving GROUP BY n to the n-th select-list item. */
static const json_t *group_expr(const json_t *select, const json_t *g)
{
    const json_t *list = json_object_get(select, "select_list");
    for (size_t n = 1; n <= json_array_size(list); n++)
        if (tl_js_is_int(g, (long long)n)) return json_array_get(list, n - 1);
    return g;
}

static bool plain_aggregate(const json_t *f, size_t n_args)
{
    const json_t *orders = json_object_get(json_object_get(f, "order_bys"), "orders");
    return json_array_size(json_object_get(f, "children")) == n_args &&
           is_null_or_absent(f, "filter") && !json_is_true(json_object_get(f, "distinct")) &&
           !json_is_true(json_object_get(f, "export_state")) && json_array_size(orders) == 0 &&
           !*tl_js_str(f, "schema") && !*tl_js_str(f, "catalog");
}

/* max(time), or arg_max(col, time) and its aliases, whose value is the
 * newest row's (for arg_max, when that row's col is not null). */
static bool newest_aggregate(const shape_ctx *x, const json_t *e, tl_strlist *nonnull)
{
    if (!tl_js_is_class(e, "FUNCTION")) return false;
    const char *name = tl_js_str(e, "function_name");
    const json_t *ch = json_object_get(e, "children");
    if (strcasecmp(name, "max") == 0)
        return plain_aggregate(e, 1) &&
               tl_js_names_column(json_array_get(ch, 0), x->alias, x->time);
    bool skips_nulls = strcasecmp(name, "arg_max") == 0 || strcasecmp(name, "max_by") == 0 ||
                       strcasecmp(name, "argmax") == 0;
    if (!skips_nulls && strcasecmp(name, "arg_max_null") != 0) return false;
    const tl_ice_field *f = field_of(x, json_array_get(ch, 0));
    if (!plain_aggregate(e, 2) || f == NULL ||
        !tl_js_names_column(json_array_get(ch, 1), x->alias, x->time))
        return false;
    return !skips_nulls || f->required || tl_strlist_contains(nonnull, f->name) ||
           tl_strlist_push(nonnull, f->name) == 0;
}

static bool grouped_newest(const shape_ctx *x, const json_t *select, tl_strlist *nonnull)
{
    const json_t *groups = json_object_get(select, "group_expressions");
    const json_t *sets = json_object_get(select, "group_sets");
    size_t n = json_array_size(groups);
    if (n == 0 || !where_keys_only(x, select) || !is_null_or_absent(select, "having") ||
        !is_null_or_absent(select, "qualify") || json_array_size(sets) != 1 ||
        json_array_size(json_array_get(sets, 0)) != n ||
        n != x->t->contract.series_key.len) /* (and g[] stays small) */
        return false;
    const json_t *g[n + 1];
    for (size_t i = 0; i < n; i++) g[i] = group_expr(select, json_array_get(groups, i));
    if (!names_whole_key(x, g, n)) return false;
    const json_t *e;
    size_t i;
    json_array_foreach(json_object_get(select, "select_list"), i, e)
    {
        if (!is_key_column(x, e) && !tl_js_is_class(e, "CONSTANT") &&
            !newest_aggregate(x, e, nonnull))
            return false;
    }
    return true;
}

/* Whether a window function appears anywhere in `node`. */
static bool has_window(const json_t *node)
{
    if (json_is_array(node)) {
        const json_t *v;
        size_t i;
        json_array_foreach(node, i, v)
        {
            if (has_window(v)) return true;
        }
        return false;
    }
    if (!json_is_object(node)) return false;
    if (tl_js_is_class(node, "WINDOW")) return true;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)node, k, v)
    {
        if (has_window(v)) return true;
    }
    return false;
}

bool tl_sql_latest_shape(const tl_table *t, const char *alias, const json_t *select,
                         const char *first_only, tl_strlist *nonnull)
{
    const tl_contract *c = &t->contract;
    if (c->time_index < 0 || c->series_key.len == 0 || !c->dedup) return false;
    /* A window in ORDER BY runs before QUALIFY, over the older rows too. */
    if (has_window(json_object_get(select, "modifiers"))) return false;
    /* A sample is drawn from every row, not from the newest ones. */
    if (!is_null_or_absent(select, "sample") ||
        !is_null_or_absent(json_object_get(select, "from_table"), "sample"))
        return false;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    shape_ctx x = {t, s, alias, s->fields[c->time_index].name};
    if (distinct_on(&x, select) || newest_of_one_series(&x, select) ||
        numbered_first(&x, select, first_only))
        return true;
    tl_strlist need = {0};
    bool ok = grouped_newest(&x, select, &need);
    for (size_t i = 0; ok && i < need.len; i++)
        ok = tl_strlist_contains(nonnull, need.items[i]) ||
             tl_strlist_push(nonnull, need.items[i]) == 0;
    tl_strlist_free(&need);
    return ok;
}

/* `where` keeps only rows where `col` (of `rel`) is 1: it is that equality,
 * or a conjunction holding it. */
static bool keeps_first(const json_t *where, const char *rel, const char *col)
{
    if (tl_js_is_type(where, "CONJUNCTION_AND")) {
        const json_t *ch;
        size_t i;
        json_array_foreach(json_object_get(where, "children"), i, ch)
        {
            if (keeps_first(ch, rel, col)) return true;
        }
        return false;
    }
    if (!tl_js_is_type(where, "COMPARE_EQUAL")) return false;
    const json_t *l = json_object_get(where, "left"), *r = json_object_get(where, "right");
    return (tl_js_is_int(r, 1) && tl_js_names_column(l, rel, col)) ||
           (tl_js_is_int(l, 1) && tl_js_names_column(r, rel, col));
}

const char *tl_sql_first_only(const json_t *select, const json_t *where, const char *rel)
{
    if (!tl_js_is_type(select, "SELECT_NODE") || where == NULL || json_is_null(where)) return NULL;
    const json_t *item;
    size_t i;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        const char *a = tl_js_str(item, "alias");
        if (*a && tl_js_is_class(item, "WINDOW") && keeps_first(where, rel, a))
            return named_once(select, a) ? a : NULL;
    }
    return NULL;
}
