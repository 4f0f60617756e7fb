/* The batch-id ledger (see batch_ledger.h): reading it through a small cache
 * and the duplicate check. Writing the next one is batch_ledger_extend.c. */
#include "table/batch_ledger.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "table/batch_index.h"

/* TL_ERR_NOT_FOUND when the file is gone (a newer ledger replaced it). */
static tl_status ledger_read(const tl_table *t, const char *url, tl_ledger *out, tl_error *err)
{
    tl_buf file = {0};
    memset(out, 0, sizeof *out);
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    tl_status st = key ? tl_store_get(t->lake->store, key, &file, err)
                       : tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse", url);
    if (st == TL_OK) st = tl_ledger_decode(file.data, file.len, out, err);
    tl_buf_free(&file);
    if (st != TL_OK)
        return st == TL_ERR_NOT_FOUND ? st : tl_error_prefix(err, "reading batch ledger %s", url);
    out->url = strdup(url);
    if (out->url == NULL) {
        tl_ledger_free(out);
        return tl_error_nomem(err);
    }
    return TL_OK;
}

/* ---- The cache: ledgers are immutable, so a URL names its content ---- */

#define CACHE_SLOTS 8

static struct {
    pthread_mutex_t lock;
    tl_ledger slots[CACHE_SLOTS];
    size_t next; /* the slot to replace next (round robin) */
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static tl_ledger *cache_find(const char *url)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        if (cache.slots[i].url && strcmp(cache.slots[i].url, url) == 0) return &cache.slots[i];
    return NULL;
}

/* Takes l unless its URL is cached already. */
static void cache_put(tl_ledger *l)
{
    pthread_mutex_lock(&cache.lock);
    if (cache_find(l->url) == NULL) {
        tl_ledger *slot = &cache.slots[cache.next];
        cache.next = (cache.next + 1) % CACHE_SLOTS;
        tl_ledger_free(slot);
        *slot = *l;
        memset(l, 0, sizeof *l);
    }
    pthread_mutex_unlock(&cache.lock);
}

void tl_batch_ledger_remember(tl_ledger *l)
{
    cache_put(l);
    tl_ledger_free(l);
}

/* Whether l holds batch_id for the line whose lineage root is `root`. A
 * root l does not list comes from another tool's expiry since l was written
 * (or l is an older build's): every id of l counts, which never lets a batch
 * commit twice. */
static bool holds(const tl_ledger *l, const char *batch_id, int64_t root)
{
    const tl_ledger_entry *e;
    size_t n;
    tl_ledger_find(l, batch_id, &e, &n);
    if (n == 0) return false;
    if (!l->lined || !tl_ledger_has_lineage(l, root)) return true;
    for (size_t i = 0; i < n; i++)
        if (!e[i].tagged || e[i].lineage == root) return true;
    return false;
}

/* Looks batch_id up in the ledger at url, reading it unless cached. The
 * lock is not held while reading: two threads may read the same file. */
static tl_status ledger_has(const tl_table *t, const char *url, const char *batch_id, int64_t root,
                            bool *seen, tl_error *err)
{
    pthread_mutex_lock(&cache.lock);
    const tl_ledger *l = cache_find(url);
    if (l) *seen = holds(l, batch_id, root);
    pthread_mutex_unlock(&cache.lock);
    if (l) return TL_OK;
    tl_ledger fresh;
    TL_TRY(ledger_read(t, url, &fresh, err));
    *seen = holds(&fresh, batch_id, root);
    tl_batch_ledger_remember(&fresh);
    return TL_OK;
}

tl_status tl_batches_seen(tl_table *t, const char *const *ids, size_t n, bool *seen, tl_error *err)
{
    char *missing = NULL; /* a ledger URL found missing once */
    tl_status st = TL_OK;
    for (int attempt = 0;; attempt++) {
        if (attempt == 20) { /* every ledger read was replaced before it could be read */
            st = tl_error_set(err, TL_ERR_CONFLICT,
                              "%s: the batch ledger kept changing under concurrent expiries",
                              t->name.full);
            break;
        }
        memset(seen, 0, n * sizeof *seen);
        int64_t root;
        st = tl_batch_index_lookup(t, ids, n, seen, &root, err);
        const char *url = tl_ice_metadata_property(t->md, TL_PROP_BATCH_LEDGER);
        if (st != TL_OK || url == NULL) break;
        /* Missing twice, even after a reload: lost (say, to another tool's
         * orphan cleanup). Appends go on without it rather than fail. */
        if (missing && strcmp(missing, url) == 0) break;
        for (size_t i = 0; st == TL_OK && i < n; i++)
            if (!seen[i]) st = ledger_has(t, url, ids[i], root, &seen[i], err);
        if (st != TL_ERR_NOT_FOUND) break;
        /* A concurrent expiry replaced it: its successor holds every id. */
        free(missing);
        missing = strdup(url);
        st = missing ? tl_table_reload(t, 0, err) : tl_error_nomem(err);
        if (st != TL_OK) break;
    }
    free(missing);
    return st;
}

/* ---- For the writer ---- */

static tl_status copy_ledger(const tl_ledger *from, tl_ledger *to, tl_error *err)
{
    memset(to, 0, sizeof *to);
    to->lined = from->lined;
    to->entries = calloc(from->n ? from->n : 1, sizeof *to->entries);
    to->lineages = malloc((from->n_lineages ? from->n_lineages : 1) * sizeof *to->lineages);
    if (to->entries == NULL || to->lineages == NULL) {
        tl_ledger_free(to);
        return tl_error_nomem(err);
    }
    for (; to->n < from->n; to->n++) {
        to->entries[to->n] = from->entries[to->n];
        to->entries[to->n].batch_id = strdup(from->entries[to->n].batch_id);
        if (to->entries[to->n].batch_id == NULL) {
            tl_ledger_free(to);
            return tl_error_nomem(err);
        }
    }
    if (from->n_lineages)
        memcpy(to->lineages, from->lineages, from->n_lineages * sizeof *to->lineages);
    to->n_lineages = from->n_lineages;
    return TL_OK;
}

tl_status tl_batch_ledger_load(const tl_table *t, tl_ledger *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    const char *url = tl_ice_metadata_property(t->md, TL_PROP_BATCH_LEDGER);
    if (url == NULL) return TL_OK;
    pthread_mutex_lock(&cache.lock);
    const tl_ledger *l = cache_find(url);
    tl_status st = l ? copy_ledger(l, out, err) : TL_OK;
    pthread_mutex_unlock(&cache.lock);
    if (l) return st;
    tl_ledger fresh;
    st = ledger_read(t, url, &fresh, err);
    if (st == TL_ERR_NOT_FOUND) return TL_OK; /* counts as empty */
    TL_TRY(st);
    st = copy_ledger(&fresh, out, err);
    tl_batch_ledger_remember(&fresh);
    return st;
}
