#include "formats/avro/avro_arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TL_AVRO_ARENA_CHUNK 16384
#define TL_AVRO_ARENA_ALIGN 16

struct tl_avro_arena_chunk {
    tl_avro_arena_chunk *next;
    size_t used, cap;
    _Alignas(TL_AVRO_ARENA_ALIGN) unsigned char data[];
};

void *tl_avro_arena_alloc(tl_avro_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2) return NULL;
    size = (size + TL_AVRO_ARENA_ALIGN - 1) & ~(size_t)(TL_AVRO_ARENA_ALIGN - 1);
    tl_avro_arena_chunk *c = a->chunks;
    if (c == NULL || c->cap - c->used < size) {
        size_t cap = size > TL_AVRO_ARENA_CHUNK ? size : TL_AVRO_ARENA_CHUNK;
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

char *tl_avro_arena_dup(tl_avro_arena *a, const void *data, size_t len)
{
    if (len == SIZE_MAX) return NULL;
    char *p = tl_avro_arena_alloc(a, len + 1);
    if (p == NULL) return NULL;
    if (len) memcpy(p, data, len);
    p[len] = '\0';
    return p;
}

void tl_avro_arena_reset(tl_avro_arena *a)
{
    tl_avro_arena_chunk *keep = a->chunks;
    if (keep == NULL) return;
    tl_avro_arena_chunk *c = keep->next;
    while (c) {
        tl_avro_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    keep->next = NULL;
    keep->used = 0;
}

void tl_avro_arena_free(tl_avro_arena *a)
{
    tl_avro_arena_chunk *c = a->chunks;
    while (c) {
        tl_avro_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->chunks = NULL;
}
