/* Parsing pipeline.json into the model, with every structural problem
 * (fields, ids, references, prefixes, types) recorded at its JSON Pointer.
 * Expressions are checked separately (validate.c), against this model. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RESERVED_PREFIX "__karet"

const char *ktype_name(ktype t)
{
    static const char *const names[] = {"null", "string", "int64",    "float64",
                                        "bool", "date",   "timestamp"};
    return names[t];
}

const char *ktype_sql(ktype t)
{
    static const char *const names[] = {"VARCHAR", "VARCHAR", "BIGINT",
                                        "DOUBLE",  "BOOLEAN", "DATE"};
    return names[t];
}

/* Column types as the config spells them. */
static bool parse_type(const char *s, ktype *out)
{
    static const struct {
        const char *name;
        ktype type;
    } types[] = {{"string", KT_STRING},   {"number", KT_FLOAT64}, {"int64", KT_INT64},
                 {"float64", KT_FLOAT64}, {"bool", KT_BOOL},      {"date", KT_DATE}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(s, types[i].name) == 0) {
            *out = types[i].type;
            return true;
        }
    return false;
}

typedef struct parser {
    kconfig *c;
    kproblems *ps;
    kpath path;
    json_t *ids;       /* every entity id seen: id -> true */
    json_t *table_ids; /* lower-cased table ids */
    bool oom;
} parser;

static bool in_list(const char *key, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(key, *allowed) == 0) return true;
    return false;
}

/* Unknown fields of an object are problems. */
static void check_fields(parser *p, const json_t *obj, const char *const *allowed, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        (void)v;
        if (!in_list(key, allowed))
            kproblem_at(p->ps, &p->path, key, KP_UNKNOWN, "unknown field \"%s\" in %s", key, what);
    }
}

/* obj[key] as a string: NULL when absent (a problem when required) or not a
 * string (always a problem). */
static const char *get_string(parser *p, const json_t *obj, const char *key, bool required,
                              const char *what)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required) kproblem_at(p->ps, &p->path, key, KP_MISSING, "%s has no \"%s\"", what, key);
        return NULL;
    }
    if (!json_is_string(v)) {
        kproblem_at(p->ps, &p->path, key, KP_SCHEMA, "\"%s\" of %s must be a string", key, what);
        return NULL;
    }
    return json_string_value(v);
}

static bool get_bool(parser *p, const json_t *obj, const char *key, bool dflt, const char *what)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) return dflt;
    if (!json_is_boolean(v)) {
        kproblem_at(p->ps, &p->path, key, KP_SCHEMA, "\"%s\" of %s must be true or false", key,
                    what);
        return dflt;
    }
    return json_is_true(v);
}

/* obj[key] as an array; NULL when absent (a problem when required) or not one. */
static const json_t *get_array(parser *p, const json_t *obj, const char *key, bool required,
                               const char *what)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required) kproblem_at(p->ps, &p->path, key, KP_MISSING, "%s has no \"%s\"", what, key);
        return NULL;
    }
    if (!json_is_array(v)) {
        kproblem_at(p->ps, &p->path, key, KP_SCHEMA, "\"%s\" of %s must be an array", key, what);
        return NULL;
    }
    return v;
}

static bool has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return true;
    return false;
}

/* The id of an entity: present, a non-empty string, unique in the config. */
static const char *entity_id(parser *p, const json_t *obj, const char *what)
{
    const char *id = get_string(p, obj, "id", true, what);
    if (id == NULL) return NULL;
    if (id[0] == '\0' || strlen(id) > 200 || has_control(id)) {
        kproblem_at(p->ps, &p->path, "id", KP_SCHEMA,
                    "the id of %s must be 1 to 200 characters without control characters", what);
        return NULL;
    }
    if (json_object_get(p->ids, id)) {
        kproblem_at(p->ps, &p->path, "id", KP_DUPLICATE_ID,
                    "id \"%s\" is used twice (ids are unique across the whole config)", id);
        return NULL;
    }
    if (json_object_set_new(p->ids, id, json_true()) != 0) p->oom = true;
    return id;
}

/* A lake key prefix: not empty, no leading '/', no empty, "." or ".."
 * segment, no control characters, not inside the warehouse. A folder prefix
 * ends with '/'. Returns a message, or NULL when good. */
static const char *prefix_problem(const char *s, bool folder)
{
    size_t len = strlen(s);
    if (len == 0) return "must not be empty";
    if (s[0] == '/') return "must not start with '/' (it is a key inside the lake)";
    if (folder && s[len - 1] != '/') return "must end with '/'";
    if (has_control(s)) return "must not contain control characters";
    if (strncmp(s, "warehouse/", 10) == 0 || strcmp(s, "warehouse") == 0)
        return "must not lie inside warehouse/ (the tables' folder)";
    for (const char *seg = s;;) {
        size_t n = strcspn(seg, "/");
        bool last = seg[n] == '\0';
        if (n == 0 && !last) return "must not contain an empty segment (\"//\")";
        if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return "must not contain a \".\" or \"..\" segment";
        if (last) return NULL;
        seg += n + 1;
    }
}

static bool reserved_name(const char *name)
{
    return strncasecmp(name, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0;
}

/* The display name of a source or table: required, not blank (as the peer). */
static void display_name(parser *p, const json_t *obj, const char *what)
{
    const char *name = get_string(p, obj, "name", true, what);
    if (name == NULL) return;
    const char *c = name;
    while (*c == ' ' || *c == '\t') c++;
    if (*c == '\0')
        kproblem_at(p->ps, &p->path, "name", KP_MISSING, "the name of %s is blank", what);
}

/* An NDJSON path: dot-separated non-empty segments, each optionally followed
 * by [n] indexes. */
static bool valid_json_path(const char *s)
{
    if (*s == '\0') return false;
    for (;;) {
        size_t n = strcspn(s, ".[");
        if (n == 0) return false;
        s += n;
        while (*s == '[') {
            s++;
            if (!isdigit((unsigned char)*s)) return false;
            while (isdigit((unsigned char)*s)) s++;
            if (*s++ != ']') return false;
        }
        if (*s == '\0') return true;
        if (*s != '.') return false;
        s++;
    }
}

static void parse_assertions(parser *p, const json_t *a, kcolumn *col)
{
    static const char *const fields[] = {"not_null", "min", "max", NULL};
    size_t old = kpath_push(&p->path, "assertions");
    if (!json_is_object(a)) {
        kproblem(p->ps, &p->path, KP_SCHEMA, "assertions must be an object");
        kpath_pop(&p->path, old);
        return;
    }
    check_fields(p, a, fields, "assertions");
    if (get_bool(p, a, "not_null", false, "assertions")) col->not_null = true;
    const char *names[] = {"min", "max"};
    for (int i = 0; i < 2; i++) {
        json_t *v = json_object_get(a, names[i]);
        if (v == NULL) continue;
        if (!json_is_number(v)) {
            kproblem_at(p->ps, &p->path, names[i], KP_SCHEMA, "%s must be a number", names[i]);
        } else if (col->type != KT_INT64 && col->type != KT_FLOAT64) {
            kproblem_at(p->ps, &p->path, names[i], KP_SCHEMA,
                        "%s applies to number columns; \"%s\" is %s", names[i],
                        col->name ? col->name : "?", ktype_name(col->type));
        } else if (i == 0) {
            col->has_min = true;
            col->min = json_number_value(v);
        } else {
            col->has_max = true;
            col->max = json_number_value(v);
        }
    }
    if (col->has_min && col->has_max && col->min > col->max)
        kproblem(p->ps, &p->path, KP_SCHEMA, "min is greater than max");
    kpath_pop(&p->path, old);
}

/* A schema: an array of columns. `source` is the format for a source's
 * columns (which may have a path), or -1 for a table's. */
static kcolumn *parse_columns(parser *p, const json_t *arr, int source, size_t *n_out)
{
    static const char *const fields[] = {"name", "type", "path", "nullable", "assertions", NULL};
    size_t n = json_array_size(arr);
    *n_out = 0;
    if (n == 0) {
        kproblem(p->ps, &p->path, KP_SCHEMA, "a schema needs at least one column");
        return NULL;
    }
    kcolumn *cols = calloc(n, sizeof *cols);
    if (cols == NULL) {
        p->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(arr, i);
        kcolumn *col = &cols[i];
        size_t old = kpath_push_index(&p->path, i);
        if (!json_is_object(c)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a column must be an object");
            kpath_pop(&p->path, old);
            continue;
        }
        check_fields(p, c, fields, "a column");
        col->name = get_string(p, c, "name", true, "a column");
        if (col->name && (col->name[0] == '\0' || has_control(col->name))) {
            kproblem_at(p->ps, &p->path, "name", KP_SCHEMA,
                        "a column name must be non-empty, without control characters");
            col->name = NULL;
        } else if (col->name && reserved_name(col->name)) {
            kproblem_at(p->ps, &p->path, "name", KP_SCHEMA,
                        "column names starting with \"%s\" are reserved", RESERVED_PREFIX);
        }
        for (size_t j = 0; col->name && j < i; j++)
            if (cols[j].name && strcasecmp(cols[j].name, col->name) == 0) {
                kproblem_at(p->ps, &p->path, "name", KP_DUPLICATE_ID,
                            "column \"%s\" appears twice in the schema (names are compared "
                            "ignoring case, as SQL does)",
                            col->name);
                break;
            }
        const char *type = get_string(p, c, "type", true, "a column");
        if (type && !parse_type(type, &col->type))
            kproblem_at(p->ps, &p->path, "type", KP_SCHEMA,
                        "unknown column type \"%s\" (string, number, int64, float64, bool or date)",
                        type);
        col->path = get_string(p, c, "path", false, "a column");
        if (col->path && source < 0) {
            kproblem_at(p->ps, &p->path, "path", KP_SCHEMA,
                        "path applies to a source's columns, not a table's");
        } else if (col->path && source == KF_NDJSON && !valid_json_path(col->path)) {
            kproblem_at(p->ps, &p->path, "path", KP_SCHEMA,
                        "\"%s\" is not a path: dot-separated names with optional [n] indexes "
                        "(a.b[0].c)",
                        col->path);
        } else if (col->path && col->path[0] == '\0') {
            kproblem_at(p->ps, &p->path, "path", KP_SCHEMA, "path must not be empty");
        }
        if (!get_bool(p, c, "nullable", true, "a column")) col->not_null = true;
        json_t *a = json_object_get(c, "assertions");
        if (a) parse_assertions(p, a, col);
        kpath_pop(&p->path, old);
    }
    *n_out = n;
    return cols;
}

static void parse_sources(parser *p, const json_t *arr)
{
    static const char *const fields[] = {"id",     "name",          "path_prefix", "format",
                                         "schema", "record_filter", NULL};
    kconfig *c = p->c;
    c->nsources = json_array_size(arr);
    if (c->nsources && (c->sources = calloc(c->nsources, sizeof *c->sources)) == NULL) {
        p->oom = true;
        c->nsources = 0;
        return;
    }
    for (size_t i = 0; i < c->nsources; i++) {
        const json_t *o = json_array_get(arr, i);
        ksource *s = &c->sources[i];
        s->index = i;
        s->json = o;
        size_t old = kpath_push_index(&p->path, i);
        if (!json_is_object(o)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a source container must be an object");
            kpath_pop(&p->path, old);
            continue;
        }
        check_fields(p, o, fields, "a source container");
        s->id = entity_id(p, o, "a source container");
        display_name(p, o, "a source container");
        s->path_prefix = get_string(p, o, "path_prefix", true, "a source container");
        const char *why = s->path_prefix ? prefix_problem(s->path_prefix, true) : NULL;
        if (why) {
            kproblem_at(p->ps, &p->path, "path_prefix", KP_SCHEMA, "path_prefix \"%s\" %s",
                        s->path_prefix, why);
            s->path_prefix = NULL;
        }
        for (size_t j = 0; s->path_prefix && j < i; j++) {
            const char *q = c->sources[j].path_prefix;
            if (q && (strncmp(q, s->path_prefix, strlen(q)) == 0 ||
                      strncmp(s->path_prefix, q, strlen(s->path_prefix)) == 0)) {
                kproblem_at(p->ps, &p->path, "path_prefix", KP_SCHEMA,
                            "path_prefix \"%s\" overlaps \"%s\" of source \"%s\" (no prefix may "
                            "lie inside another)",
                            s->path_prefix, q, c->sources[j].id ? c->sources[j].id : "?");
                break;
            }
        }
        const char *format = get_string(p, o, "format", false, "a source container");
        s->format = KF_CSV;
        if (format && strcmp(format, "ndjson") == 0)
            s->format = KF_NDJSON;
        else if (format && strcmp(format, "csv") != 0)
            kproblem_at(p->ps, &p->path, "format", KP_SCHEMA,
                        "unknown format \"%s\" (csv or ndjson)", format);
        const json_t *schema = get_array(p, o, "schema", true, "a source container");
        if (schema) {
            size_t o2 = kpath_push(&p->path, "schema");
            s->columns = parse_columns(p, schema, (int)s->format, &s->ncolumns);
            kpath_pop(&p->path, o2);
        }
        s->record_filter = json_object_get(o, "record_filter");
        if (s->record_filter && s->format != KF_NDJSON)
            kproblem_at(p->ps, &p->path, "record_filter", KP_SCHEMA,
                        "record_filter applies to ndjson sources only");
        kpath_pop(&p->path, old);
    }
}

/* on_miss: "null", "passthrough" or {"literal": "text"}. */
static void parse_on_miss(parser *p, const json_t *v, kdimension *d)
{
    size_t old = kpath_push(&p->path, "on_miss");
    d->on_miss = KMISS_NULL;
    if (json_is_string(v) && strcmp(json_string_value(v), "null") == 0) {
    } else if (json_is_string(v) && strcmp(json_string_value(v), "passthrough") == 0) {
        d->on_miss = KMISS_PASSTHROUGH;
    } else if (json_is_object(v)) {
        static const char *const fields[] = {"literal", NULL};
        check_fields(p, v, fields, "on_miss");
        d->on_miss = KMISS_LITERAL;
        d->literal = get_string(p, v, "literal", true, "on_miss as an object");
        if (d->literal == NULL) d->literal = "";
    } else {
        kproblem(p->ps, &p->path, KP_SCHEMA,
                 "on_miss must be \"null\", \"passthrough\" or {\"literal\": \"text\"}");
    }
    kpath_pop(&p->path, old);
}

/* An array of strings (non-empty ones when `nonempty`); NULL when not one. */
static const char **string_list(parser *p, const json_t *arr, size_t *n_out, bool nonempty,
                                const char *what)
{
    size_t n = json_array_size(arr);
    const char **out = calloc(n ? n : 1, sizeof *out);
    *n_out = 0;
    if (out == NULL) {
        p->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_string(v) || (nonempty && json_string_length(v) == 0)) {
            size_t old = kpath_push_index(&p->path, i);
            kproblem(p->ps, &p->path, KP_SCHEMA, "%s must be %sstrings", what,
                     nonempty ? "non-empty " : "");
            kpath_pop(&p->path, old);
            continue;
        }
        out[(*n_out)++] = json_string_value(v);
    }
    return out;
}

static void fold_ascii(char *s)
{
    for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* The inline rows: {"patterns": [...], "values": [...], "priority": n}.
 * Exact keys must be unique (after case folding when case-insensitive). */
static void parse_dim_rows(parser *p, const json_t *rows, kdimension *d)
{
    static const char *const fields[] = {"patterns", "values", "priority", NULL};
    json_t *keys = json_object();
    if (keys == NULL) p->oom = true;
    size_t old = kpath_push(&p->path, "rows");
    for (size_t i = 0; keys && i < json_array_size(rows); i++) {
        const json_t *r = json_array_get(rows, i);
        size_t o2 = kpath_push_index(&p->path, i);
        if (!json_is_object(r)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a dimension row must be an object");
            kpath_pop(&p->path, o2);
            continue;
        }
        check_fields(p, r, fields, "a dimension row");
        const json_t *pats = get_array(p, r, "patterns", true, "a dimension row");
        const json_t *vals = get_array(p, r, "values", true, "a dimension row");
        json_t *prio = json_object_get(r, "priority");
        if (prio && !json_is_integer(prio))
            kproblem_at(p->ps, &p->path, "priority", KP_SCHEMA, "priority must be an integer");
        if (vals && json_array_size(vals) != d->nvalues)
            kproblem_at(p->ps, &p->path, "values", KP_SCHEMA,
                        "the row has %zu values for %zu value columns", json_array_size(vals),
                        d->nvalues);
        size_t n = 0;
        if (vals) {
            size_t o3 = kpath_push(&p->path, "values");
            free(string_list(p, vals, &n, false, "values"));
            kpath_pop(&p->path, o3);
        }
        if (pats) {
            size_t o3 = kpath_push(&p->path, "patterns");
            if (json_array_size(pats) == 0)
                kproblem(p->ps, &p->path, KP_SCHEMA, "a row needs at least one pattern");
            const char **list = string_list(p, pats, &n, false, "patterns");
            for (size_t k = 0; list && k < n && d->match == KM_EXACT; k++) {
                char *key = strdup(list[k]);
                if (key == NULL) {
                    p->oom = true;
                    break;
                }
                if (d->case_insensitive) fold_ascii(key);
                if (json_object_get(keys, key))
                    kproblem(p->ps, &p->path, KP_SCHEMA,
                             "key \"%s\" appears twice: exact keys must be unique", list[k]);
                json_object_set_new(keys, key, json_true());
                free(key);
            }
            free(list);
            kpath_pop(&p->path, o3);
        }
        kpath_pop(&p->path, o2);
    }
    kpath_pop(&p->path, old);
    json_decref(keys);
}

/* "rows": inline {values, rows} or a file {path_prefix, key, values,
 * priority_column}. */
static void parse_dim_source(parser *p, const json_t *rows, kdimension *d)
{
    static const char *const inline_fields[] = {"values", "rows", NULL};
    static const char *const file_fields[] = {"path_prefix", "key", "values", "priority_column",
                                              NULL};
    size_t old = kpath_push(&p->path, "rows");
    if (!json_is_object(rows)) {
        kproblem(p->ps, &p->path, KP_SCHEMA,
                 "rows must be {\"values\", \"rows\"} (inline) or {\"path_prefix\", \"key\", "
                 "\"values\"} (a CSV file in the lake)");
        kpath_pop(&p->path, old);
        return;
    }
    bool file = json_object_get(rows, "path_prefix") != NULL;
    check_fields(p, rows, file ? file_fields : inline_fields,
                 file ? "a dimension's file rows" : "a dimension's inline rows");
    const json_t *values = get_array(p, rows, "values", true, "a dimension's rows");
    if (values) {
        size_t o2 = kpath_push(&p->path, "values");
        if (json_array_size(values) == 0)
            kproblem(p->ps, &p->path, KP_SCHEMA, "values needs at least one column name");
        d->value_columns = string_list(p, values, &d->nvalues, true, "value column names");
        for (size_t i = 0; i < d->nvalues; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(d->value_columns[i], d->value_columns[j]) == 0)
                    kproblem(p->ps, &p->path, KP_SCHEMA, "value column \"%s\" is named twice",
                             d->value_columns[i]);
        kpath_pop(&p->path, o2);
    }
    if (file) {
        d->path_prefix = get_string(p, rows, "path_prefix", true, "a dimension's file rows");
        d->key_column = get_string(p, rows, "key", true, "a dimension's file rows");
        d->priority_column = get_string(p, rows, "priority_column", false, "a dimension's rows");
        const char *why = NULL;
        if (d->path_prefix) {
            size_t n = strlen(d->path_prefix);
            bool folder = n && d->path_prefix[n - 1] == '/';
            why = prefix_problem(d->path_prefix, folder);
            if (why == NULL && !folder &&
                (n < 4 || strcasecmp(d->path_prefix + n - 4, ".csv") != 0))
                why = "must name a .csv file or a folder ending with '/'";
        }
        if (why) {
            kproblem_at(p->ps, &p->path, "path_prefix", KP_SCHEMA, "path_prefix \"%s\" %s",
                        d->path_prefix, why);
            d->path_prefix = NULL;
        }
    } else {
        d->rows = get_array(p, rows, "rows", true, "a dimension's inline rows");
        if (d->rows) parse_dim_rows(p, d->rows, d);
    }
    kpath_pop(&p->path, old);
}

static void parse_dims(parser *p, const json_t *arr)
{
    static const char *const fields[] = {"id",      "name", "match", "case_insensitive",
                                         "on_miss", "rows", NULL};
    kconfig *c = p->c;
    c->ndims = json_array_size(arr);
    if (c->ndims && (c->dims = calloc(c->ndims, sizeof *c->dims)) == NULL) {
        p->oom = true;
        c->ndims = 0;
        return;
    }
    for (size_t i = 0; i < c->ndims; i++) {
        const json_t *o = json_array_get(arr, i);
        kdimension *d = &c->dims[i];
        d->index = i;
        d->json = o;
        size_t old = kpath_push_index(&p->path, i);
        if (!json_is_object(o)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a dimension must be an object");
            kpath_pop(&p->path, old);
            continue;
        }
        check_fields(p, o, fields, "a dimension");
        d->id = entity_id(p, o, "a dimension");
        get_string(p, o, "name", false, "a dimension");
        const char *match = get_string(p, o, "match", false, "a dimension");
        d->match = KM_EXACT;
        if (match && strcmp(match, "keyword_substring") == 0)
            d->match = KM_KEYWORD;
        else if (match && strcmp(match, "exact") != 0)
            kproblem_at(p->ps, &p->path, "match", KP_SCHEMA,
                        "unknown match \"%s\" (exact or keyword_substring)", match);
        d->case_insensitive = get_bool(p, o, "case_insensitive", false, "a dimension");
        json_t *miss = json_object_get(o, "on_miss");
        if (miss) parse_on_miss(p, miss, d);
        json_t *rows = json_object_get(o, "rows");
        if (rows == NULL)
            kproblem_at(p->ps, &p->path, "rows", KP_MISSING, "a dimension has no \"rows\"");
        else
            parse_dim_source(p, rows, d);
        kpath_pop(&p->path, old);
    }
}

/* "col", or "day(col)", "month(col)", "year(col)". */
static bool parse_partition_spec(const char *s, char *col, size_t colsize, kpart *out)
{
    static const struct {
        const char *name;
        kpart t;
    } fns[] = {{"day(", KP_DAY}, {"month(", KP_MONTH}, {"year(", KP_YEAR}};
    *out = KP_IDENTITY;
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(fns[i].name);
        size_t len = strlen(s);
        if (strncmp(s, fns[i].name, n) == 0 && len > n + 1 && s[len - 1] == ')') {
            if (len - n - 1 >= colsize) return false;
            memcpy(col, s + n, len - n - 1);
            col[len - n - 1] = '\0';
            *out = fns[i].t;
            return true;
        }
    }
    if (strlen(s) >= colsize) return false;
    strcpy(col, s);
    return true;
}

static void parse_partitions(parser *p, const json_t *arr, ktable *t)
{
    size_t old = kpath_push(&p->path, "partition_keys");
    size_t n = json_array_size(arr);
    if (n > 2) kproblem(p->ps, &p->path, KP_SCHEMA, "at most 2 partition keys (%zu given)", n);
    for (size_t i = 0; i < n && i < 2; i++) {
        json_t *v = json_array_get(arr, i);
        size_t o2 = kpath_push_index(&p->path, i);
        char col[512];
        kpart tr;
        if (!json_is_string(v)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a partition key must be a string");
        } else if (!parse_partition_spec(json_string_value(v), col, sizeof col, &tr)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "partition key too long");
        } else {
            int ci = kcolumns_find(t->columns, t->ncolumns, col);
            if (ci < 0) {
                kproblem(p->ps, &p->path, KP_DANGLING, "partition key \"%s\": no column \"%s\"",
                         json_string_value(v), col);
            } else if (t->columns[ci].type == KT_FLOAT64) {
                kproblem(p->ps, &p->path, KP_SCHEMA,
                         "column \"%s\" is a float: it cannot be a partition key", col);
            } else if (tr != KP_IDENTITY && t->columns[ci].type != KT_DATE) {
                kproblem(p->ps, &p->path, KP_SCHEMA,
                         "day(), month() and year() partition a date column; \"%s\" is %s", col,
                         ktype_name(t->columns[ci].type));
            } else {
                for (size_t j = 0; j < t->npartitions; j++)
                    if (t->partitions[j].column == ci) {
                        kproblem(p->ps, &p->path, KP_SCHEMA, "column \"%s\" is partitioned twice",
                                 col);
                        ci = -1;
                        break;
                    }
                if (ci >= 0)
                    t->partitions[t->npartitions++] = (kpartition){json_string_value(v), ci, tr};
            }
        }
        kpath_pop(&p->path, o2);
    }
    kpath_pop(&p->path, old);
}

static void parse_dedup(parser *p, const json_t *arr, ktable *t)
{
    size_t old = kpath_push(&p->path, "dedup_keys");
    size_t n = json_array_size(arr);
    if (n && (t->dedup = calloc(n, sizeof *t->dedup)) == NULL) p->oom = true;
    for (size_t i = 0; t->dedup && i < n; i++) {
        json_t *v = json_array_get(arr, i);
        size_t o2 = kpath_push_index(&p->path, i);
        int ci =
            json_is_string(v) ? kcolumns_find(t->columns, t->ncolumns, json_string_value(v)) : -1;
        if (!json_is_string(v)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a dedup key must be a column name");
        } else if (ci < 0) {
            kproblem(p->ps, &p->path, KP_DANGLING, "dedup key \"%s\": no such column",
                     json_string_value(v));
        } else {
            bool dup = false;
            for (size_t j = 0; j < t->ndedup; j++) dup |= t->dedup[j] == ci;
            if (dup)
                kproblem(p->ps, &p->path, KP_SCHEMA, "dedup key \"%s\" is given twice",
                         json_string_value(v));
            else
                t->dedup[t->ndedup++] = ci;
        }
        kpath_pop(&p->path, o2);
    }
    kpath_pop(&p->path, old);
}

static bool valid_table_id(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 100) return false;
    for (const char *s = id; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-') return false;
    return true;
}

static void parse_tables(parser *p, const json_t *arr)
{
    static const char *const fields[] = {"id",         "name", "schema", "partition_keys",
                                         "dedup_keys", NULL};
    kconfig *c = p->c;
    c->ntables = json_array_size(arr);
    if (c->ntables && (c->tables = calloc(c->ntables, sizeof *c->tables)) == NULL) {
        p->oom = true;
        c->ntables = 0;
        return;
    }
    for (size_t i = 0; i < c->ntables; i++) {
        const json_t *o = json_array_get(arr, i);
        ktable *t = &c->tables[i];
        t->index = i;
        t->json = o;
        size_t old = kpath_push_index(&p->path, i);
        if (!json_is_object(o)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "an analytic table must be an object");
            kpath_pop(&p->path, old);
            continue;
        }
        check_fields(p, o, fields, "an analytic table");
        t->id = entity_id(p, o, "an analytic table");
        if (t->id && !valid_table_id(t->id)) {
            kproblem_at(p->ps, &p->path, "id", KP_SCHEMA,
                        "table id \"%s\" names a Timelake table: use 1 to 100 of A-Z a-z 0-9 _ -",
                        t->id);
            t->id = NULL;
        } else if (t->id) {
            char lower[128];
            size_t n = strlen(t->id);
            for (size_t k = 0; k <= n; k++) lower[k] = (char)tolower((unsigned char)t->id[k]);
            if (json_object_get(p->table_ids, lower))
                kproblem_at(p->ps, &p->path, "id", KP_DUPLICATE_ID,
                            "table id \"%s\" differs from another only in case (SQL folds case)",
                            t->id);
            else if (json_object_set_new(p->table_ids, lower, json_true()) != 0)
                p->oom = true;
        }
        display_name(p, o, "an analytic table");
        const json_t *schema = get_array(p, o, "schema", true, "an analytic table");
        if (schema) {
            size_t o2 = kpath_push(&p->path, "schema");
            t->columns = parse_columns(p, schema, -1, &t->ncolumns);
            kpath_pop(&p->path, o2);
        }
        const json_t *parts = get_array(p, o, "partition_keys", false, "an analytic table");
        if (parts) parse_partitions(p, parts, t);
        const json_t *dedup = get_array(p, o, "dedup_keys", false, "an analytic table");
        if (dedup) parse_dedup(p, dedup, t);
        kpath_pop(&p->path, old);
    }
}

static void parse_mapping_columns(parser *p, const json_t *arr, kmapping *m)
{
    static const char *const fields[] = {"name", "expr", NULL};
    size_t n = json_array_size(arr);
    if (n && (m->columns = calloc(n, sizeof *m->columns)) == NULL) {
        p->oom = true;
        return;
    }
    size_t old = kpath_push(&p->path, "columns");
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(arr, i);
        kmapcol *mc = &m->columns[m->ncolumns];
        size_t o2 = kpath_push_index(&p->path, i);
        if (!json_is_object(o)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a mapping column must be an object");
            kpath_pop(&p->path, o2);
            continue;
        }
        check_fields(p, o, fields, "a mapping column");
        mc->name = get_string(p, o, "name", true, "a mapping column");
        mc->expr = json_object_get(o, "expr");
        mc->table_column = -1;
        if (mc->expr == NULL)
            kproblem_at(p->ps, &p->path, "expr", KP_MISSING, "a mapping column has no \"expr\"");
        if (mc->name && m->table) {
            mc->table_column = kcolumns_find(m->table->columns, m->table->ncolumns, mc->name);
            if (mc->table_column < 0)
                kproblem_at(p->ps, &p->path, "name", KP_DANGLING,
                            "table \"%s\" has no column \"%s\"", m->table->id, mc->name);
        }
        for (size_t j = 0; mc->name && j < m->ncolumns; j++)
            if (m->columns[j].name && strcmp(m->columns[j].name, mc->name) == 0) {
                kproblem_at(p->ps, &p->path, "name", KP_DUPLICATE_ID,
                            "column \"%s\" is mapped twice", mc->name);
                mc->table_column = -1;
                break;
            }
        m->ncolumns++;
        kpath_pop(&p->path, o2);
    }
    kpath_pop(&p->path, old);
}

static void parse_mappings(parser *p, const json_t *arr)
{
    static const char *const fields[] = {
        "id", "name", "source_container_id", "analytic_table_id", "columns", "where", NULL};
    kconfig *c = p->c;
    c->nmappings = json_array_size(arr);
    if (c->nmappings && (c->mappings = calloc(c->nmappings, sizeof *c->mappings)) == NULL) {
        p->oom = true;
        c->nmappings = 0;
        return;
    }
    for (size_t i = 0; i < c->nmappings; i++) {
        const json_t *o = json_array_get(arr, i);
        kmapping *m = &c->mappings[i];
        m->index = i;
        m->json = o;
        size_t old = kpath_push_index(&p->path, i);
        if (!json_is_object(o)) {
            kproblem(p->ps, &p->path, KP_SCHEMA, "a mapping must be an object");
            kpath_pop(&p->path, old);
            continue;
        }
        check_fields(p, o, fields, "a mapping");
        m->id = entity_id(p, o, "a mapping");
        get_string(p, o, "name", false, "a mapping");
        const char *sid = get_string(p, o, "source_container_id", true, "a mapping");
        const char *tid = get_string(p, o, "analytic_table_id", true, "a mapping");
        for (size_t k = 0; sid && k < c->nsources; k++)
            if (c->sources[k].id && strcmp(c->sources[k].id, sid) == 0) m->source = &c->sources[k];
        for (size_t k = 0; tid && k < c->ntables; k++)
            if (c->tables[k].id && strcmp(c->tables[k].id, tid) == 0) m->table = &c->tables[k];
        if (sid && m->source == NULL)
            kproblem_at(p->ps, &p->path, "source_container_id", KP_DANGLING,
                        "no source container \"%s\"", sid);
        if (tid && m->table == NULL)
            kproblem_at(p->ps, &p->path, "analytic_table_id", KP_DANGLING,
                        "no analytic table \"%s\"", tid);
        const json_t *cols = get_array(p, o, "columns", true, "a mapping");
        if (cols) parse_mapping_columns(p, cols, m);
        m->where = json_object_get(o, "where");
        kpath_pop(&p->path, old);
    }
}

/* The section `key` of the root, parsed by fn. */
static void section(parser *p, const json_t *root, const char *key, bool required,
                    void (*fn)(parser *, const json_t *))
{
    const json_t *arr = get_array(p, root, key, required, "the config");
    if (arr == NULL) return;
    size_t old = kpath_push(&p->path, key);
    fn(p, arr);
    kpath_pop(&p->path, old);
}

bool kconfig_parse(const json_t *root, kconfig *out, kproblems *ps)
{
    static const char *const fields[] = {"version",    "name",     "source_containers",
                                         "dimensions", "mappings", "analytic_tables",
                                         "layout",     NULL};
    memset(out, 0, sizeof *out);
    parser p = {.c = out, .ps = ps, .ids = json_object(), .table_ids = json_object()};
    if (p.ids == NULL || p.table_ids == NULL) {
        json_decref(p.ids);
        json_decref(p.table_ids);
        return false;
    }
    out->root = json_incref((json_t *)root);
    if (!json_is_object(root)) {
        kproblem(ps, &p.path, KP_SCHEMA, "a pipeline config must be a JSON object");
    } else {
        check_fields(&p, root, fields, "the config");
        json_t *version = json_object_get(root, "version");
        if (version == NULL)
            kproblem_at(ps, &p.path, "version", KP_MISSING, "the config has no \"version\" (1)");
        else if (!json_is_integer(version) || json_integer_value(version) != 1)
            kproblem_at(ps, &p.path, "version", KP_SCHEMA, "version must be 1");
        get_string(&p, root, "name", false, "the config");
        json_t *layout = json_object_get(root, "layout");
        if (layout && !json_is_object(layout))
            kproblem_at(ps, &p.path, "layout", KP_SCHEMA, "layout must be an object");
        /* Tables before mappings, which refer to them; sources first for prefixes. */
        section(&p, root, "source_containers", true, parse_sources);
        section(&p, root, "dimensions", true, parse_dims);
        section(&p, root, "analytic_tables", true, parse_tables);
        section(&p, root, "mappings", true, parse_mappings);
    }
    json_decref(p.ids);
    json_decref(p.table_ids);
    return !p.oom && !ps->oom;
}

void kconfig_free(kconfig *c)
{
    for (size_t i = 0; i < c->nsources; i++) free(c->sources[i].columns);
    for (size_t i = 0; i < c->ndims; i++) free(c->dims[i].value_columns);
    for (size_t i = 0; i < c->nmappings; i++) free(c->mappings[i].columns);
    for (size_t i = 0; i < c->ntables; i++) {
        free(c->tables[i].columns);
        free(c->tables[i].dedup);
    }
    free(c->sources);
    free(c->dims);
    free(c->mappings);
    free(c->tables);
    json_decref(c->root);
    memset(c, 0, sizeof *c);
}

const ksource *kconfig_source(const kconfig *c, const char *id)
{
    for (size_t i = 0; i < c->nsources; i++)
        if (c->sources[i].id && strcmp(c->sources[i].id, id) == 0) return &c->sources[i];
    return NULL;
}

const kdimension *kconfig_dim(const kconfig *c, const char *id)
{
    for (size_t i = 0; i < c->ndims; i++)
        if (c->dims[i].id && strcmp(c->dims[i].id, id) == 0) return &c->dims[i];
    return NULL;
}

const ktable *kconfig_table(const kconfig *c, const char *id)
{
    for (size_t i = 0; i < c->ntables; i++)
        if (c->tables[i].id && strcmp(c->tables[i].id, id) == 0) return &c->tables[i];
    return NULL;
}

size_t kmapping_outputs(const kmapping *m, kcolumn *out)
{
    size_t n = 0;
    for (size_t i = 0; m->table && i < m->ncolumns; i++)
        if (m->columns[i].table_column >= 0)
            out[n++] = m->table->columns[m->columns[i].table_column];
    return n;
}

int kcolumns_find(const kcolumn *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].name && strcmp(cols[i].name, name) == 0) return (int)i;
    return -1;
}
