#include "iceberg/partition_value.h"

#include <stdlib.h>
#include <string.h>

static int cmp_bytes(const tl_ice_value *a, const tl_ice_value *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->bytes, b->bytes, n) : 0;
    return c ? (c < 0 ? -1 : 1) : (a->len > b->len) - (a->len < b->len);
}

int tl_ice_value_compare(const tl_ice_value *a, const tl_ice_value *b)
{
    bool na = a->kind == TL_ICE_VALUE_NULL, nb = b->kind == TL_ICE_VALUE_NULL;
    if (na || nb) return nb - na;
    switch (a->kind) {
    case TL_ICE_VALUE_STRING:
    case TL_ICE_VALUE_BYTES:
        return cmp_bytes(a, b);
    case TL_ICE_VALUE_FLOAT:
    case TL_ICE_VALUE_DOUBLE:
        return (a->d > b->d) - (a->d < b->d);
    default:
        return (a->i > b->i) - (a->i < b->i);
    }
}

int tl_ice_values_compare(const tl_ice_value *a, size_t na, const tl_ice_value *b, size_t nb)
{
    for (size_t i = 0; i < na && i < nb; i++) {
        int c = tl_ice_value_compare(&a[i], &b[i]);
        if (c) return c;
    }
    return (na > nb) - (na < nb);
}

void tl_ice_values_free(tl_ice_value *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i].bytes);
    free(v);
}

tl_status tl_ice_values_copy(const tl_ice_value *src, size_t n, tl_ice_value **out, tl_error *err)
{
    *out = NULL;
    if (n == 0) return TL_OK;
    tl_ice_value *v = calloc(n, sizeof *v);
    if (v == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        v[i] = src[i];
        v[i].bytes = NULL;
        if (src[i].bytes == NULL) continue;
        /* One spare NUL: string values are read as C strings too. */
        if ((v[i].bytes = malloc(src[i].len + 1)) == NULL) {
            tl_ice_values_free(v, i);
            return tl_error_nomem(err);
        }
        memcpy(v[i].bytes, src[i].bytes, src[i].len);
        v[i].bytes[src[i].len] = 0;
    }
    *out = v;
    return TL_OK;
}

/* Iceberg's single-value serialization of a partition value (malloc'd). */
static uint8_t *serialize(const tl_ice_value *v, size_t *len)
{
    uint8_t *out = NULL;
    switch (v->kind) {
    case TL_ICE_VALUE_INT:
    case TL_ICE_VALUE_LONG:
    case TL_ICE_VALUE_BOOL:
        *len = v->kind == TL_ICE_VALUE_LONG ? 8 : v->kind == TL_ICE_VALUE_INT ? 4 : 1;
        if ((out = malloc(8)) == NULL) return NULL;
        tl_store_le64(out, (uint64_t)v->i); /* little-endian: the low bytes first */
        return out;
    case TL_ICE_VALUE_FLOAT: {
        float f = (float)v->d;
        *len = 4;
        if ((out = malloc(4)) != NULL) memcpy(out, &f, 4);
        return out;
    }
    case TL_ICE_VALUE_DOUBLE:
        *len = 8;
        if ((out = malloc(8)) != NULL) memcpy(out, &v->d, 8);
        return out;
    default:
        *len = v->len;
        if ((out = malloc(v->len ? v->len : 1)) != NULL && v->len) memcpy(out, v->bytes, v->len);
        return out;
    }
}

tl_status tl_ice_partition_summaries(const tl_ice_value *const *tuples, size_t n, size_t n_fields,
                                     tl_ice_field_summary **out, tl_error *err)
{
    *out = NULL;
    if (n_fields == 0) return TL_OK;
    tl_ice_field_summary *s = calloc(n_fields, sizeof *s);
    if (s == NULL) return tl_error_nomem(err);
    for (size_t f = 0; f < n_fields; f++) {
        const tl_ice_value *lo = NULL, *hi = NULL;
        for (size_t i = 0; i < n; i++) {
            const tl_ice_value *v = &tuples[i][f];
            if (v->kind == TL_ICE_VALUE_NULL) {
                s[f].contains_null = true;
                continue;
            }
            if (lo == NULL || tl_ice_value_compare(v, lo) < 0) lo = v;
            if (hi == NULL || tl_ice_value_compare(v, hi) > 0) hi = v;
        }
        s[f].has_contains_nan = true;
        if (lo == NULL) continue;
        s[f].lower_bound = serialize(lo, &s[f].lower_len);
        s[f].upper_bound = serialize(hi, &s[f].upper_len);
        if (s[f].lower_bound == NULL || s[f].upper_bound == NULL) {
            for (size_t k = 0; k <= f; k++) {
                free(s[k].lower_bound);
                free(s[k].upper_bound);
            }
            free(s);
            return tl_error_nomem(err);
        }
    }
    *out = s;
    return TL_OK;
}
