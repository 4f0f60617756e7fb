#include "store/store.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/strlist.h"
#include "store/store_fault.h"
#include "store/store_options.h"

/* timelake_warm_connections: connections opened when the lake opens, each a
 * HEAD of the registry (its answer does not matter), so that the first
 * queries do not wait for handshakes. */
#define WARM_MAX 16

static tl_status warm_one(void *ctx, size_t i, tl_error *err)
{
    (void)i, (void)err;
    tl_store *s = ctx;
    uint64_t size;
    tl_store_size(s, "timelake-tables.json", &size, NULL);
    return TL_OK;
}

static void warm(tl_store *s, int n)
{
    if (n > 0)
        tl_parallel_run((size_t)(n < WARM_MAX ? n : WARM_MAX), WARM_MAX, false, warm_one, s, NULL);
}

tl_status tl_store_check_writable(const tl_store *s, const char *what, tl_error *err)
{
    if (!s->read_only) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID,
                        "cannot %s: the warehouse %s is read-only over http(s); write through its "
                        "store (s3://, gs://, az:// or a folder) instead",
                        what, s->url);
}

/* s3://, gs://, az://: the backend, wrapped in the read cache unless both of
 * its layers are turned off. */
static tl_status open_remote(const char *location, const char *const *options, tl_store **out,
                             tl_error *err)
{
    tl_store_config cfg;
    TL_TRY(tl_store_config_parse(location, options, &cfg, err));
    long long memory = cfg.cache_memory, dir_max = cfg.cache_dir_max;
    tl_cache_blocks blocks = {cfg.cache_block_bytes, cfg.cache_request_bytes};
    int warm_connections = cfg.warm_connections;
    bool hint = cfg.version_hint;
    char *dir = cfg.cache_dir ? strdup(cfg.cache_dir) : NULL;
    tl_store *s = NULL;
    tl_status st = cfg.cache_dir && dir == NULL ? tl_error_nomem(err) : TL_OK;
    if (st == TL_OK)
        st = cfg.kind == TL_STORE_S3     ? tl_store_s3_open(&cfg, &s, err)
             : cfg.kind == TL_STORE_GCS  ? tl_store_gcs_open(&cfg, &s, err)
             : cfg.kind == TL_STORE_HTTP ? tl_store_http_open(&cfg, &s, err)
                                         : tl_store_azure_open(&cfg, &s, err);
    tl_store_config_clear(&cfg);
    if (st == TL_OK) s->version_hint |= hint;
    if (st == TL_OK && (memory > 0 || dir != NULL))
        st = tl_store_cache_wrap_blocks(s, memory, dir, dir_max, &blocks, &s, err);
    free(dir);
    if (st == TL_OK) {
        warm(s, warm_connections);
        *out = s;
    }
    return st;
}

static tl_status open_store(const char *location, const char *const *options, tl_store **out,
                            tl_error *err)
{
    if (location == NULL || location[0] == '\0')
        return tl_error_set(err, TL_ERR_INVALID, "empty warehouse location");
    const char *scheme_end = strstr(location, "://");
    if (strncmp(location, "memory://", 9) == 0) {
        if (options != NULL && options[0] != NULL)
            return tl_error_set(err, TL_ERR_INVALID,
                                "unknown storage option \"%s\" for an in-memory lake", options[0]);
        return tl_store_memory_open(location, out, err);
    }
    if (scheme_end != NULL && strncmp(location, "file://", 7) != 0)
        return open_remote(location, options, out, err);
    if (options != NULL && options[0] != NULL)
        return tl_error_set(err, TL_ERR_INVALID, "unknown storage option \"%s\" for a local lake",
                            options[0]);
    const char *path = scheme_end ? location + 7 : location;
    return tl_store_local_open(path, out, err);
}

tl_status tl_store_open(const char *location, const char *const *options, tl_store **out,
                        tl_error *err)
{
    TL_TRY(open_store(location, options, out, err));
    return tl_store_fault_wrap(out, err); /* tests only: nothing unless a hook is set */
}

void tl_store_free(tl_store *s)
{
    if (s != NULL) s->ops->free(s);
}

tl_status tl_store_put_many(tl_store *s, const tl_store_put_item *items, size_t n, tl_error *err)
{
    if (s->ops->put_many) return s->ops->put_many(s, items, n, err);
    for (size_t i = 0; i < n; i++)
        TL_TRY(tl_store_put(s, items[i].key, items[i].data, items[i].len, err));
    return TL_OK;
}

tl_status tl_store_put_many_new(tl_store *s, const tl_store_put_item *items, size_t n,
                                tl_error *err)
{
    if (s->ops->put_many || !s->ops->put_new) return tl_store_put_many(s, items, n, err);
    for (size_t i = 0; i < n; i++)
        TL_TRY(tl_store_put_new(s, items[i].key, items[i].data, items[i].len, err));
    return TL_OK;
}

#define REMOVE_THREADS 8

typedef struct remove_job {
    tl_store *s;
    char *const *keys;
    atomic_size_t removed;
} remove_job;

static tl_status remove_one(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    remove_job *job = ctx;
    if (job->keys[i] && tl_store_remove(job->s, job->keys[i], NULL) == TL_OK)
        atomic_fetch_add(&job->removed, 1);
    return TL_OK;
}

size_t tl_store_remove_many(tl_store *s, char *const *keys, size_t n)
{
    size_t live = 0;
    for (size_t i = 0; i < n; i++) live += keys[i] != NULL;
    remove_job job = {.s = s, .keys = keys};
    atomic_init(&job.removed, 0);
    size_t threads = live < REMOVE_THREADS ? live : REMOVE_THREADS;
    if (live > 0) tl_parallel_run(n, threads, false, remove_one, &job, NULL);
    return atomic_load(&job.removed);
}

static tl_status remove_or_fail(void *ctx, size_t i, tl_error *err)
{
    remove_job *job = ctx;
    return job->keys[i] ? tl_store_remove(job->s, job->keys[i], err) : TL_OK;
}

tl_status tl_store_remove_all(tl_store *s, char *const *keys, size_t n, tl_error *err)
{
    remove_job job = {.s = s, .keys = keys};
    size_t threads = n < REMOVE_THREADS ? n : REMOVE_THREADS;
    return n ? tl_parallel_run(n, threads, true, remove_or_fail, &job, err) : TL_OK;
}

size_t tl_store_remove_later(tl_store *s, char *const *keys, size_t n)
{
    if (s->ops->remove_later == NULL) return tl_store_remove_many(s, keys, n);
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) queued += keys[i] && s->ops->remove_later(s, keys[i]);
    return queued;
}

void tl_store_settle(tl_store *s)
{
    if (s->ops->settle) s->ops->settle(s);
}

tl_status tl_store_remove_prefix(tl_store *s, const char *prefix, tl_error *err)
{
    tl_strlist keys = {0};
    tl_status st = tl_store_list(s, prefix, &keys, err);
    if (st == TL_OK) st = tl_store_remove_all(s, keys.items, keys.len, err);
    tl_strlist_free(&keys);
    if (st == TL_OK) st = tl_store_sweep(s, prefix, 0, NULL, err);
    return st;
}

tl_status tl_store_sweep(tl_store *s, const char *prefix, int64_t min_age_ms, int64_t *removed,
                         tl_error *err)
{
    int64_t n = 0;
    tl_status st = s->ops->sweep ? s->ops->sweep(s, prefix, min_age_ms, &n, err) : TL_OK;
    if (removed) *removed += n;
    return st;
}

char *tl_store_url_of(const tl_store *s, const char *key)
{
    return tl_strdup_printf("%s/%s", s->url, key);
}

const char *tl_store_key_of(const tl_store *s, const char *url)
{
    /* Spark's Hadoop catalog writes local paths as file:/x (one slash),
     * which is file:///x. */
    if (strncmp(url, "file:/", 6) == 0 && url[6] != '/' && strncmp(s->url, "file://", 7) == 0) {
        size_t n = strlen(s->url + 7);
        if (strncmp(url + 5, s->url + 7, n) != 0 || url[5 + n] != '/') return NULL;
        return url + 5 + n + 1;
    }
    size_t n = strlen(s->url);
    if (strncmp(url, s->url, n) != 0 || url[n] != '/') return NULL;
    return url + n + 1;
}
