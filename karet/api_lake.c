/* The lake's files: list one folder level, upload (streamed to the store as
 * it arrives, capped), download, delete. An upload under a pipeline's source
 * prefix schedules the same debounced run a bucket notification does, so a
 * local lake needs no notification rule. The warehouse/ folder holds the
 * tables' own files: it can be listed and read, never written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "jobs.h"
#include "serve_lake.h"

static int reserved(const char *key)
{
    size_t n = strlen(WAREHOUSE_DIR);
    return strncmp(key, WAREHOUSE_DIR, n) == 0 && (key[n] == '/' || key[n] == 0);
}

/* The ?key= of a request that writes or reads one object, or NULL after
 * replying 422. */
static const char *object_key(http_req *rq, http_resp *out, int writes)
{
    const char *key = req_query(rq, "key");
    if (key == NULL || !api_key_ok(key) || key[strlen(key) - 1] == '/') {
        reply_error(out, 422, "invalid_key",
                    "key must be a relative object key: no leading '/', no '.' or '..' or "
                    "empty segment, no control character, not ending in '/'");
        return NULL;
    }
    if (writes && reserved(key)) {
        reply_error(out, 422, "reserved_key",
                    "warehouse/ holds the pipelines' tables; upload sources elsewhere");
        return NULL;
    }
    return key;
}

static void storage_error(http_resp *out, tl_status st, const char *msg)
{
    if (st == TL_ERR_NOT_FOUND)
        reply_error(out, 404, "not_found", "%s", msg);
    else if (st == TL_ERR_INVALID)
        reply_error(out, 422, "invalid_key", "%s", msg);
    else
        reply_error(out, 502, "storage_error", "%s", msg);
}

void api_lake_list(service *svc, http_req *rq, http_resp *out)
{
    const char *prefix = req_query(rq, "prefix");
    if (prefix == NULL) prefix = "";
    size_t n = strlen(prefix);
    char trimmed[1100];
    if (n >= sizeof trimmed || (n && prefix[n - 1] != '/')) {
        reply_error(out, 422, "invalid_prefix", "prefix must be empty or a folder ending in '/'");
        return;
    }
    snprintf(trimmed, sizeof trimmed, "%.*s", n ? (int)n - 1 : 0, prefix);
    if (n && !api_key_ok(trimmed)) {
        reply_error(out, 422, "invalid_prefix",
                    "prefix must be relative, without '.' or '..' or empty segments");
        return;
    }
    char err[1024];
    tl_lake *lake = lake_open_objects(svc, err, sizeof err);
    if (lake == NULL) {
        reply_error(out, 502, "storage_error", "%s", err);
        return;
    }
    tl_object *objs = NULL;
    size_t len = 0;
    tl_error e = {0};
    if (tl_lake_list_objects(lake, prefix, 0, &objs, &len, &e) != TL_OK) {
        storage_error(out, e.code, e.message);
        tl_lake_close(lake);
        return;
    }
    json_t *folders = json_array(), *files = json_array();
    for (size_t i = 0; i < len; i++) {
        size_t kl = strlen(objs[i].key);
        if (kl && objs[i].key[kl - 1] == '/') {
            json_array_append_new(folders, json_string(objs[i].key));
            continue;
        }
        char ts[40];
        json_array_append_new(
            files, json_pack("{s:s,s:I,s:s?,s:s?}", "key", objs[i].key, "size",
                             (json_int_t)objs[i].size, "lastModified",
                             objs[i].modified_ms ? iso_time(objs[i].modified_ms, ts, 40) : NULL,
                             "etag", objs[i].etag));
    }
    tl_objects_free(objs, len);
    tl_lake_close(lake);
    reply_json(out, 200,
               json_pack("{s:s,s:o,s:o,s:b}", "prefix", prefix, "folders", folders, "files", files,
                         "truncated", 0));
}

typedef struct upload {
    tl_lake *lake;
    tl_object_writer *writer;
    int64_t size;
    tl_error err;
    int failed;
} upload;

static void upload_free(void *p)
{
    upload *u = p;
    if (u == NULL) return;
    tl_object_writer_abort(u->writer);
    tl_lake_close(u->lake);
    free(u);
}

/* Called once before the body (data NULL) to check the key and open the
 * upload, then with each chunk. */
int api_lake_put_body(service *svc, http_req *rq, const char *data, size_t len, http_resp *out)
{
    upload *u = rq->stream_state;
    if (u == NULL) {
        const char *key = object_key(rq, out, 1);
        if (key == NULL) return 422;
        char err[1024];
        if ((u = calloc(1, sizeof *u)) == NULL)
            return reply_error(out, 500, "internal", "oom"), 500;
        rq->stream_state = u;
        rq->stream_free = upload_free;
        if ((u->lake = lake_open_objects(svc, err, sizeof err)) == NULL) {
            reply_error(out, 502, "storage_error", "%s", err);
            return 502;
        }
        if (tl_object_writer_open(u->lake, key, &u->writer, &u->err) != TL_OK) {
            storage_error(out, u->err.code, u->err.message);
            return 502;
        }
    }
    if (data == NULL || len == 0 || u->failed) return 0;
    if (tl_object_writer_write(u->writer, data, len, &u->err) != TL_OK) {
        u->failed = 1; /* the writer refuses the rest; finish reports it */
        return 0;
    }
    u->size += (int64_t)len;
    return 0;
}

void api_lake_put(service *svc, http_req *rq, http_resp *out)
{
    upload *u = rq->stream_state;
    const char *key = req_query(rq, "key");
    tl_object_writer *w = u->writer;
    u->writer = NULL;
    if (u->failed) {
        tl_object_writer_abort(w);
        storage_error(out, u->err.code, u->err.message);
        return;
    }
    if (tl_object_writer_finish(w, &u->err) != TL_OK) {
        storage_error(out, u->err.code, u->err.message);
        return;
    }
    json_t *scheduled = json_array();
    route_upload(svc, key, scheduled);
    reply_json(out, 200,
               json_pack("{s:b,s:s,s:I,s:o}", "ok", 1, "key", key, "size", (json_int_t)u->size,
                         "scheduled", scheduled));
}

void api_lake_delete(service *svc, http_req *rq, http_resp *out)
{
    const char *key = object_key(rq, out, 1);
    if (key == NULL) return;
    char err[1024];
    tl_lake *lake = lake_open_objects(svc, err, sizeof err);
    tl_error e = {0};
    if (lake == NULL)
        reply_error(out, 502, "storage_error", "%s", err);
    else if (tl_lake_delete_object(lake, key, &e) != TL_OK)
        storage_error(out, e.code, e.message);
    else
        reply_json(out, 200, json_pack("{s:b,s:s}", "ok", 1, "key", key));
    tl_lake_close(lake);
}

static void free_object(void *p)
{
    tl_free(p);
}

void api_lake_object(service *svc, http_req *rq, http_resp *out)
{
    const char *key = object_key(rq, out, 0);
    if (key == NULL) return;
    char err[1024];
    tl_lake *lake = lake_open_objects(svc, err, sizeof err);
    if (lake == NULL) {
        reply_error(out, 502, "storage_error", "%s", err);
        return;
    }
    void *data = NULL;
    size_t len = 0;
    tl_error e = {0};
    tl_status st = tl_lake_get_object(lake, key, &data, &len, &e);
    tl_lake_close(lake);
    if (st != TL_OK) {
        storage_error(out, st, e.message);
        return;
    }
    out->stream = MHD_create_response_from_buffer_with_free_callback(len, data, free_object);
    if (out->stream == NULL) {
        tl_free(data);
        reply_error(out, 500, "internal", "out of memory");
        return;
    }
    out->status = 200;
    out->content_type = "application/octet-stream";
    const char *name = strrchr(key, '/') ? strrchr(key, '/') + 1 : key;
    char disp[600];
    size_t j = 0;
    char clean[400];
    for (size_t i = 0; name[i] && j + 1 < sizeof clean; i++)
        if (name[i] != '"' && (unsigned char)name[i] >= 0x20) clean[j++] = name[i];
    clean[j] = 0;
    snprintf(disp, sizeof disp, "attachment; filename=\"%s\"", clean);
    reply_header(out, "Content-Disposition", disp);
}
