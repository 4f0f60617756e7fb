/* The streaming writer of the remote stores (store.h: tl_store_writer).
 * Bytes gather in memory up to the multipart threshold; an object that ends
 * there goes up in one put. Past it, the backend's multipart upload begins
 * and each part of multipart_part_size bytes is sent on a thread of its own,
 * up to multipart_concurrency at once (a write waits for the oldest part
 * when all are busy), so memory stays bounded by the threshold plus the parts
 * in flight. Nothing is visible at the key before the upload completes; a
 * failure or an abort aborts the upload. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/multipart.h"
#include "store/remote.h"

typedef struct remote_writer remote_writer;

typedef struct part_slot {
    remote_writer *w;
    pthread_t thread;
    bool running;
    size_t index;
    uint8_t *data;
    size_t len;
    tl_status st;
    tl_error err;
} part_slot;

struct remote_writer {
    tl_store_writer base;
    tl_remote *r;
    char *key;
    tl_buf pending; /* bytes not yet handed to a part */
    void *upload;   /* the multipart upload, once begun */
    size_t part_size;
    size_t parts; /* parts started */
    part_slot *slots;
    size_t n_slots;
    tl_status failed; /* the first failure; every later call returns it */
    tl_error failure;
};

static void *part_thread(void *arg)
{
    part_slot *p = arg;
    tl_remote *r = p->w->r;
    p->st = r->multipart->part(r, p->w->upload, p->index, p->data, p->len, &p->err);
    return NULL;
}

/* Waits for the part in slot p, if any, and takes its outcome. */
static void join_slot(remote_writer *w, part_slot *p)
{
    if (!p->running) return;
    pthread_join(p->thread, NULL);
    p->running = false;
    free(p->data);
    p->data = NULL;
    if (p->st != TL_OK && w->failed == TL_OK) {
        w->failed = p->st;
        w->failure = p->err;
    }
}

static void join_all(remote_writer *w)
{
    for (size_t i = 0; i < w->n_slots; i++) join_slot(w, &w->slots[i]);
}

static tl_status fail(remote_writer *w, tl_status st, const tl_error *e)
{
    if (w->failed == TL_OK) {
        w->failed = st;
        w->failure = *e;
    }
    return st;
}

/* Sends the first len pending bytes as the next part. */
static tl_status send_part(remote_writer *w, size_t len)
{
    tl_error e;
    if (w->parts >= w->r->max_parts)
        return fail(w,
                    tl_error_set(&e, TL_ERR_STORAGE,
                                 "writing %s: more than %zu parts of %zu bytes; raise "
                                 "multipart_part_size",
                                 w->key, w->r->max_parts, w->part_size),
                    &e);
    part_slot *p = &w->slots[w->parts % w->n_slots];
    join_slot(w, p);
    if (w->failed != TL_OK) return w->failed;
    p->data = malloc(len ? len : 1);
    if (p->data == NULL) return fail(w, tl_error_nomem(&e), &e);
    memcpy(p->data, w->pending.data, len);
    memmove(w->pending.data, w->pending.data + len, w->pending.len - len);
    w->pending.len -= len;
    *p = (part_slot){w, p->thread, true, w->parts++, p->data, len, TL_OK, {0}};
    if (pthread_create(&p->thread, NULL, part_thread, p) != 0) {
        part_thread(p); /* no thread: send it here */
        p->running = false;
        free(p->data);
        p->data = NULL;
        if (p->st != TL_OK) return fail(w, p->st, &p->err);
    }
    return TL_OK;
}

static tl_status writer_write(tl_store_writer *w_, const void *data, size_t len, tl_error *err)
{
    remote_writer *w = (remote_writer *)w_;
    if (w->failed == TL_OK && tl_buf_append(&w->pending, data, len) != 0) {
        tl_error e;
        fail(w, tl_error_nomem(&e), &e);
    }
    if (w->failed == TL_OK && w->upload == NULL && tl_multipart_wanted(w->r, w->pending.len)) {
        tl_error e;
        tl_status st = w->r->multipart->begin(w->r, w->key, w->r->max_parts, &w->upload, &e);
        if (st != TL_OK) fail(w, st, &e);
    }
    while (w->failed == TL_OK && w->upload && w->pending.len >= w->part_size)
        send_part(w, w->part_size);
    if (w->failed == TL_OK) return TL_OK;
    if (err) *err = w->failure;
    return w->failed;
}

static void writer_free(remote_writer *w)
{
    join_all(w);
    if (w->upload) {
        if (w->failed != TL_OK) w->r->multipart->abort(w->r, w->upload, w->parts);
        w->r->multipart->free(w->upload);
    }
    free(w->slots);
    tl_buf_free(&w->pending);
    free(w->key);
    free(w);
}

static tl_status writer_finish(tl_store_writer *w_, tl_error *err)
{
    remote_writer *w = (remote_writer *)w_;
    tl_error e;
    tl_status st;
    if (w->failed == TL_OK && w->upload == NULL) {
        st = w->r->base.ops->put(&w->r->base, w->key, w->pending.data, w->pending.len, &e);
        if (st != TL_OK) fail(w, st, &e);
    } else if (w->failed == TL_OK) {
        if (w->pending.len > 0 || w->parts == 0) send_part(w, w->pending.len);
        join_all(w);
        if (w->failed == TL_OK) {
            st = w->r->multipart->finish(w->r, w->upload, w->parts, NULL, 0, &e);
            if (st != TL_OK) fail(w, st, &e);
        }
    }
    st = w->failed;
    if (st != TL_OK && err) *err = w->failure;
    writer_free(w);
    return st;
}

static void writer_abort(tl_store_writer *w_)
{
    remote_writer *w = (remote_writer *)w_;
    if (w->failed == TL_OK) w->failed = TL_ERR_STORAGE; /* abort the upload, if begun */
    writer_free(w);
}

tl_status tl_remote_writer_open(tl_store *s, const char *key, tl_store_writer **out, tl_error *err)
{
    tl_remote *r = (tl_remote *)s;
    remote_writer *w = calloc(1, sizeof *w);
    size_t n_slots = r->cfg.multipart_concurrency > 0 ? (size_t)r->cfg.multipart_concurrency : 1;
    if (w == NULL || (w->key = strdup(key)) == NULL ||
        (w->slots = calloc(n_slots, sizeof *w->slots)) == NULL) {
        if (w) free(w->key);
        free(w);
        return tl_error_nomem(err);
    }
    w->base = (tl_store_writer){writer_write, writer_finish, writer_abort};
    w->r = r;
    w->n_slots = n_slots;
    w->part_size = r->cfg.multipart_part_size > 0 ? (size_t)r->cfg.multipart_part_size : 1;
    *out = &w->base;
    return TL_OK;
}
