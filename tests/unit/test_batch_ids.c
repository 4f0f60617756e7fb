/* Appends with several batch ids (one per file of an import group): each id
 * is recorded, checked one by one whatever commit carried it, a commit whose
 * ids were all committed is a duplicate, and one whose ids were committed in
 * part is refused with nothing written. */
#include <stdlib.h>

#include "iceberg/metadata.h"
#include "table/batch_ids.h"
#include "table/commit_point.h"
#include "table/table_internal.h"
#include "test_table_helpers.h"

static struct ArrowSchema schema;

static tl_status append_row(tl_table *t, int at, const tl_append_options *o, tl_append_result *r,
                            tl_error *err)
{
    return ttable_append_row(t, &schema, at, o, r, err);
}

static void committed(tl_table *t, const char *const *ids, size_t n, const char *want)
{
    int out[8];
    tl_error err;
    CHECK_OK(tl_table_batches_committed(t, ids, n, out, &err), &err);
    char got[9];
    for (size_t i = 0; i < n; i++) got[i] = out[i] ? '1' : '0';
    got[n] = 0;
    CHECK_STR(got, want);
}

static void test_ids_of_a_group_are_checked_one_by_one(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "ids-lake", "iot.ids", "device", "u", false, &schema);
    tl_error err;
    tl_append_result r;
    const char *ac[] = {"a.csv", "c.csv"};
    tl_append_options o = {.batch_ids = ac, .n_batch_ids = 2, .maintain = 0};
    CHECK_OK(append_row(t, 1, &o, &r, &err), &err);
    CHECK_INT(r.rows, 1);
    CHECK_INT(r.duplicate, 0);
    const char *abc[] = {"a.csv", "b.csv", "c.csv", "a.csv..c.csv"};
    committed(t, abc, 4, "1010");
    /* The summary holds the ids as a JSON array; one id stays timelake.batch-id. */
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    CHECK_STR(tl_ice_snapshot_summary(s, TL_SUMMARY_BATCH_IDS), "[\"a.csv\",\"c.csv\"]");
    CHECK(tl_ice_snapshot_summary(s, TL_SUMMARY_BATCH_ID) == NULL);

    /* Every id committed, in any order: a duplicate, nothing written. */
    int64_t v = tl_table_version(t);
    const char *ca[] = {"c.csv", "a.csv"};
    o.batch_ids = ca;
    CHECK_OK(append_row(t, 2, &o, &r, &err), &err);
    CHECK_INT(r.duplicate, 1);
    CHECK_INT(tl_table_version(t), v);
    o.batch_ids = NULL;
    o.n_batch_ids = 0;
    o.batch_id = "c.csv";
    CHECK_OK(append_row(t, 2, &o, &r, &err), &err);
    CHECK_INT(r.duplicate, 1);

    /* Some committed, some not: refused, naming one of each. */
    const char *ab[] = {"a.csv", "b.csv"};
    o = (tl_append_options){.batch_ids = ab, .n_batch_ids = 2, .maintain = 0};
    CHECK_INT(append_row(t, 3, &o, &r, &err), TL_ERR_CONFLICT);
    CHECK(strstr(err.message, "\"a.csv\"") && strstr(err.message, "\"b.csv\""));
    CHECK_INT(tl_table_version(t), v);

    /* b.csv alone loads, and is then seen. */
    o = (tl_append_options){.batch_id = "b.csv", .maintain = 0};
    CHECK_OK(append_row(t, 3, &o, &r, &err), &err);
    CHECK_INT(r.rows, 1);
    CHECK_STR(tl_ice_snapshot_summary(tl_ice_metadata_current_snapshot(t->md), "timelake.batch-id"),
              "b.csv");
    committed(t, abc, 4, "1110");

    /* Bad ids: not UTF-8, or both forms. */
    const char *bad[] = {"ok.csv", "caf\xe9.csv"};
    o = (tl_append_options){.batch_ids = bad, .n_batch_ids = 2, .maintain = 0};
    CHECK_INT(append_row(t, 4, &o, &r, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "caf\\xe9.csv") && strstr(err.message, "UTF-8"));
    o = (tl_append_options){.batch_id = "x", .batch_ids = ab, .n_batch_ids = 2, .maintain = 0};
    CHECK_INT(append_row(t, 4, &o, &r, &err), TL_ERR_INVALID);
    CHECK_INT(tl_table_version(t), v + 1);

    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

static void append_id(tl_table *t, int at, const char *id, int want_duplicate)
{
    tl_append_options o = {.batch_id = id, .maintain = 0};
    tl_append_result r;
    tl_error err;
    CHECK_OK(append_row(t, at, &o, &r, &err), &err);
    CHECK_INT(r.duplicate, want_duplicate);
}

static int64_t current_snapshot(const tl_table *t)
{
    return t->md->current_snapshot_id;
}

/* The handle keeps the ids of its ancestry between checks (batch_index.h):
 * what it answers must stay the walk's answer through appends, rollbacks
 * (ids of snapshots rolled back past are no longer committed) and rollbacks
 * undone, other handles' commits, and expiry (ids then come from the ledger). */
static void test_kept_ids_follow_the_ancestry(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "ids-kept", "iot.kept", "device", "u", false, &schema);
    tl_error err;
    append_id(t, 1, "a", 0);
    int64_t after_a = current_snapshot(t);
    append_id(t, 2, "b", 0);
    int64_t after_b = current_snapshot(t);
    const char *ab[] = {"a", "b", "c"};
    committed(t, ab, 3, "110");
    append_id(t, 3, "b", 1);

    /* Back to a: b is no ancestor now (the same count of snapshots). */
    CHECK_OK(tl_table_rollback(t, after_a, &err), &err);
    committed(t, ab, 3, "100");
    append_id(t, 4, "c", 0); /* stacked on a, beside b */
    committed(t, ab, 3, "101");
    /* Forward to b again: c is not its ancestor. */
    CHECK_OK(tl_table_rollback(t, after_b, &err), &err);
    committed(t, ab, 3, "110");
    append_id(t, 5, "c", 0);
    committed(t, ab, 3, "111");

    /* Another handle commits d: this one sees it after its lost race. */
    tl_table *other;
    CHECK_OK(tl_lake_open_table(lake, "iot.kept", &other, &err), &err);
    const char *d[] = {"d"};
    committed(t, d, 1, "0");
    append_id(other, 6, "d", 0);
    append_id(t, 7, "d", 1); /* lost the race, reloaded, found d */
    committed(t, ab, 3, "111");

    /* Expiry of all but the newest snapshot: the ids move to the ledger. */
    const char *props[] = {"timelake.max-snapshots", "1", "timelake.min-snapshots", "1", NULL};
    CHECK_OK(tl_table_set_properties(other, props, &err), &err);
    tl_maintain_options mo = {.expire = 1};
    CHECK_OK(tl_table_maintain(other, &mo, NULL, &err), &err);
    CHECK_OK(tl_table_reload_same(t, &err), &err);
    CHECK_INT(t->md->n_snapshots, 1);
    const char *abcde[] = {"a", "b", "c", "d", "e"};
    committed(t, abcde, 5, "11110");
    append_id(t, 8, "e", 0);
    append_id(t, 9, "a", 1);
    committed(t, abcde, 5, "11111");

    tl_table_close(other);
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

/* A garbled timelake.batch-ids (another tool's) counts as no ids. */
static void test_snapshot_ids_tolerate_garbage(void)
{
    tl_kv kv[] = {{"timelake.batch-id", "one"}, {"timelake.batch-ids", "[\"two\",3,\"three\"]"}};
    tl_ice_snapshot s = {.summary = kv, .n_summary = 2};
    tl_strlist ids = {0};
    tl_error err;
    CHECK_OK(tl_snapshot_batch_ids(&s, &ids, &err), &err);
    CHECK_INT(ids.len, 3);
    CHECK(ids.len == 3 && strcmp(ids.items[2], "three") == 0);
    tl_strlist_free(&ids);
    kv[1].value = "{not json";
    CHECK_OK(tl_snapshot_batch_ids(&s, &ids, &err), &err);
    CHECK_INT(ids.len, 1);
    tl_strlist_free(&ids);
}

UNIT_TESTS(UNIT(test_ids_of_a_group_are_checked_one_by_one),
           UNIT(test_kept_ids_follow_the_ancestry), UNIT(test_snapshot_ids_tolerate_garbage))
