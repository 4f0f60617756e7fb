/* The notification ingest server: receives object-store notifications
 * (Tigris/S3 style JSON bodies of events) over HTTP and appends each newly
 * created object of a landing bucket to a table, with the object key as the
 * batch id so that a redelivered notification loads nothing twice. */
#ifndef TL_NOTIFY_H
#define TL_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "timelake.h"

/* Milliseconds on the monotonic clock, for the server's deadlines and
 * timings (a wall clock set back would stretch them). */
static inline double tl_notify_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Keys starting with `prefix` go to `table`; the longest matching prefix wins. */
typedef struct tl_notify_route {
    const char *prefix;
    const char *table;
} tl_notify_route;

typedef struct tl_notify_config {
    const char *lake;                /* warehouse location */
    const char *const *lake_options; /* its storage options (NULL-terminated pairs) or NULL */
    const char *default_table;       /* for keys no route matches; NULL: such keys are refused */
    const tl_notify_route *routes;
    int n_routes;
    const char *token; /* the bearer token every request must carry */
    const char *bind;  /* listen address; NULL: all interfaces */
    int port;
    /* NULL-terminated key, value pairs: storage options of the landing buckets
     * (the AWS_* environment fills the gaps). */
    const char *const *landing_options;
    size_t max_body;         /* bytes of a request body */
    int max_events;          /* events of one request */
    int idle_timeout_s;      /* a connection silent this long is closed */
    double deadline_s;       /* stop loading a request's events after this; 503 for the rest */
    int max_connections;     /* concurrent connections (one thread each) */
    int max_per_client;      /* concurrent connections from one IP address */
    double header_timeout_s; /* a request's headers must arrive whole within this */
} tl_notify_config;

/* Runs the server until SIGTERM or SIGINT, then finishes the requests in
 * flight and returns TL_OK. Fails at start on a bad configuration (a table
 * that does not exist, a port in use). */
tl_status tl_notify_serve(const tl_notify_config *cfg, tl_error *err);

#endif
