#include "query/sql_plan.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/parse.h"
#include "core/json_text.h"
#include "query/query_cache.h"
#include "query/sql_plan_json.h"
#include "query/sql_plan_latest.h"
#include "query/sql_plan_time.h"

typedef struct walker {
    tl_query_engine *e;
    bool own_namespace; /* DuckDB's catalog functions are refused */
    tl_sql_lookup lookup;
    void *ctx;
    tl_sql_plan *plan;
    const json_t *root; /* the statement */
    json_t *ctes;       /* CTEs in scope: lowercased name -> definition (from the tree) */
    /* The filter and latest-only flag of each from_table that is a lake
     * table, found at its SELECT node before the walk reaches the table. */
    struct pending {
        const json_t *from;
        tl_scan_filter filter;
        bool latest;
        tl_strlist nonnull;
    } * pending;
    size_t n_pending;
    /* SELECT nodes whose row-numbering column `first` their reader keeps
     * only where it is 1, found at the reader before the walk reaches them. */
    struct first_only {
        const json_t *select;
        const char *first; /* borrowed from the tree */
    } * firsts;
    size_t n_firsts;
    bool nomem; /* eval_constant could not make its query or read its answer */
} walker;

/* ---- Constant expressions, evaluated by DuckDB ---- */

static bool is_constant_expr(const json_t *e)
{
    const char *cls = tl_js_str(e, "class");
    if (strcmp(cls, "CONSTANT") == 0) return true;
    if (strcmp(cls, "CAST") == 0) return is_constant_expr(json_object_get(e, "child"));
    if (strcmp(cls, "FUNCTION") != 0) return false;
    static const char *const unsafe[] = {"random",  "uuid", "gen_random_uuid", "nextval", "setseed",
                                         "currval", NULL};
    const char *name = tl_js_str(e, "function_name");
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
        const char *name = tl_js_str(e, "function_name");
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

/* The SQL of a literal or a cast of a string literal to a time type
 * (TIMESTAMPTZ '...'), NULL for anything else. */
static char *simple_constant_sql(const json_t *e)
{
    const char *cast = NULL;
    if (strcmp(tl_js_str(e, "class"), "CAST") == 0 &&
        !json_is_true(json_object_get(e, "try_cast"))) {
        static const char *const times[] = {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP", "DATE", NULL};
        const char *id = tl_js_str(json_object_get(e, "cast_type"), "id");
        for (size_t i = 0; times[i]; i++)
            if (strcmp(id, times[i]) == 0) cast = times[i];
        if (cast == NULL) return NULL;
        e = json_object_get(e, "child");
        if (strcmp(tl_js_str(json_object_get(json_object_get(e, "value"), "type"), "id"),
                   "VARCHAR"))
            return NULL;
    }
    char *text = tl_js_literal_text(e);
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
    char *select = NULL;
    if (simple == NULL) {
        json_t *exprs = json_pack("[O]", expr);
        select = exprs ? tl_sql_select_text(w->e, exprs) : NULL;
        json_decref(exprs);
    }
    char *sql = simple || select ? tl_strdup_printf(wrap, simple ? simple : select) : NULL;
    w->nomem |= (simple || select) && sql == NULL;
    free(simple);
    free(select);
    tl_status st = sql ? tl_query_scalar_text(w->e, sql, NULL, out, NULL) : TL_ERR_QUERY;
    w->nomem |= st == TL_ERR_NOMEM;
    free(sql);
    return st == TL_OK && *out;
}

/* ---- WHERE clauses ---- */

/* sql_plan.h; parsed in C. */
bool tl_sql_literal_time(const json_t *e, int64_t *us)
{
    const char *cast = "";
    if (tl_js_is_class(e, "CAST")) {
        if (json_is_true(json_object_get(e, "try_cast"))) return false;
        cast = tl_js_str(json_object_get(e, "cast_type"), "id");
        e = json_object_get(e, "child");
    }
    const json_t *v = json_object_get(e, "value");
    const char *text = json_string_value(json_object_get(v, "value"));
    if (!tl_js_is_class(e, "CONSTANT") || json_is_true(json_object_get(v, "is_null")) ||
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "VARCHAR") != 0 || text == NULL)
        return false;
    if (strcmp(cast, "DATE") == 0 && strlen(text) != 10) return false;
    if (strcmp(cast, "TIMESTAMP") == 0 && strpbrk(text + (strlen(text) > 10 ? 10 : 0), "Zz+-"))
        return false; /* a zone on a plain TIMESTAMP: DuckDB's to judge */
    if (*cast && strcmp(cast, "DATE") && strcmp(cast, "TIMESTAMP") &&
        strcmp(cast, "TIMESTAMP WITH TIME ZONE"))
        return false;
    return tl_sql_parse_time(text, us);
}

/* dir: 1 lower bound, -1 upper bound, 0 both; strict: the comparison
 * excludes the value itself. */
static void bound_time(walker *w, tl_scan_filter *f, const json_t *expr, int dir, bool strict)
{
    if (!is_constant_expr(expr) || (dir <= 0 && uses_clock(expr))) return;
    int64_t us;
    if (tl_sql_literal_time(expr, &us)) {
        /* Time columns hold whole microseconds: time < v is time <= v - 1us. */
        if (strict && dir > 0 && us < INT64_MAX) us++;
        if (strict && dir < 0 && us > INT64_MIN) us--;
    } else {
        char *v = NULL;
        if (!eval_constant(w, expr, "SELECT epoch_us(CAST((%s) AS TIMESTAMPTZ))", &v)) {
            free(v);
            return;
        }
        us = strtoll(v, NULL, 10);
        free(v);
    }
    if (dir >= 0 && (!f->has_lo || us > f->lo)) f->has_lo = true, f->lo = us;
    if (dir <= 0 && (!f->has_hi || us < f->hi)) f->has_hi = true, f->hi = us;
}

/* DuckDB compares a string column with a number by casting the column ('01'
 * = 1), so only string values bound its text. */
static const char text_only[] =
    "SELECT CAST(v AS VARCHAR) FROM (SELECT (%s) AS v) WHERE typeof(v) = 'VARCHAR'";

/* text: the key column is a string (see text_only). */
static void restrict_keys(walker *w, tl_scan_filter *f, const json_t *values, size_t from,
                          bool text)
{
    size_t n = json_array_size(values);
    char **keys = calloc(n + 1, sizeof *keys);
    size_t k = 0;
    for (size_t i = from; keys && i < n; i++) {
        const json_t *v = json_array_get(values, i);
        bool varchar = strcmp(tl_js_str(json_object_get(json_object_get(v, "value"), "type"), "id"),
                              "VARCHAR") == 0;
        keys[k] = !text || varchar ? tl_js_literal_text(v) : NULL;
        if (keys[k] == NULL &&
            (!is_constant_expr(v) || uses_clock(v) || (text && tl_js_is_class(v, "CONSTANT")) ||
             !eval_constant(w, v, text ? text_only : "SELECT CAST((%s) AS VARCHAR)", &keys[k]))) {
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

/* ---- Partition columns ---- */

/* A constant compared with a partition column of `type`, as the text
 * tl_scan_column holds: the constant cast to the column's type, as DuckDB
 * casts it to compare. A cast that rounds (5.5 to an integer, a timestamp to
 * a date) still prunes soundly when bounds are taken inclusively; *exact
 * says the text is the constant itself (a literal of the column's kind). */
static bool partition_text(walker *w, const tl_ice_type *type, const json_t *v, char **out,
                           bool *exact)
{
    *out = NULL;
    *exact = false;
    if (!is_constant_expr(v) || uses_clock(v)) return false;
    const char *lit = tl_js_str(json_object_get(json_object_get(v, "value"), "type"), "id");
    bool constant = tl_js_is_class(v, "CONSTANT"), varchar = strcmp(lit, "VARCHAR") == 0;
    int32_t days;
    switch (type->id) {
    case TL_ICE_STRING:
        if (!constant) return eval_constant(w, v, text_only, out);
        return varchar && (*exact = (*out = tl_js_literal_text(v)) != NULL);
    case TL_ICE_INT:
    case TL_ICE_LONG:
        if (constant && !varchar && (*out = tl_js_literal_text(v)) != NULL) return *exact = true;
        return eval_constant(w, v, "SELECT CAST(CAST((%s) AS BIGINT) AS VARCHAR)", out);
    case TL_ICE_BOOLEAN:
        return eval_constant(w, v, "SELECT CAST(CAST((%s) AS BOOLEAN) AS VARCHAR)", out);
    case TL_ICE_DATE:
        if (constant && varchar && (*out = tl_js_literal_text(v)) != NULL && strlen(*out) == 10 &&
            tl_parse_date32(*out, 10, &days, NULL) == TL_OK)
            return *exact = true;
        free(*out);
        *out = NULL;
        return eval_constant(w, v, "SELECT CAST(CAST((%s) AS DATE) AS VARCHAR)", out);
    case TL_ICE_TIMESTAMP:
    case TL_ICE_TIMESTAMPTZ:
        return eval_constant(w, v, "SELECT epoch_us(CAST((%s) AS TIMESTAMPTZ))", out);
    default:
        return false;
    }
}

/* The schema index of the partition column (other than the time column)
 * that e names, or -1. */
static int partition_column(const tl_table *t, const char *alias, const json_t *e)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    for (size_t i = 0; i < c->n_partition; i++) {
        int col = c->partition[i].column;
        if (col >= 0 && col != c->time_index && tl_js_names_column(e, alias, s->fields[col].name))
            return col;
    }
    return -1;
}

/* Adds a restriction of column col to f; NULL when out of memory. */
static tl_scan_column *add_column(tl_scan_filter *f, int col)
{
    tl_scan_column *cols = realloc(f->columns, (f->n_columns + 1) * sizeof *cols);
    if (cols == NULL) return NULL;
    f->columns = cols;
    cols[f->n_columns] = (tl_scan_column){.column = col};
    return &cols[f->n_columns++];
}

/* Restricts partition column `col` of f: dir 0 to the values values[from..],
 * 1 to at least (strict: above) values[from], -1 to at most (below) it.
 * Anything unreadable restricts nothing. */
static void restrict_partition(walker *w, const tl_table *t, tl_scan_filter *f, int col,
                               const json_t *values, size_t from, int dir, bool strict)
{
    const tl_ice_type *type = &tl_ice_metadata_current_schema(t->md)->fields[col].type;
    size_t n = dir == 0 ? json_array_size(values) - from : 1;
    char **texts = calloc(n + 1, sizeof *texts);
    bool ok = texts != NULL, exact = true;
    for (size_t i = 0; ok && i < n; i++) {
        bool one_exact;
        ok = partition_text(w, type, json_array_get(values, from + i), &texts[i], &one_exact);
        exact = exact && one_exact;
    }
    tl_scan_column *c = ok ? add_column(f, col) : NULL;
    if (c == NULL) {
        for (size_t i = 0; texts && i < n; i++) free(texts[i]);
        free(texts);
        return;
    }
    if (dir == 0) {
        c->values = texts;
        c->n_values = n;
        return;
    }
    *(dir > 0 ? &c->lo : &c->hi) = texts[0];
    *(dir > 0 ? &c->lo_strict : &c->hi_strict) = strict && exact;
    free(texts);
}

/* IS [NOT] NULL, a boolean partition column alone or under NOT. */
static bool restrict_partition_by_column(const tl_table *t, const char *alias, const json_t *e,
                                         tl_scan_filter *f)
{
    const char *type = tl_js_str(e, "type");
    const json_t *child = json_array_get(json_object_get(e, "children"), 0);
    int col;
    if (strcmp(type, "OPERATOR_IS_NULL") == 0 || strcmp(type, "OPERATOR_IS_NOT_NULL") == 0) {
        tl_scan_column *c =
            (col = partition_column(t, alias, child)) >= 0 ? add_column(f, col) : NULL;
        if (c) c->nulls = strcmp(type, "OPERATOR_IS_NULL") == 0 ? 1 : -1;
        return true;
    }
    bool negated = strcmp(type, "OPERATOR_NOT") == 0;
    if ((col = partition_column(t, alias, negated ? child : e)) < 0 ||
        tl_ice_metadata_current_schema(t->md)->fields[col].type.id != TL_ICE_BOOLEAN)
        return false;
    tl_scan_column *c = add_column(f, col);
    char **value = c ? calloc(2, sizeof *value) : NULL;
    if (value && (value[0] = strdup(negated ? "false" : "true")) != NULL) {
        c->values = value;
        c->n_values = 1;
    } else {
        free(value);
    }
    return true;
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
    bool text_key = key && s->fields[c->series_index[0]].type.id == TL_ICE_STRING;
    const char *type = tl_js_str(e, "type");
    if (strcmp(type, "CONJUNCTION_AND") == 0) {
        size_t i;
        const json_t *ch;
        json_array_foreach(json_object_get(e, "children"), i, ch) read_conjunct(w, t, alias, ch, f);
        return;
    }
    if (restrict_partition_by_column(t, alias, e, f)) return;
    int pcol = -1;
    if (strcmp(type, "COMPARE_BETWEEN") == 0 &&
        (pcol = partition_column(t, alias, json_object_get(e, "input"))) >= 0) {
        json_t *bounds =
            json_pack("[OO]", json_object_get(e, "lower"), json_object_get(e, "upper"));
        if (bounds) restrict_partition(w, t, f, pcol, bounds, 0, 1, false);
        if (bounds) restrict_partition(w, t, f, pcol, bounds, 1, -1, false);
        json_decref(bounds);
    }
    if (strcmp(type, "COMPARE_BETWEEN") == 0 && time &&
        tl_js_names_column(json_object_get(e, "input"), alias, time)) {
        bound_time(w, f, json_object_get(e, "lower"), 1, false);
        bound_time(w, f, json_object_get(e, "upper"), -1, false);
        return;
    }
    if (strcmp(type, "COMPARE_IN") == 0) {
        const json_t *ch = json_object_get(e, "children");
        if ((pcol = partition_column(t, alias, json_array_get(ch, 0))) >= 0)
            restrict_partition(w, t, f, pcol, ch, 1, 0, false);
        if (key && tl_js_names_column(json_array_get(ch, 0), alias, key))
            restrict_keys(w, f, ch, 1, text_key);
        return;
    }
    if (strcmp(tl_js_str(e, "class"), "COMPARISON") != 0) return;
    const json_t *l = json_object_get(e, "left"), *r = json_object_get(e, "right");
    int dir;
    bool strict = strcmp(type, "COMPARE_GREATERTHAN") == 0 || strcmp(type, "COMPARE_LESSTHAN") == 0;
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
        if ((pcol = partition_column(t, alias, col)) >= 0) {
            json_t *one = json_pack("[O]", val);
            if (one) restrict_partition(w, t, f, pcol, one, 0, flip(dir, side), strict);
            json_decref(one);
        }
        if (time && tl_js_names_column(col, alias, time))
            bound_time(w, f, val, flip(dir, side), strict);
        if (key && dir == 0 && tl_js_names_column(col, alias, key)) {
            json_t *one = json_pack("[O]", val);
            if (one) restrict_keys(w, f, one, 0, text_key);
            json_decref(one);
        }
    }
}

/* ---- The walk ---- */

/* CTE names as DuckDB matches them: without regard to (ASCII) case. */
static char *cte_key(const char *name)
{
    char *key = strdup(name);
    for (char *c = key; c && *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    return key;
}

/* The CTE in scope named `name`, or NULL. */
static const json_t *cte_named(const walker *w, const char *name)
{
    char *key = cte_key(name);
    const json_t *cte = key ? json_object_get(w->ctes, key) : NULL;
    free(key);
    return cte;
}

/* Brings a CTE into scope; -1 when out of memory. */
static int cte_enter(walker *w, const json_t *cte)
{
    char *key = cte_key(tl_js_str(cte, "key"));
    int rc = key ? json_object_set(w->ctes, key, (json_t *)cte) : -1;
    free(key);
    return rc;
}

/* Whether a table reference names one of DuckDB's other catalogs (system,
 * temp). Lake tables are views in its default one, "memory": written out,
 * memory.ns.table is still a lake table, and must be resolved (and its view
 * brought up to date) like ns.table. */
static bool foreign_catalog(const json_t *ref)
{
    const char *catalog = tl_js_str(ref, "catalog_name");
    return *catalog && strcasecmp(catalog, "memory") != 0;
}

/* Whether a table function reads files (or other databases) named in its
 * arguments: DuckDB's readers and their metadata functions, glob, and the
 * scans of extensions. */
static bool reads_files(const char *name)
{
    static const char *const prefixes[] = {"read_",   "parquet_",  "iceberg_", "delta_",
                                           "sqlite_", "postgres_", "mysql_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncasecmp(name, prefixes[i], strlen(prefixes[i])) == 0) return true;
    size_t n = strlen(name);
    return strcasecmp(name, "glob") == 0 || strcasecmp(name, "sniff_csv") == 0 ||
           (n > 5 && strcasecmp(name + n - 5, "_scan") == 0);
}

/* Table functions that read tables named in their arguments' text, which
 * the walk cannot see: they would read a view as an earlier query left it.
 * Those reading files are refused here with a message that says why; the
 * engine's lock-down (engine.c) refuses whatever else reaches outside. */
static tl_status check_table_function(const walker *w, const json_t *node, tl_error *err)
{
    const char *name = tl_js_str(json_object_get(node, "function"), "function_name");
    if (w->own_namespace &&
        (strncasecmp(name, "duckdb_", 7) == 0 || strncasecmp(name, "pragma_", 7) == 0 ||
         strcasecmp(name, "information_schema") == 0))
        return tl_error_set(err, TL_ERR_QUERY,
                            "%s() is refused: this query may see only its namespace's tables",
                            name);
    if (strcasecmp(name, "query") == 0 || strcasecmp(name, "query_table") == 0 ||
        strcasecmp(name, "json_execute_serialized_sql") == 0)
        return tl_error_set(err, TL_ERR_QUERY,
                            "%s() cannot read lake tables: name the tables in the query itself",
                            name);
    if (reads_files(name))
        return tl_error_set(err, TL_ERR_QUERY,
                            "%s() is refused: SQL over the lake reads only the lake's tables, "
                            "never files; name a table instead, or append the file to one first",
                            name);
    return TL_OK;
}

/* ---- Time travel: t AT (VERSION => v) and AT (TIMESTAMP => ts) ---- */

static tl_status bad_at(const json_t *bt, const char *what, tl_error *err)
{
    const char *schema = tl_js_str(bt, "schema_name");
    return tl_error_set(err, TL_ERR_QUERY, "%s%s%s AT (%s => ...): %s", schema, *schema ? "." : "",
                        tl_js_str(bt, "table_name"),
                        tl_js_str(json_object_get(bt, "at_clause"), "unit"), what);
}

/* The AT clause of reference bt read into *at (at->version malloc'd into
 * *text); TL_SQL_AT_NONE without one. */
static tl_status read_at(walker *w, const json_t *bt, tl_sql_at *at, char **text, tl_error *err)
{
    memset(at, 0, sizeof *at);
    *text = NULL;
    const json_t *clause = json_object_get(bt, "at_clause");
    if (!json_is_object(clause)) return TL_OK;
    const char *unit = tl_js_str(clause, "unit");
    const json_t *expr = json_object_get(clause, "expr");
    bool version = strcasecmp(unit, "VERSION") == 0;
    if (!version && strcasecmp(unit, "TIMESTAMP") != 0)
        return bad_at(bt, "use AT (VERSION => <snapshot id>) or AT (TIMESTAMP => <time>)", err);
    if (!is_constant_expr(expr))
        return bad_at(bt, "the value must be a constant (a snapshot id, or a time)", err);
    if (version) {
        w->nomem = false;
        if (!eval_constant(w, expr, "SELECT CAST((%s) AS VARCHAR)", text) || *text == NULL) {
            free(*text);
            *text = NULL;
            return w->nomem ? tl_error_nomem(err) : bad_at(bt, "the value is no snapshot id", err);
        }
        at->kind = TL_SQL_AT_VERSION;
        at->version = *text;
        return TL_OK;
    }
    char *us = NULL;
    w->nomem = false;
    bool ok = eval_constant(w, expr, "SELECT epoch_us(CAST((%s) AS TIMESTAMPTZ))", &us);
    at->kind = TL_SQL_AT_TIMESTAMP;
    at->us = ok ? strtoll(us, NULL, 10) : 0;
    free(us);
    if (!ok && w->nomem) return tl_error_nomem(err);
    return ok ? TL_OK
              : bad_at(bt, "the value is not a time (such as TIMESTAMPTZ '2026-01-01 10:00')", err);
}

/* The table bt names as of its AT clause (*out NULL without one). */
static tl_status resolve_at(walker *w, const json_t *bt, tl_table **out, tl_error *err)
{
    *out = NULL;
    tl_sql_at at;
    char *text = NULL;
    TL_TRY(read_at(w, bt, &at, &text, err));
    if (at.kind == TL_SQL_AT_NONE) return TL_OK;
    tl_status st =
        w->lookup(w->ctx, tl_js_str(bt, "schema_name"), tl_js_str(bt, "table_name"), &at, out, err);
    free(text);
    TL_TRY(st);
    if (*out == NULL) return bad_at(bt, "only the lake's tables can be read as of a snapshot", err);
    return TL_OK;
}

/* Reference bt (in the plan's own copy of the tree) made a reference to the
 * view of t as of its snapshot, keeping the name the query uses for it. */
static tl_status travel_to_view(json_t *bt, const tl_table *t, tl_error *err)
{
    char *view = tl_query_view_name(t);
    bool ok = view != NULL;
    if (ok && !*tl_js_str(bt, "alias"))
        ok = json_object_set_new(bt, "alias", json_string(tl_js_str(bt, "table_name"))) == 0;
    ok = ok && json_object_set_new(bt, "table_name", json_string(view)) == 0 &&
         json_object_set_new(bt, "schema_name", json_string(t->name.namespace_)) == 0 &&
         json_object_set_new(bt, "catalog_name", json_string("")) == 0 &&
         json_object_set_new(bt, "at_clause", json_null()) == 0;
    free(view);
    return ok ? TL_OK : tl_error_nomem(err);
}

static tl_status add_ref(walker *w, json_t *bt, tl_error *err)
{
    const char *schema = tl_js_str(bt, "schema_name"), *table = tl_js_str(bt, "table_name");
    /* system.information_schema and the like list the views of every
     * namespace queried before. */
    if (foreign_catalog(bt) && w->own_namespace)
        return tl_error_set(err, TL_ERR_QUERY,
                            "%s.%s.%s is refused: this query may see only its namespace's tables",
                            tl_js_str(bt, "catalog_name"), schema, table);
    if (foreign_catalog(bt)) return TL_OK;
    if (!*schema && cte_named(w, table)) return TL_OK;
    tl_table *pinned = NULL;
    TL_TRY(resolve_at(w, bt, &pinned, err));
    tl_sql_plan *p = w->plan;
    size_t i = 0;
    for (; i < p->n_refs; i++)
        if (strcmp(p->refs[i].schema, schema) == 0 && strcmp(p->refs[i].table, table) == 0 &&
            (pinned ? p->refs[i].t == pinned : p->refs[i].t->pinned_snapshot == 0))
            break;
    if (i == p->n_refs) {
        tl_table *t = pinned;
        if (t == NULL) TL_TRY(w->lookup(w->ctx, schema, table, NULL, &t, err));
        if (t == NULL && strchr(table, '/'))
            return tl_error_set(err, TL_ERR_QUERY,
                                "FROM '%s' is refused: SQL over the lake reads only the lake's "
                                "tables, never files; name a table instead, or append the file "
                                "to one first",
                                table);
        if (t == NULL) return TL_OK;
        tl_sql_ref *refs = realloc(p->refs, (p->n_refs + 1) * sizeof *refs);
        if (refs == NULL) return tl_error_nomem(err);
        p->refs = refs;
        p->refs[i] = (tl_sql_ref){strdup(schema), strdup(table), t, NULL, 0, true, {0}};
        p->n_refs++;
        if (!p->refs[i].schema || !p->refs[i].table) return tl_error_nomem(err);
    }
    tl_sql_ref *r = &p->refs[i];
    tl_scan_filter f = {0};
    bool latest = false;
    tl_strlist nonnull = {0};
    for (size_t j = 0; j < w->n_pending; j++) {
        if (w->pending[j].from != bt) continue;
        f = w->pending[j].filter;
        latest = w->pending[j].latest;
        nonnull = w->pending[j].nonnull;
        memset(&w->pending[j], 0, sizeof w->pending[j]);
    }
    bool ok = true;
    for (size_t j = 0; ok && j < nonnull.len; j++)
        ok = tl_strlist_contains(&r->nonnull, nonnull.items[j]) ||
             tl_strlist_push(&r->nonnull, nonnull.items[j]) == 0;
    tl_strlist_free(&nonnull);
    tl_scan_filter *fs = ok ? realloc(r->filters, (r->n_filters + 1) * sizeof *fs) : NULL;
    if (fs == NULL) {
        tl_scan_filter_clear(&f);
        return tl_error_nomem(err);
    }
    r->filters = fs;
    r->filters[r->n_filters++] = f;
    r->all_latest &= latest;
    /* Last: this changes the strings schema and table point to. */
    return pinned ? travel_to_view(bt, pinned, err) : TL_OK;
}

static tl_status walk(walker *w, json_t *node, tl_error *err);

/* How many CTEs named `name` the tree defines and how many table references
 * use that name unqualified. */
static void count_named(const json_t *node, const char *name, size_t *defs, size_t *uses)
{
    if (json_is_array(node)) {
        size_t i;
        const json_t *v;
        json_array_foreach(node, i, v) count_named(v, name, defs, uses);
        return;
    }
    if (!json_is_object(node)) return;
    const json_t *v;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(node, "cte_map"), "map"), i, v)
    {
        *defs += strcasecmp(tl_js_str(v, "key"), name) == 0;
    }
    if (tl_js_is_type(node, "BASE_TABLE") && !*tl_js_str(node, "schema_name") &&
        strcasecmp(tl_js_str(node, "table_name"), name) == 0)
        (*uses)++;
    const char *k;
    json_object_foreach((json_t *)node, k, v) count_named(v, name, defs, uses);
}

/* When `node` reads a subquery, or a CTE defined and used once, and keeps
 * only its rows where a row-numbering column is 1: notes that for the
 * subquery's SELECT. */
static tl_status note_first_only(walker *w, const json_t *node, tl_error *err)
{
    const json_t *from = json_object_get(node, "from_table"), *inner = NULL;
    const char *rel = tl_js_str(from, "alias");
    if (tl_js_is_type(from, "SUBQUERY")) {
        inner = json_object_get(json_object_get(from, "subquery"), "node");
    } else if (tl_js_is_type(from, "BASE_TABLE") && !*tl_js_str(from, "schema_name") &&
               !*tl_js_str(from, "catalog_name")) {
        const char *name = tl_js_str(from, "table_name");
        const json_t *cte = cte_named(w, name);
        size_t defs = 0, uses = 0;
        if (cte) count_named(w->root, name, &defs, &uses);
        /* WITH r(a, b) renames the columns: `rn` would then name another one. */
        if (defs == 1 && uses == 1 &&
            json_array_size(json_object_get(json_object_get(cte, "value"), "aliases")) == 0)
            inner =
                json_object_get(json_object_get(json_object_get(cte, "value"), "query"), "node");
        if (!*rel) rel = name;
    }
    /* FROM (...) s(a, b) renames them the same way. */
    if (json_array_size(json_object_get(from, "column_name_alias"))) inner = NULL;
    const char *first =
        inner ? tl_sql_first_only(inner, json_object_get(node, "where_clause"), rel) : NULL;
    if (first == NULL) return TL_OK;
    struct first_only *f = realloc(w->firsts, (w->n_firsts + 1) * sizeof *f);
    if (f == NULL) return tl_error_nomem(err);
    w->firsts = f;
    w->firsts[w->n_firsts++] = (struct first_only){inner, first};
    return TL_OK;
}

static tl_status prepare_select(walker *w, json_t *node, tl_error *err)
{
    TL_TRY(note_first_only(w, node, err));
    json_t *from = json_object_get(node, "from_table");
    if (!tl_js_is_type(from, "BASE_TABLE") || foreign_catalog(from)) return TL_OK;
    const char *schema = tl_js_str(from, "schema_name"), *table = tl_js_str(from, "table_name");
    if (!*schema && cte_named(w, table)) return TL_OK;
    tl_table *t = NULL;
    TL_TRY(resolve_at(w, from, &t, err));
    if (t == NULL) TL_TRY(w->lookup(w->ctx, schema, table, NULL, &t, err));
    if (t == NULL) return TL_OK;
    /* FROM t x(a, b) gives the columns other names: no filter or shape is read. */
    if (json_array_size(json_object_get(from, "column_name_alias"))) return TL_OK;
    const char *alias = *tl_js_str(from, "alias") ? tl_js_str(from, "alias") : table;
    struct pending *p = realloc(w->pending, (w->n_pending + 1) * sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    w->pending = p;
    p = &p[w->n_pending++];
    memset(p, 0, sizeof *p);
    const json_t *where = json_object_get(node, "where_clause");
    if (where && !json_is_null(where)) read_conjunct(w, t, alias, where, &p->filter);
    const char *first = NULL;
    for (size_t i = 0; i < w->n_firsts; i++)
        if (w->firsts[i].select == node) first = w->firsts[i].first;
    p->latest = tl_sql_latest_shape(t, alias, node, first, &p->nonnull);
    p->from = from;
    return TL_OK;
}

/* The members of a node other than its CTE definitions. */
static tl_status walk_members(walker *w, json_t *node, tl_error *err)
{
    if (tl_js_is_type(node, "SELECT_NODE")) TL_TRY(prepare_select(w, node, err));
    if (tl_js_is_type(node, "BASE_TABLE")) return add_ref(w, node, err);
    if (tl_js_is_type(node, "TABLE_FUNCTION")) TL_TRY(check_table_function(w, node, err));
    const char *k;
    json_t *v;
    json_object_foreach(node, k, v) if (strcmp(k, "cte_map") != 0) TL_TRY(walk(w, v, err));
    return TL_OK;
}

/* A node defining CTEs, scoped as DuckDB binds them: the node itself sees
 * all of them; the body of each sees those defined before it, and itself
 * only when recursive (a name it does not see is a table's). */
static tl_status walk_scoped(walker *w, json_t *node, const json_t *map, tl_error *err)
{
    json_t *outer = json_copy(w->ctes);
    if (outer == NULL) return tl_error_nomem(err);
    size_t i;
    json_t *v;
    tl_status st = TL_OK;
    json_array_foreach(map, i, v) if (st == TL_OK && cte_enter(w, v) != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = walk_members(w, node, err);
    json_object_clear(w->ctes);
    if (json_object_update(w->ctes, outer) != 0 && st == TL_OK) st = tl_error_nomem(err);
    json_array_foreach(map, i, v)
    {
        if (st != TL_OK) break;
        json_t *body = json_object_get(json_object_get(v, "value"), "query");
        bool recursive = tl_js_is_type(json_object_get(body, "node"), "RECURSIVE_CTE_NODE");
        if (recursive && cte_enter(w, v) != 0) st = tl_error_nomem(err);
        if (st == TL_OK) st = walk(w, json_object_get(v, "value"), err);
        if (st == TL_OK && cte_enter(w, v) != 0) st = tl_error_nomem(err);
    }
    json_object_clear(w->ctes);
    if (json_object_update(w->ctes, outer) != 0 && st == TL_OK) st = tl_error_nomem(err);
    json_decref(outer);
    return st;
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
    const json_t *ctes = json_object_get(json_object_get(node, "cte_map"), "map");
    if (json_array_size(ctes)) return walk_scoped(w, node, ctes, err);
    return walk_members(w, node, err);
}

/* The serialized tree with each integer beyond int64 (a literal such as
 * 18446744073709551615, which jansson cannot read) turned into a string:
 * the value is then no integer literal to the walk, which leaves it alone. */
static char *quote_big_integers(const char *text)
{
    tl_buf out = {0};
    bool ok = true, in_string = false;
    for (const char *p = text; ok && *p;) {
        if (in_string || *p == '"') {
            if (in_string && *p == '\\' && p[1]) {
                ok = tl_buf_append(&out, p, 2) == 0;
                p += 2;
                continue;
            }
            in_string = *p == '"' ? !in_string : in_string;
            ok = tl_buf_append_byte(&out, (uint8_t)*p++) == 0;
            continue;
        }
        size_t n =
            *p == '-' || (*p >= '0' && *p <= '9') ? strspn(p + (*p == '-'), "0123456789") : 0;
        size_t len = n + (*p == '-');
        bool integer = n > 0 && !strchr(".eE", p[len]);
        if (integer && n >= 19) {
            errno = 0;
            (void)strtoll(p, NULL, 10);
            if (errno == ERANGE) {
                ok = tl_buf_printf(&out, "\"%.*s\"", (int)len, p) == 0;
                p += len;
                continue;
            }
        }
        len = len ? len : 1;
        ok = tl_buf_append(&out, p, len) == 0;
        p += len;
    }
    ok = ok && tl_buf_append_byte(&out, 0) == 0;
    if (!ok) tl_buf_free(&out);
    return ok ? (char *)out.data : NULL;
}

/* DuckDB's parse, kept by the engine for the queries it saw last, as a
 * dashboard repeats its own. */
tl_status tl_sql_syntax_tree(tl_query_engine *e, const char *query, json_t **out, tl_error *err)
{
    size_t n = sizeof e->asts / sizeof e->asts[0];
    for (size_t i = 0; i < n; i++)
        if (e->asts[i].query && strcmp(e->asts[i].query, query) == 0) {
            *out = json_incref(e->asts[i].doc);
            return TL_OK;
        }
    char *text = NULL;
    TL_TRY(tl_query_scalar_text(e, "SELECT json_serialize_sql(?::VARCHAR)", query, &text, err));
    /* An unknown query location is UINT64_MAX, beyond what jansson reads. */
    static const char unknown[] = "\"query_location\":18446744073709551615";
    for (char *p = text; p && (p = strstr(p, unknown)) != NULL;)
        memcpy(p, "\"query_location\":0                   ", sizeof unknown - 1);
    char *readable = text ? quote_big_integers(text) : NULL;
    free(text);
    json_error_t je;
    bool nomem = readable == NULL;
    json_t *doc = readable ? tl_json_loadb(readable, strlen(readable), 0, &je, &nomem) : NULL;
    free(readable);
    if (nomem) return tl_error_nomem(err);
    if (doc == NULL) return tl_error_set(err, TL_ERR_QUERY, "cannot read the query's syntax tree");
    char *copy = strdup(query);
    if (copy) {
        struct tl_query_ast *slot = &e->asts[e->next_ast];
        e->next_ast = (e->next_ast + 1) % n;
        free(slot->query);
        json_decref(slot->doc);
        *slot = (struct tl_query_ast){copy, json_incref(doc)};
    }
    *out = doc;
    return TL_OK;
}

/* The first keyword of a query, past blanks, comments and parentheses,
 * upper-cased into buf (empty when there is none). */
static const char *first_keyword(const char *q, char *buf, size_t size)
{
    for (;;) {
        q += strspn(q, " \t\r\n(");
        if (q[0] == '-' && q[1] == '-')
            q += strcspn(q, "\n");
        else if (q[0] == '/' && q[1] == '*' && strstr(q + 2, "*/"))
            q = strstr(q + 2, "*/") + 2;
        else
            break;
    }
    size_t n = 0;
    for (; n + 1 < size && isalpha((unsigned char)q[n]); n++) buf[n] = (char)toupper(q[n]);
    buf[n] = 0;
    return buf;
}

/* DuckDB serializes SELECT statements only ("Only SELECT statements can be
 * serialized to json!"): any other kind is refused here, by name. */
static tl_status statement_error(const char *query, const char *msg, tl_error *err)
{
    char kw[32], padded[40];
    if (!strstr(msg, "Only SELECT statements")) return tl_query_error(err, msg);
    snprintf(padded, sizeof padded, " %s ", first_keyword(query, kw, sizeof kw));
    if (!*kw || strstr(" SELECT WITH FROM VALUES TABLE ", padded))
        return tl_error_set(err, TL_ERR_QUERY,
                            "a statement other than SELECT is refused: SQL over the lake runs one "
                            "SELECT query over the lake's tables and changes nothing");
    return tl_error_set(err, TL_ERR_QUERY,
                        "%s statements are refused: SQL over the lake runs one SELECT query "
                        "(WITH, VALUES, FROM also) over the lake's tables and changes nothing",
                        kw);
}

static bool all_digits(const char *s)
{
    s += *s == '-';
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* The strings of digits in a constant's value ({"upper": .., "lower": ..}
 * for a HUGEINT), marked with a leading \x01. */
static void mark_digits(json_t *v)
{
    size_t i;
    json_t *m;
    const char *k;
    if (json_is_array(v)) json_array_foreach(v, i, m) mark_digits(m);
    if (json_is_object(v)) json_object_foreach(v, k, m)
        {
            const char *s = json_string_value(m);
            if (s && all_digits(s)) {
                char *marked = tl_strdup_printf("\x01%s", s);
                if (marked) json_object_set_new(v, k, json_string(marked));
                free(marked);
            } else {
                mark_digits(m);
            }
        }
}

/* Marks the integers quote_big_integers made strings (digits in a constant
 * of a type other than a string's), for unmark_big_integers. */
static void mark_big_integers(json_t *node)
{
    size_t i;
    json_t *v;
    const char *k;
    if (json_is_array(node)) json_array_foreach(node, i, v) mark_big_integers(v);
    if (!json_is_object(node)) return;
    json_t *value = json_object_get(node, "value");
    const char *type = tl_js_str(json_object_get(value, "type"), "id");
    if (tl_js_is_class(node, "CONSTANT") && strcmp(type, "VARCHAR") != 0 &&
        strcmp(type, "BLOB") != 0 && strcmp(type, "BIT") != 0) {
        mark_digits(value);
        return;
    }
    json_object_foreach(node, k, v) mark_big_integers(v);
}

/* "\u0001<digits>" back to the bare number the tree had. */
static void unmark_big_integers(char *text)
{
    static const char mark[] = "\"\\u0001";
    char *w = text;
    for (const char *r = text; *r;) {
        if (strncmp(r, mark, sizeof mark - 1) == 0) {
            r += sizeof mark - 1;
            while (*r && *r != '"') *w++ = *r++;
            if (*r) r++;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
}

/* The SQL text kept for the tree's JSON, copied; NULL when none is. */
static char *kept_tree_text(const tl_query_engine *e, const char *tree)
{
    size_t n = sizeof e->tree_texts / sizeof e->tree_texts[0];
    for (size_t i = 0; i < n; i++)
        if (e->tree_texts[i].tree && strcmp(e->tree_texts[i].tree, tree) == 0)
            return strdup(e->tree_texts[i].sql);
    return NULL;
}

/* Keeps sql as the text of tree (both copied; nothing kept without memory). */
static void keep_tree_text(tl_query_engine *e, const char *tree, const char *sql)
{
    char *t = strdup(tree), *q = strdup(sql);
    if (t == NULL || q == NULL) {
        free(t);
        free(q);
        return;
    }
    struct tl_query_tree_text *slot = &e->tree_texts[e->next_tree_text];
    e->next_tree_text = (e->next_tree_text + 1) % (sizeof e->tree_texts / sizeof e->tree_texts[0]);
    free(slot->tree);
    free(slot->sql);
    *slot = (struct tl_query_tree_text){t, q};
}

tl_status tl_sql_tree_sql(tl_query_engine *e, const json_t *doc, char **out, tl_error *err)
{
    *out = NULL;
    json_t *copy = json_deep_copy(doc);
    if (copy) mark_big_integers(copy);
    char *text = copy ? tl_json_dumps(copy, JSON_COMPACT) : NULL;
    json_decref(copy);
    if (text == NULL) return tl_error_nomem(err);
    unmark_big_integers(text);
    tl_status st = TL_OK;
    char *sql = kept_tree_text(e, text);
    if (sql == NULL) {
        st = tl_query_scalar_text(e, "SELECT json_deserialize_sql(?::VARCHAR::JSON)", text, &sql,
                                  err);
        if (st == TL_OK && sql) keep_tree_text(e, text, sql);
        if (st == TL_OK && sql == NULL)
            st = tl_error_set(err, TL_ERR_QUERY, "cannot write the query back as SQL");
        if (st != TL_OK) {
            free(sql);
            sql = NULL;
        }
    }
    free(text);
    *out = sql;
    return st;
}

char *tl_sql_tree_text(tl_query_engine *e, const json_t *doc)
{
    char *sql = NULL;
    tl_sql_tree_sql(e, doc, &sql, NULL);
    return sql;
}

char *tl_sql_select_text(tl_query_engine *e, json_t *exprs)
{
    json_t *doc =
        json_pack("{s:b, s:[{s:{s:s, s:[], s:{s:[]}, s:O, s:{s:s, s:s, s:n, s:I}, s:n, s:[], s:[], "
                  "s:s, s:n, s:n, s:n}, s:[]}]}",
                  "error", 0, "statements", "node", "type", "SELECT_NODE", "modifiers", "cte_map",
                  "map", "select_list", exprs, "from_table", "type", "EMPTY", "alias", "", "sample",
                  "query_location", (json_int_t)0, "where_clause", "group_expressions",
                  "group_sets", "aggregate_handling", "STANDARD_HANDLING", "having", "sample",
                  "qualify", "named_param_map");
    char *sql = doc ? tl_sql_tree_text(e, doc) : NULL;
    json_decref(doc);
    return sql;
}

void tl_sql_plan_cache_free(tl_query_engine *e)
{
    for (size_t i = 0; i < sizeof e->asts / sizeof e->asts[0]; i++) {
        free(e->asts[i].query);
        json_decref(e->asts[i].doc);
        e->asts[i] = (struct tl_query_ast){NULL, NULL};
    }
    for (size_t i = 0; i < sizeof e->tree_texts / sizeof e->tree_texts[0]; i++) {
        free(e->tree_texts[i].tree);
        free(e->tree_texts[i].sql);
        e->tree_texts[i] = (struct tl_query_tree_text){NULL, NULL};
    }
}

/* Whether any table reference of the tree has an AT clause. */
static bool has_at_clause(const json_t *node)
{
    const json_t *v;
    size_t i;
    const char *k;
    if (json_is_array(node)) json_array_foreach(node, i, v) if (has_at_clause(v)) return true;
    if (!json_is_object(node)) return false;
    if (json_is_object(json_object_get(node, "at_clause"))) return true;
    json_object_foreach((json_t *)node, k, v) if (has_at_clause(v)) return true;
    return false;
}

tl_status tl_sql_plan_build(tl_query_engine *e, const char *query, bool own_namespace,
                            tl_sql_lookup lookup, void *ctx, tl_sql_plan *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *doc = NULL;
    TL_TRY(tl_sql_syntax_tree(e, query, &doc, err));
    tl_status st = TL_OK;
    json_t *stmts = json_object_get(doc, "statements");
    if (json_is_true(json_object_get(doc, "error")))
        st = statement_error(query, tl_js_str(doc, "error_message"), err);
    else if (json_array_size(stmts) != 1)
        st = tl_error_set(err, TL_ERR_QUERY, "expected one SELECT statement, got %zu statements",
                          json_array_size(stmts));
    /* Time travel changes the tree (travel_to_view): the engine's is shared. */
    bool travel = st == TL_OK && has_at_clause(doc);
    if (travel) {
        json_t *copy = json_deep_copy(doc);
        json_decref(doc);
        doc = copy;
        stmts = json_object_get(doc, "statements");
        if (doc == NULL) st = tl_error_nomem(err);
    }
    walker w = {e, own_namespace, lookup, ctx,  out, json_array_get(stmts, 0), json_object(), NULL,
                0, NULL,          0,      false};
    if (st == TL_OK && w.ctes == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) st = walk(&w, json_array_get(stmts, 0), err);
    if (st == TL_OK) out->stmt = json_incref(json_array_get(stmts, 0));
    if (st == TL_OK && travel) st = tl_sql_tree_sql(e, doc, &out->query, err);
    for (size_t i = 0; i < w.n_pending; i++) {
        tl_scan_filter_clear(&w.pending[i].filter);
        tl_strlist_free(&w.pending[i].nonnull);
    }
    free(w.pending);
    free(w.firsts);
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
        tl_strlist_free(&r->nonnull);
        free(r->schema);
        free(r->table);
    }
    free(plan->refs);
    free(plan->query);
    json_decref(plan->stmt);
    memset(plan, 0, sizeof *plan);
}
