#include "query/remote_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/grow.h"
#include "formats/parquet/parquet_subset.h"
#include "query/local_file.h"
#include "query/query_columns.h"
#include "query/row_group_prune.h"
#include "store/digest.h"
#include "table/head.h"
#include "table/head_footer.h"

typedef enum mode { M_DONE, M_WHOLE, M_RANGED } mode;

typedef struct range {
    uint64_t off, len;
    tl_buf data;
} range;

/* One remote file being fetched. */
typedef struct job {
    tl_fetch_file *ff;
    const char *url, *key;
    char keybuf[1024];
    uint64_t size;
    mode mode;
    uint64_t tail_off; /* tail holds the bytes [tail_off, size) */
    tl_buf tail;
    tl_arena arena;
    tl_pq_file_meta meta;
    bool *keep_rg, *keep_col; /* keep_col NULL: every column */
    range *ranges;            /* the chunk reads planned from the footer */
    size_t n_ranges;
    range *pre; /* the chunk reads predicted from the manifest, made with the tail's */
    size_t n_pre;
    char *target; /* where the result goes */
    bool planned; /* its footer came with the head: its reads join the first batch */
} job;

typedef struct fetch {
    tl_query_engine *e;
    const tl_table *t;
    job *jobs;
    size_t n;
    bool *fields; /* columns of t the query may use */
    bool narrow;  /* may the query need less than every byte of a file? */
} fetch;

static void job_clear(job *j)
{
    tl_buf_free(&j->tail);
    tl_arena_free(&j->arena);
    free(j->keep_rg);
    free(j->keep_col);
    for (size_t i = 0; i < j->n_ranges; i++) tl_buf_free(&j->ranges[i].data);
    free(j->ranges);
    for (size_t i = 0; i < j->n_pre; i++) tl_buf_free(&j->pre[i].data);
    free(j->pre);
    free(j->target);
}

/* ---- Batches of reads ---- */

typedef struct batch {
    tl_store_get_item *items;
    job **owner;
    size_t n, cap;
} batch;

static tl_status batch_add(batch *b, job *j, uint64_t off, uint64_t len, tl_error *err)
{
    if (b->n == b->cap) {
        size_t cap = tl_grow_capacity(b->cap, b->n + 1, sizeof *b->items, 16);
        if (cap == 0 || tl_realloc_array(&b->items, cap, sizeof *b->items) != 0 ||
            tl_realloc_array(&b->owner, cap, sizeof *b->owner) != 0)
            return tl_error_nomem(err);
        b->cap = cap;
    }
    b->items[b->n] = (tl_store_get_item){.key = j->key, .offset = off, .len = (size_t)len};
    b->owner[b->n++] = j;
    return TL_OK;
}

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++) tl_buf_free(&b->items[i].out);
    free(b->items);
    free(b->owner);
    memset(b, 0, sizeof *b);
}

/* Runs the batch; a failure names the file it was for. */
static tl_status batch_run(const tl_table *t, batch *b, tl_error *err)
{
    if (b->n == 0) return TL_OK;
    if (tl_store_get_many(t->lake->store, b->items, b->n, NULL) == TL_OK) return TL_OK;
    for (size_t i = 0; i < b->n; i++) {
        tl_store_get_item *it = &b->items[i];
        if (it->st == TL_OK) continue;
        if (it->st == TL_ERR_NOT_FOUND)
            return tl_error_set(err, TL_ERR_STORAGE,
                                "%s is missing (referenced by the table metadata)",
                                b->owner[i]->url);
        if (err) *err = it->err;
        return tl_error_prefix(err, "fetching %s", b->owner[i]->url);
    }
    return TL_OK;
}

/* ---- Planning ---- */

static int64_t column_size(const tl_ice_data_file *d, int32_t id)
{
    for (size_t i = 0; i < d->n_column_sizes; i++)
        if (d->column_sizes[i].field_id == id) return d->column_sizes[i].value;
    return -1;
}

/* Where the chunks the query needs probably are, from the manifest alone: a
 * file of one row group whose chunks follow each other in schema order from
 * its split offset, each of its column size. Reading them together with the
 * tail saves a round trip; the footer then tells what was right, and only
 * what the guess missed is read afterwards. */
static void predict(fetch *f, job *j)
{
    const tl_ice_data_file *d = &j->ff->f->file;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(f->t->md);
    if (d->n_split_offsets != 1 || d->split_offsets[0] < 4 || d->n_column_sizes == 0) return;
    range *r = calloc(s->n_fields + 1, sizeof *r);
    if (r == NULL) return;
    size_t n = 0;
    uint64_t at = (uint64_t)d->split_offsets[0];
    for (size_t i = 0; i < s->n_fields; i++) {
        int64_t cs = column_size(d, s->fields[i].id);
        if (cs <= 0) continue; /* not in this file */
        if (f->fields[i] && n && at <= r[n - 1].off + r[n - 1].len + TL_COALESCE_GAP)
            r[n - 1].len = at + (uint64_t)cs - r[n - 1].off;
        else if (f->fields[i])
            r[n++] = (range){.off = at, .len = (uint64_t)cs};
        at += (uint64_t)cs;
    }
    if (at > j->size) n = 0; /* the sizes do not describe this file */
    /* A guess reaching the tail joins it: one request. */
    while (n && r[n - 1].off + r[n - 1].len + TL_COALESCE_GAP >= j->tail_off) {
        if (r[n - 1].off < j->tail_off) j->tail_off = r[n - 1].off;
        n--;
    }
    j->pre = r;
    j->n_pre = n;
}

static tl_status parse_footer(job *j, tl_error *err);

/* Whether the parsed footer fits j's file as the manifest describes it: its
 * row count, and every column chunk between the magic and the footer. */
static bool footer_fits(const job *j)
{
    if (j->meta.num_rows != j->ff->f->file.record_count) return false;
    for (size_t g = 0; g < j->meta.n_row_groups; g++) {
        const tl_pq_row_group *rg = &j->meta.row_groups[g];
        for (size_t c = 0; c < rg->n_columns; c++) {
            uint64_t off, len;
            tl_pq_chunk_range(&rg->columns[c], &off, &len);
            if (off < 4 || off + len < off || off + len > j->tail_off) return false;
        }
    }
    return true;
}

/* Takes the footer the head carries for j's file, if any, as j's tail once
 * it parses and agrees with the manifest entry; otherwise the tail is read. */
static bool footer_from_head(fetch *f, job *j)
{
    char url[1100];
    const tl_buf *b = NULL;
    if (tl_head_footer_url(j->url, url, sizeof url))
        b = tl_head_objects_find(f->t->head_objects, url);
    uint64_t len;
    if (b == NULL || b->len < 12 || b->len > j->size ||
        tl_pq_footer_len(b->data + b->len - 8, j->size, &len, NULL) != TL_OK || len + 8 != b->len)
        return false;
    if (tl_buf_append(&j->tail, b->data, b->len) != 0) return false;
    uint64_t tail_off = j->tail_off;
    j->tail_off = j->size - b->len;
    if (parse_footer(j, NULL) == TL_OK && footer_fits(j)) return true;
    tl_buf_free(&j->tail);
    tl_arena_free(&j->arena);
    memset(&j->meta, 0, sizeof j->meta);
    j->tail_off = tail_off;
    return false;
}

static tl_status plan_file(fetch *f, job *j, tl_error *err)
{
    j->url = j->ff->f->file.file_path;
    j->ff->path = tl_scan_local_path(f->t, j->url);
    if (j->ff->path) return TL_OK; /* a local warehouse: read in place */
    j->key = tl_table_key_of_url(f->t, j->url, j->keybuf, sizeof j->keybuf);
    if (j->key == NULL)
        return tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse %s", j->url,
                            f->t->lake->store->url);
    TL_TRY(tl_query_fetch_dir(f->e, err));
    if ((j->target = tl_query_local_name(f->e, j->url, NULL)) == NULL) return tl_error_nomem(err);
    if (tl_query_local_reuse(j->target)) { /* fetched whole before: nothing is cheaper */
        j->ff->path = j->target;
        j->target = NULL;
        return TL_OK;
    }
    int64_t size = j->ff->f->file.file_size_in_bytes;
    j->size = size > 0 ? (uint64_t)size : 0;
    j->mode = f->narrow && j->size >= TL_RANGED_READ_MIN ? M_RANGED : M_WHOLE;
    uint64_t tail = j->size < TL_FOOTER_READ ? j->size : TL_FOOTER_READ;
    j->tail_off = j->size - tail;
    if (j->mode == M_RANGED && footer_from_head(f, j))
        j->planned = true;
    else if (j->mode == M_RANGED)
        predict(f, j);
    return TL_OK;
}

/* Moves a read into the predicted range it was for, if it was for one. */
static bool take_pre(job *j, uint64_t offset, tl_buf *out)
{
    for (size_t r = 0; r < j->n_pre; r++)
        if (j->pre[r].off == offset && j->pre[r].data.data == NULL) {
            j->pre[r].data = *out;
            *out = (tl_buf){0};
            return true;
        }
    return false;
}

static void take_range(job *j, tl_store_get_item *it);

/* Moves what the first batch read into the jobs; whole files are done. */
static tl_status take_first(batch *b, tl_error *err)
{
    for (size_t i = 0; i < b->n; i++) {
        job *j = b->owner[i];
        tl_buf *out = &b->items[i].out;
        if (j->planned) {
            take_range(j, &b->items[i]);
            continue;
        }
        j->ff->bytes_read += (int64_t)out->len;
        if (j->mode == M_WHOLE) {
            TL_TRY(tl_query_write_local(j->target, out->data, out->len, err));
            j->ff->path = j->target;
            j->target = NULL;
            j->mode = M_DONE;
        } else if (take_pre(j, b->items[i].offset, out)) {
            continue;
        } else if (j->tail.data == NULL) {
            j->tail = *out;
            *out = (tl_buf){0};
        } else { /* the rest of a long footer, just before the tail */
            if (tl_buf_append(out, j->tail.data, j->tail.len) != 0) return tl_error_nomem(err);
            tl_buf_free(&j->tail);
            j->tail = *out;
            *out = (tl_buf){0};
            j->tail_off = b->items[i].offset;
        }
    }
    return TL_OK;
}

/* Queues the part of a long footer the tail missed. */
static tl_status footer_rest(job *j, batch *b, tl_error *err)
{
    uint64_t len;
    TL_TRY(tl_pq_footer_len(j->tail.data + j->tail.len - 8, j->size, &len, err));
    uint64_t need = len + 8;
    if (need <= j->tail.len) return TL_OK;
    uint64_t start = j->size - need;
    return batch_add(b, j, start, j->tail_off - start, err);
}

static tl_status parse_footer(job *j, tl_error *err)
{
    uint64_t len;
    TL_TRY(tl_pq_footer_len(j->tail.data + j->tail.len - 8, j->size, &len, err));
    const uint8_t *meta = j->tail.data + j->tail.len - 8 - len;
    tl_status st = tl_pq_parse_file_meta(meta, (size_t)len, &j->arena, &j->meta, err);
    return st == TL_OK ? TL_OK : tl_error_prefix(err, "reading the footer of %s", j->url);
}

/* Which leaf columns to keep: those of fields the query may use, and any
 * column that maps to no field of the current schema. NULL: all. */
static tl_status choose_columns(fetch *f, job *j, tl_error *err)
{
    if (!tl_pq_subset_columns_ok(&j->meta)) return TL_OK;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(f->t->md);
    size_t n = j->meta.n_schema - 1;
    if ((j->keep_col = calloc(n + 1, sizeof *j->keep_col)) == NULL) return tl_error_nomem(err);
    for (size_t c = 0; c < n; c++) j->keep_col[c] = true;
    for (size_t i = 0; i < s->n_fields; i++) {
        int leaf = tl_pq_leaf_of_field(&j->meta, &s->fields[i]);
        if (leaf >= 0) j->keep_col[leaf] = f->fields[i];
    }
    return TL_OK;
}

/* The original file's bytes [off, off + len), from whichever read holds them. */
static const uint8_t *job_bytes(void *ctx, uint64_t off, uint64_t len)
{
    job *j = ctx;
    if (off >= j->tail_off && off + len <= j->tail_off + j->tail.len)
        return j->tail.data + (off - j->tail_off);
    for (size_t i = 0; i < j->n_ranges + j->n_pre; i++) {
        const range *r = i < j->n_ranges ? &j->ranges[i] : &j->pre[i - j->n_ranges];
        if (r->data.data && off >= r->off && off + len <= r->off + r->data.len)
            return r->data.data + (off - r->off);
    }
    return NULL;
}

static int by_offset(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The coalesced ranges of the kept chunks, less those inside the tail. */
static tl_status chunk_ranges(job *j, tl_error *err)
{
    size_t cap = 0;
    for (size_t g = 0; g < j->meta.n_row_groups; g++) cap += j->meta.row_groups[g].n_columns;
    if ((j->ranges = calloc(cap + 1, sizeof *j->ranges)) == NULL) return tl_error_nomem(err);
    size_t n = 0;
    for (size_t g = 0; g < j->meta.n_row_groups; g++) {
        if (!j->keep_rg[g]) continue;
        const tl_pq_row_group *rg = &j->meta.row_groups[g];
        for (size_t c = 0; c < rg->n_columns; c++) {
            if (j->keep_col && !j->keep_col[c]) continue;
            range *r = &j->ranges[n];
            tl_pq_chunk_range(&rg->columns[c], &r->off, &r->len);
            if (r->off + r->len > j->size || r->off + r->len < r->off)
                return tl_error_set(err, TL_ERR_STORAGE, "%s: a column chunk lies outside the file",
                                    j->url);
            if (job_bytes(j, r->off, r->len) == NULL) n++; /* else the tail or a guess holds it */
        }
    }
    qsort(j->ranges, n, sizeof *j->ranges, by_offset);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        range *last = m ? &j->ranges[m - 1] : NULL;
        if (last && j->ranges[i].off <= last->off + last->len + TL_COALESCE_GAP) {
            uint64_t end = j->ranges[i].off + j->ranges[i].len;
            if (end > last->off + last->len) last->len = end - last->off;
        } else {
            j->ranges[m++] = j->ranges[i];
        }
    }
    j->n_ranges = m;
    return TL_OK;
}

static void selection_suffix(const job *j, char *out, size_t size)
{
    tl_buf b = {0};
    for (size_t g = 0; g < j->meta.n_row_groups; g++) tl_buf_append_byte(&b, j->keep_rg[g]);
    tl_buf_append_byte(&b, 0xff);
    for (size_t c = 0; j->keep_col && c + 1 < j->meta.n_schema; c++)
        tl_buf_append_byte(&b, j->keep_col[c]);
    uint8_t d[32];
    char hex[65];
    tl_sha256(b.data ? b.data : (const uint8_t *)"", b.len, d);
    tl_hex(d, 8, hex);
    snprintf(out, size, "-%.16s", hex);
    tl_buf_free(&b);
}

/* Decides what of a large file to read; queues the reads in b. */
static tl_status plan_ranges(fetch *f, job *j, const tl_scan_filter *filters, size_t n_filters,
                             batch *b, tl_error *err)
{
    if (!j->planned) TL_TRY(parse_footer(j, err));
    size_t ng = j->meta.n_row_groups, kept = 0;
    if ((j->keep_rg = calloc(ng + 1, sizeof *j->keep_rg)) == NULL) return tl_error_nomem(err);
    for (size_t g = 0; g < ng; g++) {
        j->keep_rg[g] = j->meta.encrypted || n_filters == 0 ||
                        tl_row_group_needed(f->t, &j->meta, g, filters, n_filters);
        kept += j->keep_rg[g];
    }
    j->ff->row_groups_total = (int64_t)ng;
    j->ff->row_groups_read = (int64_t)kept;
    if (kept == 0 && ng > 0) { /* nothing here can match: not read at all */
        j->mode = M_DONE;
        return TL_OK;
    }
    if (!j->meta.encrypted) TL_TRY(choose_columns(f, j, err));
    bool all_cols = true;
    for (size_t c = 0; j->keep_col && c + 1 < j->meta.n_schema; c++) all_cols &= j->keep_col[c];
    if (all_cols) {
        free(j->keep_col);
        j->keep_col = NULL;
    }
    if (kept == ng && j->keep_col == NULL) { /* everything: the file as it is */
        j->mode = M_WHOLE;
        return j->tail_off ? batch_add(b, j, 0, j->tail_off, err) : TL_OK;
    }
    char suffix[24];
    selection_suffix(j, suffix, sizeof suffix);
    free(j->target);
    if ((j->target = tl_query_local_name(f->e, j->url, suffix)) == NULL) return tl_error_nomem(err);
    if (tl_query_local_reuse(j->target)) {
        j->mode = M_DONE;
        j->ff->path = j->target;
        j->target = NULL;
        return TL_OK;
    }
    TL_TRY(chunk_ranges(j, err));
    for (size_t i = 0; i < j->n_ranges; i++)
        TL_TRY(batch_add(b, j, j->ranges[i].off, j->ranges[i].len, err));
    return TL_OK;
}

/* ---- Assembly ---- */

static tl_status finish(job *j, tl_error *err)
{
    tl_buf out = {0};
    tl_status st = TL_OK;
    if (j->mode == M_WHOLE) { /* the head of the file, then the tail */
        const uint8_t *head = j->tail_off ? job_bytes(j, 0, j->tail_off) : NULL;
        if (j->tail_off && head == NULL)
            return tl_error_set(err, TL_ERR_STORAGE, "%s: short read", j->url);
        if ((j->tail_off && tl_buf_append(&out, head, j->tail_off) != 0) ||
            tl_buf_append(&out, j->tail.data, j->tail.len) != 0)
            st = tl_error_nomem(err);
    } else {
        st = tl_pq_subset_write(&j->meta, j->keep_rg, j->keep_col, job_bytes, j, &out, err);
    }
    if (st == TL_OK) st = tl_query_write_local(j->target, out.data, out.len, err);
    tl_buf_free(&out);
    if (st != TL_OK) return tl_error_prefix(err, "fetching %s", j->url);
    j->ff->path = j->target;
    j->target = NULL;
    return TL_OK;
}

/* Moves a read planned from the footer into its job's range. */
static void take_range(job *j, tl_store_get_item *it)
{
    j->ff->bytes_read += (int64_t)it->out.len;
    if (j->mode == M_WHOLE && j->n_ranges == 0) { /* the one head read */
        j->ranges = calloc(1, sizeof *j->ranges);
        if (j->ranges == NULL) return; /* finish reports the short read */
        j->ranges[0].off = 0;
        j->n_ranges = 1;
    }
    for (size_t r = 0; r < j->n_ranges; r++)
        if (j->ranges[r].off == it->offset && j->ranges[r].data.data == NULL) {
            j->ranges[r].data = it->out;
            it->out = (tl_buf){0};
            return;
        }
}

/* Moves the second batch's reads into their jobs' ranges. */
static void take_second(batch *b)
{
    for (size_t i = 0; i < b->n; i++) take_range(b->owner[i], &b->items[i]);
}

static tl_status run(fetch *f, const tl_scan_filter *filters, size_t n_filters, tl_error *err)
{
    batch b = {0};
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < f->n; i++) {
        job *j = &f->jobs[i];
        if (j->planned) { /* the footer is at hand: the chunks it needs now */
            st = plan_ranges(f, j, filters, n_filters, &b, err);
            continue;
        }
        if (j->mode == M_WHOLE) st = batch_add(&b, j, 0, 0, err);
        if (j->mode == M_RANGED) st = batch_add(&b, j, j->tail_off, j->size - j->tail_off, err);
        for (size_t r = 0; st == TL_OK && j->mode == M_RANGED && r < j->n_pre; r++)
            st = batch_add(&b, j, j->pre[r].off, j->pre[r].len, err);
    }
    /* Round trip 1: small files whole, large files' tails, or the chunks
     * of those whose footers the head carried. */
    if (st == TL_OK) st = batch_run(f->t, &b, err);
    if (st == TL_OK) st = take_first(&b, err);
    batch_free(&b);
    for (size_t i = 0; st == TL_OK && i < f->n; i++)
        if (f->jobs[i].mode == M_RANGED && !f->jobs[i].planned)
            st = footer_rest(&f->jobs[i], &b, err);
    if (st == TL_OK && b.n) { /* only for footers beyond TL_FOOTER_READ */
        st = batch_run(f->t, &b, err);
        if (st == TL_OK) st = take_first(&b, err);
    }
    batch_free(&b);
    for (size_t i = 0; st == TL_OK && i < f->n; i++)
        if (f->jobs[i].mode == M_RANGED && !f->jobs[i].planned)
            st = plan_ranges(f, &f->jobs[i], filters, n_filters, &b, err);
    /* Round trip 2: the column chunks the query needs. */
    if (st == TL_OK) st = batch_run(f->t, &b, err);
    if (st == TL_OK) take_second(&b);
    batch_free(&b);
    for (size_t i = 0; st == TL_OK && i < f->n; i++)
        if (f->jobs[i].mode != M_DONE) st = finish(&f->jobs[i], err);
    return st;
}

/* Whether the query restricts rows or columns: otherwise every byte of
 * every file is needed and large files too are read whole, in one request. */
static bool narrows(fetch *f, const tl_scan_filter *filters, size_t n_filters)
{
    bool large = false;
    for (size_t i = 0; i < f->n && !large; i++) {
        const tl_ice_data_file *d = &f->jobs[i].ff->f->file;
        large = !tl_scan_is_local(f->t, d->file_path) &&
                (uint64_t)d->file_size_in_bytes >= TL_RANGED_READ_MIN;
    }
    if (!large) return false; /* spares the look at the query */
    const tl_ice_schema *s = tl_ice_metadata_current_schema(f->t->md);
    tl_query_columns(f->e, f->e->query_text, f->t, f->fields);
    for (size_t i = 0; i < s->n_fields; i++)
        if (!f->fields[i]) return true;
    for (size_t i = 0; i < n_filters; i++)
        if (filters[i].has_lo || filters[i].has_hi || filters[i].has_keys) return true;
    return false;
}

tl_status tl_query_fetch(tl_query_engine *e, const tl_table *t, tl_fetch_file *files, size_t n,
                         const tl_scan_filter *filters, size_t n_filters, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    fetch f = {e, t, calloc(n + 1, sizeof(job)), n, calloc(s->n_fields + 1, sizeof(bool)), false};
    if (f.jobs == NULL || f.fields == NULL) {
        free(f.jobs);
        free(f.fields);
        return tl_error_nomem(err);
    }
    tl_status st = TL_OK;
    for (size_t i = 0; i < n; i++) {
        files[i].row_groups_total = files[i].row_groups_read =
            (int64_t)files[i].f->file.n_split_offsets;
        f.jobs[i].ff = &files[i];
    }
    f.narrow = narrows(&f, filters, n_filters);
    for (size_t i = 0; st == TL_OK && i < n; i++) st = plan_file(&f, &f.jobs[i], err);
    if (st == TL_OK) st = run(&f, filters, n_filters, err);
    bool wrote = false;
    for (size_t i = 0; i < n; i++) wrote |= files[i].bytes_read > 0;
    if (wrote) tl_query_fetch_dir_trim(e);
    for (size_t i = 0; i < n; i++) job_clear(&f.jobs[i]);
    free(f.jobs);
    free(f.fields);
    return st;
}
