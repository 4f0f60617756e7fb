/* Column statistics shared by the writer (per file, for Iceberg manifests) and
 * the reader (per column chunk), plus the orderings Parquet compares them by. */
#ifndef TL_PARQUET_STATS_H
#define TL_PARQUET_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef struct tl_parquet_column_stats {
    int32_t field_id;        /* -1 if none */
    int64_t value_count;     /* values incl. nulls */
    int64_t null_count;      /* -1 when unknown (a reader's file without it) */
    int64_t nan_count;       /* float/double only, else -1 (and -1 when read from a file) */
    int64_t compressed_size; /* total bytes of the column's chunks (header+pages) */
    bool has_min_max;
    uint8_t *min, *max; /* PLAIN-encoded value of the Parquet physical type (no length prefix for
                           BYTE_ARRAY): exactly the bytes of Statistics.min_value / max_value */
    size_t min_len, max_len;
} tl_parquet_column_stats;

typedef struct tl_parquet_file_stats {
    int64_t num_rows;
    int64_t file_size;
    size_t n_columns;
    tl_parquet_column_stats *columns; /* aggregated over all row groups, in column order */
    size_t n_row_groups;
    int64_t *row_group_offsets; /* Iceberg split_offsets: file offset of each row group */
} tl_parquet_file_stats;

/* Frees min/max of one column's stats and clears them. */
void tl_parquet_column_stats_clear(tl_parquet_column_stats *s);
/* Frees everything a tl_parquet_file_stats holds and zeroes it. NULL-safe. */
void tl_parquet_file_stats_free(tl_parquet_file_stats *s);

/* How Parquet orders a column's min/max values. */
typedef enum tl_pq_order {
    TL_PQ_ORDER_NONE, /* no defined order (INT96, intervals): no statistics */
    TL_PQ_ORDER_BOOL,
    TL_PQ_ORDER_I32,
    TL_PQ_ORDER_U32,
    TL_PQ_ORDER_I64,
    TL_PQ_ORDER_U64,
    TL_PQ_ORDER_FLOAT,
    TL_PQ_ORDER_DOUBLE,
    TL_PQ_ORDER_BYTES,     /* unsigned lexicographic */
    TL_PQ_ORDER_DECIMAL_BE /* signed big-endian two's complement, any length */
} tl_pq_order;

/* <0, 0, >0 as a orders before, equal to or after b. */
int tl_pq_order_compare(tl_pq_order order, const uint8_t *a, size_t alen, const uint8_t *b,
                        size_t blen);

/* Replaces *dst (malloc'd, may be NULL) with a copy of src. 0, or -1 when out of memory. */
int tl_pq_stats_take(uint8_t **dst, size_t *dst_len, const uint8_t *src, size_t len);

#endif
