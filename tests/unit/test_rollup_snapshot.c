/* A rollup's rows come from the raw table at the snapshot its refresh
 * records (query/rollup.h: the raw handle's current one), not from whatever
 * another handle committed since: the refresh reads the raw table once,
 * consistently. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "query/rollup.h"
#include "table/rollup_def.h"
#include "test_table_helpers.h"

/* The rows of a stream, which it releases. */
static int64_t stream_rows(struct ArrowArrayStream *s)
{
    int64_t n = 0;
    struct ArrowArray a;
    while (s->get_next(s, &a) == 0 && a.release) {
        n += a.length;
        a.release(&a);
    }
    s->release(s);
    return n;
}

static void test_compute_reads_the_handles_snapshot(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *raw = ttable_create(&lake, "rollup_snapshot", "h.t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    const char *keys[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 3; i++)
        CHECK_OK(ttable_append_key(raw, &schema, keys[i], i, &o, &r, &err), &err);
    struct ArrowArrayStream rows;
    CHECK_OK(
        tl_lake_sql(lake,
                    "CREATE MATERIALIZED ROLLUP h.r AS SELECT device, time_bucket(INTERVAL "
                    "'1 hour', time) AS bucket, count(*) AS n FROM h.t GROUP BY device, bucket",
                    NULL, &rows, NULL, &err),
        &err);
    CHECK(stream_rows(&rows) == 1);
    CHECK(ttable_sql_int64(lake, "SELECT count(*) FROM h.r") == 3);
    /* Another handle appends a fourth series after `raw` was read. */
    tl_table *other = NULL, *rollup = NULL;
    CHECK_OK(tl_lake_open_table(lake, "h.t", &other, &err), &err);
    CHECK_OK(ttable_append_key(other, &schema, keys[3], 3, &o, &r, &err), &err);
    CHECK_OK(tl_lake_open_table(lake, "h.r", &rollup, &err), &err);
    tl_rollup_def d;
    CHECK_OK(tl_rollup_def_parse(rollup->md, "h.r", &d, &err), &err);
    CHECK_OK(tl_rollup_compute(lake, &d, raw, NULL, 0, &rows, &err), &err);
    CHECK(stream_rows(&rows) == 3); /* raw's snapshot: three series */
    CHECK_OK(tl_rollup_compute(lake, &d, other, NULL, 0, &rows, &err), &err);
    CHECK(stream_rows(&rows) == 4);
    /* The refresh records the snapshot it read, and reads what it records. */
    int64_t written = 0;
    CHECK_OK(tl_rollup_refresh(rollup, &written, &err), &err);
    CHECK(written == 4); /* the hour all four series share, computed again */
    CHECK(ttable_sql_int64(lake, "SELECT count(*) FROM h.r") == 4);
    tl_rollup_def_free(&d);
    tl_table_close(rollup);
    tl_table_close(other);
    tl_table_close(raw);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_compute_reads_the_handles_snapshot))
