/* The mapping between Arrow field types and Parquet columns, both ways, and
 * how values convert between the Arrow layout and Parquet's physical type. */
#ifndef TL_PARQUET_SCHEMA_H
#define TL_PARQUET_SCHEMA_H

#include "arrow/arrow_type.h"
#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/parquet_stats.h"

/* How one value moves between its Arrow layout and its Parquet physical type. */
typedef enum tl_pq_conv {
    TL_PQ_CONV_BOOL,        /* bitmap <-> BOOLEAN */
    TL_PQ_CONV_COPY32,      /* 4-byte values <-> INT32 / FLOAT */
    TL_PQ_CONV_COPY64,      /* 8-byte values <-> INT64 / DOUBLE */
    TL_PQ_CONV_I8,          /* int8 <-> INT32 */
    TL_PQ_CONV_U8,          /* uint8 <-> INT32 */
    TL_PQ_CONV_I16,         /* int16 <-> INT32 */
    TL_PQ_CONV_U16,         /* uint16 <-> INT32 */
    TL_PQ_CONV_SCALE32,     /* time32[s] -> INT32 milliseconds (write only) */
    TL_PQ_CONV_SCALE64,     /* timestamp[s] -> INT64 milliseconds (write only) */
    TL_PQ_CONV_DATE64,      /* date64 milliseconds -> INT32 days (write only) */
    TL_PQ_CONV_BYTES,       /* variable-length binary <-> BYTE_ARRAY */
    TL_PQ_CONV_FIXED,       /* fixed-size binary / float16 <-> FIXED_LEN_BYTE_ARRAY */
    TL_PQ_CONV_DECIMAL,     /* decimal128 <-> big-endian FLBA or BYTE_ARRAY */
    TL_PQ_CONV_DECIMAL_I32, /* INT32 -> decimal128 (read only) */
    TL_PQ_CONV_DECIMAL_I64, /* INT64 -> decimal128 (read only) */
    TL_PQ_CONV_INT96,       /* INT96 -> timestamp[ns] (read only) */
    TL_PQ_CONV_INTERVAL     /* month_day_nano -> INTERVAL FLBA(12) (write only, checked first) */
} tl_pq_conv;

typedef struct tl_pq_column_desc {
    const char *name;
    tl_arrow_type arrow;
    tl_pq_schema_element elem; /* name borrowed from the Arrow schema or the footer */
    tl_pq_conv conv;
    tl_pq_order order;
    int phys_width; /* bytes per physical value; 0 for BYTE_ARRAY, 1 for BOOLEAN (a bit) */
    bool nullable;
    /* Leaves of nested columns (and enum or interval columns) carry their levels:
     * written from tl_pq_colw_write_levels, never from tl_pq_colw_write. */
    bool levels;
    int16_t max_def, max_rep;
    const char **path; /* n_path names from the top-level column down; NULL: {name} */
    size_t n_path;
} tl_pq_column_desc;

/* Describes how to write an Arrow field (one child of the batch's struct). */
tl_status tl_pq_column_from_arrow(const struct ArrowSchema *field, tl_pq_column_desc *out,
                                  tl_error *err);

/* Describes how to read a Parquet leaf column into Arrow (pyarrow's mapping). */
tl_status tl_pq_column_to_arrow(const tl_pq_schema_element *e, tl_pq_column_desc *out,
                                tl_error *err);

/* The order statistics of this column are compared by. */
tl_pq_order tl_pq_column_order(const tl_pq_schema_element *e);

/* Bytes of a FIXED_LEN_BYTE_ARRAY that holds any decimal of this precision. */
int32_t tl_pq_decimal_bytes(int32_t precision);

#endif
