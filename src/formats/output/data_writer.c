/* The public writer of batches as one CSV, TSV, NDJSON or Parquet file on a
 * caller's FILE: text formats go out batch by batch, Parquet is built in
 * memory and written whole at finish. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "formats/csv/csv_writer.h"
#include "formats/ndjson/json_writer.h"
#include "formats/parquet/parquet_writer.h"

typedef enum { OUT_CSV, OUT_TSV, OUT_NDJSON, OUT_PARQUET } out_kind;

struct tl_data_writer {
    FILE *f;
    out_kind kind;
    struct ArrowSchema schema; /* a copy: the caller's is borrowed for open only */
    tl_buf text;               /* a batch's text (and the header before the first one) */
    tl_parquet_writer *parquet;
    bool failed;
};

static tl_status kind_of(const char *format, out_kind *out, tl_error *err)
{
    const char *name;
    if (format == NULL) return tl_error_set(err, TL_ERR_INVALID, "no output format");
    TL_TRY(tl_data_format(format, NULL, &name, err));
    *out = strcmp(name, "csv") == 0      ? OUT_CSV
           : strcmp(name, "tsv") == 0    ? OUT_TSV
           : strcmp(name, "ndjson") == 0 ? OUT_NDJSON
                                         : OUT_PARQUET;
    return TL_OK;
}

static tl_status parquet_open(tl_data_writer *w, tl_error *err)
{
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD,
                                  .compression_level = 3,
                                  .page_rows = 20000,
                                  .row_group_rows = 1 << 20,
                                  .created_by = "timelake-c " TIMELAKE_VERSION};
    return tl_parquet_writer_open(&w->schema, &o, &w->parquet, err);
}

tl_status tl_data_writer_open(FILE *f, const char *format, const struct ArrowSchema *schema,
                              tl_data_writer **out, tl_error *err)
{
    *out = NULL;
    if (f == NULL) return tl_error_set(err, TL_ERR_INVALID, "no output file");
    if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "the schema must be a struct schema (\"+s\")");
    out_kind kind = OUT_CSV;
    TL_TRY(kind_of(format, &kind, err));
    tl_data_writer *w = calloc(1, sizeof *w);
    if (w == NULL) return tl_error_nomem(err);
    w->f = f;
    w->kind = kind;
    tl_status st = tl_schema_copy(schema, &w->schema, err);
    if (st == TL_OK && kind == OUT_PARQUET) st = parquet_open(w, err);
    if (st == TL_OK && (kind == OUT_CSV || kind == OUT_TSV))
        st = tl_csv_write_header(&w->schema, kind == OUT_TSV ? '\t' : ',', &w->text, err);
    if (st != TL_OK) {
        tl_data_writer_abort(w);
        return st;
    }
    *out = w;
    return TL_OK;
}

static tl_status write_text(tl_data_writer *w, const struct ArrowArray *batch, tl_error *err)
{
    size_t header = w->text.len; /* the header, until the first batch is written */
    tl_status st =
        w->kind == OUT_NDJSON
            ? tl_json_write_batch(&w->schema, batch, &w->text, err)
            : tl_csv_write_batch(&w->schema, batch, w->kind == OUT_TSV ? '\t' : ',', &w->text, err);
    if (st != TL_OK) {
        w->text.len = header;
        return st;
    }
    if (w->text.len && fwrite(w->text.data, 1, w->text.len, w->f) != w->text.len)
        st = tl_error_set(err, TL_ERR_STORAGE, "cannot write the result: %s", strerror(errno));
    w->text.len = 0;
    return st;
}

static tl_status check_batch(const tl_data_writer *w, const struct ArrowArray *batch, tl_error *err)
{
    if (batch == NULL || batch->release == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "no batch (NULL or released)");
    if (batch->n_children != w->schema.n_children || batch->length < 0)
        return tl_error_set(err, TL_ERR_INVALID, "the batch has %lld columns, the schema %lld",
                            (long long)batch->n_children, (long long)w->schema.n_children);
    return TL_OK;
}

tl_status tl_data_writer_write(tl_data_writer *w, const struct ArrowArray *batch, tl_error *err)
{
    if (w->failed) return tl_error_set(err, TL_ERR_INVALID, "the writer failed before: abort it");
    tl_status st = check_batch(w, batch, err);
    if (st == TL_OK)
        st = w->kind == OUT_PARQUET ? tl_parquet_writer_write(w->parquet, batch, err)
                                    : write_text(w, batch, err);
    w->failed = st != TL_OK;
    return st;
}

tl_status tl_data_writer_finish(tl_data_writer *w, tl_error *err)
{
    tl_status st =
        w->failed ? tl_error_set(err, TL_ERR_INVALID, "the writer failed before") : TL_OK;
    if (st == TL_OK && w->kind == OUT_PARQUET) {
        tl_buf file = {0};
        st = tl_parquet_writer_finish(w->parquet, &file, NULL, err);
        if (st == TL_OK && fwrite(file.data, 1, file.len, w->f) != file.len)
            st = tl_error_set(err, TL_ERR_STORAGE, "cannot write the result");
        tl_buf_free(&file);
    }
    tl_data_writer_abort(w);
    return st;
}

void tl_data_writer_abort(tl_data_writer *w)
{
    if (w == NULL) return;
    tl_parquet_writer_free(w->parquet);
    tl_buf_free(&w->text);
    tl_schema_release(&w->schema);
    free(w);
}
