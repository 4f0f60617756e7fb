/* Row selection kernels: take (gather rows by index), copy, slice and
 * dictionary decoding. Every output is an owned array with offset 0 whose
 * validity buffer is NULL when it has no null and whose null_count is exact. */
#ifndef TL_ARROW_TAKE_H
#define TL_ARROW_TAKE_H

#include <stdint.h>

#include "arrow/array.h"

/* out[i] = src[indices[i]] for i < n. An index of -1 gives a null; any other
 * index outside [0, src->length) is TL_ERR_INVALID. A dictionary view gives a
 * dictionary array with the same index type whose dictionary is a copy of the
 * source's (so the caller's schema still describes it). */
tl_status tl_arrow_take(const tl_array_view *src, const int64_t *indices, int64_t n,
                        struct ArrowArray *out, tl_error *err);

/* A struct ("+s") batch variant: take the same indices from every child (the
 * struct's own offset and validity are honoured). *out is a struct array that
 * `schema` describes. Errors name the column. */
tl_status tl_arrow_take_struct(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                               const int64_t *indices, int64_t n, struct ArrowArray *out,
                               tl_error *err);

/* An owned copy of the view's rows (dictionary views stay dictionary-encoded).
 * Fixed-width values are one memcpy; offsets are rebased to start at 0. */
tl_status tl_arrow_copy(const tl_array_view *src, struct ArrowArray *out, tl_error *err);

/* Decodes a dictionary view into a plain array of its value type. Indices are
 * bounds-checked against the dictionary (TL_ERR_INVALID naming the row). */
tl_status tl_arrow_dict_decode(const tl_array_view *src, struct ArrowArray *out, tl_error *err);

/* The dictionary indices of each row as int64 (-1 for a null row), checked
 * against the dictionary length. *out is malloc'd (free it). */
tl_status tl_arrow_dict_indices(const tl_array_view *src, int64_t **out, tl_error *err);

/* A zero-copy view of rows [start, start + length) of src, which must lie
 * inside it (TL_ERR_INVALID otherwise). The slice borrows src's buffers and its
 * dictionary view: it is valid while src is, and must NOT be passed to
 * tl_array_view_free. For an owned slice, tl_arrow_copy the slice. */
tl_status tl_arrow_view_slice(const tl_array_view *src, int64_t start, int64_t length,
                              tl_array_view *out, tl_error *err);

#endif
