/* The lake's budget for the last-value indexes its handles keep
 * (table/lvi_memo.c): within the budget whatever the order of keeps, the
 * index kept longest ago dropped first, one larger than the budget not kept,
 * and handles keeping and taking from several threads at once. */
#include <pthread.h>
#include <stdio.h>

#include "arrow/array.h"
#include "table/lvi_memo.h"
#include "unit.h"

/* An index of `bytes` bytes: one buffer, no columns (the memo compares
 * column formats only). */
static void make(size_t bytes, struct ArrowSchema *s, struct ArrowArray *a)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", NULL, 0, 0, &err), &err);
    CHECK_OK(tl_array_init(a, 1, 0, &err), &err);
    CHECK(tl_array_alloc_buffer(a, 0, bytes) != NULL);
}

static void keep(tl_lvi_memo *m, const char *key, size_t bytes)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    make(bytes, &s, &a);
    tl_lvi_memo_keep(m, key, 7, 1, &s, &a);
    tl_array_release(&a); /* nothing left when kept */
    tl_schema_release(&s);
}

static bool take(tl_lvi_memo *m, const char *key)
{
    struct ArrowSchema layout;
    struct ArrowArray unused;
    make(1, &layout, &unused);
    tl_array_release(&unused);
    tl_rows rows;
    uint64_t size = 0;
    bool hit = tl_lvi_memo_take(m, key, 1, &layout, &rows, &size);
    if (hit) {
        CHECK_INT(size, 7);
        tl_rows_free(&rows);
    }
    tl_schema_release(&layout);
    return hit;
}

static tl_index_cache_counts stats(tl_lvi_memos *p)
{
    tl_index_cache_counts c;
    tl_lvi_memos_stats(p, &c);
    return c;
}

static void test_oldest_dropped_first_within_the_budget(void)
{
    tl_lvi_memos *probe = tl_lvi_memos_new(1 << 20);
    tl_lvi_memo *one = tl_lvi_memo_new(probe);
    keep(one, "k", 4000);
    int64_t each = stats(probe).bytes;
    CHECK(each >= 4000 && each < 4400);
    tl_lvi_memo_free(one);
    CHECK_INT(stats(probe).bytes, 0);
    tl_lvi_memos_free(probe);

    tl_lvi_memos *p = tl_lvi_memos_new(3 * each + each / 2);
    tl_lvi_memo *m[5];
    char key[5][8];
    for (int i = 0; i < 5; i++) {
        m[i] = tl_lvi_memo_new(p);
        snprintf(key[i], sizeof key[i], "k%d", i);
        keep(m[i], key[i], 4000);
        CHECK(stats(p).bytes <= stats(p).limit_bytes);
    }
    CHECK_INT(stats(p).indexes, 3);
    CHECK_INT(stats(p).dropped, 2);
    CHECK(!take(m[0], key[0]) && !take(m[1], key[1])); /* the two kept first went */
    CHECK(!take(m[2], "other"));                       /* another key: not served, emptied */
    CHECK(take(m[3], key[3]) && !take(m[3], key[3]));  /* taken once */
    CHECK_INT(stats(p).indexes, 1);
    keep(m[0], key[0], 1 << 20); /* larger than the whole budget: not kept */
    CHECK_INT(stats(p).indexes, 1);
    CHECK_INT(stats(p).dropped, 3);
    CHECK(take(m[4], key[4]));
    for (int i = 0; i < 5; i++) tl_lvi_memo_free(m[i]);
    CHECK_INT(stats(p).bytes, 0);
    tl_lvi_memos_free(p);
}

typedef struct worker {
    tl_lvi_memos *p;
    pthread_barrier_t *start;
    int id, over;
} worker;

static void *churn(void *arg)
{
    worker *w = arg;
    tl_lvi_memo *m = tl_lvi_memo_new(w->p);
    char key[16];
    snprintf(key, sizeof key, "w%d", w->id);
    pthread_barrier_wait(w->start);
    for (int i = 0; i < 1000; i++) {
        keep(m, key, 1000 + (size_t)(i % 7) * 500);
        tl_index_cache_counts c = stats(w->p);
        w->over += c.bytes > c.limit_bytes;
        if (i % 3 == 0) take(m, key);
    }
    tl_lvi_memo_free(m);
    return NULL;
}

/* Keeps drop other handles' memos from other threads: the budget holds
 * after every keep, and nothing is freed twice or used after (ASan, TSan). */
static void test_handles_of_many_threads(void)
{
    tl_lvi_memos *p = tl_lvi_memos_new(6000); /* room for one or two */
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 6);
    pthread_t th[6];
    worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i] = (worker){p, &start, i, 0};
        CHECK(pthread_create(&th[i], NULL, churn, &w[i]) == 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(w[i].over, 0);
    }
    pthread_barrier_destroy(&start);
    tl_index_cache_counts c = stats(p); /* how often they overlapped is the scheduler's */
    CHECK(c.bytes == 0 && c.indexes == 0);
    tl_lvi_memos_free(p);
}

UNIT_TESTS(UNIT(test_oldest_dropped_first_within_the_budget), UNIT(test_handles_of_many_threads))
