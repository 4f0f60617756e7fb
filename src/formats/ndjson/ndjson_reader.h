/* Streaming NDJSON reader: one flat JSON object per line, blank lines skipped.
 * Rows come out in batches through an ArrowArrayStream.
 *
 * With a target schema its fields are the columns: values are coerced to the
 * field types (a JSON string is parsed as the type, "2024-05-01T10:00:00Z" into
 * a timestamp), a key that is not a field is an error, a missing key is null.
 * Without one, the columns are the keys of the first batch in order of first
 * appearance, typed by tl_text_batch_infer (JSON strings may become dates and
 * timestamps, literals integers, floats and booleans). */
#ifndef TL_NDJSON_READER_H
#define TL_NDJSON_READER_H

#include <stdint.h>

#include "core/error.h"
#include "formats/input/text_input.h"

typedef struct tl_ndjson_options {
    int64_t batch_rows;            /* rows per batch; 0 means 65536 */
    tl_input_progress_fn progress; /* NULL, or called after each batch is read */
    void *progress_ctx;
} tl_ndjson_options;

/* As tl_csv_stream_open: takes over `in`; `target` (borrowed) may be NULL;
 * malformed input is TL_ERR_INVALID naming the input, line and column. */
tl_status tl_ndjson_stream_open(tl_text_input *in, const tl_ndjson_options *options,
                                const struct ArrowSchema *target, struct ArrowArrayStream *out,
                                tl_error *err);

#endif
