#include "query/sql_plan.h"

#include <jansson.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

typedef struct walker {
    tl_query_engine *e;
    tl_sql_lookup lookup;
    void *ctx;
    tl_sql_plan *plan;
    json_t *ctes; /* names of CTEs seen (object used as a set) */
    /* The filter and latest-only flag of each from_table that is a lake
     * table, found at its SELECT node before the walk reaches the table. */
    struct pending {
        const json_t *from;
        tl_scan_filter filter;
        bool latest;
    } * pending;
    size_t n_pending;
} walker;

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static bool is_type(const json_t *o, const char *type)
{
    return strcmp(str(o, "type"), type) == 0;
}

/* ---- Constant expressions, evaluated by DuckDB ---- */

static bool is_constant_expr(const json_t *e)
{
    const char *cls = str(e, "class");
    if (strcmp(cls, "CONSTANT") == 0) return true;
    if (strcmp(cls, "CAST") == 0) return is_constant_expr(json_object_get(e, "child"));
    if (strcmp(cls, "FUNCTION") != 0) return false;
    static const char *const unsafe[] = {"random",  "uuid", "gen_random_uuid", "nextval", "setseed",
                                         "currval", NULL};
    const char *name = str(e, "function_name");
    for (size_t i = 0; unsafe[i]; i++)
        if (strcmp(name, unsafe[i]) == 0) return false;
    if (json_object_get(e, "filter") && !json_is_null(json_object_get(e, "filter"))) return false;
    const json_t *children = json_object_get(e, "children");
    size_t i;
    const json_t *c;
    json_array_foreach(children, i, c) if (!is_constant_expr(c)) return false;
    return true;
}

/* Functions whose value grows while a query runs (now() and friends): safe
 * as lower bounds only. */
static bool uses_clock(const json_t *e)
{
    if (json_is_object(e)) {
        const char *name = str(e, "function_name");
        if (strstr(name, "now") || strstr(name, "current_") || strstr(name, "transaction_"))
            return true;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)e, k, v) if (uses_clock(v)) return true;
    } else if (json_is_array(e)) {
        size_t i;
        json_t *v;
        json_array_foreach(e, i, v) if (uses_clock(v)) return true;
    }
    return false;
}

/* The text of a plain string or integer literal (NULL for anything else):
 * what CAST(literal AS VARCHAR) gives, without asking DuckDB. */
static char *literal_text(const json_t *e)
{
    if (strcmp(str(e, "class"), "CONSTANT") != 0) return NULL;
    const json_t *v = json_object_get(e, "value");
    if (json_is_true(json_object_get(v, "is_null"))) return NULL;
    const char *type = str(json_object_get(v, "type"), "id");
    const json_t *value = json_object_get(v, "value");
    if (strcmp(type, "VARCHAR") == 0 && json_is_string(value))
        return strdup(json_string_value(value));
    static const char *const ints[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", NULL};
    for (size_t i = 0; ints[i]; i++)
        if (strcmp(type, ints[i]) == 0 && json_is_integer(value))
            return tl_strdup_printf("%lld", (long long)json_integer_value(value));
    return NULL;
}

/* The SQL of a literal or a cast of a string literal to a time type
 * (TIMESTAMPTZ '...'), NULL for anything else. */
static char *simple_constant_sql(const json_t *e)
{
    const char *cast = NULL;
    if (strcmp(str(e, "class"), "CAST") == 0 && !json_is_true(json_object_get(e, "try_cast"))) {
        static const char *const times[] = {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "DATE", NULL};
        const char *id = str(json_object_get(e, "cast_type"), "id");
        for (size_t i = 0; times[i]; i++)
            if (strcmp(id, times[i]) == 0) cast = times[i];
        if (cast == NULL) return NULL;
        e = json_object_get(e, "child");
        if (strcmp(str(json_object_get(json_object_get(e, "value"), "type"), "id"), "VARCHAR"))
            return NULL;
    }
    char *text = literal_text(e);
    char *lit = text ? tl_sql_literal(text) : NULL;
    free(text);
    if (lit == NULL || cast == NULL) return lit;
    char *sql = tl_strdup_printf("CAST(%s AS %s)", lit, cast);
    free(lit);
    return sql;
}

/* Evaluates a constant expression with DuckDB: `wrap` is a printf format
 * receiving the expression's SQL. Plain literals, the common case, skip the
 * round trip through json_deserialize_sql. */
static bool eval_constant(walker *w, const json_t *expr, const char *wrap, char **out)
{
    *out = NULL;
    char *simple = simple_constant_sql(expr);
    if (simple) {
        char *sql = tl_strdup_printf(wrap, simple);
        free(simple);
        bool ok = sql && tl_query_scalar_text(w->e, sql, NULL, out, NULL) == TL_OK && *out;
        free(sql);
        return ok;
    }
    json_t *doc = json_pack(
        "{s:b, s:[{s:{s:s, s:[], s:{s:[]}, s:[O], s:{s:s, s:s, s:n, s:I}, s:n, s:[], s:[], "
        "s:s, s:n, s:n, s:n}, s:[]}]}",
        "error", 0, "statements", "node", "type", "SELECT_NODE", "modifiers", "cte_map", "map",
        "select_list", expr, "from_table", "type", "EMPTY", "alias", "", "sample", "query_location",
        (json_int_t)0, "where_clause", "group_expressions", "group_sets", "aggregate_handling",
        "STANDARD_HANDLING", "having", "sample", "qualify", "named_param_map");
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    char *select = NULL;
    bool ok = text &&
              tl_query_scalar_text(w->e, "SELECT json_deserialize_sql(?::VARCHAR::JSON)", text,
                                   &select, NULL) == TL_OK &&
              select;
    free(text);
    char *sql = ok ? tl_strdup_printf(wrap, select) : NULL;
    free(select);
    ok = sql && tl_query_scalar_text(w->e, sql, NULL, out, NULL) == TL_OK && *out;
    free(sql);
    return ok;
}

/* ---- WHERE clauses ---- */

static bool names_column(const json_t *e, const char *alias, const char *column)
{
    if (strcmp(str(e, "class"), "COLUMN_REF") != 0) return false;
    const json_t *names = json_object_get(e, "column_names");
    size_t n = json_array_size(names);
    const char *a = json_string_value(json_array_get(names, 0));
    const char *b = json_string_value(json_array_get(names, 1));
    if (n == 1) return a && strcasecmp(a, column) == 0;
    return n == 2 && a && b && strcasecmp(a, alias) == 0 && strcasecmp(b, column) == 0;
}

static void bound_time(walker *w, tl_scan_filter *f, const json_t *expr, int dir)
{
    /* dir: 1 lower bound, -1 upper bound, 0 both */
    if (!is_constant_expr(expr) || (dir <= 0 && uses_clock(expr))) return;
    char *v = NULL;
    if (!eval_constant(w, expr, "SELECT epoch_us(CAST((%s) AS TIMESTAMPTZ))", &v)) {
        free(v);
        return;
    }
    int64_t us = strtoll(v, NULL, 10);
    free(v);
    if (dir >= 0 && (!f->has_lo || us > f->lo)) f->has_lo = true, f->lo = us;
    if (dir <= 0 && (!f->has_hi || us < f->hi)) f->has_hi = true, f->hi = us;
}

static void restrict_keys(walker *w, tl_scan_filter *f, const json_t *values, size_t from)
{
    size_t n = json_array_size(values);
    char **keys = calloc(n + 1, sizeof *keys);
    size_t k = 0;
    for (size_t i = from; keys && i < n; i++) {
        const json_t *v = json_array_get(values, i);
        keys[k] = literal_text(v);
        if (keys[k] == NULL && (!is_constant_expr(v) || uses_clock(v) ||
                                !eval_constant(w, v, "SELECT CAST((%s) AS VARCHAR)", &keys[k]))) {
            for (size_t j = 0; j <= k; j++) free(keys[j]);
            free(keys);
            return;
        }
        k++;
    }
    if (keys == NULL) return;
    if (f->has_keys) { /* two restrictions ANDed: keep the first, still sound */
        for (size_t j = 0; j < k; j++) free(keys[j]);
        free(keys);
        return;
    }
    f->has_keys = true;
    f->keys = keys;
    f->n_keys = k;
}

static int flip(int dir, bool column_on_right)
{
    return column_on_right ? -dir : dir;
}

static void read_conjunct(walker *w, const tl_table *t, const char *alias, const json_t *e,
                          tl_scan_filter *f)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const char *time = c->time_index >= 0 ? s->fields[c->time_index].name : NULL;
    const char *key = c->series_key.len ? s->fields[c->series_index[0]].name : NULL;
    const char *type = str(e, "type");
    if (strcmp(type, "CONJUNCTION_AND") == 0) {
        size_t i;
        const json_t *ch;
        json_array_foreach(json_object_get(e, "children"), i, ch) read_conjunct(w, t, alias, ch, f);
        return;
    }
    if (strcmp(type, "COMPARE_BETWEEN") == 0 && time &&
        names_column(json_object_get(e, "input"), alias, time)) {
        bound_time(w, f, json_object_get(e, "lower"), 1);
        bound_time(w, f, json_object_get(e, "upper"), -1);
        return;
    }
    if (strcmp(type, "COMPARE_IN") == 0 && key) {
        const json_t *ch = json_object_get(e, "children");
        if (names_column(json_array_get(ch, 0), alias, key)) restrict_keys(w, f, ch, 1);
        return;
    }
    if (strcmp(str(e, "class"), "COMPARISON") != 0) return;
    const json_t *l = json_object_get(e, "left"), *r = json_object_get(e, "right");
    int dir;
    if (strcmp(type, "COMPARE_EQUAL") == 0)
        dir = 0;
    else if (strcmp(type, "COMPARE_GREATERTHAN") == 0 ||
             strcmp(type, "COMPARE_GREATERTHANOREQUALTO") == 0)
        dir = 1;
    else if (strcmp(type, "COMPARE_LESSTHAN") == 0 ||
             strcmp(type, "COMPARE_LESSTHANOREQUALTO") == 0)
        dir = -1;
    else
        return;
    for (int side = 0; side < 2; side++) {
        const json_t *col = side ? r : l, *val = side ? l : r;
        if (time && names_column(col, alias, time)) bound_time(w, f, val, flip(dir, side));
        if (key && dir == 0 && names_column(col, alias, key)) {
            json_t *one = json_pack("[O]", val);
            if (one) restrict_keys(w, f, one, 0);
            json_decref(one);
        }
    }
}

/* DISTINCT ON (series key...) ... ORDER BY series key..., time DESC over the
 * bare table: only the newest row of each series can appear in the result. */
static bool latest_only(const tl_table *t, const char *alias, const json_t *select)
{
    const tl_contract *c = &t->contract;
    if (c->time_index < 0 || c->series_key.len == 0) return false;
    if (!json_is_null(json_object_get(select, "where_clause")) ||
        json_array_size(json_object_get(select, "group_expressions")) ||
        !json_is_null(json_object_get(select, "qualify")) ||
        !json_is_null(json_object_get(select, "having")))
        return false;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const json_t *distinct = NULL, *orders = NULL, *m;
    size_t i;
    json_array_foreach(json_object_get(select, "modifiers"), i, m)
    {
        if (is_type(m, "DISTINCT_MODIFIER")) distinct = json_object_get(m, "distinct_on_targets");
        if (is_type(m, "ORDER_MODIFIER") && orders == NULL) orders = json_object_get(m, "orders");
    }
    size_t nk = c->series_key.len;
    if (distinct == NULL || json_array_size(distinct) != nk || json_array_size(orders) < nk + 1)
        return false;
    /* The DISTINCT ON targets and the first nk orders are the series key. */
    for (size_t k = 0; k < nk; k++) {
        const char *name = s->fields[c->series_index[k]].name;
        bool in_distinct = false, in_orders = false;
        for (size_t j = 0; j < nk; j++) {
            in_distinct |= names_column(json_array_get(distinct, j), alias, name);
            in_orders |=
                names_column(json_object_get(json_array_get(orders, j), "expression"), alias, name);
        }
        if (!in_distinct || !in_orders) return false;
    }
    const json_t *o = json_array_get(orders, nk);
    return is_type(o, "DESCENDING") &&
           names_column(json_object_get(o, "expression"), alias, s->fields[c->time_index].name);
}

/* Each conjunct of `where` is `series key column = constant`. */
static bool key_equalities_only(const tl_table *t, const char *alias, const json_t *where)
{
    if (is_type(where, "CONJUNCTION_AND")) {
        const json_t *ch;
        size_t i;
        json_array_foreach(json_object_get(where, "children"), i,
                           ch) if (!key_equalities_only(t, alias, ch)) return false;
        return true;
    }
    if (!is_type(where, "COMPARE_EQUAL")) return false;
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const json_t *l = json_object_get(where, "left"), *r = json_object_get(where, "right");
    for (int side = 0; side < 2; side++) {
        const json_t *col = side ? r : l, *val = side ? l : r;
        if (strcmp(str(val, "class"), "CONSTANT") != 0) continue;
        for (size_t k = 0; k < c->series_key.len; k++)
            if (names_column(col, alias, s->fields[c->series_index[k]].name)) return true;
    }
    return false;
}

/* WHERE series key = ... ORDER BY time DESC LIMIT 1 over the bare table: the
 * newest row of one series, which is that series' row of the index. */
static bool newest_of_one_series(const tl_table *t, const char *alias, const json_t *select)
{
    const tl_contract *c = &t->contract;
    if (c->time_index < 0 || c->series_key.len == 0) return false;
    const json_t *where = json_object_get(select, "where_clause");
    if (where == NULL || json_is_null(where) || !key_equalities_only(t, alias, where) ||
        json_array_size(json_object_get(select, "group_expressions")) ||
        !json_is_null(json_object_get(select, "qualify")) ||
        !json_is_null(json_object_get(select, "having")))
        return false;
    const json_t *orders = NULL, *limit = NULL, *m;
    size_t i;
    json_array_foreach(json_object_get(select, "modifiers"), i, m)
    {
        if (is_type(m, "ORDER_MODIFIER") && orders == NULL)
            orders = json_object_get(m, "orders");
        else if (is_type(m, "LIMIT_MODIFIER") && limit == NULL &&
                 json_is_null(json_object_get(m, "offset")))
            limit = json_object_get(m, "limit");
        else
            return false; /* DISTINCT, a second ORDER BY, OFFSET, ... */
    }
    char *n = limit ? literal_text(limit) : NULL;
    bool one = n && strcmp(n, "1") == 0;
    free(n);
    const json_t *o = json_array_get(orders, 0);
    const char *time = tl_ice_metadata_current_schema(t->md)->fields[c->time_index].name;
    return one && is_type(o, "DESCENDING") &&
           names_column(json_object_get(o, "expression"), alias, time);
}

/* ---- The walk ---- */

static tl_status add_ref(walker *w, const json_t *bt, tl_error *err)
{
    const char *schema = str(bt, "schema_name"), *table = str(bt, "table_name");
    if (*str(bt, "catalog_name")) return TL_OK; /* DuckDB's own catalogs */
    if (!*schema && json_object_get(w->ctes, table)) return TL_OK;
    tl_sql_plan *p = w->plan;
    size_t i = 0;
    for (; i < p->n_refs; i++)
        if (strcmp(p->refs[i].schema, schema) == 0 && strcmp(p->refs[i].table, table) == 0) break;
    if (i == p->n_refs) {
        tl_table *t = NULL;
        TL_TRY(w->lookup(w->ctx, schema, table, &t, err));
        if (t == NULL) return TL_OK;
        tl_sql_ref *refs = realloc(p->refs, (p->n_refs + 1) * sizeof *refs);
        if (refs == NULL) return tl_error_nomem(err);
        p->refs = refs;
        p->refs[i] = (tl_sql_ref){strdup(schema), strdup(table), t, NULL, 0, true};
        p->n_refs++;
        if (!p->refs[i].schema || !p->refs[i].table) return tl_error_nomem(err);
    }
    tl_sql_ref *r = &p->refs[i];
    tl_scan_filter f = {0};
    bool latest = false;
    for (size_t j = 0; j < w->n_pending; j++) {
        if (w->pending[j].from != bt) continue;
        f = w->pending[j].filter;
        latest = w->pending[j].latest;
        memset(&w->pending[j], 0, sizeof w->pending[j]);
    }
    tl_scan_filter *fs = realloc(r->filters, (r->n_filters + 1) * sizeof *fs);
    if (fs == NULL) {
        tl_scan_filter_clear(&f);
        return tl_error_nomem(err);
    }
    r->filters = fs;
    r->filters[r->n_filters++] = f;
    r->all_latest &= latest;
    return TL_OK;
}

static tl_status walk(walker *w, json_t *node, tl_error *err);

static tl_status prepare_select(walker *w, json_t *node, tl_error *err)
{
    json_t *from = json_object_get(node, "from_table");
    if (!is_type(from, "BASE_TABLE") || *str(from, "catalog_name")) return TL_OK;
    const char *schema = str(from, "schema_name"), *table = str(from, "table_name");
    if (!*schema && json_object_get(w->ctes, table)) return TL_OK;
    tl_table *t = NULL;
    TL_TRY(w->lookup(w->ctx, schema, table, &t, err));
    if (t == NULL) return TL_OK;
    const char *alias = *str(from, "alias") ? str(from, "alias") : table;
    struct pending *p = realloc(w->pending, (w->n_pending + 1) * sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    w->pending = p;
    p = &p[w->n_pending++];
    memset(p, 0, sizeof *p);
    const json_t *where = json_object_get(node, "where_clause");
    if (where && !json_is_null(where)) read_conjunct(w, t, alias, where, &p->filter);
    p->latest = latest_only(t, alias, node) || newest_of_one_series(t, alias, node);
    p->from = from;
    return TL_OK;
}

static tl_status walk(walker *w, json_t *node, tl_error *err)
{
    if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) TL_TRY(walk(w, v, err));
        return TL_OK;
    }
    if (!json_is_object(node)) return TL_OK;
    json_t *ctes = json_object_get(json_object_get(node, "cte_map"), "map");
    size_t i;
    json_t *v;
    json_array_foreach(ctes, i, v) json_object_set(w->ctes, str(v, "key"), json_true());
    if (is_type(node, "SELECT_NODE")) TL_TRY(prepare_select(w, node, err));
    if (is_type(node, "BASE_TABLE")) return add_ref(w, node, err);
    const char *k;
    json_object_foreach(node, k, v) TL_TRY(walk(w, v, err));
    return TL_OK;
}

tl_status tl_sql_plan_build(tl_query_engine *e, const char *query, tl_sql_lookup lookup, void *ctx,
                            tl_sql_plan *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    TL_TRY(tl_query_scalar_text(e, "SELECT json_serialize_sql(?::VARCHAR)", query, &text, err));
    /* An unknown query location is UINT64_MAX, beyond what jansson reads. */
    static const char unknown[] = "\"query_location\":18446744073709551615";
    for (char *p = text; p && (p = strstr(p, unknown)) != NULL;)
        memcpy(p, "\"query_location\":0                   ", sizeof unknown - 1);
    json_error_t je;
    json_t *doc = text ? json_loads(text, 0, &je) : NULL;
    free(text);
    if (doc == NULL) return tl_error_set(err, TL_ERR_QUERY, "cannot read the query's syntax tree");
    tl_status st = TL_OK;
    json_t *stmts = json_object_get(doc, "statements");
    if (json_is_true(json_object_get(doc, "error")))
        st = tl_error_set(err, TL_ERR_QUERY, "%s", str(doc, "error_message"));
    else if (json_array_size(stmts) != 1)
        st = tl_error_set(err, TL_ERR_QUERY, "expected one SELECT statement, got %zu statements",
                          json_array_size(stmts));
    walker w = {e, lookup, ctx, out, json_object(), NULL, 0};
    if (st == TL_OK && w.ctes == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = walk(&w, json_array_get(stmts, 0), err);
    for (size_t i = 0; i < w.n_pending; i++) tl_scan_filter_clear(&w.pending[i].filter);
    free(w.pending);
    json_decref(w.ctes);
    json_decref(doc);
    if (st != TL_OK) tl_sql_plan_free(out);
    return st;
}

void tl_sql_plan_free(tl_sql_plan *plan)
{
    for (size_t i = 0; i < plan->n_refs; i++) {
        tl_sql_ref *r = &plan->refs[i];
        for (size_t j = 0; j < r->n_filters; j++) tl_scan_filter_clear(&r->filters[j]);
        free(r->filters);
        free(r->schema);
        free(r->table);
    }
    free(plan->refs);
    memset(plan, 0, sizeof *plan);
}
