#include "notify_group.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli/cli.h"

/* Members of one commit: bounds the memory of the rows fitted at once. */
#define MAX_GROUP 64
/* How long a commit waits for members being fetched and parsed: about the
 * fetch and parse of a file of a few MB, so a large file does not hold up the
 * others. (Set at build time to compare: -DWAIT_COMING_MS=0 commits whatever
 * is queued; TIMELAKE_NOTIFY_WAIT_COMING_MS overrides it, for tests that need
 * a commit to wait whatever the machine's load.) */
#ifndef WAIT_COMING_MS
#define WAIT_COMING_MS 50
#endif

static long wait_coming_ms(void)
{
    const char *v = getenv("TIMELAKE_NOTIFY_WAIT_COMING_MS");
    if (v == NULL || v[0] == '\0') return WAIT_COMING_MS;
    long ms = strtol(v, NULL, 10);
    return ms < 0 ? 0 : ms > 60000 ? 60000 : ms; /* a deadline that cannot wrap */
}

void tl_notify_group_init(tl_notify_group *g, tl_table *table, pthread_mutex_t *table_lock,
                          int maintain)
{
    memset(g, 0, sizeof *g);
    g->table = table;
    g->table_lock = table_lock;
    g->maintain = maintain;
    g->tail = &g->head;
    g->wait_ms = wait_coming_ms();
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
}

void tl_notify_group_destroy(tl_notify_group *g)
{
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->changed);
}

/* The outcome of a member: its input's (set by tl_table_append_group
 * whatever it returns), or, when there was no input, the error. */
static void outcome(tl_notify_member *m, const tl_append_input *in, tl_status st,
                    const tl_error *err)
{
    m->status = in ? in->status : st;
    m->err = in ? in->error : *err;
    if (in) m->result = in->result;
    m->group = in ? in->group : 0;
}

/* Commits the rows of ms[0..n) together, each member keeping its own
 * outcome; a member repeating another's batch id (one object notified twice
 * at once) goes in after it, a duplicate or, if the first failed, loaded.
 * Under the table's lock. */
static void commit_members(tl_notify_group *g, tl_notify_member **ms, size_t n)
{
    tl_append_input *in = calloc(n ? n : 1, sizeof *in);
    tl_error err = {0};
    tl_status st = in ? TL_OK : cli_error_nomem(&err);
    for (size_t i = 0; in && i < n; i++) {
        in[i].batch_id = ms[i]->batch_id;
        in[i].schema = &ms[i]->schema;
        in[i].batches = ms[i]->batches;
        in[i].n_batches = ms[i]->n_batches;
    }
    tl_append_options o = {.maintain = g->maintain};
    if (st == TL_OK) st = tl_table_append_group(g->table, in, n, &o, &err);
    for (size_t i = 0; i < n; i++) outcome(ms[i], in ? &in[i] : NULL, st, &err);
    free(in);
}

/* Waits (g->lock held) until the members being fetched or parsed have
 * joined, up to g->wait_ms. */
static void wait_coming(tl_notify_group *g)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g->wait_ms / 1000;
    until.tv_nsec += g->wait_ms % 1000 * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    while (g->coming > 0 && pthread_cond_timedwait(&g->changed, &g->lock, &until) == 0) {
    }
}

void tl_notify_group_coming(tl_notify_group *g)
{
    pthread_mutex_lock(&g->lock);
    g->coming++;
    pthread_mutex_unlock(&g->lock);
}

void tl_notify_group_gone(tl_notify_group *g)
{
    pthread_mutex_lock(&g->lock);
    g->coming--;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* Takes the table, then everything queued by then (up to MAX_GROUP), and
 * commits it. Returns with g->lock held. */
static void lead(tl_notify_group *g)
{
    tl_notify_member *ms[MAX_GROUP];
    size_t n = 0;
    pthread_mutex_lock(g->table_lock);
    pthread_mutex_lock(&g->lock);
    wait_coming(g);
    for (; g->head && n < MAX_GROUP; g->head = g->head->next) ms[n++] = g->head;
    if (g->head == NULL) g->tail = &g->head;
    pthread_mutex_unlock(&g->lock);
    commit_members(g, ms, n);
    pthread_mutex_unlock(g->table_lock);
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < n; i++) ms[i]->done = true;
}

void tl_notify_group_commit(tl_notify_group *g, tl_notify_member *m)
{
    m->done = false;
    m->group = 0;
    m->next = NULL;
    memset(&m->result, 0, sizeof m->result);
    pthread_mutex_lock(&g->lock);
    *g->tail = m;
    g->tail = &m->next;
    g->coming--;
    pthread_cond_broadcast(&g->changed); /* a commit may be waiting for it */
    while (!m->done) {
        if (g->committing) {
            pthread_cond_wait(&g->changed, &g->lock);
            continue;
        }
        g->committing = true;
        pthread_mutex_unlock(&g->lock);
        lead(g);
        g->committing = false;
        pthread_cond_broadcast(&g->changed);
    }
    pthread_mutex_unlock(&g->lock);
}
