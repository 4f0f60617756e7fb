/* A pipeline's tables as the Data page lists them (with row counts, files,
 * bytes, table version and last commit beside the peer's fields), the first
 * rows of one, and saved queries. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "api_arrow_json.h"
#include "serve_lake.h"

#define ROWS_DEFAULT 100
#define ROWS_MAX 1000

/* Adds the table's size and version to desc (zeros when no run wrote it). */
static void table_stats(tl_lake *wh, const char *slug, json_t *desc)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", slug, json_string_value(json_object_get(desc, "id")));
    tl_table *t = NULL;
    tl_table_info info = {0};
    int have = wh && tl_lake_open_table(wh, name, &t, NULL) == TL_OK &&
               tl_table_info_get(t, &info, NULL) == TL_OK;
    json_object_set_new(desc, "table", json_string(name));
    json_object_set_new(desc, "exists", json_boolean(have));
    json_object_set_new(desc, "rowCount", json_integer(have ? info.rows : 0));
    json_object_set_new(desc, "fileCount", json_integer(have ? info.files : 0));
    json_object_set_new(desc, "bytes", json_integer(have ? info.bytes : 0));
    json_object_set_new(desc, "version", have ? json_integer(info.version) : json_null());
    json_object_set_new(desc, "snapshots", json_integer(have ? info.snapshots : 0));
    char ts[40];
    json_object_set_new(desc, "lastCommitAt",
                        have && info.last_commit_ms > 0
                            ? json_string(iso_time(info.last_commit_ms, ts, sizeof ts))
                            : json_null());
    if (have) tl_table_info_clear(&info);
    tl_table_close(t);
}

/* Fills in the stats of many tables at once: on an object store each table
 * costs round trips, so up to STATS_THREADS read in parallel, each thread
 * with its own handle (a handle serves one thread at a time). With 50
 * tables behind 20 ms round trips that is 0.4 s instead of 2.4 s
 * (bench/karet_pages --s3 --latency-ms 40). */
#define STATS_THREADS 16

typedef struct stats_work {
    service *svc;
    const char *slug;
    json_t *descs;
    size_t next;
    pthread_mutex_t lock;
} stats_work;

static void stats_loop(stats_work *w, tl_lake *wh)
{
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t i = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (i >= json_array_size(w->descs)) return;
        table_stats(wh, w->slug, json_array_get(w->descs, i));
    }
}

static void *stats_thread(void *arg)
{
    stats_work *w = arg;
    char err[1024];
    tl_lake *wh = lake_open_warehouse(w->svc, err, sizeof err);
    stats_loop(w, wh); /* without a handle, the tables read as not written */
    tl_lake_close(wh);
    return NULL;
}

static void all_stats(service *svc, tl_lake *wh, const char *slug, json_t *descs)
{
    stats_work w = {.svc = svc, .slug = slug, .descs = descs};
    pthread_mutex_init(&w.lock, NULL);
    size_t n = json_array_size(descs), want = n < STATS_THREADS ? n : STATS_THREADS;
    pthread_t threads[STATS_THREADS];
    size_t started = 0;
    while (started + 1 < want && pthread_create(&threads[started], NULL, stats_thread, &w) == 0)
        started++;
    stats_loop(&w, wh);
    for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&w.lock);
}

void api_tables_list(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *p = api_pipeline(svc, slug, out);
    if (p == NULL) return;
    json_decref(p);
    json_t *config = api_live_config(svc, slug, NULL);
    char err[1024];
    tl_lake *wh = lake_open_warehouse(svc, err, sizeof err);
    if (wh == NULL) {
        json_decref(config);
        reply_error(out, 502, "storage_error", "%s", err);
        return;
    }
    json_t *tables = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(config, "analytic_tables"), i, t)
    {
        json_t *desc = json_pack("{s:O,s:O,s:O,s:O*,s:O*}", "id", json_object_get(t, "id"), "name",
                                 json_object_get(t, "name"), "schema", json_object_get(t, "schema"),
                                 "partitionKeys", json_object_get(t, "partition_keys"), "dedupKeys",
                                 json_object_get(t, "dedup_keys"));
        if (desc) json_array_append_new(tables, desc);
    }
    all_stats(svc, wh, slug, tables);
    tl_lake_close(wh);
    json_decref(config);
    reply_json(out, 200, json_pack("{s:o}", "tables", tables));
}

/* 1 when the live config has an analytic table with this id. */
static int has_table(service *svc, const char *slug, const char *id)
{
    json_t *config = api_live_config(svc, slug, NULL);
    int found = 0;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(config, "analytic_tables"), i, t)
    {
        const char *tid = json_string_value(json_object_get(t, "id"));
        found |= tid && strcmp(tid, id) == 0;
    }
    json_decref(config);
    return found;
}

void api_table_rows(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0], *id = rq->params[1];
    json_t *p = api_pipeline(svc, slug, out);
    if (p == NULL) return;
    json_decref(p);
    if (!has_table(svc, slug, id)) {
        reply_error(out, 404, "table_not_found", "pipeline %s has no table \"%s\"", slug, id);
        return;
    }
    const char *lim = req_query(rq, "limit");
    long long limit = lim ? strtoll(lim, NULL, 10) : ROWS_DEFAULT;
    if (limit < 1 || limit > ROWS_MAX) limit = limit < 1 ? ROWS_DEFAULT : ROWS_MAX;
    char err[1024], name[256], sql[400];
    snprintf(name, sizeof name, "%s.%s", slug, id);
    tl_lake *wh = lake_open_warehouse(svc, err, sizeof err);
    if (wh == NULL) {
        reply_error(out, 502, "storage_error", "%s", err);
        return;
    }
    tl_table *t = NULL;
    if (tl_lake_open_table(wh, name, &t, NULL) != TL_OK) {
        tl_lake_close(wh);
        reply_json(out, 200,
                   json_pack("{s:[],s:[],s:[],s:i,s:b}", "columns", "types", "rows", "rowCount", 0,
                             "truncated", 0));
        return;
    }
    tl_table_close(t);
    /* The name is one the config allows ([A-Za-z0-9_-] by validation), quoted. */
    snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" LIMIT %lld", id, limit);
    struct ArrowArrayStream stream = {0};
    tl_error e = {0};
    json_t *res = NULL;
    tl_sql_options opts = {.namespace_ = slug, .only_namespace = 1, .max_rows = limit};
    if (tl_lake_query(wh, sql, &opts, &stream, NULL, &e) != TL_OK) {
        reply_error(out, 400, "query_error", "%s", e.message);
    } else {
        if (arrow_stream_to_json(&stream, limit, &res, err, sizeof err) != 0)
            reply_error(out, 400, "query_error", "%s", err);
        else
            reply_json(out, 200, res);
        stream.release(&stream);
    }
    tl_lake_close(wh);
}

/* ---- saved queries ---- */

static void query_id(const char *name, char *out, size_t len)
{
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 1 < len && j < 60; i++) {
        unsigned char c = (unsigned char)name[i];
        if (isalnum(c))
            out[j++] = (char)tolower(c);
        else if (j > 0 && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j > 0 && out[j - 1] == '-') j--;
    out[j] = 0;
}

void api_queries_list(service *svc, http_req *rq, http_resp *out)
{
    json_t *p = api_pipeline(svc, rq->params[0], out);
    if (p == NULL) return;
    json_decref(p);
    json_t *rows = db_query(svc->db,
                            "SELECT id, name, sql FROM saved_queries WHERE pipeline = ? "
                            "ORDER BY name",
                            "s", rq->params[0]);
    reply_json(out, 200, json_pack("{s:o}", "queries", rows ? rows : json_array()));
}

void api_queries_create(service *svc, http_req *rq, http_resp *out)
{
    json_t *p = api_pipeline(svc, rq->params[0], out);
    if (p == NULL) return;
    json_decref(p);
    json_t *body = req_json_object(rq, out);
    if (body == NULL) return;
    const char *name = json_string_value(json_object_get(body, "name"));
    const char *sql = json_string_value(json_object_get(body, "sql"));
    char id[64] = "";
    if (name) query_id(name, id, sizeof id);
    if (name == NULL || sql == NULL || !*id || !*sql) {
        reply_error(out, 422, "missing_fields", "Request body must include `name` and `sql`.");
    } else if (strlen(sql) > 10000) {
        reply_error(out, 422, "query_too_long", "SQL query exceeds 10 000 character limit.");
    } else {
        int st = db_exec(svc->db, NULL,
                         "INSERT INTO saved_queries (pipeline, id, name, sql, created_at) "
                         "VALUES (?, ?, ?, ?, ?)",
                         "ssssi", rq->params[0], id, name, sql, now_ms());
        if (st == DB_CONSTRAINT)
            reply_error(out, 409, "name_taken", "A query named \"%s\" already exists", name);
        else if (st != DB_OK)
            reply_error(out, 500, "internal", "%s", db_error());
        else
            reply_json(out, 201, json_pack("{s:s,s:s,s:s}", "id", id, "name", name, "sql", sql));
    }
    json_decref(body);
}

void api_query_get(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = db_query_one(svc->db,
                               "SELECT id, name, sql FROM saved_queries WHERE pipeline = ? "
                               "AND id = ?",
                               "ss", rq->params[0], rq->params[1]);
    if (row == NULL)
        reply_error(out, 404, "query_not_found", "no saved query \"%s\"", rq->params[1]);
    else
        reply_json(out, 200, row);
}

void api_query_delete(service *svc, http_req *rq, http_resp *out)
{
    db_exec(svc->db, NULL, "DELETE FROM saved_queries WHERE pipeline = ? AND id = ?", "ss",
            rq->params[0], rq->params[1]);
    reply_json(out, 200, json_pack("{s:b}", "ok", 1));
}
