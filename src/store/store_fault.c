/* The fault-injecting proxy of store_fault.h. Its ops table is its own copy,
 * with NULL wherever the inner store has NULL, so that the generic fallbacks
 * of store.c (put_many one put at a time, the in-memory writer, ...) run
 * through the proxy's counted calls just as they would run through the
 * inner store's. */
#include "store/store_fault.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static _Atomic(tl_store_fault_fn) hook;
static void *_Atomic hook_ctx;

void tl_store_set_fault(tl_store_fault_fn fn, void *ctx)
{
    atomic_store(&hook_ctx, ctx);
    atomic_store(&hook, fn);
}

static const char *const call_names[] = {
    "get", "get_range", "get_first",     "size",          "stat",   "open",  "list",
    "put", "put_hint",  "put_if_absent", "writer_finish", "remove", "sweep", "sync",
};

const char *tl_store_call_name(tl_store_call call)
{
    return call_names[call];
}

bool tl_store_call_writes(tl_store_call call)
{
    return call >= TL_CALL_PUT;
}

typedef struct fault_store {
    tl_store base;
    tl_store_ops ops;
    tl_store *inner;
} fault_store;

static tl_store *inner_of(tl_store *s)
{
    return ((fault_store *)s)->inner;
}

static tl_store_fault ask(tl_store_call call, const char *key)
{
    tl_store_fault_fn fn = atomic_load(&hook);
    return fn ? fn(call, key ? key : "", atomic_load(&hook_ctx)) : TL_FAULT_NONE;
}

static tl_status injected(tl_store_call call, const char *key, tl_error *err)
{
    return tl_error_set(err, TL_ERR_STORAGE, "injected failure of %s %s", tl_store_call_name(call),
                        key ? key : "");
}

/* Runs `call_expr` unless the hook says FAIL; a LOST answer replaces the
 * call's success by the injected failure. */
#define FAULTED(call, key, call_expr)                                                              \
    do {                                                                                           \
        tl_store_fault f_ = ask(call, key);                                                        \
        if (f_ == TL_FAULT_FAIL) return injected(call, key, err);                                  \
        tl_status st_ = (call_expr);                                                               \
        if (f_ == TL_FAULT_LOST && st_ == TL_OK) return injected(call, key, err);                  \
        return st_;                                                                                \
    } while (0)

static tl_status f_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    size_t len = out->len;
    tl_store_fault f = ask(TL_CALL_GET, key);
    if (f == TL_FAULT_FAIL) return injected(TL_CALL_GET, key, err);
    tl_status st = tl_store_get(inner_of(s), key, out, err);
    if (f == TL_FAULT_LOST && st == TL_OK) {
        out->len = len; /* a failed get leaves out as it was */
        return injected(TL_CALL_GET, key, err);
    }
    return st;
}

static tl_status f_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                             uint8_t *dst, tl_error *err)
{
    FAULTED(TL_CALL_GET_RANGE, key, tl_store_get_range(inner_of(s), key, offset, len, dst, err));
}

/* The inner store's reader, each read asked as a get_range of its key. */
typedef struct fault_reader {
    tl_store_reader base;
    tl_store_reader *inner;
    char *key;
} fault_reader;

static tl_status fr_read(tl_store_reader *r, uint64_t offset, size_t len, uint8_t *dst,
                         tl_error *err)
{
    fault_reader *fr = (fault_reader *)r;
    FAULTED(TL_CALL_GET_RANGE, fr->key, tl_store_reader_read(fr->inner, offset, len, dst, err));
}

static void fr_close(tl_store_reader *r)
{
    fault_reader *fr = (fault_reader *)r;
    tl_store_reader_close(fr->inner);
    free(fr->key);
    free(fr);
}

static tl_status f_reader_open(tl_store *s, const char *key, tl_store_reader **out, tl_error *err)
{
    if (ask(TL_CALL_OPEN, key) != TL_FAULT_NONE) return injected(TL_CALL_OPEN, key, err);
    fault_reader *fr = calloc(1, sizeof *fr);
    if (fr == NULL || (fr->key = strdup(key)) == NULL) {
        free(fr);
        return tl_error_nomem(err);
    }
    tl_status st = tl_store_reader_open(inner_of(s), key, &fr->inner, err);
    if (st != TL_OK) {
        fr_close(&fr->base);
        return st;
    }
    fr->base = (tl_store_reader){fr->inner->size, fr_read, fr_close};
    *out = &fr->base;
    return TL_OK;
}

static tl_status f_size(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    FAULTED(TL_CALL_SIZE, key, tl_store_size(inner_of(s), key, out, err));
}

static tl_status f_put(tl_store *s, const char *key, const void *data, size_t len, tl_error *err)
{
    FAULTED(TL_CALL_PUT, key, tl_store_put(inner_of(s), key, data, len, err));
}

static tl_status f_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                 tl_error *err)
{
    FAULTED(TL_CALL_PUT_IF_ABSENT, key, tl_store_put_if_absent(inner_of(s), key, data, len, err));
}

static tl_status f_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    tl_store_fault f = ask(TL_CALL_LIST, prefix);
    if (f == TL_FAULT_FAIL) return injected(TL_CALL_LIST, prefix, err);
    tl_strlist got = {0};
    tl_status st = tl_store_list(inner_of(s), prefix, &got, err);
    if (st == TL_OK && f == TL_FAULT_LOST) st = injected(TL_CALL_LIST, prefix, err);
    for (size_t i = 0; st == TL_OK && i < got.len; i++)
        if (tl_strlist_push(out, got.items[i]) != 0) st = tl_error_nomem(err);
    tl_strlist_free(&got);
    return st;
}

static tl_status f_remove(tl_store *s, const char *key, tl_error *err)
{
    FAULTED(TL_CALL_REMOVE, key, tl_store_remove(inner_of(s), key, err));
}

static void f_free(tl_store *s)
{
    fault_store *fs = (fault_store *)s;
    tl_store_free(fs->inner);
    free(fs->base.url);
    free(fs);
}

static tl_status f_put_many(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err)
{
    for (size_t i = 0; i < n; i++) TL_TRY(f_put(s, items[i].key, items[i].data, items[i].len, err));
    return TL_OK;
}

static tl_status f_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                 tl_error *err)
{
    tl_store_fault f = ask(TL_CALL_LIST, prefix);
    if (f == TL_FAULT_FAIL) return injected(TL_CALL_LIST, prefix, err);
    tl_store *in = inner_of(s);
    return in->ops->list_detailed(in, prefix, out, err);
}

static tl_status f_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst, size_t *got,
                             uint64_t *total, tl_error *err)
{
    FAULTED(TL_CALL_GET_FIRST, key,
            tl_store_get_first(inner_of(s), key, len, dst, got, total, err));
}

static tl_status f_list_objects(tl_store *s, const char *prefix, bool recursive,
                                tl_store_listing *out, tl_error *err)
{
    tl_store_fault f = ask(TL_CALL_LIST, prefix);
    if (f == TL_FAULT_FAIL) return injected(TL_CALL_LIST, prefix, err);
    return tl_store_list_objects(inner_of(s), prefix, recursive, out, err);
}

static tl_status f_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    FAULTED(TL_CALL_STAT, key, tl_store_stat(inner_of(s), key, out, err));
}

/* A streaming upload's writer: its finish is the call that can fail. */
typedef struct fault_writer {
    tl_store_writer base;
    tl_store_writer *inner;
    char *key;
} fault_writer;

static tl_status fw_write(tl_store_writer *w_, const void *data, size_t len, tl_error *err)
{
    fault_writer *w = (fault_writer *)w_;
    return w->inner->write(w->inner, data, len, err);
}

static tl_status fw_finish(tl_store_writer *w_, tl_error *err)
{
    fault_writer *w = (fault_writer *)w_;
    tl_store_fault f = ask(TL_CALL_WRITER_FINISH, w->key);
    tl_status st;
    if (f == TL_FAULT_FAIL) {
        w->inner->abort(w->inner);
        st = injected(TL_CALL_WRITER_FINISH, w->key, err);
    } else {
        st = w->inner->finish(w->inner, err);
        if (st == TL_OK && f == TL_FAULT_LOST) st = injected(TL_CALL_WRITER_FINISH, w->key, err);
    }
    free(w->key);
    free(w);
    return st;
}

static void fw_abort(tl_store_writer *w_)
{
    fault_writer *w = (fault_writer *)w_;
    w->inner->abort(w->inner);
    free(w->key);
    free(w);
}

static tl_status f_writer_open(tl_store *s, const char *key, tl_store_writer **out, tl_error *err)
{
    fault_writer *w = calloc(1, sizeof *w);
    if (w == NULL || (w->key = strdup(key)) == NULL) {
        free(w);
        return tl_error_nomem(err);
    }
    tl_status st = tl_store_writer_open(inner_of(s), key, &w->inner, err);
    if (st != TL_OK) {
        free(w->key);
        free(w);
        return st;
    }
    w->base = (tl_store_writer){fw_write, fw_finish, fw_abort};
    *out = &w->base;
    return TL_OK;
}

static tl_status f_sweep(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                         tl_error *err)
{
    FAULTED(TL_CALL_SWEEP, prefix, tl_store_sweep(inner_of(s), prefix, min_age_ms, removed, err));
}

static bool f_remove_later(tl_store *s, const char *key)
{
    tl_store_fault f = ask(TL_CALL_REMOVE, key);
    if (f == TL_FAULT_FAIL) return false;
    tl_store *in = inner_of(s);
    return in->ops->remove_later(in, key) && f != TL_FAULT_LOST;
}

static void f_settle(tl_store *s)
{
    tl_store_settle(inner_of(s));
}

static tl_status f_put_hint(tl_store *s, const char *key, const void *data, size_t len,
                            tl_error *err)
{
    FAULTED(TL_CALL_PUT_HINT, key, tl_store_put_hint(inner_of(s), key, data, len, err));
}

static tl_status f_put_if_absent_unsynced(tl_store *s, const char *key, const void *data,
                                          size_t len, tl_error *err)
{
    FAULTED(TL_CALL_PUT_IF_ABSENT, key,
            tl_store_put_if_absent_unsynced(inner_of(s), key, data, len, err));
}

static tl_status f_put_if_absent_fenced(tl_store *s, const char *key, const void *data, size_t len,
                                        bool durable, tl_store_fence fence, void *ctx,
                                        tl_error *err)
{
    FAULTED(TL_CALL_PUT_IF_ABSENT, key,
            tl_store_put_if_absent_fenced(inner_of(s), key, data, len, durable, fence, ctx, err));
}

static tl_status f_sync(tl_store *s, tl_error *err)
{
    FAULTED(TL_CALL_SYNC, "", tl_store_sync(inner_of(s), err));
}

/* Not a call of its own: what it begins is the next sync's, which is counted. */
static void f_sync_begin(tl_store *s)
{
    tl_store_sync_begin(inner_of(s));
}

tl_status tl_store_fault_wrap(tl_store **s, tl_error *err)
{
    if (atomic_load(&hook) == NULL) return TL_OK;
    tl_store *in = *s;
    fault_store *fs = calloc(1, sizeof *fs);
    if (fs == NULL || (fs->base.url = strdup(in->url)) == NULL) {
        free(fs);
        tl_store_free(in);
        return tl_error_nomem(err);
    }
    const tl_store_ops *io = in->ops;
    fs->ops = (tl_store_ops){
        .get = f_get,
        .get_range = f_get_range,
        .size = f_size,
        .put = f_put,
        .put_if_absent = f_put_if_absent,
        .list = f_list,
        .remove = f_remove,
        .free = f_free,
        .put_many = io->put_many ? f_put_many : NULL,
        .list_detailed = io->list_detailed ? f_list_detailed : NULL,
        .get_first = io->get_first ? f_get_first : NULL,
        .list_objects = f_list_objects,
        .stat = f_stat,
        .writer_open = io->writer_open ? f_writer_open : NULL,
        .sweep = io->sweep ? f_sweep : NULL,
        .remove_later = io->remove_later ? f_remove_later : NULL,
        .settle = io->settle ? f_settle : NULL,
        .put_hint = io->put_hint ? f_put_hint : NULL,
        .put_if_absent_unsynced = io->put_if_absent_unsynced ? f_put_if_absent_unsynced : NULL,
        .sync = io->sync ? f_sync : NULL,
        .sync_begin = io->sync_begin ? f_sync_begin : NULL,
        .put_if_absent_fenced = io->put_if_absent_fenced ? f_put_if_absent_fenced : NULL,
        .reader_open = io->reader_open ? f_reader_open : NULL,
    };
    fs->base.ops = &fs->ops;
    fs->base.read_only = in->read_only;
    fs->base.version_hint = in->version_hint;
    fs->inner = in;
    *s = &fs->base;
    return TL_OK;
}
