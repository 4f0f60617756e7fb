/* The events of one request loaded side by side: each event's object is
 * fetched and parsed while the others' are, and they join their table's
 * group commit together (notify_group.h), so that a request of n events
 * costs about one commit, not n one after another. */
#ifndef TL_NOTIFY_FANOUT_H
#define TL_NOTIFY_FANOUT_H

#include <stddef.h>

#include "notify_load.h"

/* Loads every event of `ev` as tl_notify_load_event does, up to a few at
 * once: status[i] and the why_size bytes at why + i * why_size are event
 * i's outcome. An event not started within deadline_ms of t0 (a
 * tl_monotonic_ms time) is a 503, for the sender to retry. */
void tl_notify_load_all(tl_notify_ingest *in, const tl_notify_events *ev, double t0,
                        double deadline_ms, int *status, char *why, size_t why_size);

#endif
