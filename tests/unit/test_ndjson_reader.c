/* The NDJSON reader: escapes, key order, missing keys, inference, target types
 * and errors, with lines split across reads of every size. */
#include "arrow/array.h"
#include "formats/ndjson/ndjson_reader.h"
#include "unit.h"

/* Reads text; returns the status, the schema and the last batch. */
static tl_status read_nd(const char *text, const struct ArrowSchema *target, size_t limit,
                         struct ArrowSchema *schema, struct ArrowArray *last, int64_t *rows,
                         tl_error *err)
{
    tl_text_input *in;
    tl_text_input_open_memory((const uint8_t *)text, strlen(text), "t.ndjson", &in, err);
    tl_text_input_set_read_limit(in, limit);
    tl_ndjson_options o = {.batch_rows = 2};
    struct ArrowArrayStream s;
    TL_TRY(tl_ndjson_stream_open(in, &o, target, &s, err));
    s.get_schema(&s, schema);
    *rows = 0;
    memset(last, 0, sizeof *last);
    tl_status st = TL_OK;
    for (;;) {
        struct ArrowArray a;
        if (s.get_next(&s, &a) != 0) {
            st = tl_error_set(err, TL_ERR_INVALID, "%s", s.get_last_error(&s));
            break;
        }
        if (a.release == NULL) break;
        *rows += a.length;
        tl_array_release(last);
        tl_array_move(&a, last);
    }
    s.release(&s);
    return st;
}

static void test_values(void)
{
    const char *text =
        "{\"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"n\": 1, \"t\": \"2024-05-01T10:00:00Z\"}\n"
        "\n  \r\n"
        "{\"t\": \"2024-05-01T10:00:00+01:00\", \"n\": -2, \"x\": 1.5, \"b\": true}\n"
        "{\"n\": null, \"b\": false}";
    for (size_t limit = 0; limit <= 40; limit += limit ? 3 : 1) { /* 0: the bytes are the window */
        struct ArrowSchema schema;
        struct ArrowArray last;
        int64_t rows;
        tl_error err;
        CHECK_OK(read_nd(text, NULL, limit, &schema, &last, &rows, &err), &err);
        CHECK_INT(rows, 3);
        CHECK_INT(schema.n_children, 5);
        if (schema.n_children != 5) return;
        const char *names[] = {"s", "n", "t", "x", "b"},
                   *formats[] = {"u", "l", "tsu:UTC", "g", "b"};
        for (int i = 0; i < 5; i++) {
            CHECK_STR(schema.children[i]->name, names[i]);
            CHECK_STR(schema.children[i]->format, formats[i]);
        }
        CHECK_INT(last.length, 1); /* batches of 2 rows */
        CHECK_INT(last.children[1]->null_count, 1);
        tl_array_release(&last);
        tl_schema_release(&schema);
    }
}

static void test_target(void)
{
    struct ArrowSchema target, schema;
    tl_schema_init(&target, "+s", "", 0, 2, NULL);
    tl_schema_init(target.children[0], "i", "a", ARROW_FLAG_NULLABLE, 0, NULL);
    tl_schema_init(target.children[1], "tdD", "d", ARROW_FLAG_NULLABLE, 0, NULL);
    struct ArrowArray last;
    int64_t rows;
    tl_error err;
    CHECK_OK(
        read_nd("{\"d\":\"1970-01-03\",\"a\":\"7\"}\n", &target, 5, &schema, &last, &rows, &err),
        &err);
    CHECK_INT(((const int32_t *)last.children[0]->buffers[1])[0], 7);
    CHECK_INT(((const int32_t *)last.children[1]->buffers[1])[0], 2);
    tl_array_release(&last);
    tl_schema_release(&schema);
    tl_status st =
        read_nd("{\"a\":1}\n{\"a\":1,\"zz\":2}\n", &target, 7, &schema, &last, &rows, &err);
    CHECK(st == TL_ERR_INVALID &&
          strstr(err.message, "t.ndjson: line 2: key \"zz\" is not a column"));
    st = read_nd("{\"a\":1}\n{\"a\":1e400}\n", &target, 7, &schema, &last, &rows, &err);
    CHECK(st == TL_ERR_INVALID && strstr(err.message, "line 2, column \"a\""));
    tl_schema_release(&target);
}

/* Lists and structs from JSON arrays and objects, for a nested target column. */
static void test_nested_target(void)
{
    struct ArrowSchema target, schema;
    tl_schema_init(&target, "+s", "", 0, 2, NULL);
    tl_schema_init(target.children[0], "+l", "l", ARROW_FLAG_NULLABLE, 1, NULL);
    tl_schema_init(target.children[0]->children[0], "l", "element", ARROW_FLAG_NULLABLE, 0, NULL);
    tl_schema_init(target.children[1], "+s", "s", ARROW_FLAG_NULLABLE, 1, NULL);
    tl_schema_init(target.children[1]->children[0], "u", "x", ARROW_FLAG_NULLABLE, 0, NULL);
    struct ArrowArray last;
    int64_t rows;
    tl_error err;
    /* Batches of two rows: the last holds the third and fourth lines. */
    CHECK_OK(read_nd("{\"l\":null,\"s\":{}}\n{}\n{\"l\":[1,null,3],\"s\":{\"x\":\"a]\"}}\n"
                     "{\"l\":[]}\n",
                     &target, 5, &schema, &last, &rows, &err),
             &err);
    CHECK_INT(rows, 4);
    CHECK_STR(schema.children[0]->format, "+l");
    const struct ArrowArray *l = last.children[0];
    CHECK_INT(l->length, 2);
    CHECK_INT(l->null_count, 0);
    const int32_t *offs = l->buffers[1];
    CHECK(offs[0] == 0 && offs[1] == 3 && offs[2] == 3);
    CHECK_INT(((const int64_t *)l->children[0]->buffers[1])[2], 3);
    CHECK_INT(l->children[0]->null_count, 1);
    const struct ArrowArray *st = last.children[1];
    CHECK_INT(st->null_count, 1); /* the missing key */
    CHECK_INT(st->children[0]->null_count, 1);
    tl_array_release(&last);
    tl_schema_release(&schema);
    tl_status bad =
        read_nd("{\"l\":[1]}\n{\"l\":{\"a\":1}}\n", &target, 5, &schema, &last, &rows, &err);
    CHECK(bad == TL_ERR_INVALID &&
          strstr(err.message, "line 2: column \"l\": an object where an array is due"));
    tl_schema_release(&target);
}

static void expect_error(const char *text, const char *words)
{
    struct ArrowSchema schema = {0};
    struct ArrowArray last = {0};
    int64_t rows;
    tl_error err = {0};
    tl_status st = read_nd(text, NULL, 3, &schema, &last, &rows, &err);
    CHECK(st == TL_ERR_INVALID);
    if (strstr(err.message, words) == NULL)
        unit_fail(__FILE__, __LINE__, "\"%s\" not in \"%s\"", words, err.message);
    tl_array_release(&last);
    tl_schema_release(&schema);
}

static void test_errors(void)
{
    expect_error("{\"a\":1}\n[1]\n", "line 2: expected an object");
    expect_error("{\"a\":{}}\n",
                 "line 1, column \"a\": a JSON object (\"{}\") where a single value");
    expect_error("{\"a\":[1, \"]\"\n", "line 1: unterminated object or array");
    expect_error("{\"a\":1,\"a\":2}\n", "key \"a\" appears twice");
    expect_error("{\"a\":\"x\\q\"}\n", "bad escape");
    expect_error("{\"a\":\"\\ud800\"}\n", "unpaired surrogate");
    expect_error("{\"a\":01}\n", "bad number");
    expect_error("{\"a\":1} x\n", "text after the object");
    expect_error("{\"a\":1}\n{\"a\":2}\n{\"b\":3}\n", "line 3: key \"b\" first appears after");
    expect_error("\n\n", "no columns");
    expect_error("{\"a\":1}\n{\"a\":2}\n{\"a\":\"x\"}\n",
                 "line 3, column \"a\": \"x\" is not a valid int64");
}

UNIT_TESTS(UNIT(test_nested_target), UNIT(test_values), UNIT(test_target), UNIT(test_errors))
