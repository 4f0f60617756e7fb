#include "store/remote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/parse.h"
#include "core/parallel.h"

tl_status tl_remote_init(tl_remote *r, tl_store_config *cfg, const char *url_scheme, tl_error *err)
{
    r->cfg = *cfg;
    memset(cfg, 0, sizeof *cfg); /* the remote owns the strings now */
    r->base.url = r->cfg.prefix[0]
                      ? tl_strdup_printf("%s://%s/%s", url_scheme, r->cfg.bucket, r->cfg.prefix)
                      : tl_strdup_printf("%s://%s", url_scheme, r->cfg.bucket);
    if (r->base.url == NULL) return tl_error_nomem(err);
    TL_TRY(tl_http_client_new(&r->cfg.timeouts, &r->http, err));
    TL_TRY(tl_http_client_set_transport(r->http, &r->cfg.transport, err));
    if (r->cfg.proxy_url == NULL && r->cfg.proxy_excludes == NULL && r->cfg.proxy_ca == NULL)
        return TL_OK;
    return tl_http_client_set_proxy(r->http, r->cfg.proxy_url, r->cfg.proxy_excludes,
                                    r->cfg.proxy_ca, err);
}

void tl_remote_clear(tl_remote *r)
{
    tl_http_client_free(r->http);
    tl_store_config_clear(&r->cfg);
    free(r->base.url);
}

char *tl_remote_object(const tl_remote *r, const char *key)
{
    return r->cfg.prefix[0] ? tl_strdup_printf("%s/%s", r->cfg.prefix, key) : strdup(key);
}

tl_status tl_remote_send(tl_remote *r, const tl_remote_call *call, tl_http_response *resp,
                         bool *maybe_applied, tl_error *err)
{
    for (int retry = 0;; retry++) {
        tl_status st = r->attempt(r, call, resp, err);
        if (!tl_retry_retryable(st, resp)) return st;
        /* A 5xx may come after the server acted: only a refused connection is safe. */
        if (maybe_applied && (resp->maybe_applied || resp->status >= 500)) *maybe_applied = true;
        if (retry >= r->cfg.retry.max_retries) {
            if (st == TL_OK) return TL_OK; /* the final 5xx answer, for the caller to report */
            tl_error_prefix(err, "after %d retries", retry);
            return st;
        }
        tl_http_response_clear(resp);
        tl_retry_sleep(&r->cfg.retry, retry + 1);
    }
}

/* The service's own error code and message, when the body carries one. */
static void error_detail(const tl_http_response *resp, char *out, size_t size)
{
    out[0] = '\0';
    const char *b = (const char *)resp->body.data;
    if (b == NULL) return;
    const char *code = strstr(b, "<Code>"), *msg = strstr(b, "\"message\"");
    if (code) {
        code += 6;
        const char *end = strchr(code, '<');
        snprintf(out, size, " %.*s", end ? (int)(end - code) : 64, code);
    } else if (msg) {
        snprintf(out, size, " %.120s", msg);
    } else {
        snprintf(out, size, " %.120s", b);
    }
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

tl_status tl_remote_fail(const tl_http_response *resp, const char *what, const char *key,
                         tl_error *err)
{
    char detail[160];
    error_detail(resp, detail, sizeof detail);
    if (resp->status == 404)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "%s %s: not found", what, key);
    if (resp->status == 401 || resp->status == 403)
        return tl_error_set(err, TL_ERR_STORAGE, "%s %s: access denied (HTTP %ld)%s", what, key,
                            resp->status, detail);
    return tl_error_set(err, TL_ERR_STORAGE, "%s %s: HTTP %ld%s", what, key, resp->status, detail);
}

/* Is the object at key exactly data? TL_OK yes, TL_ERR_EXISTS other bytes,
 * TL_ERR_NOT_FOUND absent, or a read error. */
static tl_status read_back(tl_remote *r, const char *key, const void *data, size_t len,
                           tl_error *err)
{
    tl_buf b = {0};
    tl_status st = r->base.ops->get(&r->base, key, &b, err);
    if (st == TL_OK && !(b.len == len && (len == 0 || memcmp(b.data, data, len) == 0)))
        st = tl_error_set(err, TL_ERR_EXISTS, "%s exists already", key);
    tl_buf_free(&b);
    return st;
}

static bool status_in(long status, const long *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == status) return true;
    return false;
}

tl_status tl_remote_put_if_absent(tl_remote *r, const tl_remote_call *call, const char *key,
                                  const void *data, size_t len, const long *lost, size_t n_lost,
                                  tl_error *err)
{
    bool unknown = false;
    for (int retry = 0;; retry++) {
        tl_http_response resp;
        tl_status st = r->attempt(r, call, &resp, err);
        long status = resp.status;
        bool retryable = tl_retry_retryable(st, &resp);
        if (retryable && (resp.maybe_applied || status >= 500)) unknown = true;
        if (st == TL_OK && status >= 200 && status < 300) {
            tl_http_response_clear(&resp);
            return TL_OK;
        }
        if (st == TL_OK && status_in(status, lost, n_lost)) {
            tl_http_response_clear(&resp);
            if (!unknown) return tl_error_set(err, TL_ERR_EXISTS, "%s exists already", key);
            /* Perhaps our own earlier attempt created it: look, never guess. */
            st = read_back(r, key, data, len, err);
            if (st != TL_ERR_NOT_FOUND) return st;
            unknown = false; /* gone again (deleted): try afresh */
            continue;
        }
        if (!retryable) {
            if (st == TL_OK) st = tl_remote_fail(&resp, "creating", key, err);
            tl_http_response_clear(&resp);
            return st;
        }
        tl_http_response_clear(&resp);
        if (retry >= r->cfg.retry.max_retries) break;
        tl_retry_sleep(&r->cfg.retry, retry + 1);
    }
    if (!unknown)
        return tl_error_set(err, TL_ERR_STORAGE, "creating %s: gave up after %d retries", key,
                            r->cfg.retry.max_retries);
    tl_status st = read_back(r, key, data, len, err);
    if (st == TL_ERR_NOT_FOUND)
        return tl_error_set(err, TL_ERR_STORAGE, "creating %s: gave up after %d retries", key,
                            r->cfg.retry.max_retries);
    if (st != TL_OK && st != TL_ERR_EXISTS)
        tl_error_prefix(err, "creating %s: outcome unknown", key);
    return st;
}

typedef struct put_job {
    tl_store *s;
    const tl_store_put_item *items;
} put_job;

static tl_status put_one(void *ctx, size_t i, tl_error *err)
{
    put_job *j = ctx;
    const tl_store_put_item *it = &j->items[i];
    return j->s->ops->put(j->s, it->key, it->data, it->len, err);
}

tl_status tl_store_put_parallel(tl_store *s, const tl_store_put_item *items, size_t n, int threads,
                                tl_error *err)
{
    put_job j = {s, items};
    return tl_parallel_run(n, threads < 1 ? 1 : (size_t)threads, true, put_one, &j, err);
}

tl_status tl_remote_list(tl_remote *r, const char *prefix, bool delimited, tl_remote_page_fn page,
                         tl_store_listing *out, tl_error *err)
{
    char *object_prefix = tl_remote_object(r, prefix);
    if (object_prefix == NULL) return tl_error_nomem(err);
    char *token = NULL;
    tl_status st;
    do {
        char *next = NULL;
        st = page(r, object_prefix, delimited, token, out, &next, err);
        free(token);
        token = next;
    } while (st == TL_OK && token);
    free(token);
    free(object_prefix);
    return st;
}

tl_status tl_remote_list_keys(tl_remote *r, const char *prefix, tl_remote_page_fn page,
                              tl_strlist *out, tl_error *err)
{
    tl_store_listing l = {0};
    tl_status st = tl_remote_list(r, prefix, false, page, &l, err);
    for (size_t i = 0; st == TL_OK && i < l.len; i++)
        if (tl_strlist_push(out, l.items[i].key) != 0) st = tl_error_nomem(err);
    tl_store_listing_free(&l);
    return st;
}

tl_status tl_remote_take_body(tl_http_response *resp, tl_buf *out, tl_error *err)
{
    tl_buf_free(out);
    *out = resp->body;
    resp->body = (tl_buf){0};
    if (out->data == NULL && tl_buf_reserve(out, 1) != 0) return tl_error_nomem(err);
    out->data[out->len] = '\0';
    return TL_OK;
}

void tl_remote_range_header(char *buf, size_t size, const char *name, uint64_t offset, size_t len)
{
    snprintf(buf, size, "%s: bytes=%llu-%llu", name, (unsigned long long)offset,
             (unsigned long long)(offset + len - 1));
}

/* The size after the slash of "bytes 0-E/TOTAL"; false when absent ("*") or malformed. */
static bool content_range_total(const char *v, uint64_t *total)
{
    const char *slash = v ? strchr(v, '/') : NULL;
    if (slash == NULL || slash[1] < '0' || slash[1] > '9') return false;
    char *end;
    *total = strtoull(slash + 1, &end, 10);
    return *end == '\0' || *end == '\r' || *end == ' ';
}

tl_status tl_remote_first_result(const tl_http_response *resp, const char *key, size_t len,
                                 size_t *got, uint64_t *total, tl_error *err)
{
    const char *cl = tl_http_header(resp, "content-length");
    bool known = resp->status == 206
                     ? content_range_total(tl_http_header(resp, "content-range"), total)
                     : cl != NULL && (*total = strtoull(cl, NULL, 10), true);
    if (!known)
        return tl_error_set(err, TL_ERR_STORAGE, "reading %s: the response does not give its size",
                            key);
    *got = resp->dst_written;
    size_t want = *total < len ? (size_t)*total : len;
    if (*got != want)
        return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %zu of its first %zu bytes received",
                            key, *got, want);
    return TL_OK;
}

tl_status tl_remote_check_range(const tl_http_response *resp, const char *key, uint64_t offset,
                                size_t len, tl_error *err)
{
    if (resp->dst_written == len) return TL_OK;
    return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %zu bytes at %llu: got %zu", key, len,
                        (unsigned long long)offset, resp->dst_written);
}

int tl_remote_push_folder(tl_remote *r, const char *name, tl_store_listing *out)
{
    size_t skip = r->cfg.prefix[0] ? strlen(r->cfg.prefix) + 1 : 0;
    if (name == NULL || strlen(name) <= skip) return 0;
    tl_store_listed *e = tl_store_listing_add(out, name + skip, 0, NULL);
    if (e == NULL) return -1;
    e->is_folder = true;
    return 0;
}

int64_t tl_remote_http_date_ms(const char *text)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *comma = text ? strchr(text, ',') : NULL;
    int day, year, h, m, s;
    char mon[4];
    if (comma == NULL ||
        sscanf(comma + 1, " %d %3s %d %d:%d:%d", &day, mon, &year, &h, &m, &s) != 6)
        return 0;
    const char *at = strstr(months, mon);
    if (strlen(mon) != 3 || at == NULL || (at - months) % 3 != 0) return 0;
    int64_t days = tl_days_from_civil(year, (int)(at - months) / 3 + 1, day);
    return ((days * 24 + h) * 60 + m) * 60000 + (int64_t)s * 1000;
}

int64_t tl_remote_iso_date_ms(const char *text)
{
    int64_t us;
    if (text == NULL ||
        tl_parse_timestamp_floor(text, strlen(text), TL_UNIT_MICRO, &us, NULL) != TL_OK)
        return 0;
    return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

tl_status tl_remote_stat_of_head(const tl_http_response *resp, const char *key,
                                 tl_store_listed *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    const char *cl = tl_http_header(resp, "content-length");
    if (cl == NULL) return tl_error_set(err, TL_ERR_STORAGE, "reading %s: no content-length", key);
    out->size = strtoull(cl, NULL, 10);
    out->modified_ms = tl_remote_http_date_ms(tl_http_header(resp, "last-modified"));
    if ((out->key = strdup(key)) == NULL ||
        tl_store_listed_set_etag(out, tl_http_header(resp, "etag")) != 0) {
        tl_store_listed_clear(out);
        return tl_error_nomem(err);
    }
    return TL_OK;
}

tl_status tl_remote_size_by_stat(tl_store *s, const char *key, uint64_t *out, tl_error *err)
{
    tl_store_listed e;
    TL_TRY(s->ops->stat(s, key, &e, err));
    *out = e.size;
    tl_store_listed_clear(&e);
    return TL_OK;
}
