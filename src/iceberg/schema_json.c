/* Schemas in their JSON form (table metadata and the "schema" key of manifests). */
#include "iceberg/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata_json.h"

static tl_status field_type_from_json(const json_t *f, const char *where, tl_ice_type *out,
                                      tl_error *err)
{
    json_t *t = json_object_get(f, "type");
    if (t == NULL || json_is_null(t))
        return tl_error_set(err, TL_ERR_INVALID, "%s: required key \"type\" is missing", where);
    if (json_is_object(t))
        return tl_error_set(err, TL_ERR_INVALID, "%s: nested types are not supported", where);
    if (!json_is_string(t))
        return tl_error_set(err, TL_ERR_INVALID, "%s: key \"type\" must be a string", where);
    if (tl_ice_type_parse(json_string_value(t), out, err) != TL_OK) {
        tl_error_prefix(err, "%s", where);
        return TL_ERR_INVALID;
    }
    return TL_OK;
}

static tl_status field_from_json(const json_t *f, const char *schema_where, size_t index,
                                 tl_ice_field *out, tl_error *err)
{
    char where[160];
    snprintf(where, sizeof where, "%s, fields[%zu]", schema_where, index);
    if (!json_is_object(f))
        return tl_error_set(err, TL_ERR_INVALID, "%s: a field must be an object", where);
    TL_TRY(tl_ice_json_strdup(f, "name", true, where, &out->name, err));
    /* From here on the name is the clearest way to point at the field. */
    snprintf(where, sizeof where, "%s, field \"%.64s\"", schema_where, out->name);
    TL_TRY(tl_ice_json_i32(f, "id", true, where, &out->id, NULL, err));
    TL_TRY(tl_ice_json_bool(f, "required", true, where, &out->required, err));
    TL_TRY(field_type_from_json(f, where, &out->type, err));
    return tl_ice_json_strdup(f, "doc", false, where, &out->doc, err);
}

static tl_status check_unique(const tl_ice_schema *s, const char *where, tl_error *err)
{
    for (size_t i = 0; i < s->n_fields; i++)
        for (size_t j = 0; j < i; j++) {
            if (s->fields[i].id == s->fields[j].id)
                return tl_error_set(err, TL_ERR_INVALID, "%s: field id %d is used twice", where,
                                    (int)s->fields[i].id);
            if (strcmp(s->fields[i].name, s->fields[j].name) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "%s: field name \"%.64s\" is used twice",
                                    where, s->fields[i].name);
        }
    return TL_OK;
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
        TL_TRY(field_from_json(json_array_get(fields, i), where, i, &out->fields[i], err));
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

static json_t *field_to_json(const tl_ice_field *f)
{
    char type[TL_ICE_TYPE_STR_MAX];
    tl_ice_type_format(&f->type, type, sizeof type);
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "id", json_integer(f->id), &failed);
        tl_ice_json_put(o, "name", json_string(f->name), &failed);
        tl_ice_json_put(o, "required", json_boolean(f->required), &failed);
        tl_ice_json_put(o, "type", json_string(type), &failed);
        if (f->doc) tl_ice_json_put(o, "doc", json_string(f->doc), &failed);
    }
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

json_t *tl_ice_schema_to_json(const tl_ice_schema *s)
{
    json_t *o = json_object(), *fields = json_array();
    bool failed = o == NULL || fields == NULL;
    for (size_t i = 0; !failed && i < s->n_fields; i++)
        failed = json_array_append_new(fields, field_to_json(&s->fields[i])) != 0;
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
    *out = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return *out ? TL_OK : tl_error_nomem(err);
}

tl_status tl_ice_schema_parse_json(const char *json, size_t len, tl_ice_schema *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *j = json_loadb(json, len, 0, &jerr);
    if (j == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "schema JSON: %s at line %d column %d", jerr.text,
                            jerr.line, jerr.column);
    tl_status st = tl_ice_schema_from_json(j, 0, out, err);
    json_decref(j);
    return st;
}
