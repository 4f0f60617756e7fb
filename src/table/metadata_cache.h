/* Parsed table metadata kept per lake between loads of a table, so that a
 * query on an unchanged table does not parse its metadata JSON again.
 *
 * An entry is found by the metadata file's key and holds that file's bytes:
 * a parsed copy is handed out only for a file whose bytes are exactly the
 * cached ones, so a new commit (a new version, or a table dropped and made
 * again under the same name) is never answered from the cache.
 *
 * Handing out moves the parsed metadata to the table handle (no copy): while
 * a handle holds it the entry is empty, and the handle gives it back when it
 * lets go (tl_md_cache_give_back with the token it received). Metadata a
 * handle gives up any other way (a commit frees the replaced version itself)
 * simply never comes back. Safe to use from several threads. */
#ifndef TL_TABLE_METADATA_CACHE_H
#define TL_TABLE_METADATA_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "iceberg/metadata.h"

#define TL_MD_CACHE_TABLES 16 /* entries kept; the least recently used goes */

typedef struct tl_md_cache tl_md_cache;

/* NULL when out of memory: the lake then works without a cache. The cache
 * is reference-counted (a table handle may be closed after its lake):
 * tl_md_cache_new gives the first reference, tl_md_cache_ref another (returns
 * c; c may be NULL), tl_md_cache_free drops one and frees with the last. */
tl_md_cache *tl_md_cache_new(void);
tl_md_cache *tl_md_cache_ref(tl_md_cache *c);
void tl_md_cache_free(tl_md_cache *c);

/* The parsed metadata of `key` (owned by the caller from now on) when the
 * cache holds it for exactly these bytes, else NULL. *token (0 on a miss)
 * is what tl_md_cache_give_back needs. c may be NULL. */
tl_ice_metadata *tl_md_cache_take(tl_md_cache *c, const char *key, const tl_buf *bytes,
                                  uint64_t *token);

/* The parsed metadata of `key` whatever its bytes, for a caller that knows
 * the file's content has not changed (immutable, and known to exist), or
 * NULL. *token as tl_md_cache_take. */
tl_ice_metadata *tl_md_cache_take_key(tl_md_cache *c, const char *key, uint64_t *token);

/* Records that `bytes` (taken: the buffer is emptied) are key's file, just
 * parsed by the caller; *token (0 when not recorded) lets its parse come back. */
void tl_md_cache_remember(tl_md_cache *c, const char *key, tl_buf *bytes, uint64_t *token);

/* Returns md, received with `token`, to its entry; frees it when the entry
 * has moved on (or token is 0). */
void tl_md_cache_give_back(tl_md_cache *c, uint64_t token, tl_ice_metadata *md);

#endif
