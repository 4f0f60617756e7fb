/* Iceberg manifests: the Avro files listing data files with their partition
 * values and column statistics (Iceberg table spec, format versions 1 and 2).
 *
 * The writer produces exactly the shape the reference implementation writes
 * (record "manifest_entry" with a "data_file" record "r2", partition record
 * "r102", counts and bounds as arrays of key/value records). The reader
 * resolves fields by Iceberg field-id, falling back to names, so it reads
 * manifests of the reference, Java Iceberg and pyiceberg, v1 and v2. */
#ifndef TL_ICEBERG_MANIFEST_H
#define TL_ICEBERG_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

/* One entry of column_sizes, value_counts, null_value_counts, nan_value_counts. */
typedef struct tl_ice_count {
    int32_t field_id;
    int64_t value;
} tl_ice_count;

/* One entry of lower_bounds/upper_bounds: the single-value serialization. */
typedef struct tl_ice_bound {
    int32_t field_id;
    uint8_t *data;
    size_t len;
} tl_ice_bound;

typedef enum tl_ice_value_kind {
    TL_ICE_VALUE_NULL,
    TL_ICE_VALUE_INT,    /* int, date, and the year/month/day/hour/bucket results */
    TL_ICE_VALUE_LONG,   /* long, time, timestamps */
    TL_ICE_VALUE_STRING, /* bytes/len, NUL-terminated */
    TL_ICE_VALUE_BYTES,  /* binary, fixed, uuid, decimal (big-endian two's complement) */
    TL_ICE_VALUE_BOOL,   /* i is 0 or 1 */
    TL_ICE_VALUE_FLOAT,  /* d */
    TL_ICE_VALUE_DOUBLE  /* d */
} tl_ice_value_kind;

/* A partition value. */
typedef struct tl_ice_value {
    tl_ice_value_kind kind;
    int64_t i;
    double d;
    uint8_t *bytes;
    size_t len;
} tl_ice_value;

typedef struct tl_ice_data_file {
    int32_t content; /* 0 data, 1 position deletes, 2 equality deletes */
    char *file_path;
    char *file_format;       /* "PARQUET"; NULL writes "PARQUET" */
    tl_ice_value *partition; /* in partition-spec field order */
    size_t n_partition;
    int64_t record_count, file_size_in_bytes;
    /* An empty list is written as null. */
    tl_ice_count *column_sizes, *value_counts, *null_value_counts, *nan_value_counts;
    size_t n_column_sizes, n_value_counts, n_null_value_counts, n_nan_value_counts;
    tl_ice_bound *lower_bounds, *upper_bounds;
    size_t n_lower_bounds, n_upper_bounds;
    int64_t *split_offsets;
    size_t n_split_offsets;
    int32_t *equality_ids; /* v2 */
    size_t n_equality_ids;
    uint8_t *key_metadata; /* NULL when absent */
    size_t key_metadata_len;
    bool has_sort_order_id;
    int32_t sort_order_id;
    /* Fields the reference writes as null in v2 (defined by v3). */
    bool has_first_row_id;
    int64_t first_row_id;
    char *referenced_data_file; /* NULL when absent */
    bool has_content_offset;
    int64_t content_offset;
    bool has_content_size_in_bytes;
    int64_t content_size_in_bytes;
} tl_ice_data_file;

typedef struct tl_ice_manifest_entry {
    int32_t status;       /* 0 existing, 1 added, 2 deleted */
    bool has_snapshot_id; /* null: inherited from the manifest list (v2) */
    int64_t snapshot_id;
    bool has_sequence_number;
    int64_t sequence_number;
    bool has_file_sequence_number;
    int64_t file_sequence_number;
    tl_ice_data_file file;
} tl_ice_manifest_entry;

/* A field of the partition record: its name in the spec (made a valid Avro
 * name the way Java Iceberg does), partition field-id and the Avro type of its
 * values, e.g. "int", "long", "string" or {"type":"int","logicalType":"date"}
 * (tl_ice_partition_avro_type computes it). Written as ["null", type]. */
typedef struct tl_ice_partition_field_type {
    const char *name;
    int32_t field_id;
    const char *avro_type_json;
} tl_ice_partition_field_type;

/* What a manifest writer needs to know about the table. */
typedef struct tl_ice_manifest_info {
    const char *schema_json;         /* the table schema JSON: metadata "schema" */
    const char *partition_spec_json; /* JSON array of the spec's fields: "partition-spec" */
    int32_t partition_spec_id;
    int32_t schema_id;
    int format_version;                                  /* 1 or 2 */
    int32_t content;                                     /* 0 data, 1 deletes (v2) */
    const tl_ice_partition_field_type *partition_fields; /* none: unpartitioned */
    size_t n_partition_fields;
} tl_ice_manifest_info;

/* The Avro type (JSON, into buf of `cap` bytes) of a partition field whose
 * source column has the Iceberg type `source_type` ("long", "timestamptz",
 * "decimal(9,2)", "fixed[16]", ...) under `transform` ("identity", "year",
 * "month", "day", "hour", "bucket[N]", "truncate[W]", "void"), as Java
 * Iceberg writes it. */
tl_status tl_ice_partition_avro_type(const char *source_type, const char *transform, char *buf,
                                     size_t cap, tl_error *err);

/* Appends a complete manifest file (Avro, uncompressed) to out. Every entry's
 * partition must have one value per partition field, of a matching kind.
 * Version 1 needs a snapshot id in every entry and data files only, and has
 * no place for sequence numbers, equality ids or the v3 fields (dropped). On
 * failure out is left as it was. */
tl_status tl_ice_manifest_write(const tl_ice_manifest_info *info,
                                const tl_ice_manifest_entry *entries, size_t n, tl_buf *out,
                                tl_error *err);

/* Reads every entry of a manifest file (v1 or v2, any codec). On success the
 * caller frees *out with tl_ice_manifest_entries_free. */
tl_status tl_ice_manifest_read(const uint8_t *data, size_t len, tl_ice_manifest_entry **out,
                               size_t *n, tl_error *err);

void tl_ice_manifest_entries_free(tl_ice_manifest_entry *entries, size_t n);
/* Frees what one data file owns (not the struct itself). */
void tl_ice_data_file_clear(tl_ice_data_file *file);

#endif
