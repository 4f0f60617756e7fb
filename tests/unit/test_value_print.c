/* tl_value_printer on arrays DuckDB's results do not show: slices (non-zero
 * offsets at every level), dense and sparse unions with sparse type codes,
 * the interval and duration layouts, and offsets that point past the data. */
#include <stdlib.h>

#include "core/buf.h"
#include "formats/csv/value_print.h"
#include "unit.h"

/* Prints every value of a column as text and as JSON and checks both. */
static void check_values(struct ArrowSchema *s, struct ArrowArray *a, const char *const *text,
                         const char *const *json)
{
    tl_value_printer *p = NULL;
    tl_error err;
    CHECK_OK(tl_value_printer_new("c", s, a, &p, &err), &err);
    if (p == NULL) return;
    for (int64_t i = 0; i < a->length; i++) {
        tl_buf t = {0}, j = {0};
        CHECK_INT(tl_value_printer_text(p, i, &t), 0);
        CHECK_INT(tl_value_printer_json(p, i, &j), 0);
        CHECK_INT(tl_buf_append_byte(&t, 0) | tl_buf_append_byte(&j, 0), 0);
        CHECK_STR((const char *)t.data, text[i]);
        CHECK_STR((const char *)j.data, json[i]);
        tl_buf_free(&t);
        tl_buf_free(&j);
    }
    tl_value_printer_free(p);
}

static int32_t ints[] = {1, 2, 3, 4, 5, 6};
static struct ArrowSchema int_schema = {.format = "i", .name = "i", .flags = 2};
static const void *int_buffers[] = {NULL, ints};
static struct ArrowArray int_array = {.length = 6, .n_buffers = 2, .buffers = int_buffers};

static int32_t str_offsets[] = {0, 1, 4, 5, 6};
static const void *str_buffers[] = {NULL, str_offsets, "ay,zbc"};
static struct ArrowSchema str_schema = {.format = "u", .name = "s", .flags = 2};
static struct ArrowArray str_array = {.length = 4, .n_buffers = 3, .buffers = str_buffers};

static void test_sliced_list(void)
{
    /* [1, 2], null, [3, 4, 5], [6], sliced from row 1. */
    int32_t offsets[] = {0, 2, 2, 5, 6};
    uint8_t valid = 0x0d;
    const void *buffers[] = {&valid, offsets};
    struct ArrowSchema *kids[] = {&int_schema};
    struct ArrowArray *akids[] = {&int_array};
    struct ArrowSchema s = {
        .format = "+l", .name = "c", .flags = 2, .n_children = 1, .children = kids};
    struct ArrowArray a = {.length = 3,
                           .null_count = 1,
                           .offset = 1,
                           .n_buffers = 2,
                           .n_children = 1,
                           .buffers = buffers,
                           .children = akids};
    check_values(&s, &a, (const char *const[]){"NULL", "[3, 4, 5]", "[6]"},
                 (const char *const[]){"null", "[3,4,5]", "[6]"});
    /* The same values as a fixed-size list of 2, sliced from row 1: [3, 4], [5, 6]. */
    struct ArrowSchema fs = {.format = "+w:2", .name = "c", .n_children = 1, .children = kids};
    const void *no_validity[] = {NULL};
    struct ArrowArray fa = {.length = 2,
                            .offset = 1,
                            .n_buffers = 1,
                            .n_children = 1,
                            .buffers = no_validity,
                            .children = akids};
    check_values(&fs, &fa, (const char *const[]){"[3, 4]", "[5, 6]"},
                 (const char *const[]){"[3,4]", "[5,6]"});
}

static void test_sliced_struct_and_map(void)
{
    /* A struct sliced from row 1 over an int child itself sliced from row 1. */
    struct ArrowArray ints_from_1 = int_array;
    ints_from_1.offset = 1;
    ints_from_1.length = 5;
    struct ArrowSchema *kids[] = {&int_schema, &str_schema};
    struct ArrowArray *akids[] = {&ints_from_1, &str_array};
    const void *no_validity[] = {NULL};
    struct ArrowSchema s = {.format = "+s", .name = "c", .n_children = 2, .children = kids};
    struct ArrowArray a = {.length = 2,
                           .offset = 1,
                           .n_buffers = 1,
                           .n_children = 2,
                           .buffers = no_validity,
                           .children = akids};
    check_values(&s, &a, (const char *const[]){"{'i': 3, 's': 'y,z'}", "{'i': 4, 's': b}"},
                 (const char *const[]){"{\"i\":3,\"s\":\"y,z\"}", "{\"i\":4,\"s\":\"b\"}"});

    /* A map of string keys to ints: entries {s, i}, the map sliced from row 1. */
    struct ArrowSchema *ekids[] = {&str_schema, &int_schema};
    struct ArrowArray *eakids[] = {&str_array, &int_array};
    struct ArrowSchema es = {.format = "+s", .name = "entries", .n_children = 2, .children = ekids};
    struct ArrowArray ea = {
        .length = 4, .n_buffers = 1, .n_children = 2, .buffers = no_validity, .children = eakids};
    struct ArrowSchema *mkids[] = {&es};
    struct ArrowArray *makids[] = {&ea};
    int32_t offsets[] = {0, 1, 3, 4};
    const void *mbuffers[] = {NULL, offsets};
    struct ArrowSchema ms = {.format = "+m", .name = "c", .n_children = 1, .children = mkids};
    struct ArrowArray ma = {.length = 2,
                            .offset = 1,
                            .n_buffers = 2,
                            .n_children = 1,
                            .buffers = mbuffers,
                            .children = makids};
    check_values(&ms, &ma, (const char *const[]){"{'y,z'=2, b=3}", "{c=4}"},
                 (const char *const[]){"{\"y,z\":2,\"b\":3}", "{\"c\":4}"});
}

static void test_unions(void)
{
    struct ArrowSchema *kids[] = {&int_schema, &str_schema};
    struct ArrowArray *akids[] = {&int_array, &str_array};
    /* Sparse, type codes 5 (ints) and 7 (strings), sliced from row 1. */
    int8_t codes[] = {5, 7, 5, 7};
    const void *sparse_buffers[] = {codes};
    struct ArrowSchema s = {.format = "+us:5,7", .name = "c", .n_children = 2, .children = kids};
    struct ArrowArray a = {.length = 3,
                           .offset = 1,
                           .n_buffers = 1,
                           .n_children = 2,
                           .buffers = sparse_buffers,
                           .children = akids};
    check_values(&s, &a, (const char *const[]){"y,z", "3", "c"},
                 (const char *const[]){"{\"s\":\"y,z\"}", "{\"i\":3}", "{\"s\":\"c\"}"});
    /* Dense: each row's offset into its member. */
    int8_t dcodes[] = {0, 1, 0};
    int32_t doffsets[] = {5, 3, 0};
    const void *dense_buffers[] = {dcodes, doffsets};
    struct ArrowSchema d = {.format = "+ud:0,1", .name = "c", .n_children = 2, .children = kids};
    struct ArrowArray da = {
        .length = 3, .n_buffers = 2, .n_children = 2, .buffers = dense_buffers, .children = akids};
    check_values(&d, &da, (const char *const[]){"6", "c", "1"},
                 (const char *const[]){"{\"i\":6}", "{\"s\":\"c\"}", "{\"i\":1}"});
}

static void test_intervals_and_durations(void)
{
    int32_t months[] = {14, -1, 0};
    const void *mb[] = {NULL, months};
    struct ArrowSchema ms = {.format = "tiM", .name = "c"};
    struct ArrowArray ma = {.length = 3, .n_buffers = 2, .buffers = mb};
    check_values(&ms, &ma, (const char *const[]){"1 year 2 months", "-1 month", "00:00:00"},
                 (const char *const[]){"\"1 year 2 months\"", "\"-1 month\"", "\"00:00:00\""});
    int32_t day_ms[] = {-1, 1500, 2, 0};
    const void *db[] = {NULL, day_ms};
    struct ArrowSchema ds = {.format = "tiD", .name = "c"};
    struct ArrowArray da = {.length = 2, .n_buffers = 2, .buffers = db};
    check_values(&ds, &da, (const char *const[]){"-1 day 00:00:01.5", "2 days"},
                 (const char *const[]){"\"-1 day 00:00:01.5\"", "\"2 days\""});
    int64_t secs[] = {90061, -1, INT64_MAX};
    const void *sb[] = {NULL, secs};
    struct ArrowSchema ss = {.format = "tDs", .name = "c"};
    struct ArrowArray sa = {.length = 3, .n_buffers = 2, .buffers = sb};
    check_values(
        &ss, &sa, (const char *const[]){"25:01:01", "-00:00:01", "2562047788015215:30:07"},
        (const char *const[]){"\"25:01:01\"", "\"-00:00:01\"", "\"2562047788015215:30:07\""});
    int64_t ns[] = {-1};
    const void *nb[] = {NULL, ns};
    struct ArrowSchema ns_s = {.format = "tDn", .name = "c"};
    struct ArrowArray ns_a = {.length = 1, .n_buffers = 2, .buffers = nb};
    check_values(&ns_s, &ns_a, (const char *const[]){"-00:00:00.000000001"},
                 (const char *const[]){"\"-00:00:00.000000001\""});
}

static void test_bad_arrays_are_refused(void)
{
    tl_value_printer *p = NULL;
    tl_error err;
    struct ArrowSchema *kids[] = {&int_schema};
    struct ArrowArray *akids[] = {&int_array};
    int32_t past_end[] = {0, 7};
    const void *buffers[] = {NULL, past_end};
    struct ArrowSchema s = {.format = "+l", .name = "c", .n_children = 1, .children = kids};
    struct ArrowArray a = {
        .length = 1, .n_buffers = 2, .n_children = 1, .buffers = buffers, .children = akids};
    CHECK_INT(tl_value_printer_new("c", &s, &a, &p, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "column \"c\"") != NULL);
    int8_t codes[] = {3};
    const void *ub[] = {codes};
    struct ArrowSchema us = {.format = "+us:0", .name = "c", .n_children = 1, .children = kids};
    struct ArrowArray ua = {
        .length = 1, .n_buffers = 1, .n_children = 1, .buffers = ub, .children = akids};
    CHECK_INT(tl_value_printer_new("c", &us, &ua, &p, &err), TL_ERR_INVALID);
    /* A bad list inside a struct: the half-made child is freed too (ASan's leak check). */
    struct ArrowSchema *skids[] = {&s};
    struct ArrowArray *sakids[] = {&a};
    const void *no_validity[] = {NULL};
    struct ArrowSchema ss = {.format = "+s", .name = "c", .n_children = 1, .children = skids};
    struct ArrowArray sa = {
        .length = 1, .n_buffers = 1, .n_children = 1, .buffers = no_validity, .children = sakids};
    CHECK_INT(tl_value_printer_new("c", &ss, &sa, &p, &err), TL_ERR_INVALID);
    struct ArrowSchema odd = {.format = "+vl", .name = "c", .n_children = 1, .children = kids};
    CHECK_INT(tl_value_printer_new("c", &odd, &a, &p, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "cannot print column \"c\"") != NULL);
}

UNIT_TESTS(UNIT(test_sliced_list), UNIT(test_sliced_struct_and_map), UNIT(test_unions),
           UNIT(test_intervals_and_durations), UNIT(test_bad_arrays_are_refused))
