/* A table's contract and settings, kept as table properties named
 * timelake.<kebab-name> exactly as the reference names them. */
#ifndef TL_TABLE_CONTRACT_H
#define TL_TABLE_CONTRACT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/strlist.h"
#include "formats/parquet/parquet_writer.h"
#include "iceberg/metadata.h"
#include "iceberg/transform.h"
#include "table/partition.h"

#define TL_PROP_TIME_COLUMN "timelake.time-column"
#define TL_PROP_SERIES_KEY "timelake.series-key"
#define TL_PROP_CHUNK "timelake.chunk-interval"
#define TL_PROP_RETENTION "timelake.retention"
#define TL_PROP_DEDUP "timelake.dedup"
#define TL_PROP_INGEST_COLUMN "timelake.ingest-time-column"
#define TL_PROP_FORMAT_VERSION "timelake.format-version"
#define TL_PROP_AUTO_MAINTAIN "timelake.auto-maintain"
#define TL_PROP_TARGET_FILE_SIZE "timelake.target-file-size-bytes"
#define TL_PROP_DATA_PAGE_ROWS "timelake.data-page-rows"
/* Iceberg's (pyiceberg's) name: the most rows one Parquet row group of a data file holds. */
#define TL_PROP_ROW_GROUP_LIMIT "write.parquet.row-group-limit"
/* The reference's name for the same; it wins over Iceberg's. */
#define TL_PROP_ROW_GROUP_ROWS "timelake.row-group-rows"
/* Iceberg's names: the data files' codec (zstd, snappy, gzip or uncompressed)
 * and its level. */
#define TL_PROP_CODEC "write.parquet.compression-codec"
#define TL_PROP_CODEC_LEVEL "write.parquet.compression-level"
#define TL_PROP_CODEC_MIN_SAVING "timelake.compression-min-saving"
/* Iceberg's names: how many earlier metadata files the metadata log names,
 * and whether a commit deletes those that leave it (Iceberg's default:
 * false, and the reference never deletes; our tables are created with true). */
#define TL_PROP_PREVIOUS_VERSIONS "write.metadata.previous-versions-max"
#define TL_PROP_DELETE_AFTER_COMMIT "write.metadata.delete-after-commit.enabled"
#define TL_SUMMARY_BATCH_ID "timelake.batch-id"
#define TL_SUMMARY_LVI "timelake.last-value-index"

/* The on-storage layout version the reference writes and we write too. */
#define TL_FORMAT_VERSION "0.3.0"
#define TL_INGEST_COLUMN "_ingest_ts"
#define TL_DEFAULT_TARGET_FILE_SIZE (INT64_C(256) * 1024 * 1024)
/* Pages of 4096 rows (aligned across columns) let a query's page index
 * pruning (query/selective_scan.h) read a few thousand rows around the
 * series it wants instead of 20,000. bench/query at 1,000 hosts against
 * 20,000-row pages: cpu-max-all-8 2.3x, single-groupby-5-8-1 4x, high-cpu-1
 * 4.5x faster; files 2% larger; full scans and appends unchanged within
 * the noise. */
#define TL_DEFAULT_DATA_PAGE_ROWS 4096
/* Row groups small enough that files sorted by (series key, time) let readers
 * skip most of a file by the row groups' statistics, large enough that their
 * overhead stays well under 1% of the file. bench/query at 1,000 hosts: 65536
 * makes high-cpu-1 2.4x and single-groupby-1-1-1 1.7x faster than one group
 * per file, full scans unchanged, files 0.25% larger. (32768 is faster still
 * for many-series queries, but remote reads guess a file's column chunks from
 * the manifest's column sizes, which holds for files of one row group: most
 * appends stay one group at 65536.) */
#define TL_DEFAULT_ROW_GROUP_LIMIT 65536
#define TL_DEFAULT_CODEC "zstd"
#define TL_DEFAULT_CODEC_LEVEL 3
/* A column chunk the codec shrinks by less than a fifth is stored
 * uncompressed: such data is noise (full-precision measurements), and its
 * decompression cost every scan more than the bytes it saved. bench/query at
 * 1,000 hosts (zstd saves 11% of its metric columns): the full scans
 * double-groupby-1 and groupby-orderby-limit 1.3x faster, the selective
 * queries up to 1.5x; files 13% larger. Structured values (rounded readings,
 * counters, strings) shrink far more than a fifth and stay compressed. */
#define TL_DEFAULT_CODEC_MIN_SAVING 20
typedef struct tl_contract {
    const char *time_column; /* NULL: a plain table; points into the metadata */
    int time_index;          /* index in the current schema, or -1 */
    tl_strlist series_key;
    int *series_index; /* series_key.len indices into the current schema */
    const char *chunk; /* "hour", "day", "month" or NULL */
    bool dedup;
    const char *ingest_column; /* NULL when the table has none */
    int ingest_index;
    bool auto_maintain;
    int64_t target_file_size;
    int64_t data_page_rows;
    int64_t row_group_limit; /* rows per Parquet row group, at most */
    tl_parquet_codec codec;
    int codec_level;
    int codec_min_saving; /* percent, see TL_DEFAULT_CODEC_MIN_SAVING */
    /* The partition fields of the default spec: the time partition first in a
     * time-series table, then the partition_by fields. */
    tl_part_field *partition;
    size_t n_partition;
} tl_contract;

/* Reads the contract from the metadata (which must outlive it). */
tl_status tl_contract_load(const tl_ice_metadata *md, tl_contract *out, tl_error *err);
void tl_contract_free(tl_contract *c);

/* Checks a user-given property (at create time, or altering a table): a
 * timelake.* key must be a setting a table may set (settings.h), with a valid
 * value; contract keys must come from the create options. *out is the key to
 * store: a setting's canonical spelling, else the key as given (static or
 * borrowed from key). */
tl_status tl_contract_check_property(const char *key, const char *value, const char **out,
                                     tl_error *err);

/* The same for a change of an existing table's properties
 * (tl_table_set_properties): a key without a dot names a setting too
 * ("read_dedup"), and a NULL value (a removal) checks the key alone. */
tl_status tl_contract_check_change(const char *key, const char *value, const char **out,
                                   tl_error *err);

#endif
