/* Schemas in their JSON form (table metadata and the "schema" key of manifests). */
#include "iceberg/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/json_text.h"
#include "iceberg/metadata_json.h"

static tl_status type_from_json(const json_t *t, const char *where, int depth, tl_ice_field *f,
                                tl_error *err);

static tl_status children_alloc(tl_ice_field *f, size_t n, tl_error *err)
{
    f->children = calloc(n ? n : 1, sizeof *f->children);
    return f->children ? TL_OK : tl_error_nomem(err);
}

/* One child of a nested type: a struct field, a list element or a map key/value. */
static tl_status child_from_json(const json_t *j, const char *name, const char *id_key,
                                 const char *required_key, const char *type_key, const char *where,
                                 int depth, tl_ice_field *f, tl_error *err)
{
    char here[200];
    snprintf(here, sizeof here, "%s, %s", where, name);
    f->name = strdup(name);
    if (f->name == NULL) return tl_error_nomem(err);
    TL_TRY(tl_ice_json_i32(j, id_key, true, where, &f->id, NULL, err));
    f->required = true; /* a map key is always required */
    if (required_key) TL_TRY(tl_ice_json_bool(j, required_key, true, where, &f->required, err));
    json_t *t = json_object_get(j, type_key);
    if (t == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "%s: required key \"%s\" is missing", where,
                            type_key);
    return type_from_json(t, here, depth + 1, f, err);
}

static tl_status field_from_json(const json_t *f, const char *schema_where, size_t index, int depth,
                                 tl_ice_field *out, tl_error *err);

static tl_status struct_from_json(const json_t *t, const char *where, int depth, tl_ice_field *f,
                                  tl_error *err)
{
    json_t *fields;
    TL_TRY(tl_ice_json_member(t, "fields", JSON_ARRAY, true, where, &fields, err));
    size_t n = json_array_size(fields);
    TL_TRY(children_alloc(f, n, err));
    for (size_t i = 0; i < n; i++) {
        f->n_children++; /* counted first so a half-read field is freed */
        TL_TRY(field_from_json(json_array_get(fields, i), where, i, depth, &f->children[i], err));
        for (size_t k = 0; k < i; k++)
            if (strcmp(f->children[k].name, f->children[i].name) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "%s: field name \"%.64s\" is used twice",
                                    where, f->children[i].name);
    }
    return TL_OK;
}

/* Nested types are JSON objects ({"type": "struct" | "list" | "map", ...}). */
static tl_status nested_from_json(const json_t *t, const char *where, int depth, tl_ice_field *f,
                                  tl_error *err)
{
    json_t *kind;
    TL_TRY(tl_ice_json_member(t, "type", JSON_STRING, true, where, &kind, err));
    const char *k = json_string_value(kind);
    if (strcmp(k, "struct") == 0) {
        f->type.id = TL_ICE_STRUCT;
        return struct_from_json(t, where, depth, f, err);
    }
    if (strcmp(k, "list") == 0) {
        f->type.id = TL_ICE_LIST;
        TL_TRY(children_alloc(f, 1, err));
        f->n_children = 1;
        return child_from_json(t, "element", "element-id", "element-required", "element", where,
                               depth, &f->children[0], err);
    }
    if (strcmp(k, "map") == 0) {
        f->type.id = TL_ICE_MAP;
        TL_TRY(children_alloc(f, 2, err));
        f->n_children = 2;
        TL_TRY(
            child_from_json(t, "key", "key-id", NULL, "key", where, depth, &f->children[0], err));
        return child_from_json(t, "value", "value-id", "value-required", "value", where, depth,
                               &f->children[1], err);
    }
    return tl_error_set(err, TL_ERR_INVALID, "%s: unsupported nested type \"%.32s\"", where, k);
}

static tl_status type_from_json(const json_t *t, const char *where, int depth, tl_ice_field *f,
                                tl_error *err)
{
    /* Bounded so that hostile metadata cannot exhaust the stack. */
    if (depth > 64)
        return tl_error_set(err, TL_ERR_INVALID, "%s: types nested more than 64 deep", where);
    if (json_is_object(t)) return nested_from_json(t, where, depth, f, err);
    if (!json_is_string(t))
        return tl_error_set(err, TL_ERR_INVALID, "%s: a type must be a string or an object", where);
    if (tl_ice_type_parse(json_string_value(t), &f->type, err) != TL_OK) {
        tl_error_prefix(err, "%s", where);
        return TL_ERR_INVALID;
    }
    return TL_OK;
}

static tl_status field_from_json(const json_t *f, const char *schema_where, size_t index, int depth,
                                 tl_ice_field *out, tl_error *err)
{
    char where[200];
    snprintf(where, sizeof where, "%s, fields[%zu]", schema_where, index);
    if (!json_is_object(f))
        return tl_error_set(err, TL_ERR_INVALID, "%s: a field must be an object", where);
    TL_TRY(tl_ice_json_strdup(f, "name", true, where, &out->name, err));
    /* From here on the name is the clearest way to point at the field. */
    snprintf(where, sizeof where, "%s, field \"%.64s\"", schema_where, out->name);
    TL_TRY(tl_ice_json_i32(f, "id", true, where, &out->id, NULL, err));
    TL_TRY(tl_ice_json_bool(f, "required", true, where, &out->required, err));
    json_t *t = json_object_get(f, "type");
    if (t == NULL || json_is_null(t))
        return tl_error_set(err, TL_ERR_INVALID, "%s: required key \"type\" is missing", where);
    TL_TRY(type_from_json(t, where, depth, out, err));
    return tl_ice_json_strdup(f, "doc", false, where, &out->doc, err);
}

/* Every id collected, nested ones too, so that a repeat anywhere is found. */
static tl_status collect_ids(const tl_ice_field *fields, size_t n, int32_t **ids, size_t *n_ids,
                             size_t *cap, tl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (TL_GROW(*ids, *cap, *n_ids + 1, 16) != 0) return tl_error_nomem(err);
        (*ids)[(*n_ids)++] = fields[i].id;
        TL_TRY(collect_ids(fields[i].children, fields[i].n_children, ids, n_ids, cap, err));
    }
    return TL_OK;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static tl_status check_unique(const tl_ice_schema *s, const char *where, tl_error *err)
{
    for (size_t i = 0; i < s->n_fields; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->fields[i].name, s->fields[j].name) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "%s: field name \"%.64s\" is used twice",
                                    where, s->fields[i].name);
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    tl_status st = collect_ids(s->fields, s->n_fields, &ids, &n, &cap, err);
    if (st == TL_OK && n > 1) qsort(ids, n, sizeof *ids, cmp_i32);
    for (size_t i = 1; st == TL_OK && i < n; i++)
        if (ids[i] == ids[i - 1])
            st = tl_error_set(err, TL_ERR_INVALID, "%s: field id %d is used twice", where,
                              (int)ids[i]);
    free(ids);
    return st;
}

static tl_status identifiers_from_json(const json_t *j, const char *where, tl_ice_schema *s,
                                       tl_error *err)
{
    json_t *ids;
    TL_TRY(tl_ice_json_member(j, "identifier-field-ids", JSON_ARRAY, false, where, &ids, err));
    size_t n = ids ? json_array_size(ids) : 0;
    if (n == 0) return TL_OK;
    s->identifier_field_ids = calloc(n, sizeof(int32_t));
    if (s->identifier_field_ids == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        int32_t id;
        if (tl_ice_json_as_i32(json_array_get(ids, i), "identifier field id", &id, err) != TL_OK) {
            tl_error_prefix(err, "%s", where);
            return TL_ERR_INVALID;
        }
        if (tl_ice_schema_field_by_id(s, id) == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "%s: identifier field id %d is not a field",
                                where, (int)id);
        s->identifier_field_ids[s->n_identifier_field_ids++] = id;
    }
    return TL_OK;
}

static tl_status schema_from_json(const json_t *j, int32_t default_id, tl_ice_schema *out,
                                  tl_error *err)
{
    if (!json_is_object(j)) return tl_error_set(err, TL_ERR_INVALID, "schema: expected an object");
    out->schema_id = default_id;
    TL_TRY(tl_ice_json_i32(j, "schema-id", false, "schema", &out->schema_id, NULL, err));
    char where[48];
    snprintf(where, sizeof where, "schema %d", (int)out->schema_id);
    json_t *type, *fields;
    TL_TRY(tl_ice_json_member(j, "type", JSON_STRING, true, where, &type, err));
    if (strcmp(json_string_value(type), "struct") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: type must be \"struct\"", where);
    TL_TRY(tl_ice_json_member(j, "fields", JSON_ARRAY, true, where, &fields, err));
    size_t n = json_array_size(fields);
    if (n) {
        out->fields = calloc(n, sizeof *out->fields);
        if (out->fields == NULL) return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        out->n_fields++; /* counted first so a half-read field is freed */
        TL_TRY(field_from_json(json_array_get(fields, i), where, i, 0, &out->fields[i], err));
    }
    TL_TRY(check_unique(out, where, err));
    return identifiers_from_json(j, where, out, err);
}

tl_status tl_ice_schema_from_json(const json_t *j, int32_t default_id, tl_ice_schema *out,
                                  tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_status st = schema_from_json(j, default_id, out, err);
    if (st != TL_OK) tl_ice_schema_free(out);
    return st;
}

static json_t *field_to_json(const tl_ice_field *f);

static json_t *fields_to_json(const tl_ice_field *fields, size_t n)
{
    json_t *a = json_array();
    bool failed = a == NULL;
    for (size_t i = 0; !failed && i < n; i++)
        failed = json_array_append_new(a, field_to_json(&fields[i])) != 0;
    if (failed) json_decref(a);
    return failed ? NULL : a;
}

static json_t *type_to_json(const tl_ice_field *f)
{
    if (!TL_ICE_TYPE_IS_NESTED(f->type.id)) {
        char type[TL_ICE_TYPE_STR_MAX];
        tl_ice_type_format(&f->type, type, sizeof type);
        return json_string(type);
    }
    json_t *o = json_object();
    bool failed = o == NULL;
    if (failed) return NULL;
    const tl_ice_field *c = f->children;
    if (f->type.id == TL_ICE_STRUCT) {
        tl_ice_json_put(o, "type", json_string("struct"), &failed);
        tl_ice_json_put(o, "fields", fields_to_json(c, f->n_children), &failed);
    } else if (f->type.id == TL_ICE_LIST && f->n_children == 1) {
        tl_ice_json_put(o, "type", json_string("list"), &failed);
        tl_ice_json_put(o, "element-id", json_integer(c[0].id), &failed);
        tl_ice_json_put(o, "element-required", json_boolean(c[0].required), &failed);
        tl_ice_json_put(o, "element", type_to_json(&c[0]), &failed);
    } else if (f->type.id == TL_ICE_MAP && f->n_children == 2) {
        tl_ice_json_put(o, "type", json_string("map"), &failed);
        tl_ice_json_put(o, "key-id", json_integer(c[0].id), &failed);
        tl_ice_json_put(o, "key", type_to_json(&c[0]), &failed);
        tl_ice_json_put(o, "value-id", json_integer(c[1].id), &failed);
        tl_ice_json_put(o, "value-required", json_boolean(c[1].required), &failed);
        tl_ice_json_put(o, "value", type_to_json(&c[1]), &failed);
    } else {
        failed = true;
    }
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

static json_t *field_to_json(const tl_ice_field *f)
{
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "id", json_integer(f->id), &failed);
        tl_ice_json_put(o, "name", json_string(f->name), &failed);
        tl_ice_json_put(o, "required", json_boolean(f->required), &failed);
        tl_ice_json_put(o, "type", type_to_json(f), &failed);
        if (f->doc) tl_ice_json_put(o, "doc", json_string(f->doc), &failed);
    }
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

json_t *tl_ice_schema_to_json(const tl_ice_schema *s)
{
    json_t *o = json_object(), *fields = fields_to_json(s->fields, s->n_fields);
    bool failed = o == NULL || fields == NULL;
    if (failed) {
        json_decref(o);
        json_decref(fields);
        return NULL;
    }
    tl_ice_json_put(o, "schema-id", json_integer(s->schema_id), &failed);
    tl_ice_json_put(o, "type", json_string("struct"), &failed);
    tl_ice_json_put(o, "fields", fields, &failed);
    if (s->n_identifier_field_ids) {
        json_t *ids = json_array();
        for (size_t i = 0; ids && i < s->n_identifier_field_ids; i++)
            if (json_array_append_new(ids, json_integer(s->identifier_field_ids[i])) != 0)
                failed = true;
        tl_ice_json_put(o, "identifier-field-ids", ids, &failed);
    }
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

tl_status tl_ice_schema_to_json_string(const tl_ice_schema *s, char **out, tl_error *err)
{
    json_t *j = tl_ice_schema_to_json(s);
    *out = j ? tl_json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return *out ? TL_OK : tl_error_nomem(err);
}

tl_status tl_ice_schema_parse_json(const char *json, size_t len, tl_ice_schema *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    bool nomem;
    json_t *j = tl_json_loadb(json, len, 0, &jerr, &nomem);
    if (nomem) return tl_error_nomem(err);
    if (j == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "schema JSON: %s at line %d column %d", jerr.text,
                            jerr.line, jerr.column);
    tl_status st = tl_ice_schema_from_json(j, 0, out, err);
    json_decref(j);
    return st;
}
