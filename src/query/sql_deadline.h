/* A query's time limit: a thread that interrupts the engine's DuckDB
 * connection (duckdb_interrupt) once the limit has passed. DuckDB forgets an
 * interrupt that finds no query running, so the caller also checks
 * tl_deadline_check between its steps. */
#ifndef TL_QUERY_SQL_DEADLINE_H
#define TL_QUERY_SQL_DEADLINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "query/engine.h"

typedef struct tl_deadline {
    bool armed;
    int64_t ms;
    struct timespec at; /* CLOCK_MONOTONIC */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, fired;
    duckdb_connection conn;
} tl_deadline;

/* Starts watching e's connection for `ms` milliseconds from now (ms <= 0:
 * no limit, nothing started). */
tl_status tl_deadline_start(tl_deadline *d, tl_query_engine *e, int64_t ms, tl_error *err);

/* TL_ERR_QUERY saying the query timed out when the limit has passed
 * (never without one), else TL_OK: for the steps between DuckDB's. */
tl_status tl_deadline_check(const tl_deadline *d, tl_error *err);

/* Stops the watch; afterwards no interrupt can come. */
void tl_deadline_stop(tl_deadline *d);

/* A step's failure `st` told as the timeout when the limit had passed (an
 * interrupted query's own error says only "Interrupted"); otherwise st. */
tl_status tl_deadline_status(const tl_deadline *d, tl_status st, tl_error *err);

#endif
