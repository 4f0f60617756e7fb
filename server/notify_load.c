#include "notify_load.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../karet/json_text.h"
#include "notify.h"

/* One JSON line per call; a single write keeps concurrent lines whole. */
static void log_json(FILE *f, json_t *j)
{
    char *s = j ? kjson_dumps(j, JSON_COMPACT) : NULL;
    if (s) {
        fprintf(f, "%s\n", s);
        fflush(f);
    }
    free(s);
    json_decref(j);
}

static void log_error(const tl_notify_event *ev, const char *table, int http, const char *msg)
{
    log_json(stderr,
             json_pack("{s:s,s:s,s:s,s:s?,s:i,s:s}", "event", "load_failed", "bucket", ev->bucket,
                       "key", ev->key, "table", table, "status", http, "error", msg));
}

/* Error messages name the temporary file: name the object instead. */
static void name_object(tl_error *err, const char *tmp, const tl_notify_event *ev)
{
    char out[TL_ERROR_MESSAGE_MAX];
    size_t o = 0, tl = strlen(tmp);
    for (const char *p = err->message; *p && o + 1 < sizeof out;) {
        if (strncmp(p, tmp, tl) == 0) {
            o += (size_t)snprintf(out + o, sizeof out - o, "s3://%s/%s", ev->bucket, ev->key);
            if (o >= sizeof out) o = sizeof out - 1;
            p += tl;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = 0;
    memcpy(err->message, out, o + 1);
}

/* The HTTP status of an append failure: bad data is permanent, the rest transient. */
static int append_status(tl_status st)
{
    return st == TL_ERR_INVALID ? 422 : 503;
}

/* The answer for an object whose key the table has: nothing is read. */
static int duplicate(const tl_notify_event *ev, const char *table, int64_t version, double t0,
                     char *why, size_t why_size)
{
    log_json(stdout,
             json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:f,s:f,s:f,s:b}", "event", "load", "key", ev->key,
                       "table", table, "rows", (json_int_t)0, "bytes", (json_int_t)0, "version",
                       (json_int_t)version, "ms", tl_notify_now_ms() - t0, "fetch_ms", 0.0,
                       "commit_ms", 0.0, "duplicate", 1));
    snprintf(why, why_size, "%s: duplicate", ev->key);
    return 200;
}

/* Whether the table has the key, waiting for a commit under way. */
static bool committed_now(tl_notify_ingest *in, const char *table, const char *key,
                          int64_t *version)
{
    tl_error err = {0};
    int seen = 0;
    return tl_notify_tables_has_batch(in->tables, table, key, true, &seen, version, &err) ==
               TL_OK &&
           seen == 1;
}

/* A request announced to its table's group (tl_notify_tables_coming). */
typedef struct coming {
    tl_notify_tables *tables;
    const char *table;
    bool on_way; /* still announced */
} coming;

/* An object above the parse-ahead size commits alone, after its copy to a
 * file: the table's commits stop waiting for it as soon as its size says so. */
static void sized(void *ctx, uint64_t bytes)
{
    coming *c = ctx;
    if (bytes <= tl_notify_tables_parse_ahead_bytes()) return;
    tl_notify_tables_gone(c->tables, c->table);
    c->on_way = false;
}

static int load(tl_notify_ingest *in, const tl_notify_event *ev, const char *table, const char *fmt,
                char *why, size_t why_size)
{
    double t0 = tl_notify_now_ms();
    tl_error err = {0};
    /* A redelivery of objects already loaded must not spend the request's
     * deadline fetching and parsing them again (the sender would then time out
     * before the new objects at its end, and retry the same forever). The
     * check does not wait for a commit under way (the fetch and parse go on
     * meanwhile, and the group commit checks again): a fetch that fails is
     * then checked again, waiting, since an object loaded and then deleted
     * is a duplicate, not an error. */
    int seen = 0;
    int64_t version = 0;
    if (tl_notify_tables_has_batch(in->tables, table, ev->key, false, &seen, &version, &err) !=
        TL_OK)
        seen = -1; /* the append checks again; report it only if that fails too */
    if (seen == 1) return duplicate(ev, table, version, t0, why, why_size);
    memset(&err, 0, sizeof err);
    /* Commits of the table wait a little for this request from now on, while
     * it fetches too: concurrent requests missed each other's commit during
     * their fetches (as long as their parse), and each commit costs its
     * files, fsyncs and their later merges (half the commits with four
     * senders once they wait). */
    if (tl_notify_tables_coming(in->tables, table, &err) != TL_OK) {
        snprintf(why, why_size, "%s: %s", ev->key, err.message);
        log_error(ev, table, 503, why);
        return 503;
    }
    /* Text small enough to parse ahead is read from memory: no temporary file. */
    uint64_t memory_max = strcmp(fmt, "parquet") == 0 ? 0 : tl_notify_tables_parse_ahead_bytes();
    tl_notify_object obj;
    coming c = {in->tables, table, true};
    tl_status st = tl_notify_landing_fetch(in->landing, ev->bucket, ev->key, memory_max, sized, &c,
                                           &obj, &err);
    if (st != TL_OK && c.on_way) tl_notify_tables_gone(in->tables, table);
    if (st != TL_OK && seen == -1 && committed_now(in, table, ev->key, &version))
        return duplicate(ev, table, version, t0, why, why_size);
    if (st != TL_OK) {
        /* Deleted before it was fetched, or the bucket failed: the sender retries. */
        snprintf(why, why_size, "%s: cannot read the object: %s", ev->key, err.message);
        log_error(ev, table, 503, why);
        return 503;
    }
    double fetched = tl_notify_now_ms();
    tl_append_result r;
    memset(&r, 0, sizeof r);
    int group = 1;
    /* Messages name the object: a file's by its temporary name (replaced below). */
    char *name = NULL;
    if (obj.path == NULL && asprintf(&name, "s3://%s/%s", ev->bucket, ev->key) < 0) name = NULL;
    if (obj.path == NULL && name == NULL) {
        if (c.on_way) tl_notify_tables_gone(in->tables, table);
        st = cli_error_nomem(&err);
    } else
        st = tl_notify_tables_append(in->tables, table, obj.path ? obj.path : name, obj.data,
                                     obj.bytes, fmt, ev->key, &r, &group, &err);
    free(name);
    if (st != TL_OK) {
        if (obj.path) name_object(&err, obj.path, ev);
        tl_notify_object_clear(&obj);
        int http = append_status(st);
        snprintf(why, why_size, "%s: %s", ev->key, err.message);
        log_error(ev, table, http, why);
        return http;
    }
    uint64_t bytes = obj.bytes;
    tl_notify_object_clear(&obj);
    double ms = tl_notify_now_ms() - t0;
    /* ms = fetch_ms + parsing + waiting for the table + commit_ms (the
     * append's own, of the whole group); group: the requests it committed. */
    json_t *line =
        json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:f,s:f,s:f,s:i,s:i,s:b}", "event", "load", "key",
                  ev->key, "table", table, "rows", (json_int_t)r.rows, "bytes", (json_int_t)bytes,
                  "version", (json_int_t)r.version, "ms", ms, "fetch_ms", fetched - t0, "commit_ms",
                  r.commit_ms, "group", group, "attempts", r.attempts, "duplicate", r.duplicate);
    /* The append repaired the table (a lost last-value index): say so. */
    if (line && r.warning[0]) json_object_set_new(line, "warning", json_string(r.warning));
    log_json(r.warning[0] ? stderr : stdout, line);
    snprintf(why, why_size, "%s: %s", ev->key, r.duplicate ? "duplicate" : "loaded");
    return 200;
}

int tl_notify_load_event(tl_notify_ingest *in, const tl_notify_event *ev, char *why,
                         size_t why_size)
{
    if (!ev->created) {
        snprintf(why, why_size, "%s: %s skipped", ev->key, ev->name);
        return 200;
    }
    tl_error err = {0};
    const char *fmt = NULL;
    const char *table = tl_notify_route_table(in->cfg, ev->key);
    if (tl_notify_check_object(ev->bucket, ev->key, &err) != TL_OK ||
        tl_data_format(NULL, ev->key, &fmt, &err) != TL_OK) {
        snprintf(why, why_size, "%s", err.message);
        log_error(ev, table, 400, why);
        return 400;
    }
    if (table == NULL) {
        snprintf(why, why_size, "%s: no --route prefix matches and no default table", ev->key);
        log_error(ev, table, 400, why);
        return 400;
    }
    return load(in, ev, table, fmt, why, why_size);
}
