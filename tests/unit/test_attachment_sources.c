/* The attachment source of a snapshot (table/attachments.h): the nearest of
 * it and its ancestors whose summary lists attachments. Each commit looks up
 * its parent's; the answer is kept with the snapshot's shared data, so that
 * later lookups (in copies of the metadata too) do not walk the history, and
 * stay what a walk would find. */
#include <stdlib.h>

#include "iceberg/metadata.h"
#include "table/attachments.h"
#include "unit.h"

/* A table of n snapshots in one line of descent; with_att[i] says whether
 * snapshot i lists attachments. Snapshot i has id 100 + i. */
static tl_ice_metadata *chain(size_t n, const bool *with_att)
{
    tl_ice_field fields[] = {
        {.id = 1, .name = "time", .required = true, .type = {.id = TL_ICE_TIMESTAMPTZ}}};
    tl_ice_schema schema = {.schema_id = 0, .fields = fields, .n_fields = 1};
    tl_ice_metadata *md = NULL;
    tl_error err;
    CHECK_OK(tl_ice_metadata_new("01a226cc-8bc3-742f-84ed-84dcdd777b95", "file:///tmp/att/t",
                                 &schema, NULL, NULL, NULL, 1795947269059LL, &md, &err),
             &err);
    for (size_t i = 0; md && i < n; i++) {
        tl_kv summary[] = {{"operation", "append"},
                           {TL_SUMMARY_ATTACHMENTS, "[\"a\"]"},
                           {"a", "file:///tmp/att/t/metadata/att-1.bin"}};
        tl_ice_snapshot snap = {
            .snapshot_id = 100 + (int64_t)i,
            .has_parent = i > 0,
            .parent_snapshot_id = 99 + (int64_t)i,
            .sequence_number = 1 + (int64_t)i,
            .timestamp_ms = 1795947269060LL + (int64_t)i,
            .manifest_list = "file:///tmp/att/t/metadata/snap.avro",
            .summary = summary,
            .n_summary = with_att[i] ? 3 : 1,
        };
        CHECK_OK(tl_ice_metadata_add_snapshot(md, &snap, NULL, &err), &err);
    }
    return md;
}

static int64_t source_id(const tl_ice_metadata *md, size_t i)
{
    const tl_ice_snapshot *s = tl_attachments_source(md, &md->snapshots[i]);
    return s ? s->snapshot_id : -1;
}

/* Every snapshot's source, asked one by one (in the order given) and all at
 * once, is want. */
static void check_sources(const tl_ice_metadata *md, const size_t *order, const int64_t *want)
{
    size_t *all = NULL;
    tl_error err;
    CHECK_OK(tl_attachments_sources(md, &all, &err), &err);
    for (size_t k = 0; k < md->n_snapshots; k++) {
        size_t i = order[k];
        CHECK_INT(source_id(md, i), want[i]);
        int64_t at = all && all[i] != SIZE_MAX ? md->snapshots[all[i]].snapshot_id : -1;
        CHECK_INT(at, want[i]);
    }
    free(all);
}

static void test_sources_kept_and_shared_by_copies(void)
{
    const bool with_att[] = {true, false, false, true, false, false};
    tl_ice_metadata *md = chain(6, with_att);
    if (md == NULL) return;
    const int64_t want[] = {100, 100, 100, 103, 103, 103};
    const size_t newest_first[] = {5, 2, 4, 1, 3, 0}, oldest_first[] = {0, 1, 2, 3, 4, 5};
    check_sources(md, newest_first, want);
    /* Kept: the source's id for a snapshot that lists none itself. */
    int64_t memo = 0;
    CHECK(tl_ice_snapshot_memo(&md->snapshots[5], &memo) && memo == 103);
    CHECK(tl_ice_snapshot_memo(&md->snapshots[1], &memo) && memo == 100);
    check_sources(md, oldest_first, want); /* answered from what is kept */

    /* A copy shares what is kept; once the source 100 is gone from it (an
     * expiry by another writer), its children have none, as a walk finds. */
    tl_ice_metadata *copy = NULL;
    tl_error err;
    CHECK_OK(tl_ice_metadata_copy(md, &copy, &err), &err);
    if (copy) {
        CHECK(copy->snapshots[4].data == md->snapshots[4].data);
        tl_ice_snapshot_free(&copy->snapshots[0]);
        memmove(copy->snapshots, copy->snapshots + 1, 5 * sizeof *copy->snapshots);
        copy->n_snapshots = 5;
        CHECK_INT(source_id(copy, 0), -1);
        CHECK_INT(source_id(copy, 1), -1);
        CHECK_INT(source_id(copy, 4), 103);
        tl_ice_metadata_free(copy);
    }
    /* The original still answers from its own snapshots. */
    check_sources(md, newest_first, want);
    tl_ice_metadata_free(md);
}

static void test_no_attachments_kept_as_none(void)
{
    bool with_att[40] = {false};
    tl_ice_metadata *md = chain(40, with_att);
    if (md == NULL) return;
    CHECK(tl_attachments_source(md, &md->snapshots[39]) == NULL);
    int64_t memo = 0;
    for (size_t i = 0; i < 40; i++)
        CHECK(tl_ice_snapshot_memo(&md->snapshots[i], &memo) &&
              memo == md->snapshots[i].snapshot_id);
    CHECK(tl_attachments_source(md, &md->snapshots[20]) == NULL);
    tl_ice_metadata_free(md);
}

/* A snapshot built by a caller (not part of a metadata) keeps nothing. */
static void test_unpacked_snapshot_keeps_nothing(void)
{
    tl_ice_snapshot s = {.snapshot_id = 7};
    int64_t memo = 0;
    tl_ice_snapshot_set_memo(&s, 7);
    CHECK(!tl_ice_snapshot_memo(&s, &memo));
}

UNIT_TESTS(UNIT(test_sources_kept_and_shared_by_copies), UNIT(test_no_attachments_kept_as_none),
           UNIT(test_unpacked_snapshot_keeps_nothing))
