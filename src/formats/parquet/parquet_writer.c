#include "formats/parquet/parquet_writer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrow/array.h"
#include "core/arena.h"
#include "core/grow.h"
#include "core/parallel.h"
#include "formats/parquet/parquet_column_writer.h"
#include "formats/parquet/parquet_encoding.h"
#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/parquet_nested.h"
#include "formats/parquet/parquet_schema.h"

/* Page index entries of one column chunk, serialized when the file is finished. */
typedef struct chunk_index {
    bool has_column_index;
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
} chunk_index;

/* File-level statistics of one column, merged over its chunks. */
typedef struct column_totals {
    int64_t values, nulls, nans, compressed;
    tl_pq_minmax mm;
    bool mm_lost; /* a chunk had values but no usable min/max */
} column_totals;

/* Columns are the schema's top-level fields; leaves are Parquet's columns. A flat
 * column is one leaf; a nested one (tl_pq_field_is_nested) has its own leaves,
 * written from the levels its tl_pq_nested shreds each batch into. */
struct tl_parquet_writer {
    tl_arena arena; /* names, option copies and finished row-group metadata */
    struct ArrowSchema schema;
    size_t n_cols, n_leaves;
    tl_pq_nested **nested; /* per column: NULL when flat */
    size_t *leaf_col;      /* per leaf: its column */
    size_t *leaf_sub;      /* per leaf: its index among its column's leaves */
    /* Per leaf from here on (views: per column). */
    tl_pq_column_desc *descs;
    tl_pq_column_writer *cols;
    column_totals *totals;
    tl_array_view *views;
    tl_pq_codec_ctx **cctx; /* one per column, so columns can compress in parallel */
    tl_status *col_status;  /* per column, of the last parallel step */
    tl_error *col_errors;
    int threads;
    tl_pq_codec_id codec;
    int level;
    int64_t page_rows, rg_rows_max;
    tl_pq_sorting_column *sorting;
    size_t n_sorting;
    const char *created_by;
    tl_pq_key_value *kv;
    size_t n_kv;
    bool page_index, has_field_ids, broken, finished;
    int32_t *field_ids; /* per column, or NULL */
    tl_buf out;
    int64_t rg_rows, num_rows;
    tl_pq_row_group *rgs;
    chunk_index **indexes; /* per row group, n_cols each */
    size_t n_rgs, rgs_cap;
};

/* Rows below which a step runs on the calling thread alone. */
#define TL_PQ_PARALLEL_ROWS 4096

static const tl_pq_codec_id codec_ids[] = {TL_PQ_CODEC_UNCOMPRESSED, TL_PQ_CODEC_SNAPPY,
                                           TL_PQ_CODEC_GZIP,         TL_PQ_CODEC_ZSTD,
                                           TL_PQ_CODEC_LZ4_RAW,      TL_PQ_CODEC_BROTLI};

/* ---- Opening ---- */

static tl_status copy_options(tl_parquet_writer *w, const tl_parquet_write_options *o,
                              tl_error *err)
{
    if ((unsigned)o->codec > TL_PARQUET_BROTLI)
        return tl_error_set(err, TL_ERR_INVALID, "unknown Parquet codec %d", (int)o->codec);
    if (o->min_saving_pct < 0 || o->min_saving_pct > 100)
        return tl_error_set(err, TL_ERR_INVALID,
                            "minimum compression saving must be 0-100%%, got %d",
                            o->min_saving_pct);
    w->codec = codec_ids[o->codec];
    w->level = o->compression_level;
    w->page_rows = o->page_rows > 0 ? o->page_rows : 20000;
    w->rg_rows_max = o->row_group_rows > 0 ? o->row_group_rows : 1000000;
    if (w->page_rows > INT32_MAX / 2) w->page_rows = INT32_MAX / 2;
    w->page_index = o->write_page_index;
    size_t cpus = tl_cpu_count();
    w->threads = o->threads > 0 ? o->threads : (int)(cpus < 8 ? cpus : 8);
    if (w->threads > 8) w->threads = 8;
    const char *by = o->created_by ? o->created_by : "timelake-c " TIMELAKE_VERSION;
    w->created_by = tl_arena_dup(&w->arena, by, strlen(by));
    if (w->created_by == NULL) return tl_error_nomem(err);
    w->n_sorting = o->sorting_columns ? o->n_sorting_columns : 0;
    w->sorting = tl_arena_calloc(&w->arena, w->n_sorting, sizeof *w->sorting);
    if (w->sorting == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < w->n_sorting; i++) {
        int32_t c = o->sorting_columns[i];
        if (c < 0 || (size_t)c >= w->n_cols)
            return tl_error_set(err, TL_ERR_INVALID, "sorting column %d is not a column index",
                                (int)c);
        w->sorting[i] = (tl_pq_sorting_column){.column_idx = c, .nulls_first = true};
    }
    if (o->key_value_metadata)
        while (o->key_value_metadata[2 * w->n_kv]) w->n_kv++;
    w->kv = tl_arena_calloc(&w->arena, w->n_kv, sizeof *w->kv);
    if (w->kv == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < w->n_kv; i++) {
        const char *k = o->key_value_metadata[2 * i], *v = o->key_value_metadata[2 * i + 1];
        w->kv[i].key = tl_arena_dup(&w->arena, k, strlen(k));
        w->kv[i].value = v ? tl_arena_dup(&w->arena, v, strlen(v)) : NULL;
        if (w->kv[i].key == NULL || (v && w->kv[i].value == NULL)) return tl_error_nomem(err);
    }
    return TL_OK;
}

/* Describes the nested columns and counts the leaves. */
static tl_status open_nested(tl_parquet_writer *w, tl_error *err)
{
    w->nested = calloc(w->n_cols, sizeof *w->nested);
    w->views = calloc(w->n_cols, sizeof *w->views);
    if (!w->nested || !w->views) return tl_error_nomem(err);
    for (size_t i = 0; i < w->n_cols; i++) {
        const struct ArrowSchema *f = w->schema.children[i];
        if (tl_pq_field_is_nested(f)) TL_TRY(tl_pq_nested_new(f, &w->nested[i], err));
        w->n_leaves += w->nested[i] ? tl_pq_nested_n_leaves(w->nested[i]) : 1;
    }
    w->leaf_col = calloc(w->n_leaves, sizeof *w->leaf_col);
    w->leaf_sub = calloc(w->n_leaves, sizeof *w->leaf_sub);
    if (!w->leaf_col || !w->leaf_sub) return tl_error_nomem(err);
    for (size_t i = 0, leaf = 0; i < w->n_cols; i++) {
        size_t n = w->nested[i] ? tl_pq_nested_n_leaves(w->nested[i]) : 1;
        for (size_t k = 0; k < n; k++, leaf++) {
            w->leaf_col[leaf] = i;
            w->leaf_sub[leaf] = k;
        }
    }
    return TL_OK;
}

static tl_status open_columns(tl_parquet_writer *w, const tl_parquet_write_options *o,
                              tl_error *err)
{
    TL_TRY(open_nested(w, err));
    if ((size_t)w->threads > w->n_leaves) w->threads = (int)w->n_leaves;
    w->descs = calloc(w->n_leaves, sizeof *w->descs);
    w->cols = calloc(w->n_leaves, sizeof *w->cols);
    w->totals = calloc(w->n_leaves, sizeof *w->totals);
    w->cctx = calloc(w->n_leaves, sizeof *w->cctx);
    w->col_status = calloc(w->n_leaves, sizeof *w->col_status);
    w->col_errors = calloc(w->n_leaves, sizeof *w->col_errors);
    if (!w->descs || !w->cols || !w->totals || !w->cctx || !w->col_status || !w->col_errors)
        return tl_error_nomem(err);
    for (size_t i = 0; i < w->n_leaves; i++)
        if ((w->cctx[i] = tl_pq_codec_ctx_new()) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < w->n_leaves; i++) {
        size_t col = w->leaf_col[i];
        if (w->nested[col]) {
            w->descs[i] = *tl_pq_nested_leaf(w->nested[col], w->leaf_sub[i]);
            continue;
        }
        TL_TRY(tl_pq_column_from_arrow(w->schema.children[col], &w->descs[i], err));
        if (o->field_ids) {
            w->descs[i].elem.has_field_id = true;
            w->descs[i].elem.field_id = o->field_ids[col];
        }
    }
    w->field_ids =
        o->field_ids ? tl_arena_calloc(&w->arena, w->n_cols, sizeof *w->field_ids) : NULL;
    if (o->field_ids && w->field_ids == NULL) return tl_error_nomem(err);
    if (o->field_ids) memcpy(w->field_ids, o->field_ids, w->n_cols * sizeof *w->field_ids);
    tl_pq_colw_options co = {
        .compact = o->encodings == TL_PARQUET_ENCODINGS_COMPACT,
        .codec = w->codec,
        .level = w->level,
        .min_saving_pct = o->min_saving_pct,
        .page_rows = w->page_rows,
    };
    for (size_t i = 0; i < w->n_leaves; i++)
        TL_TRY(tl_pq_colw_init(&w->cols[i], &w->descs[i], &co, w->cctx[i], err));
    return TL_OK;
}

tl_status tl_parquet_writer_open(const struct ArrowSchema *schema,
                                 const tl_parquet_write_options *opts, tl_parquet_writer **out,
                                 tl_error *err)
{
    *out = NULL;
    if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "a Parquet schema must be an Arrow struct");
    if (schema->n_children < 1)
        return tl_error_set(err, TL_ERR_INVALID, "a Parquet schema needs at least one column");
    tl_parquet_writer *w = calloc(1, sizeof *w);
    if (w == NULL) return tl_error_nomem(err);
    w->n_cols = (size_t)schema->n_children;
    w->has_field_ids = opts->field_ids != NULL;
    tl_status st = tl_schema_copy(schema, &w->schema, err);
    if (st == TL_OK) st = copy_options(w, opts, err);
    if (st == TL_OK) st = open_columns(w, opts, err);
    if (st == TL_OK && tl_buf_append(&w->out, "PAR1", 4) != 0) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_parquet_writer_free(w);
        return st;
    }
    *out = w;
    return TL_OK;
}

int tl_parquet_writer_reserve(tl_parquet_writer *w, size_t bytes)
{
    return bytes > w->out.len ? tl_buf_reserve_exact(&w->out, bytes - w->out.len) : 0;
}

/* ---- Row groups ---- */

static tl_status grow_row_groups(tl_parquet_writer *w, tl_error *err)
{
    if (w->n_rgs < w->rgs_cap) return TL_OK;
    size_t cap = tl_grow_capacity(w->rgs_cap, w->n_rgs + 1, sizeof *w->rgs, 8);
    if (cap == 0 || tl_realloc_array(&w->rgs, cap, sizeof *w->rgs) != 0 ||
        tl_realloc_array(&w->indexes, cap, sizeof *w->indexes) != 0)
        return tl_error_nomem(err);
    w->rgs_cap = cap;
    return TL_OK;
}

static bool mm_usable(const tl_pq_minmax *mm)
{
    return mm->has && mm->min_len <= TL_PQ_STATS_MAX_LEN && mm->max_len <= TL_PQ_STATS_MAX_LEN;
}

static tl_status chunk_statistics(tl_parquet_writer *w, const tl_pq_column_writer *c,
                                  tl_pq_statistics *s, tl_error *err)
{
    s->has_null_count = true;
    s->null_count = c->nulls;
    if (!mm_usable(&c->mm)) return TL_OK;
    s->min_value.data = (const uint8_t *)tl_arena_dup(&w->arena, c->mm.min, c->mm.min_len);
    s->max_value.data = (const uint8_t *)tl_arena_dup(&w->arena, c->mm.max, c->mm.max_len);
    if (!s->min_value.data || !s->max_value.data) return tl_error_nomem(err);
    s->min_value.len = c->mm.min_len;
    s->max_value.len = c->mm.max_len;
    s->has_min_value = s->has_max_value = true;
    return TL_OK;
}

static tl_status chunk_encodings(tl_parquet_writer *w, const tl_pq_column_writer *c,
                                 tl_pq_column_meta *m, tl_error *err)
{
    m->encodings = tl_arena_calloc(&w->arena, 4, sizeof *m->encodings);
    m->encoding_stats = tl_arena_calloc(&w->arena, 3, sizeof *m->encoding_stats);
    if (!m->encodings || !m->encoding_stats) return tl_error_nomem(err);
    m->encodings[m->n_encodings++] = TL_PQ_ENC_PLAIN;
    m->encodings[m->n_encodings++] = TL_PQ_ENC_RLE;
    if (c->n_plain_pages && c->value_encoding != TL_PQ_ENC_PLAIN)
        m->encodings[m->n_encodings++] = c->value_encoding;
    if (c->dict_used) {
        m->encodings[m->n_encodings++] = TL_PQ_ENC_RLE_DICTIONARY;
        m->encoding_stats[m->n_encoding_stats++] =
            (tl_pq_encoding_stats){TL_PQ_DICTIONARY_PAGE, TL_PQ_ENC_PLAIN, 1};
        m->encoding_stats[m->n_encoding_stats++] =
            (tl_pq_encoding_stats){TL_PQ_DATA_PAGE, TL_PQ_ENC_RLE_DICTIONARY, c->n_dict_pages};
    }
    if (c->n_plain_pages)
        m->encoding_stats[m->n_encoding_stats++] =
            (tl_pq_encoding_stats){TL_PQ_DATA_PAGE, (int32_t)c->value_encoding, c->n_plain_pages};
    return TL_OK;
}

static int boundary_order(const tl_pq_column_writer *c, tl_pq_order order)
{
    bool asc = true, desc = true;
    const tl_pq_page_info *prev = NULL;
    for (size_t i = 0; i < c->n_pages; i++) {
        const tl_pq_page_info *p = &c->pages[i];
        if (!p->mm.has) continue;
        if (prev) {
            int lo = tl_pq_order_compare(order, prev->mm.min, prev->mm.min_len, p->mm.min,
                                         p->mm.min_len);
            int hi = tl_pq_order_compare(order, prev->mm.max, prev->mm.max_len, p->mm.max,
                                         p->mm.max_len);
            if (lo > 0 || hi > 0) asc = false;
            if (lo < 0 || hi < 0) desc = false;
        }
        prev = p;
    }
    return asc ? TL_PQ_ASCENDING : desc ? TL_PQ_DESCENDING : TL_PQ_UNORDERED;
}

/* Builds the chunk's page index; the column index is left out when a page
 * with values has no usable min/max (all NaN, unordered type, or too long). */
static tl_status chunk_page_index(tl_parquet_writer *w, const tl_pq_column_writer *c,
                                  int64_t data_start, chunk_index *ix, tl_error *err)
{
    size_t n = c->n_pages;
    ix->oi.n_pages = n;
    ix->oi.pages = tl_arena_calloc(&w->arena, n, sizeof *ix->oi.pages);
    if (ix->oi.pages == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++)
        ix->oi.pages[i] = (tl_pq_page_location){data_start + c->pages[i].offset, c->pages[i].size,
                                                c->pages[i].first_row};
    tl_pq_column_index *ci = &ix->ci;
    ci->n_pages = n;
    ci->null_pages = tl_arena_calloc(&w->arena, n, sizeof *ci->null_pages);
    ci->min_values = tl_arena_calloc(&w->arena, n, sizeof *ci->min_values);
    ci->max_values = tl_arena_calloc(&w->arena, n, sizeof *ci->max_values);
    ci->null_counts = tl_arena_calloc(&w->arena, n, sizeof *ci->null_counts);
    if (!ci->null_pages || !ci->min_values || !ci->max_values || !ci->null_counts)
        return tl_error_nomem(err);
    ix->has_column_index = true;
    for (size_t i = 0; i < n; i++) {
        const tl_pq_page_info *p = &c->pages[i];
        ci->null_pages[i] = p->null_count == p->values;
        ci->null_counts[i] = p->null_count;
        if (ci->null_pages[i]) continue;
        if (!mm_usable(&p->mm)) {
            ix->has_column_index = false;
            return TL_OK;
        }
        ci->min_values[i].data = (const uint8_t *)tl_arena_dup(&w->arena, p->mm.min, p->mm.min_len);
        ci->max_values[i].data = (const uint8_t *)tl_arena_dup(&w->arena, p->mm.max, p->mm.max_len);
        if (!ci->min_values[i].data || !ci->max_values[i].data) return tl_error_nomem(err);
        ci->min_values[i].len = p->mm.min_len;
        ci->max_values[i].len = p->mm.max_len;
    }
    ci->boundary_order = boundary_order(c, w->descs[c - w->cols].order);
    return TL_OK;
}

static tl_status merge_totals(column_totals *t, const tl_pq_column_writer *c, tl_pq_order order,
                              tl_error *err)
{
    t->values += c->values;
    t->nulls += c->nulls;
    t->nans += c->nans;
    t->compressed += (int64_t)(c->dict_page.len + c->chunk.len);
    if (mm_usable(&c->mm)) {
        if (tl_pq_minmax_update(&t->mm, order, c->mm.min, c->mm.min_len, c->mm.max,
                                c->mm.max_len) != 0)
            return tl_error_nomem(err);
    } else if (c->values - c->nulls - c->nans > 0) {
        t->mm_lost = true;
    }
    return TL_OK;
}

static tl_status place_chunk(tl_parquet_writer *w, size_t col, tl_pq_column_chunk *cc,
                             chunk_index *ix, tl_error *err)
{
    tl_pq_column_writer *c = &w->cols[col];
    int64_t start = (int64_t)w->out.len;
    if (tl_buf_append(&w->out, c->dict_page.data, c->dict_page.len) != 0 ||
        tl_buf_append(&w->out, c->chunk.data, c->chunk.len) != 0)
        return tl_error_nomem(err);
    tl_pq_column_meta *m = &cc->meta;
    cc->file_offset = start;
    cc->has_meta = true;
    m->type = w->descs[col].elem.type;
    const tl_pq_column_desc *d = &w->descs[col];
    m->n_path = d->path ? d->n_path : 1;
    m->path = tl_arena_calloc(&w->arena, m->n_path, sizeof *m->path);
    if (m->path == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < m->n_path; i++) m->path[i] = d->path ? d->path[i] : d->name;
    m->codec = c->codec;
    m->num_values = c->values;
    m->total_uncompressed_size = c->uncompressed;
    m->total_compressed_size = (int64_t)(c->dict_page.len + c->chunk.len);
    m->data_page_offset = start + (int64_t)c->dict_page.len;
    m->has_dictionary_page_offset = c->dict_used;
    m->dictionary_page_offset = start;
    m->has_statistics = true;
    TL_TRY(chunk_statistics(w, c, &m->statistics, err));
    TL_TRY(chunk_encodings(w, c, m, err));
    if (w->page_index) TL_TRY(chunk_page_index(w, c, m->data_page_offset, ix, err));
    return merge_totals(&w->totals[col], c, w->descs[col].order, err);
}

/* ---- Column-parallel steps ---- */

typedef struct column_step {
    tl_parquet_writer *w;
    int64_t start, n; /* rows to append; n < 0 finishes the chunks instead */
} column_step;

/* One column; its status goes to w->col_status, so the run itself never fails. */
static tl_status run_column(void *ctx, size_t i, tl_error *err)
{
    (void)err;
    column_step *s = ctx;
    tl_parquet_writer *w = s->w;
    tl_error *e = &w->col_errors[i];
    size_t col = w->leaf_col[i];
    if (s->n < 0) {
        w->col_status[i] = tl_pq_colw_finish(&w->cols[i], e);
    } else if (w->nested[col]) {
        const tl_pq_leaf_levels *l = tl_pq_nested_levels(w->nested[col], w->leaf_sub[i]);
        w->col_status[i] =
            tl_pq_colw_write_levels(&w->cols[i], l->values, l->def, l->rep, l->slots, l->n, e);
    } else {
        w->col_status[i] = tl_pq_colw_write(&w->cols[i], &w->views[col], s->start, s->n, e);
    }
    return TL_OK;
}

/* Runs one step on every column, spread over the writer's threads (each column is
 * touched by one thread only). Reports the first failing column's error. */
static tl_status for_each_column(tl_parquet_writer *w, int64_t start, int64_t n, tl_error *err)
{
    column_step s = {.w = w, .start = start, .n = n};
    /* Threads pay off only on big steps; appends of a few rows stay on the caller's. */
    int64_t rows = n < 0 ? w->rg_rows : n;
    int threads = rows >= TL_PQ_PARALLEL_ROWS ? w->threads : 1;
    tl_parallel_run(w->n_leaves, (size_t)threads, false, run_column, &s, NULL);
    for (size_t i = 0; i < w->n_leaves; i++) {
        if (w->col_status[i] == TL_OK) continue;
        tl_error_set(err, w->col_status[i], "%s", w->col_errors[i].message);
        return tl_error_prefix(err, "row group %zu", w->n_rgs);
    }
    return TL_OK;
}

static tl_status flush_row_group(tl_parquet_writer *w, tl_error *err)
{
    TL_TRY(grow_row_groups(w, err));
    TL_TRY(for_each_column(w, 0, -1, err));
    tl_pq_row_group *g = &w->rgs[w->n_rgs];
    memset(g, 0, sizeof *g);
    g->columns = tl_arena_calloc(&w->arena, w->n_leaves, sizeof *g->columns);
    chunk_index *ix = tl_arena_calloc(&w->arena, w->n_leaves, sizeof *ix);
    if (g->columns == NULL || ix == NULL) return tl_error_nomem(err);
    g->n_columns = w->n_leaves;
    g->num_rows = w->rg_rows;
    g->sorting_columns = w->sorting;
    g->n_sorting_columns = w->n_sorting;
    g->has_file_offset = g->has_total_compressed_size = true;
    g->file_offset = (int64_t)w->out.len;
    g->has_ordinal = w->n_rgs <= INT16_MAX;
    g->ordinal = (int16_t)w->n_rgs;
    for (size_t i = 0; i < w->n_leaves; i++) {
        TL_TRY(place_chunk(w, i, &g->columns[i], &ix[i], err));
        g->total_byte_size += g->columns[i].meta.total_uncompressed_size;
        g->total_compressed_size += g->columns[i].meta.total_compressed_size;
        tl_pq_colw_reset(&w->cols[i]);
    }
    w->indexes[w->n_rgs++] = ix;
    w->num_rows += w->rg_rows;
    w->rg_rows = 0;
    return TL_OK;
}

/* ---- Writing batches ---- */

static tl_status check_batch(tl_parquet_writer *w, const struct ArrowArray *b, tl_error *err)
{
    if (b->n_children != (int64_t)w->n_cols)
        return tl_error_set(err, TL_ERR_INVALID, "batch has %lld columns, the schema %zu",
                            (long long)b->n_children, w->n_cols);
    if (b->length < 0 || b->offset < 0)
        return tl_error_set(err, TL_ERR_INVALID, "batch has a negative length or offset");
    for (size_t i = 0, leaf = 0; i < w->n_cols;
         leaf += w->nested[i] ? tl_pq_nested_n_leaves(w->nested[i]) : 1, i++) {
        const struct ArrowSchema *f = w->schema.children[i];
        const struct ArrowArray *a = b->children[i];
        const char *name = f->name ? f->name : "";
        if (a == NULL) return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" is missing", name);
        if (a->length < b->offset + b->length)
            return tl_error_set(err, TL_ERR_INVALID, "column \"%s\" has %lld rows, the batch %lld",
                                name, (long long)a->length, (long long)(b->offset + b->length));
        if (w->nested[i]) continue; /* checked as it is shredded */
        tl_status st = tl_array_view_init(&w->views[i], f, a, err);
        if (st != TL_OK) return tl_error_prefix(err, "column \"%s\"", name);
        const tl_array_view *v = &w->views[i];
        if (w->descs[leaf].nullable || v->validity == NULL || b->length == 0) continue;
        int64_t valid = tl_pq_bits_count(v->validity, v->offset + b->offset, b->length);
        if (valid != b->length)
            return tl_error_set(err, TL_ERR_INVALID,
                                "column \"%s\" is not nullable but has %lld nulls", name,
                                (long long)(b->length - valid));
    }
    return TL_OK;
}

static void free_views(tl_parquet_writer *w)
{
    for (size_t i = 0; i < w->n_cols; i++)
        if (w->nested[i])
            tl_pq_nested_release(w->nested[i]);
        else
            tl_array_view_free(&w->views[i]);
}

/* Shreds rows [start, start + n) of every nested column into its leaves' levels. */
static tl_status shred_nested(tl_parquet_writer *w, const struct ArrowArray *b, int64_t start,
                              int64_t n, tl_error *err)
{
    for (size_t i = 0; i < w->n_cols; i++)
        if (w->nested[i])
            TL_TRY(tl_pq_nested_shred(w->nested[i], b->children[i], start, n,
                                      w->num_rows + w->rg_rows, err));
    return TL_OK;
}

static tl_status write_rows(tl_parquet_writer *w, const struct ArrowArray *b, tl_error *err)
{
    int64_t done = 0;
    while (done < b->length) {
        int64_t take = w->rg_rows_max - w->rg_rows;
        if (take > b->length - done) take = b->length - done;
        TL_TRY(shred_nested(w, b, b->offset + done, take, err));
        TL_TRY(for_each_column(w, b->offset + done, take, err));
        w->rg_rows += take;
        done += take;
        if (w->rg_rows == w->rg_rows_max) TL_TRY(flush_row_group(w, err));
    }
    return TL_OK;
}

tl_status tl_parquet_writer_write(tl_parquet_writer *w, const struct ArrowArray *batch,
                                  tl_error *err)
{
    if (w->broken || w->finished)
        return tl_error_set(err, TL_ERR_INVALID, "the Parquet writer failed or was finished");
    tl_status st = check_batch(w, batch, err);
    if (st == TL_OK) {
        st = write_rows(w, batch, err);
        if (st != TL_OK) w->broken = true;
    }
    free_views(w);
    return st;
}

/* ---- Finishing ---- */

static tl_status write_page_indexes(tl_parquet_writer *w, tl_error *err)
{
    for (size_t g = 0; g < w->n_rgs; g++)
        for (size_t c = 0; c < w->n_leaves; c++) {
            chunk_index *ix = &w->indexes[g][c];
            if (!ix->has_column_index) continue;
            tl_pq_column_chunk *cc = &w->rgs[g].columns[c];
            size_t start = w->out.len;
            TL_TRY(tl_pq_write_column_index(&w->out, &ix->ci, err));
            cc->has_column_index = true;
            cc->column_index_offset = (int64_t)start;
            cc->column_index_length = (int32_t)(w->out.len - start);
        }
    for (size_t g = 0; g < w->n_rgs; g++)
        for (size_t c = 0; c < w->n_leaves; c++) {
            tl_pq_column_chunk *cc = &w->rgs[g].columns[c];
            size_t start = w->out.len;
            TL_TRY(tl_pq_write_offset_index(&w->out, &w->indexes[g][c].oi, err));
            cc->has_offset_index = true;
            cc->offset_index_offset = (int64_t)start;
            cc->offset_index_length = (int32_t)(w->out.len - start);
        }
    return TL_OK;
}

static tl_status write_footer(tl_parquet_writer *w, tl_error *err)
{
    size_t n = 1;
    for (size_t i = 0, k; i < w->n_cols; i++)
        n += w->nested[i] ? (tl_pq_nested_elements(w->nested[i], &k), k) : 1;
    tl_pq_schema_element *schema = tl_arena_calloc(&w->arena, n, sizeof *schema);
    if (schema == NULL) return tl_error_nomem(err);
    schema[0].name = "schema";
    schema[0].num_children = (int32_t)w->n_cols;
    for (size_t i = 0, leaf = 0, at = 1; i < w->n_cols; i++) {
        if (!w->nested[i]) {
            schema[at++] = w->descs[leaf++].elem;
            continue;
        }
        size_t k;
        const tl_pq_schema_element *e = tl_pq_nested_elements(w->nested[i], &k);
        memcpy(schema + at, e, k * sizeof *e);
        schema[at].has_field_id = w->field_ids != NULL;
        schema[at].field_id = w->field_ids ? w->field_ids[i] : 0;
        at += k;
        leaf += tl_pq_nested_n_leaves(w->nested[i]);
    }
    tl_pq_file_meta m = {
        .version = 2,
        .schema = schema,
        .n_schema = n,
        .num_rows = w->num_rows,
        .row_groups = w->rgs,
        .n_row_groups = w->n_rgs,
        .key_value = w->kv,
        .n_key_value = w->n_kv,
        .created_by = w->created_by,
        .n_column_orders = w->n_leaves,
    };
    size_t start = w->out.len;
    TL_TRY(tl_pq_write_file_meta(&w->out, &m, err));
    if (tl_buf_append_le32(&w->out, (uint32_t)(w->out.len - start)) != 0 ||
        tl_buf_append(&w->out, "PAR1", 4) != 0)
        return tl_error_nomem(err);
    return TL_OK;
}

static tl_status column_stats(tl_parquet_writer *w, size_t i, tl_parquet_column_stats *s,
                              tl_error *err)
{
    const column_totals *t = &w->totals[i];
    tl_pq_type type = w->descs[i].elem.type;
    s->field_id = w->descs[i].elem.has_field_id ? w->descs[i].elem.field_id : -1;
    s->value_count = t->values;
    s->null_count = t->nulls;
    s->nan_count = type == TL_PQ_FLOAT || type == TL_PQ_DOUBLE ? t->nans : -1;
    s->compressed_size = t->compressed;
    if (!t->mm.has || t->mm_lost) return TL_OK;
    if (tl_pq_stats_take(&s->min, &s->min_len, t->mm.min, t->mm.min_len) != 0 ||
        tl_pq_stats_take(&s->max, &s->max_len, t->mm.max, t->mm.max_len) != 0)
        return tl_error_nomem(err);
    s->has_min_max = true;
    return TL_OK;
}

static tl_status file_stats(tl_parquet_writer *w, tl_parquet_file_stats *s, tl_error *err)
{
    memset(s, 0, sizeof *s);
    s->num_rows = w->num_rows;
    s->file_size = (int64_t)w->out.len;
    s->columns = calloc(w->n_leaves, sizeof *s->columns);
    s->row_group_offsets = calloc(w->n_rgs ? w->n_rgs : 1, sizeof *s->row_group_offsets);
    tl_status st = s->columns && s->row_group_offsets ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) s->n_columns = w->n_leaves;
    for (size_t i = 0; st == TL_OK && i < w->n_leaves; i++)
        st = column_stats(w, i, &s->columns[i], err);
    s->n_row_groups = w->n_rgs;
    for (size_t g = 0; st == TL_OK && g < w->n_rgs; g++)
        s->row_group_offsets[g] = w->rgs[g].file_offset;
    if (st != TL_OK) tl_parquet_file_stats_free(s);
    return st;
}

tl_status tl_parquet_writer_finish(tl_parquet_writer *w, tl_buf *out, tl_parquet_file_stats *stats,
                                   tl_error *err)
{
    if (w->broken || w->finished)
        return tl_error_set(err, TL_ERR_INVALID, "the Parquet writer failed or was finished");
    w->finished = true;
    tl_status st = w->rg_rows > 0 ? flush_row_group(w, err) : TL_OK;
    if (st == TL_OK && w->page_index) st = write_page_indexes(w, err);
    if (st == TL_OK) st = write_footer(w, err);
    if (st == TL_OK && stats) st = file_stats(w, stats, err);
    if (st != TL_OK) {
        w->broken = true;
        return st;
    }
    tl_buf_free(out);
    *out = w->out;
    memset(&w->out, 0, sizeof w->out);
    return TL_OK;
}

void tl_parquet_writer_free(tl_parquet_writer *w)
{
    if (w == NULL) return;
    for (size_t i = 0; w->cols && i < w->n_leaves; i++) tl_pq_colw_free(&w->cols[i]);
    for (size_t i = 0; w->totals && i < w->n_leaves; i++) tl_pq_minmax_clear(&w->totals[i].mm);
    for (size_t i = 0; w->nested && i < w->n_cols; i++) tl_pq_nested_free(w->nested[i]);
    free(w->nested);
    free(w->leaf_col);
    free(w->leaf_sub);
    free(w->cols);
    free(w->totals);
    free(w->views);
    for (size_t i = 0; w->cctx && i < w->n_leaves; i++) tl_pq_codec_ctx_free(w->cctx[i]);
    free(w->cctx);
    free(w->col_status);
    free(w->col_errors);
    free(w->descs);
    free(w->rgs);
    free(w->indexes);
    tl_schema_release(&w->schema);
    tl_buf_free(&w->out);
    tl_arena_free(&w->arena);
    free(w);
}
