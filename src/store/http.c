/* libcurl underneath the object-store backends. Handles are pooled per client:
 * a handle keeps its connections alive between requests, which saves a TCP
 * (and TLS) handshake per object. */
#include "store/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define POOL_MAX 16

struct tl_http_client {
    pthread_mutex_t lock;
    CURL *idle[POOL_MAX];
    size_t n_idle;
    tl_http_timeouts timeouts;
    char *proxy, *noproxy, *proxy_ca; /* tl_http_client_set_proxy; NULL: unset */
    tl_http_transport transport;      /* its strings owned */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

tl_status tl_http_client_new(const tl_http_timeouts *timeouts, tl_http_client **out, tl_error *err)
{
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return tl_error_set(err, TL_ERR_STORAGE, "initialising libcurl: %s",
                            curl_easy_strerror(global_rc));
    tl_http_client *c = calloc(1, sizeof *c);
    if (c == NULL) return tl_error_nomem(err);
    pthread_mutex_init(&c->lock, NULL);
    if (timeouts) c->timeouts = *timeouts;
    c->transport.max_idle = -1;
    *out = c;
    return TL_OK;
}

tl_status tl_http_client_set_proxy(tl_http_client *c, const char *url, const char *excludes,
                                   const char *ca, tl_error *err)
{
    const char *in[] = {url, excludes, ca};
    char **field[] = {&c->proxy, &c->noproxy, &c->proxy_ca};
    for (size_t i = 0; i < 3; i++) {
        free(*field[i]);
        *field[i] = in[i] ? strdup(in[i]) : NULL;
        if (in[i] && *field[i] == NULL) return tl_error_nomem(err);
    }
    return TL_OK;
}

tl_status tl_http_client_set_transport(tl_http_client *c, const tl_http_transport *t, tl_error *err)
{
    free((char *)c->transport.user_agent);
    free((char *)c->transport.upload_type);
    c->transport = *t;
    c->transport.user_agent = t->user_agent ? strdup(t->user_agent) : NULL;
    c->transport.upload_type = t->upload_type ? strdup(t->upload_type) : NULL;
    if ((t->user_agent && !c->transport.user_agent) ||
        (t->upload_type && !c->transport.upload_type))
        return tl_error_nomem(err);
    return TL_OK;
}

void tl_http_client_free(tl_http_client *c)
{
    if (c == NULL) return;
    free((char *)c->transport.user_agent);
    free((char *)c->transport.upload_type);
    free(c->proxy);
    free(c->noproxy);
    free(c->proxy_ca);
    for (size_t i = 0; i < c->n_idle; i++) curl_easy_cleanup(c->idle[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static CURL *take_handle(tl_http_client *c)
{
    pthread_mutex_lock(&c->lock);
    CURL *h = c->n_idle ? c->idle[--c->n_idle] : NULL;
    pthread_mutex_unlock(&c->lock);
    if (h) {
        curl_easy_reset(h);
        return h;
    }
    return curl_easy_init();
}

static void give_handle(tl_http_client *c, CURL *h, bool reusable)
{
    pthread_mutex_lock(&c->lock);
    size_t keep = c->transport.max_idle >= 0 && c->transport.max_idle < POOL_MAX
                      ? (size_t)c->transport.max_idle
                      : POOL_MAX;
    if (reusable && c->n_idle < keep) {
        c->idle[c->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (h) curl_easy_cleanup(h);
}

typedef struct sink {
    const tl_http_request *req;
    tl_http_response *resp;
    bool oom, overflow;
} sink;

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;
    if (s->req->dst) {
        if (s->resp->dst_written + len > s->req->dst_len) {
            s->overflow = true;
            return 0;
        }
        memcpy(s->req->dst + s->resp->dst_written, data, len);
        s->resp->dst_written += len;
        return len;
    }
    if (tl_buf_append(&s->resp->body, data, len) != 0) {
        s->oom = true;
        return 0;
    }
    return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;
    if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue or a redirect): forget the old headers. */
        tl_strlist_free(&s->resp->headers);
        return len;
    }
    const char *colon = memchr(data, ':', len);
    if (colon == NULL) return len;
    size_t name_len = (size_t)(colon - data);
    const char *v = colon + 1, *end = data + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    char *line = malloc(name_len + 2 + (size_t)(end - v) + 1);
    if (line == NULL) {
        s->oom = true;
        return 0;
    }
    for (size_t i = 0; i < name_len; i++) line[i] = (char)tolower((unsigned char)data[i]);
    memcpy(line + name_len, ": ", 2);
    memcpy(line + name_len + 2, v, (size_t)(end - v));
    line[name_len + 2 + (size_t)(end - v)] = '\0';
    if (tl_strlist_push_owned(&s->resp->headers, line) != 0) {
        free(line);
        s->oom = true;
        return 0;
    }
    return len;
}

static struct curl_slist *build_headers(const tl_http_request *req, const char *upload_type,
                                        bool *oom)
{
    struct curl_slist *list = NULL, *next;
    /* No "Expect: 100-continue" round trip before large uploads. */
    const char *fixed[] = {"Expect:", "Accept:", NULL};
    for (size_t i = 0; fixed[i]; i++) {
        if ((next = curl_slist_append(list, fixed[i])) == NULL) goto fail;
        list = next;
    }
    /* Without this, curl would label every upload as a form. */
    bool has_type = false;
    for (size_t i = 0; req->headers && i < req->headers->len; i++)
        has_type |= strncasecmp(req->headers->items[i], "content-type:", 13) == 0;
    if (!has_type && (req->body || !strcmp(req->method, "PUT") || !strcmp(req->method, "POST"))) {
        char line[512];
        snprintf(line, sizeof line, "Content-Type: %s",
                 upload_type ? upload_type : "application/octet-stream");
        if ((next = curl_slist_append(list, line)) == NULL) goto fail;
        list = next;
    }
    for (size_t i = 0; req->headers && i < req->headers->len; i++) {
        if ((next = curl_slist_append(list, req->headers->items[i])) == NULL) goto fail;
        list = next;
    }
    return list;
fail:
    *oom = true;
    curl_slist_free_all(list);
    return NULL;
}

static void set_method(CURL *h, const tl_http_request *req)
{
    if (strcmp(req->method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (req->body != NULL || strcmp(req->method, "PUT") == 0 ||
               strcmp(req->method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? (const char *)req->body : "");
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        if (strcmp(req->method, "GET") != 0)
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
    }
}

static void set_transport(CURL *h, const tl_http_transport *t)
{
    if (t->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (t->user_agent) curl_easy_setopt(h, CURLOPT_USERAGENT, t->user_agent);
    if (t->idle_ms > 0) curl_easy_setopt(h, CURLOPT_MAXAGE_CONN, (long)((t->idle_ms + 999) / 1000));
    if (t->shuffle) curl_easy_setopt(h, CURLOPT_DNS_SHUFFLE_ADDRESSES, 1L);
    if (t->http_version == 1) curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    if (t->http_version == 2)
        curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
}

tl_status tl_http_send(tl_http_client *c, const tl_http_request *req, tl_http_response *resp,
                       tl_error *err)
{
    memset(resp, 0, sizeof *resp);
    CURL *h = take_handle(c);
    if (h == NULL) return tl_error_nomem(err);
    bool oom = false;
    struct curl_slist *headers = build_headers(req, c->transport.upload_type, &oom);
    if (oom) {
        give_handle(c, h, true);
        return tl_error_nomem(err);
    }
    sink s = {.req = req, .resp = resp};
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(h, CURLOPT_URL, req->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    if (c->timeouts.connect_ms > 0)
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeouts.connect_ms);
    if (c->timeouts.total_ms > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeouts.total_ms);
    if (c->proxy) curl_easy_setopt(h, CURLOPT_PROXY, c->proxy);
    if (c->noproxy) curl_easy_setopt(h, CURLOPT_NOPROXY, c->noproxy);
    if (c->proxy_ca) curl_easy_setopt(h, CURLOPT_PROXY_CAINFO, c->proxy_ca);
    set_transport(h, &c->transport);
    set_method(h, req);
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(headers);
    tl_status st = TL_OK;
    if (s.oom) {
        st = tl_error_nomem(err);
    } else if (rc == CURLE_WRITE_ERROR && s.overflow) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
        if (resp->status >= 200 && resp->status < 300)
            st = tl_error_set(err, TL_ERR_STORAGE, "%s %s: response longer than requested",
                              req->method, req->url);
        /* else: an error body to a ranged read; the status says what happened. */
    } else if (rc != CURLE_OK) {
        long sent = 0;
        curl_easy_getinfo(h, CURLINFO_REQUEST_SIZE, &sent);
        resp->maybe_applied =
            sent > 0 && rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST;
        resp->status = 0;
        snprintf(resp->transport_error, sizeof resp->transport_error, "%s",
                 curl_err[0] ? curl_err : curl_easy_strerror(rc));
        st = tl_error_set(err, TL_ERR_STORAGE, "%s %s: %s", req->method, req->url,
                          resp->transport_error);
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    }
    give_handle(c, h, rc == CURLE_OK);
    return st;
}

void tl_http_response_clear(tl_http_response *resp)
{
    tl_buf_free(&resp->body);
    tl_strlist_free(&resp->headers);
}

const char *tl_http_header(const tl_http_response *resp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < resp->headers.len; i++) {
        const char *line = resp->headers.items[i];
        if (strncasecmp(line, name, n) == 0 && line[n] == ':') return line + n + 2;
    }
    return NULL;
}

int tl_http_encode(tl_buf *out, const char *s, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int rc;
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
            (keep_slash && *p == '/')) {
            rc = tl_buf_append_byte(out, *p);
        } else {
            char enc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = tl_buf_append(out, enc, 3);
        }
        if (rc != 0) return -1;
    }
    return 0;
}
