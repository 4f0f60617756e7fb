/* A valid Parquet file holding some row groups and some columns of another,
 * built from the original's footer and the byte ranges of the column chunks
 * it keeps: the chunks are copied as they are (pages untouched) and the
 * footer is rewritten with their new offsets. This lets a reader fetch only
 * the parts of a large remote file a query needs (ranged reads) and still
 * hand DuckDB an ordinary file. */
#ifndef TL_PARQUET_SUBSET_H
#define TL_PARQUET_SUBSET_H

#include <stdbool.h>
#include <stdint.h>

#include "formats/parquet/parquet_meta.h"

/* The bytes [offset, offset + len) of a column chunk in its file: from its
 * dictionary page (when it has one) to the end of its last data page. */
void tl_pq_chunk_range(const tl_pq_column_chunk *c, uint64_t *offset, uint64_t *len);

/* The footer's length from a file's last 8 bytes (length + "PAR1"); checks
 * that it fits in a file of file_size bytes. */
tl_status tl_pq_footer_len(const uint8_t tail[8], uint64_t file_size, uint64_t *len, tl_error *err);

/* Whether the schema is flat: a root whose children are all leaves (the
 * columns), with every row group holding one chunk per leaf. */
bool tl_pq_subset_flat(const tl_pq_file_meta *m);

/* Whether columns can be left out: a flat schema (every column a top-level
 * leaf) whose types this library can write back, and no encryption. Row
 * groups can always be left out of an unencrypted file. */
bool tl_pq_subset_columns_ok(const tl_pq_file_meta *m);

/* Returns a pointer to len bytes of the original file at offset, or NULL when
 * they were not fetched. */
typedef const uint8_t *(*tl_pq_bytes_fn)(void *ctx, uint64_t offset, uint64_t len);

/* Appends to out the file holding the row groups with keep_rg[i] and the
 * leaf columns with keep_col[j] (NULL: all), in their original order. At
 * least one column must be kept; keep_col must be all true (or NULL) unless
 * tl_pq_subset_columns_ok. Page and column indexes are not carried over. */
tl_status tl_pq_subset_write(const tl_pq_file_meta *m, const bool *keep_rg, const bool *keep_col,
                             tl_pq_bytes_fn bytes, void *ctx, tl_buf *out, tl_error *err);

#endif
