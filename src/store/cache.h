/* A read cache in front of a store, for immutable objects only: data files
 * (.parquet) and manifests and manifest lists (.avro), whose names are unique
 * and whose bytes never change. Metadata JSON, the registry and hints are
 * always read from the store.
 *
 * Memory: an LRU of whole objects, exact byte ranges (footers, column chunks)
 * and sizes, bounded in bytes. Disk (optional): whole objects and exact byte
 * ranges in a directory that several processes may share, bounded in bytes
 * (least recently used first out); each file is written under a temporary
 * name and renamed into place, so a reader sees a complete file or none, and
 * a reader that finds a file evicted reads the store. Objects this process
 * uploads are cached as they are written (a writer reads its own manifest list
 * back on the next commit). Thread-safe. */
#ifndef TL_STORE_CACHE_H
#define TL_STORE_CACHE_H

#include <stdbool.h>

#include "store/store.h"

/* Is this key one the cache may keep? */
bool tl_cache_immutable_key(const char *key);

typedef struct tl_cache_stats {
    long long hits, misses, bytes_in_memory, entries;
    long long memory_hits, disk_hits; /* hits = memory_hits + disk_hits */
    long long bytes_fetched;          /* by the misses */
} tl_cache_stats;

/* The store under the cache (s itself when s is no cache): for reads of
 * objects that may change. */
tl_store *tl_store_uncached(tl_store *s);

/* Statistics of a store made by tl_store_cache_wrap; false for another store. */
bool tl_store_cache_stats(const tl_store *s, tl_cache_stats *out);

#endif
