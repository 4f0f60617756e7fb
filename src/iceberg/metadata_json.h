/* Typed access to members of Iceberg JSON documents (table metadata, schemas,
 * specs). Each getter checks presence and JSON type and range, and reports
 * problems as TL_ERR_INVALID naming `where` and the key. Internal to src/iceberg. */
#ifndef TL_ICEBERG_METADATA_JSON_H
#define TL_ICEBERG_METADATA_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

/* The member `key` of object `obj` if it has JSON type `type`. Absent (or null)
 * members give *out = NULL, which is an error only when `required`. */
tl_status tl_ice_json_member(const json_t *obj, const char *key, json_type type, bool required,
                             const char *where, json_t **out, tl_error *err);

/* Integer members; absent optional members leave *out unchanged and *present false
 * (`present` may be NULL). */
tl_status tl_ice_json_i64(const json_t *obj, const char *key, bool required, const char *where,
                          int64_t *out, bool *present, tl_error *err);
tl_status tl_ice_json_i32(const json_t *obj, const char *key, bool required, const char *where,
                          int32_t *out, bool *present, tl_error *err);
tl_status tl_ice_json_bool(const json_t *obj, const char *key, bool required, const char *where,
                           bool *out, tl_error *err);

/* A string member copied with strdup into *out (NULL when absent and optional). */
tl_status tl_ice_json_strdup(const json_t *obj, const char *key, bool required, const char *where,
                             char **out, tl_error *err);

/* The integer value of `v`, or TL_ERR_INVALID naming `what`. */
tl_status tl_ice_json_as_i64(const json_t *v, const char *what, int64_t *out, tl_error *err);
tl_status tl_ice_json_as_i32(const json_t *v, const char *what, int32_t *out, tl_error *err);

/* Adds `value` to obj, taking the reference. If value is NULL or memory runs out it
 * sets *failed and returns false, so a run of adds can be tested once at the end. */
bool tl_ice_json_put(json_t *obj, const char *key, json_t *value, bool *failed);

#endif
