#include "notify_fanout.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "notify.h"

/* Events of one request loading at once: each holds its object in memory
 * until its commit (up to the parse-ahead size), so a request's share of
 * the server stays that of a few senders. */
#define MAX_LOADERS 4

typedef struct fanout {
    tl_notify_ingest *in;
    const tl_notify_events *ev;
    double t0, deadline_ms;
    int *status;
    char *why;
    size_t why_size;
    atomic_int next; /* the next event to take */
} fanout;

static void load_one(fanout *f, int i)
{
    char *why = f->why + (size_t)i * f->why_size;
    if (tl_notify_now_ms() - f->t0 > f->deadline_ms) {
        f->status[i] = 503;
        snprintf(why, f->why_size, "%s: not loaded within the request deadline, retry",
                 f->ev->items[i].key);
        return;
    }
    f->status[i] = tl_notify_load_event(f->in, &f->ev->items[i], why, f->why_size);
}

static void *loader(void *arg)
{
    fanout *f = arg;
    for (int i; (i = atomic_fetch_add(&f->next, 1)) < f->ev->n;) load_one(f, i);
    return NULL;
}

void tl_notify_load_all(tl_notify_ingest *in, const tl_notify_events *ev, double t0,
                        double deadline_ms, int *status, char *why, size_t why_size)
{
    fanout f = {.in = in,
                .ev = ev,
                .t0 = t0,
                .deadline_ms = deadline_ms,
                .status = status,
                .why = why,
                .why_size = why_size};
    atomic_init(&f.next, 0);
    pthread_t helpers[MAX_LOADERS - 1];
    int n = 0;
    /* A helper that cannot start leaves its events to the others (at the
     * least this thread), one after another as before. */
    while (n < MAX_LOADERS - 1 && n < ev->n - 1 &&
           pthread_create(&helpers[n], NULL, loader, &f) == 0)
        n++;
    loader(&f);
    for (int i = 0; i < n; i++) pthread_join(helpers[i], NULL);
}
