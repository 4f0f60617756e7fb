/* Google Cloud Storage credentials: a fixed bearer token, or an OAuth access
 * token obtained with a service-account key (a JWT signed RS256 with the key,
 * exchanged at the key's token_uri) and renewed before it expires. */
#ifndef TL_STORE_GCS_AUTH_H
#define TL_STORE_GCS_AUTH_H

#include "store/http.h"

typedef struct tl_gcs_auth tl_gcs_auth;

/* key_json: the service-account key's JSON text; bearer: a fixed token. Both
 * NULL: anonymous (emulators). */
tl_status tl_gcs_auth_new(const char *key_json, const char *bearer, tl_gcs_auth **out,
                          tl_error *err);
void tl_gcs_auth_free(tl_gcs_auth *a);

/* Appends "Authorization: Bearer …" to headers (nothing when anonymous). */
tl_status tl_gcs_auth_header(tl_gcs_auth *a, tl_http_client *http, tl_strlist *headers,
                             tl_error *err);

/* The RS256 JWT assertion for the key at time `now` (unix seconds). malloc'd in *out. */
tl_status tl_gcs_jwt(tl_gcs_auth *a, long long now, char **out, tl_error *err);

#endif
