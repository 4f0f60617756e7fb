/* Reads flat Parquet files through ranged reads: the footer once, then whole
 * column chunks of the row groups asked for, decoded into Arrow arrays. */
#ifndef TL_PARQUET_READER_H
#define TL_PARQUET_READER_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/parquet_stats.h"

/* Random-access input: the reader asks for byte ranges (object stores do ranged GETs). */
typedef struct tl_parquet_source {
    void *ctx;
    uint64_t size; /* total file size */
    /* Reads exactly len bytes at offset into dst. */
    tl_status (*read)(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err);
} tl_parquet_source;

/* A source over bytes in memory; borrows data, which must outlive the reader. */
void tl_parquet_source_from_memory(tl_parquet_source *src, const uint8_t *data, size_t len);

typedef struct tl_parquet_reader tl_parquet_reader;

/* Reads and checks the footer. The source struct is copied; its ctx is borrowed. */
tl_status tl_parquet_reader_open(const tl_parquet_source *src, tl_parquet_reader **out,
                                 tl_error *err);
void tl_parquet_reader_free(tl_parquet_reader *r);

/* Another reader of base's file through src (for another thread: a reader is
 * not shared between threads), with base's parsed footer and the page
 * indexes base has loaded so far borrowed instead of read and parsed again;
 * its own codec context, and page indexes it loads itself. Free it before
 * base; base may go on reading meanwhile, from one other thread. */
tl_status tl_parquet_reader_share(const tl_parquet_reader *base, const tl_parquet_source *src,
                                  tl_parquet_reader **out, tl_error *err);

int64_t tl_parquet_reader_num_rows(const tl_parquet_reader *r);
int tl_parquet_reader_num_row_groups(const tl_parquet_reader *r);
int64_t tl_parquet_reader_row_group_rows(const tl_parquet_reader *r, int rg);
int tl_parquet_reader_num_columns(const tl_parquet_reader *r);

/* The file's Arrow schema (struct of flat fields), each field carrying Arrow metadata
 * "PARQUET:field_id" = "<id>" when the file has field ids. Caller releases *out.
 * Types follow pyarrow (INT64 TIMESTAMP(UTC, MICROS) -> "tsu:UTC", STRING -> "u", ...). */
tl_status tl_parquet_reader_schema(const tl_parquet_reader *r, struct ArrowSchema *out,
                                   tl_error *err);

/* Reads columns (indices into the schema; NULL/0 = all) of one row group into a struct
 * array (owned by the caller, release it). Dictionary-encoded byte-array columns decode
 * to plain utf8/binary. */
tl_status tl_parquet_reader_read_row_group(tl_parquet_reader *r, int rg, const int *columns,
                                           size_t n_columns, struct ArrowArray *out, tl_error *err);

/* Statistics of one column chunk; free min/max with tl_parquet_column_stats_clear.
 * null_count is -1 when the file does not say; nan_count is always -1. */
tl_status tl_parquet_reader_column_stats(const tl_parquet_reader *r, int rg, int column,
                                         tl_parquet_column_stats *out, tl_error *err);

/* The parsed footer, for callers that need more (page index offsets, key/value metadata). */
const tl_pq_file_meta *tl_parquet_reader_meta(const tl_parquet_reader *r);

/* The index of a flat column's chunk in each row group of the footer (columns
 * after a nested one are offset by its leaves); -1 for a nested column. */
int tl_parquet_reader_leaf(const tl_parquet_reader *r, int column);

/* Reads and parses the page index of one column chunk (once: kept with the reader);
 * entries live until the reader is freed. TL_ERR_NOT_FOUND when the chunk has none. */
tl_status tl_parquet_reader_page_index(tl_parquet_reader *r, int rg, int column,
                                       tl_pq_column_index *ci, tl_pq_offset_index *oi,
                                       tl_error *err);

/* Rows [start, end) of a row group. */
typedef struct tl_pq_row_range {
    int64_t start, end;
} tl_pq_row_range;

/* Reads the rows of `ranges` (sorted, disjoint, non-empty, inside the row group) of one
 * column of row group rg into *out (owned by the caller): only the data pages holding
 * them (by the chunk's offset index) and the dictionary page are read and decoded;
 * without an offset index, the whole chunk. *bytes_read grows by the bytes read. */
tl_status tl_parquet_reader_read_rows(tl_parquet_reader *r, int rg, int column,
                                      const tl_pq_row_range *ranges, size_t n_ranges,
                                      struct ArrowArray *out, int64_t *bytes_read, tl_error *err);

/* As tl_parquet_reader_read_rows, but of a flat byte-array column with a
 * dictionary: its dictionary indices (tl_pq_read_column_codes: an int32
 * array whose dictionary is the chunk's, as utf8). TL_ERR_NOT_FOUND, nothing
 * in *out, when the column has no dictionary or a page it reads holds values
 * instead (then read the rows). */
tl_status tl_parquet_reader_read_codes(tl_parquet_reader *r, int rg, int column,
                                       const tl_pq_row_range *ranges, size_t n_ranges,
                                       struct ArrowArray *out, int64_t *bytes_read, tl_error *err);

/* Of the rows of `ranges` of one INT64 column of row group rg (values Arrow
 * holds as they are, such as microsecond timestamps), how many hold a value
 * in [lo, hi] (*count; nulls never do): the pages holding them are decoded
 * (tl_pq_count_column_pages), no value stored. TL_ERR_NOT_FOUND, nothing
 * counted, when the column is of another kind, has no offset index, or a
 * range holds part of a page only (then read the rows). */
tl_status tl_parquet_reader_count_rows(tl_parquet_reader *r, int rg, int column,
                                       const tl_pq_row_range *ranges, size_t n_ranges, int64_t lo,
                                       int64_t hi, int64_t *count, int64_t *bytes_read,
                                       tl_error *err);

#endif
