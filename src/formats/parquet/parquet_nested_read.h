/* Reading columns that are not one flat leaf: structs (groups), lists (the
 * standard 3-level LIST and the legacy 2-level forms) and maps (MAP of
 * key_value). Describes the column from the footer's schema and assembles its
 * rows from the repetition and definition levels of its leaves (Dremel). */
#ifndef TL_PARQUET_NESTED_READ_H
#define TL_PARQUET_NESTED_READ_H

#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"
#include "core/arena.h"
#include "formats/parquet/parquet_column_reader.h"
#include "formats/parquet/parquet_schema.h"

typedef struct tl_pq_rnode tl_pq_rnode;

/* Describes the top-level group at elems[*at] (advancing *at past its
 * subtree); its leaves' descs are appended to *leaves (realloc'd, *n_leaves
 * of *cap), levels set. Everything else lives in the arena. */
tl_status tl_pq_rnode_parse(tl_arena *arena, const tl_pq_schema_element *elems, size_t n_elems,
                            size_t *at, tl_pq_rnode **out, tl_pq_column_desc **leaves,
                            size_t *n_leaves, size_t *cap, tl_error *err);

/* Leaves under the column. */
size_t tl_pq_rnode_n_leaves(const tl_pq_rnode *n);

/* The column's Arrow field (a list's child "element", a map's "entries" of
 * "key" and "value"), with "PARQUET:field_id" where the file has ids. leaves:
 * the descs of its leaves (from its first). */
tl_status tl_pq_rnode_arrow(const tl_pq_rnode *n, const tl_pq_column_desc *leaves,
                            struct ArrowSchema *out, tl_error *err);

/* `rows` rows of the column from each of its leaves' decoded entries (values
 * and levels, tl_pq_read_column_levels), all three arrays in leaf order from
 * its first leaf. */
tl_status tl_pq_rnode_assemble(const tl_pq_rnode *n, const tl_pq_column_desc *leaves,
                               const struct ArrowArray *values, const tl_pq_levels *levels,
                               int64_t rows, struct ArrowArray *out, tl_error *err);

#endif
