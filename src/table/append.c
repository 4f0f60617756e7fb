/* tl_table_append: read the stream, fit it to the table, lay it out, write
 * the data files, commit. Nothing is left behind when any step fails. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "core/clock.h"
#include "table/append.h"
#include "table/maintain.h"

typedef struct written {
    tl_ice_data_file *files;
    char **keys;
    size_t n;
} written;

static void written_free(tl_table *t, written *w, bool remove)
{
    for (size_t i = 0; i < w->n; i++) {
        if (remove) tl_store_remove(t->lake->store, w->keys[i], NULL);
        free(w->keys[i]);
        tl_ice_data_file_clear(&w->files[i]);
    }
    free(w->files);
    free(w->keys);
}

/* Data files are encoded and uploaded by a few threads at once: on an object
 * store the uploads then cost one round trip of wall time instead of one per
 * partition, and encoding uses the cores. Each worker takes the next
 * partition; tl_data_file_write only reads the table. */
#define WRITE_THREADS 4

typedef struct write_job {
    const tl_table *t;
    const tl_rows *rows;
    tl_partition_rows *parts;
    size_t n_parts, next; /* next: guarded by lock */
    written *w;
    tl_status *status; /* per partition */
    tl_error first_err;
    tl_status first_st;
    bool failed;
    pthread_mutex_t lock;
} write_job;

static void *write_worker(void *arg)
{
    write_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->failed ? j->n_parts : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n_parts) return NULL;
        tl_error e;
        j->status[i] = tl_data_file_write(j->t, &j->rows->schema, &j->parts[i], &j->w->files[i],
                                          &j->w->keys[i], &e);
        if (j->status[i] != TL_OK) {
            pthread_mutex_lock(&j->lock);
            if (!j->failed) {
                j->first_err = e;
                j->first_st = j->status[i];
            }
            j->failed = true;
            pthread_mutex_unlock(&j->lock);
        }
    }
}

static tl_status write_files(tl_table *t, const tl_rows *rows, tl_partition_rows *parts,
                             size_t n_parts, written *w, tl_error *err)
{
    w->files = calloc(n_parts + 1, sizeof *w->files);
    w->keys = calloc(n_parts + 1, sizeof *w->keys);
    tl_status *status = calloc(n_parts + 1, sizeof *status);
    if (w->files == NULL || w->keys == NULL || status == NULL) {
        free(status);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n_parts; i++) status[i] = TL_ERR_INTERNAL; /* not written */
    write_job j = {
        .t = t, .rows = rows, .parts = parts, .n_parts = n_parts, .w = w, .status = status};
    pthread_mutex_init(&j.lock, NULL);
    pthread_t tid[WRITE_THREADS];
    size_t started = 0;
    while (started + 1 < WRITE_THREADS && started + 1 < n_parts &&
           pthread_create(&tid[started], NULL, write_worker, &j) == 0)
        started++;
    write_worker(&j); /* this thread works too */
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);
    /* Keep the written files at the front, so that written_free removes them on failure. */
    for (size_t i = 0; i < n_parts; i++) {
        if (status[i] != TL_OK) continue;
        w->files[w->n] = w->files[i];
        w->keys[w->n] = w->keys[i];
        if (w->n != i) {
            memset(&w->files[i], 0, sizeof w->files[i]);
            w->keys[i] = NULL;
        }
        w->n++;
    }
    free(status);
    if (j.failed) {
        if (err) *err = j.first_err;
        return j.first_st;
    }
    return TL_OK;
}

static tl_status append_rows(tl_table *t, const tl_rows *rows, const tl_append_options *o,
                             tl_append_result *out, tl_error *err)
{
    tl_partition_rows *parts = NULL;
    size_t n_parts = 0;
    written w = {0};
    tl_commit_result cr = {0};
    tl_status st = tl_append_layout(t, rows, &parts, &n_parts, err);
    if (st == TL_OK) st = write_files(t, rows, parts, n_parts, &w, err);
    tl_partition_rows_free(parts, n_parts);
    tl_commit_request req = {
        .batch_id = o->batch_id, .files = w.files, .n_files = w.n, .rows = rows};
    for (size_t i = 0; i < w.n; i++) {
        req.added_rows += w.files[i].record_count;
        req.added_bytes += w.files[i].file_size_in_bytes;
    }
    if (st == TL_OK) st = tl_commit_append(t, &req, &cr, err);
    bool keep = st == TL_OK && !cr.duplicate;
    written_free(t, &w, !keep);
    if (st != TL_OK) return st;
    out->attempts = cr.attempts;
    out->duplicate = cr.duplicate;
    if (keep) {
        out->rows = req.added_rows;
        out->files = (int64_t)req.n_files;
        out->bytes = req.added_bytes;
    }
    return TL_OK;
}

static void write_version_hint(tl_table *t)
{
    char key[sizeof t->name.key + 64], text[24];
    snprintf(key, sizeof key, "%s/metadata/version-hint.text", t->name.key);
    int n = snprintf(text, sizeof text, "%lld", (long long)t->version);
    /* Only a hint: readers probe past it, so a failure here is harmless. */
    tl_store_put(t->lake->store, key, text, (size_t)n, NULL);
}

static tl_status append_collected(tl_table *t, const struct ArrowSchema *schema,
                                  const struct ArrowArray *batches, size_t n,
                                  const tl_append_options *o, int64_t started_us,
                                  tl_append_result *out, tl_error *err)
{
    /* A batch already committed costs no writing at all. */
    if (o->batch_id && tl_batch_committed(t->md, o->batch_id)) {
        out->duplicate = 1;
        out->attempts = 1;
        return TL_OK;
    }
    tl_rows rows;
    TL_TRY(tl_append_prepare(t, schema, batches, n, started_us, &rows, err));
    tl_status st = TL_OK;
    if (rows.array.length > 0) {
        int64_t before = t->version;
        st = append_rows(t, &rows, o, out, err);
        if (st == TL_OK && t->version != before) write_version_hint(t);
    } else {
        out->attempts = 1;
    }
    tl_rows_free(&rows);
    return st;
}

tl_status tl_table_append(tl_table *t, struct ArrowArrayStream *stream,
                          const tl_append_options *options, tl_append_result *out, tl_error *err)
{
    double t0 = tl_monotonic_ms();
    int64_t started_us = tl_now_micros();
    tl_append_options defaults = {.batch_id = NULL, .maintain = -1};
    const tl_append_options *o = options ? options : &defaults;
    memset(out, 0, sizeof *out);
    if (stream == NULL || stream->release == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "append needs a live ArrowArrayStream");
    struct ArrowSchema schema = {0};
    struct ArrowArray *batches = NULL;
    size_t n = 0;
    tl_status st = tl_stream_collect(stream, &schema, &batches, &n, err);
    stream->release(stream);
    if (st == TL_OK) st = append_collected(t, &schema, batches, n, o, started_us, out, err);
    for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
    free(batches);
    tl_schema_release(&schema);
    out->commit_ms = tl_monotonic_ms() - t0;
    /* Inline maintenance, after a real commit only: a failure is reported in
     * out->maintenance_error and never undoes the append. */
    if (st == TL_OK && !out->duplicate && out->rows > 0)
        tl_maintain_after_append(t, o->maintain, out);
    out->version = t->version;
    return st;
}
