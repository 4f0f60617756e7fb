#include "notify_group.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "core/clock.h"
#include "table/append.h"

/* Members of one commit: bounds the memory of the rows fitted at once. */
#define MAX_GROUP 64
/* Commits of one group lost to ids committed meanwhile by another writer,
 * before each member is tried alone. */
#define MAX_ROUNDS 3
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

static void decide(tl_notify_member *m, tl_status st, const tl_error *err)
{
    m->status = st;
    if (err) m->err = *err;
    m->decided = true;
}

/* Members whose batch id the table has committed are duplicates: nothing of
 * theirs is read or written. A failed check decides nothing (the append
 * checks again). */
static void skip_committed(tl_table *t, tl_notify_member **ms, size_t n)
{
    const char **ids = malloc(n * sizeof *ids);
    int *seen = calloc(n, sizeof *seen);
    tl_error err = {0};
    for (size_t i = 0; ids && i < n; i++) ids[i] = ms[i]->batch_id;
    if (ids && seen && tl_table_batches_committed(t, ids, n, seen, &err) == TL_OK)
        for (size_t i = 0; i < n; i++)
            if (seen[i] && !ms[i]->decided) {
                memset(&ms[i]->result, 0, sizeof ms[i]->result);
                ms[i]->result.duplicate = 1;
                ms[i]->result.version = tl_table_version(t);
                decide(ms[i], TL_OK, NULL);
            }
    free(ids);
    free(seen);
}

/* Fits each undecided member's rows to the table (casts, required columns,
 * series key sizes), as the append would: one whose data does not fit fails
 * alone here. The others go to live[] and their rows to rows[]; returns how
 * many. A column already in the table's type is borrowed from the member's
 * batches, not copied: the append lays the rows out into arrays of its own
 * before it returns, and the members' batches outlive their commit (a member
 * waits for its outcome), so a failed group still fits them again. */
static size_t fit(tl_table *t, tl_notify_member **ms, size_t n, tl_notify_member **live,
                  tl_rows *rows)
{
    int64_t now = tl_now_micros();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ms[i]->decided) continue;
        tl_error err = {0};
        tl_status st = tl_append_prepare_borrow(t, &ms[i]->schema, ms[i]->batches, ms[i]->n_batches,
                                                now, &rows[k], &err);
        if (st != TL_OK) {
            decide(ms[i], st, &err);
            continue;
        }
        ms[i]->result.rows = rows[k].array.length;
        live[k++] = ms[i];
    }
    return k;
}

/* One append of the k members' rows (taken), recording every batch id. */
static tl_status append_rows(tl_notify_group *g, tl_notify_member **live, tl_rows *rows, size_t k,
                             tl_append_result *out, tl_error *err)
{
    const char **ids = malloc(k * sizeof *ids);
    struct ArrowArray *arrays = calloc(k, sizeof *arrays);
    tl_status st = ids && arrays ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; i < k; i++) {
        if (ids) ids[i] = live[i]->batch_id;
        if (arrays) tl_array_move(&rows[i].array, &arrays[i]);
        if (i > 0) tl_rows_free(&rows[i]); /* one schema serves: every member's is the table's */
    }
    struct ArrowArrayStream s;
    if (st == TL_OK) st = tl_stream_from_batches(&rows[0].schema, arrays, k, &s, err);
    if (st == TL_OK) {
        tl_append_options o = {.batch_ids = ids, .n_batch_ids = k, .maintain = g->maintain};
        st = tl_table_append(g->table, &s, &o, out, err); /* releases s */
    } else {
        for (size_t i = 0; arrays && i < k; i++) tl_array_release(&arrays[i]);
        tl_rows_free(&rows[0]);
    }
    free(ids);
    free(arrays);
    return st;
}

static void committed(tl_notify_member **live, size_t k, const tl_append_result *r)
{
    for (size_t i = 0; i < k; i++) {
        tl_append_result *m = &live[i]->result;
        int64_t rows = r->duplicate ? 0 : m->rows;
        *m = *r;
        m->rows = rows;
        live[i]->group = (int)k;
        decide(live[i], TL_OK, NULL);
    }
}

/* Commits the rows of ms[0..n) together, each member keeping its own
 * outcome. Under the table's lock. */
static void commit_members(tl_notify_group *g, tl_notify_member **ms, size_t n)
{
    tl_notify_member **live = malloc(n * sizeof *live);
    tl_rows *rows = calloc(n, sizeof *rows);
    if (live == NULL || rows == NULL) {
        tl_error err = {0};
        tl_error_nomem(&err);
        for (size_t i = 0; i < n; i++) decide(ms[i], TL_ERR_NOMEM, &err);
    }
    for (int round = 1; live && rows; round++) {
        skip_committed(g->table, ms, n);
        size_t k = fit(g->table, ms, n, live, rows);
        if (k == 0) break;
        tl_append_result r;
        memset(&r, 0, sizeof r);
        tl_error err = {0};
        tl_status st = append_rows(g, live, rows, k, &r, &err);
        if (st == TL_OK) {
            committed(live, k, &r);
            break;
        }
        if (k == 1) {
            decide(live[0], st, &err);
            break;
        }
        /* Some ids were committed meanwhile by another writer, and some not:
         * those are duplicates now, the rest goes again. */
        if (st == TL_ERR_CONFLICT && round < MAX_ROUNDS) continue;
        /* Any other failure of a group: each member alone, for its own outcome
         * (a commit whose outcome was unknown is found by the batch id check). */
        for (size_t i = 0; i < k; i++) commit_members(g, &live[i], 1);
        break;
    }
    free(live);
    free(rows);
}

/* Members whose batch id an earlier member of the group has (one object
 * notified twice at once) wait for the next group, where they are
 * duplicates or, if the first failed, loaded: moved to ms[kept..n), in order. */
static size_t defer_repeats(tl_notify_member **ms, size_t n)
{
    tl_notify_member *later[MAX_GROUP];
    size_t kept = 0, n_later = 0;
    for (size_t i = 0; i < n; i++) {
        bool repeat = false;
        for (size_t j = 0; j < kept && !repeat; j++)
            repeat = strcmp(ms[j]->batch_id, ms[i]->batch_id) == 0;
        if (repeat)
            later[n_later++] = ms[i];
        else
            ms[kept++] = ms[i];
    }
    memcpy(ms + kept, later, n_later * sizeof *later);
    return kept;
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
    size_t now = defer_repeats(ms, n);
    commit_members(g, ms, now);
    pthread_mutex_unlock(g->table_lock);
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < now; i++) ms[i]->done = true;
    for (size_t i = n; i-- > now;) { /* back to the front of the queue */
        ms[i]->next = g->head;
        if (g->head == NULL) g->tail = &ms[i]->next;
        g->head = ms[i];
    }
}

void tl_notify_group_commit(tl_notify_group *g, tl_notify_member *m)
{
    m->decided = m->done = false;
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
