#include "core/forks.h"
#include "core/grow.h"
#include "store/local_trash.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tl_trash_item {
    char *path;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
};

static void reset(tl_trash *t)
{
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->settled, NULL);
    t->busy = t->running = t->stopping = false;
    t->owner = tl_fork_generation();
}

/* The trashes not destroyed: a process that ends without freeing its
 * stores (a Python interpreter leaving its lakes open) still deletes what it
 * queued. */
static struct {
    pthread_mutex_t lock;
    tl_trash *head;
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void settle_all(void)
{
    pthread_mutex_lock(&live.lock);
    for (tl_trash *t = live.head; t; t = t->next_live) tl_trash_settle(t);
    pthread_mutex_unlock(&live.lock);
}

static void live_before_fork(void)
{
    pthread_mutex_lock(&live.lock);
}

static void live_after_fork(void)
{
    pthread_mutex_unlock(&live.lock);
}

static void live_after_fork_child(void)
{
    pthread_mutex_init(&live.lock, NULL);
}

static void register_handlers(void)
{
    pthread_atfork(live_before_fork, live_after_fork, live_after_fork_child);
    atexit(settle_all);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

void tl_trash_init(tl_trash *t, tl_trash_remove_fn remove, void *ctx)
{
    memset(t, 0, sizeof *t);
    t->remove = remove;
    t->ctx = ctx;
    reset(t);
    pthread_once(&once, register_handlers);
    pthread_mutex_lock(&live.lock);
    t->next_live = live.head;
    live.head = t;
    pthread_mutex_unlock(&live.lock);
}

static void unregister(tl_trash *t)
{
    pthread_mutex_lock(&live.lock);
    tl_trash **p = &live.head;
    while (*p && *p != t) p = &(*p)->next_live;
    if (*p) *p = t->next_live;
    pthread_mutex_unlock(&live.lock);
}

/* Still the file that was queued? */
static bool same_file(const tl_trash_item *it)
{
    struct stat sb;
    return lstat(it->path, &sb) == 0 && sb.st_dev == it->dev && sb.st_ino == it->ino &&
           sb.st_mtim.tv_sec == it->mtime.tv_sec && sb.st_mtim.tv_nsec == it->mtime.tv_nsec;
}

/* How far ahead a deletion looks for a later one in its folder: a queue
 * is mostly one commit's few files; past this, folders are pruned as if
 * last (an rmdir too many, never one too few). */
#define SAME_FOLDER_LOOKAHEAD 64

static size_t folder_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

/* Whether no item after items[i] (of n) lies in its folder. */
static bool last_in_folder(const tl_trash_item *items, size_t i, size_t n)
{
    size_t len = folder_len(items[i].path);
    size_t end = n - i - 1 > SAME_FOLDER_LOOKAHEAD ? i + 1 + SAME_FOLDER_LOOKAHEAD : n;
    for (size_t j = i + 1; j < end; j++)
        if (folder_len(items[j].path) == len && strncmp(items[j].path, items[i].path, len) == 0)
            return false;
    return true;
}

static void delete_item(tl_trash *t, tl_trash_item *items, size_t i, size_t n)
{
    bool remove = same_file(&items[i]), prune = last_in_folder(items, i, n);
    if (remove || prune) t->remove(t->ctx, items[i].path, remove, prune);
}

static void *trash_thread(void *arg)
{
    tl_trash *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        if (t->n == 0) {
            pthread_cond_broadcast(&t->settled);
            if (t->stopping) break;
            pthread_cond_wait(&t->work, &t->lock);
            continue;
        }
        tl_trash_item *items = t->items;
        size_t n = t->n;
        t->items = NULL;
        t->n = t->cap = 0;
        t->busy = true;
        pthread_mutex_unlock(&t->lock);
        for (size_t i = 0; i < n; i++) delete_item(t, items, i, n);
        for (size_t i = 0; i < n; i++) free(items[i].path);
        free(items);
        pthread_mutex_lock(&t->lock);
        t->busy = false;
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

/* Starts the thread on first need (lock held). It blocks every signal: it
 * belongs to no caller. */
static bool start(tl_trash *t)
{
    if (t->running) return true;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    t->running = pthread_create(&t->thread, NULL, trash_thread, t) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t->running;
}

/* A child forked from the owner has none of its threads, and its copy of the
 * lock may be held: it starts with an empty queue (the parent deletes what
 * was queued). */
static void adopt_after_fork(tl_trash *t)
{
    if (t->owner == tl_fork_generation()) return;
    for (size_t i = 0; i < t->n; i++) free(t->items[i].path);
    free(t->items);
    t->items = NULL;
    t->n = t->cap = 0;
    reset(t);
}

static bool push(tl_trash *t, const char *path, const struct stat *sb)
{
    if (TL_GROW(t->items, t->cap, t->n + 1, 16) != 0) return false;
    char *copy = strdup(path);
    if (copy == NULL) return false;
    t->items[t->n++] = (tl_trash_item){copy, sb->st_dev, sb->st_ino, sb->st_mtim};
    return true;
}

bool tl_trash_add(tl_trash *t, const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 || S_ISDIR(sb.st_mode)) return false;
    adopt_after_fork(t);
    pthread_mutex_lock(&t->lock);
    bool queued = !t->stopping && start(t) && push(t, path, &sb);
    if (queued) pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
    if (!queued) t->remove(t->ctx, path, true, true);
    return true;
}

void tl_trash_settle(tl_trash *t)
{
    adopt_after_fork(t);
    pthread_mutex_lock(&t->lock);
    while (t->running && (t->n > 0 || t->busy)) pthread_cond_wait(&t->settled, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

void tl_trash_destroy(tl_trash *t)
{
    unregister(t);
    adopt_after_fork(t);
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    bool running = t->running;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
    if (running) pthread_join(t->thread, NULL);
    for (size_t i = 0; i < t->n; i++) free(t->items[i].path);
    free(t->items);
    pthread_cond_destroy(&t->settled);
    pthread_cond_destroy(&t->work);
    pthread_mutex_destroy(&t->lock);
}
