#include "query/selective_scan.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/parallel.h"
#include "formats/input/text_batch.h"
#include "query/footer_cache.h"
#include "query/page_select.h"
#include "query/projection.h"
#include "query/query_columns.h"
#include "query/row_group_prune.h"
#include "query/row_refine.h"
#include "query/rows_function.h"
#include "table/settings.h"

#define DECODE_THREADS 4

typedef enum mode { MODE_AUTO, MODE_OFF, MODE_ALWAYS } mode;

/* The environment variable (tests and benchmarks) when set, else the
 * filter-pushdown setting: false never, true whenever the filters narrow
 * the pages, auto by the rule above. */
static mode mode_of(const tl_query_engine *e, const tl_table *t)
{
    const char *v = getenv("TL_SELECTIVE_SCAN");
    if (v && strcmp(v, "off") == 0) return MODE_OFF;
    if (v && strcmp(v, "always") == 0) return MODE_ALWAYS;
    if (v && strcmp(v, "auto") == 0) return MODE_AUTO;
    v = tl_setting_value(t->md, e->settings, "filter-pushdown");
    if (v && tl_setting_is(v, "false")) return MODE_OFF;
    if (v && tl_setting_is(v, "true")) return MODE_ALWAYS;
    return MODE_AUTO;
}

/* One file of the scan. */
typedef struct file_plan {
    tl_footer_entry *fe;
    tl_selective_file *out;
    bool *keep;            /* per column: decoded */
    tl_row_ranges *ranges; /* per row group */
    bool *refined;         /* per row group and column: its pages were read by the refinement */
    tl_rows_segment *segs; /* per row group with ranges, once decoded */
    size_t n_segs;
    bool exact; /* the refinement left exactly the rows the filter selects */
} file_plan;

typedef struct plan {
    const tl_table *t;
    file_plan *files;
    size_t n;
    const tl_scan_filter *filters;
    size_t n_filters;
} plan;

/* Whether the file's columns are those of the first file, and mapped. */
static bool same_schema(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    if (a->n_children != b->n_children) return false;
    for (int64_t i = 0; i < a->n_children; i++) {
        const struct ArrowSchema *x = a->children[i], *y = b->children[i];
        if (strcmp(x->name, y->name) != 0 || strcmp(x->format, y->format) != 0 ||
            !tl_rows_type_mapped(x->format))
            return false;
    }
    return true;
}

/* Per column of the file: whether the query may use it; columns no field of
 * the current schema maps to are kept. */
static tl_status columns_kept(const tl_table *t, const tl_pq_file_meta *m, const bool *fields,
                              size_t n_cols, bool **out, tl_error *err)
{
    bool *keep = calloc(n_cols + 1, sizeof *keep);
    if (keep == NULL) return tl_error_nomem(err);
    for (size_t c = 0; c < n_cols; c++) keep[c] = true;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    for (size_t i = 0; i < s->n_fields; i++) {
        int leaf = tl_pq_leaf_of_field(m, &s->fields[i]);
        if (leaf >= 0 && (size_t)leaf < n_cols) keep[leaf] = fields[i];
    }
    *out = keep;
    return TL_OK;
}

/* *chosen grows by the rows of the pages that may match, *timed by those
 * that the time bounds of their row groups suggest match (row_group_prune.h:
 * a row group sorted by series then time whose pages each span every time
 * of it, the pages alone do not narrow). */
static tl_status plan_file(plan *p, file_plan *fp, const bool *fields, int64_t *chosen,
                           int64_t *timed, int64_t *total, tl_error *err)
{
    tl_parquet_reader *r = fp->fe->reader;
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    int n_rg = tl_parquet_reader_num_row_groups(r);
    TL_TRY(columns_kept(p->t, m, fields, (size_t)fp->fe->schema.n_children, &fp->keep, err));
    size_t n_cols = (size_t)fp->fe->schema.n_children;
    if ((fp->ranges = calloc((size_t)n_rg + 1, sizeof *fp->ranges)) == NULL ||
        (fp->refined = calloc((size_t)n_rg * n_cols + 1, sizeof *fp->refined)) == NULL)
        return tl_error_nomem(err);
    fp->out->row_groups_total = n_rg;
    fp->out->bytes_read = fp->fe->footer_bytes;
    *total += tl_parquet_reader_num_rows(r);
    for (int g = 0; g < n_rg; g++) {
        TL_TRY(tl_page_select(p->t, r, g, p->filters, p->n_filters, &fp->ranges[g], err));
        int64_t rows = tl_row_ranges_rows(&fp->ranges[g]);
        double by_time = tl_row_group_time_share(p->t, m, (size_t)g, p->filters, p->n_filters) *
                         (double)m->row_groups[g].num_rows;
        fp->out->rows_read += rows;
        fp->out->row_groups_read += rows > 0;
        *chosen += rows;
        *timed += by_time < (double)rows ? (int64_t)by_time : rows;
    }
    return TL_OK;
}

/* Narrows the file's ranges to the rows that pass (row_refine.h) and
 * counts them again. */
static tl_status refine_file(void *ctx, size_t i, tl_error *err)
{
    plan *p = ctx;
    file_plan *fp = &p->files[i];
    tl_parquet_reader *r = fp->fe->reader;
    fp->out->rows_read = fp->out->row_groups_read = 0;
    fp->exact = true;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        size_t n_cols = (size_t)fp->fe->schema.n_children;
        tl_status st =
            tl_row_refine(p->t, r, g, p->filters, p->n_filters, &fp->ranges[g],
                          &fp->out->bytes_read, &fp->refined[(size_t)g * n_cols], &fp->exact, err);
        if (st != TL_OK) return tl_error_prefix(err, "reading %s", fp->fe->path);
        int64_t rows = tl_row_ranges_rows(&fp->ranges[g]);
        fp->out->rows_read += rows;
        fp->out->row_groups_read += rows > 0;
    }
    return TL_OK;
}

static size_t threads_for(size_t n)
{
    return n < DECODE_THREADS ? n : DECODE_THREADS;
}

/* DuckDB takes VARCHAR values on trust (invalid UTF-8 is undefined behaviour
 * later), while its read_parquet checks them: the values, as one run of
 * bytes, must be valid and no value may start inside a character. */
bool tl_strings_valid(const struct ArrowArray *a)
{
    const int32_t *off = a->buffers[1];
    const uint8_t *data = a->buffers[2];
    if (a->length == 0) return true;
    int32_t first = off[a->offset], last = off[a->offset + a->length];
    for (int64_t i = a->offset + 1; i < a->offset + a->length; i++)
        if (off[i] < last && (data[off[i]] & 0xC0) == 0x80) return false;
    return tl_utf8_valid(data + first, (size_t)(last - first));
}

/* The strings of dictionary codes (tl_parquet_reader_read_codes: int32
 * codes, a utf8 dictionary) as a utf8 array; TL_ERR_INVALID for a code past
 * the dictionary. */
static tl_status codes_to_strings(const struct ArrowArray *codes, struct ArrowArray *out,
                                  tl_error *err)
{
    const struct ArrowArray *d = codes->dictionary;
    const int32_t *code = (const int32_t *)codes->buffers[1] + codes->offset;
    const uint8_t *valid = codes->null_count ? codes->buffers[0] : NULL;
    const int32_t *doff = (const int32_t *)d->buffers[1] + d->offset;
    int64_t n = codes->length;
    size_t bytes = 0;
    for (int64_t i = 0; i < n; i++) {
        if (valid && !tl_bit_get(valid, codes->offset + i)) continue;
        if (code[i] < 0 || code[i] >= d->length)
            return tl_error_set(err, TL_ERR_INVALID, "a dictionary code past its dictionary");
        bytes += (size_t)(doff[code[i] + 1] - doff[code[i]]);
    }
    if (bytes > INT32_MAX) return tl_error_set(err, TL_ERR_INVALID, "strings too large");
    TL_TRY(tl_array_init(out, 3, 0, err));
    int32_t *off = tl_array_alloc_buffer(out, 1, (size_t)(n + 1) * sizeof *off);
    uint8_t *data = tl_array_alloc_buffer(out, 2, bytes + 1);
    uint8_t *bits = valid ? tl_array_alloc_buffer(out, 0, (size_t)(n + 7) / 8 + 1) : NULL;
    if (!off || !data || (valid && !bits)) {
        tl_array_release(out);
        return tl_error_nomem(err);
    }
    if (bits) memset(bits, 0, (size_t)(n + 7) / 8 + 1);
    int32_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        off[i] = at;
        if (valid && !tl_bit_get(valid, codes->offset + i)) continue;
        if (bits) tl_bit_set(bits, i);
        int32_t len = doff[code[i] + 1] - doff[code[i]];
        memcpy(data + at, (const uint8_t *)d->buffers[2] + doff[code[i]], (size_t)len);
        at += len;
    }
    off[n] = at;
    out->length = n;
    out->null_count = valid ? codes->null_count : 0;
    return TL_OK;
}

/* Rows of a string column: by their dictionary codes where every page read
 * holds codes (a key column of a few hundred names: no page of strings
 * built whole to keep a few), else as read_rows reads them. */
static tl_status read_strings(tl_parquet_reader *r, int g, int c, const tl_row_ranges *rr,
                              struct ArrowArray *out, int64_t *bytes, tl_error *err)
{
    struct ArrowArray codes = {0};
    int64_t read = 0;
    tl_status st = tl_parquet_reader_read_codes(r, g, c, rr->r, rr->n, &codes, &read, err);
    if (st == TL_ERR_NOT_FOUND) {
        tl_error_clear(err);
        return tl_parquet_reader_read_rows(r, g, c, rr->r, rr->n, out, bytes, err);
    }
    if (st == TL_OK) st = codes_to_strings(&codes, out, err);
    tl_array_release(&codes);
    if (st == TL_OK) *bytes += read;
    return st;
}

/* The rows of row group g of the file into fp->segs[g] (none: left empty),
 * read by r; *bytes grows by what was read. */
static tl_status decode_group(file_plan *fp, tl_parquet_reader *r, int g, int64_t *bytes,
                              tl_error *err)
{
    size_t n_cols = (size_t)fp->fe->schema.n_children;
    const tl_row_ranges *rr = &fp->ranges[g];
    if (rr->n == 0) return TL_OK;
    tl_rows_segment *seg = &fp->segs[g];
    seg->rows = tl_row_ranges_rows(rr);
    if ((seg->cols = calloc(n_cols + 1, sizeof *seg->cols)) == NULL) return tl_error_nomem(err);
    for (size_t c = 0; c < n_cols; c++) {
        if (!fp->keep[c]) continue;
        /* Pages the refinement read (a superset of these) are counted once. */
        int64_t again = 0;
        bool counted = fp->refined[(size_t)g * n_cols + c];
        bool text = strcmp(fp->fe->schema.children[c]->format, "u") == 0;
        tl_status st =
            text ? read_strings(r, g, (int)c, rr, &seg->cols[c], counted ? &again : bytes, err)
                 : tl_parquet_reader_read_rows(r, g, (int)c, rr->r, rr->n, &seg->cols[c],
                                               counted ? &again : bytes, err);
        if (st != TL_OK) return tl_error_prefix(err, "reading %s", fp->fe->path);
        if (text && !tl_strings_valid(&seg->cols[c]))
            return tl_error_set(err, TL_ERR_INVALID, "%s: column %s is not valid UTF-8",
                                fp->fe->path, fp->fe->schema.children[c]->name);
    }
    return TL_OK;
}

/* Room for a segment per row group (plan_free frees them all). */
static tl_status segs_alloc(file_plan *fp, tl_error *err)
{
    int n_rg = tl_parquet_reader_num_row_groups(fp->fe->reader);
    if ((fp->segs = calloc((size_t)n_rg + 1, sizeof *fp->segs)) == NULL) return tl_error_nomem(err);
    fp->n_segs = (size_t)n_rg;
    return TL_OK;
}

/* The decoded segments, in row-group order, first. */
static void segs_compact(file_plan *fp)
{
    size_t k = 0;
    for (size_t g = 0; g < fp->n_segs; g++)
        if (fp->segs[g].cols) fp->segs[k++] = fp->segs[g];
    fp->n_segs = k;
}

static tl_status decode_file(void *ctx, size_t i, tl_error *err)
{
    plan *p = ctx;
    file_plan *fp = &p->files[i];
    TL_TRY(segs_alloc(fp, err));
    for (int g = 0; g < (int)fp->n_segs; g++)
        TL_TRY(decode_group(fp, fp->fe->reader, g, &fp->out->bytes_read, err));
    segs_compact(fp);
    return TL_OK;
}

/* The row groups of a single file refined or decoded by up to
 * DECODE_THREADS lanes of consecutive ones, each with a reader of its own (a
 * reader is not shared between threads): a compacted file is one. */
typedef struct lanes {
    plan *p;
    bool decode; /* decode_group, else the refinement */
    tl_parquet_reader *rd[DECODE_THREADS];
    int bounds[DECODE_THREADS + 1]; /* lane i: row groups [bounds[i], bounds[i + 1]) */
    int64_t bytes[DECODE_THREADS];
    bool exact[DECODE_THREADS];
} lanes;

static tl_status run_lane(void *ctx, size_t i, tl_error *err)
{
    lanes *l = ctx;
    file_plan *fp = &l->p->files[0];
    size_t n_cols = (size_t)fp->fe->schema.n_children;
    l->exact[i] = true;
    for (int g = l->bounds[i]; g < l->bounds[i + 1]; g++) {
        if (l->decode) {
            TL_TRY(decode_group(fp, l->rd[i], g, &l->bytes[i], err));
            continue;
        }
        tl_status st =
            tl_row_refine(l->p->t, l->rd[i], g, l->p->filters, l->p->n_filters, &fp->ranges[g],
                          &l->bytes[i], &fp->refined[(size_t)g * n_cols], &l->exact[i], err);
        if (st != TL_OK) return tl_error_prefix(err, "reading %s", fp->fe->path);
    }
    return TL_OK;
}

/* The lanes of the single file's row groups holding `rows` rows; *n 0 when
 * one thread does as well (few rows or one row group). */
static tl_status lanes_open(plan *p, int64_t rows, bool decode, lanes *l, int *n, tl_error *err)
{
    file_plan *fp = &p->files[0];
    int n_rg = tl_parquet_reader_num_row_groups(fp->fe->reader);
    *l = (lanes){.p = p, .decode = decode, .rd = {fp->fe->reader}};
    *n = n_rg < DECODE_THREADS ? n_rg : DECODE_THREADS;
    if (rows < 2 * 65536 || *n < 2) {
        *n = 0;
        return TL_OK;
    }
    for (int i = 0; i <= *n; i++) l->bounds[i] = (int)((int64_t)n_rg * i / *n);
    tl_status st = TL_OK;
    for (int i = 1; st == TL_OK && i < *n; i++) st = tl_footer_reader(fp->fe, &l->rd[i], err);
    return st;
}

static void lanes_close(lanes *l, int n)
{
    for (int i = 1; i < n; i++) tl_parquet_reader_free(l->rd[i]);
}

/* refine_file for a single file of `rows` rows: in lanes. */
static tl_status refine_single(plan *p, int64_t rows, tl_error *err)
{
    file_plan *fp = &p->files[0];
    lanes l;
    int n = 0;
    tl_status st = lanes_open(p, rows, false, &l, &n, err);
    if (st == TL_OK && n == 0) st = tl_parallel_run(1, 1, true, refine_file, p, err);
    if (st != TL_OK || n == 0) {
        lanes_close(&l, n);
        return st;
    }
    st = tl_parallel_run((size_t)n, (size_t)n, true, run_lane, &l, err);
    lanes_close(&l, n);
    int n_rg = tl_parquet_reader_num_row_groups(fp->fe->reader);
    fp->out->rows_read = fp->out->row_groups_read = 0;
    fp->exact = true;
    for (int i = 0; i < n; i++) {
        fp->out->bytes_read += l.bytes[i];
        fp->exact &= l.exact[i];
    }
    for (int g = 0; g < n_rg; g++) {
        int64_t r = tl_row_ranges_rows(&fp->ranges[g]);
        fp->out->rows_read += r;
        fp->out->row_groups_read += r > 0;
    }
    return st;
}

/* decode_file for a single file of `rows` rows (its pages, where the rows
 * wanted lie, may be any of them): in lanes. */
static tl_status decode_single(plan *p, int64_t rows, tl_error *err)
{
    file_plan *fp = &p->files[0];
    lanes l;
    int n = 0;
    tl_status st = lanes_open(p, rows, true, &l, &n, err);
    if (st == TL_OK && n == 0) st = tl_parallel_run(1, 1, true, decode_file, p, err);
    if (st != TL_OK || n == 0) {
        lanes_close(&l, n);
        return st;
    }
    st = segs_alloc(fp, err);
    if (st == TL_OK) st = tl_parallel_run((size_t)n, (size_t)n, true, run_lane, &l, err);
    lanes_close(&l, n);
    for (int i = 0; i < n; i++) fp->out->bytes_read += l.bytes[i];
    if (st == TL_OK) segs_compact(fp);
    return st;
}

/* Moves the decoded segments of every file into a new rowset. */
static tl_status make_rowset(plan *p, tl_rowset **out, tl_error *err)
{
    const struct ArrowSchema *s = &p->files[0].fe->schema;
    tl_rowset *rs = calloc(1, sizeof *rs);
    size_t n_cols = (size_t)s->n_children, n_segs = 0;
    for (size_t i = 0; i < p->n; i++) n_segs += p->files[i].n_segs;
    if (rs == NULL) return tl_error_nomem(err);
    rs->n_cols = n_cols;
    rs->names = calloc(n_cols + 1, sizeof *rs->names);
    rs->formats = calloc(n_cols + 1, sizeof *rs->formats);
    rs->segs = calloc(n_segs + 1, sizeof *rs->segs);
    bool ok = rs->names && rs->formats && rs->segs;
    for (size_t c = 0; ok && c < n_cols; c++)
        ok = (rs->names[c] = strdup(s->children[c]->name)) != NULL &&
             (rs->formats[c] = strdup(s->children[c]->format)) != NULL;
    if (!ok) {
        tl_rowset_free(rs);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < p->n; i++) {
        file_plan *fp = &p->files[i];
        for (size_t k = 0; k < fp->n_segs; k++) {
            rs->segs[rs->n_segs++] = fp->segs[k];
            rs->rows += fp->segs[k].rows;
        }
        fp->n_segs = 0;
    }
    *out = rs;
    return TL_OK;
}

static void plan_free(plan *p)
{
    for (size_t i = 0; p->files && i < p->n; i++) {
        file_plan *fp = &p->files[i];
        int n_rg = fp->fe ? tl_parquet_reader_num_row_groups(fp->fe->reader) : 0;
        for (int g = 0; fp->ranges && g < n_rg; g++) tl_row_ranges_free(&fp->ranges[g]);
        size_t n_cols = fp->fe ? (size_t)fp->fe->schema.n_children : 0;
        for (size_t k = 0; k < fp->n_segs; k++) {
            for (size_t c = 0; fp->segs[k].cols && c < n_cols; c++)
                tl_array_release(&fp->segs[k].cols[c]);
            free(fp->segs[k].cols);
        }
        free(fp->segs);
        free(fp->ranges);
        free(fp->refined);
        free(fp->keep);
    }
    free(p->files);
}

/* Footers, schemas and row ranges of every file; *ok false when declined. */
static tl_status plan_files(tl_query_engine *e, plan *p, tl_selective_file *files, bool *ok,
                            int64_t *chosen, int64_t *timed, int64_t *total, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(p->t->md);
    bool *fields = calloc(s->n_fields + 1, sizeof *fields);
    if (fields == NULL) return tl_error_nomem(err);
    tl_query_columns(e, e->query_text, p->t, fields);
    tl_status st = TL_OK;
    *ok = true;
    for (size_t i = 0; st == TL_OK && *ok && i < p->n; i++) {
        file_plan *fp = &p->files[i];
        fp->out = &files[i];
        st = tl_footer_get(e, files[i].path, &fp->fe, err);
        if (st == TL_OK) *ok = same_schema(&p->files[0].fe->schema, &fp->fe->schema);
        /* Files of an older schema are projected onto the current one by read_parquet. */
        if (st == TL_OK && *ok && i == 0) *ok = tl_projection_fits(p->t, &fp->fe->schema);
        /* Rows of nested columns are read by row group: read_parquet's part. */
        if (st == TL_OK && *ok) *ok = tl_pq_subset_flat(tl_parquet_reader_meta(fp->fe->reader));
        if (st == TL_OK && *ok) st = plan_file(p, fp, fields, chosen, timed, total, err);
    }
    free(fields);
    return st;
}

bool tl_selective_rows_narrow(int64_t chosen, int64_t total)
{
    return chosen <= total / 4 && chosen <= TL_SELECTIVE_MAX_ROWS;
}

bool tl_selective_time_refines(int64_t timed, int64_t total)
{
    return timed <= total / 32 && timed <= TL_SELECTIVE_MAX_ROWS;
}

bool tl_selective_scan_takes(const tl_query_engine *e, const tl_table *t, int64_t chosen,
                             int64_t total)
{
    mode m = mode_of(e, t);
    if (m != MODE_AUTO) return m == MODE_ALWAYS && chosen < total;
    return tl_selective_rows_narrow(chosen, total);
}

bool tl_filter_pushdown_off(const tl_query_engine *e, const tl_table *t)
{
    return mode_of(e, t) == MODE_OFF;
}

tl_status tl_selective_scan(tl_query_engine *e, const tl_table *t, tl_selective_file *files,
                            size_t n, const tl_scan_filter *filters, size_t n_filters, int64_t *id,
                            bool *exact, tl_error *err)
{
    *id = 0;
    *exact = false;
    mode m = mode_of(e, t);
    /* Beyond the footer cache's size, read_parquet (which keeps its own) does
     * as well, without holding as many files open. */
    if (m == MODE_OFF || n == 0 || n_filters == 0 || n > TL_FOOTER_CACHE_MAX) return TL_OK;
    for (size_t i = 0; i < n; i++) {
        files[i].row_groups_total = files[i].row_groups_read = 0;
        files[i].bytes_read = files[i].rows_read = 0;
    }
    plan p = {t, calloc(n, sizeof *p.files), n, filters, n_filters};
    if (p.files == NULL) return tl_error_nomem(err);
    tl_footer_cache_begin(e);
    bool ok = false;
    int64_t chosen = 0, timed = 0, total = 0;
    tl_status st = plan_files(e, &p, files, &ok, &chosen, &timed, &total, err);
    /* Pages hold neighbours of the rows wanted: the values of the filtered
     * columns tell them apart, unless the pages are most of the rows and
     * their times say most of them match (a short range at the edge of an
     * hour, in pages of many series each spanning the hour: the time column
     * is read, the other columns for the rows left). */
    bool refined = false;
    if (st == TL_OK && ok &&
        (m == MODE_ALWAYS || chosen <= total / 4 * 3 || tl_selective_time_refines(timed, total))) {
        st = n == 1 ? refine_single(&p, total, err)
                    : tl_parallel_run(n, threads_for(n), true, refine_file, &p, err);
        chosen = 0;
        for (size_t i = 0; st == TL_OK && i < n; i++) chosen += files[i].rows_read;
        refined = st == TL_OK;
    }
    if (st == TL_OK && ok && m == MODE_AUTO) ok = tl_selective_rows_narrow(chosen, total);
    if (st == TL_OK && ok)
        st = n == 1 ? decode_single(&p, total, err)
                    : tl_parallel_run(n, threads_for(n), true, decode_file, &p, err);
    /* A file our reader cannot decode (a codec, an encoding it lacks) is
     * left to read_parquet. */
    if (st == TL_ERR_INVALID) {
        st = TL_OK;
        ok = false;
    }
    tl_rowset *rs = NULL;
    if (st == TL_OK && ok) st = make_rowset(&p, &rs, err);
    if (st == TL_OK && ok) st = tl_rowsets_add(e, rs, id, err);
    *exact = st == TL_OK && ok && refined && *id != 0;
    for (size_t i = 0; *exact && i < n; i++) *exact = p.files[i].exact;
    plan_free(&p);
    tl_footer_cache_end(e);
    return st;
}
