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

void kahead_init(kahead *a, const kfiles *files, kahead_fn fn, void *ctx, tl_lake *const *lakes,
                 size_t nlakes)
{
    memset(a, 0, sizeof *a);
    a->files = files;
    a->nfiles = files->len;
    a->fn = fn;
    a->ctx = ctx;
    a->nlakes = nlakes < KAHEAD_MAX_THREADS ? nlakes : KAHEAD_MAX_THREADS;
    for (size_t i = 0; i < a->nlakes; i++) a->workers[i] = (struct kahead_worker){a, lakes[i]};
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->inited = true;
}

/* Whether the next file may be claimed: always while no more than one file
 * per thread and the one being taken are in flight; beyond that, within the
 * slots and the byte budget. */
static bool room(const kahead *a)
{
    size_t in_flight = a->claimed - a->taken;
    if (in_flight <= a->nlakes) return true;
    if (in_flight >= KAHEAD_WINDOW) return false;
    return a->bytes + (int64_t)a->files->items[a->claimed].size <= KAHEAD_BYTES;
}

/* Claims files in order while there is room; a file's result waits in its
 * slot until the feed takes it. */
static void *work(void *p)
{
    struct kahead_worker *w = p;
    kahead *a = w->a;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && a->claimed < a->nfiles && !room(a)) pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop || a->claimed >= a->nfiles) break;
        size_t i = a->claimed++;
        a->bytes += (int64_t)a->files->items[i].size;
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
    a->bytes -= (int64_t)a->files->items[a->taken].size;
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
