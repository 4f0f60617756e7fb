/* Read-only warehouses over plain HTTP(S) (a bucket's public website, a web
 * server or CDN in front of a lake folder), as the reference reads them:
 * GETs (ranged where the server honours Range, the whole object where it
 * does not) and HEADs, no listing. Tables are found through
 * timelake-tables.json, versions through metadata/version-hint.text (the
 * store says so: version_hint). Every write is refused, naming the
 * warehouse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/remote.h"

typedef struct http_store {
    tl_remote r;
} http_store;

static tl_status http_attempt(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                              tl_error *err)
{
    memset(resp, 0, sizeof *resp);
    tl_buf url = {0};
    int rc = tl_buf_printf(&url, "%s/", r->cfg.endpoint);
    if (call->object) rc |= tl_http_encode(&url, call->object, true);
    if (call->query[0]) rc |= tl_buf_printf(&url, "?%s", call->query);
    tl_status st = rc ? tl_error_nomem(err) : TL_OK;
    if (st == TL_OK) {
        tl_http_request req = {call->method,   (char *)url.data, call->headers, call->body,
                               call->body_len, call->dst,        call->dst_len};
        st = tl_http_send(r->http, &req, resp, err);
    }
    tl_buf_free(&url);
    return st;
}

static bool ok_status(long status)
{
    return status >= 200 && status < 300;
}

/* One call with retries; *resp is the caller's to clear, whatever happens. */
static tl_status call(tl_remote *r, const char *method, const char *key, const char *range,
                      tl_http_response *resp, tl_error *err)
{
    memset(resp, 0, sizeof *resp);
    char *line = (char *)range;
    tl_strlist headers = {.items = &line, .len = range ? 1 : 0, .cap = 1};
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call c = {method, object, "", &headers, NULL, 0, NULL, 0};
    tl_status st = tl_remote_send(r, &c, resp, NULL, err);
    free(object);
    if (st == TL_OK && !ok_status(resp->status)) st = tl_remote_fail(resp, "reading", key, err);
    return st;
}

static tl_status http_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    tl_http_response resp;
    tl_status st = call((tl_remote *)s, "GET", key, NULL, &resp, err);
    if (st == TL_OK) st = tl_remote_take_body(&resp, out, err);
    tl_http_response_clear(&resp);
    return st;
}

/* The body of a GET of bytes offset..offset+len-1 of key (or of all of it,
 * from a server that ignores Range) and where the range starts in it. */
static tl_status ranged(tl_remote *r, const char *key, uint64_t offset, size_t len,
                        tl_http_response *resp, size_t *at, tl_error *err)
{
    char range[96];
    tl_remote_range_header(range, sizeof range, "range", offset, len);
    TL_TRY(call(r, "GET", key, range, resp, err));
    *at = resp->status == 206 ? 0 : (size_t)offset; /* 200: the whole object */
    return TL_OK;
}

static tl_status http_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                                uint8_t *dst, tl_error *err)
{
    if (len == 0) return TL_OK;
    tl_http_response resp;
    size_t at = 0;
    tl_status st = ranged((tl_remote *)s, key, offset, len, &resp, &at, err);
    if (st == TL_OK && (resp.body.len < at || resp.body.len - at < len))
        st = tl_error_set(err, TL_ERR_STORAGE, "reading %s: %zu bytes at %llu: got %zu", key, len,
                          (unsigned long long)offset,
                          resp.body.len > at ? resp.body.len - at : (size_t)0);
    if (st == TL_OK) memcpy(dst, resp.body.data + at, len);
    tl_http_response_clear(&resp);
    return st;
}

/* A stat by a GET of the first byte, for servers that refuse HEAD (some
 * CDNs, bucket policies that grant GetObject to anonymous GETs only): the
 * size is the total of Content-Range, the whole body's length from a server
 * that ignores Range; an empty object answers 416. */
static tl_status stat_by_get(tl_remote *r, const char *key, tl_store_listed *out, tl_error *err)
{
    tl_http_response resp;
    char range[96];
    tl_remote_range_header(range, sizeof range, "range", 0, 1);
    tl_status st = call(r, "GET", key, range, &resp, err);
    if (st != TL_OK && resp.status == 416) st = TL_OK; /* an empty object */
    if (st == TL_OK) {
        const char *total = resp.status == 206 ? tl_http_header(&resp, "content-range") : NULL;
        total = total ? strchr(total, '/') : NULL;
        memset(out, 0, sizeof *out);
        out->size = resp.status == 416 ? 0 : total ? strtoull(total + 1, NULL, 10) : resp.body.len;
        out->modified_ms = tl_remote_http_date_ms(tl_http_header(&resp, "last-modified"));
        if ((out->key = strdup(key)) == NULL ||
            tl_store_listed_set_etag(out, tl_http_header(&resp, "etag")) != 0) {
            tl_store_listed_clear(out);
            st = tl_error_nomem(err);
        }
    }
    tl_http_response_clear(&resp);
    return st;
}

static tl_status http_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    tl_http_response resp;
    tl_status st = call((tl_remote *)s, "HEAD", key, NULL, &resp, err);
    bool refused = st != TL_OK && (resp.status == 403 || resp.status == 405);
    if (st == TL_OK) st = tl_remote_stat_of_head(&resp, key, out, err);
    tl_http_response_clear(&resp);
    return refused ? stat_by_get((tl_remote *)s, key, out, err) : st;
}

static tl_status read_only(tl_store *s, const char *key, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID,
                        "cannot write %s: the warehouse %s is read-only over http(s); write "
                        "through its store (s3://, gs://, az:// or a folder) instead",
                        key, s->url);
}

static tl_status http_put(tl_store *s, const char *key, const void *data, size_t len, tl_error *err)
{
    (void)data, (void)len;
    return read_only(s, key, err);
}

static tl_status http_remove(tl_store *s, const char *key, tl_error *err)
{
    return read_only(s, key, err);
}

static tl_status http_writer_open(tl_store *s, const char *key, tl_store_writer **out,
                                  tl_error *err)
{
    (void)out;
    return read_only(s, key, err);
}

static tl_status no_listing(tl_store *s, const char *prefix, tl_error *err)
{
    return tl_error_set(err, TL_ERR_INVALID,
                        "cannot list \"%s\" of %s: an http(s) warehouse has no listing (tables are "
                        "found through timelake-tables.json, versions through "
                        "metadata/version-hint.text)",
                        prefix, s->url);
}

static tl_status http_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    (void)out;
    return no_listing(s, prefix, err);
}

static tl_status http_list_objects(tl_store *s, const char *prefix, bool recursive,
                                   tl_store_listing *out, tl_error *err)
{
    (void)recursive, (void)out;
    return no_listing(s, prefix, err);
}

static void http_free(tl_store *s)
{
    http_store *h = (http_store *)s;
    tl_remote_clear(&h->r);
    free(h);
}

static const tl_store_ops http_ops = {
    .get = http_get,
    .get_range = http_get_range,
    .size = tl_remote_size_by_stat,
    .put = http_put,
    .put_if_absent = http_put,
    .list = http_list,
    .remove = http_remove,
    .free = http_free,
    .list_objects = http_list_objects,
    .stat = http_stat,
    .writer_open = http_writer_open,
};

tl_status tl_store_http_open(tl_store_config *cfg, tl_store **out, tl_error *err)
{
    http_store *h = calloc(1, sizeof *h);
    if (h == NULL) return tl_error_nomem(err);
    h->r.base.ops = &http_ops;
    h->r.attempt = http_attempt;
    h->r.base.read_only = true;
    h->r.base.version_hint = true;
    const char *scheme = strncmp(cfg->endpoint, "https://", 8) == 0 ? "https" : "http";
    tl_status st = tl_remote_init(&h->r, cfg, scheme, err);
    if (st != TL_OK) {
        http_free(&h->r.base);
        return st;
    }
    *out = &h->r.base;
    return TL_OK;
}
