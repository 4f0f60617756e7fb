/* tl_table_filter_new_keys: keys held or not, NULL equal to NULL, repeats in
 * the input kept, an empty table, and the input consumed on every path. */
#include <stdlib.h>

#include "arrow/builder.h"
#include "arrow/stream.h"
#include "test_counted_stream.h"
#include "test_table_helpers.h"

#define DAY_US 86400000000LL

/* A stream of one batch of (time, k, v) rows (k NULL: a null key) that
 * counts its releases in *released. */
static void make_rows(struct ArrowArrayStream *out, const int64_t *times, const char *const *keys,
                      int n, int *released)
{
    tl_error err;
    struct ArrowSchema schema;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "tsu:UTC", "time", ARROW_FLAG_NULLABLE, 0, &err),
             &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "k", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[2], "g", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
    tl_arrow_type tt, tk, tv;
    tl_arrow_type_parse("tsu:UTC", &tt, NULL);
    tl_arrow_type_parse("u", &tk, NULL);
    tl_arrow_type_parse("g", &tv, NULL);
    tl_builder bt, bk, bv;
    tl_builder_init(&bt, &tt, NULL);
    tl_builder_init(&bk, &tk, NULL);
    tl_builder_init(&bv, &tv, NULL);
    for (int i = 0; i < n; i++) {
        tl_builder_append_int(&bt, times[i], NULL);
        if (keys[i])
            tl_builder_append_bytes(&bk, keys[i], strlen(keys[i]), NULL);
        else
            tl_builder_append_null(&bk, NULL);
        tl_builder_append_double(&bv, i, NULL);
    }
    struct ArrowArray batch;
    CHECK_OK(tl_array_init(&batch, 1, 3, &err), &err);
    batch.length = n;
    tl_builder_finish(&bt, batch.children[0], NULL);
    tl_builder_finish(&bk, batch.children[1], NULL);
    tl_builder_finish(&bv, batch.children[2], NULL);
    tl_builder_free(&bt);
    tl_builder_free(&bk);
    tl_builder_free(&bv);
    struct ArrowArrayStream inner;
    CHECK_OK(tl_stream_from_batches(&schema, &batch, 1, &inner, &err), &err);
    counted_stream_make(&inner, released, out);
}

/* Filters rows by (time, k); writes the kept rows' v values into kept (as
 * ints) and returns how many were kept. */
static int filter(tl_table *t, const int64_t *times, const char *const *keys, int n,
                  const char *const *cols, size_t n_cols, int *kept, int64_t *dropped,
                  tl_status *st, tl_error *err)
{
    int released = 0;
    struct ArrowArrayStream in, out;
    make_rows(&in, times, keys, n, &released);
    *st = tl_table_filter_new_keys(t, cols, n_cols, &in, &out, dropped, err);
    CHECK_INT(released, 1);
    if (*st != TL_OK) return -1;
    int k = 0;
    struct ArrowArray b;
    while (out.get_next(&out, &b) == 0 && b.release) {
        const double *v = b.children[2]->buffers[1];
        for (int64_t i = 0; i < b.length; i++) kept[k++] = (int)v[b.children[2]->offset + i];
        b.release(&b);
    }
    out.release(&out);
    return k;
}

static void test_keys(void)
{
    tl_lake *lake;
    tl_error err;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/nk1", unit_tmpdir());
    CHECK_OK(tl_lake_open(dir, NULL, &lake, &err), &err);
    int ignored = 0;
    struct ArrowArrayStream proto;
    make_rows(&proto, NULL, NULL, 0, &ignored); /* its schema: a plain table of nullable columns */
    struct ArrowSchema schema;
    CHECK(proto.get_schema(&proto, &schema) == 0);
    proto.release(&proto);
    tl_table *t = NULL;
    CHECK_OK(tl_lake_create_table(lake, "m.t", &schema, NULL, &t, &err), &err);
    schema.release(&schema);
    const char *cols[] = {"time", "k"};
    int kept[16];
    int64_t dropped;
    tl_status st;
    const int64_t t0[] = {0, 0, 0, 0, 0, 0};
    const char *k0[] = {"a", NULL, "b", "a", NULL, "c"};
    /* An empty table holds nothing: every row is kept, repeats too. */
    CHECK_INT(filter(t, t0, k0, 6, cols, 2, kept, &dropped, &st, &err), 6);
    CHECK_INT(dropped, 0);
    /* Append (0,a) and (DAY,null). */
    int released = 0;
    struct ArrowArrayStream rows;
    const int64_t t1[] = {0, DAY_US};
    const char *k1[] = {"a", NULL};
    make_rows(&rows, t1, k1, 2, &released);
    tl_append_result res;
    CHECK_OK(tl_table_append(t, &rows, NULL, &res, &err), &err);
    const int64_t t2[] = {0, DAY_US, DAY_US, 0, 2 * DAY_US, 0};
    const char *k2[] = {"a", NULL, "a", NULL, NULL, "a"};
    CHECK_INT(filter(t, t2, k2, 6, cols, 2, kept, &dropped, &st, &err), 3);
    CHECK_INT(dropped, 3); /* (0,a) twice and (DAY,null): NULL equals NULL */
    CHECK_INT(kept[0], 2);
    CHECK_INT(kept[1], 3);
    CHECK_INT(kept[2], 4);
    /* Errors still consume the input. */
    const char *bad[] = {"nope"};
    CHECK(filter(t, t2, k2, 6, bad, 1, kept, &dropped, &st, &err) < 0 && st == TL_ERR_INVALID);
    CHECK(strstr(err.message, "has no column \"nope\"") != NULL);
    CHECK(filter(t, t2, k2, 6, cols, 0, kept, &dropped, &st, &err) < 0 && st == TL_ERR_INVALID);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_keys))
