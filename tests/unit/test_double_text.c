/* tl_double_text, as the public API: Python's repr of a double (the values
 * a user writes come back as written: 0.1, 0.3), every text reads back as
 * the same double and no text of fewer digits would, the buffer's size is
 * honoured as snprintf honours it. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "timelake.h"
#include "unit.h"

static void check_text(double v, const char *want)
{
    char text[TL_DOUBLE_TEXT_SIZE];
    size_t n = tl_double_text(v, text, sizeof text);
    if (strcmp(text, want) != 0 || n != strlen(want))
        unit_fail(__FILE__, __LINE__, "%.17g: %s (%zu), not %s", v, text, n, want);
}

/* Each as Python 3 prints repr(v). */
static void test_as_python_repr(void)
{
    check_text(0.1, "0.1");
    check_text(0.3, "0.3");
    check_text(1.1, "1.1");
    check_text(0.1 + 0.2, "0.30000000000000004");
    check_text(1.0 / 3, "0.3333333333333333");
    check_text(2.0, "2.0");
    check_text(100.0, "100.0");
    check_text(-2.5, "-2.5");
    check_text(123456.789, "123456.789");
    check_text(123456789.123, "123456789.123");
    check_text(1e15, "1000000000000000.0");
    check_text(1e16, "1e+16");
    check_text(1e20, "1e+20");
    check_text(1e21, "1e+21");
    check_text(12345678901234567.0, "1.2345678901234568e+16");
    check_text(9007199254740993.0, "9007199254740992.0");
    check_text(0.0001, "0.0001");
    check_text(0.00012, "0.00012");
    check_text(1e-5, "1e-05");
    check_text(1e-7, "1e-07");
    check_text(-1.5e-7, "-1.5e-07");
    check_text(5e-324, "5e-324");
    check_text(DBL_MAX, "1.7976931348623157e+308");
    check_text(DBL_MIN, "2.2250738585072014e-308");
    check_text(-DBL_MIN, "-2.2250738585072014e-308");
    /* Powers of two whose shortest text is not the value rounded to as many
     * digits: the doubles below them are closer together than those above. */
    check_text(ldexp(1, -24), "5.960464477539063e-08");
    check_text(ldexp(1, -44), "5.684341886080802e-14");
    check_text(-ldexp(1, 89), "-6.189700196426902e+26");
    check_text(ldexp(1, 1023), "8.98846567431158e+307");
    check_text(0.0, "0.0");
    check_text(-0.0, "-0.0");
    check_text(NAN, "nan");
    check_text(-NAN, "nan");
    check_text(INFINITY, "inf");
    check_text(-INFINITY, "-inf");
}

/* The significant digits of a number's text ("0.00120" and "1.2e-03": 2). */
static int significant(const char *text)
{
    char digits[40];
    int n = 0;
    for (const char *p = text; *p && *p != 'e' && n < 39; p++)
        if (*p >= '0' && *p <= '9' && (n > 0 || *p != '0')) digits[n++] = *p;
    while (n > 0 && digits[n - 1] == '0') n--;
    return n;
}

/* Whether some decimal of q significant digits reads back as v: the two
 * nearest ones (those of v correctly rounded and the next in the direction
 * of v) are the only candidates, the interval that reads back as v being
 * narrower than their spacing. */
static bool fewer_digits_read_back(double v, int q)
{
    if (q < 1) return false;
    char text[48];
    snprintf(text, sizeof text, "%.*e", q - 1, fabs(v));
    char *e = strchr(text, 'e');
    int exp = atoi(e + 1) - (q - 1);
    unsigned long long m = 0;
    for (const char *p = text; p < e; p++)
        if (*p >= '0' && *p <= '9') m = m * 10 + (unsigned long long)(*p - '0');
    for (int d = -1; d <= 1; d++) {
        if (m == 0 && d < 0) continue;
        snprintf(text, sizeof text, "%s%llue%d", v < 0 ? "-" : "", m + (unsigned long long)d, exp);
        if (strtod(text, NULL) == v) return true;
    }
    return false;
}

/* The text reads back as v (its sign too), and no text of fewer
 * significant digits does. */
static void check_shortest(double v)
{
    char text[TL_DOUBLE_TEXT_SIZE];
    tl_double_text(v, text, sizeof text);
    double back = strtod(text, NULL);
    if (memcmp(&back, &v, sizeof v) != 0)
        unit_fail(__FILE__, __LINE__, "%a is written %s, which reads back as %a", v, text, back);
    else if (v != 0 && fewer_digits_read_back(v, significant(text) - 1))
        unit_fail(__FILE__, __LINE__, "%a is written %s: fewer digits read back too", v, text);
}

static void test_random_doubles_read_back(void)
{
    uint64_t seed = 0x1234567;
    for (int i = 0; i < 30000 && unit_failures < 5; i++) {
        uint64_t bits = trand(&seed);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v)) check_shortest(v);
    }
    for (int e = -1074; e <= 1023 && unit_failures < 5; e++) { /* where the gaps change */
        check_shortest(ldexp(1, e));
        check_shortest(-ldexp(1, e));
        check_shortest(nextafter(ldexp(1, e), 0));
        check_shortest(nextafter(ldexp(1, e), INFINITY));
    }
    for (int i = 1; i < 30000 && unit_failures < 5; i++) check_shortest(i / 1000.0);
}

/* As snprintf: the whole length returned, the text cut to fit and ended. */
static void test_buffer_sizes(void)
{
    char text[TL_DOUBLE_TEXT_SIZE];
    memset(text, 'x', sizeof text);
    CHECK_INT(tl_double_text(-DBL_MIN, text, 5), 24);
    CHECK_STR(text, "-2.2");
    CHECK(text[5] == 'x');
    CHECK_INT(tl_double_text(0.1, text, 1), 3);
    CHECK_STR(text, "");
    text[0] = 'x';
    CHECK_INT(tl_double_text(0.1, text, 0), 3);
    CHECK(text[0] == 'x');
    CHECK_INT(tl_double_text(0.1, NULL, 0), 3);
    /* The longest texts fit TL_DOUBLE_TEXT_SIZE. */
    CHECK(tl_double_text(-ldexp(1, -1022) * (1 + DBL_EPSILON), text, sizeof text) < sizeof text);
    CHECK(tl_double_text(-0.00012345678901234567, text, sizeof text) < sizeof text);
}

UNIT_TESTS(UNIT(test_as_python_repr), UNIT(test_random_doubles_read_back), UNIT(test_buffer_sizes))
