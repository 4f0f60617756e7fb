/* A table's history and format through the public API: tl_table_rollback,
 * tl_table_upgrade, and the lake-level calls tl_lake_set_settings and
 * tl_lake_cache_stats, on a local lake. The Python package runs the same
 * against the reference (tests/py/package_contract.py). */
#include <stdlib.h>
#include <string.h>

#include "test_table_helpers.h"

static int64_t count_rows(tl_lake *lake, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    return ttable_sql_int64(lake, sql);
}

static void test_rollback(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "rollback", "h.t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    CHECK_OK(ttable_append_key(t, &schema, "a", 0, &o, &r, &err), &err);
    int64_t first = ttable_snapshot_id(t);
    CHECK_OK(ttable_append_key(t, &schema, "b", 1, &o, &r, &err), &err);
    int64_t second = ttable_snapshot_id(t);
    CHECK(count_rows(lake, "h.t") == 2);

    CHECK(tl_table_rollback(t, 12345, &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "h.t: snapshot 12345") != NULL);
    CHECK(tl_table_version(t) == 3);

    CHECK_OK(tl_table_rollback(t, first, &err), &err);
    CHECK(tl_table_version(t) == 4 && ttable_snapshot_id(t) == first);
    CHECK(count_rows(lake, "h.t") == 1);
    CHECK_OK(tl_table_rollback(t, second, &err), &err); /* forward again */
    CHECK(count_rows(lake, "h.t") == 2);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

static void test_upgrade(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "upgrade", "h.t", "device", "u", false, &schema);
    tl_error err;
    tl_upgrade_report rep;
    CHECK_OK(tl_table_upgrade(t, NULL, &rep, &err), &err);
    CHECK(rep.steps && rep.steps[0] == NULL && rep.snapshot_before == 0);
    tl_upgrade_report_clear(&rep);

    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    for (int i = 0; i < 3; i++) CHECK_OK(ttable_append_key(t, &schema, "a", i, &o, &r, &err), &err);
    int64_t before = ttable_snapshot_id(t);
    tl_upgrade_options dry = {.dry_run = 1, .compact = 1};
    CHECK_OK(tl_table_upgrade(t, &dry, &rep, &err), &err);
    CHECK(rep.steps && rep.steps[0] &&
          strcmp(rep.steps[0], "rewrite 3 unsorted or small files in 1 partitions") == 0);
    CHECK(rep.steps[1] == NULL && rep.version_before == 4 && rep.snapshot_before == before);
    CHECK(rep.keep_snapshots_until_ms == 0 && tl_table_version(t) == 4);
    tl_upgrade_report_clear(&rep);

    tl_upgrade_options bad = {.compact = 1, .keep_snapshots = "soon"};
    CHECK(tl_table_upgrade(t, &bad, &rep, &err) == TL_ERR_INVALID);
    CHECK(tl_table_version(t) == 4);

    CHECK_OK(tl_table_upgrade(t, NULL, &rep, &err), &err);
    CHECK(rep.keep_snapshots_until_ms > 0 && tl_table_version(t) == 6);
    tl_upgrade_report_clear(&rep);
    tl_table_info info;
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK(info.files == 1 && info.rows == 3);
    tl_table_info_clear(&info);
    CHECK_OK(tl_table_rollback(t, before, &err), &err); /* undone */
    CHECK_OK(tl_table_info_get(t, &info, &err), &err);
    CHECK(info.files == 3);
    tl_table_info_clear(&info);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

static void test_lake_settings(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "settings", "h.t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    CHECK_OK(ttable_append_key(t, &schema, "a", 0, &o, &r, &err), &err);
    CHECK_OK(ttable_append_key(t, &schema, "a", 0, &o, &r, &err), &err); /* the same key again */
    CHECK(count_rows(lake, "h.t") == 1);
    const char *every[] = {"READ_DEDUP", "false", NULL};
    CHECK_OK(tl_lake_set_settings(lake, every, &err), &err);
    CHECK(count_rows(lake, "h.t") == 2);
    const char *bad[] = {"read_dedup", "maybe", NULL};
    CHECK(tl_lake_set_settings(lake, bad, &err) == TL_ERR_INVALID);
    CHECK(count_rows(lake, "h.t") == 2); /* unchanged */
    CHECK_OK(tl_lake_set_settings(lake, NULL, &err), &err);
    CHECK(count_rows(lake, "h.t") == 1);
    tl_cache_counts c = {0};
    CHECK(tl_lake_cache_stats(lake, &c) == 0); /* a local lake has no read cache */
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_rollback), UNIT(test_upgrade), UNIT(test_lake_settings))
