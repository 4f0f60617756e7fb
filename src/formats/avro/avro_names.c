#include "formats/avro/avro_names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t tl_avro_names_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The slot of key, or of the empty slot where it would go (cap is a power of two). */
static size_t tl_avro_names_slot(const tl_avro_names *t, const char *key)
{
    size_t i = (size_t)tl_avro_names_hash(key) & (t->cap - 1);
    while (t->keys[i] && strcmp(t->keys[i], key) != 0) i = (i + 1) & (t->cap - 1);
    return i;
}

void *tl_avro_names_get(const tl_avro_names *t, const char *key)
{
    if (t->count == 0) return NULL;
    size_t i = tl_avro_names_slot(t, key);
    return t->keys[i] ? t->values[i] : NULL;
}

static int tl_avro_names_grow(tl_avro_names *t)
{
    tl_avro_names bigger = {0};
    bigger.cap = t->cap ? t->cap * 2 : 16;
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.values = calloc(bigger.cap, sizeof *bigger.values);
    if (bigger.keys == NULL || bigger.values == NULL) {
        tl_avro_names_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (t->keys[i] == NULL) continue;
        size_t j = tl_avro_names_slot(&bigger, t->keys[i]);
        bigger.keys[j] = t->keys[i];
        bigger.values[j] = t->values[i];
    }
    bigger.count = t->count;
    tl_avro_names_free(t);
    *t = bigger;
    return 0;
}

int tl_avro_names_put(tl_avro_names *t, const char *key, void *value)
{
    /* Keep the load under a half so probes stay short. */
    if ((t->count + 1) * 2 > t->cap && tl_avro_names_grow(t) != 0) return -1;
    size_t i = tl_avro_names_slot(t, key);
    if (t->keys[i]) return 1;
    t->keys[i] = key;
    t->values[i] = value;
    t->count++;
    return 0;
}

void tl_avro_names_free(tl_avro_names *t)
{
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}
