#include "query/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strlist.h"
#include "query/engine.h"
#include "query/local_file.h"
#include "query/projection.h"
#include "query/query_columns.h"
#include "query/remote_fetch.h"
#include "query/rows_function.h"
#include "query/scan_local.h"
#include "query/selective_scan.h"
#include "table/settings.h"

void tl_scan_filter_clear(tl_scan_filter *f)
{
    for (size_t i = 0; i < f->n_keys; i++) free(f->keys[i]);
    free(f->keys);
    for (size_t i = 0; i < f->n_columns; i++) {
        tl_scan_column *c = &f->columns[i];
        for (size_t j = 0; j < c->n_values; j++) free(c->values[j]);
        free(c->values);
        free(c->lo);
        free(c->hi);
    }
    free(f->columns);
    memset(f, 0, sizeof *f);
}

bool tl_scan_is_local(const tl_table *t, const char *url)
{
    return tl_store_is_local(t->lake->store) && (url[0] == '/' || strncmp(url, "file:/", 6) == 0);
}

char *tl_scan_local_path(const tl_table *t, const char *url)
{
    if (!tl_scan_is_local(t, url)) return NULL;
    if (strncmp(url, "file://", 7) == 0) return strdup(url + 7);
    if (strncmp(url, "file:/", 6) == 0) return strdup(url + 5); /* Spark's file:/x */
    return strdup(url);
}

static const tl_ice_bound *find_bound(const tl_ice_bound *b, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].field_id == id) return &b[i];
    return NULL;
}

static int64_t le64(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len && i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    if (len == 4) return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

static bool time_overlaps(const tl_scan_filter *f, const tl_ice_bound *lo, const tl_ice_bound *hi)
{
    if (f->has_lo && hi && hi->len == 8 && le64(hi->data, 8) < f->lo) return false;
    if (f->has_hi && lo && lo->len == 8 && le64(lo->data, 8) > f->hi) return false;
    return true;
}

/* Compares a key value (text) with a bound of the key's type; -2 when unknown. */
static int compare_key(const tl_ice_type *type, const char *value, const tl_ice_bound *b)
{
    if (type->id == TL_ICE_STRING) {
        size_t n = strlen(value), m = b->len < n ? b->len : n;
        int c = memcmp(value, b->data, m);
        if (c != 0) return c < 0 ? -1 : 1;
        return n == b->len ? 0 : (n < b->len ? -1 : 1);
    }
    if (type->id == TL_ICE_INT || type->id == TL_ICE_LONG) {
        char *end;
        long long v = strtoll(value, &end, 10);
        if (*end) return -2;
        int64_t w = le64(b->data, b->len);
        return v < w ? -1 : v > w;
    }
    return -2;
}

static bool key_overlaps(const tl_ice_type *type, const tl_scan_filter *f, const tl_ice_bound *lo,
                         const tl_ice_bound *hi)
{
    if (!f->has_keys || lo == NULL || hi == NULL) return true;
    for (size_t i = 0; i < f->n_keys; i++) {
        int a = compare_key(type, f->keys[i], lo), b = compare_key(type, f->keys[i], hi);
        if (a == -2 || b == -2) return true;
        if (a >= 0 && b <= 0) return true;
    }
    return false;
}

bool tl_scan_time_bounds(const tl_table *t, const tl_ice_data_file *f, int64_t *lo, int64_t *hi)
{
    if (t->contract.time_index < 0) return false;
    int32_t id = tl_ice_metadata_current_schema(t->md)->fields[t->contract.time_index].id;
    const tl_ice_bound *l = find_bound(f->lower_bounds, f->n_lower_bounds, id);
    const tl_ice_bound *h = find_bound(f->upper_bounds, f->n_upper_bounds, id);
    if (l == NULL || h == NULL || l->len != 8 || h->len != 8) return false;
    *lo = le64(l->data, 8);
    *hi = le64(h->data, 8);
    return true;
}

bool tl_scan_file_needed(const tl_table *t, const tl_ice_data_file *f,
                         const tl_scan_filter *filters, size_t n_filters)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const tl_ice_field *tf = c->time_index >= 0 ? &s->fields[c->time_index] : NULL;
    const tl_ice_field *kf = c->series_key.len ? &s->fields[c->series_index[0]] : NULL;
    for (size_t i = 0; i < n_filters; i++) {
        const tl_scan_filter *flt = &filters[i];
        if (tf && !time_overlaps(flt, find_bound(f->lower_bounds, f->n_lower_bounds, tf->id),
                                 find_bound(f->upper_bounds, f->n_upper_bounds, tf->id)))
            continue;
        if (kf &&
            !key_overlaps(&kf->type, flt, find_bound(f->lower_bounds, f->n_lower_bounds, kf->id),
                          find_bound(f->upper_bounds, f->n_upper_bounds, kf->id)))
            continue;
        if (!tl_scan_partition_admits(t, f, flt)) continue;
        return true;
    }
    return false;
}

/* A nested type, as DuckDB spells it: STRUCT("a" BIGINT), BIGINT[], MAP(VARCHAR, DOUBLE). */
static void nested_duck_type(const tl_ice_field *f, char *buf, size_t size)
{
    char kid[TL_SCAN_DUCK_TYPE_MAX], a[TL_SCAN_DUCK_TYPE_MAX];
    size_t at = 0;
    if (f->type.id == TL_ICE_LIST && f->n_children == 1) {
        snprintf(buf, size, "%s[]", tl_scan_duck_type(&f->children[0], kid, sizeof kid));
    } else if (f->type.id == TL_ICE_MAP && f->n_children == 2) {
        snprintf(buf, size, "MAP(%s, %s)", tl_scan_duck_type(&f->children[0], a, sizeof a),
                 tl_scan_duck_type(&f->children[1], kid, sizeof kid));
    } else {
        at = (size_t)snprintf(buf, size, "STRUCT(");
        for (size_t i = 0; i < f->n_children && at < size; i++) {
            char *id = tl_sql_ident(f->children[i].name);
            at += (size_t)snprintf(buf + at, size - at, "%s%s %s", i ? ", " : "", id ? id : "x",
                                   tl_scan_duck_type(&f->children[i], kid, sizeof kid));
            free(id);
        }
        if (at < size) snprintf(buf + at, size - at, ")");
    }
}

const char *tl_scan_duck_type(const tl_ice_field *f, char *buf, size_t size)
{
    const tl_ice_type *t = &f->type;
    if (TL_ICE_TYPE_IS_NESTED(t->id)) {
        nested_duck_type(f, buf, size);
        return buf;
    }
    static const char *const names[] = {
        [TL_ICE_BOOLEAN] = "BOOLEAN",
        [TL_ICE_INT] = "INTEGER",
        [TL_ICE_LONG] = "BIGINT",
        [TL_ICE_FLOAT] = "FLOAT",
        [TL_ICE_DOUBLE] = "DOUBLE",
        [TL_ICE_DATE] = "DATE",
        [TL_ICE_TIME] = "TIME",
        [TL_ICE_TIMESTAMP] = "TIMESTAMP",
        [TL_ICE_TIMESTAMPTZ] = "TIMESTAMPTZ",
        [TL_ICE_TIMESTAMP_NS] = "TIMESTAMP_NS",
        [TL_ICE_TIMESTAMPTZ_NS] = "TIMESTAMPTZ",
        [TL_ICE_STRING] = "VARCHAR",
        [TL_ICE_UUID] = "UUID",
        [TL_ICE_FIXED] = "BLOB",
        [TL_ICE_BINARY] = "BLOB",
    };
    if (t->id == TL_ICE_DECIMAL) {
        snprintf(buf, size, "DECIMAL(%d,%d)", (int)t->precision, (int)t->scale);
        return buf;
    }
    return names[t->id];
}

tl_status tl_scan_empty_sql(const tl_table *t, tl_buf *sql, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    bool ok = tl_buf_append_str(sql, "SELECT ") == 0;
    for (size_t i = 0; ok && i < s->n_fields; i++) {
        char buf[TL_SCAN_DUCK_TYPE_MAX], *id = tl_sql_ident(s->fields[i].name);
        ok = id && tl_buf_printf(sql, "%sNULL::%s AS %s", i ? ", " : "",
                                 tl_scan_duck_type(&s->fields[i], buf, sizeof buf), id) == 0;
        free(id);
    }
    ok = ok && tl_buf_append_str(sql, " WHERE false") == 0;
    return ok ? TL_OK : tl_error_nomem(err);
}

/* ---- Overlap and dedup ---- */

/* Whether reads of t leave out older writes of a (series key..., time): a
 * dedup table, unless the read-dedup setting (the session's, else the
 * table's) turns it off. */
static bool reads_dedup(const tl_query_engine *e, const tl_table *t)
{
    return t->contract.dedup && t->contract.time_index >= 0 &&
           tl_setting_flag(t->md, e->settings, "read-dedup", true);
}

typedef struct picked {
    const tl_live_file *f;
    char *path;     /* where DuckDB reads it */
    int64_t part;   /* partition value (0 when unpartitioned) */
    int64_t lo, hi; /* time bounds (whole range when unknown) */
    bool dedup;     /* overlaps another file of its partition */
    size_t at;      /* its index in the caller's list (tl_scan_overlaps) */
} picked;

static int by_part_lo(const void *a, const void *b)
{
    const picked *x = a, *y = b;
    if (x->part != y->part) return x->part < y->part ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Marks the files whose time range overlaps another's in their partition. */
static void mark_overlaps(picked *p, size_t n)
{
    qsort(p, n, sizeof *p, by_part_lo);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        int64_t hi = p[i].hi;
        while (j < n && p[j].part == p[i].part && p[j].lo <= hi) {
            if (p[j].hi > hi) hi = p[j].hi;
            j++;
        }
        for (size_t k = i; j - i > 1 && k < j; k++) p[k].dedup = true;
        i = j;
    }
}

static tl_status append_list(tl_buf *sql, const picked *p, size_t n, bool dedup, tl_error *err)
{
    bool ok = tl_buf_append_byte(sql, '[') == 0, first = true;
    for (size_t i = 0; ok && i < n; i++) {
        if (p[i].dedup != dedup) continue;
        char *lit = tl_sql_literal(p[i].path);
        ok = lit && tl_buf_printf(sql, "%s%s", first ? "" : ", ", lit) == 0;
        free(lit);
        first = false;
    }
    ok = ok && tl_buf_append_byte(sql, ']') == 0;
    return ok ? TL_OK : tl_error_nomem(err);
}

/* The columns that rank the writes of one (series key..., time):
 * "<key...>, <time>" for PARTITION BY, and the ORDER BY that puts the
 * latest write first (higher ingest time, then later commit, then later row). */
static tl_status rank_window(const tl_table *t, tl_buf *sql, tl_error *err)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    bool ok = tl_buf_append_str(sql, "row_number() OVER (PARTITION BY ") == 0;
    for (size_t i = 0; ok && i <= c->series_key.len; i++) {
        int col = i < c->series_key.len ? c->series_index[i] : c->time_index;
        char *id = tl_sql_ident(s->fields[col].name);
        ok = id && tl_buf_printf(sql, "%s%s", i ? ", " : "", id) == 0;
        free(id);
    }
    ok = ok && tl_buf_append_str(sql, " ORDER BY ") == 0;
    if (ok && c->ingest_column) {
        char *id = tl_sql_ident(c->ingest_column);
        ok = id && tl_buf_printf(sql, "%s DESC, ", id) == 0;
        free(id);
    }
    ok = ok && tl_buf_append_str(sql, "__tl_seq DESC, file_row_number DESC) AS __tl_rn") == 0;
    return ok ? TL_OK : tl_error_nomem(err);
}

/* The rows of the overlapping files with `cols`, their file (__tl_file) and
 * row (file_row_number), and with `seq` the file's data sequence number
 * (__tl_seq). */
static tl_status overlapping_rows(const tl_table *t, const picked *p, size_t n, const char *cols,
                                  bool seq, tl_buf *sql, tl_error *err)
{
    bool ok = tl_buf_printf(sql, "(SELECT %s%s", cols, seq ? ", CASE __tl_file" : "") == 0;
    for (size_t i = 0; ok && seq && i < n; i++) {
        if (!p[i].dedup) continue;
        char *lit = tl_sql_literal(p[i].path);
        ok = lit &&
             tl_buf_printf(sql, " WHEN %s THEN %lld", lit, (long long)p[i].f->sequence_number) == 0;
        free(lit);
    }
    ok = ok && tl_buf_append_str(sql, seq ? " END AS __tl_seq FROM read_parquet("
                                          : " FROM read_parquet(") == 0;
    if (!ok) return tl_error_nomem(err);
    TL_TRY(append_list(sql, p, n, true, err));
    TL_TRY(tl_projection_option(t, sql, err));
    ok = tl_buf_append_str(sql, ", " TL_SCAN_OPTIONS ", filename = '__tl_file', "
                                "file_row_number = true))") == 0;
    return ok ? TL_OK : tl_error_nomem(err);
}

/* The "merge" strategy: every column of the overlapping files is ranked by
 * key, and the first of each key kept. */
static tl_status dedup_merge_sql(const tl_table *t, const picked *p, size_t n, tl_buf *sql,
                                 tl_error *err)
{
    bool ok = tl_buf_append_str(sql, "SELECT * EXCLUDE (__tl_file, file_row_number, __tl_seq, "
                                     "__tl_rn) FROM (SELECT *, ") == 0;
    tl_status st = ok ? rank_window(t, sql, err) : tl_error_nomem(err);
    if (st == TL_OK && tl_buf_append_str(sql, " FROM ") != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = overlapping_rows(t, p, n, "*", true, sql, err);
    if (st == TL_OK && tl_buf_append_str(sql, ") WHERE __tl_rn = 1") != 0) st = tl_error_nomem(err);
    return st;
}

/* The "keys-first" strategy: the older copies are found from the key
 * columns alone (series key, time, ingest time, file and row), then the
 * files are read like any scan and those rows left out. */
static tl_status dedup_keys_first_sql(const tl_table *t, const picked *p, size_t n, tl_buf *sql,
                                      tl_error *err)
{
    const tl_contract *c = &t->contract;
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    tl_buf cols = {0};
    bool ok = true;
    for (size_t i = 0; ok && i <= c->series_key.len; i++) {
        int col = i < c->series_key.len ? c->series_index[i] : c->time_index;
        char *id = tl_sql_ident(s->fields[col].name);
        ok = id && tl_buf_printf(&cols, "%s, ", id) == 0;
        free(id);
    }
    if (ok && c->ingest_column) {
        char *id = tl_sql_ident(c->ingest_column);
        ok = id && tl_buf_printf(&cols, "%s, ", id) == 0;
        free(id);
    }
    ok = ok && tl_buf_append_str(&cols, "__tl_file, file_row_number") == 0 &&
         tl_buf_append_byte(&cols, 0) == 0;
    ok = ok && tl_buf_append_str(sql, "SELECT * EXCLUDE (__tl_file, file_row_number) FROM ") == 0;
    tl_status st = ok ? overlapping_rows(t, p, n, "*", false, sql, err) : tl_error_nomem(err);
    if (st == TL_OK && tl_buf_append_str(sql, " AS __tl_all ANTI JOIN (SELECT __tl_file AS __tl_f, "
                                              "file_row_number AS __tl_r FROM (SELECT __tl_file, "
                                              "file_row_number, ") != 0)
        st = tl_error_nomem(err);
    if (st == TL_OK) st = rank_window(t, sql, err);
    if (st == TL_OK && tl_buf_append_str(sql, " FROM ") != 0) st = tl_error_nomem(err);
    if (st == TL_OK) st = overlapping_rows(t, p, n, (const char *)cols.data, true, sql, err);
    if (st == TL_OK && tl_buf_append_str(sql, ") WHERE __tl_rn > 1) AS __tl_old ON "
                                              "__tl_all.__tl_file = __tl_old.__tl_f AND "
                                              "__tl_all.file_row_number = __tl_old.__tl_r") != 0)
        st = tl_error_nomem(err);
    tl_buf_free(&cols);
    return st;
}

/* The latest write of each (series key..., time) among the overlapping
 * files, by the read-dedup-strategy setting. */
static tl_status dedup_sql(const tl_query_engine *e, const tl_table *t, const picked *p, size_t n,
                           tl_buf *sql, tl_error *err)
{
    const char *strategy = tl_setting_value(t->md, e->settings, "read-dedup-strategy");
    if (strategy && tl_setting_is(strategy, "keys-first"))
        return dedup_keys_first_sql(t, p, n, sql, err);
    return dedup_merge_sql(t, p, n, sql, err);
}

static void bounds_of(const tl_table *t, const tl_live_file *lf, picked *p)
{
    const tl_contract *c = &t->contract;
    p->f = lf;
    p->part = lf->file.n_partition ? lf->file.partition[0].i : 0;
    p->lo = INT64_MIN;
    p->hi = INT64_MAX;
    if (c->time_index < 0) return;
    int32_t id = tl_ice_metadata_current_schema(t->md)->fields[c->time_index].id;
    const tl_ice_bound *lo = find_bound(lf->file.lower_bounds, lf->file.n_lower_bounds, id);
    const tl_ice_bound *hi = find_bound(lf->file.upper_bounds, lf->file.n_upper_bounds, id);
    if (lo && lo->len == 8) p->lo = le64(lo->data, 8);
    if (hi && hi->len == 8) p->hi = le64(hi->data, 8);
}

static void free_picked(picked *p, size_t n)
{
    for (size_t i = 0; i < n; i++) free(p[i].path);
    free(p);
}

/* Local files: the row groups and bytes the query reads, from their footers;
 * a file none of whose row groups can match is left out (path NULL). */
static tl_status exact_local_reads(tl_query_engine *e, const tl_table *t, tl_fetch_file *ff,
                                   size_t n, const tl_scan_filter *filters, size_t n_filters,
                                   tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    bool *fields = NULL;
    for (size_t i = 0; i < n; i++) {
        if (ff[i].path == NULL || !tl_scan_is_local(t, ff[i].f->file.file_path)) continue;
        if (fields == NULL) {
            if ((fields = calloc(s->n_fields + 1, sizeof *fields)) == NULL)
                return tl_error_nomem(err);
            tl_query_columns(e, e->query_text, t, fields);
        }
        tl_scan_local_read r;
        tl_status st = tl_scan_local_read_of(t, ff[i].path, fields, filters, n_filters, &r, err);
        if (st != TL_OK) {
            free(fields);
            return st;
        }
        ff[i].row_groups_total = r.row_groups_total;
        ff[i].row_groups_read = r.row_groups_read;
        ff[i].bytes_read = r.bytes_read;
        if (r.row_groups_read == 0 && r.row_groups_total > 0) {
            free(ff[i].path);
            ff[i].path = NULL;
        }
    }
    free(fields);
    return TL_OK;
}

void tl_scan_stats_add(tl_scan_stats *to, const tl_scan_stats *from)
{
    to->files_total += from->files_total;
    to->files_read += from->files_read;
    to->row_groups_total += from->row_groups_total;
    to->row_groups_read += from->row_groups_read;
    to->bytes_read += from->bytes_read;
}

tl_status tl_scan_count(const tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                        bool *known, int64_t *rows, tl_error *err)
{
    *known = lf->delete_files == 0;
    *rows = 0;
    for (size_t i = 0; i < lf->n; i++) *rows += lf->files[i].file.record_count;
    if (!*known || !reads_dedup(e, t)) return TL_OK;
    picked *p = calloc(lf->n + 1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < lf->n; i++) bounds_of(t, &lf->files[i], &p[i]);
    mark_overlaps(p, lf->n);
    for (size_t i = 0; i < lf->n; i++) *known &= !p[i].dedup;
    free(p);
    return TL_OK;
}

tl_status tl_scan_pending(const tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                          bool *pending, tl_error *err)
{
    memset(pending, 0, lf->n * sizeof *pending);
    if (!reads_dedup(e, t)) return TL_OK;
    picked *p = calloc(lf->n + 1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < lf->n; i++) bounds_of(t, &lf->files[i], &p[i]);
    mark_overlaps(p, lf->n); /* sorts p: each finds its file by address */
    for (size_t i = 0; i < lf->n; i++) pending[p[i].f - lf->files] = p[i].dedup;
    free(p);
    return TL_OK;
}

tl_status tl_scan_overlaps(const tl_query_engine *e, const tl_table *t,
                           const tl_live_file *const *files, size_t n, bool *dedup, tl_error *err)
{
    memset(dedup, 0, n * sizeof *dedup);
    if (!reads_dedup(e, t)) return TL_OK;
    picked *p = calloc(n + 1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        bounds_of(t, files[i], &p[i]);
        p[i].at = i;
    }
    mark_overlaps(p, n);
    for (size_t i = 0; i < n; i++) dedup[p[i].at] = p[i].dedup;
    free(p);
    return TL_OK;
}

/* Whether rows of one (series key..., time) may lie in two of the files
 * (then they are deduplicated on read, which the selective scan does not do). */
static tl_status any_overlap(const tl_query_engine *e, const tl_table *t, const tl_fetch_file *ff,
                             size_t n, bool *out, tl_error *err)
{
    *out = false;
    if (!reads_dedup(e, t)) return TL_OK;
    picked *p = calloc(n + 1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ff[i].path) bounds_of(t, ff[i].f, &p[k++]);
    mark_overlaps(p, k);
    for (size_t i = 0; i < k; i++) *out |= p[i].dedup;
    free(p);
    return TL_OK;
}

/* The selective scan (selective_scan.h) of the fetched files; *id 0 when
 * declined. Local files count what it reads; remote ones what was fetched. */
static tl_status try_selective(tl_query_engine *e, const tl_table *t, tl_fetch_file *ff, size_t n,
                               const tl_scan_filter *filters, size_t n_filters,
                               tl_scan_stats *stats, int64_t *id, tl_error *err)
{
    bool overlap = false;
    *id = 0;
    TL_TRY(any_overlap(e, t, ff, n, &overlap, err));
    if (overlap) return TL_OK;
    tl_selective_file *sf = calloc(n + 1, sizeof *sf);
    size_t *of = calloc(n + 1, sizeof *of);
    tl_status st = sf && of ? TL_OK : tl_error_nomem(err);
    size_t k = 0;
    for (size_t i = 0; st == TL_OK && i < n; i++)
        if (ff[i].path) {
            of[k] = i;
            sf[k++].path = ff[i].path;
        }
    bool exact = false;
    if (st == TL_OK) st = tl_selective_scan(e, t, sf, k, filters, n_filters, id, &exact, err);
    if (st == TL_OK && *id && exact) stats->exact_views++;
    for (size_t j = 0; st == TL_OK && *id && j < k; j++) {
        const tl_fetch_file *f = &ff[of[j]];
        if (tl_scan_is_local(t, f->f->file.file_path)) {
            stats->files_read += sf[j].row_groups_read > 0;
            stats->row_groups_total += sf[j].row_groups_total;
            stats->row_groups_read += sf[j].row_groups_read;
            stats->bytes_read += sf[j].row_groups_read > 0 ? sf[j].bytes_read : 0;
        } else {
            stats->files_read++;
            stats->row_groups_total += f->row_groups_total;
            stats->row_groups_read += f->row_groups_read;
            stats->bytes_read += f->bytes_read;
        }
    }
    free(sf);
    free(of);
    return st;
}

static tl_status rows_sql(int64_t id, tl_buf *sql, tl_error *err)
{
    return tl_buf_printf(sql, "SELECT * FROM " TL_ROWS_FUNCTION "(%lld)", (long long)id) == 0
               ? TL_OK
               : tl_error_nomem(err);
}

tl_status tl_scan_sql(tl_query_engine *e, const tl_table *t, const tl_live_files *lf,
                      const tl_scan_filter *filters, size_t n_filters, bool all_files, tl_buf *sql,
                      tl_scan_stats *stats, tl_error *err)
{
    picked *p = calloc(lf->n + 1, sizeof *p);
    tl_fetch_file *ff = calloc(lf->n + 1, sizeof *ff);
    if (p == NULL || ff == NULL) {
        free(p);
        free(ff);
        return tl_error_nomem(err);
    }
    size_t n = 0;
    stats->files_total += (int64_t)lf->n;
    for (size_t i = 0; i < lf->n; i++) {
        if (!all_files && !tl_scan_file_needed(t, &lf->files[i].file, filters, n_filters)) continue;
        bounds_of(t, &lf->files[i], &p[n]);
        ff[n++].f = &lf->files[i];
    }
    /* Remote files: fetched in one parallel batch, large ones by ranges. */
    tl_status fst = tl_query_fetch(e, t, ff, n, filters, all_files ? 0 : n_filters, err);
    int64_t rows_id = 0;
    if (fst == TL_OK && !all_files && n_filters > 0)
        fst = try_selective(e, t, ff, n, filters, n_filters, stats, &rows_id, err);
    if (fst == TL_OK && rows_id) {
        for (size_t i = 0; i < n; i++) free(ff[i].path);
        free(ff);
        free(p);
        return rows_sql(rows_id, sql, err);
    }
    if (fst == TL_OK && stats->exact)
        fst = exact_local_reads(e, t, ff, n, filters, all_files ? 0 : n_filters, err);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (fst == TL_OK && ff[i].path == NULL) continue; /* no row group can match */
        p[kept] = p[i];
        p[kept++].path = ff[i].path;
        if (fst != TL_OK) continue;
        stats->files_read++;
        stats->row_groups_total += ff[i].row_groups_total;
        stats->row_groups_read += ff[i].row_groups_read;
        /* Remote files: the bytes fetched (none when already here). */
        bool local = tl_scan_is_local(t, ff[i].f->file.file_path);
        stats->bytes_read +=
            local && !stats->exact ? ff[i].f->file.file_size_in_bytes : ff[i].bytes_read;
    }
    free(ff);
    n = kept;
    if (fst != TL_OK) {
        free_picked(p, n);
        return fst;
    }
    tl_status st = TL_OK;
    if (n == 0) {
        st = tl_scan_empty_sql(t, sql, err);
        free_picked(p, n);
        return st;
    }
    if (reads_dedup(e, t)) mark_overlaps(p, n);
    size_t n_dedup = 0;
    for (size_t i = 0; i < n; i++) n_dedup += p[i].dedup;
    if (n_dedup < n) {
        st = tl_buf_append_str(sql, "SELECT * FROM read_parquet(") == 0 ? TL_OK
                                                                        : tl_error_nomem(err);
        if (st == TL_OK) st = append_list(sql, p, n, false, err);
        if (st == TL_OK) st = tl_projection_option(t, sql, err);
        if (st == TL_OK && tl_buf_append_str(sql, ", " TL_SCAN_OPTIONS ")") != 0)
            st = tl_error_nomem(err);
    }
    if (st == TL_OK && n_dedup > 0 && n_dedup < n &&
        tl_buf_append_str(sql, " UNION ALL BY NAME ") != 0)
        st = tl_error_nomem(err);
    if (st == TL_OK && n_dedup > 0) st = dedup_sql(e, t, p, n, sql, err);
    free_picked(p, n);
    return st;
}
