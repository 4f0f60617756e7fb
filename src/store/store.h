/* One object-store interface for every backend. Objects are addressed by keys
 * relative to the store's root URL ("iot/readings/metadata/v1.metadata.json").
 * Objects are immutable once written except through tl_store_put, which
 * replaces an object atomically (readers see the old or the new bytes). */
#ifndef TL_STORE_H
#define TL_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "core/strlist.h"

typedef struct tl_store tl_store;
struct tl_store_writer;
struct tl_store_reader;

/* A last check before a conditional create (tl_store_put_if_absent_fenced):
 * TL_OK lets it happen; any other status is the create's, and nothing is
 * created. */
typedef tl_status (*tl_store_fence)(void *ctx, tl_error *err);

/* One object of a batch upload. */
typedef struct tl_store_put_item {
    const char *key;
    const void *data;
    size_t len;
} tl_store_put_item;

/* What a listing says of one object: its size, and its MD5 when the store
 * vouches for it (S3's ETag of a single-part upload, GCS's md5Hash, Azure's
 * Content-MD5). A reader can then check bytes it got elsewhere against the
 * listed object without reading it. Remote listings and tl_store_list_objects
 * also give the modification time and a version tag. */
typedef struct tl_store_listed {
    char *key; /* a folder of a one-level listing ends in '/' */
    uint64_t size;
    bool has_md5;
    uint8_t md5[16];
    int64_t modified_ms; /* Unix ms; 0 when the store does not say */
    /* Changes whenever the object is replaced: S3's and Azure's ETag (quotes
     * removed), GCS's generation, locally a digest of device, inode, size and
     * mtime. NULL when unknown, and for a folder. */
    char *etag;
    bool is_folder;
} tl_store_listed;

typedef struct tl_store_listing {
    tl_store_listed *items;
    size_t len, cap;
} tl_store_listing;

typedef struct tl_store_ops {
    /* TL_ERR_NOT_FOUND when the object does not exist. */
    tl_status (*get)(tl_store *s, const char *key, tl_buf *out, tl_error *err);
    tl_status (*get_range)(tl_store *s, const char *key, uint64_t offset, size_t len, uint8_t *dst,
                           tl_error *err);
    tl_status (*size)(tl_store *s, const char *key, uint64_t *out, tl_error *err);
    tl_status (*put)(tl_store *s, const char *key, const void *data, size_t len, tl_error *err);
    /* TL_ERR_EXISTS when an object with this key exists already: the commit primitive. */
    tl_status (*put_if_absent)(tl_store *s, const char *key, const void *data, size_t len,
                               tl_error *err);
    /* Every key under prefix (recursively), relative to the root. Order unspecified. */
    tl_status (*list)(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err);
    /* Deleting a missing object succeeds. */
    tl_status (*remove)(tl_store *s, const char *key, tl_error *err);
    void (*free)(tl_store *s);
    /* Puts every item, in parallel where the backend can (remote stores); on
     * failure some items may have been written. NULL: one by one through put. */
    tl_status (*put_many)(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err);
    /* As list, with each object's size and digest. NULL: keys only (through list). */
    tl_status (*list_detailed)(tl_store *s, const char *prefix, tl_store_listing *out,
                               tl_error *err);
    /* As tl_store_get_first, in one round trip. NULL: size, then get_range. */
    tl_status (*get_first)(tl_store *s, const char *key, size_t len, uint8_t *dst, size_t *got,
                           uint64_t *total, tl_error *err);
    /* As tl_store_list_objects and tl_store_stat (below); every backend has them. */
    tl_status (*list_objects)(tl_store *s, const char *prefix, bool recursive,
                              tl_store_listing *out, tl_error *err);
    tl_status (*stat)(tl_store *s, const char *key, tl_store_listed *out, tl_error *err);
    /* As tl_store_writer_open. NULL: the bytes are kept in memory and put at finish. */
    tl_status (*writer_open)(tl_store *s, const char *key, struct tl_store_writer **out,
                             tl_error *err);
    /* As tl_store_sweep. NULL: the backend leaves nothing of its own behind. */
    tl_status (*sweep)(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                       tl_error *err);
    /* As tl_store_remove_later for one key: false when it is not there. NULL:
     * tl_store_remove_many. */
    bool (*remove_later)(tl_store *s, const char *key);
    /* As tl_store_settle. NULL: nothing is ever pending. */
    void (*settle)(tl_store *s);
    /* As tl_store_put_hint. NULL: put. */
    tl_status (*put_hint)(tl_store *s, const char *key, const void *data, size_t len,
                          tl_error *err);
    /* As tl_store_put_if_absent_unsynced and tl_store_sync. NULL: put_if_absent
     * (durable when it returns), and nothing to sync. */
    tl_status (*put_if_absent_unsynced)(tl_store *s, const char *key, const void *data, size_t len,
                                        tl_error *err);
    tl_status (*sync)(tl_store *s, tl_error *err);
    /* As tl_store_sync_begin. NULL: nothing to begin (tl_store_sync does it all). */
    void (*sync_begin)(tl_store *s);
    /* As tl_store_put_if_absent_fenced. NULL: the fence, then put_if_absent
     * or put_if_absent_unsynced. */
    tl_status (*put_if_absent_fenced)(tl_store *s, const char *key, const void *data, size_t len,
                                      bool durable, tl_store_fence fence, void *ctx, tl_error *err);
    /* As tl_store_put_new. NULL: put. */
    tl_status (*put_new)(tl_store *s, const char *key, const void *data, size_t len, tl_error *err);
    /* As tl_store_reader_open. NULL: each read is a get_range (store_reader.c). */
    tl_status (*reader_open)(tl_store *s, const char *key, struct tl_store_reader **out,
                             tl_error *err);
} tl_store_ops;

struct tl_store {
    const tl_store_ops *ops;
    char *url;         /* normalized root URL without a trailing slash */
    bool read_only;    /* every write fails (http(s) warehouses) */
    bool version_hint; /* tables' newest versions are found by their version-hint.text
                          (no listing, or timelake_version_lookup=hint) */
};

/* TL_ERR_INVALID naming the warehouse when it is read-only; `what` says what
 * was refused ("create a table", "append to iot.readings"). */
tl_status tl_store_check_writable(const tl_store *s, const char *what, tl_error *err);

/* Opens the store for a warehouse location: a local path or a file://,
 * s3://, gs://, az://, http(s):// (read-only) or memory:// URL. `options` is
 * NULL or NULL-terminated key, value pairs. */
tl_status tl_store_open(const char *location, const char *const *options, tl_store **out,
                        tl_error *err);
void tl_store_free(tl_store *s);

static inline tl_status tl_store_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    return s->ops->get(s, key, out, err);
}
static inline tl_status tl_store_get_range(tl_store *s, const char *key, uint64_t offset,
                                           size_t len, uint8_t *dst, tl_error *err)
{
    return s->ops->get_range(s, key, offset, len, dst, err);
}
static inline tl_status tl_store_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    return s->ops->size(s, key, out, err);
}
static inline tl_status tl_store_put(tl_store *s, const char *key, const void *data, size_t len,
                                     tl_error *err)
{
    return s->ops->put(s, key, data, len, err);
}
/* As tl_store_put (atomic replacement), for a small object that readers check
 * and can do without (a version hint): nothing waits for it to be durable.
 * Locally it is not fsynced (a crash may lose or empty it). */
static inline tl_status tl_store_put_hint(tl_store *s, const char *key, const void *data,
                                          size_t len, tl_error *err)
{
    return s->ops->put_hint ? s->ops->put_hint(s, key, data, len, err)
                            : s->ops->put(s, key, data, len, err);
}
/* As tl_store_put, for an object under a name made fresh for it (a UUIDv7
 * in it) that nothing reads until a commit names it: locally it is written
 * in place, without a temporary file and a rename (store_local.c), so until
 * that commit a listing may show it partly written, and a writer killed
 * midway leaves it so, for orphan cleanup. A name that exists after all is
 * replaced as by tl_store_put. */
static inline tl_status tl_store_put_new(tl_store *s, const char *key, const void *data, size_t len,
                                         tl_error *err)
{
    return s->ops->put_new ? s->ops->put_new(s, key, data, len, err)
                           : s->ops->put(s, key, data, len, err);
}
static inline tl_status tl_store_put_if_absent(tl_store *s, const char *key, const void *data,
                                               size_t len, tl_error *err)
{
    return s->ops->put_if_absent(s, key, data, len, err);
}
/* As tl_store_put_if_absent, but it may return once the object is visible,
 * before it is durable: everything put before it is durable then, the object
 * itself after the next tl_store_sync (or put_if_absent). Locally that saves
 * the commit's second wait for the disk (the fsync of the directory after the
 * link) for work that can overlap it: the caller calls tl_store_sync before
 * reporting the commit, or deleting anything the commit stopped naming. */
static inline tl_status tl_store_put_if_absent_unsynced(tl_store *s, const char *key,
                                                        const void *data, size_t len, tl_error *err)
{
    return s->ops->put_if_absent_unsynced ? s->ops->put_if_absent_unsynced(s, key, data, len, err)
                                          : s->ops->put_if_absent(s, key, data, len, err);
}
/* As tl_store_put_if_absent (durable) or tl_store_put_if_absent_unsynced,
 * with `fence` run at the last moment before the create, under a lock on the
 * object's folder that every fenced create of this machine takes (locally an
 * flock of the directory, held for the fence and the link only: not for any
 * fsync). A commit's fence checks that no newer version was created: locally
 * the pruning of old metadata files frees version numbers, so a writer far
 * behind could otherwise create into a freed one (table/commit_point.c).
 * Object stores free no numbers, and order writers by the conditional create
 * alone: the fence runs first, unlocked. */
static inline tl_status tl_store_put_if_absent_fenced(tl_store *s, const char *key,
                                                      const void *data, size_t len, bool durable,
                                                      tl_store_fence fence, void *ctx,
                                                      tl_error *err)
{
    if (s->ops->put_if_absent_fenced)
        return s->ops->put_if_absent_fenced(s, key, data, len, durable, fence, ctx, err);
    tl_status st = fence(ctx, err);
    if (st != TL_OK) return st;
    return durable ? tl_store_put_if_absent(s, key, data, len, err)
                   : tl_store_put_if_absent_unsynced(s, key, data, len, err);
}
/* Makes every object put or created before the call durable (locally the
 * fsyncs pending: see local_sync.h). Elsewhere a put is durable when it
 * returns: nothing to do. */
static inline tl_status tl_store_sync(tl_store *s, tl_error *err)
{
    return s->ops->sync ? s->ops->sync(s, err) : TL_OK;
}
/* Starts what tl_store_sync would do on another thread and returns at once,
 * so that the caller's work overlaps the wait for the disk (a commit's last
 * fsync with writing its version hint). Promises nothing: the caller still
 * calls tl_store_sync, which waits for what was begun, reports its failure
 * and syncs whatever was put after it. */
static inline void tl_store_sync_begin(tl_store *s)
{
    if (s->ops->sync_begin) s->ops->sync_begin(s);
}
static inline tl_status tl_store_list(tl_store *s, const char *prefix, tl_strlist *out,
                                      tl_error *err)
{
    return s->ops->list(s, prefix, out, err);
}
/* Every object under prefix with its size and digest (store/listing.c); on a
 * backend that cannot tell them, the keys with size 0 and has_md5 false. On
 * failure *out is freed (empty). */
tl_status tl_store_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                 tl_error *err);
/* Adds an entry (key copied; md5 may be NULL). 0, or -1 when out of memory. */
int tl_store_listing_push(tl_store_listing *l, const char *key, uint64_t size, const uint8_t *md5);
/* The same, returning the new entry (to fill in modified_ms, etag,
 * is_folder), or NULL when out of memory. */
tl_store_listed *tl_store_listing_add(tl_store_listing *l, const char *key, uint64_t size,
                                      const uint8_t *md5);
/* Sets e->etag to a copy of text without surrounding double quotes (NULL text: no
 * etag). 0, or -1 when out of memory. */
int tl_store_listed_set_etag(tl_store_listed *e, const char *text);
void tl_store_listed_clear(tl_store_listed *e);
void tl_store_listing_free(tl_store_listing *l);
/* Sorts by key (byte order). */
void tl_store_listing_sort(tl_store_listing *l);

/* The objects under prefix (a plain key prefix; "" for all) with size,
 * modification time and etag. recursive: every object below; otherwise one
 * level: the objects whose key has no '/' after the prefix, and each deeper
 * folder once, as an is_folder entry "prefix...name/". Order unspecified. */
static inline tl_status tl_store_list_objects(tl_store *s, const char *prefix, bool recursive,
                                              tl_store_listing *out, tl_error *err)
{
    return s->ops->list_objects(s, prefix, recursive, out, err);
}
/* One object's size, modification time and etag (out->key is set to key;
 * clear *out with tl_store_listed_clear). TL_ERR_NOT_FOUND when it does not exist. */
static inline tl_status tl_store_stat(tl_store *s, const char *key, tl_store_listed *out,
                                      tl_error *err)
{
    return s->ops->stat(s, key, out, err);
}

/* Ranged reads of one object through one handle (a Parquet file read a
 * column chunk at a time): locally the file is opened once for all of them,
 * not at each read; elsewhere each read is a ranged get. A backend's reader
 * embeds this struct first. Not shared between threads. */
typedef struct tl_store_reader {
    uint64_t size; /* the object's, when it was opened */
    tl_status (*read)(struct tl_store_reader *r, uint64_t offset, size_t len, uint8_t *dst,
                      tl_error *err);
    void (*close)(struct tl_store_reader *r); /* frees r */
} tl_store_reader;

/* Opens the object at key for reading (TL_ERR_NOT_FOUND when it does not
 * exist); close *out with tl_store_reader_close. */
tl_status tl_store_reader_open(tl_store *s, const char *key, tl_store_reader **out, tl_error *err);
/* Reads exactly len bytes at offset into dst. */
static inline tl_status tl_store_reader_read(tl_store_reader *r, uint64_t offset, size_t len,
                                             uint8_t *dst, tl_error *err)
{
    return r->read(r, offset, len, dst, err);
}
/* NULL is nothing to close. */
static inline void tl_store_reader_close(tl_store_reader *r)
{
    if (r) r->close(r);
}

/* A streaming upload of one object: nothing shows at the key until finish,
 * which replaces the object atomically; abort leaves nothing behind. Remote
 * stores send parts (multipart uploads) once the bytes exceed the
 * multipart_threshold. A backend's writer embeds this struct first. */
typedef struct tl_store_writer {
    tl_status (*write)(struct tl_store_writer *w, const void *data, size_t len, tl_error *err);
    tl_status (*finish)(struct tl_store_writer *w, tl_error *err); /* frees w, either way */
    void (*abort)(struct tl_store_writer *w);                      /* frees w */
} tl_store_writer;

tl_status tl_store_writer_open(tl_store *s, const char *key, tl_store_writer **out, tl_error *err);
static inline tl_status tl_store_remove(tl_store *s, const char *key, tl_error *err)
{
    return s->ops->remove(s, key, err);
}

/* Uploads a batch of objects, in parallel on remote stores: one round trip of
 * wall time instead of n. On failure the caller removes what it meant to write. */
tl_status tl_store_put_many(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err);
/* The same for objects under fresh names (tl_store_put_new). */
tl_status tl_store_put_many_new(tl_store *s, const tl_store_put_item *items, size_t n,
                                tl_error *err);

/* One read of a batch: the whole object (len 0) or len bytes at offset. */
typedef struct tl_store_get_item {
    const char *key;
    uint64_t offset;
    size_t len;
    tl_buf out;   /* the bytes read; the caller frees it */
    tl_status st; /* this item's outcome */
    tl_error err;
} tl_store_get_item;

/* Reads every item, in parallel on remote stores (one round trip of wall
 * time); each item gets its own status. Returns the first failure, if any. */
tl_status tl_store_get_many(tl_store *s, tl_store_get_item *items, size_t n, tl_error *err);

/* Reads the start of an object and learns its size together (store_get_first.c):
 * min(len, size) bytes from offset 0 into dst (*got of them) and the object's
 * size in *total, which may exceed len (read the rest with get_range). One
 * round trip where the backend can; the size is always the store's. */
tl_status tl_store_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst, size_t *got,
                             uint64_t *total, tl_error *err);

/* Deletes keys[0..n) (NULL entries skipped), several at once: locally each
 * unlink may wait for the disk (a discard of the freed blocks, a journal
 * update), remotely each is a round trip, and they overlap. A failure leaves
 * that object (callers delete what is no longer referenced: a later pass or
 * orphan cleanup takes it). Returns how many removals succeeded (as with
 * tl_store_remove, a key already missing succeeds). */
size_t tl_store_remove_many(tl_store *s, char *const *keys, size_t n);

/* Deletes keys[0..n) (NULL entries skipped) as tl_store_remove_many does,
 * several at once, but for callers that must know: TL_OK when every one is
 * gone (a key already missing counts), else the first failure, and no
 * removal starts after it (those already under way finish). */
tl_status tl_store_remove_all(tl_store *s, char *const *keys, size_t n, tl_error *err);

/* As tl_store_remove_many, for objects nothing references any more and
 * nobody waits for: locally they are queued for a thread of the store
 * (local_trash.h) and this returns at once, counting the objects there;
 * elsewhere it is tl_store_remove_many. */
size_t tl_store_remove_later(tl_store *s, char *const *keys, size_t n);

/* Waits until the deletions tl_store_remove_later queued are done. */
void tl_store_settle(tl_store *s);

/* Deletes every object under prefix (several at once, tl_store_remove_all),
 * and whatever the backend keeps there of its own (tl_store_sweep with no age). */
tl_status tl_store_remove_prefix(tl_store *s, const char *prefix, tl_error *err);

/* Removes what writers that died left under prefix, which no listing shows
 * (locally, the temporary files a put writes before its rename: ".tmp-<uuid>"
 * beside the object), once older than min_age_ms; with min_age_ms 0, all of
 * it, and the directories left empty. *removed (may be NULL) is increased by
 * the number of files removed. Nothing to do on object stores. */
tl_status tl_store_sweep(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                         tl_error *err);

/* Is this the local backend (a file:// root), where a round trip is cheap? */
static inline bool tl_store_is_local(const tl_store *s)
{
    return strncmp(s->url, "file://", 7) == 0;
}

/* The full URL of a key (malloc'd), e.g. file:///lake/t/data/x.parquet. */
char *tl_store_url_of(const tl_store *s, const char *key);
/* The key of a full URL under this store's root, or NULL when the URL is
 * elsewhere. Returns a pointer into url. */
const char *tl_store_key_of(const tl_store *s, const char *url);

/* Backends. */
tl_status tl_store_local_open(const char *path, tl_store **out, tl_error *err);
/* Remote backends take a parsed configuration (store/store_options.h). */
struct tl_store_config;
tl_status tl_store_s3_open(struct tl_store_config *cfg, tl_store **out, tl_error *err);
tl_status tl_store_gcs_open(struct tl_store_config *cfg, tl_store **out, tl_error *err);
tl_status tl_store_azure_open(struct tl_store_config *cfg, tl_store **out, tl_error *err);
tl_status tl_store_http_open(struct tl_store_config *cfg, tl_store **out, tl_error *err);
/* An empty in-memory store named `location` (memory://...), freed with it. */
tl_status tl_store_memory_open(const char *location, tl_store **out, tl_error *err);
/* Wraps `inner` (taken over) in a read cache of immutable objects (store/cache.h):
 * memory_bytes in memory, and dir (NULL: none) on disk holding at most
 * dir_bytes (<= 0: TL_CACHE_DIR_DEFAULT) for all processes sharing it. */
#define TL_CACHE_DIR_DEFAULT (1LL << 30)
tl_status tl_store_cache_wrap(tl_store *inner, long long memory_bytes, const char *dir,
                              long long dir_bytes, tl_store **out, tl_error *err);
/* Block-aligned ranged reads (timelake_cache_block_bytes, _request_bytes). */
typedef struct tl_cache_blocks {
    long long block_bytes;   /* > 0: ranges are read and kept as aligned blocks of this size */
    long long request_bytes; /* most bytes of one request for missing blocks; 0: no limit */
} tl_cache_blocks;
/* tl_store_cache_wrap with blocks (NULL: exact ranges). */
tl_status tl_store_cache_wrap_blocks(tl_store *inner, long long memory_bytes, const char *dir,
                                     long long dir_bytes, const tl_cache_blocks *blocks,
                                     tl_store **out, tl_error *err);

#endif
