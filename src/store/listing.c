/* Listings with sizes and digests (store.h), and the keys-only fallback. */
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "store/store.h"

tl_store_listed *tl_store_listing_add(tl_store_listing *l, const char *key, uint64_t size,
                                      const uint8_t *md5)
{
    if (TL_GROW(l->items, l->cap, l->len + 1, 16) != 0) return NULL;
    tl_store_listed *e = &l->items[l->len];
    memset(e, 0, sizeof *e);
    e->key = strdup(key);
    if (e->key == NULL) return NULL;
    e->size = size;
    e->has_md5 = md5 != NULL;
    if (md5) memcpy(e->md5, md5, sizeof e->md5);
    l->len++;
    return e;
}

int tl_store_listing_push(tl_store_listing *l, const char *key, uint64_t size, const uint8_t *md5)
{
    return tl_store_listing_add(l, key, size, md5) ? 0 : -1;
}

int tl_store_listed_set_etag(tl_store_listed *e, const char *text)
{
    free(e->etag);
    e->etag = NULL;
    if (text == NULL) return 0;
    size_t n = strlen(text);
    if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
        text++;
        n -= 2;
    }
    e->etag = strndup(text, n);
    return e->etag ? 0 : -1;
}

void tl_store_listed_clear(tl_store_listed *e)
{
    free(e->key);
    free(e->etag);
    memset(e, 0, sizeof *e);
}

void tl_store_listing_free(tl_store_listing *l)
{
    for (size_t i = 0; i < l->len; i++) tl_store_listed_clear(&l->items[i]);
    free(l->items);
    *l = (tl_store_listing){0};
}

static int cmp_listed(const void *a, const void *b)
{
    return strcmp(((const tl_store_listed *)a)->key, ((const tl_store_listed *)b)->key);
}

void tl_store_listing_sort(tl_store_listing *l)
{
    if (l->len > 1) qsort(l->items, l->len, sizeof *l->items, cmp_listed);
}

tl_status tl_store_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                 tl_error *err)
{
    tl_status st;
    if (s->ops->list_detailed) {
        st = s->ops->list_detailed(s, prefix, out, err);
    } else {
        tl_strlist keys = {0};
        st = tl_store_list(s, prefix, &keys, err);
        for (size_t i = 0; st == TL_OK && i < keys.len; i++)
            if (tl_store_listing_push(out, keys.items[i], 0, NULL) != 0) st = tl_error_nomem(err);
        tl_strlist_free(&keys);
    }
    /* A backend that failed half way (memory ran out) leaves what it listed. */
    if (st != TL_OK) tl_store_listing_free(out);
    return st;
}
