/* tl_table_append: read the stream, fit it to the table, lay it out, write
 * the data files, commit. Nothing is left behind when any step fails. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/stream.h"
#include "arrow/take.h"
#include "core/clock.h"
#include "core/parallel.h"
#include "table/append.h"
#include "table/append_merge.h"
#include "formats/input/text_batch.h"
#include "table/attachments.h"
#include "table/batch_ids.h"
#include "table/commit_point.h"
#include "table/evolve.h"
#include "table/head_footer.h"
#include "table/lvi.h"
#include "table/maintain.h"

/* Data files are encoded by a few threads at once, to use the cores. Each
 * worker takes the next partition; tl_data_file_encode only reads the table. */
#define ENCODE_THREADS 4

typedef struct encode_job {
    const tl_table *t;
    const tl_rows *rows;
    tl_partition_rows *parts;
    tl_append_files *e;
    tl_status *status; /* per partition */
} encode_job;

static tl_status encode_one(void *ctx, size_t i, tl_error *err)
{
    encode_job *j = ctx;
    j->status[i] = tl_data_file_encode(j->t, &j->rows->schema, &j->parts[i], &j->e->files[i],
                                       &j->e->keys[i], &j->e->bytes[i], err);
    return j->status[i];
}

/* Keeps the encoded files at the front, so that tl_append_files_free frees them. */
static void compact_encoded(tl_append_files *e, const tl_status *status, size_t n_parts)
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
                              size_t n_parts, tl_append_files *e, tl_error *err)
{
    TL_TRY(tl_append_files_reserve(e, n_parts, err));
    tl_status *status = calloc(n_parts + 1, sizeof *status);
    if (status == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n_parts; i++) status[i] = TL_ERR_INTERNAL; /* not tl_append_files */
    encode_job j = {.t = t, .rows = rows, .parts = parts, .e = e, .status = status};
    tl_status st = tl_parallel_run(n_parts, ENCODE_THREADS, true, encode_one, &j, err);
    compact_encoded(e, status, n_parts);
    free(status);
    return st;
}

/* Moves src's files after dst's (src's arrays are freed, not its contents). */
static tl_status encoded_take(tl_append_files *dst, tl_append_files *src, tl_error *err)
{
    size_t n = dst->n + src->n + 1;
    tl_ice_data_file *files = realloc(dst->files, n * sizeof *files);
    if (files) dst->files = files;
    char **keys = files ? realloc(dst->keys, n * sizeof *keys) : NULL;
    if (keys) dst->keys = keys;
    tl_buf *bytes = keys ? realloc(dst->bytes, n * sizeof *bytes) : NULL;
    if (bytes) dst->bytes = bytes;
    tl_store_put_item *items = bytes ? realloc(dst->items, n * sizeof *items) : NULL;
    if (items) dst->items = items;
    tl_rows *ends = items ? realloc(dst->ends, n * sizeof *ends) : NULL;
    if (ends) dst->ends = ends;
    int64_t *chunk = ends ? realloc(dst->chunk, n * sizeof *chunk) : NULL;
    if (chunk) dst->chunk = chunk;
    struct ArrowArray *raw = chunk ? realloc(dst->raw, n * sizeof *raw) : NULL;
    if (raw) dst->raw = raw;
    if (raw == NULL) return tl_error_nomem(err);
    memcpy(dst->files + dst->n, src->files, src->n * sizeof *files);
    memcpy(dst->keys + dst->n, src->keys, src->n * sizeof *keys);
    memcpy(dst->bytes + dst->n, src->bytes, src->n * sizeof *bytes);
    memcpy(dst->items + dst->n, src->items, src->n * sizeof *items);
    memcpy(dst->ends + dst->n, src->ends, src->n * sizeof *ends);
    memcpy(dst->chunk + dst->n, src->chunk, src->n * sizeof *chunk);
    memcpy(dst->raw + dst->n, src->raw, src->n * sizeof *raw);
    dst->n += src->n;
    if (dst->schema.release == NULL) { /* the raw rows' schema, the same in every chunk */
        dst->schema = src->schema;
        src->schema.release = NULL;
    }
    free(src->files);
    free(src->keys);
    free(src->bytes);
    free(src->items);
    free(src->ends);
    free(src->chunk);
    free(src->raw);
    if (src->schema.release) tl_schema_release(&src->schema);
    memset(src, 0, sizeof *src);
    return TL_OK;
}

/* Rows per chunk of an append. A larger input is laid out and encoded a
 * chunk at a time, so its memory stays bounded whatever its size; each
 * chunk's files are sorted runs, merged per partition at the end where they
 * overlap (append_merge.h). */
#define CHUNK_ROWS (INT64_C(1) << 20)

/* TIMELAKE_APPEND_CHUNK_ROWS overrides it, for tests of the chunked path. */
static int64_t chunk_rows(void)
{
    const char *v = getenv("TIMELAKE_APPEND_CHUNK_ROWS");
    long long n = v ? atoll(v) : 0;
    return n > 0 ? n : CHUNK_ROWS;
}

typedef struct append_state {
    tl_table *t;
    const tl_append_options *o;
    bool replace;                  /* tl_table_replace */
    const tl_evolution *evolution; /* tl_table_replace_schema, or NULL */
    tl_attachment_uploads attachments;
    const char *const *batch_ids; /* the options' batch_id or batch_ids */
    size_t n_batch_ids;
    int64_t started_us;
    /* Every data file so far (append_merge.h): the commit uploads those
     * still in memory in its one parallel batch, with the manifest, list and index. */
    tl_append_files files;
    size_t uploaded;
    int64_t n_chunks; /* chunks encoded so far */
    /* Encoded bytes over rows' bytes of the chunks encoded so far: a raw
     * run's encoded size is estimated from them (the first chunk is always
     * encoded). */
    int64_t encoded_bytes, encoded_rows_bytes;
    tl_rows newest; /* rows of the index to be: the winners of earlier chunks */
    bool has_newest;
    tl_head_objects footers;        /* of the large files uploaded ahead of the commit */
    const char *const *own_summary; /* Timelake's own summary pairs (timelake.* keys) */
    tl_maintain_fold *fold;         /* inline compaction folded into the commit, or NULL */
} append_state;

/* After a lost race: the schema change again, on the winner's version. */
static tl_status restage(tl_table *t, void *ctx, tl_error *err)
{
    return tl_table_stage_evolution(t, ctx, NULL, err);
}

/* The first and last rows of a partition's sorted rows: where its run
 * starts and ends, to tell whether it overlaps another chunk's. */
static tl_status run_ends(const tl_rows *rows, const tl_partition_rows *part, tl_rows *out,
                          tl_error *err)
{
    int64_t n = part->array.length;
    if (n == 0) return TL_OK; /* not known: merged with any other run */
    int64_t idx[2] = {0, n - 1};
    TL_TRY(tl_schema_copy(&rows->schema, &out->schema, err));
    tl_status st = tl_arrow_take_struct(&rows->schema, &part->array, idx, 2, &out->array, err);
    if (st != TL_OK) tl_schema_release(&out->schema);
    return st;
}

static bool hold_raw(const append_state *s, const tl_rows *rows, bool last)
{
    if (s->n_chunks == 0 || s->encoded_rows_bytes <= 0) return false; /* cheap answers first */
    return tl_append_hold_raw(
        s->n_chunks, s->encoded_rows_bytes, tl_append_files_held(&s->files, s->uploaded),
        tl_append_rows_bytes(&rows->schema, &rows->array), tl_append_hold_bytes(), last);
}

/* Lays out and encodes a chunk (or holds its runs raw); *tails gets the
 * newest rows of its series in each partition, for the index (an empty row
 * set for a plain table). */
static tl_status encode_chunk(append_state *s, const tl_rows *rows, bool last, tl_rows *tails,
                              tl_error *err)
{
    tl_partition_rows *parts = NULL;
    size_t n_parts = 0;
    tl_append_files e = {0};
    memset(tails, 0, sizeof *tails);
    tl_status st = tl_append_layout(s->t, rows, &parts, &n_parts, err);
    if (st == TL_OK && s->t->contract.time_index >= 0)
        st = tl_append_series_tails(s->t, &rows->schema, parts, n_parts, tails, err);
    bool raw = st == TL_OK && hold_raw(s, rows, last);
    for (size_t i = 0; st == TL_OK && !raw && i < n_parts; i++)
        s->encoded_rows_bytes += tl_append_rows_bytes(&rows->schema, &parts[i].array);
    if (st == TL_OK && raw) {
        double ratio = (double)s->encoded_bytes / (double)s->encoded_rows_bytes;
        st = tl_append_files_hold(s->t, &rows->schema, parts, n_parts, ratio, &e, err);
    } else if (st == TL_OK) {
        st = encode_files(s->t, rows, parts, n_parts, &e, err);
    }
    /* The ends first: a raw run's rows are taken from its part. */
    for (size_t i = 0; st == TL_OK && i < e.n; i++) {
        e.chunk[i] = s->n_chunks;
        const tl_partition_rows one = {.array = raw ? e.raw[i] : parts[i].array};
        st = run_ends(rows, &one, &e.ends[i], err);
        if (!raw) s->encoded_bytes += (int64_t)e.bytes[i].len;
    }
    s->n_chunks++;
    tl_partition_rows_free(parts, n_parts);
    if (st == TL_OK) st = encoded_take(&s->files, &e, err);
    tl_append_files_free(s->t, &e, false);
    if (st != TL_OK && tails->schema.release) tl_rows_free(tails);
    return st;
}

/* Encodes and uploads the files held in memory, to make room for the next
 * chunk, once they are more than an append holds (append_merge.h). */
static tl_status upload_pending(append_state *s, tl_error *err)
{
    size_t n = s->files.n - s->uploaded;
    if (n == 0 || tl_append_files_held(&s->files, s->uploaded) <= tl_append_hold_bytes())
        return TL_OK;
    TL_TRY(tl_append_files_encode_raw(s->t, &s->files, err));
    /* The head carries these files' footers too: kept while the bytes are here. */
    for (size_t i = s->uploaded; i < s->files.n; i++)
        TL_TRY(tl_head_footer_keep(s->t, s->files.files[i].file_path, s->files.bytes[i].data,
                                   s->files.bytes[i].len, &s->footers, err));
    tl_status st = tl_store_put_many_new(s->t->lake->store, s->files.items + s->uploaded, n, err);
    if (st != TL_OK) { /* some may have gone up */
        tl_store_remove_many(s->t->lake->store, s->files.keys + s->uploaded, n);
        return st;
    }
    for (size_t i = s->uploaded; i < s->files.n; i++) {
        tl_buf_free(&s->files.bytes[i]);
        s->files.items[i].data = NULL;
        s->files.items[i].len = 0;
    }
    s->uploaded = s->files.n;
    return TL_OK;
}

/* Keeps what the index needs of the chunks: the newest rows of their series
 * (merged once there are two chunks). Takes the rows. */
static tl_status track_newest(append_state *s, tl_rows *rows, tl_error *err)
{
    if (!s->has_newest) {
        s->newest = *rows;
        s->has_newest = true;
        return TL_OK;
    }
    tl_rows merged;
    tl_status st = tl_lvi_newest(s->t, &s->newest, rows, &merged, err);
    tl_rows_free(rows);
    if (st != TL_OK) return st;
    tl_rows_free(&s->newest);
    s->newest = merged;
    return TL_OK;
}

/* The options' summary pairs followed by Timelake's own (malloc'd pointer
 * array, or NULL when there are none of the latter). */
static const char **all_summary(const append_state *s, bool *nomem)
{
    *nomem = false;
    if (s->own_summary == NULL || s->own_summary[0] == NULL) return NULL;
    size_t a = 0, b = 0;
    while (s->o->summary && s->o->summary[a]) a++;
    while (s->own_summary[b]) b++;
    const char **all = calloc(a + b + 1, sizeof *all);
    if (all == NULL) {
        *nomem = true;
        return NULL;
    }
    if (a) memcpy(all, s->o->summary, a * sizeof *all);
    memcpy(all + a, s->own_summary, b * sizeof *all);
    return all;
}

static tl_status commit_files(append_state *s, tl_append_result *out, tl_error *err)
{
    bool nomem;
    const char **summary = all_summary(s, &nomem);
    if (nomem) return tl_error_nomem(err);
    tl_append_files *e = &s->files;
    tl_commit_result cr = {0};
    tl_commit_request req = {.batch_ids = s->batch_ids,
                             .n_batch_ids = s->n_batch_ids,
                             .files = e->files,
                             .n_files = e->n,
                             .rows = s->has_newest ? &s->newest : NULL,
                             .uploads = e->items + s->uploaded,
                             .n_uploads = e->n - s->uploaded,
                             .footers = &s->footers,
                             .replace = s->replace,
                             .expect_version = s->o->expect_version,
                             .summary = summary ? summary : s->o->summary,
                             .attachments = &s->attachments,
                             .rebase = s->evolution ? restage : NULL,
                             .rebase_ctx = (void *)s->evolution};
    /* A plain append of rows folds its inline compaction into its commit. */
    if (s->fold && e->n > 0 && !s->replace && !s->evolution &&
        tl_maintain_fold_wanted(s->t, s->o->maintain)) {
        req.fold = tl_maintain_fold_stage;
        req.fold_ctx = s->fold;
    }
    for (size_t i = 0; i < e->n; i++) {
        req.added_rows += e->files[i].record_count;
        req.added_bytes += e->files[i].file_size_in_bytes;
    }
    tl_status st = tl_commit_append(s->t, &req, &cr, err);
    if (req.fold) tl_maintain_fold_end(s->t, s->fold, st, &cr);
    free(summary);
    /* Kept when the commit landed, or when it may have (unknown outcome). */
    bool keep = (st == TL_OK && !cr.duplicate) || cr.may_have_landed;
    tl_append_files_free(s->t, e, !keep);
    tl_attachments_free(s->t, &s->attachments, !keep);
    memset(e, 0, sizeof *e);
    s->uploaded = 0;
    if (st != TL_OK) return st;
    out->attempts = cr.attempts;
    out->duplicate = cr.duplicate;
    memcpy(out->warning, cr.warning, sizeof out->warning);
    if (!cr.duplicate) {
        out->rows = req.added_rows;
        out->files = (int64_t)req.n_files;
        out->bytes = req.added_bytes;
    }
    return TL_OK;
}

/* Reads, fits and encodes the stream chunk by chunk. */
static tl_status encode_stream(append_state *s, struct ArrowArrayStream *stream,
                               const struct ArrowSchema *schema, tl_error *err)
{
    for (bool eof = false; !eof;) {
        struct ArrowArray *batches = NULL;
        size_t n = 0;
        TL_TRY(tl_stream_read_rows(stream, chunk_rows(), &batches, &n, &eof, err));
        tl_rows rows;
        tl_status st = tl_append_prepare_take(s->t, schema, batches, n, s->started_us, &rows, err);
        for (size_t i = 0; i < n; i++) tl_array_release(&batches[i]);
        free(batches);
        if (st != TL_OK) return st;
        if (rows.array.length == 0) {
            tl_rows_free(&rows);
            continue;
        }
        tl_rows tails;
        st = upload_pending(s, err);
        if (st == TL_OK) st = encode_chunk(s, &rows, eof, &tails, err);
        tl_rows_free(&rows);
        if (st == TL_OK && tails.schema.release) st = track_newest(s, &tails, err);
        if (st != TL_OK) return st;
    }
    /* One sorted run per partition, as one sort of the whole input makes;
     * what the merge left raw is encoded for the commit's upload. */
    if (s->n_chunks > 1)
        TL_TRY(tl_append_merge_runs(s->t, &s->files, &s->uploaded, &s->footers, NULL, err));
    return tl_append_files_encode_raw(s->t, &s->files, err);
}

/* Writes id into buf for a message, bytes that are not printable ASCII as \xNN. */
static const char *printable(const char *id, char *buf, size_t size)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)id; *p && o + 5 < size; p++)
        o += (size_t)snprintf(buf + o, size - o, *p >= 0x20 && *p < 0x7f ? "%c" : "\\x%02x", *p);
    buf[o] = 0;
    return buf;
}

/* The append's batch ids (batch_id is one of them), checked: summaries are JSON. */
static tl_status batch_ids_of(const tl_append_options *o, append_state *s, tl_error *err)
{
    if (o->batch_id && o->n_batch_ids)
        return tl_error_set(err, TL_ERR_INVALID, "give batch_id or batch_ids, not both");
    s->batch_ids = o->batch_id ? &o->batch_id : o->batch_ids;
    s->n_batch_ids = o->batch_id ? 1 : o->batch_ids ? o->n_batch_ids : 0;
    for (size_t i = 0; i < s->n_batch_ids; i++) {
        const char *id = s->batch_ids[i];
        char shown[256];
        if (id == NULL) return tl_error_set(err, TL_ERR_INVALID, "batch_ids[%zu] is NULL", i);
        if (!tl_utf8_valid((const uint8_t *)id, strlen(id)))
            return tl_error_set(err, TL_ERR_INVALID,
                                "batch id \"%s\" is not valid UTF-8 (table metadata is JSON): "
                                "give a UTF-8 batch id",
                                printable(id, shown, sizeof shown));
    }
    return TL_OK;
}

/* With expect_version, the handle must be at that version: a handle behind
 * it is brought up to date first (the table may well be there). */
static tl_status check_expected(tl_table *t, int64_t expect, tl_error *err)
{
    if (expect < 0) return tl_error_set(err, TL_ERR_INVALID, "expect_version is negative");
    if (expect == 0 || t->version == expect) return TL_OK;
    if (t->version < expect) TL_TRY(tl_table_reload_same(t, err));
    if (t->version == expect) return TL_OK;
    return tl_error_set(err, TL_ERR_CONFLICT, "%s is at version %lld, not %lld as expected",
                        t->name.full, (long long)t->version, (long long)expect);
}

static tl_status append_stream(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *o, bool replace,
                               const tl_evolution *evolution, const char *const *own_summary,
                               int64_t started_us, tl_maintain_fold *fold, tl_append_result *out,
                               tl_error *err)
{
    append_state s = {.t = t,
                      .o = o,
                      .replace = replace,
                      .evolution = evolution,
                      .started_us = started_us,
                      .own_summary = own_summary,
                      .fold = fold};
    tl_table_stash stash = {0};
    TL_TRY(tl_table_check_not_dropped(t, err));
    TL_TRY(batch_ids_of(o, &s, err));
    TL_TRY(tl_commit_extras_check(o, err));
    struct ArrowSchema schema = {0};
    int rc = stream->get_schema(stream, &schema);
    if (rc != 0) return tl_stream_producer_error(stream, rc, "get_schema", err);
    /* A batch already committed costs no reading or writing at all. */
    out->attempts = 1;
    bool seen = false;
    tl_status st =
        s.n_batch_ids ? tl_batch_duplicate(t, s.batch_ids, s.n_batch_ids, &seen, err) : TL_OK;
    if (st != TL_OK || seen) {
        out->duplicate = seen;
        tl_schema_release(&schema);
        return st;
    }
    /* A table whose manifests cannot be read cannot be queried: an append
     * reporting success into it would hide that (checked once per manifest
     * and process: the parse is cached). */
    st = tl_table_check_manifests(t, err);
    if (st == TL_OK) st = check_expected(t, o->expect_version, err);
    /* The rows are laid out for the new schema and spec, which the commit records. */
    if (st == TL_OK && evolution) st = tl_table_stage_evolution(t, evolution, &stash, err);
    if (st == TL_OK) st = encode_stream(&s, stream, &schema, err);
    if (st == TL_OK)
        st = tl_attachments_prepare(t, o->attachments, o->attachments_len, &s.attachments, err);
    /* A commit of no rows still lands when it replaces, or records something. */
    bool commit = s.files.n > 0 || replace || o->attachments_len > 0 ||
                  (o->summary && o->summary[0]) || (own_summary && own_summary[0]);
    if (st == TL_OK && commit) st = commit_files(&s, out, err);
    tl_table_unstage(t, &stash, st == TL_OK && !out->duplicate);
    tl_attachments_free(t, &s.attachments, false);     /* not uploaded unless committed */
    tl_append_files_free(t, &s.files, s.uploaded > 0); /* what failed before the commit */
    if (s.has_newest) tl_rows_free(&s.newest);
    tl_head_objects_clear(&s.footers);
    tl_schema_release(&schema);
    return st;
}

static tl_status commit_stream(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *options, bool replace,
                               const tl_evolution *evolution, const char *const *own_summary,
                               tl_append_result *out, tl_error *err)
{
    double t0 = tl_monotonic_ms();
    int64_t started_us = tl_now_micros();
    tl_append_options defaults = {.batch_id = NULL, .maintain = -1};
    const tl_append_options *o = options ? options : &defaults;
    memset(out, 0, sizeof *out);
    if (stream == NULL || stream->release == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "append needs a live ArrowArrayStream");
    char what[sizeof t->name.full + 32];
    snprintf(what, sizeof what, "%s %s", replace ? "replace" : "append to", t->name.full);
    tl_status st = tl_store_check_writable(t->lake->store, what, err);
    /* The commits below leave their last wait for the disk to the next one
     * or to the sync at the end (table_internal.h); an inline compaction due
     * after the append is folded into its commit (maintain_fold.c): such an
     * append waits for the disk twice, not three times. */
    t->defer_sync = true;
    /* Without inline maintenance the append's commit is its last; with
     * it, the fold says (maintain_fold.c). */
    t->sync_early = !tl_maintain_inline_wanted(t, o->maintain);
    tl_maintain_fold fold = {0};
    if (st == TL_OK)
        st = append_stream(t, stream, o, replace, evolution, own_summary, started_us, &fold, out,
                           err);
    stream->release(stream);
    out->commit_ms = tl_monotonic_ms() - t0;
    int64_t appended = t->version;
    /* Inline maintenance, after a real commit only: a failure is reported in
     * out->maintenance_error and never undoes the append. */
    if (st == TL_OK && !out->duplicate && out->rows > 0)
        tl_maintain_after_append(t, o->maintain, &fold, out);
    t->defer_sync = t->sync_early = false;
    tl_error sync_err = {0};
    double t1 = tl_monotonic_ms();
    bool append_unsynced = t->unsynced && t->version == appended; /* no commit after it */
    tl_status synced = tl_table_sync_commits(t, &sync_err);
    t->sync_status = TL_OK;                                        /* reported here */
    if (append_unsynced) out->commit_ms += tl_monotonic_ms() - t1; /* the append's own wait */
    if (st == TL_OK && synced != TL_OK) { /* visible, perhaps not durable: unknown */
        st = synced;
        if (err) *err = sync_err;
    }
    out->version = t->version;
    return st;
}

tl_status tl_table_append_rows(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *options, tl_append_result *out,
                               tl_error *err)
{
    return commit_stream(t, stream, options, false, NULL, NULL, out, err);
}

tl_status tl_table_commit_rows(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *options, bool replace,
                               const char *const *own_summary, tl_append_result *out, tl_error *err)
{
    return commit_stream(t, stream, options, replace, NULL, own_summary, out, err);
}

tl_status tl_table_replace(tl_table *t, struct ArrowArrayStream *stream,
                           const tl_append_options *options, tl_append_result *out, tl_error *err)
{
    return commit_stream(t, stream, options, true, NULL, NULL, out, err);
}

tl_status tl_table_replace_schema(tl_table *t, const struct ArrowSchema *schema,
                                  const char *const *partition_by, size_t partition_by_len,
                                  struct ArrowArrayStream *stream, const tl_append_options *options,
                                  tl_append_result *out, tl_error *err)
{
    tl_evolution ev = {schema, partition_by, partition_by_len};
    return commit_stream(t, stream, options, true, &ev, NULL, out, err);
}
