#include "store/gcs_auth.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_text.h"
#include "store/digest.h"

#define SCOPE "https://www.googleapis.com/auth/devstorage.read_write"

struct tl_gcs_auth {
    pthread_mutex_t lock;
    char *bearer;  /* fixed token */
    EVP_PKEY *key; /* service account */
    char *email, *token_uri;
    char *access;     /* current access token */
    long long expiry; /* unix seconds */
};

tl_status tl_gcs_auth_new(const char *key_json, const char *bearer, tl_gcs_auth **out,
                          tl_error *err)
{
    tl_gcs_auth *a = calloc(1, sizeof *a);
    if (a == NULL) return tl_error_nomem(err);
    pthread_mutex_init(&a->lock, NULL);
    tl_status st = TL_OK;
    if (bearer && (a->bearer = strdup(bearer)) == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && key_json) {
        json_error_t je;
        bool nomem;
        json_t *root = tl_json_loadb(key_json, strlen(key_json), 0, &je, &nomem);
        const char *pem = json_string_value(json_object_get(root, "private_key"));
        const char *email = json_string_value(json_object_get(root, "client_email"));
        const char *uri = json_string_value(json_object_get(root, "token_uri"));
        if (nomem) {
            st = tl_error_nomem(err);
        } else if (root == NULL || pem == NULL || email == NULL) {
            st = tl_error_set(err, TL_ERR_INVALID,
                              "google service account key: not a key JSON with private_key "
                              "and client_email");
        } else {
            BIO *bio = BIO_new_mem_buf(pem, -1);
            a->key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
            BIO_free(bio);
            a->email = strdup(email);
            a->token_uri = strdup(uri ? uri : "https://oauth2.googleapis.com/token");
            if (a->key == NULL)
                st = tl_error_set(err, TL_ERR_INVALID,
                                  "google service account key: unreadable private_key");
            else if (a->email == NULL || a->token_uri == NULL)
                st = tl_error_nomem(err);
        }
        json_decref(root);
    }
    if (st != TL_OK) {
        tl_gcs_auth_free(a);
        return st;
    }
    *out = a;
    return TL_OK;
}

void tl_gcs_auth_free(tl_gcs_auth *a)
{
    if (a == NULL) return;
    EVP_PKEY_free(a->key);
    free(a->bearer);
    free(a->email);
    free(a->token_uri);
    free(a->access);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static int b64_json(tl_buf *out, json_t *obj)
{
    char *text = tl_json_dumps(obj, JSON_COMPACT);
    int rc = text ? tl_base64_encode(out, text, strlen(text), 1) : -1;
    free(text);
    return rc;
}

tl_status tl_gcs_jwt(tl_gcs_auth *a, long long now, char **out, tl_error *err)
{
    json_t *hdr = json_pack("{s:s,s:s}", "alg", "RS256", "typ", "JWT");
    json_t *claims =
        json_pack("{s:s,s:s,s:s,s:I,s:I}", "iss", a->email, "scope", SCOPE, "aud", a->token_uri,
                  "iat", (json_int_t)now, "exp", (json_int_t)(now + 3600));
    tl_buf jwt = {0};
    int rc = hdr && claims ? b64_json(&jwt, hdr) : -1;
    rc |= tl_buf_append_byte(&jwt, '.');
    rc |= b64_json(&jwt, claims);
    json_decref(hdr);
    json_decref(claims);
    uint8_t sig[1024];
    size_t sig_len = sizeof sig;
    EVP_MD_CTX *md = rc == 0 ? EVP_MD_CTX_new() : NULL;
    bool ok = md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, a->key) == 1 &&
              EVP_DigestSign(md, sig, &sig_len, jwt.data, jwt.len) == 1;
    EVP_MD_CTX_free(md);
    if (ok) rc |= tl_buf_append_byte(&jwt, '.') | tl_base64_encode(&jwt, sig, sig_len, 1);
    if (!ok || rc) {
        tl_buf_free(&jwt);
        return ok ? tl_error_nomem(err)
                  : tl_error_set(err, TL_ERR_INVALID, "signing the GCS token request failed");
    }
    *out = (char *)tl_buf_detach(&jwt, NULL);
    return TL_OK;
}

/* Exchanges a fresh JWT for an access token at token_uri. Under the lock. */
static tl_status refresh(tl_gcs_auth *a, tl_http_client *http, tl_error *err)
{
    long long now = (long long)time(NULL);
    char *jwt = NULL;
    TL_TRY(tl_gcs_jwt(a, now, &jwt, err));
    char *body = tl_strdup_printf(
        "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer&assertion=%s", jwt);
    free(jwt);
    if (body == NULL) return tl_error_nomem(err);
    char *ct = "Content-Type: application/x-www-form-urlencoded";
    tl_strlist headers = {.items = &ct, .len = 1, .cap = 1};
    tl_http_request req = {"POST", a->token_uri, &headers, body, strlen(body), NULL, 0};
    tl_http_response resp;
    tl_status st = tl_http_send(http, &req, &resp, err);
    free(body);
    if (st == TL_OK && resp.status != 200)
        st = tl_error_set(err, TL_ERR_STORAGE, "GCS token request to %s: HTTP %ld %.200s",
                          a->token_uri, resp.status, resp.body.data ? (char *)resp.body.data : "");
    bool nomem = false;
    json_t *root =
        st == TL_OK ? tl_json_loadb((char *)resp.body.data, resp.body.len, 0, NULL, &nomem) : NULL;
    if (nomem) st = tl_error_nomem(err);
    const char *tok = json_string_value(json_object_get(root, "access_token"));
    json_int_t ttl = json_integer_value(json_object_get(root, "expires_in"));
    if (st == TL_OK && tok == NULL)
        st = tl_error_set(err, TL_ERR_STORAGE, "GCS token response has no access_token");
    if (st == TL_OK) {
        free(a->access);
        a->access = strdup(tok);
        a->expiry = now + (ttl > 0 ? ttl : 3600);
        if (a->access == NULL) st = tl_error_nomem(err);
    }
    json_decref(root);
    tl_http_response_clear(&resp);
    return st;
}

tl_status tl_gcs_auth_header(tl_gcs_auth *a, tl_http_client *http, tl_strlist *headers,
                             tl_error *err)
{
    if (a->bearer)
        return tl_strlist_push_owned(headers,
                                     tl_strdup_printf("Authorization: Bearer %s", a->bearer)) == 0
                   ? TL_OK
                   : tl_error_nomem(err);
    if (a->key == NULL) return TL_OK;
    pthread_mutex_lock(&a->lock);
    tl_status st = TL_OK;
    /* Renew a minute early: a request signed now may arrive a little later. */
    if (a->access == NULL || (long long)time(NULL) > a->expiry - 60) st = refresh(a, http, err);
    char *line = st == TL_OK ? tl_strdup_printf("Authorization: Bearer %s", a->access) : NULL;
    pthread_mutex_unlock(&a->lock);
    if (st != TL_OK) return st;
    if (line == NULL || tl_strlist_push_owned(headers, line) != 0) {
        free(line);
        return tl_error_nomem(err);
    }
    return TL_OK;
}
