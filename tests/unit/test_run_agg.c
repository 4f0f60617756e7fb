/* The run aggregator (query/run_agg.h): a hand-made case with nulls, NaN,
 * bucket and range edges, and random sorted rows (keys as strings and as
 * dictionary codes) whose partial states,
 * merged by group, must give each group's aggregates computed row by row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/run_agg.h"
#include "test_arrow_helpers.h"

enum { N_STATES = 5 };

static const tl_run_state states[N_STATES] = {
    {TL_RUN_COUNT_STAR, 0}, {TL_RUN_COUNT, 0}, {TL_RUN_SUM, 0}, {TL_RUN_MIN, 0}, {TL_RUN_MAX, 0}};

/* Runs the aggregator over columns time (tsu:UTC), key (u), value (g). */
static void aggregate(const tl_run_split *split, tcol *time, tcol *key, tcol *value, int64_t n,
                      struct ArrowArray *out, int64_t *runs)
{
    tl_error err;
    const struct ArrowArray *keys[1] = {&key->array}, *values[1] = {&value->array};
    tl_run_input in = {&time->array, keys, 1, values, 1, n};
    CHECK_OK(tl_run_aggregate(split, &in, states, N_STATES, out, runs, &err), &err);
}

static bool is_null(const struct ArrowArray *a, int64_t i)
{
    return a->null_count && a->buffers[0] && !tl_bit_get(a->buffers[0], i);
}

static int64_t i64(const struct ArrowArray *a, int64_t i)
{
    return ((const int64_t *)a->buffers[1])[i];
}

static double f64(const struct ArrowArray *a, int64_t i)
{
    return ((const double *)a->buffers[1])[i];
}

static const char *str(const struct ArrowArray *a, int64_t i, char *buf)
{
    if (is_null(a, i)) return "(null)";
    const int32_t *off = a->buffers[1];
    memcpy(buf, (const char *)a->buffers[2] + off[i], (size_t)(off[i + 1] - off[i]));
    buf[off[i + 1] - off[i]] = 0;
    return buf;
}

static void test_hand_made(void)
{
    /* width 100, the query keeps times 5..250 */
    tl_run_split split = {100, 5, 250};
    const char *k[] = {"a", "a", "a", "a", "a", "b", NULL, NULL, NULL};
    int64_t t[] = {0, 3, 10, 120, 130, 130, 140, 150, 0};
    double v[] = {1, 0, 2, NAN, 5, 7, 1, 2, 4};
    const char *tnull = "........x", *vnull = ".x.......";
    tcol time, key, value;
    tcol_ints(&time, "tsu:UTC", t, tnull, 9);
    tcol_strs(&key, "u", k, 9);
    tcol_doubles(&value, "g", v, vnull, 9);
    struct ArrowArray out[2 + N_STATES];
    int64_t runs = 0;
    aggregate(&split, &time, &key, &value, 9, out, &runs);
    /* a in bucket 0, a in bucket 100, b, null key (two times, one bucket);
     * not the rows of a before the range, nor the null time */
    CHECK_INT(runs, 4);
    const char *keys[] = {"a", "a", "b", "(null)"};
    int64_t first[] = {10, 120, 130, 140}, count_star[] = {1, 2, 1, 2}, count[] = {1, 2, 1, 2};
    char buf[16];
    for (int64_t r = 0; r < runs; r++) {
        CHECK_STR(str(&out[0], r, buf), keys[r]);
        CHECK(!is_null(&out[1], r));
        CHECK_INT(i64(&out[1], r), first[r]);
        CHECK_INT(i64(&out[2], r), count_star[r]);
        CHECK_INT(i64(&out[3], r), count[r]);
    }
    CHECK(f64(&out[4], 0) == 2 && f64(&out[5], 0) == 2 && f64(&out[6], 0) == 2);
    CHECK(isnan(f64(&out[4], 1))); /* a sum with NaN */
    CHECK(f64(&out[5], 1) == 5);   /* min: NaN above every number */
    CHECK(isnan(f64(&out[6], 1))); /* max: NaN */
    CHECK(f64(&out[4], 3) == 3 && f64(&out[6], 3) == 2);
    for (int i = 0; i < 2 + N_STATES; i++) tl_array_release(&out[i]);
    tcol_free(&time);
    tcol_free(&key);
    tcol_free(&value);
}

static void test_all_null_values(void)
{
    tl_run_split split = {10, INT64_MIN, INT64_MAX};
    const char *k[] = {"x", "x", "x"};
    int64_t t[] = {1, 2, 3};
    double v[] = {0, 0, 0};
    tcol time, key, value;
    tcol_ints(&time, "tsu:UTC", t, NULL, 3);
    tcol_strs(&key, "u", k, 3);
    tcol_doubles(&value, "g", v, "xxx", 3);
    struct ArrowArray out[2 + N_STATES];
    int64_t runs = 0;
    aggregate(&split, &time, &key, &value, 3, out, &runs);
    CHECK_INT(runs, 1);
    CHECK_INT(i64(&out[2], 0), 3);
    CHECK_INT(i64(&out[3], 0), 0);                          /* count(x) skips nulls */
    for (int s = 4; s < 7; s++) CHECK(is_null(&out[s], 0)); /* sum, min, max of no value */
    for (int i = 0; i < 2 + N_STATES; i++) tl_array_release(&out[i]);
    tcol_free(&time);
    tcol_free(&key);
    tcol_free(&value);
}

/* One group's aggregates, as SQL computes them row by row. */
typedef struct group {
    int key; /* -1: null */
    int64_t bucket;
    int part;
    bool null_time;
    int64_t count_star, count;
    double sum, min, max;
} group;

static int64_t floor_w(int64_t t, int64_t w)
{
    int64_t r = t % w;
    return r < 0 ? t - r - w : t - r;
}

static int part_of(const tl_run_split *s, int64_t t)
{
    return t < s->lo ? 0 : t > s->hi ? 2 : 1;
}

static group *find(group *g, size_t *n, int key, bool null_time, int64_t bucket, int part)
{
    for (size_t i = 0; i < *n; i++)
        if (g[i].key == key && g[i].null_time == null_time &&
            (null_time || (g[i].bucket == bucket && g[i].part == part)))
            return &g[i];
    g[*n] = (group){key, bucket, part, null_time, 0, 0, 0, 0, 0};
    return &g[(*n)++];
}

static void fold(group *g, int64_t count_star, int64_t count, double sum, double min, double max)
{
    if (count && (g->count == 0 || min < g->min)) g->min = min;
    if (count && (g->count == 0 || max > g->max)) g->max = max;
    g->count_star += count_star;
    g->count += count;
    g->sum += sum;
}

/* Keys as strings, or (coded) as int32 codes into a dictionary that holds
 * "h0" twice: a Parquet dictionary need not be distinct, and equal strings
 * under two codes only split a run. */
static void random_runs(bool coded)
{
    uint64_t seed = coded ? 0xc0de : 0x5eed;
    for (int round = 0; round < 200; round++) {
        int64_t n = 1 + (int64_t)(trand(&seed) % 400), w = 1 + (int64_t)(trand(&seed) % 50);
        int64_t lo = (int64_t)(trand(&seed) % 300) - 150, hi = lo + (int64_t)(trand(&seed) % 300);
        tl_run_split split = {w, round % 5 ? lo : INT64_MIN, round % 7 ? hi : INT64_MAX};
        int64_t *t = calloc((size_t)n, sizeof *t);
        double *v = calloc((size_t)n, sizeof *v);
        int *kk = calloc((size_t)n, sizeof *kk);
        char *tnull = calloc((size_t)n + 1, 1), *vnull = calloc((size_t)n + 1, 1),
             *knull = calloc((size_t)n + 1, 1);
        const char **k = calloc((size_t)n, sizeof *k);
        int64_t *code = calloc((size_t)n, sizeof *code);
        static const char *names[] = {"h0", "h1", "host_long_name_beyond_32_bytes_xx", ""};
        static const char *dict[] = {"h0", "h1", "host_long_name_beyond_32_bytes_xx", "", "h0"};
        int key = 0;
        int64_t at = -200;
        for (int64_t i = 0; i < n; i++) { /* sorted by key, then time (mostly) */
            if (trand(&seed) % 10 == 0) key = (key + 1) % 5, at = -200;
            at += (int64_t)(trand(&seed) % 20);
            kk[i] = key == 4 ? -1 : key;
            k[i] = key == 4 ? NULL : names[key];
            code[i] = key == 0 && trand(&seed) % 3 == 0 ? 4 : key == 4 ? 0 : key;
            knull[i] = key == 4 ? 'x' : '.';
            t[i] = trand(&seed) % 13 == 0 ? -at : at; /* sometimes out of order */
            tnull[i] = trand(&seed) % 17 == 0 ? 'x' : '.';
            vnull[i] = trand(&seed) % 5 == 0 ? 'x' : '.';
            v[i] = (double)((int64_t)(trand(&seed) % 2001) - 1000); /* sums exact */
        }
        tcol time, keyc, value;
        tcol_ints(&time, "tsu:UTC", t, tnull, n);
        if (coded)
            tcol_dict(&keyc, "i", code, knull, n, "u", dict, 5);
        else
            tcol_strs(&keyc, "u", k, n);
        tcol_doubles(&value, "g", v, vnull, n);
        struct ArrowArray out[2 + N_STATES];
        int64_t runs = 0;
        aggregate(&split, &time, &keyc, &value, n, out, &runs);
        CHECK(runs >= 0 && runs <= n);
        group *want = calloc((size_t)n, sizeof *want), *got = calloc((size_t)runs, sizeof *got);
        size_t n_want = 0, n_got = 0;
        bool ranged = split.lo != INT64_MIN || split.hi != INT64_MAX;
        for (int64_t i = 0; i < n; i++) {
            bool tn = tnull[i] == 'x', vn = vnull[i] == 'x';
            if (ranged && (tn || part_of(&split, t[i]) != 1)) continue; /* the WHERE drops it */
            group *g = find(want, &n_want, kk[i], tn, tn ? 0 : floor_w(t[i], w),
                            tn ? 0 : part_of(&split, t[i]));
            fold(g, 1, !vn, vn ? 0 : v[i], v[i], v[i]);
        }
        char buf[64];
        for (int64_t r = 0; r < runs; r++) {
            const char *s = str(&out[0], r, buf);
            int kr = -1;
            for (int j = 0; j < 4; j++)
                if (!is_null(&out[0], r) && strcmp(s, names[j]) == 0) kr = j;
            bool tn = is_null(&out[1], r);
            int64_t tr = i64(&out[1], r);
            group *g =
                find(got, &n_got, kr, tn, tn ? 0 : floor_w(tr, w), tn ? 0 : part_of(&split, tr));
            int64_t c = i64(&out[3], r);
            CHECK(c == 0 || !is_null(&out[4], r));
            fold(g, i64(&out[2], r), c, c ? f64(&out[4], r) : 0, f64(&out[5], r), f64(&out[6], r));
        }
        CHECK_INT(n_got, n_want);
        for (size_t i = 0; i < n_want; i++) {
            group *g =
                find(got, &n_got, want[i].key, want[i].null_time, want[i].bucket, want[i].part);
            CHECK_INT(n_got, n_want); /* found, not added */
            CHECK_INT(g->count_star, want[i].count_star);
            CHECK_INT(g->count, want[i].count);
            CHECK(g->sum == want[i].sum);
            CHECK(want[i].count == 0 || (g->min == want[i].min && g->max == want[i].max));
        }
        for (int i = 0; i < 2 + N_STATES; i++) tl_array_release(&out[i]);
        tcol_free(&time);
        tcol_free(&keyc);
        tcol_free(&value);
        free(want);
        free(got);
        free(t);
        free(v);
        free(kk);
        free(k);
        free(code);
        free(tnull);
        free(vnull);
        free(knull);
    }
}

static void test_random_runs(void)
{
    random_runs(false);
}

static void test_random_runs_of_codes(void)
{
    random_runs(true);
}

/* Without keys, the runs of one bucket (rows of two series, sorted by
 * series then time) fold into one row; stored counts (int64) summed; max
 * with NaN above every number; an overflowing int64 sum declines. */
static void test_fold_without_keys(void)
{
    tl_run_split split = {100, 50, 399}; /* buckets 0, 100, 200, 300; keeps 50..399 */
    int64_t t[] = {0, 60, 110, 150, 250, 10, 70, 120, 210, 260, 400};
    int64_t n[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    double v[] = {9, 1, 2, NAN, 5, 9, 3, 7, 6, 8, 9};
    tcol time, count, value;
    tcol_ints(&time, "tsu:UTC", t, NULL, 11);
    tcol_ints(&count, "l", n, NULL, 11);
    tcol_doubles(&value, "g", v, NULL, 11);
    const struct ArrowArray *values[2] = {&count.array, &value.array};
    tl_run_input in = {&time.array, NULL, 0, values, 2, 11};
    const tl_run_state st[3] = {{TL_RUN_SUM_INT, 0}, {TL_RUN_MAX, 1}, {TL_RUN_MIN, 1}};
    struct ArrowArray out[4];
    int64_t runs = 0;
    tl_error err;
    CHECK_OK(tl_run_aggregate(&split, &in, st, 3, out, &runs, &err), &err);
    /* buckets 0 (rows 60, 70), 100 (110, 150, 120), 200 (250, 210, 260) */
    CHECK_INT(runs, 3);
    int64_t first[] = {60, 110, 250}, sums[] = {2 + 7, 3 + 4 + 8, 5 + 9 + 10};
    double max[] = {3, NAN, 8}, min[] = {1, 2, 5};
    for (int64_t r = 0; r < 3; r++) {
        CHECK_INT(i64(&out[0], r), first[r]);
        CHECK_INT(i64(&out[1], r), sums[r]);
        CHECK(isnan(max[r]) ? isnan(f64(&out[2], r)) : f64(&out[2], r) == max[r]);
        CHECK(f64(&out[3], r) == min[r]);
    }
    for (int i = 0; i < 4; i++) tl_array_release(&out[i]);
    n[1] = INT64_MAX;
    tcol_free(&count);
    tcol_ints(&count, "l", n, NULL, 11);
    values[0] = &count.array;
    CHECK(tl_run_aggregate(&split, &in, st, 3, out, &runs, &err) == TL_ERR_INVALID);
    tcol_free(&time);
    tcol_free(&count);
    tcol_free(&value);
}

/* A code past its dictionary is an error, not a read out of bounds. */
static void test_code_past_dictionary(void)
{
    tl_run_split split = {10, INT64_MIN, INT64_MAX};
    int64_t t[] = {1, 2}, codes[] = {0, 2};
    static const char *dict[] = {"a", "b"};
    double v[] = {1, 2};
    tcol time, key, value;
    tcol_ints(&time, "tsu:UTC", t, NULL, 2);
    tcol_dict(&key, "i", codes, NULL, 2, "u", dict, 2);
    tcol_doubles(&value, "g", v, NULL, 2);
    const struct ArrowArray *keys[1] = {&key.array}, *values[1] = {&value.array};
    tl_run_input in = {&time.array, keys, 1, values, 1, 2};
    struct ArrowArray out[2 + N_STATES];
    int64_t runs = 0;
    tl_error err;
    CHECK(tl_run_aggregate(&split, &in, states, N_STATES, out, &runs, &err) == TL_ERR_INVALID);
    tcol_free(&time);
    tcol_free(&key);
    tcol_free(&value);
}

static void test_wrong_types(void)
{
    tl_run_split split = {10, INT64_MIN, INT64_MAX};
    int64_t t[] = {1};
    tcol time, key, value;
    tcol_ints(&time, "tsu:UTC", t, NULL, 1);
    tcol_ints(&key, "l", t, NULL, 1); /* not a string */
    double v[] = {1};
    tcol_doubles(&value, "g", v, NULL, 1);
    const struct ArrowArray *keys[1] = {&key.array}, *values[1] = {&value.array};
    tl_run_input in = {&time.array, keys, 1, values, 1, 1};
    struct ArrowArray out[2 + N_STATES];
    int64_t runs = 0;
    tl_error err;
    CHECK(tl_run_aggregate(&split, &in, states, N_STATES, out, &runs, &err) == TL_ERR_INVALID);
    tcol_free(&time);
    tcol_free(&key);
    tcol_free(&value);
}

UNIT_TESTS(UNIT(test_hand_made), UNIT(test_all_null_values), UNIT(test_random_runs),
           UNIT(test_random_runs_of_codes), UNIT(test_code_past_dictionary), UNIT(test_wrong_types),
           UNIT(test_fold_without_keys))
