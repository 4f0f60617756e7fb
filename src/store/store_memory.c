/* An in-memory warehouse (memory://...), as the reference's: every object in
 * this process's memory, gone when the lake is closed; each lake opened on
 * such a URL starts empty. For tests, demos and scratch work. Objects are
 * kept sorted by key; every call takes the store's lock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/grow.h"
#include "store/digest.h"
#include "store/store.h"

typedef struct object {
    char *key;
    tl_buf data;
    int64_t modified_ms;
    uint64_t generation; /* the etag: new at each write */
} object;

typedef struct memory_store {
    tl_store base;
    pthread_mutex_t lock;
    object *items;
    size_t n, cap;
    uint64_t next_generation;
} memory_store;

/* The index of key, or where it would go (*found false). */
static size_t find(const memory_store *m, const char *key, bool *found)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->items[mid].key, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static tl_status not_found(const char *key, tl_error *err)
{
    return tl_error_set(err, TL_ERR_NOT_FOUND, "reading %s: no such object", key);
}

static tl_status mem_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    memory_store *m = (memory_store *)s;
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    tl_status st = TL_OK;
    out->len = 0;
    if (!found)
        st = not_found(key, err);
    else if (tl_buf_append(out, m->items[i].data.data, m->items[i].data.len) != 0 ||
             tl_buf_reserve(out, 1) != 0)
        st = tl_error_nomem(err);
    else
        out->data[out->len] = '\0';
    pthread_mutex_unlock(&m->lock);
    return st;
}

static tl_status mem_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                               uint8_t *dst, tl_error *err)
{
    memory_store *m = (memory_store *)s;
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    tl_status st = found ? TL_OK : not_found(key, err);
    if (st == TL_OK && (offset > m->items[i].data.len || len > m->items[i].data.len - offset))
        st = tl_error_set(err, TL_ERR_STORAGE, "reading %s: %zu bytes at %llu: past its end", key,
                          len, (unsigned long long)offset);
    if (st == TL_OK && len) memcpy(dst, m->items[i].data.data + offset, len);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* Stores a copy of data under key; `only_new`: TL_ERR_EXISTS when the key is taken. */
static tl_status store(memory_store *m, const char *key, const void *data, size_t len,
                       bool only_new, tl_error *err)
{
    tl_buf copy = {0};
    if (tl_buf_append(&copy, data, len) != 0) return tl_error_nomem(err);
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    tl_status st = TL_OK;
    if (found && only_new) {
        st = tl_error_set(err, TL_ERR_EXISTS, "%s exists already", key);
    } else if (!found) {
        char *k = strdup(key);
        if (k == NULL || TL_GROW(m->items, m->cap, m->n + 1, 64) != 0) {
            free(k);
            st = tl_error_nomem(err);
        } else {
            memmove(&m->items[i + 1], &m->items[i], (m->n - i) * sizeof *m->items);
            m->items[i] = (object){.key = k};
            m->n++;
        }
    }
    if (st == TL_OK) {
        tl_buf_free(&m->items[i].data);
        m->items[i].data = copy;
        copy = (tl_buf){0};
        m->items[i].modified_ms = tl_now_millis();
        m->items[i].generation = ++m->next_generation;
    }
    pthread_mutex_unlock(&m->lock);
    tl_buf_free(&copy);
    return st;
}

static tl_status mem_put(tl_store *s, const char *key, const void *data, size_t len, tl_error *err)
{
    return store((memory_store *)s, key, data, len, false, err);
}

static tl_status mem_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                   tl_error *err)
{
    return store((memory_store *)s, key, data, len, true, err);
}

static tl_status mem_remove(tl_store *s, const char *key, tl_error *err)
{
    (void)err;
    memory_store *m = (memory_store *)s;
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    if (found) {
        free(m->items[i].key);
        tl_buf_free(&m->items[i].data);
        memmove(&m->items[i], &m->items[i + 1], (m->n - i - 1) * sizeof *m->items);
        m->n--;
    }
    pthread_mutex_unlock(&m->lock);
    return TL_OK;
}

/* Fills e from o: time and etag, and with `digest` its MD5. */
static int describe(const object *o, bool digest, tl_store_listed *e)
{
    if (digest) {
        tl_md5(o->data.data, o->data.len, e->md5);
        e->has_md5 = true;
    }
    e->modified_ms = o->modified_ms;
    char tag[24];
    snprintf(tag, sizeof tag, "%llu", (unsigned long long)o->generation);
    return tl_store_listed_set_etag(e, tag);
}

static tl_status list(tl_store *s, const char *prefix, bool recursive, bool digests,
                      tl_store_listing *out, tl_error *err)
{
    memory_store *m = (memory_store *)s;
    size_t plen = strlen(prefix);
    tl_status st = TL_OK;
    pthread_mutex_lock(&m->lock);
    bool found;
    const char *last_folder = NULL;
    size_t last_len = 0;
    for (size_t i = find(m, prefix, &found); st == TL_OK && i < m->n; i++) {
        const object *o = &m->items[i];
        if (strncmp(o->key, prefix, plen) != 0) break;
        const char *slash = recursive ? NULL : strchr(o->key + plen, '/');
        if (slash) { /* one level: each deeper folder once */
            size_t n = (size_t)(slash - o->key) + 1;
            if (last_folder && n == last_len && strncmp(last_folder, o->key, n) == 0) continue;
            char *name = strndup(o->key, n);
            tl_store_listed *e = name ? tl_store_listing_add(out, name, 0, NULL) : NULL;
            free(name);
            if (e == NULL) st = tl_error_nomem(err);
            if (e) e->is_folder = true;
            last_folder = o->key;
            last_len = n;
            continue;
        }
        tl_store_listed *e = tl_store_listing_add(out, o->key, o->data.len, NULL);
        if (e == NULL || describe(o, digests, e) != 0) st = tl_error_nomem(err);
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

static tl_status mem_list_objects(tl_store *s, const char *prefix, bool recursive,
                                  tl_store_listing *out, tl_error *err)
{
    return list(s, prefix, recursive, false, out, err);
}

static tl_status mem_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                   tl_error *err)
{
    return list(s, prefix, true, true, out, err);
}

static tl_status mem_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    tl_store_listing l = {0};
    tl_status st = list(s, prefix, true, false, &l, err);
    for (size_t i = 0; st == TL_OK && i < l.len; i++)
        if (tl_strlist_push(out, l.items[i].key) != 0) st = tl_error_nomem(err);
    tl_store_listing_free(&l);
    return st;
}

static tl_status mem_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    memory_store *m = (memory_store *)s;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    tl_status st = found ? TL_OK : not_found(key, err);
    if (st == TL_OK) {
        out->size = m->items[i].data.len;
        if ((out->key = strdup(key)) == NULL || describe(&m->items[i], false, out) != 0) {
            tl_store_listed_clear(out);
            st = tl_error_nomem(err);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

static tl_status mem_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    memory_store *m = (memory_store *)s;
    pthread_mutex_lock(&m->lock);
    bool found;
    size_t i = find(m, key, &found);
    tl_status st = found ? TL_OK : not_found(key, err);
    if (st == TL_OK) *out = m->items[i].data.len;
    pthread_mutex_unlock(&m->lock);
    return st;
}

static void mem_free(tl_store *s)
{
    memory_store *m = (memory_store *)s;
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].key);
        tl_buf_free(&m->items[i].data);
    }
    free(m->items);
    pthread_mutex_destroy(&m->lock);
    free(m->base.url);
    free(m);
}

static const tl_store_ops memory_ops = {
    .get = mem_get,
    .get_range = mem_get_range,
    .size = mem_size,
    .put = mem_put,
    .put_if_absent = mem_put_if_absent,
    .list = mem_list,
    .remove = mem_remove,
    .free = mem_free,
    .list_detailed = mem_list_detailed,
    .list_objects = mem_list_objects,
    .stat = mem_stat,
};

tl_status tl_store_memory_open(const char *location, tl_store **out, tl_error *err)
{
    memory_store *m = calloc(1, sizeof *m);
    if (m == NULL) return tl_error_nomem(err);
    size_t n = strlen(location);
    while (n > strlen("memory://") && location[n - 1] == '/') n--;
    m->base.ops = &memory_ops;
    m->base.url = strndup(location, n);
    if (m->base.url == NULL || pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m->base.url);
        free(m);
        return tl_error_nomem(err);
    }
    *out = &m->base;
    return TL_OK;
}
