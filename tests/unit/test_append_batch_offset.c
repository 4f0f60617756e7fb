/* A record batch's own offset and length select its rows (Arrow's struct
 * layout: row i is each column's row offset + i). An append of such a batch
 * writes exactly those rows, for flat and nested columns; a batch whose
 * columns are shorter than its rows, or with a null row, is refused and the
 * table stays as it was. */
#include "test_table_helpers.h"

#define N_ROWS 5
static const int64_t T0 = 1714557600000000LL; /* 2024-05-01T10:00:00Z */

/* Schema: time, device (the series key), l (list<int64>). */
static void make_schema(struct ArrowSchema *schema)
{
    tl_error err;
    CHECK_OK(tl_schema_init(schema, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[1], "u", "device", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[2], "+l", "l", ARROW_FLAG_NULLABLE, 1, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[2]->children[0], "l", "element", ARROW_FLAG_NULLABLE,
                            0, &err),
             &err);
}

/* A batch of N_ROWS rows: row i is (T0 + i s, "d<i>", [i, 10 i]). The device
 * column carries two leading rows of its own (offset 2), so the batch's
 * offset adds to a column offset. */
static void make_batch(struct ArrowArray *batch)
{
    tl_error err;
    int64_t times[N_ROWS], values[2 * N_ROWS];
    int32_t offsets[N_ROWS + 1];
    const char *keys[N_ROWS + 2] = {"junk-a", "junk-b", "d0", "d1", "d2", "d3", "d4"};
    for (int i = 0; i < N_ROWS; i++) {
        times[i] = T0 + i * 1000000LL;
        values[2 * i] = i;
        values[2 * i + 1] = 10 * i;
        offsets[i] = 2 * i;
    }
    offsets[N_ROWS] = 2 * N_ROWS;
    tcol t, k;
    tlist l;
    tcol_ints(&t, "tsu:UTC", times, NULL, N_ROWS);
    tcol_strs(&k, "u", keys, N_ROWS + 2);
    tlist_make(&l, "+l", "l", offsets, NULL, N_ROWS, values, NULL, 2 * N_ROWS);
    CHECK_OK(tl_array_init(batch, 1, 3, &err), &err);
    batch->length = N_ROWS;
    tl_array_move(&t.array, batch->children[0]);
    tl_array_move(&k.array, batch->children[1]);
    tl_array_move(&l.array, batch->children[2]);
    batch->children[1]->offset = 2;
    batch->children[1]->length = N_ROWS;
    tcol_free(&t);
    tcol_free(&k);
    tlist_free(&l);
}

static tl_status append_batch(tl_table *t, const struct ArrowSchema *schema,
                              struct ArrowArray *batch, tl_error *err)
{
    struct ArrowSchema copy;
    struct ArrowArrayStream s;
    CHECK_OK(tl_schema_copy(schema, &copy, err), err);
    CHECK_OK(tl_stream_from_batches(&copy, batch, 1, &s, err), err); /* batch moved */
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    return tl_table_append(t, &s, &o, &r, err);
}

static tl_table *create_table(tl_lake **lake, const char *dir_name, struct ArrowSchema *schema)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", unit_tmpdir(), dir_name);
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, lake, &err), &err);
    make_schema(schema);
    const char *keys[] = {"device"};
    tl_table_options opts = {.time_column = "time",
                             .series_key = keys,
                             .series_key_len = 1,
                             .dedup = -1,
                             .ingest_time = -1};
    tl_table *t = NULL;
    CHECK_OK(tl_lake_create_table(*lake, "iot.offsets", schema, &opts, &t, &err), &err);
    return t;
}

/* Reads the table back in time order and checks it holds rows first..last of
 * the batch make_batch builds. */
static void check_rows(tl_lake *lake, int first, int last)
{
    tl_error err;
    struct ArrowArrayStream s;
    CHECK_OK(tl_lake_sql(lake, "SELECT time, device, l FROM iot.offsets ORDER BY time", NULL, &s,
                         NULL, &err),
             &err);
    struct ArrowSchema schema;
    struct ArrowArray a;
    CHECK(s.get_schema(&s, &schema) == 0);
    CHECK(s.get_next(&s, &a) == 0);
    CHECK_INT(a.length, last - first + 1);
    tl_array_view time = tview(schema.children[0]->format, a.children[0]);
    tl_array_view device = tview(schema.children[1]->format, a.children[1]);
    const struct ArrowArray *l = a.children[2];
    const int32_t *loff = (const int32_t *)l->buffers[1] + l->offset;
    tl_array_view elem = tview(schema.children[2]->children[0]->format, l->children[0]);
    for (int i = 0; i < a.length; i++) {
        int row = first + i;
        char buf[16], want[16];
        snprintf(want, sizeof want, "d%d", row);
        CHECK_INT(tv_int(&time, i), T0 + row * 1000000LL);
        CHECK_STR(tv_str(&device, i, buf, sizeof buf), want);
        CHECK_INT(loff[i + 1] - loff[i], 2);
        CHECK_INT(tv_int(&elem, loff[i]), row);
        CHECK_INT(tv_int(&elem, loff[i] + 1), 10 * row);
    }
    a.release(&a);
    schema.release(&schema);
    s.release(&s);
}

static void test_batch_offset_selects_rows(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = create_table(&lake, "batch_offset", &schema);
    struct ArrowArray batch;
    make_batch(&batch);
    batch.offset = 1;
    batch.length = 3;
    tl_error err;
    CHECK_OK(append_batch(t, &schema, &batch, &err), &err);
    check_rows(lake, 1, 3);
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void test_short_column_and_null_row_are_refused(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = create_table(&lake, "batch_offset_bad", &schema);
    tl_error err;
    struct ArrowArray batch;
    make_batch(&batch);
    CHECK_OK(append_batch(t, &schema, &batch, &err), &err);

    make_batch(&batch); /* rows 3..5: one past the columns' end */
    batch.offset = 3;
    batch.length = 3;
    CHECK_INT(append_batch(t, &schema, &batch, &err), TL_ERR_INVALID);
    CHECK(
        strstr(err.message, "column \"time\" holds 5 rows but its batch reads rows 3 to 5 of it"));

    make_batch(&batch); /* row 2 is null as a whole */
    uint8_t *bits = tl_array_alloc_buffer(&batch, 0, 1);
    bits[0] = 0x1f & ~(1u << 2);
    batch.null_count = 1;
    CHECK_INT(append_batch(t, &schema, &batch, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "row 2 of a batch is null as a whole"));

    check_rows(lake, 0, N_ROWS - 1); /* only the first append */
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_batch_offset_selects_rows), UNIT(test_short_column_and_null_row_are_refused))
