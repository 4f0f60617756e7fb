/* A set of byte strings (dedup keys, partition values): open addressing over
 * an arena of the keys. */
#ifndef KARET_KSET_H
#define KARET_KSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kset {
    struct kset_slot *slots;
    size_t cap, len;
    char *arena;
    size_t arena_len, arena_cap;
} kset;

/* Adds the key; returns 1 when it was new, 0 when present, -1 when out of
 * memory. */
int kset_add(kset *s, const void *key, size_t len);
void kset_free(kset *s);

#endif
