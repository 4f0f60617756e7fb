#include "query/sql_deadline.h"

#include <errno.h>
#include <string.h>

static void *watch(void *p)
{
    tl_deadline *d = p;
    pthread_mutex_lock(&d->mu);
    while (!d->done) {
        if (pthread_cond_timedwait(&d->cv, &d->mu, &d->at) == ETIMEDOUT && !d->done) {
            d->fired = true;
            duckdb_interrupt(d->conn); /* under the lock: never after stop */
            break;
        }
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

tl_status tl_deadline_start(tl_deadline *d, tl_query_engine *e, int64_t ms, tl_error *err)
{
    memset(d, 0, sizeof *d);
    if (ms <= 0) return TL_OK;
    d->ms = ms;
    d->conn = e->conn;
    clock_gettime(CLOCK_MONOTONIC, &d->at);
    d->at.tv_sec += (time_t)(ms / 1000);
    d->at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (d->at.tv_nsec >= 1000000000L) d->at.tv_sec++, d->at.tv_nsec -= 1000000000L;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return tl_error_nomem(err);
    pthread_mutex_init(&d->mu, NULL);
    if (pthread_create(&d->thread, NULL, watch, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        return tl_error_set(err, TL_ERR_QUERY, "cannot start the query's timer thread");
    }
    d->armed = true;
    return TL_OK;
}

static bool passed(const tl_deadline *d)
{
    if (d->ms <= 0) return false;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > d->at.tv_sec ||
           (now.tv_sec == d->at.tv_sec && now.tv_nsec >= d->at.tv_nsec);
}

void tl_deadline_stop(tl_deadline *d)
{
    if (!d->armed) return;
    pthread_mutex_lock(&d->mu);
    d->done = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    d->armed = false;
}

static tl_status timed_out(const tl_deadline *d, tl_error *err)
{
    return tl_error_set(err, TL_ERR_QUERY,
                        "the query timed out: it ran longer than its limit of %lld ms",
                        (long long)d->ms);
}

tl_status tl_deadline_check(const tl_deadline *d, tl_error *err)
{
    return passed(d) ? timed_out(d, err) : TL_OK;
}

tl_status tl_deadline_status(const tl_deadline *d, tl_status st, tl_error *err)
{
    if (st == TL_OK || st == TL_ERR_NOMEM || !(d->fired || passed(d))) return st;
    return timed_out(d, err);
}
