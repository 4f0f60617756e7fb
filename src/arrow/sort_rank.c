/* Dense ranks of the distinct values of a string-like column: a hash table
 * gives each distinct value an id (short values are compared as two words,
 * without touching their bytes again), then the distinct values are sorted
 * once, by an 8-byte prefix with the radix sort and by full bytes within equal
 * prefixes. */
#include <stdlib.h>
#include <string.h>

#include "arrow/buffers.h"
#include "arrow/sort_internal.h"

typedef struct tl_rank_id {
    uint64_t hash;
    uint64_t w0, w1; /* see value_words */
    int64_t len;
    int64_t first; /* an element holding the value */
} tl_rank_id;

typedef struct tl_ranker {
    const tl_array_view *v; /* var-width or fixed_size_binary elements */
    uint32_t *slots;        /* id + 1 per slot, 0 when empty */
    size_t mask;
    tl_rank_id *ids;
    uint32_t n_ids, cap_ids;
} tl_ranker;

static inline const uint8_t *element(const tl_array_view *v, int64_t i, int64_t *len)
{
    if (v->type.id != TL_ATYPE_FIXED_BINARY) return tl_view_bytes(v, i, len);
    *len = v->type.byte_width;
    return (const uint8_t *)v->values + (size_t)(v->offset + i) * (size_t)v->type.byte_width;
}

/* Two words that, with the length, identify a value of up to 16 bytes (they
 * overlap for shorter values); for longer ones a quick filter. */
static inline void value_words(const uint8_t *p, int64_t len, uint64_t *w0, uint64_t *w1)
{
    if (len >= 8) {
        memcpy(w0, p, 8);
        memcpy(w1, p + len - 8, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        *w0 = a;
        *w1 = b;
    } else {
        *w0 = len > 0 ? p[0] | (uint64_t)p[len / 2] << 8 | (uint64_t)p[len - 1] << 16 : 0;
        *w1 = 0;
    }
}

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ULL;
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ULL;
    return x ^ (x >> 32);
}

static uint64_t value_hash(const uint8_t *p, int64_t len, uint64_t w0, uint64_t w1)
{
    uint64_t h = mix64(w0 ^ ((uint64_t)len << 48)) ^ w1 * 0x9E3779B97F4A7C15ULL;
    for (int64_t i = 8; i + 8 < len; i += 8) { /* the middle of long values */
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h = h << 29 | h >> 35;
    }
    return mix64(h);
}

static bool same_value(const tl_ranker *r, const tl_rank_id *id, const uint8_t *p, int64_t len,
                       uint64_t hash, uint64_t w0, uint64_t w1)
{
    if (id->hash != hash || id->len != len || id->w0 != w0 || id->w1 != w1) return false;
    if (len <= 16) return true;
    int64_t other_len;
    return memcmp(element(r->v, id->first, &other_len), p, (size_t)len) == 0;
}

static bool ranker_grow(tl_ranker *r)
{
    uint32_t cap = r->cap_ids ? r->cap_ids * 2 : 256;
    tl_rank_id *ids = realloc(r->ids, (size_t)cap * sizeof *ids);
    if (ids == NULL) return false;
    r->ids = ids;
    size_t n_slots = (size_t)cap * 2;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (slots == NULL) return false;
    free(r->slots);
    r->slots = slots;
    r->mask = n_slots - 1;
    r->cap_ids = cap;
    for (uint32_t id = 0; id < r->n_ids; id++) {
        size_t s = r->ids[id].hash & r->mask;
        while (r->slots[s]) s = (s + 1) & r->mask;
        r->slots[s] = id + 1;
    }
    return true;
}

/* The id of element i's value, adding it when new; UINT32_MAX when out of memory. */
static uint32_t ranker_id(tl_ranker *r, const uint8_t *p, int64_t len, uint64_t w0, uint64_t w1,
                          int64_t i)
{
    uint64_t h = value_hash(p, len, w0, w1);
    for (;;) {
        size_t s = h & r->mask;
        for (; r->slots[s]; s = (s + 1) & r->mask) {
            uint32_t id = r->slots[s] - 1;
            if (same_value(r, &r->ids[id], p, len, h, w0, w1)) return id;
        }
        if (r->n_ids < r->cap_ids) {
            uint32_t id = r->n_ids++;
            r->ids[id] = (tl_rank_id){h, w0, w1, len, i};
            r->slots[s] = id + 1;
            return id;
        }
        if (r->cap_ids >= UINT32_MAX / 4 || !ranker_grow(r)) return UINT32_MAX;
    }
}

/* ids[i] = id of element i's value (UINT32_MAX for nulls). */
static tl_status ranker_ids(tl_ranker *r, uint32_t *ids, tl_error *err)
{
    const tl_array_view *v = r->v;
    uint64_t prev_w0 = 0, prev_w1 = 0;
    int64_t prev_len = -1;
    uint32_t prev_id = 0;
    if (!ranker_grow(r)) return tl_error_nomem(err);
    for (int64_t i = 0; i < v->length; i++) {
        if (tl_view_is_null(v, i)) {
            ids[i] = UINT32_MAX;
            continue;
        }
        int64_t len;
        uint64_t w0, w1;
        const uint8_t *p = element(v, i, &len);
        value_words(p, len, &w0, &w1);
        /* Runs of one value are common (sorted or grouped input): skip the hash. */
        if (len == prev_len && len <= 16 && w0 == prev_w0 && w1 == prev_w1) {
            ids[i] = prev_id;
            continue;
        }
        ids[i] = ranker_id(r, p, len, w0, w1, i);
        if (ids[i] == UINT32_MAX) return tl_error_nomem(err);
        prev_w0 = w0;
        prev_w1 = w1;
        prev_len = len;
        prev_id = ids[i];
    }
    return TL_OK;
}

/* The first 8 bytes, big-endian and zero-padded: their order is the bytes' order. */
static uint64_t value_prefix(const uint8_t *p, int64_t len)
{
    uint8_t b[8] = {0};
    if (len > 0) memcpy(b, p, (size_t)(len < 8 ? len : 8));
    uint64_t x = 0;
    for (int k = 0; k < 8; k++) x = x << 8 | b[k];
    return x;
}

typedef struct tl_rank_entry {
    const uint8_t *p;
    int64_t len;
    uint32_t id;
} tl_rank_entry;

static int compare_entries(const void *a, const void *b)
{
    const tl_rank_entry *x = a, *y = b;
    int64_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->p, y->p, (size_t)n) : 0;
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* Orders a run of ids whose prefixes are equal by their full bytes. */
static tl_status sort_tied(const tl_ranker *r, uint32_t *run, int64_t n, tl_error *err)
{
    tl_rank_entry *e = malloc((size_t)n * sizeof *e);
    if (e == NULL) return tl_error_nomem(err);
    for (int64_t k = 0; k < n; k++) {
        e[k].p = element(r->v, r->ids[run[k]].first, &e[k].len);
        e[k].id = run[k];
    }
    qsort(e, (size_t)n, sizeof *e, compare_entries);
    for (int64_t k = 0; k < n; k++) run[k] = e[k].id;
    free(e);
    return TL_OK;
}

/* order = the ids sorted by value, bytewise. */
static tl_status ranker_order(const tl_ranker *r, uint32_t *order, tl_error *err)
{
    int64_t n = r->n_ids;
    uint64_t *prefix = malloc((size_t)(n ? n : 1) * sizeof *prefix);
    if (prefix == NULL) return tl_error_nomem(err);
    for (int64_t id = 0; id < n; id++) {
        int64_t len;
        const uint8_t *p = element(r->v, r->ids[id].first, &len);
        prefix[id] = value_prefix(p, len);
        order[id] = (uint32_t)id;
    }
    tl_status st = tl_sort_pairs(prefix, order, n, 64, err);
    for (int64_t start = 0, end; st == TL_OK && start < n; start = end) {
        for (end = start + 1; end < n && prefix[end] == prefix[start];) end++;
        if (end - start > 1) st = sort_tied(r, order + start, end - start, err);
    }
    free(prefix);
    return st;
}

static void ranker_free(tl_ranker *r)
{
    free(r->slots);
    free(r->ids);
}

static tl_status ranker_ranks(const tl_ranker *r, uint32_t *rank, tl_error *err)
{
    uint32_t *order = malloc((size_t)(r->n_ids ? r->n_ids : 1) * sizeof *order);
    if (order == NULL) return tl_error_nomem(err);
    tl_status st = ranker_order(r, order, err);
    for (uint32_t k = 0; st == TL_OK && k < r->n_ids; k++) rank[order[k]] = k;
    free(order);
    return st;
}

tl_status tl_sort_rank_values(const tl_array_view *elements, uint32_t **ids, uint32_t **rank,
                              uint32_t *n_distinct, tl_error *err)
{
    *ids = NULL;
    *rank = NULL;
    *n_distinct = 0;
    if (tl_atype_is_varbinary(elements->type.id)) TL_TRY(tl_offsets_check(elements, err));
    tl_ranker r = {.v = elements};
    size_t n = (size_t)(elements->length > 0 ? elements->length : 1);
    *ids = malloc(n * sizeof **ids);
    tl_status st = *ids ? ranker_ids(&r, *ids, err) : tl_error_nomem(err);
    if (st == TL_OK) {
        *rank = malloc((size_t)(r.n_ids ? r.n_ids : 1) * sizeof **rank);
        st = *rank ? ranker_ranks(&r, *rank, err) : tl_error_nomem(err);
    }
    *n_distinct = r.n_ids;
    ranker_free(&r);
    if (st != TL_OK) {
        free(*ids);
        free(*rank);
        *ids = *rank = NULL;
    }
    return st;
}
