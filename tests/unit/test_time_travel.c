/* Time travel (table/time_travel.h and SQL's AT clause): which snapshot a
 * version or a time names, the errors for unknown, early and expired ones,
 * and a handle pinned at an earlier snapshot, on a local lake. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "table/table_internal.h"
#include "table/time_travel.h"
#include "test_table_helpers.h"

static int64_t current_snapshot(const tl_table *t)
{
    return tl_ice_metadata_current_snapshot(t->md)->snapshot_id;
}

static void test_versions_times_and_pins(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "travel", "h.t", "device", "u", false, &schema);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    tl_error err;
    int64_t ids[3];
    const char *keys[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ttable_append_key(t, &schema, keys[i], i, &o, &r, &err), &err);
        ids[i] = current_snapshot(t);
    }
    int64_t id = 0;
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)ids[1]);
    CHECK_OK(tl_table_snapshot_named(t, text, &id, &err), &err);
    CHECK(id == ids[1]);
    CHECK_OK(tl_table_snapshot_named(t, "main", &id, &err), &err); /* a branch */
    CHECK(id == ids[2]);
    CHECK(tl_table_snapshot_named(t, "12345", &id, &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "h.t has no snapshot 12345") &&
          strstr(err.message, "keeps 3 snapshots"));
    CHECK(tl_table_snapshot_named(t, "nope", &id, &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "no snapshot \"nope\"") != NULL);

    int64_t second_us = tl_ice_metadata_snapshot(t->md, ids[1])->timestamp_ms * 1000;
    CHECK_OK(tl_table_snapshot_at(t, second_us, &id, &err), &err);
    CHECK(id == ids[1]);
    CHECK_OK(tl_table_snapshot_at(t, INT64_C(4102444800000000), &id, &err), &err); /* 2100 */
    CHECK(id == ids[2]);
    CHECK(tl_table_snapshot_at(t, 0, &id, &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "h.t as of 1970-01-01 00:00:00.000 UTC: that is before its first "
                              "snapshot") != NULL);

    tl_table *pinned = NULL;
    CHECK_OK(tl_table_pin(t, ids[0], &pinned, &err), &err);
    CHECK(pinned->pinned_snapshot == ids[0] && current_snapshot(pinned) == ids[0]);
    CHECK(current_snapshot(t) == ids[2]); /* the handle it came from is as it was */
    tl_table_close(pinned);
    CHECK(tl_table_pin(t, 12345, &pinned, &err) == TL_ERR_NOT_FOUND);

    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM h.t AT (VERSION => %lld)) * 10 + "
             "(SELECT count(*) FROM h.t)",
             (long long)ids[0]);
    CHECK(ttable_sql_int64(lake, sql) == 13);

    /* Expired: the missing parent of the snapshot kept. */
    const char *props[] = {"timelake.max-snapshots", "1", "timelake.min-snapshots", "1", NULL};
    CHECK_OK(tl_table_set_properties(t, props, &err), &err);
    tl_maintain_options mo = {.compact = 0, .retention = 0, .expire = 1, .rollups = 0};
    tl_maintain_report rep;
    CHECK_OK(tl_table_maintain(t, &mo, &rep, &err), &err);
    CHECK(rep.snapshots_expired == 2);
    snprintf(text, sizeof text, "%lld", (long long)ids[1]);
    CHECK(tl_table_snapshot_named(t, text, &id, &err) == TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "was expired") != NULL);
    /* As of the expired one's time: expired, unless the kept one shares its millisecond. */
    tl_status st = tl_table_snapshot_at(t, second_us, &id, &err);
    CHECK(st == TL_ERR_NOT_FOUND ? strstr(err.message, "were expired") != NULL : id == ids[2]);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM h.t AT (VERSION => %lld)", (long long)ids[2]);
    CHECK(ttable_sql_int64(lake, sql) == 3);

    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_versions_times_and_pins))
