/* The body of a notification request: {"events": [{"eventName", "bucket",
 * "object": {"key", "size", "etag"}}, ...]}, parsed and checked. */
#ifndef TL_NOTIFY_EVENTS_H
#define TL_NOTIFY_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timelake.h"

typedef struct tl_notify_event {
    char *name; /* eventName */
    char *bucket;
    char *key;
    int64_t size; /* -1 when absent */
    bool created; /* an OBJECT_CREATED* event: the only kind that loads */
} tl_notify_event;

typedef struct tl_notify_events {
    tl_notify_event *items;
    int n;
} tl_notify_events;

/* Parses `len` bytes of JSON. Malformed JSON, or events of an unknown shape,
 * are TL_ERR_INVALID with a message saying what is wrong (nothing is kept).
 * More than `max_events` events is TL_ERR_INVALID too. */
tl_status tl_notify_events_parse(const char *body, size_t len, int max_events,
                                 tl_notify_events *out, tl_error *err);
void tl_notify_events_free(tl_notify_events *ev);

/* Checks that an object may be loaded: a bucket name of S3's alphabet, a
 * relative key without "." or ".." segments, control characters or an
 * empty segment. TL_ERR_INVALID names the problem. */
tl_status tl_notify_check_object(const char *bucket, const char *key, tl_error *err);

#endif
