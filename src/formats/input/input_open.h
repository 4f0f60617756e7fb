/* Opening any supported input file as an ArrowArrayStream: CSV, TSV (either
 * gzipped), NDJSON and Parquet, chosen by the file's extension or named. */
#ifndef TL_INPUT_INPUT_OPEN_H
#define TL_INPUT_INPUT_OPEN_H

#include "core/error.h"
#include "formats/input/text_input.h"

typedef enum tl_input_format {
    TL_INPUT_AUTO, /* from the extension */
    TL_INPUT_CSV,
    TL_INPUT_TSV,
    TL_INPUT_NDJSON,
    TL_INPUT_PARQUET
} tl_input_format;

/* "csv", "tsv", "ndjson" (or "jsonl", "json"), "parquet"; anything else is TL_ERR_INVALID. */
tl_status tl_input_format_parse(const char *name, tl_input_format *out, tl_error *err);

/* The canonical name of a format ("csv", "tsv", "ndjson", "parquet"; static);
 * NULL for TL_INPUT_AUTO. */
const char *tl_input_format_name(tl_input_format format);

/* From the extension: .csv .tsv (each optionally .gz), .ndjson .jsonl .json
 * (optionally .gz), .parquet .pq. An unknown one is TL_ERR_INVALID. */
tl_status tl_input_format_of_path(const char *path, tl_input_format *out, tl_error *err);

typedef struct tl_input_options {
    tl_input_format format;
    const struct ArrowSchema *target; /* NULL to infer (borrowed); Parquet: checked for
                                         required columns only */
    int64_t batch_rows;               /* 0: 65536 */
    tl_input_progress_fn progress;    /* NULL, or told the bytes read after each batch */
    void *progress_ctx;
} tl_input_options;

/* Opens `path` ("-" is stdin, which needs a format). On success *out is owned
 * by the caller. Bad input is TL_ERR_INVALID naming the file; a missing file
 * TL_ERR_NOT_FOUND. */
tl_status tl_input_open(const char *path, const tl_input_options *options,
                        struct ArrowArrayStream *out, tl_error *err);

/* The same for `len` bytes at `data` (borrowed: they must outlive the stream),
 * named `name` in messages: text formats only (CSV, TSV, NDJSON, gzipped or
 * not; the format must be given), Parquet is TL_ERR_INVALID. */
tl_status tl_input_open_memory(const uint8_t *data, size_t len, const char *name,
                               const tl_input_options *options, struct ArrowArrayStream *out,
                               tl_error *err);

#endif
