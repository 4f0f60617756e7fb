/* The local store's durability order (store/local_sync.h), watched through a
 * fault hook called before each fsync: a commit (put_if_absent) publishes
 * vN only once everything put before it is synced, never when one of those
 * syncs failed, and is durable (its directory synced after the link) when it
 * returns (put_if_absent_unsynced: once tl_store_sync returns); a commit
 * whose files another thread's flush took waits for that flush instead of
 * publishing at once, and fails when that flush failed. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/local_sync.h"
#include "store/store.h"
#include "unit.h"

#define MAX_EVENTS 64

static char root[600], version[700], failing[700];
static struct {
    char path[700];
    bool version_there;
} events[MAX_EVENTS];
static atomic_int n_events;

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Records each sync with whether the version was published then; fails the
 * sync of `failing`. */
static int watch(const char *path)
{
    int i = atomic_fetch_add(&n_events, 1);
    if (i < MAX_EVENTS) {
        snprintf(events[i].path, sizeof events[i].path, "%s", path);
        events[i].version_there = exists(version);
    }
    return strcmp(path, failing) == 0 ? EIO : 0;
}

static tl_store *open_table(const char *name)
{
    snprintf(root, sizeof root, "%s/%s", unit_tmpdir(), name);
    snprintf(version, sizeof version, "%s/t/metadata/v1.metadata.json", root);
    failing[0] = '\0';
    atomic_store(&n_events, 0);
    tl_store *s = NULL;
    tl_error err;
    CHECK_OK(tl_store_open(root, NULL, &s, &err), &err);
    CHECK_OK(tl_store_put(s, "t/data/d.parquet", "data", 4, &err), &err);
    CHECK_OK(tl_store_put(s, "t/metadata/m.avro", "manifest", 8, &err), &err);
    return s;
}

/* The event index of the first sync of path (relative to root) with the
 * version absent (want false) or present (want true); -1 when none. */
static int synced(const char *rel, bool want)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    int n = atomic_load(&n_events);
    for (int i = 0; i < n && i < MAX_EVENTS; i++)
        if (strcmp(events[i].path, path) == 0 && events[i].version_there == want) return i;
    return -1;
}

static void test_commit_publishes_after_what_it_names_is_synced(void)
{
    tl_store *s = open_table("order");
    tl_error err;
    tl_sync_set_fault(watch);
    CHECK_OK(tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(synced("t/data/d.parquet", false) >= 0);
    CHECK(synced("t/data", false) >= 0);
    CHECK(synced("t/metadata/m.avro", false) >= 0);
    CHECK(synced("t/data/d.parquet", true) < 0);
    CHECK(synced("t/metadata/m.avro", true) < 0);
    /* Durable when it returned: the link's directory synced after it. */
    CHECK(synced("t/metadata", true) >= 0);
    tl_store_free(s);
}

/* put_if_absent_unsynced publishes in the same order, and leaves the
 * directory's sync after the link to tl_store_sync. */
static void test_unsynced_commit_is_durable_after_sync(void)
{
    tl_store *s = open_table("unsynced");
    tl_error err;
    tl_sync_set_fault(watch);
    CHECK_OK(tl_store_put_if_absent_unsynced(s, "t/metadata/v1.metadata.json", "{}", 2, &err),
             &err);
    CHECK(exists(version));
    CHECK(synced("t/data/d.parquet", false) >= 0);
    CHECK(synced("t/metadata/m.avro", false) >= 0);
    CHECK(synced("t/metadata", true) < 0);
    CHECK_OK(tl_store_sync(s, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(synced("t/metadata", true) >= 0);
    tl_store_free(s);
}

static void test_failed_sync_publishes_nothing(void)
{
    tl_store *s = open_table("failed");
    snprintf(failing, sizeof failing, "%s/t/data/d.parquet", root);
    tl_error err;
    tl_sync_set_fault(watch);
    tl_status st = tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err);
    tl_sync_set_fault(NULL);
    CHECK_INT(st, TL_ERR_STORAGE);
    CHECK(strstr(err.message, "durable") != NULL);
    CHECK(!exists(version));
    CHECK(synced("t/data/d.parquet", false) >= 0);
    tl_strlist keys = {0};
    CHECK_OK(tl_store_list(s, "t/metadata/", &keys, &err), &err);
    CHECK_INT(keys.len, 1); /* m.avro; no version, no temporary */
    tl_strlist_free(&keys);
    tl_store_free(s);
}

/* Thread A's commit takes every pending path, B's data file among them, and
 * its sync of that file is slow; B's commit, finding nothing left to sync,
 * must still wait for it before publishing its version. */
static tl_store *shared;
static char slow[700], b_version[700];
static atomic_int b_published_early, slow_entered;

static int slow_sync(const char *path)
{
    if (strcmp(path, slow) != 0) return 0;
    atomic_store(&slow_entered, 1);
    for (int i = 0; i < 30 && !exists(b_version); i++) usleep(10000);
    if (exists(b_version)) atomic_store(&b_published_early, 1);
    return 0;
}

static void *commit_a(void *arg)
{
    (void)arg;
    tl_error err;
    CHECK_OK(tl_store_put_if_absent(shared, "a/metadata/v1.metadata.json", "{}", 2, &err), &err);
    return NULL;
}

static void test_commit_waits_for_a_flush_holding_its_files(void)
{
    snprintf(root, sizeof root, "%s/race", unit_tmpdir());
    snprintf(slow, sizeof slow, "%s/b/data/d.parquet", root);
    snprintf(b_version, sizeof b_version, "%s/b/metadata/v1.metadata.json", root);
    tl_error err;
    CHECK_OK(tl_store_open(root, NULL, &shared, &err), &err);
    CHECK_OK(tl_store_put(shared, "b/data/d.parquet", "data", 4, &err), &err);
    atomic_store(&b_published_early, 0);
    atomic_store(&slow_entered, 0);
    tl_sync_set_fault(slow_sync);
    pthread_t a;
    pthread_create(&a, NULL, commit_a, NULL);
    /* B commits while A's flush syncs B's data file. */
    for (int i = 0; i < 2000 && !atomic_load(&slow_entered); i++) usleep(1000);
    CHECK(atomic_load(&slow_entered));
    CHECK_OK(tl_store_put_if_absent(shared, "b/metadata/v1.metadata.json", "{}", 2, &err), &err);
    pthread_join(a, NULL);
    tl_sync_set_fault(NULL);
    CHECK(!atomic_load(&b_published_early));
    tl_store_free(shared);
}

/* A's commit takes B's data file with its own and fails to sync it: B's
 * commit, finding nothing left to sync, must not publish, nor may any later
 * commit through this store; a store opened afresh commits again. */
static void test_failed_flush_fails_the_commits_whose_files_it_took(void)
{
    tl_store *s = open_table("sticky");
    snprintf(failing, sizeof failing, "%s/b/data/d.parquet", root);
    tl_error err;
    CHECK_OK(tl_store_put(s, "b/data/d.parquet", "data", 4, &err), &err);
    tl_sync_set_fault(watch);
    CHECK_INT(tl_store_put_if_absent(s, "a/metadata/v1.metadata.json", "{}", 2, &err),
              TL_ERR_STORAGE);
    tl_sync_set_fault(NULL);
    CHECK_INT(tl_store_put_if_absent(s, "b/metadata/v1.metadata.json", "{}", 2, &err),
              TL_ERR_STORAGE);
    CHECK(strstr(err.message, "open the lake again") != NULL);
    char b_version[700];
    snprintf(b_version, sizeof b_version, "%s/b/metadata/v1.metadata.json", root);
    CHECK(!exists(b_version));
    CHECK_INT(tl_store_put_if_absent(s, "c/metadata/v1.metadata.json", "{}", 2, &err),
              TL_ERR_STORAGE);
    tl_store_free(s);
    CHECK_OK(tl_store_open(root, NULL, &s, &err), &err);
    CHECK_OK(tl_store_put(s, "b/data/d.parquet", "data", 4, &err), &err);
    CHECK_OK(tl_store_put_if_absent(s, "b/metadata/v1.metadata.json", "{}", 2, &err), &err);
    CHECK(exists(b_version));
    tl_store_free(s);
}

/* The descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the listing's own */
}

static atomic_int synced_files;

static int count_files(const char *path)
{
    if (strstr(path, ".parquet") != NULL) atomic_fetch_add(&synced_files, 1);
    return 0;
}

/* A put leaves its file open for the commit's flush, which syncs through
 * that descriptor (no second open) and closes it; past SYNC_KEPT_FDS files
 * the flush opens the rest by name. Every file is synced either way, and
 * nothing stays open after the flush, nor after freeing a store with puts
 * pending. */
static void test_puts_keep_their_files_open_until_the_flush(void)
{
    int base = open_fds();
    CHECK(base > 0);
    tl_store *s = open_table("kept"); /* two puts */
    tl_error err;
    CHECK_INT(open_fds(), base + 2);
    CHECK_OK(tl_store_put(s, "t/data/d.parquet", "again", 5, &err), &err); /* replaced */
    CHECK_INT(open_fds(), base + 2);
    int puts = SYNC_KEPT_FDS + 10;
    for (int i = 0; i < puts; i++) {
        char key[64];
        snprintf(key, sizeof key, "t/data/f%d.parquet", i);
        CHECK_OK(tl_store_put(s, key, "x", 1, &err), &err);
    }
    CHECK_INT(open_fds(), base + SYNC_KEPT_FDS);
    atomic_store(&synced_files, 0);
    tl_sync_set_fault(count_files);
    CHECK_OK(tl_store_put_if_absent_unsynced(s, "t/metadata/v1.metadata.json", "{}", 2, &err),
             &err);
    tl_sync_set_fault(NULL);
    CHECK_INT(atomic_load(&synced_files), puts + 1);
    CHECK_INT(open_fds(), base);
    CHECK_OK(tl_store_put(s, "t/data/late.parquet", "x", 1, &err), &err);
    CHECK_INT(open_fds(), base + 1);
    tl_store_free(s);
    CHECK_INT(open_fds(), base);
}

/* A failed flush closes what it took too. */
static void test_failed_flush_closes_the_files_it_took(void)
{
    int base = open_fds();
    tl_store *s = open_table("kept-failed");
    snprintf(failing, sizeof failing, "%s/t/data/d.parquet", root);
    tl_error err;
    tl_sync_set_fault(watch);
    CHECK_INT(tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err),
              TL_ERR_STORAGE);
    tl_sync_set_fault(NULL);
    CHECK_INT(open_fds(), base);
    tl_store_free(s);
    CHECK_INT(open_fds(), base);
}

UNIT_TESTS(UNIT(test_commit_publishes_after_what_it_names_is_synced),
           UNIT(test_puts_keep_their_files_open_until_the_flush),
           UNIT(test_failed_flush_closes_the_files_it_took),
           UNIT(test_failed_flush_fails_the_commits_whose_files_it_took),
           UNIT(test_unsynced_commit_is_durable_after_sync),
           UNIT(test_failed_sync_publishes_nothing),
           UNIT(test_commit_waits_for_a_flush_holding_its_files))
