/* Timelake's SQL on top of DuckDB's, by rewriting the syntax tree before a
 * query runs (see sql_rewrite.h). */
#include "query/sql_rewrite.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_catalog.h"
#include "query/sql_gapfill.h"
#include "query/sql_plan.h"
#include "query/sql_plan_json.h"

/* Whether a query's text names any function rewritten or checked here: most
 * queries do not, and skip the rest at the cost of this scan. */
static bool mentions(const char *query)
{
    static const char *const words[] = {"first_value", "last_value",        "time_weighted_",
                                        "m4",          "gapfill",           "locf",
                                        "interpolate", "information_schema"};
    for (const char *p = query; *p; p++) {
        if (!isalpha((unsigned char)*p) && *p != '_') continue;
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (strncasecmp(p, words[i], strlen(words[i])) == 0) return true;
    }
    return false;
}

static bool is_function(const json_t *e, const char *name)
{
    return tl_js_is_class(e, "FUNCTION") && strcasecmp(tl_js_str(e, "function_name"), name) == 0 &&
           !*tl_js_str(e, "schema") && !*tl_js_str(e, "catalog");
}

static bool is_null_literal(const json_t *e)
{
    return tl_js_is_class(e, "CONSTANT") &&
           strcmp(tl_js_str(json_object_get(json_object_get(e, "value"), "type"), "id"), "NULL") ==
               0;
}

static bool valid_method(const char *m)
{
    return strcasecmp(m, "forward_fill") == 0 || strcasecmp(m, "ffill") == 0 ||
           strcasecmp(m, "linear") == 0;
}

/* The reference's planning errors for the arguments of its functions: a
 * method that is no string literal or no method, a NULL for the value. */
static tl_status check_arguments(const json_t *e, tl_error *err)
{
    const json_t *ch = json_object_get(e, "children");
    size_t n = json_array_size(ch);
    const char *name = tl_js_str(e, "function_name");
    bool m4 = is_function(e, "m4");
    if (!m4 && !is_function(e, "time_weighted_mean") && !is_function(e, "time_weighted_state"))
        return TL_OK;
    if (n >= 2 && is_null_literal(json_array_get(ch, 1)))
        return tl_error_set(err, TL_ERR_QUERY, "%s needs a numeric value, not NULL", name);
    if (m4 || n < 2) return TL_OK;
    const json_t *method = json_array_get(ch, n - 1);
    bool literal =
        tl_js_is_class(method, "CONSTANT") &&
        strcmp(tl_js_str(json_object_get(json_object_get(method, "value"), "type"), "id"),
               "VARCHAR") == 0;
    if (n == 3 && !literal)
        return tl_error_set(err, TL_ERR_QUERY, "%s: the method must be a string literal", name);
    if (!literal) return TL_OK; /* (time, value) */
    const char *m = json_string_value(json_object_get(json_object_get(method, "value"), "value"));
    if (m == NULL || !valid_method(m))
        return tl_error_set(err, TL_ERR_QUERY,
                            "%s: method must be 'forward_fill' (or 'ffill') or 'linear', not "
                            "\"%s\"",
                            name, m ? m : "");
    return TL_OK;
}

/* first_value(x ORDER BY t) and last_value(...) without OVER: the
 * reference's aggregates, DuckDB's first and last. */
static const char *aggregate_rename(const json_t *e)
{
    if (is_function(e, "first_value")) return "first";
    if (is_function(e, "last_value")) return "last";
    return NULL;
}

/* Rows tied on the ORDER BY key order by the value too, so that the first
 * or last value is the same whichever order the rows come in: a rollup's
 * stored value, a routed query's and the raw query's. Nulls go to the far
 * end (last for first, first for last), so a tie never picks a null over a
 * value. */
static int break_ties(json_t *e, bool last)
{
    json_t *orders = json_object_get(json_object_get(e, "order_bys"), "orders");
    const json_t *ch = json_object_get(e, "children");
    if (json_array_size(orders) == 0 || json_array_size(ch) != 1) return 0;
    json_t *x = json_deep_copy(json_array_get(ch, 0));
    json_t *o = x ? json_pack("{s:s, s:s, s:o}", "type", "ASCENDING", "null_order",
                              last ? "NULLS FIRST" : "NULLS LAST", "expression", x)
                  : NULL;
    return o ? json_array_append_new(orders, o) : -1;
}

static bool contains_rename(const json_t *e)
{
    if (json_is_object(e) && aggregate_rename(e)) return true;
    const char *k;
    const json_t *v;
    size_t i;
    if (json_is_object(e))
        json_object_foreach((json_t *)e, k, v) if (contains_rename(v)) return true;
    if (json_is_array(e)) json_array_foreach(e, i, v) if (contains_rename(v)) return true;
    return false;
}

typedef struct rewriter {
    tl_query_engine *e;
    const tl_sql_scope *scope;
    bool changed;
} rewriter;

/* A reference to information_schema.<view> becomes the view's rows, as a
 * subquery under the reference's alias (or the view's name). */
static tl_status information_schema(rewriter *r, json_t *ref, tl_error *err)
{
    const char *catalog = tl_js_str(ref, "catalog_name");
    if (!tl_js_is_type(ref, "BASE_TABLE") ||
        strcasecmp(tl_js_str(ref, "schema_name"), "information_schema") != 0 ||
        (*catalog && strcasecmp(catalog, "timelake") != 0 && strcasecmp(catalog, "memory") != 0))
        return TL_OK;
    const char *name = tl_js_str(ref, "table_name"), *alias = tl_js_str(ref, "alias");
    char *view = NULL;
    TL_TRY(tl_sql_catalog_view(r->scope, name, &view, err));
    char *as = tl_sql_ident(*alias ? alias : name);
    char *sql = as ? tl_strdup_printf("SELECT * FROM (%s) AS %s", view, as) : NULL;
    free(view);
    free(as);
    json_t *tree = NULL;
    tl_status st = sql ? tl_sql_syntax_tree(r->e, sql, &tree, err) : tl_error_nomem(err);
    free(sql);
    const json_t *from = json_object_get(
        json_object_get(json_array_get(json_object_get(tree, "statements"), 0), "node"),
        "from_table");
    json_t *copy = st == TL_OK && from ? json_deep_copy(from) : NULL;
    json_decref(tree);
    if (st == TL_OK && from == NULL)
        st = tl_error_set(err, TL_ERR_QUERY, "cannot read information_schema.%s", name);
    else if (st == TL_OK &&
             (copy == NULL || json_object_clear(ref) != 0 || json_object_update(ref, copy) != 0))
        st = tl_error_nomem(err);
    json_decref(copy);
    r->changed = r->changed || st == TL_OK;
    return st;
}

/* Select-list items that will be renamed keep the name DuckDB would give
 * the text as written: first_value(v ORDER BY t), not "first"(...). */
static tl_status keep_names(rewriter *r, json_t *select, tl_error *err)
{
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(select, "select_list"), i, item)
    {
        if (*tl_js_str(item, "alias") || !contains_rename(item)) continue;
        json_t *one = json_pack("[O]", item);
        char *text = one ? tl_sql_select_text(r->e, one) : NULL;
        json_decref(one);
        if (text == NULL) return tl_error_nomem(err);
        const char *name = strncmp(text, "SELECT ", 7) == 0 ? text + 7 : text;
        int rc = json_object_set_new(item, "alias", json_string(name));
        free(text);
        if (rc != 0) return tl_error_nomem(err);
    }
    return TL_OK;
}

static tl_status rewrite(rewriter *r, json_t *node, tl_error *err)
{
    if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) TL_TRY(rewrite(r, v, err));
        return TL_OK;
    }
    if (!json_is_object(node)) return TL_OK;
    if (tl_js_is_type(node, "SELECT_NODE")) TL_TRY(keep_names(r, node, err));
    TL_TRY(information_schema(r, node, err));
    TL_TRY(check_arguments(node, err));
    const char *to = aggregate_rename(node);
    if (to) {
        if (json_object_set_new(node, "function_name", json_string(to)) != 0 ||
            break_ties(node, strcmp(to, "last") == 0) != 0)
            return tl_error_nomem(err);
        r->changed = true;
    }
    const char *k;
    json_t *v;
    json_object_foreach(node, k, v) TL_TRY(rewrite(r, v, err));
    return TL_OK;
}

tl_status tl_sql_rewrite(tl_query_engine *e, const tl_sql_scope *scope, const char *query,
                         char **out, tl_error *err)
{
    *out = NULL;
    if (!mentions(query)) return TL_OK;
    json_t *tree = NULL;
    /* A query DuckDB cannot parse: the plan tells. Out of memory, the
     * query would run without its rewriting (information_schema.<view> a
     * table "that does not exist"). */
    tl_error tree_err;
    tl_status st = tl_sql_syntax_tree(e, query, &tree, &tree_err);
    if (st == TL_ERR_NOMEM) return tl_error_nomem(err);
    if (st != TL_OK || json_is_true(json_object_get(tree, "error"))) {
        json_decref(tree);
        return TL_OK;
    }
    json_t *doc = json_deep_copy(tree);
    json_decref(tree);
    if (doc == NULL) return tl_error_nomem(err);
    rewriter r = {e, scope, false};
    bool gapfilled = false;
    st = tl_sql_gapfill(e, json_object_get(doc, "statements"), &gapfilled, err);
    if (st == TL_OK) st = rewrite(&r, json_object_get(doc, "statements"), err);
    if (st == TL_OK && (r.changed || gapfilled)) st = tl_sql_tree_sql(e, doc, out, err);
    json_decref(doc);
    return st;
}
