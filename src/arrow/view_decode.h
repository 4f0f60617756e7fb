/* Arrow's string and binary view layouts (format "vu"/"vz", what polars
 * exports) turned into plain large string/binary arrays, which every kernel
 * reads. Each 16-byte view holds its length and either the bytes themselves
 * (up to 12) or a prefix, a variadic buffer index and an offset. */
#ifndef TL_ARROW_VIEW_DECODE_H
#define TL_ARROW_VIEW_DECODE_H

#include "arrow/array.h"

/* Copies a view array (src->array must be the producer's array) into *out, a
 * large string or binary array owned by the caller. Every view is checked
 * against its buffer's size: a bad one is TL_ERR_INVALID naming the row. */
tl_status tl_arrow_views_decode(const tl_array_view *src, struct ArrowArray *out, tl_error *err);

#endif
