/* Iceberg manifest lists: the Avro file of a snapshot naming its manifests
 * with their counts and partition summaries (format versions 1 and 2). The
 * writer matches the reference implementation's shape (record
 * "manifest_file", partition summaries "r508"); the reader resolves fields by
 * field-id, falling back to v1 and v2 names. */
#ifndef TL_ICEBERG_MANIFEST_LIST_H
#define TL_ICEBERG_MANIFEST_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

/* The summary of one partition field over a manifest's files. */
typedef struct tl_ice_field_summary {
    bool contains_null;
    bool has_contains_nan;
    bool contains_nan;
    uint8_t *lower_bound; /* NULL when absent */
    size_t lower_len;
    uint8_t *upper_bound; /* NULL when absent */
    size_t upper_len;
} tl_ice_field_summary;

typedef struct tl_ice_manifest_file {
    char *manifest_path;
    int64_t manifest_length;
    int32_t partition_spec_id;
    int32_t content;                              /* 0 data, 1 deletes; 0 in v1 */
    int64_t sequence_number, min_sequence_number; /* 0 in v1 */
    int64_t added_snapshot_id;
    /* Counts; v1 files may leave them null, read as 0. */
    int32_t added_files_count, existing_files_count, deleted_files_count;
    int64_t added_rows_count, existing_rows_count, deleted_rows_count;
    tl_ice_field_summary *partitions; /* one per partition field; written as [] when none */
    size_t n_partitions;
    uint8_t *key_metadata; /* NULL when absent */
    size_t key_metadata_len;
} tl_ice_manifest_file;

/* Appends a complete manifest list (Avro, uncompressed) to out, with the file
 * metadata snapshot-id, parent-snapshot-id ("null" when parent_snapshot_id is
 * NULL), sequence-number (v2) and format-version (1 or 2). */
tl_status tl_ice_manifest_list_write(int64_t snapshot_id, const int64_t *parent_snapshot_id,
                                     int64_t sequence_number, int format_version,
                                     const tl_ice_manifest_file *files, size_t n, tl_buf *out,
                                     tl_error *err);

/* Reads every manifest_file record (v1 or v2, any codec). On success the
 * caller frees *out with tl_ice_manifest_files_free. */
tl_status tl_ice_manifest_list_read(const uint8_t *data, size_t len, tl_ice_manifest_file **out,
                                    size_t *n, tl_error *err);

void tl_ice_manifest_files_free(tl_ice_manifest_file *files, size_t n);

#endif
