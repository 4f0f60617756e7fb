#include "formats/csv/csv_reader.h"

#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "arrow/nested.h"
#include "formats/csv/csv_scan.h"
#include "formats/input/reader_stream.h"
#include "formats/input/text_batch.h"
#include "formats/input/text_schema.h"

#define CSV_MAX_BATCH_BYTES ((size_t)64 << 20)

typedef struct csv_reader {
    tl_csv_scan scan;
    int64_t batch_rows;
    int ncols;
    char **names;
    tl_arrow_type *types;
    bool *required; /* per column, from the target's nullability */
    tl_text_batch batch;
    bool sized; /* the batch's buffers were sized for the input (once: they are kept) */
    tl_text_source src;
    struct ArrowArray first; /* the batch read at open, handed out first */
    tl_input_progress_fn progress;
    void *progress_ctx;
} csv_reader;

static void csv_free(void *ctx)
{
    csv_reader *c = ctx;
    if (c == NULL) return;
    tl_csv_scan_free(&c->scan);
    for (int i = 0; i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    free(c->types);
    free(c->required);
    tl_text_batch_free(&c->batch);
    tl_array_release(&c->first);
    free(c);
}

/* Reads the next row into the batch; *eof at the end of the input. Adds
 * what the row grew the batch by (tl_text_batch_bytes) to *bytes. */
static tl_status next_row(csv_reader *c, bool *eof, size_t *bytes, tl_error *err)
{
    tl_csv_scan *s = &c->scan;
    TL_TRY(tl_csv_scan_next(s, eof, err));
    if (*eof) return TL_OK;
    if (s->nfields > c->ncols)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: more than %d fields", c->src.name,
                            (long long)s->rec_line, c->ncols);
    if (s->nfields < c->ncols)
        return tl_error_set(err, TL_ERR_INVALID, "%s: line %lld: %d fields, expected %d",
                            c->src.name, (long long)s->rec_line, s->nfields, c->ncols);
    for (int i = 0; i < s->nfields; i++) {
        size_t len;
        const uint8_t *f = tl_csv_scan_field(s, i, &len);
        TL_TRY(tl_text_batch_put(&c->batch, i, f, len, TL_TEXT_STRING, err));
        *bytes += len + sizeof(int64_t); /* the value and its offset */
    }
    return tl_text_batch_end_row(&c->batch, s->rec_line, err);
}

/* Rows read into the first batch before its buffers are sized for the rest. */
#define SIZE_SAMPLE_ROWS 64

/* Sizes the batch for the rows the input holds in all (estimated from its
 * size and the sampled rows' text, a field separator each), up to a batch. */
static void reserve_rows(csv_reader *c)
{
    uint64_t size = tl_text_input_size(c->scan.w.in);
    const tl_text_batch *b = &c->batch;
    uint64_t text = (uint64_t)b->rows * (uint64_t)c->ncols;
    for (int i = 0; i < b->ncols; i++) text += b->cols[i].bytes.len;
    if (size == 0 || text == 0) return;
    uint64_t rows = size / (text / (uint64_t)b->rows + 1) + 1;
    tl_text_batch_reserve(&c->batch,
                          rows < (uint64_t)c->batch_rows ? (int64_t)rows : c->batch_rows);
}

static tl_status read_batch(csv_reader *c, tl_error *err)
{
    tl_text_batch_reset(&c->batch);
    size_t bytes = tl_text_batch_bytes(&c->batch); /* then kept up row by row */
    while (c->batch.rows < c->batch_rows && bytes < CSV_MAX_BATCH_BYTES) {
        bool eof;
        TL_TRY(next_row(c, &eof, &bytes, err));
        if (eof) break;
        if (!c->sized && c->batch.rows == SIZE_SAMPLE_ROWS) {
            reserve_rows(c);
            c->sized = true;
        }
    }
    return TL_OK;
}

static tl_status csv_next(void *ctx, struct ArrowArray *out, bool *done, tl_error *err)
{
    csv_reader *c = ctx;
    if (c->first.release) {
        tl_array_move(&c->first, out);
        return TL_OK;
    }
    TL_TRY(read_batch(c, err));
    if (c->progress) c->progress(c->progress_ctx, tl_text_input_position(c->scan.w.in));
    if (c->batch.rows == 0) return *done = true, TL_OK;
    return tl_text_batch_convert(&c->batch, &c->src, c->types, (const char *const *)c->names, out,
                                 err);
}

static tl_status read_header(csv_reader *c, tl_error *err)
{
    tl_csv_scan *s = &c->scan;
    bool eof;
    TL_TRY(tl_csv_scan_next(s, &eof, err));
    if (eof) return tl_error_set(err, TL_ERR_INVALID, "%s: empty file: no header row", c->src.name);
    if ((c->names = calloc((size_t)s->nfields, sizeof *c->names)) == NULL)
        return tl_error_nomem(err);
    for (int i = 0; i < s->nfields; i++, c->ncols++) {
        size_t len;
        const uint8_t *f = tl_csv_scan_field(s, i, &len);
        if ((c->names[i] = strndup((const char *)f, len)) == NULL) return tl_error_nomem(err);
    }
    for (int i = 0; i < c->ncols; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(c->names[i], c->names[j]) == 0)
                return tl_error_set(err, TL_ERR_INVALID, "%s: column \"%s\" appears twice",
                                    c->src.name, c->names[i]);
    c->types = calloc((size_t)c->ncols, sizeof *c->types);
    if (c->types == NULL) return tl_error_nomem(err);
    return tl_text_batch_init(&c->batch, c->ncols, err);
}

static tl_status target_types(csv_reader *c, const struct ArrowSchema *target, tl_error *err)
{
    if ((c->required = calloc((size_t)c->ncols + 1, sizeof *c->required)) == NULL)
        return tl_error_nomem(err);
    c->src.required = c->required;
    for (int i = 0; i < c->ncols; i++) {
        int f = tl_text_target_find(target, c->names[i]);
        if (f < 0)
            return tl_error_set(err, TL_ERR_INVALID, "%s: column \"%s\" is not in the table",
                                c->src.name, c->names[i]);
        if (tl_arrow_is_nested(target->children[f]))
            return tl_error_set(err, TL_ERR_INVALID,
                                "%s: column \"%s\" is a struct, list or map column, which CSV "
                                "text cannot fill: append it as NDJSON (JSON objects and arrays) "
                                "or Parquet, or leave the column out of the CSV",
                                c->src.name, c->names[i]);
        TL_TRY(tl_text_target_type(target, f, &c->types[i], err));
        c->required[i] = (target->children[f]->flags & ARROW_FLAG_NULLABLE) == 0;
    }
    return tl_target_required_present(target, (const char *const *)c->names, c->ncols, c->src.name,
                                      err);
}

static tl_status csv_start(csv_reader *c, const struct ArrowSchema *target, tl_error *err)
{
    TL_TRY(read_header(c, err));
    if (target) TL_TRY(target_types(c, target, err));
    TL_TRY(read_batch(c, err));
    if (!target) tl_text_batch_infer(&c->batch, &c->src, c->types);
    if (c->batch.rows == 0) return TL_OK;
    return tl_text_batch_convert(&c->batch, &c->src, c->types, (const char *const *)c->names,
                                 &c->first, err);
}

tl_status tl_csv_stream_open(tl_text_input *in, const tl_csv_options *options,
                             const struct ArrowSchema *target, struct ArrowArrayStream *out,
                             tl_error *err)
{
    memset(out, 0, sizeof *out);
    csv_reader *c = calloc(1, sizeof *c);
    if (c == NULL) {
        tl_text_input_close(in);
        return tl_error_nomem(err);
    }
    tl_csv_scan_init(&c->scan, in,
                     (uint8_t)(options && options->delimiter ? options->delimiter : ','));
    c->src.name = c->scan.name;
    c->src.csv_nulls = true;
    c->batch_rows = options && options->batch_rows > 0 ? options->batch_rows : 65536;
    c->progress = options ? options->progress : NULL;
    c->progress_ctx = options ? options->progress_ctx : NULL;
    struct ArrowSchema schema = {0};
    tl_status st = csv_start(c, target, err);
    if (st == TL_OK)
        st = tl_text_schema_make((const char *const *)c->names, c->types, c->ncols, &schema, err);
    if (st != TL_OK) {
        csv_free(c);
        return st;
    }
    tl_batch_reader reader = {.ctx = c, .next = csv_next, .free = csv_free};
    return tl_reader_stream_make(&schema, reader, out, err);
}
