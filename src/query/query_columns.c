#include "query/query_columns.h"

#include "query/sql_plan.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct names {
    const tl_ice_schema *s;
    bool *keep;
    json_t *relations; /* names and aliases of the query's tables and subqueries */
    bool all;
} names;

static const char *str(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

/* First pass: every name a row can be referred to by. */
static void collect_relations(const json_t *node, json_t *set)
{
    if (json_is_array(node)) {
        size_t i;
        const json_t *v;
        json_array_foreach(node, i, v) collect_relations(v, set);
        return;
    }
    if (!json_is_object(node)) return;
    const char *alias = str(node, "alias"), *table = str(node, "table_name");
    if (*alias) json_object_set_new(set, alias, json_true());
    if (*table) json_object_set_new(set, table, json_true());
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)node, k, v) collect_relations(v, set);
}

static void mark_name(names *n, const char *name)
{
    for (size_t i = 0; i < n->s->n_fields; i++)
        if (strcasecmp(n->s->fields[i].name, name) == 0) n->keep[i] = true;
}

static bool is_relation(const names *n, const char *name)
{
    const char *k;
    const json_t *v;
    json_object_foreach(n->relations, k, v) if (strcasecmp(k, name) == 0) return true;
    return false;
}

/* Second pass: every string is a possible column name. */
static void walk(names *n, const json_t *node)
{
    if (n->all) return;
    if (json_is_string(node)) {
        mark_name(n, json_string_value(node));
        return;
    }
    if (json_is_array(node)) {
        size_t i;
        const json_t *v;
        json_array_foreach(node, i, v) walk(n, v);
        return;
    }
    if (!json_is_object(node)) return;
    const char *cls = str(node, "class");
    if (strcmp(cls, "STAR") == 0 || strcmp(cls, "POSITIONAL_REFERENCE") == 0 ||
        strcmp(str(node, "ref_type"), "NATURAL") == 0) {
        n->all = true; /* SELECT *, t.*, COLUMNS(...), #1; NATURAL JOIN on unnamed columns */
        return;
    }
    if (strcmp(cls, "COLUMN_REF") == 0) {
        const json_t *cn = json_object_get(node, "column_names");
        if (json_array_size(cn) == 1 && is_relation(n, json_string_value(json_array_get(cn, 0))))
            n->all = true; /* SELECT t FROM t: the whole row as a struct */
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)node, k, v) walk(n, v);
}

static void keep_all(size_t n, bool *keep)
{
    for (size_t i = 0; i < n; i++) keep[i] = true;
}

void tl_query_columns(tl_query_engine *e, const char *query, const tl_table *t, bool *keep)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const tl_contract *c = &t->contract;
    json_t *doc = NULL; /* the plan's parse, which the engine keeps (sql_plan.h) */
    if (query && tl_sql_syntax_tree(e, query, &doc, NULL) != TL_OK) doc = NULL;
    names n = {s, keep, json_object(), doc == NULL || json_is_true(json_object_get(doc, "error"))};
    for (size_t i = 0; i < s->n_fields; i++) keep[i] = false;
    if (!n.all && n.relations) {
        collect_relations(doc, n.relations);
        walk(&n, json_object_get(doc, "statements"));
    }
    if (n.all || n.relations == NULL) keep_all(s->n_fields, keep);
    json_decref(n.relations);
    json_decref(doc);
    if (c->time_index >= 0) keep[c->time_index] = true;
    for (size_t k = 0; k < c->series_key.len; k++) keep[c->series_index[k]] = true;
    for (size_t i = 0; c->ingest_column && i < s->n_fields; i++)
        if (strcmp(s->fields[i].name, c->ingest_column) == 0) keep[i] = true;
}
