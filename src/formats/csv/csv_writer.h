/* Writes Arrow batches as CSV (RFC 4180: fields with the delimiter, a quote or
 * a line end are quoted; nulls are empty fields). Values as tl_value_printer_text
 * prints them (nested ones as {'a': 1} and [1, 2]). */
#ifndef TL_CSV_WRITER_H
#define TL_CSV_WRITER_H

#include "core/buf.h"

/* The header row of a struct schema. */
tl_status tl_csv_write_header(const struct ArrowSchema *schema, char delimiter, tl_buf *out,
                              tl_error *err);

/* The rows of `batch`, a struct array of `schema` (both borrowed). */
tl_status tl_csv_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                             char delimiter, tl_buf *out, tl_error *err);

#endif
