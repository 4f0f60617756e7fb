/* count(*) with a WHERE of time and series-key restrictions, from the
 * Parquet footers (see sql_count.h). A row group whose statistics put every
 * row inside the restrictions counts whole, one outside them not at all; of
 * the others only the pages their page index cannot rule out are decoded,
 * and only the restricted columns, whose values are then compared here. */
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "core/parallel.h"
#include "query/footer_cache.h"
#include "query/page_select.h"
#include "query/query_cache.h"
#include "query/row_group_prune.h"
#include "query/selective_scan.h"
#include "query/sql_count.h"
#include "query/sql_exact_where.h"
#include "query/sql_plan_json.h"
#include "query/sql_shape.h"

#define COUNT_THREADS 4

bool tl_sql_count_where_shape(const tl_sql_plan *plan, const char **name, tl_scan_filter *f)
{
    memset(f, 0, sizeof *f);
    return tl_sql_count_select_shape(plan, true, name) && tl_sql_exact_where(plan, f);
}

/* ---- The count ---- */

typedef struct count_file {
    tl_footer_entry *fe;
    int time_leaf, key_leaf;
    int64_t rows, row_groups_read, bytes_read; /* row groups decoded, their pages' bytes */
    bool declined; /* a column our reader cannot decode, or of another type */
} count_file;

typedef struct count_job {
    const tl_table *t;
    const tl_scan_filter *f;
    count_file *files;
} count_job;

static const tl_pq_statistics *chunk_stats(const tl_pq_file_meta *m, int g, int leaf)
{
    const tl_pq_column_chunk *c = &m->row_groups[g].columns[leaf];
    if (!c->has_meta || !c->meta.has_statistics) return NULL;
    const tl_pq_statistics *s = &c->meta.statistics;
    return s->has_min_value && s->has_max_value && s->has_null_count && s->null_count == 0 ? s
                                                                                           : NULL;
}

static int64_t le64(const tl_pq_bytes *b)
{
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++) v |= (uint64_t)b->data[i] << (8 * i);
    return (int64_t)v;
}

static bool time_inside(const tl_scan_filter *f, const tl_pq_statistics *s)
{
    if (!f->has_lo && !f->has_hi) return true;
    if (s == NULL || s->min_value.len != 8 || s->max_value.len != 8) return false;
    return (!f->has_lo || le64(&s->min_value) >= f->lo) &&
           (!f->has_hi || le64(&s->max_value) <= f->hi);
}

static bool is_key(const tl_scan_filter *f, const uint8_t *v, size_t len)
{
    for (size_t i = 0; i < f->n_keys; i++)
        if (strlen(f->keys[i]) == len && memcmp(f->keys[i], v, len) == 0) return true;
    return false;
}

static bool key_inside(const tl_scan_filter *f, const tl_pq_statistics *s)
{
    if (!f->has_keys) return true;
    return s && s->min_value.len == s->max_value.len &&
           memcmp(s->min_value.data, s->max_value.data, s->min_value.len) == 0 &&
           is_key(f, s->min_value.data, s->min_value.len);
}

/* Counts the rows of the arrays (time and key, either NULL when not tested). */
static int64_t count_rows(const tl_scan_filter *f, const struct ArrowArray *time,
                          const struct ArrowArray *key, int64_t n)
{
    const int64_t *tv = time ? (const int64_t *)time->buffers[1] + time->offset : NULL;
    const uint8_t *tvalid = time && time->null_count ? time->buffers[0] : NULL;
    const int32_t *off = key ? (const int32_t *)key->buffers[1] + key->offset : NULL;
    const uint8_t *kdata = key ? key->buffers[2] : NULL;
    const uint8_t *kvalid = key && key->null_count ? key->buffers[0] : NULL;
    int64_t lo = f->has_lo ? f->lo : INT64_MIN, hi = f->has_hi ? f->hi : INT64_MAX, rows = 0;
    for (int64_t i = 0; i < n; i++) {
        if (tv && ((tvalid && !tl_bit_get(tvalid, time->offset + i)) || tv[i] < lo || tv[i] > hi))
            continue;
        if (off && ((kvalid && !tl_bit_get(kvalid, key->offset + i)) ||
                    !is_key(f, kdata + off[i], (size_t)(off[i + 1] - off[i]))))
            continue;
        rows++;
    }
    return rows;
}

/* The rows of one row group the statistics cannot decide. */
static tl_status count_pages(count_job *j, count_file *cf, int g, bool time, bool key,
                             tl_error *err)
{
    tl_parquet_reader *r = cf->fe->reader;
    tl_row_ranges rr = {0};
    struct ArrowArray arrays[2] = {{0}};
    tl_status st = tl_page_select(j->t, r, g, j->f, 1, &rr, err);
    int64_t *bytes = &cf->bytes_read;
    cf->row_groups_read += rr.n > 0;
    if (st == TL_OK && time && !key && rr.n) { /* the time alone: counted as its pages decode */
        int64_t in = 0;
        int64_t lo = j->f->has_lo ? j->f->lo : INT64_MIN, hi = j->f->has_hi ? j->f->hi : INT64_MAX;
        st = tl_parquet_reader_count_rows(r, g, cf->time_leaf, rr.r, rr.n, lo, hi, &in, bytes, err);
        if (st == TL_OK) {
            cf->rows += in;
            tl_row_ranges_free(&rr);
            return TL_OK;
        }
        if (st == TL_ERR_NOT_FOUND) st = TL_OK; /* part of a page: read below */
    }
    if (st == TL_OK && time && rr.n)
        st = tl_parquet_reader_read_rows(r, g, cf->time_leaf, rr.r, rr.n, &arrays[0], bytes, err);
    if (st == TL_OK && key && rr.n)
        st = tl_parquet_reader_read_rows(r, g, cf->key_leaf, rr.r, rr.n, &arrays[1], bytes, err);
    if (st == TL_OK && rr.n) {
        int64_t n = tl_row_ranges_rows(&rr);
        bool usable = (!time || (arrays[0].length == n && arrays[0].n_buffers == 2)) &&
                      (!key || (arrays[1].length == n && arrays[1].n_buffers == 3));
        if (usable)
            cf->rows += count_rows(j->f, time ? &arrays[0] : NULL, key ? &arrays[1] : NULL, n);
        else
            cf->declined = true;
    }
    if (st == TL_ERR_INVALID) { /* a codec or encoding our reader lacks: DuckDB's to read */
        st = TL_OK;
        cf->declined = true;
    }
    for (int i = 0; i < 2; i++) tl_array_release(&arrays[i]);
    tl_row_ranges_free(&rr);
    return st;
}

static tl_status count_file_rows(void *ctx, size_t i, tl_error *err)
{
    count_job *j = ctx;
    count_file *cf = &j->files[i];
    const tl_pq_file_meta *m = tl_parquet_reader_meta(cf->fe->reader);
    for (int g = 0; g < tl_parquet_reader_num_row_groups(cf->fe->reader) && !cf->declined; g++) {
        if (m->row_groups[g].num_rows == 0 || !tl_row_group_needed(j->t, m, (size_t)g, j->f, 1))
            continue;
        bool t_in = time_inside(j->f, chunk_stats(m, g, cf->time_leaf));
        bool k_in = !j->f->has_keys || key_inside(j->f, chunk_stats(m, g, cf->key_leaf));
        if (t_in && k_in)
            cf->rows += m->row_groups[g].num_rows;
        else
            TL_TRY(count_pages(j, cf, g, !t_in, !k_in, err));
    }
    return TL_OK;
}

/* Whether leaf is a column of the type the count compares, which our reader
 * decodes as it compares (microseconds, strings). */
static bool leaf_is(const tl_footer_entry *fe, int leaf, bool time)
{
    const tl_pq_file_meta *m = tl_parquet_reader_meta(fe->reader);
    if (leaf < 0 || leaf >= fe->schema.n_children) return false;
    const tl_pq_schema_element *e = &m->schema[leaf + 1];
    const char *format = fe->schema.children[leaf]->format;
    if (!e->has_type) return false;
    if (!time)
        return e->type == TL_PQ_BYTE_ARRAY && e->logical.kind != TL_PQ_LT_DECIMAL &&
               strcmp(format, "u") == 0;
    if (strncmp(format, "tsu:", 4) != 0) return false;
    return e->type == TL_PQ_INT64 &&
           ((e->logical.kind == TL_PQ_LT_TIMESTAMP && e->logical.unit == TL_PQ_MICROS) ||
            (e->logical.kind == TL_PQ_LT_NONE && e->has_converted &&
             e->converted == TL_PQ_CT_TIMESTAMP_MICROS));
}

/* Footers of the needed files; *ok false when one is remote or of other columns. */
static tl_status open_files(tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                            const tl_scan_filter *f, count_file *files, size_t *n, bool *ok,
                            tl_error *err)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    *ok = true;
    for (size_t i = 0; *ok && i < lf->n; i++) {
        if (!tl_scan_file_needed(t, &lf->files[i].file, f, 1)) continue;
        if ((*ok = *n < TL_FOOTER_CACHE_MAX) == false) break; /* entries must outlive the count */
        char *path = tl_scan_local_path(t, lf->files[i].file.file_path);
        if ((*ok = path != NULL) == false) break;
        count_file *cf = &files[(*n)++];
        tl_status st = tl_footer_get(e, path, &cf->fe, err);
        free(path);
        if (st == TL_ERR_INVALID || st == TL_ERR_NOT_FOUND) {
            *ok = false;
            break;
        }
        TL_TRY(st);
        const tl_pq_file_meta *m = tl_parquet_reader_meta(cf->fe->reader);
        cf->time_leaf = tl_pq_leaf_of_field(m, &s->fields[c->time_index]);
        cf->key_leaf =
            c->series_key.len ? tl_pq_leaf_of_field(m, &s->fields[c->series_index[0]]) : -1;
        *ok = leaf_is(cf->fe, cf->time_leaf, true) &&
              (!f->has_keys || leaf_is(cf->fe, cf->key_leaf, false));
    }
    return TL_OK;
}

tl_status tl_query_count_where(tl_query_engine *e, const tl_sql_plan *plan, const char *name,
                               const tl_scan_filter *f, struct ArrowArrayStream *out,
                               tl_scan_stats *stats, bool *answered, tl_error *err)
{
    const tl_table *t = plan->refs[0].t;
    const tl_live_files *lf = NULL;
    bool known = false, ok = false;
    int64_t all = 0;
    *answered = false;
    TL_TRY(tl_query_live_files(e, t, &lf, err));
    TL_TRY(tl_scan_count(e, t, lf, &known, &all, err));
    if (!known || tl_filter_pushdown_off(e, t)) return TL_OK;
    count_file *files = calloc(lf->n + 1, sizeof *files);
    if (files == NULL) return tl_error_nomem(err);
    size_t n = 0;
    tl_footer_cache_begin(e);
    tl_status st = open_files(e, t, lf, f, files, &n, &ok, err);
    count_job job = {t, f, files};
    if (st == TL_OK && ok && n > 0)
        st = tl_parallel_run(n, n < COUNT_THREADS ? n : COUNT_THREADS, true, count_file_rows, &job,
                             err);
    int64_t rows = 0;
    tl_scan_stats read = {.files_total = (int64_t)lf->n, .files_read = (int64_t)n};
    for (size_t i = 0; i < n; i++) {
        ok &= !files[i].declined;
        rows += files[i].rows;
        read.row_groups_total += tl_parquet_reader_num_row_groups(files[i].fe->reader);
        read.row_groups_read += files[i].row_groups_read;
        read.bytes_read += files[i].bytes_read;
    }
    tl_footer_cache_end(e);
    free(files);
    if (st != TL_OK || !ok) return st;
    TL_TRY(tl_count_result(name, rows, out, err));
    tl_scan_stats_add(stats, &read);
    *answered = true;
    return TL_OK;
}
