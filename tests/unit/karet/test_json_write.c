/* JSON text with reals in their shortest round-trip form: the values a user
 * writes come back as written (0.1, 0.3), and everything else is laid out
 * exactly as jansson lays it out, whatever the flags. */
#include <jansson.h>
#include <math.h>
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

/* Finite reals as tl_double_text writes them (its own test has the rest);
 * the others, which JSON cannot hold, as null. */
static void test_reals_as_written(void)
{
    check_real(0.1, "0.1");
    check_real(0.1 + 0.2, "0.30000000000000004");
    check_real(1e-7, "1e-07");
    check_real(1e21, "1e+21");
    check_real(100.0, "100.0");
    check_real(-0.0, "-0.0");
    check_real(NAN, "null");
    check_real(INFINITY, "null");
    check_real(-INFINITY, "null");
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

UNIT_TESTS(UNIT(test_reals_as_written), UNIT(test_layout_is_janssons),
           UNIT(test_reals_in_documents))
