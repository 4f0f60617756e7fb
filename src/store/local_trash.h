/* Deletions a local writer does not wait for.
 *
 * On this kind of disk an unlink can wait milliseconds (ext4 mounted with
 * `discard` trims the freed blocks before the call returns), and an append
 * deletes what its commit made obsolete (metadata files leaving the log,
 * the objects of snapshots its inline expiry dropped). Nothing needs those
 * deletions to be durable, or done before the append returns: the objects
 * are no longer referenced. So they go to one thread per store, which
 * deletes them in the order queued.
 *
 * An object is deleted only if it is still the file that was queued (same
 * inode and modification time as when queued): a name such as
 * metadata/v12.metadata.json comes back when a table is dropped and created
 * again, and the new file must not go. A process that ends before the
 * thread drains leaves those objects, as a crash right after the commit
 * would; the thread drains when the store is freed, on tl_trash_settle, and
 * at exit for stores never freed. */
#ifndef TL_STORE_LOCAL_TRASH_H
#define TL_STORE_LOCAL_TRASH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tl_trash_item tl_trash_item;

/* Deletes the file at `path` (absolute) when `remove` (false: it is no
 * longer the file queued), then, when `prune`, removes its folder and those
 * above it if left empty; called on the trash's thread. A folder is pruned
 * once per queue the thread takes, after its last item there, not after
 * each file: most folders keep files, and each refused rmdir is a system
 * call for nothing. */
typedef void (*tl_trash_remove_fn)(void *ctx, const char *path, bool remove, bool prune);

typedef struct tl_trash {
    pthread_mutex_t lock;
    pthread_cond_t work;    /* items queued, or stopping */
    pthread_cond_t settled; /* the queue ran empty */
    tl_trash_item *items;
    size_t n, cap;
    bool busy;      /* the thread is deleting items it took */
    bool running;   /* the thread exists (in this process) */
    bool stopping;  /* freed: drain and end */
    uint64_t owner; /* the process whose thread it is, as tl_fork_generation (a forked
                       child starts anew) */
    pthread_t thread;
    tl_trash_remove_fn remove;
    void *ctx;
    struct tl_trash *next_live; /* every trash not destroyed, drained at exit */
} tl_trash;

void tl_trash_init(tl_trash *t, tl_trash_remove_fn remove, void *ctx);

/* Drains the queue, ends the thread and frees everything. */
void tl_trash_destroy(tl_trash *t);

/* Queues the file at `path` (absolute) for deletion. Returns false when it
 * is not there (nothing to delete). When the queue or its thread cannot be
 * had, deletes it at once. */
bool tl_trash_add(tl_trash *t, const char *path);

/* Waits until everything queued so far is deleted. */
void tl_trash_settle(tl_trash *t);

#endif
