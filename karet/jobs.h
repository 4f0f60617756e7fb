/* Jobs: the queue in SQLite, the worker threads that run the engine, the
 * debouncer of upload events, and the bus that carries every job change to
 * server-sent event streams.
 *
 * States: queued -> running -> completed | failed | cancelled; a run cut
 * short by a stop or a crash is queued again (or `abandoned` after its
 * third attempt). One run per pipeline at a time; other pipelines run in
 * parallel on the workers. */
#ifndef KARET_JOBS_H
#define KARET_JOBS_H

#include <jansson.h>
#include <stdint.h>

#include "serve.h"

#define JOB_MAX_ATTEMPTS 3

/* Starts cfg.workers threads. Jobs left `running` by a stop or a crash are
 * recovered first (see above). Returns NULL with err on failure. */
jobs_queue *jobs_start(service *svc, char *err, size_t errlen);
/* Stops taking jobs, asks running ones to stop before their next commit
 * (they are queued again), and joins the workers. */
void jobs_stop(jobs_queue *q);

/* Records a queued job and wakes a worker. Returns the job's record (caller
 * owns) or NULL when the pipeline does not exist. trigger: "manual" or
 * "webhook". */
json_t *jobs_enqueue(service *svc, const char *slug, const char *trigger, int full);
/* Cancels a queued job at once, or asks a running one to stop. Returns the
 * record, or NULL when there is no such job of that pipeline. */
json_t *jobs_cancel(service *svc, const char *slug, const char *id);

/* The API's record of a job, from its row (borrowed). */
json_t *job_record(json_t *row);
/* One job's record (caller owns), or NULL. */
json_t *job_get(service *svc, const char *slug, const char *id);

/* Upload events: a run of the pipeline fires once quiet_ms pass without an
 * event for it, or max_ms after the first, whichever is sooner. */
debouncer *debouncer_start(service *svc);
void debouncer_note(debouncer *d, const char *slug);
/* The batch waiting for a pipeline: returns how many events it holds (0
 * when none waits) and sets *fires_at_ms to the wall-clock time its run is
 * due. Each event also publishes a "scheduled" event on the bus with
 * {"pipeline", "runAt", "events"}, so pages can count down. */
int debouncer_pending(debouncer *d, const char *slug, int64_t *fires_at_ms);
/* Stops the timer thread; pending batches become queued jobs, so a stop
 * loses no upload. */
void debouncer_stop(debouncer *d);

/* Routes a lake key to the pipelines whose source prefixes contain it and
 * notes an event for each; adds their slugs to `scheduled` (a JSON array,
 * each slug once). Returns how many pipelines it reached. */
int route_upload(service *svc, const char *key, json_t *scheduled);

/* Job change events, for server-sent event streams. */
event_bus *bus_new(void);
void bus_free(event_bus *b);
/* Publishes a record (borrowed) of a pipeline's job. */
void bus_publish(event_bus *b, const char *slug, json_t *record);
/* Publishes a named event (a server-sent event with an "event:" line, which
 * a client reading only job records never sees). */
void bus_publish_named(event_bus *b, const char *slug, const char *name, json_t *record);
/* Waits until an event of slug newer than *seq, the bus closes, or timeout_ms
 * pass. Returns the event's text (caller frees) and advances *seq; NULL on
 * timeout or close (*closed set). name (namelen bytes, may be NULL) gets the
 * event's name, "" for a job record. */
char *bus_wait(event_bus *b, const char *slug, uint64_t *seq, int64_t timeout_ms, int *closed,
               char *name, size_t namelen);
uint64_t bus_seq(event_bus *b);
void bus_close(event_bus *b);

#endif
