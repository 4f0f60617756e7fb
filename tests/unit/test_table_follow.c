/* tl_table_follow: a second handle (the notification server's maintainer's)
 * takes the version the first one committed from its parse, with no read;
 * never goes back; and commits from there as any writer, racing the first.
 * A handle of another table is refused, the follower left as it was. */
#include "test_table_helpers.h"

static int64_t rows_of(tl_lake *lake)
{
    return ttable_sql_int64(lake, "SELECT count(*) FROM iot.follow");
}

static void test_follow_commits_of_another_handle(void)
{
    tl_lake *lake, *lake2;
    struct ArrowSchema schema;
    tl_error err = {0};
    tl_append_result r;
    tl_table *t = ttable_create(&lake, "follow", "iot.follow", "device", "u", false, &schema);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/follow", unit_tmpdir());
    CHECK_OK(tl_lake_open(dir, NULL, &lake2, &err), &err);
    tl_table *f;
    CHECK_OK(tl_lake_open_table(lake2, "iot.follow", &f, &err), &err);
    int64_t v0 = tl_table_version(f);
    CHECK_OK(ttable_append_row(t, &schema, 1, NULL, &r, &err), &err);
    CHECK_OK(ttable_append_row(t, &schema, 2, NULL, &r, &err), &err);
    CHECK_INT(tl_table_version(f), v0);
    CHECK_OK(tl_table_follow(f, t, &err), &err);
    CHECK_INT(tl_table_version(f), tl_table_version(t));
    CHECK_INT(ttable_snapshot_id(f), ttable_snapshot_id(t));
    /* The follower commits on top; the first handle, now behind, never
     * takes the follower back to its older version. */
    CHECK_OK(ttable_append_row(f, &schema, 3, NULL, &r, &err), &err);
    int64_t ahead = tl_table_version(f);
    CHECK(ahead > tl_table_version(t));
    CHECK_OK(tl_table_follow(f, t, &err), &err);
    CHECK_INT(tl_table_version(f), ahead);
    /* The first handle, behind, still commits (it finds the newer version). */
    CHECK_OK(ttable_append_row(t, &schema, 4, NULL, &r, &err), &err);
    CHECK(tl_table_version(t) > ahead);
    CHECK_OK(tl_table_follow(f, t, &err), &err);
    CHECK_INT(tl_table_version(f), tl_table_version(t));
    CHECK_INT(rows_of(lake), 4);
    /* Each handle has its own copy: closing the first leaves the follower whole. */
    tl_table_close(t);
    t = NULL;
    CHECK_OK(ttable_append_row(f, &schema, 5, NULL, &r, &err), &err);
    CHECK_INT(rows_of(lake2), 5);
    tl_table_close(f);
    tl_lake_close(lake2);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

/* Another table of the lake, and a table of the same name in another
 * warehouse, are not followed: TL_ERR_INVALID, the handle unchanged. */
static void test_follow_refuses_another_table(void)
{
    tl_lake *lake, *lake2;
    struct ArrowSchema schema, schema2;
    tl_error err = {0};
    tl_append_result r;
    tl_table *t = ttable_create(&lake, "follow_a", "iot.same", "device", "u", false, &schema);
    tl_table *twin = ttable_create(&lake2, "follow_b", "iot.same", "device", "u", false, &schema2);
    tl_table *other;
    CHECK_OK(tl_lake_create_table(lake, "iot.other", &schema, &(tl_table_options){0}, &other, &err),
             &err);
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ttable_append_row(twin, &schema2, i, NULL, &r, &err), &err);
        CHECK_OK(ttable_append_row(other, &schema, i, NULL, &r, &err), &err);
    }
    int64_t version = tl_table_version(t), snapshot = ttable_snapshot_id(t);
    CHECK(tl_table_version(twin) > version);
    CHECK(tl_table_version(other) > version);
    CHECK_INT(tl_table_follow(t, twin, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "another table") != NULL);
    CHECK_INT(tl_table_follow(t, other, &err), TL_ERR_INVALID);
    CHECK_INT(tl_table_version(t), version);
    CHECK_INT(ttable_snapshot_id(t), snapshot);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.same"), 0);
    /* Still a handle of its own table, which it follows as ever. */
    CHECK_OK(ttable_append_row(t, &schema, 1, NULL, &r, &err), &err);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM iot.same"), 1);
    tl_table_close(other);
    tl_table_close(twin);
    tl_table_close(t);
    tl_lake_close(lake2);
    tl_lake_close(lake);
    tl_schema_release(&schema);
    tl_schema_release(&schema2);
}

UNIT_TESTS(UNIT(test_follow_commits_of_another_handle), UNIT(test_follow_refuses_another_table))
