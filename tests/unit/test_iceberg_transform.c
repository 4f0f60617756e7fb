#include <stdlib.h>

#include "iceberg/manifest.h"
#include "iceberg/transform.h"
#include "unit.h"

static tl_ice_transform tr(tl_ice_transform_kind k)
{
    return (tl_ice_transform){k, 0};
}

static void test_parse_and_format(void)
{
    const char *names[] = {"identity", "year",       "month",       "day",
                           "hour",     "bucket[16]", "truncate[4]", "void"};
    tl_error err;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        tl_ice_transform t;
        CHECK_OK(tl_ice_transform_parse(names[i], &t, &err), &err);
        CHECK_INT(t.kind, (int)i);
        char buf[TL_ICE_TRANSFORM_STR_MAX];
        tl_ice_transform_format(t, buf, sizeof buf);
        CHECK_STR(buf, names[i]);
    }
    tl_ice_transform t;
    CHECK_OK(tl_ice_transform_parse("DAY", &t, &err), &err);
    CHECK_INT(t.kind, TL_ICE_TRANSFORM_DAY);
    CHECK_OK(tl_ice_transform_parse("bucket[2147483647]", &t, &err), &err);
    CHECK_INT(t.param, 2147483647);
    const char *bad[] = {"",
                         "days",
                         "bucket",
                         "bucket[]",
                         "bucket[0]",
                         "bucket[x]",
                         "bucket[3",
                         "bucket[3]x",
                         "truncate[-1]",
                         "bucket[2147483648]",
                         "bucket[99999999999999999999]",
                         "dayx",
                         "zorder"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_INT(tl_ice_transform_parse(bad[i], &t, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "zorder") != NULL);
}

typedef struct vec {
    int64_t micros, day, month, year, hour;
    const char *day_s, *hour_s, *month_s, *year_s;
} vec;

/* Computed with Python's datetime (proleptic Gregorian, UTC). */
static const vec vectors[] = {
    {0, 0, 0, 0, 0, "1970-01-01", "1970-01-01-00", "1970-01", "1970"},
    {1767225600000000, 20454, 672, 56, 490896, "2026-01-01", "2026-01-01-00", "2026-01", "2026"},
    {1767225600000000 + 13 * 3600000000LL + 1, 20454, 672, 56, 490909, "2026-01-01",
     "2026-01-01-13", "2026-01", "2026"},
    {-1, -1, -1, -1, -1, "1969-12-31", "1969-12-31-23", "1969-12", "1969"},
    {-86400000000LL, -1, -1, -1, -24, "1969-12-31", "1969-12-31-00", "1969-12", "1969"},
    {-86400000001LL, -2, -1, -1, -25, "1969-12-30", "1969-12-30-23", "1969-12", "1969"},
    {-2203872833000000LL, -25508, -838, -70, -612187, "1900-03-01", "1900-03-01-05", "1900-03",
     "1900"},
    {-11670912001000000LL, -135081, -4439, -370, -3241921, "1600-02-29", "1600-02-29-23", "1600-02",
     "1600"},
    {951825600000000LL, 11016, 361, 30, 264396, "2000-02-29", "2000-02-29-12", "2000-02", "2000"},
    {9223372036000000LL, 106751, 3507, 292, 2562047, "2262-04-11", "2262-04-11-23", "2262-04",
     "2262"},
};

static void check_value(tl_ice_transform_kind k, int64_t micros, int64_t want, const char *text)
{
    int64_t got = tl_ice_transform_apply(tr(k), micros);
    if (got != want)
        unit_fail(__FILE__, __LINE__, "transform %d of %lld = %lld, expected %lld", (int)k,
                  (long long)micros, (long long)got, (long long)want);
    char buf[48];
    tl_ice_transform_format_value(tr(k), got, buf, sizeof buf);
    CHECK_STR(buf, text);
}

static void test_apply_vectors(void)
{
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        const vec *v = &vectors[i];
        check_value(TL_ICE_TRANSFORM_DAY, v->micros, v->day, v->day_s);
        check_value(TL_ICE_TRANSFORM_HOUR, v->micros, v->hour, v->hour_s);
        check_value(TL_ICE_TRANSFORM_MONTH, v->micros, v->month, v->month_s);
        check_value(TL_ICE_TRANSFORM_YEAR, v->micros, v->year, v->year_s);
        CHECK_INT(tl_ice_transform_apply(tr(TL_ICE_TRANSFORM_IDENTITY), v->micros), v->micros);
        /* Dates: the same calendar from the day number. */
        CHECK_INT(tl_ice_transform_apply_date(tr(TL_ICE_TRANSFORM_MONTH), (int32_t)v->day),
                  v->month);
        CHECK_INT(tl_ice_transform_apply_date(tr(TL_ICE_TRANSFORM_YEAR), (int32_t)v->day), v->year);
        CHECK_INT(tl_ice_transform_apply_date(tr(TL_ICE_TRANSFORM_DAY), (int32_t)v->day), v->day);
    }
}

static void test_extremes_do_not_overflow(void)
{
    /* INT64_MIN/MAX micros are about +-292,000 years: must compute without UB. */
    int64_t ext[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX};
    for (size_t i = 0; i < 3; i++)
        for (int k = TL_ICE_TRANSFORM_IDENTITY; k <= TL_ICE_TRANSFORM_VOID; k++) {
            char buf[48];
            int64_t v = tl_ice_transform_apply(tr((tl_ice_transform_kind)k), ext[i]);
            tl_ice_transform_format_value(tr((tl_ice_transform_kind)k), v, buf, sizeof buf);
        }
    CHECK_INT(tl_ice_transform_apply(tr(TL_ICE_TRANSFORM_YEAR), INT64_MAX), 294247 - 1970);
    char buf[48];
    tl_ice_transform_format_value(tr(TL_ICE_TRANSFORM_DAY), 106751991, buf, sizeof buf);
    CHECK_STR(buf, "+294247-01-10");
}

static void test_apply_many_matches_scalar(void)
{
    enum { N = 5000 };
    int64_t *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* Runs of equal days and random jumps across +-300 years. */
        in[i] = i % 7 ? in[i - 1] + (int64_t)(x % 1000)
                      : (int64_t)(x % 19000000000000000ULL) - 9500000000000000LL;
    }
    for (int k = TL_ICE_TRANSFORM_IDENTITY; k <= TL_ICE_TRANSFORM_HOUR; k++) {
        tl_ice_transform t = tr((tl_ice_transform_kind)k);
        tl_ice_transform_apply_many(t, in, N, out);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += out[i] != tl_ice_transform_apply(t, in[i]);
        CHECK_INT(bad, 0);
    }
    /* In place. */
    int64_t first = tl_ice_transform_apply(tr(TL_ICE_TRANSFORM_MONTH), in[0]);
    tl_ice_transform_apply_many(tr(TL_ICE_TRANSFORM_MONTH), in, N, in);
    CHECK_INT(in[0], first);
    free(in);
    free(out);
}

static void test_types(void)
{
    tl_error err;
    tl_ice_type ts = {.id = TL_ICE_TIMESTAMPTZ}, date = {.id = TL_ICE_DATE},
                str = {.id = TL_ICE_STRING}, out;
    CHECK_OK(tl_ice_transform_check(tr(TL_ICE_TRANSFORM_HOUR), &ts, &err), &err);
    CHECK_OK(tl_ice_transform_check(tr(TL_ICE_TRANSFORM_DAY), &date, &err), &err);
    CHECK_INT(tl_ice_transform_check(tr(TL_ICE_TRANSFORM_HOUR), &date, &err), TL_ERR_INVALID);
    CHECK_INT(tl_ice_transform_check(tr(TL_ICE_TRANSFORM_DAY), &str, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "day") && strstr(err.message, "string"));
    tl_ice_transform_result_type(tr(TL_ICE_TRANSFORM_DAY), &ts, &out);
    CHECK_INT(out.id, TL_ICE_DATE);
    tl_ice_transform_result_type(tr(TL_ICE_TRANSFORM_HOUR), &ts, &out);
    CHECK_INT(out.id, TL_ICE_INT);
    tl_ice_transform_result_type(tr(TL_ICE_TRANSFORM_IDENTITY), &str, &out);
    CHECK_INT(out.id, TL_ICE_STRING);
}

static void test_names_and_paths(void)
{
    tl_error err;
    char *name = NULL;
    CHECK_OK(tl_ice_partition_field_name("time", tr(TL_ICE_TRANSFORM_DAY), &name, &err), &err);
    CHECK_STR(name, "time_day");
    free(name);
    CHECK_OK(tl_ice_partition_field_name("ts", tr(TL_ICE_TRANSFORM_HOUR), &name, &err), &err);
    CHECK_STR(name, "ts_hour");
    free(name);
    CHECK_OK(tl_ice_partition_field_name("ts", tr(TL_ICE_TRANSFORM_IDENTITY), &name, &err), &err);
    CHECK_STR(name, "ts");
    free(name);

    tl_buf b = {0};
    tl_ice_value day = {.kind = TL_ICE_VALUE_INT, .i = 20454},
                 month = {.kind = TL_ICE_VALUE_INT, .i = 672};
    tl_ice_value null = {.kind = TL_ICE_VALUE_NULL};
    tl_ice_type ts = {.id = TL_ICE_TIMESTAMPTZ}, date = {.id = TL_ICE_DATE},
                text = {.id = TL_ICE_STRING}, boolean = {.id = TL_ICE_BOOLEAN};
    CHECK_OK(
        tl_ice_partition_path_segment("time_day", tr(TL_ICE_TRANSFORM_DAY), &ts, &day, &b, &err),
        &err);
    CHECK_STR((char *)b.data, "time_day=2026-01-01");
    b.len = 0;
    CHECK_OK(
        tl_ice_partition_path_segment("a b/c", tr(TL_ICE_TRANSFORM_MONTH), &date, &month, &b, &err),
        &err);
    CHECK_STR((char *)b.data, "a%20b%2Fc=2026-01");
    b.len = 0;
    CHECK_OK(
        tl_ice_partition_path_segment("t_hour", tr(TL_ICE_TRANSFORM_HOUR), &ts, &null, &b, &err),
        &err);
    CHECK_STR((char *)b.data, "t_hour=null");
    /* Identity values in their human forms: a date as a date, escaped strings. */
    b.len = 0;
    CHECK_OK(
        tl_ice_partition_path_segment("d", tr(TL_ICE_TRANSFORM_IDENTITY), &date, &day, &b, &err),
        &err);
    CHECK_STR((char *)b.data, "d=2026-01-01");
    b.len = 0;
    char eu[] = "eu/west 1=\xc3\xa9";
    tl_ice_value s = {.kind = TL_ICE_VALUE_STRING, .bytes = (uint8_t *)eu, .len = strlen(eu)};
    CHECK_OK(
        tl_ice_partition_path_segment("region", tr(TL_ICE_TRANSFORM_IDENTITY), &text, &s, &b, &err),
        &err);
    CHECK_STR((char *)b.data, "region=eu%2Fwest%201%3D%C3%A9");
    b.len = 0;
    tl_ice_value yes = {.kind = TL_ICE_VALUE_BOOL, .i = 1};
    CHECK_OK(tl_ice_partition_path_segment("ok", tr(TL_ICE_TRANSFORM_IDENTITY), &boolean, &yes, &b,
                                           &err),
             &err);
    CHECK_STR((char *)b.data, "ok=true");
    /* A double in the fewest digits that read back (not 0.10000000000000001). */
    tl_ice_type dbl = {.id = TL_ICE_DOUBLE};
    const double xs[] = {0.1, 2.0, 1e-7};
    const char *const paths[] = {"x=0.1", "x=2", "x=1e-07"};
    for (size_t i = 0; i < 3; i++) {
        b.len = 0;
        tl_ice_value x = {.kind = TL_ICE_VALUE_DOUBLE, .d = xs[i]};
        CHECK_OK(
            tl_ice_partition_path_segment("x", tr(TL_ICE_TRANSFORM_IDENTITY), &dbl, &x, &b, &err),
            &err);
        CHECK_STR((char *)b.data, paths[i]);
    }
    CHECK_OK(tl_ice_transform_check(tr(TL_ICE_TRANSFORM_IDENTITY), &text, &err), &err);
    tl_buf_free(&b);
}

UNIT_TESTS(UNIT(test_parse_and_format), UNIT(test_apply_vectors),
           UNIT(test_extremes_do_not_overflow), UNIT(test_apply_many_matches_scalar),
           UNIT(test_types), UNIT(test_names_and_paths))
