/* Stable multi-key sorting of rows.
 *
 * Order: each key ascending or descending; nulls first or last per key,
 * whatever the direction. Floats follow IEEE total order (-0.0 sorts before
 * +0.0) except that every NaN sorts after all numbers, in both directions, and
 * before the nulls when nulls are last. Strings and binaries compare bytewise.
 * Ties keep the original row order.
 *
 * How: every key becomes dense, order-preserving unsigned codes (min/max range
 * compression for numbers, ranks of the distinct values for strings found with
 * a hash table), the codes are packed into as few 64-bit words as possible,
 * and the rows are radix-sorted on the words (MSD with early exit for already
 * sorted buckets). Already sorted input is detected in O(n). */
#ifndef TL_ARROW_SORT_H
#define TL_ARROW_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"

typedef struct tl_sort_key {
    const tl_array_view *view;
    bool descending;
    bool nulls_first;
} tl_sort_key;

/* Stable sort of row indices 0..length-1 by the keys (the first key is the
 * most significant). *out is malloc'd (free it). Views may be plain or
 * dictionary-encoded, of any type but float16, null and struct; each must have
 * `length` rows. At most 2^32 - 1 rows. */
tl_status tl_arrow_sort_indices(const tl_sort_key *keys, size_t n_keys, int64_t length,
                                int64_t **out, tl_error *err);

/* Whether rows 0..length-1 are already in the order the keys define. */
tl_status tl_arrow_is_sorted(const tl_sort_key *keys, size_t n_keys, int64_t length, bool *out,
                             tl_error *err);

#endif
