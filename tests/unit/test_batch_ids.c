/* Appends with several batch ids (one per file of an import group): each id
 * is recorded, checked one by one whatever commit carried it, a commit whose
 * ids were all committed is a duplicate, and one whose ids were committed in
 * part is refused with nothing written. */
#include <stdlib.h>

#include "iceberg/metadata.h"
#include "formats/avro/avro_binary.h"
#include "formats/avro/avro_file.h"
#include "table/batch_ids.h"
#include "table/batch_ledger.h"
#include "table/commit_point.h"
#include "table/metadata_commit.h"
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

/* Points the table at a ledger as builds before lineages wrote it: records
 * {batch_id, committed_ms}, no timelake.lineages. */
static tl_status name_ledger(const tl_table *t, tl_ice_metadata *md, void *ctx, tl_error *err)
{
    (void)t;
    return tl_ice_metadata_set_property(md, TL_PROP_BATCH_LEDGER, ctx, err);
}

static void put_old_ledger(tl_table *t, const char *batch_id)
{
    static const char old_schema[] =
        "{\"type\":\"record\",\"name\":\"batch_ledger_entry\",\"fields\":["
        "{\"name\":\"batch_id\",\"type\":\"string\"},"
        "{\"name\":\"committed_ms\",\"type\":\"long\"}]}";
    tl_error err;
    tl_avro_schema *sc;
    CHECK_OK(tl_avro_schema_parse(old_schema, strlen(old_schema), &sc, &err), &err);
    tl_buf file = {0};
    tl_avro_writer w;
    CHECK_OK(tl_avro_writer_begin(&w, sc, NULL, NULL, &file, &err), &err);
    tl_buf *b = tl_avro_writer_block(&w);
    CHECK(tl_avro_write_string(b, batch_id) == 0 && tl_avro_write_long(b, 1) == 0);
    CHECK_OK(tl_avro_writer_end_datum(&w, &err), &err);
    CHECK_OK(tl_avro_writer_finish(&w, &err), &err);
    const char *name = "/metadata/batch-ledger-0190a000-0000-7000-8000-000000000000.avro";
    char key[600], url[900];
    snprintf(key, sizeof key, "%s%s", t->name.key, name);
    snprintf(url, sizeof url, "%s%s", t->location, name);
    CHECK_OK(tl_store_put(t->lake->store, key, file.data, file.len, &err), &err);
    CHECK_OK(tl_table_commit_metadata(t, name_ledger, url, &err), &err);
    tl_buf_free(&file);
    tl_avro_schema_free(sc);
}

/* A ledger of an older build: its ids count for every line of history (as
 * they did), and an expiry keeps them so beside its own, which count for
 * their line only. */
static void test_ledger_of_an_older_build(void)
{
    tl_lake *lake;
    tl_table *t = ttable_create(&lake, "ids-old-ledger", "iot.old", "device", "u", false, &schema);
    tl_error err;
    append_id(t, 1, "a", 0);
    int64_t after_a = current_snapshot(t);
    append_id(t, 2, "b", 0);
    put_old_ledger(t, "old");
    const char *ids[] = {"a", "b", "c", "old"};
    committed(t, ids, 4, "1101");
    CHECK_OK(tl_table_rollback(t, after_a, &err), &err);
    committed(t, ids, 4, "1001");
    append_id(t, 3, "c", 0);
    append_id(t, 4, "old", 1);

    /* Expiry removes a and b, keeping c: a counts for c's line, b for none. */
    const char *props[] = {"timelake.max-snapshots", "1", "timelake.min-snapshots", "1", NULL};
    CHECK_OK(tl_table_set_properties(t, props, &err), &err);
    tl_maintain_options mo = {.expire = 1};
    tl_maintain_report rep;
    CHECK_OK(tl_table_maintain(t, &mo, &rep, &err), &err);
    CHECK_INT(rep.snapshots_expired, 2);
    committed(t, ids, 4, "1011");
    tl_table *fresh;
    CHECK_OK(tl_lake_open_table(lake, "iot.old", &fresh, &err), &err);
    committed(fresh, ids, 4, "1011");
    append_id(fresh, 5, "b", 0);

    tl_table_close(fresh);
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
           UNIT(test_kept_ids_follow_the_ancestry), UNIT(test_ledger_of_an_older_build),
           UNIT(test_snapshot_ids_tolerate_garbage))
