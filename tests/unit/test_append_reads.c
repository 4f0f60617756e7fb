/* What an append reads back of its own writes (src/table/commit.c,
 * commit_rewrite.c, maintain_manifests.c): the manifests and manifest lists
 * a commit writes are parsed from their bytes as they go up, so neither the
 * inline compaction folded into an append (which plans on the append's
 * snapshot) nor the next append (which merges its parent's list) reads them
 * back; and a compaction opens each input file once (tl_store_reader), not
 * once per read of its footer and column chunks. Counted through the
 * store's fault hook (store_fault.h). */
#include <stdatomic.h>
#include <string.h>

#include "store/store_fault.h"
#include "test_table_helpers.h"

static atomic_bool armed;
static atomic_int avro_reads, data_opens, data_reads;

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static tl_store_fault hook(tl_store_call call, const char *key, void *ctx)
{
    (void)ctx;
    bool read = call == TL_CALL_GET || call == TL_CALL_GET_RANGE || call == TL_CALL_GET_FIRST;
    if (atomic_load(&armed) && read && ends_with(key, ".avro")) atomic_fetch_add(&avro_reads, 1);
    bool data = strstr(key, "/data/") && ends_with(key, ".parquet");
    if (atomic_load(&armed) && data && call == TL_CALL_OPEN) atomic_fetch_add(&data_opens, 1);
    if (atomic_load(&armed) && data && read) atomic_fetch_add(&data_reads, 1);
    return TL_FAULT_NONE;
}

static void set_properties(tl_table *t, const char *const *changes)
{
    tl_error err;
    CHECK_OK(tl_table_set_properties(t, changes, &err), &err);
}

static void test_appends_read_back_no_manifest(void)
{
    tl_store_set_fault(hook, NULL); /* consulted by the stores opened from now on */
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "reads", "t", "device", "u", false, &schema);
    const char *props[] = {"timelake.compact-min-files", "2", NULL};
    set_properties(t, props);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    CHECK_OK(ttable_append_row(t, &schema, 0, &o, &r, &err), &err);
    atomic_store(&avro_reads, 0);
    atomic_store(&armed, true);
    int64_t compacted = 0;
    for (int i = 1; i <= 6; i++) {
        CHECK_OK(ttable_append_row(t, &schema, i, &o, &r, &err), &err);
        CHECK(r.maintenance_error[0] == '\0');
        compacted += r.maintenance.partitions_compacted;
    }
    atomic_store(&armed, false);
    CHECK(compacted > 0); /* folded compactions planned on the appends' snapshots */
    CHECK_INT(atomic_load(&avro_reads), 0);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 7);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
    tl_store_set_fault(NULL, NULL);
}

/* Six files of one row (one row group) each, merged by a full compaction:
 * six opens, each for the footer and every column chunk. */
static void test_compaction_opens_each_input_once(void)
{
    tl_store_set_fault(hook, NULL);
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "opens", "t", "device", "u", false, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    for (int i = 0; i < 6; i++) CHECK_OK(ttable_append_row(t, &schema, i, &o, &r, &err), &err);
    atomic_store(&data_opens, 0);
    atomic_store(&data_reads, 0);
    atomic_store(&armed, true);
    tl_maintain_options m = {.compact = 1};
    tl_maintain_report report;
    CHECK_OK(tl_table_maintain(t, &m, &report, &err), &err);
    atomic_store(&armed, false);
    CHECK_INT(report.files_rewritten, 6);
    CHECK_INT(atomic_load(&data_opens), 6);
    /* Through those opens: the footer, then time, device and the ingest time. */
    CHECK(atomic_load(&data_reads) >= 6 * 4);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 6);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
    tl_store_set_fault(NULL, NULL);
}

UNIT_TESTS(UNIT(test_appends_read_back_no_manifest), UNIT(test_compaction_opens_each_input_once))
