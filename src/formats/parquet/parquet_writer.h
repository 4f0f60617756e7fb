/* Writes Arrow record batches as one Parquet file in memory: data page v1,
 * definition levels as RLE, dictionary encoding for byte arrays, statistics,
 * field ids, sorting columns and an optional page index. */
#ifndef TL_PARQUET_WRITER_H
#define TL_PARQUET_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/parquet/parquet_stats.h"

typedef enum tl_parquet_codec {
    TL_PARQUET_UNCOMPRESSED,
    TL_PARQUET_SNAPPY,
    TL_PARQUET_GZIP,
    TL_PARQUET_ZSTD,
    TL_PARQUET_LZ4_RAW,
    TL_PARQUET_BROTLI
} tl_parquet_codec;

/* Value encodings of non-dictionary pages. */
typedef enum tl_parquet_encodings {
    /* DELTA_BINARY_PACKED for INT32/INT64 columns, BYTE_STREAM_SPLIT for FLOAT/DOUBLE:
     * smaller files and much less work for the compressor. Read by pyarrow, DuckDB,
     * polars, arrow-rs and parquet-java 1.12+. */
    TL_PARQUET_ENCODINGS_COMPACT = 0,
    /* PLAIN only (plus dictionaries for byte arrays): for the oldest readers. */
    TL_PARQUET_ENCODINGS_PLAIN = 1
} tl_parquet_encodings;

typedef struct tl_parquet_write_options {
    tl_parquet_codec codec; /* callers always set it */
    int compression_level;  /* zstd/gzip/brotli level, e.g. 3; 0: the codec's default */
    /* 0: every column chunk is compressed. 1-100: a chunk whose first data page
     * the codec shrinks by less than this percentage is stored uncompressed. A
     * float page of over 1,024 values is judged by its first 1,024 when they
     * leave no doubt (5 points either side), else whole. */
    int min_saving_pct;
    int64_t page_rows;              /* rows per data page, e.g. 20000; <= 0: 20000 */
    int64_t row_group_rows;         /* max rows per row group, e.g. 1000000; <= 0: 1000000 */
    const int32_t *field_ids;       /* per top-level column, or NULL: written as Parquet field_id */
    const int32_t *sorting_columns; /* column indices: ascending, nulls first */
    size_t n_sorting_columns;
    const char *created_by;                /* e.g. "timelake-c 0.1.0"; NULL: that */
    const char *const *key_value_metadata; /* NULL or NULL-terminated key, value pairs */
    bool write_page_index;                 /* ColumnIndex + OffsetIndex */
    tl_parquet_encodings encodings;        /* zeroed: COMPACT */
    int threads; /* columns encoded in parallel: 0 = one per CPU (at most 8), 1 = none */
} tl_parquet_write_options;

typedef struct tl_parquet_writer tl_parquet_writer;

/* schema: a struct ("+s") ArrowSchema of flat columns, borrowed (copied as needed).
 * opts is copied too. */
tl_status tl_parquet_writer_open(const struct ArrowSchema *schema,
                                 const tl_parquet_write_options *opts, tl_parquet_writer **out,
                                 tl_error *err);

/* batch: a struct array matching the schema, borrowed (not released). May be called
 * many times; rows accumulate into row groups of row_group_rows. A batch is
 * checked before anything of it is written, so a rejected batch (a null in a
 * non-nullable column, a wrong shape) leaves the writer usable. */
tl_status tl_parquet_writer_write(tl_parquet_writer *w, const struct ArrowArray *batch,
                                  tl_error *err);

/* Makes room for a file of `bytes` bytes at once, for a caller that knows
 * about how big the file will be (a compaction: its inputs' size). The file
 * buffer otherwise grows by doubling: each step maps fresh pages and copies
 * the whole file so far. A hint: past `bytes` the buffer grows as before.
 * 0, or -1 when memory runs out (the writer unchanged and usable). */
int tl_parquet_writer_reserve(tl_parquet_writer *w, size_t bytes);

/* Finishes the file: *out (empty on entry) receives the whole file's bytes (caller
 * owns it, tl_buf_free), *stats (may be NULL) the per-file statistics (caller frees
 * with tl_parquet_file_stats_free). The writer can only be freed afterwards. */
tl_status tl_parquet_writer_finish(tl_parquet_writer *w, tl_buf *out, tl_parquet_file_stats *stats,
                                   tl_error *err);

void tl_parquet_writer_free(tl_parquet_writer *w);

#endif
