/* timelake sql, latest and maintain: results of the query layer printed as an
 * aligned table, CSV or JSON lines, and maintenance reports. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef enum { OUT_TABLE, OUT_CSV, OUT_JSONL, OUT_PARQUET } out_format;

/* Cells of the aligned table, collected over all batches (the header first). */
typedef struct cells {
    char **v;
    size_t n, cap;
} cells;

static int cells_add(cells *c, const char *s, size_t len)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        char **v = realloc(c->v, cap * sizeof *v);
        if (v == NULL) return -1;
        c->v = v;
        c->cap = cap;
    }
    if ((c->v[c->n] = strndup(s, len)) == NULL) return -1;
    c->n++;
    return 0;
}

static void cells_free(cells *c)
{
    for (size_t i = 0; i < c->n; i++) free(c->v[i]);
    free(c->v);
}

static tl_status table_batch(const struct ArrowSchema *schema, const struct ArrowArray *b, cells *c,
                             tl_error *err)
{
    char **text;
    CLI_TRY(tl_batch_text(schema, b, &text, err));
    size_t n = (size_t)b->length * (size_t)schema->n_children;
    tl_status st = TL_OK;
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        const char *t = text[i] ? text[i] : "NULL";
        if (cells_add(c, t, strlen(t)) != 0) st = cli_error_nomem(err);
    }
    tl_free(text);
    return st;
}

/* The schema of a result stream; on failure the stream is released. */
static tl_status result_schema(struct ArrowArrayStream *s, struct ArrowSchema *out, tl_error *err)
{
    if (s->get_schema(s, out) == 0) return TL_OK;
    cli_error_set(err, TL_ERR_QUERY, "%s", s->get_last_error(s));
    s->release(s);
    return TL_ERR_QUERY;
}

/* The next batch of a result stream (released at its end). */
static tl_status result_next(struct ArrowArrayStream *s, struct ArrowArray *out, tl_error *err)
{
    if (s->get_next(s, out) == 0) return TL_OK;
    return cli_error_set(err, TL_ERR_QUERY, "%s", s->get_last_error(s));
}

/* Prints a result stream (consumed and released) to f as an aligned table. */
static tl_status print_table(struct ArrowArrayStream *s, FILE *f, tl_error *err)
{
    struct ArrowSchema schema;
    CLI_TRY(result_schema(s, &schema, err));
    cells c = {0};
    tl_status st = TL_OK;
    for (int64_t i = 0; st == TL_OK && i < schema.n_children; i++)
        if (cells_add(&c, schema.children[i]->name, strlen(schema.children[i]->name)) != 0)
            st = cli_error_nomem(err);
    while (st == TL_OK) {
        struct ArrowArray b;
        if ((st = result_next(s, &b, err)) != TL_OK || b.release == NULL) break;
        st = table_batch(&schema, &b, &c, err);
        b.release(&b);
    }
    if (st == TL_OK && schema.n_children > 0)
        cli_print_table_to(f, (const char *const *)c.v, (int)(c.n / (size_t)schema.n_children),
                           (int)schema.n_children);
    cells_free(&c);
    schema.release(&schema);
    s->release(s);
    return st;
}

/* Writes a result stream (consumed and released) to f as CSV, JSON lines or
 * Parquet. */
static tl_status write_file(struct ArrowArrayStream *s, out_format format, FILE *f, tl_error *err)
{
    static const char *const names[] = {
        [OUT_CSV] = "csv", [OUT_JSONL] = "ndjson", [OUT_PARQUET] = "parquet"};
    struct ArrowSchema schema;
    CLI_TRY(result_schema(s, &schema, err));
    tl_data_writer *w = NULL;
    tl_status st = tl_data_writer_open(f, names[format], &schema, &w, err);
    if (st == TL_ERR_INVALID && format == OUT_PARQUET) {
        char why[TL_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err->message);
        cli_error_set(err, st,
                      "%s: Parquet output cannot hold this column; choose --output-format jsonl "
                      "or csv, or cast the column in the query (col::VARCHAR)",
                      why);
    }
    while (st == TL_OK) {
        struct ArrowArray b;
        if ((st = result_next(s, &b, err)) != TL_OK || b.release == NULL) break;
        st = tl_data_writer_write(w, &b, err);
        b.release(&b);
    }
    if (st == TL_OK)
        st = tl_data_writer_finish(w, err);
    else
        tl_data_writer_abort(w);
    schema.release(&schema);
    s->release(s);
    return st;
}

static int output_format(cli_args *a, out_format *out)
{
    const char *f = cli_opt(a, "output-format");
    *out = a->json ? OUT_JSONL : OUT_TABLE;
    if (f == NULL) return -1;
    if (strcmp(f, "table") == 0)
        *out = OUT_TABLE;
    else if (strcmp(f, "csv") == 0)
        *out = OUT_CSV;
    else if (strcmp(f, "jsonl") == 0 || strcmp(f, "json") == 0)
        *out = OUT_JSONL;
    else if (strcmp(f, "parquet") == 0 && cli_opt(a, "output"))
        *out = OUT_PARQUET;
    else if (strcmp(f, "parquet") == 0)
        return cli_usage(a, "--output-format parquet needs --output FILE");
    else
        return cli_usage(a, "--output-format must be table, csv, jsonl or parquet, not \"%s\"", f);
    return -1;
}

/* Prints the stream to --output FILE or stdout. FILE is written under a
 * temporary name beside it and renamed into place once whole: a failed query
 * or write leaves no file (nor replaces one that was there). */
static int emit(cli_args *a, struct ArrowArrayStream *s, out_format format)
{
    const char *path = cli_opt(a, "output");
    char *tmp = path ? malloc(strlen(path) + 16) : NULL;
    if (tmp) sprintf(tmp, "%s.tmp-XXXXXX", path);
    int fd = tmp ? mkstemp(tmp) : -1;
    FILE *f = path ? (fd >= 0 ? fdopen(fd, "w") : NULL) : stdout;
    tl_error err;
    if (f == NULL) {
        s->release(s);
        cli_error_set(&err, TL_ERR_STORAGE, "cannot write %s: %s", path ? path : "standard output",
                      strerror(errno));
        if (fd >= 0) close(fd);
        if (fd >= 0) unlink(tmp);
        free(tmp);
        return cli_fail(a, &err);
    }
    tl_status st = format == OUT_TABLE ? print_table(s, f, &err) : write_file(s, format, f, &err);
    if ((fflush(f) != 0 || ferror(f)) && st == TL_OK)
        st = cli_error_set(&err, TL_ERR_STORAGE, "cannot write %s: %s",
                           path ? path : "the result to standard output", strerror(errno));
    if (path) {
        if (fclose(f) != 0 && st == TL_OK)
            st = cli_error_set(&err, TL_ERR_STORAGE, "cannot write %s: %s", path, strerror(errno));
        if (st == TL_OK && rename(tmp, path) != 0)
            st = cli_error_set(&err, TL_ERR_STORAGE, "cannot write %s: %s", path, strerror(errno));
        if (st != TL_OK) unlink(tmp);
    }
    free(tmp);
    return st == TL_OK ? EXIT_OK : cli_fail(a, &err);
}

/* The query: the argument, or read from --query-file FILE or standard
 * input (QUERY -), into *out (malloc'd). */
static int query_text(cli_args *a, char **out)
{
    const char *file = cli_opt(a, "query-file");
    if (file && a->npos > 0) return cli_usage(a, "give QUERY or --query-file, not both");
    if (!file && a->npos != 1) return cli_usage(a, "give one QUERY (quote it), or --query-file");
    if (!file && strcmp(a->pos[0], "-") != 0) {
        *out = strdup(a->pos[0]);
        return *out ? EXIT_OK : EXIT_STORAGE;
    }
    FILE *f = file && strcmp(file, "-") != 0 ? fopen(file, "rb") : stdin;
    char *text = NULL, chunk[65536];
    size_t len = 0, n;
    bool ok = f != NULL;
    while (ok && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *more = realloc(text, len + n + 1);
        if ((ok = more != NULL)) {
            memcpy(more + len, chunk, n);
            text = more;
            len += n;
        }
    }
    ok = ok && !ferror(f);
    if (ok && text == NULL) ok = (text = malloc(1)) != NULL; /* an empty query */
    if (f && f != stdin) fclose(f);
    if (!ok) {
        free(text);
        tl_error err;
        cli_error_set(&err, TL_ERR_INVALID, "cannot read the query from %s: %s",
                      file && strcmp(file, "-") != 0 ? file : "standard input", strerror(errno));
        return cli_fail(a, &err);
    }
    text[len] = 0;
    *out = text;
    return EXIT_OK;
}

int cmd_sql(cli_args *a)
{
    out_format format;
    int rc = output_format(a, &format);
    if (rc >= 0) return rc;
    char *query = NULL;
    if ((rc = query_text(a, &query)) != EXIT_OK) return rc;
    tl_lake *lake = NULL;
    if ((rc = cli_open_lake(a, &lake)) != EXIT_OK) {
        free(query);
        return rc;
    }
    struct ArrowArrayStream s;
    tl_error err;
    tl_query_stats stats = {0};
    /* Stats cost local tables a read of each footer: only when asked for. */
    tl_query_stats *want = cli_flag(a, "stats") ? &stats : NULL;
    const char *settings[2 * 64 + 1];
    if ((rc = cli_key_values(a, "set", settings)) >= 0) {
        tl_lake_close(lake);
        free(query);
        return rc;
    }
    tl_sql_options o = {.namespace_ = cli_opt(a, "namespace"), .settings = settings};
    rc = EXIT_OK;
    if (tl_lake_query(lake, query, &o, &s, want, &err) != TL_OK)
        rc = cli_fail(a, &err);
    else
        rc = emit(a, &s, format);
    if (rc == EXIT_OK && cli_flag(a, "stats"))
        fprintf(stderr,
                "files: %lld considered, %lld read; row groups: %lld considered, %lld read; "
                "bytes read: %lld\n",
                (long long)stats.files_total, (long long)stats.files_read,
                (long long)stats.row_groups_total, (long long)stats.row_groups_read,
                (long long)stats.bytes_read);
    tl_lake_close(lake);
    free(query);
    return rc;
}

int cmd_latest(cli_args *a)
{
    const char *name = cli_table_name(a, true);
    if (name == NULL) return cli_usage(a, "no table: give NAME, --table or set TIMELAKE_TABLE");
    if (a->npos > 0) return cli_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    out_format format;
    int rc = output_format(a, &format);
    if (rc >= 0) return rc;
    tl_lake *lake = NULL;
    if ((rc = cli_open_lake(a, &lake)) != EXIT_OK) return rc;
    struct ArrowArrayStream s;
    tl_error err;
    tl_latest_report report;
    if (tl_lake_latest_report(lake, name, &s, &report, &err) != TL_OK) {
        rc = cli_fail(a, &err);
    } else {
        if (report.warning[0]) fprintf(stderr, "warning: %s\n", report.warning);
        rc = emit(a, &s, format);
    }
    tl_lake_close(lake);
    return rc;
}

static void maintain_print(const cli_args *a, const char *name, const tl_maintain_report *r,
                           int64_t version)
{
    if (a->json) {
        json_t *o = json_pack(
            "{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "table", name, "version",
            (json_int_t)version, "partitions_compacted", (json_int_t)r->partitions_compacted,
            "files_rewritten", (json_int_t)r->files_rewritten, "files_written",
            (json_int_t)r->files_written, "rows_rewritten", (json_int_t)r->rows_rewritten,
            "duplicates_removed", (json_int_t)r->duplicates_removed, "partitions_dropped",
            (json_int_t)r->partitions_dropped, "snapshots_expired",
            (json_int_t)r->snapshots_expired, "objects_deleted", (json_int_t)r->objects_deleted,
            "seconds", r->seconds);
        json_object_set_new(o, "rollups_refreshed", json_integer(r->rollups_refreshed));
        json_object_set_new(o, "rollup_rows", json_integer(r->rollup_rows));
        if (r->warning[0]) json_object_set_new(o, "warning", json_string(r->warning));
        cli_print_json(o);
        return;
    }
    printf("%s: compacted %lld partitions (%lld files into %lld, %lld duplicates removed), "
           "dropped %lld partitions, refreshed %lld rollups (%lld rows), expired %lld "
           "snapshots, deleted %lld objects; version %lld, %.2f s\n",
           name, (long long)r->partitions_compacted, (long long)r->files_rewritten,
           (long long)r->files_written, (long long)r->duplicates_removed,
           (long long)r->partitions_dropped, (long long)r->rollups_refreshed,
           (long long)r->rollup_rows, (long long)r->snapshots_expired,
           (long long)r->objects_deleted, (long long)version, r->seconds);
}

static int maintain_one(cli_args *a, tl_lake *lake, const char *name)
{
    tl_table *t = NULL;
    int rc = cli_open_table(a, lake, name, &t);
    tl_maintain_options o = {.compact = !cli_flag(a, "no-compact"),
                             .retention = !cli_flag(a, "no-retention"),
                             .expire = !cli_flag(a, "no-expire"),
                             .rollups = !cli_flag(a, "no-rollups")};
    tl_maintain_report r;
    tl_error err;
    if (rc == EXIT_OK && tl_table_maintain(t, &o, &r, &err) != TL_OK) {
        cli_error_prefix(&err, "%s", name);
        rc = cli_fail(a, &err);
    }
    if (rc == EXIT_OK && r.warning[0]) fprintf(stderr, "warning: %s\n", r.warning);
    if (rc == EXIT_OK) maintain_print(a, tl_table_name(t), &r, tl_table_version(t));
    tl_table_close(t);
    return rc;
}

/* The tables to maintain: --all of them, the names given, or the one of
 * --table / TIMELAKE_TABLE. *owned (a library string array) holds --all's. */
static int maintain_names(cli_args *a, tl_lake *lake, const char *const **names, int *n,
                          char ***owned)
{
    if (cli_flag(a, "all")) {
        if (a->npos > 0 || cli_opt(a, "table"))
            return cli_usage(a, "give table names or --all, not both");
        tl_error err;
        if (tl_lake_list_tables(lake, owned, &err) != TL_OK) return cli_fail(a, &err);
        for (*n = 0; (*owned)[*n]; (*n)++) {
        }
        *names = (const char *const *)*owned;
        return EXIT_OK;
    }
    if (a->npos > 0 && cli_opt(a, "table"))
        return cli_usage(a, "give table names or --table, not both");
    if (a->npos > 0) {
        *names = a->pos;
        *n = a->npos;
        return EXIT_OK;
    }
    static const char *one[1];
    one[0] = cli_table_name(a, false);
    if (one[0] == NULL)
        return cli_usage(a, "no table: give NAME..., --all, --table or set TIMELAKE_TABLE");
    *names = one;
    *n = 1;
    return EXIT_OK;
}

int cmd_maintain(cli_args *a)
{
    tl_lake *lake = NULL;
    int rc = cli_open_lake(a, &lake);
    const char *const *names = NULL;
    char **owned = NULL;
    int n = 0;
    if (rc == EXIT_OK) rc = maintain_names(a, lake, &names, &n, &owned);
    int worst = rc;
    for (int i = 0; rc == EXIT_OK && i < n; i++) {
        int one = maintain_one(a, lake, names[i]);
        if (one > worst) worst = one;
    }
    tl_strings_free(owned);
    tl_lake_close(lake);
    return worst;
}
