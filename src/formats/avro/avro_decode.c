/* Binary Avro -> tl_avro_value. */
#include <string.h>

#include "formats/avro/avro_value.h"

#define TL_AVRO_VALUE_BUDGET_BASE 1024
#define TL_AVRO_VALUE_BUDGET_PER_BYTE 4

typedef struct tl_avro_decoder {
    tl_avro_cursor *cur;
    tl_arena *arena;
    tl_error *err;
    size_t *budget; /* values still allowed */
} tl_avro_decoder;

static tl_status tl_avro_decode_value(tl_avro_decoder *d, const tl_avro_type *t, int depth,
                                      tl_avro_value *out);

static tl_status tl_avro_charge(tl_avro_decoder *d, uint64_t n)
{
    if (n > *d->budget)
        return tl_error_set(d->err, TL_ERR_INVALID,
                            "too many values for the input size at offset %zu",
                            tl_avro_cursor_offset(d->cur));
    *d->budget -= (size_t)n;
    return TL_OK;
}

/* Reads one block header of an array or map: the item count (0 ends) with
 * the byte size that follows a negative count, checked against the bytes left. */
static tl_status tl_avro_block_count(tl_avro_decoder *d, size_t item_min, uint64_t *count)
{
    size_t at = tl_avro_cursor_offset(d->cur);
    int64_t n = 0;
    TL_TRY(tl_avro_read_long(d->cur, &n, d->err));
    if (n < 0) {
        if (n == INT64_MIN)
            return tl_error_set(d->err, TL_ERR_INVALID, "invalid block count at offset %zu", at);
        n = -n;
        int64_t size = 0;
        TL_TRY(tl_avro_read_long(d->cur, &size, d->err));
        if (size < 0 || (uint64_t)size > tl_avro_cursor_left(d->cur))
            return tl_error_set(d->err, TL_ERR_INVALID,
                                "block byte size %lld at offset %zu exceeds the input",
                                (long long)size, at);
    }
    if (item_min > 0 && (uint64_t)n > tl_avro_cursor_left(d->cur) / item_min)
        return tl_error_set(d->err, TL_ERR_INVALID,
                            "block of %lld items at offset %zu exceeds the %zu bytes left",
                            (long long)n, at, tl_avro_cursor_left(d->cur));
    *count = (uint64_t)n;
    return tl_avro_charge(d, *count);
}

/* Grows an arena array of `size`-byte elements from *cap to hold `need`. */
static tl_status tl_avro_grow(tl_avro_decoder *d, void **items, size_t size, size_t used,
                              size_t *cap, size_t need)
{
    if (need <= *cap) return TL_OK;
    size_t cap2 = *cap * 2 > need ? *cap * 2 : need;
    if (cap2 > SIZE_MAX / size) return tl_error_nomem(d->err);
    void *p = tl_arena_alloc(d->arena, cap2 * size);
    if (p == NULL) return tl_error_nomem(d->err);
    if (used) memcpy(p, *items, used * size);
    *items = p;
    *cap = cap2;
    return TL_OK;
}

static tl_status tl_avro_decode_list(tl_avro_decoder *d, const tl_avro_type *t, int depth,
                                     tl_avro_value *out)
{
    bool map = t->kind == TL_AVRO_MAP;
    /* A map entry is at least its key's length byte plus the value. */
    size_t item_min = t->items->min_size + (map ? 1 : 0);
    size_t cap = 0, kcap = 0;
    for (;;) {
        uint64_t count = 0;
        TL_TRY(tl_avro_block_count(d, item_min, &count));
        if (count == 0) return TL_OK;
        size_t need = out->len + (size_t)count;
        TL_TRY(tl_avro_grow(d, (void **)&out->u.items, sizeof *out->u.items, out->len, &cap, need));
        if (map)
            TL_TRY(tl_avro_grow(d, (void **)&out->keys, sizeof *out->keys, out->len, &kcap, need));
        for (uint64_t i = 0; i < count; i++) {
            if (map) {
                const uint8_t *key;
                size_t klen;
                TL_TRY(tl_avro_read_bytes(d->cur, &key, &klen, d->err));
                if ((out->keys[out->len] = tl_arena_dup(d->arena, key, klen)) == NULL)
                    return tl_error_nomem(d->err);
            }
            TL_TRY(tl_avro_decode_value(d, t->items, depth + 1, &out->u.items[out->len]));
            out->len++;
        }
    }
}

static tl_status tl_avro_decode_record(tl_avro_decoder *d, const tl_avro_type *t, int depth,
                                       tl_avro_value *out)
{
    TL_TRY(tl_avro_charge(d, t->n_fields));
    if (t->n_fields &&
        (out->u.items = tl_arena_alloc(d->arena, t->n_fields * sizeof *out->u.items)) == NULL)
        return tl_error_nomem(d->err);
    out->len = t->n_fields;
    for (size_t i = 0; i < t->n_fields; i++) {
        tl_status st = tl_avro_decode_value(d, t->fields[i].type, depth + 1, &out->u.items[i]);
        if (st != TL_OK) {
            tl_error_prefix(d->err, "field \"%s\"", t->fields[i].name);
            return st;
        }
    }
    return TL_OK;
}

static tl_status tl_avro_decode_union(tl_avro_decoder *d, const tl_avro_type *t, int depth,
                                      tl_avro_value *out)
{
    size_t at = tl_avro_cursor_offset(d->cur);
    int64_t branch = 0;
    TL_TRY(tl_avro_read_long(d->cur, &branch, d->err));
    if (branch < 0 || (uint64_t)branch >= t->n_branches)
        return tl_error_set(d->err, TL_ERR_INVALID,
                            "union branch %lld at offset %zu is not one of %zu", (long long)branch,
                            at, t->n_branches);
    return tl_avro_decode_value(d, t->branches[branch], depth, out);
}

static tl_status tl_avro_decode_bytes(tl_avro_decoder *d, const uint8_t *data, size_t len,
                                      tl_avro_value *out)
{
    char *copy = tl_arena_dup(d->arena, data, len);
    if (copy == NULL) return tl_error_nomem(d->err);
    out->u.bytes = (const uint8_t *)copy;
    out->len = len;
    return TL_OK;
}

static tl_status tl_avro_decode_enum(tl_avro_decoder *d, const tl_avro_type *t, tl_avro_value *out)
{
    size_t at = tl_avro_cursor_offset(d->cur);
    TL_TRY(tl_avro_read_long(d->cur, &out->u.i, d->err));
    if (out->u.i < 0 || (uint64_t)out->u.i >= t->n_symbols)
        return tl_error_set(d->err, TL_ERR_INVALID, "enum index %lld at offset %zu out of range",
                            (long long)out->u.i, at);
    return TL_OK;
}

static tl_status tl_avro_decode_value(tl_avro_decoder *d, const tl_avro_type *t, int depth,
                                      tl_avro_value *out)
{
    if (depth > TL_AVRO_MAX_DEPTH)
        return tl_error_set(d->err, TL_ERR_INVALID, "data nested deeper than %d levels",
                            TL_AVRO_MAX_DEPTH);
    if (t->kind == TL_AVRO_UNION) return tl_avro_decode_union(d, t, depth + 1, out);
    memset(out, 0, sizeof *out);
    out->kind = t->kind;
    out->type = t;
    const uint8_t *data;
    size_t len;
    int32_t i32;
    switch (t->kind) {
    case TL_AVRO_NULL:
        return TL_OK;
    case TL_AVRO_BOOLEAN:
        return tl_avro_read_bool(d->cur, &out->u.b, d->err);
    case TL_AVRO_INT:
        TL_TRY(tl_avro_read_int(d->cur, &i32, d->err));
        out->u.i = i32;
        return TL_OK;
    case TL_AVRO_LONG:
        return tl_avro_read_long(d->cur, &out->u.i, d->err);
    case TL_AVRO_FLOAT:
        return tl_avro_read_float(d->cur, &out->u.f, d->err);
    case TL_AVRO_DOUBLE:
        return tl_avro_read_double(d->cur, &out->u.d, d->err);
    case TL_AVRO_BYTES:
    case TL_AVRO_STRING:
        TL_TRY(tl_avro_read_bytes(d->cur, &data, &len, d->err));
        return tl_avro_decode_bytes(d, data, len, out);
    case TL_AVRO_FIXED:
        TL_TRY(tl_avro_read_fixed(d->cur, t->fixed_size, &data, d->err));
        return tl_avro_decode_bytes(d, data, t->fixed_size, out);
    case TL_AVRO_ENUM:
        return tl_avro_decode_enum(d, t, out);
    case TL_AVRO_RECORD:
        return tl_avro_decode_record(d, t, depth, out);
    case TL_AVRO_ARRAY:
    case TL_AVRO_MAP:
        return tl_avro_decode_list(d, t, depth, out);
    case TL_AVRO_UNION:
        break;
    }
    return tl_error_set(d->err, TL_ERR_INTERNAL, "unknown avro kind %d", (int)t->kind);
}

size_t tl_avro_decode_budget(size_t bytes)
{
    if (bytes > (SIZE_MAX - TL_AVRO_VALUE_BUDGET_BASE) / TL_AVRO_VALUE_BUDGET_PER_BYTE)
        return SIZE_MAX;
    return TL_AVRO_VALUE_BUDGET_BASE + bytes * TL_AVRO_VALUE_BUDGET_PER_BYTE;
}

tl_status tl_avro_decode(const tl_avro_type *type, tl_avro_cursor *cur, tl_arena *arena,
                         size_t *budget, tl_avro_value *out, tl_error *err)
{
    size_t own = tl_avro_decode_budget(tl_avro_cursor_left(cur));
    tl_avro_decoder d = {cur, arena, err, budget ? budget : &own};
    /* The datum itself counts: zero-byte datums cannot repeat for free. */
    TL_TRY(tl_avro_charge(&d, 1));
    return tl_avro_decode_value(&d, type, 0, out);
}
