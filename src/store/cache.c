#include "store/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/random.h"
#include "store/digest.h"

typedef enum entry_kind { WHOLE, RANGE, SIZE } entry_kind;

typedef struct entry {
    struct entry *prev, *next; /* LRU list, most recent first */
    entry_kind kind;
    char *key;
    uint64_t offset; /* RANGE */
    uint64_t size;   /* SIZE: the object size; otherwise the data length */
    uint8_t *data;
} entry;

typedef struct cache_store {
    tl_store base;
    tl_store *inner;
    char *dir;
    long long dir_limit;   /* bytes the directory may hold (all processes together) */
    long long dir_written; /* bytes this process wrote there since it last looked */
    long long limit, used;
    entry *head, *tail;
    pthread_mutex_t lock;
    tl_cache_stats stats;
    tl_cache_blocks blocks;
} cache_store;

static const tl_store_ops cache_ops;

bool tl_cache_immutable_key(const char *key)
{
    size_t n = strlen(key);
    return (n > 8 && strcmp(key + n - 8, ".parquet") == 0) ||
           (n > 5 && strcmp(key + n - 5, ".avro") == 0);
}

static void unlink_entry(cache_store *c, entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(cache_store *c, entry *e)
{
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (c->tail == NULL) c->tail = e;
}

static long long cost(const entry *e)
{
    return (long long)(e->kind == SIZE ? 0 : e->size) + (long long)strlen(e->key) + 64;
}

static void drop_entry(cache_store *c, entry *e)
{
    unlink_entry(c, e);
    c->used -= cost(e);
    c->stats.entries--;
    free(e->key);
    free(e->data);
    free(e);
}

/* Under the lock. Moves a hit to the front. */
static entry *find(cache_store *c, entry_kind kind, const char *key, uint64_t offset, uint64_t len)
{
    for (entry *e = c->head; e; e = e->next) {
        if (e->kind != kind || strcmp(e->key, key) != 0) continue;
        if (kind == RANGE && (e->offset != offset || e->size != len)) continue;
        unlink_entry(c, e);
        push_front(c, e);
        return e;
    }
    return NULL;
}

/* Keeps a copy of data (may be NULL for SIZE). Best effort: no memory, no entry. */
static void remember(cache_store *c, entry_kind kind, const char *key, uint64_t offset,
                     const void *data, uint64_t size)
{
    if (c->limit <= 0) return;
    entry *e = calloc(1, sizeof *e);
    if (e == NULL) return;
    e->kind = kind;
    e->offset = offset;
    e->size = size;
    e->key = strdup(key);
    e->data = kind == SIZE ? NULL : malloc(size ? size : 1);
    if (e->key == NULL || (kind != SIZE && e->data == NULL) || cost(e) > c->limit / 2) {
        free(e->key);
        free(e->data);
        free(e);
        return;
    }
    if (kind != SIZE && size) memcpy(e->data, data, size);
    pthread_mutex_lock(&c->lock);
    entry *old = find(c, kind, key, offset, size);
    if (old) drop_entry(c, old);
    push_front(c, e);
    c->used += cost(e);
    c->stats.entries++;
    while (c->used > c->limit && c->tail && c->tail != e) drop_entry(c, c->tail);
    pthread_mutex_unlock(&c->lock);
}

static void forget(cache_store *c, const char *key)
{
    pthread_mutex_lock(&c->lock);
    for (entry *e = c->head, *next; e; e = next) {
        next = e->next;
        if (strcmp(e->key, key) == 0) drop_entry(c, e);
    }
    pthread_mutex_unlock(&c->lock);
}

/* ---- the disk layer ----
 * One file per object or byte range, named by a hash of the object's URL
 * (and the range): the objects cached are immutable and their names unique
 * (every write makes a new one), so a name always means the same bytes.
 * Files appear by rename, so a reader sees a complete file or none; a file
 * evicted while another process reads it stays readable through its open
 * descriptor, and a reader that finds it gone fetches from the store. */

static char *disk_path(const cache_store *c, const char *key, bool ranged, uint64_t offset,
                       size_t len)
{
    char *url = tl_store_url_of(c->inner, key);
    char *name =
        url && ranged ? tl_strdup_printf("%s#%llu+%zu", url, (unsigned long long)offset, len) : url;
    if (name != url) free(url);
    if (name == NULL) return NULL;
    uint8_t d[32];
    char hex[65];
    tl_sha256(name, strlen(name), d);
    tl_hex(d, 32, hex);
    free(name);
    return tl_strdup_printf("%s/%s", c->dir, hex);
}

/* Marks a file as recently used: eviction removes the least recent first. */
static void touch(int fd)
{
    futimens(fd, NULL);
}

static bool disk_read(const cache_store *c, const char *key, tl_buf *out)
{
    char *path = disk_path(c, key, false, 0, 0);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    if (fd < 0) return false;
    struct stat sb;
    bool ok = fstat(fd, &sb) == 0 && tl_buf_reserve(out, (size_t)sb.st_size + 1) == 0;
    size_t got = 0;
    while (ok && got < (size_t)sb.st_size) {
        ssize_t n = pread(fd, out->data + got, (size_t)sb.st_size - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            ok = false;
        else
            got += (size_t)n;
    }
    if (ok) touch(fd);
    close(fd);
    if (ok) {
        out->len = got;
        out->data[got] = '\0';
    }
    return ok;
}

static bool read_at(const char *path, uint64_t offset, size_t len, uint8_t *dst)
{
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) return false;
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, dst + got, len - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got == len) touch(fd);
    close(fd);
    return got == len;
}

/* A range from the whole object's file, or from the file of that exact range. */
static bool disk_read_range(const cache_store *c, const char *key, uint64_t offset, size_t len,
                            uint8_t *dst)
{
    char *whole = disk_path(c, key, false, 0, 0);
    bool ok = read_at(whole, offset, len, dst);
    free(whole);
    if (ok) return true;
    char *part = disk_path(c, key, true, offset, len);
    ok = read_at(part, 0, len, dst);
    free(part);
    return ok;
}

typedef struct cached_file {
    char *name;
    long long size;
    struct timespec used;
} cached_file;

static int by_use(const void *a, const void *b)
{
    const cached_file *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* Brings the directory under its limit (to 90% of it), least recently used
 * first, and removes temporary files an interrupted writer left an hour or
 * more ago. Other processes may do the same at once: a file already gone is
 * simply skipped. Best effort. */
static void disk_evict(const cache_store *c)
{
    DIR *d = opendir(c->dir);
    if (d == NULL) return;
    cached_file *files = NULL;
    size_t n = 0, cap = 0;
    long long total = 0;
    time_t now = time(NULL);
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp-", 5) != 0) continue;
        char *path = tl_strdup_printf("%s/%s", c->dir, de->d_name);
        struct stat sb;
        if (path == NULL || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path);
            continue;
        }
        if (de->d_name[0] == '.') { /* .tmp-: a writer's, unless abandoned */
            if (now - sb.st_mtime > 3600) unlink(path);
            free(path);
            continue;
        }
        if (TL_GROW(files, cap, n + 1, 64) != 0) {
            free(path);
            break;
        }
        files[n++] = (cached_file){path, (long long)sb.st_size, sb.st_mtim};
        total += (long long)sb.st_size;
    }
    closedir(d);
    if (files) qsort(files, n, sizeof *files, by_use);
    long long target = c->dir_limit / 10 * 9;
    for (size_t i = 0; i < n && total > c->dir_limit; i++)
        if (unlink(files[i].name) == 0 || errno == ENOENT) {
            total -= files[i].size;
            if (total <= target) break;
        }
    for (size_t i = 0; i < n; i++) free(files[i].name);
    free(files);
}

/* Write to a unique temporary name, then rename: concurrent writers of the
 * same object (same bytes) simply replace each other. Best effort. After
 * every eighth of the limit written, the directory is brought under it. */
static void disk_write(cache_store *c, const char *key, bool ranged, uint64_t offset,
                       const void *data, size_t len)
{
    if ((long long)len > c->dir_limit / 4) return; /* would push out too much */
    char *path = disk_path(c, key, ranged, offset, len);
    char rnd[TL_UUID_STR_LEN + 1];
    tl_uuid_v4(rnd);
    char *tmp = path ? tl_strdup_printf("%s/.tmp-%s", c->dir, rnd) : NULL;
    int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    bool ok = fd >= 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t n = write(fd, (const uint8_t *)data + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            ok = false;
        else
            done += (size_t)n;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok && tmp) unlink(tmp);
    free(tmp);
    free(path);
    pthread_mutex_lock(&c->lock);
    bool evict = (c->dir_written += (long long)len) > c->dir_limit / 8;
    if (evict) c->dir_written = 0;
    pthread_mutex_unlock(&c->lock);
    if (evict) disk_evict(c);
}

static void disk_remove(const cache_store *c, const char *key)
{
    char *path = disk_path(c, key, false, 0, 0);
    if (path) unlink(path);
    free(path);
}

/* ---- the store operations ---- */

static void keep(cache_store *c, const char *key, const void *data, size_t len)
{
    remember(c, WHOLE, key, 0, data, len);
    if (c->dir) disk_write(c, key, false, 0, data, len);
}

typedef enum { FROM_MEMORY, FROM_DISK, FROM_STORE } source;

/* A read from the store counts as a miss whether it succeeds or not. */
static void count(cache_store *c, source from)
{
    pthread_mutex_lock(&c->lock);
    if (from == FROM_STORE) {
        c->stats.misses++;
    } else {
        c->stats.hits++;
        if (from == FROM_MEMORY)
            c->stats.memory_hits++;
        else
            c->stats.disk_hits++;
    }
    pthread_mutex_unlock(&c->lock);
}

static void fetched(cache_store *c, size_t bytes)
{
    pthread_mutex_lock(&c->lock);
    c->stats.bytes_fetched += (long long)bytes;
    pthread_mutex_unlock(&c->lock);
}

static tl_status cache_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    cache_store *c = (cache_store *)s;
    if (!tl_cache_immutable_key(key)) return tl_store_get(c->inner, key, out, err);
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, WHOLE, key, 0, 0);
    int rc = 0;
    if (e) {
        out->len = 0;
        rc = tl_buf_append(out, e->data, e->size) | tl_buf_reserve(out, 1);
        if (rc == 0) out->data[out->len] = '\0';
    }
    pthread_mutex_unlock(&c->lock);
    if (e) {
        count(c, FROM_MEMORY);
        return rc == 0 ? TL_OK : tl_error_nomem(err);
    }
    out->len = 0;
    if (c->dir && disk_read(c, key, out)) {
        count(c, FROM_DISK);
        remember(c, WHOLE, key, 0, out->data, out->len);
        return TL_OK;
    }
    count(c, FROM_STORE);
    TL_TRY(tl_store_get(c->inner, key, out, err));
    fetched(c, out->len);
    keep(c, key, out->data, out->len);
    return TL_OK;
}

/* A block of the object in memory or on disk, copied into dst; false when absent. */
static bool block_cached(cache_store *c, const char *key, uint64_t offset, size_t len, uint8_t *dst)
{
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, RANGE, key, offset, len);
    if (e) memcpy(dst, e->data, len);
    pthread_mutex_unlock(&c->lock);
    if (e) return true;
    if (c->dir && disk_read_range(c, key, offset, len, dst)) {
        remember(c, RANGE, key, offset, dst, len);
        return true;
    }
    return false;
}

/* Fetches blocks [b, b + n) of the object (their bytes at buf) in requests
 * of at most request_bytes, and keeps each block. */
static tl_status fetch_blocks(cache_store *c, const char *key, uint64_t size, uint64_t b,
                              uint64_t n, uint8_t *buf, tl_error *err)
{
    uint64_t bs = (uint64_t)c->blocks.block_bytes, per = n;
    if (c->blocks.request_bytes > 0) {
        per = (uint64_t)c->blocks.request_bytes / bs;
        if (per == 0) per = 1;
    }
    for (uint64_t i = 0; i < n; i += per) {
        uint64_t k = n - i < per ? n - i : per, from = (b + i) * bs;
        uint64_t to = (b + i + k) * bs < size ? (b + i + k) * bs : size;
        TL_TRY(tl_store_get_range(c->inner, key, from, (size_t)(to - from), buf + i * bs, err));
        for (uint64_t j = 0; j < k; j++) {
            uint64_t at = (b + i + j) * bs, len = at + bs < size ? bs : size - at;
            remember(c, RANGE, key, at, buf + (i + j) * bs, len);
            if (c->dir) disk_write(c, key, true, at, buf + (i + j) * bs, (size_t)len);
        }
    }
    return TL_OK;
}

/* A range read in whole aligned blocks: those held are copied, runs of
 * missing ones fetched together; then the range is cut out of them. */
static tl_status blocks_get_range(cache_store *c, const char *key, uint64_t offset, size_t len,
                                  uint8_t *dst, tl_error *err)
{
    uint64_t size = 0;
    TL_TRY(c->base.ops->size(&c->base, key, &size, err));
    if (offset > size || len > size - offset)
        return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %zu bytes at %llu: past its end", key,
                            len, (unsigned long long)offset);
    uint64_t bs = (uint64_t)c->blocks.block_bytes;
    uint64_t first = offset / bs, last = (offset + len - 1) / bs, n = last - first + 1;
    uint8_t *buf = malloc((size_t)(n * bs));
    if (buf == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    bool all = true;
    for (uint64_t i = 0; st == TL_OK && i < n;) {
        uint64_t at = (first + i) * bs, blen = at + bs < size ? bs : size - at;
        if (block_cached(c, key, at, (size_t)blen, buf + i * bs)) {
            i++;
            continue;
        }
        all = false;
        uint64_t run = 1; /* the missing blocks from here */
        while (i + run < n) {
            uint64_t nat = (first + i + run) * bs, nlen = nat + bs < size ? bs : size - nat;
            pthread_mutex_lock(&c->lock);
            bool held = find(c, RANGE, key, nat, nlen) != NULL;
            pthread_mutex_unlock(&c->lock);
            if (held) break;
            run++;
        }
        st = fetch_blocks(c, key, size, first + i, run, buf + i * bs, err);
        i += run;
    }
    if (st == TL_OK) memcpy(dst, buf + (offset - first * bs), len);
    free(buf);
    count(c, all);
    return st;
}

static tl_status cache_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                                 uint8_t *dst, tl_error *err)
{
    cache_store *c = (cache_store *)s;
    if (!tl_cache_immutable_key(key))
        return tl_store_get_range(c->inner, key, offset, len, dst, err);
    if (len == 0) return TL_OK;
    if (c->blocks.block_bytes > 0) {
        pthread_mutex_lock(&c->lock);
        entry *e = find(c, WHOLE, key, 0, 0);
        bool hit = e && offset <= e->size && len <= e->size - offset;
        if (hit) memcpy(dst, e->data + offset, len);
        pthread_mutex_unlock(&c->lock);
        if (hit) {
            count(c, true);
            return TL_OK;
        }
        return blocks_get_range(c, key, offset, len, dst, err);
    }
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, WHOLE, key, 0, 0);
    bool hit = e && offset <= e->size && len <= e->size - offset; /* no wrap-around */
    if (hit) memcpy(dst, e->data + offset, len);
    if (!hit && (e = find(c, RANGE, key, offset, len)) != NULL) {
        hit = true;
        memcpy(dst, e->data, len);
    }
    pthread_mutex_unlock(&c->lock);
    if (hit) {
        count(c, FROM_MEMORY);
        return TL_OK;
    }
    if (c->dir && disk_read_range(c, key, offset, len, dst)) {
        count(c, FROM_DISK);
        return TL_OK;
    }
    count(c, FROM_STORE);
    TL_TRY(tl_store_get_range(c->inner, key, offset, len, dst, err));
    fetched(c, len);
    remember(c, RANGE, key, offset, dst, len);
    if (c->dir) disk_write(c, key, true, offset, dst, len);
    return TL_OK;
}

static tl_status cache_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    cache_store *c = (cache_store *)s;
    if (!tl_cache_immutable_key(key)) return tl_store_size(c->inner, key, out, err);
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, WHOLE, key, 0, 0);
    if (e == NULL) e = find(c, SIZE, key, 0, 0);
    if (e) *out = e->size;
    pthread_mutex_unlock(&c->lock);
    if (e) return TL_OK;
    TL_TRY(tl_store_size(c->inner, key, out, err));
    remember(c, SIZE, key, 0, NULL, *out);
    return TL_OK;
}

static tl_status cache_put(tl_store *s, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    cache_store *c = (cache_store *)s;
    forget(c, key);
    TL_TRY(tl_store_put(c->inner, key, data, len, err));
    if (tl_cache_immutable_key(key)) keep(c, key, data, len);
    return TL_OK;
}

static tl_status cache_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                     tl_error *err)
{
    cache_store *c = (cache_store *)s;
    TL_TRY(tl_store_put_if_absent(c->inner, key, data, len, err));
    if (tl_cache_immutable_key(key)) keep(c, key, data, len);
    return TL_OK;
}

static tl_status cache_put_many(tl_store *s, const tl_store_put_item *items, size_t n,
                                tl_error *err)
{
    cache_store *c = (cache_store *)s;
    for (size_t i = 0; i < n; i++) forget(c, items[i].key);
    TL_TRY(tl_store_put_many(c->inner, items, n, err));
    for (size_t i = 0; i < n; i++)
        if (tl_cache_immutable_key(items[i].key))
            keep(c, items[i].key, items[i].data, items[i].len);
    return TL_OK;
}

static tl_status cache_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    return tl_store_list(((cache_store *)s)->inner, prefix, out, err);
}

static tl_status cache_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                     tl_error *err)
{
    return tl_store_list_detailed(((cache_store *)s)->inner, prefix, out, err);
}

static tl_status cache_remove(tl_store *s, const char *key, tl_error *err)
{
    cache_store *c = (cache_store *)s;
    forget(c, key);
    if (c->dir && tl_cache_immutable_key(key)) disk_remove(c, key);
    return tl_store_remove(c->inner, key, err);
}

static void cache_free(tl_store *s)
{
    cache_store *c = (cache_store *)s;
    while (c->head) drop_entry(c, c->head);
    tl_store_free(c->inner);
    pthread_mutex_destroy(&c->lock);
    free(c->dir);
    free(c);
}

/* A read that learns the size: passed through (it is for objects that may change). */
static tl_status cache_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst,
                                 size_t *got, uint64_t *total, tl_error *err)
{
    return tl_store_get_first(((cache_store *)s)->inner, key, len, dst, got, total, err);
}

static tl_status cache_list_objects(tl_store *s, const char *prefix, bool recursive,
                                    tl_store_listing *out, tl_error *err)
{
    return tl_store_list_objects(((cache_store *)s)->inner, prefix, recursive, out, err);
}

static tl_status cache_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    return tl_store_stat(((cache_store *)s)->inner, key, out, err);
}

/* The object is being replaced: forget what is kept of it. */
static tl_status cache_writer_open(tl_store *s, const char *key, tl_store_writer **out,
                                   tl_error *err)
{
    cache_store *c = (cache_store *)s;
    forget(c, key);
    if (c->dir && tl_cache_immutable_key(key)) disk_remove(c, key);
    return tl_store_writer_open(c->inner, key, out, err);
}

static tl_status cache_sweep(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                             tl_error *err)
{
    return tl_store_sweep(((cache_store *)s)->inner, prefix, min_age_ms, removed, err);
}

static const tl_store_ops cache_ops = {
    .get = cache_get,
    .get_range = cache_get_range,
    .size = cache_size,
    .put = cache_put,
    .put_if_absent = cache_put_if_absent,
    .list = cache_list,
    .list_detailed = cache_list_detailed,
    .remove = cache_remove,
    .free = cache_free,
    .put_many = cache_put_many,
    .get_first = cache_get_first,
    .list_objects = cache_list_objects,
    .stat = cache_stat,
    .writer_open = cache_writer_open,
    .sweep = cache_sweep,
};

tl_store *tl_store_uncached(tl_store *s)
{
    return s->ops == &cache_ops ? ((cache_store *)s)->inner : s;
}

bool tl_store_cache_stats(const tl_store *s, tl_cache_stats *out)
{
    if (s->ops != &cache_ops) return false;
    cache_store *c = (cache_store *)s;
    pthread_mutex_lock(&c->lock);
    *out = c->stats;
    out->bytes_in_memory = c->used;
    pthread_mutex_unlock(&c->lock);
    return true;
}

static tl_status make_dir(const char *dir, tl_error *err)
{
    char *p = strdup(dir);
    if (p == NULL) return tl_error_nomem(err);
    for (char *q = p + 1;; q++) {
        if (*q != '/' && *q != '\0') continue;
        char saved = *q;
        *q = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            tl_status st =
                tl_error_set(err, TL_ERR_INVALID, "cache_dir %s: %s", p, strerror(errno));
            free(p);
            return st;
        }
        *q = saved;
        if (saved == '\0') break;
    }
    free(p);
    return TL_OK;
}

tl_status tl_store_cache_wrap(tl_store *inner, long long memory_bytes, const char *dir,
                              long long dir_bytes, tl_store **out, tl_error *err)
{
    return tl_store_cache_wrap_blocks(inner, memory_bytes, dir, dir_bytes, NULL, out, err);
}

tl_status tl_store_cache_wrap_blocks(tl_store *inner, long long memory_bytes, const char *dir,
                                     long long dir_bytes, const tl_cache_blocks *blocks,
                                     tl_store **out, tl_error *err)
{
    cache_store *c = calloc(1, sizeof *c);
    tl_status st = c ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK && dir) {
        st = make_dir(dir, err);
        if (st == TL_OK && (c->dir = strdup(dir)) == NULL) st = tl_error_nomem(err);
    }
    if (st != TL_OK) {
        if (c) free(c->dir);
        free(c);
        tl_store_free(inner);
        return st;
    }
    c->base.ops = &cache_ops;
    c->base.url = inner->url; /* the same root: keys and URLs are the inner store's */
    c->base.read_only = inner->read_only;
    c->base.version_hint = inner->version_hint;
    if (blocks) c->blocks = *blocks;
    c->inner = inner;
    c->limit = memory_bytes;
    c->dir_limit = dir_bytes > 0 ? dir_bytes : TL_CACHE_DIR_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
    *out = &c->base;
    return TL_OK;
}
