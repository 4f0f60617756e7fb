/* Files read ahead of the feed (feed_ahead.c): results come strictly in
 * order; the threads keep reading while the feed is busy elsewhere (the
 * table encoding a chunk), within the byte budget; a file larger than the
 * budget still goes; stopping early frees what was not taken. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feed_ahead.h"
#include "unit.h"

#define NLAKES 2

/* The "reading" of file i: its number in rows, and a block to free. */
static void fake_read(void *ctx, tl_lake *lake, size_t i, kread *out)
{
    (void)ctx;
    (void)lake;
    memset(out, 0, sizeof *out);
    out->rows = (int64_t)i;
    out->data = malloc(64); /* freed by kread_free: a leak if a result is lost */
}

static void files_of(kfiles *l, size_t n, uint64_t size)
{
    for (size_t i = 0; i < n; i++) {
        char key[32];
        snprintf(key, sizeof key, "f%06zu", i);
        CHECK(kfiles_add(l, key, size, "e", NULL));
    }
}

static void start(kahead *a, const kfiles *files)
{
    static int lake_a, lake_b; /* never dereferenced: fake_read ignores them */
    tl_lake *lakes[NLAKES] = {(tl_lake *)&lake_a, (tl_lake *)&lake_b};
    kahead_init(a, files, fake_read, NULL, lakes, NLAKES);
}

static void take(kahead *a, size_t expect)
{
    kread r;
    CHECK(kahead_next(a, &r));
    CHECK_INT(r.rows, (int64_t)expect);
    kread_free(&r);
}

/* Waits (up to 30 s: a wait for a state, not a timing) until every claimed
 * file is read and no thread may claim another; returns the files in flight. */
static size_t settled(kahead *a)
{
    for (int waited_ms = 0; waited_ms < 30000; waited_ms++) {
        pthread_mutex_lock(&a->mu);
        size_t ready = 0;
        for (size_t s = 0; s < KAHEAD_WINDOW; s++) ready += a->ready[s];
        size_t in_flight = a->claimed - a->taken;
        bool blocked = a->claimed == a->nfiles || in_flight >= KAHEAD_WINDOW ||
                       (in_flight > a->nlakes &&
                        a->bytes + (int64_t)a->files->items[a->claimed].size > KAHEAD_BYTES);
        pthread_mutex_unlock(&a->mu);
        if (ready == in_flight && blocked) return in_flight;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    unit_fail(__FILE__, __LINE__, "the threads never settled");
    return 0;
}

static void test_in_order(void)
{
    kfiles files = {0};
    files_of(&files, 200, 1000);
    kahead a;
    start(&a, &files);
    for (size_t i = 0; i < files.len; i++) take(&a, i);
    kread r;
    CHECK(!kahead_next(&a, &r));
    kahead_stop(&a);
    kfiles_free(&files);
}

/* 40 files of 1 MiB fit the budget: once the feed took one and went to
 * encode, the threads read all the others without waiting for it. */
static void test_reads_on_while_the_feed_is_busy(void)
{
    kfiles files = {0};
    files_of(&files, 40, 1 << 20);
    kahead a;
    start(&a, &files);
    take(&a, 0);
    CHECK_INT((int64_t)settled(&a), 39);
    for (size_t i = 1; i < files.len; i++) take(&a, i);
    kahead_stop(&a);
    kfiles_free(&files);
}

/* 40 files of 24 MiB: five fit in 128 MiB, and no more are read ahead
 * until the feed takes one. */
static void test_byte_budget(void)
{
    kfiles files = {0};
    files_of(&files, 40, UINT64_C(24) << 20);
    kahead a;
    start(&a, &files);
    take(&a, 0);
    CHECK_INT((int64_t)settled(&a), (int64_t)(KAHEAD_BYTES / (INT64_C(24) << 20)));
    CHECK(a.bytes <= KAHEAD_BYTES);
    take(&a, 1);
    CHECK_INT((int64_t)settled(&a), (int64_t)(KAHEAD_BYTES / (INT64_C(24) << 20)));
    kahead_stop(&a); /* frees the results not taken */
    kfiles_free(&files);
}

/* Files larger than the whole budget still go, one per thread and one waiting. */
static void test_files_larger_than_the_budget(void)
{
    kfiles files = {0};
    files_of(&files, 10, UINT64_C(1) << 32);
    kahead a;
    start(&a, &files);
    take(&a, 0);
    CHECK_INT((int64_t)settled(&a), NLAKES + 1);
    for (size_t i = 1; i < files.len; i++) take(&a, i);
    kahead_stop(&a);
    kfiles_free(&files);
}

UNIT_TESTS(UNIT(test_in_order), UNIT(test_reads_on_while_the_feed_is_busy), UNIT(test_byte_budget),
           UNIT(test_files_larger_than_the_budget))
