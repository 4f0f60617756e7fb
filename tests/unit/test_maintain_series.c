/* The series ranks the compaction merge compares rows by
 * (table/maintain_series.h): checked against a direct comparison of the
 * values in the merge's order (column by column, nulls first, integers by
 * value, bytes lexicographically with a prefix first). */
#include "table/maintain_series.h"
#include "test_arrow_helpers.h"
#include "unit.h"

#define ROWS 64

/* Of every length class the run shortcut compares apart (under 4 bytes, 4 to
 * 7, 8 to 16, longer), with words of one length that differ at either end;
 * the last three are left out of some tests. */
static const char *const WORDS[] = {"",
                                    "a",
                                    "ab",
                                    "abc",
                                    "b",
                                    "ba",
                                    "eu-w",
                                    "eu-x",
                                    "fu-w",
                                    "host_0121",
                                    "xost_0120",
                                    "us-east-1a",
                                    "us-east-1b",
                                    "ap-south-1-long-name",
                                    "ap-south-1-long-namf",
                                    "host_012",
                                    "host_0120",
                                    NULL};
#define N_WORDS (sizeof WORDS / sizeof WORDS[0])

typedef struct rows {
    const char *host[ROWS];
    int64_t dev[ROWS];
    char nulls[ROWS + 1];
    tcol cols[2];
    int32_t ids[ROWS];
} rows;

/* Rows sorted or not, with runs of one series (the lookup's shortcut). */
static void make_rows(rows *r, uint64_t *seed, size_t n_words)
{
    for (int i = 0; i < ROWS; i++) {
        bool repeat = i > 0 && trand(seed) % 3 == 0;
        r->host[i] = repeat ? r->host[i - 1] : WORDS[trand(seed) % n_words];
        r->dev[i] = repeat ? r->dev[i - 1] : (int64_t)(trand(seed) % 7) - 3;
        r->nulls[i] = repeat ? r->nulls[i - 1] : trand(seed) % 9 == 0 ? 'x' : '.';
    }
    r->nulls[ROWS] = '\0';
    tcol_strs(&r->cols[0], "u", r->host, ROWS);
    tcol_ints(&r->cols[1], "i", r->dev, r->nulls, ROWS);
}

static void free_rows(rows *r)
{
    tcol_free(&r->cols[0]);
    tcol_free(&r->cols[1]);
}

static int sign(int64_t x)
{
    return (x > 0) - (x < 0);
}

static int ref_cmp(const rows *a, int i, const rows *b, int j)
{
    const char *x = a->host[i], *y = b->host[j];
    if (x == NULL || y == NULL) {
        if (x != y) return x == NULL ? -1 : 1;
    } else if (strcmp(x, y) != 0) {
        return sign(strcmp(x, y));
    }
    bool nx = a->nulls[i] == 'x', ny = b->nulls[j] == 'x';
    if (nx || ny) return ny - nx;
    return sign(a->dev[i] - b->dev[j]);
}

static tl_series_set new_set(void)
{
    int8_t width[2] = {0, 32};
    tl_series_set s;
    tl_series_set_init(&s, width, 2);
    return s;
}

static tl_array_view views[2];

static const tl_array_view *views_of(rows *r)
{
    views[0] = r->cols[0].view;
    views[1] = r->cols[1].view;
    return views;
}

static void test_ranks_follow_the_merge_order(void)
{
    uint64_t seed = 7;
    for (int round = 0; round < 20; round++) {
        rows a, b;
        make_rows(&a, &seed, N_WORDS);
        make_rows(&b, &seed, N_WORDS);
        tl_series_set s = new_set();
        tl_error err;
        bool found;
        CHECK_OK(tl_series_set_lookup(&s, views_of(&a), ROWS, a.ids, &found, &err), &err);
        CHECK(found);
        CHECK_OK(tl_series_set_lookup(&s, views_of(&b), ROWS, b.ids, &found, &err), &err);
        CHECK_OK(tl_series_set_rank(&s, &err), &err);
        tl_series_set_ids_to_ranks(&s, a.ids, ROWS);
        tl_series_set_ids_to_ranks(&s, b.ids, ROWS);
        rows *both[2] = {&a, &b};
        int wrong = 0;
        for (int x = 0; x < 2; x++)
            for (int y = 0; y < 2; y++)
                for (int i = 0; i < ROWS; i++)
                    for (int j = 0; j < ROWS; j++)
                        wrong += sign(both[x]->ids[i] - both[y]->ids[j]) !=
                                 ref_cmp(both[x], i, both[y], j);
        if (wrong) unit_fail(__FILE__, __LINE__, "round %d: %d pairs ranked wrong", round, wrong);
        tl_series_set_free(&s);
        free_rows(&a);
        free_rows(&b);
    }
}

/* After the ranking a row group of known series gets their ranks, and one
 * with a series never seen is refused (the merge compares its bytes). */
static void test_lookup_after_ranking(void)
{
    uint64_t seed = 11;
    rows a, known, other;
    make_rows(&a, &seed, N_WORDS - 3); /* no "host_012", "host_0120" or null */
    make_rows(&known, &seed, N_WORDS - 3);
    tl_series_set s = new_set();
    tl_error err;
    bool found;
    for (int i = 0; i < ROWS; i++) { /* every series of `known` is in `a` */
        known.host[i] = a.host[ROWS - 1 - i];
        known.dev[i] = a.dev[ROWS - 1 - i];
        known.nulls[i] = a.nulls[ROWS - 1 - i];
    }
    free_rows(&known);
    tcol_strs(&known.cols[0], "u", known.host, ROWS);
    tcol_ints(&known.cols[1], "i", known.dev, known.nulls, ROWS);
    CHECK_OK(tl_series_set_lookup(&s, views_of(&a), ROWS, a.ids, &found, &err), &err);
    CHECK_OK(tl_series_set_rank(&s, &err), &err);
    tl_series_set_ids_to_ranks(&s, a.ids, ROWS);
    CHECK_OK(tl_series_set_lookup(&s, views_of(&known), ROWS, known.ids, &found, &err), &err);
    CHECK(found);
    for (int i = 0; i < ROWS; i++) CHECK_INT(known.ids[i], a.ids[ROWS - 1 - i]);
    make_rows(&other, &seed, N_WORDS);
    other.host[ROWS - 1] = "host_0120";
    free_rows(&other);
    tcol_strs(&other.cols[0], "u", other.host, ROWS);
    tcol_ints(&other.cols[1], "i", other.dev, other.nulls, ROWS);
    CHECK_OK(tl_series_set_lookup(&s, views_of(&other), ROWS, other.ids, &found, &err), &err);
    CHECK(!found);
    tl_series_set_free(&s);
    free_rows(&a);
    free_rows(&known);
    free_rows(&other);
}

/* Runs of keys that differ only at one end of a word the run shortcut
 * compares (the first or last 4 or 8 bytes, or past 16): each is a series of
 * its own, and a repeat is the same one. */
static void test_runs_of_near_keys(void)
{
    static const char *const host[] = {"host_0120",
                                       "host_0121",
                                       "host_0121",
                                       "xost_0121",
                                       "eu-w",
                                       "eu-x",
                                       "fu-x",
                                       "fu-x",
                                       "ap-south-1-long-name",
                                       "ap-south-1-long-namf",
                                       "bp-south-1-long-namf",
                                       "us-east-1a",
                                       "us-east-1b"};
    enum { N = sizeof host / sizeof host[0] };
    int64_t dev[N] = {0};
    int32_t ids[N];
    tcol cols[2];
    tcol_strs(&cols[0], "u", host, N);
    tcol_ints(&cols[1], "i", dev, NULL, N);
    tl_array_view v[2] = {cols[0].view, cols[1].view};
    tl_series_set s = new_set();
    tl_error err;
    bool found;
    CHECK_OK(tl_series_set_lookup(&s, v, N, ids, &found, &err), &err);
    CHECK_INT(s.n, N - 2);
    for (int i = 1; i < N; i++)
        CHECK((ids[i] == ids[i - 1]) == (strcmp(host[i], host[i - 1]) == 0));
    tl_series_set_free(&s);
    tcol_free(&cols[0]);
    tcol_free(&cols[1]);
}

/* Many series: the set grows (its keys, ids and slots) and still ranks
 * them in order. */
static void test_many_series(void)
{
    enum { N = 5000 };
    static int64_t dev[N];
    static const char *host[N];
    static char names[N][8];
    static int32_t ids[N];
    uint64_t seed = 3;
    for (int i = 0; i < N; i++) {
        dev[i] = (int64_t)(trand(&seed) % 1000000) - 500000;
        snprintf(names[i], sizeof names[i], "h%d", (int)(trand(&seed) % 7));
        host[i] = names[i];
    }
    tcol cols[2];
    tcol_strs(&cols[0], "u", host, N);
    tcol_ints(&cols[1], "i", dev, NULL, N);
    tl_array_view v[2] = {cols[0].view, cols[1].view};
    tl_series_set s = new_set();
    tl_error err;
    bool found;
    static int32_t again[N];
    CHECK_OK(tl_series_set_lookup(&s, v, N, ids, &found, &err), &err);
    size_t distinct = s.n;
    CHECK_OK(tl_series_set_lookup(&s, v, N, again, &found, &err), &err);
    CHECK(s.n == distinct && memcmp(ids, again, sizeof ids) == 0); /* each found again */
    CHECK_OK(tl_series_set_rank(&s, &err), &err);
    tl_series_set_ids_to_ranks(&s, ids, N);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j += 7) {
            int c = strcmp(host[i], host[j]);
            c = c ? (c > 0) - (c < 0) : sign(dev[i] - dev[j]);
            wrong += sign(ids[i] - ids[j]) != c;
        }
    CHECK_INT(wrong, 0);
    tl_series_set_free(&s);
    tcol_free(&cols[0]);
    tcol_free(&cols[1]);
}

UNIT_TESTS(UNIT(test_many_series), UNIT(test_runs_of_near_keys),
           UNIT(test_ranks_follow_the_merge_order), UNIT(test_lookup_after_ranking))
