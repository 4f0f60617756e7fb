#include <math.h>

#include "arrow/cast.h"
#include "arrow/take.h"
#include "test_arrow_helpers.h"
#include "unit.h"

typedef struct cast_result {
    struct ArrowArray array;
    tl_array_view view;
} cast_result;

/* Casts a column to `format`, which must succeed; check the result's shape. */
static cast_result cast_ok(const tl_array_view *src, const char *format)
{
    cast_result r;
    tl_error err;
    tl_arrow_type t;
    memset(&r, 0, sizeof r);
    tl_arrow_type_parse(format, &t, NULL);
    CHECK_OK(tl_arrow_cast(src, &t, "x", &r.array, &err), &err);
    if (r.array.release) {
        check_result_shape(&r.array, src->length);
        r.view = tview(format, &r.array);
    }
    return r;
}

static void cast_result_free(cast_result *r)
{
    tl_array_release(&r->array);
}

/* Casts a column to `format` as column `name`, which must fail with `message`. */
static void cast_fails(const tl_array_view *src, const char *format, const char *name,
                       const char *message)
{
    tl_error err;
    tl_arrow_type t;
    struct ArrowArray out;
    tl_arrow_type_parse(format, &t, NULL);
    tl_status st = tl_arrow_cast(src, &t, name, &out, &err);
    CHECK_INT(st, TL_ERR_INVALID);
    if (st == TL_OK) tl_array_release(&out);
    if (st != TL_OK) CHECK_STR(err.message, message);
    CHECK(out.release == NULL);
}

static void test_cast_same_type_copies(void)
{
    int64_t v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    tcol c;
    tcol_ints(&c, "l", v, "..x......x", 10);
    tl_array_view slice;
    CHECK_INT(tl_arrow_view_slice(&c.view, 3, 6, &slice, NULL), TL_OK);
    cast_result r = cast_ok(&slice, "l");
    CHECK_INT(r.array.null_count, 0); /* the nulls are outside the slice */
    for (int i = 0; i < 6; i++) CHECK_INT(tv_int(&r.view, i), v[3 + i]);
    cast_result_free(&r);
    CHECK_INT(tl_arrow_view_slice(&c.view, 1, 9, &slice, NULL), TL_OK);
    r = cast_ok(&slice, "l");
    CHECK_INT(r.array.null_count, 2);
    CHECK(tl_view_is_null(&r.view, 1) && tl_view_is_null(&r.view, 8));
    cast_result_free(&r);
    tcol_free(&c);

    const char *s[] = {"a", NULL, "ccc", "", "eeeee"};
    tcol_strs(&c, "u", s, 5);
    CHECK_INT(tl_arrow_view_slice(&c.view, 2, 3, &slice, NULL), TL_OK);
    r = cast_ok(&slice, "u");
    char buf[16];
    CHECK_STR(tv_str(&r.view, 0, buf, sizeof buf), "ccc");
    CHECK_STR(tv_str(&r.view, 2, buf, sizeof buf), "eeeee");
    CHECK_INT(((const int32_t *)r.array.buffers[1])[0], 0); /* rebased offsets */
    cast_result_free(&r);
    tcol_free(&c);

    int64_t bits[] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1};
    tcol_ints(&c, "b", bits, NULL, 11);
    CHECK_INT(tl_arrow_view_slice(&c.view, 3, 8, &slice, NULL), TL_OK);
    r = cast_ok(&slice, "b");
    for (int i = 0; i < 8; i++) CHECK_INT(tv_int(&r.view, i), bits[3 + i]);
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_int_to_int(void)
{
    int64_t v[] = {-128, 127, 0, 1000, 5};
    tcol c;
    tcol_ints(&c, "l", v, "...x.", 5); /* 1000 hides under a null */
    cast_result r = cast_ok(&c.view, "c");
    CHECK_INT(tv_int(&r.view, 0), -128);
    CHECK_INT(tv_int(&r.view, 1), 127);
    CHECK_INT(tv_int(&r.view, 4), 5);
    CHECK(tl_view_is_null(&r.view, 3));
    CHECK_INT(r.array.null_count, 1);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t w[] = {1, 2, 128};
    tcol_ints(&c, "l", w, NULL, 3);
    cast_fails(&c.view, "c", "x", "column \"x\": value 128 (row 2) out of range for int8");
    r = cast_ok(&c.view, "C");
    CHECK_INT(tv_int(&r.view, 2), 128);
    cast_result_free(&r);
    r = cast_ok(&c.view, "S");
    CHECK_INT(tv_int(&r.view, 2), 128);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t w2[] = {255, 256};
    tcol_ints(&c, "s", w2, NULL, 2);
    cast_fails(&c.view, "C", "x", "column \"x\": value 256 (row 1) out of range for uint8");
    tcol_free(&c);

    int64_t neg[] = {5, -1};
    tcol_ints(&c, "i", neg, NULL, 2);
    cast_fails(&c.view, "I", "n", "column \"n\": value -1 (row 1) out of range for uint32");
    cast_fails(&c.view, "L", "n", "column \"n\": value -1 (row 1) out of range for uint64");
    r = cast_ok(&c.view, "l");
    CHECK_INT(tv_int(&r.view, 1), -1);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t big[] = {(int64_t)UINT64_MAX, 7};
    tcol_ints(&c, "L", big, NULL, 2);
    cast_fails(&c.view, "l", "u",
               "column \"u\": value 18446744073709551615 (row 0) out of range for int64");
    tcol_free(&c);
    int64_t fits[] = {INT64_MAX, 0};
    tcol_ints(&c, "L", fits, NULL, 2);
    r = cast_ok(&c.view, "l");
    CHECK(tv_int(&r.view, 0) == INT64_MAX);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t edges[] = {INT32_MIN, INT32_MAX};
    tcol_ints(&c, "l", edges, NULL, 2);
    r = cast_ok(&c.view, "i");
    CHECK_INT(tv_int(&r.view, 0), INT32_MIN);
    CHECK_INT(tv_int(&r.view, 1), INT32_MAX);
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_int_to_float(void)
{
    int64_t v[] = {(1LL << 53) + 1, -3, 0};
    tcol c;
    tcol_ints(&c, "l", v, NULL, 3);
    cast_result r = cast_ok(&c.view, "g");
    CHECK(tv_double(&r.view, 0) == 9007199254740992.0); /* rounds, as Arrow does */
    CHECK(tv_double(&r.view, 1) == -3.0);
    cast_result_free(&r);
    r = cast_ok(&c.view, "f");
    CHECK(tv_double(&r.view, 1) == -3.0f);
    cast_result_free(&r);
    tcol_free(&c);
    int64_t u[] = {(int64_t)UINT64_MAX};
    tcol_ints(&c, "L", u, NULL, 1);
    r = cast_ok(&c.view, "g");
    CHECK(tv_double(&r.view, 0) == 18446744073709551615.0);
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_float_to_int(void)
{
    double v[] = {3.0, -0.0, -2147483648.0, 2147483647.0, NAN};
    tcol c;
    tcol_doubles(&c, "g", v, "....x", 5); /* NaN under a null is fine */
    cast_result r = cast_ok(&c.view, "i");
    CHECK_INT(tv_int(&r.view, 0), 3);
    CHECK_INT(tv_int(&r.view, 1), 0);
    CHECK_INT(tv_int(&r.view, 2), INT32_MIN);
    CHECK_INT(tv_int(&r.view, 3), INT32_MAX);
    CHECK_INT(r.array.null_count, 1);
    cast_result_free(&r);
    tcol_free(&c);

    double frac[] = {1.0, 1.5};
    tcol_doubles(&c, "g", frac, NULL, 2);
    cast_fails(&c.view, "i", "x", "column \"x\": cannot cast 1.5 (row 1) to int32: not an integer");
    tcol_free(&c);
    double over[] = {2147483648.0};
    tcol_doubles(&c, "g", over, NULL, 1);
    cast_fails(&c.view, "i", "x", "column \"x\": value 2147483648 (row 0) out of range for int32");
    tcol_free(&c);
    double nan[] = {0, NAN};
    tcol_doubles(&c, "g", nan, NULL, 2);
    cast_fails(&c.view, "l", "x", "column \"x\": cannot cast nan (row 1) to int64: not an integer");
    tcol_free(&c);
    double inf[] = {-INFINITY};
    tcol_doubles(&c, "f", inf, NULL, 1);
    cast_fails(&c.view, "l", "x", "column \"x\": value -inf (row 0) out of range for int64");
    tcol_free(&c);

    double i64[] = {-9223372036854775808.0, 9223372036854774784.0, 9223372036854775808.0};
    tcol_doubles(&c, "g", i64, NULL, 2);
    r = cast_ok(&c.view, "l");
    CHECK(tv_int(&r.view, 0) == INT64_MIN);
    CHECK(tv_int(&r.view, 1) == 9223372036854774784LL);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_doubles(&c, "g", i64, NULL, 3);
    cast_fails(&c.view, "l", "x",
               "column \"x\": value 9.223372036854776e+18 (row 2) out of range for int64");
    tcol_free(&c);

    double u64[] = {18446744073709549568.0, 18446744073709551616.0};
    tcol_doubles(&c, "g", u64, NULL, 1);
    r = cast_ok(&c.view, "L");
    CHECK((uint64_t)tv_int(&r.view, 0) == 18446744073709549568ULL);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_doubles(&c, "g", u64, NULL, 2);
    cast_fails(&c.view, "L", "x",
               "column \"x\": value 1.8446744073709552e+19 (row 1) out of range for uint64");
    tcol_free(&c);
}

static void test_cast_float_to_float(void)
{
    double v[] = {1.1, INFINITY, NAN, -0.0, 3.4028234663852886e38};
    tcol c;
    tcol_doubles(&c, "g", v, NULL, 5);
    cast_result r = cast_ok(&c.view, "f");
    CHECK(tv_double(&r.view, 0) == (double)1.1f);
    CHECK(isinf(tv_double(&r.view, 1)));
    CHECK(isnan(tv_double(&r.view, 2)));
    CHECK(signbit(tv_double(&r.view, 3)));
    CHECK(tv_double(&r.view, 4) == 3.4028234663852886e38);
    cast_result_free(&r);
    tcol_free(&c);
    double big[] = {1.0, 1e300};
    tcol_doubles(&c, "g", big, NULL, 2);
    cast_fails(&c.view, "f", "f", "column \"f\": value 1e+300 (row 1) out of range for float32");
    tcol_free(&c);
    double small[] = {0.1, -2.5};
    tcol_doubles(&c, "f", small, NULL, 2);
    r = cast_ok(&c.view, "g");
    CHECK(tv_double(&r.view, 0) == (double)0.1f);
    CHECK(tv_double(&r.view, 1) == -2.5);
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_float16(void)
{
    /* 1.0, -2.5, 65504 (max), smallest subnormal, inf, NaN */
    uint16_t halves[] = {0x3C00, 0xC100, 0x7BFF, 0x0001, 0x7C00, 0x7E00};
    tl_error err;
    struct ArrowArray a;
    CHECK_OK(tl_array_init(&a, 2, 0, &err), &err);
    uint16_t *p = tl_array_alloc_buffer(&a, 1, sizeof halves);
    memcpy(p, halves, sizeof halves);
    a.length = 6;
    tcol c;
    tcol_adopt(&c, "e", &a);
    cast_result r = cast_ok(&c.view, "g");
    CHECK(tv_double(&r.view, 0) == 1.0);
    CHECK(tv_double(&r.view, 1) == -2.5);
    CHECK(tv_double(&r.view, 2) == 65504.0);
    CHECK(tv_double(&r.view, 3) == ldexp(1, -24));
    CHECK(isinf(tv_double(&r.view, 4)));
    CHECK(isnan(tv_double(&r.view, 5)));
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_bool(void)
{
    int64_t v[] = {1, 0, 1};
    tcol c;
    tcol_ints(&c, "b", v, ".x.", 3);
    cast_result r = cast_ok(&c.view, "c");
    CHECK_INT(tv_int(&r.view, 0), 1);
    CHECK_INT(tv_int(&r.view, 2), 1);
    CHECK(tl_view_is_null(&r.view, 1));
    cast_result_free(&r);
    r = cast_ok(&c.view, "l");
    CHECK_INT(tv_int(&r.view, 0), 1);
    cast_result_free(&r);
    cast_fails(&c.view, "g", "b", "column \"b\": cannot cast bool to float64");
    cast_fails(&c.view, "tsu:", "t", "column \"t\": cannot cast bool to timestamp[us]");
    tcol_free(&c);
    int64_t ints[] = {0, 1};
    tcol_ints(&c, "i", ints, NULL, 2);
    cast_fails(&c.view, "b", "b", "column \"b\": cannot cast int32 to bool");
    tcol_free(&c);
}

static void test_cast_decimal(void)
{
    int64_t v[] = {12345, -1, 0};
    tcol c;
    tcol_ints(&c, "d:10,2", v, NULL, 3); /* 123.45, -0.01, 0 */
    cast_result r = cast_ok(&c.view, "d:12,4");
    CHECK(tl_load_i128((const uint8_t *)r.view.values) == 1234500);
    CHECK(tl_load_i128((const uint8_t *)r.view.values + 16) == -100);
    cast_result_free(&r);
    cast_fails(&c.view, "d:5,4", "p",
               "column \"p\": value 123.45 (row 0) out of range for decimal128(5, 4)");
    cast_fails(
        &c.view, "d:10,1", "p",
        "column \"p\": cannot cast 123.45 (row 0) to decimal128(10, 1): digits would be lost");
    tcol_free(&c);

    int64_t exact[] = {12300, 5};
    tcol_ints(&c, "d:10,4", exact, ".x", 2); /* 1.2300 and a null over 0.0005 */
    r = cast_ok(&c.view, "d:10,2");
    CHECK(tl_load_i128((const uint8_t *)r.view.values) == 123);
    CHECK(tl_view_is_null(&r.view, 1));
    cast_result_free(&r);
    tcol_free(&c);

    int64_t ints[] = {999, -999, 1000};
    tcol_ints(&c, "s", ints, NULL, 2);
    r = cast_ok(&c.view, "d:5,2");
    CHECK(tl_load_i128((const uint8_t *)r.view.values) == 99900);
    CHECK(tl_load_i128((const uint8_t *)r.view.values + 16) == -99900);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_ints(&c, "l", ints, NULL, 3);
    cast_fails(&c.view, "d:5,2", "p",
               "column \"p\": value 1000 (row 2) out of range for decimal128(5, 2)");
    tcol_free(&c);

    int64_t d[] = {1};
    tcol_ints(&c, "d:5,2", d, NULL, 1);
    cast_fails(&c.view, "g", "p", "column \"p\": cannot cast decimal128(5, 2) to float64");
    cast_fails(&c.view, "l", "p", "column \"p\": cannot cast decimal128(5, 2) to int64");
    tcol_free(&c);
}

static void test_cast_temporal_units(void)
{
    int64_t days[] = {0, 20455, -1};
    tcol c;
    tcol_ints(&c, "tdD", days, NULL, 3);
    cast_result r = cast_ok(&c.view, "tsu:UTC");
    CHECK_INT(tv_int(&r.view, 1), 1767312000000000LL);
    CHECK_INT(tv_int(&r.view, 2), -86400000000LL);
    cast_result_free(&r);
    r = cast_ok(&c.view, "tdm");
    CHECK_INT(tv_int(&r.view, 1), 1767312000000LL);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t far[] = {0, 120000}; /* 2298-07-20: beyond what int64 nanoseconds reach */
    tcol_ints(&c, "tdD", far, NULL, 2);
    cast_fails(&c.view, "tsn:", "d",
               "column \"d\": value 2298-07-20 (row 1) out of range for timestamp[ns]");
    tcol_free(&c);

    /* To a coarser unit: exact values only; a lost part is an error naming
     * the column, the row and the value. */
    int64_t ns[] = {1767323045123456000LL, -1000, 0, 1767323045123456789LL};
    tcol_ints(&c, "tsn:", ns, NULL, 3);
    r = cast_ok(&c.view, "tsu:UTC");
    CHECK_INT(tv_int(&r.view, 0), 1767323045123456LL);
    CHECK_INT(tv_int(&r.view, 1), -1);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_ints(&c, "tsn:", ns, NULL, 4);
    cast_fails(&c.view, "tsu:UTC", "time",
               "column \"time\": cannot cast 2026-01-02T03:04:05.123456789 (1767323045123456789) "
               "(row 3) to timestamp[us, tz=UTC]: its part below a microsecond would be lost");
    cast_fails(&c.view, "tdD", "day",
               "column \"day\": cannot cast 2026-01-02T03:04:05.123456000 (1767323045123456000) "
               "(row 0) to date32: its time of day would be lost");
    tcol_free(&c);
    int64_t midnights[] = {1767312000000000000LL, -86400000000000LL};
    tcol_ints(&c, "tsn:", midnights, NULL, 2);
    r = cast_ok(&c.view, "tdD");
    CHECK_INT(tv_int(&r.view, 0), 20455);
    CHECK_INT(tv_int(&r.view, 1), -1);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t secs[] = {1, 9300000000LL};
    tcol_ints(&c, "tss:Europe/Paris", secs, NULL, 2);
    r = cast_ok(&c.view, "tsu:");
    CHECK_INT(tv_int(&r.view, 0), 1000000);
    cast_result_free(&r);
    cast_fails(&c.view, "tsn:", "t",
               "column \"t\": value 2264-09-14T21:20:00 (9300000000) (row 1) out of range for "
               "timestamp[ns]");
    tcol_free(&c);

    /* A time zone change is a relabel: the values are the same instants. */
    int64_t us[] = {5, 6};
    tcol_ints(&c, "tsu:+01:00", us, NULL, 2);
    r = cast_ok(&c.view, "tsu:UTC");
    CHECK_INT(tv_int(&r.view, 0), 5);
    cast_result_free(&r);
    tcol_free(&c);

    int64_t ms[] = {86400000, -86400000, 86399999};
    tcol_ints(&c, "tdm", ms, NULL, 2);
    r = cast_ok(&c.view, "tdD");
    CHECK_INT(tv_int(&r.view, 0), 1);
    CHECK_INT(tv_int(&r.view, 1), -1);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_ints(&c, "tdm", ms, NULL, 3);
    cast_fails(&c.view, "tdD", "d",
               "column \"d\": cannot cast 1970-01-01T23:59:59.999 (86399999) (row 2) to date32: "
               "its time of day would be lost");
    tcol_free(&c);

    int64_t t32[] = {3661};
    tcol_ints(&c, "tts", t32, NULL, 1);
    r = cast_ok(&c.view, "ttu");
    CHECK_INT(tv_int(&r.view, 0), 3661000000LL);
    cast_result_free(&r);
    cast_fails(&c.view, "tsu:", "t", "column \"t\": cannot cast time[s] to timestamp[us]");
    tcol_free(&c);

    int64_t big_days[] = {INT32_MAX};
    tcol_ints(&c, "tdD", big_days, NULL, 1);
    cast_fails(&c.view, "tsn:", "t",
               "column \"t\": value 5881580-07-11 (row 0) out of range for timestamp[ns]");
    tcol_free(&c);
}

static void test_cast_varwidth(void)
{
    const char *s[] = {"alpha", NULL, "", "delta"};
    tcol c;
    tcol_strs(&c, "u", s, 4);
    const char *targets[] = {"U", "z", "Z"};
    for (int t = 0; t < 3; t++) {
        tl_array_view slice;
        CHECK_INT(tl_arrow_view_slice(&c.view, 1, 3, &slice, NULL), TL_OK);
        cast_result r = cast_ok(&slice, targets[t]);
        char buf[16];
        CHECK(tl_view_is_null(&r.view, 0));
        CHECK_STR(tv_str(&r.view, 1, buf, sizeof buf), "");
        CHECK_STR(tv_str(&r.view, 2, buf, sizeof buf), "delta");
        cast_result_free(&r);
    }
    tcol_free(&c);
    tcol_strs(&c, "U", s, 4);
    cast_result r = cast_ok(&c.view, "u");
    char buf[16];
    CHECK_STR(tv_str(&r.view, 0, buf, sizeof buf), "alpha");
    cast_result_free(&r);
    tcol_free(&c);
    tcol_strs(&c, "z", s, 4);
    cast_fails(&c.view, "u", "b", "column \"b\": cannot cast binary to string");
    r = cast_ok(&c.view, "Z");
    cast_result_free(&r);
    tcol_free(&c);
    const char *fixed[] = {"abcd", "efgh"};
    tcol_strs(&c, "w:4", fixed, 2);
    r = cast_ok(&c.view, "w:4");
    CHECK(memcmp(r.view.values, "abcdefgh", 8) == 0);
    cast_result_free(&r);
    cast_fails(&c.view, "w:5", "f",
               "column \"f\": cannot cast fixed_size_binary[4] to fixed_size_binary[5]");
    cast_fails(&c.view, "z", "f", "column \"f\": cannot cast fixed_size_binary[4] to binary");
    tcol_free(&c);
}

static void test_cast_parse_strings(void)
{
    const char *nums[] = {"1.5", NULL, "-2e3", "abc"};
    tcol c;
    tcol_strs(&c, "u", nums, 3);
    cast_result r = cast_ok(&c.view, "g");
    CHECK(tv_double(&r.view, 0) == 1.5);
    CHECK(tl_view_is_null(&r.view, 1));
    CHECK(tv_double(&r.view, 2) == -2000.0);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_strs(&c, "U", nums, 4);
    cast_fails(&c.view, "g", "temp", "column \"temp\": cannot cast \"abc\" (row 3) to float64");
    tcol_free(&c);

    const char *ints[] = {"12", "-7", "300"};
    tcol_strs(&c, "u", ints, 3);
    cast_fails(&c.view, "c", "x", "column \"x\": value \"300\" (row 2) out of range for int8");
    r = cast_ok(&c.view, "s");
    CHECK_INT(tv_int(&r.view, 2), 300);
    CHECK_INT(tv_int(&r.view, 1), -7);
    cast_result_free(&r);
    cast_fails(&c.view, "L", "x", "column \"x\": cannot cast \"-7\" (row 1) to uint64");
    tcol_free(&c);

    const char *bools[] = {"true", "False", NULL, "1", "0"};
    tcol_strs(&c, "u", bools, 5);
    r = cast_ok(&c.view, "b");
    CHECK_INT(tv_int(&r.view, 0), 1);
    CHECK_INT(tv_int(&r.view, 1), 0);
    CHECK_INT(tv_int(&r.view, 3), 1);
    CHECK_INT(tv_int(&r.view, 4), 0);
    CHECK(tl_view_is_null(&r.view, 2));
    cast_result_free(&r);
    tcol_free(&c);

    const char *times[] = {"2026-01-02T03:04:05.123456Z", "2026-01-02 04:04:05.123456+01:00",
                           "2026-01-02", "not a time"};
    tcol_strs(&c, "u", times, 3);
    r = cast_ok(&c.view, "tsu:UTC");
    CHECK_INT(tv_int(&r.view, 0), 1767323045123456LL);
    CHECK_INT(tv_int(&r.view, 1), 1767323045123456LL);
    CHECK_INT(tv_int(&r.view, 2), 1767312000000000LL);
    cast_result_free(&r);
    r = cast_ok(&c.view, "tsn:");
    CHECK_INT(tv_int(&r.view, 0), 1767323045123456000LL);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_strs(&c, "u", times, 4);
    cast_fails(&c.view, "tsu:", "t",
               "column \"t\": cannot cast \"not a time\" (row 3) to timestamp[us]");
    tcol_free(&c);

    const char *dates[] = {"2026-01-02", "1969-12-31"};
    tcol_strs(&c, "u", dates, 2);
    r = cast_ok(&c.view, "tdD");
    CHECK_INT(tv_int(&r.view, 0), 20455);
    CHECK_INT(tv_int(&r.view, 1), -1);
    cast_result_free(&r);
    r = cast_ok(&c.view, "tdm");
    CHECK_INT(tv_int(&r.view, 1), -86400000);
    cast_result_free(&r);
    tcol_free(&c);

    const char *decs[] = {"123.45", "-0.5", "1.234"};
    tcol_strs(&c, "u", decs, 2);
    r = cast_ok(&c.view, "d:10,2");
    CHECK(tl_load_i128((const uint8_t *)r.view.values) == 12345);
    CHECK(tl_load_i128((const uint8_t *)r.view.values + 16) == -50);
    cast_result_free(&r);
    tcol_free(&c);
    tcol_strs(&c, "u", decs, 3);
    cast_fails(&c.view, "d:10,2", "p",
               "column \"p\": cannot cast \"1.234\" (row 2) to decimal128(10, 2)");
    tcol_free(&c);

    const char *f32[] = {"1e39"};
    tcol_strs(&c, "u", f32, 1);
    cast_fails(&c.view, "f", "f", "column \"f\": value \"1e39\" (row 0) out of range for float32");
    tcol_free(&c);
}

static void test_cast_dictionary(void)
{
    const char *dict[] = {"10", "20", "oops", NULL};
    int64_t idx[] = {1, 0, 1, 3, 0};
    tcol c;
    tcol_dict(&c, "c", idx, "..x..", 5, "u", dict, 4);
    cast_result r = cast_ok(&c.view, "u");
    char buf[8];
    CHECK_STR(tv_str(&r.view, 0, buf, sizeof buf), "20");
    CHECK_STR(tv_str(&r.view, 4, buf, sizeof buf), "10");
    CHECK(tl_view_is_null(&r.view, 2) && tl_view_is_null(&r.view, 3));
    CHECK_INT(r.array.null_count, 2);
    cast_result_free(&r);
    /* "oops" is in the dictionary but no row uses it: the cast succeeds. */
    r = cast_ok(&c.view, "l");
    CHECK_INT(tv_int(&r.view, 0), 20);
    CHECK_INT(tv_int(&r.view, 1), 10);
    CHECK_INT(tv_int(&r.view, 4), 10);
    CHECK(tl_view_is_null(&r.view, 3));
    cast_result_free(&r);
    r = cast_ok(&c.view, "U");
    CHECK_STR(tv_str(&r.view, 1, buf, sizeof buf), "10");
    cast_result_free(&r);
    tcol_free(&c);

    int64_t uses_oops[] = {0, 1, 2};
    tcol_dict(&c, "i", uses_oops, NULL, 3, "u", dict, 4);
    cast_fails(&c.view, "l", "d", "column \"d\": cannot cast \"oops\" (row 2) to int64");
    tcol_free(&c);

    int64_t out_of_range[] = {0, 9};
    tcol_dict(&c, "i", out_of_range, NULL, 2, "u", dict, 4);
    struct ArrowArray out;
    tl_error err;
    tl_arrow_type t;
    tl_arrow_type_parse("u", &t, NULL);
    CHECK_INT(tl_arrow_cast(&c.view, &t, "d", &out, &err), TL_ERR_INVALID);
    CHECK_STR(
        err.message,
        "column \"d\": dictionary index 9 (row 1) is out of range for a dictionary of 4 values");
    tcol_free(&c);
}

static void test_cast_null_type(void)
{
    tl_error err;
    struct ArrowArray a;
    CHECK_OK(tl_array_init(&a, 0, 0, &err), &err);
    a.length = 4;
    a.null_count = 4;
    tcol c;
    tcol_adopt(&c, "n", &a);
    const char *formats[] = {"l", "u", "b", "tsu:UTC", "d:5,1"};
    for (int f = 0; f < 5; f++) {
        cast_result r = cast_ok(&c.view, formats[f]);
        CHECK_INT(r.array.null_count, 4);
        cast_result_free(&r);
    }
    tcol_free(&c);
}

static void test_cast_empty_arrays(void)
{
    const char *formats[] = {"l", "i", "g", "f", "b", "u", "U", "z", "tsu:", "tdD", "d:10,2"};
    size_t nf = sizeof formats / sizeof formats[0];
    for (size_t f = 0; f < nf; f++) {
        tcol c;
        if (formats[f][0] == 'u' || formats[f][0] == 'U' || formats[f][0] == 'z')
            tcol_strs(&c, formats[f], NULL, 0);
        else
            tcol_ints(&c, formats[f], NULL, NULL, 0);
        for (size_t t = 0; t < nf; t++) {
            tl_arrow_type to;
            tl_arrow_type_parse(formats[t], &to, NULL);
            if (!tl_arrow_can_cast(&c.type, &to)) continue;
            cast_result r = cast_ok(&c.view, formats[t]);
            cast_result_free(&r);
        }
        tcol_free(&c);
    }
}

static void test_cast_type_matrix(void)
{
    struct {
        const char *from, *to;
        bool ok;
    } cases[] = {
        {"i", "l", true},           {"l", "c", true},          {"L", "i", true},
        {"i", "g", true},           {"g", "i", true},          {"g", "f", true},
        {"f", "g", true},           {"e", "g", true},          {"b", "i", true},
        {"i", "b", false},          {"b", "g", false},         {"i", "d:10,2", true},
        {"d:10,2", "d:20,5", true}, {"d:10,2", "l", false},    {"g", "d:10,2", false},
        {"tdD", "tsu:", true},      {"tsn:UTC", "tsu:", true}, {"tsu:", "tdD", true},
        {"tts", "ttn", true},       {"tts", "tsu:", false},    {"l", "tsu:", false},
        {"tsu:", "l", false},       {"u", "U", true},          {"U", "u", true},
        {"u", "z", true},           {"U", "Z", true},          {"z", "u", false},
        {"z", "Z", true},           {"u", "l", true},          {"u", "tsu:", true},
        {"u", "d:5,2", true},       {"u", "tts", false},       {"u", "w:3", false},
        {"w:3", "w:3", true},       {"w:3", "w:4", false},     {"n", "l", true},
        {"l", "n", false},          {"+s", "+s", false},       {"g", "e", false},
        {"u", "e", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_arrow_type f, t;
        tl_arrow_type_parse(cases[i].from, &f, NULL);
        tl_arrow_type_parse(cases[i].to, &t, NULL);
        if (tl_arrow_can_cast(&f, &t) != cases[i].ok)
            unit_fail(__FILE__, __LINE__, "can_cast(%s, %s) != %d", cases[i].from, cases[i].to,
                      cases[i].ok);
    }
}

static void test_cast_validity_without_nulls(void)
{
    /* A producer's validity buffer with every bit set: the result has none. */
    int64_t v[] = {1, 2, 3};
    tcol c;
    tcol_ints(&c, "l", v, ".x.", 3);
    uint8_t *bits = (uint8_t *)c.array.buffers[0];
    bits[0] = 0xff;
    c.array.null_count = -1; /* unknown */
    tl_array_view_free(&c.view);
    CHECK_INT(tl_array_view_init(&c.view, &c.schema, &c.array, NULL), TL_OK);
    cast_result r = cast_ok(&c.view, "i");
    CHECK(r.array.buffers[0] == NULL);
    CHECK_INT(r.array.null_count, 0);
    cast_result_free(&r);
    tcol_free(&c);
}

static void test_cast_hostile_offsets(void)
{
    const char *s[] = {"aa", "bb", "cc"};
    tcol c;
    tcol_strs(&c, "u", s, 3);
    int32_t *offsets = (int32_t *)c.array.buffers[1];
    offsets[1] = 5; /* decreasing at row 1: would be a negative length */
    struct ArrowArray out;
    tl_error err;
    const char *targets[] = {"u", "U", "l"};
    for (int t = 0; t < 3; t++) {
        tl_arrow_type type;
        tl_arrow_type_parse(targets[t], &type, NULL);
        CHECK_INT(tl_arrow_cast(&c.view, &type, "s", &out, &err), TL_ERR_INVALID);
        CHECK_STR(err.message, "column \"s\": offsets decrease at row 1 of a 32-bit offset array");
    }
    tcol_free(&c);
}

/* A drop anywhere in a long array is found at its row, whichever block of
 * the check it falls in (first, last, across a block's edge), for both
 * offset widths and a view that starts past row 0. */
static void test_offsets_check_finds_every_drop(void)
{
    enum { N = 3000 };
    static const char *s[N];
    for (int i = 0; i < N; i++) s[i] = "ab";
    const int64_t drops[] = {0, 1, 1022, 1023, 1024, 1025, 2047, 2048, 2998, 2999};
    const char *formats[] = {"u", "U"};
    for (int f = 0; f < 2; f++)
        for (size_t d = 0; d < sizeof drops / sizeof *drops; d++)
            for (int64_t start = 0; start <= 5; start += 5) {
                tcol c;
                tcol_strs(&c, formats[f], s, N);
                int64_t row = drops[d]; /* o[row + 1] < o[row] */
                if (f == 0)
                    ((int32_t *)c.array.buffers[1])[row + 1] = 1;
                else
                    ((int64_t *)c.array.buffers[1])[row + 1] = 1;
                if (row == 0) { /* o[1] = 1 < o[0] needs o[0] above it */
                    if (f == 0)
                        ((int32_t *)c.array.buffers[1])[0] = 2;
                    else
                        ((int64_t *)c.array.buffers[1])[0] = 2;
                }
                tl_array_view v = c.view;
                v.offset = start;
                v.length = N - start;
                tl_error err;
                char want[128];
                if (row < start) {
                    CHECK_INT(tl_offsets_check(&v, &err), TL_OK);
                } else {
                    CHECK_INT(tl_offsets_check(&v, &err), TL_ERR_INVALID);
                    snprintf(want, sizeof want, "offsets decrease at row %lld of a %s array",
                             (long long)(row - start), f ? "64-bit offset" : "32-bit offset");
                    CHECK_STR(err.message, want);
                }
                v.length = row - start; /* the drop just past the view's end: not seen */
                if (row >= start) CHECK_INT(tl_offsets_check(&v, &err), TL_OK);
                tcol_free(&c);
            }
}

static void test_cast_random_inputs_never_crash(void)
{
    /* Random bytes as values of every type, cast to every type: errors are
     * fine, crashes and leaks are not; successes are well-formed. */
    const char *formats[] = {"c",   "C",   "s",    "S",       "i",   "I",      "l",
                             "L",   "e",   "f",    "g",       "b",   "d:10,2", "d:38,10",
                             "tdD", "tdm", "tss:", "tsn:UTC", "tts", "ttn"};
    size_t nf = sizeof formats / sizeof formats[0];
    uint64_t state = 7;
    for (size_t f = 0; f < nf; f++) {
        tl_arrow_type type;
        tl_arrow_type_parse(formats[f], &type, NULL);
        int64_t n = 200;
        size_t bytes =
            type.id == TL_ATYPE_BOOL ? 32 : (size_t)n * (size_t)tl_type_byte_width(&type);
        struct ArrowArray a;
        CHECK_INT(tl_array_init(&a, 2, 0, NULL), TL_OK);
        uint8_t *values = tl_array_alloc_buffer(&a, 1, bytes);
        uint8_t *bits = tl_array_alloc_buffer(&a, 0, 32);
        for (size_t k = 0; k < bytes; k++) values[k] = (uint8_t)trand(&state);
        for (size_t k = 0; k < 32; k++) bits[k] = (uint8_t)trand(&state);
        a.length = n;
        a.null_count = -1;
        tcol c;
        tcol_adopt(&c, formats[f], &a);
        for (size_t t = 0; t < nf; t++) {
            tl_arrow_type to;
            tl_arrow_type_parse(formats[t], &to, NULL);
            struct ArrowArray out;
            tl_error err;
            if (tl_arrow_cast(&c.view, &to, "r", &out, &err) == TL_OK) {
                check_result_shape(&out, n);
                tl_array_release(&out);
            } else {
                CHECK(strstr(err.message, "column \"r\"") != NULL);
            }
        }
        tcol_free(&c);
    }
}

UNIT_TESTS(UNIT(test_cast_same_type_copies), UNIT(test_cast_int_to_int),
           UNIT(test_cast_int_to_float), UNIT(test_cast_float_to_int),
           UNIT(test_cast_float_to_float), UNIT(test_cast_float16), UNIT(test_cast_bool),
           UNIT(test_cast_decimal), UNIT(test_cast_temporal_units), UNIT(test_cast_varwidth),
           UNIT(test_cast_parse_strings), UNIT(test_cast_dictionary), UNIT(test_cast_null_type),
           UNIT(test_cast_empty_arrays), UNIT(test_cast_type_matrix),
           UNIT(test_cast_validity_without_nulls), UNIT(test_cast_hostile_offsets),
           UNIT(test_offsets_check_finds_every_drop), UNIT(test_cast_random_inputs_never_crash))
