/* Concatenation of arrays of one type into one owned array. */
#ifndef TL_ARROW_CONCAT_H
#define TL_ARROW_CONCAT_H

#include <stddef.h>

#include "arrow/array.h"

/* Appends the rows of parts[0..n_parts) (each with any offset) into *out, an
 * owned array with offset 0, exact null_count and NULL validity when there is
 * no null. All parts must have the same type (time zone included), else
 * TL_ERR_INVALID naming the part; dictionary-encoded parts are decoded, so the
 * result has the value type. Fixed-width parts are one memcpy each. */
tl_status tl_arrow_concat(const tl_array_view *parts, size_t n_parts, struct ArrowArray *out,
                          tl_error *err);

/* Concatenates struct arrays of the same struct schema column by column into
 * *out (owned by the caller). */
tl_status tl_arrow_concat_struct(const struct ArrowSchema *schema, const struct ArrowArray *arrays,
                                 size_t n, struct ArrowArray *out, tl_error *err);

#endif
