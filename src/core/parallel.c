#include "core/parallel.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/forks.h"

/* Runs share a pool of threads started on first need and kept: starting
 * threads for every commit (fsyncs, deletions) cost more CPU than the work.
 * A run queues requests for helpers; idle pool threads take them, new ones
 * start while the pool is under POOL_MAX, and the caller works too, so a run
 * always finishes, even when every pool thread is busy (nested runs
 * included): helpers nobody took are withdrawn when the caller is done. */
#define POOL_MAX 64

typedef struct run run;
struct run {
    tl_parallel_fn fn;
    void *ctx;
    size_t n;
    bool stop_on_error;
    atomic_size_t next;   /* the next item to hand out */
    atomic_bool failed;   /* an item failed */
    pthread_mutex_t lock; /* guards st and err */
    tl_status st;
    tl_error err;
    /* Guarded by the pool's lock. */
    size_t wanted; /* helpers asked for and not yet taken */
    size_t active; /* helpers working on it */
    run *queued;   /* the next run in the queue */
};

typedef struct worker_slot {
    pthread_t tid;
    bool busy;
} worker_slot;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a run wants helpers, or the pool stops */
    pthread_cond_t done; /* a helper left a run */
    run *head, *tail;    /* runs wanting helpers, oldest first */
    size_t wanted;       /* helpers wanted by all queued runs */
    size_t live, idle;
    worker_slot slots[POOL_MAX];
    bool stopping;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .work = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static void work(run *r)
{
    for (;;) {
        if (r->stop_on_error && atomic_load(&r->failed)) return;
        size_t i = atomic_fetch_add(&r->next, 1); /* no lock: threads contend per item */
        if (i >= r->n) return;
        tl_error e;
        tl_status st = r->fn(r->ctx, i, &e);
        if (st == TL_OK) continue;
        pthread_mutex_lock(&r->lock);
        if (r->st == TL_OK) {
            r->st = st;
            r->err = e;
        }
        pthread_mutex_unlock(&r->lock);
        atomic_store(&r->failed, true);
    }
}

/* Takes one helper request off the queue (pool lock held). */
static run *take(void)
{
    run *r = pool.head;
    if (r == NULL) return NULL;
    pool.wanted--;
    if (--r->wanted == 0) {
        pool.head = r->queued;
        if (pool.head == NULL) pool.tail = NULL;
    }
    r->active++;
    return r;
}

static void *pool_thread(void *arg)
{
    worker_slot *slot = arg;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        run *r = take();
        if (r != NULL) {
            pool.idle--;
            slot->busy = true;
            pthread_mutex_unlock(&pool.lock);
            work(r);
            pthread_mutex_lock(&pool.lock);
            slot->busy = false;
            pool.idle++;
            /* r may be gone once the lock is released */
            if (--r->active == 0 && r->wanted == 0) pthread_cond_broadcast(&pool.done);
            continue;
        }
        if (pool.stopping) break;
        pthread_cond_wait(&pool.work, &pool.lock);
    }
    pool.idle--;
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* Starts threads until the idle ones cover what the queue wants (pool lock
 * held). Pool threads block every signal: they belong to no caller. */
static void grow(void)
{
    if (pool.stopping || pool.idle >= pool.wanted || pool.live >= POOL_MAX) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (pool.idle < pool.wanted && pool.live < POOL_MAX) {
        worker_slot *slot = &pool.slots[pool.live];
        slot->busy = false;
        if (pthread_create(&slot->tid, NULL, pool_thread, slot) != 0) break;
        pool.live++;
        pool.idle++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void before_fork(void)
{
    pthread_mutex_lock(&pool.lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&pool.lock);
}

/* The child has none of the parent's threads, and none of its runs: it
 * starts with an empty pool, grown again on first need. */
static void after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.head = pool.tail = NULL;
    pool.wanted = pool.live = pool.idle = 0;
}

/* At exit or unload: idle threads are woken and joined; a thread still
 * working for a run of another thread finishes it and ends by itself. */
static void pool_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.stopping = true;
    pthread_cond_broadcast(&pool.work);
    size_t live = pool.live;
    bool busy[POOL_MAX];
    for (size_t i = 0; i < live; i++) busy[i] = pool.slots[i].busy;
    pool.live = 0;
    pthread_mutex_unlock(&pool.lock);
    for (size_t i = 0; i < live; i++) {
        if (busy[i])
            pthread_detach(pool.slots[i].tid);
        else
            pthread_join(pool.slots[i].tid, NULL);
    }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* pool_stop is an atexit handler (run at unload too, as the library
 * registers it), not a destructor: registered when the pool first starts,
 * after OpenSSL registered its cleanup (at the library's load, in
 * store/digest.c), it runs before that cleanup, so the threads leave while
 * OpenSSL can still free their per-thread state (after it, LeakSanitizer
 * reported that state). */
static void register_handlers(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    atexit(pool_stop);
}

/* Queues r's want of `helpers` threads and wakes as many idle ones. */
static void enqueue(run *r, size_t helpers)
{
    pthread_once(&once, register_handlers);
    pthread_mutex_lock(&pool.lock);
    r->wanted = helpers;
    pool.wanted += r->wanted;
    if (pool.tail)
        pool.tail->queued = r;
    else
        pool.head = r;
    pool.tail = r;
    grow();
    size_t wake = r->wanted < pool.idle ? r->wanted : pool.idle;
    pthread_mutex_unlock(&pool.lock);
    /* After the unlock: a thread woken under it would at once block on
     * the lock again (a futex wait and wake more per helper). All are
     * woken before the caller starts its share: fsyncs started together
     * share one journal commit. */
    for (size_t i = 0; i < wake; i++) pthread_cond_signal(&pool.work);
}

/* Withdraws the requests of r no thread took (pool lock held). */
static void withdraw(run *r)
{
    if (r->wanted == 0) return;
    run **p = &pool.head, *prev = NULL;
    while (*p != r) prev = *p, p = &(*p)->queued;
    *p = r->queued;
    if (pool.tail == r) pool.tail = prev;
    pool.wanted -= r->wanted;
    r->wanted = 0;
}

/* Waits until no helper works on r any more (pool lock held). */
static void wait_helpers(run *r)
{
    while (r->active > 0) pthread_cond_wait(&pool.done, &pool.lock);
}

static void run_init(run *r, tl_parallel_fn fn, void *ctx, size_t n, bool stop_on_error)
{
    memset(r, 0, sizeof *r);
    r->fn = fn;
    r->ctx = ctx;
    r->n = n;
    r->stop_on_error = stop_on_error;
    r->st = TL_OK;
    atomic_init(&r->next, 0);
    atomic_init(&r->failed, false);
    pthread_mutex_init(&r->lock, NULL);
}

tl_status tl_parallel_run(size_t n, size_t max_threads, bool stop_on_error, tl_parallel_fn fn,
                          void *ctx, tl_error *err)
{
    if (n == 0) return TL_OK;
    size_t threads = max_threads < 1 ? 1 : max_threads > n ? n : max_threads;
    run r;
    run_init(&r, fn, ctx, n, stop_on_error);
    if (threads > 1) enqueue(&r, threads - 1);
    work(&r); /* the caller's thread works too */
    if (threads > 1) {
        pthread_mutex_lock(&pool.lock);
        withdraw(&r);
        wait_helpers(&r);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_destroy(&r.lock);
    if (r.st != TL_OK && err) *err = r.err;
    return r.st;
}

struct tl_parallel_task {
    run r;
    uint64_t generation; /* the process that queued it (core/forks.h) */
};

tl_parallel_task *tl_parallel_start(tl_parallel_fn fn, void *ctx)
{
    tl_parallel_task *task = malloc(sizeof *task);
    if (task == NULL) return NULL;
    run_init(&task->r, fn, ctx, 1, false);
    task->generation = tl_fork_generation();
    enqueue(&task->r, 1);
    return task;
}

tl_status tl_parallel_join(tl_parallel_task *task, tl_parallel_fn fn, void *ctx, tl_error *err)
{
    if (task == NULL) {
        tl_error e;
        tl_status st = fn(ctx, 0, &e);
        if (st != TL_OK && err) *err = e;
        return st;
    }
    if (task->generation != tl_fork_generation()) { /* the parent's: nobody here runs it */
        free(task);
        return tl_error_set(err, TL_ERR_INTERNAL,
                            "a task started before fork() is not joined in the child");
    }
    run *r = &task->r;
    pthread_mutex_lock(&pool.lock);
    bool untaken = r->wanted > 0;
    withdraw(r);
    pthread_mutex_unlock(&pool.lock);
    if (untaken) {
        work(r); /* no pool thread was free: the caller runs it */
    } else {
        pthread_mutex_lock(&pool.lock);
        wait_helpers(r);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_destroy(&r->lock);
    tl_status st = r->st;
    if (st != TL_OK && err) *err = r->err;
    free(task);
    return st;
}

size_t tl_cpu_count(void)
{
    static atomic_size_t cached; /* 0 until read; races store the same value */
    size_t n = atomic_load_explicit(&cached, memory_order_relaxed);
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus > 1 ? (size_t)cpus : 1;
        atomic_store_explicit(&cached, n, memory_order_relaxed);
    }
    return n;
}
