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
    OPT_SSE          /* AES256, aws:kms or aws:kms:dsse */
} opt_type;

typedef struct opt_def {
    const char *name;
    int kinds; /* tl_store_kind mask */
    opt_type type;
    size_t offset;
} opt_def;

#define CLOUD (TL_STORE_S3 | TL_STORE_GCS | TL_STORE_AZURE)
#define ALL (CLOUD | TL_STORE_HTTP)
#define F(field) offsetof(tl_store_config, field)

/* Key names and aliases as the reference accepts them, plus timelake's own
 * (max_retries, retry_backoff, retry_max_backoff, cache_dir, cache_memory,
 * multipart_threshold, multipart_part_size, multipart_concurrency). */
static const opt_def OPTIONS[] = {
    {"aws_region", TL_STORE_S3, OPT_STR, F(region)},
    {"region", TL_STORE_S3, OPT_STR, F(region)},
    {"aws_default_region", TL_STORE_S3, OPT_STR, F(region)},
    {"aws_endpoint", TL_STORE_S3, OPT_STR, F(endpoint)},
    {"aws_endpoint_url", TL_STORE_S3, OPT_STR, F(endpoint)},
    {"aws_endpoint_url_s3", TL_STORE_S3, OPT_STR, F(endpoint)},
    {"endpoint", TL_STORE_S3 | TL_STORE_AZURE, OPT_STR, F(endpoint)},
    {"endpoint_url", TL_STORE_S3, OPT_STR, F(endpoint)},
    {"aws_access_key_id", TL_STORE_S3, OPT_STR, F(key_id)},
    {"access_key_id", TL_STORE_S3, OPT_STR, F(key_id)},
    {"aws_secret_access_key", TL_STORE_S3, OPT_STR, F(secret)},
    {"secret_access_key", TL_STORE_S3, OPT_STR, F(secret)},
    {"aws_session_token", TL_STORE_S3, OPT_STR, F(token)},
    {"session_token", TL_STORE_S3, OPT_STR, F(token)},
    {"aws_token", TL_STORE_S3, OPT_STR, F(token)},
    {"token", TL_STORE_S3, OPT_STR, F(token)},
    {"aws_allow_http", TL_STORE_S3, OPT_BOOL, F(allow_http)},
    {"allow_http", CLOUD, OPT_BOOL, F(allow_http)},
    {"azure_allow_http", TL_STORE_AZURE, OPT_BOOL, F(allow_http)},
    {"aws_virtual_hosted_style_request", TL_STORE_S3, OPT_BOOL, F(virtual_hosted)},
    {"virtual_hosted_style_request", TL_STORE_S3, OPT_BOOL, F(virtual_hosted)},
    {"aws_skip_signature", TL_STORE_S3, OPT_BOOL, F(skip_signature)},
    {"google_skip_signature", TL_STORE_GCS, OPT_BOOL, F(skip_signature)},
    {"azure_skip_signature", TL_STORE_AZURE, OPT_BOOL, F(skip_signature)},
    {"skip_signature", CLOUD, OPT_BOOL, F(skip_signature)},
    {"aws_unsigned_payload", TL_STORE_S3, OPT_BOOL, F(unsigned_payload)},
    {"unsigned_payload", TL_STORE_S3, OPT_BOOL, F(unsigned_payload)},
    {"aws_server_side_encryption", TL_STORE_S3, OPT_SSE, F(sse)},
    {"aws_sse_kms_key_id", TL_STORE_S3, OPT_STR, F(sse_kms_key_id)},
    {"aws_sse_bucket_key_enabled", TL_STORE_S3, OPT_BOOL, F(sse_bucket_key)},
    {"aws_bucket", TL_STORE_S3, OPT_STR, F(bucket)},
    {"aws_bucket_name", TL_STORE_S3, OPT_STR, F(bucket)},
    {"bucket", TL_STORE_S3 | TL_STORE_GCS, OPT_STR, F(bucket)},
    {"google_service_account", TL_STORE_GCS, OPT_STR, F(service_account_path)},
    {"service_account", TL_STORE_GCS, OPT_STR, F(service_account_path)},
    {"google_service_account_path", TL_STORE_GCS, OPT_STR, F(service_account_path)},
    {"google_application_credentials", TL_STORE_GCS, OPT_STR, F(service_account_path)},
    {"google_service_account_key", TL_STORE_GCS, OPT_STR, F(service_account_key)},
    {"service_account_key", TL_STORE_GCS, OPT_STR, F(service_account_key)},
    {"google_bucket", TL_STORE_GCS, OPT_STR, F(bucket)},
    {"google_bucket_name", TL_STORE_GCS, OPT_STR, F(bucket)},
    {"google_bearer_token", TL_STORE_GCS, OPT_STR, F(bearer_token)},
    {"google_endpoint", TL_STORE_GCS, OPT_STR, F(endpoint)},
    {"azure_storage_account_name", TL_STORE_AZURE, OPT_STR, F(account)},
    {"account_name", TL_STORE_AZURE, OPT_STR, F(account)},
    {"azure_storage_account_key", TL_STORE_AZURE, OPT_STR, F(account_key)},
    {"azure_storage_access_key", TL_STORE_AZURE, OPT_STR, F(account_key)},
    {"account_key", TL_STORE_AZURE, OPT_STR, F(account_key)},
    {"access_key", TL_STORE_AZURE, OPT_STR, F(account_key)},
    {"azure_storage_sas_key", TL_STORE_AZURE, OPT_STR, F(sas)},
    {"azure_storage_sas_token", TL_STORE_AZURE, OPT_STR, F(sas)},
    {"sas_key", TL_STORE_AZURE, OPT_STR, F(sas)},
    {"sas_token", TL_STORE_AZURE, OPT_STR, F(sas)},
    {"azure_storage_token", TL_STORE_AZURE, OPT_STR, F(azure_token)},
    {"bearer_token", TL_STORE_AZURE, OPT_STR, F(azure_token)},
    {"azure_storage_use_emulator", TL_STORE_AZURE, OPT_BOOL, F(use_emulator)},
    {"use_emulator", TL_STORE_AZURE, OPT_BOOL, F(use_emulator)},
    {"azure_endpoint", TL_STORE_AZURE, OPT_STR, F(endpoint)},
    {"azure_storage_endpoint", TL_STORE_AZURE, OPT_STR, F(endpoint)},
    {"timeout", ALL, OPT_MS, F(timeouts.total_ms)},
    {"connect_timeout", ALL, OPT_MS, F(timeouts.connect_ms)},
    {"max_retries", ALL, OPT_INT, F(retry.max_retries)},
    {"retry_backoff", ALL, OPT_MS, F(retry.base_ms)},
    {"retry_max_backoff", ALL, OPT_MS, F(retry.max_delay_ms)},
    {"cache_dir", ALL, OPT_STR, F(cache_dir)},
    {"cache_memory", ALL, OPT_BYTES, F(cache_memory)},
    {"cache_dir_max", ALL, OPT_BYTES, F(cache_dir_max)},
    {"timelake_cache", ALL, OPT_CACHE, F(cache_mode)},
    {"timelake_cache_dir", ALL, OPT_STR, F(cache_dir)},
    {"timelake_cache_memory_bytes", ALL, OPT_PLAIN_BYTES, F(cache_memory)},
    {"timelake_cache_disk_bytes", ALL, OPT_PLAIN_BYTES, F(cache_dir_max)},
    {"timelake_cache_block_bytes", ALL, OPT_PLAIN_BYTES, F(cache_block_bytes)},
    {"timelake_cache_request_bytes", ALL, OPT_PLAIN_BYTES, F(cache_request_bytes)},
    {"timelake_warm_connections", ALL, OPT_COUNT, F(warm_connections)},
    {"timelake_version_lookup", ALL, OPT_LOOKUP, F(version_hint)},
    {"proxy_url", ALL, OPT_STR, F(proxy_url)},
    {"proxy_excludes", ALL, OPT_STR, F(proxy_excludes)},
    {"proxy_ca_certificate", ALL, OPT_STR, F(proxy_ca)},
    {"multipart_threshold", ALL, OPT_BYTES, F(multipart_threshold)},
    {"multipart_part_size", ALL, OPT_BYTES, F(multipart_part_size)},
    {"multipart_concurrency", ALL, OPT_INT, F(multipart_concurrency)},
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
static tl_status parse_plain(const char *key, const char *v, bool bytes, long long *out,
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
        TL_TRY(parse_plain(key, v, true, &n, err));
        *(long long *)field = n;
        return TL_OK;
    case OPT_COUNT:
        TL_TRY(parse_plain(key, v, false, &n, err));
        *(int *)field = n > 1024 ? 1024 : (int)n;
        return TL_OK;
    case OPT_CACHE:
    case OPT_LOOKUP:
    case OPT_SSE:
        return parse_enum(d, key, v, field, err);
    }
    return TL_OK;
}

static tl_status apply_options(tl_store_config *c, const char *const *options, tl_error *err)
{
    for (size_t i = 0; options && options[i]; i += 2) {
        const char *key = options[i], *v = options[i + 1];
        if (v == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "storage option \"%s\" has no value", key);
        const opt_def *d = NULL;
        for (size_t k = 0; k < sizeof OPTIONS / sizeof OPTIONS[0] && !d; k++)
            if (strcasecmp(OPTIONS[k].name, key) == 0 && (OPTIONS[k].kinds & c->kind))
                d = &OPTIONS[k];
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
    tl_status st = split_location(out, location, err);
    if (st == TL_OK) st = apply_options(out, options, err);
    if (st == TL_OK) st = fill_from_env(out, err);
    if (st == TL_OK) st = check_endpoint(out, err);
    if (st == TL_OK) st = check_multipart(out, err);
    if (st == TL_OK) st = check_cache(out, err);
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
