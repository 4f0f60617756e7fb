/* The batch-id ledger (see batch_ledger.h): reading it through a small cache,
 * looking ids up, and writing the next one when expiry drops snapshots. */
#include "table/batch_ledger.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/grow.h"
#include "core/random.h"
#include "formats/avro/avro_file.h"
#include "table/append.h"
#include "table/batch_ids.h"
#include "table/batch_index.h"

static const char ledger_schema[] =
    "{\"type\":\"record\",\"name\":\"batch_ledger_entry\",\"fields\":["
    "{\"name\":\"batch_id\",\"type\":\"string\"},"
    "{\"name\":\"committed_ms\",\"type\":\"long\"}]}";

typedef struct ledger_entry {
    char *batch_id;
    int64_t committed_ms; /* the committing snapshot's timestamp */
} ledger_entry;

typedef struct ledger {
    char *url;
    ledger_entry *entries; /* sorted by batch_id, unique */
    size_t n;
} ledger;

static void entries_free(ledger_entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++) free(e[i].batch_id);
    free(e);
}

static void ledger_free(ledger *l)
{
    free(l->url);
    entries_free(l->entries, l->n);
    memset(l, 0, sizeof *l);
}

static int by_batch_id(const void *a, const void *b)
{
    return strcmp(((const ledger_entry *)a)->batch_id, ((const ledger_entry *)b)->batch_id);
}

/* Sorts and keeps one entry per id (the newest). */
static size_t sort_unique(ledger_entry *e, size_t n)
{
    if (n == 0) return 0;
    qsort(e, n, sizeof *e, by_batch_id);
    size_t m = 1;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(e[i].batch_id, e[m - 1].batch_id) == 0) {
            if (e[i].committed_ms > e[m - 1].committed_ms)
                e[m - 1].committed_ms = e[i].committed_ms;
            free(e[i].batch_id);
        } else {
            e[m++] = e[i];
        }
    }
    return m;
}

/* ---- Reading ---- */

static tl_status entry_record(const tl_avro_value *rec, void *elem, tl_error *err)
{
    ledger_entry *e = elem;
    const uint8_t *id;
    size_t len;
    TL_TRY(tl_avro_get_bytes(rec, -1, "batch_id", NULL, &id, &len, err));
    TL_TRY(tl_avro_get_long(rec, -1, "committed_ms", NULL, &e->committed_ms, err));
    e->batch_id = strndup((const char *)id, len);
    return e->batch_id ? TL_OK : tl_error_nomem(err);
}

/* TL_ERR_NOT_FOUND when the file is gone (a newer ledger replaced it). */
static tl_status ledger_read(const tl_table *t, const char *url, ledger *out, tl_error *err)
{
    tl_buf file = {0};
    void *items = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    char buf[1024];
    const char *key = tl_table_key_of_url(t, url, buf, sizeof buf);
    tl_status st = key ? tl_store_get(t->lake->store, key, &file, err)
                       : tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse", url);
    if (st == TL_OK)
        st = tl_avro_read_records(file.data, file.len, sizeof(ledger_entry), entry_record,
                                  "batch id", &items, &n, err);
    tl_buf_free(&file);
    if (st != TL_OK) {
        entries_free(items, n);
        return st == TL_ERR_NOT_FOUND ? st : tl_error_prefix(err, "reading batch ledger %s", url);
    }
    out->entries = items;
    out->n = sort_unique(items, n); /* written sorted; not trusted to be */
    out->url = strdup(url);
    if (out->url == NULL) {
        ledger_free(out);
        return tl_error_nomem(err);
    }
    return TL_OK;
}

/* ---- The cache: ledgers are immutable, so a URL names its content ---- */

#define CACHE_SLOTS 8

static struct {
    pthread_mutex_t lock;
    ledger slots[CACHE_SLOTS];
    size_t next; /* the slot to replace next (round robin) */
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

static ledger *cache_find(const char *url)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        if (cache.slots[i].url && strcmp(cache.slots[i].url, url) == 0) return &cache.slots[i];
    return NULL;
}

/* Takes l. Caller holds the lock. */
static ledger *cache_put(ledger *l)
{
    ledger *slot = &cache.slots[cache.next];
    cache.next = (cache.next + 1) % CACHE_SLOTS;
    ledger_free(slot);
    *slot = *l;
    memset(l, 0, sizeof *l);
    return slot;
}

static const ledger_entry *ledger_find(const ledger *l, const char *batch_id)
{
    ledger_entry key = {.batch_id = (char *)batch_id};
    return bsearch(&key, l->entries, l->n, sizeof key, by_batch_id);
}

/* Looks batch_id up in the ledger at url, reading it unless cached. The
 * lock is not held while reading: two threads may read the same file. */
static tl_status ledger_has(const tl_table *t, const char *url, const char *batch_id, bool *seen,
                            tl_error *err)
{
    pthread_mutex_lock(&cache.lock);
    const ledger *l = cache_find(url);
    if (l) *seen = ledger_find(l, batch_id) != NULL;
    pthread_mutex_unlock(&cache.lock);
    if (l) return TL_OK;
    ledger fresh;
    TL_TRY(ledger_read(t, url, &fresh, err));
    *seen = ledger_find(&fresh, batch_id) != NULL;
    pthread_mutex_lock(&cache.lock);
    if (cache_find(url) == NULL) cache_put(&fresh);
    pthread_mutex_unlock(&cache.lock);
    ledger_free(&fresh);
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
        st = tl_batch_index_lookup(t, ids, n, seen, err);
        const char *url = tl_ice_metadata_property(t->md, TL_PROP_BATCH_LEDGER);
        if (st != TL_OK || url == NULL) break;
        /* Missing twice, even after a reload: lost (say, to another tool's
         * orphan cleanup). Appends go on without it rather than fail. */
        if (missing && strcmp(missing, url) == 0) break;
        for (size_t i = 0; st == TL_OK && i < n; i++)
            if (!seen[i]) st = ledger_has(t, url, ids[i], &seen[i], err);
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

/* ---- Writing the next ledger ---- */

typedef struct entry_list {
    ledger_entry *items;
    size_t n, cap;
} entry_list;

static bool list_push(entry_list *l, const char *batch_id, int64_t ms)
{
    if (TL_GROW(l->items, l->cap, l->n + 1, 64) != 0) return false;
    char *copy = strdup(batch_id);
    if (copy == NULL) return false;
    l->items[l->n++] = (ledger_entry){copy, ms};
    return true;
}

/* Batch ids of the expired snapshots in the current snapshot's ancestry:
 * only those are part of the table's state. */
static tl_status expired_batch_ids(const tl_ice_metadata *md, const bool *expire, entry_list *out,
                                   tl_error *err)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
    tl_status st = TL_OK;
    for (size_t steps = 0; st == TL_OK && s != NULL && steps <= md->n_snapshots; steps++) {
        tl_strlist ids = {0};
        if (expire[s - md->snapshots]) st = tl_snapshot_batch_ids(s, &ids, err);
        for (size_t i = 0; st == TL_OK && i < ids.len; i++)
            if (!list_push(out, ids.items[i], s->timestamp_ms)) st = tl_error_nomem(err);
        tl_strlist_free(&ids);
        s = tl_ice_metadata_parent(md, s);
    }
    return st;
}

/* Copies a cached ledger's entries; false when it is not cached. */
static bool add_cached(const char *url, entry_list *out, tl_status *st, tl_error *err)
{
    pthread_mutex_lock(&cache.lock);
    const ledger *l = cache_find(url);
    for (size_t i = 0; l && *st == TL_OK && i < l->n; i++)
        if (!list_push(out, l->entries[i].batch_id, l->entries[i].committed_ms))
            *st = tl_error_nomem(err);
    pthread_mutex_unlock(&cache.lock);
    return l != NULL;
}

/* Adds the current ledger's entries (a missing one counts as empty). */
static tl_status add_current(const tl_table *t, entry_list *out, tl_error *err)
{
    const char *url = tl_ice_metadata_property(t->md, TL_PROP_BATCH_LEDGER);
    if (url == NULL) return TL_OK;
    tl_status cached = TL_OK;
    if (add_cached(url, out, &cached, err)) return cached;
    ledger l;
    tl_status st = ledger_read(t, url, &l, err);
    if (st == TL_ERR_NOT_FOUND) return TL_OK;
    TL_TRY(st);
    for (size_t i = 0; st == TL_OK && i < l.n; i++)
        if (!list_push(out, l.entries[i].batch_id, l.entries[i].committed_ms))
            st = tl_error_nomem(err);
    ledger_free(&l);
    return st;
}

/* Drops entries older than timelake.batch-id-retention. */
static tl_status apply_retention(const tl_table *t, entry_list *l, tl_error *err)
{
    const char *v = tl_ice_metadata_property(t->md, TL_PROP_BATCH_ID_RETENTION);
    if (v == NULL) return TL_OK;
    int64_t us;
    if (tl_duration_parse(v, &us, err) != TL_OK)
        return tl_error_prefix(err, "%s", TL_PROP_BATCH_ID_RETENTION);
    int64_t cutoff = tl_now_millis() - us / 1000;
    size_t m = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].committed_ms >= cutoff)
            l->items[m++] = l->items[i];
        else
            free(l->items[i].batch_id);
    }
    l->n = m;
    return TL_OK;
}

static tl_status encode_ledger(const entry_list *l, tl_buf *out, tl_error *err)
{
    char count[24];
    snprintf(count, sizeof count, "%zu", l->n);
    const char *meta[] = {"timelake.batch-count",
                          count,
                          "timelake.min-batch-id",
                          l->n ? l->items[0].batch_id : "",
                          "timelake.max-batch-id",
                          l->n ? l->items[l->n - 1].batch_id : "",
                          NULL};
    tl_avro_schema *schema;
    TL_TRY(tl_avro_schema_parse(ledger_schema, strlen(ledger_schema), &schema, err));
    tl_avro_writer_options opts = {.codec = TL_AVRO_CODEC_DEFLATE};
    tl_avro_writer w;
    tl_status st = tl_avro_writer_begin(&w, schema, meta, &opts, out, err);
    for (size_t i = 0; st == TL_OK && i < l->n; i++) {
        tl_buf *b = tl_avro_writer_block(&w);
        int rc = tl_avro_write_string(b, l->items[i].batch_id);
        rc |= tl_avro_write_long(b, l->items[i].committed_ms);
        st = rc == 0 ? tl_avro_writer_end_datum(&w, err) : tl_error_nomem(err);
        if (st != TL_OK) tl_avro_writer_discard(&w);
    }
    if (st == TL_OK) st = tl_avro_writer_finish(&w, err);
    tl_avro_schema_free(schema);
    return st;
}

/* Uploads the ledger, names it in `next` and caches it (it is known already). */
static tl_status publish(const tl_table *t, entry_list *l, tl_ice_metadata *next, char **new_key,
                         tl_error *err)
{
    tl_buf avro = {0};
    char uuid[TL_UUID_STR_LEN + 1];
    tl_uuid_v7(uuid);
    char *key = tl_strdup_printf("%s/metadata/batch-ledger-%s.avro", t->name.key, uuid);
    char *url = key ? tl_strdup_printf("%s%s", t->location, key + strlen(t->name.key)) : NULL;
    tl_status st = url ? encode_ledger(l, &avro, err) : tl_error_nomem(err);
    if (st == TL_OK) st = tl_store_put_new(t->lake->store, key, avro.data, avro.len, err);
    tl_buf_free(&avro);
    if (st == TL_OK) {
        *new_key = key;
        key = NULL;
        st = tl_ice_metadata_set_property(next, TL_PROP_BATCH_LEDGER, url, err);
    }
    if (st == TL_OK) {
        ledger done = {.url = url, .entries = l->items, .n = l->n};
        pthread_mutex_lock(&cache.lock);
        if (cache_find(url) == NULL) {
            cache_put(&done);
            url = NULL;
            memset(l, 0, sizeof *l);
        }
        pthread_mutex_unlock(&cache.lock);
    }
    free(key);
    free(url);
    return st;
}

tl_status tl_batch_ledger_extend(const tl_table *t, const bool *expire, tl_ice_metadata *next,
                                 char **new_key, tl_error *err)
{
    entry_list l = {0};
    *new_key = NULL;
    tl_status st = expired_batch_ids(t->md, expire, &l, err);
    if (st != TL_OK || l.n == 0) {
        entries_free(l.items, l.n);
        return st;
    }
    st = add_current(t, &l, err);
    if (st == TL_OK) {
        l.n = sort_unique(l.items, l.n);
        st = apply_retention(t, &l, err);
    }
    if (st == TL_OK) st = publish(t, &l, next, new_key, err);
    entries_free(l.items, l.n);
    return st;
}
