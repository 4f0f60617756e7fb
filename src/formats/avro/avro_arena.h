/* A bump allocator for decoded Avro values: a datum's whole tree is freed
 * (or reset for the next datum) in one call, so hostile input that fails
 * half-way leaks nothing. */
#ifndef TL_FORMATS_AVRO_ARENA_H
#define TL_FORMATS_AVRO_ARENA_H

#include <stddef.h>

typedef struct tl_avro_arena_chunk tl_avro_arena_chunk;

/* Zero-initialise to start empty. */
typedef struct tl_avro_arena {
    tl_avro_arena_chunk *chunks; /* newest first */
} tl_avro_arena;

/* `size` zeroed bytes aligned to 16, or NULL when memory runs out. */
void *tl_avro_arena_alloc(tl_avro_arena *a, size_t size);
/* A copy of data followed by a NUL byte, or NULL. */
char *tl_avro_arena_dup(tl_avro_arena *a, const void *data, size_t len);
/* Frees everything but keeps the newest chunk for reuse. */
void tl_avro_arena_reset(tl_avro_arena *a);
void tl_avro_arena_free(tl_avro_arena *a);

#endif
