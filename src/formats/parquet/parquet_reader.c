#include "formats/parquet/parquet_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/concat.h"
#include "arrow/take.h"
#include "core/arena.h"
#include "core/grow.h"
#include "core/scratch.h"
#include "formats/parquet/parquet_column_reader.h"
#include "formats/parquet/parquet_compress.h"
#include "formats/parquet/parquet_encoding.h"
#include "formats/parquet/parquet_nested_read.h"
#include "formats/parquet/parquet_schema.h"

/* The footer is usually small: one read of the file's tail gets it whole. */
#define TL_PQ_TAIL_READ 65536
#define TL_PQ_MAX_FOOTER ((uint64_t)256 << 20)

struct tl_parquet_reader {
    tl_parquet_source src;
    tl_arena arena;
    tl_pq_file_meta meta;
    uint64_t footer_start;
    size_t n_cols;
    tl_pq_column_desc *cols; /* per column; of a nested one, only its name and nullability */
    size_t *leaf_of;         /* per column: its (first) leaf, the index of its column chunks */
    tl_pq_rnode **nested;    /* per column: NULL when flat */
    tl_pq_column_desc *leaves;
    size_t n_leaves, leaves_cap;
    tl_pq_codec_ctx *cctx;
    struct page_index *pidx;       /* per row group and column, parsed on first use */
    const tl_parquet_reader *base; /* tl_parquet_reader_share: whose footer this borrows */
};

/* The parsed page index of one column chunk. */
typedef struct page_index {
    tl_status st; /* TL_OK, or TL_ERR_NOT_FOUND when the chunk has none */
    bool loaded;
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
} page_index;

static tl_status mem_read(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    (void)err;
    if (len) memcpy(dst, (const uint8_t *)ctx + offset, len);
    return TL_OK;
}

void tl_parquet_source_from_memory(tl_parquet_source *src, const uint8_t *data, size_t len)
{
    src->ctx = (void *)data;
    src->size = len;
    src->read = mem_read;
}

static tl_status read_range(const tl_parquet_reader *r, uint64_t offset, uint64_t len, uint8_t *dst,
                            tl_error *err)
{
    if (offset > r->src.size || len > r->src.size - offset)
        return tl_error_set(
            err, TL_ERR_INVALID, "byte range %llu+%llu lies outside the file (%llu bytes)",
            (unsigned long long)offset, (unsigned long long)len, (unsigned long long)r->src.size);
    return r->src.read(r->src.ctx, offset, (size_t)len, dst, err);
}

/* ---- Opening ---- */

static tl_status read_footer(tl_parquet_reader *r, tl_error *err)
{
    uint64_t size = r->src.size;
    if (size < 12)
        return tl_error_set(err, TL_ERR_INVALID, "file of %llu bytes is not Parquet",
                            (unsigned long long)size);
    size_t tail_len = size < TL_PQ_TAIL_READ ? (size_t)size : TL_PQ_TAIL_READ;
    uint8_t *tail = malloc(tail_len);
    if (tail == NULL) return tl_error_nomem(err);
    tl_status st = read_range(r, size - tail_len, tail_len, tail, err);
    const uint8_t *end = tail + tail_len;
    if (st == TL_OK && memcmp(end - 4, "PARE", 4) == 0)
        st = tl_error_set(err, TL_ERR_INVALID, "encrypted Parquet files are not supported");
    else if (st == TL_OK && memcmp(end - 4, "PAR1", 4) != 0)
        st = tl_error_set(err, TL_ERR_INVALID, "not a Parquet file (no PAR1 at its end)");
    uint64_t flen = st == TL_OK ? tl_load_le32(end - 8) : 0;
    if (st == TL_OK && (flen > size - 12 || flen > TL_PQ_MAX_FOOTER))
        st = tl_error_set(err, TL_ERR_INVALID, "footer length %llu does not fit the file",
                          (unsigned long long)flen);
    if (st == TL_OK && tail_len == size && memcmp(tail, "PAR1", 4) != 0)
        st = tl_error_set(err, TL_ERR_INVALID, "not a Parquet file (no PAR1 at its start)");
    if (st != TL_OK) {
        free(tail);
        return st;
    }
    r->footer_start = size - 8 - flen;
    const uint8_t *footer = end - 8 - flen;
    uint8_t *big = NULL;
    if (flen + 8 > tail_len) {
        big = malloc((size_t)flen);
        if (big == NULL)
            st = tl_error_nomem(err);
        else
            st = read_range(r, r->footer_start, flen, big, err);
        footer = big;
    }
    if (st == TL_OK) st = tl_pq_parse_file_meta(footer, (size_t)flen, &r->arena, &r->meta, err);
    free(big);
    free(tail);
    return st;
}

static tl_status add_flat_leaf(tl_parquet_reader *r, const tl_pq_column_desc *d, tl_error *err)
{
    if (TL_GROW(r->leaves, r->leaves_cap, r->n_leaves + 1, 16) != 0) return tl_error_nomem(err);
    r->leaves[r->n_leaves++] = *d;
    return TL_OK;
}

static tl_status check_schema(tl_parquet_reader *r, tl_error *err)
{
    const tl_pq_file_meta *m = &r->meta;
    if (m->encrypted)
        return tl_error_set(err, TL_ERR_INVALID, "encrypted Parquet files are not supported");
    if (m->n_schema < 1 || m->schema[0].has_type || m->schema[0].num_children < 0)
        return tl_error_set(err, TL_ERR_INVALID, "the Parquet schema has no root group");
    r->n_cols = (size_t)m->schema[0].num_children;
    r->cols = tl_arena_calloc(&r->arena, r->n_cols + 1, sizeof *r->cols);
    r->leaf_of = tl_arena_calloc(&r->arena, r->n_cols + 1, sizeof *r->leaf_of);
    r->nested = tl_arena_calloc(&r->arena, r->n_cols + 1, sizeof *r->nested);
    if (!r->cols || !r->leaf_of || !r->nested) return tl_error_nomem(err);
    size_t at = 1;
    for (size_t i = 0; i < r->n_cols; i++) {
        if (at >= m->n_schema)
            return tl_error_set(err, TL_ERR_INVALID, "the Parquet schema has %zu columns, not %zu",
                                i, r->n_cols);
        const tl_pq_schema_element *e = &m->schema[at];
        r->leaf_of[i] = r->n_leaves;
        if (e->has_type && e->num_children <= 0) {
            if (e->has_repetition && e->repetition == TL_PQ_REPEATED)
                return tl_error_set(err, TL_ERR_INVALID,
                                    "column \"%s\": repeated columns are not supported", e->name);
            TL_TRY(tl_pq_column_to_arrow(e, &r->cols[i], err));
            TL_TRY(add_flat_leaf(r, &r->cols[i], err));
            at++;
            continue;
        }
        TL_TRY(tl_pq_rnode_parse(&r->arena, m->schema, m->n_schema, &at, &r->nested[i], &r->leaves,
                                 &r->n_leaves, &r->leaves_cap, err));
        r->cols[i].name = e->name ? e->name : "";
        r->cols[i].nullable = !e->has_repetition || e->repetition != TL_PQ_REQUIRED;
        r->cols[i].elem = *e;
    }
    if (at != m->n_schema)
        return tl_error_set(err, TL_ERR_INVALID,
                            "the Parquet schema has elements past its columns");
    return TL_OK;
}

static tl_status check_row_groups(tl_parquet_reader *r, tl_error *err)
{
    const tl_pq_file_meta *m = &r->meta;
    int64_t total = 0;
    if (m->n_row_groups > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "too many row groups");
    for (size_t g = 0; g < m->n_row_groups; g++) {
        const tl_pq_row_group *rg = &m->row_groups[g];
        if (rg->n_columns != r->n_leaves)
            return tl_error_set(err, TL_ERR_INVALID,
                                "row group %zu has %zu columns, the schema %zu", g, rg->n_columns,
                                r->n_leaves);
        if (rg->num_rows < 0 || rg->num_rows > INT32_MAX)
            return tl_error_set(err, TL_ERR_INVALID, "row group %zu has %lld rows", g,
                                (long long)rg->num_rows);
        total += rg->num_rows;
    }
    if (total != m->num_rows)
        return tl_error_set(err, TL_ERR_INVALID, "row groups hold %lld rows, the footer says %lld",
                            (long long)total, (long long)m->num_rows);
    return TL_OK;
}

tl_status tl_parquet_reader_open(const tl_parquet_source *src, tl_parquet_reader **out,
                                 tl_error *err)
{
    *out = NULL;
    tl_parquet_reader *r = calloc(1, sizeof *r);
    if (r == NULL) return tl_error_nomem(err);
    r->src = *src;
    tl_status st = read_footer(r, err);
    if (st == TL_OK) st = check_schema(r, err);
    if (st == TL_OK) st = check_row_groups(r, err);
    if (st == TL_OK && (r->cctx = tl_pq_codec_ctx_new()) == NULL) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_parquet_reader_free(r);
        return st;
    }
    *out = r;
    return TL_OK;
}

/* The page indexes base had parsed so far, borrowed (they live in its
 * arena and are never changed once loaded). */
static tl_status share_page_indexes(const tl_parquet_reader *base, tl_parquet_reader *r,
                                    tl_error *err)
{
    if (base->pidx == NULL) return TL_OK;
    size_t n = base->meta.n_row_groups * base->n_cols;
    if ((r->pidx = calloc(n + 1, sizeof *r->pidx)) == NULL) return tl_error_nomem(err);
    memcpy(r->pidx, base->pidx, n * sizeof *r->pidx);
    return TL_OK;
}

tl_status tl_parquet_reader_share(const tl_parquet_reader *base, const tl_parquet_source *src,
                                  tl_parquet_reader **out, tl_error *err)
{
    *out = NULL;
    tl_parquet_reader *r = calloc(1, sizeof *r);
    if (r == NULL) return tl_error_nomem(err);
    r->src = *src;
    r->base = base;
    r->meta = base->meta;
    r->footer_start = base->footer_start;
    r->n_cols = base->n_cols;
    r->cols = base->cols;
    r->leaf_of = base->leaf_of;
    r->nested = base->nested;
    r->leaves = base->leaves;
    r->n_leaves = r->leaves_cap = base->n_leaves;
    tl_status st = share_page_indexes(base, r, err);
    if (st == TL_OK && (r->cctx = tl_pq_codec_ctx_new()) == NULL) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_parquet_reader_free(r);
        return st;
    }
    *out = r;
    return TL_OK;
}

void tl_parquet_reader_free(tl_parquet_reader *r)
{
    if (r == NULL) return;
    tl_pq_codec_ctx_free(r->cctx);
    free(r->pidx);
    if (r->base == NULL) free(r->leaves);
    tl_arena_free(&r->arena);
    free(r);
}

int64_t tl_parquet_reader_num_rows(const tl_parquet_reader *r)
{
    return r->meta.num_rows;
}

int tl_parquet_reader_num_row_groups(const tl_parquet_reader *r)
{
    return (int)r->meta.n_row_groups;
}

int64_t tl_parquet_reader_row_group_rows(const tl_parquet_reader *r, int rg)
{
    if (rg < 0 || (size_t)rg >= r->meta.n_row_groups) return -1;
    return r->meta.row_groups[rg].num_rows;
}

int tl_parquet_reader_num_columns(const tl_parquet_reader *r)
{
    return (int)r->n_cols;
}

const tl_pq_file_meta *tl_parquet_reader_meta(const tl_parquet_reader *r)
{
    return &r->meta;
}

int tl_parquet_reader_leaf(const tl_parquet_reader *r, int column)
{
    if (column < 0 || (size_t)column >= r->n_cols || r->nested[column]) return -1;
    return (int)r->leaf_of[column];
}

/* ---- Schema ---- */

static tl_status export_field(const tl_pq_column_desc *d, struct ArrowSchema *out, tl_error *err)
{
    char format[96];
    tl_arrow_type_format(&d->arrow, format, sizeof format);
    TL_TRY(tl_schema_init(out, format, d->name, d->nullable ? ARROW_FLAG_NULLABLE : 0, 0, err));
    return d->elem.has_field_id ? tl_schema_set_field_id(out, d->elem.field_id, err) : TL_OK;
}

tl_status tl_parquet_reader_schema(const tl_parquet_reader *r, struct ArrowSchema *out,
                                   tl_error *err)
{
    TL_TRY(tl_schema_init(out, "+s", "", 0, (int64_t)r->n_cols, err));
    for (size_t i = 0; i < r->n_cols; i++) {
        tl_status st = r->nested[i] ? tl_pq_rnode_arrow(r->nested[i], r->leaves + r->leaf_of[i],
                                                        out->children[i], err)
                                    : export_field(&r->cols[i], out->children[i], err);
        if (st != TL_OK) {
            tl_schema_release(out);
            return st;
        }
    }
    return TL_OK;
}

/* ---- Row groups ---- */

static tl_status check_rg_column(const tl_parquet_reader *r, int rg, int column, tl_error *err)
{
    if (rg < 0 || (size_t)rg >= r->meta.n_row_groups)
        return tl_error_set(err, TL_ERR_INVALID, "row group %d does not exist (%zu)", rg,
                            r->meta.n_row_groups);
    if (column < 0 || (size_t)column >= r->n_cols)
        return tl_error_set(err, TL_ERR_INVALID, "column %d does not exist (%zu)", column,
                            r->n_cols);
    return TL_OK;
}

static tl_status chunk_range(const tl_parquet_reader *r, const tl_pq_column_chunk *cc,
                             const tl_pq_column_desc *d, uint64_t *start, uint64_t *len,
                             tl_error *err)
{
    const tl_pq_column_meta *m = &cc->meta;
    if (!cc->has_meta) return tl_error_set(err, TL_ERR_INVALID, "column chunk has no metadata");
    if (cc->file_path)
        return tl_error_set(err, TL_ERR_INVALID, "column chunk in another file (\"%s\")",
                            cc->file_path);
    if (m->type != d->elem.type)
        return tl_error_set(err, TL_ERR_INVALID, "column chunk has physical type %d, the schema %d",
                            (int)m->type, (int)d->elem.type);
    int64_t s = m->data_page_offset;
    if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
        m->dictionary_page_offset < s)
        s = m->dictionary_page_offset;
    if (s < 4 || m->total_compressed_size < 0 || (uint64_t)s > r->footer_start ||
        (uint64_t)m->total_compressed_size > r->footer_start - (uint64_t)s)
        return tl_error_set(err, TL_ERR_INVALID, "column chunk range %lld+%lld is outside the data",
                            (long long)s, (long long)m->total_compressed_size);
    *start = (uint64_t)s;
    *len = (uint64_t)m->total_compressed_size;
    return TL_OK;
}

static tl_status read_chunk(tl_parquet_reader *r, const tl_pq_column_chunk *cc,
                            const tl_pq_column_desc *d, uint8_t **buf, uint64_t *len, tl_error *err)
{
    uint64_t start = 0;
    TL_TRY(chunk_range(r, cc, d, &start, len, err));
    *buf = tl_scratch_alloc(*len ? (size_t)*len : 1);
    if (*buf == NULL) return tl_error_nomem(err);
    tl_status st = read_range(r, start, *len, *buf, err);
    if (st != TL_OK) {
        tl_scratch_free(*buf);
        *buf = NULL;
    }
    return st;
}

/* A nested column: every leaf's entries, then the rows assembled from them. */
static tl_status read_nested(tl_parquet_reader *r, int rg, int col, struct ArrowArray *out,
                             tl_error *err)
{
    const tl_pq_row_group *g = &r->meta.row_groups[rg];
    size_t first = r->leaf_of[col], k = tl_pq_rnode_n_leaves(r->nested[col]);
    struct ArrowArray *values = calloc(k, sizeof *values);
    tl_pq_levels *levels = calloc(k, sizeof *levels);
    tl_status st = values && levels ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < k; i++) {
        const tl_pq_column_chunk *cc = &g->columns[first + i];
        const tl_pq_column_desc *d = &r->leaves[first + i];
        uint8_t *buf = NULL;
        uint64_t len = 0;
        st = read_chunk(r, cc, d, &buf, &len, err);
        if (st == TL_OK)
            st = tl_pq_read_column_levels(d, cc->meta.codec, buf, (size_t)len, cc->meta.num_values,
                                          r->cctx, &values[i], &levels[i], err);
        tl_scratch_free(buf);
    }
    if (st == TL_OK)
        st = tl_pq_rnode_assemble(r->nested[col], r->leaves + first, values, levels, g->num_rows,
                                  out, err);
    for (size_t i = 0; values && levels && i < k; i++) {
        tl_array_release(&values[i]);
        free(levels[i].def);
        free(levels[i].rep);
    }
    free(values);
    free(levels);
    return st;
}

static tl_status read_column(tl_parquet_reader *r, int rg, int col, struct ArrowArray *out,
                             tl_error *err)
{
    if (r->nested[col]) return read_nested(r, rg, col, out, err);
    const tl_pq_row_group *g = &r->meta.row_groups[rg];
    const tl_pq_column_chunk *cc = &g->columns[r->leaf_of[col]];
    uint8_t *buf = NULL;
    uint64_t len = 0;
    TL_TRY(read_chunk(r, cc, &r->cols[col], &buf, &len, err));
    tl_status st = tl_pq_read_column_chunk(&r->cols[col], cc->meta.codec, buf, (size_t)len,
                                           g->num_rows, r->cctx, out, err);
    tl_scratch_free(buf);
    return st;
}

tl_status tl_parquet_reader_read_row_group(tl_parquet_reader *r, int rg, const int *columns,
                                           size_t n_columns, struct ArrowArray *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = columns && n_columns ? n_columns : r->n_cols;
    for (size_t k = 0; k < n; k++)
        TL_TRY(check_rg_column(r, rg, columns && n_columns ? columns[k] : (int)k, err));
    if (n == 0) TL_TRY(check_rg_column(r, rg, 0, err));
    TL_TRY(tl_array_init(out, 1, (int64_t)n, err));
    out->length = r->meta.row_groups[rg].num_rows;
    for (size_t k = 0; k < n; k++) {
        int col = columns && n_columns ? columns[k] : (int)k;
        tl_status st = read_column(r, rg, col, out->children[k], err);
        if (st != TL_OK) {
            tl_array_release(out);
            return tl_error_prefix(err, "column \"%s\" row group %d", r->cols[col].name, rg);
        }
    }
    return TL_OK;
}

/* ---- Statistics and page index ---- */

/* The deprecated min/max fields used signed byte order: trust them only where that
 * order is the type's order. */
static bool legacy_order_ok(tl_pq_order order)
{
    return order == TL_PQ_ORDER_BOOL || order == TL_PQ_ORDER_I32 || order == TL_PQ_ORDER_I64 ||
           order == TL_PQ_ORDER_FLOAT || order == TL_PQ_ORDER_DOUBLE;
}

static bool stat_len_ok(const tl_pq_column_desc *d, size_t len)
{
    switch (d->elem.type) {
    case TL_PQ_BOOLEAN:
        return len == 1;
    case TL_PQ_INT32:
    case TL_PQ_FLOAT:
        return len == 4;
    case TL_PQ_INT64:
    case TL_PQ_DOUBLE:
        return len == 8;
    case TL_PQ_FIXED_LEN_BYTE_ARRAY:
        return len == (size_t)d->elem.type_length;
    case TL_PQ_BYTE_ARRAY:
        return true;
    default:
        return false;
    }
}

tl_status tl_parquet_reader_column_stats(const tl_parquet_reader *r, int rg, int column,
                                         tl_parquet_column_stats *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(check_rg_column(r, rg, column, err));
    const tl_pq_column_desc *d = &r->cols[column];
    const tl_pq_column_chunk *cc = &r->meta.row_groups[rg].columns[r->leaf_of[column]];
    out->field_id = d->elem.has_field_id ? d->elem.field_id : -1;
    out->nan_count = -1;
    out->null_count = -1;
    if (!cc->has_meta || r->nested[column])
        return TL_OK; /* a nested column's leaves count values */
    const tl_pq_column_meta *m = &cc->meta;
    const tl_pq_statistics *s = &m->statistics;
    out->value_count = m->num_values;
    out->compressed_size = m->total_compressed_size;
    if (!m->has_statistics) return TL_OK;
    if (s->has_null_count) out->null_count = s->null_count;
    const tl_pq_bytes *lo = NULL, *hi = NULL;
    if (s->has_min_value && s->has_max_value) {
        lo = &s->min_value;
        hi = &s->max_value;
    } else if (s->has_min && s->has_max && legacy_order_ok(d->order)) {
        lo = &s->min;
        hi = &s->max;
    }
    if (lo == NULL || d->order == TL_PQ_ORDER_NONE || !stat_len_ok(d, lo->len) ||
        !stat_len_ok(d, hi->len))
        return TL_OK;
    if (tl_pq_stats_take(&out->min, &out->min_len, lo->data, lo->len) != 0 ||
        tl_pq_stats_take(&out->max, &out->max_len, hi->data, hi->len) != 0) {
        tl_parquet_column_stats_clear(out);
        return tl_error_nomem(err);
    }
    out->has_min_max = true;
    return TL_OK;
}

static tl_status read_index_bytes(tl_parquet_reader *r, int64_t offset, int32_t len, uint8_t **out,
                                  tl_error *err)
{
    if (offset < 0 || len < 0) return tl_error_set(err, TL_ERR_INVALID, "bad page index location");
    *out = malloc(len ? (size_t)len : 1);
    if (*out == NULL) return tl_error_nomem(err);
    tl_status st = read_range(r, (uint64_t)offset, (uint64_t)len, *out, err);
    if (st != TL_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

static tl_status load_page_index(tl_parquet_reader *r, int rg, int column, tl_pq_column_index *ci,
                                 tl_pq_offset_index *oi, tl_error *err)
{
    const tl_pq_column_chunk *cc = &r->meta.row_groups[rg].columns[r->leaf_of[column]];
    if (r->nested[column] || !cc->has_offset_index)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "column chunk has no page index");
    uint8_t *buf;
    TL_TRY(read_index_bytes(r, cc->offset_index_offset, cc->offset_index_length, &buf, err));
    tl_status st =
        tl_pq_parse_offset_index(buf, (size_t)cc->offset_index_length, &r->arena, oi, err);
    free(buf);
    if (st != TL_OK || !cc->has_column_index) return st;
    TL_TRY(read_index_bytes(r, cc->column_index_offset, cc->column_index_length, &buf, err));
    st = tl_pq_parse_column_index(buf, (size_t)cc->column_index_length, &r->arena, ci, err);
    free(buf);
    return st;
}

tl_status tl_parquet_reader_page_index(tl_parquet_reader *r, int rg, int column,
                                       tl_pq_column_index *ci, tl_pq_offset_index *oi,
                                       tl_error *err)
{
    memset(ci, 0, sizeof *ci);
    memset(oi, 0, sizeof *oi);
    TL_TRY(check_rg_column(r, rg, column, err));
    if (r->pidx == NULL &&
        (r->pidx = calloc(r->meta.n_row_groups * r->n_cols + 1, sizeof *r->pidx)) == NULL)
        return tl_error_nomem(err);
    page_index *p = &r->pidx[(size_t)rg * r->n_cols + (size_t)column];
    if (!p->loaded) {
        tl_status st = load_page_index(r, rg, column, &p->ci, &p->oi, err);
        if (st != TL_OK && st != TL_ERR_NOT_FOUND) {
            memset(&p->ci, 0, sizeof p->ci);
            memset(&p->oi, 0, sizeof p->oi);
            return st; /* a read failure: tried again next time */
        }
        p->st = st;
        p->loaded = true;
        if (st != TL_OK) return st;
    }
    if (p->st != TL_OK)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "column chunk has no page index");
    *ci = p->ci;
    *oi = p->oi;
    return TL_OK;
}

/* ---- Rows of a chunk through its page index ---- */

/* The rows [first_row_index of page k, that of page k + 1). */
static int64_t page_end(const tl_pq_offset_index *oi, size_t k, int64_t rows)
{
    return k + 1 < oi->n_pages ? oi->pages[k + 1].first_row_index : rows;
}

static tl_status check_offset_index(const tl_pq_offset_index *oi, uint64_t start, uint64_t len,
                                    int64_t rows, tl_error *err)
{
    for (size_t k = 0; k < oi->n_pages; k++) {
        const tl_pq_page_location *p = &oi->pages[k];
        int64_t first = p->first_row_index;
        if ((k == 0 && first != 0) || first < 0 || first > rows ||
            (k > 0 && first <= oi->pages[k - 1].first_row_index))
            return tl_error_set(err, TL_ERR_INVALID, "page %zu starts at row %lld", k,
                                (long long)first);
        if (p->offset < 0 || (uint64_t)p->offset < start || p->compressed_page_size < 0 ||
            (uint64_t)p->offset + (uint64_t)p->compressed_page_size > start + len ||
            (k > 0 && p->offset < oi->pages[k - 1].offset + oi->pages[k - 1].compressed_page_size))
            return tl_error_set(err, TL_ERR_INVALID, "page %zu lies outside its column chunk", k);
    }
    return TL_OK;
}

/* Marks the pages holding a row of the ranges; returns how many rows they hold. */
static int64_t select_pages(const tl_pq_offset_index *oi, int64_t rows,
                            const tl_pq_row_range *ranges, size_t n, bool *sel)
{
    int64_t total = 0;
    size_t j = 0;
    for (size_t k = 0; k < oi->n_pages; k++) {
        int64_t a = oi->pages[k].first_row_index, b = page_end(oi, k, rows);
        while (j < n && ranges[j].end <= a) j++;
        sel[k] = j < n && ranges[j].start < b;
        if (sel[k]) total += b - a;
    }
    return total;
}

/* Reads the dictionary page and each run of selected pages into one buffer. */
static tl_status read_parts(tl_parquet_reader *r, const tl_pq_offset_index *oi, const bool *sel,
                            uint64_t start, uint8_t **buf, tl_pq_span *parts, size_t *n_parts,
                            int64_t *bytes, tl_error *err)
{
    uint64_t total = (uint64_t)oi->pages[0].offset - start;
    for (size_t k = 0; k < oi->n_pages; k++)
        if (sel[k]) total += (uint64_t)oi->pages[k].compressed_page_size;
    if ((*buf = tl_scratch_alloc(total ? (size_t)total : 1)) == NULL) return tl_error_nomem(err);
    size_t n = 0, at = 0;
    uint64_t dict = (uint64_t)oi->pages[0].offset - start;
    if (dict > 0) {
        TL_TRY(read_range(r, start, dict, *buf, err));
        parts[n++] = (tl_pq_span){*buf, (size_t)dict};
        at = (size_t)dict;
    }
    for (size_t k = 0; k < oi->n_pages;) {
        if (!sel[k]) {
            k++;
            continue;
        }
        size_t e = k;
        while (e + 1 < oi->n_pages && sel[e + 1]) e++;
        uint64_t off = (uint64_t)oi->pages[k].offset;
        uint64_t len =
            (uint64_t)oi->pages[e].offset + (uint64_t)oi->pages[e].compressed_page_size - off;
        TL_TRY(read_range(r, off, len, *buf + at, err));
        parts[n++] = (tl_pq_span){*buf + at, (size_t)len};
        at += (size_t)len;
        k = e + 1;
    }
    *n_parts = n;
    *bytes += (int64_t)at;
    return TL_OK;
}

/* The rows of the ranges out of `all`, which holds the rows of the selected
 * pages (all pages when oi is NULL) one after another. */
static tl_status slice_ranges(const tl_pq_column_desc *d, const tl_pq_offset_index *oi,
                              const bool *sel, int64_t rows, const tl_pq_row_range *ranges,
                              size_t n, struct ArrowArray *all, struct ArrowArray *out,
                              tl_error *err)
{
    if (n == 1 && ranges[0].end - ranges[0].start == all->length) {
        tl_array_move(all, out);
        return TL_OK;
    }
    struct ArrowSchema schema = {0};
    tl_array_view v;
    TL_TRY(export_field(d, &schema, err));
    tl_status st = tl_array_view_init(&v, &schema, all, err);
    bool viewed = st == TL_OK;
    tl_array_view *slices = st == TL_OK ? calloc(n + 1, sizeof *slices) : NULL;
    if (st == TL_OK && slices == NULL) st = tl_error_nomem(err);
    size_t k = 0;
    int64_t base = 0; /* position in `all` of page k's first row */
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        int64_t s = ranges[i].start;
        if (oi) {
            while (k < oi->n_pages && page_end(oi, k, rows) <= s) {
                if (sel[k]) base += page_end(oi, k, rows) - oi->pages[k].first_row_index;
                k++;
            }
            s = base + s - oi->pages[k].first_row_index;
        }
        st = tl_arrow_view_slice(&v, s, ranges[i].end - ranges[i].start, &slices[i], err);
    }
    if (st == TL_OK) st = tl_arrow_concat(slices, n, out, err);
    free(slices);
    if (viewed) tl_array_view_free(&v);
    tl_schema_release(&schema);
    return st;
}

static tl_status check_ranges(const tl_pq_row_range *ranges, size_t n, int64_t rows, tl_error *err)
{
    if (n == 0) return tl_error_set(err, TL_ERR_INVALID, "no row range to read");
    for (size_t i = 0; i < n; i++)
        if (ranges[i].start < (i ? ranges[i - 1].end : 0) || ranges[i].end <= ranges[i].start ||
            ranges[i].end > rows)
            return tl_error_set(err, TL_ERR_INVALID, "row range %lld..%lld is out of order",
                                (long long)ranges[i].start, (long long)ranges[i].end);
    return TL_OK;
}

/* ---- Rows of plain pages read in place ----
 * A column of 4- or 8-byte values stored PLAIN and uncompressed, no null in
 * the pages read
 * (doubles of random readings: no codec shrinks them) holds row i of a page
 * at a fixed place past the page's header: a query that wants a few rows of
 * many pages reads just those bytes, not the pages. */

/* Bytes of a page header read to parse it: statistics may make it longer;
 * then the page is read whole. */
#define PLAIN_HEADER_PREFIX 256

/* Whether the values of the chunk's pages may be plain copies of Arrow's. */
static bool plain_copy_column(const tl_pq_column_chunk *cc, const tl_pq_column_desc *d,
                              const tl_pq_offset_index *oi, uint64_t start)
{
    return (d->conv == TL_PQ_CONV_COPY32 || d->conv == TL_PQ_CONV_COPY64) &&
           tl_arrow_type_bit_width(&d->arrow) == 8 * d->phys_width &&
           cc->meta.codec == TL_PQ_CODEC_UNCOMPRESSED && oi->n_pages > 0 &&
           (uint64_t)oi->pages[0].offset == start; /* no dictionary page */
}

/* *at = the offset of the page's values when they are `rows` PLAIN values of
 * `width` bytes, none null, after nothing but the header (and, in an
 * optional column, the definition levels), else 0; *bytes += what was read.
 * `nulls`: the page's null count (0 in a required column; -1: unknown). */
static tl_status plain_values_at(tl_parquet_reader *r, const tl_pq_page_location *p, int64_t rows,
                                 int width, bool optional, int64_t nulls, uint64_t *at,
                                 uint64_t *bytes, tl_error *err)
{
    uint8_t head[PLAIN_HEADER_PREFIX];
    size_t len = p->compressed_page_size < PLAIN_HEADER_PREFIX ? (size_t)p->compressed_page_size
                                                               : PLAIN_HEADER_PREFIX;
    tl_pq_page_header h;
    size_t used = 0;
    *at = 0;
    TL_TRY(read_range(r, (uint64_t)p->offset, len, head, err));
    *bytes += len;
    if (tl_pq_parse_page_header(head, len, &h, &used, NULL) != TL_OK) return TL_OK;
    int64_t levels = 0; /* bytes of definition levels before the values */
    bool plain = false;
    if (h.type == TL_PQ_DATA_PAGE && h.has_data && h.data.encoding == TL_PQ_ENC_PLAIN &&
        h.data.num_values == rows) {
        plain = nulls == 0 && used + 4 <= len;
        /* An optional column's levels: their length, then RLE; a required one has none. */
        if (plain && optional) levels = 4 + (int64_t)tl_load_le32(head + used);
    } else if (h.type == TL_PQ_DATA_PAGE_V2 && h.has_data_v2 &&
               h.data_v2.encoding == TL_PQ_ENC_PLAIN && h.data_v2.num_values == rows &&
               h.data_v2.num_rows == rows && h.data_v2.num_nulls == 0 &&
               h.data_v2.rep_length == 0 && h.data_v2.def_length >= 0) {
        plain = !h.data_v2.is_compressed ||
                h.data_v2.def_length + rows * width == h.compressed_page_size;
        levels = h.data_v2.def_length;
    }
    int64_t body = levels + rows * width;
    if (plain && h.uncompressed_page_size == body && h.compressed_page_size == body &&
        (int64_t)used + body == p->compressed_page_size)
        *at = (uint64_t)p->offset + used + (uint64_t)levels;
    return TL_OK;
}

/* Reads the rows of the ranges from plain pages (plain_copy_column) into
 * *out; *declined (and nothing read into *out) when a page is not plain. */
static tl_status read_plain_rows(tl_parquet_reader *r, const tl_pq_column_desc *d,
                                 const tl_pq_column_index *ci, const tl_pq_offset_index *oi,
                                 int64_t rows, const tl_pq_row_range *ranges, size_t n,
                                 struct ArrowArray *out, int64_t *bytes_read, bool *declined,
                                 tl_error *err)
{
    *declined = false;
    int width = d->phys_width;
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) total += ranges[i].end - ranges[i].start;
    TL_TRY(tl_array_init(out, 2, 0, err));
    /* every byte is read into, or the array released */
    uint8_t *values =
        tl_array_alloc_buffer_uninit(out, 1, (size_t)(total ? total : 1) * (size_t)width);
    tl_status st = values ? TL_OK : tl_error_nomem(err);
    size_t k = 0, parsed = SIZE_MAX;
    uint64_t at = 0, bytes = 0;
    int64_t done = 0;
    for (size_t i = 0; st == TL_OK && !*declined && i < n; i++) {
        for (int64_t row = ranges[i].start; st == TL_OK && !*declined && row < ranges[i].end;) {
            while (page_end(oi, k, rows) <= row) k++;
            int64_t first = oi->pages[k].first_row_index, end = page_end(oi, k, rows);
            if (parsed != k) {
                int64_t nulls = !d->nullable                         ? 0
                                : ci->null_counts && k < ci->n_pages ? ci->null_counts[k]
                                                                     : -1;
                st = plain_values_at(r, &oi->pages[k], end - first, width, d->nullable, nulls, &at,
                                     &bytes, err);
                *declined = st == TL_OK && at == 0;
                parsed = k;
            }
            int64_t stop = ranges[i].end < end ? ranges[i].end : end;
            size_t len = (size_t)(stop - row) * (size_t)width;
            if (st == TL_OK && !*declined)
                st = read_range(r, at + (uint64_t)(row - first) * (uint64_t)width, len,
                                values + (size_t)done * (size_t)width, err);
            bytes += len;
            done += stop - row;
            row = stop;
        }
    }
    if (st != TL_OK || *declined) {
        tl_array_release(out);
        return st;
    }
    out->length = total;
    out->null_count = 0;
    *bytes_read += (int64_t)bytes;
    return TL_OK;
}

/* A row group's column chunk read by rows through its page index. */
typedef struct paged_chunk {
    const tl_pq_row_group *g;
    const tl_pq_column_chunk *cc;
    const tl_pq_column_desc *d;
    uint64_t start, len; /* the chunk's bytes in the file */
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
} paged_chunk;

/* The pages of a paged_chunk that hold rows of the ranges, read. */
typedef struct page_selection {
    bool *sel;
    tl_pq_span *parts;
    size_t n_parts;
    uint8_t *buf;
    int64_t rows; /* rows in the selected pages */
} page_selection;

static void paged_chunk_locate(const tl_parquet_reader *r, int rg, int column, paged_chunk *c)
{
    c->g = &r->meta.row_groups[rg];
    c->cc = &c->g->columns[r->leaf_of[column]];
    c->d = &r->cols[column];
}

/* Checks the ranges and loads the page index; TL_ERR_NOT_FOUND, with err
 * untouched, when the chunk has none (start and len are set either way). */
static tl_status paged_chunk_open(tl_parquet_reader *r, int rg, int column,
                                  const tl_pq_row_range *ranges, size_t n_ranges, paged_chunk *c,
                                  tl_error *err)
{
    TL_TRY(check_ranges(ranges, n_ranges, c->g->num_rows, err));
    TL_TRY(chunk_range(r, c->cc, c->d, &c->start, &c->len, err));
    tl_status st = tl_parquet_reader_page_index(r, rg, column, &c->ci, &c->oi, err);
    if (st == TL_ERR_NOT_FOUND || (st == TL_OK && c->oi.n_pages == 0)) return TL_ERR_NOT_FOUND;
    TL_TRY(st);
    return check_offset_index(&c->oi, c->start, c->len, c->g->num_rows, err);
}

static void page_selection_free(page_selection *p)
{
    tl_scratch_free(p->buf);
    free(p->parts);
    free(p->sel);
}

/* Selects and reads the pages holding rows of the ranges. With whole_pages,
 * TL_ERR_NOT_FOUND (nothing read) unless the ranges cover those pages whole. */
static tl_status page_selection_read(tl_parquet_reader *r, const paged_chunk *c,
                                     const tl_pq_row_range *ranges, size_t n_ranges,
                                     bool whole_pages, page_selection *p, int64_t *bytes_read,
                                     tl_error *err)
{
    memset(p, 0, sizeof *p);
    p->sel = calloc(c->oi.n_pages + 1, sizeof *p->sel);
    p->parts = calloc(c->oi.n_pages + 2, sizeof *p->parts);
    if (p->sel == NULL || p->parts == NULL) return tl_error_nomem(err);
    p->rows = select_pages(&c->oi, c->g->num_rows, ranges, n_ranges, p->sel);
    if (whole_pages) {
        int64_t want = 0;
        for (size_t i = 0; i < n_ranges; i++) want += ranges[i].end - ranges[i].start;
        if (p->rows != want) return TL_ERR_NOT_FOUND;
    }
    return read_parts(r, &c->oi, p->sel, c->start, &p->buf, p->parts, &p->n_parts, bytes_read, err);
}

tl_status tl_parquet_reader_read_rows(tl_parquet_reader *r, int rg, int column,
                                      const tl_pq_row_range *ranges, size_t n_ranges,
                                      struct ArrowArray *out, int64_t *bytes_read, tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(check_rg_column(r, rg, column, err));
    paged_chunk c;
    paged_chunk_locate(r, rg, column, &c);
    if (r->nested[column])
        return tl_error_set(err, TL_ERR_INVALID,
                            "column \"%s\": rows of nested columns are read by row group",
                            c.d->name);
    tl_status st = paged_chunk_open(r, rg, column, ranges, n_ranges, &c, err);
    if (st == TL_ERR_NOT_FOUND) {
        struct ArrowArray all = {0};
        st = read_column(r, rg, column, &all, err);
        if (st == TL_OK) *bytes_read += (int64_t)c.len;
        if (st == TL_OK)
            st = slice_ranges(c.d, NULL, NULL, c.g->num_rows, ranges, n_ranges, &all, out, err);
        tl_array_release(&all);
        return st;
    }
    TL_TRY(st);
    if (plain_copy_column(c.cc, c.d, &c.oi, c.start)) {
        bool declined = false;
        st = read_plain_rows(r, c.d, &c.ci, &c.oi, c.g->num_rows, ranges, n_ranges, out, bytes_read,
                             &declined, err);
        if (st != TL_OK || !declined) {
            if (st != TL_OK) tl_error_prefix(err, "column \"%s\" row group %d", c.d->name, rg);
            return st;
        }
    }
    page_selection p;
    struct ArrowArray all = {0};
    st = page_selection_read(r, &c, ranges, n_ranges, false, &p, bytes_read, err);
    if (st == TL_OK)
        st = tl_pq_read_column_pages(c.d, c.cc->meta.codec, p.parts, p.n_parts, p.rows, r->cctx,
                                     &all, err);
    if (st == TL_OK)
        st = slice_ranges(c.d, &c.oi, p.sel, c.g->num_rows, ranges, n_ranges, &all, out, err);
    tl_array_release(&all);
    page_selection_free(&p);
    if (st != TL_OK) tl_error_prefix(err, "column \"%s\" row group %d", c.d->name, rg);
    return st;
}

/* The position in `all` (the rows of the selected pages, one after another;
 * all pages when oi is NULL) of each range's first row. */
static void range_positions(const tl_pq_offset_index *oi, const bool *sel, int64_t rows,
                            const tl_pq_row_range *ranges, size_t n, int64_t *at)
{
    size_t k = 0;
    int64_t base = 0; /* position in `all` of page k's first row */
    for (size_t i = 0; i < n; i++) {
        int64_t s = ranges[i].start;
        if (oi) {
            while (k < oi->n_pages && page_end(oi, k, rows) <= s) {
                if (sel[k]) base += page_end(oi, k, rows) - oi->pages[k].first_row_index;
                k++;
            }
            s = base + s - oi->pages[k].first_row_index;
        }
        at[i] = s;
    }
}

/* The int32 codes of the ranges out of `all` (as slice_ranges), with its dictionary. */
static tl_status slice_codes(const tl_pq_offset_index *oi, const bool *sel, int64_t rows,
                             const tl_pq_row_range *ranges, size_t n, struct ArrowArray *all,
                             struct ArrowArray *out, tl_error *err)
{
    if (n == 1 && ranges[0].end - ranges[0].start == all->length) {
        tl_array_move(all, out);
        return TL_OK;
    }
    int64_t total = 0, *at = calloc(n + 1, sizeof *at);
    if (at == NULL) return tl_error_nomem(err);
    range_positions(oi, sel, rows, ranges, n, at);
    for (size_t i = 0; i < n; i++) total += ranges[i].end - ranges[i].start;
    tl_status st = tl_array_init(out, 2, 0, err);
    const uint8_t *valid = all->null_count ? all->buffers[0] : NULL;
    uint8_t *validity = st == TL_OK && valid ? tl_array_alloc_buffer(out, 0, total / 8 + 1) : NULL;
    int32_t *codes = st == TL_OK ? tl_array_alloc_buffer(out, 1, (size_t)total * 4 + 1) : NULL;
    if (st == TL_OK && (codes == NULL || (valid && validity == NULL))) st = tl_error_nomem(err);
    const int32_t *from = st == TL_OK ? all->buffers[1] : NULL;
    int64_t done = 0;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        int64_t len = ranges[i].end - ranges[i].start;
        memcpy(codes + done, from + at[i], (size_t)len * sizeof *codes);
        for (int64_t j = 0; validity && j < len; j++)
            if (tl_bit_get(valid, at[i] + j)) tl_bit_set(validity, done + j);
        done += len;
    }
    free(at);
    if (st != TL_OK) {
        tl_array_release(out);
        return st;
    }
    out->length = total;
    out->null_count = validity ? total - tl_pq_bits_count(validity, 0, total) : 0;
    if (validity && out->null_count == 0) tl_array_set_buffer(out, 0, NULL);
    out->dictionary = all->dictionary; /* moved */
    all->dictionary = NULL;
    return TL_OK;
}

tl_status tl_parquet_reader_read_codes(tl_parquet_reader *r, int rg, int column,
                                       const tl_pq_row_range *ranges, size_t n_ranges,
                                       struct ArrowArray *out, int64_t *bytes_read, tl_error *err)
{
    memset(out, 0, sizeof *out);
    TL_TRY(check_rg_column(r, rg, column, err));
    paged_chunk c;
    paged_chunk_locate(r, rg, column, &c);
    if (r->nested[column]) return TL_ERR_NOT_FOUND;
    tl_status st = paged_chunk_open(r, rg, column, ranges, n_ranges, &c, err);
    bool paged = st == TL_OK;
    if (st != TL_ERR_NOT_FOUND) TL_TRY(st);
    page_selection p = {0};
    struct ArrowArray all = {0};
    tl_pq_span whole;
    if (paged) {
        st = page_selection_read(r, &c, ranges, n_ranges, false, &p, bytes_read, err);
    } else { /* no page index: the whole chunk */
        st = read_chunk(r, c.cc, c.d, &p.buf, &c.len, err);
        whole = (tl_pq_span){p.buf, (size_t)c.len};
        p.parts = &whole;
        p.n_parts = 1;
        p.rows = c.g->num_rows;
        if (st == TL_OK) *bytes_read += (int64_t)c.len;
    }
    if (st == TL_OK)
        st = tl_pq_read_column_codes(c.d, c.cc->meta.codec, p.parts, p.n_parts, p.rows, r->cctx,
                                     &all, err);
    if (st == TL_OK)
        st = slice_codes(paged ? &c.oi : NULL, p.sel, c.g->num_rows, ranges, n_ranges, &all, out,
                         err);
    tl_array_release(&all);
    if (!paged) p.parts = NULL;
    page_selection_free(&p);
    if (st != TL_OK) tl_error_prefix(err, "column \"%s\" row group %d", c.d->name, rg);
    return st;
}

tl_status tl_parquet_reader_count_rows(tl_parquet_reader *r, int rg, int column,
                                       const tl_pq_row_range *ranges, size_t n_ranges, int64_t lo,
                                       int64_t hi, int64_t *count, int64_t *bytes_read,
                                       tl_error *err)
{
    *count = 0;
    TL_TRY(check_rg_column(r, rg, column, err));
    paged_chunk c;
    paged_chunk_locate(r, rg, column, &c);
    if (r->nested[column] || c.d->elem.type != TL_PQ_INT64 || c.d->conv != TL_PQ_CONV_COPY64)
        return TL_ERR_NOT_FOUND;
    TL_TRY(paged_chunk_open(r, rg, column, ranges, n_ranges, &c, err));
    page_selection p;
    /* Part of a page is not counted here. */
    tl_status st = page_selection_read(r, &c, ranges, n_ranges, true, &p, bytes_read, err);
    if (st == TL_OK)
        st = tl_pq_count_column_pages(c.d, c.cc->meta.codec, p.parts, p.n_parts, p.rows, r->cctx,
                                      lo, hi, count, err);
    page_selection_free(&p);
    if (st != TL_OK && st != TL_ERR_NOT_FOUND)
        tl_error_prefix(err, "column \"%s\" row group %d", c.d->name, rg);
    return st;
}
