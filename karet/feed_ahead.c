/* Files read and mapped ahead of the feed, on threads, taken in order. */
#include "feed_ahead.h"

#include <stdlib.h>
#include <string.h>

void kread_free(kread *r)
{
    kbatches_free(&r->mapped);
    tl_reader_close(r->reader);
    tl_free(r->data);
    memset(r, 0, sizeof *r);
}

void kahead_init(kahead *a, size_t nfiles, kahead_fn fn, void *ctx, tl_lake *const *lakes,
                 size_t nlakes)
{
    memset(a, 0, sizeof *a);
    a->nfiles = nfiles;
    a->fn = fn;
    a->ctx = ctx;
    a->nlakes = nlakes < KAHEAD_MAX_THREADS ? nlakes : KAHEAD_MAX_THREADS;
    for (size_t i = 0; i < a->nlakes; i++) a->workers[i] = (struct kahead_worker){a, lakes[i]};
    a->window = a->nlakes + 1; /* a file waiting per thread, and the one being taken */
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->inited = true;
}

/* Claims files in order while the window has room; a file's result waits in
 * its slot until the feed takes it. */
static void *work(void *p)
{
    struct kahead_worker *w = p;
    kahead *a = w->a;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && a->claimed < a->nfiles && a->claimed >= a->taken + a->window)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop || a->claimed >= a->nfiles) break;
        size_t i = a->claimed++;
        pthread_mutex_unlock(&a->mu);
        kread r;
        a->fn(a->ctx, w->lake, i, &r);
        pthread_mutex_lock(&a->mu);
        a->slots[i % KAHEAD_WINDOW] = r;
        a->ready[i % KAHEAD_WINDOW] = true;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Threads only where there is something to overlap: two files or more. */
static void start(kahead *a)
{
    a->started = true;
    size_t want = a->nfiles > 1 ? a->nlakes : 0;
    if (want > a->nfiles) want = a->nfiles;
    while (a->nthreads < want &&
           pthread_create(&a->threads[a->nthreads], NULL, work, &a->workers[a->nthreads]) == 0)
        a->nthreads++;
}

bool kahead_next(kahead *a, kread *out)
{
    if (!a->inited || a->taken >= a->nfiles || a->nlakes == 0) return false;
    if (!a->started) start(a);
    if (a->nthreads == 0) { /* on the caller's thread */
        a->fn(a->ctx, a->workers[0].lake, a->taken++, out);
        return true;
    }
    pthread_mutex_lock(&a->mu);
    size_t s = a->taken % KAHEAD_WINDOW;
    while (!a->ready[s]) pthread_cond_wait(&a->cv, &a->mu);
    *out = a->slots[s];
    memset(&a->slots[s], 0, sizeof a->slots[s]);
    a->ready[s] = false;
    a->taken++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return true;
}

void kahead_stop(kahead *a)
{
    if (!a->inited) return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    for (size_t i = 0; i < a->nthreads; i++) pthread_join(a->threads[i], NULL);
    a->nthreads = 0;
    for (size_t s = 0; s < KAHEAD_WINDOW; s++)
        if (a->ready[s]) {
            kread_free(&a->slots[s]);
            a->ready[s] = false;
        }
    a->taken = a->nfiles;
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    a->inited = false;
}
