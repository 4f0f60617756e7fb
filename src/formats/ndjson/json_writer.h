/* Writes Arrow batches as JSON lines: one object per row, keys in column order;
 * numbers and booleans bare (non-finite floats as null), everything else
 * (dates, timestamps, decimals, strings, hex of binary) as strings. */
#ifndef TL_NDJSON_JSON_WRITER_H
#define TL_NDJSON_JSON_WRITER_H

#include "core/buf.h"

/* The rows of `batch`, a struct array of `schema` (both borrowed). */
tl_status tl_json_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              tl_buf *out, tl_error *err);

#endif
