#include "formats/avro/avro_schema.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/json_text.h"
#include "formats/avro/avro_names.h"

typedef struct tl_avro_parser {
    tl_avro_schema *schema;
    tl_avro_names named; /* full name -> named type */
    tl_error *err;
} tl_avro_parser;

static const char *const tl_avro_kind_names[] = {
    [TL_AVRO_NULL] = "null",   [TL_AVRO_BOOLEAN] = "boolean", [TL_AVRO_INT] = "int",
    [TL_AVRO_LONG] = "long",   [TL_AVRO_FLOAT] = "float",     [TL_AVRO_DOUBLE] = "double",
    [TL_AVRO_BYTES] = "bytes", [TL_AVRO_STRING] = "string",   [TL_AVRO_RECORD] = "record",
    [TL_AVRO_ENUM] = "enum",   [TL_AVRO_ARRAY] = "array",     [TL_AVRO_MAP] = "map",
    [TL_AVRO_UNION] = "union", [TL_AVRO_FIXED] = "fixed",
};

const char *tl_avro_kind_name(tl_avro_kind kind)
{
    if ((unsigned)kind > TL_AVRO_FIXED) return "?";
    return tl_avro_kind_names[kind];
}

static bool tl_avro_primitive_kind(const char *name, tl_avro_kind *out)
{
    for (int k = TL_AVRO_NULL; k <= TL_AVRO_STRING; k++) {
        if (strcmp(name, tl_avro_kind_names[k]) == 0) {
            *out = (tl_avro_kind)k;
            return true;
        }
    }
    return false;
}

/* Avro names: [A-Za-z_][A-Za-z0-9_]*. Bytes >= 0x80 are let through so that
 * the Unicode letters other implementations accept are not rejected. */
static bool tl_avro_valid_name_part(const char *s, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
        if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

static bool tl_avro_valid_fullname(const char *s)
{
    const char *dot;
    while ((dot = strchr(s, '.')) != NULL) {
        if (!tl_avro_valid_name_part(s, (size_t)(dot - s))) return false;
        s = dot + 1;
    }
    return tl_avro_valid_name_part(s, strlen(s));
}

static tl_avro_type *tl_avro_new_node(tl_avro_parser *ps, tl_avro_kind kind)
{
    tl_avro_schema *s = ps->schema;
    if (TL_GROW(s->nodes, s->cap_nodes, s->n_nodes + 1, 16) != 0) return NULL;
    tl_avro_type *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->kind = kind;
    s->nodes[s->n_nodes++] = t;
    return t;
}

/* A name reference resolves in the enclosing namespace first, then as written. */
static tl_avro_type *tl_avro_resolve(tl_avro_parser *ps, const char *name, const char *ns)
{
    if (ns && *ns && strchr(name, '.') == NULL) {
        size_t n = strlen(ns) + strlen(name) + 2;
        char *full = malloc(n);
        if (full == NULL) return NULL;
        snprintf(full, n, "%s.%s", ns, name);
        tl_avro_type *t = tl_avro_names_get(&ps->named, full);
        free(full);
        if (t) return t;
    }
    return tl_avro_names_get(&ps->named, name);
}

/* Copies every key of `obj` not listed in `skip` (NULL-terminated) into *out. */
static tl_status tl_avro_copy_attrs(tl_avro_parser *ps, json_t *obj, const char *const *skip,
                                    json_t **out)
{
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value)
    {
        bool skipped = false;
        for (const char *const *s = skip; *s; s++) skipped = skipped || strcmp(key, *s) == 0;
        if (skipped) continue;
        if (*out == NULL && (*out = json_object()) == NULL) return tl_error_nomem(ps->err);
        if (json_object_set(*out, key, value) != 0) return tl_error_nomem(ps->err);
    }
    return TL_OK;
}

static tl_status tl_avro_parse_type(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                    tl_avro_type **out);

static size_t tl_avro_add_sizes(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t tl_avro_fixed_min_size(tl_avro_kind kind)
{
    switch (kind) {
    case TL_AVRO_NULL:
        return 0;
    case TL_AVRO_FLOAT:
        return 4;
    case TL_AVRO_DOUBLE:
        return 8;
    default:
        return 1; /* one byte of varint, boolean, count or branch index */
    }
}

/* Sets name, namespace_ and fullname of a named type and registers it. */
static tl_status tl_avro_parse_name(tl_avro_parser *ps, json_t *j, const char *ns, tl_avro_type *t)
{
    const char *name = json_string_value(json_object_get(j, "name"));
    json_t *ns_json = json_object_get(j, "namespace");
    if (name == NULL)
        return tl_error_set(ps->err, TL_ERR_INVALID, "%s without a string \"name\"",
                            tl_avro_kind_name(t->kind));
    if (ns_json && !json_is_string(ns_json) && !json_is_null(ns_json))
        return tl_error_set(ps->err, TL_ERR_INVALID, "type \"%s\": \"namespace\" is not a string",
                            name);
    const char *own_ns = json_string_value(ns_json);
    t->name = strdup(name);
    if (own_ns && (t->namespace_ = strdup(own_ns)) == NULL) return tl_error_nomem(ps->err);
    if (strchr(name, '.') == NULL) {
        const char *use = ns_json ? own_ns : ns;
        size_t n = (use ? strlen(use) : 0) + strlen(name) + 2;
        if ((t->fullname = malloc(n)) != NULL)
            snprintf(t->fullname, n, "%s%s%s", use && *use ? use : "", use && *use ? "." : "",
                     name);
    } else {
        t->fullname = strdup(name);
    }
    if (t->name == NULL || t->fullname == NULL) return tl_error_nomem(ps->err);
    if (!tl_avro_valid_fullname(t->fullname))
        return tl_error_set(ps->err, TL_ERR_INVALID, "invalid type name \"%s\"", t->fullname);
    tl_avro_kind prim;
    if (tl_avro_primitive_kind(t->fullname, &prim))
        return tl_error_set(ps->err, TL_ERR_INVALID, "type name \"%s\" redefines a primitive",
                            t->fullname);
    int rc = tl_avro_names_put(&ps->named, t->fullname, t);
    if (rc < 0) return tl_error_nomem(ps->err);
    if (rc > 0)
        return tl_error_set(ps->err, TL_ERR_INVALID, "type \"%s\" is defined twice", t->fullname);
    t->named_index = ps->schema->n_named++;
    return TL_OK;
}

/* The namespace that names inside the named type `t` are resolved in. */
static char *tl_avro_inner_namespace(const tl_avro_type *t)
{
    const char *dot = strrchr(t->fullname, '.');
    return dot ? strndup(t->fullname, (size_t)(dot - t->fullname)) : strdup("");
}

static tl_status tl_avro_parse_field(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                     tl_avro_field *f)
{
    static const char *const skip[] = {"name", "type", "default", NULL};
    if (!json_is_object(j)) return tl_error_set(ps->err, TL_ERR_INVALID, "field is not an object");
    const char *name = json_string_value(json_object_get(j, "name"));
    if (name == NULL) return tl_error_set(ps->err, TL_ERR_INVALID, "field without a \"name\"");
    if ((f->name = strdup(name)) == NULL) return tl_error_nomem(ps->err);
    if (!tl_avro_valid_name_part(name, strlen(name)))
        return tl_error_set(ps->err, TL_ERR_INVALID, "invalid field name \"%s\"", name);
    json_t *type = json_object_get(j, "type");
    if (type == NULL)
        return tl_error_set(ps->err, TL_ERR_INVALID, "field \"%s\" without a \"type\"", name);
    tl_status st = tl_avro_parse_type(ps, type, ns, depth + 1, &f->type);
    if (st != TL_OK) {
        tl_error_prefix(ps->err, "field \"%s\"", name);
        return st;
    }
    json_t *def = json_object_get(j, "default");
    if (def) f->default_value = json_incref(def);
    TL_TRY(tl_avro_copy_attrs(ps, j, skip, &f->attrs));
    json_t *id = f->attrs ? json_object_get(f->attrs, "field-id") : NULL;
    if (json_is_integer(id) && json_integer_value(id) >= INT32_MIN &&
        json_integer_value(id) <= INT32_MAX) {
        f->has_field_id = true;
        f->field_id = (int32_t)json_integer_value(id);
    }
    return TL_OK;
}

static tl_status tl_avro_parse_record(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                      tl_avro_type *t)
{
    static const char *const skip[] = {"type", "name", "namespace", "fields", NULL};
    TL_TRY(tl_avro_parse_name(ps, j, ns, t));
    json_t *fields = json_object_get(j, "fields");
    if (!json_is_array(fields))
        return tl_error_set(ps->err, TL_ERR_INVALID, "record \"%s\" without a \"fields\" array",
                            t->fullname);
    size_t n = json_array_size(fields);
    if (n && (t->fields = calloc(n, sizeof *t->fields)) == NULL) return tl_error_nomem(ps->err);
    char *inner = tl_avro_inner_namespace(t);
    if (inner == NULL) return tl_error_nomem(ps->err);
    tl_avro_names seen = {0};
    tl_status st = TL_OK;
    for (size_t i = 0; i < n && st == TL_OK; i++) {
        t->n_fields = i + 1; /* so a failure frees what was set */
        st = tl_avro_parse_field(ps, json_array_get(fields, i), inner, depth, &t->fields[i]);
        int rc = st == TL_OK ? tl_avro_names_put(&seen, t->fields[i].name, t) : 0;
        if (rc < 0) st = tl_error_nomem(ps->err);
        if (rc > 0)
            st = tl_error_set(ps->err, TL_ERR_INVALID, "field \"%s\" appears twice",
                              t->fields[i].name);
    }
    tl_avro_names_free(&seen);
    free(inner);
    if (st != TL_OK) {
        tl_error_prefix(ps->err, "record \"%s\"", t->fullname);
        return st;
    }
    for (size_t i = 0; i < n; i++)
        t->min_size = tl_avro_add_sizes(t->min_size, t->fields[i].type->min_size);
    return tl_avro_copy_attrs(ps, j, skip, &t->attrs);
}

static tl_status tl_avro_parse_enum(tl_avro_parser *ps, json_t *j, const char *ns, tl_avro_type *t)
{
    static const char *const skip[] = {"type", "name", "namespace", "symbols", NULL};
    TL_TRY(tl_avro_parse_name(ps, j, ns, t));
    json_t *symbols = json_object_get(j, "symbols");
    if (!json_is_array(symbols))
        return tl_error_set(ps->err, TL_ERR_INVALID, "enum \"%s\" without a \"symbols\" array",
                            t->fullname);
    size_t n = json_array_size(symbols);
    if (n && (t->symbols = calloc(n, sizeof *t->symbols)) == NULL) return tl_error_nomem(ps->err);
    tl_avro_names seen = {0};
    tl_status st = TL_OK;
    for (size_t i = 0; i < n && st == TL_OK; i++) {
        const char *sym = json_string_value(json_array_get(symbols, i));
        if (sym == NULL || !tl_avro_valid_name_part(sym, strlen(sym))) {
            st = tl_error_set(ps->err, TL_ERR_INVALID, "enum \"%s\": invalid symbol %zu",
                              t->fullname, i);
        } else if ((t->symbols[i] = strdup(sym)) == NULL) {
            st = tl_error_nomem(ps->err);
        } else {
            t->n_symbols = i + 1;
            int rc = tl_avro_names_put(&seen, t->symbols[i], t);
            if (rc < 0) st = tl_error_nomem(ps->err);
            if (rc > 0)
                st = tl_error_set(ps->err, TL_ERR_INVALID, "enum \"%s\": symbol \"%s\" twice",
                                  t->fullname, sym);
        }
    }
    tl_avro_names_free(&seen);
    if (st != TL_OK) return st;
    return tl_avro_copy_attrs(ps, j, skip, &t->attrs);
}

static tl_status tl_avro_parse_fixed(tl_avro_parser *ps, json_t *j, const char *ns, tl_avro_type *t)
{
    static const char *const skip[] = {"type", "name", "namespace", "size", NULL};
    TL_TRY(tl_avro_parse_name(ps, j, ns, t));
    json_t *size = json_object_get(j, "size");
    if (!json_is_integer(size) || json_integer_value(size) < 0 ||
        json_integer_value(size) > INT32_MAX)
        return tl_error_set(ps->err, TL_ERR_INVALID, "fixed \"%s\" without a valid \"size\"",
                            t->fullname);
    t->fixed_size = (size_t)json_integer_value(size);
    t->min_size = t->fixed_size;
    return tl_avro_copy_attrs(ps, j, skip, &t->attrs);
}

/* Unions may not hold two branches of one unnamed type or one name. */
static const char *tl_avro_branch_key(const tl_avro_type *t)
{
    return t->fullname ? t->fullname : tl_avro_kind_name(t->kind);
}

static tl_status tl_avro_parse_union(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                     tl_avro_type *t)
{
    size_t n = json_array_size(j);
    if (n && (t->branches = calloc(n, sizeof *t->branches)) == NULL) return tl_error_nomem(ps->err);
    tl_avro_names seen = {0};
    tl_status st = TL_OK;
    for (size_t i = 0; i < n && st == TL_OK; i++) {
        st = tl_avro_parse_type(ps, json_array_get(j, i), ns, depth + 1, &t->branches[i]);
        if (st != TL_OK) break;
        t->n_branches = i + 1;
        const char *key = tl_avro_branch_key(t->branches[i]);
        int rc = tl_avro_names_put(&seen, key, t);
        if (t->branches[i]->kind == TL_AVRO_UNION)
            st = tl_error_set(ps->err, TL_ERR_INVALID, "union directly inside a union");
        else if (rc < 0)
            st = tl_error_nomem(ps->err);
        else if (rc > 0)
            st = tl_error_set(ps->err, TL_ERR_INVALID, "union has two \"%s\" branches", key);
    }
    tl_avro_names_free(&seen);
    t->min_size = 1;
    return st;
}

static tl_status tl_avro_parse_container(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                         tl_avro_type *t)
{
    static const char *const skip_array[] = {"type", "items", NULL};
    static const char *const skip_map[] = {"type", "values", NULL};
    const char *key = t->kind == TL_AVRO_ARRAY ? "items" : "values";
    json_t *inner = json_object_get(j, key);
    if (inner == NULL)
        return tl_error_set(ps->err, TL_ERR_INVALID, "%s without \"%s\"",
                            tl_avro_kind_name(t->kind), key);
    TL_TRY(tl_avro_parse_type(ps, inner, ns, depth + 1, &t->items));
    t->min_size = 1;
    return tl_avro_copy_attrs(ps, j, t->kind == TL_AVRO_ARRAY ? skip_array : skip_map, &t->attrs);
}

static tl_status tl_avro_parse_object(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                      tl_avro_type **out)
{
    static const char *const skip_prim[] = {"type", NULL};
    const char *type = json_string_value(json_object_get(j, "type"));
    if (type == NULL)
        return tl_error_set(ps->err, TL_ERR_INVALID, "type object without a string \"type\"");
    tl_avro_kind kind;
    bool prim = tl_avro_primitive_kind(type, &kind);
    if (!prim) {
        static const char *const complex[] = {"record", "enum", "array", "map", "fixed", "error"};
        static const tl_avro_kind kinds[] = {TL_AVRO_RECORD, TL_AVRO_ENUM,  TL_AVRO_ARRAY,
                                             TL_AVRO_MAP,    TL_AVRO_FIXED, TL_AVRO_RECORD};
        size_t i = 0;
        while (i < 6 && strcmp(type, complex[i]) != 0) i++;
        if (i == 6) {
            /* {"type": "SomeName"} refers to a named type defined earlier. */
            if ((*out = tl_avro_resolve(ps, type, ns)) != NULL) return TL_OK;
            return tl_error_set(ps->err, TL_ERR_INVALID, "unknown type \"%s\"", type);
        }
        kind = kinds[i];
    }
    tl_avro_type *t = tl_avro_new_node(ps, kind);
    if (t == NULL) return tl_error_nomem(ps->err);
    *out = t;
    switch (kind) {
    case TL_AVRO_RECORD:
        TL_TRY(tl_avro_parse_record(ps, j, ns, depth, t));
        break;
    case TL_AVRO_ENUM:
        TL_TRY(tl_avro_parse_enum(ps, j, ns, t));
        break;
    case TL_AVRO_FIXED:
        TL_TRY(tl_avro_parse_fixed(ps, j, ns, t));
        break;
    case TL_AVRO_ARRAY:
    case TL_AVRO_MAP:
        TL_TRY(tl_avro_parse_container(ps, j, ns, depth, t));
        break;
    default:
        t->min_size = tl_avro_fixed_min_size(kind);
        TL_TRY(tl_avro_copy_attrs(ps, j, skip_prim, &t->attrs));
    }
    t->logical_type = t->attrs ? json_string_value(json_object_get(t->attrs, "logicalType")) : NULL;
    return TL_OK;
}

static tl_status tl_avro_parse_type(tl_avro_parser *ps, json_t *j, const char *ns, int depth,
                                    tl_avro_type **out)
{
    if (depth > TL_AVRO_MAX_DEPTH)
        return tl_error_set(ps->err, TL_ERR_INVALID, "schema nested deeper than %d levels",
                            TL_AVRO_MAX_DEPTH);
    if (json_is_string(j)) {
        const char *name = json_string_value(j);
        tl_avro_kind kind;
        if (tl_avro_primitive_kind(name, &kind)) {
            tl_avro_type *t = tl_avro_new_node(ps, kind);
            if (t == NULL) return tl_error_nomem(ps->err);
            t->min_size = tl_avro_fixed_min_size(kind);
            *out = t;
            return TL_OK;
        }
        if ((*out = tl_avro_resolve(ps, name, ns)) != NULL) return TL_OK;
        return tl_error_set(ps->err, TL_ERR_INVALID, "unknown type \"%s\"", name);
    }
    if (json_is_array(j)) {
        tl_avro_type *t = tl_avro_new_node(ps, TL_AVRO_UNION);
        if (t == NULL) return tl_error_nomem(ps->err);
        *out = t;
        return tl_avro_parse_union(ps, j, ns, depth, t);
    }
    if (json_is_object(j)) return tl_avro_parse_object(ps, j, ns, depth, out);
    return tl_error_set(ps->err, TL_ERR_INVALID, "a type must be a string, array or object");
}

tl_status tl_avro_schema_parse(const char *json, size_t len, tl_avro_schema **out, tl_error *err)
{
    *out = NULL;
    json_error_t jerr;
    bool nomem;
    json_t *root =
        tl_json_loadb(json, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr, &nomem);
    if (nomem) return tl_error_nomem(err);
    if (root == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "schema is not valid JSON: %s (line %d)",
                            jerr.text, jerr.line);
    tl_avro_schema *s = calloc(1, sizeof *s);
    if (s == NULL) {
        json_decref(root);
        return tl_error_nomem(err);
    }
    tl_avro_parser ps = {s, {0}, err};
    tl_status st = tl_avro_parse_type(&ps, root, "", 0, &s->root);
    tl_avro_names_free(&ps.named);
    json_decref(root);
    if (st != TL_OK) {
        tl_avro_schema_free(s);
        tl_error_prefix(err, "avro schema");
        return st;
    }
    *out = s;
    return TL_OK;
}

static void tl_avro_type_free(tl_avro_type *t)
{
    free(t->name);
    free(t->namespace_);
    free(t->fullname);
    json_decref(t->attrs);
    for (size_t i = 0; i < t->n_fields; i++) {
        free(t->fields[i].name);
        json_decref(t->fields[i].default_value);
        json_decref(t->fields[i].attrs);
    }
    free(t->fields);
    for (size_t i = 0; i < t->n_symbols; i++) free(t->symbols[i]);
    free(t->symbols);
    free(t->branches);
    free(t);
}

void tl_avro_schema_free(tl_avro_schema *schema)
{
    if (schema == NULL) return;
    if (schema->shared) {
        tl_avro_schema_release(schema);
        return;
    }
    free(schema->printed);
    for (size_t i = 0; i < schema->n_nodes; i++) tl_avro_type_free(schema->nodes[i]);
    free(schema->nodes);
    free(schema);
}

const tl_avro_field *tl_avro_field_by_name(const tl_avro_type *record, const char *name)
{
    if (record == NULL || record->kind != TL_AVRO_RECORD) return NULL;
    for (size_t i = 0; i < record->n_fields; i++)
        if (strcmp(record->fields[i].name, name) == 0) return &record->fields[i];
    return NULL;
}

const tl_avro_field *tl_avro_field_by_id(const tl_avro_type *record, int32_t id)
{
    if (record == NULL || record->kind != TL_AVRO_RECORD) return NULL;
    for (size_t i = 0; i < record->n_fields; i++)
        if (record->fields[i].has_field_id && record->fields[i].field_id == id)
            return &record->fields[i];
    return NULL;
}

bool tl_avro_type_int_attr(const tl_avro_type *type, const char *key, int64_t *out)
{
    json_t *v = type && type->attrs ? json_object_get(type->attrs, key) : NULL;
    if (!json_is_integer(v)) return false;
    *out = json_integer_value(v);
    return true;
}
