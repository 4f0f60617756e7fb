/* Turns a sort key into order-preserving unsigned codes for the packed plan:
 * numbers become order-preserving integers compressed to their range, strings
 * and binaries the rank of their distinct value. Nulls and NaNs get codes of
 * their own at the ends of the range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/parse.h"
#include "arrow/sort_internal.h"
#include "arrow/take.h"

#define TL_SIGN64 0x8000000000000000ULL
#define TL_NAN_CODE UINT64_MAX /* only ever compared for float keys */

/* ---- Numbers ---- */

static uint64_t float64_order(double x)
{
    if (isnan(x)) return TL_NAN_CODE;
    uint64_t b;
    memcpy(&b, &x, 8);
    return b & TL_SIGN64 ? ~b : b | TL_SIGN64;
}

static uint64_t float32_order(float x)
{
    if (isnan(x)) return TL_NAN_CODE;
    uint32_t b;
    memcpy(&b, &x, 4);
    return b & 0x80000000u ? (uint32_t)~b : b | 0x80000000u;
}

#define TL_ORDER(T, EXPR)                                                                          \
    do {                                                                                           \
        const T *p = (const T *)v->values + v->offset;                                             \
        for (int64_t i = 0; i < n; i++) u[i] = (EXPR);                                             \
    } while (0)

/* u[i] = an unsigned integer in the order of row i's value (garbage for nulls). */
static void numeric_order(const tl_array_view *v, uint64_t *u)
{
    int64_t n = v->length;
    switch (v->type.id) {
    case TL_ATYPE_BOOL:
        for (int64_t i = 0; i < n; i++) u[i] = tl_bit_get(v->values, v->offset + i);
        break;
    case TL_ATYPE_INT8:
        TL_ORDER(int8_t, (uint64_t)(int64_t)p[i] ^ TL_SIGN64);
        break;
    case TL_ATYPE_INT16:
        TL_ORDER(int16_t, (uint64_t)(int64_t)p[i] ^ TL_SIGN64);
        break;
    case TL_ATYPE_INT32:
    case TL_ATYPE_DATE32:
    case TL_ATYPE_TIME32:
        TL_ORDER(int32_t, (uint64_t)(int64_t)p[i] ^ TL_SIGN64);
        break;
    case TL_ATYPE_UINT8:
        TL_ORDER(uint8_t, p[i]);
        break;
    case TL_ATYPE_UINT16:
        TL_ORDER(uint16_t, p[i]);
        break;
    case TL_ATYPE_UINT32:
        TL_ORDER(uint32_t, p[i]);
        break;
    case TL_ATYPE_UINT64:
        TL_ORDER(uint64_t, p[i]);
        break;
    case TL_ATYPE_FLOAT32:
        TL_ORDER(float, float32_order(p[i]));
        break;
    case TL_ATYPE_FLOAT64:
        TL_ORDER(double, float64_order(p[i]));
        break;
    default:
        TL_ORDER(int64_t, (uint64_t)p[i] ^ TL_SIGN64);
        break;
    }
}

/* How the codes of one key are laid out: [nulls first][values][NaN][nulls last]. */
typedef struct tl_code_map {
    uint64_t lo, hi; /* range of the non-null, non-NaN order values */
    bool any;        /* there is such a value */
    bool has_nulls, has_nan, desc, nulls_first;
} tl_code_map;

static void value_range(const tl_array_view *v, const uint64_t *u, bool is_float, tl_code_map *m)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    bool nan = false, any = false;
    for (int64_t i = 0; i < v->length; i++) {
        if (tl_view_is_null(v, i)) continue;
        if (is_float && u[i] == TL_NAN_CODE) {
            nan = true;
            continue;
        }
        any = true;
        lo = u[i] < lo ? u[i] : lo;
        hi = u[i] > hi ? u[i] : hi;
    }
    m->lo = any ? lo : 0;
    m->hi = any ? hi : 0;
    m->any = any;
    m->has_nan = nan;
}

static bool has_nulls(const tl_array_view *v)
{
    return v->validity && tl_bitmap_count(v->validity, v->offset, v->length) < v->length;
}

/* Rewrites the order values u in place as codes: [nulls first][values][NaN][nulls last]. */
static void assign_codes(const tl_array_view *v, uint64_t *u, const tl_code_map *m, bool is_float,
                         uint64_t base, uint64_t nan_code, uint64_t null_code)
{
    int64_t n = v->length;
    if (v->validity == NULL && !m->has_nan) {
        if (m->desc)
            for (int64_t i = 0; i < n; i++) u[i] = base + (m->hi - u[i]);
        else
            for (int64_t i = 0; i < n; i++) u[i] = base + (u[i] - m->lo);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (tl_view_is_null(v, i))
            u[i] = null_code;
        else if (is_float && u[i] == TL_NAN_CODE)
            u[i] = nan_code;
        else
            u[i] = base + (m->desc ? m->hi - u[i] : u[i] - m->lo);
    }
}

/* When the range is the full 64 bits there is no code left for nulls and
 * NaN: they go into a more significant subkey of their own. */
static tl_status add_split(tl_sort_plan *p, const tl_array_view *v, const tl_code_map *m,
                           bool is_float, tl_error *err)
{
    uint8_t *cls = malloc((size_t)(v->length > 0 ? v->length : 1));
    if (cls == NULL) return tl_error_nomem(err);
    uint64_t *u = p->scratch; /* holds the order values */
    for (int64_t i = 0; i < v->length; i++) {
        bool null = tl_view_is_null(v, i), nan = !null && is_float && u[i] == TL_NAN_CODE;
        cls[i] = null ? (m->nulls_first ? 0 : 3) : nan ? 2 : 1;
        u[i] = cls[i] == 1 ? (m->desc ? m->hi - u[i] : u[i] - m->lo) : 0;
    }
    tl_status st = tl_sort_plan_add(p, m->hi - m->lo, err);
    u = st == TL_OK ? tl_sort_plan_scratch(p) : NULL;
    if (st == TL_OK && u == NULL) st = tl_error_nomem(err);
    for (int64_t i = 0; st == TL_OK && i < v->length; i++) u[i] = cls[i];
    if (st == TL_OK) st = tl_sort_plan_add(p, 3, err);
    free(cls);
    return st;
}

/* Codes from the order values in p->scratch. */
static tl_status add_ordered(tl_sort_plan *p, const tl_array_view *v, tl_code_map *m, bool is_float,
                             tl_error *err)
{
    uint64_t range = m->hi - m->lo;
    uint64_t base = m->has_nulls && m->nulls_first;
    uint64_t extra = base + m->has_nan + (m->has_nulls && !m->nulls_first);
    if (range > UINT64_MAX - extra) return add_split(p, v, m, is_float, err);
    uint64_t nan_code = base + range + 1;
    uint64_t null_code = m->nulls_first ? 0 : base + range + 1 + m->has_nan;
    assign_codes(v, p->scratch, m, is_float, base, nan_code, null_code);
    return tl_sort_plan_add(p, range + extra, err);
}

static tl_status encode_numeric(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    const tl_array_view *v = key->view;
    bool is_float = v->type.id == TL_ATYPE_FLOAT32 || v->type.id == TL_ATYPE_FLOAT64;
    tl_code_map m = {.desc = key->descending, .nulls_first = key->nulls_first};
    uint64_t *u = tl_sort_plan_scratch(p);
    if (u == NULL) return tl_error_nomem(err);
    numeric_order(v, u);
    value_range(v, u, is_float, &m);
    m.has_nulls = has_nulls(v);
    return add_ordered(p, v, &m, is_float, err);
}

/* ---- Decimals ---- */

static tl_i128 decimal_at(const tl_array_view *v, int64_t i)
{
    return tl_load_i128((const uint8_t *)v->values + (size_t)(v->offset + i) * 16);
}

/* Values spanning more than 64 bits: (null class, high word, low word). */
static tl_status encode_wide_decimal(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    const tl_array_view *v = key->view;
    uint64_t flip = key->descending ? UINT64_MAX : 0, max = 0, *u;
    if ((u = tl_sort_plan_scratch(p)) == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < v->length; i++) {
        u[i] = tl_view_is_null(v, i) ? 0 : (uint64_t)decimal_at(v, i) ^ flip;
        max = u[i] > max ? u[i] : max;
    }
    TL_TRY(tl_sort_plan_add(p, max, err));
    max = 0;
    if ((u = tl_sort_plan_scratch(p)) == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < v->length; i++) {
        uint64_t high = (uint64_t)(decimal_at(v, i) >> 64) ^ TL_SIGN64;
        u[i] = tl_view_is_null(v, i) ? 0 : high ^ flip;
        max = u[i] > max ? u[i] : max;
    }
    TL_TRY(tl_sort_plan_add(p, max, err));
    if ((u = tl_sort_plan_scratch(p)) == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < v->length; i++)
        u[i] = tl_view_is_null(v, i) == key->nulls_first ? 0 : 1;
    return tl_sort_plan_add(p, has_nulls(v) ? 1 : 0, err);
}

static tl_status encode_decimal(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    const tl_array_view *v = key->view;
    tl_i128 lo = 0, hi = 0;
    bool any = false;
    for (int64_t i = 0; i < v->length; i++) {
        if (tl_view_is_null(v, i)) continue;
        tl_i128 x = decimal_at(v, i);
        lo = !any || x < lo ? x : lo;
        hi = !any || x > hi ? x : hi;
        any = true;
    }
    __extension__ typedef unsigned __int128 u128;
    if ((u128)hi - (u128)lo > UINT64_MAX) return encode_wide_decimal(p, key, err);
    uint64_t *u = tl_sort_plan_scratch(p);
    if (u == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < v->length; i++)
        u[i] = tl_view_is_null(v, i) ? 0 : (uint64_t)((u128)decimal_at(v, i) - (u128)lo);
    tl_code_map m = {.lo = 0,
                     .hi = (uint64_t)((u128)hi - (u128)lo),
                     .any = any,
                     .has_nulls = has_nulls(v),
                     .desc = key->descending,
                     .nulls_first = key->nulls_first};
    return add_ordered(p, v, &m, false, err);
}

/* ---- Strings and binaries: ranks of the distinct values ---- */

/* Codes for rows whose element ids are ids[row] (UINT32_MAX: null). */
static tl_status add_ranked(tl_sort_plan *p, const tl_sort_key *key, const uint32_t *ids,
                            const uint32_t *rank, uint32_t distinct, bool nulls, tl_error *err)
{
    uint64_t base = nulls && key->nulls_first, top = distinct ? distinct - 1 : 0;
    uint64_t null_code = key->nulls_first ? 0 : base + top + 1;
    uint64_t *u = tl_sort_plan_scratch(p);
    if (u == NULL) return tl_error_nomem(err);
    for (int64_t i = 0; i < p->n; i++) {
        if (ids[i] == UINT32_MAX) {
            u[i] = null_code;
            continue;
        }
        uint64_t k = rank[ids[i]];
        u[i] = base + (key->descending ? top - k : k);
    }
    return tl_sort_plan_add(p, base + top + (nulls && !key->nulls_first), err);
}

static tl_status encode_ranked(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    uint32_t *ids, *rank, distinct;
    TL_TRY(tl_sort_rank_values(key->view, &ids, &rank, &distinct, err));
    tl_status st = add_ranked(p, key, ids, rank, distinct, has_nulls(key->view), err);
    free(ids);
    free(rank);
    return st;
}

/* String-like dictionaries: rank the dictionary once, then map the indices. */
static tl_status encode_dictionary_ranked(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    int64_t *idx;
    uint32_t *entry_ids = NULL, *rank = NULL, distinct = 0;
    TL_TRY(tl_arrow_dict_indices(key->view, &idx, err));
    tl_status st = tl_sort_rank_values(key->view->dictionary, &entry_ids, &rank, &distinct, err);
    uint32_t *ids = st == TL_OK ? malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *ids) : NULL;
    if (st == TL_OK && ids == NULL) st = tl_error_nomem(err);
    bool nulls = false;
    for (int64_t i = 0; st == TL_OK && i < p->n; i++) {
        ids[i] = idx[i] < 0 ? UINT32_MAX : entry_ids[idx[i]];
        nulls |= ids[i] == UINT32_MAX;
    }
    if (st == TL_OK) st = add_ranked(p, key, ids, rank, distinct, nulls, err);
    free(entry_ids);
    free(rank);
    free(ids);
    free(idx);
    return st;
}

static tl_status encode_plain(tl_sort_plan *p, const tl_sort_key *key, tl_error *err);

/* Other dictionaries (rare): decode, then encode the plain values. */
static tl_status encode_dictionary(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    tl_atype id = key->view->type.id;
    if (tl_atype_is_varbinary(id) || id == TL_ATYPE_FIXED_BINARY)
        return encode_dictionary_ranked(p, key, err);
    struct ArrowArray decoded;
    TL_TRY(tl_arrow_dict_decode(key->view, &decoded, err));
    tl_array_view plain;
    tl_view_of_owned(&key->view->type, &decoded, &plain);
    tl_sort_key k = *key;
    k.view = &plain;
    tl_status st = encode_plain(p, &k, err);
    tl_array_release(&decoded);
    return st;
}

static tl_status encode_plain(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    tl_atype id = key->view->type.id;
    if (tl_atype_is_varbinary(id) || id == TL_ATYPE_FIXED_BINARY) return encode_ranked(p, key, err);
    if (id == TL_ATYPE_DECIMAL128) return encode_decimal(p, key, err);
    if (id == TL_ATYPE_NULL) return TL_OK; /* all equal */
    if (id == TL_ATYPE_FLOAT16 || id == TL_ATYPE_STRUCT) {
        char name[96];
        tl_arrow_type_describe(&key->view->type, name, sizeof name);
        return tl_error_set(err, TL_ERR_INVALID, "cannot sort by %s", name);
    }
    return encode_numeric(p, key, err);
}

tl_status tl_sort_encode_key(tl_sort_plan *p, const tl_sort_key *key, tl_error *err)
{
    if (key->view->is_dictionary) return encode_dictionary(p, key, err);
    return encode_plain(p, key, err);
}
