/* JSON text with reals in their shortest round-trip form: the values a user
 * writes come back as written (0.1, 0.3), every real reads back as the same
 * double and no shorter text would, and everything else is laid out exactly
 * as jansson lays it out, whatever the flags. */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"
#include "json_write.h"
#include "unit.h"

static void check_real(double v, const char *want)
{
    char text[40];
    kjson_real_text(v, text, sizeof text);
    if (strcmp(text, want) != 0) unit_fail(__FILE__, __LINE__, "%.17g: %s, not %s", v, text, want);
}

/* What Python's repr prints for them (JavaScript differs only in layout:
 * 1e-7, 1e+21, 100). */
static void test_reals_as_written(void)
{
    check_real(0.1, "0.1");
    check_real(0.3, "0.3");
    check_real(1.1, "1.1");
    check_real(0.1 + 0.2, "0.30000000000000004");
    check_real(1e-7, "1e-07");
    check_real(1e21, "1e+21");
    check_real(1e16, "1e+16");
    check_real(123456.789, "123456.789");
    check_real(100.0, "100.0");
    check_real(-2.5, "-2.5");
    check_real(0.0, "0.0");
    check_real(-0.0, "-0.0");
    check_real(5e-324, "5e-324");
    check_real(DBL_MAX, "1.7976931348623157e+308");
    check_real(DBL_MIN, "2.2250738585072014e-308");
    check_real(9007199254740993.0, "9007199254740992.0");
    /* Powers of two whose shortest text is not the value rounded to as many
     * digits: the doubles below them are closer together than those above. */
    check_real(ldexp(1, -24), "5.960464477539063e-08");
    check_real(ldexp(1, -44), "5.684341886080802e-14");
    check_real(-ldexp(1, 89), "-6.189700196426902e+26");
    check_real(ldexp(1, 1023), "8.98846567431158e+307");
    check_real(NAN, "null");
    check_real(INFINITY, "null");
    check_real(-INFINITY, "null");
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

/* The text reads back as v, and no text of fewer significant digits does. */
static void check_shortest(double v)
{
    char text[40];
    kjson_real_text(v, text, sizeof text);
    double back = strtod(text, NULL);
    if (memcmp(&back, &v, sizeof v) != 0)
        unit_fail(__FILE__, __LINE__, "%a is written %s, which reads back as %a", v, text, back);
    else if (v != 0 && fewer_digits_read_back(v, significant(text) - 1))
        unit_fail(__FILE__, __LINE__, "%a is written %s: fewer digits read back too", v, text);
}

static void test_random_doubles_read_back(void)
{
    uint64_t seed = 0x1234567;
    for (int i = 0; i < 30000; i++) {
        uint64_t bits = trand(&seed);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v)) check_shortest(v);
    }
    for (int e = -1074; e <= 1023; e++) { /* the powers of two, where the gaps change */
        check_shortest(ldexp(1, e));
        check_shortest(nextafter(ldexp(1, e), 0));
        check_shortest(nextafter(ldexp(1, e), INFINITY));
    }
    for (int i = 1; i < 30000; i++) check_shortest(i / 1000.0);
}

static void check_layout(const char *doc, size_t flags)
{
    json_error_t je;
    json_t *j = json_loads(doc, JSON_DECODE_ANY, &je);
    if (j == NULL) {
        unit_fail(__FILE__, __LINE__, "bad JSON in the test: %s", je.text);
        return;
    }
    char *want = json_dumps(j, flags), *got = kjson_dumps(j, flags);
    if (want == NULL || got == NULL || strcmp(want, got) != 0)
        unit_fail(__FILE__, __LINE__, "flags %zx: %s, jansson %s", flags, got ? got : "(null)",
                  want ? want : "(null)");
    free(want);
    free(got);
    json_decref(j);
}

/* Without reals the text is jansson's, byte for byte. */
static void test_layout_is_janssons(void)
{
    const char *docs[] = {
        "{}",
        "[]",
        "{\"b\": [1, 2, {\"x\": null, \"a\": true}], \"a\": {}, \"c\": [], \"ab\": \"x/y\"}",
        "[\"caf\\u00e9 \\ud83d\\ude00\", \"\\u0001\\n\\t\\\"\\\\\", -9223372036854775808, false]",
        "{\"z\": {\"y\": {\"x\": [[[]], [{}], \"deep\"]}}, \"\": 0, \"ab\": 1, \"a\": 2}",
    };
    size_t flags[] = {0,
                      JSON_COMPACT,
                      JSON_INDENT(2),
                      JSON_INDENT(1) | JSON_SORT_KEYS,
                      JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII,
                      JSON_INDENT(31) | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH,
                      JSON_SORT_KEYS | JSON_ESCAPE_SLASH};
    for (size_t d = 0; d < sizeof docs / sizeof *docs; d++)
        for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) check_layout(docs[d], flags[f]);
    /* A scalar needs JSON_ENCODE_ANY, as in jansson. */
    json_t *s = json_string("x");
    CHECK(kjson_dumps(s, 0) == NULL);
    char *t = kjson_dumps(s, JSON_ENCODE_ANY);
    CHECK_STR(t, "\"x\"");
    free(t);
    json_decref(s);
}

static void test_reals_in_documents(void)
{
    json_t *j =
        json_pack("{s:f, s:[f, f, i], s:{s:f}}", "a", 0.1, "list", 0.3, -0.0, 3, "o", "x", 1e21);
    char *t = kjson_dumps(j, JSON_COMPACT);
    CHECK_STR(t, "{\"a\":0.1,\"list\":[0.3,-0.0,3],\"o\":{\"x\":1e+21}}");
    json_t *back = json_loads(t, 0, NULL);
    CHECK(back && json_equal(back, j));
    free(t);
    t = kjson_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    CHECK_STR(t, "{\n  \"a\": 0.1,\n  \"list\": [\n    0.3,\n    -0.0,\n    3\n  ],\n  \"o\": {\n"
                 "    \"x\": 1e+21\n  }\n}");
    free(t);
    /* The config hash keeps jansson's text. */
    t = kjson_dumps_jansson(j, JSON_COMPACT);
    CHECK_STR(t, "{\"a\":0.10000000000000001,\"list\":[0.29999999999999999,-0.0,3],\"o\":{\"x\":"
                 "1e21}}");
    free(t);
    json_decref(back);
    json_decref(j);
}

UNIT_TESTS(UNIT(test_reals_as_written), UNIT(test_random_doubles_read_back),
           UNIT(test_layout_is_janssons), UNIT(test_reals_in_documents))
