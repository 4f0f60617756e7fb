/* tl_avro_value -> binary Avro, checking each value against its type. */
#include <string.h>

#include "formats/avro/avro_value.h"

static tl_status tl_avro_encode_value(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                      tl_buf *out, tl_error *err);

static tl_status tl_avro_mismatch(const tl_avro_type *t, const tl_avro_value *v, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID, "expected %s, found a %s value",
                        t->fullname ? t->fullname : tl_avro_kind_name(t->kind),
                        tl_avro_kind_name(v->kind));
}

tl_status tl_avro_union_branch(const tl_avro_type *t, const tl_avro_value *v, size_t *out,
                               tl_error *err)
{
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < t->n_branches; i++) {
        const tl_avro_type *b = t->branches[i];
        if (b->kind != v->kind) continue;
        if (v->type == NULL || v->type == b ||
            (b->fullname && v->type->fullname && strcmp(b->fullname, v->type->fullname) == 0)) {
            *out = i;
            return TL_OK;
        }
        if (found == SIZE_MAX) found = i;
    }
    if (found == SIZE_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "no union branch for a %s value",
                            tl_avro_kind_name(v->kind));
    *out = found;
    return TL_OK;
}

static tl_status tl_avro_encode_list(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                     tl_buf *out, tl_error *err)
{
    if (v->len > 0) {
        if (tl_avro_write_long(out, (int64_t)v->len) != 0) return tl_error_nomem(err);
        for (size_t i = 0; i < v->len; i++) {
            if (t->kind == TL_AVRO_MAP) {
                const char *key = v->keys ? v->keys[i] : NULL;
                if (key == NULL) return tl_error_set(err, TL_ERR_INVALID, "map key %zu is NULL", i);
                if (tl_avro_write_string(out, key) != 0) return tl_error_nomem(err);
            }
            TL_TRY(tl_avro_encode_value(t->items, &v->u.items[i], depth + 1, out, err));
        }
    }
    return tl_avro_write_long(out, 0) == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_avro_encode_record(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                       tl_buf *out, tl_error *err)
{
    if (v->len != t->n_fields)
        return tl_error_set(err, TL_ERR_INVALID, "record \"%s\" has %zu fields, value has %zu",
                            t->fullname, t->n_fields, v->len);
    for (size_t i = 0; i < t->n_fields; i++) {
        tl_status st = tl_avro_encode_value(t->fields[i].type, &v->u.items[i], depth + 1, out, err);
        if (st != TL_OK) {
            tl_error_prefix(err, "field \"%s\"", t->fields[i].name);
            return st;
        }
    }
    return TL_OK;
}

static tl_status tl_avro_encode_scalar(const tl_avro_type *t, const tl_avro_value *v, tl_buf *out,
                                       tl_error *err)
{
    int rc = 0;
    switch (t->kind) {
    case TL_AVRO_NULL:
        break;
    case TL_AVRO_BOOLEAN:
        rc = tl_avro_write_bool(out, v->u.b);
        break;
    case TL_AVRO_INT:
        if (v->u.i < INT32_MIN || v->u.i > INT32_MAX)
            return tl_error_set(err, TL_ERR_INVALID, "int value %lld out of range",
                                (long long)v->u.i);
        rc = tl_avro_write_long(out, v->u.i);
        break;
    case TL_AVRO_LONG:
        rc = tl_avro_write_long(out, v->u.i);
        break;
    case TL_AVRO_FLOAT:
        rc = tl_avro_write_float(out, v->u.f);
        break;
    case TL_AVRO_DOUBLE:
        rc = tl_avro_write_double(out, v->u.d);
        break;
    case TL_AVRO_BYTES:
    case TL_AVRO_STRING:
        rc = tl_avro_write_bytes(out, v->u.bytes, v->len);
        break;
    case TL_AVRO_FIXED:
        if (v->len != t->fixed_size)
            return tl_error_set(err, TL_ERR_INVALID, "fixed \"%s\" needs %zu bytes, value has %zu",
                                t->fullname, t->fixed_size, v->len);
        rc = tl_buf_append(out, v->u.bytes, v->len);
        break;
    case TL_AVRO_ENUM:
        if (v->u.i < 0 || (uint64_t)v->u.i >= t->n_symbols)
            return tl_error_set(err, TL_ERR_INVALID, "enum \"%s\" has no symbol %lld", t->fullname,
                                (long long)v->u.i);
        rc = tl_avro_write_long(out, v->u.i);
        break;
    default:
        return tl_error_set(err, TL_ERR_INTERNAL, "not a scalar avro kind");
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_avro_encode_value(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                      tl_buf *out, tl_error *err)
{
    if (depth > TL_AVRO_MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "value nested deeper than %d levels",
                            TL_AVRO_MAX_DEPTH);
    if (t->kind == TL_AVRO_UNION) {
        size_t branch;
        TL_TRY(tl_avro_union_branch(t, v, &branch, err));
        if (tl_avro_write_long(out, (int64_t)branch) != 0) return tl_error_nomem(err);
        t = t->branches[branch];
    }
    if (v->kind != t->kind) return tl_avro_mismatch(t, v, err);
    switch (t->kind) {
    case TL_AVRO_RECORD:
        return tl_avro_encode_record(t, v, depth, out, err);
    case TL_AVRO_ARRAY:
    case TL_AVRO_MAP:
        return tl_avro_encode_list(t, v, depth, out, err);
    default:
        return tl_avro_encode_scalar(t, v, out, err);
    }
}

tl_status tl_avro_encode(const tl_avro_type *type, const tl_avro_value *v, tl_buf *out,
                         tl_error *err)
{
    size_t mark = out->len;
    tl_status st = tl_avro_encode_value(type, v, 0, out, err);
    if (st != TL_OK && out->data) {
        out->len = mark; /* leave no half-written datum behind */
        out->data[mark] = '\0';
    }
    return st;
}
