/* The HTTP side of `karet serve`: requests as the handlers see them, the
 * route table, and the replies they give. serve_http.c turns libmicrohttpd's
 * callbacks into one call of a handler per request, after the route, the
 * caller's role, the origin and the body size have been checked. */
#ifndef KARET_SERVE_HTTP_H
#define KARET_SERVE_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "serve.h"

enum role { ROLE_NONE = 0, ROLE_VIEWER = 1, ROLE_EDITOR = 2, ROLE_ADMIN = 3 };

const char *role_name(int role);
/* ROLE_NONE for anything but "viewer", "editor", "admin". */
int role_parse(const char *name);

typedef struct principal {
    char username[64];
    int role;
    int service;           /* the worker token's service principal */
    char session_hash[65]; /* the session it came from ("" otherwise) */
} principal;

#define MAX_PARAMS 4
#define MAX_HEADERS 8

typedef struct http_resp {
    int status;
    json_t *json; /* a JSON body, or */
    char *raw;    /* a body of raw bytes (malloc'd), with content_type */
    size_t raw_len;
    const char *content_type;
    struct MHD_Response *stream; /* a response made by the handler itself (SSE) */
    char *headers[MAX_HEADERS][2];
    int n_headers;
} http_resp;

typedef struct http_req http_req;

typedef void (*handler_fn)(service *svc, http_req *rq, http_resp *out);
/* Streams a request body: called with each chunk; returns 0 to go on, or an
 * HTTP status to refuse the request (out filled). */
typedef int (*body_fn)(service *svc, http_req *rq, const char *data, size_t len, http_resp *out);

enum route_flags {
    ROUTE_PUBLIC = 1,  /* no credentials needed */
    ROUTE_WEBHOOK = 2, /* the webhook secret instead of a user */
    ROUTE_STREAM = 4,  /* the body goes to body_fn as it arrives, capped by max_upload */
    ROUTE_PAGE = 8,    /* a web page: without a session, a redirect to the sign-in page */
};

typedef struct route {
    const char *method;
    const char *pattern; /* segments; ":name" captures one */
    int role;            /* the least role that may call it */
    int flags;
    handler_fn fn;
    body_fn body;
} route;

struct http_req {
    struct MHD_Connection *conn;
    const route *route;
    const char *method;
    char *path;
    char *params[MAX_PARAMS]; /* captures of the route's ":name" segments, in order */
    int n_params;
    principal who;
    int authenticated;
    int via_cookie;
    char *body;
    size_t body_len, body_cap;
    int body_too_big;
    int64_t body_seen;
    int rejected;       /* a reply was already queued */
    void *stream_state; /* body_fn's */
    void (*stream_free)(void *);
    int64_t t0;
    char client[64];
    int status; /* for the log line */
};

/* Query-string and header values (NULL when absent). */
const char *req_query(http_req *rq, const char *name);
const char *req_header(http_req *rq, const char *name);
/* The request body parsed as a JSON object; NULL after replying 422/400. */
json_t *req_json_object(http_req *rq, http_resp *out);

void reply_json(http_resp *out, int status, json_t *body); /* consumes body */
void reply_error(http_resp *out, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void reply_header(http_resp *out, const char *name, const char *value);

/* The route tables: the API's (api_routes.c) and the pages' (web_routes.c). */
extern const route ROUTES[];
extern const size_t N_ROUTES;
extern const route WEB_ROUTES[];
extern const size_t N_WEB_ROUTES;

/* Authentication (auth_request.c): the caller of a request, from the worker
 * token or a session cookie. Returns 1 with *who filled, 0 when there are no
 * credentials, -1 when credentials were given and are wrong. */
int auth_identify(service *svc, http_req *rq, principal *who);
/* Why auth_identify's answer `who` (0 or -1) lets nobody in, and what to do:
 * the message of the 401. */
const char *auth_failure(service *svc, http_req *rq, int who);

/* Blocks SIGINT and SIGTERM in the calling thread, so in every thread it
 * creates from now on: the server takes them with sigwait. Must come before
 * the first thread (workers, the debouncer, the library's), or the kernel may
 * hand a signal to a thread that has it unblocked and the default action
 * kills the process mid-run. Ignores SIGPIPE. */
void http_block_signals(void);

/* Runs the server until SIGINT or SIGTERM (blocked by http_block_signals).
 * Returns 0, or 1 when it could not listen (err says why). */
int http_serve(service *svc, char *err, size_t errlen);

#endif
