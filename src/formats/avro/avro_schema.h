/* Avro schemas (Avro 1.11): a tree of types parsed from the JSON form, with
 * every attribute the spec does not interpret (logicalType, Iceberg's
 * "field-id"/"element-id"/"key-id"/"value-id", doc, aliases, ...) kept in
 * order so a schema prints back with the same meaning.
 *
 * Named types (record, enum, fixed) are defined once; later references to the
 * name point at the same tl_avro_type, so the tree is a graph (recursive
 * records are possible). All nodes belong to their tl_avro_schema. */
#ifndef TL_FORMATS_AVRO_SCHEMA_H
#define TL_FORMATS_AVRO_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

typedef enum tl_avro_kind {
    TL_AVRO_NULL,
    TL_AVRO_BOOLEAN,
    TL_AVRO_INT,
    TL_AVRO_LONG,
    TL_AVRO_FLOAT,
    TL_AVRO_DOUBLE,
    TL_AVRO_BYTES,
    TL_AVRO_STRING,
    TL_AVRO_RECORD,
    TL_AVRO_ENUM,
    TL_AVRO_ARRAY,
    TL_AVRO_MAP,
    TL_AVRO_UNION,
    TL_AVRO_FIXED
} tl_avro_kind;

typedef struct tl_avro_type tl_avro_type;

typedef struct tl_avro_field {
    char *name;
    tl_avro_type *type;
    json_t *default_value; /* NULL when the field has no default */
    json_t *attrs;         /* other attributes in order ("field-id", "doc", ...); NULL if none */
    bool has_field_id;     /* "field-id" present and an integer */
    int32_t field_id;
} tl_avro_field;

struct tl_avro_type {
    tl_avro_kind kind;
    /* Named types: the name and namespace as written (namespace NULL when not
     * written) and the resolved full name used for references. */
    char *name, *namespace_, *fullname;
    json_t *attrs;            /* other attributes in order; NULL if none */
    const char *logical_type; /* attrs' "logicalType" string, or NULL */
    tl_avro_field *fields;    /* record */
    size_t n_fields;
    char **symbols; /* enum */
    size_t n_symbols;
    tl_avro_type *items;     /* array items, map values */
    tl_avro_type **branches; /* union */
    size_t n_branches;
    size_t fixed_size;
    size_t min_size;    /* fewest bytes any value of this type encodes to */
    size_t named_index; /* named types: 0, 1, ... in order of definition */
};

typedef struct tl_avro_schema {
    tl_avro_type *root;
    /* Every node of the graph, freed together. */
    tl_avro_type **nodes;
    size_t n_nodes, cap_nodes;
    size_t n_named; /* named types (records, enums, fixed) */
    /* Set for a schema shared through the cache (tl_avro_schema_shared):
     * its printed form, and whether tl_avro_schema_free only drops a
     * reference. */
    char *printed;
    size_t printed_len;
    bool shared;
} tl_avro_schema;

/* Parses the JSON text of a schema. Rejects invalid names, unknown types,
 * duplicate definitions, unresolved references, nested unions and unions with
 * two branches of the same type. */
tl_status tl_avro_schema_parse(const char *json, size_t len, tl_avro_schema **out, tl_error *err);

/* Appends the schema's compact JSON form to out. Named types are written in
 * full at their first occurrence and by full name afterwards. */
tl_status tl_avro_schema_print(const tl_avro_schema *schema, tl_buf *out, tl_error *err);

/* Frees a schema, or drops a reference to a shared one. */
void tl_avro_schema_free(tl_avro_schema *schema);

/* The schema of this text, parsed once per process: every manifest and
 * manifest list of a table carries one of a few schemas, and parsing one
 * costs more than reading a small file. The schema is shared and must not
 * be changed; tl_avro_schema_free drops the reference (avro_schema_cache.c). */
tl_status tl_avro_schema_shared(const char *json, size_t len, tl_avro_schema **out, tl_error *err);
/* Drops a reference taken by tl_avro_schema_shared (what tl_avro_schema_free does for it). */
void tl_avro_schema_release(tl_avro_schema *schema);

/* The field called `name`, or NULL. Its index is fields - record->fields. */
const tl_avro_field *tl_avro_field_by_name(const tl_avro_type *record, const char *name);
/* The field whose "field-id" is `id`, or NULL. */
const tl_avro_field *tl_avro_field_by_id(const tl_avro_type *record, int32_t id);

/* The attribute `key` of a type (or NULL); for integers sets *out. */
bool tl_avro_type_int_attr(const tl_avro_type *type, const char *key, int64_t *out);

/* "int", "record", ... */
const char *tl_avro_kind_name(tl_avro_kind kind);

/* The deepest nesting of JSON or data the parsers accept. */
#define TL_AVRO_MAX_DEPTH 64

#endif
