/* Columns that are not one flat Parquet leaf: lists (3-level LIST), maps (MAP of
 * key_value), structs (groups), sparse and dense unions (a group of a tag and its
 * members), enums (dictionary-encoded strings, written as plain UTF8 strings) and
 * month_day_nano intervals (INTERVAL). Describes their Parquet schema and shreds
 * their rows into the repetition and definition levels of each leaf (Dremel). */
#ifndef TL_PARQUET_NESTED_H
#define TL_PARQUET_NESTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_schema.h"

/* Whether a top-level field goes through this path rather than the flat one. */
bool tl_pq_field_is_nested(const struct ArrowSchema *field);

typedef struct tl_pq_nested tl_pq_nested;

/* Level entries of one leaf for the rows last shredded. */
typedef struct tl_pq_leaf_levels {
    uint32_t *def, *rep;
    size_t n, cap;
    int64_t *slots; /* index in *values of each entry whose def is the leaf's max_def */
    size_t n_slots, slots_cap;
    const tl_array_view *values; /* what the slots index (valid until the next shred) */
} tl_pq_leaf_levels;

/* field is borrowed and must outlive the result. */
tl_status tl_pq_nested_new(const struct ArrowSchema *field, tl_pq_nested **out, tl_error *err);
void tl_pq_nested_free(tl_pq_nested *n);

/* The schema elements of the column, depth first (the first one is the column). */
const tl_pq_schema_element *tl_pq_nested_elements(tl_pq_nested *n, size_t *count);
/* Leaves, in schema order; descs stay owned by n. */
size_t tl_pq_nested_n_leaves(const tl_pq_nested *n);
const tl_pq_column_desc *tl_pq_nested_leaf(const tl_pq_nested *n, size_t i);

/* Shreds rows [start, start + count) of column (an array of the field, borrowed
 * until the next call or tl_pq_nested_release) into each leaf's levels. first_row
 * numbers the rows in errors (an interval Parquet cannot hold names its row). */
tl_status tl_pq_nested_shred(tl_pq_nested *n, const struct ArrowArray *column, int64_t start,
                             int64_t count, int64_t first_row, tl_error *err);
tl_pq_leaf_levels *tl_pq_nested_levels(tl_pq_nested *n, size_t leaf);
/* Forgets the views of the last shredded array. */
void tl_pq_nested_release(tl_pq_nested *n);

#endif
