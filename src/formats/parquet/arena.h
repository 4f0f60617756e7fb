/* A bump allocator: parsed metadata lives in one arena and is freed at once,
 * which keeps error paths in the parsers free of cleanup code. */
#ifndef TL_PARQUET_ARENA_H
#define TL_PARQUET_ARENA_H

#include <stddef.h>

typedef struct tl_pq_arena_block tl_pq_arena_block;

typedef struct tl_pq_arena {
    tl_pq_arena_block *head;
} tl_pq_arena;

/* Zeroed memory aligned for any type, or NULL when out of memory (or size overflows). */
void *tl_pq_arena_alloc(tl_pq_arena *a, size_t size);
void *tl_pq_arena_calloc(tl_pq_arena *a, size_t n, size_t size);
/* Copies n bytes and appends a NUL, so strings can be used as C strings. */
char *tl_pq_arena_dup(tl_pq_arena *a, const void *data, size_t n);
void tl_pq_arena_free(tl_pq_arena *a);

#endif
