/* The local store's durability order (store/local_sync.h), watched through a
 * fault hook called before each fsync: a commit (put_if_absent) publishes
 * vN only once everything put before it is synced, never when one of those
 * syncs failed, and is durable (its directory synced after the link) when it
 * returns (put_if_absent_unsynced: once tl_store_sync returns); a commit
 * whose files another thread's flush took waits for that flush instead of
 * publishing at once, and fails when that flush failed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "store/local_sync_mode.h"
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

/* Entries of a folder, temporaries (".tmp-") included. */
static int entries(const char *path)
{
    int n = 0;
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n;
}

/* Whether the inotify descriptor fd saw exactly one event in its folder:
 * the creation of `name` (no temporary beside it, no rename into it). */
static bool only_created(int fd, const char *name)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    const struct inotify_event *e = (const struct inotify_event *)buf;
    size_t one = sizeof *e + e->len;
    return (size_t)n == one && (e->mask & IN_CREATE) && strcmp(e->name, name) == 0;
}

/* A new object (tl_store_put_new) is created under its own name, with no
 * temporary file and no rename (one directory entry made, none changed),
 * and is synced like any put before the version that names it exists; a
 * name that exists already is replaced, as by a put. */
static void test_new_objects_are_written_in_place_and_synced_first(void)
{
    tl_store *s = open_table("new");
    tl_error err;
    char data[700];
    snprintf(data, sizeof data, "%s/t/data", root);
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(fd >= 0 && inotify_add_watch(fd, data, IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM) >= 0);
    CHECK_OK(tl_store_put_new(s, "t/data/n.parquet", "new", 3, &err), &err);
    CHECK(only_created(fd, "n.parquet"));
    close(fd);
    CHECK_OK(tl_store_put_new(s, "t/data/p=1/q.parquet", "in a new folder", 15, &err), &err);
    CHECK_OK(tl_store_put_new(s, "t/metadata/m.avro", "replaced", 8, &err), &err);
    tl_buf b = {0};
    CHECK_OK(tl_store_get(s, "t/metadata/m.avro", &b, &err), &err);
    CHECK(b.len == 8 && memcmp(b.data, "replaced", 8) == 0);
    CHECK_OK(tl_store_get(s, "t/data/n.parquet", &b, &err), &err);
    CHECK(b.len == 3 && memcmp(b.data, "new", 3) == 0);
    tl_buf_free(&b);
    tl_sync_set_fault(watch);
    CHECK_OK(tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err), &err);
    tl_sync_set_fault(NULL);
    CHECK(synced("t/data/n.parquet", false) >= 0);
    CHECK(synced("t/data/p=1/q.parquet", false) >= 0);
    CHECK(synced("t/data/p=1", false) >= 0);
    CHECK(synced("t/data", false) >= 0);
    CHECK(synced("t/metadata/m.avro", false) >= 0);
    CHECK_INT(entries(data), 3); /* d.parquet, n.parquet, p=1: no temporary left */
    tl_store_free(s);
}

/* On an ext4 whose journal commits everything together (local_sync_mode.h,
 * forced here whatever the file system) a commit makes one fsync, of its
 * directory after the link: before the link a barrier waits for every
 * file's writeback, and the journal commit that fsync forces covers them
 * (the test hook still sees each path settled before the link). With
 * journal_async_commit it makes one more, before the link; on tmpfs none.
 * A failure still publishes nothing. */
static void test_one_fsync_or_none_per_flush(void)
{
    static const struct {
        tl_sync_mode mode;
        const char *name;
        int fsyncs;
    } modes[] = {{TL_SYNC_IN_ORDER, "in-order", 1},
                 {TL_SYNC_ONE_COMMIT, "one-commit", 2}, /* before the link and after it */
                 {TL_SYNC_NONE, "no-fsync", 0}};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        tl_local_sync_mode_force(modes[m].mode);
        tl_store *s = open_table(modes[m].name);
        tl_error err;
        size_t before = tl_sync_fsyncs();
        tl_sync_set_fault(watch);
        CHECK_OK(tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err), &err);
        tl_sync_set_fault(NULL);
        CHECK_INT((int)(tl_sync_fsyncs() - before), modes[m].fsyncs);
        CHECK(synced("t/data/d.parquet", false) >= 0);
        CHECK(synced("t/data", false) >= 0);
        CHECK(synced("t/metadata/m.avro", false) >= 0);
        CHECK(synced("t/metadata", true) >= 0);
        tl_store_free(s);

        char failed[64];
        snprintf(failed, sizeof failed, "%s-failed", modes[m].name);
        s = open_table(failed);
        snprintf(failing, sizeof failing, "%s/t/metadata/m.avro", root);
        before = tl_sync_fsyncs();
        tl_sync_set_fault(watch);
        CHECK_INT(tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err),
                  TL_ERR_STORAGE);
        tl_sync_set_fault(NULL);
        CHECK_INT((int)(tl_sync_fsyncs() - before), 0);
        CHECK(!exists(version));
        tl_store_free(s);
    }
    tl_local_sync_mode_force(-1);
}

/* A file of its own under root (created, written, added to set). */
static void add_new_file(tl_sync_set *set, const char *name)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", root, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1);
    tl_error err;
    CHECK(tl_sync_set_reserve_fd(set));
    CHECK_OK(tl_sync_set_add_file(set, path, fd, &err), &err);
}

/* A barrier on such an ext4 waits for the writeback and makes no fsync: its
 * file's directory stays pending, and the next flush fsyncs it, also when
 * nothing was added since (a commit with nothing of its own to sync must
 * still wait for the journal commit). Elsewhere a barrier is a flush. */
static void test_barrier_leaves_one_fsync_to_the_next_flush(void)
{
    snprintf(root, sizeof root, "%s/barrier", unit_tmpdir());
    CHECK(mkdir(root, 0755) == 0);
    static const struct {
        tl_sync_mode mode;
        int at_barrier, after;
    } modes[] = {{TL_SYNC_IN_ORDER, 0, 1},
                 {TL_SYNC_ONE_COMMIT, 1, 0},
                 {TL_SYNC_EACH, 3, 0}}; /* each: two files and their folder */
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        tl_local_sync_mode_force(modes[m].mode);
        tl_sync_set set;
        tl_sync_set_init(&set);
        char a[16], b[16];
        snprintf(a, sizeof a, "a%zu", m);
        snprintf(b, sizeof b, "b%zu", m);
        add_new_file(&set, a);
        add_new_file(&set, b);
        tl_error err;
        size_t before = tl_sync_fsyncs();
        CHECK_OK(tl_sync_set_barrier(&set, &err), &err);
        CHECK_INT((int)(tl_sync_fsyncs() - before), modes[m].at_barrier);
        CHECK_INT((int)set.n, modes[m].after);
        CHECK(set.n == 0 || (set.items[0].dir && strcmp(set.items[0].path, root) == 0));
        CHECK_INT((int)set.kept_fds, 0);
        before = tl_sync_fsyncs();
        CHECK_OK(tl_sync_set_flush(&set, &err), &err);
        CHECK_INT((int)(tl_sync_fsyncs() - before), modes[m].after);
        CHECK_INT((int)set.n, 0);
        tl_sync_set_destroy(&set);
    }
    tl_local_sync_mode_force(-1);
}

static int failed_write(const char *path)
{
    return strcmp(path, failing) == 0 ? EIO : 0;
}

/* A file whose write failed (reported by the wait for its writeback, which
 * the fsync after it would not report again) fails the commit, in either
 * way of syncing: nothing is published. */
static void test_failed_write_publishes_nothing(void)
{
    static const tl_sync_mode modes[] = {TL_SYNC_EACH, TL_SYNC_ONE_COMMIT, TL_SYNC_IN_ORDER};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        tl_local_sync_mode_force(modes[m]);
        char name[32];
        snprintf(name, sizeof name, "write-failed-%zu", m);
        tl_store *s = open_table(name);
        snprintf(failing, sizeof failing, "%s/t/data/d.parquet", root);
        tl_error err;
        tl_sync_set_fault_writeback(failed_write);
        tl_status st = tl_store_put_if_absent(s, "t/metadata/v1.metadata.json", "{}", 2, &err);
        tl_sync_set_fault_writeback(NULL);
        CHECK_INT(st, TL_ERR_STORAGE);
        CHECK(strstr(err.message, "durable") != NULL);
        CHECK(!exists(version));
        tl_store_free(s);
    }
    tl_local_sync_mode_force(-1);
}

/* Nothing on tmpfs outlives a power loss: no fsync there. */
static void test_tmpfs_needs_no_fsync(void)
{
    struct stat sb;
    int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return; /* no /dev/shm here */
    CHECK(fstat(fd, &sb) == 0);
    struct statfs sf;
    CHECK(fstatfs(fd, &sf) == 0);
    if (sf.f_type == 0x01021994) CHECK_INT(tl_local_sync_mode(sb.st_dev, fd), TL_SYNC_NONE);
    close(fd);
}

UNIT_TESTS(UNIT(test_commit_publishes_after_what_it_names_is_synced),
           UNIT(test_one_fsync_or_none_per_flush), UNIT(test_failed_write_publishes_nothing),
           UNIT(test_barrier_leaves_one_fsync_to_the_next_flush), UNIT(test_tmpfs_needs_no_fsync),
           UNIT(test_new_objects_are_written_in_place_and_synced_first),
           UNIT(test_puts_keep_their_files_open_until_the_flush),
           UNIT(test_failed_flush_closes_the_files_it_took),
           UNIT(test_failed_flush_fails_the_commits_whose_files_it_took),
           UNIT(test_unsynced_commit_is_durable_after_sync),
           UNIT(test_failed_sync_publishes_nothing),
           UNIT(test_commit_waits_for_a_flush_holding_its_files))
