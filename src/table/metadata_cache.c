#include "table/metadata_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;           /* NULL: a free slot */
    tl_buf bytes;        /* the metadata file as read */
    tl_ice_metadata *md; /* parsed from bytes, or NULL while a handle holds it */
    uint64_t token;      /* names this (key, bytes); never reused */
    uint64_t used;       /* for least-recently-used replacement */
} entry;

struct tl_md_cache {
    pthread_mutex_t lock;
    entry e[TL_MD_CACHE_TABLES];
    uint64_t clock, next_token;
    int refs;
};

tl_md_cache *tl_md_cache_new(void)
{
    tl_md_cache *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return NULL;
    }
    c->refs = 1;
    return c;
}

tl_md_cache *tl_md_cache_ref(tl_md_cache *c)
{
    if (c == NULL) return NULL;
    pthread_mutex_lock(&c->lock);
    c->refs++;
    pthread_mutex_unlock(&c->lock);
    return c;
}

static void entry_clear(entry *e)
{
    free(e->key);
    tl_buf_free(&e->bytes);
    tl_ice_metadata_free(e->md);
    memset(e, 0, sizeof *e);
}

void tl_md_cache_free(tl_md_cache *c)
{
    if (c == NULL) return;
    pthread_mutex_lock(&c->lock);
    int left = --c->refs;
    pthread_mutex_unlock(&c->lock);
    if (left > 0) return;
    for (size_t i = 0; i < TL_MD_CACHE_TABLES; i++) entry_clear(&c->e[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static entry *find(tl_md_cache *c, const char *key)
{
    for (size_t i = 0; i < TL_MD_CACHE_TABLES; i++)
        if (c->e[i].key && strcmp(c->e[i].key, key) == 0) return &c->e[i];
    return NULL;
}

static bool same_bytes(const entry *e, const tl_buf *b)
{
    return e->bytes.len == b->len && (b->len == 0 || memcmp(e->bytes.data, b->data, b->len) == 0);
}

static tl_ice_metadata *take(tl_md_cache *c, const char *key, const tl_buf *bytes, uint64_t *token)
{
    *token = 0;
    if (c == NULL) return NULL;
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, key);
    tl_ice_metadata *md = NULL;
    if (e && e->md && (bytes == NULL || same_bytes(e, bytes))) {
        md = e->md;
        e->md = NULL;
        e->used = ++c->clock;
        *token = e->token;
    }
    pthread_mutex_unlock(&c->lock);
    return md;
}

tl_ice_metadata *tl_md_cache_take(tl_md_cache *c, const char *key, const tl_buf *bytes,
                                  uint64_t *token)
{
    return take(c, key, bytes, token);
}

tl_ice_metadata *tl_md_cache_take_key(tl_md_cache *c, const char *key, uint64_t *token)
{
    return take(c, key, NULL, token);
}

/* The entry for key: its own, else a free one, else the least recently used. */
static entry *slot_for(tl_md_cache *c, const char *key)
{
    entry *e = find(c, key), *old = &c->e[0];
    if (e) return e;
    for (size_t i = 0; i < TL_MD_CACHE_TABLES; i++) {
        if (c->e[i].key == NULL) return &c->e[i];
        if (c->e[i].used < old->used) old = &c->e[i];
    }
    return old;
}

void tl_md_cache_remember(tl_md_cache *c, const char *key, tl_buf *bytes, uint64_t *token)
{
    *token = 0;
    if (c == NULL) return;
    char *k = strdup(key);
    if (k == NULL) return;
    pthread_mutex_lock(&c->lock);
    entry *e = slot_for(c, key);
    entry_clear(e);
    e->key = k;
    e->bytes = *bytes;
    memset(bytes, 0, sizeof *bytes);
    e->token = *token = ++c->next_token;
    e->used = ++c->clock;
    pthread_mutex_unlock(&c->lock);
}

void tl_md_cache_give_back(tl_md_cache *c, uint64_t token, tl_ice_metadata *md)
{
    if (c != NULL && token != 0 && md != NULL) {
        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < TL_MD_CACHE_TABLES; i++) {
            entry *e = &c->e[i];
            if (e->key && e->token == token && e->md == NULL) {
                e->md = md;
                md = NULL;
                break;
            }
        }
        pthread_mutex_unlock(&c->lock);
    }
    tl_ice_metadata_free(md);
}
