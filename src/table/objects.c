/* Objects of a lake that are not tables' own (timelake.h, "Objects"): keys
 * checked here, then handed to the store. Reads bypass the read cache (these
 * objects may be replaced); writes go through it, so that it forgets what
 * they replace. */
#include <stdlib.h>
#include <string.h>

#include "store/cache.h"
#include "table/table_internal.h"

#define MAX_KEY 1024 /* S3's, GCS's and Azure's limit */

void tl_free(void *p)
{
    free(p);
}

/* Why key is not a valid object key (or prefix), or NULL when it is. */
static const char *key_problem(const char *key, bool prefix)
{
    size_t n = strlen(key);
    if (n == 0 && !prefix) return "it is empty";
    if (n > MAX_KEY) return "it is longer than 1024 bytes";
    if (key[0] == '/') return "it starts with '/'";
    if (!prefix && key[n - 1] == '/') return "it ends with '/' (a folder, not an object)";
    if (strstr(key, "//")) return "it holds \"//\"";
    for (const char *p = key; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return "it holds a control character";
    for (const char *seg = key; seg;) {
        const char *next = strchr(seg, '/');
        size_t len = next ? (size_t)(next - seg) : strlen(seg);
        if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
            return "it has a \".\" or \"..\" segment";
        seg = next ? next + 1 : NULL;
    }
    return NULL;
}

static tl_status check_key(const char *key, bool prefix, tl_error *err)
{
    if (key == NULL) return tl_error_set(err, TL_ERR_INVALID, "no object key given");
    const char *why = key_problem(key, prefix);
    if (why == NULL) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID, "invalid object %s \"%.200s%s\": %s",
                        prefix ? "prefix" : "key", key, strlen(key) > 200 ? "..." : "", why);
}

void tl_object_clear(tl_object *object)
{
    if (object == NULL) return;
    free(object->key);
    free(object->etag);
    memset(object, 0, sizeof *object);
}

void tl_objects_free(tl_object *objects, size_t len)
{
    for (size_t i = 0; objects && i < len; i++) tl_object_clear(&objects[i]);
    free(objects);
}

/* Moves a listed entry's strings into an object. */
static void take_listed(tl_store_listed *e, tl_object *o)
{
    *o = (tl_object){e->key, e->size, e->modified_ms, e->is_folder ? NULL : e->etag};
    if (e->is_folder) free(e->etag);
    e->key = e->etag = NULL;
}

tl_status tl_lake_list_objects(tl_lake *lake, const char *prefix, int recursive, tl_object **out,
                               size_t *out_len, tl_error *err)
{
    if (prefix == NULL) prefix = "";
    TL_TRY(check_key(prefix, true, err));
    tl_store_listing l = {0};
    tl_status st =
        tl_store_list_objects(tl_store_uncached(lake->store), prefix, recursive != 0, &l, err);
    tl_store_listing_sort(&l);
    tl_object *objects = st == TL_OK && l.len ? calloc(l.len, sizeof *objects) : NULL;
    if (st == TL_OK && l.len && objects == NULL) st = tl_error_nomem(err);
    size_t n = 0;
    for (size_t i = 0; st == TL_OK && i < l.len; i++) {
        tl_store_listed *e = &l.items[i];
        size_t klen = strlen(e->key);
        /* Folder markers (objects named "a/", made by consoles) are no objects. */
        if (!e->is_folder && klen && e->key[klen - 1] == '/') continue;
        if (n && strcmp(objects[n - 1].key, e->key) == 0) continue;
        take_listed(e, &objects[n++]);
    }
    tl_store_listing_free(&l);
    if (st != TL_OK) {
        tl_objects_free(objects, n);
        return st;
    }
    if (n == 0) {
        free(objects);
        objects = NULL;
    }
    *out = objects;
    *out_len = n;
    return TL_OK;
}

tl_status tl_lake_stat_object(tl_lake *lake, const char *key, tl_object *out, tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    tl_store_listed e = {0};
    TL_TRY(tl_store_stat(tl_store_uncached(lake->store), key, &e, err));
    take_listed(&e, out);
    return TL_OK;
}

tl_status tl_lake_get_object(tl_lake *lake, const char *key, void **out, size_t *out_len,
                             tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    tl_buf b = {0};
    tl_status st = tl_store_get(tl_store_uncached(lake->store), key, &b, err);
    if (st == TL_OK && b.data == NULL && tl_buf_reserve(&b, 1) != 0) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_buf_free(&b);
        return st;
    }
    *out = tl_buf_detach(&b, out_len);
    return TL_OK;
}

struct tl_object_writer {
    tl_store_writer *w;
    tl_status failed; /* a write failed: finish aborts and reports it */
    tl_error failure;
};

tl_status tl_object_writer_open(tl_lake *lake, const char *key, tl_object_writer **out,
                                tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    tl_object_writer *ow = calloc(1, sizeof *ow);
    if (ow == NULL) return tl_error_nomem(err);
    tl_status st = tl_store_writer_open(lake->store, key, &ow->w, err);
    if (st != TL_OK) {
        free(ow);
        return st;
    }
    *out = ow;
    return TL_OK;
}

tl_status tl_object_writer_write(tl_object_writer *ow, const void *data, size_t len, tl_error *err)
{
    if (ow->failed == TL_OK && len > 0) ow->failed = ow->w->write(ow->w, data, len, &ow->failure);
    if (ow->failed != TL_OK && err) *err = ow->failure;
    return ow->failed;
}

tl_status tl_object_writer_finish(tl_object_writer *ow, tl_error *err)
{
    tl_status st = ow->failed;
    if (st == TL_OK) {
        st = ow->w->finish(ow->w, err);
    } else {
        ow->w->abort(ow->w);
        if (err) *err = ow->failure;
    }
    free(ow);
    return st;
}

void tl_object_writer_abort(tl_object_writer *ow)
{
    if (ow == NULL) return;
    ow->w->abort(ow->w);
    free(ow);
}

struct tl_object_reader {
    tl_store *store; /* the lake's, uncached */
    char *key;
    uint64_t offset; /* of the next read */
    int64_t size;    /* -1 until the first read */
    bool failed;
};

tl_status tl_object_reader_open(tl_lake *lake, const char *key, tl_object_reader **out,
                                tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    tl_object_reader *r = calloc(1, sizeof *r);
    if (r == NULL || (r->key = strdup(key)) == NULL) {
        free(r);
        return tl_error_nomem(err);
    }
    r->store = tl_store_uncached(lake->store);
    r->size = -1;
    *out = r;
    return TL_OK;
}

static tl_status read_next(tl_object_reader *r, uint8_t *buf, size_t size, size_t *out_len,
                           tl_error *err)
{
    if (r->size < 0) {
        uint64_t total = 0;
        TL_TRY(tl_store_get_first(r->store, r->key, size, buf, out_len, &total, err));
        r->size = (int64_t)total;
        return TL_OK;
    }
    /* The size the first read found bounds the rest: no request asks for it again. */
    uint64_t left = r->offset < (uint64_t)r->size ? (uint64_t)r->size - r->offset : 0;
    *out_len = left < size ? (size_t)left : size;
    return *out_len ? tl_store_get_range(r->store, r->key, r->offset, *out_len, buf, err) : TL_OK;
}

tl_status tl_object_reader_read(tl_object_reader *r, void *buf, size_t size, size_t *out_len,
                                tl_error *err)
{
    *out_len = 0;
    if (r->failed)
        return tl_error_set(err, TL_ERR_INVALID, "reading %s: an earlier read failed", r->key);
    tl_status st = read_next(r, buf, size, out_len, err);
    if (st != TL_OK) {
        r->failed = true;
        *out_len = 0;
        return st;
    }
    r->offset += *out_len;
    return TL_OK;
}

int64_t tl_object_reader_size(const tl_object_reader *r)
{
    return r->size;
}

void tl_object_reader_close(tl_object_reader *r)
{
    if (r == NULL) return;
    free(r->key);
    free(r);
}

tl_status tl_lake_put_object(tl_lake *lake, const char *key, const void *data, size_t len,
                             tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    if (!tl_store_is_local(lake->store)) return tl_store_put(lake->store, key, data, len, err);
    /* Locally through a writer, which makes the file durable before it returns. */
    tl_object_writer *ow;
    TL_TRY(tl_object_writer_open(lake, key, &ow, err));
    tl_object_writer_write(ow, data, len, NULL);
    return tl_object_writer_finish(ow, err);
}

tl_status tl_lake_delete_object(tl_lake *lake, const char *key, tl_error *err)
{
    TL_TRY(check_key(key, false, err));
    return tl_store_remove(lake->store, key, err);
}
