#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "iceberg/metadata.h"
#include "store/cache.h"
#include "store/store_options.h"
#include "table/lvi_memo.h"
#include "table/metadata_cache.h"
#include "table/settings.h"
#include "table/table_internal.h"
#include "table/version_cache.h"

#define INDEX_CACHE_BYTES "timelake_index_cache_bytes"
#define QUERY_THREADS "timelake_query_threads"
#define QUERY_THREADS_MAX 1024

static bool own_key(const char *key)
{
    return strcasecmp(key, INDEX_CACHE_BYTES) == 0 || strcasecmp(key, QUERY_THREADS) == 0;
}

/* One of the lake's own options: *budget from timelake_index_cache_bytes
 * (digits only, as the store's timelake_cache_*_bytes keys), *threads from
 * timelake_query_threads (1 to 1024). */
static tl_status own_option(const char *key, const char *value, int64_t *budget, int *threads,
                            tl_error *err)
{
    bool cache = strcasecmp(key, INDEX_CACHE_BYTES) == 0;
    long long v;
    TL_TRY(tl_store_option_plain(key, value, cache, &v, err));
    if (cache) {
        *budget = v;
        return TL_OK;
    }
    if (v < 1 || v > QUERY_THREADS_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "%s must be 1 to %d threads, not %s",
                            QUERY_THREADS, QUERY_THREADS_MAX, value);
    *threads = (int)v;
    return TL_OK;
}

/* The lake's own options, which every kind of lake takes (the store's are
 * the rest): *budget, or -1 without it; *threads, or 0 without it; *rest
 * (malloc'd, the strings options') the pairs for the store. */
static tl_status lake_options(const char *const *options, int64_t *budget, int *threads,
                              const char ***rest, tl_error *err)
{
    size_t n = 0, kept = 0;
    while (options && options[n]) n += 2;
    *budget = -1;
    *threads = 0;
    *rest = calloc(n + 1, sizeof **rest);
    if (*rest == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n; i += 2) {
        if (own_key(options[i])) {
            st = own_option(options[i], options[i + 1], budget, threads, err);
            continue;
        }
        (*rest)[kept++] = options[i];
        (*rest)[kept++] = options[i + 1];
    }
    if (st != TL_OK) free(*rest);
    return st;
}

tl_status tl_lake_open(const char *location, const char *const *options, tl_lake **out,
                       tl_error *err)
{
    int64_t budget;
    int threads;
    const char **store_options;
    TL_TRY(lake_options(options, &budget, &threads, &store_options, err));
    tl_lake *lake = calloc(1, sizeof *lake);
    tl_status st = lake ? TL_OK : tl_error_nomem(err);
    if (lake) lake->query_threads = threads;
    if (st == TL_OK &&
        (lake->lvi_memos = budget < 0 ? tl_lvi_memos_process() : tl_lvi_memos_new(budget)) == NULL)
        st = tl_error_nomem(err);
    if (st == TL_OK) st = tl_store_open(location, store_options, &lake->store, err);
    free(store_options);
    if (st != TL_OK) {
        if (lake) tl_lvi_memos_free(lake->lvi_memos);
        free(lake);
        return st;
    }
    lake->md_cache = tl_md_cache_new(); /* NULL: no cache, every load parses */
    *out = lake;
    return TL_OK;
}

void tl_lake_close(tl_lake *lake)
{
    if (lake == NULL) return;
    if (lake->query_free) lake->query_free(lake->query);
    tl_strings_free(lake->settings);
    tl_store_free(lake->store);
    tl_md_cache_free(lake->md_cache);
    tl_lvi_memos_free(lake->lvi_memos); /* this lake's reference: handles hold theirs */
    free(lake);
}

const char *tl_lake_location(const tl_lake *lake)
{
    return lake->store->url;
}

tl_status tl_lake_set_settings(tl_lake *lake, const char *const *settings, tl_error *err)
{
    TL_TRY(tl_settings_check_session(settings, err));
    size_t n = 0;
    while (settings && settings[n]) n += 2;
    char **copy = n ? calloc(n + 1, sizeof *copy) : NULL;
    if (n && copy == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++)
        if ((copy[i] = strdup(settings[i])) == NULL) {
            tl_strings_free(copy);
            return tl_error_nomem(err);
        }
    tl_strings_free(lake->settings);
    lake->settings = copy;
    return TL_OK;
}

int tl_lake_cache_stats(const tl_lake *lake, tl_cache_counts *out)
{
    tl_cache_stats s;
    if (!tl_store_cache_stats(lake->store, &s)) return 0;
    *out = (tl_cache_counts){s.memory_hits, s.disk_hits, s.misses, s.bytes_fetched};
    return 1;
}

void tl_lake_index_cache_stats(const tl_lake *lake, tl_index_cache_counts *out)
{
    tl_lvi_memos_stats(lake->lvi_memos, out);
}

#define DROP_ROUNDS 20

static int cmp_version(const void *a, const void *b)
{
    int64_t x = tl_ice_metadata_version_of_key(*(char *const *)a);
    int64_t y = tl_ice_metadata_version_of_key(*(char *const *)b);
    return x < y ? -1 : x > y;
}

/* Deletes the table's metadata versions, the newest last and only once
 * every older one has gone: until it goes, a reader finds the table as it
 * was (a drop that fails midway does not bring back an older version of
 * it), and once it has gone, the table is gone. The older ones go all at
 * once (on an object store each is a round trip: a hundred versions took a
 * hundred in a row). The version hint goes after them all. */
static tl_status remove_versions(tl_store *store, const char *meta_prefix, tl_error *err)
{
    tl_strlist keys = {0};
    tl_status st = tl_store_list(store, meta_prefix, &keys, err);
    size_t n = 0;
    for (size_t i = 0; st == TL_OK && i < keys.len; i++)
        if (tl_ice_metadata_version_of_key(keys.items[i]) > 0) {
            char *k = keys.items[n];
            keys.items[n++] = keys.items[i];
            keys.items[i] = k;
        }
    if (n > 1) qsort(keys.items, n, sizeof *keys.items, cmp_version);
    if (st == TL_OK && n > 1) st = tl_store_remove_all(store, keys.items, n - 1, err);
    if (st == TL_OK && n > 0) st = tl_store_remove(store, keys.items[n - 1], err);
    tl_strlist_free(&keys);
    return st;
}

/* Deletes every object under the table's prefix: the versions first (a
 * crash midway then leaves no readable half table, and a writer that finds
 * any file of the table missing finds its version gone too and can say the
 * table was dropped), then the rest of the metadata, then the data; again
 * and again until a
 * listing finds nothing: a writer committing meanwhile either made its
 * version before a listing (deleted here) or finds its parent gone and
 * removes what it made (commit_point.h). Objects other than versions still
 * there after the last round are uploads of such writers, which remove them. */
static tl_status remove_table_objects(tl_store *store, const tl_qname *tn, tl_error *err)
{
    char prefix[sizeof tn->key + 1], meta_prefix[sizeof tn->key + 16];
    char versions_prefix[sizeof tn->key + 17]; /* and version-hint.text */
    snprintf(prefix, sizeof prefix, "%s/", tn->key);
    snprintf(meta_prefix, sizeof meta_prefix, "%smetadata/", prefix);
    snprintf(versions_prefix, sizeof versions_prefix, "%sv", meta_prefix);
    for (int round = 1;; round++) {
        TL_TRY(remove_versions(store, meta_prefix, err));
        TL_TRY(tl_store_remove_prefix(store, versions_prefix, err)); /* the hint */
        TL_TRY(tl_store_remove_prefix(store, meta_prefix, err));
        TL_TRY(tl_store_remove_prefix(store, prefix, err));
        tl_strlist left = {0};
        TL_TRY(tl_store_list(store, prefix, &left, err));
        bool versions = false;
        for (size_t i = 0; i < left.len; i++)
            versions |= tl_ice_metadata_version_of_key(left.items[i]) > 0;
        size_t n = left.len;
        tl_strlist_free(&left);
        if (n == 0 || (round == DROP_ROUNDS && !versions)) return TL_OK;
        if (round == DROP_ROUNDS)
            return tl_error_set(err, TL_ERR_CONFLICT,
                                "%s: writers kept committing to it while it was dropped; run the "
                                "drop again",
                                tn->full);
        tl_sleep_ms(round < 4 ? 5 : 50);
    }
}

tl_status tl_lake_drop_table(tl_lake *lake, const char *name, tl_error *err)
{
    tl_qname tn;
    TL_TRY(tl_qname_parse(name, "default", &tn, err));
    char what[sizeof tn.full + 16];
    snprintf(what, sizeof what, "drop %s", tn.full);
    TL_TRY(tl_store_check_writable(lake->store, what, err));
    tl_version_cache_forget(lake, &tn);
    tl_store_settle(lake->store); /* this lake's queued deletions run before, not amid, the drop */
    TL_TRY(remove_table_objects(lake->store, &tn, err));
    return tl_registry_remove(lake->store, tn.full, err);
}
