/* Table handles: finding and loading the latest metadata version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/cache.h"
#include "table/batch_index.h"
#include "table/head.h"
#include "table/lvi_memo.h"
#include "table/metadata_cache.h"
#include "table/table_internal.h"
#include "table/version_cache.h"

tl_status tl_table_not_found(tl_error *err, const tl_qname *name)
{
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "table %s not found: check the name (ls lists the lake's tables) or "
                        "create it",
                        name->full);
}

tl_status tl_table_exists_error(tl_error *err, const tl_qname *name)
{
    return tl_error_set(err, TL_ERR_EXISTS,
                        "table %s already exists: choose another name, or drop it first",
                        name->full);
}

void tl_table_metadata_key(const tl_qname *name, int64_t version, char *buf, size_t size)
{
    snprintf(buf, size, "%s/metadata/v%lld.metadata.json", name->key, (long long)version);
}

bool tl_table_version_present(tl_store *store, const tl_qname *name, int64_t version)
{
    char key[sizeof name->key + 64];
    uint64_t size;
    tl_table_metadata_key(name, version, key, sizeof key);
    return tl_store_size(tl_store_uncached(store), key, &size, NULL) == TL_OK;
}

const char *tl_table_key_of_url(const tl_table *t, const char *url, char *buf, size_t size)
{
    const char *key = tl_store_key_of(t->lake->store, url);
    if (key != NULL) return key;
    /* A table whose warehouse moved: resolve relative to the table's location. */
    size_t n = strlen(t->location);
    if (strncmp(url, t->location, n) != 0 || url[n] != '/') return NULL;
    snprintf(buf, size, "%s%s", t->name.key, url + n);
    return buf;
}

/* The newest vN.metadata.json listed. The "metadata/v" prefix leaves the
 * manifests, lists and indexes out of the listing. */
tl_status tl_table_listed_version(tl_store *store, const tl_qname *name, int64_t *out,
                                  tl_error *err)
{
    char prefix[sizeof name->key + 16];
    snprintf(prefix, sizeof prefix, "%s/metadata/v", name->key);
    tl_strlist keys = {0};
    TL_TRY(tl_store_list(store, prefix, &keys, err));
    if (keys.len == 0) { /* perhaps a catalog's NNNNN-<uuid>.metadata.json: all of metadata/ */
        prefix[strlen(prefix) - 1] = '\0';
        TL_TRY(tl_store_list(store, prefix, &keys, err));
    }
    int64_t best = 0;
    for (size_t i = 0; i < keys.len; i++) {
        int64_t v = tl_ice_metadata_version_of_key(keys.items[i]);
        if (v > best) best = v;
    }
    tl_strlist_free(&keys);
    if (best == 0) return tl_table_not_found(err, name);
    *out = best;
    return TL_OK;
}

/* The key of a catalog's metadata file for version `version`,
 * (N-1)-<uuid>.metadata.json, found by listing, into key (of `size` bytes).
 * TL_ERR_NOT_FOUND when there is none. */
static tl_status catalog_key(tl_store *store, const tl_qname *name, int64_t version, char *key,
                             size_t size, tl_error *err)
{
    char prefix[sizeof name->key + 64];
    snprintf(prefix, sizeof prefix, "%s/metadata/%05lld-", name->key, (long long)version - 1);
    tl_strlist keys = {0};
    TL_TRY(tl_store_list(store, prefix, &keys, err));
    tl_status st = tl_error_set(err, TL_ERR_NOT_FOUND, "%s", name->full);
    for (size_t i = 0; i < keys.len; i++)
        if (tl_ice_metadata_version_of_key(keys.items[i]) == version &&
            strlen(keys.items[i]) < size) {
            strcpy(key, keys.items[i]);
            st = TL_OK;
            break;
        }
    tl_strlist_free(&keys);
    return st;
}

static bool version_exists(tl_store *store, const tl_qname *name, int64_t version)
{
    char key[sizeof name->key + 128];
    uint64_t size;
    tl_table_metadata_key(name, version, key, sizeof key);
    /* A catalog's name is found by listing, which a store that goes by the
     * hint does not do. */
    return tl_store_size(store, key, &size, NULL) == TL_OK ||
           (!store->version_hint &&
            catalog_key(store, name, version, key, sizeof key, NULL) == TL_OK);
}

/* On an object store, one listing (reading the hint, then probing for newer
 * versions, costs a reader three round trips), unless the store says to go by
 * the hint (an http(s) warehouse, which cannot list, or
 * timelake_version_lookup=hint). The hint is only a hint: a writer may have
 * died between committing and updating it, so newer versions are probed for. */
static tl_status latest_version(tl_store *store, const tl_qname *name, int64_t *out, tl_error *err)
{
    if (!tl_store_is_local(store) && !store->version_hint)
        return tl_table_listed_version(store, name, out, err);
    char key[sizeof name->key + 64];
    snprintf(key, sizeof key, "%s/metadata/version-hint.text", name->key);
    tl_buf b = {0};
    int64_t v = 0;
    if (tl_store_get(store, key, &b, NULL) == TL_OK) {
        char *end = NULL;
        v = b.data ? strtoll((const char *)b.data, &end, 10) : 0;
        if (v <= 0 || !version_exists(store, name, v)) v = 0;
    }
    tl_buf_free(&b);
    if (v == 0 && store->read_only) /* no listing (http): the hint is how a table is found */
        return tl_error_set(err, TL_ERR_NOT_FOUND,
                            "table %s does not exist: %s has no readable "
                            "metadata/version-hint.text under it",
                            name->full, store->url);
    if (v == 0) return tl_table_listed_version(store, name, out, err);
    while (version_exists(store, name, v + 1)) v++;
    *out = v;
    return TL_OK;
}

/* Reads version `version`; parses it unless the lake's cache holds the parse
 * of exactly these bytes (*token then says where it goes back). With
 * `cached_only`, the parse the cache holds for the file is taken without
 * reading it (metadata files are immutable), and a miss is TL_ERR_NOT_FOUND. */
static tl_status read_metadata(tl_lake *lake, const tl_qname *name, int64_t version,
                               bool cached_only, tl_ice_metadata **out, uint64_t *token, char *key,
                               size_t size, tl_error *err)
{
    tl_buf b = {0};
    *token = 0;
    tl_table_metadata_key(name, version, key, size);
    if (cached_only)
        return (*out = tl_md_cache_take_key(lake->md_cache, key, token)) != NULL
                   ? TL_OK
                   : tl_error_set(err, TL_ERR_NOT_FOUND, "%s is not cached", key);
    tl_status st = tl_store_get(lake->store, key, &b, err);
    if (st == TL_ERR_NOT_FOUND && catalog_key(lake->store, name, version, key, size, NULL) == TL_OK)
        st = tl_store_get(lake->store, key, &b, err);
    if (st == TL_ERR_NOT_FOUND) st = tl_table_not_found(err, name);
    if (st == TL_OK && (*out = tl_md_cache_take(lake->md_cache, key, &b, token)) != NULL) {
        tl_buf_free(&b);
        return TL_OK;
    }
    if (st == TL_OK) st = tl_ice_metadata_parse((const char *)b.data, b.len, out, err);
    if (st == TL_OK) tl_md_cache_remember(lake->md_cache, key, &b, token);
    if (st != TL_OK && st != TL_ERR_NOT_FOUND) tl_error_prefix(err, "reading %s", key);
    tl_buf_free(&b);
    return st;
}

static void table_clear_state(tl_table *t)
{
    tl_contract_free(&t->contract);
    tl_md_cache_give_back(t->md_cache, t->md_token, t->md); /* frees it if not cacheable */
    t->md_token = 0;
    free(t->location);
    free(t->metadata_url);
    t->md = NULL;
    t->location = t->metadata_url = NULL;
}

tl_status tl_table_adopt(tl_table *t, tl_ice_metadata *md, int64_t version, tl_error *err)
{
    char key[sizeof t->name.key + 64];
    tl_table_metadata_key(&t->name, version, key, sizeof key);
    tl_contract contract;
    tl_status st = tl_contract_load(md, &contract, err);
    char *location = st == TL_OK ? strdup(md->location) : NULL;
    char *url = st == TL_OK ? tl_store_url_of(t->lake->store, key) : NULL;
    if (st == TL_OK && (location == NULL || url == NULL)) {
        tl_contract_free(&contract);
        st = tl_error_nomem(err);
    }
    if (st != TL_OK) {
        free(location);
        free(url);
        tl_ice_metadata_free(md);
        return st;
    }
    table_clear_state(t);
    t->dropped = false;
    t->md = md;
    t->contract = contract;
    t->location = location;
    t->metadata_url = url;
    t->version = version;
    t->no_large_files = false; /* until a head of this version says so */
    return TL_OK;
}

/* Whether two handles are of one table: the same name and location (two
 * warehouses may each hold a table of the name), neither a read-only
 * handle of a past snapshot. */
static bool same_table(const tl_table *a, const tl_table *b)
{
    return strcmp(a->name.full, b->name.full) == 0 && a->location && b->location &&
           strcmp(a->location, b->location) == 0 && !a->pinned_snapshot && !b->pinned_snapshot;
}

tl_status tl_table_follow(tl_table *t, const tl_table *src, tl_error *err)
{
    if (t == NULL || src == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "tl_table_follow needs two table handles");
    if (!same_table(t, src))
        return tl_error_set(err, TL_ERR_INVALID,
                            "cannot follow %s (%s) with a handle of %s (%s): another table",
                            src->name.full, src->location ? src->location : "?", t->name.full,
                            t->location ? t->location : "?");
    if (src->version <= t->version || src->dropped) return TL_OK;
    tl_ice_metadata *md;
    TL_TRY(tl_ice_metadata_copy(src->md, &md, err));
    char *url = strdup(src->metadata_url); /* a catalog's name as well as vN */
    if (url == NULL) {
        tl_ice_metadata_free(md);
        return tl_error_nomem(err);
    }
    tl_status st = tl_table_adopt(t, md, src->version, err); /* frees md on failure */
    if (st == TL_OK) {
        free(t->metadata_url);
        t->metadata_url = url;
    } else {
        free(url);
    }
    return st;
}

void tl_table_set_commit_turns(tl_table *t, tl_turn_fn enter, tl_turn_fn leave, void *ctx)
{
    t->turn_enter = enter;
    t->turn_leave = leave;
    t->turn_ctx = ctx;
}

/* Loads version `version` (the latest, checked, when <= 0) into t;
 * cached_only: see read_metadata. */
static tl_status reload(tl_table *t, int64_t version, bool cached_only, tl_error *err)
{
    tl_store *store = t->lake->store;
    bool latest = version <= 0;
    tl_ice_metadata *md = NULL;
    tl_head_objects *held = NULL;
    tl_buf bytes = {0};
    uint64_t token = 0;
    char key[sizeof t->name.key + 128] = "";
    /* On an object store the head may answer in the listing's round trip;
     * the lake's cache keeps the parse it carried, as one it read. */
    if (version <= 0 && !tl_store_is_local(store) && !store->version_hint)
        TL_TRY(tl_head_load_latest(store, &t->name, &version, &md, &held, &bytes, err));
    else if (version <= 0 && t->newer_listed)
        TL_TRY(tl_table_listed_version(store, &t->name, &version, err));
    else if (version <= 0)
        TL_TRY(latest_version(store, &t->name, &version, err));
    t->newer_listed = false;
    if (md && bytes.len) {
        char vkey[sizeof t->name.key + 64];
        tl_table_metadata_key(&t->name, version, vkey, sizeof vkey);
        tl_md_cache_remember(t->lake->md_cache, vkey, &bytes, &token);
    }
    tl_buf_free(&bytes);
    if (md == NULL)
        TL_TRY(read_metadata(t->lake, &t->name, version, cached_only, &md, &token, key, sizeof key,
                             err));
    tl_status st = tl_table_adopt(t, md, version, err);
    if (st == TL_OK && key[0] && strrchr(key, '/')[1] != 'v') {
        char *url = tl_store_url_of(store, key); /* a catalog's name, not vN */
        if (url) {
            free(t->metadata_url);
            t->metadata_url = url;
        }
    }
    if (st == TL_OK && token != 0) { /* on failure adopt freed md: it never comes back */
        if (t->md_cache == NULL) t->md_cache = tl_md_cache_ref(t->lake->md_cache);
        t->md_token = token;
    }
    if (st == TL_OK && held) {
        tl_head_objects_free(t->head_objects);
        t->head_objects = held;
        held = NULL;
    }
    tl_head_objects_free(held);
    if (st == TL_OK && latest) tl_version_cache_note(t, t->version);
    return st;
}

tl_status tl_table_reload(tl_table *t, int64_t version, tl_error *err)
{
    return reload(t, version, false, err);
}

static tl_status load(tl_lake *lake, const tl_qname *name, int64_t version, bool cached_only,
                      tl_table **out, tl_error *err)
{
    tl_table *t = calloc(1, sizeof *t);
    if (t == NULL || (t->lvi_memo = tl_lvi_memo_new(lake->lvi_memos)) == NULL) {
        free(t);
        return tl_error_nomem(err);
    }
    t->lake = lake;
    t->name = *name;
    tl_status st = reload(t, version, cached_only, err);
    if (st != TL_OK) {
        tl_lvi_memo_free(t->lvi_memo);
        free(t);
        return st;
    }
    *out = t;
    return TL_OK;
}

tl_status tl_table_load(tl_lake *lake, const tl_qname *name, int64_t version, tl_table **out,
                        tl_error *err)
{
    return load(lake, name, version, false, out, err);
}

tl_status tl_table_load_cached(tl_lake *lake, const tl_qname *name, int64_t version, tl_table **out,
                               tl_error *err)
{
    return load(lake, name, version, true, out, err);
}

tl_status tl_lake_open_table(tl_lake *lake, const char *name, tl_table **out, tl_error *err)
{
    tl_qname tn;
    TL_TRY(tl_qname_parse(name, "default", &tn, err));
    return tl_table_load(lake, &tn, 0, out, err);
}

void tl_table_close(tl_table *t)
{
    if (t == NULL) return;
    table_clear_state(t);
    tl_md_cache_free(t->md_cache); /* this handle's reference */
    tl_head_objects_free(t->head_objects);
    tl_batch_index_free(t->batch_index);
    tl_lvi_memo_free(t->lvi_memo);
    tl_strlist_free(&t->unsynced_removals); /* never left: commit_stream syncs */
    free(t);
}

const char *tl_table_name(const tl_table *t)
{
    return t->name.full;
}

const char *tl_table_location(const tl_table *t)
{
    return t->location;
}

int64_t tl_table_version(const tl_table *t)
{
    return t->version;
}

tl_status tl_table_schema(const tl_table *t, struct ArrowSchema *out, tl_error *err)
{
    return tl_ice_schema_to_arrow(tl_ice_metadata_current_schema(t->md), out, err);
}

tl_status tl_table_refresh(tl_table *t, tl_error *err)
{
    return tl_table_reload(t, 0, err);
}
