/* tl_table_follow: a second handle (the notification server's maintainer's)
 * takes the version the first one committed from its parse, with no read;
 * never goes back; and commits from there as any writer, racing the first. */
#include "table/table_internal.h"
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
    CHECK(f->md != t->md); /* a copy: each handle frees its own */
    CHECK_INT(f->md->current_snapshot_id, t->md->current_snapshot_id);
    CHECK_STR(f->metadata_url, t->metadata_url);
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
    tl_table_close(f);
    tl_lake_close(lake2);
    tl_table_close(t);
    tl_lake_close(lake);
    tl_schema_release(&schema);
}

UNIT_TESTS(UNIT(test_follow_commits_of_another_handle))
