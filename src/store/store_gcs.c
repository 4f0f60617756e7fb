/* Google Cloud Storage through its JSON API: media downloads (ranged), media
 * uploads, and the conditional create as an upload with ifGenerationMatch=0
 * (the JSON API's form of x-goog-if-generation-match: 0), which fails with 412
 * when the object exists. Large objects go up as parts composed into one. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
#include "store/digest.h"
#include "store/gcs_auth.h"
#include "store/multipart.h"
#include "store/remote.h"

typedef struct gcs_store {
    tl_remote r;
    char *base; /* "https://storage.googleapis.com" or the emulator's endpoint */
    tl_gcs_auth *auth;
} gcs_store;

/* call->object set: the object resource (downloads, metadata, deletes,
 * compose); a query with "uploadType" goes to the upload endpoint. */
static tl_status gcs_attempt(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                             tl_error *err)
{
    gcs_store *g = (gcs_store *)r;
    memset(resp, 0, sizeof *resp);
    tl_buf url = {0};
    bool upload = strstr(call->query, "uploadType=") != NULL;
    int rc = tl_buf_printf(&url, "%s/%sstorage/v1/b/", g->base, upload ? "upload/" : "");
    rc |= tl_http_encode(&url, r->cfg.bucket, false);
    rc |= tl_buf_append_str(&url, "/o");
    if (call->object && !upload) {
        rc |= tl_buf_append_byte(&url, '/');
        rc |= tl_http_encode(&url, call->object, false);
        /* The one POST on an object that is not an upload: composing it from parts. */
        if (strcmp(call->method, "POST") == 0) rc |= tl_buf_append_str(&url, "/compose");
    }
    if (call->query[0]) rc |= tl_buf_printf(&url, "?%s", call->query);
    tl_strlist headers = {0};
    for (size_t i = 0; call->headers && i < call->headers->len; i++)
        rc |= tl_strlist_push(&headers, call->headers->items[i]);
    /* google_skip_signature: anonymous requests, for public buckets. */
    tl_status st = rc                      ? tl_error_nomem(err)
                   : r->cfg.skip_signature ? TL_OK
                                           : tl_gcs_auth_header(g->auth, r->http, &headers, err);
    if (st == TL_OK) {
        tl_http_request req = {call->method,   (char *)url.data, &headers,     call->body,
                               call->body_len, call->dst,        call->dst_len};
        st = tl_http_send(r->http, &req, resp, err);
    }
    tl_strlist_free(&headers);
    tl_buf_free(&url);
    return st;
}

static bool ok_status(long s)
{
    return s >= 200 && s < 300;
}

static tl_status object_call(tl_remote *r, const char *method, const char *key, const char *query,
                             const tl_strlist *headers, uint8_t *dst, size_t dst_len,
                             tl_http_response *resp, const char *what, tl_error *err)
{
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {method, object, query, headers, NULL, 0, dst, dst_len};
    tl_status st = tl_remote_send(r, &call, resp, NULL, err);
    if (st == TL_OK && !ok_status(resp->status) &&
        !(strcmp(method, "DELETE") == 0 && resp->status == 404))
        st = tl_remote_fail(resp, what, key, err);
    free(object);
    return st;
}

static tl_status gcs_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    tl_http_response resp;
    tl_status st =
        object_call((tl_remote *)s, "GET", key, "alt=media", NULL, NULL, 0, &resp, "reading", err);
    if (st == TL_OK) st = tl_remote_take_body(&resp, out, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status gcs_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                               uint8_t *dst, tl_error *err)
{
    if (len == 0) return TL_OK;
    char range[96];
    tl_remote_range_header(range, sizeof range, "Range", offset, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    tl_http_response resp;
    tl_status st = object_call((tl_remote *)s, "GET", key, "alt=media", &headers, dst, len, &resp,
                               "reading", err);
    if (st == TL_OK) st = tl_remote_check_range(&resp, key, offset, len, err);
    tl_http_response_clear(&resp);
    return st;
}

/* A ranged GET of bytes 0..len-1: 206 with the size in Content-Range (as
 * S3's, store_s3.c); only an empty object answers 416, then its size is asked. */
static tl_status gcs_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst, size_t *got,
                               uint64_t *total, tl_error *err)
{
    *got = 0;
    if (len == 0) return tl_remote_size_by_stat(s, key, total, err);
    char range[96];
    tl_remote_range_header(range, sizeof range, "Range", 0, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    tl_http_response resp = {0};
    tl_status st = object_call((tl_remote *)s, "GET", key, "alt=media", &headers, dst, len, &resp,
                               "reading", err);
    bool empty = resp.status == 416;
    if (st == TL_OK) st = tl_remote_first_result(&resp, key, len, got, total, err);
    tl_http_response_clear(&resp);
    if (!empty) return st;
    *got = 0;
    return tl_remote_size_by_stat(s, key, total, err);
}

static char *upload_query(const char *object)
{
    tl_buf q = {0};
    int rc = tl_buf_append_str(&q, "name=");
    rc |= tl_http_encode(&q, object, false);
    rc |= tl_buf_append_str(&q, "&uploadType=media");
    if (rc) {
        tl_buf_free(&q);
        return NULL;
    }
    return (char *)tl_buf_detach(&q, NULL);
}

/* One media upload, whatever its size. */
static tl_status put_media(tl_remote *r, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    char *object = tl_remote_object(r, key);
    char *query = object ? upload_query(object) : NULL;
    tl_status st = query ? TL_OK : tl_error_nomem(err);
    tl_http_response resp = {0};
    if (st == TL_OK) {
        tl_remote_call call = {"POST", object, query, NULL, data, len, NULL, 0};
        st = tl_remote_send(r, &call, &resp, NULL, err);
        if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", key, err);
        tl_http_response_clear(&resp);
    }
    free(query);
    free(object);
    return st;
}

static tl_status gcs_remove(tl_store *s, const char *key, tl_error *err);

/* A large object goes up as part objects, in parallel, composed into one,
 * then the parts are deleted. A compose takes 32 sources at most: more parts
 * (a streaming writer's) are composed 32 at a time into group objects first,
 * which are then composed into the object, so 32 * 32 parts at most. */
#define MAX_SOURCES 32
#define MAX_PARTS (MAX_SOURCES * MAX_SOURCES)

/* The key of part index (or of group index when group): beside the object,
 * named after this upload. */
static char *part_key(const tl_tagged_upload *u, size_t index, bool group)
{
    return tl_strdup_printf("%s.tl-part-%s-%s%04zu", u->key, u->tag, group ? "g" : "", index);
}

static tl_status upload_part(tl_remote *r, void *u_, size_t index, const uint8_t *data, size_t len,
                             tl_error *err)
{
    char *key = part_key(u_, index, false);
    tl_status st = key ? put_media(r, key, data, len, err) : tl_error_nomem(err);
    free(key);
    return st;
}

typedef struct parts_job {
    tl_tagged_upload *u;
    bool group;
} parts_job;

/* Best effort: a failed delete must not stop the others. */
static tl_status delete_part(tl_remote *r, void *ctx, size_t index, tl_error *err)
{
    (void)err;
    parts_job *j = ctx;
    char *key = part_key(j->u, index, j->group);
    if (key) gcs_remove(&r->base, key, NULL);
    free(key);
    return TL_OK;
}

/* Deletes n part (or group) objects, in parallel; a missing one is fine. */
static void delete_parts(tl_remote *r, tl_tagged_upload *u, size_t n, bool group)
{
    parts_job j = {u, group};
    tl_multipart_parallel(r, n, delete_part, &j, NULL);
}

/* The compose request of sources first..first+n-1 (parts, or groups). */
static char *compose_body(tl_remote *r, const tl_tagged_upload *u, size_t first, size_t n,
                          bool group)
{
    json_t *sources = json_array();
    for (size_t i = first; sources && i < first + n; i++) {
        char *key = part_key(u, i, group);
        char *object = key ? tl_remote_object(r, key) : NULL;
        if (object == NULL || json_array_append_new(sources, json_pack("{s:s}", "name", object))) {
            json_decref(sources);
            sources = NULL;
        }
        free(object);
        free(key);
    }
    json_t *body = sources ? json_pack("{s:o,s:{s:s}}", "sourceObjects", sources, "destination",
                                       "contentType", "application/octet-stream")
                           : NULL;
    char *text = body ? tl_json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    return text;
}

/* Composes n sources from `first` (parts, or groups) into the object at key. */
static tl_status compose(tl_remote *r, const tl_tagged_upload *u, const char *key, size_t first,
                         size_t n, bool group, tl_error *err)
{
    char *body = compose_body(r, u, first, n, group);
    char *object = body ? tl_remote_object(r, key) : NULL;
    if (object == NULL) {
        free(body);
        return tl_error_nomem(err);
    }
    char *ct = "Content-Type: application/json";
    tl_strlist headers = {.items = &ct, .len = 1, .cap = 1};
    tl_remote_call call = {"POST", object, "", &headers, body, strlen(body), NULL, 0};
    tl_http_response resp;
    tl_status st = tl_remote_send(r, &call, &resp, NULL, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "composing", key, err);
    tl_http_response_clear(&resp);
    free(object);
    free(body);
    return st;
}

typedef struct group_job {
    tl_tagged_upload *u;
    size_t n_parts;
} group_job;

static tl_status compose_group(tl_remote *r, void *ctx, size_t g, tl_error *err)
{
    group_job *j = ctx;
    size_t first = g * MAX_SOURCES;
    size_t n = j->n_parts - first < MAX_SOURCES ? j->n_parts - first : MAX_SOURCES;
    char *key = part_key(j->u, g, true);
    tl_status st = key ? compose(r, j->u, key, first, n, false, err) : tl_error_nomem(err);
    free(key);
    return st;
}

/* Composing again after a lost answer rebuilds the same object: the parts are
 * deleted only once the compose has answered. */
static tl_status upload_finish(tl_remote *r, void *u_, size_t n_parts, const uint8_t *data,
                               size_t len, tl_error *err)
{
    (void)data;
    (void)len;
    tl_tagged_upload *u = u_;
    if (n_parts > MAX_PARTS)
        return tl_error_set(err, TL_ERR_STORAGE, "writing %s: %zu parts, more than GCS's %d",
                            u->key, n_parts, MAX_PARTS);
    if (n_parts <= MAX_SOURCES) {
        tl_status st = compose(r, u, u->key, 0, n_parts, false, err);
        if (st == TL_OK) delete_parts(r, u, n_parts, false);
        return st;
    }
    size_t n_groups = (n_parts + MAX_SOURCES - 1) / MAX_SOURCES;
    group_job j = {u, n_parts};
    tl_status st = tl_multipart_parallel(r, n_groups, compose_group, &j, err);
    if (st == TL_OK) st = compose(r, u, u->key, 0, n_groups, true, err);
    if (st == TL_OK) {
        delete_parts(r, u, n_parts, false);
        delete_parts(r, u, n_groups, true);
    }
    return st;
}

static void upload_abort(tl_remote *r, void *u, size_t n_parts)
{
    delete_parts(r, u, n_parts, false);
    if (n_parts > MAX_SOURCES) delete_parts(r, u, (n_parts + MAX_SOURCES - 1) / MAX_SOURCES, true);
}

static const tl_multipart_ops gcs_multipart = {tl_tagged_upload_begin, upload_part, upload_finish,
                                               upload_abort, tl_tagged_upload_free};

static tl_status gcs_put(tl_store *s, const char *key, const void *data, size_t len, tl_error *err)
{
    tl_remote *r = (tl_remote *)s;
    if (tl_multipart_wanted(r, len))
        return tl_multipart_put(r, &gcs_multipart, key, data, len,
                                tl_multipart_part_size(r, len, MAX_SOURCES, 1), err);
    return put_media(r, key, data, len, err);
}

#define BOUNDARY "timelake-7f3a9c1e5b"

/* A multipart upload (metadata + media) with ifGenerationMatch=0: the form
 * every GCS implementation checks the precondition on. */
static int multipart_body(tl_buf *out, const char *object, const void *data, size_t len)
{
    json_t *meta = json_pack("{s:s}", "name", object);
    char *meta_text = meta ? tl_json_dumps(meta, JSON_COMPACT) : NULL;
    json_decref(meta);
    if (meta_text == NULL) return -1;
    int rc = tl_buf_printf(out,
                           "--" BOUNDARY "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                           "%s\r\n--" BOUNDARY "\r\nContent-Type: application/octet-stream\r\n\r\n",
                           meta_text);
    rc |= tl_buf_append(out, data, len);
    rc |= tl_buf_append_str(out, "\r\n--" BOUNDARY "--\r\n");
    free(meta_text);
    return rc;
}

static tl_status gcs_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                   tl_error *err)
{
    tl_remote *r = (tl_remote *)s;
    char *object = tl_remote_object(r, key);
    tl_buf body = {0};
    tl_status st =
        object && multipart_body(&body, object, data, len) == 0 ? TL_OK : tl_error_nomem(err);
    char *ct = "Content-Type: multipart/related; boundary=" BOUNDARY;
    tl_strlist headers = {.items = &ct, .len = 1, .cap = 1};
    static const long lost[] = {412};
    if (st == TL_OK) {
        tl_remote_call call = {"POST",   object,    "ifGenerationMatch=0&uploadType=multipart",
                               &headers, body.data, body.len,
                               NULL,     0};
        st = tl_remote_put_if_absent(r, &call, key, data, len, lost, 1, err);
    }
    tl_buf_free(&body);
    free(object);
    return st;
}

/* Time and version of an object resource: "updated", and "generation" as
 * the etag (GCS's own etag also changes with metadata; fake-gcs-server's is
 * the MD5, the same for a replacement with equal bytes). */
static int set_times(tl_store_listed *e, json_t *item)
{
    e->modified_ms = tl_remote_iso_date_ms(json_string_value(json_object_get(item, "updated")));
    const char *gen = json_string_value(json_object_get(item, "generation"));
    return tl_store_listed_set_etag(e,
                                    gen ? gen : json_string_value(json_object_get(item, "etag")));
}

/* One item of a listing: name, size and md5Hash (absent for composite objects). */
static int push_listed(json_t *item, size_t skip, tl_store_listing *out)
{
    const char *name = json_string_value(json_object_get(item, "name"));
    const char *size = json_string_value(json_object_get(item, "size"));
    uint8_t md5[16];
    bool has_md5 = tl_md5_from_base64(json_string_value(json_object_get(item, "md5Hash")), md5);
    if (name == NULL || strlen(name) <= skip) return 0;
    tl_store_listed *e = tl_store_listing_add(out, name + skip, size ? strtoull(size, NULL, 10) : 0,
                                              has_md5 ? md5 : NULL);
    return e ? set_times(e, item) : -1;
}

static tl_status list_page(tl_remote *r, const char *object_prefix, bool delimited,
                           const char *token, tl_store_listing *out, char **next, tl_error *err)
{
    tl_buf q = {0};
    int rc = delimited ? tl_buf_append_str(&q, "delimiter=%2F&") : 0;
    if (token) {
        rc |= tl_buf_append_str(&q, "pageToken=");
        rc |= tl_http_encode(&q, token, false);
        rc |= tl_buf_append_byte(&q, '&');
    }
    rc |= tl_buf_append_str(&q, "prefix=");
    rc |= tl_http_encode(&q, object_prefix, false);
    if (rc) {
        tl_buf_free(&q);
        return tl_error_nomem(err);
    }
    tl_remote_call call = {"GET", NULL, (char *)q.data, NULL, NULL, 0, NULL, 0};
    tl_http_response resp;
    tl_status st = tl_remote_send(r, &call, &resp, NULL, err);
    if (st == TL_OK && !ok_status(resp.status))
        st = tl_remote_fail(&resp, "listing", object_prefix, err);
    bool nomem = false;
    json_t *root =
        st == TL_OK ? tl_json_loadb((char *)resp.body.data, resp.body.len, 0, NULL, &nomem) : NULL;
    if (nomem) st = tl_error_nomem(err);
    if (st == TL_OK && root == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "listing %s: unreadable answer", object_prefix);
    size_t skip = r->cfg.prefix[0] ? strlen(r->cfg.prefix) + 1 : 0;
    json_t *items = json_object_get(root, "items");
    for (size_t i = 0; st == TL_OK && i < json_array_size(items); i++)
        if (push_listed(json_array_get(items, i), skip, out) != 0) st = tl_error_nomem(err);
    json_t *folders = json_object_get(root, "prefixes");
    for (size_t i = 0; st == TL_OK && i < json_array_size(folders); i++)
        if (tl_remote_push_folder(r, json_string_value(json_array_get(folders, i)), out) != 0)
            st = tl_error_nomem(err);
    const char *nt = json_string_value(json_object_get(root, "nextPageToken"));
    *next = st == TL_OK && nt && nt[0] ? strdup(nt) : NULL;
    json_decref(root);
    tl_http_response_clear(&resp);
    tl_buf_free(&q);
    return st;
}

static tl_status gcs_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    return tl_remote_list_keys((tl_remote *)s, prefix, list_page, out, err);
}

static tl_status gcs_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                   tl_error *err)
{
    return tl_remote_list((tl_remote *)s, prefix, false, list_page, out, err);
}

static tl_status gcs_list_objects(tl_store *s, const char *prefix, bool recursive,
                                  tl_store_listing *out, tl_error *err)
{
    return tl_remote_list((tl_remote *)s, prefix, !recursive, list_page, out, err);
}

static tl_status gcs_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    tl_http_response resp;
    memset(out, 0, sizeof *out);
    tl_status st =
        object_call((tl_remote *)s, "GET", key, "", NULL, NULL, 0, &resp, "reading", err);
    bool nomem = false;
    json_t *root =
        st == TL_OK ? tl_json_loadb((char *)resp.body.data, resp.body.len, 0, NULL, &nomem) : NULL;
    if (nomem) st = tl_error_nomem(err);
    const char *size = json_string_value(json_object_get(root, "size"));
    if (st == TL_OK && size == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "reading %s: no size in the object metadata", key);
    if (st == TL_OK) {
        out->size = strtoull(size, NULL, 10);
        if ((out->key = strdup(key)) == NULL || set_times(out, root) != 0) {
            tl_store_listed_clear(out);
            st = tl_error_nomem(err);
        }
    }
    json_decref(root);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status gcs_remove(tl_store *s, const char *key, tl_error *err)
{
    tl_http_response resp;
    tl_status st =
        object_call((tl_remote *)s, "DELETE", key, "", NULL, NULL, 0, &resp, "deleting", err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status gcs_put_many(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err)
{
    return tl_store_put_parallel(s, items, n, 8, err);
}

static void gcs_free(tl_store *s)
{
    gcs_store *g = (gcs_store *)s;
    tl_remote_clear(&g->r);
    tl_gcs_auth_free(g->auth);
    free(g->base);
    free(g);
}

static const tl_store_ops gcs_ops = {
    .get = gcs_get,
    .get_range = gcs_get_range,
    .size = tl_remote_size_by_stat,
    .get_first = gcs_get_first,
    .put = gcs_put,
    .put_if_absent = gcs_put_if_absent,
    .list = gcs_list,
    .list_detailed = gcs_list_detailed,
    .remove = gcs_remove,
    .free = gcs_free,
    .put_many = gcs_put_many,
    .list_objects = gcs_list_objects,
    .stat = gcs_stat,
    .writer_open = tl_remote_writer_open,
};

static tl_status read_key_file(const char *path, char **out, tl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "google service account file %s: cannot open",
                            path);
    tl_buf b = {0};
    char chunk[4096];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) rc |= tl_buf_append(&b, chunk, n);
    fclose(f);
    if (rc || tl_buf_append_byte(&b, 0) != 0) {
        tl_buf_free(&b);
        return tl_error_nomem(err);
    }
    *out = (char *)tl_buf_detach(&b, NULL);
    return TL_OK;
}

tl_status tl_store_gcs_open(tl_store_config *cfg, tl_store **out, tl_error *err)
{
    char *key_json = NULL;
    if (cfg->service_account_key == NULL && cfg->service_account_path)
        TL_TRY(read_key_file(cfg->service_account_path, &key_json, err));
    if (cfg->endpoint == NULL && cfg->bearer_token == NULL && cfg->service_account_key == NULL &&
        key_json == NULL && !cfg->skip_signature)
        return tl_error_set(err, TL_ERR_INVALID,
                            "no GCS credentials: set google_service_account (a key file), "
                            "google_service_account_key or google_bearer_token");
    gcs_store *g = calloc(1, sizeof *g);
    if (g == NULL) {
        free(key_json);
        return tl_error_nomem(err);
    }
    g->r.base.ops = &gcs_ops;
    g->r.attempt = gcs_attempt;
    g->r.multipart = &gcs_multipart;
    g->r.max_parts = MAX_PARTS;
    tl_status st = tl_gcs_auth_new(cfg->service_account_key ? cfg->service_account_key : key_json,
                                   cfg->bearer_token, &g->auth, err);
    free(key_json);
    if (st == TL_OK) {
        /* STORAGE_EMULATOR_HOST may be a bare host:port. */
        const char *e = cfg->endpoint;
        g->base = e == NULL          ? strdup("https://storage.googleapis.com")
                  : strstr(e, "://") ? strdup(e)
                                     : tl_strdup_printf("http://%s", e);
        if (g->base == NULL) st = tl_error_nomem(err);
    }
    if (st == TL_OK) st = tl_remote_init(&g->r, cfg, "gs", err);
    if (st != TL_OK) {
        gcs_free(&g->r.base);
        return st;
    }
    *out = &g->r.base;
    return TL_OK;
}
