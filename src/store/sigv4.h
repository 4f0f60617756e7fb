/* AWS Signature Version 4 for S3 requests. */
#ifndef TL_STORE_SIGV4_H
#define TL_STORE_SIGV4_H

#include "core/error.h"
#include "core/strlist.h"

typedef struct tl_aws_credentials {
    const char *key_id;
    const char *secret;
    const char *token; /* session token; may be NULL */
} tl_aws_credentials;

typedef struct tl_sigv4_request {
    const char *method;
    const char *host;           /* as sent in the Host header (with :port when not default) */
    const char *path;           /* canonical URI: already percent-encoded, starts with '/' */
    const char *query;          /* canonical query string (sorted, encoded), "" when none */
    const char *payload_sha256; /* hex SHA-256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *amz_date;       /* "YYYYMMDDTHHMMSSZ" */
    const char *region;
    const char *service; /* "s3" */
    /* Further headers to sign and send, "name: value" with lower-case names. */
    const tl_strlist *headers;
} tl_sigv4_request;

/* Appends to `out` the headers to send: x-amz-date, x-amz-content-sha256,
 * x-amz-security-token (with a session token) and Authorization. */
tl_status tl_sigv4_sign(const tl_sigv4_request *req, const tl_aws_credentials *cred,
                        tl_strlist *out, tl_error *err);

/* The current time as "YYYYMMDDTHHMMSSZ". */
void tl_amz_date_now(char out[17]);

#endif
