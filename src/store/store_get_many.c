/* Batch reads: one thread per object up to a bound, so that the reads of a
 * query's data files overlap and cost one round trip of wall time. Every
 * backend's get and get_range (and the read cache's) are thread-safe. */
#include <pthread.h>
#include <stdlib.h>

#include "store/store.h"

#define MAX_GET_THREADS 16

typedef struct get_job {
    tl_store *s;
    tl_store_get_item *items;
    size_t n;
    size_t next; /* guarded by lock */
    pthread_mutex_t lock;
} get_job;

static void get_one(tl_store *s, tl_store_get_item *it)
{
    it->out.len = 0;
    if (it->len == 0) {
        it->st = tl_store_get(s, it->key, &it->out, &it->err);
        return;
    }
    if (tl_buf_reserve(&it->out, it->len) != 0) {
        it->st = tl_error_nomem(&it->err);
        return;
    }
    it->st = tl_store_get_range(s, it->key, it->offset, it->len, it->out.data, &it->err);
    if (it->st == TL_OK) it->out.len = it->len;
}

static void *get_worker(void *arg)
{
    get_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n) return NULL;
        get_one(j->s, &j->items[i]);
    }
}

tl_status tl_store_get_many(tl_store *s, tl_store_get_item *items, size_t n, tl_error *err)
{
    size_t threads = tl_store_is_local(s) || n < 2 ? 1 : n < MAX_GET_THREADS ? n : MAX_GET_THREADS;
    get_job j = {.s = s, .items = items, .n = n};
    pthread_mutex_init(&j.lock, NULL);
    pthread_t tid[MAX_GET_THREADS];
    size_t started = 0;
    for (; started + 1 < threads; started++)
        if (pthread_create(&tid[started], NULL, get_worker, &j) != 0) break;
    get_worker(&j); /* the caller's thread works too */
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);
    for (size_t i = 0; i < n; i++)
        if (items[i].st != TL_OK) {
            if (err) *err = items[i].err;
            return items[i].st;
        }
    return TL_OK;
}
