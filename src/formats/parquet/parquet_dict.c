#include "formats/parquet/parquet_dict.h"

#include <stdlib.h>
#include <string.h>

/* A multiply-xorshift hash over 8-byte words: fast for the short strings
 * (series keys, tags) that dictionaries hold. */
static uint64_t hash_bytes(const uint8_t *p, size_t len)
{
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = len * k;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        h ^= tl_load_le64(p + i);
        h *= k;
        h ^= h >> 29;
    }
    if (i < len) {
        uint64_t tail = 0;
        for (size_t j = 0; i + j < len; j++) tail |= (uint64_t)p[i + j] << (8 * j);
        h ^= tail;
        h *= k;
    }
    h ^= h >> 32;
    h *= k;
    return h ^ (h >> 29);
}

static int grow_slots(tl_pq_dict *d)
{
    uint32_t n = d->n_slots ? d->n_slots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (slots == NULL) return -1;
    for (uint32_t i = 0; i < d->n; i++) {
        uint32_t s = (uint32_t)d->hashes[i] & (n - 1);
        while (slots[s]) s = (s + 1) & (n - 1);
        slots[s] = i + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->n_slots = n;
    return 0;
}

static int add_entry(tl_pq_dict *d, const uint8_t *data, size_t len, uint64_t h)
{
    if (d->n == d->cap) {
        uint32_t cap = d->cap ? d->cap * 2 : 256;
        size_t *o = realloc(d->offsets, cap * sizeof *o);
        if (o == NULL) return -1;
        d->offsets = o;
        uint64_t *hs = realloc(d->hashes, cap * sizeof *hs);
        if (hs == NULL) return -1;
        d->hashes = hs;
        d->cap = cap;
    }
    d->offsets[d->n] = d->plain.len;
    if (tl_buf_append_le32(&d->plain, (uint32_t)len) != 0) return -1;
    if (tl_buf_append(&d->plain, data, len) != 0) {
        d->plain.len = d->offsets[d->n];
        return -1;
    }
    d->hashes[d->n] = h;
    d->n++;
    return 0;
}

/* The slot holding the value, or the empty slot where it would go. */
static uint32_t slot_of(const tl_pq_dict *d, const uint8_t *data, size_t len, uint64_t h)
{
    uint32_t mask = d->n_slots - 1, s = (uint32_t)h & mask;
    for (; d->slots[s]; s = (s + 1) & mask) {
        uint32_t i = d->slots[s] - 1, elen;
        if (d->hashes[i] != h) continue;
        const uint8_t *e = tl_pq_dict_value(d, i, &elen);
        if (elen == len && (len == 0 || memcmp(e, data, len) == 0)) return s;
    }
    return s;
}

int64_t tl_pq_dict_find(const tl_pq_dict *d, const uint8_t *data, size_t len)
{
    if (d->n == 0) return -1;
    uint32_t s = slot_of(d, data, len, hash_bytes(data, len));
    return d->slots[s] ? (int64_t)d->slots[s] - 1 : -1;
}

int tl_pq_dict_insert(tl_pq_dict *d, const uint8_t *data, size_t len, uint32_t *index)
{
    if ((uint64_t)(d->n + 1) * 2 > d->n_slots && grow_slots(d) != 0) return -1;
    uint64_t h = hash_bytes(data, len);
    uint32_t s = slot_of(d, data, len, h);
    if (d->slots[s]) {
        *index = d->slots[s] - 1;
        return 0;
    }
    if (add_entry(d, data, len, h) != 0) return -1;
    d->slots[s] = d->n;
    *index = d->n - 1;
    return 0;
}

void tl_pq_dict_reset(tl_pq_dict *d)
{
    d->plain.len = 0;
    d->n = 0;
    if (d->slots) memset(d->slots, 0, d->n_slots * sizeof *d->slots);
}

void tl_pq_dict_free(tl_pq_dict *d)
{
    tl_buf_free(&d->plain);
    free(d->offsets);
    free(d->hashes);
    free(d->slots);
    memset(d, 0, sizeof *d);
}
