/* The job queue: rows of the jobs table are the truth, and the workers pick
 * the oldest queued job whose pipeline has no run going. A worker keeps its
 * own lake handles (a handle is used by one thread at a time). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "jobs.h"
#include "json_text.h"
#include "run.h"

#define MAX_WORKERS 64

typedef struct running_job {
    char id[64];
    char slug[128];
    volatile int cancel;
    int stop_requested; /* by the service's stop, not by a user */
} running_job;

struct jobs_queue {
    service *svc;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t threads[MAX_WORKERS];
    int n_threads;
    running_job running[MAX_WORKERS];
    int stopping;
};

typedef struct worker {
    jobs_queue *q;
    int index;
    karet_lake lake;
    int lake_open;
} worker;

static const char *const JOB_COLUMNS =
    "id, pipeline, status, trigger, full, attempts, config_version, enqueued_at, started_at, "
    "completed_at, summary, progress, error";

static void set_iso(json_t *rec, const char *name, json_t *ms)
{
    char buf[40];
    if (json_is_integer(ms) && json_integer_value(ms) > 0)
        json_object_set_new(rec, name, json_string(iso_time(json_integer_value(ms), buf, 40)));
    else
        json_object_set_new(rec, name, json_null());
}

static json_t *parse_text(json_t *v)
{
    return json_is_string(v) ? kjson_loads(json_string_value(v), 0, NULL) : NULL;
}

json_t *job_record(json_t *row)
{
    json_t *rec = json_object();
    json_object_set(rec, "id", json_object_get(row, "id"));
    json_object_set(rec, "pipeline", json_object_get(row, "pipeline"));
    json_object_set(rec, "status", json_object_get(row, "status"));
    json_object_set(rec, "trigger", json_object_get(row, "trigger"));
    json_object_set(rec, "attempts", json_object_get(row, "attempts"));
    json_object_set(rec, "configVersion", json_object_get(row, "config_version"));
    json_object_set_new(rec, "clean",
                        json_boolean(json_integer_value(json_object_get(row, "full"))));
    set_iso(rec, "enqueuedAt", json_object_get(row, "enqueued_at"));
    set_iso(rec, "startedAt", json_object_get(row, "started_at"));
    set_iso(rec, "completedAt", json_object_get(row, "completed_at"));
    static const char *const counts[] = {"files_processed", "partitions_written", "rows_deduped",
                                         "rows_read", "rows_written"};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        json_object_set_new(rec, counts[i], json_null());
    json_object_set_new(rec, "run_kind", json_null());
    json_object_set_new(rec, "full_reason", json_null());
    json_t *summary = parse_text(json_object_get(row, "summary"));
    if (json_is_object(summary)) {
        const char *k;
        json_t *v;
        json_object_foreach(summary, k, v)
        {
            if (strcmp(k, "error") != 0) json_object_set(rec, k, v);
        }
    }
    json_decref(summary);
    json_object_set(rec, "error", json_object_get(row, "error"));
    json_t *progress = parse_text(json_object_get(row, "progress"));
    json_object_set_new(rec, "progress", progress ? progress : json_null());
    return rec;
}

static json_t *job_row(service *svc, const char *id)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s FROM jobs WHERE id = ?", JOB_COLUMNS);
    return db_query_one(svc->db, sql, "s", id);
}

json_t *job_get(service *svc, const char *slug, const char *id)
{
    json_t *row = job_row(svc, id);
    json_t *rec = NULL;
    if (row && strcmp(json_string_value(json_object_get(row, "pipeline")), slug) == 0)
        rec = job_record(row);
    json_decref(row);
    return rec;
}

/* Tells the event streams of a change, and logs it when the state changed
 * (progress alone is not logged); returns the record. */
static json_t *publish(service *svc, const char *id, int log)
{
    json_t *row = job_row(svc, id);
    if (row == NULL) return NULL;
    json_t *rec = job_record(row);
    json_decref(row);
    const char *slug = json_string_value(json_object_get(rec, "pipeline"));
    bus_publish(svc->events, slug, rec);
    if (!log) return rec;
    json_t *line = json_pack(
        "{s:s,s:O,s:O,s:O,s:O,s:O}", "event", "job", "id", json_object_get(rec, "id"), "pipeline",
        json_object_get(rec, "pipeline"), "status", json_object_get(rec, "status"), "trigger",
        json_object_get(rec, "trigger"), "attempts", json_object_get(rec, "attempts"));
    json_t *err = json_object_get(rec, "error");
    if (json_is_string(err)) json_object_set(line, "error", err);
    json_t *files = json_object_get(rec, "files_processed");
    if (json_is_integer(files)) json_object_set(line, "files_processed", files);
    log_json(line);
    return rec;
}

static json_t *announce(service *svc, const char *id)
{
    return publish(svc, id, 1);
}

static void wake_workers(service *svc)
{
    if (svc->jobs == NULL) return;
    pthread_mutex_lock(&svc->jobs->lock);
    pthread_cond_broadcast(&svc->jobs->wake);
    pthread_mutex_unlock(&svc->jobs->lock);
}

json_t *jobs_enqueue(service *svc, const char *slug, const char *trigger, int full)
{
    json_t *p = db_query_one(svc->db, "SELECT slug FROM pipelines WHERE slug = ?", "s", slug);
    if (p == NULL) return NULL;
    json_decref(p);
    char id[64], rnd[8];
    int64_t now = now_ms();
    random_alnum(rnd, 6);
    snprintf(id, sizeof id, "job-%lld-%s", (long long)now, rnd);
    /* A pipeline's jobs get distinct enqueue times (a burst in one
     * millisecond takes the next ones), so that newest-first order and the
     * pages' keyset cursor follow the order they were made in. */
    if (db_exec(svc->db, NULL,
                "INSERT INTO jobs (id, pipeline, status, trigger, full, enqueued_at) "
                "VALUES (?1, ?2, 'queued', ?3, ?4, max(?5, coalesce((SELECT max(enqueued_at) "
                "FROM jobs WHERE pipeline = ?2) + 1, 0)))",
                "sssii", id, slug, trigger, (int64_t)(full != 0), now) != DB_OK)
        return NULL;
    json_t *rec = announce(svc, id);
    wake_workers(svc);
    return rec;
}

json_t *jobs_cancel(service *svc, const char *slug, const char *id)
{
    int64_t changed = 0;
    db_exec(svc->db, &changed,
            "UPDATE jobs SET status = 'cancelled', completed_at = ?, "
            "error = 'cancelled before it started' WHERE id = ? AND pipeline = ? "
            "AND status = 'queued'",
            "iss", now_ms(), id, slug);
    if (changed) {
        json_decref(announce(svc, id));
    } else if (svc->jobs) {
        jobs_queue *q = svc->jobs;
        pthread_mutex_lock(&q->lock);
        for (int i = 0; i < q->n_threads; i++)
            if (strcmp(q->running[i].id, id) == 0) q->running[i].cancel = 1;
        pthread_mutex_unlock(&q->lock);
    }
    return job_get(svc, slug, id);
}

/* Jobs a stop or a crash left `running`: run again, or abandoned after the
 * last attempt. Either way the reason is in the record. */
static void recover(service *svc)
{
    json_t *rows = db_query(svc->db, "SELECT id, attempts FROM jobs WHERE status = 'running'", "");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "id"));
        int64_t attempts = json_integer_value(json_object_get(row, "attempts"));
        if (attempts < JOB_MAX_ATTEMPTS) {
            char why[160];
            snprintf(why, sizeof why,
                     "the service stopped during attempt %lld of %d; it runs again",
                     (long long)attempts, JOB_MAX_ATTEMPTS);
            db_exec(svc->db, NULL,
                    "UPDATE jobs SET status = 'queued', progress = NULL, error = ? WHERE id = ?",
                    "ss", why, id);
        } else {
            char why[160];
            snprintf(why, sizeof why, "abandoned: the service stopped during attempt %lld of %d",
                     (long long)attempts, JOB_MAX_ATTEMPTS);
            db_exec(svc->db, NULL,
                    "UPDATE jobs SET status = 'abandoned', completed_at = ?, progress = NULL, "
                    "error = ? WHERE id = ?",
                    "iss", now_ms(), why, id);
        }
        json_decref(announce(svc, id));
    }
    json_decref(rows);
}

static int pipeline_busy(jobs_queue *q, const char *slug)
{
    for (int i = 0; i < q->n_threads; i++)
        if (q->running[i].id[0] && strcmp(q->running[i].slug, slug) == 0) return 1;
    return 0;
}

/* With the lock held: the next job this worker may take, or NULL; *wait_ms
 * says how long until a delayed retry becomes due. */
static json_t *pick(jobs_queue *q, int64_t *wait_ms)
{
    int64_t now = now_ms();
    *wait_ms = 1000;
    json_t *rows = db_query(q->svc->db,
                            "SELECT id, pipeline, not_before FROM jobs WHERE status = 'queued' "
                            "ORDER BY enqueued_at, id LIMIT 1000",
                            "");
    json_t *chosen = NULL;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *slug = json_string_value(json_object_get(row, "pipeline"));
        int64_t nb = json_integer_value(json_object_get(row, "not_before"));
        if (pipeline_busy(q, slug)) continue;
        if (nb > now) {
            if (nb - now < *wait_ms) *wait_ms = nb - now;
            continue;
        }
        chosen = json_incref(row);
        break;
    }
    json_decref(rows);
    return chosen;
}

typedef struct progress_ctx {
    service *svc;
    const char *id;
    int64_t last_ms;
} progress_ctx;

static void on_progress(void *ctx, const karet_progress *p)
{
    progress_ctx *pc = ctx;
    int64_t t = mono_ms();
    int final = p->stage && strcmp(p->stage, "done") == 0;
    if (!final && t - pc->last_ms < 250) return; /* the stream needs no more */
    pc->last_ms = t;
    json_t *j = json_pack("{s:s,s:i,s:i,s:i,s:i}", "stage", p->stage ? p->stage : "", "files_done",
                          p->files_done, "files_total", p->files_total, "mappings_done",
                          p->mappings_done, "mappings_total", p->mappings_total);
    char *text = kjson_dumps(j, JSON_COMPACT);
    json_decref(j);
    db_exec(pc->svc->db, NULL, "UPDATE jobs SET progress = ? WHERE id = ?", "ss", text, pc->id);
    free(text);
    json_decref(publish(pc->svc, pc->id, 0));
}

/* Pins the job to the pipeline's live config (once: retries keep it) and
 * marks it running. Returns the config text (caller frees) or NULL when the
 * pipeline is gone. */
static char *start_job(service *svc, const char *id, const char *slug, int64_t *version)
{
    json_t *job = db_query_one(svc->db, "SELECT config_version FROM jobs WHERE id = ?", "s", id);
    json_t *pinned = job ? json_object_get(job, "config_version") : NULL;
    json_t *cfg = json_is_integer(pinned)
                      ? db_query_one(svc->db,
                                     "SELECT version, config FROM config_versions "
                                     "WHERE pipeline = ? AND version = ?",
                                     "si", slug, (int64_t)json_integer_value(pinned))
                      : db_query_one(svc->db,
                                     "SELECT v.version, v.config FROM pipelines p JOIN "
                                     "config_versions v ON v.pipeline = p.slug AND "
                                     "v.version = p.live_version WHERE p.slug = ?",
                                     "s", slug);
    json_decref(job);
    if (cfg == NULL) return NULL;
    *version = json_integer_value(json_object_get(cfg, "version"));
    char *text = strdup(json_string_value(json_object_get(cfg, "config")));
    json_decref(cfg);
    db_exec(svc->db, NULL,
            "UPDATE jobs SET status = 'running', started_at = ?, attempts = attempts + 1, "
            "config_version = ?, progress = NULL, completed_at = NULL WHERE id = ?",
            "iis", now_ms(), *version, id);
    json_decref(announce(svc, id));
    return text;
}

static int ensure_lake(worker *w, char *err, size_t errlen)
{
    if (w->lake_open) return 0;
    service *svc = w->q->svc;
    if (karet_lake_open(svc->cfg.lake_url, (const char *const *)svc->cfg.storage_options, &w->lake,
                        err, errlen) != KARET_OK)
        return -1;
    w->lake_open = 1;
    return 0;
}

static void finish(service *svc, const char *id, const char *status, json_t *summary,
                   const char *error)
{
    char *text = summary ? kjson_dumps(summary, JSON_COMPACT) : NULL;
    db_exec(svc->db, NULL,
            "UPDATE jobs SET status = ?, completed_at = ?, summary = ?, error = ?, "
            "progress = NULL WHERE id = ?",
            "sisss", status, now_ms(), text, error, id);
    free(text);
    json_decref(announce(svc, id));
}

static void requeue(service *svc, const char *id, int64_t not_before, const char *error,
                    int undo_attempt)
{
    char *sql = undo_attempt ? "UPDATE jobs SET status = 'queued', not_before = ?, error = ?, "
                               "progress = NULL, attempts = attempts - 1 WHERE id = ?"
                             : "UPDATE jobs SET status = 'queued', not_before = ?, error = ?, "
                               "progress = NULL WHERE id = ?";
    db_exec(svc->db, NULL, sql, "iss", not_before, error, id);
    json_decref(announce(svc, id));
}

static const char *summary_error(json_t *summary, const char *fallback)
{
    const char *e = json_string_value(json_object_get(summary, "error"));
    return e ? e : fallback;
}

static void run_one(worker *w, running_job *rj, int64_t attempts_before)
{
    service *svc = w->q->svc;
    int64_t version = 0;
    char *config_text = start_job(svc, rj->id, rj->slug, &version);
    if (config_text == NULL) {
        finish(svc, rj->id, "cancelled", NULL, "the pipeline was deleted");
        return;
    }
    json_t *full_row = db_query_one(svc->db, "SELECT full FROM jobs WHERE id = ?", "s", rj->id);
    int full = full_row && json_integer_value(json_object_get(full_row, "full"));
    json_decref(full_row);
    json_error_t je;
    json_t *config = kjson_loads(config_text, 0, &je);
    free(config_text);
    char err[1024];
    json_t *summary = NULL;
    int rc;
    if (config == NULL && json_error_code(&je) == json_error_out_of_memory) {
        rc = KARET_ERR_TRANSIENT;
        snprintf(err, sizeof err, "out of memory reading the stored config");
    } else if (config == NULL) {
        rc = KARET_ERR_CONFIG;
        snprintf(err, sizeof err, "the stored config is not JSON: %s", je.text);
    } else if (ensure_lake(w, err, sizeof err) != 0) {
        rc = KARET_ERR_TRANSIENT;
    } else {
        progress_ctx pc = {.svc = svc, .id = rj->id};
        karet_run_options opts = {.full = full,
                                  .job_id = rj->id,
                                  .on_progress = on_progress,
                                  .ctx = &pc,
                                  .cancel = &rj->cancel};
        rc = karet_run(&w->lake, rj->slug, config, &opts, &summary);
        snprintf(err, sizeof err, "%s", summary_error(summary, "the run failed"));
    }
    json_decref(config);
    int64_t attempt = attempts_before + 1;
    if (rc == KARET_OK) {
        finish(svc, rj->id, "completed", summary, NULL);
    } else if (rc == KARET_ERR_CANCELLED && rj->stop_requested) {
        requeue(svc, rj->id, 0, "the service stopped during the run; it runs again", 1);
    } else if (rc == KARET_ERR_CANCELLED) {
        finish(svc, rj->id, "cancelled", summary, "cancelled");
    } else if (rc == KARET_ERR_TRANSIENT && attempt < JOB_MAX_ATTEMPTS) {
        /* Storage trouble may pass: try again after a pause that doubles. */
        if (w->lake_open) karet_lake_close(&w->lake);
        w->lake_open = 0;
        int64_t backoff = svc->cfg.retry_backoff_ms << (attempt - 1);
        char msg[1200];
        snprintf(msg, sizeof msg, "attempt %lld of %d failed, retrying in %lld ms: %s",
                 (long long)attempt, JOB_MAX_ATTEMPTS, (long long)backoff, err);
        requeue(svc, rj->id, now_ms() + backoff, msg, 0);
    } else {
        finish(svc, rj->id, "failed", summary, err);
    }
    json_decref(summary);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    jobs_queue *q = w->q;
    running_job *slot = &q->running[w->index];
    pthread_mutex_lock(&q->lock);
    while (!q->stopping) {
        int64_t wait_ms;
        json_t *job = pick(q, &wait_ms);
        if (job == NULL) {
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += wait_ms / 1000;
            until.tv_nsec += (wait_ms % 1000) * 1000000;
            if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&q->wake, &q->lock, &until);
            continue;
        }
        snprintf(slot->id, sizeof slot->id, "%s", json_string_value(json_object_get(job, "id")));
        snprintf(slot->slug, sizeof slot->slug, "%s",
                 json_string_value(json_object_get(job, "pipeline")));
        slot->cancel = 0;
        slot->stop_requested = 0;
        json_decref(job);
        json_t *row =
            db_query_one(q->svc->db, "SELECT attempts FROM jobs WHERE id = ?", "s", slot->id);
        int64_t attempts = row ? json_integer_value(json_object_get(row, "attempts")) : 0;
        json_decref(row);
        pthread_mutex_unlock(&q->lock);
        run_one(w, slot, attempts);
        pthread_mutex_lock(&q->lock);
        slot->id[0] = 0;
        slot->slug[0] = 0;
        pthread_cond_broadcast(&q->wake);
    }
    pthread_mutex_unlock(&q->lock);
    if (w->lake_open) karet_lake_close(&w->lake);
    free(w);
    return NULL;
}

jobs_queue *jobs_start(service *svc, char *err, size_t errlen)
{
    jobs_queue *q = calloc(1, sizeof *q);
    if (q == NULL) return snprintf(err, errlen, "out of memory"), NULL;
    q->svc = svc;
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->wake, &ca);
    pthread_condattr_destroy(&ca);
    recover(svc);
    int n = svc->cfg.workers < 1             ? 1
            : svc->cfg.workers > MAX_WORKERS ? MAX_WORKERS
                                             : svc->cfg.workers;
    for (int i = 0; i < n; i++) {
        worker *w = calloc(1, sizeof *w);
        if (w == NULL) break;
        w->q = q;
        w->index = i;
        if (pthread_create(&q->threads[i], NULL, worker_main, w) != 0) {
            free(w);
            break;
        }
        q->n_threads++;
    }
    if (q->n_threads == 0) {
        snprintf(err, errlen, "cannot start worker threads");
        jobs_stop(q);
        return NULL;
    }
    return q;
}

void jobs_stop(jobs_queue *q)
{
    if (q == NULL) return;
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    for (int i = 0; i < q->n_threads; i++)
        if (q->running[i].id[0]) q->running[i].stop_requested = 1, q->running[i].cancel = 1;
    pthread_cond_broadcast(&q->wake);
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < q->n_threads; i++) pthread_join(q->threads[i], NULL);
    pthread_cond_destroy(&q->wake);
    pthread_mutex_destroy(&q->lock);
    free(q);
}
