/* Files read and mapped ahead of the feed: the part of a file's work that
 * depends on nothing before it (fetching it, parsing it into Arrow, running
 * the table's mappings in DuckDB) runs on a few threads, each with its own
 * handle of the lake (a handle is used by one thread at a time), while the
 * feed takes the results strictly in ingest order and does the rest (checks,
 * dedup, the table's writing). The threads keep reading while the table
 * encodes what it took (it takes rows in chunks of about a million, then
 * sorts and writes them), up to KAHEAD_BYTES of source files beyond one
 * file per thread, so memory stays bounded by the budget, not by the run.
 * With one file the work runs on the caller's thread as it asks for it. */
#ifndef KARET_FEED_AHEAD_H
#define KARET_FEED_AHEAD_H

#include <pthread.h>
#include <stdbool.h>

#include "batch.h"
#include "files.h"
#include "timelake.h"

#define KAHEAD_MAX_THREADS 4
#define KAHEAD_WINDOW 64                  /* files in flight at most */
#define KAHEAD_BYTES (INT64_C(128) << 20) /* source bytes in flight beyond one per thread */

/* One file read and mapped. */
typedef struct kread {
    int rc;            /* 0: read and mapped; 1: the file cannot be read (msg); -1: the run fails */
    int status;        /* rc -1: a KARET_ERR_* */
    bool fetched;      /* the object was fetched */
    char msg[1024];    /* rc 1 or -1: why */
    int64_t rows;      /* rows read */
    tl_reader *reader; /* rc 0: its report */
    void *data;        /* the object's bytes (tl_free) */
    kbatches mapped;   /* the mappings' rows */
} kread;

void kread_free(kread *r);

/* Reads and maps files[i] with `lake` into *out (zeroed first). */
typedef void (*kahead_fn)(void *ctx, tl_lake *lake, size_t i, kread *out);

typedef struct kahead {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t threads[KAHEAD_MAX_THREADS];
    size_t nthreads;
    bool started, stop;
    const kfiles *files;
    size_t nfiles, claimed, taken; /* files handed to threads; results taken */
    int64_t bytes;                 /* source bytes of the files claimed, not taken */
    bool ready[KAHEAD_WINDOW];
    kread slots[KAHEAD_WINDOW];
    kahead_fn fn;
    void *ctx;
    struct kahead_worker {
        struct kahead *a;
        tl_lake *lake;
    } workers[KAHEAD_MAX_THREADS];
    size_t nlakes;
    bool inited;
} kahead;

/* Prepares *a for the files (read, not copied: they outlive *a), read with
 * fn; lakes[0..nlakes) are distinct
 * handles of the lake, lakes[0] used on the caller's thread when no thread
 * starts. Nothing starts before the first kahead_next. */
void kahead_init(kahead *a, const kfiles *files, kahead_fn fn, void *ctx, tl_lake *const *lakes,
                 size_t nlakes);

/* Moves the next file's result, in order, into *out (the caller frees it
 * with kread_free). Returns false when every file was taken. */
bool kahead_next(kahead *a, kread *out);

/* Stops the threads (waiting for the files they are on) and frees what
 * was not taken. Safe on a zeroed struct and more than once. */
void kahead_stop(kahead *a);

#endif
