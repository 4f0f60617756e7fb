#include <math.h>

#include "arrow/builder.h"
#include "test_arrow_helpers.h"
#include "unit.h"

static tl_arrow_type type_of(const char *format)
{
    tl_arrow_type t;
    tl_arrow_type_parse(format, &t, NULL);
    return t;
}

static void test_builder_ints_with_nulls(void)
{
    tl_error err;
    tl_arrow_type t = type_of("i");
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int i = 0; i < 1000; i++) {
        if (i % 7 == 3)
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
        else
            CHECK_OK(tl_builder_append_int(&b, i * 3 - 500, &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 1000);
    CHECK_INT(a.null_count, 143);
    tl_array_view v = tview("i", &a);
    for (int i = 0; i < 1000; i++) {
        CHECK(tl_view_is_null(&v, i) == (i % 7 == 3));
        if (i % 7 != 3) CHECK_INT(tv_int(&v, i), i * 3 - 500);
    }
    tl_array_release(&a);
    /* The builder is reusable after finish. */
    CHECK_OK(tl_builder_append_int(&b, 5, &err), &err);
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 1);
    CHECK(a.buffers[0] == NULL);
    tl_array_release(&a);
    tl_builder_free(&b);
}

static void test_builder_ranges(void)
{
    tl_error err;
    tl_builder b;
    tl_arrow_type t = type_of("c");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_append_int(&b, -128, &err), &err);
    CHECK_OK(tl_builder_append_int(&b, 127, &err), &err);
    CHECK_INT(tl_builder_append_int(&b, 300, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "value 300 out of range for int8");
    CHECK_INT(tl_builder_append_double(&b, 1.0, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "cannot append a floating-point number to a int8 column");
    CHECK_INT(b.length, 2);
    tl_builder_free(&b);

    t = type_of("L");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_append_uint(&b, UINT64_MAX, &err), &err);
    CHECK_INT(tl_builder_append_int(&b, -1, &err), TL_ERR_INVALID);
    tl_builder_free(&b);

    t = type_of("f");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_append_double(&b, INFINITY, &err), &err);
    CHECK_OK(tl_builder_append_double(&b, NAN, &err), &err);
    CHECK_INT(tl_builder_append_double(&b, 1e300, &err), TL_ERR_INVALID);
    tl_builder_free(&b);

    t = type_of("d:5,2");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_append_decimal(&b, 99999, &err), &err);
    CHECK_INT(tl_builder_append_decimal(&b, 100000, &err), TL_ERR_INVALID);
    CHECK_STR(err.message, "value 1000.00 out of range for decimal128(5, 2)");
    tl_builder_free(&b);

    t = type_of("+s");
    CHECK_INT(tl_builder_init(&b, &t, &err), TL_ERR_INVALID);
}

static void test_builder_strings(void)
{
    tl_error err;
    const char *formats[] = {"u", "U", "z", "Z"};
    for (int f = 0; f < 4; f++) {
        tl_arrow_type t = type_of(formats[f]);
        tl_builder b;
        struct ArrowArray a;
        CHECK_OK(tl_builder_init(&b, &t, &err), &err);
        CHECK_OK(tl_builder_reserve(&b, 300, 3000, &err), &err);
        for (int i = 0; i < 300; i++) {
            char s[32];
            snprintf(s, sizeof s, "value-%d", i);
            if (i % 5 == 0)
                CHECK_OK(tl_builder_append_null(&b, &err), &err);
            else
                CHECK_OK(tl_builder_append_bytes(&b, s, i % 3 ? strlen(s) : 0, &err), &err);
        }
        CHECK_INT(tl_builder_append_int(&b, 1, &err), TL_ERR_INVALID);
        CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
        check_result_shape(&a, 300);
        CHECK_INT(a.null_count, 60);
        tl_array_view v = tview(formats[f], &a);
        for (int i = 0; i < 300; i++) {
            char s[32], got[32];
            snprintf(s, sizeof s, "value-%d", i);
            if (i % 3 == 0) s[0] = '\0';
            CHECK(tl_view_is_null(&v, i) == (i % 5 == 0));
            if (i % 5) CHECK_STR(tv_str(&v, i, got, sizeof got), s);
        }
        tl_array_release(&a);
        tl_builder_free(&b);
    }
}

static void test_builder_empty_and_bool(void)
{
    tl_error err;
    tl_builder b;
    struct ArrowArray a;
    tl_arrow_type t = type_of("u");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 0);
    CHECK(a.buffers[1] != NULL && a.buffers[2] != NULL);
    CHECK_INT(((const int32_t *)a.buffers[1])[0], 0);
    tl_array_release(&a);
    tl_builder_free(&b);

    t = type_of("b");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int i = 0; i < 77; i++) {
        if (i == 70)
            CHECK_OK(tl_builder_append_null(&b, &err), &err);
        else
            CHECK_OK(tl_builder_append_bool(&b, i % 3 == 0, &err), &err);
    }
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 77);
    CHECK_INT(a.null_count, 1);
    tl_array_view v = tview("b", &a);
    for (int i = 0; i < 77; i++)
        if (i != 70) CHECK_INT(tv_int(&v, i), i % 3 == 0);
    CHECK(tl_view_is_null(&v, 70));
    tl_array_release(&a);
    tl_builder_free(&b);
}

static void test_builder_fixed_binary(void)
{
    tl_error err;
    tl_builder b;
    struct ArrowArray a;
    tl_arrow_type t = type_of("w:20");
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK_OK(tl_builder_append_bytes(&b, "01234567890123456789", 20, &err), &err);
    CHECK_OK(tl_builder_append_null(&b, &err), &err);
    CHECK_INT(tl_builder_append_bytes(&b, "short", 5, &err), TL_ERR_INVALID);
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 2);
    CHECK(memcmp(a.buffers[1], "01234567890123456789", 20) == 0);
    static const uint8_t zeros[20] = {0};
    CHECK(memcmp((const uint8_t *)a.buffers[1] + 20, zeros, 20) == 0);
    tl_array_release(&a);
    tl_builder_free(&b);
}

/* The fast path takes 8-byte values while there is room and no null, and
 * leaves the rest to the usual appends: the values come out in order. */
static void test_builder_push8(void)
{
    tl_error err;
    tl_arrow_type t = type_of("l"), narrow = type_of("i");
    tl_builder b;
    struct ArrowArray a;
    CHECK_OK(tl_builder_init(&b, &narrow, &err), &err);
    int64_t one = 1;
    CHECK(!tl_builder_push8(&b, &one)); /* 4-byte values */
    tl_builder_free(&b);
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    CHECK(!tl_builder_push8(&b, &one)); /* no room reserved */
    CHECK_OK(tl_builder_reserve(&b, 100, 0, &err), &err);
    int taken = 0;
    for (int64_t i = 0; i < 300; i++) {
        if (i == 150) CHECK_OK(tl_builder_append_null(&b, &err), &err);
        if (i == 150) continue;
        if (tl_builder_push8(&b, &i))
            taken++;
        else
            CHECK_OK(tl_builder_append_int(&b, i, &err), &err);
    }
    CHECK(taken >= 100 && taken < 150); /* none after the null */
    CHECK_OK(tl_builder_finish(&b, &a, &err), &err);
    check_result_shape(&a, 300);
    CHECK_INT(a.null_count, 1);
    tl_array_view v = tview("l", &a);
    for (int i = 0; i < 300; i++) {
        CHECK(tl_view_is_null(&v, i) == (i == 150));
        if (i != 150) CHECK_INT(tv_int(&v, i), i);
    }
    tl_array_release(&a);
    tl_builder_free(&b);
}

static void test_arrow_nulls(void)
{
    tl_error err;
    const char *formats[] = {"n", "b", "i", "g", "u", "Z", "w:3", "d:10,2", "tsu:UTC"};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        tl_arrow_type t = type_of(formats[f]);
        struct ArrowArray a;
        CHECK_OK(tl_arrow_nulls(&t, 10, &a, &err), &err);
        CHECK_INT(a.null_count, 10);
        CHECK_INT(a.length, 10);
        /* The result must pass the library's own shape checks. */
        struct ArrowSchema s;
        tl_array_view v;
        CHECK_OK(tl_schema_init(&s, formats[f], "x", 2, 0, &err), &err);
        CHECK_OK(tl_array_view_init(&v, &s, &a, &err), &err);
        tl_array_view_free(&v);
        tl_schema_release(&s);
        tl_array_release(&a);
    }
}

UNIT_TESTS(UNIT(test_builder_ints_with_nulls), UNIT(test_builder_push8), UNIT(test_builder_ranges),
           UNIT(test_builder_strings), UNIT(test_builder_empty_and_bool),
           UNIT(test_builder_fixed_binary), UNIT(test_arrow_nulls))
