/* Group commit of one table's requests: the requests that arrive while a
 * commit is under way queue up, and the next commit takes all of them, so
 * that one commit (its data files, manifest, metadata and fsyncs) serves many
 * requests instead of one each. The commit is the library's
 * tl_table_append_group: each request keeps its own outcome (its batch id is
 * recorded by the commit that holds its rows, so a redelivery is a
 * duplicate, also after a crash before the answer; an id already committed
 * is a duplicate and writes nothing; bad data fails its own request only,
 * with nothing of it committed). Here: the queue, and each request answered
 * only once the commit holding its rows is durable. */
#ifndef TL_NOTIFY_GROUP_H
#define TL_NOTIFY_GROUP_H

#include <pthread.h>
#include <stdbool.h>

#include "timelake.h"

/* One request's file, parsed, and its outcome. */
typedef struct tl_notify_member {
    const char *batch_id; /* borrowed */
    struct ArrowSchema schema;
    struct ArrowArray *batches; /* owned by the caller, with schema; only read here */
    size_t n_batches;
    /* The outcome, valid once tl_notify_group_commit returns. */
    tl_status status;
    tl_error err;
    tl_append_result result; /* rows are this member's own */
    int group;               /* members in the commit that holds its rows */
    /* Private to the group. */
    bool done;
    struct tl_notify_member *next;
} tl_notify_member;

typedef struct tl_notify_group {
    tl_table *table;             /* used under *table_lock only */
    pthread_mutex_t *table_lock; /* held by every user of the handle */
    int maintain;                /* the appends' maintain option */
    pthread_mutex_t lock;        /* guards what follows */
    pthread_cond_t changed;
    tl_notify_member *head, **tail;
    bool committing;
    int coming;   /* members being fetched or parsed, to join soon */
    long wait_ms; /* how long a commit waits for them at most */
} tl_notify_group;

void tl_notify_group_init(tl_notify_group *g, tl_table *table, pthread_mutex_t *table_lock,
                          int maintain);
void tl_notify_group_destroy(tl_notify_group *g);

/* A member is being fetched or parsed (tl_notify_group_coming) and will
 * join, or will not after all (tl_notify_group_gone): a commit about to start
 * waits a little for the members on their way, so that they join it rather
 * than wait for it and then commit on their own. */
void tl_notify_group_coming(tl_notify_group *g);
void tl_notify_group_gone(tl_notify_group *g);

/* Queues m (a member announced as coming) and returns once its outcome is
 * known: committed by this thread or by another's, with whatever else was
 * queued meanwhile. */
void tl_notify_group_commit(tl_notify_group *g, tl_notify_member *m);

#endif
