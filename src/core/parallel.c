#include "core/parallel.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct run {
    tl_parallel_fn fn;
    void *ctx;
    size_t n;
    bool stop_on_error;
    pthread_mutex_t lock; /* guards next, st and err */
    size_t next;
    tl_status st;
    tl_error err;
} run;

static void *worker(void *arg)
{
    run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        bool stopped = r->stop_on_error && r->st != TL_OK;
        size_t i = stopped ? r->n : r->next++;
        pthread_mutex_unlock(&r->lock);
        if (i >= r->n) return NULL;
        tl_error e;
        tl_status st = r->fn(r->ctx, i, &e);
        if (st == TL_OK) continue;
        pthread_mutex_lock(&r->lock);
        if (r->st == TL_OK) {
            r->st = st;
            r->err = e;
        }
        pthread_mutex_unlock(&r->lock);
    }
}

tl_status tl_parallel_run(size_t n, size_t max_threads, bool stop_on_error, tl_parallel_fn fn,
                          void *ctx, tl_error *err)
{
    if (n == 0) return TL_OK;
    size_t threads = max_threads < 1 ? 1 : max_threads > n ? n : max_threads;
    run r = {.fn = fn, .ctx = ctx, .n = n, .stop_on_error = stop_on_error, .st = TL_OK};
    pthread_mutex_init(&r.lock, NULL);
    pthread_t *tid = threads > 1 ? calloc(threads - 1, sizeof *tid) : NULL;
    size_t started = 0;
    while (tid && started + 1 < threads && pthread_create(&tid[started], NULL, worker, &r) == 0)
        started++;
    worker(&r); /* the caller's thread works too */
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
    free(tid);
    pthread_mutex_destroy(&r.lock);
    if (r.st != TL_OK && err) *err = r.err;
    return r.st;
}
