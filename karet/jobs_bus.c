/* The bus between job changes and event streams: a ring of the latest
 * events, each with a sequence number, that streams read behind. A stream
 * that falls more than the ring behind skips what it missed (a page reloads
 * the list on reconnect anyway). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"
#include "json_text.h"

#define RING 512

typedef struct bus_event {
    uint64_t seq;
    char *slug;
    char *text;
    char name[32]; /* "" for a job record */
} bus_event;

struct event_bus {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bus_event ring[RING];
    uint64_t seq; /* of the newest event; 0 before any */
    int closed;
};

event_bus *bus_new(void)
{
    event_bus *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    pthread_mutex_init(&b->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->changed, &ca);
    pthread_condattr_destroy(&ca);
    return b;
}

void bus_free(event_bus *b)
{
    if (b == NULL) return;
    for (int i = 0; i < RING; i++) free(b->ring[i].slug), free(b->ring[i].text);
    pthread_cond_destroy(&b->changed);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

void bus_publish_named(event_bus *b, const char *slug, const char *name, json_t *record)
{
    char *text = kjson_dumps(record, JSON_COMPACT);
    char *s = strdup(slug);
    pthread_mutex_lock(&b->lock);
    bus_event *e = &b->ring[(b->seq + 1) % RING];
    free(e->slug);
    free(e->text);
    e->seq = ++b->seq;
    e->slug = s;
    e->text = text;
    snprintf(e->name, sizeof e->name, "%s", name ? name : "");
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

void bus_publish(event_bus *b, const char *slug, json_t *record)
{
    bus_publish_named(b, slug, NULL, record);
}

uint64_t bus_seq(event_bus *b)
{
    pthread_mutex_lock(&b->lock);
    uint64_t s = b->seq;
    pthread_mutex_unlock(&b->lock);
    return s;
}

void bus_close(event_bus *b)
{
    pthread_mutex_lock(&b->lock);
    b->closed = 1;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

char *bus_wait(event_bus *b, const char *slug, uint64_t *seq, int64_t timeout_ms, int *closed,
               char *name, size_t namelen)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
    char *out = NULL;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        if (b->closed) break;
        if (b->seq > RING && *seq < b->seq - RING) *seq = b->seq - RING;
        while (out == NULL && *seq < b->seq) {
            bus_event *e = &b->ring[(*seq + 1) % RING];
            *seq = *seq + 1;
            if (e->text && strcmp(e->slug, slug) == 0) {
                out = strdup(e->text);
                if (name) snprintf(name, namelen, "%s", e->name);
            }
        }
        if (out) break;
        if (pthread_cond_timedwait(&b->changed, &b->lock, &until) != 0) break;
    }
    *closed = b->closed;
    pthread_mutex_unlock(&b->lock);
    return out;
}
