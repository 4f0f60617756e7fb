/* Iceberg types and schemas: type strings, JSON form, and the mapping to and from
 * Arrow schemas. A nested type (struct, list, map) is a field whose children are
 * its struct fields, its list element or its map key and value, each with its
 * own field id. */
#ifndef TL_ICEBERG_SCHEMA_H
#define TL_ICEBERG_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef enum tl_ice_type_id {
    TL_ICE_BOOLEAN,
    TL_ICE_INT,
    TL_ICE_LONG,
    TL_ICE_FLOAT,
    TL_ICE_DOUBLE,
    TL_ICE_DECIMAL,
    TL_ICE_DATE,
    TL_ICE_TIME,
    TL_ICE_TIMESTAMP,
    TL_ICE_TIMESTAMPTZ,
    TL_ICE_TIMESTAMP_NS,
    TL_ICE_TIMESTAMPTZ_NS,
    TL_ICE_STRING,
    TL_ICE_UUID,
    TL_ICE_FIXED,
    TL_ICE_BINARY,
    /* Nested: the field's children say what they hold. */
    TL_ICE_STRUCT,
    TL_ICE_LIST,
    TL_ICE_MAP
} tl_ice_type_id;

/* Whether values of this type are nested (struct, list or map). */
#define TL_ICE_TYPE_IS_NESTED(id) ((id) >= TL_ICE_STRUCT)

typedef struct tl_ice_type {
    tl_ice_type_id id;
    int32_t precision, scale; /* decimal */
    int32_t length;           /* fixed */
} tl_ice_type;

typedef struct tl_ice_field {
    int32_t id;
    char *name;
    bool required;
    tl_ice_type type;
    char *doc; /* NULL when absent */
    /* Nested types only: a struct's fields; a list's one child "element"
     * (required = element-required); a map's "key" (always required) and "value". */
    struct tl_ice_field *children;
    size_t n_children;
} tl_ice_field;

typedef struct tl_ice_schema {
    int32_t schema_id;
    tl_ice_field *fields;
    size_t n_fields;
    int32_t *identifier_field_ids;
    size_t n_identifier_field_ids;
} tl_ice_schema;

/* Longest string tl_ice_type_format writes, with its NUL. */
#define TL_ICE_TYPE_STR_MAX 40

/* ---- Types ---- */

/* Parses "long", "decimal(10, 2)" (space optional), "fixed[16]", "timestamptz", ...
 * Anything else is TL_ERR_INVALID naming the string (nested types are JSON objects,
 * read by tl_ice_schema_from_json). */
tl_status tl_ice_type_parse(const char *s, tl_ice_type *out, tl_error *err);

/* Writes the canonical type string ("decimal(10, 2)" as Java and the reference write it);
 * nested types as "struct", "list" or "map". */
void tl_ice_type_format(const tl_ice_type *t, char *buf, size_t size);

bool tl_ice_type_equal(const tl_ice_type *a, const tl_ice_type *b);

/* ---- Schemas ---- */

/* Frees the contents and leaves *s zeroed. NULL-safe. */
void tl_ice_schema_free(tl_ice_schema *s);

/* Deep copy into *out (overwritten). On failure *out is zeroed. */
tl_status tl_ice_schema_copy(const tl_ice_schema *src, tl_ice_schema *out, tl_error *err);

/* Same fields (ids, names, types, required, doc) and identifier ids; the schema id is ignored. */
bool tl_ice_schema_same_fields(const tl_ice_schema *a, const tl_ice_schema *b);

/* The top-level field named `name` (exact match), or NULL. */
const tl_ice_field *tl_ice_schema_find(const tl_ice_schema *s, const char *name);
/* The top-level field with this id, or NULL (nested fields are not looked at). */
const tl_ice_field *tl_ice_schema_field_by_id(const tl_ice_schema *s, int32_t id);

/* The first top-level field of a nested type (struct, list, map), or NULL. */
const tl_ice_field *tl_ice_schema_first_nested(const tl_ice_schema *s);

/* Whether any field, nested ones included, has this id. */
bool tl_ice_schema_has_id(const tl_ice_schema *s, int32_t id);

/* Deep copy of one field (children included) into *dst; false when out of memory
 * (then *dst holds what was copied, for tl_ice_field_free). */
bool tl_ice_field_copy(const tl_ice_field *src, tl_ice_field *dst);
/* Frees the field's contents (children included). */
void tl_ice_field_free(tl_ice_field *f);
/* Same id, name, required, doc, type and children. */
bool tl_ice_field_equal(const tl_ice_field *a, const tl_ice_field *b);

/* The highest field id, nested ones included; 0 for an empty schema. */
int32_t tl_ice_schema_max_field_id(const tl_ice_schema *s);

/* ---- JSON (the table-metadata / manifest form) ---- */

/* Reads a schema object ("type": "struct", "fields": [...]). `default_id` is used when
 * "schema-id" is absent (v1). Duplicate field ids or names are TL_ERR_INVALID. */
tl_status tl_ice_schema_from_json(const json_t *j, int32_t default_id, tl_ice_schema *out,
                                  tl_error *err);

/* A new JSON object for the schema, or NULL when out of memory. */
json_t *tl_ice_schema_to_json(const tl_ice_schema *s);

/* The same as compact JSON text (for the "schema" key of manifest files). Free *out. */
tl_status tl_ice_schema_to_json_string(const tl_ice_schema *s, char **out, tl_error *err);
tl_status tl_ice_schema_parse_json(const char *json, size_t len, tl_ice_schema *out, tl_error *err);

/* ---- Arrow ---- */

/* The Iceberg type a column of this Arrow field is stored as (the reference's mapping;
 * dictionary<*, utf8> is string). Unsupported types are TL_ERR_INVALID. */
tl_status tl_ice_type_from_arrow(const struct ArrowSchema *field, tl_ice_type *out, tl_error *err);

/* The Arrow format string users get back for an Iceberg type (buf >= 24 bytes). */
void tl_ice_type_arrow_format(const tl_ice_type *t, char *buf, size_t size);

/* Maps a struct schema's children to fields with ids first_id, first_id+1, ...;
 * required = not nullable. Lists (+l, +L, +w), structs and maps become nested
 * fields whose ids follow the top-level ones, assigned as Iceberg assigns fresh
 * ids (a struct's fields first, then each field's own children). Errors name the
 * column: `column "x": ...`. */
tl_status tl_ice_schema_from_arrow(const struct ArrowSchema *schema, int32_t first_id,
                                   tl_ice_schema *out, tl_error *err);

/* A struct ArrowSchema (owned by the caller, who releases it) whose children carry the
 * metadata "PARQUET:field_id" and ARROW_FLAG_NULLABLE when not required, nested
 * children too (a list's child is "element", a map's "entries" of "key", "value"). */
tl_status tl_ice_schema_to_arrow(const tl_ice_schema *s, struct ArrowSchema *out, tl_error *err);

/* One field of it: *out (released by the caller; it must be a released or
 * zeroed struct) with the field's children, each with its field id. */
tl_status tl_ice_field_to_arrow(const tl_ice_field *f, struct ArrowSchema *out, tl_error *err);

#endif
