/* `karet serve`: the pipeline service. One process holds the HTTP API
 * (libmicrohttpd, a thread per connection), the SQLite control plane, the
 * debouncer of upload events and the job workers that run the engine. */
#ifndef KARET_SERVE_H
#define KARET_SERVE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "db.h"

typedef struct jobs_queue jobs_queue;
typedef struct debouncer debouncer;
typedef struct auth_throttle auth_throttle;
typedef struct event_bus event_bus;

typedef struct serve_config {
    char *data_dir;         /* the SQLite control plane lives here */
    char *lake_url;         /* sources and warehouse/ */
    char **storage_options; /* NULL-terminated key, value pairs (owned) */
    char *listen_host;      /* NULL: 127.0.0.1 */
    int port;
    int workers;
    char *worker_token;   /* NULL: no service principal */
    char *webhook_secret; /* NULL: /events/s3 refuses everything */
    char *admin_username;
    char *admin_password_hash;
    char *public_url; /* what the banner prints */
    int64_t session_ttl_s;
    int64_t max_upload; /* bytes of one PUT /api/lake body */
    int64_t debounce_quiet_ms;
    int64_t debounce_max_ms;
    int64_t sse_ping_ms;
    int64_t retry_backoff_ms; /* first retry's wait; doubles */
    int demo;                 /* seed a demo pipeline and files on a fresh service */
} serve_config;

typedef struct service {
    serve_config cfg;
    karet_db *db;
    jobs_queue *jobs;
    debouncer *debounce;
    auth_throttle *throttle;
    event_bus *events;
    char *lake_bucket; /* s3://<bucket>/<prefix>: the bucket events must name (NULL: local) */
    char *lake_prefix; /* ... and the key prefix, "" or ending in '/' */
    volatile int stopping;
} service;

/* Called by the HTTP server once it listens (prints the banner), and when a
 * signal asked it to stop (ends event streams, stops the workers' intake). */
void serve_started(service *svc);
void serve_stopping(service *svc);

/* Milliseconds since the Unix epoch, and monotonic. */
int64_t now_ms(void);
int64_t mono_ms(void);
/* ISO 8601 UTC with milliseconds into buf (at least 32 bytes); 0 gives "". */
const char *iso_time(int64_t ms, char *buf, size_t len);

/* Logs one JSON object as a line on stdout (consumes j). */
void log_json(json_t *j);

#endif
