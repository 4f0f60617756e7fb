/* The landing buckets: a store per bucket, opened on first use, and the copy
 * of an object into memory (small ones) or into a local temporary file in
 * bounded chunks, so a large object is never held in memory whole (the
 * readers then stream the file). */
#ifndef TL_NOTIFY_LANDING_H
#define TL_NOTIFY_LANDING_H

#include <stdint.h>

#include "timelake.h"

typedef struct tl_notify_landing tl_notify_landing;

/* `options` (borrowed, must outlive the handle): storage options of every
 * landing bucket; NULL for the environment's only. */
tl_status tl_notify_landing_new(const char *const *options, tl_notify_landing **out, tl_error *err);
void tl_notify_landing_free(tl_notify_landing *l);

/* An object fetched from a landing bucket: in memory when the whole of it
 * came in the first GET and the caller allowed that size, else in a
 * temporary file. Cleared with tl_notify_object_clear. */
typedef struct tl_notify_object {
    uint8_t *data;  /* the object's bytes (malloc'd), or NULL */
    char *path;     /* the temporary file holding them (malloc'd), or NULL */
    uint64_t bytes; /* the object's size */
} tl_notify_object;

/* Fetches object `key` of `bucket`: into memory when it is at most
 * `memory_max` bytes (saving a file's creation, write, read and deletion per
 * request), else into a new temporary file. A missing object is
 * TL_ERR_NOT_FOUND, any other failure TL_ERR_STORAGE; no file is left then.
 * The size is the bucket's, never the notification's, learnt from the first
 * ranged GET (one round trip for an object up to one chunk, 8 MiB); each GET
 * is of at most one chunk, so memory stays bounded for any size.
 * sized(ctx, bytes) (when not NULL) is told the size as soon as the first GET
 * has it, before the rest of a large object is copied. */
tl_status tl_notify_landing_fetch(tl_notify_landing *l, const char *bucket, const char *key,
                                  uint64_t memory_max, void (*sized)(void *ctx, uint64_t bytes),
                                  void *ctx, tl_notify_object *out, tl_error *err);

/* Unlinks the temporary file, frees what the object holds. */
void tl_notify_object_clear(tl_notify_object *o);

#endif
