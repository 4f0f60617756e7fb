#include "load.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arrow_own.h"

/* target's release: its children are columns', freed with the loader. */
static void target_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

tl_status cli_loader_init(cli_loader *l, tl_table *table, const char *format, tl_error *err)
{
    memset(l, 0, sizeof *l);
    l->table = table;
    l->format = format;
    l->maintain = -1;
    CLI_TRY(tl_table_schema(table, &l->columns, err));
    tl_table_info info;
    tl_status st = tl_table_info_get(table, &info, err);
    if (st != TL_OK) {
        cli_schema_release(&l->columns);
        return st;
    }
    struct ArrowSchema *full = &l->columns;
    struct ArrowSchema **kept = calloc((size_t)full->n_children + 1, sizeof *kept);
    int64_t n = 0;
    /* The ingest-time column is filled by the append: inputs never carry it. */
    for (int64_t i = 0; kept && i < full->n_children; i++)
        if (!(info.ingest_time_column &&
              strcmp(full->children[i]->name, info.ingest_time_column) == 0))
            kept[n++] = full->children[i];
    tl_table_info_clear(&info);
    if (kept == NULL) {
        cli_schema_release(&l->columns);
        return cli_error_nomem(err);
    }
    l->target = (struct ArrowSchema){
        .format = "+s", .name = "", .n_children = n, .children = kept, .release = target_release};
    return TL_OK;
}

void cli_loader_free(cli_loader *l)
{
    free(l->target.children);
    l->target.children = NULL;
    cli_schema_release(&l->columns);
}

uint64_t cli_file_size(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* ---- the files of one commit as one stream ---- */

typedef struct multi_stream {
    cli_loader *loader;
    const char *const *files;
    int n, next;
    struct ArrowArrayStream cur;
    struct ArrowSchema schema; /* the first file's */
    tl_error error;
} multi_stream;

static void on_progress(void *ctx, uint64_t bytes)
{
    cli_progress *p = ctx;
    p->current = bytes;
    cli_progress_draw(p, false);
}

static tl_status open_file(multi_stream *m, const char *path, tl_error *err)
{
    tl_data_read_options o = {.format = m->loader->format,
                              .columns = &m->loader->target,
                              .progress = on_progress,
                              .progress_ctx = &m->loader->progress};
    return tl_data_read_file(path, &o, &m->cur, err);
}

static bool same_schema(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    if (a->n_children != b->n_children) return false;
    for (int64_t i = 0; i < a->n_children; i++)
        if (strcmp(a->children[i]->name, b->children[i]->name) != 0 ||
            strcmp(a->children[i]->format, b->children[i]->format) != 0)
            return false;
    return true;
}

/* Moves to the next file; its columns must be the first file's. */
static tl_status advance(multi_stream *m, tl_error *err)
{
    m->cur.release(&m->cur);
    cli_progress *p = &m->loader->progress;
    p->done += cli_file_size(m->files[m->next - 1]);
    p->current = 0;
    p->files_done++;
    const char *path = m->files[m->next++];
    CLI_TRY(open_file(m, path, err));
    struct ArrowSchema s;
    if (m->cur.get_schema(&m->cur, &s) != 0) return cli_error_nomem(err);
    bool same = same_schema(&s, &m->schema);
    s.release(&s);
    if (!same)
        return cli_error_set(err, TL_ERR_INVALID,
                             "%s: its columns differ from %s's: append them in separate commits",
                             path, m->files[0]);
    return TL_OK;
}

static int ms_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    multi_stream *m = s->private_data;
    if (cli_schema_copy(&m->schema, out) == 0) return 0;
    cli_error_nomem(&m->error);
    return 12;
}

static int ms_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    multi_stream *m = s->private_data;
    for (;;) {
        int rc = m->cur.get_next(&m->cur, out);
        if (rc != 0) {
            const char *msg = m->cur.get_last_error(&m->cur);
            cli_error_set(&m->error, TL_ERR_INVALID, "%s", msg ? msg : "read failed");
            return rc;
        }
        if (out->release != NULL || m->next >= m->n) return 0;
        if (advance(m, &m->error) != TL_OK) return 22;
    }
}

static const char *ms_last_error(struct ArrowArrayStream *s)
{
    multi_stream *m = s->private_data;
    return m->error.message;
}

static void ms_release(struct ArrowArrayStream *s)
{
    multi_stream *m = s->private_data;
    if (m->cur.release) m->cur.release(&m->cur);
    cli_schema_release(&m->schema);
    free(m);
    s->release = NULL;
}

static tl_status multi_open(cli_loader *l, const char *const *files, int n,
                            struct ArrowArrayStream *out, tl_error *err)
{
    multi_stream *m = calloc(1, sizeof *m);
    if (m == NULL) return cli_error_nomem(err);
    m->loader = l;
    m->files = files;
    m->n = n;
    m->next = 1;
    tl_status st = open_file(m, files[0], err);
    if (st == TL_OK && m->cur.get_schema(&m->cur, &m->schema) != 0) st = cli_error_nomem(err);
    if (st != TL_OK) {
        if (m->cur.release) m->cur.release(&m->cur);
        free(m);
        return st;
    }
    *out = (struct ArrowArrayStream){ms_get_schema, ms_get_next, ms_last_error, ms_release, m};
    return TL_OK;
}

/* The stream reader reports its errors as "stream get_next failed: MSG (error N)";
 * the message of the reader is what names the problem. */
static void unwrap_stream_error(tl_error *err)
{
    static const char prefix[] = "stream get_next failed: ";
    if (err == NULL || strncmp(err->message, prefix, sizeof prefix - 1) != 0) return;
    memmove(err->message, err->message + sizeof prefix - 1,
            strlen(err->message) - (sizeof prefix - 1) + 1);
    char *tail = strstr(err->message, " (error ");
    if (tail) *tail = 0;
}

tl_status cli_loader_append(cli_loader *l, const char *const *files, int n, const char *batch_id,
                            tl_append_result *out, tl_error *err)
{
    return cli_loader_append_ids(l, files, n, &batch_id, batch_id ? 1 : 0, out, err);
}

tl_status cli_loader_append_ids(cli_loader *l, const char *const *files, int n,
                                const char *const *batch_ids, size_t n_batch_ids,
                                tl_append_result *out, tl_error *err)
{
    struct ArrowArrayStream s;
    CLI_TRY(multi_open(l, files, n, &s, err));
    tl_append_options o = {
        .batch_ids = batch_ids, .n_batch_ids = n_batch_ids, .maintain = l->maintain};
    tl_status st = tl_table_append(l->table, &s, &o, out, err);
    if (st != TL_OK) unwrap_stream_error(err);
    l->progress.done += cli_file_size(files[n - 1]);
    l->progress.current = 0;
    l->progress.files_done++;
    return st;
}

/* ---- one commit per rows_per_commit rows ---- */

/* The rows of one commit: batches of the source (the multi stream, which
 * outlives each commit) until `left` rows, a straddling batch split in two;
 * its release leaves the source open. */
typedef struct chunk_stream {
    struct ArrowArrayStream *source;
    struct ArrowSchema *schema;
    struct ArrowArray pending; /* the rest of a split batch, or the batch peeked at */
    int64_t left;
    tl_error error;
} chunk_stream;

/* The next batch of the source into c->pending (released: none left). */
static int peek(chunk_stream *c)
{
    while (c->pending.release == NULL) {
        int rc = c->source->get_next(c->source, &c->pending);
        if (rc != 0) {
            const char *msg = c->source->get_last_error(c->source);
            cli_error_set(&c->error, TL_ERR_INVALID, "%s", msg ? msg : "read failed");
            return rc;
        }
        if (c->pending.release == NULL) return 0; /* the end */
        if (c->pending.length == 0) cli_array_release(&c->pending);
    }
    return 0;
}

static int cs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    chunk_stream *c = s->private_data;
    if (cli_schema_copy(c->schema, out) == 0) return 0;
    cli_error_nomem(&c->error);
    return 12;
}

static int cs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    chunk_stream *c = s->private_data;
    out->release = NULL;
    if (c->left == 0) return 0;
    int rc = peek(c);
    if (rc != 0 || c->pending.release == NULL) return rc;
    if (c->pending.length <= c->left) {
        c->left -= c->pending.length;
        cli_array_move(&c->pending, out);
        return 0;
    }
    struct ArrowArray rest;
    if (cli_batch_split(c->schema, &c->pending, c->left, out, &rest) != 0) {
        cli_error_nomem(&c->error);
        return 12;
    }
    cli_array_move(&rest, &c->pending);
    c->left = 0;
    return 0;
}

static const char *cs_last_error(struct ArrowArrayStream *s)
{
    return ((chunk_stream *)s->private_data)->error.message;
}

static void cs_release(struct ArrowArrayStream *s)
{
    s->release = NULL; /* the source and the pending batch stay for the next commit */
}

tl_status cli_loader_append_chunked(cli_loader *l, const char *const *files, int n,
                                    const char *batch_id, int64_t rows_per_commit,
                                    cli_commit_fn on_commit, void *ctx, tl_error *err)
{
    struct ArrowArrayStream src;
    CLI_TRY(multi_open(l, files, n, &src, err));
    chunk_stream c = {.source = &src};
    struct ArrowSchema schema;
    tl_status st = src.get_schema(&src, &schema) == 0 ? TL_OK : cli_error_nomem(err);
    c.schema = &schema;
    for (int k = 1; st == TL_OK; k++) {
        if (peek(&c) != 0) {
            *err = c.error;
            st = err->code;
            break;
        }
        if (c.pending.release == NULL) break; /* every row committed */
        c.left = rows_per_commit;
        struct ArrowArrayStream s = {cs_get_schema, cs_get_next, cs_last_error, cs_release, &c};
        char id[1100];
        if (batch_id) snprintf(id, sizeof id, "%s#%d", batch_id, k);
        const char *ids[] = {id};
        tl_append_options o = {
            .batch_ids = ids, .n_batch_ids = batch_id ? 1 : 0, .maintain = l->maintain};
        tl_append_result r;
        st = tl_table_append(l->table, &s, &o, &r, err);
        if (st != TL_OK) unwrap_stream_error(err);
        /* A duplicate batch commits without reading its rows: skip them. */
        while (st == TL_OK && c.left > 0) {
            struct ArrowArray skip;
            if (cs_get_next(&s, &skip) != 0) {
                *err = c.error;
                st = err->code;
            } else if (skip.release == NULL) {
                break;
            } else {
                cli_array_release(&skip);
            }
        }
        if (st == TL_OK) on_commit(ctx, k, &r);
    }
    cli_array_release(&c.pending);
    if (schema.release) schema.release(&schema);
    src.release(&src);
    l->progress.files_done += n;
    return st;
}

void *cli_append_json(const char *what, const tl_append_result *r)
{
    json_t *j = json_pack("{s:s,s:I,s:I,s:I,s:I,s:b,s:i,s:f}", "file", what, "rows",
                          (json_int_t)r->rows, "files", (json_int_t)r->files, "bytes",
                          (json_int_t)r->bytes, "version", (json_int_t)r->version, "duplicate",
                          r->duplicate, "attempts", r->attempts, "commit_ms", r->commit_ms);
    if (j && r->maintenance_error[0])
        json_object_set_new(j, "maintenance_error", json_string(r->maintenance_error));
    if (j && r->warning[0]) json_object_set_new(j, "warning", json_string(r->warning));
    if (r->warning[0]) fprintf(stderr, "warning: %s\n", r->warning);
    return j;
}

void cli_append_print(const char *what, const tl_append_result *r)
{
    if (r->duplicate) {
        printf("%s: batch already committed, nothing appended (version %lld)\n", what,
               (long long)r->version);
        return;
    }
    char size[32];
    cli_format_bytes((double)r->bytes, size, sizeof size);
    printf("%s: %lld rows in %lld files (%s), version %lld, %.0f ms\n", what, (long long)r->rows,
           (long long)r->files, size, (long long)r->version, r->commit_ms);
    if (r->maintenance_error[0])
        fprintf(stderr, "warning: inline maintenance failed after the commit: %s\n",
                r->maintenance_error);
    if (r->warning[0]) fprintf(stderr, "warning: %s\n", r->warning);
}
