/* The append's layout compares neighbouring sorted rows per key column
 * (dedup, series ends, partitions): keys that differ only at one end of the
 * words compared inline, or only in time, stay apart; equal ones are one. */
#include "test_table_helpers.h"

static void test_dedup_keeps_near_keys_apart(void)
{
    tl_lake *lake;
    tl_error err = {0};
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "layout", "iot.layout", "device", "u", false, &schema);
    const int64_t t1 = 1714557600000000LL, t2 = t1 + 1;
    /* Sorted, each key's rows at t1 are neighbours of the next key's. */
    const char *keys[] = {"pump-0001",
                          "pump-0002",
                          "pump-0001",
                          "ap-south-1-long-name",
                          "ap-south-1-long-namf",
                          "eu-w",
                          "eu-x",
                          "pump-0003",
                          "pump-0003"};
    int64_t times[] = {t1, t1, t1, t1, t1, t1, t1, t2, t1};
    struct ArrowArray batch;
    tbatch_time_key(&batch, times, keys, 9);
    struct ArrowSchema copy;
    struct ArrowArrayStream s;
    CHECK_OK(tl_schema_copy(&schema, &copy, &err), &err);
    CHECK_OK(tl_stream_from_batches(&copy, &batch, 1, &s, &err), &err);
    tl_append_result r;
    CHECK_OK(tl_table_append(t, &s, NULL, &r, &err), &err);
    CHECK_INT(r.rows, 8); /* the repeated (pump-0001, t1) is one row */
    /* One row per (device, time). */
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.layout"), 8);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.layout WHERE device = 'pump-0003'"),
              2);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(DISTINCT device) FROM iot.layout"), 7);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.layout WHERE device = 'pump-0001'"),
              1);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

UNIT_TESTS(UNIT(test_dedup_keeps_near_keys_apart))
