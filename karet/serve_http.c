/* libmicrohttpd glue: a thread per connection (so a server-sent event stream
 * or a slow upload holds up nobody else), every check that can be made before
 * the body is read made then, and one JSON log line per request. */
#include "serve_http.h"
#include "json_text.h"
#include "web.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JSON_BODY_MAX (4 << 20)
#define PAGE_CSP                                                                                   \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

static const char *const ROLE_NAMES[] = {"none", "viewer", "editor", "admin"};

const char *role_name(int role)
{
    return role >= 0 && role <= ROLE_ADMIN ? ROLE_NAMES[role] : "none";
}

int role_parse(const char *name)
{
    for (int r = ROLE_VIEWER; name && r <= ROLE_ADMIN; r++)
        if (strcmp(name, ROLE_NAMES[r]) == 0) return r;
    return ROLE_NONE;
}

const char *req_query(http_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *req_header(http_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

void reply_json(http_resp *out, int status, json_t *body)
{
    json_decref(out->json);
    out->status = status;
    out->json = body ? body : json_object();
}

void reply_error(http_resp *out, int status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    reply_json(out, status, json_pack("{s:s,s:s}", "error", code, "message", msg));
}

void reply_header(http_resp *out, const char *name, const char *value)
{
    if (out->n_headers == MAX_HEADERS) return;
    out->headers[out->n_headers][0] = strdup(name);
    out->headers[out->n_headers][1] = strdup(value);
    out->n_headers++;
}

json_t *req_json_object(http_req *rq, http_resp *out)
{
    json_error_t je;
    if (rq->body_len == 0) {
        reply_error(out, 422, "invalid_json", "the request needs a JSON object body");
        return NULL;
    }
    json_t *j = kjson_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL && json_error_code(&je) == json_error_out_of_memory) {
        reply_error(out, 503, "out_of_memory",
                    "the server ran out of memory reading the body: retry");
        return NULL;
    }
    if (j == NULL) {
        reply_error(out, 422, "invalid_json", "malformed JSON at line %d, column %d: %s", je.line,
                    je.column, je.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        reply_error(out, 422, "invalid_json", "the body must be a JSON object");
        return NULL;
    }
    return j;
}

static void resp_clear(http_resp *r)
{
    json_decref(r->json);
    free(r->raw);
    for (int i = 0; i < r->n_headers; i++) free(r->headers[i][0]), free(r->headers[i][1]);
    memset(r, 0, sizeof *r);
}

/* Queues the reply; the response struct is emptied either way. */
static enum MHD_Result send_reply(http_req *rq, http_resp *r)
{
    struct MHD_Response *resp = r->stream;
    if (resp == NULL && r->raw) {
        resp = MHD_create_response_from_buffer(r->raw_len, r->raw, MHD_RESPMEM_MUST_FREE);
        r->raw = NULL;
    } else if (resp == NULL) {
        char *text = kjson_dumps(r->json ? r->json : json_object(), JSON_COMPACT);
        size_t len = text ? strlen(text) : 0;
        /* Ends with a newline, so what curl prints, and the prompt after it,
         * keep their own lines. */
        char *line = text ? realloc(text, len + 2) : NULL;
        if (line) line[len++] = '\n', line[len] = 0, text = line;
        resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
        if (resp) MHD_add_response_header(resp, "Content-Type", "application/json");
    }
    if (resp == NULL) {
        resp_clear(r);
        return MHD_NO;
    }
    if (r->content_type) MHD_add_response_header(resp, "Content-Type", r->content_type);
    int cache_set = 0;
    for (int i = 0; i < r->n_headers; i++) {
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
        cache_set |= strcasecmp(r->headers[i][0], "Cache-Control") == 0;
    }
    if (!cache_set) MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->content_type && strncmp(r->content_type, "text/html", 9) == 0) {
        /* Pages load nothing from elsewhere and run no inline script. */
        MHD_add_response_header(resp, "Content-Security-Policy", PAGE_CSP);
        MHD_add_response_header(resp, "X-Frame-Options", "DENY");
        MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
    }
    int status = r->status ? r->status : 200;
    rq->status = status;
    enum MHD_Result ok = MHD_queue_response(rq->conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    r->stream = NULL;
    resp_clear(r);
    return ok;
}

static enum MHD_Result reject(http_req *rq, int status, const char *code, const char *msg)
{
    http_resp r = {0};
    reply_error(&r, status, code, "%s", msg);
    if (status == 401) reply_header(&r, "WWW-Authenticate", "Bearer");
    rq->rejected = 1;
    return send_reply(rq, &r);
}

/* Splits path into segments (at most 16) in place; returns how many. */
static int split_path(char *path, char **seg, int max)
{
    int n = 0;
    for (char *s = path; *s && n < max;) {
        while (*s == '/') s++;
        if (*s == 0) break;
        seg[n++] = s;
        char *slash = strchr(s, '/');
        if (slash == NULL) break;
        *slash = 0;
        s = slash + 1;
    }
    return n;
}

/* 1 when the route's pattern matches path (params captured into rq). */
static int pattern_match(const char *pattern, const char *path, http_req *rq)
{
    char pbuf[256], ubuf[2048];
    char *pseg[16], *useg[17];
    if (strlen(pattern) >= sizeof pbuf || strlen(path) >= sizeof ubuf) return 0;
    strcpy(pbuf, pattern);
    strcpy(ubuf, path);
    int np = split_path(pbuf, pseg, 16), nu = split_path(ubuf, useg, 17);
    if (np != nu) return 0;
    for (int i = 0; i < np; i++)
        if (pseg[i][0] != ':' && strcmp(pseg[i], useg[i]) != 0) return 0;
    if (rq == NULL) return 1;
    rq->n_params = 0;
    for (int i = 0; i < np && rq->n_params < MAX_PARAMS; i++)
        if (pseg[i][0] == ':') rq->params[rq->n_params++] = strdup(useg[i]);
    return 1;
}

static const route *match_in(const route *table, size_t n, http_req *rq, const char *method,
                             int *path_known)
{
    for (size_t i = 0; i < n; i++) {
        if (!pattern_match(table[i].pattern, rq->path, NULL)) continue;
        *path_known = 1;
        if (strcmp(table[i].method, method) == 0) {
            pattern_match(table[i].pattern, rq->path, rq);
            return &table[i];
        }
    }
    return NULL;
}

/* The route for the request: *path_known says whether any method matches. */
static const route *find_route(http_req *rq, int *path_known)
{
    *path_known = 0;
    const char *method = strcmp(rq->method, "HEAD") == 0 ? "GET" : rq->method;
    const route *rt = match_in(ROUTES, N_ROUTES, rq, method, path_known);
    return rt ? rt : match_in(WEB_ROUTES, N_WEB_ROUTES, rq, method, path_known);
}

/* Requests that change state with a session cookie must come from a page of
 * this server: the Origin (or, without it, the Referer) names our host. */
static int same_origin(http_req *rq)
{
    const char *host = req_header(rq, "Host");
    const char *origin = req_header(rq, "Origin");
    const char *from = origin ? origin : req_header(rq, "Referer");
    if (host == NULL || from == NULL) return 0;
    const char *p = strstr(from, "://");
    if (p == NULL) return 0;
    p += 3;
    size_t hl = strlen(host);
    return strncmp(p, host, hl) == 0 && (p[hl] == 0 || p[hl] == '/');
}

static int wants_html(http_req *rq)
{
    const char *accept = req_header(rq, "Accept");
    return accept && strstr(accept, "text/html") != NULL;
}

static enum MHD_Result reject_page(service *svc, http_req *rq, int status, const char *title,
                                   const char *msg)
{
    http_resp r = {0};
    page_error(svc, rq, &r, status, title, msg);
    rq->rejected = 1;
    return send_reply(rq, &r);
}

/* A page needs a signed-in caller (else: the sign-in page, then back here)
 * with the route's role. */
static enum MHD_Result admit_page(service *svc, http_req *rq, int who)
{
    if (who != 1) {
        kbuf loc = {0};
        kbuf_puts(&loc, "/sign-in?next=");
        url_esc(&loc, rq->path);
        http_resp r = {0};
        reply_redirect(&r, kbuf_cstr(&loc));
        kbuf_free(&loc);
        rq->rejected = 1;
        return send_reply(rq, &r);
    }
    if (rq->who.role < rq->route->role) {
        char msg[160];
        snprintf(msg, sizeof msg, "This page needs the %s role; you are %s.",
                 role_name(rq->route->role), role_name(rq->who.role));
        return reject_page(svc, rq, 403, "Not allowed", msg);
    }
    return MHD_YES;
}

static int64_t declared_length(http_req *rq)
{
    const char *len = req_header(rq, "Content-Length");
    return len ? strtoll(len, NULL, 10) : -1;
}

/* Everything decided before the body is read. Returns MHD_YES to read on. */
static enum MHD_Result admit(service *svc, http_req *rq)
{
    int known;
    const route *rt = find_route(rq, &known);
    int who = auth_identify(svc, rq, &rq->who);
    rq->authenticated = who == 1;
    if (rt == NULL) {
        int api = strncmp(rq->path, "/api/", 5) == 0;
        if (api && who != 1) return reject(rq, 401, "unauthorized", auth_failure(svc, rq, who));
        if (!api && !known && wants_html(rq))
            return reject_page(svc, rq, 404, "Not found", "There is no page at this address.");
        if (known)
            return reject(rq, 405, "method_not_allowed", "this path does not take that method");
        return reject(rq, 404, "not_found", "no such route: docs/karet.md lists the API");
    }
    rq->route = rt;
    if (rt->flags & ROUTE_PAGE) return admit_page(svc, rq, who);
    if (!(rt->flags & (ROUTE_PUBLIC | ROUTE_WEBHOOK))) {
        if (who != 1) return reject(rq, 401, "unauthorized", auth_failure(svc, rq, who));
        if (rq->who.role < rt->role) {
            char msg[160];
            snprintf(msg, sizeof msg, "this action needs the %s role; you are %s",
                     role_name(rt->role), role_name(rq->who.role));
            return reject(rq, 403, "forbidden", msg);
        }
        int writes = strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0;
        if (writes && rq->via_cookie && !same_origin(rq))
            return reject(rq, 403, "cross_origin",
                          "a request that changes state with a session cookie must come "
                          "from this server's own pages (Origin header)");
    }
    int64_t declared = declared_length(rq);
    int64_t cap = rt->flags & ROUTE_STREAM ? svc->cfg.max_upload : JSON_BODY_MAX;
    if (declared > cap) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body is %lld bytes; at most %lld are accepted",
                 (long long)declared, (long long)cap);
        return reject(rq, 413, "too_large", msg);
    }
    if (rt->flags & ROUTE_STREAM) { /* checks its target and opens it */
        http_resp r = {0};
        if (rt->body(svc, rq, NULL, 0, &r) != 0) {
            rq->rejected = 1;
            return send_reply(rq, &r);
        }
    }
    return MHD_YES;
}

static enum MHD_Result take_body(service *svc, http_req *rq, const char *data, size_t len)
{
    const route *rt = rq->route;
    rq->body_seen += (int64_t)len;
    int64_t cap = rt->flags & ROUTE_STREAM ? svc->cfg.max_upload : JSON_BODY_MAX;
    if (rq->body_seen > cap) {
        rq->body_too_big = 1;
        free(rq->body);
        rq->body = NULL;
        rq->body_len = rq->body_cap = 0;
        return MHD_YES;
    }
    if (rq->body_too_big) return MHD_YES;
    if (rt->flags & ROUTE_STREAM) {
        http_resp r = {0};
        if (rt->body(svc, rq, data, len, &r) != 0) {
            rq->rejected = 1;
            return send_reply(rq, &r);
        }
        return MHD_YES;
    }
    if (rq->body_len + len > rq->body_cap) {
        size_t cap2 = rq->body_cap ? rq->body_cap * 2 : 4096;
        while (cap2 < rq->body_len + len) cap2 *= 2;
        char *nb = realloc(rq->body, cap2);
        if (nb == NULL) return MHD_NO;
        rq->body = nb;
        rq->body_cap = cap2;
    }
    memcpy(rq->body + rq->body_len, data, len);
    rq->body_len += len;
    return MHD_YES;
}

static void client_address(struct MHD_Connection *c, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(buf, len, "unknown");
    if (ci == NULL || ci->client_addr == NULL) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    service *svc = cls;
    http_req *rq = *con_cls;
    if (rq == NULL) {
        if ((rq = calloc(1, sizeof *rq)) == NULL) return MHD_NO;
        *con_cls = rq;
        rq->conn = c;
        rq->method = method;
        rq->path = strdup(url);
        rq->t0 = mono_ms();
        client_address(c, rq->client, sizeof rq->client);
        if (rq->path == NULL) return MHD_NO;
        return admit(svc, rq);
    }
    if (rq->rejected) {
        *upload_size = 0; /* the reply is queued: drop the rest of the body */
        return MHD_YES;
    }
    if (*upload_size > 0) {
        enum MHD_Result ok = take_body(svc, rq, upload, *upload_size);
        *upload_size = 0;
        return ok;
    }
    if (rq->body_too_big) {
        char msg[96];
        snprintf(
            msg, sizeof msg, "the body is larger than the %lld bytes accepted",
            (long long)(rq->route->flags & ROUTE_STREAM ? svc->cfg.max_upload : JSON_BODY_MAX));
        return reject(rq, 413, "too_large", msg);
    }
    http_resp r = {0};
    rq->route->fn(svc, rq, &r);
    rq->rejected = 1;
    return send_reply(rq, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c;
    http_req *rq = *con_cls;
    if (rq == NULL) return;
    json_t *line = json_pack("{s:s,s:s,s:s,s:i,s:I,s:s}", "event", "request", "method", rq->method,
                             "path", rq->path ? rq->path : "", "status", rq->status, "ms",
                             (json_int_t)(mono_ms() - rq->t0), "client", rq->client);
    if (rq->authenticated) json_object_set_new(line, "user", json_string(rq->who.username));
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        json_object_set_new(line, "aborted", json_true());
    log_json(line);
    if (rq->stream_free) rq->stream_free(rq->stream_state);
    for (int i = 0; i < rq->n_params; i++) free(rq->params[i]);
    free(rq->body);
    free(rq->path);
    free(rq);
    *con_cls = NULL;
}

static struct MHD_Daemon *start_daemon(service *svc, const struct sockaddr *addr, unsigned flags)
{
    return MHD_start_daemon(
        flags | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
        (uint16_t)svc->cfg.port, NULL, NULL, on_request, svc, MHD_OPTION_SOCK_ADDR, addr,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)128, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, NULL, MHD_OPTION_END);
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

void http_block_signals(void)
{
    sigset_t set;
    stop_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int http_serve(service *svc, char *err, size_t errlen)
{
    const char *host = svc->cfg.listen_host ? svc->cfg.listen_host : "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    unsigned flags = 0;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)svc->cfg.port);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)svc->cfg.port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, errlen, "bad listen address \"%s\" (an IPv4 or IPv6 address)", host);
        return 1;
    }
    sigset_t set;
    stop_signals(&set);
    struct MHD_Daemon *d = start_daemon(svc, (const struct sockaddr *)&ss, flags);
    if (d == NULL) {
        snprintf(err, errlen, "cannot listen on %s:%d (in use?)", host, svc->cfg.port);
        return 1;
    }
    if (svc->cfg.port == 0) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        if (di) svc->cfg.port = di->port;
    }
    serve_started(svc);
    int sig;
    sigwait(&set, &sig);
    log_json(json_pack("{s:s,s:i}", "event", "stopping", "signal", sig));
    svc->stopping = 1;
    serve_stopping(svc);
    MHD_quiesce_daemon(d);
    MHD_stop_daemon(d);
    return 0;
}
