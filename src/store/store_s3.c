/* Amazon S3 and S3-compatible stores: SigV4-signed REST calls, path-style or
 * virtual-hosted addressing, ranged GETs, ListObjectsV2, multipart uploads for
 * large objects and the conditional create (If-None-Match: *) for commits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/digest.h"
#include "store/multipart.h"
#include "store/remote.h"
#include "store/sigv4.h"
#include "store/xml.h"

#define MAX_PARTS 10000 /* S3's limit on the parts of one upload */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct s3_store {
    tl_remote r;
    char *scheme_host; /* "https://s3.us-east-1.amazonaws.com" or the endpoint */
    char *host;        /* the Host header */
    char *path_prefix; /* "/bucket" (path style), "" (virtual-hosted) */
} s3_store;

/* aws_server_side_encryption (with aws_sse_kms_key_id, aws_sse_bucket_key_enabled):
 * the headers of the calls that create objects, a PUT (not a part's) and the
 * start of a multipart upload. 0, or -1 when out of memory. */
static int sse_headers(const tl_remote *r, const tl_remote_call *call, tl_strlist *out)
{
    const tl_store_config *c = &r->cfg;
    bool creates = call->object != NULL &&
                   ((strcmp(call->method, "PUT") == 0 && !strstr(call->query, "partNumber=")) ||
                    (strcmp(call->method, "POST") == 0 && strcmp(call->query, "uploads=") == 0));
    if (c->sse == NULL || !creates) return 0;
    int rc =
        tl_strlist_push_owned(out, tl_strdup_printf("x-amz-server-side-encryption: %s", c->sse));
    if (c->sse_kms_key_id && strncmp(c->sse, "aws:kms", 7) == 0)
        rc |= tl_strlist_push_owned(
            out,
            tl_strdup_printf("x-amz-server-side-encryption-aws-kms-key-id: %s", c->sse_kms_key_id));
    if (c->sse_bucket_key && strncmp(c->sse, "aws:kms", 7) == 0)
        rc |= tl_strlist_push(out, "x-amz-server-side-encryption-bucket-key-enabled: true");
    return rc;
}

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
    if (r->cfg.unsigned_payload) /* aws_unsigned_payload: the body is not hashed */
        snprintf(hash, sizeof hash, "UNSIGNED-PAYLOAD");
    else if (call->body_len) {
        uint8_t d[32];
        tl_sha256(call->body, call->body_len, d);
        tl_hex(d, 32, hash);
    }
    tl_amz_date_now(date);
    tl_strlist extra = {0}, headers = {0};
    for (size_t i = 0; call->headers && i < call->headers->len; i++)
        rc |= tl_strlist_push(&extra, call->headers->items[i]);
    rc |= sse_headers(r, call, &extra);
    if (r->cfg.request_payer) rc |= tl_strlist_push(&extra, "x-amz-request-payer: requester");
    for (size_t i = 0; i < extra.len; i++) rc |= tl_strlist_push(&headers, extra.items[i]);
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
                                   r->cfg.region, "s3",    &extra};
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
    tl_strlist_free(&extra);
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

/* Sends a GET of bytes offset..offset+len-1 of key into dst; *resp is
 * the caller's to clear, whatever the outcome. */
static tl_status send_ranged_get(tl_remote *r, const char *key, uint64_t offset, size_t len,
                                 uint8_t *dst, tl_http_response *resp, tl_error *err)
{
    memset(resp, 0, sizeof *resp);
    char range[96];
    tl_remote_range_header(range, sizeof range, "range", offset, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {"GET", object, "", &headers, NULL, 0, dst, len};
    tl_status st = tl_remote_send(r, &call, resp, NULL, err);
    free(object);
    return st;
}

static tl_status s3_get_range(tl_store *st_, const char *key, uint64_t offset, size_t len,
                              uint8_t *dst, tl_error *err)
{
    if (len == 0) return TL_OK;
    tl_http_response resp;
    tl_status st = send_ranged_get((tl_remote *)st_, key, offset, len, dst, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "reading", key, err);
    if (st == TL_OK) st = tl_remote_check_range(&resp, key, offset, len, err);
    tl_http_response_clear(&resp);
    return st;
}

/* A GET of bytes 0..len-1: S3 answers 206 with the object's size in
 * Content-Range, and a body of at most len bytes (the client refuses more).
 * Only an empty object cannot satisfy the range (416): its size is then asked. */
static tl_status s3_get_first(tl_store *st_, const char *key, size_t len, uint8_t *dst, size_t *got,
                              uint64_t *total, tl_error *err)
{
    if (len == 0) {
        *got = 0;
        return tl_remote_size_by_stat(st_, key, total, err);
    }
    tl_http_response resp;
    tl_status st = send_ranged_get((tl_remote *)st_, key, 0, len, dst, &resp, err);
    bool empty = st == TL_OK && resp.status == 416;
    if (st == TL_OK && !empty && !ok_status(resp.status))
        st = tl_remote_fail(&resp, "reading", key, err);
    if (st == TL_OK && !empty) st = tl_remote_first_result(&resp, key, len, got, total, err);
    tl_http_response_clear(&resp);
    if (empty) {
        *got = 0;
        st = tl_remote_size_by_stat(st_, key, total, err);
        if (st == TL_OK && *total != 0) /* replaced meanwhile: the sender retries */
            st = tl_error_set(err, TL_ERR_STORAGE, "reading %s: changed while read", key);
    }
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

/* One S3 multipart upload: its id (percent-encoded for queries) and the ETag
 * of each part, filled in by the part threads. */
typedef struct s3_upload {
    char *key;
    char *enc_id;
    char **etags;
    size_t n_parts;
    bool begin_unknown; /* an attempt to begin it may have begun another upload */
} s3_upload;

static void upload_free(void *u_)
{
    s3_upload *u = u_;
    if (u == NULL) return;
    for (size_t i = 0; i < u->n_parts; i++) free(u->etags[i]);
    free(u->etags);
    free(u->enc_id);
    free(u->key);
    free(u);
}

static void abort_upload(tl_remote *r, const char *key, const char *enc_id)
{
    char *query = tl_strdup_printf("uploadId=%s", enc_id);
    tl_http_response resp;
    if (query && object_call(r, "DELETE", key, query, NULL, NULL, 0, &resp, NULL) == TL_OK)
        tl_http_response_clear(&resp);
    free(query);
}

/* When the answer to a CreateMultipartUpload was lost, the server may hold an
 * upload of this key we never heard of: its parts would cost storage forever.
 * Abort every pending upload of exactly this key but ours (data files have
 * unique names, so no other writer's upload of the key is in flight). */
static void abort_lost_uploads(tl_remote *r, const s3_upload *u)
{
    if (!u->begin_unknown) return;
    char *object = tl_remote_object(r, u->key);
    tl_buf q = {0};
    int rc = object == NULL || tl_buf_append_str(&q, "prefix=") != 0 ||
             tl_http_encode(&q, object, false) != 0 || tl_buf_append_str(&q, "&uploads=") != 0;
    tl_http_response resp = {0};
    tl_remote_call call = {"GET", NULL, rc ? "" : (char *)q.data, NULL, NULL, 0, NULL, 0};
    if (rc == 0 && tl_remote_send(r, &call, &resp, NULL, NULL) == TL_OK && ok_status(resp.status)) {
        const char *p = (const char *)resp.body.data;
        while (p && (p = strstr(p, "<Upload>")) != NULL) {
            p += 8;
            char *k = tl_xml_text(p, "Key", NULL), *id = tl_xml_text(p, "UploadId", NULL);
            tl_buf enc = {0};
            if (k && id && strcmp(k, object) == 0 && tl_http_encode(&enc, id, false) == 0 &&
                strcmp((char *)enc.data, u->enc_id) != 0)
                abort_upload(r, u->key, (char *)enc.data);
            tl_buf_free(&enc);
            free(k);
            free(id);
        }
    }
    tl_http_response_clear(&resp);
    tl_buf_free(&q);
    free(object);
}

static tl_status upload_begin(tl_remote *r, const char *key, size_t n_parts, void **out,
                              tl_error *err)
{
    s3_upload *u = calloc(1, sizeof *u);
    if (u == NULL || (u->etags = calloc(n_parts, sizeof *u->etags)) == NULL ||
        (u->key = strdup(key)) == NULL) {
        upload_free(u);
        return tl_error_nomem(err);
    }
    u->n_parts = n_parts;
    char *object = tl_remote_object(r, key);
    if (object == NULL) {
        upload_free(u);
        return tl_error_nomem(err);
    }
    tl_remote_call call = {"POST", object, "uploads=", NULL, NULL, 0, NULL, 0};
    tl_http_response resp;
    tl_status st = tl_remote_send(r, &call, &resp, &u->begin_unknown, err);
    free(object);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", key, err);
    char *id = st == TL_OK ? tl_xml_text((const char *)resp.body.data, "UploadId", NULL) : NULL;
    if (st == TL_OK && id == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "writing %s: no UploadId in the answer", key);
    tl_buf enc = {0};
    if (st == TL_OK && tl_http_encode(&enc, id, false) != 0) st = tl_error_nomem(err);
    u->enc_id = st == TL_OK ? (char *)tl_buf_detach(&enc, NULL) : NULL;
    tl_buf_free(&enc);
    free(id);
    tl_http_response_clear(&resp);
    if (st != TL_OK) {
        if (u->enc_id == NULL && (u->enc_id = strdup("")) != NULL) abort_lost_uploads(r, u);
        upload_free(u);
        return st;
    }
    *out = u;
    return TL_OK;
}

static tl_status upload_part(tl_remote *r, void *u_, size_t index, const uint8_t *data, size_t len,
                             tl_error *err)
{
    s3_upload *u = u_;
    char *query = tl_strdup_printf("partNumber=%zu&uploadId=%s", index + 1, u->enc_id);
    if (query == NULL) return tl_error_nomem(err);
    tl_http_response resp;
    tl_status st = object_call(r, "PUT", u->key, query, NULL, data, len, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "writing", u->key, err);
    const char *etag = st == TL_OK ? tl_http_header(&resp, "etag") : NULL;
    if (st == TL_OK && etag == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "writing %s: part %zu has no ETag", u->key,
                          index + 1);
    if (st == TL_OK && (u->etags[index] = strdup(etag)) == NULL) st = tl_error_nomem(err);
    tl_http_response_clear(&resp);
    free(query);
    return st;
}

/* After a lost answer to the completion of a streamed upload (whose bytes
 * are gone): is the object the one these parts make? S3's ETag of a
 * multipart object is the MD5 of its parts' MD5s, "-", and the part count. */
static tl_status verify_parts(tl_remote *r, const s3_upload *u, size_t n_parts, tl_error *err)
{
    uint8_t *md5s = malloc(16 * (n_parts ? n_parts : 1));
    bool ok = md5s != NULL;
    for (size_t i = 0; ok && i < n_parts; i++) ok = tl_md5_from_hex(u->etags[i], md5s + 16 * i);
    char want[48] = "";
    if (ok) {
        uint8_t d[16];
        tl_md5(md5s, 16 * n_parts, d);
        tl_hex(d, 16, want);
        snprintf(want + 32, sizeof want - 32, "-%zu", n_parts);
    }
    free(md5s);
    tl_store_listed got = {0};
    tl_error e;
    tl_status st = ok ? r->base.ops->stat(&r->base, u->key, &got, &e) : TL_ERR_STORAGE;
    ok = st == TL_OK && got.etag && strcmp(got.etag, want) == 0;
    tl_store_listed_clear(&got);
    if (ok) return TL_OK;
    return tl_error_set(err, TL_ERR_STORAGE,
                        "writing %s: the upload's last answer was lost and the object is not "
                        "ours",
                        u->key);
}

static tl_status upload_finish(tl_remote *r, void *u_, size_t n_parts, const uint8_t *data,
                               size_t len, tl_error *err)
{
    s3_upload *u = u_;
    tl_buf xml = {0};
    int rc = tl_buf_append_str(&xml, "<CompleteMultipartUpload>");
    for (size_t i = 0; i < n_parts; i++)
        rc |= tl_buf_printf(&xml, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>", i + 1,
                            u->etags[i]);
    rc |= tl_buf_append_str(&xml, "</CompleteMultipartUpload>");
    char *query = rc ? NULL : tl_strdup_printf("uploadId=%s", u->enc_id);
    char *object = query ? tl_remote_object(r, u->key) : NULL;
    if (object == NULL) {
        free(query);
        tl_buf_free(&xml);
        return tl_error_nomem(err);
    }
    tl_remote_call call = {"POST", object, query, NULL, xml.data, xml.len, NULL, 0};
    tl_http_response resp;
    bool maybe_applied = false;
    tl_status st = tl_remote_send(r, &call, &resp, &maybe_applied, err);
    if (st == TL_OK && resp.status == 404 && maybe_applied) {
        /* NoSuchUpload after an attempt whose answer was lost: that attempt may
         * have completed the upload. Look at what is there. */
        st = data ? tl_multipart_verify(r, u->key, data, len, err)
                  : verify_parts(r, u, n_parts, err);
    } else if (st == TL_OK && (!ok_status(resp.status) ||
                               (resp.body.data && strstr((char *)resp.body.data, "<Error>")))) {
        /* CompleteMultipartUpload can fail with a 200 whose body is an <Error>. */
        st = tl_remote_fail(&resp, "completing the upload of", u->key, err);
    }
    tl_http_response_clear(&resp);
    free(object);
    free(query);
    tl_buf_free(&xml);
    if (st == TL_OK) abort_lost_uploads(r, u);
    return st;
}

/* Frees the parts uploaded so far, so that they stop costing storage. */
static void upload_abort(tl_remote *r, void *u_, size_t n_parts)
{
    (void)n_parts;
    s3_upload *u = u_;
    abort_upload(r, u->key, u->enc_id);
    abort_lost_uploads(r, u);
}

static const tl_multipart_ops s3_multipart = {upload_begin, upload_part, upload_finish,
                                              upload_abort, upload_free};

static tl_status s3_put(tl_store *st_, const char *key, const void *data, size_t len, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    if (tl_multipart_wanted(r, len))
        return tl_multipart_put(r, &s3_multipart, key, data, len,
                                tl_multipart_part_size(r, len, MAX_PARTS, 1), err);
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

/* One <Contents> of a listing: its key, size, and the MD5 its ETag is when
 * the object was put in one part (our conditional creates always are). A
 * multipart ETag ("<hex>-<parts>") is not taken as one; an ETag that looks
 * like one but is not (SSE-KMS, SSE-C) only ever fails to match, so readers
 * then skip the head (store.h: tl_store_listed). */
static int push_listed(const char *contents, size_t skip, tl_store_listing *out)
{
    char *key = tl_xml_text(contents, "Key", NULL);
    char *size = tl_xml_text(contents, "Size", NULL);
    char *etag = tl_xml_text(contents, "ETag", NULL);
    char *modified = tl_xml_text(contents, "LastModified", NULL);
    uint8_t md5[16];
    bool has_md5 = tl_md5_from_hex(etag, md5);
    int rc = 0;
    if (key && strlen(key) > skip) {
        tl_store_listed *e = tl_store_listing_add(
            out, key + skip, size ? strtoull(size, NULL, 10) : 0, has_md5 ? md5 : NULL);
        rc = e ? tl_store_listed_set_etag(e, etag) : -1;
        if (e) e->modified_ms = tl_remote_iso_date_ms(modified);
    }
    free(key);
    free(size);
    free(etag);
    free(modified);
    return rc;
}

/* The <CommonPrefixes> of a delimited listing: one folder each. */
static int push_folders(tl_remote *r, const char *body, tl_store_listing *out)
{
    int rc = 0;
    for (const char *p = body; rc == 0 && p;) {
        const char *end = NULL;
        char *cp = tl_xml_element(p, "CommonPrefixes", &end);
        if (cp == NULL) break;
        char *name = tl_xml_text(cp, "Prefix", NULL);
        rc = tl_remote_push_folder(r, name, out);
        free(name);
        free(cp);
        p = end;
    }
    return rc;
}

static tl_status list_page(tl_remote *r, const char *object_prefix, bool delimited,
                           const char *token, tl_store_listing *out, char **next, tl_error *err)
{
    tl_buf q = {0}; /* the parameters in sorted order, as SigV4 signs them */
    int rc = 0;
    if (token) {
        rc |= tl_buf_append_str(&q, "continuation-token=");
        rc |= tl_http_encode(&q, token, false);
        rc |= tl_buf_append_byte(&q, '&');
    }
    if (delimited) rc |= tl_buf_append_str(&q, "delimiter=%2F&");
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
        char *contents = tl_xml_element(p, "Contents", &end);
        if (contents == NULL) break;
        if (push_listed(contents, skip, out) != 0) st = tl_error_nomem(err);
        free(contents);
        p = end;
    }
    if (st == TL_OK && delimited && push_folders(r, body, out) != 0) st = tl_error_nomem(err);
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
    return tl_remote_list_keys((tl_remote *)st_, prefix, list_page, out, err);
}

static tl_status s3_list_detailed(tl_store *st_, const char *prefix, tl_store_listing *out,
                                  tl_error *err)
{
    return tl_remote_list((tl_remote *)st_, prefix, false, list_page, out, err);
}

static tl_status s3_list_objects(tl_store *st_, const char *prefix, bool recursive,
                                 tl_store_listing *out, tl_error *err)
{
    return tl_remote_list((tl_remote *)st_, prefix, !recursive, list_page, out, err);
}

static tl_status s3_stat(tl_store *st_, const char *key, tl_store_listed *out, tl_error *err)
{
    tl_remote *r = (tl_remote *)st_;
    tl_http_response resp;
    memset(out, 0, sizeof *out);
    tl_status st = object_call(r, "HEAD", key, "", NULL, NULL, 0, &resp, err);
    if (st == TL_OK && !ok_status(resp.status)) st = tl_remote_fail(&resp, "reading", key, err);
    if (st == TL_OK) st = tl_remote_stat_of_head(&resp, key, out, err);
    tl_http_response_clear(&resp);
    return st;
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
    .size = tl_remote_size_by_stat,
    .put = s3_put,
    .put_if_absent = s3_put_if_absent,
    .list = s3_list,
    .list_detailed = s3_list_detailed,
    .remove = s3_remove,
    .free = s3_free,
    .put_many = s3_put_many,
    .get_first = s3_get_first,
    .list_objects = s3_list_objects,
    .stat = s3_stat,
    .writer_open = tl_remote_writer_open,
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
    s->r.multipart = &s3_multipart;
    s->r.max_parts = MAX_PARTS;
    tl_status st = tl_remote_init(&s->r, cfg, "s3", err);
    if (st == TL_OK) st = s3_address(s, err);
    if (st != TL_OK) {
        s3_free(&s->r.base);
        return st;
    }
    *out = &s->r.base;
    return TL_OK;
}
