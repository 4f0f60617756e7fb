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

/* An append's data files, encoded in memory: the commit uploads them in its
 * one parallel batch, together with the manifest, list and index. */
typedef struct encoded {
    tl_ice_data_file *files;
    char **keys;
    tl_buf *bytes;
    tl_store_put_item *items; /* keys and bytes, as the commit uploads them */
    size_t n;
} encoded;

static void encoded_free(tl_table *t, encoded *e, bool remove)
{
    for (size_t i = 0; i < e->n; i++) {
        if (remove) tl_store_remove(t->lake->store, e->keys[i], NULL);
        free(e->keys[i]);
        tl_ice_data_file_clear(&e->files[i]);
        tl_buf_free(&e->bytes[i]);
    }
    free(e->files);
    free(e->keys);
    free(e->bytes);
    free(e->items);
}

/* Data files are encoded by a few threads at once, to use the cores. Each
 * worker takes the next partition; tl_data_file_encode only reads the table. */
#define ENCODE_THREADS 4

typedef struct encode_job {
    const tl_table *t;
    const tl_rows *rows;
    tl_partition_rows *parts;
    size_t n_parts, next; /* next: guarded by lock */
    encoded *e;
    tl_status *status; /* per partition */
    tl_error first_err;
    tl_status first_st;
    bool failed;
    pthread_mutex_t lock;
} encode_job;

static void *encode_worker(void *arg)
{
    encode_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        size_t i = j->failed ? j->n_parts : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->n_parts) return NULL;
        tl_error e;
        j->status[i] = tl_data_file_encode(j->t, &j->rows->schema, &j->parts[i], &j->e->files[i],
                                           &j->e->keys[i], &j->e->bytes[i], &e);
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

/* Keeps the encoded files at the front, so that encoded_free frees them. */
static void compact_encoded(encoded *e, const tl_status *status, size_t n_parts)
{
    for (size_t i = 0; i < n_parts; i++) {
        if (status[i] != TL_OK) continue;
        if (e->n != i) {
            e->files[e->n] = e->files[i];
            e->keys[e->n] = e->keys[i];
            e->bytes[e->n] = e->bytes[i];
            memset(&e->files[i], 0, sizeof e->files[i]);
            memset(&e->bytes[i], 0, sizeof e->bytes[i]);
            e->keys[i] = NULL;
        }
        e->items[e->n] =
            (tl_store_put_item){e->keys[e->n], e->bytes[e->n].data, e->bytes[e->n].len};
        e->n++;
    }
}

static tl_status encode_files(tl_table *t, const tl_rows *rows, tl_partition_rows *parts,
                              size_t n_parts, encoded *e, tl_error *err)
{
    e->files = calloc(n_parts + 1, sizeof *e->files);
    e->keys = calloc(n_parts + 1, sizeof *e->keys);
    e->bytes = calloc(n_parts + 1, sizeof *e->bytes);
    e->items = calloc(n_parts + 1, sizeof *e->items);
    tl_status *status = calloc(n_parts + 1, sizeof *status);
    if (!e->files || !e->keys || !e->bytes || !e->items || !status) {
        free(status);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n_parts; i++) status[i] = TL_ERR_INTERNAL; /* not encoded */
    encode_job j = {
        .t = t, .rows = rows, .parts = parts, .n_parts = n_parts, .e = e, .status = status};
    pthread_mutex_init(&j.lock, NULL);
    pthread_t tid[ENCODE_THREADS];
    size_t started = 0;
    while (started + 1 < ENCODE_THREADS && started + 1 < n_parts &&
           pthread_create(&tid[started], NULL, encode_worker, &j) == 0)
        started++;
    encode_worker(&j); /* this thread works too */
    for (size_t i = 0; i < started; i++) pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);
    compact_encoded(e, status, n_parts);
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
    encoded e = {0};
    tl_commit_result cr = {0};
    tl_status st = tl_append_layout(t, rows, &parts, &n_parts, err);
    if (st == TL_OK) st = encode_files(t, rows, parts, n_parts, &e, err);
    tl_partition_rows_free(parts, n_parts);
    tl_commit_request req = {.batch_id = o->batch_id,
                             .files = e.files,
                             .n_files = e.n,
                             .rows = rows,
                             .uploads = e.items,
                             .n_uploads = e.n};
    for (size_t i = 0; i < e.n; i++) {
        req.added_rows += e.files[i].record_count;
        req.added_bytes += e.files[i].file_size_in_bytes;
    }
    bool committing = st == TL_OK;
    if (committing) st = tl_commit_append(t, &req, &cr, err);
    bool keep = (st == TL_OK && !cr.duplicate) || cr.may_have_landed;
    /* Uploaded only by the commit; deleted only when it definitely did not land. */
    encoded_free(t, &e, committing && !keep);
    if (st != TL_OK) return st;
    out->attempts = cr.attempts;
    out->duplicate = cr.duplicate;
    if (!cr.duplicate) {
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
    /* Only a hint: readers probe past it, so a failure here is harmless. On an
     * object store it would be a third sequential round trip: readers there
     * list the versions instead (table.c), so it is not written. */
    if (!tl_store_is_local(t->lake->store)) return;
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
