/* The library's JSON text (tl_json_dumps, tl_json_dump_buf): jansson's
 * layout, with each real in the shortest text that reads back as the same
 * double where jansson writes 17 significant digits; strings that look like
 * numbers are left as they are. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/json_text.h"
#include "unit.h"

static json_t *parse(const char *doc)
{
    json_error_t je;
    json_t *j = json_loads(doc, JSON_DECODE_ANY, &je);
    if (j == NULL) unit_fail(__FILE__, __LINE__, "bad JSON in the test: %s", je.text);
    return j;
}

static void check_dump(const char *doc, size_t flags, const char *want)
{
    json_t *j = parse(doc);
    char *got = j ? tl_json_dumps(j, flags) : NULL;
    if (got == NULL || strcmp(got, want) != 0)
        unit_fail(__FILE__, __LINE__, "%s: %s, expected %s", doc, got ? got : "(null)", want);
    free(got);
    json_decref(j);
}

static void test_reals_are_shortest(void)
{
    check_dump("{\"a\": 0.1, \"l\": [0.3, -0.0, 3, -7, 1e21, 1e-7, 2.0, 1.5e300], \"o\": {\"x\": "
               "0.30000000000000004}}",
               JSON_COMPACT,
               "{\"a\":0.1,\"l\":[0.3,-0.0,3,-7,1e+21,1e-07,2.0,1.5e+300],\"o\":{\"x\":"
               "0.30000000000000004}}");
    check_dump("[0.1, {\"b\": 1e16}]", JSON_INDENT(2), "[\n  0.1,\n  {\n    \"b\": 1e+16\n  }\n]");
    check_dump("0.1", JSON_ENCODE_ANY, "0.1");
    check_dump("-9223372036854775808", JSON_ENCODE_ANY, "-9223372036854775808");
    /* Keys and strings are never rewritten, escaped quotes and all. */
    check_dump("{\"0.10000000000000001\": \"1e21 \\\" 0.10000000000000001\", \"k\\\\\": [0.1]}",
               JSON_COMPACT,
               "{\"0.10000000000000001\":\"1e21 \\\" 0.10000000000000001\",\"k\\\\\":[0.1]}");
    check_dump("[\"caf\\u00e9\", 0.1, true, false, null]", JSON_COMPACT | JSON_ENSURE_ASCII,
               "[\"caf\\u00E9\",0.1,true,false,null]");
}

/* Without reals the text is jansson's, byte for byte. */
static void test_layout_is_janssons(void)
{
    const char *doc = "{\"b\": [1, -2, {\"x\": null, \"a\": true}], \"a\": {}, \"c\": [], \"e\": "
                      "\"x/y\", \"n\": \"-1.5e3\"}";
    size_t flags[] = {0, JSON_COMPACT, JSON_INDENT(2) | JSON_SORT_KEYS,
                      JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH};
    json_t *j = parse(doc);
    for (size_t f = 0; j && f < sizeof flags / sizeof *flags; f++) {
        char *want = json_dumps(j, flags[f]), *got = tl_json_dumps(j, flags[f]);
        CHECK(want && got && strcmp(want, got) == 0);
        free(want);
        free(got);
    }
    json_decref(j);
}

/* Every real reads back as the same double, its sign too. */
static void test_reals_read_back(void)
{
    json_t *a = json_array();
    uint64_t seed = 0xfeedULL;
    for (int i = 0; i < 5000; i++) {
        uint64_t bits = trand(&seed);
        double v;
        memcpy(&v, &bits, sizeof v);
        if (isfinite(v)) json_array_append_new(a, json_real(v));
    }
    json_array_append_new(a, json_real(-0.0));
    json_array_append_new(a, json_real(ldexp(1, -1074)));
    char *text = tl_json_dumps(a, JSON_COMPACT);
    json_t *back = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(back && json_array_size(back) == json_array_size(a));
    for (size_t i = 0; back && i < json_array_size(a) && unit_failures < 5; i++) {
        double want = json_real_value(json_array_get(a, i));
        double got = json_real_value(json_array_get(back, i));
        if (memcmp(&want, &got, sizeof want) != 0)
            unit_fail(__FILE__, __LINE__, "%a read back as %a", want, got);
    }
    json_decref(back);
    free(text);
    json_decref(a);
}

/* tl_json_dump_buf appends to what the buffer holds. */
static void test_dump_appends(void)
{
    tl_buf b = {0};
    CHECK(tl_buf_append_str(&b, "x=") == 0);
    json_t *j = json_pack("{s:f}", "v", 0.1);
    CHECK(tl_json_dump_buf(j, JSON_COMPACT, &b) == 0);
    CHECK_STR((const char *)b.data, "x={\"v\":0.1}");
    CHECK_INT(b.len, strlen("x={\"v\":0.1}"));
    json_decref(j);
    tl_buf_free(&b);
}

UNIT_TESTS(UNIT(test_reals_are_shortest), UNIT(test_layout_is_janssons), UNIT(test_reals_read_back),
           UNIT(test_dump_appends))
