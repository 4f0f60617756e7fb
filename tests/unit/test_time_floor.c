/* The reciprocal floor of time_bucket against integer division, over the
 * widths queries use and random ones, at the edges of the fast range. */
#include "query/time_floor.h"
#include "unit.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    return trand(&rng_state);
}

static void check_width(int64_t w, int64_t v)
{
    int64_t fast = 0, exact = 0;
    bool ok = tl_time_floor_exact(v, w, &exact);
    CHECK(tl_time_floor(v, w, 1.0 / (double)w, &fast) == ok);
    if (ok) CHECK_INT(fast, exact);
    if (ok) CHECK(exact <= v && v - exact < w && exact % w == 0);
}

static void test_edges(void)
{
    static const int64_t widths[] = {1,
                                     3,
                                     1000,
                                     1000000,
                                     60000000,
                                     3600000000LL,
                                     86400000000LL,
                                     604800000000LL,
                                     TL_FLOOR_FAST_LIMIT - 1,
                                     TL_FLOOR_FAST_LIMIT,
                                     INT64_MAX};
    static const int64_t values[] = {0,
                                     1,
                                     -1,
                                     59999999,
                                     60000000,
                                     -60000000,
                                     -60000001,
                                     TL_FLOOR_FAST_LIMIT - 1,
                                     -TL_FLOOR_FAST_LIMIT + 1,
                                     TL_FLOOR_FAST_LIMIT,
                                     -TL_FLOOR_FAST_LIMIT,
                                     INT64_MAX - 1,
                                     INT64_MIN + 2,
                                     1767225600000000LL,
                                     -62135596800000000LL};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        for (size_t j = 0; j < sizeof values / sizeof values[0]; j++)
            check_width(widths[i], values[j]);
}

static void test_infinities_pass_through(void)
{
    int64_t out = 0;
    CHECK(tl_time_floor(TL_TS_INFINITY, 7, 1.0 / 7, &out) && out == TL_TS_INFINITY);
    CHECK(tl_time_floor(TL_TS_NINFINITY, 7, 1.0 / 7, &out) && out == TL_TS_NINFINITY);
}

static void test_floor_below_the_range_is_refused(void)
{
    int64_t out = 0;
    CHECK(!tl_time_floor_exact(INT64_MIN + 2, 1000, &out));
    CHECK(tl_time_floor_exact(INT64_MIN + 2, 2, &out) && out == INT64_MIN + 2);
}

static void test_random_values_and_widths(void)
{
    for (int i = 0; i < 2000000; i++) {
        uint64_t r = next_random();
        int64_t w = (int64_t)(next_random() >> (12 + r % 51)) + 1; /* 1 .. 2^52 */
        int64_t v = (int64_t)(next_random() >> (r % 64));
        if (r & 1) v = -v;
        check_width(w, v);
    }
}

UNIT_TESTS(UNIT(test_edges), UNIT(test_infinities_pass_through),
           UNIT(test_floor_below_the_range_is_refused), UNIT(test_random_values_and_widths))
