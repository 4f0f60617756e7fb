/* Loading the object of one event: route it to a table, fetch it, append it
 * with its key as the batch id, and log one JSON line. */
#ifndef TL_NOTIFY_LOAD_H
#define TL_NOTIFY_LOAD_H

#include "notify.h"
#include "notify_events.h"
#include "notify_landing.h"
#include "notify_routes.h"
#include "notify_tables.h"

typedef struct tl_notify_ingest {
    const tl_notify_config *cfg;
    tl_notify_tables *tables;
    tl_notify_landing *landing;
    struct tl_notify_guard *guard; /* header deadlines (notify_guard.h) */
} tl_notify_ingest;

/* Loads the object of `ev` (events other than OBJECT_CREATED* are skipped).
 * Returns the HTTP status class of the outcome: 200 (loaded, a duplicate or
 * skipped), 4xx for a permanent problem of the event (bad key, unknown
 * format, bad data: a retry would fail the same way) or 5xx for a transient
 * one (the object cannot be read, storage or commit failure: retry); `why`
 * says what happened. */
int tl_notify_load_event(tl_notify_ingest *in, const tl_notify_event *ev, char *why,
                         size_t why_size);

#endif
