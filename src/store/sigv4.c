/* SigV4: a canonical request, hashed into a string to sign, signed with a key
 * derived from the secret, the date, the region and the service. */
#include "store/sigv4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "store/digest.h"

typedef struct header {
    const char *name;
    size_t name_len;
    const char *value;
} header;

static int cmp_header(const void *a, const void *b)
{
    const header *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static header split(const char *line)
{
    const char *colon = strchr(line, ':');
    const char *v = colon ? colon + 1 : line + strlen(line);
    while (*v == ' ') v++;
    return (header){line, colon ? (size_t)(colon - line) : strlen(line), v};
}

/* Canonical headers and the signed-header list, over host, the x-amz headers
 * we add and the caller's. */
static int canonical_headers(const tl_sigv4_request *req, const tl_strlist *added, tl_buf *canon,
                             tl_buf *names)
{
    size_t n = 1 + added->len + (req->headers ? req->headers->len : 0);
    header *h = calloc(n, sizeof *h);
    if (h == NULL) return -1;
    size_t k = 0;
    h[k++] = (header){"host", 4, req->host};
    for (size_t i = 0; i < added->len; i++) h[k++] = split(added->items[i]);
    for (size_t i = 0; req->headers && i < req->headers->len; i++)
        h[k++] = split(req->headers->items[i]);
    qsort(h, k, sizeof *h, cmp_header);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k; i++) {
        rc |= tl_buf_append(canon, h[i].name, h[i].name_len);
        rc |= tl_buf_printf(canon, ":%s\n", h[i].value);
        if (i) rc |= tl_buf_append_byte(names, ';');
        rc |= tl_buf_append(names, h[i].name, h[i].name_len);
    }
    free(h);
    return rc;
}

static void signing_key(const tl_sigv4_request *req, const char *secret, uint8_t key[32])
{
    char k0[256];
    snprintf(k0, sizeof k0, "AWS4%s", secret);
    tl_hmac_sha256(k0, strlen(k0), req->amz_date, 8, key);
    tl_hmac_sha256(key, 32, req->region, strlen(req->region), key);
    tl_hmac_sha256(key, 32, req->service, strlen(req->service), key);
    tl_hmac_sha256(key, 32, "aws4_request", 12, key);
}

tl_status tl_sigv4_sign(const tl_sigv4_request *req, const tl_aws_credentials *cred,
                        tl_strlist *out, tl_error *err)
{
    tl_strlist added = {0};
    int rc = tl_strlist_push_owned(&added, tl_strdup_printf("x-amz-date: %s", req->amz_date));
    rc |= tl_strlist_push_owned(&added,
                                tl_strdup_printf("x-amz-content-sha256: %s", req->payload_sha256));
    if (cred->token && cred->token[0])
        rc |= tl_strlist_push_owned(&added,
                                    tl_strdup_printf("x-amz-security-token: %s", cred->token));
    tl_buf canon = {0}, names = {0}, creq = {0}, sts = {0};
    if (rc == 0) rc = canonical_headers(req, &added, &canon, &names);
    if (rc == 0)
        rc = tl_buf_printf(&creq, "%s\n%s\n%s\n%s\n%s\n%s", req->method, req->path, req->query,
                           canon.data, names.data, req->payload_sha256);
    uint8_t digest[32], key[32], sig[32];
    char hex[65], sig_hex[65], scope[128];
    snprintf(scope, sizeof scope, "%.8s/%s/%s/aws4_request", req->amz_date, req->region,
             req->service);
    if (rc == 0) {
        tl_sha256(creq.data, creq.len, digest);
        tl_hex(digest, 32, hex);
        rc = tl_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", req->amz_date, scope, hex);
    }
    if (rc == 0) {
        signing_key(req, cred->secret, key);
        tl_hmac_sha256(key, 32, sts.data, sts.len, sig);
        tl_hex(sig, 32, sig_hex);
        for (size_t i = 0; rc == 0 && i < added.len; i++) rc = tl_strlist_push(out, added.items[i]);
        if (rc == 0)
            rc = tl_strlist_push_owned(
                out, tl_strdup_printf("Authorization: AWS4-HMAC-SHA256 Credential=%s/%s, "
                                      "SignedHeaders=%s, Signature=%s",
                                      cred->key_id, scope, names.data, sig_hex));
    }
    tl_strlist_free(&added);
    tl_buf_free(&canon);
    tl_buf_free(&names);
    tl_buf_free(&creq);
    tl_buf_free(&sts);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

void tl_amz_date_now(char out[17])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}
