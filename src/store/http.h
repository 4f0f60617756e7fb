/* A small HTTP client over libcurl for the object-store backends. Each client
 * keeps a pool of curl handles so that connections are reused, and may be used
 * from several threads at once (parallel uploads). */
#ifndef TL_STORE_HTTP_H
#define TL_STORE_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/strlist.h"

typedef struct tl_http_client tl_http_client;

typedef struct tl_http_request {
    const char *method; /* "GET", "PUT", "POST", "DELETE", "HEAD" */
    const char *url;
    const tl_strlist *headers; /* "Name: value" lines; may be NULL */
    const void *body;          /* for PUT/POST; may be NULL with body_len 0 */
    size_t body_len;
    uint8_t *dst; /* when set, the body is read straight into dst (at most dst_len bytes) */
    size_t dst_len;
} tl_http_request;

typedef struct tl_http_response {
    long status;        /* 0 when no response was received */
    tl_buf body;        /* unless the request had dst */
    size_t dst_written; /* bytes written to dst */
    tl_strlist headers; /* response headers, "name: value" with lower-case names */
    /* Set on a transport failure: may the server have acted on the request?
     * False only when the connection could not even be made. */
    bool maybe_applied;
    char transport_error[256]; /* empty unless the transport failed */
} tl_http_response;

typedef struct tl_http_timeouts {
    long connect_ms; /* 0: libcurl's default */
    long total_ms;   /* 0: none */
} tl_http_timeouts;

tl_status tl_http_client_new(const tl_http_timeouts *timeouts, tl_http_client **out, tl_error *err);

/* How the client's connections behave (object_store's client option names
 * in brackets); zero values keep libcurl's defaults. */
typedef struct tl_http_transport {
    bool insecure;           /* [allow_invalid_certificates] no TLS certificate checks */
    const char *user_agent;  /* [user_agent] NULL: libcurl's none */
    int64_t idle_ms;         /* [pool_idle_timeout] > 0: idle connections unused longer close */
    int max_idle;            /* [pool_max_idle_per_host] -1: POOL_MAX handles kept idle */
    bool shuffle;            /* [randomize_addresses] resolved addresses tried in random order */
    int http_version;        /* [http1_only] 1: HTTP/1.1 only; [http2_only] 2: HTTP/2 only */
    const char *upload_type; /* [default_content_type] Content-Type of bodies without one */
} tl_http_transport;

/* Applies `t` (copied) to every later request of the client. */
tl_status tl_http_client_set_transport(tl_http_client *c, const tl_http_transport *t,
                                       tl_error *err);

/* Sends every later request of the client through an HTTP(S) proxy (url; NULL:
 * none but the environment's, as curl reads it), except to the hosts of
 * `excludes` (curl's NOPROXY list: "host1,.domain"; may be NULL), trusting
 * the proxy's certificate by the CA bundle `ca` (may be NULL). The strings
 * are copied. */
tl_status tl_http_client_set_proxy(tl_http_client *c, const char *url, const char *excludes,
                                   const char *ca, tl_error *err);
void tl_http_client_free(tl_http_client *c);

/* Sends one request. TL_OK whenever an HTTP response arrived, whatever its
 * status; TL_ERR_STORAGE with resp->transport_error set when none did. The
 * caller frees the response with tl_http_response_clear. */
tl_status tl_http_send(tl_http_client *c, const tl_http_request *req, tl_http_response *resp,
                       tl_error *err);
void tl_http_response_clear(tl_http_response *resp);

/* The value of a response header (case-insensitive name), or NULL. */
const char *tl_http_header(const tl_http_response *resp, const char *name);

/* Percent-encodes s (RFC 3986 unreserved characters kept); '/' kept when keep_slash. */
int tl_http_encode(tl_buf *out, const char *s, bool keep_slash);

#endif
