#include "query/preagg_scan.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/parallel.h"
#include "query/footer_cache.h"
#include "query/page_select.h"
#include "query/query_cache.h"
#include "query/row_group_prune.h"
#include "query/row_refine.h"
#include "query/rows_function.h"
#include "query/selective_scan.h"

#define PREAGG_THREADS 4
#define MAX_COLS 64
/* Rows of a piece of a large row group (split_row_groups). */
#define PIECE_ROWS 131072

bool tl_preagg_off(void)
{
    const char *v = getenv("TL_PREAGG");
    return v && strcmp(v, "off") == 0;
}

/* TL_PREAGG=strings: keys read as strings, never as dictionary codes (tests). */
static bool preagg_strings(void)
{
    const char *v = getenv("TL_PREAGG");
    return v && strcmp(v, "strings") == 0;
}

/* The rows of a piece of a large row group: TL_PREAGG=pieces, a page each
 * (tests: small files cut as large ones are). */
static int64_t piece_rows(void)
{
    const char *v = getenv("TL_PREAGG");
    return v && strcmp(v, "pieces") == 0 ? 1 : PIECE_ROWS;
}

/* One file: its footer and the leaf of each column the scan reads (time,
 * keys, values, in that order). */
typedef struct pre_file {
    tl_footer_entry *fe;
    int leaves[MAX_COLS];
} pre_file;

/* One row group of one file, and what came of it. */
typedef struct pre_job {
    pre_file *f;
    tl_parquet_reader *rd; /* the file's reader, or one of the lane's own (split_file) */
    int g;
    tl_row_ranges rr; /* the rows its pages may hold that the filters want */
    tl_rows_segment seg;
    int64_t bytes_read;
    bool read;
} pre_job;

typedef struct pre_plan {
    const tl_preagg_request *r;
    pre_job *jobs;
    size_t n_cols;     /* 1 + n_keys + n_values */
    size_t *file_jobs; /* the jobs of lane i: [file_jobs[i], file_jobs[i + 1]) */
    bool refine;       /* narrow: rows refined by their values first (row_refine.h) */
} pre_plan;

/* Whether value v of the request is summed as int64 (TL_RUN_SUM_INT). */
static bool int_value(const tl_preagg_request *r, size_t v)
{
    for (size_t i = 0; i < r->n_states; i++)
        if (r->states[i].op == TL_RUN_SUM_INT && r->states[i].value == v) return true;
    return false;
}

/* Whether the file's column `leaf` is what the scan decodes: microsecond
 * timestamps (time), utf8 (keys), float64 (values; int64 those summed as
 * int64). */
static bool leaf_fits(const tl_footer_entry *fe, int leaf, size_t c, size_t n_keys, bool ints)
{
    const tl_pq_file_meta *m = tl_parquet_reader_meta(fe->reader);
    if (leaf < 0 || leaf >= fe->schema.n_children || !m->schema[leaf + 1].has_type) return false;
    const char *format = fe->schema.children[leaf]->format;
    tl_pq_type type = m->schema[leaf + 1].type;
    if (c == 0) return strncmp(format, "tsu:", 4) == 0 && type == TL_PQ_INT64;
    if (c <= n_keys)
        return strcmp(format, "u") == 0 && type == TL_PQ_BYTE_ARRAY &&
               m->schema[leaf + 1].logical.kind != TL_PQ_LT_DECIMAL;
    if (ints) return strcmp(format, "l") == 0 && type == TL_PQ_INT64;
    return strcmp(format, "g") == 0 && type == TL_PQ_DOUBLE;
}

/* Opens the file and finds its leaves; *ok false when it does not fit. */
static tl_status open_file(tl_query_engine *e, const tl_preagg_request *r, const char *path,
                           pre_file *pf, bool *ok, tl_error *err)
{
    const tl_table *t = r->t;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    tl_status st = tl_footer_get(e, path, &pf->fe, err);
    if (st == TL_ERR_INVALID || st == TL_ERR_NOT_FOUND) {
        *ok = false;
        return TL_OK;
    }
    TL_TRY(st);
    const tl_pq_file_meta *m = tl_parquet_reader_meta(pf->fe->reader);
    size_t n = 1 + r->n_keys + r->n_values;
    for (size_t c = 0; *ok && c < n; c++) {
        const char *name = c == 0           ? t->contract.time_column
                           : c <= r->n_keys ? r->keys[c - 1]
                                            : r->values[c - 1 - r->n_keys];
        const tl_ice_field *f = tl_ice_schema_find(s, name);
        pf->leaves[c] = f ? tl_pq_leaf_of_field(m, f) : -1;
        *ok = leaf_fits(pf->fe, pf->leaves[c], c, r->n_keys,
                        c > r->n_keys && int_value(r, c - 1 - r->n_keys));
    }
    return TL_OK;
}

static tl_status aggregate_rows(pre_plan *p, pre_job *j, struct ArrowArray *cols, int64_t n,
                                tl_error *err)
{
    const tl_preagg_request *r = p->r;
    const struct ArrowArray *keys[MAX_COLS], *values[MAX_COLS];
    for (size_t c = 0; c < r->n_keys; c++) keys[c] = &cols[1 + c];
    for (size_t c = 0; c < r->n_values; c++) values[c] = &cols[1 + r->n_keys + c];
    tl_run_input in = {&cols[0], keys, r->n_keys, values, r->n_values, n};
    size_t n_out = r->n_keys + 1 + r->n_states;
    if ((j->seg.cols = calloc(n_out, sizeof *j->seg.cols)) == NULL) return tl_error_nomem(err);
    TL_TRY(
        tl_run_aggregate(&r->split, &in, r->states, r->n_states, j->seg.cols, &j->seg.rows, err));
    for (size_t c = 0; c < r->n_keys; c++)
        if (!tl_strings_valid(&j->seg.cols[c]))
            return tl_error_set(err, TL_ERR_INVALID, "%s: column %s is not valid UTF-8",
                                j->f->fe->path, r->keys[c]);
    return TL_OK;
}

/* The rows of rr (whose times, in that order, are `time`) with a time in
 * the query's range: *kept their ranges; *n_kept how many rows. */
static tl_status rows_in_range(const tl_run_split *s, const tl_row_ranges *rr,
                               const struct ArrowArray *time, tl_row_ranges *kept, int64_t *n_kept,
                               tl_error *err)
{
    const int64_t *tv = (const int64_t *)time->buffers[1] + time->offset;
    const uint8_t *valid = time->null_count ? time->buffers[0] : NULL;
    int64_t at = 0; /* the position in `time` of range i's first row */
    *n_kept = 0;
    for (size_t i = 0; i < rr->n; at += rr->r[i].end - rr->r[i].start, i++) {
        int64_t len = rr->r[i].end - rr->r[i].start;
        for (int64_t k = 0; k < len;) { /* a stretch of rows kept, [k, e) */
            int64_t e = k;
            while (e < len && tv[at + e] >= s->lo && tv[at + e] <= s->hi &&
                   (!valid || tl_bit_get(valid, time->offset + at + e)))
                e++;
            if (e > k && tl_row_ranges_push(kept, rr->r[i].start + k, rr->r[i].start + e) != 0)
                return tl_error_nomem(err);
            *n_kept += e - k;
            k = e + 1;
        }
    }
    return TL_OK;
}

/* The times of the kept rows out of `time` (rows of rr), none null. */
static tl_status keep_times(const tl_row_ranges *rr, const tl_row_ranges *kept,
                            struct ArrowArray *time, int64_t n_kept, tl_error *err)
{
    struct ArrowArray out;
    TL_TRY(tl_array_init(&out, 2, 0, err));
    int64_t *v = tl_array_alloc_buffer(&out, 1, (size_t)n_kept * 8 + 1);
    if (v == NULL) {
        tl_array_release(&out);
        return tl_error_nomem(err);
    }
    const int64_t *tv = (const int64_t *)time->buffers[1] + time->offset;
    size_t i = 0;
    int64_t base = 0, done = 0; /* base: the position in `time` of range i's first row */
    for (size_t k = 0; k < kept->n; k++) {
        for (; rr->r[i].end <= kept->r[k].start; i++) base += rr->r[i].end - rr->r[i].start;
        int64_t len = kept->r[k].end - kept->r[k].start;
        memcpy(v + done, tv + base + kept->r[k].start - rr->r[i].start, (size_t)len * 8);
        done += len;
    }
    out.length = n_kept;
    tl_array_release(time);
    tl_array_move(&out, time);
    return TL_OK;
}

/* Narrows j->rr to the rows whose time the query keeps, and `time` to their
 * times: a compacted file's pages hold every hour of a few series, most of
 * them outside the range; the other columns are then read for the rows kept
 * only. Left as they are when that saves little or makes many ranges. */
static tl_status narrow_by_time(pre_plan *p, pre_job *j, struct ArrowArray *time, int64_t *n,
                                tl_error *err)
{
    const tl_run_split *s = &p->r->split;
    if (s->lo == INT64_MIN && s->hi == INT64_MAX) return TL_OK;
    /* Rows spread over the row group's times by series: when most of its
     * times are in range, most rows are, and narrowing would not pay. */
    const tl_pq_file_meta *m = tl_parquet_reader_meta(j->rd);
    tl_scan_filter range = {
        .has_lo = s->lo != INT64_MIN, .has_hi = s->hi != INT64_MAX, .lo = s->lo, .hi = s->hi};
    if (tl_row_group_time_share(p->r->t, m, (size_t)j->g, &range, 1) >= 0.75) return TL_OK;
    tl_row_ranges kept = {0};
    int64_t n_kept = 0;
    tl_status st = rows_in_range(s, &j->rr, time, &kept, &n_kept, err);
    bool worth = n_kept < *n - *n / 4 && (int64_t)kept.n <= 16 + n_kept / 64;
    if (st == TL_OK && worth && n_kept > 0) st = keep_times(&j->rr, &kept, time, n_kept, err);
    if (st == TL_OK && worth) {
        tl_row_ranges_free(&j->rr);
        j->rr = kept;
        *n = n_kept;
        return TL_OK;
    }
    tl_row_ranges_free(&kept);
    return st;
}

/* A key column: its dictionary codes when every page read holds codes
 * (runs then compare codes), else its strings. */
static tl_status read_key(pre_job *j, int leaf, struct ArrowArray *out, int64_t *bytes,
                          tl_error *err)
{
    tl_parquet_reader *rd = j->rd;
    const tl_row_ranges *rr = &j->rr;
    tl_status st = TL_ERR_NOT_FOUND;
    if (!preagg_strings())
        st = tl_parquet_reader_read_codes(rd, j->g, leaf, rr->r, rr->n, out, bytes, err);
    if (st != TL_ERR_NOT_FOUND) return st;
    tl_error_clear(err);
    return tl_parquet_reader_read_rows(rd, j->g, leaf, rr->r, rr->n, out, bytes, err);
}

/* Narrows j->rr to the rows whose time and first key pass the filters (a
 * narrow query's pages hold many neighbours of the rows wanted); read[c]:
 * the columns it read, whose bytes are then counted once. */
static tl_status refine_rows(pre_plan *p, pre_job *j, bool *read, tl_error *err)
{
    bool exact = true;
    tl_status st = tl_row_refine(p->r->t, j->rd, j->g, p->r->filters, p->r->n_filters, &j->rr,
                                 &j->bytes_read, read, &exact, err);
    if (st != TL_OK) return tl_error_prefix(err, "reading %s", j->f->fe->path);
    return TL_OK;
}

/* Column c (of the scan's) of the job's rows; its bytes counted unless the
 * refinement read them. */
static tl_status read_column(pre_plan *p, pre_job *j, size_t c, const bool *refined,
                             struct ArrowArray *out, tl_error *err)
{
    tl_parquet_reader *rd = j->rd;
    int leaf = j->f->leaves[c];
    int64_t again = 0, *bytes = refined && refined[leaf] ? &again : &j->bytes_read;
    if (c >= 1 && c <= p->r->n_keys) return read_key(j, leaf, out, bytes, err);
    return tl_parquet_reader_read_rows(rd, j->g, leaf, j->rr.r, j->rr.n, out, bytes, err);
}

static tl_status run_row_group(pre_plan *p, pre_job *j, tl_error *err)
{
    struct ArrowArray cols[MAX_COLS] = {{0}};
    tl_status st = TL_OK;
    bool *refined = NULL;
    if (p->refine && j->rr.n) {
        size_t n_leaves = (size_t)j->f->fe->schema.n_children;
        refined = calloc(n_leaves + 1, sizeof *refined);
        st = refined ? refine_rows(p, j, refined, err) : tl_error_nomem(err);
    }
    j->read = j->rr.n > 0;
    int64_t n = tl_row_ranges_rows(&j->rr);
    if (st == TL_OK && j->rr.n) st = read_column(p, j, 0, refined, &cols[0], err);
    if (st == TL_OK && cols[0].length != n)
        st = tl_error_set(err, TL_ERR_INVALID, "%s: short column", j->f->fe->path);
    /* Refined rows are in the time range already. */
    if (st == TL_OK && j->rr.n && !p->refine) st = narrow_by_time(p, j, &cols[0], &n, err);
    for (size_t c = 1; st == TL_OK && j->rr.n && c < p->n_cols; c++) {
        st = read_column(p, j, c, refined, &cols[c], err);
        if (st == TL_OK && cols[c].length != n)
            st = tl_error_set(err, TL_ERR_INVALID, "%s: short column", j->f->fe->path);
    }
    if (st == TL_OK && j->rr.n) st = aggregate_rows(p, j, cols, n, err);
    for (size_t c = 0; c < p->n_cols; c++) tl_array_release(&cols[c]);
    free(refined);
    return st;
}

/* The row groups of one lane, in turn (a reader is not shared between threads). */
static tl_status run_file(void *ctx, size_t i, tl_error *err)
{
    pre_plan *p = ctx;
    for (size_t k = p->file_jobs[i]; k < p->file_jobs[i + 1]; k++)
        TL_TRY(run_row_group(p, &p->jobs[k], err));
    return TL_OK;
}

static tl_status make_rowset(pre_plan *p, size_t n_jobs, const char *time_format, tl_rowset **out,
                             tl_error *err)
{
    const tl_preagg_request *r = p->r;
    size_t n_out = r->n_keys + 1 + r->n_states;
    tl_rowset *rs = calloc(1, sizeof *rs);
    if (rs == NULL) return tl_error_nomem(err);
    rs->n_cols = n_out;
    rs->names = calloc(n_out + 1, sizeof *rs->names);
    rs->formats = calloc(n_out + 1, sizeof *rs->formats);
    rs->segs = calloc(n_jobs + 1, sizeof *rs->segs);
    bool ok = rs->names && rs->formats && rs->segs;
    for (size_t c = 0; ok && c < n_out; c++) {
        const char *name = c < r->n_keys    ? r->keys[c]
                           : c == r->n_keys ? r->t->contract.time_column
                                            : r->state_names[c - r->n_keys - 1];
        const char *format = c < r->n_keys ? "u" : c == r->n_keys ? time_format : NULL;
        if (format == NULL) {
            tl_run_op op = r->states[c - r->n_keys - 1].op;
            format =
                op == TL_RUN_COUNT_STAR || op == TL_RUN_COUNT || op == TL_RUN_SUM_INT ? "l" : "g";
        }
        ok = (rs->names[c] = strdup(name)) != NULL && (rs->formats[c] = strdup(format)) != NULL;
    }
    if (!ok) {
        tl_rowset_free(rs);
        return tl_error_nomem(err);
    }
    for (size_t i = 0; i < n_jobs; i++) {
        if (p->jobs[i].seg.cols == NULL) continue;
        rs->segs[rs->n_segs++] = p->jobs[i].seg;
        rs->rows += p->jobs[i].seg.rows;
        p->jobs[i].seg.cols = NULL;
    }
    *out = rs;
    return TL_OK;
}

/* The needed files but the pending ones, opened; *ok false when one does not fit. */
static tl_status open_files(tl_query_engine *e, const tl_preagg_request *r, const tl_live_files *lf,
                            const bool *pending, pre_file *files, size_t *n, bool *ok,
                            tl_error *err)
{
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && *ok && i < lf->n; i++) {
        if (pending[i] || !tl_scan_file_needed(r->t, &lf->files[i].file, r->filters, r->n_filters))
            continue;
        if ((*ok = *n < TL_FOOTER_CACHE_MAX) == false) break; /* entries must outlive the scan */
        char *path = tl_scan_local_path(r->t, lf->files[i].file.file_path);
        if ((*ok = path != NULL) == false) break;
        st = open_file(e, r, path, &files[(*n)++], ok, err);
        free(path);
    }
    return st;
}

/* The rows of rr in [lo, hi), appended to *out; -1 when out of memory. */
static int cut_ranges(const tl_row_ranges *rr, int64_t lo, int64_t hi, tl_row_ranges *out)
{
    for (size_t i = 0; i < rr->n; i++) {
        int64_t s = rr->r[i].start > lo ? rr->r[i].start : lo;
        int64_t e = rr->r[i].end < hi ? rr->r[i].end : hi;
        if (s < e && tl_row_ranges_push(out, s, e) != 0) return -1;
    }
    return 0;
}

/* Job j's rows cut at page starts of its first value column (its largest
 * pages, none then decoded twice) into pieces of about PIECE_ROWS, appended
 * to jobs[*k]; false when the column has no offset index (j appended whole)
 * or out of memory (*oom). */
static bool split_job(pre_job *j, pre_job *jobs, size_t *k, size_t cap, size_t n_keys,
                      int64_t piece, bool *oom)
{
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
    tl_error ignored = {0};
    int leaf = j->f->leaves[1 + n_keys];
    if (tl_parquet_reader_page_index(j->rd, j->g, leaf, &ci, &oi, &ignored) != TL_OK ||
        oi.n_pages < 2)
        return false;
    const tl_pq_file_meta *m = tl_parquet_reader_meta(j->rd);
    int64_t rows = m->row_groups[j->g].num_rows, lo = 0;
    for (size_t p = 1; p <= oi.n_pages && *k < cap; p++) {
        int64_t hi = p < oi.n_pages ? oi.pages[p].first_row_index : rows;
        if (hi - lo < piece && p < oi.n_pages) continue;
        pre_job piece = {.f = j->f, .rd = j->rd, .g = j->g};
        if (cut_ranges(&j->rr, lo, hi, &piece.rr) != 0) {
            tl_row_ranges_free(&piece.rr);
            tl_row_ranges_free(&j->rr);
            *oom = true;
            return true;
        }
        if (piece.rr.n) jobs[(*k)++] = piece;
        lo = hi;
    }
    tl_row_ranges_free(&j->rr);
    return true;
}

/* A single file's row groups of more than PIECE_ROWS rows in pieces
 * (split_job): DuckDB merges a few more partial-state rows, and the lanes
 * get even shares (a rollup's file of 1,048,576 and 331,424 rows was two
 * lanes, one three times the other) and buffers of a piece's size. */
static tl_status split_row_groups(pre_plan *p, size_t *k, tl_error *err)
{
    size_t cap = 0;
    const tl_preagg_request *r = p->r;
    int64_t piece = piece_rows();
    if (r->n_values == 0) return TL_OK;
    for (size_t i = 0; i < *k; i++) cap += (size_t)(tl_row_ranges_rows(&p->jobs[i].rr) / piece) + 2;
    if (cap <= *k + 1) return TL_OK;
    pre_job *jobs = calloc(cap, sizeof *jobs);
    if (jobs == NULL) return tl_error_nomem(err);
    size_t n = 0;
    bool oom = false;
    for (size_t i = 0; i < *k; i++) {
        pre_job *j = &p->jobs[i];
        if (oom || tl_row_ranges_rows(&j->rr) < piece * 3 / 2 ||
            !split_job(j, jobs, &n, cap, r->n_keys, piece, &oom))
            jobs[n++] = *j;
    }
    free(p->jobs);
    p->jobs = jobs;
    *k = n;
    return oom ? tl_error_nomem(err) : TL_OK;
}

/* One file's k row groups (k > 1) in up to PREAGG_THREADS lanes of
 * consecutive ones, each lane past the first with a reader of its own (in
 * own[]): a single large file (a rollup's) read by as many threads as a
 * table of several files. */
static tl_status split_file(pre_plan *p, size_t k, tl_parquet_reader **own, size_t *lanes,
                            tl_error *err)
{
    size_t n = k < PREAGG_THREADS ? k : PREAGG_THREADS;
    size_t *bounds = calloc(n + 1, sizeof *bounds);
    if (bounds == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i <= n; i++) bounds[i] = k * i / n;
    tl_status st = TL_OK;
    for (size_t i = 1; st == TL_OK && i < n; i++) {
        st = tl_footer_reader(p->jobs[0].f->fe, &own[i], err);
        for (size_t j = bounds[i]; st == TL_OK && j < bounds[i + 1]; j++) p->jobs[j].rd = own[i];
    }
    if (st != TL_OK) {
        free(bounds);
        return st;
    }
    free(p->file_jobs);
    p->file_jobs = bounds;
    *lanes = n;
    return TL_OK;
}

static tl_status scan_files(tl_query_engine *e, const tl_preagg_request *r, pre_file *files,
                            size_t n, int64_t *id, tl_scan_stats *stats, tl_error *err)
{
    size_t n_jobs = 0;
    for (size_t i = 0; i < n; i++)
        n_jobs += (size_t)tl_parquet_reader_num_row_groups(files[i].fe->reader);
    pre_plan p = {r, calloc(n_jobs + 1, sizeof *p.jobs), 1 + r->n_keys + r->n_values,
                  calloc(n + 1, sizeof *p.file_jobs), false};
    if (p.jobs == NULL || p.file_jobs == NULL) {
        free(p.jobs);
        free(p.file_jobs);
        return tl_error_nomem(err);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        p.file_jobs[i] = k;
        const tl_pq_file_meta *m = tl_parquet_reader_meta(files[i].fe->reader);
        for (int g = 0; g < tl_parquet_reader_num_row_groups(files[i].fe->reader); g++)
            if (m->row_groups[g].num_rows > 0 &&
                tl_row_group_needed(r->t, m, (size_t)g, r->filters, r->n_filters))
                p.jobs[k++] = (pre_job){.f = &files[i], .rd = files[i].fe->reader, .g = g};
    }
    p.file_jobs[n] = k;
    /* The pages first: when they leave a few rows of the files (a narrow
     * query), the rows are refined by their values before decoding, as the
     * selective scan refines them. */
    int64_t chosen = 0, total = 0;
    tl_status st = TL_OK;
    for (size_t i = 0; i < n; i++) total += tl_parquet_reader_num_rows(files[i].fe->reader);
    for (size_t i = 0; st == TL_OK && i < k; i++) {
        st = tl_page_select(r->t, p.jobs[i].f->fe->reader, p.jobs[i].g, r->filters, r->n_filters,
                            &p.jobs[i].rr, err);
        chosen += tl_row_ranges_rows(&p.jobs[i].rr);
    }
    p.refine = tl_selective_rows_narrow(chosen, total);
    size_t lanes = n;
    tl_parquet_reader *own[PREAGG_THREADS] = {0};
    if (st == TL_OK && n == 1 && !p.refine) st = split_row_groups(&p, &k, err);
    if (st == TL_OK && n == 1) p.file_jobs[1] = k;
    if (st == TL_OK && n == 1 && k > 1) st = split_file(&p, k, own, &lanes, err);
    if (st == TL_OK && k)
        st = tl_parallel_run(lanes, lanes < PREAGG_THREADS ? lanes : PREAGG_THREADS, true, run_file,
                             &p, err);
    for (size_t i = 0; i < PREAGG_THREADS; i++) tl_parquet_reader_free(own[i]);
    tl_rowset *rs = NULL;
    /* No file left (an empty range): no rows, of the time column's type. */
    const char *time_format =
        n ? files[0].fe->schema.children[files[0].leaves[0]]->format : "tsu:UTC";
    if (st == TL_OK) st = make_rowset(&p, k, time_format, &rs, err);
    if (st == TL_OK) st = tl_rowsets_add(e, rs, id, err);
    for (size_t i = 0; st == TL_OK && i < k; i++) {
        /* the pieces of a row group (split_row_groups) count it once */
        bool again = i > 0 && p.jobs[i].f == p.jobs[i - 1].f && p.jobs[i].g == p.jobs[i - 1].g &&
                     p.jobs[i - 1].read;
        stats->row_groups_read += p.jobs[i].read && !again;
        stats->bytes_read += p.jobs[i].bytes_read;
    }
    for (size_t i = 0; i < n && st == TL_OK; i++) {
        stats->files_read++;
        stats->row_groups_total += tl_parquet_reader_num_row_groups(files[i].fe->reader);
    }
    size_t n_out = r->n_keys + 1 + r->n_states;
    for (size_t i = 0; i < k; i++) {
        for (size_t c = 0; p.jobs[i].seg.cols && c < n_out; c++)
            tl_array_release(&p.jobs[i].seg.cols[c]);
        free(p.jobs[i].seg.cols);
        tl_row_ranges_free(&p.jobs[i].rr);
    }
    free(p.jobs);
    free(p.file_jobs);
    return st;
}

/* Whether the time formats of the files agree (the rowset has one). */
static bool same_time_format(const pre_file *files, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(files[i].fe->schema.children[files[i].leaves[0]]->format,
                   files[0].fe->schema.children[files[0].leaves[0]]->format) != 0)
            return false;
    return true;
}

/* The state of one raw row, as a run of one row makes it. */
static tl_status row_state(tl_buf *b, const tl_preagg_request *r, const tl_run_state *s,
                           tl_error *err)
{
    if (s->op == TL_RUN_COUNT_STAR)
        return tl_buf_append_str(b, ", 1::BIGINT") ? tl_error_nomem(err) : TL_OK;
    char *v = tl_sql_ident(r->values[s->value]);
    int rc = !v || (s->op == TL_RUN_COUNT     ? tl_buf_printf(b, ", (%s IS NOT NULL)::BIGINT", v)
                    : s->op == TL_RUN_SUM_INT ? tl_buf_printf(b, ", %s::BIGINT", v)
                                              : tl_buf_printf(b, ", %s::DOUBLE", v));
    free(v);
    return rc ? tl_error_nomem(err) : TL_OK;
}

/* *out: the SELECT of the needed pending files' rows (merged on read as
 * any scan merges them), one partial-state row each; NULL when none. */
static tl_status pending_rows_sql(tl_query_engine *e, const tl_preagg_request *r,
                                  const tl_live_files *lf, const bool *pending, char **out,
                                  tl_scan_stats *stats, tl_error *err)
{
    *out = NULL;
    tl_live_files sub = {calloc(lf->n + 1, sizeof *sub.files), 0, NULL, 0, 0};
    if (sub.files == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < lf->n; i++)
        if (pending[i] && tl_scan_file_needed(r->t, &lf->files[i].file, r->filters, r->n_filters))
            sub.files[sub.n++] = lf->files[i]; /* borrowed */
    tl_buf scan = {0}, b = {0};
    tl_scan_stats read = {.exact = stats->exact};
    tl_status st = TL_OK;
    if (sub.n) st = tl_scan_sql(e, r->t, &sub, r->filters, r->n_filters, false, &scan, &read, err);
    int rc = 0;
    for (size_t c = 0; sub.n && st == TL_OK && c <= r->n_keys; c++) {
        char *name = tl_sql_ident(c < r->n_keys ? r->keys[c] : r->t->contract.time_column);
        rc |= !name || tl_buf_printf(&b, "%s%s", c ? ", " : "SELECT ", name);
        free(name);
    }
    for (size_t c = 0; sub.n && st == TL_OK && !rc && c < r->n_states; c++)
        st = row_state(&b, r, &r->states[c], err);
    if (sub.n && st == TL_OK && !rc)
        rc = tl_buf_append_str(&b, " FROM (") || tl_buf_append(&b, scan.data, scan.len) ||
             tl_buf_append_str(&b, ") AS __tl_pending") || tl_buf_append_byte(&b, 0);
    if (st == TL_OK && rc) st = tl_error_nomem(err);
    if (st == TL_OK && sub.n) {
        *out = (char *)tl_buf_detach(&b, NULL);
        read.files_total = 0; /* the caller counts the table's files once */
        tl_scan_stats_add(stats, &read);
    }
    tl_buf_free(&b);
    tl_buf_free(&scan);
    free(sub.files);
    return st;
}

tl_status tl_preagg_scan(tl_query_engine *e, const tl_preagg_request *r, int64_t *id,
                         char **pending_sql, tl_scan_stats *stats, tl_error *err)
{
    *id = 0;
    *pending_sql = NULL;
    if (tl_preagg_off() || tl_filter_pushdown_off(e, r->t) ||
        1 + r->n_keys + r->n_values > MAX_COLS || r->t->contract.time_column == NULL)
        return TL_OK;
    const tl_live_files *lf = NULL;
    TL_TRY(tl_query_live_files(e, r->t, &lf, err));
    if (lf->delete_files) return TL_OK;
    pre_file *files = calloc(lf->n + 1, sizeof *files);
    bool *pending = calloc(lf->n + 1, sizeof *pending);
    tl_status st = files && pending ? TL_OK : tl_error_nomem(err);
    if (st == TL_OK) st = tl_scan_pending(e, r->t, lf, pending, err);
    size_t n = 0;
    bool ok = true;
    tl_footer_cache_begin(e);
    if (st == TL_OK) st = open_files(e, r, lf, pending, files, &n, &ok, err);
    /* Pending files needed, and none other: nothing to aggregate, declined. */
    bool dirty = false;
    for (size_t i = 0; st == TL_OK && i < lf->n; i++)
        dirty |=
            pending[i] && tl_scan_file_needed(r->t, &lf->files[i].file, r->filters, r->n_filters);
    tl_scan_stats read = {.exact = stats->exact};
    if (st == TL_OK && ok && (n || !dirty) && same_time_format(files, n))
        st = scan_files(e, r, files, n, id, &read, err);
    if (st == TL_ERR_INVALID) { /* a codec or encoding our reader lacks: raw rows, as before */
        tl_error_clear(err);
        st = TL_OK;
        *id = 0;
    }
    /* The pending files' rows, merged on read, join the states. */
    if (st == TL_OK && *id && dirty)
        st = pending_rows_sql(e, r, lf, pending, pending_sql, &read, err);
    if (st == TL_OK && *id) {
        read.files_total = (int64_t)lf->n;
        tl_scan_stats_add(stats, &read);
    }
    if (st != TL_OK || *id == 0) {
        free(*pending_sql);
        *pending_sql = NULL;
    }
    tl_footer_cache_end(e);
    free(files);
    free(pending);
    return st;
}
