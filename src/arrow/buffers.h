/* Buffer-level helpers shared by the compute kernels (cast, take, concat, sort,
 * builder): validity bitmaps, var-width offsets and output buffer allocation. */
#ifndef TL_ARROW_BUFFERS_H
#define TL_ARROW_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"

/* Allocates `size` bytes (64-byte aligned) as buffer i of an owned array and
 * returns it, or NULL. Unlike tl_array_alloc_buffer only the padding after
 * `size` is zeroed: kernels overwrite every byte they hand out. */
void *tl_buffer_alloc(struct ArrowArray *array, int64_t i, size_t size);

/* Number of set bits in bits[offset, offset + length). */
int64_t tl_bitmap_count(const uint8_t *bits, int64_t offset, int64_t length);

/* Copies `length` bits from src (starting at bit src_off) to dst (at bit dst_off). */
void tl_bitmap_copy(uint8_t *dst, int64_t dst_off, const uint8_t *src, int64_t src_off,
                    int64_t length);

/* Sets bits [offset, offset + length) of dst to `value`. */
void tl_bitmap_fill(uint8_t *dst, int64_t offset, int64_t length, bool value);

/* Makes out->buffers[0] a copy of the view's validity (rebased to offset 0)
 * and sets out->null_count exactly; leaves buffer 0 NULL when there is no null.
 * For a dictionary view this is the validity of the indices. */
tl_status tl_validity_copy(const tl_array_view *v, struct ArrowArray *out, tl_error *err);

/* Checks that the offsets of a var-width view never decrease, so every
 * element has a non-negative length inside the data range the view checked. */
tl_status tl_offsets_check(const tl_array_view *v, tl_error *err);

/* Offset j (absolute, offset of the view already added) of a var-width view. */
static inline int64_t tl_offset_at(const tl_array_view *v, int64_t j)
{
    return tl_atype_is_large(v->type.id) ? ((const int64_t *)v->values)[j]
                                         : ((const int32_t *)v->values)[j];
}

/* Fills a view of an array this library built itself with the type `type`
 * (trusted: no shape checks). Not for dictionary arrays; needs no view_free. */
void tl_view_of_owned(const tl_arrow_type *type, const struct ArrowArray *array,
                      tl_array_view *out);

/* Bytes per value of a fixed-width type (0 for bool, var-width and others). */
int tl_type_byte_width(const tl_arrow_type *type);

/* True when two types are the same, time zone included. */
bool tl_type_equal(const tl_arrow_type *a, const tl_arrow_type *b);

#endif
