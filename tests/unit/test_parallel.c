/* The shared thread pool behind tl_parallel_run: every item once, runs from
 * many threads at once, nested runs, errors, and use after fork. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/parallel.h"
#include "unit.h"

#define ITEMS 1000

typedef struct counts {
    atomic_int seen[ITEMS];
} counts;

static tl_status count_item(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    atomic_fetch_add(&((counts *)ctx)->seen[i], 1);
    return TL_OK;
}

static int items_seen_once(counts *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (atomic_load(&c->seen[i]) != 1) return 0;
    return 1;
}

static void test_every_item_once_across_many_runs(void)
{
    for (int round = 0; round < 200; round++) {
        counts *c = calloc(1, sizeof *c);
        size_t n = (size_t)(round % 7) * 100 + 1;
        CHECK(tl_parallel_run(n, (size_t)(round % 9) + 1, false, count_item, c, NULL) == TL_OK);
        CHECK(items_seen_once(c, n));
        free(c);
    }
}

/* Item 0 waits for item 1 to start: only a second thread can start it. */
typedef struct meet {
    atomic_bool second_started;
    atomic_bool met;
} meet;

static tl_status meet_item(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    meet *m = ctx;
    if (i == 1) {
        atomic_store(&m->second_started, true);
        return TL_OK;
    }
    time_t give_up = time(NULL) + 60; /* a backstop only */
    while (!atomic_load(&m->second_started) && time(NULL) < give_up) usleep(100);
    atomic_store(&m->met, atomic_load(&m->second_started));
    return TL_OK;
}

static void test_items_overlap_on_pool_threads(void)
{
    for (int round = 0; round < 20; round++) {
        meet m = {0};
        /* The caller may take either item; whichever waits, the other runs elsewhere. */
        CHECK(tl_parallel_run(2, 2, false, meet_item, &m, NULL) == TL_OK);
        CHECK(atomic_load(&m.second_started));
    }
}

static tl_status nested_item(void *ctx, size_t i, tl_error *err)
{
    counts *c = (counts *)ctx + i;
    return tl_parallel_run(ITEMS, 4, true, count_item, c, err);
}

static void test_nested_runs_finish(void)
{
    counts *c = calloc(16, sizeof *c);
    CHECK(tl_parallel_run(16, 16, true, nested_item, c, NULL) == TL_OK);
    for (int i = 0; i < 16; i++) CHECK(items_seen_once(&c[i], ITEMS));
    free(c);
}

static void *caller_thread(void *arg)
{
    counts *c = arg;
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < ITEMS; i++) atomic_store(&c->seen[i], 0);
        if (tl_parallel_run(ITEMS, 8, false, count_item, c, NULL) != TL_OK ||
            !items_seen_once(c, ITEMS))
            return c;
    }
    return NULL;
}

static void test_concurrent_callers(void)
{
    enum { CALLERS = 6 };
    pthread_t tid[CALLERS];
    counts *c = calloc(CALLERS, sizeof *c);
    for (int i = 0; i < CALLERS; i++)
        CHECK(pthread_create(&tid[i], NULL, caller_thread, &c[i]) == 0);
    for (int i = 0; i < CALLERS; i++) {
        void *bad = NULL;
        pthread_join(tid[i], &bad);
        CHECK(bad == NULL);
    }
    free(c);
}

static tl_status fail_at_3(void *ctx, size_t i, tl_error *err)
{
    atomic_fetch_add((atomic_int *)ctx, 1);
    if (i == 3) return tl_error_set(err, TL_ERR_STORAGE, "item %zu failed", i);
    return TL_OK;
}

static void test_first_error_is_reported(void)
{
    atomic_int ran = 0;
    tl_error err = {0};
    CHECK(tl_parallel_run(10, 4, false, fail_at_3, &ran, &err) == TL_ERR_STORAGE);
    CHECK(strstr(err.message, "item 3 failed") != NULL);
    CHECK(atomic_load(&ran) == 10); /* without stop_on_error every item runs */
}

static void test_runs_after_fork(void)
{
    counts *c = calloc(1, sizeof *c);
    CHECK(tl_parallel_run(ITEMS, 8, false, count_item, c, NULL) == TL_OK); /* pool started */
    pid_t pid = fork();
    if (pid == 0) {
        counts *d = calloc(1, sizeof *d);
        meet m = {0};
        int ok = tl_parallel_run(ITEMS, 8, false, count_item, d, NULL) == TL_OK &&
                 items_seen_once(d, ITEMS) &&
                 tl_parallel_run(2, 2, false, meet_item, &m, NULL) == TL_OK &&
                 atomic_load(&m.second_started);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(c);
}

/* A started task runs once, on a pool thread while the caller goes on
 * (here: the caller waits for it to start before joining), and its join
 * returns its status. */
typedef struct started {
    atomic_int runs;
    atomic_bool running;
    pthread_t on;
} started;

static tl_status started_item(void *ctx, size_t i, tl_error *err)
{
    started *s = ctx;
    s->on = pthread_self();
    atomic_fetch_add(&s->runs, 1);
    atomic_store(&s->running, true);
    return i == 0 ? TL_OK : tl_error_set(err, TL_ERR_INTERNAL, "item %zu", i);
}

static void test_started_task_overlaps_the_caller(void)
{
    for (int round = 0; round < 20; round++) {
        started s = {0};
        tl_parallel_task *task = tl_parallel_start(started_item, &s);
        CHECK(task != NULL);
        time_t give_up = time(NULL) + 60; /* a backstop only */
        while (!atomic_load(&s.running) && time(NULL) < give_up) usleep(100);
        CHECK(atomic_load(&s.running)); /* started before the join: another thread ran it */
        CHECK(tl_parallel_join(task, started_item, &s, NULL) == TL_OK);
        CHECK_INT(atomic_load(&s.runs), 1);
        CHECK(!pthread_equal(s.on, pthread_self()));
    }
}

static tl_status failing_task(void *ctx, size_t i, tl_error *err)
{
    atomic_fetch_add((atomic_int *)ctx, 1);
    return tl_error_set(err, TL_ERR_STORAGE, "task %zu failed", i);
}

/* Joined at once (taken by a pool thread or not), many at a time, or never
 * queued (NULL): each runs exactly once and its failure is reported. */
static void test_joined_tasks_run_once(void)
{
    enum { TASKS = 64 };
    atomic_int runs[TASKS];
    tl_parallel_task *tasks[TASKS];
    for (int i = 0; i < TASKS; i++) {
        atomic_init(&runs[i], 0);
        tasks[i] = tl_parallel_start(failing_task, &runs[i]);
    }
    for (int i = TASKS - 1; i >= 0; i--) {
        tl_error err = {0};
        CHECK(tl_parallel_join(tasks[i], failing_task, &runs[i], &err) == TL_ERR_STORAGE);
        CHECK(strstr(err.message, "task 0 failed") != NULL);
        CHECK_INT(atomic_load(&runs[i]), 1);
    }
    atomic_int ran = 0;
    CHECK(tl_parallel_join(NULL, failing_task, &ran, NULL) == TL_ERR_STORAGE);
    CHECK_INT(atomic_load(&ran), 1);
}

/* The read system calls this process made so far (/proc/self/io), -1 when
 * the kernel does not count them. */
static long long reads_made(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (f == NULL) return -1;
    char line[128];
    long long n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "syscr: %lld", &n) == 1) break;
    fclose(f);
    return n;
}

/* sysconf reads a /sys file on every call; the count is read once. */
static void test_cpu_count_is_read_once(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK_INT(tl_cpu_count(), cpus > 1 ? (size_t)cpus : 1);
    long long before = reads_made();
    if (before < 0) return;
    for (int i = 0; i < 100; i++) CHECK(tl_cpu_count() >= 1);
    long long after = reads_made();
    CHECK(after - before < 20); /* reading /proc/self/io itself costs a few */
}

UNIT_TESTS(UNIT(test_cpu_count_is_read_once), UNIT(test_every_item_once_across_many_runs),
           UNIT(test_items_overlap_on_pool_threads), UNIT(test_nested_runs_finish),
           UNIT(test_concurrent_callers), UNIT(test_first_error_is_reported),
           UNIT(test_runs_after_fork), UNIT(test_started_task_overlaps_the_caller),
           UNIT(test_joined_tasks_run_once))
