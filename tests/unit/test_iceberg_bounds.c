#include <math.h>
#include <stdlib.h>

#include "iceberg/bounds.h"
#include "unit.h"

static tl_ice_type ty(const char *s)
{
    tl_ice_type t;
    tl_error err;
    CHECK_OK(tl_ice_type_parse(s, &t, &err), &err);
    return t;
}

#define CHECK_BYTES(p, n, ...)                                                                     \
    do {                                                                                           \
        const uint8_t want_[] = {__VA_ARGS__};                                                     \
        if ((n) != sizeof want_ || memcmp((p), want_, sizeof want_) != 0)                          \
            unit_fail(__FILE__, __LINE__, "bytes of %s differ (length %zu)", #p, (size_t)(n));     \
    } while (0)

static void test_encode_integers(void)
{
    uint8_t b[TL_ICE_BOUND_FIXED_MAX];
    size_t n;
    tl_error err;
    tl_ice_type t = ty("int");
    CHECK_OK(tl_ice_bound_from_int(&t, -2, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0xfe, 0xff, 0xff, 0xff);
    CHECK_INT(tl_ice_bound_from_int(&t, 1LL << 31, b, &n, &err), TL_ERR_INVALID);
    t = ty("date");
    CHECK_OK(tl_ice_bound_from_int(&t, 20454, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0xe6, 0x4f, 0x00, 0x00); /* the reference's time_day bound */
    t = ty("timestamptz");
    CHECK_OK(tl_ice_bound_from_int(&t, 1767225600000000LL, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0x00, 0x40, 0x20, 0x46, 0x48, 0x47, 0x06, 0x00); /* from its manifest */
    t = ty("boolean");
    CHECK_OK(tl_ice_bound_from_int(&t, 5, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0x01);
    t = ty("string");
    CHECK_INT(tl_ice_bound_from_int(&t, 5, b, &n, &err), TL_ERR_INVALID);
}

static void test_encode_decimals(void)
{
    struct {
        int64_t v;
        uint8_t bytes[8];
        size_t n;
    } cases[] = {
        {0, {0x00}, 1},          {127, {0x7f}, 1},
        {128, {0x00, 0x80}, 2},  {-1, {0xff}, 1},
        {-128, {0x80}, 1},       {-129, {0xff, 0x7f}, 2},
        {1234, {0x04, 0xd2}, 2}, {INT64_MIN, {0x80, 0, 0, 0, 0, 0, 0, 0}, 8},
    };
    tl_ice_type t = ty("decimal(18, 2)");
    tl_error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[TL_ICE_BOUND_FIXED_MAX];
        size_t n;
        CHECK_OK(tl_ice_bound_from_int(&t, cases[i].v, b, &n, &err), &err);
        CHECK(n == cases[i].n && memcmp(b, cases[i].bytes, n) == 0);
        int64_t back;
        CHECK_OK(tl_ice_bound_to_int(&t, b, n, &back, &err), &err);
        CHECK_INT(back, cases[i].v);
    }
    /* decimal128 2^64 and -2^64 (little-endian in, minimal big-endian out). */
    uint8_t le[16] = {0}, b[16], again[16];
    size_t n;
    le[8] = 1;
    tl_ice_bound_from_decimal128(le, b, &n);
    CHECK_BYTES(b, n, 0x01, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_OK(tl_ice_bound_to_decimal128(b, n, again, &err), &err);
    CHECK(memcmp(le, again, 16) == 0);
    int64_t v;
    CHECK_INT(tl_ice_bound_to_int(&t, b, n, &v, &err), TL_ERR_INVALID);
    memset(le, 0, 16);
    memset(le + 8, 0xff, 8); /* -2^64 */
    tl_ice_bound_from_decimal128(le, b, &n);
    CHECK_BYTES(b, n, 0xff, 0, 0, 0, 0, 0, 0, 0, 0);
}

static void test_encode_floats(void)
{
    uint8_t b[TL_ICE_BOUND_FIXED_MAX];
    size_t n;
    tl_error err;
    tl_ice_type d = ty("double"), f = ty("float");
    CHECK_OK(tl_ice_bound_from_double(&d, 1.0, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f); /* the reference's temp bound */
    CHECK_OK(tl_ice_bound_from_double(&f, 1.0, b, &n, &err), &err);
    CHECK_BYTES(b, n, 0, 0, 0x80, 0x3f);
    CHECK_INT(tl_ice_bound_from_double(&d, NAN, b, &n, &err), TL_ERR_INVALID);
    double x;
    CHECK_OK(tl_ice_bound_to_double(&f, b, n, &x, &err), &err);
    CHECK(x == 1.0);
    /* A float-typed bound read for a column promoted to double. */
    CHECK_OK(tl_ice_bound_to_double(&d, b, 4, &x, &err), &err);
    CHECK(x == 1.0);
}

static void check_parquet(const char *type, tl_ice_parquet_physical p, const uint8_t *in,
                          size_t len, const uint8_t *want, size_t want_len)
{
    tl_ice_type t = ty(type);
    uint8_t *out = NULL;
    size_t n = 0;
    tl_error err;
    CHECK_OK(tl_ice_bound_from_parquet_typed(&t, p, in, len, &out, &n, &err), &err);
    if (out == NULL || n != want_len || memcmp(out, want, n) != 0)
        unit_fail(__FILE__, __LINE__, "%s from Parquet: wrong bound (%zu bytes)", type, n);
    free(out);
}

static void test_from_parquet(void)
{
    const uint8_t i32[] = {0xd2, 0x04, 0, 0}, be4[] = {0x00, 0x00, 0x04, 0xd2},
                  neg[] = {0xff, 0xff, 0xff, 0x7f}, want_dec[] = {0x04, 0xd2},
                  want_neg[] = {0xff, 0x7f}, long8[] = {0xd2, 0x04, 0, 0, 0, 0, 0, 0},
                  m1[] = {0xff, 0xff, 0xff, 0xff},
                  m1_8[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                  one_f[] = {0, 0, 0x80, 0x3f}, one_d[] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f},
                  s[] = {'p', 'u', 'm', 'p'}, t1[] = {1}, t0[] = {0}, two[] = {2};
    check_parquet("decimal(5, 2)", TL_ICE_PQ_INT32, i32, 4, want_dec, 2);
    check_parquet("decimal(15, 2)", TL_ICE_PQ_INT64, long8, 8, want_dec, 2);
    check_parquet("decimal(8, 2)", TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, be4, 4, want_dec, 2);
    check_parquet("decimal(8, 2)", TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, neg, 4, want_neg, 2);
    check_parquet("long", TL_ICE_PQ_INT32, m1, 4, m1_8, 8);
    check_parquet("double", TL_ICE_PQ_FLOAT, one_f, 4, one_d, 8);
    check_parquet("string", TL_ICE_PQ_BYTE_ARRAY, s, 4, s, 4);
    check_parquet("boolean", TL_ICE_PQ_BOOLEAN, two, 1, t1, 1);
    check_parquet("boolean", TL_ICE_PQ_BOOLEAN, t0, 1, t0, 1);

    /* The inferring variant: decimal(5,2) is INT32, decimal(30,2) FLBA; promotions by size. */
    tl_ice_type t = ty("decimal(5, 2)");
    uint8_t *out;
    size_t n;
    tl_error err;
    CHECK_OK(tl_ice_bound_from_parquet(&t, i32, 4, &out, &n, &err), &err);
    CHECK_BYTES(out, n, 0x04, 0xd2);
    free(out);
    t = ty("decimal(30, 2)");
    CHECK_OK(tl_ice_bound_from_parquet(&t, be4, 4, &out, &n, &err), &err);
    CHECK_BYTES(out, n, 0x04, 0xd2);
    free(out);
    t = ty("long");
    CHECK_OK(tl_ice_bound_from_parquet(&t, m1, 4, &out, &n, &err), &err);
    CHECK(n == 8 && memcmp(out, m1_8, 8) == 0);
    free(out);
    t = ty("string");
    CHECK_OK(tl_ice_bound_from_parquet(&t, s, 0, &out, &n, &err), &err);
    CHECK(out != NULL && n == 0);
    free(out);

    /* NaN statistics give no bound. */
    const uint8_t nan_d[] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
    t = ty("double");
    CHECK_OK(tl_ice_bound_from_parquet(&t, nan_d, 8, &out, &n, &err), &err);
    CHECK(out == NULL);
}

static void test_from_parquet_rejects(void)
{
    uint8_t buf[40] = {0};
    struct {
        const char *type;
        tl_ice_parquet_physical p;
        size_t len;
    } bad[] = {
        {"int", TL_ICE_PQ_INT64, 8},
        {"int", TL_ICE_PQ_INT32, 3},
        {"uuid", TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, 15},
        {"fixed[4]", TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, 3},
        {"boolean", TL_ICE_PQ_BOOLEAN, 2},
        {"timestamp", TL_ICE_PQ_INT96, 12},
        {"decimal(38, 0)", TL_ICE_PQ_FIXED_LEN_BYTE_ARRAY, 0},
        {"double", TL_ICE_PQ_DOUBLE, 7},
        {"string", TL_ICE_PQ_INT32, 4},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_ice_type t = ty(bad[i].type);
        uint8_t *out = (uint8_t *)1;
        size_t n;
        tl_error err;
        CHECK_INT(tl_ice_bound_from_parquet_typed(&t, bad[i].p, buf, bad[i].len, &out, &n, &err),
                  TL_ERR_INVALID);
        CHECK(out == NULL);
    }
    /* A 17-byte decimal that does not shrink to 16. */
    buf[0] = 0x01;
    tl_ice_type t = ty("decimal(38, 0)");
    uint8_t *out;
    size_t n;
    CHECK_INT(tl_ice_bound_from_parquet(&t, buf, 17, &out, &n, NULL), TL_ERR_INVALID);
    /* ... but 20 bytes of sign extension do. */
    memset(buf, 0xff, 20);
    CHECK_OK(tl_ice_bound_from_parquet(&t, buf, 20, &out, &n, NULL), &(tl_error){0});
    CHECK_BYTES(out, n, 0xff);
    free(out);
}

static void check_trunc(const char *type, const char *in, size_t max, bool upper, const char *want)
{
    tl_ice_type t = ty(type);
    uint8_t *out = (uint8_t *)1;
    size_t n = 0;
    tl_error err;
    CHECK_OK(tl_ice_bound_truncate(&t, (const uint8_t *)in, strlen(in), max, upper, &out, &n, &err),
             &err);
    if (want == NULL) {
        CHECK(out == NULL);
        return;
    }
    if (out == NULL || n != strlen(want) || memcmp(out, want, n) != 0)
        unit_fail(__FILE__, __LINE__, "truncate(\"%s\", %zu, %d) = \"%.*s\", expected \"%s\"", in,
                  max, upper, (int)n, out ? (const char *)out : "", want);
    free(out);
}

static void test_truncate(void)
{
    check_trunc("string", "abcdef", 3, false, "abc");
    check_trunc("string", "abcdef", 3, true, "abd");
    check_trunc("string", "abc", 3, true, "abc");
    check_trunc("string", "abc", 16, false, "abc");
    /* Code points, not bytes: e-acute (2 bytes), euro (3), emoji (4). */
    check_trunc("string", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 3, false,
                "a\xc3\xa9\xe2\x82\xac");
    check_trunc("string", "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z", 3, true,
                "a\xc3\xa9\xe2\x82\xad");
    /* U+10FFFF cannot be incremented: the previous code point is. */
    check_trunc("string", "ab\xf4\x8f\xbf\xbfz", 3, true, "ac");
    /* U+D7FF increments past the surrogates to U+E000. */
    check_trunc("string", "\xed\x9f\xbfzz", 1, true, "\xee\x80\x80");
    check_trunc("string", "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfz", 2, true, NULL);
    check_trunc("binary", "\x01\xff\xff\x05", 3, true, "\x02");
    check_trunc("binary", "\x01\xff\xff\x05", 3, false, "\x01\xff\xff");
    check_trunc("binary", "\xff\xff\xff\x01", 3, true, NULL);
    tl_ice_type t = ty("long");
    uint8_t *out;
    size_t n;
    tl_error err;
    CHECK_INT(tl_ice_bound_truncate(&t, (const uint8_t *)"12345678", 8, 2, false, &out, &n, &err),
              TL_ERR_INVALID);
    t = ty("string");
    CHECK_INT(tl_ice_bound_truncate(&t, (const uint8_t *)"x", 1, 0, false, &out, &n, &err),
              TL_ERR_INVALID);
    /* Malformed UTF-8 must not read past the end. */
    check_trunc("string", "ab\xf0", 2, true, "ac");
    check_trunc("string", "\xf0\x9f", 1, false, "\xf0\x9f");
}

static int cmp(const char *type, const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    tl_ice_type t = ty(type);
    return tl_ice_bound_compare(&t, a, al, b, bl);
}

static void test_compare(void)
{
    uint8_t b[8][TL_ICE_BOUND_FIXED_MAX];
    size_t n[8];
    tl_ice_type t = ty("long");
    int64_t longs[] = {INT64_MIN, -5, -1, 0, 1, 300, INT64_MAX};
    for (int i = 0; i < 7; i++) tl_ice_bound_from_int(&t, longs[i], b[i], &n[i], NULL);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            int c = cmp("long", b[i], n[i], b[j], n[j]);
            CHECK((c < 0) == (i < j) && (c == 0) == (i == j));
        }
    const uint8_t m1_4[] = {0xff, 0xff, 0xff, 0xff}; /* -1 as an int-era 4-byte bound */
    CHECK(cmp("long", m1_4, 4, b[2], n[2]) == 0);
    CHECK(cmp("long", m1_4, 4, b[3], n[3]) < 0);

    tl_ice_type d = ty("double");
    double ds[] = {-INFINITY, -1.5, -0.0, 0.0, 1e-300, 2.0, INFINITY, NAN};
    for (int i = 0; i < 8; i++) {
        uint64_t bits;
        memcpy(&bits, &ds[i], 8);
        for (int k = 0; k < 8; k++) b[i][k] = (uint8_t)(bits >> (8 * k));
        n[i] = 8;
    }
    (void)d;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int c = cmp("double", b[i], n[i], b[j], n[j]);
            CHECK((c < 0) == (i < j) && (c == 0) == (i == j));
        }

    const uint8_t dm129[] = {0xff, 0x7f}, dm128[] = {0x80}, dm1[] = {0xff}, d0[] = {0x00},
                  d127[] = {0x7f}, d128[] = {0x00, 0x80}, dbig[] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t *decs[] = {dm129, dm128, dm1, d0, d127, d128, dbig};
    size_t dl[] = {2, 1, 1, 1, 1, 2, 9};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            int c = cmp("decimal(38, 0)", decs[i], dl[i], decs[j], dl[j]);
            CHECK((c < 0) == (i < j) && (c == 0) == (i == j));
        }
    const uint8_t d0_long[] = {0x00, 0x00};
    CHECK(cmp("decimal(38, 0)", d0, 1, d0_long, 2) == 0);

    CHECK(cmp("string", (const uint8_t *)"a", 1, (const uint8_t *)"ab", 2) < 0);
    CHECK(cmp("string", (const uint8_t *)"ab", 2, (const uint8_t *)"b", 1) < 0);
    CHECK(cmp("binary", (const uint8_t *)"\x7f", 1, (const uint8_t *)"\x80", 1) < 0);
    CHECK(cmp("string", (const uint8_t *)"", 0, (const uint8_t *)"", 0) == 0);
}

static void test_hostile_bounds_never_crash(void)
{
    const char *types[] = {"boolean", "int",      "long",      "float",          "double",
                           "date",    "time",     "timestamp", "timestamptz_ns", "string",
                           "uuid",    "fixed[3]", "binary",    "decimal(9, 2)",  "decimal(38, 10)"};
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int round = 0; round < 3000; round++) {
        tl_ice_type t = ty(types[round % 15]);
        uint8_t a[24], b[24];
        for (int i = 0; i < 24; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[i] = (uint8_t)x;
            b[i] = (uint8_t)(x >> 8);
        }
        size_t al = (x >> 16) % 20, bl = (x >> 24) % 20;
        /* Heap copies of the exact length so ASan catches any over-read. */
        uint8_t *ha = malloc(al ? al : 1), *hb = malloc(bl ? bl : 1);
        memcpy(ha, a, al);
        memcpy(hb, b, bl);
        int c1 = tl_ice_bound_compare(&t, ha, al, hb, bl);
        int c2 = tl_ice_bound_compare(&t, hb, bl, ha, al);
        CHECK((c1 > 0) - (c1 < 0) == -((c2 > 0) - (c2 < 0)));
        int64_t iv;
        double dv;
        tl_ice_bound_check(&t, ha, al, NULL);
        tl_ice_bound_to_int(&t, ha, al, &iv, NULL);
        tl_ice_bound_to_double(&t, ha, al, &dv, NULL);
        uint8_t *out = NULL;
        size_t n;
        for (int p = 0; p <= 7; p++) {
            if (tl_ice_bound_from_parquet_typed(&t, (tl_ice_parquet_physical)p, ha, al, &out, &n,
                                                NULL) == TL_OK) {
                CHECK(out == NULL || tl_ice_bound_check(&t, out, n, NULL) == TL_OK);
                free(out);
            }
        }
        if (tl_ice_bound_truncate(&t, ha, al, 1 + (x >> 40) % 5, (x >> 50) & 1, &out, &n, NULL) ==
            TL_OK)
            free(out);
        free(ha);
        free(hb);
    }
}

UNIT_TESTS(UNIT(test_encode_integers), UNIT(test_encode_decimals), UNIT(test_encode_floats),
           UNIT(test_from_parquet), UNIT(test_from_parquet_rejects), UNIT(test_truncate),
           UNIT(test_compare), UNIT(test_hostile_bounds_never_crash))
