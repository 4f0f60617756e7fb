/* storage_options of a remote warehouse: the reference's key names (and their
 * aliases), the usual environment variables, and timelake's own keys for
 * retries, timeouts and the read cache. An unknown key is TL_ERR_INVALID. */
#ifndef TL_STORE_OPTIONS_H
#define TL_STORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "store/http.h"
#include "store/retry.h"

typedef enum tl_store_kind {
    TL_STORE_S3 = 1,
    TL_STORE_GCS = 2,
    TL_STORE_AZURE = 4,
    TL_STORE_HTTP = 8 /* read-only http(s):// warehouses */
} tl_store_kind;

/* timelake_cache: where immutable objects are cached. */
typedef enum tl_cache_mode {
    TL_CACHE_DEFAULT = 0, /* memory, and disk when a cache directory is given */
    TL_CACHE_OFF,
    TL_CACHE_MEMORY,
    TL_CACHE_DISK /* memory and disk (the cache directory, or a default one) */
} tl_cache_mode;

typedef struct tl_store_config {
    tl_store_kind kind;
    char *bucket; /* bucket or container, from the URL (or the *_bucket option) */
    char *prefix; /* path under the bucket, no leading or trailing slash; "" for none */
    char *endpoint;
    bool allow_http;
    tl_retry_policy retry;
    tl_http_timeouts timeouts;
    char *cache_dir;         /* NULL: no disk cache */
    long long cache_memory;  /* bytes of the in-memory read cache; 0 disables it */
    long long cache_dir_max; /* bytes the disk cache may hold; 0: TL_CACHE_DIR_DEFAULT */
    tl_cache_mode cache_mode;
    /* > 0: ranged reads through the cache are made, and kept, in aligned blocks
     * of this many bytes; consecutive missing blocks are fetched together in
     * requests of at most cache_request_bytes (0: one request for them all). */
    long long cache_block_bytes, cache_request_bytes;
    int warm_connections; /* connections opened to the store when the lake opens */
    bool version_hint;    /* timelake_version_lookup=hint: versions found by the hint */
    char *proxy_url;      /* all requests through this HTTP(S) proxy */
    char *proxy_excludes; /* hosts reached directly (curl's NOPROXY list) */
    char *proxy_ca;       /* CA bundle of the proxy's certificate */
    /* object_store's other client options (http.h); its strings point into
     * user_agent and content_type */
    tl_http_transport transport;
    char *user_agent, *content_type;
    bool http1_only, http2_only;
    /* Objects larger than multipart_threshold go up in parts of multipart_part_size
     * (grown when a backend's part limit needs it), multipart_concurrency at a time.
     * S3 wants parts of 5 MiB at least (except the last). */
    long long multipart_threshold, multipart_part_size;
    int multipart_concurrency;
    /* S3 */
    char *region, *key_id, *secret, *token;
    bool virtual_hosted, skip_signature; /* skip_signature: GCS and Azure too */
    bool unsigned_payload;               /* SigV4 without hashing bodies */
    char *sse;                           /* x-amz-server-side-encryption of writes, or NULL */
    char *sse_kms_key_id;
    bool sse_bucket_key;
    bool request_payer; /* aws_request_payer: requests say the requester pays */
    /* GCS */
    char *service_account_path, *service_account_key, *bearer_token;
    /* Azure */
    char *account, *account_key, *sas, *azure_token;
    bool use_emulator;
} tl_store_config;

/* Parses a s3://, gs://, az://, http:// or https:// location and its options
 * (NULL-terminated key, value pairs), then fills the gaps from the environment. */
tl_status tl_store_config_parse(const char *location, const char *const *options,
                                tl_store_config *out, tl_error *err);
void tl_store_config_clear(tl_store_config *c);

/* An option's value of digits only, as the reference's timelake_cache_* keys
 * take them: a number of bytes (`bytes`) or a count; otherwise
 * TL_ERR_INVALID naming key and value. */
tl_status tl_store_option_plain(const char *key, const char *v, bool bytes, long long *out,
                                tl_error *err);

#endif
