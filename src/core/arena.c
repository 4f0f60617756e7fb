#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE 16384
#define ALIGN 16

struct tl_arena_chunk {
    tl_arena_chunk *next;
    size_t used, cap;
    _Alignas(ALIGN) unsigned char data[];
};

void *tl_arena_alloc(tl_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2) return NULL;
    size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    tl_arena_chunk *c = a->chunks;
    if (c == NULL || c->cap - c->used < size) {
        size_t cap = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        c = malloc(sizeof *c + cap);
        if (c == NULL) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = a->chunks;
        a->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

void *tl_arena_calloc(tl_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 4 / size) return NULL;
    size_t total = n * size;
    return tl_arena_alloc(a, total ? total : 1);
}

char *tl_arena_dup(tl_arena *a, const void *data, size_t len)
{
    if (len == SIZE_MAX) return NULL;
    char *p = tl_arena_alloc(a, len + 1);
    if (p == NULL) return NULL;
    if (len) memcpy(p, data, len);
    p[len] = '\0';
    return p;
}

static void free_chunks(tl_arena_chunk *c)
{
    while (c) {
        tl_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
}

void tl_arena_reset(tl_arena *a)
{
    tl_arena_chunk *keep = a->chunks;
    if (keep == NULL) return;
    free_chunks(keep->next);
    keep->next = NULL;
    keep->used = 0;
}

void tl_arena_free(tl_arena *a)
{
    free_chunks(a->chunks);
    a->chunks = NULL;
}
