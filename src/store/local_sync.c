#include "store/local_sync.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel.h"

#define MAX_SYNC_THREADS 8

void tl_sync_set_init(tl_sync_set *s)
{
    pthread_mutex_init(&s->lock, NULL);
    memset(&s->paths, 0, sizeof s->paths);
}

void tl_sync_set_destroy(tl_sync_set *s)
{
    tl_strlist_free(&s->paths);
    pthread_mutex_destroy(&s->lock);
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

typedef struct sync_job {
    char **paths;
    atomic_int failed_errno;
} sync_job;

static tl_status sync_one(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    sync_job *job = ctx;
    int fd = open(job->paths[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) atomic_store(&job->failed_errno, errno);
        return TL_OK; /* deleted since: nothing to make durable */
    }
    if (fsync(fd) != 0) atomic_store(&job->failed_errno, errno);
    close(fd);
    return TL_OK;
}

tl_status tl_sync_set_flush(tl_sync_set *s, tl_error *err)
{
    pthread_mutex_lock(&s->lock);
    tl_strlist todo = s->paths;
    memset(&s->paths, 0, sizeof s->paths);
    pthread_mutex_unlock(&s->lock);
    if (todo.len == 0) return TL_OK;

    sync_job job = {.paths = todo.items};
    atomic_init(&job.failed_errno, 0);
    tl_parallel_run(todo.len, MAX_SYNC_THREADS, false, sync_one, &job, NULL);
    tl_strlist_free(&todo);
    int e = atomic_load(&job.failed_errno);
    if (e != 0)
        return tl_error_set(err, TL_ERR_STORAGE, "making written files durable: %s", strerror(e));
    return TL_OK;
}
