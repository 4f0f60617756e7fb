/* Amazon S3 and S3-compatible stores: SigV4-signed REST calls, path-style or
 * virtual-hosted addressing, ranged GETs, ListObjectsV2, multipart uploads for
 * large objects and the conditional create (If-None-Match: *) for commits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/digest.h"
#include "store/remote.h"
#include "store/sigv4.h"
#include "store/xml.h"

#define PART_SIZE (8u << 20) /* objects larger than one part go up in parts */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct s3_store {
    tl_remote r;
    char *scheme_host; /* "https://s3.us-east-1.amazonaws.com" or the endpoint */
    char *host;        /* the Host header */
    char *path_prefix; /* "/bucket" (path style), "" (virtual-hosted) */
} s3_store;

/* Builds URL, canonical path and the signed headers of one attempt. */
static tl_status s3_attempt(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                            tl_error *err)
{
    s3_store *s = (s3_store *)r;
    tl_buf path = {0}, url = {0};
    int rc = tl_buf_append_str(&path, s->path_prefix);
    rc |= tl_buf_append_byte(&path, '/');
    if (call->object) rc |= tl_http_encode(&path, call->object, true);
    rc |= tl_buf_printf(&url, "%s%s%s%s", s->scheme_host, (char *)path.data,
                        call->query[0] ? "?" : "", call->query);
    char hash[65] = EMPTY_SHA256, date[17];
    if (call->body_len) {
        uint8_t d[32];
        tl_sha256(call->body, call->body_len, d);
        tl_hex(d, 32, hash);
    }
    tl_amz_date_now(date);
    tl_strlist headers = {0};
    for (size_t i = 0; call->headers && i < call->headers->len; i++)
        rc |= tl_strlist_push(&headers, call->headers->items[i]);
    tl_status st = rc ? tl_error_nomem(err) : TL_OK;
    if (st == TL_OK && !r->cfg.skip_signature) {
        if (r->cfg.key_id == NULL || r->cfg.secret == NULL) {
            st = tl_error_set(err, TL_ERR_INVALID,
                              "no S3 credentials: set aws_access_key_id and "
                              "aws_secret_access_key (or AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY), or aws_skip_signature");
        } else {
            tl_sigv4_request sr = {call->method,  s->host, (char *)path.data,
                                   call->query,   hash,    date,
                                   r->cfg.region, "s3",    call->headers};
            tl_aws_credentials cred = {r->cfg.key_id, r->cfg.secret, r->cfg.token};
            st = tl_sigv4_sign(&sr, &cred, &headers, err);
        }
    }
    if (st == TL_OK) {
        tl_http_request req = {call->method,   (char *)url.data, &headers,     call->body,
                               call->body_len, call->dst,        call->dst_len};
        st = tl_http_send(r->http, &req, resp, err);
    } else {
        memset(resp, 0, sizeof *resp);
    }
    tl_strlist_free(&headers);
    tl_buf_free(&path);
    tl_buf_free(&url);
    return st;
}

/* One call with retries on an object of the store; resp is the final answer. */
static tl_status object_call(tl_remote *r, const char *method, const char *key, const char *query,
                             const tl_strlist *headers, const void *body, size_t len,
                             tl_http_response *resp, tl_error *err)
{
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {method, object, query, headers, body, len, NULL, 0};
    tl_status st = tl_remote_send(r, &call, resp, NULL, err);
    free(object);
    return st;
}

static bool ok_status(long status)
{
    return status >= 200 && status < 300;
}

static tl_status s3_get(tl_store *st_, const char *key, tl_buf *out, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    tl_http_response resp;
    tl_status st = object_call(r, "GET", key, "", NULL, NULL, 0, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "reading", key, err);
    if (st == TL_OK) st = tl_remote_take_body(&resp, out, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status s3_get_range(tl_store *st_, const char *key, uint64_t offset, size_t len,
                              uint8_t *dst, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    if (len == 0) return TL_OK;
    char range[96];
    tl_remote_range_header(range, sizeof range, "range", offset, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {"GET", object, "", &headers, NULL, 0, dst, len};
    tl_http_response resp;
    tl_status st = tl_remote_send(r, &call, &resp, NULL, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "reading", key, err);
    if (st == TL_OK) st = tl_remote_check_range(&resp, key, offset, len, err);
    tl_http_response_clear(&resp);
    free(object);
    return st;
}

static tl_status s3_size(tl_store *st_, const char *key, uint64_t *out, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    tl_http_response resp;
    tl_status st = object_call(r, "HEAD", key, "", NULL, NULL, 0, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "reading", key, err);
    const char *cl = st == TL_OK ? tl_http_header(&resp, "content-length") : NULL;
    if (st == TL_OK && cl == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "reading %s: no content-length", key);
    if (st == TL_OK) *out = strtoull(cl, NULL, 10);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status put_simple(tl_remote *r, const char *key, const void *data, size_t len,
                            tl_error *err)
{
    tl_http_response resp;
    tl_status st = object_call(r, "PUT", key, "", NULL, data, len, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", key, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status multipart_start(tl_remote *r, const char *key, char **upload_id, tl_error *err)
{
    tl_http_response resp;
    tl_status st = object_call(r, "POST", key, "uploads=", NULL, NULL, 0, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", key, err);
    if (st == TL_OK) {
        *upload_id = tl_xml_text((const char *)resp.body.data, "UploadId", NULL);
        if (*upload_id == NULL)
            st = tl_error_set(err, TL_ERR_STORAGE, "writing %s: no UploadId in the answer", key);
    }
    tl_http_response_clear(&resp);
    return st;
}

static tl_status multipart_part(tl_remote *r, const char *key, const char *enc_id, int part,
                                const uint8_t *data, size_t len, tl_buf *complete, tl_error *err)
{
    char *query = tl_strdup_printf("partNumber=%d&uploadId=%s", part, enc_id);
    if (query == NULL) return tl_error_nomem(err);
    tl_http_response resp;
    tl_status st = object_call(r, "PUT", key, query, NULL, data, len, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", key, err);
    const char *etag = st == TL_OK ? tl_http_header(&resp, "etag") : NULL;
    if (st == TL_OK && etag == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "writing %s: part %d has no ETag", key, part);
    if (st == TL_OK &&
        tl_buf_printf(complete, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", part,
                      etag) != 0)
        st = tl_error_nomem(err);
    tl_http_response_clear(&resp);
    free(query);
    return st;
}

static tl_status multipart_finish(tl_remote *r, const char *key, const char *enc_id,
                                  const tl_buf *xml, tl_error *err)
{
    char *query = tl_strdup_printf("uploadId=%s", enc_id);
    if (query == NULL) return tl_error_nomem(err);
    tl_http_response resp;
    tl_status st = object_call(r, "POST", key, query, NULL, xml->data, xml->len, &resp, err);
    /* CompleteMultipartUpload can fail with a 200 whose body is an <Error>. */
    if (st == TL_OK &&
        (!ok_status(resp.status) || (resp.body.data && strstr((char *)resp.body.data, "<Error>"))))
        st = tl_remote_fail(&resp, "completing the upload of", key, err);
    tl_http_response_clear(&resp);
    free(query);
    return st;
}

static tl_status put_multipart(tl_remote *r, const char *key, const uint8_t *data, size_t len,
                               tl_error *err)
{
    char *upload_id = NULL;
    TL_TRY(multipart_start(r, key, &upload_id, err));
    tl_buf enc = {0}, xml = {0};
    tl_status st = tl_http_encode(&enc, upload_id, false) == 0 &&
                           tl_buf_append_str(&xml, "<CompleteMultipartUpload>") == 0
                       ? TL_OK
                       : tl_error_nomem(err);
    int part = 1;
    for (size_t off = 0; st == TL_OK && off < len; off += PART_SIZE, part++) {
        size_t n = len - off < PART_SIZE ? len - off : PART_SIZE;
        st = multipart_part(r, key, (char *)enc.data, part, data + off, n, &xml, err);
    }
    if (st == TL_OK && tl_buf_append_str(&xml, "</CompleteMultipartUpload>") != 0)
        st = tl_error_nomem(err);
    if (st == TL_OK) st = multipart_finish(r, key, (char *)enc.data, &xml, err);
    if (st != TL_OK) {
        /* Abort, so that the parts stop costing storage. */
        char *query = tl_strdup_printf("uploadId=%s", (char *)enc.data);
        tl_http_response resp;
        if (query && object_call(r, "DELETE", key, query, NULL, NULL, 0, &resp, NULL) == TL_OK)
            tl_http_response_clear(&resp);
        free(query);
    }
    free(upload_id);
    tl_buf_free(&enc);
    tl_buf_free(&xml);
    return st;
}

static tl_status s3_put(tl_store *st_, const char *key, const void *data, size_t len, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    if (len > PART_SIZE) return put_multipart(r, key, data, len, err);
    return put_simple(r, key, data, len, err);
}

static tl_status s3_put_if_absent(tl_store *st_, const char *key, const void *data, size_t len,
                                  tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    char *line = "if-none-match: *";
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {"PUT", object, "", &headers, data, len, NULL, 0};
    /* 412: the object exists; 409: a concurrent conditional write won. */
    static const long lost[] = {412, 409};
    tl_status st = tl_remote_put_if_absent(r, &call, key, data, len, lost, 2, err);
    free(object);
    return st;
}

static tl_status list_page(tl_remote *r, const char *object_prefix, const char *token,
                           tl_strlist *out, char **next, tl_error *err)
{
    tl_buf q = {0};
    int rc = 0;
    if (token) {
        rc |= tl_buf_append_str(&q, "continuation-token=");
        rc |= tl_http_encode(&q, token, false);
        rc |= tl_buf_append_byte(&q, '&');
    }
    rc |= tl_buf_append_str(&q, "list-type=2&prefix=");
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
    size_t skip = r->cfg.prefix[0] ? strlen(r->cfg.prefix) + 1 : 0;
    const char *body = (const char *)resp.body.data;
    for (const char *p = body; st == TL_OK && p;) {
        const char *end = NULL;
        char *key = tl_xml_text(p, "Key", &end);
        if (key == NULL) break;
        if (strlen(key) > skip && tl_strlist_push(out, key + skip) != 0) st = tl_error_nomem(err);
        free(key);
        p = end;
    }
    *next = NULL;
    char *truncated = st == TL_OK && body ? tl_xml_text(body, "IsTruncated", NULL) : NULL;
    if (truncated && strcmp(truncated, "true") == 0)
        *next = tl_xml_text(body, "NextContinuationToken", NULL);
    free(truncated);
    tl_http_response_clear(&resp);
    tl_buf_free(&q);
    return st;
}

static tl_status s3_list(tl_store *st_, const char *prefix, tl_strlist *out, tl_error *err)
{
    return tl_remote_list((tl_remote *)st_, prefix, list_page, out, err);
}

static tl_status s3_remove(tl_store *st_, const char *key, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    tl_http_response resp;
    tl_status st = object_call(r, "DELETE", key, "", NULL, NULL, 0, &resp, err);
    if (st == TL_OK && !ok_status(resp.status) && resp.status != 404)
        st = tl_remote_fail(&resp, "deleting", key, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status s3_put_many(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err)
{
    return tl_store_put_parallel(s, items, n, 8, err);
}

static void s3_free(tl_store *st_)
{
    s3_store *s = (s3_store *)st_;
    tl_remote_clear(&s->r);
    free(s->scheme_host);
    free(s->host);
    free(s->path_prefix);
    free(s);
}

static const tl_store_ops s3_ops = {
    .get = s3_get,
    .get_range = s3_get_range,
    .size = s3_size,
    .put = s3_put,
    .put_if_absent = s3_put_if_absent,
    .list = s3_list,
    .remove = s3_remove,
    .free = s3_free,
    .put_many = s3_put_many,
};

/* Endpoint and addressing: path style puts the bucket in the path. */
static tl_status s3_address(s3_store *s, tl_error *err)
{
    const tl_store_config *c = &s->r.cfg;
    char *base = c->endpoint ? strdup(c->endpoint)
                             : tl_strdup_printf("https://s3.%s.amazonaws.com", c->region);
    if (base == NULL) return tl_error_nomem(err);
    char *host_start = strstr(base, "://") + 3;
    char *path = strchr(host_start, '/');
    if (path) {
        free(base);
        return tl_error_set(err, TL_ERR_INVALID, "S3 endpoint \"%s\" must not have a path",
                            c->endpoint);
    }
    if (c->virtual_hosted) {
        s->host = tl_strdup_printf("%s.%s", c->bucket, host_start);
        s->scheme_host =
            tl_strdup_printf("%.*s%s", (int)(host_start - base), base, s->host ? s->host : "");
        s->path_prefix = strdup("");
    } else {
        s->host = strdup(host_start);
        s->scheme_host = strdup(base);
        tl_buf p = {0};
        if (tl_buf_append_byte(&p, '/') == 0 && tl_http_encode(&p, c->bucket, false) == 0)
            s->path_prefix = (char *)tl_buf_detach(&p, NULL);
        tl_buf_free(&p);
    }
    free(base);
    if (s->host == NULL || s->scheme_host == NULL || s->path_prefix == NULL)
        return tl_error_nomem(err);
    return TL_OK;
}

tl_status tl_store_s3_open(tl_store_config *cfg, tl_store **out, tl_error *err)
{
    s3_store *s = calloc(1, sizeof *s);
    if (s == NULL) return tl_error_nomem(err);
    s->r.base.ops = &s3_ops;
    s->r.attempt = s3_attempt;
    tl_status st = tl_remote_init(&s->r, cfg, "s3", err);
    if (st == TL_OK) st = s3_address(s, err);
    if (st != TL_OK) {
        s3_free(&s->r.base);
        return st;
    }
    *out = &s->r.base;
    return TL_OK;
}
