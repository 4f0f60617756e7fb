/* Reading, mapping, checking and deduplicating the files of one table. */
#include "feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "strbuf.h"

#define KEEP_PROBLEMS 1000

const char *ktype_arrow(ktype t)
{
    switch (t) {
    case KT_INT64:
        return "l";
    case KT_FLOAT64:
        return "g";
    case KT_BOOL:
        return "b";
    case KT_DATE:
        return "tdD";
    default:
        return "u";
    }
}

bool ktable_arrow_schema(const ktable *t, struct ArrowSchema *out)
{
    const char *formats[256], *names[256];
    if (t->ncolumns > 256) return false;
    for (size_t i = 0; i < t->ncolumns; i++) {
        formats[i] = ktype_arrow(t->columns[i].type);
        names[i] = t->columns[i].name;
    }
    return kschema_struct(out, formats, names, t->ncolumns);
}

bool kfeed_init(kfeed *f)
{
    f->read = json_array();
    f->errors = json_array();
    f->skipped = json_array();
    f->sql = calloc(f->config->nsources + 1, sizeof *f->sql);
    f->failed_why = calloc(f->config->nmappings + 1, sizeof *f->failed_why);
    f->status = KARET_OK;
    return f->read && f->errors && f->skipped && f->sql && f->failed_why &&
           ktable_arrow_schema(f->table, &f->schema);
}

void kfeed_free(kfeed *f)
{
    json_decref(f->read);
    json_decref(f->errors);
    json_decref(f->skipped);
    for (size_t i = 0; f->sql && i < f->config->nsources; i++) free(f->sql[i]);
    free(f->sql);
    for (size_t i = 0; f->failed_why && i < f->config->nmappings; i++) free(f->failed_why[i]);
    free(f->failed_why);
    for (size_t i = f->pending_next; i < f->pending.len; i++) kbatch_release(&f->pending.items[i]);
    free(f->pending.items);
    kset_free(&f->seen);
    if (f->schema.release) f->schema.release(&f->schema);
    memset(f, 0, sizeof *f);
}

static int fail(kfeed *f, int status, const char *fmt, const char *a, const char *b)
    __attribute__((format(printf, 3, 0)));

static int fail(kfeed *f, int status, const char *fmt, const char *a, const char *b)
{
    kbuf m = {0}; /* formatted at any length, then cut to fit */
    kbuf_printf(&m, fmt, a, b);
    f->status = status;
    snprintf(f->error, sizeof f->error, "%s", kbuf_cstr(&m));
    kbuf_free(&m);
    return -1;
}

static int from_tl(kfeed *f, tl_status st, const char *what, const tl_error *err)
{
    int status =
        st == TL_ERR_STORAGE || st == TL_ERR_CONFLICT ? KARET_ERR_TRANSIENT : KARET_ERR_FAILED;
    return fail(f, status, "%s: %s", what, err->message);
}

static void note_read(kfeed *f, const kfile *file, bool error, int64_t rows)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:I}", "key", file->key, "size", (json_int_t)file->size,
                          "etag", file->etag, "rows", (json_int_t)rows);
    if (o && error) json_object_set_new(o, "error", json_true());
    json_array_append_new(f->read, o);
}

static void file_error(kfeed *f, const kfile *file, const char *message)
{
    f->stats.errors++;
    if (json_array_size(f->errors) < KEEP_PROBLEMS)
        json_array_append_new(
            f->errors, json_pack("{s:s, s:n, s:s}", "file", file->key, "line", "message", message));
    note_read(f, file, true, 0);
}

static void note_skipped(kfeed *f, const kfile *file, const tl_read_report *rep)
{
    f->stats.lines_skipped += rep->lines_skipped;
    f->stats.values_nulled += rep->values_nulled;
    for (size_t i = 0; i < rep->problems_len && json_array_size(f->skipped) < KEEP_PROBLEMS; i++) {
        const tl_read_problem *p = &rep->problems[i];
        char reason[1200];
        if (p->column)
            snprintf(reason, sizeof reason, "column %s: %s (value read as null)", p->column,
                     p->message);
        else
            snprintf(reason, sizeof reason, "%s (line skipped)", p->message);
        json_array_append_new(f->skipped, json_pack("{s:s, s:I, s:s}", "file", file->key, "line",
                                                    (json_int_t)p->line, "reason", reason));
    }
}

/* The file's rows, each numbered in "__karet_row". Returns 0, 1 for a file
 * that cannot be read (recorded), -1 for a failure of the run. */
static int read_rows(kfeed *f, const kfile *file, const void *data, size_t len, tl_reader **reader,
                     kbatches *out)
{
    const ksource *s = file->source;
    tl_read_column cols[256];
    size_t n = s->ncolumns < 256 ? s->ncolumns : 256;
    for (size_t i = 0; i < n; i++)
        cols[i] = (tl_read_column){s->columns[i].name, s->columns[i].path,
                                   ktype_name(s->columns[i].type)};
    tl_read_options ro = {.format = s->format == KF_CSV ? "csv" : "ndjson",
                          .name = file->key,
                          .columns = cols,
                          .columns_len = n,
                          .lenient = 1};
    tl_error err = {0};
    struct ArrowArrayStream stream = {0};
    if (tl_reader_open(data, len, &ro, reader, &err) != TL_OK ||
        tl_reader_stream(*reader, &stream, &err) != TL_OK) {
        if (err.code == TL_ERR_NOMEM) return fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        file_error(f, file, err.message);
        return 1;
    }
    char msg[1024] = "";
    if (kbatches_drain(&stream, out, msg, sizeof msg) != 0) {
        file_error(f, file, msg);
        return 1;
    }
    int64_t next = 0;
    for (size_t i = 0; i < out->len; i++)
        if (!kbatch_add_row_numbers(&out->items[i], KARET_COL_ROW, &next))
            return fail(f, KARET_ERR_FAILED, "%s%s", "out of memory numbering rows", "");
    tl_read_report rep;
    tl_reader_report(*reader, &rep);
    note_skipped(f, file, &rep);
    f->stats.rows_read += rep.rows;
    return 0;
}

static const char *source_sql(kfeed *f, const ksource *s)
{
    if (f->sql[s->index] == NULL) {
        kbuf b = {0};
        kcompile_table(f->config, f->table, s, f->dims, &b);
        f->sql[s->index] = kbuf_take(&b);
    }
    return f->sql[s->index];
}

/* Runs the mappings over the file's rows (consumed). */
static int map_rows(kfeed *f, const kfile *file, kbatches *rows, kbatches *out)
{
    const char *sql = source_sql(f, file->source);
    if (sql == NULL) return fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    struct ArrowArrayStream in = {0}, result = {0};
    if (!kbatches_stream(rows, &rows->items[0].schema, &in))
        return fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    tl_sql_input input = {KARET_SRC, &in};
    tl_sql_options so = {.inputs = &input, .inputs_len = 1, .only_namespace = 1};
    tl_error err = {0};
    tl_status st = tl_lake_query(f->objects, sql, &so, &result, NULL, &err);
    if (st != TL_OK) {
        char what[1200];
        snprintf(what, sizeof what, "mapping the rows of %s into table %s", file->key,
                 f->table->id);
        return from_tl(f, st, what, &err);
    }
    char msg[1024] = "";
    if (kbatches_drain(&result, out, msg, sizeof msg) != 0)
        return fail(f, KARET_ERR_FAILED, "mapping the rows of %s: %s", file->key, msg);
    return 0;
}

static const char *mapping_id(const kfeed *f, int64_t m)
{
    return m >= 0 && (size_t)m < f->config->nmappings ? f->config->mappings[m].id : "?";
}

/* Marks the mappings whose rows of this file break an assertion. */
static void find_broken(kfeed *f, const kfile *file, const kbatches *res, bool *bad)
{
    for (size_t i = 0; i < res->len; i++) {
        const kbatch *b = &res->items[i];
        kcol m = kbatch_col(b, kbatch_column(&b->schema, KARET_COL_MAPPING));
        kcol row = kbatch_col(b, kbatch_column(&b->schema, KARET_COL_ROW));
        kcol viol = kbatch_col(b, kbatch_column(&b->schema, KARET_COL_VIOLATION));
        for (int64_t r = 0; r < b->array.length; r++) {
            if (kcol_is_null(viol, r)) continue;
            int64_t mi = 0, ri = 0;
            const char *s;
            size_t len;
            kcol_int(m, r, &mi);
            kcol_int(row, r, &ri);
            if (mi < 0 || (size_t)mi >= f->config->nmappings || !kcol_string(viol, r, &s, &len))
                continue;
            char msg[1500];
            snprintf(msg, sizeof msg, "%s row %lld: %.*s", file->key, (long long)(ri + 1),
                     (int)(len < 1200 ? len : 1200), s);
            if (!bad[mi] && f->failed_why[mi] == NULL) f->failed_why[mi] = strdup(msg);
            bad[mi] = true;
            f->stats.errors++;
            if (json_array_size(f->errors) >= KEEP_PROBLEMS) continue;
            snprintf(msg, sizeof msg,
                     "mapping %s breaks an assertion (%.*s): the mapping writes nothing until a "
                     "full run finds no such row",
                     mapping_id(f, mi), (int)(len < 1200 ? len : 1200), s);
            json_array_append_new(f->errors,
                                  json_pack("{s:s, s:n, s:I, s:s, s:s}", "file", file->key, "line",
                                            "row", (json_int_t)(ri + 1), "mapping",
                                            mapping_id(f, mi), "message", msg));
        }
    }
}

/* Mappings that broke an assertion in this file fail. The table is then
 * built again by a full run that knows it from the start, so that none of
 * their rows is written and the record names them. */
static int fail_mappings(kfeed *f, const bool *bad)
{
    for (size_t m = 0; m < f->config->nmappings; m++)
        if (bad[m] && !f->failed[m]) {
            f->failed[m] = true;
            return fail(f, KFEED_RESTART, "mapping %s breaks an assertion%s",
                        f->config->mappings[m].id, "");
        }
    return 0;
}

/* Keeps the rows of good mappings whose key is new, as batches of the table's
 * columns, in f->pending. */
static int keep_rows(kfeed *f, kbatches *res)
{
    const ktable *t = f->table;
    int cols[256];
    int64_t *rows = NULL;
    kbuf key = {0};
    for (size_t i = 0; i < res->len; i++) {
        kbatch *b = &res->items[i];
        for (size_t c = 0; c < t->ncolumns; c++)
            if ((cols[c] = kbatch_column(&b->schema, t->columns[c].name)) < 0)
                return fail(f, KARET_ERR_FAILED, "the mapping query lost column %s%s",
                            t->columns[c].name, "");
        kcol m = kbatch_col(b, kbatch_column(&b->schema, KARET_COL_MAPPING));
        int64_t *p = realloc(rows, (size_t)(b->array.length + 1) * sizeof *rows);
        if (p == NULL) goto oom;
        rows = p;
        size_t n = 0;
        for (int64_t r = 0; r < b->array.length; r++) {
            int64_t mi = -1;
            kcol_int(m, r, &mi);
            if (mi < 0 || (size_t)mi >= f->config->nmappings || f->failed[mi]) continue;
            if (t->ndedup) {
                kbuf_truncate(&key, 0);
                for (size_t k = 0; k < t->ndedup; k++)
                    kcol_key(kbatch_col(b, cols[t->dedup[k]]), r, &key);
                int added = key.oom ? -1 : kset_add(&f->seen, key.data, key.len);
                if (added < 0) goto oom;
                if (added == 0) {
                    f->stats.rows_deduped++;
                    continue;
                }
            }
            rows[n++] = r;
        }
        kbatch out = {0};
        char msg[512] = "";
        if (n && !kbatch_take(b, cols, t->ncolumns, rows, n, &f->schema, &out, msg, sizeof msg)) {
            free(rows);
            kbuf_free(&key);
            return fail(f, KARET_ERR_FAILED, "table %s: %s", t->id, msg);
        }
        if (n && !kbatches_push(&f->pending, &out)) goto oom;
        f->stats.rows_out += (int64_t)n;
    }
    free(rows);
    kbuf_free(&key);
    return 0;
oom:
    free(rows);
    kbuf_free(&key);
    return fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
}

/* Reads, maps and filters one file into f->pending. */
static int process_file(kfeed *f, const kfile *file)
{
    if (f->cancel && *f->cancel) return fail(f, KARET_ERR_CANCELLED, "%s%s", "cancelled", "");
    void *data = NULL;
    size_t len = 0;
    tl_error err = {0};
    tl_status st = tl_lake_get_object(f->objects, file->key, &data, &len, &err);
    if (st == TL_ERR_NOT_FOUND) /* deleted since the listing: run again, listing again */
        return fail(f, KARET_ERR_TRANSIENT, "file %s was deleted during the run%s", file->key, "");
    if (st != TL_OK) return from_tl(f, st, file->key, &err);
    f->stats.files++;
    tl_reader *reader = NULL;
    kbatches rows = {0}, res = {0};
    int rc = read_rows(f, file, data, len, &reader, &rows);
    bool *bad = NULL;
    int64_t nrows = rows.rows;
    if (rc == 0 && nrows == 0) note_read(f, file, false, 0);
    if (rc == 0 && rows.rows > 0) {
        rc = map_rows(f, file, &rows, &res);
        bad = calloc(f->config->nmappings + 1, sizeof *bad);
        if (rc == 0 && bad == NULL) rc = fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        if (rc == 0) find_broken(f, file, &res, bad);
        if (rc == 0) rc = fail_mappings(f, bad);
        if (rc == 0) rc = keep_rows(f, &res);
        if (rc == 0) note_read(f, file, false, nrows);
    }
    free(bad);
    kbatches_free(&rows);
    kbatches_free(&res);
    tl_reader_close(reader);
    tl_free(data);
    if (f->on_file) f->on_file(f->ctx);
    return rc < 0 ? -1 : 0;
}

/* ---- the stream ---- */

static int feed_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    kfeed *f = s->private_data;
    return kschema_copy(&f->schema, out) ? 0 : 12;
}

static int feed_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    kfeed *f = s->private_data;
    memset(out, 0, sizeof *out);
    while (f->pending_next == f->pending.len) {
        free(f->pending.items);
        memset(&f->pending, 0, sizeof f->pending);
        f->pending_next = 0;
        if (f->status != KARET_OK) return 5; /* EIO */
        if (f->next == f->files->len) {
            /* The library commits only once the stream has ended: a cancel
             * that came while the last file was read still stops it. */
            if (f->cancel && *f->cancel) {
                fail(f, KARET_ERR_CANCELLED, "%s%s", "cancelled", "");
                return 5;
            }
            return 0;
        }
        if (process_file(f, &f->files->items[f->next++]) != 0) return 5;
    }
    kbatch *b = &f->pending.items[f->pending_next++];
    *out = b->array;
    b->array.release = NULL;
    kbatch_release(b);
    return 0;
}

static const char *feed_error(struct ArrowArrayStream *s)
{
    kfeed *f = s->private_data;
    return f->error;
}

static void feed_release(struct ArrowArrayStream *s)
{
    s->release = NULL;
}

void kfeed_stream(kfeed *f, struct ArrowArrayStream *out)
{
    *out = (struct ArrowArrayStream){feed_schema, feed_next, feed_error, feed_release, f};
}
