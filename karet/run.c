/* karet_run: one run of a pipeline. For each analytic table: what it has read
 * (its record, an attachment committed with its rows), what the lake holds
 * now, and so whether this run is incremental (only new files, appended) or
 * full (every file, one atomic replace), then the commit, conditional on the
 * table version the decision was made on. */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dims.h"
#include "json_text.h"
#include "strbuf.h"
#include "feed.h"
#include "files.h"
#include "table_config.h"
#include "table_io.h"

#define MAX_ATTEMPTS 8

typedef struct run_ctx {
    karet_lake *lake;
    const char *slug;
    kconfig c;
    const karet_run_options *opts;
    kfiles *listed;    /* per source */
    bool *source_used; /* per source: feeds a table */
    kdim_rows *dims;
    json_t *dim_files;
    json_t *summary, *tables, *skipped, *errors, *files_read;
    int64_t rows_read, rows_written, rows_deduped, partitions, values_nulled;
    int status;
    karet_progress progress;
} run_ctx;

static void progress(run_ctx *r, const char *stage)
{
    r->progress.stage = stage;
    if (r->opts && r->opts->on_progress) r->opts->on_progress(r->opts->ctx, &r->progress);
}

static void on_file(void *ctx)
{
    run_ctx *r = ctx;
    r->progress.files_done++;
    progress(r, "reading");
}

static int status_of(tl_status st)
{
    return st == TL_ERR_STORAGE || st == TL_ERR_CONFLICT ? KARET_ERR_TRANSIENT : KARET_ERR_FAILED;
}

static int run_fail(run_ctx *r, int status, const char *fmt, const char *a, const char *b)
{
    kbuf msg = {0};
    kbuf_printf(&msg, fmt, a, b);
    json_object_set_new(r->summary, "error", json_string(kbuf_cstr(&msg)));
    kbuf_free(&msg);
    r->status = status;
    return status;
}

/* ---- the table ---- */

static void table_name(run_ctx *r, const ktable *t, char *out, size_t size)
{
    snprintf(out, size, "%s.%s", r->slug, t->id);
}

/* The columns as the record keeps them: [[name, type]...]. */
static json_t *schema_json(const ktable *t)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->ncolumns; i++)
        json_array_append_new(
            a, json_pack("[s, s]", t->columns[i].name, ktype_name(t->columns[i].type)));
    return a;
}

static json_t *partitions_json(const ktable *t)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < t->npartitions; i++)
        json_array_append_new(a, json_string(t->partitions[i].spec));
    return a;
}

static bool same_format(const char *have, ktype want)
{
    const char *w = ktype_arrow(want);
    if (strcmp(w, "u") == 0) return !strcmp(have, "u") || !strcmp(have, "U") || !strcmp(have, "vu");
    return strcmp(have, w) == 0;
}

/* Whether the table's columns are the config's, in order, of the same types. */
static bool schema_matches(tl_table *tbl, const ktable *t)
{
    struct ArrowSchema s = {0};
    tl_error err;
    if (tl_table_schema(tbl, &s, &err) != TL_OK) return false;
    bool ok = s.n_children == (int64_t)t->ncolumns;
    for (size_t i = 0; ok && i < t->ncolumns; i++)
        ok = strcmp(s.children[i]->name, t->columns[i].name) == 0 &&
             same_format(s.children[i]->format, t->columns[i].type);
    s.release(&s);
    return ok;
}

/* ---- deciding the run ---- */

typedef struct plan {
    bool full;
    bool recreate; /* the columns or partition keys changed: the commit reshapes the table */
    char reason[1200];
    kfiles to_read;     /* the files to read, in ingest order */
    kfiles early;       /* new files that sort before a file already read (dedup keys only) */
    const char *last;   /* the last file already read, in ingest order (in record) */
    json_t *record;     /* the table's record, or NULL */
    bool *failed;       /* per mapping (config order): failed, as the record says or found now */
    json_t *failed_why; /* {mapping id: first violation} */
} plan;

static const json_t *record_file(const json_t *record, const char *key)
{
    /* Records are sorted by key: binary search. */
    const json_t *files = json_object_get(record, "files");
    size_t lo = 0, hi = json_array_size(files);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const json_t *f = json_array_get(files, mid);
        int c = strcmp(json_string_value(json_object_get(f, "key")), key);
        if (c == 0) return f;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool record_valid(const json_t *rec)
{
    const json_t *files = json_object_get(rec, "files");
    if (!json_is_object(rec) || !json_is_array(files) ||
        !json_is_string(json_object_get(rec, "config_hash")))
        return false;
    const char *prev = NULL;
    for (size_t i = 0; i < json_array_size(files); i++) {
        const char *k = json_string_value(json_object_get(json_array_get(files, i), "key"));
        if (k == NULL || (prev && strcmp(prev, k) >= 0)) return false;
        prev = k;
    }
    return true;
}

/* The files to read and the mappings that fail: for a full run every file
 * and none yet; for an incremental run the new files and those the record
 * says fail. */
static bool plan_files(run_ctx *r, plan *p, const kfiles *all)
{
    for (size_t i = 0; i < p->to_read.len; i++) {
        free(p->to_read.items[i].key);
        free(p->to_read.items[i].etag);
    }
    p->to_read.len = 0;
    json_object_clear(p->failed_why);
    const json_t *failed = json_object_get(p->record, "failed_mappings");
    for (size_t m = 0; m < r->c.nmappings; m++) {
        const json_t *why = p->full ? NULL : json_object_get(failed, r->c.mappings[m].id);
        p->failed[m] = why != NULL;
        if (why) json_object_set(p->failed_why, r->c.mappings[m].id, (json_t *)why);
    }
    for (size_t i = 0; i < all->len; i++) {
        const kfile *f = &all->items[i];
        if ((p->full || record_file(p->record, f->key) == NULL) &&
            !kfiles_add(&p->to_read, f->key, f->size, f->etag, f->source))
            return false;
    }
    return true;
}

/* Decides between incremental and full, and which files to read. */
static bool decide(run_ctx *r, const ktable *t, tl_table *tbl, const kfiles *all, const char *hash,
                   plan *p)
{
    const json_t *rec = p->record;
    tl_table_info info = {0};
    tl_error err;
    bool empty = tl_table_info_get(tbl, &info, &err) == TL_OK && info.rows == 0;
    tl_table_info_clear(&info);
    p->full = true;
    if (r->opts && r->opts->full) {
        snprintf(p->reason, sizeof p->reason, "requested");
    } else if (p->recreate) {
        snprintf(p->reason, sizeof p->reason, "the table's columns or partition keys changed");
    } else if (rec == NULL && !empty) {
        snprintf(p->reason, sizeof p->reason, "the table has rows but no record of the files read");
    } else if (rec && strcmp(json_string_value(json_object_get(rec, "config_hash")), hash) != 0) {
        snprintf(p->reason, sizeof p->reason,
                 "the config of the table, of a mapping or source that feeds it, or of a "
                 "dimension it looks up changed");
    } else {
        p->full = false;
    }
    /* A file read before that is gone or replaced. */
    const json_t *files = json_object_get(rec, "files");
    for (size_t i = 0; !p->full && i < json_array_size(files); i++) {
        const json_t *f = json_array_get(files, i);
        const char *key = json_string_value(json_object_get(f, "key"));
        const kfile *now = NULL;
        size_t lo = 0, hi = all->len;
        while (lo < hi && now == NULL) {
            size_t mid = (lo + hi) / 2;
            int c = strcmp(all->items[mid].key, key);
            if (c == 0)
                now = &all->items[mid];
            else if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (now == NULL) {
            p->full = true;
            snprintf(p->reason, sizeof p->reason, "file %s, read before, was deleted", key);
        } else if ((json_int_t)now->size != json_integer_value(json_object_get(f, "size")) ||
                   strcmp(now->etag, json_string_value(json_object_get(f, "etag"))) != 0) {
            p->full = true;
            snprintf(p->reason, sizeof p->reason, "file %s, read before, was replaced", key);
        }
    }
    /* New files that sort before a file already read, with dedup keys: an
     * incremental run stays right unless one of their keys is in the table
     * (early_keys_held looks before the run). */
    p->last = json_array_size(files)
                  ? json_string_value(
                        json_object_get(json_array_get(files, json_array_size(files) - 1), "key"))
                  : NULL;
    for (size_t i = 0; !p->full && t->ndedup && p->last && i < all->len; i++) {
        const kfile *f = &all->items[i];
        if (strcmp(f->key, p->last) >= 0) break;
        if (record_file(rec, f->key) == NULL &&
            !kfiles_add(&p->early, f->key, f->size, f->etag, f->source))
            return false;
    }
    return plan_files(r, p, all);
}

/* ---- counting partitions on the way to the table ---- */

typedef struct tap {
    struct ArrowArrayStream inner;
    const ktable *t;
    kset parts;
    int64_t rows;
} tap;

/* Days since 1970 to (year, month): Howard Hinnant's civil_from_days. */
static void civil(int64_t z, int64_t *y, int64_t *m)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* The partition of row r, as bytes, into key. */
static void partition_key(const tap *tp, const kcol *cols, int64_t r, kbuf *key)
{
    kbuf_truncate(key, 0);
    for (size_t i = 0; i < tp->t->npartitions; i++) {
        const kpartition *p = &tp->t->partitions[i];
        if (cols[i].array == NULL) continue;
        int64_t v, y, m;
        if (p->transform == KP_IDENTITY || kcol_is_null(cols[i], r) || !kcol_int(cols[i], r, &v)) {
            kcol_key(cols[i], r, key);
            continue;
        }
        civil(v, &y, &m);
        v = p->transform == KP_YEAR ? y : p->transform == KP_MONTH ? y * 12 + m - 1 : v;
        kbuf_putn(key, (const char *)&v, sizeof v);
    }
}

/* Whether rows a and b hold equal values in every partition column (so one
 * partition), read straight from the buffers of the common types; false
 * when not known. */
static bool same_values(const tap *tp, const kcol *cols, int64_t a, int64_t b)
{
    for (size_t i = 0; i < tp->t->npartitions; i++) {
        const struct ArrowArray *arr = cols[i].array;
        if (arr == NULL) continue;
        if (arr->null_count != 0) return false;
        const char *f = cols[i].schema->format;
        int64_t at = cols[i].base + arr->offset;
        const void *d = arr->buffers[1];
        if (strcmp(f, "tdD") == 0 || strcmp(f, "i") == 0) {
            if (((const int32_t *)d)[at + a] != ((const int32_t *)d)[at + b]) return false;
        } else if (strcmp(f, "l") == 0 || strncmp(f, "ts", 2) == 0) {
            if (((const int64_t *)d)[at + a] != ((const int64_t *)d)[at + b]) return false;
        } else if (strcmp(f, "U") == 0) {
            const int64_t *o = d;
            const char *bytes = arr->buffers[2];
            int64_t la = o[at + a + 1] - o[at + a], lb = o[at + b + 1] - o[at + b];
            if (la != lb || memcmp(bytes + o[at + a], bytes + o[at + b], (size_t)la) != 0)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

static int tap_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    tap *tp = s->private_data;
    int rc = tp->inner.get_next(&tp->inner, out);
    if (rc != 0 || out->release == NULL || tp->t->npartitions == 0) {
        if (rc == 0 && out->release) tp->rows += out->length;
        return rc;
    }
    struct ArrowSchema schema = {0};
    if (tp->inner.get_schema(&tp->inner, &schema) != 0) return 0;
    kbatch b = {.schema = schema, .array = *out};
    kcol cols[sizeof tp->t->partitions / sizeof *tp->t->partitions] = {0};
    for (size_t i = 0; i < tp->t->npartitions; i++) {
        int ci = kbatch_column(&schema, tp->t->columns[tp->t->partitions[i].column].name);
        if (ci >= 0) cols[i] = kbatch_col(&b, ci);
    }
    /* Rows come mostly in runs of one partition: a set lookup per run, and
     * a key only where a partition column's value changes. */
    kbuf key = {0}, prev = {0};
    for (int64_t r = 0; r < out->length; r++) {
        if (r > 0 && same_values(tp, cols, r - 1, r)) continue;
        partition_key(tp, cols, r, &key);
        if (key.oom) break;
        if (r > 0 && key.len == prev.len && (key.len == 0 || !memcmp(key.data, prev.data, key.len)))
            continue;
        kset_add(&tp->parts, key.data ? key.data : "", key.len);
        kbuf_truncate(&prev, 0);
        kbuf_putn(&prev, key.data ? key.data : "", key.len);
        if (prev.oom) break;
    }
    kbuf_free(&key);
    kbuf_free(&prev);
    schema.release(&schema);
    tp->rows += out->length;
    return 0;
}

static int tap_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    tap *tp = s->private_data;
    return tp->inner.get_schema(&tp->inner, out);
}

static const char *tap_error(struct ArrowArrayStream *s)
{
    tap *tp = s->private_data;
    return tp->inner.get_last_error(&tp->inner);
}

static void tap_release(struct ArrowArrayStream *s)
{
    tap *tp = s->private_data;
    if (tp->inner.release) tp->inner.release(&tp->inner);
    s->release = NULL;
}

/* ---- one table ---- */

/* The record after this run: the files read before (incremental) and the
 * files this run reads, by key. Known before the commit, which carries it. */
static json_t *new_record(run_ctx *r, const ktable *t, const char *hash, const plan *p)
{
    json_t *files = json_array();
    const json_t *old = p->full ? NULL : json_object_get(p->record, "files");
    size_t i = 0, j = 0, n_old = json_array_size(old), n_new = p->to_read.len;
    while (files && (i < n_old || j < n_new)) {
        const json_t *a = i < n_old ? json_array_get(old, i) : NULL;
        const kfile *b = j < n_new ? &p->to_read.items[j] : NULL;
        int c = a == NULL   ? 1
                : b == NULL ? -1
                            : strcmp(json_string_value(json_object_get(a, "key")), b->key);
        if (c < 0) {
            json_array_append(files, (json_t *)a);
            i++;
            continue;
        }
        if (c == 0) i++;
        json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "key", b->key, "size",
                                               (json_int_t)b->size, "etag", b->etag));
        j++;
    }
    const char *job = r->opts && r->opts->job_id ? r->opts->job_id : NULL;
    return json_pack("{s:i, s:s, s:{s:o, s:o}, s:o, s:O, s:s?, s:s}", "format", 1, "config_hash",
                     hash, "table", "schema", schema_json(t), "partition_keys", partitions_json(t),
                     "files", files, "failed_mappings", p->failed_why, "job_id", job, "run_kind",
                     p->full ? "full" : "incremental");
}

typedef struct outcome {
    tl_append_result res;
    int64_t filtered;
    int64_t partitions;
} outcome;

/* Streams the files into the table and commits (an append, or for a full run
 * a replace) with the new record, only if the table is still at `version`.
 * Returns the commit's status; TL_ERR_CONFLICT means another run committed
 * first. A failure of the feed itself is in f->status. */
static tl_status commit(run_ctx *r, ktab *k, const plan *p, const char *hash, int64_t version,
                        kfeed *f, outcome *o, tl_error *err)
{
    const ktable *t = k->t;
    json_t *rec = new_record(r, t, hash, p);
    char *text = rec ? kjson_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(rec);
    if (text == NULL) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return err->code = TL_ERR_NOMEM;
    }
    struct ArrowArrayStream feed, filtered = {0};
    kfeed_stream(f, &feed);
    tap tp = {.t = t, .inner = feed};
    tl_status st = TL_OK;
    if (!p->full && t->ndedup) {
        st = ktab_new_keys(k, &feed, &filtered, &o->filtered, err);
        tp.inner = filtered;
    }
    if (st == TL_OK) {
        char nfiles[32];
        snprintf(nfiles, sizeof nfiles, "%zu", p->to_read.len);
        const char *job = r->opts && r->opts->job_id ? r->opts->job_id : "";
        const char *summary[] = {"karet.run-kind",
                                 p->full ? "full" : "incremental",
                                 "karet.files-read",
                                 nfiles,
                                 "karet.job-id",
                                 job,
                                 NULL};
        struct ArrowArrayStream rows = {tap_schema, tap_next, tap_error, tap_release, &tp};
        if (r->opts && r->opts->cancel && *r->opts->cancel) {
            rows.release(&rows);
            f->status = KARET_ERR_CANCELLED;
            snprintf(err->message, sizeof err->message, "cancelled");
            st = err->code = TL_ERR_INVALID;
        } else {
            kcommit kind = p->recreate ? KCOMMIT_RESHAPE
                           : p->full   ? KCOMMIT_REPLACE
                                       : KCOMMIT_APPEND;
            st = ktab_commit(k, &rows, kind, version, text, summary, &o->res, err);
        }
    } else if (feed.release) {
        feed.release(&feed);
    }
    /* An unpartitioned table is one partition: written when a row was. */
    o->partitions = t->npartitions ? (int64_t)tp.parts.len : st == TL_OK && o->res.rows > 0;
    kset_free(&tp.parts);
    free(text);
    return st;
}

static json_t *table_summary(const plan *p, const kfeed *f, const outcome *o)
{
    return json_pack(
        "{s:s, s:s?, s:I, s:I, s:I, s:I, s:I, s:I}", "run_kind", p->full ? "full" : "incremental",
        "full_reason", p->full ? p->reason : NULL, "files_processed", (json_int_t)f->stats.files,
        "rows_read", (json_int_t)f->stats.rows_read, "rows_written", (json_int_t)o->res.rows,
        "rows_deduped", (json_int_t)(f->stats.rows_deduped + o->filtered), "partitions_written",
        (json_int_t)o->partitions, "version", (json_int_t)o->res.version);
}

/* Every listed file of the sources that feed t, in ingest order. */
static bool table_files(run_ctx *r, const ktable *t, kfiles *out)
{
    for (size_t s = 0; s < r->c.nsources; s++) {
        bool feeds = false;
        for (size_t m = 0; m < r->c.nmappings; m++)
            feeds |= r->c.mappings[m].table == t && r->c.mappings[m].source == &r->c.sources[s];
        for (size_t i = 0; feeds && i < r->listed[s].len; i++) {
            const kfile *f = &r->listed[s].items[i];
            if (!kfiles_add(out, f->key, f->size, f->etag, f->source)) return false;
        }
    }
    kfiles_sort(out);
    return true;
}

static void merge_problems(run_ctx *r, const kfeed *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(f->errors, i, v) if (json_array_size(r->errors) < 1000)
        json_array_append(r->errors, v);
    json_array_foreach(f->skipped, i, v) if (json_array_size(r->skipped) < 1000)
        json_array_append(r->skipped, v);
    json_array_foreach(f->read, i, v) /* rows of a file read for two tables count once */
        json_object_set(r->files_read, json_string_value(json_object_get(v, "key")),
                        json_object_get(v, "rows"));
}

/* Opens (or creates) the table and reads its record. */
static tl_status open_table(run_ctx *r, ktab *k, plan *p, tl_error *err)
{
    bool created;
    tl_status st = ktab_open(k, &created, err);
    if (st != TL_OK || created) return st;
    st = ktab_record(k, &p->record, err);
    if (st != TL_OK) return st;
    if (p->record && !record_valid(p->record)) { /* unreadable: rebuild from every file */
        json_decref(p->record);
        p->record = NULL;
    }
    json_t *parts = partitions_json(k->t);
    p->recreate =
        !schema_matches(k->handle, k->t) ||
        (p->record && !json_equal(parts, json_object_get(json_object_get(p->record, "table"),
                                                         "partition_keys")));
    json_decref(parts);
    (void)r;
    return TL_OK;
}

/* After the feed found a mapping failing: a full run of every file, with
 * the failed mappings known from the start. */
static bool restart_full(run_ctx *r, plan *p, const kfiles *all, const kfeed *f)
{
    for (size_t m = 0; m < r->c.nmappings; m++) {
        if (!p->failed[m] || json_object_get(p->failed_why, r->c.mappings[m].id)) continue;
        json_object_set_new(p->failed_why, r->c.mappings[m].id,
                            json_string(f->failed_why[m] ? f->failed_why[m] : "?"));
        if (!p->full)
            snprintf(p->reason, sizeof p->reason,
                     "mapping %s broke an assertion (%s): its rows are taken out",
                     r->c.mappings[m].id, f->failed_why[m] ? f->failed_why[m] : "?");
    }
    p->full = true;
    for (size_t i = 0; i < p->to_read.len; i++) {
        free(p->to_read.items[i].key);
        free(p->to_read.items[i].etag);
    }
    p->to_read.len = 0;
    for (size_t i = 0; i < all->len; i++)
        if (!kfiles_add(&p->to_read, all->items[i].key, all->items[i].size, all->items[i].etag,
                        all->items[i].source))
            return false;
    return true;
}

static void note_failed(run_ctx *r, const plan *p)
{
    const char *id;
    json_t *why;
    json_object_foreach(p->failed_why, id, why) if (json_array_size(r->errors) < 1000)
        json_array_append_new(r->errors, json_pack("{s:n, s:n, s:s, s:s}", "file", "line",
                                                   "mapping", id, "message",
                                                   "the mapping fails an assertion and writes "
                                                   "nothing until a full run finds no such row"));
}

/* Whether the new files that sort before a file already read hold a dedup
 * key the table has: then a full run, else an incremental one is right.
 * Ingest order puts them before that file, so their rows win over its rows
 * of the same key, which the table holds in their place; a key the table
 * does not hold has no winner yet, and theirs comes first among the new
 * files as in a full run. They are read for it (as the run reads them) and
 * read again by the run. A mapping found failing on them leaves the answer
 * to the run, which then rebuilds the table in full. Returns KARET_OK or
 * why the files could not be read (in r's summary). */
static int early_keys_held(run_ctx *r, ktab *k, plan *p, bool *held)
{
    *held = false;
    bool *failed = malloc((r->c.nmappings + 1) * sizeof *failed);
    kfeed f = {.objects = r->lake->objects,
               .readers = r->lake->readers,
               .nreaders = KARET_READERS - 1,
               .config = &r->c,
               .table = k->t,
               .dims = r->dims,
               .files = &p->early,
               .cancel = r->opts ? r->opts->cancel : NULL,
               .failed = failed};
    if (failed) memcpy(failed, p->failed, r->c.nmappings * sizeof *failed);
    if (failed == NULL || !kfeed_init(&f)) {
        kfeed_free(&f);
        free(failed);
        return run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    }
    struct ArrowArrayStream rows, kept = {0};
    kfeed_stream(&f, &rows);
    int64_t dropped = 0;
    tl_error err = {0};
    tl_status st = ktab_new_keys(k, &rows, &kept, &dropped, &err);
    if (kept.release) kept.release(&kept);
    int rc = KARET_OK;
    if (f.status != KARET_OK && f.status != KFEED_RESTART) /* RESTART: the run finds it too */
        rc = run_fail(r, f.status, "%s%s", f.error, "");
    else if (f.status == KARET_OK && st != TL_OK)
        rc = run_fail(r, status_of(st), "table %s: %s", k->t->id, err.message);
    else
        *held = f.status == KARET_OK && dropped > 0;
    kfeed_free(&f);
    free(failed);
    return rc;
}

/* One attempt at table t. Returns KARET_OK, a failure, or -1 to try again
 * (another run committed to the table first). */
static int run_table_once(run_ctx *r, const ktable *t, const kfiles *all, const char *hash)
{
    plan p = {.failed = calloc(r->c.nmappings + 1, sizeof(bool)), .failed_why = json_object()};
    char name[256];
    table_name(r, t, name, sizeof name);
    ktab k = {.lake = r->lake, .name = name, .t = t, .slug = r->slug};
    tl_error err = {0};
    kfeed f = {0};
    int rc = KARET_OK;
    tl_status st = p.failed && p.failed_why ? open_table(r, &k, &p, &err) : TL_ERR_NOMEM;
    if (st != TL_OK) {
        rc = run_fail(r, status_of(st), "table %s: %s", t->id, err.message);
        goto done;
    }
    if (!decide(r, t, k.handle, all, hash, &p)) {
        rc = run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        goto done;
    }
    bool held = false;
    if (!p.full && p.early.len && (rc = early_keys_held(r, &k, &p, &held)) != KARET_OK) goto done;
    if (held) {
        p.full = true;
        snprintf(p.reason, sizeof p.reason,
                 "new file %s sorts before %s, already read, and the new files sorting there "
                 "hold dedup keys the table has",
                 p.early.items[0].key, p.last);
        if (!plan_files(r, &p, all)) {
            rc = run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
            goto done;
        }
    }
    r->progress.files_total += (int)p.to_read.len;
    if (!p.full && p.to_read.len == 0) { /* nothing new: nothing to write */
        json_object_set_new(r->tables, t->id,
                            json_pack("{s:s, s:n, s:i, s:i, s:i, s:i, s:i, s:I}", "run_kind",
                                      "incremental", "full_reason", "files_processed", 0,
                                      "rows_read", 0, "rows_written", 0, "rows_deduped", 0,
                                      "partitions_written", 0, "version",
                                      (json_int_t)tl_table_version(k.handle)));
        goto done;
    }
    outcome o = {0};
    for (;;) {
        f = (kfeed){.objects = r->lake->objects,
                    .readers = r->lake->readers,
                    .nreaders = KARET_READERS - 1,
                    .config = &r->c,
                    .table = t,
                    .dims = r->dims,
                    .files = &p.to_read,
                    .cancel = r->opts ? r->opts->cancel : NULL,
                    .on_file = on_file,
                    .ctx = r,
                    .full = p.full,
                    .failed = p.failed};
        if (!kfeed_init(&f)) {
            rc = run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
            goto done;
        }
        memset(&o, 0, sizeof o);
        progress(r, "writing");
        st = commit(r, &k, &p, hash, tl_table_version(k.handle), &f, &o, &err);
        if (f.status != KFEED_RESTART) break;
        if (!restart_full(r, &p, all, &f)) {
            rc = run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
            goto done;
        }
        r->progress.files_total += (int)p.to_read.len;
        kfeed_free(&f);
    }
    if (f.status != KARET_OK) {
        rc = run_fail(r, f.status, "%s%s", f.error, "");
    } else if (st == TL_ERR_CONFLICT) {
        rc = -1;
    } else if (st != TL_OK) {
        rc = run_fail(r, status_of(st), "table %s: %s", t->id, err.message);
    } else {
        merge_problems(r, &f);
        note_failed(r, &p);
        json_object_set_new(r->tables, t->id, table_summary(&p, &f, &o));
        r->rows_written += o.res.rows;
        r->rows_deduped += f.stats.rows_deduped + o.filtered;
        r->partitions += o.partitions;
        r->values_nulled += f.stats.values_nulled;
    }
done:
    kfeed_free(&f);
    json_decref(p.record);
    json_decref(p.failed_why);
    free(p.failed);
    kfiles_free(&p.to_read);
    kfiles_free(&p.early);
    ktab_close(&k);
    return rc;
}

static int run_table(run_ctx *r, const ktable *t)
{
    kfiles all = {0};
    char hash[65];
    bool *used = calloc(r->c.ndims + 1, sizeof *used);
    json_t *dim_files = json_object();
    bool ok = used && dim_files && table_files(r, t, &all);
    if (ok) {
        ktable_dims_used(&r->c, t, used);
        for (size_t i = 0; i < r->c.ndims; i++)
            if (used[i] && json_object_get(r->dim_files, r->c.dims[i].id))
                json_object_set(dim_files, r->c.dims[i].id,
                                json_object_get(r->dim_files, r->c.dims[i].id));
        ok = ktable_config_hash(&r->c, t, dim_files, hash);
    }
    free(used);
    json_decref(dim_files);
    int rc = ok ? -1 : run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    for (int attempt = 0; rc == -1 && attempt < MAX_ATTEMPTS; attempt++)
        rc = run_table_once(r, t, &all, hash);
    if (rc == -1)
        rc = run_fail(r, KARET_ERR_TRANSIENT, "table %s: other runs kept committing first%s", t->id,
                      "");
    kfiles_free(&all);
    return rc;
}

/* ---- the run ---- */

static bool valid_slug(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 100) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

static int prepare(run_ctx *r)
{
    kconfig *c = &r->c;
    r->listed = calloc(c->nsources + 1, sizeof *r->listed);
    r->source_used = calloc(c->nsources + 1, sizeof *r->source_used);
    r->dims = calloc(c->ndims + 1, sizeof *r->dims);
    bool *used = calloc(c->ndims + 1, sizeof *used);
    if (!r->listed || !r->source_used || !r->dims || !used) {
        free(used);
        return run_fail(r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
    }
    progress(r, "listing");
    for (size_t i = 0; i < c->nmappings; i++) r->source_used[c->mappings[i].source->index] = true;
    for (size_t s = 0; s < c->nsources; s++) {
        if (!r->source_used[s]) continue;
        tl_error err = {0};
        tl_status st = ksource_list(r->lake->objects, &c->sources[s], &r->listed[s], &err);
        if (st != TL_OK) {
            free(used);
            return run_fail(r, status_of(st), "listing %s: %s", c->sources[s].path_prefix,
                            err.message);
        }
        kfiles_sort(&r->listed[s]);
    }
    for (size_t t = 0; t < c->ntables; t++) ktable_dims_used(c, &c->tables[t], used);
    tl_error err = {0};
    tl_status st = kdims_load(r->lake->objects, c, used, r->dims, &r->dim_files, &err);
    free(used);
    if (st != TL_OK) return run_fail(r, status_of(st), "%s%s", err.message, "");
    return KARET_OK;
}

static void finish_summary(run_ctx *r)
{
    const char *kind = "incremental", *reason = NULL;
    const char *id;
    json_t *t;
    json_object_foreach(r->tables, id,
                        t) if (strcmp(json_string_value(json_object_get(t, "run_kind")), "full") ==
                               0)
    {
        kind = "full";
        if (reason == NULL) reason = json_string_value(json_object_get(t, "full_reason"));
    }
    json_t *s = r->summary;
    json_object_set_new(s, "files_processed",
                        json_integer((json_int_t)json_object_size(r->files_read)));
    json_int_t rows_read = 0;
    json_t *n;
    json_object_foreach(r->files_read, id, n) rows_read += json_integer_value(n);
    json_object_set_new(s, "rows_read", json_integer(rows_read));
    json_object_set_new(s, "rows_written", json_integer(r->rows_written));
    json_object_set_new(s, "rows_deduped", json_integer(r->rows_deduped));
    json_object_set_new(s, "partitions_written", json_integer(r->partitions));
    json_object_set_new(s, "values_nulled", json_integer(r->values_nulled));
    json_object_set_new(s, "run_kind", json_string(kind));
    json_object_set_new(s, "full_reason", reason ? json_string(reason) : json_null());
    json_object_set(s, "tables", r->tables);
    json_object_set(s, "skipped", r->skipped);
    json_object_set(s, "errors", r->errors);
}

int karet_run(karet_lake *lake, const char *slug, const json_t *config,
              const karet_run_options *opts, json_t **summary)
{
    run_ctx r = {.lake = lake, .slug = slug, .opts = opts, .status = KARET_OK};
    r.summary = json_object();
    r.tables = json_object();
    r.skipped = json_array();
    r.errors = json_array();
    r.files_read = json_object();
    *summary = r.summary;
    if (!r.summary || !r.tables || !r.skipped || !r.errors || !r.files_read) {
        r.status = KARET_ERR_FAILED;
        goto out;
    }
    json_t *problems = karet_validate(config);
    if (problems == NULL || json_array_size(problems)) {
        json_object_set_new(r.summary, "error",
                            json_string("the pipeline config has problems: nothing was read"));
        json_object_set_new(r.summary, "problems", problems ? problems : json_array());
        r.status = KARET_ERR_CONFIG;
        goto out;
    }
    json_decref(problems);
    if (!valid_slug(slug)) {
        run_fail(&r, KARET_ERR_CONFIG, "slug \"%s\" must be 1 to 100 of A-Z a-z 0-9 _ -%s",
                 slug ? slug : "", "");
        goto out;
    }
    kproblems ps = {0};
    if (!kconfig_parse(config, &r.c, &ps)) {
        json_decref(ps.list);
        run_fail(&r, KARET_ERR_FAILED, "%s%s", "out of memory", "");
        goto out;
    }
    json_decref(ps.list);
    r.progress.mappings_total = (int)r.c.nmappings;
    if (prepare(&r) != KARET_OK) goto out;
    for (size_t t = 0; t < r.c.ntables && r.status == KARET_OK; t++) {
        run_table(&r, &r.c.tables[t]);
        for (size_t m = 0; m < r.c.nmappings; m++)
            r.progress.mappings_done += r.c.mappings[m].table == &r.c.tables[t];
        progress(&r, "mapping");
    }
    if (r.status == KARET_OK) progress(&r, "done");
out:
    finish_summary(&r);
    for (size_t s = 0; r.listed && s < r.c.nsources; s++) kfiles_free(&r.listed[s]);
    for (size_t d = 0; r.dims && d < r.c.ndims; d++) kdim_rows_free(&r.dims[d]);
    free(r.listed);
    free(r.source_used);
    free(r.dims);
    json_decref(r.dim_files);
    json_decref(r.tables);
    json_decref(r.skipped);
    json_decref(r.errors);
    json_decref(r.files_read);
    kconfig_free(&r.c);
    return r.status;
}
