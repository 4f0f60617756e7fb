#include "store/local_sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/parallel.h"
#include "store/local_sync_mode.h"

#define MAX_SYNC_THREADS 8

static tl_sync_fault_fn fault, fault_writeback;
static atomic_size_t fsyncs_made;

void tl_sync_set_fault(tl_sync_fault_fn fn)
{
    fault = fn;
}

void tl_sync_set_fault_writeback(tl_sync_fault_fn fn)
{
    fault_writeback = fn;
}

size_t tl_sync_fsyncs(void)
{
    return atomic_load(&fsyncs_made);
}

void tl_sync_set_init(tl_sync_set *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->flushing, NULL);
    s->items = NULL;
    s->n = s->cap = s->kept_fds = 0;
    s->failed_errno = 0;
}

static void free_items(tl_sync_entry *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (items[i].fd >= 0) close(items[i].fd);
        free(items[i].path);
    }
    free(items);
}

void tl_sync_set_destroy(tl_sync_set *s)
{
    free_items(s->items, s->n);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->flushing);
}

bool tl_sync_set_reserve_fd(tl_sync_set *s)
{
    pthread_mutex_lock(&s->lock);
    bool ok = s->kept_fds < SYNC_KEPT_FDS;
    if (ok) s->kept_fds++;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void tl_sync_set_drop_fd(tl_sync_set *s, int fd)
{
    if (fd < 0) return;
    close(fd);
    pthread_mutex_lock(&s->lock);
    s->kept_fds--;
    pthread_mutex_unlock(&s->lock);
}

/* Adds path or, when there, gives it fd (lock held; fd owned either way). */
static int push(tl_sync_set *s, const char *path, int fd, bool dir)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->items[i].path, path) != 0) continue;
        if (s->items[i].fd >= 0) {
            close(s->items[i].fd); /* of a file replaced since */
            s->kept_fds--;
        }
        s->items[i].fd = fd;
        return 0;
    }
    char *copy = strdup(path);
    if (copy == NULL || TL_GROW(s->items, s->cap, s->n + 1, 16) != 0) {
        free(copy);
        if (fd >= 0) {
            close(fd);
            s->kept_fds--;
        }
        return -1;
    }
    s->items[s->n++] = (tl_sync_entry){copy, fd, dir};
    return 0;
}

tl_status tl_sync_set_add_file(tl_sync_set *s, const char *file_path, int fd, tl_error *err)
{
    char *dir = strdup(file_path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash != NULL) *slash = '\0';
    pthread_mutex_lock(&s->lock);
    int rc = push(s, file_path, fd, false);
    if (rc == 0 && dir == NULL) rc = -1;
    if (rc == 0 && slash != NULL) rc = push(s, dir, -1, true);
    pthread_mutex_unlock(&s->lock);
    free(dir);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

tl_status tl_sync_set_add_dir(tl_sync_set *s, const char *dir_path, tl_error *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = push(s, dir_path, -1, true);
    pthread_mutex_unlock(&s->lock);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

typedef struct sync_job {
    tl_sync_entry *items;
    atomic_int failed_errno;
} sync_job;

static tl_status sync_one(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    sync_job *job = ctx;
    tl_sync_entry *e = &job->items[i];
    if (e->fd < 0) return TL_OK;
    int failed = fault ? fault(e->path) : 0;
    if (failed == 0) atomic_fetch_add(&fsyncs_made, 1);
    if (failed == 0 && fsync(e->fd) != 0) failed = errno;
    if (failed != 0) atomic_store(&job->failed_errno, failed);
    return TL_OK;
}

/* How the paths of items[0..n) are made durable (local_sync_mode.h), by
 * the file system of their directories; *dir: the one to fsync for
 * TL_SYNC_ONE_COMMIT and IN_ORDER. Directories on several file systems: an fsync each. */
static tl_sync_mode flush_mode(const tl_sync_entry *items, size_t n, size_t *dir)
{
    bool any = false;
    dev_t dev = 0;
    /* A file lies on its directory's file system (the set holds the
     * directory of each file), unless a file was mounted onto its fresh
     * name: only the directories are asked. */
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (items[i].fd < 0 || !items[i].dir) continue;
        if (fstat(items[i].fd, &sb) != 0 || (any && sb.st_dev != dev)) return TL_SYNC_EACH;
        if (!any) *dir = i;
        any = true;
        dev = sb.st_dev;
    }
    return any ? tl_local_sync_mode(dev, items[*dir].fd) : TL_SYNC_EACH;
}

/* One fsync, of directory items[dir], for every path (TL_SYNC_ONE_COMMIT, IN_ORDER),
 * or none (TL_SYNC_NONE: dir is n): the test hook still sees each path,
 * and a failure it injects fails the flush as a failed fsync would. */
static void sync_once(sync_job *job, size_t dir, size_t n)
{
    for (size_t i = 0; fault && i < n; i++) {
        int failed = job->items[i].fd >= 0 ? fault(job->items[i].path) : 0;
        if (failed != 0) atomic_store(&job->failed_errno, failed);
    }
    if (dir >= n || atomic_load(&job->failed_errno) != 0) return;
    atomic_fetch_add(&fsyncs_made, 1);
    if (fsync(job->items[dir].fd) != 0) atomic_store(&job->failed_errno, errno);
}

/* Opens every path not kept open (-1 for one deleted since: nothing to make
 * durable). */
static void open_all(tl_sync_entry *items, size_t n, atomic_int *failed)
{
    for (size_t i = 0; i < n; i++) {
        tl_sync_entry *e = &items[i];
        if (e->fd < 0) e->fd = open(e->path, O_RDONLY | O_CLOEXEC);
        if (e->fd < 0 && errno != ENOENT) atomic_store(failed, errno);
    }
}

/* Waits for the writeback the puts started. Only then may the fsyncs
 * begin: a file whose writeback ends while the journal commits the others'
 * (ext4 converts the extents written then in a new transaction) makes its
 * fsync wait for a second journal commit, in 1 commit of 5 measured. */
static void wait_written(tl_sync_entry *items, size_t n, atomic_int *failed)
{
    for (size_t i = 0; i < n; i++) {
        tl_sync_entry *e = &items[i];
        if (e->fd < 0 || e->dir) continue;
        /* A write that failed is reported here, once per open file: the
         * fsync after would not report it again. */
        int rc = sync_file_range(e->fd, 0, 0,
                                 SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                     SYNC_FILE_RANGE_WAIT_AFTER);
        int e_rc = rc != 0 ? errno : fault_writeback ? fault_writeback(e->path) : 0;
        if (e_rc != 0) atomic_store(failed, e_rc);
    }
}

static tl_status failed(int e, tl_error *err)
{
    return tl_error_set(err, TL_ERR_STORAGE,
                        "making written files durable: %s; an fsync on this lake failed, so files "
                        "written through it may not be on disk and nothing more is committed "
                        "through it: check the disk, then open the lake again",
                        strerror(e));
}

/* Gives the directories among items[0..n) back to the set (lock not held),
 * for the next flush to fsync: a barrier's paths are durable only once it
 * has. False when memory ran out (nothing is then given back). */
static bool keep_dirs(tl_sync_set *s, const tl_sync_entry *items, size_t n)
{
    bool ok = true;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; ok && i < n; i++)
        if (items[i].dir) ok = push(s, items[i].path, -1, true) == 0;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

/* What a flush of items[0..n) does after their writeback has ended, by mode:
 * an fsync of each path, one of a directory, or none. A barrier on an ext4
 * whose journal commits in order (TL_SYNC_IN_ORDER) makes none: the commit that
 * makes a later change durable makes these too (local_sync_mode.c), so the
 * directories stay in the set for the next flush. Elsewhere a barrier is a
 * flush. */
static void sync_items(tl_sync_set *s, sync_job *job, size_t n, tl_sync_mode mode, size_t dir,
                       bool barrier)
{
    if (mode == TL_SYNC_EACH) {
        tl_parallel_run(n, MAX_SYNC_THREADS, false, sync_one, job, NULL);
        return;
    }
    if (mode == TL_SYNC_NONE) dir = n;
    if (barrier && mode == TL_SYNC_IN_ORDER && atomic_load(&job->failed_errno) == 0 &&
        keep_dirs(s, job->items, n))
        dir = n;
    sync_once(job, dir, n);
}

static tl_status flush_locked(tl_sync_set *s, bool barrier, tl_error *err)
{
    if (s->failed_errno != 0) return failed(s->failed_errno, err);
    pthread_mutex_lock(&s->lock);
    tl_sync_entry *items = s->items;
    size_t n = s->n, kept = 0;
    for (size_t i = 0; i < n; i++) kept += items[i].fd >= 0;
    s->items = NULL;
    s->n = s->cap = 0;
    pthread_mutex_unlock(&s->lock);
    if (n == 0) return TL_OK;

    sync_job job = {.items = items};
    atomic_init(&job.failed_errno, 0);
    open_all(items, n, &job.failed_errno);
    size_t dir = n;
    tl_sync_mode mode = flush_mode(items, n, &dir);
    if (mode != TL_SYNC_NONE) wait_written(items, n, &job.failed_errno);
    sync_items(s, &job, n, mode, dir, barrier);
    free_items(items, n);
    pthread_mutex_lock(&s->lock);
    s->kept_fds -= kept;
    pthread_mutex_unlock(&s->lock);
    int e = atomic_load(&job.failed_errno);
    if (e == 0) return TL_OK;
    s->failed_errno = e;
    return failed(e, err);
}

/* Flushes run one at a time: a flush that found the set empty because
 * another took its paths must not return (and its commit publish what names
 * them) before those are synced. */
tl_status tl_sync_set_flush(tl_sync_set *s, tl_error *err)
{
    pthread_mutex_lock(&s->flushing);
    tl_status st = flush_locked(s, false, err);
    pthread_mutex_unlock(&s->flushing);
    return st;
}

tl_status tl_sync_set_barrier(tl_sync_set *s, tl_error *err)
{
    pthread_mutex_lock(&s->flushing);
    tl_status st = flush_locked(s, true, err);
    pthread_mutex_unlock(&s->flushing);
    return st;
}
