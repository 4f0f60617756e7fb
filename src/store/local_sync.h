/* Deferred durability for the local backend.
 *
 * Every fsync on a journaling file system costs a journal commit (milliseconds
 * each), and an append writes several objects before its commit. So plain
 * puts only start writeback and remember what must reach the disk; the commit
 * (put_if_absent) first makes all of it durable at once, with the fsyncs run
 * concurrently so the file system can share journal commits between them.
 * A put may leave its file open for the flush (tl_sync_set_reserve_fd): the
 * flush then syncs through that descriptor instead of opening the path again
 * (an open and a close less per file; up to SYNC_KEPT_FDS per set, so a
 * writer that puts many files before a commit does not run out of them).
 * On an ext4 whose journal commits everything at once the flush makes one
 * fsync, of a directory, instead of one per path: the writeback of every
 * file has ended first, and the journal commit that fsync forces covers
 * them all; on tmpfs it makes none (local_sync_mode.h).
 * Thread-safe: a lake's tables may append from several threads. */
#ifndef TL_STORE_LOCAL_SYNC_H
#define TL_STORE_LOCAL_SYNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define SYNC_KEPT_FDS 64

typedef struct tl_sync_entry {
    char *path;
    int fd;   /* the file open (owned), or -1: opened by path at the flush */
    bool dir; /* a directory: nothing to write back, only an fsync */
} tl_sync_entry;

typedef struct tl_sync_set {
    pthread_mutex_t lock;
    tl_sync_entry *items; /* files and directories to fsync, without duplicates */
    size_t n, cap;
    size_t kept_fds;          /* descriptors reserved or held by items (under lock) */
    pthread_mutex_t flushing; /* held for a whole flush (see tl_sync_set_flush) */
    int failed_errno;         /* of the first failed fsync; sticky (under flushing) */
} tl_sync_set;

void tl_sync_set_init(tl_sync_set *s);
/* Closes the descriptors still held; syncs nothing. */
void tl_sync_set_destroy(tl_sync_set *s);

/* May a file just written stay open for the flush? True takes one of the
 * set's SYNC_KEPT_FDS places: the descriptor then goes to
 * tl_sync_set_add_file, or back through tl_sync_set_drop_fd. */
bool tl_sync_set_reserve_fd(tl_sync_set *s);
/* Closes a reserved descriptor that was not added, and frees its place. */
void tl_sync_set_drop_fd(tl_sync_set *s, int fd);

/* Remembers a file and its directory for the next flush. fd is -1, or a
 * reserved descriptor of the file (open for writing will do), which the set
 * owns from then on, failure included. A path already remembered gets the
 * new descriptor (the file was replaced). */
tl_status tl_sync_set_add_file(tl_sync_set *s, const char *file_path, int fd, tl_error *err);

/* Remembers a directory alone (a link or rename into it) for the next flush. */
tl_status tl_sync_set_add_dir(tl_sync_set *s, const char *dir_path, tl_error *err);

/* Fsyncs everything remembered so far (a path deleted meanwhile is skipped,
 * unless its file was kept open): when it returns, every path added before
 * it was called is durable, also those another thread's flush took and is
 * still syncing (flushes run one at a time). Once an fsync has failed,
 * every later flush fails too: the failed flush may have taken another
 * commit's paths, which nobody can sync again (the kernel reports a
 * writeback error once and may drop the pages), so no commit on this set
 * may publish what names them. */
tl_status tl_sync_set_flush(tl_sync_set *s, tl_error *err);

/* A write barrier: everything added before it reaches the disk no later
 * than any change made after it returns, and is durable once a later flush
 * returns. On an ext4 whose journal commits everything together it waits for
 * the writeback of each file and makes no fsync (the journal commit that
 * makes a later change durable covers them); elsewhere it is a flush. Fails
 * as a flush does, and a failure is as sticky. */
tl_status tl_sync_set_barrier(tl_sync_set *s, tl_error *err);

/* For tests: when set, called with each path just before its fsync (or
 * where a barrier settles it without one); a non-zero return is taken as the
 * errno of a failed fsync (which is then not made). Set it while no flush runs. NULL: none (the
 * default). */
typedef int (*tl_sync_fault_fn)(const char *path);
void tl_sync_set_fault(tl_sync_fault_fn fn);

/* For tests: as tl_sync_set_fault, called with each file once its
 * writeback has ended, before any fsync; non-zero is taken as the errno of
 * a failed write. */
void tl_sync_set_fault_writeback(tl_sync_fault_fn fn);

/* For tests: the fsyncs flushes made so far in this process. */
size_t tl_sync_fsyncs(void);

#endif
