#include "formats/input/parquet_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_schema.h"
#include "formats/parquet/parquet_reader.h"

typedef struct pq_stream {
    char *name;
    int fd;          /* -1 for stdin read into memory */
    uint8_t *memory; /* stdin's bytes */
    tl_parquet_reader *reader;
    int next_rg;
    int64_t rows_read;     /* rows of the row groups before next_rg */
    int64_t *required;     /* columns of the file the target requires, -1 ended */
    char **required_names; /* their names */
    uint64_t size;
    tl_input_progress_fn progress;
    void *progress_ctx;
} pq_stream;

static tl_status fd_read(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    pq_stream *p = ctx;
    while (len > 0) {
        ssize_t n = pread(p->fd, dst, len, (off_t)offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s: %s", p->name,
                                n < 0 ? strerror(errno) : "unexpected end of file");
        dst += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return TL_OK;
}

static void pq_free(void *ctx)
{
    pq_stream *p = ctx;
    if (p == NULL) return;
    tl_parquet_reader_free(p->reader);
    if (p->fd >= 0) close(p->fd);
    free(p->memory);
    for (int64_t *c = p->required; c && *c >= 0; c++) free(p->required_names[c - p->required]);
    free(p->required);
    free(p->required_names);
    free(p->name);
    free(p);
}

static tl_status pq_next(void *ctx, struct ArrowArray *out, bool *done, tl_error *err)
{
    pq_stream *p = ctx;
    if (p->next_rg >= tl_parquet_reader_num_row_groups(p->reader)) return *done = true, TL_OK;
    int rg = p->next_rg++;
    tl_status st = tl_parquet_reader_read_row_group(p->reader, rg, NULL, 0, out, err);
    if (st != TL_OK) return tl_error_prefix(err, "%s: row group %d", p->name, rg);
    for (int64_t *c = p->required; c && *c >= 0; c++) {
        int64_t row = tl_array_first_null(out->children[*c]);
        if (row < 0) continue;
        tl_array_release(out);
        return tl_error_set(err, TL_ERR_INVALID,
                            "%s: row %lld (counting from 0), column \"%s\": null, but the table "
                            "requires a value in this column (it is not nullable)",
                            p->name, (long long)(p->rows_read + row),
                            p->required_names[c - p->required]);
    }
    p->rows_read += out->length;
    /* Row groups are about the same size: report the share of the file read. */
    int n = tl_parquet_reader_num_row_groups(p->reader);
    if (p->progress) p->progress(p->progress_ctx, p->size * (uint64_t)(rg + 1) / (uint64_t)n);
    return TL_OK;
}

static tl_status read_stdin(pq_stream *p, size_t *len, tl_error *err)
{
    tl_buf b = {0};
    uint8_t chunk[65536];
    ssize_t n;
    while ((n = read(STDIN_FILENO, chunk, sizeof chunk)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            tl_buf_free(&b);
            return tl_error_set(err, TL_ERR_INVALID, "stdin: %s", strerror(errno));
        }
        if (tl_buf_append(&b, chunk, (size_t)n) != 0) {
            tl_buf_free(&b);
            return tl_error_nomem(err);
        }
    }
    p->memory = tl_buf_detach(&b, len);
    return TL_OK;
}

static tl_status pq_open(pq_stream *p, const char *path, tl_error *err)
{
    tl_parquet_source src = {.ctx = p, .read = fd_read};
    if (strcmp(path, "-") == 0) {
        size_t len = 0;
        TL_TRY(read_stdin(p, &len, err));
        tl_parquet_source_from_memory(&src, p->memory, len);
        p->size = len;
    } else {
        p->fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (p->fd < 0 || fstat(p->fd, &st) != 0)
            return tl_error_set(err, errno == ENOENT ? TL_ERR_NOT_FOUND : TL_ERR_INVALID,
                                "cannot open %s: %s", path, strerror(errno));
        src.size = p->size = (uint64_t)st.st_size;
    }
    tl_error e;
    if (tl_parquet_reader_open(&src, &p->reader, &e) != TL_OK)
        return tl_error_set(err, e.code == TL_ERR_NOMEM ? TL_ERR_NOMEM : TL_ERR_INVALID,
                            "%s: not a readable Parquet file: %s", p->name, e.message);
    return TL_OK;
}

/* Finds the file's columns that `target` requires; a required one the file
 * lacks is an error naming it. */
static tl_status find_required(pq_stream *p, const struct ArrowSchema *schema,
                               const struct ArrowSchema *target, tl_error *err)
{
    int n = (int)schema->n_children;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    p->required = calloc((size_t)n + 1, sizeof *p->required);
    p->required_names = calloc((size_t)n + 1, sizeof *p->required_names);
    if (names == NULL || p->required == NULL || p->required_names == NULL) {
        free(names);
        return tl_error_nomem(err);
    }
    size_t k = 0;
    bool nomem = false;
    for (int i = 0; i < n && !nomem; i++) {
        names[i] = schema->children[i]->name ? schema->children[i]->name : "";
        int f = tl_text_target_find(target, names[i]);
        if (f < 0 || (target->children[f]->flags & ARROW_FLAG_NULLABLE)) continue;
        nomem = (p->required_names[k] = strdup(names[i])) == NULL;
        if (!nomem) p->required[k++] = i;
    }
    p->required[k] = -1;
    tl_status st =
        nomem ? tl_error_nomem(err) : tl_target_required_present(target, names, n, p->name, err);
    free(names);
    return st;
}

tl_status tl_parquet_stream_open(const char *path, const struct ArrowSchema *target,
                                 tl_input_progress_fn progress, void *progress_ctx,
                                 struct ArrowArrayStream *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    pq_stream *p = calloc(1, sizeof *p);
    if (p == NULL) return tl_error_nomem(err);
    p->fd = -1;
    p->progress = progress;
    p->progress_ctx = progress_ctx;
    if ((p->name = strdup(strcmp(path, "-") == 0 ? "stdin" : path)) == NULL) {
        pq_free(p);
        return tl_error_nomem(err);
    }
    struct ArrowSchema schema = {0};
    tl_status st = pq_open(p, path, err);
    if (st == TL_OK) st = tl_parquet_reader_schema(p->reader, &schema, err);
    if (st == TL_OK && target) st = find_required(p, &schema, target, err);
    if (st != TL_OK) {
        if (schema.release) schema.release(&schema);
        pq_free(p);
        return st;
    }
    tl_batch_reader reader = {.ctx = p, .next = pq_next, .free = pq_free};
    return tl_reader_stream_make(&schema, reader, out, err);
}
