#include "store/store_options.h"

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strlist.h"

typedef enum opt_type {
    OPT_STR,
    OPT_BOOL,
    OPT_MS,
    OPT_INT,
    OPT_BYTES,
    OPT_PLAIN_BYTES, /* digits only, as the reference's timelake_cache_* keys */
    OPT_COUNT,       /* a non-negative int, not capped */
    OPT_CACHE,       /* off, memory or disk */
    OPT_LOOKUP,      /* list or hint */
    OPT_SSE,         /* AES256, aws:kms or aws:kms:dsse */
    OPT_ONLY,        /* one value, what Timelake always does (`only`); others refused (`why`) */
    OPT_REFUSED      /* the reference's, which Timelake cannot honour (`why`, what to do) */
} opt_type;

typedef struct opt_def {
    const char *name;
    int kinds; /* tl_store_kind mask */
    opt_type type;
    size_t offset;
    const char *only; /* OPT_ONLY: the value honoured */
    const char *why;  /* OPT_ONLY and OPT_REFUSED: the reason, and what to use instead */
} opt_def;

#define CLOUD (TL_STORE_S3 | TL_STORE_GCS | TL_STORE_AZURE)
#define ALL (CLOUD | TL_STORE_HTTP)
#define F(field) offsetof(tl_store_config, field)

#define HTTP2_KNOBS                                                                                \
    "libcurl, Timelake's HTTP client, has no such setting (its HTTP/2 pings and frames are its "   \
    "own); idle connections close by pool_idle_timeout"
#define NO_TAGS "Timelake writes no object tags, so tagging cannot be turned on"
#define NO_COPIES                                                                                  \
    "Timelake never copies objects: its commits are conditional puts (If-None-Match: *)"
#define NO_CHECKSUM                                                                                \
    "uploads are checked by their SigV4 payload hash (x-amz-content-sha256) instead; keep "        \
    "aws_unsigned_payload off (the default) for that"
#define AWS_KEYS_ONLY                                                                              \
    "Timelake fetches no credentials from the instance metadata service, a container or a web "    \
    "identity; give aws_access_key_id and aws_secret_access_key (and aws_session_token for "       \
    "temporary ones), or the AWS_* environment variables"
#define AZURE_KEYS_ONLY                                                                            \
    "Timelake signs in to Azure with an account key, a SAS token or a bearer token only; get a "   \
    "token yourself (az account get-access-token --resource https://storage.azure.com) and give "  \
    "it as azure_storage_token"

/* Key names and aliases as the reference accepts them, plus timelake's own
 * (max_retries, retry_backoff, retry_max_backoff, cache_dir, cache_memory,
 * multipart_threshold, multipart_part_size, multipart_concurrency). */
static const opt_def OPTIONS[] = {
    {"aws_region", TL_STORE_S3, OPT_STR, F(region), NULL, NULL},
    {"region", TL_STORE_S3, OPT_STR, F(region), NULL, NULL},
    {"aws_default_region", TL_STORE_S3, OPT_STR, F(region), NULL, NULL},
    {"aws_endpoint", TL_STORE_S3, OPT_STR, F(endpoint), NULL, NULL},
    {"aws_endpoint_url", TL_STORE_S3, OPT_STR, F(endpoint), NULL, NULL},
    {"aws_endpoint_url_s3", TL_STORE_S3, OPT_STR, F(endpoint), NULL, NULL},
    {"endpoint", TL_STORE_S3 | TL_STORE_AZURE, OPT_STR, F(endpoint), NULL, NULL},
    {"endpoint_url", TL_STORE_S3, OPT_STR, F(endpoint), NULL, NULL},
    {"aws_access_key_id", TL_STORE_S3, OPT_STR, F(key_id), NULL, NULL},
    {"access_key_id", TL_STORE_S3, OPT_STR, F(key_id), NULL, NULL},
    {"aws_secret_access_key", TL_STORE_S3, OPT_STR, F(secret), NULL, NULL},
    {"secret_access_key", TL_STORE_S3, OPT_STR, F(secret), NULL, NULL},
    {"aws_session_token", TL_STORE_S3, OPT_STR, F(token), NULL, NULL},
    {"session_token", TL_STORE_S3, OPT_STR, F(token), NULL, NULL},
    {"aws_token", TL_STORE_S3, OPT_STR, F(token), NULL, NULL},
    {"token", TL_STORE_S3, OPT_STR, F(token), NULL, NULL},
    {"aws_allow_http", TL_STORE_S3, OPT_BOOL, F(allow_http), NULL, NULL},
    {"allow_http", CLOUD, OPT_BOOL, F(allow_http), NULL, NULL},
    {"azure_allow_http", TL_STORE_AZURE, OPT_BOOL, F(allow_http), NULL, NULL},
    {"aws_virtual_hosted_style_request", TL_STORE_S3, OPT_BOOL, F(virtual_hosted), NULL, NULL},
    {"virtual_hosted_style_request", TL_STORE_S3, OPT_BOOL, F(virtual_hosted), NULL, NULL},
    {"aws_skip_signature", TL_STORE_S3, OPT_BOOL, F(skip_signature), NULL, NULL},
    {"google_skip_signature", TL_STORE_GCS, OPT_BOOL, F(skip_signature), NULL, NULL},
    {"azure_skip_signature", TL_STORE_AZURE, OPT_BOOL, F(skip_signature), NULL, NULL},
    {"skip_signature", CLOUD, OPT_BOOL, F(skip_signature), NULL, NULL},
    {"aws_unsigned_payload", TL_STORE_S3, OPT_BOOL, F(unsigned_payload), NULL, NULL},
    {"unsigned_payload", TL_STORE_S3, OPT_BOOL, F(unsigned_payload), NULL, NULL},
    {"aws_server_side_encryption", TL_STORE_S3, OPT_SSE, F(sse), NULL, NULL},
    {"aws_sse_kms_key_id", TL_STORE_S3, OPT_STR, F(sse_kms_key_id), NULL, NULL},
    {"aws_sse_bucket_key_enabled", TL_STORE_S3, OPT_BOOL, F(sse_bucket_key), NULL, NULL},
    {"aws_bucket", TL_STORE_S3, OPT_STR, F(bucket), NULL, NULL},
    {"aws_bucket_name", TL_STORE_S3, OPT_STR, F(bucket), NULL, NULL},
    {"bucket", TL_STORE_S3 | TL_STORE_GCS, OPT_STR, F(bucket), NULL, NULL},
    {"google_service_account", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"service_account", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"google_service_account_path", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"google_application_credentials", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"google_service_account_key", TL_STORE_GCS, OPT_STR, F(service_account_key), NULL, NULL},
    {"service_account_key", TL_STORE_GCS, OPT_STR, F(service_account_key), NULL, NULL},
    {"google_bucket", TL_STORE_GCS, OPT_STR, F(bucket), NULL, NULL},
    {"google_bucket_name", TL_STORE_GCS, OPT_STR, F(bucket), NULL, NULL},
    {"google_bearer_token", TL_STORE_GCS, OPT_STR, F(bearer_token), NULL, NULL},
    {"google_endpoint", TL_STORE_GCS, OPT_STR, F(endpoint), NULL, NULL},
    {"azure_storage_account_name", TL_STORE_AZURE, OPT_STR, F(account), NULL, NULL},
    {"account_name", TL_STORE_AZURE, OPT_STR, F(account), NULL, NULL},
    {"azure_storage_account_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"azure_storage_access_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"account_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"access_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"azure_storage_sas_key", TL_STORE_AZURE, OPT_STR, F(sas), NULL, NULL},
    {"azure_storage_sas_token", TL_STORE_AZURE, OPT_STR, F(sas), NULL, NULL},
    {"sas_key", TL_STORE_AZURE, OPT_STR, F(sas), NULL, NULL},
    {"sas_token", TL_STORE_AZURE, OPT_STR, F(sas), NULL, NULL},
    {"azure_storage_token", TL_STORE_AZURE, OPT_STR, F(azure_token), NULL, NULL},
    {"bearer_token", TL_STORE_AZURE, OPT_STR, F(azure_token), NULL, NULL},
    {"azure_storage_use_emulator", TL_STORE_AZURE, OPT_BOOL, F(use_emulator), NULL, NULL},
    {"use_emulator", TL_STORE_AZURE, OPT_BOOL, F(use_emulator), NULL, NULL},
    {"azure_endpoint", TL_STORE_AZURE, OPT_STR, F(endpoint), NULL, NULL},
    {"azure_storage_endpoint", TL_STORE_AZURE, OPT_STR, F(endpoint), NULL, NULL},
    {"timeout", ALL, OPT_MS, F(timeouts.total_ms), NULL, NULL},
    {"connect_timeout", ALL, OPT_MS, F(timeouts.connect_ms), NULL, NULL},
    {"max_retries", ALL, OPT_INT, F(retry.max_retries), NULL, NULL},
    {"retry_backoff", ALL, OPT_MS, F(retry.base_ms), NULL, NULL},
    {"retry_max_backoff", ALL, OPT_MS, F(retry.max_delay_ms), NULL, NULL},
    {"cache_dir", ALL, OPT_STR, F(cache_dir), NULL, NULL},
    {"cache_memory", ALL, OPT_BYTES, F(cache_memory), NULL, NULL},
    {"cache_dir_max", ALL, OPT_BYTES, F(cache_dir_max), NULL, NULL},
    {"timelake_cache", ALL, OPT_CACHE, F(cache_mode), NULL, NULL},
    {"timelake_cache_dir", ALL, OPT_STR, F(cache_dir), NULL, NULL},
    {"timelake_cache_memory_bytes", ALL, OPT_PLAIN_BYTES, F(cache_memory), NULL, NULL},
    {"timelake_cache_disk_bytes", ALL, OPT_PLAIN_BYTES, F(cache_dir_max), NULL, NULL},
    {"timelake_cache_block_bytes", ALL, OPT_PLAIN_BYTES, F(cache_block_bytes), NULL, NULL},
    {"timelake_cache_request_bytes", ALL, OPT_PLAIN_BYTES, F(cache_request_bytes), NULL, NULL},
    {"timelake_warm_connections", ALL, OPT_COUNT, F(warm_connections), NULL, NULL},
    {"timelake_version_lookup", ALL, OPT_LOOKUP, F(version_hint), NULL, NULL},
    {"proxy_url", ALL, OPT_STR, F(proxy_url), NULL, NULL},
    {"proxy_excludes", ALL, OPT_STR, F(proxy_excludes), NULL, NULL},
    {"proxy_ca_certificate", ALL, OPT_STR, F(proxy_ca), NULL, NULL},
    {"multipart_threshold", ALL, OPT_BYTES, F(multipart_threshold), NULL, NULL},
    {"multipart_part_size", ALL, OPT_BYTES, F(multipart_part_size), NULL, NULL},
    {"multipart_concurrency", ALL, OPT_INT, F(multipart_concurrency), NULL, NULL},
    /* object_store's other aliases */
    {"default_region", TL_STORE_S3, OPT_STR, F(region), NULL, NULL},
    {"bucket_name", TL_STORE_S3 | TL_STORE_GCS, OPT_STR, F(bucket), NULL, NULL},
    {"service_account_path", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"application_credentials", TL_STORE_GCS, OPT_STR, F(service_account_path), NULL, NULL},
    {"azure_storage_master_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"master_key", TL_STORE_AZURE, OPT_STR, F(account_key), NULL, NULL},
    {"token", TL_STORE_AZURE, OPT_STR, F(azure_token), NULL, NULL},
    {"azure_container_name", TL_STORE_AZURE, OPT_STR, F(bucket), NULL, NULL},
    {"container_name", TL_STORE_AZURE, OPT_STR, F(bucket), NULL, NULL},
    {"aws_request_payer", TL_STORE_S3, OPT_BOOL, F(request_payer), NULL, NULL},
    {"request_payer", TL_STORE_S3, OPT_BOOL, F(request_payer), NULL, NULL},
    /* object_store's HTTP client options (also with the store's prefix:
     * aws_user_agent, google_timeout, azure_proxy_url, ...) */
    {"allow_invalid_certificates", ALL, OPT_BOOL, F(transport.insecure), NULL, NULL},
    {"user_agent", ALL, OPT_STR, F(user_agent), NULL, NULL},
    {"default_content_type", ALL, OPT_STR, F(content_type), NULL, NULL},
    {"pool_idle_timeout", ALL, OPT_MS, F(transport.idle_ms), NULL, NULL},
    {"pool_max_idle_per_host", ALL, OPT_INT, F(transport.max_idle), NULL, NULL},
    {"randomize_addresses", ALL, OPT_BOOL, F(transport.shuffle), NULL, NULL},
    {"http1_only", ALL, OPT_BOOL, F(http1_only), NULL, NULL},
    {"http2_only", ALL, OPT_BOOL, F(http2_only), NULL, NULL},
    {"http2_keep_alive_interval", ALL, OPT_REFUSED, 0, NULL, HTTP2_KNOBS},
    {"http2_keep_alive_timeout", ALL, OPT_REFUSED, 0, NULL, HTTP2_KNOBS},
    {"http2_keep_alive_while_idle", ALL, OPT_REFUSED, 0, NULL, HTTP2_KNOBS},
    {"http2_max_frame_size", ALL, OPT_REFUSED, 0, NULL, HTTP2_KNOBS},
    /* What Timelake does always, or cannot do */
    {"timelake_freshness_check", ALL, OPT_ONLY, 0, "list",
     "a reader lists the metadata (and reads the head object in the same round trip), what "
     "\"list\" does; to skip the listing, use timelake_version_lookup=hint"},
    {"timelake_local_root", ALL, OPT_REFUSED, 0, NULL,
     "give a local lake's folder as the location (a path or file:// URL)"},
    {"aws_conditional_put", TL_STORE_S3, OPT_ONLY, 0, "etag",
     "commits are conditional puts (If-None-Match: *), what \"etag\" does; a store "
     "without them cannot hold a Timelake table"},
    {"conditional_put", TL_STORE_S3, OPT_ONLY, 0, "etag",
     "commits are conditional puts (If-None-Match: *), what \"etag\" does; a store "
     "without them cannot hold a Timelake table"},
    {"aws_disable_tagging", TL_STORE_S3, OPT_ONLY, 0, "true", NO_TAGS},
    {"disable_tagging", TL_STORE_S3 | TL_STORE_AZURE, OPT_ONLY, 0, "true", NO_TAGS},
    {"azure_disable_tagging", TL_STORE_AZURE, OPT_ONLY, 0, "true", NO_TAGS},
    {"aws_copy_if_not_exists", TL_STORE_S3, OPT_REFUSED, 0, NULL, NO_COPIES},
    {"copy_if_not_exists", TL_STORE_S3, OPT_REFUSED, 0, NULL, NO_COPIES},
    {"aws_checksum_algorithm", TL_STORE_S3, OPT_REFUSED, 0, NULL, NO_CHECKSUM},
    {"checksum_algorithm", TL_STORE_S3, OPT_REFUSED, 0, NULL, NO_CHECKSUM},
    {"aws_s3_express", TL_STORE_S3, OPT_REFUSED, 0, NULL,
     "S3 Express One Zone buckets (session authentication) are not supported; use a "
     "general-purpose bucket"},
    {"s3_express", TL_STORE_S3, OPT_REFUSED, 0, NULL,
     "S3 Express One Zone buckets (session authentication) are not supported; use a "
     "general-purpose bucket"},
    {"aws_sse_customer_key_base64", TL_STORE_S3, OPT_REFUSED, 0, NULL,
     "customer-provided keys (SSE-C) are not supported; use aws_server_side_encryption "
     "(AES256 or aws:kms)"},
    {"aws_imdsv1_fallback", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"imdsv1_fallback", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_metadata_endpoint", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"metadata_endpoint", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_container_credentials_relative_uri", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_container_credentials_full_uri", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_container_authorization_token_file", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_role_arn", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_role_session_name", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"aws_web_identity_token_file", TL_STORE_S3, OPT_REFUSED, 0, NULL, AWS_KEYS_ONLY},
    {"azure_use_fabric_endpoint", TL_STORE_AZURE, OPT_REFUSED, 0, NULL,
     "give the endpoint itself as azure_storage_endpoint"},
    {"use_fabric_endpoint", TL_STORE_AZURE, OPT_REFUSED, 0, NULL,
     "give the endpoint itself as azure_storage_endpoint"},
};

/* Azure's sign-in options, none of which Timelake performs. */
static const char *const AZURE_SIGN_INS[] = {
    "azure_storage_client_id",
    "azure_client_id",
    "client_id",
    "azure_storage_client_secret",
    "azure_client_secret",
    "client_secret",
    "azure_storage_tenant_id",
    "azure_storage_authority_id",
    "azure_tenant_id",
    "azure_authority_id",
    "tenant_id",
    "authority_id",
    "azure_storage_authority_host",
    "azure_authority_host",
    "authority_host",
    "azure_msi_endpoint",
    "azure_identity_endpoint",
    "identity_endpoint",
    "msi_endpoint",
    "azure_object_id",
    "object_id",
    "azure_msi_resource_id",
    "msi_resource_id",
    "azure_federated_token_file",
    "federated_token_file",
    "azure_use_azure_cli",
    "use_azure_cli",
    "azure_fabric_token_service_url",
    "azure_fabric_workload_host",
    "azure_fabric_session_token",
    "azure_fabric_cluster_identifier",
};

static const char *kind_name(tl_store_kind k)
{
    return k == TL_STORE_S3     ? "S3"
           : k == TL_STORE_GCS  ? "GCS"
           : k == TL_STORE_HTTP ? "HTTP"
                                : "Azure";
}

/* One of a fixed set of words (case-insensitive): its index, else -1. */
static int word_of(const char *v, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(v, words[i]) == 0) return (int)i;
    return -1;
}

/* The reference's enumerated options, with its messages. */
static tl_status parse_enum(const opt_def *d, const char *key, const char *v, void *field,
                            tl_error *err)
{
    static const char *const caches[] = {"off", "memory", "disk"};
    static const char *const lookups[] = {"list", "hint"};
    static const char *const sses[] = {"AES256", "aws:kms", "aws:kms:dsse"};
    if (d->type == OPT_CACHE) {
        int i = word_of(v, caches, 3);
        if (i < 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s must be off, memory or disk, got \"%s\"",
                                key, v);
        *(tl_cache_mode *)field = (tl_cache_mode)(TL_CACHE_OFF + i);
        return TL_OK;
    }
    if (d->type == OPT_LOOKUP) {
        int i = word_of(v, lookups, 2);
        if (i < 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s must be list or hint, got \"%s\"", key, v);
        *(bool *)field = i == 1;
        return TL_OK;
    }
    int i = word_of(v, sses, 3);
    if (i < 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: \"%s\" is not an encryption type: use AES256, aws:kms or "
                            "aws:kms:dsse",
                            key, v);
    char **s = field;
    free(*s);
    *s = strdup(sses[i]);
    return *s ? TL_OK : tl_error_nomem(err);
}

/* Digits only, as the reference's timelake_cache_* and count keys. */
tl_status tl_store_option_plain(const char *key, const char *v, bool bytes, long long *out,
                                tl_error *err)
{
    long long n = 0;
    bool ok = v[0] != '\0';
    for (const char *p = v; ok && *p; p++) {
        ok = *p >= '0' && *p <= '9' && n <= (LLONG_MAX - 9) / 10;
        n = n * 10 + (*p - '0');
    }
    if (!ok)
        return tl_error_set(err, TL_ERR_INVALID, "%s must be %s, got \"%s\"", key,
                            bytes ? "a number of bytes" : "a non-negative integer", v);
    *out = n;
    return TL_OK;
}

static tl_status parse_bool(const char *key, const char *v, bool *out, tl_error *err)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
        *out = true;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
        *out = false;
    else
        return tl_error_set(err, TL_ERR_INVALID, "storage option %s: \"%s\" is not a boolean", key,
                            v);
    return TL_OK;
}

/* "250ms", "30s", "2m", "1h" or bare seconds. */
static tl_status parse_ms(const char *key, const char *v, long long *out, tl_error *err)
{
    char *end = NULL;
    double n = strtod(v, &end);
    double mult = 1000;
    if (end == v || n < 0) goto bad;
    if (!strcmp(end, "ms"))
        mult = 1;
    else if (!strcmp(end, "s") || !*end)
        mult = 1000;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        mult = 60000;
    else if (!strcmp(end, "h"))
        mult = 3600000;
    else
        goto bad;
    *out = (long long)(n * mult);
    return TL_OK;
bad:
    return tl_error_set(err, TL_ERR_INVALID,
                        "storage option %s: \"%s\" is not a duration (like 500ms or 30s)", key, v);
}

static tl_status parse_int(const char *key, const char *v, long long *out, bool bytes,
                           tl_error *err)
{
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    long long mult = 1;
    if (bytes && end && *end) {
        const char *u = end;
        mult = !strcasecmp(u, "k") || !strcasecmp(u, "kib")   ? 1LL << 10
               : !strcasecmp(u, "m") || !strcasecmp(u, "mib") ? 1LL << 20
               : !strcasecmp(u, "g") || !strcasecmp(u, "gib") ? 1LL << 30
                                                              : 0;
        if (mult) end += strlen(end);
    }
    if (end == v || *end || n < 0 || mult == 0)
        return tl_error_set(err, TL_ERR_INVALID, "storage option %s: \"%s\" is not a %s", key, v,
                            bytes ? "size" : "non-negative integer");
    *out = n * mult;
    return TL_OK;
}

static tl_status apply(tl_store_config *c, const opt_def *d, const char *key, const char *v,
                       tl_error *err)
{
    void *field = (char *)c + d->offset;
    long long n = 0;
    switch (d->type) {
    case OPT_STR: {
        char **s = field;
        free(*s);
        *s = strdup(v);
        return *s ? TL_OK : tl_error_nomem(err);
    }
    case OPT_BOOL:
        return parse_bool(key, v, field, err);
    case OPT_MS:
        TL_TRY(parse_ms(key, v, &n, err));
        if (d->offset == F(timeouts.total_ms) || d->offset == F(timeouts.connect_ms))
            *(long *)field = (long)n;
        else
            *(int64_t *)field = n;
        return TL_OK;
    case OPT_INT:
        TL_TRY(parse_int(key, v, &n, false, err));
        *(int *)field = n > 100 ? 100 : (int)n;
        return TL_OK;
    case OPT_BYTES:
        TL_TRY(parse_int(key, v, &n, true, err));
        *(long long *)field = n;
        return TL_OK;
    case OPT_PLAIN_BYTES:
        TL_TRY(tl_store_option_plain(key, v, true, &n, err));
        *(long long *)field = n;
        return TL_OK;
    case OPT_COUNT:
        TL_TRY(tl_store_option_plain(key, v, false, &n, err));
        *(int *)field = n > 1024 ? 1024 : (int)n;
        return TL_OK;
    case OPT_CACHE:
    case OPT_LOOKUP:
    case OPT_SSE:
        return parse_enum(d, key, v, field, err);
    case OPT_ONLY:
        if (strcasecmp(v, d->only) == 0) return TL_OK; /* what Timelake does anyway */
        return tl_error_set(err, TL_ERR_INVALID,
                            "storage option %s=%s is not supported (only %s is): %s", key, v,
                            d->only, d->why);
    case OPT_REFUSED:
        return tl_error_set(err, TL_ERR_INVALID, "storage option %s is not supported: %s", key,
                            d->why);
    }
    return TL_OK;
}

/* The definition of `key` for a store of kind `kind`, or NULL. */
static const opt_def *find_option(const char *key, tl_store_kind kind)
{
    for (size_t k = 0; k < sizeof OPTIONS / sizeof OPTIONS[0]; k++)
        if (strcasecmp(OPTIONS[k].name, key) == 0 && (OPTIONS[k].kinds & kind)) return &OPTIONS[k];
    static const opt_def azure_sign_in = {"", TL_STORE_AZURE, OPT_REFUSED,
                                          0,  NULL,           AZURE_KEYS_ONLY};
    for (size_t k = 0; kind == TL_STORE_AZURE && k < sizeof AZURE_SIGN_INS / sizeof *AZURE_SIGN_INS;
         k++)
        if (strcasecmp(AZURE_SIGN_INS[k], key) == 0) return &azure_sign_in;
    return NULL;
}

/* object_store takes its client options with the store's prefix too
 * (aws_timeout, google_user_agent, azure_proxy_url): the option without it,
 * when that is one of every store's. */
static const opt_def *find_prefixed(const char *key, tl_store_kind kind)
{
    const char *prefix = kind == TL_STORE_S3      ? "aws_"
                         : kind == TL_STORE_GCS   ? "google_"
                         : kind == TL_STORE_AZURE ? "azure_"
                                                  : NULL;
    if (prefix == NULL || strncasecmp(key, prefix, strlen(prefix)) != 0) return NULL;
    const opt_def *d = find_option(key + strlen(prefix), kind);
    return d && (d->kinds & CLOUD) == CLOUD ? d : NULL;
}

static tl_status apply_options(tl_store_config *c, const char *const *options, tl_error *err)
{
    for (size_t i = 0; options && options[i]; i += 2) {
        const char *key = options[i], *v = options[i + 1];
        if (v == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "storage option \"%s\" has no value", key);
        const opt_def *d = find_option(key, c->kind);
        if (d == NULL) d = find_prefixed(key, c->kind);
        if (d == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "unknown %s storage option \"%s\"",
                                kind_name(c->kind), key);
        TL_TRY(apply(c, d, key, v, err));
    }
    return TL_OK;
}

static tl_status set_from_env(char **field, const char *var, tl_error *err)
{
    const char *v = getenv(var);
    if (*field != NULL || v == NULL || v[0] == '\0') return TL_OK;
    *field = strdup(v);
    return *field ? TL_OK : tl_error_nomem(err);
}

static tl_status fill_from_env(tl_store_config *c, tl_error *err)
{
    if (c->kind == TL_STORE_S3) {
        TL_TRY(set_from_env(&c->key_id, "AWS_ACCESS_KEY_ID", err));
        TL_TRY(set_from_env(&c->secret, "AWS_SECRET_ACCESS_KEY", err));
        TL_TRY(set_from_env(&c->token, "AWS_SESSION_TOKEN", err));
        TL_TRY(set_from_env(&c->region, "AWS_REGION", err));
        TL_TRY(set_from_env(&c->region, "AWS_DEFAULT_REGION", err));
        TL_TRY(set_from_env(&c->endpoint, "AWS_ENDPOINT_URL_S3", err));
        TL_TRY(set_from_env(&c->endpoint, "AWS_ENDPOINT_URL", err));
        const char *h = getenv("AWS_ALLOW_HTTP");
        if (h && !c->allow_http) TL_TRY(parse_bool("AWS_ALLOW_HTTP", h, &c->allow_http, err));
        if (c->region == NULL && (c->region = strdup("us-east-1")) == NULL)
            return tl_error_nomem(err);
    } else if (c->kind == TL_STORE_GCS) {
        TL_TRY(set_from_env(&c->service_account_path, "GOOGLE_APPLICATION_CREDENTIALS", err));
        TL_TRY(set_from_env(&c->endpoint, "STORAGE_EMULATOR_HOST", err));
    } else if (c->kind == TL_STORE_AZURE) {
        TL_TRY(set_from_env(&c->account, "AZURE_STORAGE_ACCOUNT_NAME", err));
        TL_TRY(set_from_env(&c->account_key, "AZURE_STORAGE_ACCOUNT_KEY", err));
        TL_TRY(set_from_env(&c->sas, "AZURE_STORAGE_SAS_TOKEN", err));
    }
    return TL_OK;
}

static tl_status split_location(tl_store_config *c, const char *location, tl_error *err)
{
    static const struct {
        const char *scheme;
        tl_store_kind kind;
    } schemes[] = {{"s3://", TL_STORE_S3},       {"s3a://", TL_STORE_S3},
                   {"gs://", TL_STORE_GCS},      {"az://", TL_STORE_AZURE},
                   {"azure://", TL_STORE_AZURE}, {"abfs://", TL_STORE_AZURE},
                   {"http://", TL_STORE_HTTP},   {"https://", TL_STORE_HTTP}};
    const char *rest = NULL;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0] && !rest; i++)
        if (strncmp(location, schemes[i].scheme, strlen(schemes[i].scheme)) == 0) {
            rest = location + strlen(schemes[i].scheme);
            c->kind = schemes[i].kind;
        }
    if (rest == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "unsupported warehouse URL \"%s\"", location);
    const char *slash = strchr(rest, '/');
    size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
    if (blen == 0)
        return tl_error_set(err, TL_ERR_INVALID, "warehouse URL \"%s\" names no bucket", location);
    c->bucket = strndup(rest, blen);
    if (c->kind == TL_STORE_HTTP) /* the "bucket" is the host[:port] */
        c->endpoint =
            tl_strdup_printf("%.*s%.*s", (int)(rest - location), location, (int)blen, rest);
    const char *p = slash ? slash : "";
    while (*p == '/') p++;
    c->prefix = strdup(p);
    if (c->bucket == NULL || c->prefix == NULL) return tl_error_nomem(err);
    size_t n = strlen(c->prefix);
    while (n > 0 && c->prefix[n - 1] == '/') c->prefix[--n] = '\0';
    if (strstr(c->prefix, "//") || strchr(c->bucket, '?') || strchr(c->prefix, '?'))
        return tl_error_set(err, TL_ERR_INVALID, "bad warehouse URL \"%s\"", location);
    return TL_OK;
}

static tl_status check_multipart(const tl_store_config *c, tl_error *err)
{
    if (c->multipart_part_size <= 0)
        return tl_error_set(err, TL_ERR_INVALID, "storage option multipart_part_size must be > 0");
    if (c->multipart_concurrency <= 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "storage option multipart_concurrency must be > 0");
    return TL_OK;
}

/* timelake_cache decides what the size and directory options give:
 * off nothing, memory no disk, disk a directory (the default one when none
 * is named: $XDG_CACHE_HOME/timelake or ~/.cache/timelake). */
static tl_status check_cache(tl_store_config *c, tl_error *err)
{
    if (c->cache_mode == TL_CACHE_OFF) c->cache_memory = 0;
    if (c->cache_mode == TL_CACHE_OFF || c->cache_mode == TL_CACHE_MEMORY) {
        free(c->cache_dir);
        c->cache_dir = NULL;
    }
    if (c->cache_mode == TL_CACHE_DISK && c->cache_dir == NULL) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        c->cache_dir = xdg && xdg[0]     ? tl_strdup_printf("%s/timelake", xdg)
                       : home && home[0] ? tl_strdup_printf("%s/.cache/timelake", home)
                                         : NULL;
        if (c->cache_dir == NULL)
            return tl_error_set(err, TL_ERR_INVALID,
                                "timelake_cache=disk: give timelake_cache_dir (no $HOME to put the "
                                "cache in)");
    }
    if (c->cache_mode == TL_CACHE_DISK && c->cache_memory == 0) c->cache_memory = 64LL << 20;
    return TL_OK;
}

static tl_status check_endpoint(const tl_store_config *c, tl_error *err)
{
    /* GCS endpoints may be a bare host:port (STORAGE_EMULATOR_HOST); plain http is for emulators.
     */
    if (c->endpoint == NULL || c->kind == TL_STORE_GCS || c->kind == TL_STORE_HTTP) return TL_OK;
    if (strncmp(c->endpoint, "https://", 8) == 0) return TL_OK;
    if (strncmp(c->endpoint, "http://", 7) != 0)
        return tl_error_set(err, TL_ERR_INVALID, "endpoint \"%s\" is not an http(s) URL",
                            c->endpoint);
    if (!c->allow_http && !(c->kind == TL_STORE_AZURE && c->use_emulator))
        return tl_error_set(err, TL_ERR_INVALID,
                            "endpoint \"%s\" is plain http: set %s to \"true\" to allow it",
                            c->endpoint, c->kind == TL_STORE_S3 ? "aws_allow_http" : "allow_http");
    return TL_OK;
}

/* The client options the HTTP layer takes (http.h). */
static tl_status check_transport(tl_store_config *c, tl_error *err)
{
    if (c->http1_only && c->http2_only)
        return tl_error_set(err, TL_ERR_INVALID,
                            "storage options http1_only and http2_only are both true: choose one");
    c->transport.http_version = c->http1_only ? 1 : c->http2_only ? 2 : 0;
    c->transport.user_agent = c->user_agent;
    c->transport.upload_type = c->content_type;
    if (c->content_type && (strlen(c->content_type) > 200 || strpbrk(c->content_type, "\r\n")))
        return tl_error_set(err, TL_ERR_INVALID,
                            "storage option default_content_type \"%s\" is not a content type",
                            c->content_type);
    return TL_OK;
}

tl_status tl_store_config_parse(const char *location, const char *const *options,
                                tl_store_config *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->retry = TL_RETRY_DEFAULT;
    out->timeouts = (tl_http_timeouts){.connect_ms = 5000, .total_ms = 30000};
    out->cache_memory = 64LL << 20;
    out->multipart_threshold = 64LL << 20;
    out->multipart_part_size = 16LL << 20;
    out->multipart_concurrency = 4;
    out->transport.max_idle = -1;
    tl_status st = split_location(out, location, err);
    if (st == TL_OK) st = apply_options(out, options, err);
    if (st == TL_OK) st = fill_from_env(out, err);
    if (st == TL_OK) st = check_endpoint(out, err);
    if (st == TL_OK) st = check_multipart(out, err);
    if (st == TL_OK) st = check_cache(out, err);
    if (st == TL_OK) st = check_transport(out, err);
    if (st == TL_OK && out->kind == TL_STORE_HTTP) out->version_hint = true; /* no listing */
    if (st == TL_OK && out->endpoint) {
        size_t n = strlen(out->endpoint);
        while (n > 0 && out->endpoint[n - 1] == '/') out->endpoint[--n] = '\0';
    }
    if (st != TL_OK) tl_store_config_clear(out);
    return st;
}

void tl_store_config_clear(tl_store_config *c)
{
    char **strs[] = {&c->bucket,
                     &c->prefix,
                     &c->endpoint,
                     &c->cache_dir,
                     &c->proxy_url,
                     &c->proxy_excludes,
                     &c->proxy_ca,
                     &c->user_agent,
                     &c->content_type,
                     &c->sse,
                     &c->sse_kms_key_id,
                     &c->region,
                     &c->key_id,
                     &c->secret,
                     &c->token,
                     &c->service_account_path,
                     &c->service_account_key,
                     &c->bearer_token,
                     &c->account,
                     &c->account_key,
                     &c->sas,
                     &c->azure_token};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        free(*strs[i]);
        *strs[i] = NULL;
    }
}
