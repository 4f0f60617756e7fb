#include <math.h>
#include <stdio.h>

#include "arrow/parse.h"
#include "arrow/sort.h"
#include "test_arrow_helpers.h"
#include "unit.h"

/* ---- A reference: comparisons on the documented order, and a stable sort ---- */

static bool ref_null(const tl_array_view *v, int64_t i, const tl_array_view **ev, int64_t *ei)
{
    if (tl_view_is_null(v, i)) return true;
    *ev = v;
    *ei = i;
    if (v->is_dictionary) {
        *ev = v->dictionary;
        *ei = tl_view_dict_index(v, i);
        return tl_view_is_null(*ev, *ei);
    }
    return false;
}

static int ref_bytes(const tl_array_view *v, int64_t a, int64_t b)
{
    int64_t la, lb;
    const uint8_t *pa, *pb;
    if (v->type.id == TL_ATYPE_FIXED_BINARY) {
        la = lb = v->type.byte_width;
        pa = (const uint8_t *)v->values + (v->offset + a) * la;
        pb = (const uint8_t *)v->values + (v->offset + b) * lb;
    } else {
        pa = tl_view_bytes(v, a, &la);
        pb = tl_view_bytes(v, b, &lb);
    }
    int64_t n = la < lb ? la : lb;
    int c = n ? memcmp(pa, pb, (size_t)n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (la > lb) - (la < lb);
}

/* Compares non-null values; *nan_a / *nan_b report NaNs (ordered by the caller). */
static int ref_values(const tl_array_view *v, int64_t a, int64_t b, bool *nan_a, bool *nan_b)
{
    *nan_a = *nan_b = false;
    switch (v->type.id) {
    case TL_ATYPE_FLOAT32:
    case TL_ATYPE_FLOAT64: {
        double x = tv_double(v, a), y = tv_double(v, b);
        *nan_a = isnan(x);
        *nan_b = isnan(y);
        if (*nan_a || *nan_b) return 0;
        if (x != y) return x < y ? -1 : 1;
        return (int)(signbit(y) != 0) - (int)(signbit(x) != 0); /* -0.0 first */
    }
    case TL_ATYPE_UINT64: {
        uint64_t x = (uint64_t)tv_int(v, a), y = (uint64_t)tv_int(v, b);
        return (x > y) - (x < y);
    }
    case TL_ATYPE_DECIMAL128: {
        tl_i128 x = tl_load_i128((const uint8_t *)v->values + (v->offset + a) * 16);
        tl_i128 y = tl_load_i128((const uint8_t *)v->values + (v->offset + b) * 16);
        return (x > y) - (x < y);
    }
    case TL_ATYPE_STRING:
    case TL_ATYPE_LARGE_STRING:
    case TL_ATYPE_BINARY:
    case TL_ATYPE_LARGE_BINARY:
    case TL_ATYPE_FIXED_BINARY:
        return ref_bytes(v, a, b);
    default: {
        int64_t x = tv_int(v, a), y = tv_int(v, b);
        return (x > y) - (x < y);
    }
    }
}

static int ref_key(const tl_sort_key *k, int64_t a, int64_t b)
{
    const tl_array_view *va = NULL, *vb = NULL;
    int64_t ia = 0, ib = 0;
    bool na = ref_null(k->view, a, &va, &ia), nb = ref_null(k->view, b, &vb, &ib);
    if (na || nb) {
        if (na && nb) return 0;
        return na == k->nulls_first ? -1 : 1;
    }
    bool nan_a, nan_b;
    int c = ref_values(va, ia, ib, &nan_a, &nan_b);
    if (nan_a || nan_b) return nan_a && nan_b ? 0 : nan_a ? 1 : -1;
    return k->descending ? -c : c;
}

static const tl_sort_key *ref_keys;
static size_t ref_n_keys;

static int ref_compare(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    for (size_t k = 0; k < ref_n_keys; k++) {
        int c = ref_key(&ref_keys[k], a, b);
        if (c) return c;
    }
    return (a > b) - (a < b); /* stability: original order */
}

static void check_sort(const tl_sort_key *keys, size_t n_keys, int64_t n, const char *what)
{
    int64_t *got = NULL, *want = malloc((size_t)(n ? n : 1) * sizeof *want);
    tl_error err;
    for (int64_t i = 0; i < n; i++) want[i] = i;
    ref_keys = keys;
    ref_n_keys = n_keys;
    qsort(want, (size_t)n, sizeof *want, ref_compare);
    CHECK_OK(tl_arrow_sort_indices(keys, n_keys, n, &got, &err), &err);
    for (int64_t i = 0; got && i < n; i++)
        if (got[i] != want[i]) {
            unit_fail(__FILE__, __LINE__, "%s: position %lld is row %lld, expected %lld", what,
                      (long long)i, (long long)got[i], (long long)want[i]);
            break;
        }
    bool sorted = false, expect_sorted = true;
    for (int64_t i = 0; i < n; i++) expect_sorted &= want[i] == i;
    CHECK_OK(tl_arrow_is_sorted(keys, n_keys, n, &sorted, &err), &err);
    CHECK(sorted == expect_sorted);
    free(got);
    free(want);
}

/* ---- Random columns ---- */

typedef enum gen_kind { GEN_SMALL, GEN_FULL, GEN_FLOAT, GEN_STRING, GEN_DICT } gen_kind;

static void random_column(tcol *c, const char *format, gen_kind kind, int64_t n, uint64_t *st,
                          int null_pct)
{
    char *nulls = malloc((size_t)n + 1);
    for (int64_t i = 0; i < n; i++) nulls[i] = (int)(trand(st) % 100) < null_pct ? 'x' : '.';
    nulls[n] = '\0';
    if (kind == GEN_FLOAT) {
        double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        const double specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -1.5};
        for (int64_t i = 0; i < n; i++) {
            uint64_t r = trand(st);
            v[i] = r % 4 == 0 ? specials[(r >> 8) % 8] : (double)(int64_t)(r >> 40) / 7.0 - 1e5;
        }
        tcol_doubles(c, format, v, nulls, n);
        free(v);
    } else if (kind == GEN_STRING || kind == GEN_DICT) {
        static const char *words[] = {"",
                                      "a",
                                      "ab",
                                      "abc",
                                      "b",
                                      "ba",
                                      "zz",
                                      "\xff",
                                      "a\x01",
                                      "longer string value",
                                      "longer string valuf",
                                      "A"};
        int nw = sizeof words / sizeof words[0];
        if (kind == GEN_DICT) {
            int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
            for (int64_t i = 0; i < n; i++) idx[i] = (int64_t)(trand(st) % (uint64_t)nw);
            /* A dictionary with a duplicate ("ab" twice) and a null entry. */
            const char *dict[] = {"",   "a",  "ab",    "abc", "b", "ab",
                                  "zz", NULL, "a\x01", "q",   "r", "A"};
            tcol_dict(c, "s", idx, nulls, n, format, dict, nw);
            free(idx);
        } else {
            const char **v = malloc((size_t)(n ? n : 1) * sizeof *v);
            char(*own)[24] = malloc((size_t)(n ? n : 1) * sizeof *own);
            for (int64_t i = 0; i < n; i++) {
                uint64_t r = trand(st);
                if (nulls[i] == 'x') {
                    v[i] = NULL;
                } else if (strcmp(format, "w:3") == 0) {
                    snprintf(own[i], sizeof own[i], "%03u", (unsigned)(r % 50));
                    v[i] = own[i];
                } else if (r % 3 == 0) {
                    snprintf(own[i], sizeof own[i], "k%llu", (unsigned long long)(r % 1000));
                    v[i] = own[i];
                } else {
                    v[i] = words[r % (uint64_t)nw];
                }
            }
            tcol_strs(c, format, v, n);
            free(v);
            free(own);
        }
    } else {
        int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        for (int64_t i = 0; i < n; i++) {
            uint64_t r = trand(st);
            bool is_unsigned = format[0] >= 'A' && format[0] <= 'Z';
            v[i] = kind == GEN_FULL ? (int64_t)r : (int64_t)(r % 7) - (is_unsigned ? 0 : 3);
            if (kind == GEN_FULL && r % 5 == 0) v[i] = r % 2 ? INT64_MAX : INT64_MIN;
        }
        tcol_ints(c, format, v, nulls, n);
        free(v);
    }
    free(nulls);
}

/* Full-range values of a narrow type must fit it. */
static gen_kind fit_kind(const char *format, gen_kind kind)
{
    if (kind != GEN_FULL) return kind;
    return (strcmp(format, "l") == 0 || strcmp(format, "L") == 0 || strncmp(format, "ts", 2) == 0)
               ? GEN_FULL
               : GEN_SMALL;
}

static void test_sort_each_type_random(void)
{
    struct {
        const char *format;
        gen_kind kind;
    } types[] = {
        {"c", GEN_SMALL},    {"s", GEN_SMALL},   {"i", GEN_SMALL},      {"l", GEN_SMALL},
        {"l", GEN_FULL},     {"L", GEN_FULL},    {"C", GEN_SMALL},      {"I", GEN_SMALL},
        {"b", GEN_SMALL},    {"tdD", GEN_SMALL}, {"tsu:UTC", GEN_FULL}, {"f", GEN_FLOAT},
        {"g", GEN_FLOAT},    {"u", GEN_STRING},  {"U", GEN_STRING},     {"z", GEN_STRING},
        {"w:3", GEN_STRING}, {"u", GEN_DICT},    {"z", GEN_DICT},       {"d:10,2", GEN_SMALL},
    };
    int64_t sizes[] = {0, 1, 2, 47, 49, 300, 5000};
    uint64_t st = 42;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int flags = 0; flags < 4; flags++) {
                tcol c;
                gen_kind kind = fit_kind(types[t].format, types[t].kind);
                if (types[t].format[0] == 'b') kind = GEN_SMALL;
                random_column(&c, types[t].format, kind, sizes[s], &st, flags == 3 ? 0 : 15);
                tl_sort_key key = {&c.view, flags & 1, (flags & 2) != 0};
                char what[64];
                snprintf(what, sizeof what, "%s n=%lld flags=%d", types[t].format,
                         (long long)sizes[s], flags);
                check_sort(&key, 1, sizes[s], what);
                tcol_free(&c);
            }
}

static void test_sort_bools_fix(void)
{
    int64_t v[] = {1, 0, 1, 0, 0, 1};
    tcol c;
    tcol_ints(&c, "b", v, "..x...", 6);
    tl_sort_key key = {&c.view, false, true};
    int64_t *idx;
    tl_error err;
    CHECK_OK(tl_arrow_sort_indices(&key, 1, 6, &idx, &err), &err);
    int64_t want[] = {2, 1, 3, 4, 0, 5};
    for (int i = 0; i < 6; i++) CHECK_INT(idx[i], want[i]);
    free(idx);
    tcol_free(&c);
}

static void test_sort_float_order(void)
{
    double v[] = {NAN, 1.0, 0.0, -0.0, -INFINITY, 7.0, INFINITY, -NAN, 0.0};
    tcol c;
    tcol_doubles(&c, "g", v, ".....x...", 9);
    tl_error err;
    int64_t *idx;
    tl_sort_key asc = {&c.view, false, false};
    CHECK_OK(tl_arrow_sort_indices(&asc, 1, 9, &idx, &err), &err);
    int64_t want_asc[] = {4, 3, 2, 8, 1, 6, 0, 7, 5}; /* -inf -0 0 0 1 inf NaN NaN null */
    for (int i = 0; i < 9; i++) CHECK_INT(idx[i], want_asc[i]);
    free(idx);
    tl_sort_key desc = {&c.view, true, true};
    CHECK_OK(tl_arrow_sort_indices(&desc, 1, 9, &idx, &err), &err);
    int64_t want_desc[] = {5, 6, 1, 2, 8, 3, 4, 0, 7}; /* null inf 1 0 0 -0 -inf NaN NaN */
    for (int i = 0; i < 9; i++) CHECK_INT(idx[i], want_desc[i]);
    free(idx);
    tcol_free(&c);
}

static void test_sort_stability_and_multikey(void)
{
    uint64_t st = 9;
    int64_t sizes[] = {100, 4000, 70000};
    for (size_t s = 0; s < 3; s++) {
        int64_t n = sizes[s];
        tcol part, series, series2, time, wide;
        random_column(&part, "i", GEN_SMALL, n, &st, 0);
        random_column(&series, "u", GEN_STRING, n, &st, 5);
        random_column(&series2, "u", GEN_DICT, n, &st, 5);
        random_column(&time, "l", GEN_FULL, n, &st, 2);
        random_column(&wide, "g", GEN_FLOAT, n, &st, 3);
        tl_sort_key keys[] = {{&part.view, false, false},
                              {&series.view, false, true},
                              {&series2.view, true, false},
                              {&time.view, false, false},
                              {&wide.view, true, true}};
        check_sort(keys, 5, n, "five keys");
        check_sort(keys, 2, n, "two keys (many ties: stability)");
        tl_sort_key two_wide[] = {{&time.view, true, false}, {&time.view, false, true}};
        check_sort(two_wide, 2, n, "two 65-bit keys");
        tcol_free(&part);
        tcol_free(&series);
        tcol_free(&series2);
        tcol_free(&time);
        tcol_free(&wide);
    }
}

static void test_sort_wide_decimal(void)
{
    /* Values more than 2^64 apart take the two-word path. */
    int64_t n = 600;
    tl_error err;
    tl_arrow_type t;
    tl_arrow_type_parse("d:38,0", &t, NULL);
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    uint64_t st = 5;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = trand(&st);
        if (r % 11 == 0) {
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
            continue;
        }
        tl_i128 v = (tl_i128)(int64_t)trand(&st) * (tl_i128)(r % 1000000007) + (tl_i128)(r % 13);
        if (r % 7 == 0) v = -v;
        CHECK_OK(tl_builder_append_decimal(&b, v, &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    tl_builder_free(&b);
    tcol c;
    tcol_adopt(&c, "d:38,0", &a);
    for (int flags = 0; flags < 4; flags++) {
        tl_sort_key key = {&c.view, flags & 1, (flags & 2) != 0};
        check_sort(&key, 1, n, "wide decimal");
    }
    tcol_free(&c);
}

static void test_sort_sorted_input_is_identity(void)
{
    int64_t n = 100000;
    int64_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = i / 3;
    tcol c;
    tcol_ints(&c, "l", v, NULL, n);
    tl_sort_key key = {&c.view, false, false};
    int64_t *idx;
    bool sorted;
    tl_error err;
    CHECK_OK(tl_arrow_is_sorted(&key, 1, n, &sorted, &err), &err);
    CHECK(sorted);
    CHECK_OK(tl_arrow_sort_indices(&key, 1, n, &idx, &err), &err);
    for (int64_t i = 0; i < n; i++)
        if (idx[i] != i) {
            CHECK_INT(idx[i], i);
            break;
        }
    free(idx);
    key.descending = true;
    CHECK_OK(tl_arrow_is_sorted(&key, 1, n, &sorted, &err), &err);
    CHECK(!sorted);
    CHECK_OK(tl_arrow_sort_indices(&key, 1, n, &idx, &err), &err);
    CHECK_INT(idx[0], n - 1); /* 33333 is alone; 33332 is rows n-4..n-2 in order */
    CHECK_INT(idx[1], n - 4);
    CHECK_INT(idx[3], n - 2);
    CHECK_INT(idx[n - 1], 2);
    free(idx);
    free(v);
    tcol_free(&c);
}

static void test_sort_strings_sharing_prefixes(void)
{
    /* Many distinct values whose first 8 bytes tie ("region-1", "region-10".."region-19")
     * exercise the prefix radix sort of the distinct values and its tie-breaking. */
    int64_t n = 3000;
    const char **v = malloc((size_t)n * sizeof *v);
    char(*own)[32] = malloc((size_t)n * sizeof *own);
    uint64_t st = 77;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = trand(&st);
        snprintf(own[i], sizeof own[i], r % 2 ? "region-%d" : "a-much-longer-prefix-%d",
                 (int)(r % 997));
        v[i] = own[i];
    }
    tcol c;
    tcol_strs(&c, "u", v, n);
    for (int flags = 0; flags < 2; flags++) {
        tl_sort_key key = {&c.view, flags, false};
        check_sort(&key, 1, n, "shared prefixes");
    }
    tcol_free(&c);
    free(v);
    free(own);
}

static void test_sort_errors(void)
{
    int64_t v[] = {1, 2, 3};
    tcol c;
    tcol_ints(&c, "l", v, NULL, 3);
    tl_sort_key key = {&c.view, false, false};
    int64_t *idx;
    tl_error err;
    CHECK_INT(tl_arrow_sort_indices(&key, 1, 4, &idx, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "sort: key 0 has 3 rows, expected 4");
    CHECK(idx == NULL);
    CHECK_OK(tl_arrow_sort_indices(NULL, 0, 3, &idx, &err), &err); /* no key: identity */
    CHECK_INT(idx[2], 2);
    free(idx);
    tcol_free(&c);

    const char *dict[] = {"a"};
    int64_t bad[] = {0, 5};
    tcol_dict(&c, "i", bad, NULL, 2, "u", dict, 1);
    key.view = &c.view;
    CHECK_INT(tl_arrow_sort_indices(&key, 1, 2, &idx, &err), TL_ERR_INVALID);
    CHECK_STR(
        err.message,
        "sort key 0: dictionary index 5 (row 1) is out of range for a dictionary of 1 values");
    tcol_free(&c);

    const char *s[] = {"ab", "cd", "ef"};
    tcol_strs(&c, "u", s, 3);
    ((int32_t *)c.array.buffers[1])[1] = 5;
    key.view = &c.view;
    CHECK_INT(tl_arrow_sort_indices(&key, 1, 3, &idx, &err), TL_ERR_INVALID);
    tcol_free(&c);
}

UNIT_TESTS(UNIT(test_sort_each_type_random), UNIT(test_sort_bools_fix), UNIT(test_sort_float_order),
           UNIT(test_sort_stability_and_multikey), UNIT(test_sort_wide_decimal),
           UNIT(test_sort_sorted_input_is_identity), UNIT(test_sort_strings_sharing_prefixes),
           UNIT(test_sort_errors))
