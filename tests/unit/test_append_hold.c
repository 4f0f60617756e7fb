/* The runs an append holds as rows, not encoded (src/table/append_hold.c):
 * which chunks are held so, and the bytes counted against the limit. */
#include "table/append_merge.h"
#include "test_arrow_helpers.h"

static void test_which_chunks_are_held_raw(void)
{
    int64_t limit = 1000;
    /* The first chunk is encoded: a one-chunk append as always, and the
     * ratio of encoded to raw bytes comes from it. */
    CHECK(!tl_append_hold_raw(0, 0, 0, 10, limit, false));
    CHECK(!tl_append_hold_raw(0, 0, 0, 10, limit, true));
    /* Nothing to estimate encoded sizes from: encoded. */
    CHECK(!tl_append_hold_raw(1, 0, 0, 10, limit, false));
    /* Later chunks while they fit, with what is held. */
    CHECK(tl_append_hold_raw(1, 500, 0, 10, limit, false));
    CHECK(tl_append_hold_raw(2, 500, 990, 10, limit, false));
    CHECK(!tl_append_hold_raw(2, 500, 991, 10, limit, false));
    CHECK(!tl_append_hold_raw(1, 500, 0, 1001, limit, false));
    CHECK(!tl_append_hold_raw(1, 500, 0, 1, 0, false));
    /* The last one always: its rows are in memory anyway. */
    CHECK(tl_append_hold_raw(3, 500, 5000, 5000, limit, true));
    CHECK(tl_append_hold_raw(1, 500, 0, 1, 0, true));
}

static void test_rows_bytes_counts_each_buffer(void)
{
    tl_error err;
    int64_t times[5] = {1, 2, 3, 4, 5};
    const char *keys[5] = {"a", "bb", NULL, "dddd", "eeeee"};
    tcol c[3];
    tcol_ints(&c[0], "l", times, NULL, 5);    /* 40 bytes, no validity */
    tcol_ints(&c[1], "i", times, "..x..", 5); /* 20 bytes and 1 of validity */
    tcol_strs(&c[2], "U", keys, 5);           /* 6 offsets of 8, 12 bytes, 1 of validity */
    struct ArrowSchema schema;
    struct ArrowArray rows;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_array_init(&rows, 1, 3, &err), &err);
    rows.length = 5;
    for (int i = 0; i < 3; i++) {
        tl_schema_release(schema.children[i]);
        tl_schema_move(&c[i].schema, schema.children[i]);
        tl_array_move(&c[i].array, rows.children[i]);
        tcol_free(&c[i]);
    }
    CHECK_INT(tl_append_rows_bytes(&schema, &rows), 40 + 21 + 48 + 12 + 1);
    tl_array_release(&rows);
    tl_schema_release(&schema);
}

UNIT_TESTS(UNIT(test_which_chunks_are_held_raw), UNIT(test_rows_bytes_counts_each_buffer))
