#include "query/scan_cost.h"

#include <stdlib.h>
#include <string.h>

#include "query/footer_cache.h"
#include "query/query_cache.h"
#include "query/query_columns.h"
#include "query/row_group_prune.h"
#include "query/selective_scan.h"

/* What ranking one row in the dedup window costs, in bytes read: DuckDB's
 * row_number() over (series key, time) took 175 ns a row (1.38M rows of a
 * per-minute rollup in two overlapping files: 330 ms of CPU against 90 ms
 * for the same columns read without it), about what it takes to read 200
 * bytes of column chunks (123 MB in 105 ms). */
#define RANK_ROW_BYTES 200

/* What the files of one scan hold, and what of it the filters want. */
typedef struct tally {
    int64_t footers, chunks; /* read_parquet's bytes */
    double wanted;           /* the rows the filters want */
    double paged;            /* the rows of the pages holding them (page_select.h) */
    double wanted_bytes;     /* what the selective scan reads of the chunks for them */
    int64_t rows;            /* every row of the files read */
    int64_t whole;           /* files counted whole */
    size_t files;            /* files whose footers were read */
    double ranked;           /* rows the dedup window ranks (scan.c's overlapping files) */
    bool dedup;              /* a file overlaps another: no selective scan */
} tally;

/* The part of [lo, hi] inside the filter's time range, evenly spread. */
static double time_share(const tl_scan_filter *f, int64_t lo, int64_t hi)
{
    int64_t a = f->has_lo && f->lo > lo ? f->lo : lo, b = f->has_hi && f->hi < hi ? f->hi : hi;
    if (b < a) return 0;
    return ((double)b - (double)a + 1) / ((double)hi - (double)lo + 1);
}

/* The rows of the row groups filter f leaves in file m. */
static int64_t rows_left(const tl_table *t, const tl_pq_file_meta *m, const tl_scan_filter *f)
{
    int64_t rows = 0;
    for (size_t g = 0; g < m->n_row_groups; g++)
        if (tl_row_group_needed(t, m, g, f, 1)) rows += m->row_groups[g].num_rows;
    return rows;
}

/* The share of row group g's rows the filters want; key_share[i]: filter
 * i's keys' share of the rows it leaves in the file. */
static double wanted_share(const tl_table *t, const tl_pq_file_meta *m, size_t g,
                           const tl_scan_filter *f, size_t n, const double *key_share)
{
    int64_t lo, hi;
    bool timed = tl_row_group_time(t, m, g, &lo, &hi);
    double share = 0;
    for (size_t i = 0; i < n; i++)
        if (tl_row_group_needed(t, m, g, &f[i], 1))
            share += (timed ? time_share(&f[i], lo, hi) : 1) * key_share[i];
    return n == 0 || share > 1 ? 1 : share;
}

/* The data pages of a column chunk, by its encoding statistics (1 when
 * they do not say). */
static int64_t data_pages(const tl_pq_column_chunk *c)
{
    int64_t n = 0;
    for (size_t i = 0; c->has_meta && i < c->meta.n_encoding_stats; i++) {
        int32_t type = c->meta.encoding_stats[i].page_type;
        if (type == TL_PQ_DATA_PAGE || type == TL_PQ_DATA_PAGE_V2)
            n += c->meta.encoding_stats[i].count;
    }
    return n > 0 ? n : 1;
}

/* Whether the data pages of a chunk hold PLAIN values only, by their
 * encoding statistics, else by the chunk's encodings (levels aside). */
static bool plain_pages(const tl_pq_column_meta *m)
{
    for (size_t i = 0; i < m->n_encoding_stats; i++) {
        int32_t type = m->encoding_stats[i].page_type;
        if ((type == TL_PQ_DATA_PAGE || type == TL_PQ_DATA_PAGE_V2) &&
            m->encoding_stats[i].encoding != TL_PQ_ENC_PLAIN)
            return false;
    }
    for (size_t i = 0; m->n_encoding_stats == 0 && i < m->n_encodings; i++)
        if (m->encodings[i] != TL_PQ_ENC_PLAIN && m->encodings[i] != TL_PQ_ENC_RLE &&
            m->encodings[i] != TL_PQ_ENC_BIT_PACKED)
            return false;
    return true;
}

/* Whether the selective scan reads just the rows' values of a chunk
 * (uncompressed, fixed-width PLAIN values), not whole pages: a delta-encoded
 * time column is decoded by the page. */
static bool rows_readable(const tl_pq_column_chunk *c)
{
    tl_pq_type ty = c->meta.type;
    return c->has_meta && c->meta.codec == TL_PQ_CODEC_UNCOMPRESSED &&
           !c->meta.has_dictionary_page_offset && plain_pages(&c->meta) &&
           (ty == TL_PQ_INT32 || ty == TL_PQ_INT64 || ty == TL_PQ_FLOAT || ty == TL_PQ_DOUBLE);
}

/* Rows of a chunk of `rows` rows in `pages` pages that the pages holding
 * `wanted` rows in `runs` runs of keys span (all, without keys: pages
 * of rows sorted by key do not narrow by time). */
static double paged_rows(double wanted, int64_t runs, int64_t rows, int64_t pages)
{
    if (wanted <= 0) return 0;
    double r = runs ? wanted + (double)runs * (double)rows / (double)pages : (double)rows;
    return r < (double)rows ? r : (double)rows;
}

static void tally_row_group(const tl_pq_file_meta *m, size_t g, const bool *keep, size_t n_keep,
                            double share, int64_t runs, int key_leaf, tally *y)
{
    const tl_pq_row_group *rg = &m->row_groups[g];
    int64_t rows = rg->num_rows;
    double wanted = share * (double)rows;
    if (rows <= 0) return;
    for (size_t c = 0; c < rg->n_columns; c++) {
        if (c < n_keep && !keep[c]) continue;
        uint64_t off, len;
        tl_pq_chunk_range(&rg->columns[c], &off, &len);
        double part = rows_readable(&rg->columns[c])
                          ? wanted
                          : paged_rows(wanted, runs, rows, data_pages(&rg->columns[c]));
        y->chunks += (int64_t)len;
        y->wanted_bytes += (double)len * part / (double)rows;
    }
    int64_t pages =
        key_leaf >= 0 && (size_t)key_leaf < rg->n_columns ? data_pages(&rg->columns[key_leaf]) : 1;
    y->wanted += wanted;
    y->paged += paged_rows(wanted, runs, rows, pages);
}

/* The share of a file's rows in the filters' time ranges, by its manifest
 * bounds (1 when it has none). */
static double file_time_share(const tl_table *t, const tl_ice_data_file *df,
                              const tl_scan_filter *f, size_t n)
{
    int64_t lo, hi;
    if (n == 0 || !tl_scan_time_bounds(t, df, &lo, &hi) || hi < lo) return 1;
    double share = 0;
    for (size_t i = 0; i < n; i++) share += time_share(&f[i], lo, hi);
    return share > 1 ? 1 : share;
}

/* dedup: the file is read through the dedup window, which ranks every row
 * the filters leave (DuckDB pushes them below it: they restrict the series
 * key and time it ranks by). */
static bool tally_file(const tl_table *t, const tl_footer_entry *fe, const bool *fields,
                       const tl_scan_filter *f, size_t n, int64_t series, bool dedup, tally *y)
{
    const tl_pq_file_meta *m = tl_parquet_reader_meta(fe->reader);
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int key_leaf = c->series_key.len ? tl_pq_leaf_of_field(m, &s->fields[c->series_index[0]]) : -1;
    size_t n_keep = 0;
    bool *keep = tl_pq_leaves_read(t, m, fields, &n_keep);
    if (keep == NULL) return false;
    int64_t rows = tl_parquet_reader_num_rows(fe->reader), runs = 0;
    double key_share[64];
    for (size_t i = 0; i < n && i < 64; i++) {
        int64_t left = f[i].has_keys && series > 0 ? rows_left(t, m, &f[i]) : 0;
        double keys = (double)rows * (double)f[i].n_keys / (double)series;
        key_share[i] = left > 0 && keys < (double)left ? keys / (double)left : 1;
        runs += f[i].has_keys ? (int64_t)f[i].n_keys : 0;
    }
    y->footers += fe->footer_bytes;
    y->rows += rows;
    double wanted = y->wanted;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        if (n && !tl_row_group_needed(t, m, g, f, n)) continue;
        double share = n > 64 ? 1 : wanted_share(t, m, g, f, n, key_share);
        tally_row_group(m, g, keep, n_keep, share, runs, key_leaf, y);
    }
    if (dedup) y->ranked += y->wanted - wanted;
    free(keep);
    return true;
}

static tl_status tally_files(tl_query_engine *e, const tl_table *t, const bool *fields,
                             const tl_scan_filter *f, size_t n, int64_t series, tally *y,
                             tl_error *err)
{
    const tl_live_files *lf = NULL;
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    const tl_live_file **read = calloc(lf->n + 1, sizeof *read);
    bool *dedup = calloc(lf->n + 1, sizeof *dedup);
    tl_status st = read && dedup ? TL_OK : tl_error_nomem(err);
    size_t k = 0;
    for (size_t i = 0; st == TL_OK && i < lf->n; i++)
        if (n == 0 || tl_scan_file_needed(t, &lf->files[i].file, f, n)) read[k++] = &lf->files[i];
    if (st == TL_OK) st = tl_scan_overlaps(e, t, read, k, dedup, err);
    for (size_t i = 0; st == TL_OK && i < k; i++) {
        const tl_ice_data_file *df = &read[i]->file;
        y->dedup |= dedup[i];
        char *path = tl_scan_local_path(t, df->file_path);
        tl_footer_entry *fe = NULL;
        st = path ? tl_footer_get(e, path, &fe, err) : TL_ERR_NOT_FOUND;
        free(path);
        if (st == TL_ERR_INVALID || st == TL_ERR_NOT_FOUND || st == TL_ERR_STORAGE) {
            tl_error_clear(err); /* the scan reports it, if it is read at all */
            st = TL_OK;
            y->whole += df->file_size_in_bytes;
            if (dedup[i]) y->ranked += (double)df->record_count * file_time_share(t, df, f, n);
            continue;
        }
        if (st != TL_OK) break;
        y->files++;
        if (!tally_file(t, fe, fields, f, n, series, dedup[i], y)) st = tl_error_nomem(err);
    }
    free(read);
    free(dedup);
    return st;
}

tl_status tl_scan_cost(tl_query_engine *e, const tl_table *t, const char *query,
                       const tl_scan_filter *filters, size_t n_filters, int64_t series,
                       int64_t *bytes, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    bool *fields = calloc(s->n_fields + 1, sizeof *fields);
    if (fields == NULL) return tl_error_nomem(err);
    tl_query_columns(e, query, t, fields);
    tally y = {0};
    tl_footer_cache_begin(e);
    tl_status st = tally_files(e, t, fields, filters, n_filters, series, &y, err);
    tl_footer_cache_end(e);
    free(fields);
    /* As the scan decides: pages first, narrowed to the rows when they
     * are not most of the rows or the time bounds say few rows match
     * (selective_scan.c). */
    bool refined =
        y.paged <= (double)y.rows * 0.75 || tl_selective_time_refines((int64_t)y.wanted, y.rows);
    double chosen = refined ? y.wanted : y.paged;
    /* Overlapping files are deduplicated on read: read_parquet reads their
     * row groups whole, and every row they leave is ranked (scan.c). */
    bool selective = n_filters > 0 && !y.dedup && y.files <= TL_FOOTER_CACHE_MAX &&
                     tl_selective_scan_takes(e, t, (int64_t)chosen, y.rows);
    *bytes = y.footers + y.whole + (selective ? (int64_t)y.wanted_bytes : y.chunks) +
             (int64_t)(y.ranked * RANK_ROW_BYTES);
    return st;
}
