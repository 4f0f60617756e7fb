/* How drop deletes a table's metadata versions (src/table/lake.c): the older
 * ones together (on an object store each is a round trip), the newest only
 * once every older one has gone, and not at all when one of them could not
 * be deleted, so a failed drop leaves the table readable as it was. Watched
 * through the store's fault hook (store_fault.h) on a local lake, whose
 * files the hook can look at. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "store/store_fault.h"
#include "test_table_helpers.h"

#define VERSIONS 8

static struct {
    pthread_mutex_t lock;
    pthread_cond_t entered;
    bool armed;
    char meta_dir[700];             /* the table's metadata folder */
    long fail;                      /* the version whose removal fails; 0: none */
    int older_entered;              /* removals of versions before the newest begun */
    bool overlapped;                /* the oldest's removal saw another one begin */
    bool newest_seen, newest_early; /* ... while an older version was still there */
} H = {.lock = PTHREAD_MUTEX_INITIALIZER, .entered = PTHREAD_COND_INITIALIZER};

static long version_of(const char *key)
{
    const char *v = strstr(key, "/metadata/v");
    if (v == NULL || strstr(v, ".metadata.json") == NULL) return 0;
    return atol(v + strlen("/metadata/v"));
}

static bool version_file_exists(long v)
{
    char path[800];
    snprintf(path, sizeof path, "%s/v%ld.metadata.json", H.meta_dir, v);
    return access(path, F_OK) == 0;
}

/* Waits (10 s at most) until the removal of every version before the newest
 * has begun: one after another, they never do. Lock held. */
static void wait_for_the_others(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (H.older_entered < VERSIONS - 1 &&
           pthread_cond_timedwait(&H.entered, &H.lock, &until) == 0) {
    }
    H.overlapped = H.older_entered >= 2;
}

/* The oldest's removal, and the one that fails, wait for the other older
 * ones to begin: a drop that deleted the newest together with them would
 * delete it meanwhile. */
static tl_store_fault hook(tl_store_call call, const char *key, void *ctx)
{
    (void)ctx;
    long v = call == TL_CALL_REMOVE ? version_of(key) : 0;
    if (!H.armed || v == 0) return TL_FAULT_NONE;
    pthread_mutex_lock(&H.lock);
    if (v == VERSIONS) {
        H.newest_seen = true;
        for (long i = 1; i < VERSIONS; i++) H.newest_early |= version_file_exists(i);
    } else {
        H.older_entered++;
        pthread_cond_broadcast(&H.entered);
        if (v == 1 || v == H.fail) wait_for_the_others();
    }
    pthread_mutex_unlock(&H.lock);
    return v == H.fail ? TL_FAULT_FAIL : TL_FAULT_NONE;
}

/* Table `name` of one row at versions 1..VERSIONS (its creation, an
 * append, then properties), in a local lake opened with the hook set (it
 * consults the hook set at each call: unset it after closing the lake). */
static tl_lake *make_table(const char *dir_name, const char *name)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", unit_tmpdir(), dir_name);
    tl_store_set_fault(hook, NULL);
    tl_lake *lake = NULL;
    tl_error err;
    CHECK_OK(tl_lake_open(dir, NULL, &lake, &err), &err);
    struct ArrowSchema schema;
    tl_table *t = NULL;
    ttable_device_schema(&schema);
    CHECK_OK(ttable_create_device_table(lake, name, &schema, &t, &err), &err);
    tl_append_options o = {.maintain = 0};
    tl_append_result r;
    CHECK_OK(ttable_append_key(t, &schema, "pump-1", 0, &o, &r, &err), &err);
    for (int i = 0; tl_table_version(t) < VERSIONS; i++) {
        char n[16];
        snprintf(n, sizeof n, "%d", i);
        const char *props[] = {"my.n", n, NULL};
        CHECK_OK(tl_table_set_properties(t, props, &err), &err);
    }
    CHECK(tl_table_version(t) == VERSIONS);
    tl_table_close(t);
    tl_schema_release(&schema);
    const char *dot = strchr(name, '.');
    snprintf(H.meta_dir, sizeof H.meta_dir, "%s/%.*s/%s/metadata", dir, (int)(dot - name), name,
             dot + 1);
    CHECK(version_file_exists(1) && version_file_exists(VERSIONS));
    return lake;
}

static void arm(long fail)
{
    pthread_mutex_lock(&H.lock);
    H.fail = fail;
    H.older_entered = 0;
    H.overlapped = H.newest_seen = H.newest_early = false;
    H.armed = true;
    pthread_mutex_unlock(&H.lock);
}

static void test_drop_deletes_older_versions_together_then_the_newest(void)
{
    tl_lake *lake = make_table("together", "d.t");
    arm(0);
    tl_error err;
    CHECK_OK(tl_lake_drop_table(lake, "d.t", &err), &err);
    H.armed = false;
    CHECK(H.older_entered == VERSIONS - 1);
    CHECK(H.overlapped);
    CHECK(H.newest_seen);
    CHECK(!H.newest_early);
    tl_table *t = NULL;
    CHECK(tl_lake_open_table(lake, "d.t", &t, &err) == TL_ERR_NOT_FOUND);
    tl_lake_close(lake);
    tl_store_set_fault(NULL, NULL);
}

/* The third version cannot be deleted: the drop fails with that error and
 * the table reads as before at its newest version; a drop again ends it. */
static void test_drop_keeps_the_newest_when_an_older_version_stays(void)
{
    tl_lake *lake = make_table("failed", "d.u");
    arm(3);
    tl_error err;
    CHECK(tl_lake_drop_table(lake, "d.u", &err) == TL_ERR_STORAGE);
    CHECK(strstr(err.message, "injected failure") != NULL);
    H.armed = false;
    CHECK(!H.newest_seen);
    CHECK(version_file_exists(3) && version_file_exists(VERSIONS));
    tl_table *t = NULL;
    CHECK_OK(tl_lake_open_table(lake, "d.u", &t, &err), &err);
    CHECK(tl_table_version(t) == VERSIONS);
    tl_table_close(t);
    CHECK(ttable_sql_int64(lake, "SELECT count(*) FROM d.u") == 1);
    CHECK_OK(tl_lake_drop_table(lake, "d.u", &err), &err);
    CHECK(tl_lake_open_table(lake, "d.u", &t, &err) == TL_ERR_NOT_FOUND);
    tl_lake_close(lake);
    tl_store_set_fault(NULL, NULL);
}

UNIT_TESTS(UNIT(test_drop_deletes_older_versions_together_then_the_newest),
           UNIT(test_drop_keeps_the_newest_when_an_older_version_stays))
