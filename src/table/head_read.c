/* A cold reader's one round trip: the listing of metadata/v* and the GET of
 * the head object, sent at once; the head is used only when it describes the
 * newest listed version (see head.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/digest.h"
#include "table/head.h"
#include "table/table_internal.h"

typedef struct head_get {
    tl_store *store;
    char key[sizeof((tl_qname *)0)->key + 64];
    tl_buf bytes;
    tl_status st;
} head_get;

static void *get_head(void *arg)
{
    head_get *g = arg;
    g->st = tl_store_get(g->store, g->key, &g->bytes, NULL);
    return NULL;
}

/* The newest vN.metadata.json as listed: its version, size and digest. */
typedef struct newest {
    int64_t version;
    uint64_t size;
    bool has_md5;
    uint8_t md5[16];
} newest;

static tl_status newest_listed(tl_store *store, const tl_qname *name, newest *out, tl_error *err)
{
    char prefix[sizeof name->key + 16];
    snprintf(prefix, sizeof prefix, "%s/metadata/v", name->key);
    tl_store_listing l = {0};
    TL_TRY(tl_store_list_detailed(store, prefix, &l, err));
    *out = (newest){0};
    for (size_t i = 0; i < l.len; i++) {
        int64_t v = tl_ice_metadata_version_of_key(l.items[i].key);
        if (v <= out->version) continue;
        *out = (newest){v, l.items[i].size, l.items[i].has_md5, {0}};
        memcpy(out->md5, l.items[i].md5, sizeof out->md5);
    }
    tl_store_listing_free(&l);
    if (out->version == 0) return tl_table_not_found(err, name);
    return TL_OK;
}

/* Does the head carry the very bytes of the newest listed vN? Its version
 * number alone does not prove it: a writer sends the head in parallel with
 * its conditional create of vN, so the loser of a race may overwrite the
 * winner's head with one for the same N but of its own, never committed,
 * metadata; and a table dropped and created again reaches the same N with
 * other content. The listing's size and MD5 of vN tell them apart. A store
 * whose listing gives no digest never has its head trusted. */
static bool same_content(const newest *listed, const tl_head *h)
{
    if (!listed->has_md5 || h->metadata.len != listed->size) return false;
    uint8_t md5[16];
    tl_md5(h->metadata.data, h->metadata.len, md5);
    return memcmp(md5, listed->md5, sizeof md5) == 0;
}

/* The head's metadata, when it is that of the newest listed vN of this very table. */
static tl_ice_metadata *trusted_metadata(tl_store *store, const tl_qname *name,
                                         const newest *listed, tl_head *h)
{
    if (h->version != listed->version) return NULL; /* stale (or ahead of a lagging listing) */
    if (!same_content(listed, h)) return NULL;      /* another writer's or table's vN */
    tl_ice_metadata *md = NULL;
    if (tl_ice_metadata_parse((const char *)h->metadata.data, h->metadata.len, &md, NULL) != TL_OK)
        return NULL;
    /* A head copied from another table names that table's location. */
    const char *key = md->location ? tl_store_key_of(store, md->location) : NULL;
    if (key == NULL || strcmp(key, name->key) != 0) {
        tl_ice_metadata_free(md);
        return NULL;
    }
    return md;
}

tl_status tl_head_load_latest(tl_store *store, const tl_qname *name, int64_t *version,
                              tl_ice_metadata **md, tl_head_objects **objects, tl_buf *md_bytes,
                              tl_error *err)
{
    *md = NULL;
    *objects = NULL;
    head_get g = {.store = store, .st = TL_ERR_NOT_FOUND};
    tl_head_key(name, g.key, sizeof g.key);
    pthread_t tid;
    bool threaded = pthread_create(&tid, NULL, get_head, &g) == 0;
    newest listed = {0};
    tl_status st = newest_listed(store, name, &listed, err);
    if (st == TL_OK) *version = listed.version;
    if (threaded)
        pthread_join(tid, NULL);
    else if (st == TL_OK)
        get_head(&g);
    tl_head h;
    if (st == TL_OK && g.st == TL_OK &&
        tl_head_decode(g.bytes.data, g.bytes.len, &h, NULL) == TL_OK) {
        *md = trusted_metadata(store, name, &listed, &h);
        tl_head_objects *o = *md ? malloc(sizeof *o) : NULL;
        if (o) {
            *o = h.objects;
            h.objects = (tl_head_objects){0};
            *objects = o;
        }
        if (*md && md_bytes) {
            *md_bytes = h.metadata;
            h.metadata = (tl_buf){0};
        }
        tl_head_clear(&h);
    }
    tl_buf_free(&g.bytes);
    return st;
}
