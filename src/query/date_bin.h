/* The reference's date_bin (see date_bin.c): time_bucket.c's function calls
 * it for widths with months, widths that are not positive, and origins. */
#ifndef TL_QUERY_DATE_BIN_H
#define TL_QUERY_DATE_BIN_H

#include <stdbool.h>
#include <stdint.h>

/* *out = the bin of ts (microseconds) for a width of `months` or of `width`
 * microseconds (one of them zero) from `origin`; false with *error (a static
 * message) for a width of both or neither, or a bin out of range. */
bool tl_date_bin_row(int64_t months, int64_t width, int64_t ts, int64_t origin, int64_t *out,
                     const char **error);

#endif
