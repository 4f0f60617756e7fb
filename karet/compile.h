/* The SQL a run executes for one table over the rows of one source file:
 * every mapping from that source into that table, in config order, each row
 * carrying its mapping ("__karet_m"), its row number in the file
 * ("__karet_row") and the assertions it breaks ("__karet_viol", NULL when
 * none). The file's rows are the relation "__karet_src". */
#ifndef KARET_COMPILE_H
#define KARET_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "strbuf.h"

#define KARET_SRC "__karet_src"
#define KARET_COL_MAPPING "__karet_m"
#define KARET_COL_ROW "__karet_row"
#define KARET_COL_VIOLATION "__karet_viol"

/* The rows of a dimension, one per key (an inline row with several
 * patterns gives several), as strings: cells[r * width] is the key, then the
 * values; NULL cells are nulls. A match is won by the highest priority[r],
 * then the lowest order[r] (the row's place in the definition; NULL: r). */
typedef struct kdim_rows {
    size_t nrows, width; /* width = 1 + the dimension's value columns */
    char **cells;
    double *priority;
    int64_t *order;
} kdim_rows;

/* The rows of an inline dimension. Returns false when out of memory. */
bool kdim_rows_inline(const kdimension *d, kdim_rows *out);
void kdim_rows_free(kdim_rows *r);

/* Appends the SELECT of mapping m (its columns converted to the table's
 * types, record filter, where filter and assertion checks) over KARET_SRC.
 * dims_used (config ndims flags) is set for the dimensions it looks up. */
void kcompile_mapping(const kconfig *c, const kmapping *m, bool *dims_used, kbuf *out);

/* Appends the definition "name AS (SELECT __karet_k, ...)" of a dimension's
 * relation from its rows. */
void kcompile_dimension(const kdimension *d, const kdim_rows *rows, kbuf *out);

/* The whole query for table t over a file of source s: the dimensions it
 * uses (rows[i] for dimension i), then the union of its mappings ordered
 * by mapping and row. Without `ordered`, one mapping that looks up no
 * dimension (a plain projection and filter) is left in the order DuckDB
 * gives, which is that order unless DuckDB changes its ways: a sort saved
 * where the caller checks the order. Returns false when no mapping reads s
 * into t. */
bool kcompile_table(const kconfig *c, const ktable *t, const ksource *s, const kdim_rows *rows,
                    bool ordered, kbuf *out);

#endif
