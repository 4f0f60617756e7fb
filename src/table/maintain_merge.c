/* Streaming compaction: the files of a partition are each sorted by (series
 * key..., time), so rewriting them is a k-way merge of sorted runs. Each input
 * is read one row group at a time through ranged reads; the merge emits runs
 * of rows (slices of those row groups) and writes a file whenever it holds a
 * file's worth. Memory is one row group per input plus one output file, not
 * the partition twice over (whole, then sorted).
 *
 * Latest write wins as on read: among rows with equal keys, the higher ingest
 * time, then the later commit (inputs come in commit order), then the later
 * row. Every input is checked to be sorted as it is read; when one is not
 * (a file from another writer), or a key column has a type the merge does not
 * compare, the merge reports `fallback` and the caller sorts in memory. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/concat.h"
#include "arrow/nested.h"
#include "arrow/take.h"
#include "core/grow.h"
#include "core/parallel.h"
#include "formats/parquet/parquet_reader.h"
#include "table/append.h"
#include "table/maintain.h"
#include "table/maintain_series.h"

#define MAX_KEYS 8

/* One row group in the storage layout, shared by its cursor and the pending
 * output, with views of its key columns. */
typedef struct chunk {
    tl_rows rows;
    tl_array_view keys[MAX_KEYS], ingest;
    int8_t key_width[MAX_KEYS]; /* bits of an integer key, 0 for bytes: resolved once */
    size_t n_keys, n_series;    /* the series key's first, then time */
    int32_t *rank;              /* per row, its series' rank (maintain_series.h), or NULL */
    bool rank_borrowed;         /* a slice of its cursor's raw_ranks */
    const int64_t *time;        /* the time key's values when 64-bit without nulls, or NULL */
    bool has_ingest;
    int8_t ingest_width;
    tl_array_view *cols; /* every column, made when first written out */
    int64_t n_cols;
    int refs;
    int64_t slot; /* index among the row groups of one flush */
} chunk;

typedef struct cursor {
    size_t order; /* commit order: later wins ties */
    char *key;    /* object key of the file */
    tl_store *store;
    const tl_rows *raw; /* rows not encoded (tl_merge_input), or NULL */
    int32_t *raw_ranks; /* the ranks of all of their rows' series, or NULL */
    /* Open while a row group is read (its footer with the first): one open
     * per row group, not per column chunk, and few files open at once. */
    tl_store_reader *file;
    tl_parquet_reader *reader;
    struct ArrowSchema file_schema;
    int rg, n_rg;
    chunk *cur; /* NULL when exhausted */
    int64_t pos;
    /* While the cursors are opened at once, each keeps what it finds here
     * (the merge's flags and counts are folded in after): */
    bool opening, unsorted;
    int64_t rows_in;
    tl_status status;
    tl_error err;
} cursor;

typedef struct segment {
    chunk *c;
    int64_t start, len;
} segment;

typedef struct merge {
    const tl_table *t;
    cursor **heap;
    size_t n_heap;
    bool unsorted;
    segment *segs;
    size_t n_segs, cap_segs;
    int64_t pending, per_file;
    tl_data_file_writer *file; /* the output file being written, or NULL */
    int64_t file_rows;         /* rows written to it so far */
    int64_t slice;             /* rows written out at a time (slice_rows) */
    int64_t reserve;           /* bytes reserved for each output file */
    struct ArrowSchema schema; /* storage layout, from the first row group */
    tl_ice_value *partition;   /* the files' partition (borrowed from the first) */
    size_t n_partition;
    tl_rewrite_output *out;
    tl_series_set series; /* ranked once the inputs are open (rank_opened) */
    bool ranking;
} merge;

static void chunk_unref(chunk *c)
{
    if (c == NULL || --c->refs > 0) return;
    for (size_t k = 0; k < c->n_keys; k++) tl_array_view_free(&c->keys[k]);
    if (c->has_ingest) tl_array_view_free(&c->ingest);
    for (int64_t i = 0; i < c->n_cols; i++) tl_array_view_free(&c->cols[i]);
    free(c->cols);
    if (!c->rank_borrowed) free(c->rank);
    tl_rows_free(&c->rows);
    free(c);
}

/* ---- Comparing rows ---- */

bool tl_merge_key_comparable(const tl_array_view *v)
{
    if (v->is_dictionary) return false;
    switch (v->type.id) {
    case TL_ATYPE_INT8:
    case TL_ATYPE_INT16:
    case TL_ATYPE_INT32:
    case TL_ATYPE_INT64:
    case TL_ATYPE_DATE32:
    case TL_ATYPE_DATE64:
    case TL_ATYPE_TIME32:
    case TL_ATYPE_TIME64:
    case TL_ATYPE_TIMESTAMP:
        return true;
    default:
        return tl_atype_is_varbinary(v->type.id);
    }
}

/* Nulls first, integers by value, bytes lexicographically: the sort's order. */
static inline int cmp_value(const chunk *a, int64_t i, const chunk *b, int64_t j, size_t k)
{
    const tl_array_view *va = &a->keys[k], *vb = &b->keys[k];
    bool na = tl_view_is_null(va, i), nb = tl_view_is_null(vb, j);
    if (na || nb) return nb - na;
    if (a->key_width[k] == 0) {
        int64_t la, lb;
        const uint8_t *pa = tl_view_bytes(va, i, &la), *pb = tl_view_bytes(vb, j, &lb);
        int c = memcmp(pa, pb, (size_t)(la < lb ? la : lb));
        return c ? (c < 0 ? -1 : 1) : (la > lb) - (la < lb);
    }
    int64_t x = tl_view_int_of_width(va, a->key_width[k], i),
            y = tl_view_int_of_width(vb, b->key_width[k], j);
    return (x > y) - (x < y);
}

static int cmp_keys_from(const chunk *a, int64_t i, const chunk *b, int64_t j, size_t k)
{
    for (; k < a->n_keys; k++) {
        int c = cmp_value(a, i, b, j, k);
        if (c) return c;
    }
    return 0;
}

/* Time, the last key, differs most often between neighbours, but the order
 * is by series first: compare in key order. */
static inline int cmp_rows(const chunk *a, int64_t i, const chunk *b, int64_t j)
{
    if (a->rank == NULL || b->rank == NULL) return cmp_keys_from(a, i, b, j, 0);
    int32_t x = a->rank[i], y = b->rank[j];
    if (x != y) return x < y ? -1 : 1;
    if (a->time == NULL || b->time == NULL) return cmp_keys_from(a, i, b, j, a->n_series);
    int64_t s = a->time[i], t = b->time[j];
    return (s > t) - (s < t);
}

static int cmp_cursors(const cursor *a, const cursor *b)
{
    int c = cmp_rows(a->cur, a->pos, b->cur, b->pos);
    return c ? c : (a->order > b->order) - (a->order < b->order);
}

static int64_t ingest_at(const chunk *c, int64_t row)
{
    return c->has_ingest && !tl_view_is_null(&c->ingest, row)
               ? tl_view_int_of_width(&c->ingest, c->ingest_width, row)
               : 0;
}

/* ---- Reading inputs a row group at a time ---- */

static tl_status read_range(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    cursor *c = ctx;
    if (c->file == NULL) TL_TRY(tl_store_reader_open(c->store, c->key, &c->file, err));
    return tl_store_reader_read(c->file, offset, len, dst, err);
}

static tl_status make_views(merge *m, chunk *ch, bool *unsorted, tl_error *err)
{
    const tl_contract *ct = &m->t->contract;
    const tl_rows *r = &ch->rows;
    int idx[MAX_KEYS];
    size_t n = 0;
    for (size_t i = 0; i < ct->series_key.len && n < MAX_KEYS - 1; i++)
        idx[n++] = ct->series_index[i];
    if (ct->series_key.len > MAX_KEYS - 1) *unsorted = true; /* more keys than compared */
    ch->n_series = n;
    if (ct->time_index >= 0) idx[n++] = ct->time_index;
    bool timed = ct->time_index >= 0;
    for (size_t k = 0; k < n; k++) {
        TL_TRY(tl_array_view_init(&ch->keys[k], r->schema.children[idx[k]],
                                  r->array.children[idx[k]], err));
        ch->n_keys++;
        if (!tl_merge_key_comparable(&ch->keys[k])) *unsorted = true;
        bool bytes = tl_atype_is_varbinary(ch->keys[k].type.id);
        ch->key_width[k] = (int8_t)(bytes ? 0 : tl_arrow_type_bit_width(&ch->keys[k].type));
    }
    const tl_array_view *tv = timed ? &ch->keys[n - 1] : NULL;
    if (tv && ch->key_width[n - 1] == 64 && tv->validity == NULL)
        ch->time = (const int64_t *)tv->values + tv->offset;
    if (ct->ingest_index >= 0) {
        TL_TRY(tl_array_view_init(&ch->ingest, r->schema.children[ct->ingest_index],
                                  r->array.children[ct->ingest_index], err));
        ch->has_ingest = true;
        if (!tl_merge_key_comparable(&ch->ingest) || tl_atype_is_varbinary(ch->ingest.type.id))
            *unsorted = true;
        else
            ch->ingest_width = (int8_t)tl_arrow_type_bit_width(&ch->ingest.type);
    }
    return TL_OK;
}

/* ---- Rows not encoded (tl_merge_input.rows) ---- */

static const void *no_validity[1];

static void release_nothing(struct ArrowArray *a)
{
    a->release = NULL;
}

static void release_slice(struct ArrowArray *a)
{
    free(a->private_data); /* the children's structs: their buffers are the caller's */
    a->release = NULL;
}

/* Rows [start, start + len) of rows not encoded, as a row group: children
 * offset into the caller's, who keeps them (a fallback leaves its inputs as
 * they are). */
static tl_status borrow_slice(const tl_rows *raw, int64_t start, int64_t len, tl_rows *out,
                              tl_error *err)
{
    const struct ArrowArray *a = &raw->array;
    size_t n = (size_t)a->n_children;
    void *block = malloc((n + 1) * (sizeof(struct ArrowArray *) + sizeof(struct ArrowArray)));
    if (block == NULL) return tl_error_nomem(err);
    struct ArrowArray **ptrs = block, *kids = (struct ArrowArray *)(ptrs + n + 1);
    for (size_t i = 0; i < n; i++) {
        kids[i] = *a->children[i];
        kids[i].offset += a->offset + start;
        kids[i].length = len;
        kids[i].null_count = kids[i].n_buffers > 0 && kids[i].buffers[0] ? -1 : 0;
        kids[i].release = release_nothing;
        kids[i].private_data = NULL;
        ptrs[i] = &kids[i];
    }
    tl_status st = tl_schema_copy(&raw->schema, &out->schema, err);
    if (st != TL_OK) {
        free(block);
        return st;
    }
    out->array = (struct ArrowArray){.length = len,
                                     .n_buffers = 1,
                                     .n_children = a->n_children,
                                     .buffers = no_validity,
                                     .children = ptrs,
                                     .release = release_slice,
                                     .private_data = block};
    return TL_OK;
}

/* ---- Ranking the series (maintain_series.h) ---- */

/* c->rank: the ranks of its rows' series, or NULL when one of them was not
 * ranked (a row group read after the ranking, with a new series). Before the
 * ranking it holds their ids. */
static tl_status chunk_ranks(merge *m, chunk *c, tl_error *err)
{
    bool found;
    c->rank = malloc((size_t)c->rows.array.length * sizeof *c->rank);
    if (c->rank == NULL) return tl_error_nomem(err);
    tl_status st =
        tl_series_set_lookup(&m->series, c->keys, c->rows.array.length, c->rank, &found, err);
    if (st != TL_OK || !found) {
        free(c->rank);
        c->rank = NULL;
    }
    return st;
}

/* Adds the series of all the rows of an input not encoded, not only of its
 * first slice, and keeps their ids (ranks once ranked): the slices read
 * later rank too, without a lookup (a run of a time-ordered append holds
 * every series; its first slice, a few). */
static tl_status add_raw_series(merge *m, cursor *c, tl_error *err)
{
    const tl_rows *raw = c->raw;
    chunk whole = {.refs = 1};
    bool unsorted = false, found;
    int64_t n = raw->array.length;
    TL_TRY(borrow_slice(raw, 0, n, &whole.rows, err));
    tl_status st = make_views(m, &whole, &unsorted, err);
    int32_t *ids = st == TL_OK ? malloc((size_t)(n > 0 ? n : 1) * sizeof *ids) : NULL;
    if (st == TL_OK && ids == NULL) st = tl_error_nomem(err);
    if (st == TL_OK && !unsorted)
        st = tl_series_set_lookup(&m->series, whole.keys, n, ids, &found, err);
    if (st == TL_OK && !unsorted)
        c->raw_ranks = ids;
    else
        free(ids);
    for (size_t k = 0; k < whole.n_keys; k++) tl_array_view_free(&whole.keys[k]);
    if (whole.has_ingest) tl_array_view_free(&whole.ingest);
    tl_rows_free(&whole.rows);
    return st;
}

/* Ranks the series of the row groups the inputs open with (a small file is
 * one row group): from then on the rows of two ranked row groups compare by
 * rank, then time. */
static tl_status rank_opened(merge *m, tl_error *err)
{
    chunk *first = m->n_heap ? m->heap[0]->cur : NULL;
    if (m->unsorted || first == NULL || first->n_series == 0) return TL_OK;
    tl_series_set_init(&m->series, first->key_width, first->n_series);
    m->ranking = true;
    for (size_t i = 0; i < m->n_heap; i++) TL_TRY(chunk_ranks(m, m->heap[i]->cur, err));
    for (size_t i = 0; i < m->n_heap; i++)
        if (m->heap[i]->raw) TL_TRY(add_raw_series(m, m->heap[i], err));
    TL_TRY(tl_series_set_rank(&m->series, err));
    for (size_t i = 0; i < m->n_heap; i++) {
        chunk *c = m->heap[i]->cur;
        tl_series_set_ids_to_ranks(&m->series, c->rank, c->rows.array.length);
        if (m->heap[i]->raw_ranks)
            tl_series_set_ids_to_ranks(&m->series, m->heap[i]->raw_ranks,
                                       m->heap[i]->raw->array.length);
    }
    return TL_OK;
}

/* One row group as rows of the storage layout (*out NULL when it is empty). */
static tl_status load_chunk(merge *m, cursor *c, chunk **out, tl_error *err)
{
    struct ArrowArray batch = {0};
    chunk *ch = calloc(1, sizeof *ch);
    *out = NULL;
    if (ch == NULL) return tl_error_nomem(err);
    ch->refs = 1;
    tl_status st = TL_OK;
    int64_t start = 0;
    if (c->raw) { /* a slice's worth: what a gather of rows one by one concatenates */
        int64_t n = c->raw->array.length - (start = (int64_t)c->rg++ * m->slice);
        st = borrow_slice(c->raw, start, n < m->slice ? n : m->slice, &ch->rows, err);
    } else {
        st = tl_parquet_reader_read_row_group(c->reader, c->rg++, NULL, 0, &batch, err);
        /* A file without an ingest-time column sorts before any that has one. */
        if (st == TL_OK)
            st = tl_append_prepare_take(m->t, &c->file_schema, &batch, 1, 0, &ch->rows, err);
    }
    if (batch.release) tl_array_release(&batch);
    if (st == TL_OK) st = make_views(m, ch, c->opening ? &c->unsorted : &m->unsorted, err);
    if (st == TL_OK && !c->opening && m->schema.release == NULL)
        st = tl_schema_copy(&ch->rows.schema, &m->schema, err);
    if (st != TL_OK || ch->rows.array.length == 0) {
        chunk_unref(ch);
        return st;
    }
    *(c->opening ? &c->rows_in : &m->out->rows_in) += ch->rows.array.length;
    if (!c->opening && m->ranking && !m->unsorted && c->raw_ranks) {
        ch->rank = c->raw_ranks + start;
        ch->rank_borrowed = true;
    } else if (!c->opening && m->ranking && !m->unsorted &&
               (st = chunk_ranks(m, ch, err)) != TL_OK) {
        chunk_unref(ch);
        return st;
    }
    *out = ch;
    return TL_OK;
}

/* Moves the cursor to its next non-empty row group (or marks it exhausted),
 * checking that it continues the order of the previous one; *rel is how the
 * previous row compares with the new one (-1 when there is none). */
static tl_status next_row_group(merge *m, cursor *c, int *rel, tl_error *err)
{
    chunk *prev = c->cur, *next = NULL;
    tl_status st = TL_OK;
    while (st == TL_OK && next == NULL && c->rg < c->n_rg) st = load_chunk(m, c, &next, err);
    tl_store_reader_close(c->file);
    c->file = NULL;
    if (c->rg == c->n_rg) { /* all read: let go of the footer and codec state */
        tl_parquet_reader_free(c->reader);
        c->reader = NULL;
    }
    *rel = next && prev ? cmp_rows(prev, prev->rows.array.length - 1, next, 0) : -1;
    if (*rel > 0) *(c->opening ? &c->unsorted : &m->unsorted) = true;
    chunk_unref(prev);
    c->cur = next;
    c->pos = 0;
    return st;
}

static tl_status open_cursor(merge *m, cursor *c, const tl_merge_input *in, tl_error *err)
{
    tl_parquet_source src = {.ctx = c, .read = read_range};
    int rel;
    if (in->rows) {
        c->raw = in->rows;
        c->n_rg = (int)((in->rows->array.length + m->slice - 1) / m->slice);
        return next_row_group(m, c, &rel, err);
    }
    if (in->mem) {
        tl_parquet_source_from_memory(&src, in->mem->data, in->mem->len);
    } else {
        char buf[1024];
        const char *url = in->file->file.file_path;
        const char *key = tl_table_key_of_url(m->t, url, buf, sizeof buf);
        if (key == NULL)
            return tl_error_set(err, TL_ERR_STORAGE, "%s is outside the warehouse", url);
        c->store = m->t->lake->store;
        c->key = strdup(key);
        if (c->key == NULL) return tl_error_nomem(err);
        TL_TRY(tl_store_reader_open(c->store, c->key, &c->file, err));
        src.size = c->file->size;
    }
    TL_TRY(tl_parquet_reader_open(&src, &c->reader, err));
    TL_TRY(tl_parquet_reader_schema(c->reader, &c->file_schema, err));
    c->n_rg = tl_parquet_reader_num_row_groups(c->reader);
    return next_row_group(m, c, &rel, err);
}

static void close_cursor(cursor *c)
{
    chunk_unref(c->cur);
    free(c->raw_ranks);
    if (c->file_schema.release) tl_schema_release(&c->file_schema);
    tl_parquet_reader_free(c->reader);
    tl_store_reader_close(c->file);
    free(c->key);
}

/* ---- The heap of cursors, smallest (key, commit order) on top ---- */

static void sift_down(merge *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->n_heap && cmp_cursors(m->heap[l], m->heap[s]) < 0) s = l;
        if (r < m->n_heap && cmp_cursors(m->heap[r], m->heap[s]) < 0) s = r;
        if (s == i) return;
        cursor *tmp = m->heap[i];
        m->heap[i] = m->heap[s];
        m->heap[s] = tmp;
        i = s;
    }
}

/* After the top cursor moved: re-place it, or drop it when exhausted. */
static void settle_top(merge *m)
{
    if (m->heap[0]->cur == NULL) m->heap[0] = m->heap[--m->n_heap];
    if (m->n_heap) sift_down(m, 0);
}

/* ---- Output ---- */

/* Views of every column of a row group, made once: slices of them are cheap. */
static tl_status column_views(chunk *c, tl_error *err)
{
    if (c->cols) return TL_OK;
    int64_t n = c->rows.schema.n_children;
    c->cols = calloc((size_t)n + 1, sizeof *c->cols);
    if (c->cols == NULL) return tl_error_nomem(err);
    for (; c->n_cols < n; c->n_cols++) {
        const struct ArrowSchema *s = c->rows.schema.children[c->n_cols];
        const struct ArrowArray *a = c->rows.array.children[c->n_cols];
        if (tl_arrow_is_nested(s)) /* gathered from the array itself (gather_nested) */
            c->cols[c->n_cols] = (tl_array_view){.array = a, .schema = s, .length = a->length};
        else
            TL_TRY(tl_array_view_init(&c->cols[c->n_cols], s, a, err));
    }
    return TL_OK;
}

/* The distinct row groups the pending rows come from, and where each one
 * starts in their concatenation (chunk->slot indexes base). */
static tl_status pending_chunks(merge *m, chunk ***out, size_t *n_out, int64_t **base,
                                tl_error *err)
{
    chunk **list = malloc((m->n_segs + 1) * sizeof *list);
    int64_t *starts = malloc((m->n_segs + 1) * sizeof *starts);
    if (list == NULL || starts == NULL) {
        free(list);
        free(starts);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < m->n_segs; i++) m->segs[i].c->slot = -1;
    size_t n = 0;
    int64_t rows = 0;
    for (size_t i = 0; i < m->n_segs; i++) {
        chunk *c = m->segs[i].c;
        if (c->slot >= 0) continue;
        c->slot = (int64_t)n;
        starts[n] = rows;
        rows += c->rows.array.length;
        list[n++] = c;
    }
    *out = list;
    *n_out = n;
    *base = starts;
    return TL_OK;
}

/* Column c of the pending rows: a take over the concatenation of that column
 * of the row groups they come from. One column at a time, so the copy in
 * between is one column, and the take is vectorized however short the runs. */
static tl_status gather_nested(merge *m, chunk **chunks, size_t n, const int64_t *idx, int64_t c,
                               struct ArrowArray *out, tl_error *err)
{
    const struct ArrowSchema *field = m->schema.children[c];
    if (n == 1)
        return tl_arrow_take_nested(field, chunks[0]->cols[c].array, idx, m->pending, out, err);
    struct ArrowArray *parts = malloc(n * sizeof *parts), joined = {0};
    if (parts == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        parts[i] = *chunks[i]->cols[c].array;
        parts[i].release = NULL; /* borrowed */
    }
    tl_status st = tl_arrow_concat_nested(field, parts, n, &joined, err);
    free(parts);
    if (st == TL_OK) st = tl_arrow_take_nested(field, &joined, idx, m->pending, out, err);
    tl_array_release(&joined);
    return st;
}

static tl_status gather_column(merge *m, chunk **chunks, size_t n, const int64_t *idx, int64_t c,
                               struct ArrowArray *out, tl_error *err)
{
    if (tl_arrow_is_nested(m->schema.children[c]))
        return gather_nested(m, chunks, n, idx, c, out, err);
    if (n == 1) return tl_arrow_take(&chunks[0]->cols[c], idx, m->pending, out, err);
    tl_array_view *parts = malloc(n * sizeof *parts), all;
    if (parts == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) parts[i] = chunks[i]->cols[c];
    struct ArrowArray joined = {0};
    tl_status st = tl_arrow_concat(parts, n, &joined, err);
    free(parts);
    if (st == TL_OK) st = tl_array_view_init(&all, m->schema.children[c], &joined, err);
    if (st == TL_OK) {
        st = tl_arrow_take(&all, idx, m->pending, out, err);
        tl_array_view_free(&all);
    }
    tl_array_release(&joined);
    return st;
}

/* Column c of the pending rows copied run by run straight from their row
 * groups (a concatenation of views of the runs): one pass, where a take
 * first concatenates the row groups and then reads an index per row. */
static tl_status gather_runs(merge *m, int64_t c, struct ArrowArray *out, tl_error *err)
{
    tl_array_view *parts = malloc((m->n_segs + 1) * sizeof *parts);
    if (parts == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < m->n_segs; i++) {
        const segment *s = &m->segs[i];
        parts[i] = s->c->cols[c];
        parts[i].offset += s->start;
        parts[i].length = s->len;
        parts[i].null_count = parts[i].validity ? -1 : 0;
    }
    tl_status st = tl_arrow_concat(parts, m->n_segs, out, err);
    free(parts);
    return st;
}

/* Runs this long on average are copied whole (gather_runs); shorter ones
 * cost more per run than a take costs per row. */
#define MIN_MEAN_RUN 16

/* Columns are gathered by a few threads at once: each only reads the row
 * groups (their views made beforehand) and writes its own output column. */
#define GATHER_THREADS 4

typedef struct gather_job {
    merge *m;
    chunk **chunks;
    size_t n;
    const int64_t *idx;
    struct ArrowArray *out;
    bool by_runs;
} gather_job;

static tl_status gather_one(void *ctx, size_t c, tl_error *err)
{
    gather_job *j = ctx;
    if (j->by_runs && !tl_arrow_is_nested(j->m->schema.children[c]))
        return gather_runs(j->m, (int64_t)c, j->out->children[c], err);
    return gather_column(j->m, j->chunks, j->n, j->idx, (int64_t)c, j->out->children[c], err);
}

/* The pending rows in merge order. */
/* Whether the take (and its index of every row) serves some column: a
 * nested one, or all of them when the runs are short. */
static bool needs_index(const merge *m, bool by_runs)
{
    for (int64_t c = 0; by_runs && c < m->schema.n_children; c++)
        if (tl_arrow_is_nested(m->schema.children[c])) return true;
    return !by_runs;
}

static tl_status gather(merge *m, struct ArrowArray *out, tl_error *err)
{
    chunk **chunks = NULL;
    bool by_runs = m->pending >= MIN_MEAN_RUN * (int64_t)m->n_segs;
    int64_t *base = NULL, *idx = NULL;
    size_t n = 0;
    if (needs_index(m, by_runs) && (idx = malloc((size_t)m->pending * sizeof *idx)) == NULL)
        return tl_error_nomem(err);
    tl_status st = pending_chunks(m, &chunks, &n, &base, err);
    for (size_t i = 0; st == TL_OK && i < n; i++) st = column_views(chunks[i], err);
    int64_t k = 0;
    for (size_t i = 0; st == TL_OK && idx && i < m->n_segs; i++)
        for (int64_t r = 0; r < m->segs[i].len; r++)
            idx[k++] = base[m->segs[i].c->slot] + m->segs[i].start + r;
    if (st == TL_OK) st = tl_array_init(out, 1, m->schema.n_children, err);
    if (st == TL_OK) out->length = m->pending;
    gather_job j = {m, chunks, n, idx, out, by_runs};
    if (st == TL_OK)
        st = tl_parallel_run((size_t)m->schema.n_children, GATHER_THREADS, true, gather_one, &j,
                             err);
    free(chunks);
    free(base);
    free(idx);
    return st;
}

/* The pending rows are written out a slice at a time, and the row groups
 * they came from let go of: the merge holds a slice and a row group per
 * input, not its whole output file. */
#define SLICE_ROWS 65536

/* TIMELAKE_MERGE_SLICE_ROWS overrides it, for tests of files of many slices. */
static int64_t slice_rows(void)
{
    const char *v = getenv("TIMELAKE_MERGE_SLICE_ROWS");
    long long n = v ? atoll(v) : 0;
    return n > 0 ? n : SLICE_ROWS;
}

/* Writes the pending rows to the output file (opened on first need); with
 * end_file, finishes that file too. */
static tl_status flush(merge *m, bool end_file, tl_error *err)
{
    tl_status st = TL_OK;
    if (m->pending > 0) {
        struct ArrowArray rows = {0};
        if (m->file == NULL) {
            st = tl_data_file_writer_open(m->t, &m->schema, m->partition, m->n_partition, &m->file,
                                          err);
            /* A hint: should it fail, the file grows as it is written. */
            if (st == TL_OK) tl_data_file_writer_reserve(m->file, (size_t)m->reserve);
        }
        if (st == TL_OK) st = gather(m, &rows, err);
        if (st == TL_OK) st = tl_data_file_writer_add(m->file, &rows, err);
        tl_array_release(&rows);
        for (size_t i = 0; i < m->n_segs; i++) chunk_unref(m->segs[i].c);
        m->file_rows += m->pending;
        m->n_segs = 0;
        m->pending = 0;
    }
    if (st != TL_OK || !end_file || m->file == NULL) return st;
    tl_ice_data_file df;
    char *key = NULL;
    st = tl_data_file_writer_finish(m->file, &df, &key, &m->out->footers, err);
    tl_data_file_writer_free(m->file);
    m->file = NULL;
    m->file_rows = 0;
    return st == TL_OK ? tl_rewrite_output_push(m->t, m->out, &df, key, err) : st;
}

static tl_status emit(merge *m, chunk *c, int64_t row, tl_error *err)
{
    segment *last = m->n_segs ? &m->segs[m->n_segs - 1] : NULL;
    if (last && last->c == c && last->start + last->len == row) {
        last->len++;
    } else {
        if (TL_GROW(m->segs, m->cap_segs, m->n_segs + 1, 256) != 0) return tl_error_nomem(err);
        c->refs++;
        m->segs[m->n_segs++] = (segment){c, row, 1};
    }
    ++m->pending;
    if (m->file_rows + m->pending >= m->per_file) return flush(m, true, err);
    return m->pending >= m->slice ? flush(m, false, err) : TL_OK;
}

/* Emits rows [row, row + n) of c, as emit does one at a time: split where
 * the output's slices and files end. */
static tl_status emit_rows(merge *m, chunk *c, int64_t row, int64_t n, tl_error *err)
{
    while (n > 0) {
        int64_t room = m->slice - m->pending, to_file = m->per_file - m->file_rows - m->pending;
        room = to_file < room ? to_file : room;
        int64_t k = n < room ? n : room > 0 ? room : 1;
        segment *last = m->n_segs ? &m->segs[m->n_segs - 1] : NULL;
        if (last && last->c == c && last->start + last->len == row) {
            last->len += k;
        } else {
            if (TL_GROW(m->segs, m->cap_segs, m->n_segs + 1, 256) != 0) return tl_error_nomem(err);
            c->refs++;
            m->segs[m->n_segs++] = (segment){c, row, k};
        }
        m->pending += k;
        row += k;
        n -= k;
        if (m->file_rows + m->pending >= m->per_file)
            TL_TRY(flush(m, true, err));
        else if (m->pending >= m->slice)
            TL_TRY(flush(m, false, err));
    }
    return TL_OK;
}

/* ---- Merging ---- */

/* Moves the cursor one row on, checking the order; *rel is how the row left
 * compares with the new one (0: the same keys; -1 also when exhausted). */
static tl_status advance(merge *m, cursor *c, int *rel, tl_error *err)
{
    if (++c->pos < c->cur->rows.array.length) {
        *rel = cmp_rows(c->cur, c->pos - 1, c->cur, c->pos);
        if (*rel > 0) m->unsorted = true;
        return TL_OK;
    }
    return next_row_group(m, c, rel, err);
}

/* Without dedup every row stays; equal keys keep commit order. */
static tl_status emit_next(merge *m, tl_error *err)
{
    cursor *c = m->heap[0];
    int rel;
    TL_TRY(emit(m, c->cur, c->pos, err));
    TL_TRY(advance(m, c, &rel, err));
    settle_top(m);
    return TL_OK;
}

/* Emits the winner among the rows whose keys equal the top cursor's row.
 * Cursors holding those keys come to the top in commit order and each holds
 * them in consecutive rows, so `>=` lets the later write win a tie. The
 * comparisons are the merge's cost: a cursor's next row is compared with the
 * row it leaves only (equal keys are equal to the best's), and the top's
 * first row is the best. */
static tl_status emit_latest(merge *m, tl_error *err)
{
    cursor *top = m->heap[0], *last = NULL;
    chunk *best = top->cur;
    int64_t best_row = top->pos, best_ingest = ingest_at(best, best_row);
    best->refs++;
    tl_status st = TL_OK;
    int rel = 0;
    while (st == TL_OK && !m->unsorted && m->n_heap > 0) {
        cursor *c = m->heap[0];
        /* Back on top, the cursor that just moved past the keys: not equal. */
        if (c == last || (last && cmp_rows(c->cur, c->pos, best, best_row) != 0)) break;
        do {
            int64_t ingest = ingest_at(c->cur, c->pos);
            if (ingest >= best_ingest) {
                c->cur->refs++;
                chunk_unref(best);
                best = c->cur;
                best_row = c->pos;
                best_ingest = ingest;
            }
            st = advance(m, c, &rel, err);
        } while (st == TL_OK && !m->unsorted && c->cur && rel == 0);
        last = c;
        if (st == TL_OK) settle_top(m);
    }
    if (st == TL_OK && !m->unsorted) st = emit(m, best, best_row, err);
    chunk_unref(best);
    return st;
}

/* ---- Runs of one input ---- */

/* The cursor that would come to the top after the top one: the smaller child
 * of the root, or NULL when the top is alone. */
static cursor *runner_up(const merge *m)
{
    if (m->n_heap < 2) return NULL;
    if (m->n_heap > 2 && cmp_cursors(m->heap[2], m->heap[1]) < 0) return m->heap[2];
    return m->heap[1];
}

/* The first row of c at or after `from` (and before `limit`) whose keys are
 * not below the row of `next` (limit when there is none): found by galloping,
 * as a sorted input has long runs of rows below every other input's. The
 * rows skipped are checked for order afterwards (emit_run). */
static int64_t run_end(const chunk *c, int64_t from, int64_t limit, const cursor *next)
{
    if (next == NULL) return limit;
    int64_t lo = from, step = 1; /* rows before lo are below next's */
    while (lo + step < limit && cmp_rows(c, lo + step, next->cur, next->pos) < 0) {
        lo += step;
        step *= 2;
    }
    int64_t hi = lo + step < limit ? lo + step : limit; /* hi: not below, or the limit */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cmp_rows(c, mid, next->cur, next->pos) < 0)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* The first row at or after `from` (before `end`) not strictly below the
 * next one, or `end` when each is (the last row past the others): the rows
 * before it hold no equal keys and are in order, so each goes out as it is.
 * Ranked rows with 64-bit times compare in a tight loop. */
static int64_t increasing_until(const chunk *ch, int64_t from, int64_t end)
{
    int64_t i = from;
    if (ch->rank && ch->time) {
        const int32_t *r = ch->rank;
        const int64_t *t = ch->time;
        while (i + 1 < end && (r[i] < r[i + 1] || (r[i] == r[i + 1] && t[i] < t[i + 1]))) i++;
    } else {
        while (i + 1 < end && cmp_rows(ch, i, ch, i + 1) < 0) i++;
    }
    return i + 1 < end ? i : end;
}

/* The rows of the top cursor that sort below every other input's current row
 * are emitted straight from it, without the heap: one comparison per row (with
 * its neighbour: the order check, and which rows hold equal keys), where the
 * heap took several. The last row of a row group is left to the heap, since
 * its keys may go on in the next row group. *done: whether any row went. */
static tl_status emit_run(merge *m, bool dedup, bool *done, tl_error *err)
{
    cursor *c = m->heap[0];
    chunk *ch = c->cur;
    int64_t from = c->pos, limit = ch->rows.array.length - 1;
    *done = false;
    if (from >= limit) return TL_OK;
    cursor *next = runner_up(m);
    if (next && cmp_rows(ch, from, next->cur, next->pos) >= 0) return TL_OK;
    int64_t end = run_end(ch, from, limit, next);
    /* Rows equal to the first row past the run stay with it (a duplicate
     * across the row group's end, or, unsorted, anywhere). */
    for (int rel; end > from; end--) {
        if ((rel = cmp_rows(ch, end - 1, ch, end)) > 0) m->unsorted = true;
        if (rel != 0) break;
    }
    for (int64_t i = from, best = from; i < end && !m->unsorted; i++) {
        int64_t plain = i == best ? increasing_until(ch, i, end) : i; /* not among equal keys */
        if (plain > i) {
            TL_TRY(emit_rows(m, ch, i, plain - i, err));
            best = plain;
            i = plain - 1;
            continue;
        }
        int rel = i + 1 < end ? cmp_rows(ch, i, ch, i + 1) : -1;
        if (rel > 0) {
            m->unsorted = true;
            break;
        }
        if (dedup && ingest_at(ch, i) >= ingest_at(ch, best)) best = i;
        if (dedup && rel == 0) continue; /* the later row of equal keys may win */
        TL_TRY(emit(m, ch, dedup ? best : i, err));
        best = i + 1;
    }
    if (m->unsorted || end == from) return TL_OK;
    c->pos = end;
    sift_down(m, 0);
    *done = true;
    return TL_OK;
}

static int by_sequence(const void *a, const void *b)
{
    const tl_live_file *x = ((const tl_merge_input *)a)->file,
                       *y = ((const tl_merge_input *)b)->file;
    if (x->sequence_number != y->sequence_number)
        return x->sequence_number < y->sequence_number ? -1 : 1;
    return strcmp(x->file.file_path, y->file.file_path);
}

/* The inputs are opened (their first row groups read and decoded) by a few
 * threads at once: a small compaction's inputs are mostly one row group each,
 * so that is most of its reading. */
#define OPEN_THREADS 4

typedef struct open_job {
    merge *m;
    cursor *cur;
    const tl_merge_input *order;
} open_job;

static tl_status open_one(void *ctx, size_t i, tl_error *unused)
{
    (void)unused;
    open_job *j = ctx;
    cursor *c = &j->cur[i];
    c->order = i;
    c->opening = true;
    c->status = open_cursor(j->m, c, &j->order[i], &c->err);
    return TL_OK; /* failures are taken in order below */
}

/* Folds what the opened cursors found into the merge, in commit order, and
 * heaps those with rows; the first failure in that order is the merge's. */
static tl_status open_all(merge *m, cursor *cur, const tl_merge_input *order, size_t n,
                          tl_error *err)
{
    open_job j = {m, cur, order};
    tl_parallel_run(n, OPEN_THREADS, false, open_one, &j, err);
    for (size_t i = 0; i < n; i++) {
        cursor *c = &cur[i];
        c->opening = false;
        if (c->status != TL_OK) {
            *err = c->err;
            return c->status;
        }
        m->unsorted |= c->unsorted;
        m->out->rows_in += c->rows_in;
        if (c->cur && m->schema.release == NULL)
            TL_TRY(tl_schema_copy(&c->cur->rows.schema, &m->schema, err));
        if (c->cur) m->heap[m->n_heap++] = c;
    }
    return TL_OK;
}

static tl_status run(merge *m, cursor *cur, const tl_merge_input *order, size_t n, tl_error *err)
{
    tl_status st = open_all(m, cur, order, n, err);
    if (st == TL_OK) st = rank_opened(m, err);
    for (size_t i = m->n_heap; st == TL_OK && !m->unsorted && i-- > 0;) sift_down(m, i);
    bool dedup = m->t->contract.dedup && m->t->contract.time_index >= 0;
    while (st == TL_OK && !m->unsorted && m->n_heap > 0) {
        bool ran = false;
        st = emit_run(m, dedup, &ran, err);
        if (st == TL_OK && !ran && !m->unsorted)
            st = dedup ? emit_latest(m, err) : emit_next(m, err);
    }
    if (st == TL_OK && !m->unsorted) st = flush(m, true, err);
    return st;
}

/* Each output file takes its rows' share of the inputs' compressed bytes,
 * and a quarter more: merged rows mostly compress as well or better (one
 * footer replaces many), but not always (64 files of random floats and of
 * strings of 100,000 distinct values came out 5% larger), and a buffer one
 * byte short doubles. Reserved whole, the file buffer is neither copied at
 * each doubling nor mapped afresh (page faults on first touch); the headroom
 * it never writes is never touched (address space, not memory). The cap, the
 * default target file size: the writer holds its whole file anyway, but a
 * merge that drops most rows as duplicates would otherwise claim far more
 * address space than it writes; past it the buffer grows as before. */
int64_t tl_merge_reserve_bytes(int64_t input_bytes, int64_t input_rows, int64_t file_rows)
{
    if (input_bytes <= 0 || input_rows <= 0 || file_rows <= 0) return 0;
    if (file_rows > input_rows) file_rows = input_rows;
    double share = (double)input_bytes * ((double)file_rows / (double)input_rows) * 1.25;
    return share < (double)TL_MERGE_RESERVE_MAX ? (int64_t)share : TL_MERGE_RESERVE_MAX;
}

tl_status tl_merge_inputs(const tl_table *t, const tl_merge_input *in, size_t n,
                          int64_t rows_per_file, const char *what, tl_rewrite_output *out,
                          bool *fallback, tl_error *err)
{
    memset(out, 0, sizeof *out);
    *fallback = false;
    merge m = {.t = t, .out = out, .slice = slice_rows()};
    int64_t rows = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        rows += in[i].file->file.record_count;
        bytes += in[i].file->file.file_size_in_bytes;
    }
    /* An even split of the expected rows into files of at most rows_per_file. */
    int64_t n_files = rows_per_file > 0 ? (rows + rows_per_file - 1) / rows_per_file : 1;
    if (n_files < 1) n_files = 1;
    m.per_file = (rows + n_files - 1) / n_files;
    if (m.per_file < 1) m.per_file = 1;
    m.reserve = tl_merge_reserve_bytes(bytes, rows, m.per_file);
    if (n > 0) {
        m.partition = in[0].file->file.partition;
        m.n_partition = in[0].file->file.n_partition;
    }
    tl_merge_input *order = malloc((n + 1) * sizeof *order);
    cursor *cur = calloc(n + 1, sizeof *cur);
    m.heap = malloc((n + 1) * sizeof *m.heap);
    tl_status st = order && cur && m.heap ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) {
        memcpy(order, in, n * sizeof *order);
        qsort(order, n, sizeof *order, by_sequence);
        st = run(&m, cur, order, n, err);
    }
    if (st != TL_OK) tl_error_prefix(err, "%s", what);
    for (size_t i = 0; cur && i < n; i++) close_cursor(&cur[i]);
    for (size_t i = 0; i < m.n_segs; i++) chunk_unref(m.segs[i].c);
    tl_data_file_writer_free(m.file); /* unfinished: nothing of it was uploaded */
    free(m.segs);
    free(m.heap);
    free(cur);
    free(order);
    if (m.schema.release) tl_schema_release(&m.schema);
    tl_series_set_free(&m.series);
    *fallback = st == TL_OK && m.unsorted;
    if (st != TL_OK || m.unsorted) tl_rewrite_output_free(t, out, true);
    return st;
}

tl_status tl_merge_files(const tl_table *t, const tl_live_file *const *files, size_t n,
                         int64_t rows_per_file, tl_rewrite_output *out, bool *fallback,
                         tl_error *err)
{
    tl_merge_input *in = calloc(n + 1, sizeof *in);
    if (in == NULL) {
        memset(out, 0, sizeof *out);
        *fallback = false;
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n; i++) in[i].file = files[i];
    tl_status st = tl_merge_inputs(t, in, n, rows_per_file, "compacting", out, fallback, err);
    free(in);
    return st;
}
