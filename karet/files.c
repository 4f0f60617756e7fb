/* Listing the sources' files. */
#include "files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool kfiles_add(kfiles *l, const char *key, uint64_t size, const char *etag, const ksource *s)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        kfile *p = realloc(l->items, cap * sizeof *p);
        if (p == NULL) return false;
        l->items = p;
        l->cap = cap;
    }
    kfile *f = &l->items[l->len];
    f->key = strdup(key);
    f->etag = strdup(etag ? etag : "");
    f->size = size;
    f->source = s;
    if (f->key == NULL || f->etag == NULL) {
        free(f->key);
        free(f->etag);
        return false;
    }
    l->len++;
    return true;
}

void kfiles_free(kfiles *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].key);
        free(l->items[i].etag);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const kfile *)a)->key, ((const kfile *)b)->key);
}

void kfiles_sort(kfiles *l)
{
    if (l->len > 1) qsort(l->items, l->len, sizeof *l->items, by_key);
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

bool ksource_wants(const ksource *s, const char *key)
{
    size_t n = strlen(key);
    if (ends_with(key, n, ".gz")) n -= 3;
    if (n && key[n - 1] == '/') return false;
    if (s->format == KF_CSV) return ends_with(key, n, ".csv");
    return ends_with(key, n, ".ndjson") || ends_with(key, n, ".jsonl") ||
           ends_with(key, n, ".json");
}

tl_status ksource_list(tl_lake *objects, const ksource *s, kfiles *out, tl_error *err)
{
    tl_object *objs = NULL;
    size_t n = 0;
    tl_status st = tl_lake_list_objects(objects, s->path_prefix, 1, &objs, &n, err);
    if (st != TL_OK) return st;
    for (size_t i = 0; i < n && st == TL_OK; i++)
        if (ksource_wants(s, objs[i].key) &&
            !kfiles_add(out, objs[i].key, objs[i].size, objs[i].etag, s)) {
            snprintf(err->message, sizeof err->message, "out of memory");
            err->code = st = TL_ERR_NOMEM;
        }
    tl_objects_free(objs, n);
    return st;
}
