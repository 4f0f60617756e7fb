/* Parquet's metadata structures (parquet.thrift) as C structs, with their
 * Thrift compact serialization and hostile-input-safe parsing. Parsed
 * structures live in a caller-provided arena; strings are NUL-terminated. */
#ifndef TL_PARQUET_META_H
#define TL_PARQUET_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/arena.h"

typedef enum tl_pq_type {
    TL_PQ_BOOLEAN = 0,
    TL_PQ_INT32 = 1,
    TL_PQ_INT64 = 2,
    TL_PQ_INT96 = 3,
    TL_PQ_FLOAT = 4,
    TL_PQ_DOUBLE = 5,
    TL_PQ_BYTE_ARRAY = 6,
    TL_PQ_FIXED_LEN_BYTE_ARRAY = 7
} tl_pq_type;

typedef enum tl_pq_converted {
    TL_PQ_CT_UTF8 = 0,
    TL_PQ_CT_MAP = 1,
    TL_PQ_CT_MAP_KEY_VALUE = 2,
    TL_PQ_CT_LIST = 3,
    TL_PQ_CT_ENUM = 4,
    TL_PQ_CT_DECIMAL = 5,
    TL_PQ_CT_DATE = 6,
    TL_PQ_CT_TIME_MILLIS = 7,
    TL_PQ_CT_TIME_MICROS = 8,
    TL_PQ_CT_TIMESTAMP_MILLIS = 9,
    TL_PQ_CT_TIMESTAMP_MICROS = 10,
    TL_PQ_CT_UINT_8 = 11,
    TL_PQ_CT_UINT_16 = 12,
    TL_PQ_CT_UINT_32 = 13,
    TL_PQ_CT_UINT_64 = 14,
    TL_PQ_CT_INT_8 = 15,
    TL_PQ_CT_INT_16 = 16,
    TL_PQ_CT_INT_32 = 17,
    TL_PQ_CT_INT_64 = 18,
    TL_PQ_CT_JSON = 19,
    TL_PQ_CT_BSON = 20,
    TL_PQ_CT_INTERVAL = 21
} tl_pq_converted;

/* The LogicalType union's member ids (parquet.thrift field ids). */
typedef enum tl_pq_logical_kind {
    TL_PQ_LT_NONE = 0,
    TL_PQ_LT_STRING = 1,
    TL_PQ_LT_MAP = 2,
    TL_PQ_LT_LIST = 3,
    TL_PQ_LT_ENUM = 4,
    TL_PQ_LT_DECIMAL = 5,
    TL_PQ_LT_DATE = 6,
    TL_PQ_LT_TIME = 7,
    TL_PQ_LT_TIMESTAMP = 8,
    TL_PQ_LT_INTEGER = 10,
    TL_PQ_LT_UNKNOWN = 11,
    TL_PQ_LT_JSON = 12,
    TL_PQ_LT_BSON = 13,
    TL_PQ_LT_UUID = 14,
    TL_PQ_LT_FLOAT16 = 15,
    TL_PQ_LT_OTHER = 100 /* a member this library does not know */
} tl_pq_logical_kind;

typedef enum tl_pq_time_unit {
    TL_PQ_MILLIS = 1,
    TL_PQ_MICROS = 2,
    TL_PQ_NANOS = 3
} tl_pq_time_unit;

typedef enum tl_pq_encoding {
    TL_PQ_ENC_PLAIN = 0,
    TL_PQ_ENC_PLAIN_DICTIONARY = 2,
    TL_PQ_ENC_RLE = 3,
    TL_PQ_ENC_BIT_PACKED = 4,
    TL_PQ_ENC_DELTA_BINARY_PACKED = 5,
    TL_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    TL_PQ_ENC_DELTA_BYTE_ARRAY = 7,
    TL_PQ_ENC_RLE_DICTIONARY = 8,
    TL_PQ_ENC_BYTE_STREAM_SPLIT = 9
} tl_pq_encoding;

typedef enum tl_pq_codec_id {
    TL_PQ_CODEC_UNCOMPRESSED = 0,
    TL_PQ_CODEC_SNAPPY = 1,
    TL_PQ_CODEC_GZIP = 2,
    TL_PQ_CODEC_LZO = 3,
    TL_PQ_CODEC_BROTLI = 4,
    TL_PQ_CODEC_LZ4 = 5,
    TL_PQ_CODEC_ZSTD = 6,
    TL_PQ_CODEC_LZ4_RAW = 7
} tl_pq_codec_id;

typedef enum tl_pq_page_type {
    TL_PQ_DATA_PAGE = 0,
    TL_PQ_INDEX_PAGE = 1,
    TL_PQ_DICTIONARY_PAGE = 2,
    TL_PQ_DATA_PAGE_V2 = 3
} tl_pq_page_type;

enum { TL_PQ_REQUIRED = 0, TL_PQ_OPTIONAL = 1, TL_PQ_REPEATED = 2 };
enum { TL_PQ_UNORDERED = 0, TL_PQ_ASCENDING = 1, TL_PQ_DESCENDING = 2 };

typedef struct tl_pq_bytes {
    const uint8_t *data;
    size_t len;
} tl_pq_bytes;

typedef struct tl_pq_statistics {
    bool has_max, has_min, has_null_count, has_distinct_count, has_max_value, has_min_value;
    tl_pq_bytes max, min, max_value, min_value; /* max/min: deprecated signed-order fields */
    int64_t null_count, distinct_count;
} tl_pq_statistics;

typedef struct tl_pq_logical {
    tl_pq_logical_kind kind;
    int32_t scale, precision; /* DECIMAL */
    bool utc;                 /* TIME, TIMESTAMP */
    tl_pq_time_unit unit;     /* TIME, TIMESTAMP */
    int8_t bit_width;         /* INTEGER */
    bool is_signed;           /* INTEGER */
} tl_pq_logical;

typedef struct tl_pq_schema_element {
    bool has_type, has_repetition, has_converted, has_field_id;
    tl_pq_type type;
    int32_t type_length;
    int32_t repetition;
    const char *name;
    int32_t num_children;
    tl_pq_converted converted;
    int32_t scale, precision;
    int32_t field_id;
    tl_pq_logical logical;
} tl_pq_schema_element;

typedef struct tl_pq_encoding_stats {
    int32_t page_type, encoding, count;
} tl_pq_encoding_stats;

typedef struct tl_pq_column_meta {
    tl_pq_type type;
    int32_t *encodings;
    size_t n_encodings;
    const char **path;
    size_t n_path;
    tl_pq_codec_id codec;
    int64_t num_values, total_uncompressed_size, total_compressed_size;
    int64_t data_page_offset;
    bool has_dictionary_page_offset, has_statistics;
    int64_t dictionary_page_offset;
    tl_pq_statistics statistics;
    tl_pq_encoding_stats *encoding_stats;
    size_t n_encoding_stats;
} tl_pq_column_meta;

typedef struct tl_pq_column_chunk {
    const char *file_path; /* NULL: this file */
    int64_t file_offset;
    bool has_meta;
    tl_pq_column_meta meta;
    bool has_offset_index, has_column_index;
    int64_t offset_index_offset, column_index_offset;
    int32_t offset_index_length, column_index_length;
} tl_pq_column_chunk;

typedef struct tl_pq_sorting_column {
    int32_t column_idx;
    bool descending, nulls_first;
} tl_pq_sorting_column;

typedef struct tl_pq_row_group {
    tl_pq_column_chunk *columns;
    size_t n_columns;
    int64_t total_byte_size, num_rows;
    tl_pq_sorting_column *sorting_columns;
    size_t n_sorting_columns;
    bool has_file_offset, has_total_compressed_size, has_ordinal;
    int64_t file_offset, total_compressed_size;
    int16_t ordinal;
} tl_pq_row_group;

typedef struct tl_pq_key_value {
    const char *key;
    const char *value; /* NULL when absent */
} tl_pq_key_value;

typedef struct tl_pq_file_meta {
    int32_t version;
    tl_pq_schema_element *schema;
    size_t n_schema;
    int64_t num_rows;
    tl_pq_row_group *row_groups;
    size_t n_row_groups;
    tl_pq_key_value *key_value;
    size_t n_key_value;
    const char *created_by;
    size_t n_column_orders; /* TypeDefinedOrder for each; 0 when absent */
    bool encrypted;         /* encryption_algorithm present */
} tl_pq_file_meta;

typedef struct tl_pq_page_header {
    tl_pq_page_type type;
    int32_t uncompressed_page_size, compressed_page_size;
    bool has_data, has_dictionary, has_data_v2;
    struct {
        int32_t num_values, encoding, def_encoding, rep_encoding;
    } data;
    struct {
        int32_t num_values, encoding;
        bool is_sorted;
    } dictionary;
    struct {
        int32_t num_values, num_nulls, num_rows, encoding, def_length, rep_length;
        bool is_compressed;
    } data_v2;
} tl_pq_page_header;

typedef struct tl_pq_page_location {
    int64_t offset;
    int32_t compressed_page_size;
    int64_t first_row_index;
} tl_pq_page_location;

typedef struct tl_pq_offset_index {
    tl_pq_page_location *pages;
    size_t n_pages;
} tl_pq_offset_index;

typedef struct tl_pq_column_index {
    size_t n_pages;
    bool *null_pages;
    tl_pq_bytes *min_values, *max_values;
    int32_t boundary_order;
    int64_t *null_counts; /* NULL when absent */
} tl_pq_column_index;

/* ---- Serialization (appends to out) ---- */
tl_status tl_pq_write_file_meta(tl_buf *out, const tl_pq_file_meta *m, tl_error *err);
tl_status tl_pq_write_page_header(tl_buf *out, const tl_pq_page_header *h, tl_error *err);
tl_status tl_pq_write_column_index(tl_buf *out, const tl_pq_column_index *ci, tl_error *err);
tl_status tl_pq_write_offset_index(tl_buf *out, const tl_pq_offset_index *oi, tl_error *err);

/* ---- Parsing. Everything that is returned lives in the arena. ---- */
tl_status tl_pq_parse_file_meta(const uint8_t *data, size_t len, tl_arena *arena,
                                tl_pq_file_meta *out, tl_error *err);
/* *consumed receives the header's size in bytes. Unknown page types parse fine. */
tl_status tl_pq_parse_page_header(const uint8_t *data, size_t len, tl_pq_page_header *out,
                                  size_t *consumed, tl_error *err);
tl_status tl_pq_parse_column_index(const uint8_t *data, size_t len, tl_arena *arena,
                                   tl_pq_column_index *out, tl_error *err);
tl_status tl_pq_parse_offset_index(const uint8_t *data, size_t len, tl_arena *arena,
                                   tl_pq_offset_index *out, tl_error *err);

#endif
