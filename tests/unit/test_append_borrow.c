/* Rows fitted to a table by borrowing the batches' columns (the notification
 * server's group commit): a column already in its storage form shares the
 * batch's buffers, one that needs a cast is copied, the batches are left
 * whole for a second fit, and the borrowed rows append like copied ones. */
#include "table/append.h"
#include "test_table_helpers.h"

static void test_borrow_flat_shares_and_frees_its_own(void)
{
    tl_error err = {0};
    tcol c;
    int64_t v[] = {1, 2, 3};
    tcol_ints(&c, "l", v, ".x.", 3);
    struct ArrowArray b;
    CHECK_OK(tl_array_borrow_flat(&c.array, &b, &err), &err);
    CHECK_INT(b.length, 3);
    CHECK_INT(b.null_count, c.array.null_count);
    CHECK(b.buffers[0] == c.array.buffers[0] && b.buffers[1] == c.array.buffers[1]);
    CHECK(b.buffers != c.array.buffers); /* its own pointer array */
    CHECK_INT(tl_array_memory(&b), -1);  /* not its memory */
    tl_array_release(&b);                /* frees nothing of c's (ASan checks) */
    CHECK(b.release == NULL);
    CHECK_INT(((const int64_t *)c.array.buffers[1])[2], 3);
    tcol_free(&c);
    /* A struct (children) is not flat. */
    struct ArrowArray s;
    CHECK_OK(tl_array_init(&s, 1, 1, &err), &err);
    CHECK_INT(tl_array_borrow_flat(&s, &b, &err), TL_ERR_INTERNAL);
    CHECK(b.release == NULL);
    tl_array_release(&s);
}

/* A batch of `format` keys ("u" or "U"), times from `at` seconds after 2024-05-01. */
static void key_batch(const char *format, const char *const *keys, int64_t n, int64_t at,
                      struct ArrowSchema *schema, struct ArrowArray *batch)
{
    tl_error err = {0};
    int64_t times[4];
    for (int64_t i = 0; i < n; i++) times[i] = 1714557600000000LL + (at + i) * 1000000LL;
    tcol t, k;
    tcol_ints(&t, "tsu:UTC", times, NULL, n);
    tcol_strs(&k, format, keys, n);
    CHECK_OK(tl_schema_init(schema, "+s", NULL, 0, 2, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema->children[1], format, "device", 0, 0, &err), &err);
    CHECK_OK(tl_array_init(batch, 1, 2, &err), &err);
    batch->length = n;
    tl_array_move(&t.array, batch->children[0]);
    tl_array_move(&k.array, batch->children[1]);
    tcol_free(&t);
    tcol_free(&k);
}

static void append_rows(tl_table *t, tl_rows *rows, const char *batch_id)
{
    tl_error err = {0};
    struct ArrowArrayStream s;
    CHECK_OK(tl_stream_from_batches(&rows->schema, &rows->array, 1, &s, &err), &err);
    tl_append_options o = {.batch_id = batch_id, .maintain = 0};
    tl_append_result r;
    CHECK_OK(tl_table_append(t, &s, &o, &r, &err), &err);
    CHECK_INT(r.rows, 3);
}

static void test_prepare_borrow(void)
{
    tl_lake *lake;
    tl_error err = {0};
    tl_table *t = ttable_create(&lake, "borrow", "iot.borrow", "device", "u", false, NULL);
    const char *keys[] = {"pump-2", "pump-1", "pump-3"};
    const char *formats[] = {"U", "u"}; /* the storage form, then one the fit casts */
    for (int f = 0; f < 2; f++) {
        struct ArrowSchema schema;
        struct ArrowArray batch;
        key_batch(formats[f], keys, 3, 10 * f, &schema, &batch);
        const void *key_data = batch.children[1]->buffers[2];
        for (int round = 0; round < 2; round++) { /* the batch is whole for a second fit */
            tl_rows rows;
            CHECK_OK(tl_append_prepare_borrow(t, &schema, &batch, 1, 7, &rows, &err), &err);
            const struct ArrowArray *time = rows.array.children[0];
            const struct ArrowArray *key = rows.array.children[1];
            CHECK(time->buffers[1] == batch.children[0]->buffers[1]); /* borrowed */
            CHECK((key->buffers[2] == key_data) == (f == 0));         /* borrowed, or cast */
            CHECK_STR(rows.schema.children[1]->format, "U");
            tl_array_view kv = tview("U", key);
            char buf[16];
            CHECK_STR(tv_str(&kv, 1, buf, sizeof buf), "pump-1");
            tl_array_view_free(&kv);
            if (round == 0) {
                tl_rows_free(&rows); /* nothing of the batch's goes with it */
            } else {
                char id[16];
                snprintf(id, sizeof id, "b%d", f);
                append_rows(t, &rows, id);
            }
        }
        CHECK(batch.children[1]->buffers[2] == key_data);
        tl_array_release(&batch);
        tl_schema_release(&schema);
    }
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.borrow WHERE device = 'pump-3'"), 2);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_borrow_flat_shares_and_frees_its_own), UNIT(test_prepare_borrow))
