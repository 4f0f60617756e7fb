/* tl_lake_query: inputs read and released on every path (success, bad
 * options, a bad input, a failing query), scanned twice, joined with a lake
 * table; only_namespace, max_rows and timeout_ms. */
#include <stdlib.h>

#include "arrow/builder.h"
#include "arrow/stream.h"
#include "test_counted_stream.h"
#include "test_table_helpers.h"

/* A stream of one int64 column "n" (or, bad, a decimal) that counts its releases. */
static void make_input(struct ArrowArrayStream *out, const char *format, int64_t n, int *released)
{
    tl_error err;
    struct ArrowSchema schema;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 1, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], format, "n", ARROW_FLAG_NULLABLE, 0, &err), &err);
    tl_arrow_type t;
    CHECK_OK(tl_arrow_type_parse(format, &t, &err), &err);
    tl_builder b;
    CHECK_OK(tl_builder_init(&b, &t, &err), &err);
    for (int64_t i = 0; i < n; i++) CHECK_OK(tl_builder_append_int(&b, i, &err), &err);
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 1, &err), &err);
    batch.length = n;
    CHECK_OK(tl_builder_finish(&b, batch.children[0], &err), &err);
    tl_builder_free(&b);
    struct ArrowArrayStream inner;
    CHECK_OK(tl_stream_from_batches(&schema, &batch, 1, &inner, &err), &err);
    counted_stream_make(&inner, released, out);
}

/* Runs `sql` with two inputs a (3 rows) and b (of `b_format`); returns the
 * status, the first value of the result in *value, and checks both inputs
 * were released. */
static tl_status run(tl_lake *lake, const char *sql, const char *b_format, tl_sql_options o,
                     int64_t *value, tl_error *err)
{
    int released = 0;
    struct ArrowArrayStream a, b, out;
    make_input(&a, "l", 3, &released);
    make_input(&b, b_format, 5, &released);
    tl_sql_input inputs[] = {{"a", &a}, {"B", &b}};
    o.inputs = inputs;
    o.inputs_len = 2;
    tl_status st = tl_lake_query(lake, sql, &o, &out, NULL, err);
    CHECK_INT(released, 2);
    *value = -1;
    if (st != TL_OK) return st;
    struct ArrowArray batch;
    CHECK(out.get_next(&out, &batch) == 0);
    if (batch.release && batch.length > 0)
        *value = ((const int64_t *)batch.children[0]->buffers[1])[0];
    if (batch.release) batch.release(&batch);
    out.release(&out);
    return st;
}

static void test_inputs_released_on_every_path(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "lq1", "m.t", "k", "u", true, NULL);
    tl_error err;
    int64_t v;
    CHECK_OK(run(lake, "SELECT count(*) FROM a x JOIN b y ON x.n = y.n JOIN a z ON z.n = x.n", "l",
                 (tl_sql_options){0}, &v, &err),
             &err);
    CHECK_INT(v, 3);
    CHECK_OK(run(lake, "SELECT count(*) FROM m.t, a", "l", (tl_sql_options){0}, &v, &err), &err);
    CHECK_INT(v, 0);
    CHECK(run(lake, "SELECT 1", "d:5,2", (tl_sql_options){0}, &v, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "input \"B\": column \"n\" is of type decimal128(5, 2)") != NULL);
    CHECK(run(lake, "SELECT 1", "l", (tl_sql_options){.max_rows = -1}, &v, &err) == TL_ERR_INVALID);
    CHECK(run(lake, "SELECT 1", "l", (tl_sql_options){.namespace_ = "bad name!"}, &v, &err) ==
          TL_ERR_INVALID);
    CHECK(run(lake, "SELEC 1", "l", (tl_sql_options){0}, &v, &err) == TL_ERR_QUERY);
    CHECK(run(lake, "SELECT * FROM nosuch", "l", (tl_sql_options){0}, &v, &err) ==
          TL_ERR_NOT_FOUND);
    CHECK(run(lake, NULL, "l", (tl_sql_options){0}, &v, &err) == TL_ERR_INVALID);
    CHECK(run(lake, "SELECT count(*) FROM m.t", "l",
              (tl_sql_options){.namespace_ = "other", .only_namespace = 1}, &v,
              &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "outside namespace other") != NULL);
    /* The inputs of a query are gone after it. */
    struct ArrowArrayStream out;
    CHECK(tl_lake_query(lake, "SELECT * FROM a", NULL, &out, NULL, &err) == TL_ERR_NOT_FOUND);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_limits(void)
{
    tl_lake *lake;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/lq2", unit_tmpdir());
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, &lake, &err), &err);
    int64_t v;
    tl_query_stats stats;
    struct ArrowArrayStream out;
    tl_sql_options o = {.max_rows = 4};
    CHECK_OK(tl_lake_query(lake, "SELECT range FROM range(10)", &o, &out, &stats, &err), &err);
    struct ArrowArray batch;
    int64_t rows = 0;
    while (out.get_next(&out, &batch) == 0 && batch.release) {
        rows += batch.length;
        batch.release(&batch);
    }
    out.release(&out);
    CHECK_INT(rows, 4);
    CHECK_INT(stats.truncated, 1);
    o.max_rows = 10;
    CHECK_OK(tl_lake_query(lake, "SELECT range FROM range(10)", &o, &out, &stats, &err), &err);
    out.release(&out);
    CHECK_INT(stats.truncated, 0);
    tl_sql_options slow = {.timeout_ms = 100};
    CHECK(run(lake, "SELECT count(*) FROM range(1000000000000) r, a WHERE r.range % 3 = a.n", "l",
              slow, &v, &err) == TL_ERR_QUERY);
    CHECK(strstr(err.message, "timed out") != NULL);
    tl_sql_options roomy = {.timeout_ms = 600000}; /* a limit that is not reached */
    CHECK_OK(run(lake, "SELECT sum(n) FROM b", "l", roomy, &v, &err), &err);
    CHECK_INT(v, 10);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_inputs_released_on_every_path), UNIT(test_limits))
