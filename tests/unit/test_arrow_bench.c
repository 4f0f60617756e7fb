/* Times the append path's kernels on 1M rows x (int32 partition, 2 utf8 series
 * keys of 100 distinct values, int64 time, 5 float64): cast every column to
 * its table type, sort by (partition, series..., time), take every column.
 * Prints milliseconds (not an assertion; build Release for real numbers) and
 * checks the result is sorted. TL_BENCH_ROWS overrides the row count (200k
 * under AddressSanitizer), TL_BENCH_REPEATS the runs (the best is printed). */
#include <stdio.h>
#include <time.h>

#include "arrow/cast.h"
#include "arrow/sort.h"
#include "arrow/take.h"
#include "test_arrow_helpers.h"
#include "unit.h"

#define N_COLS 9

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void build_columns(tcol *cols, int64_t n, bool time_ordered)
{
    tl_error err;
    uint64_t st = 1;
    tl_arrow_type ti32, tu, ti64, tf64;
    tl_arrow_type_parse("i", &ti32, NULL);
    tl_arrow_type_parse("u", &tu, NULL);
    tl_arrow_type_parse("l", &ti64, NULL);
    tl_arrow_type_parse("g", &tf64, NULL);
    tl_builder b[N_COLS];
    const tl_arrow_type *types[N_COLS] = {&ti32, &tu,   &tu,   &ti64, &tf64,
                                          &tf64, &tf64, &tf64, &tf64};
    const char *formats[N_COLS] = {"i", "u", "u", "l", "g", "g", "g", "g", "g"};
    for (int c = 0; c < N_COLS; c++) {
        CHECK_OK(tl_builder_init(&b[c], types[c], &err), &err);
        CHECK_OK(tl_builder_reserve(&b[c], n, 16 * n, &err), &err);
    }
    const int64_t start_us = 1767312000000000LL, day_us = 86400000000LL;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = trand(&st);
        /* Time-ordered input: 10 000 series take turns; otherwise random times over 3 days. */
        int64_t t =
            time_ordered ? start_us + i * 259200 : start_us + (int64_t)(r % (uint64_t)(3 * day_us));
        int a = time_ordered ? (int)(i % 100) : (int)(r >> 40) % 100;
        int z = time_ordered ? (int)(i / 100 % 100) : (int)(r >> 50) % 100;
        char s1[16], s2[16];
        int l1 = snprintf(s1, sizeof s1, "host-%02d", a),
            l2 = snprintf(s2, sizeof s2, "region-%d", z);
        CHECK_OK(tl_builder_append_int(&b[0], (t - start_us) / day_us, &err), &err);
        CHECK_OK(tl_builder_append_bytes(&b[1], s1, (size_t)l1, &err), &err);
        CHECK_OK(tl_builder_append_bytes(&b[2], s2, (size_t)l2, &err), &err);
        CHECK_OK(tl_builder_append_int(&b[3], t, &err), &err);
        for (int c = 4; c < N_COLS; c++)
            CHECK_OK(tl_builder_append_double(&b[c], (double)(r >> (c * 4)) * 1e-9, &err), &err);
    }
    for (int c = 0; c < N_COLS; c++) {
        struct ArrowArray a;
        CHECK_OK(tl_builder_finish(&b[c], &a, &err), &err);
        tl_builder_free(&b[c]);
        tcol_adopt(&cols[c], formats[c], &a);
    }
}

/* Best time of each phase over the repeats. */
typedef struct bench_times {
    double cast, sort, take, total, ts_cast;
} bench_times;

static double best(double a, double b)
{
    return a < b ? a : b;
}

static void run_once(tcol *cols, int64_t n, bench_times *bt)
{
    tl_error err;
    double t0 = now_ms();
    struct ArrowArray cast[N_COLS], taken[N_COLS];
    tl_array_view views[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        CHECK_OK(tl_arrow_cast(&cols[c].view, &cols[c].type, "c", &cast[c], &err), &err);
        tl_view_of_owned(&cols[c].type, &cast[c], &views[c]);
    }
    double t1 = now_ms();
    tl_sort_key keys[] = {{&views[0], false, false},
                          {&views[1], false, false},
                          {&views[2], false, false},
                          {&views[3], false, false}};
    int64_t *idx = NULL;
    CHECK_OK(tl_arrow_sort_indices(keys, 4, n, &idx, &err), &err);
    double t2 = now_ms();
    for (int c = 0; c < N_COLS; c++)
        CHECK_OK(tl_arrow_take(&views[c], idx, n, &taken[c], &err), &err);
    double t3 = now_ms();

    /* A real cast on the side: timestamp[ns] -> timestamp[us] of the time
     * column (its values as whole microseconds in nanoseconds: the cast is exact). */
    tl_arrow_type us;
    tl_arrow_type_parse("tsu:UTC", &us, NULL);
    int64_t *ns_values = malloc((size_t)n * sizeof *ns_values);
    for (int64_t i = 0; ns_values && i < n; i++)
        ns_values[i] =
            ((const int64_t *)views[3].values)[views[3].offset + i] % 4000000000000000LL * 1000;
    tcol tns;
    tcol_ints(&tns, "tsn:", ns_values, NULL, n);
    free(ns_values);
    struct ArrowArray ts_us;
    double t4 = now_ms();
    CHECK_OK(tl_arrow_cast(&tns.view, &us, "time", &ts_us, &err), &err);
    double t5 = now_ms();
    tl_array_release(&ts_us);
    tcol_free(&tns);

    tl_array_view sorted[4];
    for (int c = 0; c < 4; c++) tl_view_of_owned(&cols[c].type, &taken[c], &sorted[c]);
    tl_sort_key check[] = {{&sorted[0], false, false},
                           {&sorted[1], false, false},
                           {&sorted[2], false, false},
                           {&sorted[3], false, false}};
    bool ok = false;
    CHECK_OK(tl_arrow_is_sorted(check, 4, n, &ok, &err), &err);
    CHECK(ok);
    bt->cast = best(bt->cast, t1 - t0);
    bt->sort = best(bt->sort, t2 - t1);
    bt->take = best(bt->take, t3 - t2);
    bt->total = best(bt->total, t3 - t0);
    bt->ts_cast = best(bt->ts_cast, t5 - t4);
    free(idx);
    for (int c = 0; c < N_COLS; c++) {
        tl_array_release(&cast[c]);
        tl_array_release(&taken[c]);
    }
}

/* The first run pays the page faults of fresh memory; later runs show a
 * long-running process, whose allocator reuses freed memory. */
static void run(int64_t n, bool time_ordered, int repeats)
{
    tcol cols[N_COLS];
    build_columns(cols, n, time_ordered);
    bench_times bt = {1e9, 1e9, 1e9, 1e9, 1e9};
    for (int r = 0; r < repeats; r++) run_once(cols, n, &bt);
    printf("  %lld rows, %s input, best of %d: cast %.1f ms, sort %.1f ms, take %.1f ms, "
           "total %.1f ms (ts[ns]->ts[us] cast of the time column %.1f ms)\n",
           (long long)n, time_ordered ? "time-ordered" : "random", repeats, bt.cast, bt.sort,
           bt.take, bt.total, bt.ts_cast);
    for (int c = 0; c < N_COLS; c++) tcol_free(&cols[c]);
}

static void test_bench_append_kernels(void)
{
    const char *rows = getenv("TL_BENCH_ROWS");
#ifdef __SANITIZE_ADDRESS__
    int64_t n = rows ? atoll(rows) : 200000; /* sanitizers: keep ctest quick */
#else
    int64_t n = rows ? atoll(rows) : 1000000;
#endif
    const char *reps = getenv("TL_BENCH_REPEATS");
    int repeats = reps ? atoi(reps) : 1;
    run(n, false, repeats);
    run(n, true, repeats);
}

UNIT_TESTS(UNIT(test_bench_append_kernels))
