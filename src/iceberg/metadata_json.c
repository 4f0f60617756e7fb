#include "iceberg/metadata_json.h"

#include <stdlib.h>
#include <string.h>

static const char *json_type_name(json_type t)
{
    switch (t) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

static bool has_type(const json_t *v, json_type type)
{
    if (type == JSON_TRUE || type == JSON_FALSE) return json_is_boolean(v);
    return json_typeof(v) == type;
}

tl_status tl_ice_json_member(const json_t *obj, const char *key, json_type type, bool required,
                             const char *where, json_t **out, tl_error *err)
{
    *out = NULL;
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return tl_error_set(err, TL_ERR_INVALID, "%s: required key \"%s\" is missing", where,
                                key);
        return TL_OK;
    }
    if (!has_type(v, type))
        return tl_error_set(err, TL_ERR_INVALID, "%s: key \"%s\" must be %s, not %s", where, key,
                            json_type_name(type), json_type_name(json_typeof(v)));
    *out = v;
    return TL_OK;
}

tl_status tl_ice_json_i64(const json_t *obj, const char *key, bool required, const char *where,
                          int64_t *out, bool *present, tl_error *err)
{
    json_t *v;
    if (present) *present = false;
    TL_TRY(tl_ice_json_member(obj, key, JSON_INTEGER, required, where, &v, err));
    if (v == NULL) return TL_OK;
    *out = (int64_t)json_integer_value(v);
    if (present) *present = true;
    return TL_OK;
}

tl_status tl_ice_json_i32(const json_t *obj, const char *key, bool required, const char *where,
                          int32_t *out, bool *present, tl_error *err)
{
    int64_t v = 0;
    bool got = false;
    if (present) *present = false;
    TL_TRY(tl_ice_json_i64(obj, key, required, where, &v, &got, err));
    if (!got) return TL_OK;
    if (v < INT32_MIN || v > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "%s: key \"%s\" is out of the 32-bit range: %lld",
                            where, key, (long long)v);
    *out = (int32_t)v;
    if (present) *present = true;
    return TL_OK;
}

tl_status tl_ice_json_bool(const json_t *obj, const char *key, bool required, const char *where,
                           bool *out, tl_error *err)
{
    json_t *v;
    TL_TRY(tl_ice_json_member(obj, key, JSON_TRUE, required, where, &v, err));
    if (v != NULL) *out = json_is_true(v);
    return TL_OK;
}

tl_status tl_ice_json_strdup(const json_t *obj, const char *key, bool required, const char *where,
                             char **out, tl_error *err)
{
    json_t *v;
    *out = NULL;
    TL_TRY(tl_ice_json_member(obj, key, JSON_STRING, required, where, &v, err));
    if (v == NULL) return TL_OK;
    *out = strdup(json_string_value(v));
    return *out ? TL_OK : tl_error_nomem(err);
}

tl_status tl_ice_json_as_i64(const json_t *v, const char *what, int64_t *out, tl_error *err)
{
    if (!json_is_integer(v))
        return tl_error_set(err, TL_ERR_INVALID, "%s must be an integer, not %s", what,
                            json_type_name(json_typeof(v)));
    *out = (int64_t)json_integer_value(v);
    return TL_OK;
}

tl_status tl_ice_json_as_i32(const json_t *v, const char *what, int32_t *out, tl_error *err)
{
    int64_t x;
    TL_TRY(tl_ice_json_as_i64(v, what, &x, err));
    if (x < INT32_MIN || x > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "%s is out of the 32-bit range: %lld", what,
                            (long long)x);
    *out = (int32_t)x;
    return TL_OK;
}

bool tl_ice_json_put(json_t *obj, const char *key, json_t *value, bool *failed)
{
    /* json_object_set_new releases `value` even when it fails. */
    if (value == NULL || json_object_set_new(obj, key, value) != 0) {
        *failed = true;
        return false;
    }
    return true;
}
