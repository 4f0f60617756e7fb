#include "query/sql_shape.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/sql_plan.h"
#include "query/sql_plan_json.h"

bool tl_shape_absent(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v == NULL || json_is_null(v);
}

/* Whether a node of the tree, anywhere below `node`, has class `cls`. */
bool tl_shape_has_class(const json_t *node, const char *cls)
{
    const json_t *v;
    if (json_is_array(node)) {
        size_t i;
        json_array_foreach(node, i, v) if (tl_shape_has_class(v, cls)) return true;
        return false;
    }
    if (!json_is_object(node)) return false;
    if (tl_js_is_class(node, cls)) return true;
    const char *k;
    json_object_foreach((json_t *)node, k, v) if (tl_shape_has_class(v, cls)) return true;
    return false;
}

/* A constant whose value cannot change between evaluations: literals,
 * casts, operators and the to_<unit>() / trunc() that INTERVAL n UNIT
 * parses into. */
static bool fixed_constant(const json_t *e)
{
    if (tl_js_is_class(e, "CONSTANT")) return true;
    if (tl_js_is_class(e, "CAST")) return fixed_constant(json_object_get(e, "child"));
    if (!tl_js_is_class(e, "FUNCTION") || !tl_shape_absent(e, "filter") || *tl_js_str(e, "schema"))
        return false;
    const char *name = tl_js_str(e, "function_name");
    if (strncmp(name, "to_", 3) != 0 && strcmp(name, "trunc") != 0 &&
        !json_is_true(json_object_get(e, "is_operator")) && strlen(name) != 1)
        return false;
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(e, "children"), i, c) if (!fixed_constant(c)) return false;
    return true;
}

/* time_bucket or date_bin(<constant>, time [, <constant>]) through our
 * macros (engine.c). */
bool tl_shape_is_bucket(const tl_shape *x, const json_t *e)
{
    const json_t *ch = json_object_get(e, "children");
    size_t n = json_array_size(ch);
    const char *name = tl_js_str(e, "function_name");
    return tl_js_is_class(e, "FUNCTION") &&
           (strcasecmp(name, "time_bucket") == 0 || strcasecmp(name, "date_bin") == 0) &&
           !*tl_js_str(e, "schema") && !*tl_js_str(e, "catalog") && tl_shape_absent(e, "filter") &&
           !json_is_true(json_object_get(e, "distinct")) &&
           json_array_size(json_object_get(json_object_get(e, "order_bys"), "orders")) == 0 &&
           (n == 2 || n == 3) && fixed_constant(json_array_get(ch, 0)) &&
           tl_js_names_column(json_array_get(ch, 1), x->alias, x->time) &&
           (n == 2 || fixed_constant(json_array_get(ch, 2)));
}

bool tl_shape_is_time(const tl_shape *x, const json_t *e)
{
    return tl_js_names_column(e, x->alias, x->time);
}

/* The select-list item a bare name is the alias of (NULL: none; *twice when
 * two items carry it, which DuckDB would not bind). */
static const json_t *aliased(const tl_shape *x, const json_t *e, bool *twice)
{
    const json_t *names = json_object_get(e, "column_names");
    const char *name = json_string_value(json_array_get(names, 0));
    const json_t *found = NULL, *item;
    size_t i;
    *twice = false;
    if (!tl_js_is_class(e, "COLUMN_REF") || json_array_size(names) != 1) return NULL;
    json_array_foreach(json_object_get(x->select, "select_list"), i, item)
    {
        if (strcasecmp(tl_js_str(item, "alias"), name) != 0) continue;
        *twice |= found != NULL;
        found = item;
    }
    return found;
}

bool tl_shape_is_table_column(const tl_shape *x, const json_t *e)
{
    const json_t *names = json_object_get(e, "column_names");
    const char *name = json_string_value(json_array_get(names, json_array_size(names) - 1));
    for (size_t i = 0; name && i < x->s->n_fields; i++)
        if (strcasecmp(x->s->fields[i].name, name) == 0) return true;
    return false;
}

/* The n-th select-list item for an integer literal n, else NULL. */
static const json_t *ordinal(const tl_shape *x, const json_t *e)
{
    char *text = tl_js_literal_text(e), *end = NULL;
    long long n = text ? strtoll(text, &end, 10) : 0;
    bool integer = text && !*end && tl_js_is_int(e, n);
    free(text);
    const json_t *list = json_object_get(x->select, "select_list");
    return integer && n >= 1 && (size_t)n <= json_array_size(list)
               ? json_array_get(list, (size_t)n - 1)
               : NULL;
}

/* The expression an ORDER BY key stands for: an ordinal, then a select-list
 * alias (which ORDER BY binds before a column), then itself. A name both an
 * alias and a column is taken only when the two agree. */
const json_t *tl_shape_order_expr(const tl_shape *x, const json_t *e)
{
    const json_t *item = ordinal(x, e);
    if (item) return item;
    bool twice;
    item = aliased(x, e, &twice);
    if (twice) return NULL;
    if (item && tl_shape_is_table_column(x, e) && !tl_js_same_expr(item, e)) return NULL;
    return item ? item : e;
}

/* The expression a GROUP BY key stands for: an ordinal, a column (which
 * GROUP BY binds before an alias), then a select-list alias. */
const json_t *tl_shape_group_expr(const tl_shape *x, const json_t *e)
{
    const json_t *item = ordinal(x, e);
    if (item) return item;
    if (!tl_js_is_class(e, "COLUMN_REF") || tl_shape_is_table_column(x, e)) return e;
    bool twice;
    item = aliased(x, e, &twice);
    return twice ? NULL : item ? item : e;
}

/* CAST('text' AS INTERVAL | TIMESTAMP | TIMESTAMPTZ) written back as SQL,
 * sparing the round trip through json_deserialize_sql; NULL otherwise. */
static char *cast_literal_sql(const json_t *e)
{
    static const char *const types[] = {"INTERVAL", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE", NULL};
    const char *type = tl_js_str(json_object_get(e, "cast_type"), "id");
    const json_t *v = json_object_get(json_object_get(e, "child"), "value");
    bool known = false;
    for (size_t i = 0; types[i]; i++) known |= strcmp(type, types[i]) == 0;
    if (!tl_js_is_class(e, "CAST") || json_is_true(json_object_get(e, "try_cast")) || !known ||
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "VARCHAR") != 0)
        return NULL;
    char *text = tl_js_literal_text(json_object_get(e, "child"));
    char *lit = text ? tl_sql_literal(text) : NULL;
    char *sql = lit ? tl_strdup_printf("CAST(%s AS %s)", lit, type) : NULL;
    free(text);
    free(lit);
    return sql;
}

/* The SELECT of time_bucket's width (and origin) expressions. */
static char *arguments_sql(tl_query_engine *e, const json_t *ch, bool has_origin)
{
    char *w = cast_literal_sql(json_array_get(ch, 0));
    char *o = has_origin ? cast_literal_sql(json_array_get(ch, 2)) : NULL;
    char *sql = NULL;
    if (w && (o || !has_origin)) {
        sql = tl_strdup_printf("SELECT %s%s%s", w, o ? ", " : "", o ? o : "");
    } else {
        json_t *exprs = has_origin ? json_pack("[OO]", json_array_get(ch, 0), json_array_get(ch, 2))
                                   : json_pack("[O]", json_array_get(ch, 0));
        sql = exprs ? tl_sql_select_text(e, exprs) : NULL;
        json_decref(exprs);
    }
    free(w);
    free(o);
    return sql;
}

/* The microseconds of CAST('<n> <unit>' AS INTERVAL), n a positive
 * integer and unit a fixed-length one spelled out ('1 hour', '5 minutes'),
 * as DuckDB reads it; false for anything else (DuckDB evaluates those).
 * Spares a query per routing analysis: the common width costs no engine
 * round trip. */
static bool simple_width(const json_t *e, int64_t *out)
{
    static const struct {
        const char *unit;
        int64_t us;
    } units[] = {{"microsecond", 1},      {"millisecond", 1000},  {"second", 1000000},
                 {"minute", 60000000},    {"hour", 3600000000LL}, {"day", 86400000000LL},
                 {"week", 604800000000LL}};
    if (!tl_js_is_class(e, "CAST") || json_is_true(json_object_get(e, "try_cast")) ||
        strcmp(tl_js_str(json_object_get(e, "cast_type"), "id"), "INTERVAL") != 0)
        return false;
    const json_t *child = json_object_get(e, "child");
    const json_t *v = json_object_get(child, "value");
    const char *s = json_string_value(json_object_get(v, "value"));
    if (!tl_js_is_class(child, "CONSTANT") ||
        strcmp(tl_js_str(json_object_get(v, "type"), "id"), "VARCHAR") != 0 || s == NULL)
        return false;
    while (*s == ' ') s++;
    int64_t n = 0;
    const char *digits = s;
    for (; *s >= '0' && *s <= '9' && s - digits < 9; s++) n = n * 10 + (*s - '0');
    if (s == digits || n <= 0 || *s != ' ') return false;
    while (*s == ' ') s++;
    size_t len = strcspn(s, " ");
    for (const char *t = s + len; *t; t++)
        if (*t != ' ') return false;
    if (len > 1 && (s[len - 1] == 's' || s[len - 1] == 'S')) len--; /* plural */
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].unit) == len && strncasecmp(s, units[i].unit, len) == 0) {
            *out = n * units[i].us;
            return true;
        }
    return false;
}

/* The width of time_bucket `b` in microseconds, as our macro computes it
 * (engine.c), and its origin (the epoch unless given as a timestamp);
 * false for widths with months, non-positive ones, or other third
 * arguments (an offset interval, a time zone). */
bool tl_shape_bucket_geometry(const tl_shape *x, const json_t *b, int64_t *width, int64_t *origin)
{
    const json_t *ch = json_object_get(b, "children");
    bool has_origin = json_array_size(ch) == 3;
    if (json_array_size(ch) == 2 && simple_width(json_array_get(ch, 0), width)) {
        *origin = 0;
        return true;
    }
    char *select = arguments_sql(x->e, ch, has_origin);
    char *sql =
        select ? tl_strdup_printf(
                     "SELECT CASE WHEN typeof(w) = 'INTERVAL' AND datepart('year', w) * 12 + "
                     "datepart('month', w) = 0 AND %s THEN concat_ws(' ', "
                     "(epoch(w) * 1000000)::BIGINT, %s) END FROM (%s) AS c(w%s)",
                     has_origin ? "typeof(o) IN ('TIMESTAMP', 'TIMESTAMP WITH TIME ZONE')" : "true",
                     has_origin ? "epoch_us(o)" : "0", select, has_origin ? ", o" : "")
               : NULL;
    free(select);
    char *v = NULL;
    bool ok = sql && tl_query_scalar_text(x->e, sql, NULL, &v, NULL) == TL_OK && v;
    long long w = 0, o = 0;
    char tail;
    ok = ok && sscanf(v, "%lld %lld%c", &w, &o, &tail) == 2 && w > 0;
    free(sql);
    free(v);
    *width = w;
    *origin = o;
    return ok;
}

/* The clauses around the ORDER BY: one plain lake table, nothing that sees
 * rows across the window's edge. */
bool tl_shape_plain_select(const json_t *select)
{
    const json_t *from = json_object_get(select, "from_table");
    return tl_js_is_type(select, "SELECT_NODE") &&
           json_array_size(json_object_get(json_object_get(select, "cte_map"), "map")) == 0 &&
           tl_js_is_type(from, "BASE_TABLE") && tl_shape_absent(from, "sample") &&
           tl_shape_absent(from, "at_clause") &&
           json_array_size(json_object_get(from, "column_name_alias")) == 0 &&
           tl_shape_absent(select, "sample") && tl_shape_absent(select, "qualify") &&
           strcmp(tl_js_str(select, "aggregate_handling"), "STANDARD_HANDLING") == 0 &&
           !tl_shape_has_class(select, "WINDOW");
}
