/* The HTTP side of the notification server (libmicrohttpd, one thread per
 * connection so that a request waiting for one table's lock never holds up
 * requests for other tables). */
#include <arpa/inet.h>
#include <jansson.h>
#include <malloc.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../karet/json_text.h"
#include "../karet/strbuf.h"
#include "notify.h"
#include "notify_auth.h"
#include "notify_fanout.h"
#include "notify_guard.h"
#include "notify_load.h"

typedef struct request {
    kbuf body;
    int reject;         /* an HTTP status decided before the body was read */
    const char *reason; /* ... and why (static) */
    bool too_big;
} request;

static enum MHD_Result respond(struct MHD_Connection *c, int status, json_t *j)
{
    char *s = j ? kjson_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    const char *text = s ? s : "{}";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    free(s);
    if (r == NULL) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result respond_error(struct MHD_Connection *c, int status, const char *reason)
{
    return respond(c, status, json_pack("{s:s}", "error", reason));
}

static void log_bad_request(int status, const char *reason)
{
    json_t *j = json_pack("{s:s,s:i,s:s}", "event", "rejected", "status", status, "error", reason);
    char *s = j ? kjson_dumps(j, JSON_COMPACT) : NULL;
    if (s) fprintf(stderr, "%s\n", s);
    free(s);
    json_decref(j);
}

/* Checks made before any of the body is read. Returns 0 to go on. */
static int precheck(const tl_notify_config *cfg, struct MHD_Connection *c, const char **reason)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!tl_notify_auth_ok(auth, cfg->token))
        return *reason = auth ? "wrong token" : "missing Authorization: Bearer header", 401;
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (len && strtoull(len, NULL, 10) > cfg->max_body)
        return *reason = "request body too large", 413;
    return 0;
}

/* Loads the events of a request side by side (notify_fanout.h); the
 * answer lists their outcomes in the request's order. */
static enum MHD_Result handle_events(tl_notify_ingest *in, struct MHD_Connection *c, request *rq)
{
    const tl_notify_config *cfg = in->cfg;
    tl_notify_events ev;
    tl_error err = {0};
    if (tl_notify_events_parse(rq->body.data, rq->body.len, cfg->max_events, &ev, &err) != TL_OK) {
        /* Out of memory is the server's failure, not the sender's: a 4xx
         * would make it drop the notifications for good. */
        int status = err.code == TL_ERR_NOMEM ? 503 : 400;
        log_bad_request(status, err.message);
        return respond_error(c, status, err.message);
    }
    double t0 = tl_notify_now_ms();
    size_t why_size = TL_ERROR_MESSAGE_MAX + 256;
    int *statuses = calloc((size_t)ev.n + 1, sizeof *statuses);
    char *whys = calloc((size_t)ev.n + 1, why_size);
    if (statuses == NULL || whys == NULL) {
        free(statuses);
        free(whys);
        tl_notify_events_free(&ev);
        return respond_error(c, 503, "out of memory");
    }
    tl_notify_load_all(in, &ev, t0, cfg->deadline_s * 1000, statuses, whys, why_size);
    int worst = 200;
    json_t *results = json_array();
    for (int i = 0; i < ev.n; i++) {
        int status = statuses[i];
        /* A transient failure wins (the sender retries, and what was loaded
         * is then a duplicate); otherwise a permanent one is reported. */
        if (status >= 500 || (status >= 400 && worst < 400)) worst = status;
        json_array_append_new(results, json_pack("{s:s,s:i,s:s}", "key", ev.items[i].key, "status",
                                                 status, "detail", whys + (size_t)i * why_size));
    }
    free(statuses);
    free(whys);
    tl_notify_events_free(&ev);
    return respond(c, worst, json_pack("{s:i,s:o}", "status", worst, "results", results));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    tl_notify_ingest *in = cls;
    request *rq = *con_cls;
    tl_notify_guard_headers_done(in->guard, c);
    if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
        if (strcmp(url, "/health") == 0) return respond(c, 200, json_pack("{s:s}", "status", "ok"));
        return respond_error(c, 404, "not found: POST notifications, GET /health");
    }
    if (strcmp(method, "POST") != 0) return respond_error(c, 405, "method not allowed");
    if (rq == NULL) {
        if ((rq = calloc(1, sizeof *rq)) == NULL) return MHD_NO;
        *con_cls = rq;
        rq->reject = precheck(in->cfg, c, &rq->reason);
        /* Refused before the body is read: the body is never buffered. */
        if (rq->reject) {
            log_bad_request(rq->reject, rq->reason);
            return respond_error(c, rq->reject, rq->reason);
        }
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (!rq->too_big && rq->body.len + *upload_size > in->cfg->max_body) {
            rq->too_big = true; /* a body without Content-Length: drop it, answer at the end */
            kbuf_free(&rq->body);
        }
        if (!rq->too_big) kbuf_putn(&rq->body, upload, *upload_size);
        if (rq->body.oom) return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_big) return respond_error(c, 413, "request body too large");
    return handle_events(in, c, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    tl_notify_ingest *in = cls;
    tl_notify_guard_request_done(in->guard, c); /* a kept-alive connection awaits the next */
    request *rq = *con_cls;
    if (rq == NULL) return;
    kbuf_free(&rq->body);
    free(rq);
    *con_cls = NULL;
}

/* The listen address: --bind (IPv4 or IPv6), else every interface of both
 * families (one dual-stack socket, or IPv4 alone where IPv6 is off). */
static bool listen_address(const tl_notify_config *cfg, struct sockaddr_storage *addr,
                           unsigned *flags)
{
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    memset(addr, 0, sizeof *addr);
    if (cfg->bind && inet_pton(AF_INET, cfg->bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)cfg->port);
        return true;
    }
    if (cfg->bind && inet_pton(AF_INET6, cfg->bind, &v6->sin6_addr) != 1) return false;
    if (cfg->bind == NULL) v6->sin6_addr = in6addr_any;
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)cfg->port);
    *flags |= cfg->bind ? MHD_USE_IPv6 : MHD_USE_DUAL_STACK;
    return true;
}

static struct MHD_Daemon *start_on(const tl_notify_config *cfg, tl_notify_ingest *in,
                                   unsigned flags, const struct sockaddr *addr)
{
    return MHD_start_daemon(
        flags | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
        (uint16_t)cfg->port, NULL, NULL, on_request, in, MHD_OPTION_SOCK_ADDR, addr,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout_s, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)cfg->max_per_client, MHD_OPTION_NOTIFY_CONNECTION, tl_notify_guard_connection,
        in->guard, MHD_OPTION_NOTIFY_COMPLETED, on_completed, in, MHD_OPTION_END);
}

static struct MHD_Daemon *start_daemon(const tl_notify_config *cfg, tl_notify_ingest *in,
                                       tl_error *err)
{
    struct sockaddr_storage addr;
    unsigned flags = 0;
    if (!listen_address(cfg, &addr, &flags)) {
        cli_error_set(err, TL_ERR_INVALID, "bad listen address \"%s\" (an IPv4 or IPv6 address)",
                      cfg->bind);
        return NULL;
    }
    struct MHD_Daemon *d = start_on(cfg, in, flags, (const struct sockaddr *)&addr);
    if (d == NULL && cfg->bind == NULL) { /* no IPv6 here: IPv4 alone */
        struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
        v4.sin_addr.s_addr = htonl(INADDR_ANY);
        d = start_on(cfg, in, 0, (const struct sockaddr *)&v4);
    }
    if (d == NULL)
        cli_error_set(err, TL_ERR_STORAGE, "cannot listen on port %d (in use?)", cfg->port);
    return d;
}

/* The tables of the routes and the default table, all opened at start so a
 * typo fails now rather than at the first notification. */
static tl_status open_tables(const tl_notify_config *cfg, tl_notify_tables **out, tl_error *err)
{
    const char **names = calloc((size_t)cfg->n_routes + 1, sizeof *names);
    if (names == NULL) return cli_error_nomem(err);
    int n = 0;
    for (int i = 0; i < cfg->n_routes; i++) names[n++] = cfg->routes[i].table;
    if (cfg->default_table) names[n++] = cfg->default_table;
    tl_status st = n ? tl_notify_tables_open(cfg->lake, cfg->lake_options, names, n, out, err)
                     : cli_error_set(err, TL_ERR_INVALID, "no table: give --table or --route");
    free(names);
    return st;
}

static void wait_for_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    int sig;
    sigwait(&set, &sig);
}

tl_status tl_notify_serve(const tl_notify_config *cfg, tl_error *err)
{
    if (cfg->token == NULL || cfg->token[0] == 0)
        return cli_error_set(err, TL_ERR_INVALID, "no token: set NOTIFY_TOKEN or --token");
    /* Every load allocates and frees buffers of megabytes: keep them in the
     * heap for the next one rather than mapping fresh zeroed pages each time.
     * 32 MiB is glibc's largest threshold on 64-bit: mallopt refuses more and
     * the threshold stayed dynamic (a fifth of the server's CPU went to
     * zeroing fresh pages). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    /* Every thread leaves the signals to sigwait: blocked before any thread
     * starts (the tables' maintainers, the server's), as threads inherit the
     * mask; a thread that did not block SIGTERM would be killed by it. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    tl_notify_ingest in = {.cfg = cfg};
    CLI_TRY(open_tables(cfg, &in.tables, err));
    tl_status st = tl_notify_landing_new(cfg->landing_options, &in.landing, err);
    if (st == TL_OK && (in.guard = tl_notify_guard_start(cfg->header_timeout_s)) == NULL)
        st = cli_error_set(err, TL_ERR_NOMEM, "cannot start the connection guard");
    struct MHD_Daemon *d = st == TL_OK ? start_daemon(cfg, &in, err) : NULL;
    if (d) {
        printf("{\"event\":\"listening\",\"port\":%d}\n", cfg->port);
        fflush(stdout);
        wait_for_signal();
        /* Stop accepting, then let the requests in flight finish. */
        MHD_quiesce_daemon(d);
        MHD_stop_daemon(d);
        printf("{\"event\":\"stopped\"}\n");
        fflush(stdout);
    } else if (st == TL_OK) {
        st = err ? err->code : TL_ERR_STORAGE;
    }
    tl_notify_guard_stop(in.guard);
    tl_notify_landing_free(in.landing);
    tl_notify_tables_free(in.tables);
    return st;
}
