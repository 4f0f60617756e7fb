#include "formats/parquet/parquet_subset.h"

#include <stdlib.h>
#include <string.h>

void tl_pq_chunk_range(const tl_pq_column_chunk *c, uint64_t *offset, uint64_t *len)
{
    int64_t start = c->meta.data_page_offset;
    /* Some writers store 0 for "no dictionary": only an offset before the data pages counts. */
    if (c->meta.has_dictionary_page_offset && c->meta.dictionary_page_offset > 0 &&
        c->meta.dictionary_page_offset < start)
        start = c->meta.dictionary_page_offset;
    *offset = start < 0 ? 0 : (uint64_t)start;
    *len = c->meta.total_compressed_size < 0 ? 0 : (uint64_t)c->meta.total_compressed_size;
}

tl_status tl_pq_footer_len(const uint8_t tail[8], uint64_t file_size, uint64_t *len, tl_error *err)
{
    if (memcmp(tail + 4, "PAR1", 4) != 0)
        return tl_error_set(err, TL_ERR_STORAGE, "not a Parquet file (no PAR1 at its end)");
    *len = tl_load_le32(tail);
    if (file_size < 12 || *len > file_size - 12)
        return tl_error_set(err, TL_ERR_STORAGE,
                            "Parquet footer of %llu bytes does not fit a file of %llu bytes",
                            (unsigned long long)*len, (unsigned long long)file_size);
    return TL_OK;
}

bool tl_pq_subset_flat(const tl_pq_file_meta *m)
{
    if (m->n_schema < 2 || m->schema[0].has_type ||
        m->schema[0].num_children != (int32_t)(m->n_schema - 1))
        return false;
    for (size_t i = 1; i < m->n_schema; i++)
        if (!m->schema[i].has_type) return false;
    for (size_t g = 0; g < m->n_row_groups; g++)
        if (m->row_groups[g].n_columns != m->n_schema - 1) return false;
    return true;
}

bool tl_pq_subset_columns_ok(const tl_pq_file_meta *m)
{
    if (m->encrypted || !tl_pq_subset_flat(m)) return false;
    for (size_t i = 1; i < m->n_schema; i++)
        if (m->schema[i].logical.kind == TL_PQ_LT_OTHER) return false;
    return true;
}

static bool kept(const bool *keep, size_t i)
{
    return keep == NULL || keep[i];
}

/* The schema with only the kept leaves (a flat schema: root, then leaves). */
static tl_status subset_schema(const tl_pq_file_meta *m, const bool *keep_col,
                               tl_pq_schema_element **out, size_t *n_out, tl_error *err)
{
    if (keep_col == NULL) {
        *out = NULL;
        *n_out = m->n_schema;
        return TL_OK;
    }
    tl_pq_schema_element *s = calloc(m->n_schema, sizeof *s);
    if (s == NULL) return tl_error_nomem(err);
    size_t n = 0;
    s[n++] = m->schema[0];
    for (size_t i = 1; i < m->n_schema; i++)
        if (keep_col[i - 1]) s[n++] = m->schema[i];
    s[0].num_children = (int32_t)(n - 1);
    *out = s;
    *n_out = n;
    return TL_OK;
}

/* Copies the kept chunks of one row group to out, filling g's columns. */
static tl_status copy_row_group(const tl_pq_row_group *src, const bool *keep_col,
                                tl_pq_bytes_fn bytes, void *ctx, tl_buf *out, tl_pq_row_group *g,
                                tl_error *err)
{
    *g = *src;
    g->n_sorting_columns = keep_col ? 0 : src->n_sorting_columns; /* indexes would move */
    g->columns = calloc(src->n_columns ? src->n_columns : 1, sizeof *g->columns);
    if (g->columns == NULL) return tl_error_nomem(err);
    g->n_columns = 0;
    int64_t compressed = 0, first = -1;
    for (size_t j = 0; j < src->n_columns; j++) {
        if (!kept(keep_col, j)) continue;
        const tl_pq_column_chunk *c = &src->columns[j];
        if (!c->has_meta || c->file_path)
            return tl_error_set(err, TL_ERR_STORAGE, "column chunk without inline metadata");
        uint64_t off, len;
        tl_pq_chunk_range(c, &off, &len);
        /* Its data pages start inside it (else the offsets rewritten below
         * could overflow, and would point nowhere anyway). */
        int64_t dict = c->meta.has_dictionary_page_offset ? c->meta.dictionary_page_offset : 0;
        if (c->meta.data_page_offset < (int64_t)off ||
            (uint64_t)c->meta.data_page_offset >= off + len ||
            (dict > 0 && (dict < (int64_t)off || (uint64_t)dict >= off + len)))
            return tl_error_set(err, TL_ERR_STORAGE, "column chunk offsets out of range");
        const uint8_t *p = bytes(ctx, off, len);
        if (p == NULL)
            return tl_error_set(err, TL_ERR_STORAGE, "column chunk bytes %llu+%llu not fetched",
                                (unsigned long long)off, (unsigned long long)len);
        int64_t delta = (int64_t)out->len - (int64_t)off;
        if (first < 0) first = (int64_t)out->len;
        if (tl_buf_append(out, p, len) != 0) return tl_error_nomem(err);
        tl_pq_column_chunk *d = &g->columns[g->n_columns++];
        *d = *c;
        d->meta.data_page_offset += delta;
        if (d->meta.has_dictionary_page_offset && d->meta.dictionary_page_offset > 0)
            d->meta.dictionary_page_offset += delta;
        d->file_offset = (int64_t)off + delta; /* deprecated; point at the chunk */
        d->has_offset_index = d->has_column_index = false;
        compressed += (int64_t)len;
    }
    g->has_file_offset = true;
    g->file_offset = first < 0 ? (int64_t)out->len : first;
    g->has_total_compressed_size = true;
    g->total_compressed_size = compressed;
    return TL_OK;
}

/* The key/value metadata without an ARROW:schema that names dropped columns. */
static tl_status subset_key_value(const tl_pq_file_meta *m, const bool *keep_col,
                                  tl_pq_key_value **out, size_t *n_out, tl_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (m->n_key_value == 0) return TL_OK;
    tl_pq_key_value *kv = calloc(m->n_key_value, sizeof *kv);
    if (kv == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < m->n_key_value; i++)
        if (keep_col == NULL || strcmp(m->key_value[i].key, "ARROW:schema") != 0)
            kv[(*n_out)++] = m->key_value[i];
    *out = kv;
    return TL_OK;
}

static void free_groups(tl_pq_row_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) free(g[i].columns);
    free(g);
}

tl_status tl_pq_subset_write(const tl_pq_file_meta *m, const bool *keep_rg, const bool *keep_col,
                             tl_pq_bytes_fn bytes, void *ctx, tl_buf *out, tl_error *err)
{
    if (m->encrypted) return tl_error_set(err, TL_ERR_INVALID, "cannot subset an encrypted file");
    bool all_cols = true, any_col = false;
    size_t n_leaves = m->n_row_groups ? m->row_groups[0].n_columns : m->n_schema - 1;
    for (size_t j = 0; keep_col && j < n_leaves; j++) {
        all_cols &= keep_col[j];
        any_col |= keep_col[j];
    }
    if (all_cols) keep_col = NULL;
    if (keep_col && !any_col)
        return tl_error_set(err, TL_ERR_INVALID, "a Parquet subset needs at least one column");
    if (keep_col && !tl_pq_subset_columns_ok(m))
        return tl_error_set(err, TL_ERR_INVALID, "cannot leave columns out of this Parquet file");
    tl_pq_file_meta nm = *m;
    tl_pq_row_group *groups = calloc(m->n_row_groups ? m->n_row_groups : 1, sizeof *groups);
    if (groups == NULL) return tl_error_nomem(err);
    tl_pq_schema_element *schema = NULL;
    tl_pq_key_value *kv = NULL;
    size_t ng = 0;
    tl_status st = subset_schema(m, keep_col, &schema, &nm.n_schema, err);
    if (st == TL_OK) st = subset_key_value(m, keep_col, &kv, &nm.n_key_value, err);
    if (st == TL_OK && tl_buf_append(out, "PAR1", 4) != 0) st = tl_error_nomem(err);
    nm.num_rows = 0;
    for (size_t i = 0; st == TL_OK && i < m->n_row_groups; i++) {
        if (!kept(keep_rg, i)) continue;
        st = copy_row_group(&m->row_groups[i], keep_col, bytes, ctx, out, &groups[ng], err);
        if (st != TL_OK) break;
        groups[ng].has_ordinal = true;
        groups[ng].ordinal = (int16_t)ng;
        nm.num_rows += groups[ng++].num_rows;
    }
    if (schema) nm.schema = schema;
    nm.key_value = kv;
    nm.row_groups = groups;
    nm.n_row_groups = ng;
    if (nm.n_column_orders) nm.n_column_orders = nm.n_schema - 1;
    size_t meta_at = out->len;
    if (st == TL_OK) st = tl_pq_write_file_meta(out, &nm, err);
    if (st == TL_OK && (tl_buf_append_le32(out, (uint32_t)(out->len - meta_at)) != 0 ||
                        tl_buf_append(out, "PAR1", 4) != 0))
        st = tl_error_nomem(err);
    free_groups(groups, m->n_row_groups); /* unused entries are zeroed */
    free(schema);
    free(kv);
    return st;
}
