#include "table/maintain_series.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

/* A series encoded: per column a tag (null, integer or bytes) then the
 * integer's 8 bytes, or the bytes' length (4 bytes) and the bytes. Equal
 * series encode to equal strings, and the tags let the comparison below
 * decode them without knowing the columns. */
enum { TAG_NULL, TAG_INT, TAG_BYTES };

void tl_series_set_init(tl_series_set *s, const int8_t *width, size_t n_cols)
{
    memset(s, 0, sizeof *s);
    s->n_cols = n_cols < TL_SERIES_MAX_COLS ? n_cols : TL_SERIES_MAX_COLS;
    memcpy(s->width, width, s->n_cols);
}

void tl_series_set_free(tl_series_set *s)
{
    tl_buf_free(&s->keys);
    free(s->start);
    free(s->hash);
    free(s->rank);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static int encode(const tl_series_set *s, const tl_array_view *cols, int64_t row, tl_buf *out)
{
    for (size_t k = 0; k < s->n_cols; k++) {
        const tl_array_view *v = &cols[k];
        if (tl_view_is_null(v, row)) {
            if (tl_buf_append_byte(out, TAG_NULL) != 0) return -1;
        } else if (s->width[k]) {
            int64_t x = tl_view_int_of_width(v, s->width[k], row);
            if (tl_buf_append_byte(out, TAG_INT) != 0 || tl_buf_append(out, &x, 8) != 0) return -1;
        } else {
            int64_t len;
            const uint8_t *p = tl_view_bytes(v, row, &len);
            uint32_t n = (uint32_t)len;
            if (tl_buf_append_byte(out, TAG_BYTES) != 0 || tl_buf_append(out, &n, 4) != 0 ||
                tl_buf_append(out, p, (size_t)len) != 0)
                return -1;
        }
    }
    return 0;
}

/* Whether rows i and j hold the same series: most rows of a sorted file
 * continue the series of the row before, and this is cheaper than a lookup. */
static bool same_series(const tl_series_set *s, const tl_array_view *cols, int64_t i, int64_t j)
{
    for (size_t k = 0; k < s->n_cols; k++) {
        const tl_array_view *v = &cols[k];
        bool ni = tl_view_is_null(v, i), nj = tl_view_is_null(v, j);
        if (ni || nj) {
            if (ni != nj) return false;
            continue;
        }
        if (s->width[k]) {
            if (tl_view_int_of_width(v, s->width[k], i) != tl_view_int_of_width(v, s->width[k], j))
                return false;
            continue;
        }
        int64_t li, lj;
        const uint8_t *pi = tl_view_bytes(v, i, &li), *pj = tl_view_bytes(v, j, &lj);
        if (li != lj || !tl_bytes_equal(pi, pj, (size_t)li)) return false;
    }
    return true;
}

static uint64_t hash_bytes(const uint8_t *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ len;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, p, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 29);
}

static const uint8_t *key_of(const tl_series_set *s, size_t id, size_t *len)
{
    *len = s->start[id + 1] - s->start[id];
    return s->keys.data + s->start[id];
}

/* The id of the series encoded in keys[from..], or -1. */
static int32_t find(const tl_series_set *s, size_t from, uint64_t h, size_t *slot)
{
    size_t len = s->keys.len - from;
    for (size_t i = h & s->mask;; i = (i + 1) & s->mask) {
        int32_t e = s->slots[i];
        *slot = i;
        if (e == 0) return -1;
        size_t klen;
        const uint8_t *k = key_of(s, (size_t)e - 1, &klen);
        if (s->hash[e - 1] == h && klen == len && memcmp(k, s->keys.data + from, len) == 0)
            return e - 1;
    }
}

static int grow_slots(tl_series_set *s)
{
    size_t n_slots = s->mask ? (s->mask + 1) * 2 : 256;
    int32_t *slots = calloc(n_slots, sizeof *slots);
    if (slots == NULL) return -1;
    for (size_t id = 0; id < s->n; id++) {
        size_t i = s->hash[id] & (n_slots - 1);
        while (slots[i]) i = (i + 1) & (n_slots - 1);
        slots[i] = (int32_t)id + 1;
    }
    free(s->slots);
    s->slots = slots;
    s->mask = n_slots - 1;
    return 0;
}

/* Room for one more id: start holds cap + 1 entries, hash cap. */
static int reserve(tl_series_set *s)
{
    if (s->start != NULL && s->n + 1 < s->cap) return 0;
    size_t cap = tl_grow_capacity(s->cap, s->n + 2, sizeof *s->start, 256);
    bool first = s->start == NULL;
    if (cap == 0 || tl_realloc_array(&s->start, cap + 1, sizeof *s->start) != 0) return -1;
    if (first) s->start[0] = 0;
    if (tl_realloc_array(&s->hash, cap, sizeof *s->hash) != 0) return -1;
    s->cap = cap;
    return 0;
}

/* Keeps the series just encoded at the end of keys as a new id. */
static int add(tl_series_set *s, uint64_t h, size_t slot)
{
    if (reserve(s) != 0) return -1;
    s->hash[s->n] = h;
    s->slots[slot] = (int32_t)s->n + 1;
    s->n++;
    s->start[s->n] = s->keys.len;
    return s->n * 2 > s->mask + 1 ? grow_slots(s) : 0;
}

static tl_status lookup_row(tl_series_set *s, const tl_array_view *cols, int64_t row, int32_t *out,
                            bool *found, tl_error *err)
{
    if ((s->slots == NULL && grow_slots(s) != 0) || reserve(s) != 0) return tl_error_nomem(err);
    size_t from = s->keys.len;
    if (encode(s, cols, row, &s->keys) != 0) return tl_error_nomem(err);
    uint64_t h = hash_bytes(s->keys.data + from, s->keys.len - from);
    size_t slot;
    int32_t id = find(s, from, h, &slot);
    if (id >= 0 || s->ranked) {
        s->keys.len = from;
        *found = id >= 0;
        *out = id >= 0 ? (s->ranked ? s->rank[id] : id) : 0;
        return TL_OK;
    }
    if (add(s, h, slot) != 0) return tl_error_nomem(err);
    *out = (int32_t)s->n - 1;
    return TL_OK;
}

tl_status tl_series_set_lookup(tl_series_set *s, const tl_array_view *cols, int64_t n_rows,
                               int32_t *out, bool *found, tl_error *err)
{
    *found = true;
    for (int64_t i = 0; i < n_rows && *found; i++) {
        if (i > 0 && same_series(s, cols, i - 1, i)) {
            out[i] = out[i - 1];
            continue;
        }
        TL_TRY(lookup_row(s, cols, i, &out[i], found, err));
    }
    return TL_OK;
}

static int cmp_keys(const uint8_t *a, const uint8_t *a_end, const uint8_t *b)
{
    while (a < a_end) {
        uint8_t ta = *a++, tb = *b++;
        if (ta == TAG_NULL || tb == TAG_NULL) {
            if (ta != tb) return ta == TAG_NULL ? -1 : 1;
            continue;
        }
        if (ta == TAG_INT) {
            int64_t x, y;
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            if (x != y) return x < y ? -1 : 1;
            a += 8, b += 8;
            continue;
        }
        uint32_t la, lb;
        memcpy(&la, a, 4);
        memcpy(&lb, b, 4);
        a += 4, b += 4;
        int c = memcmp(a, b, la < lb ? la : lb);
        if (c != 0) return c < 0 ? -1 : 1;
        if (la != lb) return la < lb ? -1 : 1;
        a += la, b += lb;
    }
    return 0;
}

typedef struct sort_item {
    const uint8_t *key, *end;
    int32_t id;
} sort_item;

static int by_key(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    return cmp_keys(a->key, a->end, b->key);
}

tl_status tl_series_set_rank(tl_series_set *s, tl_error *err)
{
    s->ranked = true;
    if (s->n == 0) return TL_OK;
    sort_item *items = malloc(s->n * sizeof *items);
    s->rank = malloc(s->n * sizeof *s->rank);
    if (items == NULL || s->rank == NULL) {
        free(items);
        return tl_error_nomem(err);
    }
    for (size_t id = 0; id < s->n; id++) {
        size_t len;
        items[id].key = key_of(s, id, &len);
        items[id].end = items[id].key + len;
        items[id].id = (int32_t)id;
    }
    qsort(items, s->n, sizeof *items, by_key);
    for (size_t r = 0; r < s->n; r++) s->rank[items[r].id] = (int32_t)r;
    free(items);
    return TL_OK;
}

void tl_series_set_ids_to_ranks(const tl_series_set *s, int32_t *ids, int64_t n)
{
    for (int64_t i = 0; i < n; i++) ids[i] = s->rank[ids[i]];
}
