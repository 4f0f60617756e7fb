#include "store/local_sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel.h"

#define MAX_SYNC_THREADS 8

static tl_sync_fault_fn fault;

void tl_sync_set_fault(tl_sync_fault_fn fn)
{
    fault = fn;
}

void tl_sync_set_init(tl_sync_set *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->flushing, NULL);
    memset(&s->paths, 0, sizeof s->paths);
    s->failed_errno = 0;
}

void tl_sync_set_destroy(tl_sync_set *s)
{
    tl_strlist_free(&s->paths);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->flushing);
}

static int push_unique(tl_strlist *l, const char *p)
{
    return tl_strlist_contains(l, p) ? 0 : tl_strlist_push(l, p);
}

tl_status tl_sync_set_add(tl_sync_set *s, const char *file_path, tl_error *err)
{
    char *dir = strdup(file_path);
    if (dir == NULL) return tl_error_nomem(err);
    char *slash = strrchr(dir, '/');
    if (slash != NULL) *slash = '\0';
    pthread_mutex_lock(&s->lock);
    int rc = push_unique(&s->paths, file_path);
    if (rc == 0 && slash != NULL) rc = push_unique(&s->paths, dir);
    pthread_mutex_unlock(&s->lock);
    free(dir);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

tl_status tl_sync_set_add_dir(tl_sync_set *s, const char *dir_path, tl_error *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = push_unique(&s->paths, dir_path);
    pthread_mutex_unlock(&s->lock);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

typedef struct sync_job {
    char **paths;
    int *fds;
    atomic_int failed_errno;
} sync_job;

static tl_status sync_one(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    sync_job *job = ctx;
    if (job->fds[i] < 0) return TL_OK;
    int e = fault ? fault(job->paths[i]) : 0;
    if (e == 0 && fsync(job->fds[i]) != 0) e = errno;
    if (e != 0) atomic_store(&job->failed_errno, e);
    return TL_OK;
}

/* Opens every path (-1 for one deleted since: nothing to make durable) and
 * waits for the writeback the puts started. Only then may the fsyncs begin:
 * a file whose writeback ends while the journal commits the others' (ext4
 * converts the extents written then in a new transaction) makes its fsync
 * wait for a second journal commit, in 1 commit of 5 measured. */
static void open_written(const tl_strlist *paths, int *fds, atomic_int *failed)
{
    for (size_t i = 0; i < paths->len; i++) {
        fds[i] = open(paths->items[i], O_RDONLY | O_CLOEXEC);
        if (fds[i] < 0 && errno != ENOENT) atomic_store(failed, errno);
        if (fds[i] >= 0) /* refused (ESPIPE) for directories, which have no data */
            sync_file_range(fds[i], 0, 0,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                SYNC_FILE_RANGE_WAIT_AFTER);
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

static tl_status flush_locked(tl_sync_set *s, tl_error *err)
{
    if (s->failed_errno != 0) return failed(s->failed_errno, err);
    pthread_mutex_lock(&s->lock);
    tl_strlist todo = s->paths;
    memset(&s->paths, 0, sizeof s->paths);
    pthread_mutex_unlock(&s->lock);
    if (todo.len == 0) return TL_OK;

    sync_job job = {.paths = todo.items, .fds = malloc(todo.len * sizeof *job.fds)};
    if (job.fds == NULL) {
        tl_strlist_free(&todo);
        return tl_error_nomem(err);
    }
    atomic_init(&job.failed_errno, 0);
    open_written(&todo, job.fds, &job.failed_errno);
    tl_parallel_run(todo.len, MAX_SYNC_THREADS, false, sync_one, &job, NULL);
    for (size_t i = 0; i < todo.len; i++)
        if (job.fds[i] >= 0) close(job.fds[i]);
    free(job.fds);
    tl_strlist_free(&todo);
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
    tl_status st = flush_locked(s, err);
    pthread_mutex_unlock(&s->flushing);
    return st;
}
