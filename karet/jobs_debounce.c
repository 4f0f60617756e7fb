/* Upload events become runs: a batch of uploads makes one run, fired once
 * the events for that pipeline have paused for quiet_ms, or max_ms after
 * the first of the batch so that a steady drip still runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobs.h"
#include "json_text.h"

#define MAX_PENDING 1024

typedef struct pending {
    char slug[128];
    int64_t first_ms, last_ms; /* monotonic */
    int events;
} pending;

struct debouncer {
    service *svc;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    pending items[MAX_PENDING];
    int n;
    int stopping;
};

/* When the batch fires (monotonic ms). */
static int64_t due_of(debouncer *d, const pending *p)
{
    int64_t due = p->last_ms + d->svc->cfg.debounce_quiet_ms;
    int64_t cap = p->first_ms + d->svc->cfg.debounce_max_ms;
    return cap < due ? cap : due;
}

static void fire(debouncer *d, int i)
{
    char slug[128];
    memcpy(slug, d->items[i].slug, sizeof slug);
    d->items[i] = d->items[--d->n];
    pthread_mutex_unlock(&d->lock);
    json_t *job = jobs_enqueue(d->svc, slug, "webhook", 0);
    json_decref(job);
    pthread_mutex_lock(&d->lock);
}

static void *timer_main(void *arg)
{
    debouncer *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        int64_t now = mono_ms(), next = now + 1000;
        int fired = 0;
        for (int i = 0; i < d->n; i++) {
            int64_t due = due_of(d, &d->items[i]);
            if (due <= now) {
                fire(d, i);
                fired = 1;
                break;
            }
            if (due < next) next = due;
        }
        if (fired) continue;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t wait = next - now;
        until.tv_sec += wait / 1000;
        until.tv_nsec += (wait % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&d->wake, &d->lock, &until);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

debouncer *debouncer_start(service *svc)
{
    debouncer *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->svc = svc;
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&d->thread, NULL, timer_main, d) != 0) {
        free(d);
        return NULL;
    }
    return d;
}

void debouncer_note(debouncer *d, const char *slug)
{
    int64_t now = mono_ms(), due = 0;
    int events = 0;
    pthread_mutex_lock(&d->lock);
    int i = 0;
    while (i < d->n && strcmp(d->items[i].slug, slug) != 0) i++;
    if (i == d->n && d->n < MAX_PENDING) {
        d->n++;
        strncpy(d->items[i].slug, slug, sizeof d->items[i].slug - 1);
        d->items[i].slug[sizeof d->items[i].slug - 1] = 0;
        d->items[i].first_ms = now;
        d->items[i].events = 0;
    }
    if (i < d->n) {
        d->items[i].last_ms = now;
        events = ++d->items[i].events;
        due = due_of(d, &d->items[i]);
    }
    pthread_cond_broadcast(&d->wake);
    pthread_mutex_unlock(&d->lock);
    if (events && d->svc->events) {
        char at[40];
        iso_time(now_ms() + (due - now), at, sizeof at);
        json_t *ev = json_pack("{s:s,s:s,s:i}", "pipeline", slug, "runAt", at, "events", events);
        bus_publish_named(d->svc->events, slug, "scheduled", ev);
        json_decref(ev);
    }
}

int debouncer_pending(debouncer *d, const char *slug, int64_t *fires_at_ms)
{
    if (d == NULL) return 0;
    int events = 0;
    pthread_mutex_lock(&d->lock);
    for (int i = 0; i < d->n; i++) {
        if (strcmp(d->items[i].slug, slug) != 0) continue;
        events = d->items[i].events;
        *fires_at_ms = now_ms() + (due_of(d, &d->items[i]) - mono_ms());
    }
    pthread_mutex_unlock(&d->lock);
    return events;
}

void debouncer_stop(debouncer *d)
{
    if (d == NULL) return;
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    pthread_cond_broadcast(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    /* What was waiting becomes queued jobs: the next start runs them. */
    pthread_mutex_lock(&d->lock);
    while (d->n > 0) fire(d, d->n - 1);
    pthread_mutex_unlock(&d->lock);
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* 1 when key lies under one of the config's source prefixes. */
static int config_takes(json_t *config, const char *key)
{
    json_t *sources = json_object_get(config, "source_containers");
    size_t i;
    json_t *s;
    json_array_foreach(sources, i, s)
    {
        const char *prefix = json_string_value(json_object_get(s, "path_prefix"));
        if (prefix && *prefix && strncmp(key, prefix, strlen(prefix)) == 0) return 1;
    }
    return 0;
}

int route_upload(service *svc, const char *key, json_t *scheduled)
{
    json_t *rows = db_query(svc->db,
                            "SELECT p.slug, v.config FROM pipelines p JOIN config_versions v "
                            "ON v.pipeline = p.slug AND v.version = p.live_version",
                            "");
    int reached = 0;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *slug = json_string_value(json_object_get(row, "slug"));
        json_t *config = kjson_loads(json_string_value(json_object_get(row, "config")), 0, NULL);
        if (config && config_takes(config, key)) {
            debouncer_note(svc->debounce, slug);
            reached++;
            int seen = 0;
            size_t j;
            json_t *s;
            json_array_foreach(scheduled, j, s) seen |= strcmp(json_string_value(s), slug) == 0;
            if (!seen) json_array_append_new(scheduled, json_string(slug));
        }
        json_decref(config);
    }
    json_decref(rows);
    return reached;
}
