/* A small work queue: items 0..n-1 handed out to a few threads, the caller's
 * thread among them. Used wherever independent pieces (uploads, reads,
 * encodings, column conversions) overlap. */
#ifndef TL_CORE_PARALLEL_H
#define TL_CORE_PARALLEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* One item. Called from any of the threads, each item exactly once (unless the
 * run stops early); fills err on failure. */
typedef tl_status (*tl_parallel_fn)(void *ctx, size_t i, tl_error *err);

/* Runs fn(ctx, i) for every i < n on up to max_threads threads (at least one:
 * the caller's; fewer when thread creation fails, never an error). With
 * stop_on_error, no item starts after one has failed. Returns TL_OK, or the
 * status and message of the first failure to happen (callers that need the
 * lowest failing index keep per-item statuses themselves). */
tl_status tl_parallel_run(size_t n, size_t max_threads, bool stop_on_error, tl_parallel_fn fn,
                          void *ctx, tl_error *err);

/* One item started on a pool thread while the caller goes on to other work,
 * and waited for by tl_parallel_join: the caller overlaps its own work with
 * fn(ctx, 0) (a commit's last wait for the disk with what follows it). NULL
 * when it could not be queued (out of memory): the join then runs fn on the
 * caller's thread. */
typedef struct tl_parallel_task tl_parallel_task;
tl_parallel_task *tl_parallel_start(tl_parallel_fn fn, void *ctx);
/* Waits for the task (or, when no pool thread took it yet, runs it on the
 * caller's thread), frees it and returns fn's status, err filled on failure.
 * With task NULL, runs fn(ctx, 0) here. A task started before a fork is not
 * joined in the child (it has none of the parent's threads): the child gets
 * TL_ERR_INTERNAL and must not rely on fn having run. */
tl_status tl_parallel_join(tl_parallel_task *task, tl_parallel_fn fn, void *ctx, tl_error *err);

/* The processors online, at least 1: read once per process (sysconf reads
 * /sys/devices/system/cpu/online on every call, and a small append asked
 * twice). A thread count sized by it does not follow later hot-plugging. */
size_t tl_cpu_count(void);

#endif
