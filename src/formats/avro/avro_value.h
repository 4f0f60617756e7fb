/* A generic in-memory Avro datum: a tree of tl_avro_value, usually living in
 * a tl_arena. Unions are transparent: a value is always of one concrete
 * kind, and writing picks the union branch of that kind.
 *
 * Decoding bounds everything by the input: lengths and counts by the bytes
 * left, nesting by TL_AVRO_MAX_DEPTH and the number of values by a budget
 * proportional to the input, so hostile data cannot crash, over-read, loop
 * or allocate without limit. */
#ifndef TL_FORMATS_AVRO_VALUE_H
#define TL_FORMATS_AVRO_VALUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/arena.h"
#include "formats/avro/avro_binary.h"
#include "formats/avro/avro_schema.h"

typedef struct tl_avro_value tl_avro_value;

struct tl_avro_value {
    tl_avro_kind kind;        /* never TL_AVRO_UNION */
    const tl_avro_type *type; /* the concrete type; set by decoding, optional when writing
                                 (it picks between same-kind named union branches) */
    size_t len;               /* bytes/string/fixed: byte count; array, map: entries;
                                 record: fields (in schema order) */
    union {
        bool b;
        int64_t i; /* int, long, enum symbol index */
        float f;
        double d;
        const uint8_t *bytes; /* bytes, string, fixed (decoded ones are NUL-terminated) */
        tl_avro_value *items; /* array items, map values, record fields */
    } u;
    const char **keys; /* map keys, `len` of them */
};

/* ---- Binary encoding ---- */

/* Decodes one datum of `type` at the cursor into *out (children in arena).
 * Each value decoded is charged to *budget and decoding fails once it runs
 * out; NULL gives the datum tl_avro_decode_budget(bytes left). */
tl_status tl_avro_decode(const tl_avro_type *type, tl_avro_cursor *cur, tl_arena *arena,
                         size_t *budget, tl_avro_value *out, tl_error *err);

/* The values `bytes` of input may decode to: about four per byte, which real
 * data never reaches, so values of zero-byte types (null, empty records)
 * cannot multiply without limit. */
size_t tl_avro_decode_budget(size_t bytes);

/* Appends the binary encoding of v as `type`, checking it matches. */
tl_status tl_avro_encode(const tl_avro_type *type, const tl_avro_value *v, tl_buf *out,
                         tl_error *err);

/* The branch of union `u` a value is written as: the one of its kind, and
 * among same-kind named branches the one of v->type (else the first). */
tl_status tl_avro_union_branch(const tl_avro_type *u, const tl_avro_value *v, size_t *out,
                               tl_error *err);

/* ---- Avro's JSON encoding (unions as {"branch": value}, bytes as
 * U+0000..U+00FF code points); used by tools and tests ---- */

tl_status tl_avro_to_json(const tl_avro_type *type, const tl_avro_value *v, json_t **out,
                          tl_error *err);
tl_status tl_avro_from_json(const tl_avro_type *type, const json_t *j, tl_arena *arena,
                            tl_avro_value *out, tl_error *err);

/* ---- Record access ---- */

/* The field value of a record by name, by Iceberg field-id, or by field-id
 * falling back to name (id < 0 or name NULL skip that lookup). NULL when the
 * record has no such field or rec is not a decoded record. */
const tl_avro_value *tl_avro_value_field(const tl_avro_value *rec, int32_t id, const char *name);

/* Typed reads of a record field. A field that is missing or null is "absent":
 * with `present` NULL that is an error (the field is required), otherwise
 * *present is set false and *out untouched. int fields accept long values that
 * fit; long fields accept ints. */
tl_status tl_avro_get_long(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                           int64_t *out, tl_error *err);
tl_status tl_avro_get_int(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                          int32_t *out, tl_error *err);
tl_status tl_avro_get_bool(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                           bool *out, tl_error *err);
/* bytes, string or fixed. */
tl_status tl_avro_get_bytes(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                            const uint8_t **data, size_t *len, tl_error *err);
/* Any value of the given kind (record, array, ...). */
tl_status tl_avro_get_kind(const tl_avro_value *rec, int32_t id, const char *name,
                           tl_avro_kind kind, bool *present, const tl_avro_value **out,
                           tl_error *err);

#endif
