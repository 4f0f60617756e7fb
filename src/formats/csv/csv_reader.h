/* Streaming CSV/TSV reader: a header row, RFC 4180 quoting ("" escapes a quote,
 * quoted fields may span lines), LF or CRLF line ends, blank lines skipped, a
 * UTF-8 BOM ignored. Rows come out in batches through an ArrowArrayStream, so
 * memory is bounded by the batch size, not the file size.
 *
 * Types come from a target schema (the table's: values are parsed straight into
 * its types) or are inferred from the first batch (see tl_text_batch_infer).
 * In non-string columns pyarrow's null spellings ("", "NA", "null", "NaN", ...)
 * are nulls; in string columns every value is text. */
#ifndef TL_CSV_READER_H
#define TL_CSV_READER_H

#include <stdint.h>

#include "core/error.h"
#include "formats/input/text_input.h"

typedef struct tl_csv_options {
    char delimiter;                /* ',' (the default when 0) or '\t' */
    int64_t batch_rows;            /* rows per batch; 0 means 65536 */
    tl_input_progress_fn progress; /* NULL, or called after each batch is read */
    void *progress_ctx;
} tl_csv_options;

/* Opens a stream over the CSV read from `in`, which the stream takes over (it is
 * closed when the stream is released, or by this call on failure). `target` is
 * NULL to infer types, or a borrowed struct schema: every header column must be
 * one of its fields and is parsed as that field's type. `options` may be NULL.
 * Reads the header and the first batch; malformed input is TL_ERR_INVALID naming
 * the input, the line and the column. On success *out is owned by the caller. */
tl_status tl_csv_stream_open(tl_text_input *in, const tl_csv_options *options,
                             const struct ArrowSchema *target, struct ArrowArrayStream *out,
                             tl_error *err);

#endif
