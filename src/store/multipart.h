/* Large objects go up in parts, several at a time: S3 multipart uploads,
 * Azure blocks + block list, GCS part objects composed into one. The backend
 * says how to begin, send one part, finish and abort; the driver here splits
 * the bytes, runs the parts in parallel and aborts when anything fails, so
 * that a failed upload leaves neither an object nor stray parts. */
#ifndef TL_STORE_MULTIPART_H
#define TL_STORE_MULTIPART_H

#include "store/remote.h"

typedef struct tl_multipart_ops {
    /* Starts an upload of at most max_parts parts; *upload is the backend's state. */
    tl_status (*begin)(tl_remote *r, const char *key, size_t max_parts, void **upload,
                       tl_error *err);
    /* Sends part `index` (0-based). Called from several threads at once, each
     * with its own index. */
    tl_status (*part)(tl_remote *r, void *upload, size_t index, const uint8_t *data, size_t len,
                      tl_error *err);
    /* Joins parts 0..n_parts-1 into the object (data/len: the whole object,
     * for a read-back; NULL from a streaming writer, which no longer has it). */
    tl_status (*finish)(tl_remote *r, void *upload, size_t n_parts, const uint8_t *data, size_t len,
                        tl_error *err);
    /* Best effort: removes what a failed upload left behind (parts
     * 0..n_parts-1 may have been sent). */
    void (*abort)(tl_remote *r, void *upload, size_t n_parts);
    void (*free)(void *upload);
} tl_multipart_ops;

/* Does an object of len bytes go up in parts? */
bool tl_multipart_wanted(const tl_remote *r, size_t len);

/* The part size for len bytes: the configured size, grown so that there are at
 * most max_parts parts, rounded up to a multiple of align (1: any). */
size_t tl_multipart_part_size(const tl_remote *r, size_t len, size_t max_parts, size_t align);

/* Uploads data in parts of part_size, up to multipart_concurrency at once. */
tl_status tl_multipart_put(tl_remote *r, const tl_multipart_ops *ops, const char *key,
                           const void *data, size_t len, size_t part_size, tl_error *err);

/* Runs fn(r, ctx, i) for i in [0, n) on up to multipart_concurrency threads
 * (the caller's among them); after a failure no new i starts. The first
 * failure is returned. */
typedef tl_status (*tl_multipart_task)(tl_remote *r, void *ctx, size_t index, tl_error *err);
tl_status tl_multipart_parallel(tl_remote *r, size_t n, tl_multipart_task fn, void *ctx,
                                tl_error *err);

/* Upload state for backends whose parts are named by the client (Azure block
 * ids, GCS part objects): a random tag keeps this upload's part names apart
 * from those of any other upload of the same key. */
typedef struct tl_tagged_upload {
    char *key;
    char tag[17]; /* 16 hex digits */
} tl_tagged_upload;

/* begin/free for tl_multipart_ops over a tl_tagged_upload. */
tl_status tl_tagged_upload_begin(tl_remote *r, const char *key, size_t max_parts, void **out,
                                 tl_error *err);
void tl_tagged_upload_free(void *upload);

/* After a finish whose answer was lost: is the object at key exactly data?
 * TL_OK yes; TL_ERR_STORAGE naming the key otherwise. */
tl_status tl_multipart_verify(tl_remote *r, const char *key, const void *data, size_t len,
                              tl_error *err);

#endif
