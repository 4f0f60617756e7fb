#include "formats/parquet/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct tl_pq_arena_block {
    tl_pq_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK = 16384 };

void *tl_pq_arena_alloc(tl_pq_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2) return NULL;
    size = (size + 15) & ~(size_t)15;
    tl_pq_arena_block *b = a->head;
    if (b == NULL || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        b = malloc(sizeof *b + cap);
        if (b == NULL) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void *tl_pq_arena_calloc(tl_pq_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / 4 / size) return NULL;
    size_t total = n * size;
    return tl_pq_arena_alloc(a, total ? total : 1);
}

char *tl_pq_arena_dup(tl_pq_arena *a, const void *data, size_t n)
{
    char *p = tl_pq_arena_alloc(a, n + 1);
    if (p == NULL) return NULL;
    if (n) memcpy(p, data, n);
    p[n] = '\0';
    return p;
}

void tl_pq_arena_free(tl_pq_arena *a)
{
    while (a->head) {
        tl_pq_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}
