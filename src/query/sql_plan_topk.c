#include "query/sql_plan_topk.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_plan_json.h"
#include "query/sql_shape.h"
#include "table/settings.h"

/* Each grouping key in one grouping set, `key` among them. */
static bool groups_by(const tl_shape *x, const json_t *key)
{
    const json_t *groups = json_object_get(x->select, "group_expressions");
    const json_t *sets = json_object_get(x->select, "group_sets");
    size_t n = json_array_size(groups);
    if (json_array_size(sets) != 1 || json_array_size(json_array_get(sets, 0)) != n) return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *g = tl_shape_group_expr(x, json_array_get(groups, i));
        if (g && tl_js_same_expr(g, key)) return true;
    }
    return false;
}

/* The LIMIT and OFFSET: small non-negative integer constants. */
static bool read_limit(const json_t *m, int64_t *limit, int64_t *need)
{
    char *l = tl_js_literal_text(json_object_get(m, "limit"));
    const json_t *off = json_object_get(m, "offset");
    char *o = tl_shape_absent(m, "offset") ? strdup("0") : tl_js_literal_text(off);
    char *le = NULL, *oe = NULL;
    long long k = l ? strtoll(l, &le, 10) : -1, skip = o ? strtoll(o, &oe, 10) : -1;
    bool ok = l && o && !*le && !*oe && k > 0 && skip >= 0 && k + skip <= TL_TOPK_MAX_ROWS;
    /* A string '5' is a number to DuckDB as well; only integer literals are taken. */
    ok = ok && tl_js_is_int(json_object_get(m, "limit"), k) &&
         (tl_shape_absent(m, "offset") || tl_js_is_int(off, skip));
    free(l);
    free(o);
    *limit = k;
    *need = k + skip;
    return ok;
}

/* The first ORDER BY key and the row count wanted, from the modifiers:
 * exactly one ORDER BY, then one LIMIT. */
static const json_t *first_order(const json_t *select, int64_t *limit, int64_t *need)
{
    const json_t *mods = json_object_get(select, "modifiers");
    const json_t *order = json_array_get(mods, 0), *lm = json_array_get(mods, 1);
    if (json_array_size(mods) != 2 || !tl_js_is_type(order, "ORDER_MODIFIER") ||
        !tl_js_is_type(lm, "LIMIT_MODIFIER") || !read_limit(lm, limit, need))
        return NULL;
    return json_array_get(json_object_get(order, "orders"), 0);
}

bool tl_sql_topk_shape(tl_query_engine *e, const tl_sql_plan *plan, tl_sql_topk *out)
{
    memset(out, 0, sizeof *out);
    const json_t *select = json_object_get(plan->stmt, "node");
    if (plan->n_refs != 1 || plan->refs[0].n_filters != 1 || plan->refs[0].all_latest ||
        !tl_shape_plain_select(select))
        return false;
    const tl_sql_ref *r = &plan->refs[0];
    const json_t *from = json_object_get(select, "from_table");
    if (strcmp(tl_js_str(from, "schema_name"), r->schema) != 0 ||
        strcmp(tl_js_str(from, "table_name"), r->table) != 0 || *tl_js_str(from, "catalog_name"))
        return false;
    const tl_contract *c = &r->t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(r->t->md);
    if (c->time_index < 0) return false;
    if (!tl_setting_flag(r->t->md, e->settings, "newest-first", true)) return false;
    const tl_ice_field *tf = &s->fields[c->time_index];
    if (tf->type.id != TL_ICE_TIMESTAMP && tf->type.id != TL_ICE_TIMESTAMPTZ) return false;
    const char *alias = *tl_js_str(from, "alias") ? tl_js_str(from, "alias") : r->table;
    tl_shape x = {e, s, select, alias, tf->name};
    const json_t *o = first_order(select, &out->limit, &out->need);
    const json_t *key = o ? tl_shape_order_expr(&x, json_object_get(o, "expression")) : NULL;
    if (key == NULL || (!tl_shape_is_time(&x, key) && !tl_shape_is_bucket(&x, key))) return false;
    out->desc = tl_js_is_type(o, "DESCENDING");
    if (!out->desc && !tl_js_is_type(o, "ASCENDING") && !tl_js_is_type(o, "ORDER_DEFAULT"))
        return false;
    /* Null times sort last by default; first, they would rank before the window. */
    if (strstr(tl_js_str(o, "null_order"), "FIRST") && !tf->required) return false;
    /* Without GROUP BY, a query that aggregates (into one row, from rows on
     * both sides of the window's edge) cannot order by time: DuckDB's binder
     * rejects the column, in the window's run as in the usual one. */
    bool grouped = json_array_size(json_object_get(select, "group_expressions")) > 0;
    if (grouped ? !groups_by(&x, key) : !tl_shape_absent(select, "having")) return false;
    out->width_us = 1;
    return tl_shape_is_time(&x, key) ||
           tl_shape_bucket_geometry(&x, key, &out->width_us, &out->origin_us);
}
