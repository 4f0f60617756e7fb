/* Decodes one column chunk (all its pages, or a chosen subset: dictionary, data v1 and v2, any
 * supported encoding and codec) into an owned Arrow array. */
#ifndef TL_PARQUET_COLUMN_READER_H
#define TL_PARQUET_COLUMN_READER_H

#include <stdint.h>

#include "formats/parquet/parquet_compress.h"
#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/parquet_schema.h"

/* Decompressed pages larger than this are refused as hostile. */
#define TL_PQ_MAX_PAGE_SIZE ((int64_t)1 << 30)

/* chunk: the chunk's bytes (from its first page to its end); rows: the row group's row count.
 * *out receives an owned array; on failure it is left released. */
tl_status tl_pq_read_column_chunk(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const uint8_t *chunk, size_t len, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err);

/* The levels of every entry of a leaf of a nested column (malloc'd arrays of n). */
typedef struct tl_pq_levels {
    uint32_t *def, *rep;
    int64_t n;
} tl_pq_levels;

/* Decodes a chunk of a nested column's leaf (desc->levels) holding `entries`
 * level entries (the chunk's num_values): *levels gets each entry's levels
 * (free both arrays), *out an array of one slot per entry, valid where the
 * entry's definition level is the leaf's maximum. */
tl_status tl_pq_read_column_levels(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                   const uint8_t *chunk, size_t len, int64_t entries,
                                   tl_pq_codec_ctx *cctx, struct ArrowArray *out,
                                   tl_pq_levels *levels, tl_error *err);

/* Bytes holding whole pages (each header and its body). */
typedef struct tl_pq_span {
    const uint8_t *data;
    size_t len;
} tl_pq_span;

/* Decodes the pages in parts (in order: the dictionary page, if any, then
 * data pages) until `rows` rows are read: a chosen subset of a chunk's pages
 * decodes to the concatenation of their rows. */
tl_status tl_pq_read_column_pages(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err);

/* Decodes the pages as tl_pq_read_column_pages does, but a flat byte-array
 * column's dictionary indices instead of its values: *out is an int32 array
 * ("i", 0 at null rows) whose dictionary is the chunk's dictionary page as
 * a utf8 array (entries need not be distinct). TL_ERR_NOT_FOUND when the
 * column is of another kind, has no dictionary page, or a page holds values
 * instead of indices (a writer falls back to them mid-chunk). */
tl_status tl_pq_read_column_codes(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                  const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                  tl_pq_codec_ctx *cctx, struct ArrowArray *out, tl_error *err);

/* Of the rows the pages hold (as tl_pq_read_column_pages reads them), how
 * many values of a flat INT64 column, whose values Arrow holds as they are,
 * lie in [lo, hi] (nulls never do): the pages are decoded, no value stored,
 * and even runs of DELTA_BINARY_PACKED values are counted whole. */
tl_status tl_pq_count_column_pages(const tl_pq_column_desc *desc, tl_pq_codec_id codec,
                                   const tl_pq_span *parts, size_t n_parts, int64_t rows,
                                   tl_pq_codec_ctx *cctx, int64_t lo, int64_t hi, int64_t *count,
                                   tl_error *err);

#endif
