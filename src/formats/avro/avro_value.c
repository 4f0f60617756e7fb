/* Field lookup and typed field reads on decoded records. */
#include <string.h>

#include "formats/avro/avro_value.h"

const tl_avro_value *tl_avro_value_field(const tl_avro_value *rec, int32_t id, const char *name)
{
    if (rec == NULL || rec->kind != TL_AVRO_RECORD || rec->type == NULL) return NULL;
    const tl_avro_field *f = id >= 0 ? tl_avro_field_by_id(rec->type, id) : NULL;
    if (f == NULL && name) f = tl_avro_field_by_name(rec->type, name);
    if (f == NULL) return NULL;
    size_t i = (size_t)(f - rec->type->fields);
    return i < rec->len ? &rec->u.items[i] : NULL;
}

/* The field, or NULL with *present = false when missing or null; an error
 * when that is not allowed. */
static tl_status tl_avro_get(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                             const tl_avro_value **out, tl_error *err)
{
    const tl_avro_value *v = tl_avro_value_field(rec, id, name);
    if (v == NULL || v->kind == TL_AVRO_NULL) {
        *out = NULL;
        if (present) {
            *present = false;
            return TL_OK;
        }
        return tl_error_set(err, TL_ERR_INVALID, "required field \"%s\" (id %d) is %s",
                            name ? name : "?", (int)id, v ? "null" : "missing");
    }
    if (present) *present = true;
    *out = v;
    return TL_OK;
}

static tl_status tl_avro_wrong_kind(const char *name, const char *want, const tl_avro_value *v,
                                    tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "field \"%s\": expected %s, found %s",
                        name ? name : "?", want, tl_avro_kind_name(v->kind));
}

tl_status tl_avro_get_long(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                           int64_t *out, tl_error *err)
{
    const tl_avro_value *v;
    TL_TRY(tl_avro_get(rec, id, name, present, &v, err));
    if (v == NULL) return TL_OK;
    if (v->kind != TL_AVRO_LONG && v->kind != TL_AVRO_INT)
        return tl_avro_wrong_kind(name, "long", v, err);
    *out = v->u.i;
    return TL_OK;
}

tl_status tl_avro_get_int(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                          int32_t *out, tl_error *err)
{
    const tl_avro_value *v;
    TL_TRY(tl_avro_get(rec, id, name, present, &v, err));
    if (v == NULL) return TL_OK;
    if (v->kind != TL_AVRO_LONG && v->kind != TL_AVRO_INT)
        return tl_avro_wrong_kind(name, "int", v, err);
    if (v->u.i < INT32_MIN || v->u.i > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "field \"%s\": %lld does not fit an int",
                            name ? name : "?", (long long)v->u.i);
    *out = (int32_t)v->u.i;
    return TL_OK;
}

tl_status tl_avro_get_bool(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                           bool *out, tl_error *err)
{
    const tl_avro_value *v;
    TL_TRY(tl_avro_get(rec, id, name, present, &v, err));
    if (v == NULL) return TL_OK;
    if (v->kind != TL_AVRO_BOOLEAN) return tl_avro_wrong_kind(name, "boolean", v, err);
    *out = v->u.b;
    return TL_OK;
}

tl_status tl_avro_get_bytes(const tl_avro_value *rec, int32_t id, const char *name, bool *present,
                            const uint8_t **data, size_t *len, tl_error *err)
{
    const tl_avro_value *v;
    TL_TRY(tl_avro_get(rec, id, name, present, &v, err));
    if (v == NULL) return TL_OK;
    if (v->kind != TL_AVRO_BYTES && v->kind != TL_AVRO_STRING && v->kind != TL_AVRO_FIXED)
        return tl_avro_wrong_kind(name, "bytes", v, err);
    *data = v->u.bytes;
    *len = v->len;
    return TL_OK;
}

tl_status tl_avro_get_kind(const tl_avro_value *rec, int32_t id, const char *name,
                           tl_avro_kind kind, bool *present, const tl_avro_value **out,
                           tl_error *err)
{
    const tl_avro_value *v;
    TL_TRY(tl_avro_get(rec, id, name, present, &v, err));
    if (v == NULL) return TL_OK;
    if (v->kind != kind) return tl_avro_wrong_kind(name, tl_avro_kind_name(kind), v, err);
    *out = v;
    return TL_OK;
}
