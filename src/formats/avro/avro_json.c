/* Avro's JSON encoding of values, for tools and tests: unions as
 * {"branch-name": value} (null as null), bytes and fixed as strings of
 * U+0000..U+00FF code points, non-finite floats as "NaN"/"Infinity". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_value.h"

static tl_status tl_avro_json_out(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                  json_t **out, tl_error *err);

static const char *tl_avro_branch_name(const tl_avro_type *t)
{
    return t->fullname ? t->fullname : tl_avro_kind_name(t->kind);
}

static json_t *tl_avro_latin1_json(const uint8_t *p, size_t len)
{
    char *s = malloc(len * 2 + 1);
    if (s == NULL) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < 0x80) {
            s[n++] = (char)p[i];
        } else {
            s[n++] = (char)(0xc0 | p[i] >> 6);
            s[n++] = (char)(0x80 | (p[i] & 0x3f));
        }
    }
    json_t *j = json_stringn(s, n);
    free(s);
    return j;
}

static json_t *tl_avro_real_json(double d)
{
    if (isnan(d)) return json_string("NaN");
    if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

static tl_status tl_avro_json_container(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                        json_t **out, tl_error *err)
{
    bool obj = t->kind != TL_AVRO_ARRAY;
    json_t *c = obj ? json_object() : json_array();
    if (c == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < v->len; i++) {
        const tl_avro_type *it = t->kind == TL_AVRO_RECORD ? t->fields[i].type : t->items;
        const char *key = t->kind == TL_AVRO_RECORD ? t->fields[i].name
                          : t->kind == TL_AVRO_MAP  ? v->keys[i]
                                                    : NULL;
        json_t *item;
        tl_status st = tl_avro_json_out(it, &v->u.items[i], depth + 1, &item, err);
        if (st != TL_OK) {
            json_decref(c);
            if (key) tl_error_prefix(err, "\"%s\"", key);
            return st;
        }
        int rc = obj ? json_object_set_new(c, key, item) : json_array_append_new(c, item);
        if (rc != 0) {
            json_decref(c);
            return tl_error_nomem(err);
        }
    }
    *out = c;
    return TL_OK;
}

static tl_status tl_avro_json_out(const tl_avro_type *t, const tl_avro_value *v, int depth,
                                  json_t **out, tl_error *err)
{
    if (depth > TL_AVRO_MAX_DEPTH)
        return tl_error_set(err, TL_ERR_INVALID, "value nested too deeply");
    if (t->kind == TL_AVRO_UNION) {
        size_t b;
        TL_TRY(tl_avro_union_branch(t, v, &b, err));
        if (v->kind == TL_AVRO_NULL) return (*out = json_null()) ? TL_OK : tl_error_nomem(err);
        json_t *inner;
        TL_TRY(tl_avro_json_out(t->branches[b], v, depth + 1, &inner, err));
        *out = json_object();
        if (*out == NULL || json_object_set_new(*out, tl_avro_branch_name(t->branches[b]), inner)) {
            json_decref(*out);
            return tl_error_nomem(err);
        }
        return TL_OK;
    }
    if (v->kind != t->kind)
        return tl_error_set(err, TL_ERR_INVALID, "expected %s, found %s",
                            tl_avro_kind_name(t->kind), tl_avro_kind_name(v->kind));
    switch (t->kind) {
    case TL_AVRO_NULL:
        *out = json_null();
        break;
    case TL_AVRO_BOOLEAN:
        *out = json_boolean(v->u.b);
        break;
    case TL_AVRO_INT:
    case TL_AVRO_LONG:
        *out = json_integer(v->u.i);
        break;
    case TL_AVRO_FLOAT:
        *out = tl_avro_real_json(v->u.f);
        break;
    case TL_AVRO_DOUBLE:
        *out = tl_avro_real_json(v->u.d);
        break;
    case TL_AVRO_STRING:
        if ((*out = json_stringn((const char *)v->u.bytes, v->len)) == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "string is not valid UTF-8");
        break;
    case TL_AVRO_BYTES:
    case TL_AVRO_FIXED:
        *out = tl_avro_latin1_json(v->u.bytes, v->len);
        break;
    case TL_AVRO_ENUM:
        if (v->u.i < 0 || (uint64_t)v->u.i >= t->n_symbols)
            return tl_error_set(err, TL_ERR_INVALID, "enum index %lld out of range",
                                (long long)v->u.i);
        *out = json_string(t->symbols[v->u.i]);
        break;
    default:
        return tl_avro_json_container(t, v, depth, out, err);
    }
    return *out ? TL_OK : tl_error_nomem(err);
}

tl_status tl_avro_to_json(const tl_avro_type *type, const tl_avro_value *v, json_t **out,
                          tl_error *err)
{
    *out = NULL;
    return tl_avro_json_out(type, v, 0, out, err);
}

/* ---- JSON -> value ---- */

typedef struct tl_avro_json_reader {
    tl_arena *arena;
    tl_error *err;
} tl_avro_json_reader;

static tl_status tl_avro_json_in(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                 int depth, tl_avro_value *out);

static tl_status tl_avro_json_bad(tl_avro_json_reader *r, const tl_avro_type *t)
{
    return tl_error_set(r->err, TL_ERR_INVALID, "JSON value does not match %s",
                        tl_avro_branch_name(t));
}

/* Decodes a string of U+0000..U+00FF code points to bytes. */
static tl_status tl_avro_json_latin1(tl_avro_json_reader *r, const json_t *j, tl_avro_value *out)
{
    const uint8_t *s = (const uint8_t *)json_string_value(j);
    size_t len = json_string_length(j);
    uint8_t *b = tl_arena_alloc(r->arena, len + 1);
    if (b == NULL) return tl_error_nomem(r->err);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < 0x80) {
            b[n++] = s[i];
        } else if ((s[i] & 0xfe) == 0xc2 && i + 1 < len) {
            b[n++] = (uint8_t)((s[i] & 0x03) << 6 | (s[i + 1] & 0x3f));
            i++;
        } else {
            return tl_error_set(r->err, TL_ERR_INVALID, "bytes string has a code point above 255");
        }
    }
    out->u.bytes = b;
    out->len = n;
    return TL_OK;
}

static tl_status tl_avro_json_real(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                   double *out)
{
    const char *s = json_string_value(j);
    if (json_is_number(j))
        *out = json_number_value(j);
    else if (s && strcmp(s, "NaN") == 0)
        *out = NAN;
    else if (s && strcmp(s, "Infinity") == 0)
        *out = INFINITY;
    else if (s && strcmp(s, "-Infinity") == 0)
        *out = -INFINITY;
    else
        return tl_avro_json_bad(r, t);
    return TL_OK;
}

static tl_status tl_avro_json_union(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                    int depth, tl_avro_value *out)
{
    for (size_t i = 0; json_is_null(j) && i < t->n_branches; i++)
        if (t->branches[i]->kind == TL_AVRO_NULL)
            return tl_avro_json_in(r, t->branches[i], j, depth + 1, out);
    if (!json_is_object(j) || json_object_size(j) != 1) return tl_avro_json_bad(r, t);
    const char *key = json_object_iter_key(json_object_iter((json_t *)j));
    for (size_t i = 0; i < t->n_branches; i++)
        if (strcmp(key, tl_avro_branch_name(t->branches[i])) == 0)
            return tl_avro_json_in(r, t->branches[i], json_object_get(j, key), depth + 1, out);
    return tl_error_set(r->err, TL_ERR_INVALID, "union has no branch \"%s\"", key);
}

static tl_status tl_avro_json_record(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                     int depth, tl_avro_value *out)
{
    if (!json_is_object(j)) return tl_avro_json_bad(r, t);
    out->len = t->n_fields;
    if (t->n_fields &&
        (out->u.items = tl_arena_alloc(r->arena, t->n_fields * sizeof *out->u.items)) == NULL)
        return tl_error_nomem(r->err);
    for (size_t i = 0; i < t->n_fields; i++) {
        const tl_avro_field *f = &t->fields[i];
        const json_t *fj = json_object_get(j, f->name);
        const tl_avro_type *ft = f->type;
        if (fj == NULL && f->default_value) {
            /* A union's default is a value of its first branch, unwrapped. */
            fj = f->default_value;
            if (ft->kind == TL_AVRO_UNION && ft->n_branches) ft = ft->branches[0];
        }
        if (fj == NULL)
            return tl_error_set(r->err, TL_ERR_INVALID, "record \"%s\": field \"%s\" is missing",
                                t->fullname, f->name);
        tl_status st = tl_avro_json_in(r, ft, fj, depth + 1, &out->u.items[i]);
        if (st != TL_OK) {
            tl_error_prefix(r->err, "field \"%s\"", f->name);
            return st;
        }
    }
    return TL_OK;
}

static tl_status tl_avro_json_list(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                   int depth, tl_avro_value *out)
{
    bool map = t->kind == TL_AVRO_MAP;
    if (map ? !json_is_object(j) : !json_is_array(j)) return tl_avro_json_bad(r, t);
    size_t n = map ? json_object_size(j) : json_array_size(j);
    out->len = n;
    if (n == 0) return TL_OK;
    out->u.items = tl_arena_alloc(r->arena, n * sizeof *out->u.items);
    if (out->u.items == NULL) return tl_error_nomem(r->err);
    if (!map) {
        for (size_t i = 0; i < n; i++)
            TL_TRY(tl_avro_json_in(r, t->items, json_array_get(j, i), depth + 1, &out->u.items[i]));
        return TL_OK;
    }
    if ((out->keys = tl_arena_alloc(r->arena, n * sizeof *out->keys)) == NULL)
        return tl_error_nomem(r->err);
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)j, key, value)
    {
        if ((out->keys[i] = tl_arena_dup(r->arena, key, strlen(key))) == NULL)
            return tl_error_nomem(r->err);
        TL_TRY(tl_avro_json_in(r, t->items, value, depth + 1, &out->u.items[i]));
        i++;
    }
    return TL_OK;
}

static tl_status tl_avro_json_enum(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                   tl_avro_value *out)
{
    const char *s = json_string_value(j);
    for (size_t i = 0; s && i < t->n_symbols; i++) {
        if (strcmp(s, t->symbols[i]) == 0) {
            out->u.i = (int64_t)i;
            return TL_OK;
        }
    }
    return tl_avro_json_bad(r, t);
}

static tl_status tl_avro_json_in(tl_avro_json_reader *r, const tl_avro_type *t, const json_t *j,
                                 int depth, tl_avro_value *out)
{
    if (depth > TL_AVRO_MAX_DEPTH)
        return tl_error_set(r->err, TL_ERR_INVALID, "JSON value nested too deeply");
    if (t->kind == TL_AVRO_UNION) return tl_avro_json_union(r, t, j, depth, out);
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    out->type = t;
    double d = 0;
    switch (t->kind) {
    case TL_AVRO_NULL:
        return json_is_null(j) ? TL_OK : tl_avro_json_bad(r, t);
    case TL_AVRO_BOOLEAN:
        if (!json_is_boolean(j)) return tl_avro_json_bad(r, t);
        out->u.b = json_is_true(j);
        return TL_OK;
    case TL_AVRO_INT:
    case TL_AVRO_LONG:
        if (!json_is_integer(j)) return tl_avro_json_bad(r, t);
        out->u.i = json_integer_value(j);
        if (t->kind == TL_AVRO_INT && (out->u.i < INT32_MIN || out->u.i > INT32_MAX))
            return tl_avro_json_bad(r, t);
        return TL_OK;
    case TL_AVRO_FLOAT:
    case TL_AVRO_DOUBLE:
        TL_TRY(tl_avro_json_real(r, t, j, &d));
        if (t->kind == TL_AVRO_FLOAT)
            out->u.f = (float)d;
        else
            out->u.d = d;
        return TL_OK;
    case TL_AVRO_STRING:
        if (!json_is_string(j)) return tl_avro_json_bad(r, t);
        out->len = json_string_length(j);
        out->u.bytes = (const uint8_t *)tl_arena_dup(r->arena, json_string_value(j), out->len);
        return out->u.bytes ? TL_OK : tl_error_nomem(r->err);
    case TL_AVRO_BYTES:
    case TL_AVRO_FIXED:
        if (!json_is_string(j)) return tl_avro_json_bad(r, t);
        TL_TRY(tl_avro_json_latin1(r, j, out));
        if (t->kind == TL_AVRO_FIXED && out->len != t->fixed_size)
            return tl_error_set(r->err, TL_ERR_INVALID, "fixed \"%s\" needs %zu bytes, got %zu",
                                t->fullname, t->fixed_size, out->len);
        return TL_OK;
    case TL_AVRO_ENUM:
        return tl_avro_json_enum(r, t, j, out);
    case TL_AVRO_RECORD:
        return tl_avro_json_record(r, t, j, depth, out);
    default:
        return tl_avro_json_list(r, t, j, depth, out);
    }
}

tl_status tl_avro_from_json(const tl_avro_type *type, const json_t *j, tl_arena *arena,
                            tl_avro_value *out, tl_error *err)
{
    tl_avro_json_reader r = {arena, err};
    return tl_avro_json_in(&r, type, j, 0, out);
}
