/* A Parquet file (or stdin, read into memory: Parquet needs random access) as
 * an ArrowArrayStream of one batch per row group. */
#ifndef TL_INPUT_PARQUET_STREAM_H
#define TL_INPUT_PARQUET_STREAM_H

#include "core/error.h"
#include "formats/input/text_input.h"

/* Opens `path` ("-" is stdin). On success *out is owned by the caller. A
 * missing file is TL_ERR_NOT_FOUND; a file that is not Parquet TL_ERR_INVALID
 * naming it. `progress` may be NULL. With a `target` (borrowed; NULL for
 * none), a required field of it that the file lacks, or a null in one, is
 * TL_ERR_INVALID naming the file (and the row of the file). */
tl_status tl_parquet_stream_open(const char *path, const struct ArrowSchema *target,
                                 tl_input_progress_fn progress, void *progress_ctx,
                                 struct ArrowArrayStream *out, tl_error *err);

#endif
