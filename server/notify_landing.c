#include "notify_landing.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/cli.h"

#define CHUNK (8u << 20)
#define MAX_BUCKETS 64

/* A landing bucket, opened as a lake for its object calls. */
typedef struct bucket_store {
    char *bucket;
    tl_lake *lake;
} bucket_store;

struct tl_notify_landing {
    const char **options; /* cache off, then the caller's */
    bucket_store buckets[MAX_BUCKETS];
    int n;
    pthread_mutex_t lock;
};

tl_status tl_notify_landing_new(const char *const *options, tl_notify_landing **out, tl_error *err)
{
    size_t n = 0;
    while (options && options[n]) n++;
    tl_notify_landing *l = calloc(1, sizeof *l);
    if (l == NULL || (l->options = calloc(n + 3, sizeof *l->options)) == NULL) {
        free(l);
        return cli_error_nomem(err);
    }
    /* Landing objects are not immutable (a file may be uploaded again under
     * its key), so the store's read cache of immutable objects stays off. */
    l->options[0] = "cache_memory";
    l->options[1] = "0";
    for (size_t i = 0; i < n; i++) l->options[2 + i] = options[i];
    pthread_mutex_init(&l->lock, NULL);
    *out = l;
    return TL_OK;
}

void tl_notify_landing_free(tl_notify_landing *l)
{
    if (l == NULL) return;
    for (int i = 0; i < l->n; i++) {
        tl_lake_close(l->buckets[i].lake);
        free(l->buckets[i].bucket);
    }
    pthread_mutex_destroy(&l->lock);
    free(l->options);
    free(l);
}

static tl_status store_of_locked(tl_notify_landing *l, const char *bucket, tl_lake **out,
                                 tl_error *err)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->buckets[i].bucket, bucket) == 0) return *out = l->buckets[i].lake, TL_OK;
    if (l->n == MAX_BUCKETS)
        return cli_error_set(err, TL_ERR_INVALID, "more than %d landing buckets", MAX_BUCKETS);
    char url[128];
    snprintf(url, sizeof url, "s3://%s", bucket);
    CLI_TRY(tl_lake_open(url, l->options, out, err));
    bucket_store *b = &l->buckets[l->n];
    if ((b->bucket = strdup(bucket)) == NULL) {
        tl_lake_close(*out);
        return cli_error_nomem(err);
    }
    b->lake = *out;
    l->n++;
    return TL_OK;
}

static tl_status store_of(tl_notify_landing *l, const char *bucket, tl_lake **out, tl_error *err)
{
    pthread_mutex_lock(&l->lock);
    tl_status st = store_of_locked(l, bucket, out, err);
    pthread_mutex_unlock(&l->lock);
    return st;
}

static tl_status write_all(FILE *f, const uint8_t *buf, size_t len, tl_error *err)
{
    if (fwrite(buf, 1, len, f) == len) return TL_OK;
    return cli_error_set(err, TL_ERR_STORAGE, "writing a temporary file: %s", strerror(errno));
}

static tl_status temp_file(char **path, FILE **f, tl_error *err)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == 0) dir = "/tmp";
    if (asprintf(path, "%s/tl-notify-XXXXXX", dir) < 0) return cli_error_nomem(err);
    int fd = mkstemp(*path);
    if (fd < 0 || (*f = fdopen(fd, "wb")) == NULL) {
        cli_error_set(err, TL_ERR_STORAGE, "creating a temporary file in %s: %s", dir,
                      strerror(errno));
        if (fd >= 0) close(fd), unlink(*path);
        free(*path);
        *path = NULL;
        return TL_ERR_STORAGE;
    }
    return TL_OK;
}

/* The first chunk (`got` bytes in buf) into a new temporary file, then the
 * rest of the object in further chunks. */
static tl_status copy_to_file(tl_object_reader *r, uint8_t *buf, size_t got, tl_notify_object *o,
                              tl_error *err)
{
    FILE *f = NULL;
    CLI_TRY(temp_file(&o->path, &f, err));
    tl_status st = write_all(f, buf, got, err);
    while (got > 0 && st == TL_OK) {
        st = tl_object_reader_read(r, buf, CHUNK, &got, err);
        if (st == TL_OK) st = write_all(f, buf, got, err);
    }
    if (fclose(f) != 0 && st == TL_OK)
        st = cli_error_set(err, TL_ERR_STORAGE, "writing a temporary file: %s", strerror(errno));
    return st;
}

tl_status tl_notify_landing_fetch(tl_notify_landing *l, const char *bucket, const char *key,
                                  uint64_t memory_max, void (*sized)(void *ctx, uint64_t bytes),
                                  void *ctx, tl_notify_object *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    tl_lake *s;
    CLI_TRY(store_of(l, bucket, &s, err));
    tl_object_reader *r = NULL;
    CLI_TRY(tl_object_reader_open(s, key, &r, err));
    uint8_t *buf = malloc(CHUNK);
    size_t got = 0;
    tl_status st = buf ? tl_object_reader_read(r, buf, CHUNK, &got, err) : cli_error_nomem(err);
    if (st == TL_OK) out->bytes = (uint64_t)tl_object_reader_size(r);
    if (st == TL_OK && sized) sized(ctx, out->bytes);
    if (st == TL_OK && got == out->bytes && got <= memory_max) {
        uint8_t *fit = realloc(buf, got ? got : 1); /* give back the rest of the chunk */
        out->data = fit ? fit : buf;
        tl_object_reader_close(r);
        return TL_OK;
    }
    if (st == TL_OK) st = copy_to_file(r, buf, got, out, err);
    tl_object_reader_close(r);
    free(buf);
    if (st != TL_OK) tl_notify_object_clear(out);
    return st;
}

void tl_notify_object_clear(tl_notify_object *o)
{
    if (o->path) unlink(o->path);
    free(o->path);
    free(o->data);
    memset(o, 0, sizeof *o);
}
