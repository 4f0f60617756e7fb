/* Maintenance: what tl_table_maintain and inline maintenance after an append
 * share. The steps, each in its own file:
 *   maintain_settings.c   the timelake.* properties that steer maintenance
 *   maintain_retention.c  drop whole partitions older than the retention
 *   maintain_compact.c    choose what to rewrite (full, size tiers, cold)
 *   maintain_rewrite.c    read files, sort, deduplicate, write target-size files
 *   maintain_merge.c      the same as a streaming merge of sorted files
 *   commit_rewrite.c      commit a "replace"/"delete" snapshot with rebase
 *   maintain_expire.c     expire snapshots, delete unreferenced objects
 *   maintain_manifests.c  parsed manifests cached across runs
 *   maintain_fold.c       inline compaction and expiry folded into the append's commit
 *   maintain.c            the public entry point and the inline policy */
#ifndef TL_TABLE_MAINTAIN_H
#define TL_TABLE_MAINTAIN_H

#include "table/append.h"
#include "table/head.h"
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

/* ---- Manifests, parsed once per process ---- */

/* Called for each entry of a manifest; false means out of memory. */
typedef bool (*tl_manifest_visit_fn)(void *ctx, const tl_ice_manifest_entry *e);
/* Calls fn with every entry (all statuses and contents) of the manifest mf
 * names, parsing it only when it is not cached. fn must not call back into
 * the cache. */
tl_status tl_manifest_cache_visit(const tl_table *t, const tl_ice_manifest_file *mf,
                                  tl_manifest_visit_fn fn, void *ctx, tl_error *err);
typedef bool (*tl_manifest_list_visit_fn)(void *ctx, const tl_ice_manifest_file *mf);
/* The same for the manifests a manifest list names. */
tl_status tl_manifest_list_cache_visit(const tl_table *t, const char *url,
                                       tl_manifest_list_visit_fn fn, void *ctx, tl_error *err);
/* A deep copy of the manifests a manifest list names, parsed only when it is
 * not cached (maintenance, and the check before each append, read the list
 * the last commit wrote). Free *out with tl_ice_manifest_files_free. */
tl_status tl_manifest_list_cache_read(const tl_table *t, const char *url,
                                      tl_ice_manifest_file **out, size_t *n, tl_error *err);
/* A manifest (its length is len) or manifest list this process has just
 * written and committed, parsed from its bytes and cached under its URL, so
 * that the next read of it (the folded compaction's plan, the next append's
 * parent list) reads no file. Quietly nothing when out of memory. */
void tl_manifest_cache_written(const char *url, const void *bytes, size_t len);
void tl_manifest_list_cache_written(const char *url, const void *bytes, size_t len);
/* The manifests of a manifest list when it is cached (a deep copy as
 * tl_manifest_list_cache_read's); false (and nothing read) when it is not,
 * or out of memory. */
bool tl_manifest_list_cache_held(const char *url, tl_ice_manifest_file **out, size_t *n);
/* Whether every manifest of the current snapshot can be read and parsed
 * (through the cache: each is parsed once per process). A damaged table is
 * TL_ERR_STORAGE naming the table and the file. */
tl_status tl_table_check_manifests(const tl_table *t, tl_error *err);

/* The live data entries of the manifest mf names, deep-copied as EXISTING
 * entries with the snapshot id and sequence numbers they inherit made
 * explicit: what a manifest merging them holds. Free *out with
 * tl_ice_manifest_entries_free. */
tl_status tl_manifest_cache_existing(const tl_table *t, const tl_ice_manifest_file *mf,
                                     tl_ice_manifest_entry **out, size_t *n, tl_error *err);
/* tl_live_files_read of the current snapshot, through the cache. */
tl_status tl_maintain_live_files(const tl_table *t, tl_live_files *out, tl_error *err);

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
    tl_head_objects footers; /* of the large added files, for the head (head_footer.h) */
} tl_rewrite_output;

tl_status tl_rewrite_files(const tl_table *t, const tl_live_file *const *files, size_t n,
                           int64_t target_file_size, tl_rewrite_output *out, tl_error *err);
/* The bytes a merge reserves for one output file of file_rows rows, from
 * its inputs' input_bytes over input_rows (see maintain_merge.c). */
#define TL_MERGE_RESERVE_MAX (INT64_C(256) * 1024 * 1024)
int64_t tl_merge_reserve_bytes(int64_t input_bytes, int64_t input_rows, int64_t file_rows);

/* The streaming path of tl_rewrite_files: a k-way merge of the files, each
 * sorted by (series key..., time), read a row group at a time, written as
 * files of about rows_per_file rows. Sets *fallback (and leaves nothing
 * behind) when an input is not sorted or a key type cannot be merged. */
tl_status tl_merge_files(const tl_table *t, const tl_live_file *const *files, size_t n,
                         int64_t rows_per_file, tl_rewrite_output *out, bool *fallback,
                         tl_error *err);
/* An input of tl_merge_inputs: a file (its sequence number orders ties, its
 * path names it, its partition is the output's), read from `mem` when its
 * bytes are at hand (not yet uploaded), else from the store. Or rows not
 * encoded at all (`rows`, in the storage layout and sorted; `file` then
 * gives their count, an estimate of their encoded size, their sequence
 * number and partition): read in place, a slice of rows at a time. Borrowed. */
typedef struct tl_merge_input {
    const tl_live_file *file;
    const tl_buf *mem;
    const tl_rows *rows;
} tl_merge_input;
/* Whether the merge compares keys of this column's type (integers, times,
 * strings and binary, not dictionaries): files keyed otherwise are not merged. */
struct tl_array_view;
bool tl_merge_key_comparable(const struct tl_array_view *v);

/* tl_merge_files of such inputs; a failure's message starts with `what`. */
tl_status tl_merge_inputs(const tl_table *t, const tl_merge_input *in, size_t n,
                          int64_t rows_per_file, const char *what, tl_rewrite_output *out,
                          bool *fallback, tl_error *err);
/* One live data file read whole, as rows of the table's storage layout. */
tl_status tl_rewrite_read_file(const tl_table *t, const tl_live_file *f, tl_rows *out,
                               tl_error *err);
/* Adds a written file (df and key taken over) to out; on failure deletes the
 * object and frees both. */
tl_status tl_rewrite_output_push(const tl_table *t, tl_rewrite_output *out, tl_ice_data_file *df,
                                 char *key, tl_error *err);
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
    const tl_head_objects *footers;        /* of the added files, for the head; or NULL */
    /* NULL: the newest row of each series stays (compaction keeps every
     * winner), the parent's last-value index serves. Else called for each
     * attempt, on its parent, for the new snapshot's index (tl_lvi_filter's
     * contract: *key NULL keeps the parent's). */
    tl_status (*index)(const tl_table *t, void *ctx, int64_t snapshot_id, char **key, tl_buf *file,
                       tl_error *err);
    void *index_ctx;
    /* Or NULL. Set when the commit landed or the conditional create's outcome
     * stayed unknown (a lost answer): the metadata may name the added files,
     * so the caller must keep them even on failure. */
    bool *may_have_landed;
} tl_rewrite_request;

/* Commits a snapshot that removes and adds data files. On a lost race it
 * reloads and rebases when every removed file is still live; when one is gone
 * it gives up with TL_ERR_CONFLICT. Leaves no manifest or list behind on
 * failure (the caller deletes its data files), except when the create's
 * outcome is unknown: then nothing is deleted (req->may_have_landed). */
tl_status tl_commit_rewrite(tl_table *t, const tl_rewrite_request *req, int *attempts,
                            tl_error *err);

/* A rewrite staged on the handle's metadata instead of committed: one
 * attempt of tl_commit_rewrite that writes the manifests and the manifest
 * list and builds the next metadata, but creates no version (an inline
 * compaction folded into an append's commit, maintain_fold.c). */
typedef struct tl_rewrite_staged {
    tl_ice_metadata *md;   /* the handle's metadata plus the snapshot, no new metadata-log entry */
    tl_buf json;           /* md serialized */
    tl_buf list;           /* the snapshot's manifest list, for the head */
    tl_head_objects fresh; /* the manifests written and the added files' footers, for the head */
    tl_strlist written;    /* keys of the objects put (manifests, list, index) */
} tl_rewrite_staged;

/* On failure nothing it wrote is left, and *out is empty. */
tl_status tl_commit_rewrite_stage(tl_table *t, const tl_rewrite_request *req,
                                  tl_rewrite_staged *out, tl_error *err);
/* Frees what *s holds; with remove, deletes the objects it wrote too. */
void tl_rewrite_staged_free(tl_table *t, tl_rewrite_staged *s, bool remove);

/* ---- Steps ---- */

typedef enum tl_compact_mode {
    TL_COMPACT_FULL,  /* one sorted file per partition, split at the target size */
    TL_COMPACT_INLINE /* size tiers and cold partitions only */
} tl_compact_mode;

/* What tl_maintain_compact would rewrite: *files files in *partitions partitions. */
tl_status tl_maintain_compact_plan(const tl_table *t, const tl_maintain_settings *s,
                                   tl_compact_mode mode, int64_t *files, int64_t *partitions,
                                   tl_error *err);
/* A compaction planned and its files rewritten, not yet committed. */
typedef struct tl_compaction {
    tl_live_files lf;      /* of the snapshot it was planned on */
    tl_rewrite_output out; /* the files written, every group's */
    int64_t *seqs;         /* data sequence number of each written file */
    const char **removed;  /* paths of the files it replaces (borrowed from lf) */
    size_t n_removed;
    size_t n_groups;           /* partitions rewritten; 0: nothing to do */
    tl_maintain_report report; /* what it did, once committed */
} tl_compaction;

/* Plans a compaction of the current snapshot and writes its files. On
 * failure nothing is left behind. Free *c with tl_compaction_free. */
tl_status tl_compaction_prepare(const tl_table *t, const tl_maintain_settings *s,
                                tl_compact_mode mode, tl_compaction *c, tl_error *err);
/* The "replace" commit of it (borrowing c). */
tl_rewrite_request tl_compaction_request(const tl_compaction *c);
/* With remove, deletes the written files too. */
void tl_compaction_free(const tl_table *t, tl_compaction *c, bool remove);
/* Adds the counts of delta (compaction's and expiry's) to r. */
void tl_maintain_report_add(tl_maintain_report *r, const tl_maintain_report *delta);

/* Whether retention would drop a partition of the current snapshot now. */
tl_status tl_maintain_retention_due(const tl_table *t, const tl_maintain_settings *s, bool *due,
                                    tl_error *err);
tl_status tl_maintain_retention(tl_table *t, const tl_maintain_settings *s, tl_maintain_report *r,
                                tl_error *err);
tl_status tl_maintain_compact(tl_table *t, const tl_maintain_settings *s, tl_compact_mode mode,
                              tl_maintain_report *r, tl_error *err);
/* full: a maintain call (expires down to max-snapshots, and lists storage for
 * objects no snapshot references); otherwise inline after an append (the count
 * limit waits for 20 snapshots more than max-snapshots, as the reference's). */
tl_status tl_maintain_expire(tl_table *t, const tl_maintain_settings *s, bool full,
                             tl_maintain_report *r, tl_error *err);
/* Inline expiry staged on the handle's metadata instead of committed: an
 * expiry folded into an append's commit (maintain_fold.c). */
typedef struct tl_expiry_staged {
    tl_ice_metadata *md; /* the handle's metadata less the expired snapshots; NULL: none due */
    tl_buf json;         /* md serialized */
    int64_t n_expired;
    char *ledger_key; /* the batch ledger written for the expired batch ids, or NULL */
    /* Keys of the objects only the expired snapshots named: to delete once
     * the version without them is durable. */
    tl_strlist gone;
} tl_expiry_staged;

/* Chooses what inline expiry would expire of the handle's metadata now and
 * builds the metadata without it (no metadata-log entry: the handle's
 * metadata is not a version yet), writing the batch ledger it needs. On
 * failure nothing it wrote is left and *out is empty. */
tl_status tl_maintain_expire_stage(tl_table *t, const tl_maintain_settings *s,
                                   tl_expiry_staged *out, tl_error *err);
/* Frees what *x holds; with remove, deletes the ledger it wrote too. */
void tl_expiry_staged_free(tl_table *t, tl_expiry_staged *x, bool remove);

/* The end (exclusive, microseconds) of a time partition, or INT64_MAX when
 * the table is not partitioned by time. */
int64_t tl_partition_end_micros(const tl_table *t, int64_t value);

/* A step of maintenance from a layer above (the refresh of rollups, which
 * runs queries), run after compaction and before expiry. */
typedef struct tl_maintain_step {
    tl_status (*run)(tl_table *t, void *ctx, tl_maintain_report *r, tl_error *err);
    void *ctx;
} tl_maintain_step;

/* What tl_table_maintain does: reloads the latest version, then retention,
 * compaction, before_expiry (may be NULL), expiry, as o says; with
 * o->inline_mode, from the handle's version and as tl_maintain_after_append
 * runs them (before_expiry then inline too). *out (may be NULL) gets the
 * report, its seconds included. */
tl_status tl_maintain_run(tl_table *t, const tl_maintain_options *o,
                          const tl_maintain_step *before_expiry, tl_maintain_report *out,
                          tl_error *err);

/* ---- Inline compaction and expiry folded into the append's commit (maintain_fold.c) ---- */

typedef struct tl_maintain_fold {
    tl_compaction compaction;
    tl_rewrite_staged staged;
    tl_expiry_staged expiry; /* until the commit's outcome is known */
    bool checked;            /* compaction was planned on the append's snapshot */
    tl_status st;            /* the fold failed: the append committed alone */
    tl_error err;
    tl_maintain_report report; /* the folded compaction's and expiry's, once they landed */
    double seconds;
    bool done; /* the compaction after the append has nothing left to do (or failed: st) */
} tl_maintain_fold;

/* Whether an append with this maintain option (1, 0, or -1 for the table's
 * auto-maintain) folds its inline compaction and expiry into its commit. */
bool tl_maintain_fold_wanted(const tl_table *t, int maintain);
/* The commit's fold (tl_commit_request.fold), ctx a zeroed tl_maintain_fold. */
bool tl_maintain_fold_stage(tl_table *t, void *ctx, const tl_ice_metadata *md, tl_commit_fold *out);
/* After tl_commit_append returned st and *cr: keeps what the fold wrote when
 * the metadata may name it, else deletes it; once the commit landed, hands
 * what the folded expiry stopped naming to deletion when it is durable. */
void tl_maintain_fold_end(tl_table *t, tl_maintain_fold *f, tl_status st,
                          const tl_commit_result *cr);

/* Whether an append with this maintain option (1, 0, or -1 for the table's
 * auto-maintain) runs inline maintenance. */
bool tl_maintain_inline_wanted(const tl_table *t, int maintain);

/* Runs inline maintenance after a committed append when options ask for it
 * (maintain: 1, 0, or -1 for the table's auto-maintain) and fills the
 * append result's maintained/maintenance/maintenance_error. Never fails.
 * `fold` (may be NULL): the append's folded compaction and expiry, whose
 * report is taken, and which stands for the compaction step when it is
 * done (the expiry step then finds nothing due). */
void tl_maintain_after_append(tl_table *t, int maintain, const tl_maintain_fold *fold,
                              tl_append_result *out);

#endif
