/* Azure Blob Storage: Shared Key signing (or a SAS, or a bearer token), block
 * blobs (Put Blob, or Put Block + Put Block List for large objects), ranged
 * reads, List Blobs, and the conditional create as Put Blob with
 * If-None-Match: * (409 BlobAlreadyExists or 412 when the blob exists). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "store/digest.h"
#include "store/multipart.h"
#include "store/remote.h"
#include "store/xml.h"

#define API_VERSION "2021-08-06"
#define MAX_BLOCKS 50000 /* Azure's limit on the blocks of one blob */
#define EMULATOR_ACCOUNT "devstoreaccount1"
#define EMULATOR_KEY                                                                               \
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

typedef struct azure_store {
    tl_remote r;
    char *base;      /* "https://acct.blob.core.windows.net" or "http://127.0.0.1:10000/acct" */
    char *base_path; /* the path part of base ("" or "/acct"), for signing */
    tl_buf key;      /* the decoded account key; empty with a SAS or a token */
} azure_store;

/* Header value of a "name: value" line among the call's headers, or "". */
static const char *find_header(const tl_strlist *h, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; h && i < h->len; i++)
        if (strncasecmp(h->items[i], name, n) == 0 && h->items[i][n] == ':')
            return h->items[i] + n + 2;
    return "";
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The query's "name=value" pairs as "\nname:value" lines, sorted (values decoded
 * back: our values never contain '%' except from encoding, decoded here). */
static int canonical_query(tl_buf *out, const char *query)
{
    char *copy = strdup(query);
    if (copy == NULL) return -1;
    char *parts[16];
    size_t n = 0;
    for (char *save = NULL, *p = strtok_r(copy, "&", &save); p && n < 16;
         p = strtok_r(NULL, "&", &save))
        parts[n++] = p;
    qsort(parts, n, sizeof *parts, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(parts[i], '=');
        if (eq) *eq = '\0';
        rc |= tl_buf_printf(out, "\n%s:", parts[i]);
        for (const char *v = eq ? eq + 1 : ""; *v; v++) {
            unsigned int byte;
            if (v[0] == '%' && sscanf(v + 1, "%2x", &byte) == 1) {
                rc |= tl_buf_append_byte(out, (uint8_t)byte);
                v += 2;
            } else {
                rc |= tl_buf_append_byte(out, (uint8_t)*v);
            }
        }
    }
    free(copy);
    return rc;
}

static int sign(azure_store *a, const tl_remote_call *call, const char *path, const char *date,
                const tl_strlist *xms, tl_strlist *out)
{
    tl_buf sts = {0};
    const tl_strlist *h = call->headers;
    bool upload = strcmp(call->method, "PUT") == 0 || strcmp(call->method, "POST") == 0;
    char length[24] = "";
    if (call->body_len) snprintf(length, sizeof length, "%zu", call->body_len);
    int rc =
        tl_buf_printf(&sts, "%s\n\n\n%s\n\n%s\n\n\n\n%s\n\n\n", call->method, length,
                      upload ? "application/octet-stream" : "", find_header(h, "if-none-match"));
    for (size_t i = 0; i < xms->len; i++) {
        const char *line = xms->items[i], *colon = strchr(line, ':');
        rc |= tl_buf_printf(&sts, "%.*s:%s\n", (int)(colon - line), line, colon + 2);
    }
    rc |= tl_buf_printf(&sts, "/%s%s", a->r.cfg.account, path);
    rc |= canonical_query(&sts, call->query);
    (void)date;
    if (rc) {
        tl_buf_free(&sts);
        return -1;
    }
    uint8_t mac[32];
    tl_hmac_sha256(a->key.data, a->key.len, sts.data, sts.len, mac);
    tl_buf sig = {0};
    rc = tl_base64_encode(&sig, mac, 32, 0);
    if (rc == 0)
        rc = tl_strlist_push_owned(out, tl_strdup_printf("Authorization: SharedKey %s:%s",
                                                         a->r.cfg.account, (char *)sig.data));
    tl_buf_free(&sig);
    tl_buf_free(&sts);
    return rc;
}

static tl_status azure_attempt(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                               tl_error *err)
{
    azure_store *a = (azure_store *)r;
    memset(resp, 0, sizeof *resp);
    tl_buf path = {0}, url = {0};
    int rc = tl_buf_printf(&path, "%s/", a->base_path);
    rc |= tl_http_encode(&path, r->cfg.bucket, false);
    if (call->object) {
        rc |= tl_buf_append_byte(&path, '/');
        rc |= tl_http_encode(&path, call->object, true);
    }
    const char *sas = r->cfg.sas ? (r->cfg.sas[0] == '?' ? r->cfg.sas + 1 : r->cfg.sas) : NULL;
    rc |= tl_buf_printf(&url, "%s%s", a->base, (char *)path.data + strlen(a->base_path));
    if (call->query[0] || sas)
        rc |= tl_buf_printf(&url, "?%s%s%s", call->query, call->query[0] && sas ? "&" : "",
                            sas ? sas : "");
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    /* x-ms-* headers, kept sorted for the canonical form. */
    tl_strlist xms = {0}, headers = {0};
    rc |= tl_strlist_push_owned(&xms, tl_strdup_printf("x-ms-date: %s", date));
    for (size_t i = 0; call->headers && i < call->headers->len; i++) {
        if (strncmp(call->headers->items[i], "x-ms-", 5) == 0)
            rc |= tl_strlist_push(&xms, call->headers->items[i]);
        else
            rc |= tl_strlist_push(&headers, call->headers->items[i]);
    }
    rc |= tl_strlist_push(&xms, "x-ms-version: " API_VERSION);
    tl_strlist_sort(&xms);
    for (size_t i = 0; i < xms.len; i++) rc |= tl_strlist_push(&headers, xms.items[i]);
    if (rc == 0 && r->cfg.skip_signature) /* azure_skip_signature: anonymous, public containers */
        ;
    else if (rc == 0 && r->cfg.azure_token)
        rc = tl_strlist_push_owned(
            &headers, tl_strdup_printf("Authorization: Bearer %s", r->cfg.azure_token));
    else if (rc == 0 && a->key.len)
        rc = sign(a, call, (char *)path.data, date, &xms, &headers);
    tl_status st = rc ? tl_error_nomem(err) : TL_OK;
    if (st == TL_OK) {
        tl_http_request req = {call->method,   (char *)url.data, &headers,     call->body,
                               call->body_len, call->dst,        call->dst_len};
        st = tl_http_send(r->http, &req, resp, err);
    }
    tl_strlist_free(&xms);
    tl_strlist_free(&headers);
    tl_buf_free(&path);
    tl_buf_free(&url);
    return st;
}

static bool ok_status(long s)
{
    return s >= 200 && s < 300;
}

static tl_status blob_call(tl_remote *r, const char *method, const char *key, const char *query,
                           const tl_strlist *headers, const void *body, size_t len, uint8_t *dst,
                           size_t dst_len, tl_http_response *resp, const char *what, tl_error *err)
{
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {method, object, query, headers, body, len, dst, dst_len};
    tl_status st = tl_remote_send(r, &call, resp, NULL, err);
    if (st == TL_OK && !ok_status(resp->status) &&
        !(strcmp(method, "DELETE") == 0 && resp->status == 404))
        st = tl_remote_fail(resp, what, key, err);
    free(object);
    return st;
}

static tl_status azure_get(tl_store *s, const char *key, tl_buf *out, tl_error *err)
{
    tl_http_response resp;
    tl_status st =
        blob_call((tl_remote *)s, "GET", key, "", NULL, NULL, 0, NULL, 0, &resp, "reading", err);
    if (st == TL_OK) st = tl_remote_take_body(&resp, out, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status azure_get_range(tl_store *s, const char *key, uint64_t offset, size_t len,
                                 uint8_t *dst, tl_error *err)
{
    if (len == 0) return TL_OK;
    char range[96];
    tl_remote_range_header(range, sizeof range, "x-ms-range", offset, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    tl_http_response resp;
    tl_status st = blob_call((tl_remote *)s, "GET", key, "", &headers, NULL, 0, dst, len, &resp,
                             "reading", err);
    if (st == TL_OK) st = tl_remote_check_range(&resp, key, offset, len, err);
    tl_http_response_clear(&resp);
    return st;
}

/* A ranged GET of bytes 0..len-1: 206 with the size in Content-Range (as
 * S3's, store_s3.c); only an empty blob answers 416, then its size is asked. */
static tl_status azure_get_first(tl_store *s, const char *key, size_t len, uint8_t *dst,
                                 size_t *got, uint64_t *total, tl_error *err)
{
    *got = 0;
    if (len == 0) return tl_remote_size_by_stat(s, key, total, err);
    char range[96];
    tl_remote_range_header(range, sizeof range, "x-ms-range", 0, len);
    char *line = range;
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    tl_http_response resp = {0};
    tl_status st = blob_call((tl_remote *)s, "GET", key, "", &headers, NULL, 0, dst, len, &resp,
                             "reading", err);
    bool empty = resp.status == 416;
    if (st == TL_OK) st = tl_remote_first_result(&resp, key, len, got, total, err);
    tl_http_response_clear(&resp);
    if (!empty) return st;
    *got = 0;
    return tl_remote_size_by_stat(s, key, total, err);
}

/* The base64 block id of part index: every id of a blob has the same length. */
static int block_id(const tl_tagged_upload *u, size_t index, tl_buf *out)
{
    char raw[48];
    snprintf(raw, sizeof raw, "%s-%08zu", u->tag, index);
    return tl_base64_encode(out, raw, strlen(raw), 0);
}

/* Put Block: the block stays uncommitted (invisible) until the block list names it. */
static tl_status upload_part(tl_remote *r, void *u_, size_t index, const uint8_t *data, size_t len,
                             tl_error *err)
{
    tl_tagged_upload *u = u_;
    tl_buf id = {0}, enc = {0};
    int rc = block_id(u, index, &id);
    rc |= tl_http_encode(&enc, rc ? "" : (char *)id.data, false);
    char *q = rc ? NULL : tl_strdup_printf("blockid=%s&comp=block", (char *)enc.data);
    tl_status st = q ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) {
        tl_http_response resp;
        st = blob_call(r, "PUT", u->key, q, NULL, data, len, NULL, 0, &resp, "writing", err);
        tl_http_response_clear(&resp);
    }
    free(q);
    tl_buf_free(&id);
    tl_buf_free(&enc);
    return st;
}

/* Put Block List commits the blocks in order. Sending it again after a lost
 * answer is harmless: <Latest> also names blocks committed already. */
static tl_status upload_finish(tl_remote *r, void *u_, size_t n_parts, const uint8_t *data,
                               size_t len, tl_error *err)
{
    (void)data;
    (void)len;
    tl_tagged_upload *u = u_;
    tl_buf list = {0};
    int rc = tl_buf_append_str(&list, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
    for (size_t i = 0; i < n_parts && rc == 0; i++) {
        tl_buf id = {0};
        rc |= block_id(u, i, &id);
        rc |= tl_buf_printf(&list, "<Latest>%s</Latest>", rc ? "" : (char *)id.data);
        tl_buf_free(&id);
    }
    rc |= tl_buf_append_str(&list, "</BlockList>");
    tl_status st = rc ? tl_error_nomem(err) : TL_OK;
    if (st == TL_OK) {
        tl_http_response resp;
        st = blob_call(r, "PUT", u->key, "comp=blocklist", NULL, list.data, list.len, NULL, 0,
                       &resp, "writing", err);
        tl_http_response_clear(&resp);
    }
    tl_buf_free(&list);
    return st;
}

/* Uncommitted blocks cannot be deleted one by one; the service drops them
 * (after a week) and they never show as a blob. */
static void upload_abort(tl_remote *r, void *u, size_t n_parts)
{
    (void)r;
    (void)u;
    (void)n_parts;
}

static const tl_multipart_ops azure_multipart = {tl_tagged_upload_begin, upload_part, upload_finish,
                                                 upload_abort, tl_tagged_upload_free};

static tl_status azure_put(tl_store *s, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    tl_remote *r = (tl_remote *)s;
    if (tl_multipart_wanted(r, len))
        return tl_multipart_put(r, &azure_multipart, key, data, len,
                                tl_multipart_part_size(r, len, MAX_BLOCKS, 1), err);
    char *line = "x-ms-blob-type: BlockBlob";
    tl_strlist headers = {.items = &line, .len = 1, .cap = 1};
    tl_http_response resp;
    tl_status st =
        blob_call(r, "PUT", key, "", &headers, data, len, NULL, 0, &resp, "writing", err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status azure_put_if_absent(tl_store *s, const char *key, const void *data, size_t len,
                                     tl_error *err)
{
    tl_remote *r = (tl_remote *)s;
    char *lines[] = {"if-none-match: *", "x-ms-blob-type: BlockBlob"};
    tl_strlist headers = {.items = lines, .len = 2, .cap = 2};
    char *object = tl_remote_object(r, key);
    if (object == NULL) return tl_error_nomem(err);
    tl_remote_call call = {"PUT", object, "", &headers, data, len, NULL, 0};
    static const long lost[] = {409, 412};
    tl_status st = tl_remote_put_if_absent(r, &call, key, data, len, lost, 2, err);
    free(object);
    return st;
}

/* One <Blob> of a listing: its name, Content-Length and Content-MD5 (which
 * the service computes for a Put Blob, as our conditional creates are). */
static int push_listed(const char *blob, size_t skip, tl_store_listing *out)
{
    char *name = tl_xml_text(blob, "Name", NULL);
    char *size = tl_xml_text(blob, "Content-Length", NULL);
    char *md5_text = tl_xml_text(blob, "Content-MD5", NULL);
    char *etag = tl_xml_text(blob, "Etag", NULL);
    char *modified = tl_xml_text(blob, "Last-Modified", NULL);
    uint8_t md5[16];
    bool has_md5 = md5_text && tl_md5_from_base64(md5_text, md5);
    int rc = 0;
    if (name && strlen(name) > skip) {
        tl_store_listed *e = tl_store_listing_add(
            out, name + skip, size ? strtoull(size, NULL, 10) : 0, has_md5 ? md5 : NULL);
        rc = e ? tl_store_listed_set_etag(e, etag) : -1;
        if (e) e->modified_ms = tl_remote_http_date_ms(modified);
    }
    free(name);
    free(size);
    free(md5_text);
    free(etag);
    free(modified);
    return rc;
}

/* The <BlobPrefix> entries of a delimited listing: one folder each. */
static int push_folders(tl_remote *r, const char *blobs, tl_store_listing *out)
{
    int rc = 0;
    for (const char *p = blobs; rc == 0 && p;) {
        const char *end = NULL;
        char *bp = tl_xml_element(p, "BlobPrefix", &end);
        if (bp == NULL) break;
        char *name = tl_xml_text(bp, "Name", NULL);
        rc = tl_remote_push_folder(r, name, out);
        free(name);
        free(bp);
        p = end;
    }
    return rc;
}

static tl_status list_page(tl_remote *r, const char *object_prefix, bool delimited,
                           const char *marker, tl_store_listing *out, char **next, tl_error *err)
{
    tl_buf q = {0};
    int rc = tl_buf_append_str(&q, "comp=list");
    if (delimited) rc |= tl_buf_append_str(&q, "&delimiter=%2F");
    if (marker) {
        rc |= tl_buf_append_str(&q, "&marker=");
        rc |= tl_http_encode(&q, marker, false);
    }
    rc |= tl_buf_append_str(&q, "&prefix=");
    rc |= tl_http_encode(&q, object_prefix, false);
    rc |= tl_buf_append_str(&q, "&restype=container");
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
    const char *blobs = body ? strstr(body, "<Blobs>") : NULL;
    for (const char *p = blobs; st == TL_OK && p;) {
        const char *end = NULL;
        char *blob = tl_xml_element(p, "Blob", &end);
        if (blob == NULL) break;
        if (push_listed(blob, skip, out) != 0) st = tl_error_nomem(err);
        free(blob);
        p = end;
    }
    if (st == TL_OK && delimited && blobs && push_folders(r, blobs, out) != 0)
        st = tl_error_nomem(err);
    const char *nm = body ? strstr(body, "<NextMarker>") : NULL;
    *next = st == TL_OK && nm ? tl_xml_text(nm, "NextMarker", NULL) : NULL;
    if (*next && (*next)[0] == '\0') {
        free(*next);
        *next = NULL;
    }
    tl_http_response_clear(&resp);
    tl_buf_free(&q);
    return st;
}

static tl_status azure_list(tl_store *s, const char *prefix, tl_strlist *out, tl_error *err)
{
    return tl_remote_list_keys((tl_remote *)s, prefix, list_page, out, err);
}

static tl_status azure_list_detailed(tl_store *s, const char *prefix, tl_store_listing *out,
                                     tl_error *err)
{
    return tl_remote_list((tl_remote *)s, prefix, false, list_page, out, err);
}

static tl_status azure_list_objects(tl_store *s, const char *prefix, bool recursive,
                                    tl_store_listing *out, tl_error *err)
{
    return tl_remote_list((tl_remote *)s, prefix, !recursive, list_page, out, err);
}

static tl_status azure_stat(tl_store *s, const char *key, tl_store_listed *out, tl_error *err)
{
    tl_http_response resp;
    memset(out, 0, sizeof *out);
    tl_status st =
        blob_call((tl_remote *)s, "HEAD", key, "", NULL, NULL, 0, NULL, 0, &resp, "reading", err);
    if (st == TL_OK) st = tl_remote_stat_of_head(&resp, key, out, err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status azure_remove(tl_store *s, const char *key, tl_error *err)
{
    tl_http_response resp;
    tl_status st = blob_call((tl_remote *)s, "DELETE", key, "", NULL, NULL, 0, NULL, 0, &resp,
                             "deleting", err);
    tl_http_response_clear(&resp);
    return st;
}

static tl_status azure_put_many(tl_store *s, const tl_store_put_item *items, size_t n,
                                tl_error *err)
{
    return tl_store_put_parallel(s, items, n, 8, err);
}

static void azure_free(tl_store *s)
{
    azure_store *a = (azure_store *)s;
    tl_remote_clear(&a->r);
    free(a->base);
    free(a->base_path);
    tl_buf_free(&a->key);
    free(a);
}

static const tl_store_ops azure_ops = {
    .get = azure_get,
    .get_range = azure_get_range,
    .size = tl_remote_size_by_stat,
    .get_first = azure_get_first,
    .put = azure_put,
    .put_if_absent = azure_put_if_absent,
    .list = azure_list,
    .list_detailed = azure_list_detailed,
    .remove = azure_remove,
    .free = azure_free,
    .put_many = azure_put_many,
    .list_objects = azure_list_objects,
    .stat = azure_stat,
    .writer_open = tl_remote_writer_open,
};

static tl_status azure_setup(azure_store *a, tl_store_config *c, tl_error *err)
{
    if (c->use_emulator) {
        if (c->account == NULL && (c->account = strdup(EMULATOR_ACCOUNT)) == NULL)
            return tl_error_nomem(err);
        if (c->account_key == NULL && c->sas == NULL && c->azure_token == NULL &&
            (c->account_key = strdup(EMULATOR_KEY)) == NULL)
            return tl_error_nomem(err);
    }
    if (c->account == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            "no Azure account: set azure_storage_account_name");
    if (c->account_key == NULL && c->sas == NULL && c->azure_token == NULL && !c->skip_signature)
        return tl_error_set(err, TL_ERR_INVALID,
                            "no Azure credentials: set azure_storage_account_key, "
                            "azure_storage_sas_key or azure_storage_token");
    if (c->account_key && tl_base64_decode(&a->key, c->account_key, strlen(c->account_key)) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "azure_storage_account_key is not base64");
    if (c->endpoint)
        a->base = strdup(c->endpoint);
    else if (c->use_emulator)
        a->base = tl_strdup_printf("http://127.0.0.1:10000/%s", c->account);
    else
        a->base = tl_strdup_printf("https://%s.blob.core.windows.net", c->account);
    if (a->base == NULL) return tl_error_nomem(err);
    const char *host = strstr(a->base, "://") + 3, *path = strchr(host, '/');
    a->base_path = strdup(path ? path : "");
    return a->base_path ? TL_OK : tl_error_nomem(err);
}

tl_status tl_store_azure_open(tl_store_config *cfg, tl_store **out, tl_error *err)
{
    azure_store *a = calloc(1, sizeof *a);
    if (a == NULL) return tl_error_nomem(err);
    a->r.base.ops = &azure_ops;
    a->r.attempt = azure_attempt;
    a->r.multipart = &azure_multipart;
    a->r.max_parts = MAX_BLOCKS;
    tl_status st = azure_setup(a, cfg, err);
    if (st == TL_OK) st = tl_remote_init(&a->r, cfg, "az", err);
    if (st != TL_OK) {
        azure_free(&a->r.base);
        return st;
    }
    *out = &a->r.base;
    return TL_OK;
}
