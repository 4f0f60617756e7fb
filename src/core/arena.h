/* A bump allocator for the many small objects of a parsed file (Parquet
 * footers, Avro records): allocate freely, free all at once. Zero-initialise
 * (`tl_arena a = {0};`) to start; allocations are zeroed and 16-byte aligned. */
#ifndef TL_CORE_ARENA_H
#define TL_CORE_ARENA_H

#include <stddef.h>

typedef struct tl_arena_chunk tl_arena_chunk;

typedef struct tl_arena {
    tl_arena_chunk *chunks; /* newest first */
} tl_arena;

/* Each returns NULL when memory runs out or the size overflows. */
void *tl_arena_alloc(tl_arena *a, size_t size);
void *tl_arena_calloc(tl_arena *a, size_t n, size_t size);
/* A NUL-terminated copy of len bytes. */
char *tl_arena_dup(tl_arena *a, const void *data, size_t len);

/* Forgets every allocation but keeps the newest chunk for reuse. */
void tl_arena_reset(tl_arena *a);
void tl_arena_free(tl_arena *a);

#endif
