/* A table commit on local disk, watched through the local store's fault hook
 * (store/local_sync.h) called before each fsync: every file the new version
 * names is synced before the version exists, the version's directory after
 * it and before the append returns, and a failed sync of a named file
 * publishes nothing (the table stays at its version, readable). */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/local_sync_mode.h"
#include "store/local_sync.h"
#include "test_table_helpers.h"

#define MAX_EVENTS 256

static char version_path[900], metadata_dir[800];
static struct {
    char path[1200];
    bool version_there;
    int64_t newest; /* the newest version present then */
} events[MAX_EVENTS];
static int64_t first_watched; /* the version before the watched call */
static atomic_int n_events;
static bool fail_data, fail_final, fail_compacted;
static bool slow_final;          /* the sync of the version's folder takes 100 ms */
static atomic_bool final_synced; /* and that sync's hook has returned */

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int64_t newest_version(void)
{
    int64_t v = first_watched;
    for (;; v++) {
        char p[1000];
        snprintf(p, sizeof p, "%s/v%lld.metadata.json", metadata_dir, (long long)(v + 1));
        if (!exists(p)) return v;
    }
}

static int watch(const char *path)
{
    int i = atomic_fetch_add(&n_events, 1);
    if (i < MAX_EVENTS) {
        snprintf(events[i].path, sizeof events[i].path, "%s", path);
        events[i].version_there = exists(version_path);
        events[i].newest = newest_version();
    }
    if (slow_final && strcmp(path, metadata_dir) == 0 && exists(version_path)) {
        usleep(100 * 1000);
        atomic_store(&final_synced, true);
    }
    if (fail_final && strcmp(path, metadata_dir) == 0 && exists(version_path)) return EIO;
    if (fail_compacted && strstr(path, "-added-m.avro"))
        return EIO; /* the compaction's manifest of the files it wrote */
    return fail_data && strstr(path, "/data/") && strstr(path, ".parquet") ? EIO : 0;
}

/* Whether path was synced while the newest version was below `bound`. */
static bool synced_before(const char *path, int64_t bound)
{
    int n = atomic_load(&n_events);
    for (int i = 0; i < n && i < MAX_EVENTS; i++)
        if (strcmp(events[i].path, path) == 0 && events[i].newest < bound) return true;
    return false;
}

/* -1 when path was never synced with the version absent (want false) or
 * present (want true); else the event's index. */
static int synced(const char *path, bool want)
{
    int n = atomic_load(&n_events);
    for (int i = 0; i < n && i < MAX_EVENTS; i++)
        if (strcmp(events[i].path, path) == 0 && events[i].version_there == want) return i;
    return -1;
}

/* The data files there before the watched call (not synced by it). */
static char known[16][1200];
static int n_known;

static bool is_known(const char *path)
{
    for (int i = 0; i < n_known; i++)
        if (strcmp(known[i], path) == 0) return true;
    return false;
}

static int remember(const char *path, const char *folder, void *ctx)
{
    (void)folder, (void)ctx;
    if (n_known < 16) snprintf(known[n_known++], sizeof known[0], "%s", path);
    return 0;
}

static void remember_files(const char *dir)
{
    ttable_walk_files(dir, remember, NULL);
}

/* Every data file under dir (recursively) that the watched call wrote was
 * synced, and its folder too, before version `bound` existed. */
static int unsynced(const char *path, const char *folder, void *bound)
{
    if (is_known(path)) return 0;
    int64_t v = *(const int64_t *)bound;
    return !synced_before(path, v) + !synced_before(folder, v);
}

static int unsynced_data_files(const char *dir, int64_t bound)
{
    return ttable_walk_files(dir, unsynced, &bound);
}

static void watch_version(const char *lake_dir, int64_t version)
{
    snprintf(metadata_dir, sizeof metadata_dir, "%s/%s/default/t/metadata", unit_tmpdir(),
             lake_dir);
    snprintf(version_path, sizeof version_path, "%s/v%lld.metadata.json", metadata_dir,
             (long long)version);
    first_watched = version - 1;
    atomic_store(&n_events, 0);
    tl_sync_set_fault(watch);
}

/* Whether the metadata folder was synced with version v there. */
static bool durable(int64_t v)
{
    int n = atomic_load(&n_events);
    for (int i = 0; i < n && i < MAX_EVENTS; i++)
        if (strcmp(events[i].path, metadata_dir) == 0 && events[i].newest >= v) return true;
    return false;
}

static void set_properties(tl_table *t, const char *const *changes)
{
    tl_error err;
    CHECK_OK(tl_table_set_properties(t, changes, &err), &err);
}

static void append_durable_in_order(const char *dir)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, dir, "t", "device", "u", false, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    watch_version(dir, tl_table_version(t) + 1);
    fail_data = false;
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(exists(version_path));
    n_known = 0;
    char data[900];
    snprintf(data, sizeof data, "%s/%s/default/t/data", unit_tmpdir(), dir);
    CHECK_INT(unsynced_data_files(data, tl_table_version(t)), 0);
    CHECK(synced(metadata_dir, true) >= 0); /* durable when the append returned */
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

static void test_append_is_durable_in_order(void)
{
    append_durable_in_order("durable");
}

/* The same where one journal commit syncs a flush's files together
 * (store/local_sync_mode.h, forced here whatever the file system): each is
 * still covered before the version exists. */
static void test_one_journal_append_is_durable_in_order(void)
{
    tl_local_sync_mode_force(TL_SYNC_ONE_COMMIT);
    append_durable_in_order("durable-one");
    tl_local_sync_mode_force(TL_SYNC_IN_ORDER);
    append_durable_in_order("durable-in-order");
    tl_local_sync_mode_force(-1);
}

/* How many times the version's folder was synced while v was the newest version. */
static int folder_syncs_at(int64_t v)
{
    int n = atomic_load(&n_events), found = 0;
    for (int i = 0; i < n && i < MAX_EVENTS; i++)
        found += strcmp(events[i].path, metadata_dir) == 0 && events[i].newest == v;
    return found;
}

/* An append whose commit is its last (no inline maintenance commits after
 * it) begins the version's wait for the disk on a pool thread at once, so
 * that the version hint and the check for a dropped table overlap it; it
 * returns only once that sync is done. */
static void test_last_sync_is_waited_for(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "overlap", "t", "device", "u", false, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    int64_t v = tl_table_version(t) + 1;
    watch_version("overlap", v);
    atomic_store(&final_synced, false);
    slow_final = true;
    CHECK_OK(ttable_append_row(t, &schema, 2, &o, &r, &err), &err);
    CHECK(atomic_load(&final_synced));
    slow_final = false;
    tl_sync_set_fault(NULL);
    CHECK_INT(folder_syncs_at(v), 1);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

static int is_list(const char *path, const char *folder, void *ctx)
{
    (void)folder, (void)ctx;
    return strncmp(strrchr(path, '/') + 1, "snap-", 5) == 0;
}

/* Manifest lists in the watched table's metadata folder. */
static int manifest_lists(void)
{
    return ttable_walk_files(metadata_dir, is_list, NULL);
}

/* A table of 20 snapshots, one more than max-snapshots + 19: the next
 * append's inline expiry is due (and its compaction). */
static tl_table *expiring_table(const char *dir, tl_lake **lake, struct ArrowSchema *schema)
{
    tl_table *t = ttable_create(lake, dir, "t", "device", "u", false, schema);
    const char *props[] = {"timelake.max-snapshots", "1", "timelake.min-snapshots", "1", NULL};
    set_properties(t, props);
    tl_error err;
    tl_append_result r;
    tl_append_options quiet = {.maintain = 0};
    for (int i = 0; i < 20; i++) CHECK_OK(ttable_append_row(t, schema, i, &quiet, &r, &err), &err);
    return t;
}

/* Inline expiry (and compaction) folded into the append's commit
 * (maintain_fold.c): one version without the expired snapshots, durable
 * when the append returns; the lists only they named are deleted after. */
static void test_folded_expiry_is_one_durable_version(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = expiring_table("expiring", &lake, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    int64_t v = tl_table_version(t) + 1;
    watch_version("expiring", v);
    CHECK_INT(manifest_lists(), 20);
    CHECK_OK(ttable_append_row(t, &schema, 20, &o, &r, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(r.maintained && r.maintenance.partitions_compacted == 1);
    CHECK_INT(r.maintenance.snapshots_expired, 21); /* all but the compaction's */
    CHECK_INT(tl_table_version(t), v);
    CHECK_INT(folder_syncs_at(v), 1);
    CHECK(durable(v));
    tl_table_close(t);
    tl_lake_close(lake); /* waits for the deletions queued */
    CHECK_INT(manifest_lists(), 1);
    tl_schema_release(&schema);
}

/* What the folded expiry stopped naming stays when the version's sync
 * fails: the version before it may still be the table. */
static void test_folded_expiry_deletes_nothing_unless_durable(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = expiring_table("expiryfail", &lake, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    watch_version("expiryfail", tl_table_version(t) + 1);
    fail_final = true;
    CHECK_INT(ttable_append_row(t, &schema, 20, &o, &r, &err), TL_ERR_STORAGE);
    fail_final = false;
    tl_sync_set_fault(NULL);
    CHECK(exists(version_path)); /* visible; its durability unknown */
    tl_table_close(t);
    tl_lake_close(lake);
    CHECK_INT(manifest_lists(), 22); /* the append's and the compaction's too */
    tl_schema_release(&schema);
}

static void test_failed_sync_commits_nothing(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "failing", "t", "device", "u", false, &schema);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    int64_t before = tl_table_version(t);
    watch_version("failing", before + 1);
    fail_data = true;
    CHECK(ttable_append_row(t, &schema, 2, &o, &r, &err) != TL_OK);
    fail_data = false;
    tl_sync_set_fault(NULL);
    CHECK(!exists(version_path));
    CHECK_INT(tl_table_version(t), before);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 1);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

/* An append whose inline maintenance compacts makes one version of both
 * snapshots (maintain_fold.c): the compaction's files are synced with the
 * append's before it, and it is durable when the append returns. */
static void test_append_and_maintenance_are_durable(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "maintained", "t", "device", "u", false, &schema);
    const char *props[] = {"timelake.compact-min-files",
                           "2",
                           "timelake.max-snapshots",
                           "2",
                           "timelake.min-snapshots",
                           "1",
                           NULL};
    set_properties(t, props);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    int64_t before = tl_table_version(t);
    char data[900];
    snprintf(data, sizeof data, "%s/%s/default/t/data", unit_tmpdir(), "maintained");
    n_known = 0;
    remember_files(data);
    watch_version("maintained", before + 1);
    CHECK_OK(ttable_append_row(t, &schema, 2, &o, &r, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(r.maintained && r.maintenance.partitions_compacted == 1);
    CHECK_INT(tl_table_version(t), before + 1);
    for (int64_t v = before + 1; v <= tl_table_version(t); v++) CHECK(durable(v));
    /* The compacted file too, before the compaction's version. */
    CHECK_INT(unsynced_data_files(data, tl_table_version(t)), 0);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 2);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

/* The compaction folded into the append's commit is synced with it: a
 * failed sync of one of its files fails the append, and nothing is
 * published (a failed sync stops every later commit of the lake: the
 * append cannot go alone). */
static void test_failed_maintenance_sync_fails_the_append(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "maintfail", "t", "device", "u", false, &schema);
    const char *props[] = {"timelake.compact-min-files", "2", NULL};
    set_properties(t, props);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = -1};
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    int64_t before = tl_table_version(t);
    watch_version("maintfail", before + 1);
    fail_compacted = true;
    CHECK_INT(ttable_append_row(t, &schema, 2, &o, &r, &err), TL_ERR_STORAGE);
    fail_compacted = false;
    tl_sync_set_fault(NULL);
    CHECK(strstr(err.message, "durable") != NULL);
    CHECK_INT(tl_table_version(t), before);
    CHECK_INT(ttable_sql_int64(lake, "SELECT count(*) FROM t"), 1);
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake);
}

/* What a commit stops naming (here the metadata file leaving the log) is
 * deleted only once the commit is durable: not when that sync fails. */
static void test_nothing_deleted_before_durable(void)
{
    tl_lake *lake;
    struct ArrowSchema schema;
    tl_table *t = ttable_create(&lake, "held", "t", "device", "u", false, &schema);
    const char *props[] = {"write.metadata.previous-versions-max", "1", NULL};
    set_properties(t, props);
    tl_error err;
    tl_append_result r;
    tl_append_options o = {.maintain = 0};
    CHECK_OK(ttable_append_row(t, &schema, 1, &o, &r, &err), &err);
    int64_t before = tl_table_version(t);
    watch_version("held", before + 1);
    char oldest[1000];
    snprintf(oldest, sizeof oldest, "%s/v%lld.metadata.json", metadata_dir,
             (long long)(before - 1));
    CHECK(exists(oldest));
    fail_final = true;
    CHECK_INT(ttable_append_row(t, &schema, 2, &o, &r, &err), TL_ERR_STORAGE);
    fail_final = false;
    tl_sync_set_fault(NULL);
    CHECK(exists(version_path)); /* visible; its durability unknown */
    tl_table_close(t);
    tl_schema_release(&schema);
    tl_lake_close(lake); /* waits for the deletions queued */
    CHECK(exists(oldest));
}

UNIT_TESTS(UNIT(test_append_is_durable_in_order), UNIT(test_one_journal_append_is_durable_in_order),
           UNIT(test_failed_sync_commits_nothing), UNIT(test_append_and_maintenance_are_durable),
           UNIT(test_failed_maintenance_sync_fails_the_append),
           UNIT(test_nothing_deleted_before_durable), UNIT(test_last_sync_is_waited_for),
           UNIT(test_folded_expiry_is_one_durable_version),
           UNIT(test_folded_expiry_deletes_nothing_unless_durable))
