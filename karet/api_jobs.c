/* Jobs over HTTP: start a run (202), list runs newest first with keyset
 * paging, one run, cancel, the live stream of changes (server-sent events),
 * and the bucket notifications that start runs. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "auth.h"
#include "jobs.h"
#include "json_text.h"

#define PAGE_DEFAULT 25
#define PAGE_MAX 100
#define MAX_STREAMS 32
#define MAX_EVENTS 10000

static const char *const JOB_COLUMNS =
    "id, pipeline, status, trigger, full, attempts, config_version, enqueued_at, started_at, "
    "completed_at, summary, progress, error";

void api_jobs_create(service *svc, http_req *rq, http_resp *out)
{
    const char *clean = req_query(rq, "clean");
    int full = clean && (strcmp(clean, "true") == 0 || strcmp(clean, "1") == 0);
    json_t *job = jobs_enqueue(svc, rq->params[0], "manual", full);
    if (job == NULL) {
        reply_error(out, 404, "pipeline_not_found", "no pipeline \"%s\"", rq->params[0]);
        return;
    }
    reply_json(out, 202, job);
}

/* Milliseconds of "YYYY-MM-DDTHH:MM:SS[.mmm]Z", or -1. */
static int64_t parse_iso_ms(const char *s)
{
    struct tm tm = {0};
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (rest == NULL) return -1;
    int ms = 0;
    if (*rest == '.') {
        char *end;
        long frac = strtol(rest + 1, &end, 10);
        int digits = (int)(end - rest - 1);
        if (digits < 1 || digits > 9) return -1;
        while (digits > 3) frac /= 10, digits--;
        while (digits < 3) frac *= 10, digits++;
        ms = (int)frac;
        rest = end;
    }
    if (strcmp(rest, "Z") != 0) return -1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

void api_jobs_list(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *p = api_pipeline(svc, slug, out);
    if (p == NULL) return;
    json_decref(p);
    const char *ps = req_query(rq, "pageSize"), *before = req_query(rq, "before");
    long long size = ps ? strtoll(ps, NULL, 10) : PAGE_DEFAULT;
    if (size < 1) size = PAGE_DEFAULT;
    if (size > PAGE_MAX) size = PAGE_MAX;
    char sql[768];
    json_t *rows;
    int64_t before_ms = before ? parse_iso_ms(before) : -1;
    if (before_ms >= 0) { /* the peer's cursor: an enqueue time */
        snprintf(sql, sizeof sql,
                 "SELECT %s FROM jobs WHERE pipeline = ? AND enqueued_at < ? "
                 "ORDER BY enqueued_at DESC, id DESC LIMIT ?",
                 JOB_COLUMNS);
        rows = db_query(svc->db, sql, "sii", slug, before_ms, (int64_t)size);
    } else if (before && *before) {
        json_t *cursor =
            db_query_one(svc->db, "SELECT enqueued_at FROM jobs WHERE id = ? AND pipeline = ?",
                         "ss", before, slug);
        if (cursor == NULL) {
            reply_error(out, 400, "invalid_cursor",
                        "before must be a job id of this pipeline (as nextBefore gives it) or an "
                        "enqueue time such as 2026-11-12T03:10:00.000Z");
            return;
        }
        snprintf(sql, sizeof sql,
                 "SELECT %s FROM jobs WHERE pipeline = ? AND (enqueued_at, id) < (?, ?) "
                 "ORDER BY enqueued_at DESC, id DESC LIMIT ?",
                 JOB_COLUMNS);
        rows = db_query(svc->db, sql, "sisi", slug,
                        (int64_t)json_integer_value(json_object_get(cursor, "enqueued_at")), before,
                        (int64_t)size);
        json_decref(cursor);
    } else {
        snprintf(sql, sizeof sql,
                 "SELECT %s FROM jobs WHERE pipeline = ? ORDER BY enqueued_at DESC, id DESC "
                 "LIMIT ?",
                 JOB_COLUMNS);
        rows = db_query(svc->db, sql, "si", slug, (int64_t)size);
    }
    if (rows == NULL) {
        reply_error(out, 500, "internal", "%s", db_error());
        return;
    }
    json_t *jobs = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) json_array_append_new(jobs, job_record(row));
    json_t *next = json_array_size(rows) == (size_t)size
                       ? json_incref(json_object_get(json_array_get(rows, i - 1), "id"))
                       : json_null();
    json_decref(rows);
    /* An upload batch waiting to start a run (null when none). */
    int64_t at = 0;
    int events = before && *before ? 0 : debouncer_pending(svc->debounce, slug, &at);
    char iso[40];
    json_t *scheduled =
        events ? json_pack("{s:s,s:i}", "runAt", iso_time(at, iso, sizeof iso), "events", events)
               : json_null();
    reply_json(
        out, 200,
        json_pack("{s:o,s:o,s:o}", "jobs", jobs, "nextBefore", next, "scheduled", scheduled));
}

void api_job_get(service *svc, http_req *rq, http_resp *out)
{
    json_t *job = job_get(svc, rq->params[0], rq->params[1]);
    if (job == NULL)
        reply_error(out, 404, "job_not_found", "no job %s in pipeline %s", rq->params[1],
                    rq->params[0]);
    else
        reply_json(out, 200, job);
}

void api_job_cancel(service *svc, http_req *rq, http_resp *out)
{
    json_t *job = jobs_cancel(svc, rq->params[0], rq->params[1]);
    if (job == NULL)
        reply_error(out, 404, "job_not_found", "no job %s in pipeline %s", rq->params[1],
                    rq->params[0]);
    else
        reply_json(out, 202, job);
}

/* ---- server-sent events ---- */

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static int streams_open;

typedef struct sse {
    service *svc;
    char slug[128];
    uint64_t seq;
    char *pending; /* text not yet handed to the connection */
    size_t off, len;
} sse;

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse *s = cls;
    while (s->off == s->len) {
        free(s->pending);
        s->pending = NULL;
        s->off = s->len = 0;
        int closed = 0;
        char name[32] = "";
        char *ev = bus_wait(s->svc->events, s->slug, &s->seq, s->svc->cfg.sse_ping_ms, &closed,
                            name, sizeof name);
        if (closed || s->svc->stopping) {
            free(ev);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (ev) {
            size_t n = strlen(ev) + strlen(name) + 24;
            s->pending = malloc(n);
            if (s->pending && name[0])
                snprintf(s->pending, n, "event: %s\ndata: %s\n\n", name, ev);
            else if (s->pending)
                snprintf(s->pending, n, "data: %s\n\n", ev);
            free(ev);
        } else {
            s->pending = strdup(": ping\n\n");
        }
        if (s->pending == NULL) return MHD_CONTENT_READER_END_WITH_ERROR;
        s->len = strlen(s->pending);
    }
    size_t n = s->len - s->off < max ? s->len - s->off : max;
    memcpy(buf, s->pending + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void sse_free(void *cls)
{
    sse *s = cls;
    free(s->pending);
    free(s);
    pthread_mutex_lock(&streams_lock);
    streams_open--;
    pthread_mutex_unlock(&streams_lock);
}

void api_jobs_events(service *svc, http_req *rq, http_resp *out)
{
    json_t *p = api_pipeline(svc, rq->params[0], out);
    if (p == NULL) return;
    json_decref(p);
    pthread_mutex_lock(&streams_lock);
    int full = streams_open >= MAX_STREAMS;
    if (!full) streams_open++;
    pthread_mutex_unlock(&streams_lock);
    if (full) {
        reply_error(out, 503, "too_many_streams", "too many open event streams; retry later");
        reply_header(out, "Retry-After", "5");
        return;
    }
    sse *s = calloc(1, sizeof *s);
    if (s == NULL) {
        sse_free(calloc(1, sizeof *s));
        reply_error(out, 500, "internal", "out of memory");
        return;
    }
    s->svc = svc;
    snprintf(s->slug, sizeof s->slug, "%s", rq->params[0]);
    s->seq = bus_seq(svc->events);
    s->pending = strdup("retry: 3000\n: connected\n\n");
    s->len = s->pending ? strlen(s->pending) : 0;
    out->stream = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, s, sse_free);
    if (out->stream == NULL) {
        sse_free(s);
        reply_error(out, 500, "internal", "cannot start the stream");
        return;
    }
    out->status = 200;
    out->content_type = "text/event-stream";
    reply_header(out, "X-Accel-Buffering", "no");
}

/* ---- bucket notifications ---- */

static int webhook_authorized(service *svc, http_req *rq)
{
    const char *secret = svc->cfg.webhook_secret;
    if (secret == NULL || *secret == 0) return 0; /* fail closed */
    const char *auth = req_header(rq, "Authorization");
    if (auth && strncasecmp(auth, "Bearer ", 7) == 0 && ct_equal(auth + 7, secret)) return 1;
    const char *h = req_header(rq, "X-Karet-Webhook-Secret");
    if (h == NULL) h = req_header(rq, "X-Webhook-Secret");
    return h && ct_equal(h, secret);
}

/* S3 event keys are URL-encoded, '+' for a space. */
static char *url_decode(const char *s)
{
    char *out = malloc(strlen(s) + 1);
    if (out == NULL) return NULL;
    size_t j = 0;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '+') {
            out[j++] = ' ';
        } else if (s[i] == '%' && isxdigit((unsigned char)s[i + 1]) &&
                   isxdigit((unsigned char)s[i + 2])) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            out[j++] = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            out[j++] = s[i];
        }
    }
    out[j] = 0;
    return out;
}

/* A key an upload may have: relative, no "." or ".." segment, no empty
 * segment, no control character. */
int api_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > 1024 || key[0] == '/') return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f || key[i] == '\\') return 0;
    for (const char *s = key;;) {
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t)(slash - s) : strlen(s);
        if (len == 0 && slash) return 0;
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) return 0;
        if (slash == NULL) return 1;
        s = slash + 1;
    }
}

/* Routes one created object (bucket and decoded key) to its pipelines. */
static void route_object(service *svc, const char *bucket, const char *key, json_t *scheduled)
{
    if (svc->lake_bucket) {
        if (bucket == NULL || strcmp(bucket, svc->lake_bucket) != 0) return;
        size_t n = strlen(svc->lake_prefix);
        if (strncmp(key, svc->lake_prefix, n) != 0) return;
        key += n;
    }
    if (api_key_ok(key)) route_upload(svc, key, scheduled);
}

static void s3_record(service *svc, json_t *r, json_t *scheduled)
{
    const char *name = json_string_value(json_object_get(r, "eventName"));
    json_t *s3 = json_object_get(r, "s3");
    const char *bucket = json_string_value(json_object_get(json_object_get(s3, "bucket"), "name"));
    const char *key = json_string_value(json_object_get(json_object_get(s3, "object"), "key"));
    if (name == NULL || key == NULL) return;
    if (strncmp(name, "s3:ObjectCreated:", 17) != 0 && strncmp(name, "ObjectCreated:", 14) != 0)
        return;
    char *decoded = url_decode(key);
    if (decoded) route_object(svc, bucket, decoded, scheduled);
    free(decoded);
}

static void tigris_event(service *svc, json_t *e, json_t *scheduled)
{
    const char *name = json_string_value(json_object_get(e, "eventName"));
    const char *bucket = json_string_value(json_object_get(e, "bucket"));
    const char *key = json_string_value(json_object_get(json_object_get(e, "object"), "key"));
    if (name && key && strncmp(name, "OBJECT_CREATED", 14) == 0)
        route_object(svc, bucket, key, scheduled);
}

void api_events_s3(service *svc, http_req *rq, http_resp *out)
{
    if (!webhook_authorized(svc, rq)) {
        int sent = req_header(rq, "Authorization") || req_header(rq, "X-Karet-Webhook-Secret") ||
                   req_header(rq, "X-Webhook-Secret");
        reply_error(out, 401, "unauthorized", "%s",
                    !svc->cfg.webhook_secret || !*svc->cfg.webhook_secret
                        ? "this server was started without KARET_WEBHOOK_SECRET, so it refuses "
                          "every event: restart it with the variable set"
                    : sent ? "the webhook secret is not this server's KARET_WEBHOOK_SECRET"
                           : "send the webhook secret (KARET_WEBHOOK_SECRET) in the header "
                             "X-Karet-Webhook-Secret or as Authorization: Bearer <secret>");
        return;
    }
    json_error_t je;
    json_t *body = rq->body_len ? kjson_loadb(rq->body, rq->body_len, 0, &je) : NULL;
    if (body == NULL && rq->body_len && json_error_code(&je) == json_error_out_of_memory) {
        reply_error(out, 503, "out_of_memory",
                    "the server ran out of memory reading the events: retry");
        return;
    }
    if (!json_is_object(body)) {
        json_decref(body);
        reply_error(out, 400, "invalid_json", "the body must be a JSON object of events");
        return;
    }
    json_t *records = json_object_get(body, "Records");
    json_t *events = json_object_get(body, "events");
    if (!json_is_array(records) && !json_is_array(events)) {
        json_decref(body);
        reply_error(out, 400, "invalid_event",
                    "expected an S3 envelope {\"Records\": [...]} or Tigris's {\"events\": [...]}");
        return;
    }
    json_t *list = json_is_array(records) ? records : events;
    if (json_array_size(list) > MAX_EVENTS) {
        json_decref(body);
        reply_error(out, 413, "too_many_events", "at most %d events a request", MAX_EVENTS);
        return;
    }
    json_t *scheduled = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!json_is_object(e)) continue;
        if (list == records)
            s3_record(svc, e, scheduled);
        else
            tigris_event(svc, e, scheduled);
    }
    reply_json(out, 200,
               json_pack("{s:I,s:o}", "received", (json_int_t)json_array_size(list), "scheduled",
                         scheduled));
    json_decref(body);
}
