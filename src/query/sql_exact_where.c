/* Exact WHEREs (see sql_exact_where.h). */
#include "query/sql_exact_where.h"

#include <stdlib.h>
#include <string.h>

#include "query/sql_plan_json.h"
#include "query/sql_shape.h"

typedef struct where_cols {
    const char *alias, *time, *key; /* key NULL: not a string */
} where_cols;

static bool add_time(tl_scan_filter *f, const json_t *v, int dir, bool strict)
{
    int64_t us;
    if (!tl_sql_literal_time(v, &us)) return false;
    if (strict && (us == INT64_MAX || us == INT64_MIN)) return false;
    if (strict) us += dir > 0 ? 1 : -1; /* whole microseconds: time > v is time >= v + 1 */
    if (dir >= 0 && (!f->has_lo || us > f->lo)) f->has_lo = true, f->lo = us;
    if (dir <= 0 && (!f->has_hi || us < f->hi)) f->has_hi = true, f->hi = us;
    return true;
}

/* values[from...]: string literals, the only keys. */
static bool add_keys(tl_scan_filter *f, const json_t *values, size_t from)
{
    size_t n = json_array_size(values);
    if (f->has_keys || n <= from || (f->keys = calloc(n - from, sizeof *f->keys)) == NULL)
        return false;
    f->has_keys = true;
    for (size_t i = from; i < n; i++) {
        const json_t *v = json_array_get(values, i);
        const json_t *val = json_object_get(v, "value");
        const json_t *text = json_object_get(val, "value");
        if (!tl_js_is_class(v, "CONSTANT") ||
            strcmp(tl_js_str(json_object_get(val, "type"), "id"), "VARCHAR") != 0 ||
            (f->keys[f->n_keys] = tl_js_literal_text(v)) == NULL)
            return false;
        f->n_keys++;
        if (strlen(f->keys[f->n_keys - 1]) != json_string_length(text)) return false; /* a NUL */
    }
    return true;
}

static bool comparison(const char *type, int *dir, bool *strict)
{
    static const struct {
        const char *type;
        int dir;
        bool strict;
    } ops[] = {{"COMPARE_EQUAL", 0, false},
               {"COMPARE_GREATERTHAN", 1, true},
               {"COMPARE_GREATERTHANOREQUALTO", 1, false},
               {"COMPARE_LESSTHAN", -1, true},
               {"COMPARE_LESSTHANOREQUALTO", -1, false}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(type, ops[i].type) == 0) {
            *dir = ops[i].dir;
            *strict = ops[i].strict;
            return true;
        }
    return false;
}

/* Whether e, a conjunct of the WHERE, is a restriction the count knows exactly. */
static bool read_conjunct(const where_cols *c, const json_t *e, tl_scan_filter *f)
{
    const char *type = tl_js_str(e, "type");
    if (strcmp(type, "CONJUNCTION_AND") == 0) {
        size_t i;
        const json_t *ch;
        json_array_foreach(json_object_get(e, "children"), i,
                           ch) if (!read_conjunct(c, ch, f)) return false;
        return true;
    }
    if (strcmp(type, "COMPARE_BETWEEN") == 0)
        return tl_js_names_column(json_object_get(e, "input"), c->alias, c->time) &&
               add_time(f, json_object_get(e, "lower"), 1, false) &&
               add_time(f, json_object_get(e, "upper"), -1, false);
    if (strcmp(type, "COMPARE_IN") == 0) {
        const json_t *ch = json_object_get(e, "children");
        return c->key && tl_js_names_column(json_array_get(ch, 0), c->alias, c->key) &&
               add_keys(f, ch, 1);
    }
    int dir;
    bool strict;
    if (!tl_js_is_class(e, "COMPARISON") || !comparison(type, &dir, &strict)) return false;
    const json_t *l = json_object_get(e, "left"), *r = json_object_get(e, "right");
    for (int side = 0; side < 2; side++) {
        const json_t *col = side ? r : l, *val = side ? l : r;
        if (tl_js_names_column(col, c->alias, c->time))
            return add_time(f, val, side ? -dir : dir, strict);
        if (dir == 0 && c->key && tl_js_names_column(col, c->alias, c->key)) {
            json_t *one = json_pack("[O]", val);
            bool ok = one && add_keys(f, one, 0);
            json_decref(one);
            return ok;
        }
    }
    return false;
}

bool tl_sql_exact_where(const tl_sql_plan *plan, tl_scan_filter *f)
{
    memset(f, 0, sizeof *f);
    const json_t *select = json_object_get(plan->stmt, "node");
    const json_t *where = json_object_get(select, "where_clause");
    const tl_table *t = plan->n_refs == 1 ? plan->refs[0].t : NULL;
    if (t == NULL) return false;
    const tl_contract *ct = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    if (where == NULL || json_is_null(where) || ct->time_index < 0 ||
        s->fields[ct->time_index].type.id != TL_ICE_TIMESTAMPTZ)
        return false;
    const char *alias = tl_js_str(json_object_get(select, "from_table"), "alias");
    where_cols c = {*alias ? alias : plan->refs[0].table, s->fields[ct->time_index].name, NULL};
    if (ct->series_key.len && s->fields[ct->series_index[0]].type.id == TL_ICE_STRING)
        c.key = s->fields[ct->series_index[0]].name;
    if (read_conjunct(&c, where, f)) return true;
    tl_scan_filter_clear(f);
    return false;
}

static bool has_key(const tl_scan_filter *f, const char *key)
{
    for (size_t i = 0; i < f->n_keys; i++)
        if (strcmp(f->keys[i], key) == 0) return true;
    return false;
}

/* Whether a and b select the same rows by time and key. */
static bool same_filter(const tl_scan_filter *a, const tl_scan_filter *b)
{
    if (a->has_lo != b->has_lo || a->has_hi != b->has_hi || a->has_keys != b->has_keys ||
        (a->has_lo && a->lo != b->lo) || (a->has_hi && a->hi != b->hi))
        return false;
    for (size_t i = 0; a->has_keys && i < a->n_keys; i++)
        if (!has_key(b, a->keys[i])) return false;
    for (size_t i = 0; b->has_keys && i < b->n_keys; i++)
        if (!has_key(a, b->keys[i])) return false;
    return true;
}

/* The query's text without its WHERE, rendered by DuckDB; NULL when it cannot. */
static char *render(tl_query_engine *e, const tl_sql_plan *plan)
{
    json_t *stmt = json_deep_copy(plan->stmt);
    json_t *doc = stmt ? json_pack("{s:b, s:[o]}", "error", 0, "statements", stmt) : NULL;
    if (doc == NULL) return NULL;
    json_object_set_new(json_object_get(stmt, "node"), "where_clause", json_null());
    char *text = tl_sql_tree_text(e, doc);
    json_decref(doc);
    return text;
}

tl_status tl_sql_without_exact_where(tl_query_engine *e, const char *query, const tl_sql_plan *plan,
                                     const char **out, tl_error *err)
{
    *out = NULL;
    const json_t *select = json_object_get(plan->stmt, "node");
    const json_t *from = json_object_get(select, "from_table");
    if (plan->query || plan->n_refs != 1 || plan->refs[0].n_filters != 1 ||
        !tl_shape_plain_select(select) || *tl_js_str(from, "catalog_name") ||
        strcmp(tl_js_str(from, "schema_name"), plan->refs[0].schema) != 0 ||
        strcmp(tl_js_str(from, "table_name"), plan->refs[0].table) != 0)
        return TL_OK;
    tl_scan_filter f;
    if (!tl_sql_exact_where(plan, &f)) return TL_OK;
    bool same = same_filter(&f, &plan->refs[0].filters[0]);
    tl_scan_filter_clear(&f);
    if (!same) return TL_OK;
    size_t n = sizeof e->unfiltered / sizeof e->unfiltered[0];
    for (size_t i = 0; i < n; i++)
        if (e->unfiltered[i].query && strcmp(e->unfiltered[i].query, query) == 0) {
            *out = e->unfiltered[i].text;
            return TL_OK;
        }
    char *text = render(e, plan), *key = NULL;
    if (text == NULL) return TL_OK; /* DuckDB cannot render it back: it runs as written */
    if ((key = strdup(query)) == NULL) {
        free(text);
        return tl_error_nomem(err);
    }
    struct tl_query_unfiltered *slot = &e->unfiltered[e->next_unfiltered];
    e->next_unfiltered = (e->next_unfiltered + 1) % n;
    free(slot->query);
    free(slot->text);
    *slot = (struct tl_query_unfiltered){key, text};
    *out = text;
    return TL_OK;
}

void tl_sql_exact_where_cache_free(tl_query_engine *e)
{
    for (size_t i = 0; i < sizeof e->unfiltered / sizeof e->unfiltered[0]; i++) {
        free(e->unfiltered[i].query);
        free(e->unfiltered[i].text);
        e->unfiltered[i] = (struct tl_query_unfiltered){NULL, NULL};
    }
}
