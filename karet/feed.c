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

static bool arrow_schema(const ktable *t, bool large, struct ArrowSchema *out)
{
    const char *formats[256], *names[256];
    if (t->ncolumns > 256) return false;
    for (size_t i = 0; i < t->ncolumns; i++) {
        formats[i] = ktype_arrow_as(t->columns[i].type, large);
        names[i] = t->columns[i].name;
    }
    return kschema_struct(out, formats, names, t->ncolumns);
}

bool ktable_arrow_schema(const ktable *t, struct ArrowSchema *out)
{
    return arrow_schema(t, false, out);
}

const char *ktype_arrow_as(ktype t, bool large)
{
    return large && t == KT_STRING ? "U" : ktype_arrow(t);
}

static const char *source_sql(kfeed *f, const ksource *s, bool ordered);
static void read_and_map(void *ctx, tl_lake *lake, size_t i, kread *r);

bool kfeed_init(kfeed *f)
{
    f->read = json_array();
    f->errors = json_array();
    f->skipped = json_array();
    f->sql = calloc(f->config->nsources + 1, sizeof *f->sql);
    f->sql_ordered = calloc(f->config->nsources + 1, sizeof *f->sql_ordered);
    f->failed_why = calloc(f->config->nmappings + 1, sizeof *f->failed_why);
    f->fast = calloc(f->config->nsources + 1, sizeof *f->fast);
    f->status = KARET_OK;
    if (!(f->read && f->errors && f->skipped && f->sql && f->sql_ordered && f->failed_why &&
          f->fast && arrow_schema(f->table, true, &f->schema)))
        return false;
    /* Compiled now: the threads reading ahead only read them. */
    for (size_t i = 0; i < f->files->len; i++) {
        const ksource *s = f->files->items[i].source;
        if (source_sql(f, s, false) == NULL || source_sql(f, s, true) == NULL) return false;
        bool oom = false;
        if (f->fast[s->index] == NULL &&
            (f->fast[s->index] = kfast_plan(f->config, f->table, s, &oom)) == NULL && oom)
            return false;
    }
    tl_lake *lakes[KAHEAD_MAX_THREADS] = {f->objects};
    size_t nlakes = 1;
    for (size_t i = 0; i < f->nreaders && nlakes < KAHEAD_MAX_THREADS; i++)
        if (f->readers[i]) lakes[nlakes++] = f->readers[i];
    kahead_init(&f->ahead, f->files, read_and_map, f, lakes, nlakes);
    return true;
}

void kfeed_free(kfeed *f)
{
    kahead_stop(&f->ahead); /* first: its threads use f */
    json_decref(f->read);
    json_decref(f->errors);
    json_decref(f->skipped);
    for (size_t i = 0; f->sql && i < f->config->nsources; i++) free(f->sql[i]);
    for (size_t i = 0; f->sql_ordered && i < f->config->nsources; i++) free(f->sql_ordered[i]);
    free(f->sql);
    free(f->sql_ordered);
    for (size_t i = 0; f->fast && i < f->config->nsources; i++) kfast_free(f->fast[i]);
    free(f->fast);
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

static void read_fail(kread *r, int rc, int status, const char *fmt, const char *a, const char *b)
    __attribute__((format(printf, 4, 0)));

/* A file that cannot be read (rc 1) or a failure of the run (rc -1), in r. */
static void read_fail(kread *r, int rc, int status, const char *fmt, const char *a, const char *b)
{
    kbuf m = {0};
    kbuf_printf(&m, fmt, a, b);
    r->rc = rc;
    r->status = status;
    snprintf(r->msg, sizeof r->msg, "%s", kbuf_cstr(&m));
    kbuf_free(&m);
}

static int status_of_tl(tl_status st)
{
    return st == TL_ERR_STORAGE || st == TL_ERR_CONFLICT ? KARET_ERR_TRANSIENT : KARET_ERR_FAILED;
}

/* The file's rows, each numbered in "__karet_row"; the reader stays in r
 * for its report. */
static void read_rows(const kfile *file, size_t len, kread *r, kbatches *out)
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
    if (tl_reader_open(r->data, len, &ro, &r->reader, &err) != TL_OK ||
        tl_reader_stream(r->reader, &stream, &err) != TL_OK) {
        if (err.code == TL_ERR_NOMEM)
            read_fail(r, -1, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        else
            read_fail(r, 1, 0, "%s%s", err.message, "");
        return;
    }
    char msg[1024] = "";
    if (kbatches_drain(&stream, out, msg, sizeof msg) != 0) {
        read_fail(r, 1, 0, "%s%s", msg, "");
        return;
    }
    int64_t next = 0;
    for (size_t i = 0; i < out->len; i++)
        if (!kbatch_add_row_numbers(&out->items[i], KARET_COL_ROW, &next)) {
            read_fail(r, -1, KARET_ERR_FAILED, "%s%s", "out of memory numbering rows", "");
            return;
        }
    r->rows = out->rows;
}

/* The source's query for the table, ordered or not (compiled once). */
static const char *source_sql(kfeed *f, const ksource *s, bool ordered)
{
    char **sql = ordered ? &f->sql_ordered[s->index] : &f->sql[s->index];
    if (*sql == NULL) {
        kbuf b = {0};
        kcompile_table(f->config, f->table, s, f->dims, ordered, &b);
        *sql = kbuf_take(&b);
    }
    return *sql;
}

/* Whether the mapped rows come in ingest order: by mapping, then row. */
static bool in_order(const kbatches *res)
{
    int64_t pm = -1, pr = -1;
    for (size_t i = 0; i < res->len; i++) {
        const kbatch *b = &res->items[i];
        int cm = kbatch_column(&b->schema, KARET_COL_MAPPING);
        int cr = kbatch_column(&b->schema, KARET_COL_ROW);
        if (cm < 0 || cr < 0) return false;
        kcol m = kbatch_col(b, cm), row = kbatch_col(b, cr);
        for (int64_t r = 0; r < b->array.length; r++) {
            int64_t mi = -1, ri = -1;
            if (!kcol_int(m, r, &mi) || !kcol_int(row, r, &ri)) return false;
            if (mi < pm || (mi == pm && ri <= pr)) return false;
            pm = mi;
            pr = ri;
        }
    }
    return true;
}

/* Runs the mappings over the file's rows (consumed) into r->mapped; true
 * when they were evaluated in C (in ingest order, as C goes). */
static bool map_rows(kfeed *f, tl_lake *lake, const kfile *file, kbatches *rows, bool ordered,
                     kread *r)
{
    const kfast *fast = f->fast[file->source->index];
    int rc = fast ? kfast_map(fast, rows, &r->mapped) : 1;
    if (rc < 0) read_fail(r, -1, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    if (rc <= 0) return true;
    /* compiled by kfeed_init */
    const char *sql = (ordered ? f->sql_ordered : f->sql)[file->source->index];
    struct ArrowArrayStream in = {0}, result = {0};
    if (!kbatches_stream(rows, &rows->items[0].schema, &in)) {
        read_fail(r, -1, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        return false;
    }
    tl_sql_input input = {KARET_SRC, &in};
    tl_sql_options so = {.inputs = &input, .inputs_len = 1, .only_namespace = 1};
    tl_error err = {0};
    tl_status st = tl_lake_query(lake, sql, &so, &result, NULL, &err);
    if (st != TL_OK) {
        char what[1200];
        snprintf(what, sizeof what, "mapping the rows of %s into table %s", file->key,
                 f->table->id);
        read_fail(r, -1, status_of_tl(st), "%s: %s", what, err.message);
        return false;
    }
    char msg[1024] = "";
    if (kbatches_drain(&result, &r->mapped, msg, sizeof msg) != 0)
        read_fail(r, -1, KARET_ERR_FAILED, "mapping the rows of %s: %s", file->key, msg);
    return false;
}

/* What can be done for a file before the files ahead of it are done:
 * fetching, reading and mapping it (kahead_fn, on any thread with its own
 * handle of the lake; touches nothing of f but what kfeed_init made). */
static void read_and_map(void *ctx, tl_lake *lake, size_t i, kread *r)
{
    kfeed *f = ctx;
    const kfile *file = &f->files->items[i];
    memset(r, 0, sizeof *r);
    size_t len = 0;
    tl_error err = {0};
    tl_status st = tl_lake_get_object(lake, file->key, &r->data, &len, &err);
    if (st == TL_ERR_NOT_FOUND) { /* deleted since the listing: run again, listing again */
        read_fail(r, -1, KARET_ERR_TRANSIENT, "file %s was deleted during the run%s", file->key,
                  "");
        return;
    }
    if (st != TL_OK) {
        read_fail(r, -1, status_of_tl(st), "%s: %s", file->key, err.message);
        return;
    }
    r->fetched = true;
    kbatches rows = {0};
    read_rows(file, len, r, &rows);
    bool in_c = r->rc == 0 && r->rows > 0 && map_rows(f, lake, file, &rows, false, r);
    kbatches_free(&rows);
    if (r->rc != 0 || in_c || in_order(&r->mapped)) return;
    /* DuckDB gave the rows in another order (a join may): read the file
     * again and ask for the order. */
    kbatches_free(&r->mapped);
    tl_reader_close(r->reader);
    r->reader = NULL;
    read_rows(file, len, r, &rows);
    if (r->rc == 0 && r->rows > 0) map_rows(f, lake, file, &rows, true, r);
    kbatches_free(&rows);
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

static bool any_failed(const kfeed *f)
{
    for (size_t m = 0; m < f->config->nmappings; m++)
        if (f->failed[m]) return true;
    return false;
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
            if ((cols[c] = kbatch_column(&b->schema, t->columns[c].name)) < 0) {
                free(rows);
                kbuf_free(&key);
                return fail(f, KARET_ERR_FAILED, "the mapping query lost column %s%s",
                            t->columns[c].name, "");
            }
        kbatch out = {0};
        /* Every row kept (no dedup keys, no failed mapping): moved, not copied. */
        if (!t->ndedup && !any_failed(f) && kbatch_pick(b, cols, t->ncolumns, &f->schema, &out)) {
            f->stats.rows_out += out.array.length;
            if (!kbatches_push(&f->pending, &out)) goto oom;
            continue;
        }
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

/* Checks and filters one file's mapped rows into f->pending, in ingest order. */
static int process_file(kfeed *f, const kfile *file, kread *r)
{
    if (r->fetched) f->stats.files++;
    int rc = 0;
    bool *bad = NULL;
    if (r->rc < 0) {
        rc = fail(f, r->status, "%s%s", r->msg, "");
    } else if (r->rc > 0) {
        file_error(f, file, r->msg);
    } else {
        tl_read_report rep;
        tl_reader_report(r->reader, &rep);
        note_skipped(f, file, &rep);
        f->stats.rows_read += rep.rows;
        if (r->rows == 0) note_read(f, file, false, 0);
    }
    if (rc == 0 && r->rc == 0 && r->rows > 0) {
        bad = calloc(f->config->nmappings + 1, sizeof *bad);
        if (bad == NULL) rc = fail(f, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        if (rc == 0) find_broken(f, file, &r->mapped, bad);
        if (rc == 0) rc = fail_mappings(f, bad);
        if (rc == 0) rc = keep_rows(f, &r->mapped);
        if (rc == 0) note_read(f, file, false, r->rows);
    }
    free(bad);
    if (f->on_file) f->on_file(f->ctx);
    return rc < 0 ? -1 : 0;
}

/* The next file, read and mapped (ahead or now), checked and filtered. */
static int next_file(kfeed *f)
{
    if (f->cancel && *f->cancel) return fail(f, KARET_ERR_CANCELLED, "%s%s", "cancelled", "");
    kread r;
    if (!kahead_next(&f->ahead, &r)) return fail(f, KARET_ERR_FAILED, "%s%s", "no file left", "");
    int rc = process_file(f, &f->files->items[f->next++], &r);
    kread_free(&r);
    return rc;
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
        if (f->status != KARET_OK || f->next == f->files->len) kahead_stop(&f->ahead);
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
        if (next_file(f) != 0) {
            kahead_stop(&f->ahead);
            return 5;
        }
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
    kfeed *f = s->private_data;
    kahead_stop(&f->ahead); /* the files ahead are not wanted: f->files may change next */
    s->release = NULL;
}

void kfeed_stream(kfeed *f, struct ArrowArrayStream *out)
{
    *out = (struct ArrowArrayStream){feed_schema, feed_next, feed_error, feed_release, f};
}
