/* Writes Arrow batches as JSON lines: one object per row, keys in column order;
 * values as tl_value_printer_json writes them: numbers and booleans bare,
 * structs, maps and lists as objects and arrays, everything else (dates,
 * times, timestamps, intervals, decimals, strings, hex of binary, NaN and
 * infinities) as strings. */
#ifndef TL_NDJSON_JSON_WRITER_H
#define TL_NDJSON_JSON_WRITER_H

#include "core/buf.h"

/* The rows of `batch`, a struct array of `schema` (both borrowed). */
tl_status tl_json_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              tl_buf *out, tl_error *err);

#endif
