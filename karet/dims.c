/* Loading dimension rows. */
#include "dims.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "files.h"
#include "kset.h"
#include "strbuf.h"

static tl_status fail(tl_error *err, tl_status st, const char *fmt, const char *a, const char *b)
{
    kbuf m = {0}; /* formatted at any length, then cut to fit */
    kbuf_printf(&m, fmt, a, b);
    err->code = st;
    snprintf(err->message, sizeof err->message, "%s", kbuf_cstr(&m));
    kbuf_free(&m);
    return st;
}

/* Appends the rows of one batch (columns key, values..., [priority]) as the
 * peer reads them: a row without a key is skipped, a missing value is "",
 * a priority that is not a whole number is 0. */
static bool add_rows(kdim_rows *r, const kdimension *d, const kbatch *b)
{
    size_t w = 1 + d->nvalues, n = (size_t)b->array.length;
    char **cells = realloc(r->cells, (r->nrows + n) * w * sizeof *cells);
    if (cells == NULL) return false;
    r->cells = cells;
    double *prio = realloc(r->priority, (r->nrows + n) * sizeof *prio);
    if (prio == NULL) return false;
    r->priority = prio;
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        kcol key = kbatch_col(b, 0);
        if (kcol_is_null(key, (int64_t)i) || !kcol_string(key, (int64_t)i, &s, &len) || len == 0)
            continue;
        char **row = &r->cells[r->nrows * w];
        bool ok = (row[0] = strndup(s, len)) != NULL;
        for (size_t c = 1; c < w; c++) {
            kcol col = kbatch_col(b, (int)c);
            if (kcol_is_null(col, (int64_t)i) || !kcol_string(col, (int64_t)i, &s, &len))
                s = "", len = 0;
            ok &= (row[c] = strndup(s, len)) != NULL;
        }
        int64_t p = 0;
        if (d->priority_column) {
            kcol col = kbatch_col(b, (int)w);
            if (kcol_is_null(col, (int64_t)i) || !kcol_int(col, (int64_t)i, &p)) p = 0;
        }
        r->priority[r->nrows++] = (double)p;
        if (!ok) return false;
    }
    return true;
}

/* Exact keys must be unique (after case folding when case-insensitive). */
static tl_status check_unique(const kdimension *d, const kdim_rows *r, tl_error *err)
{
    if (d->match != KM_EXACT) return TL_OK;
    kset keys = {0};
    tl_status st = TL_OK;
    for (size_t i = 0; i < r->nrows && st == TL_OK; i++) {
        char *k = strdup(r->cells[i * r->width]);
        if (k == NULL) return fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
        for (char *c = k; d->case_insensitive && *c; c++) *c = (char)tolower((unsigned char)*c);
        int added = kset_add(&keys, k, strlen(k));
        if (added < 0) st = fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
        if (added == 0)
            st = fail(err, TL_ERR_INVALID,
                      "dimension \"%s\" has the key \"%s\" twice (exact keys must be unique)",
                      d->id, r->cells[i * r->width]);
        free(k);
    }
    kset_free(&keys);
    return st;
}

static tl_status read_file(tl_lake *objects, const kdimension *d, const char *key, kdim_rows *rows,
                           tl_error *err)
{
    tl_read_column cols[66];
    size_t n = 0;
    cols[n++] = (tl_read_column){d->key_column, NULL, "string"};
    for (size_t i = 0; i < d->nvalues && n < 64; i++)
        cols[n++] = (tl_read_column){d->value_columns[i], NULL, "string"};
    if (d->priority_column) cols[n++] = (tl_read_column){d->priority_column, NULL, "int64"};
    void *data = NULL;
    size_t len = 0;
    tl_status st = tl_lake_get_object(objects, key, &data, &len, err);
    if (st != TL_OK) return st;
    tl_read_options ro = {
        .format = "csv", .name = key, .columns = cols, .columns_len = n, .lenient = 1};
    tl_reader *reader = NULL;
    struct ArrowArrayStream s = {0};
    kbatches batches = {0};
    char msg[512] = "";
    st = tl_reader_open(data, len, &ro, &reader, err);
    if (st == TL_OK) st = tl_reader_stream(reader, &s, err);
    if (st == TL_OK && kbatches_drain(&s, &batches, msg, sizeof msg) != 0)
        st = fail(err, TL_ERR_INVALID, "%s%s", msg, "");
    for (size_t i = 0; st == TL_OK && i < batches.len; i++)
        if (!add_rows(rows, d, &batches.items[i]))
            st = fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
    kbatches_free(&batches);
    tl_reader_close(reader);
    tl_free(data);
    if (st != TL_OK && st != TL_ERR_NOMEM && st != TL_ERR_STORAGE) {
        char inner[900];
        snprintf(inner, sizeof inner, "%.850s", err->message);
        snprintf(err->message, sizeof err->message, "dimension \"%.100s\": %s", d->id, inner);
    }
    return st;
}

static tl_status load_file_dim(tl_lake *objects, const kdimension *d, kdim_rows *rows, json_t *list,
                               tl_error *err)
{
    kfiles files = {0};
    size_t n = strlen(d->path_prefix);
    tl_status st = TL_OK;
    rows->width = 1 + d->nvalues;
    if (d->path_prefix[n - 1] == '/') {
        tl_object *objs = NULL;
        size_t len = 0;
        st = tl_lake_list_objects(objects, d->path_prefix, 1, &objs, &len, err);
        ksource csv = {.format = KF_CSV};
        for (size_t i = 0; st == TL_OK && i < len; i++)
            if (ksource_wants(&csv, objs[i].key) &&
                !kfiles_add(&files, objs[i].key, objs[i].size, objs[i].etag, NULL))
                st = fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
        tl_objects_free(objs, len);
    } else {
        tl_object o = {0};
        st = tl_lake_stat_object(objects, d->path_prefix, &o, err);
        if (st == TL_ERR_NOT_FOUND)
            st = fail(err, TL_ERR_INVALID, "dimension \"%s\": no file %s in the lake", d->id,
                      d->path_prefix);
        else if (st == TL_OK && !kfiles_add(&files, o.key, o.size, o.etag, NULL))
            st = fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
        tl_object_clear(&o);
    }
    kfiles_sort(&files);
    for (size_t i = 0; st == TL_OK && i < files.len; i++) {
        st = read_file(objects, d, files.items[i].key, rows, err);
        json_array_append_new(list, json_pack("[s, s]", files.items[i].key, files.items[i].etag));
    }
    kfiles_free(&files);
    if (st == TL_OK) st = check_unique(d, rows, err);
    return st;
}

tl_status kdims_load(tl_lake *objects, const kconfig *c, const bool *used, kdim_rows *rows,
                     json_t **files, tl_error *err)
{
    *files = json_object();
    if (*files == NULL) return fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
    for (size_t i = 0; i < c->ndims; i++) {
        const kdimension *d = &c->dims[i];
        if (!used[i]) continue;
        if (d->rows) {
            if (!kdim_rows_inline(d, &rows[i]))
                return fail(err, TL_ERR_NOMEM, "out of memory%s%s", "", "");
            continue;
        }
        json_t *list = json_array();
        json_object_set_new(*files, d->id, list);
        tl_status st = load_file_dim(objects, d, &rows[i], list, err);
        if (st != TL_OK) return st;
    }
    return TL_OK;
}
