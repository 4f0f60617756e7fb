/* Maintenance: what tl_table_maintain and inline maintenance after an append
 * share. The steps, each in its own file:
 *   maintain_settings.c   the timelake.* properties that steer maintenance
 *   maintain_retention.c  drop whole partitions older than the retention
 *   maintain_compact.c    choose what to rewrite (full, size tiers, cold)
 *   maintain_rewrite.c    read files, sort, deduplicate, write target-size files
 *   commit_rewrite.c      commit a "replace"/"delete" snapshot with rebase
 *   maintain_expire.c     expire snapshots, delete unreferenced objects
 *   maintain.c            the public entry point and the inline policy */
#ifndef TL_TABLE_MAINTAIN_H
#define TL_TABLE_MAINTAIN_H

#include "table/live_files.h"

#define TL_PROP_COMPACT_MIN_FILES "timelake.compact-min-files"
#define TL_PROP_COMPACT_COLD_AFTER "timelake.compact-cold-after"
#define TL_PROP_SNAPSHOT_RETENTION "timelake.snapshot-retention"
#define TL_PROP_MIN_SNAPSHOTS "timelake.min-snapshots"
#define TL_PROP_MAX_SNAPSHOTS "timelake.max-snapshots"
#define TL_PROP_KEEP_SNAPSHOTS_UNTIL "timelake.keep-snapshots-until"
/* Orphans (objects no snapshot references) younger than this are left alone:
 * they may belong to a commit in flight. A duration; tests shorten it. */
#define TL_ENV_ORPHAN_WINDOW "TIMELAKE_ORPHAN_WINDOW"

typedef struct tl_maintain_settings {
    int64_t target_file_size;      /* bytes; the reference's default, 256 MiB */
    int64_t compact_min_files;     /* files of one size tier that trigger inline compaction */
    int64_t cold_after_us;         /* -1: off */
    int64_t retention_us;          /* -1: keep everything */
    int64_t snapshot_retention_ms; /* -1: no age limit */
    int64_t min_snapshots, max_snapshots;
    int64_t keep_snapshots_until_ms; /* no snapshot expires before this */
    int64_t orphan_window_ms;
} tl_maintain_settings;

tl_status tl_maintain_settings_load(const tl_table *t, tl_maintain_settings *out, tl_error *err);

/* ---- Rewriting files ---- */

/* Reads `files` (borrowed), merges them latest-write-wins (higher ingest time,
 * then higher data sequence number, then later row) and writes sorted files of
 * about the target size. On success the added files and their keys are owned by the
 * caller; on failure nothing is left behind. */
typedef struct tl_rewrite_output {
    tl_ice_data_file *added;
    char **keys; /* object keys of the added files, to delete them if the commit fails */
    size_t n_added;
    int64_t rows_in, rows_out, bytes_out;
} tl_rewrite_output;

tl_status tl_rewrite_files(const tl_table *t, const tl_live_file *const *files, size_t n,
                           int64_t target_file_size, tl_rewrite_output *out, tl_error *err);
/* Frees the output; with remove, deletes the written objects too. */
void tl_rewrite_output_free(const tl_table *t, tl_rewrite_output *out, bool remove);

/* ---- Committing a rewrite ---- */

typedef struct tl_rewrite_request {
    const char *operation;      /* "replace" or "delete" */
    const char *const *removed; /* file paths of live files to remove */
    size_t n_removed;
    const tl_ice_data_file *added; /* borrowed */
    size_t n_added;
    const int64_t *added_sequence_numbers; /* data sequence number of each added file */
} tl_rewrite_request;

/* Commits a snapshot that removes and adds data files. On a lost race it
 * reloads and rebases when every removed file is still live; when one is gone
 * it gives up with TL_ERR_CONFLICT. Leaves no manifest or list behind on
 * failure (the caller deletes its data files). */
tl_status tl_commit_rewrite(tl_table *t, const tl_rewrite_request *req, int *attempts,
                            tl_error *err);

/* ---- Steps ---- */

typedef enum tl_compact_mode {
    TL_COMPACT_FULL,  /* one sorted file per partition, split at the target size */
    TL_COMPACT_INLINE /* size tiers and cold partitions only */
} tl_compact_mode;

tl_status tl_maintain_retention(tl_table *t, const tl_maintain_settings *s, tl_maintain_report *r,
                                tl_error *err);
tl_status tl_maintain_compact(tl_table *t, const tl_maintain_settings *s, tl_compact_mode mode,
                              tl_maintain_report *r, tl_error *err);
/* With orphans, also lists storage for objects no snapshot references. */
tl_status tl_maintain_expire(tl_table *t, const tl_maintain_settings *s, bool orphans,
                             tl_maintain_report *r, tl_error *err);

/* The end (exclusive, microseconds) of a time partition, or INT64_MAX when
 * the table is not partitioned by time. */
int64_t tl_partition_end_micros(const tl_table *t, int64_t value);

/* Runs inline maintenance after a committed append when options ask for it
 * (maintain: 1, 0, or -1 for the table's auto-maintain) and fills the
 * append result's maintained/maintenance/maintenance_error. Never fails. */
void tl_maintain_after_append(tl_table *t, int maintain, tl_append_result *out);

#endif
