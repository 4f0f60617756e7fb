/* The byte-string set. */
#include "kset.h"

#include <stdlib.h>
#include <string.h>

typedef struct kset_slot {
    uint64_t hash; /* 0: empty */
    size_t off;
    size_t len;
} kset_slot;

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, then a final mix */
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h ? h : 1;
}

static bool grow(kset *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    kset_slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return false;
    for (size_t i = 0; i < s->cap; i++) {
        if (s->slots[i].hash == 0) continue;
        size_t j = s->slots[i].hash & (cap - 1);
        while (slots[j].hash) j = (j + 1) & (cap - 1);
        slots[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return true;
}

int kset_add(kset *s, const void *key, size_t len)
{
    if ((s->len + 1) * 2 > s->cap && !grow(s)) return -1;
    uint64_t h = hash_bytes(key, len);
    size_t j = h & (s->cap - 1);
    for (; s->slots[j].hash; j = (j + 1) & (s->cap - 1))
        if (s->slots[j].hash == h && s->slots[j].len == len &&
            memcmp(s->arena + s->slots[j].off, key, len) == 0)
            return 0;
    if (s->arena_len + len > s->arena_cap) {
        size_t cap = s->arena_cap ? s->arena_cap : 4096;
        while (cap < s->arena_len + len) cap *= 2;
        char *a = realloc(s->arena, cap);
        if (a == NULL) return -1;
        s->arena = a;
        s->arena_cap = cap;
    }
    if (len) memcpy(s->arena + s->arena_len, key, len);
    s->slots[j] = (kset_slot){h, s->arena_len, len};
    s->arena_len += len;
    s->len++;
    return 1;
}

void kset_free(kset *s)
{
    free(s->slots);
    free(s->arena);
    memset(s, 0, sizeof *s);
}
