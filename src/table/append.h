/* The stages of an append, each in its own file:
 *   append_prepare.c  match input columns to the table and cast them
 *   append_layout.c   partition, sort and deduplicate rows; split by partition
 *   data_file.c       write one Parquet data file and describe it for a manifest
 *   commit.c          build the snapshot and commit it with retries
 *   append.c          the public entry point tying them together */
#ifndef TL_TABLE_APPEND_H
#define TL_TABLE_APPEND_H

#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"
#include "table/table_internal.h"

/* Rows in the table's storage layout: one child per table column, in schema
 * order, each of the column's storage type, offset 0. Owned. */
typedef struct tl_rows {
    struct ArrowSchema schema;
    struct ArrowArray array;
} tl_rows;

void tl_rows_free(tl_rows *rows);

/* The Arrow schema of the table's storage layout (field ids in metadata). */
tl_status tl_storage_schema(const tl_ice_schema *schema, struct ArrowSchema *out, tl_error *err);

/* The longest series key value an append accepts, in bytes. */
#define TL_SERIES_KEY_MAX_BYTES 4096

/* Matches the columns of `batches` (all of `schema`) to the table by name and
 * casts them; a series key value over TL_SERIES_KEY_MAX_BYTES is refused; missing nullable columns
 * become nulls, a missing ingest-time column is filled with ingest_micros. Borrowed inputs. */
tl_status tl_append_prepare(const tl_table *t, const struct ArrowSchema *schema,
                            const struct ArrowArray *batches, size_t n_batches,
                            int64_t ingest_micros, tl_rows *out, tl_error *err);
/* The same, where a column already in its storage form (as for
 * tl_append_prepare_take) shares its batch's buffers instead of being copied:
 * the rows are valid only while the batches are, so they suit a consumer
 * that copies them anyway before the batches go (an append lays its rows out
 * into new arrays). Several batches still make a concatenated copy. */
tl_status tl_append_prepare_borrow(const tl_table *t, const struct ArrowSchema *schema,
                                   const struct ArrowArray *batches, size_t n_batches,
                                   int64_t ingest_micros, tl_rows *out, tl_error *err);
/* The same for batches the caller is done with: a column already in its
 * storage form (type, offset 0, known null count) is moved out of its batch
 * instead of copied (an append's or a compaction's whole input otherwise
 * copied once more). The caller still releases the batches, after this. */
tl_status tl_append_prepare_take(const tl_table *t, const struct ArrowSchema *schema,
                                 struct ArrowArray *batches, size_t n_batches,
                                 int64_t ingest_micros, tl_rows *out, tl_error *err);

/* One partition's rows, sorted by (series key..., time). */
typedef struct tl_partition_rows {
    /* The partition's values, one per field of the default spec (none for an
     * unpartitioned table): owned by the parts tl_append_layout makes, else
     * borrowed from the files being rewritten. */
    tl_ice_value *partition;
    size_t n_partition;
    struct ArrowArray array; /* struct array with rows->schema */
} tl_partition_rows;

/* Sorts and splits rows by partition; with dedup on, keeps only the latest
 * row of each (series key..., time). *out is malloc'd; free with
 * tl_partition_rows_free (which frees the partition values too). */
tl_status tl_append_layout(const tl_table *t, const tl_rows *rows, tl_partition_rows **out,
                           size_t *n_out, tl_error *err);
void tl_partition_rows_free(tl_partition_rows *parts, size_t n);

/* The last row of every series in every partition (each partition sorted by
 * series key then time): all the last-value index needs of laid-out rows, a
 * few rows per series instead of all of them. *out has `schema`; owned. */
tl_status tl_append_series_tails(const tl_table *t, const struct ArrowSchema *schema,
                                 const tl_partition_rows *parts, size_t n_parts, tl_rows *out,
                                 tl_error *err);

/* Encodes one partition's rows as a Parquet data file in memory: *file_out
 * (owned: tl_buf_free) is to be uploaded under *key_out (malloc'd), and *out
 * describes it (owned: free with tl_ice_data_file_clear). Writes nothing. */
tl_status tl_data_file_encode(const tl_table *t, const struct ArrowSchema *schema,
                              const tl_partition_rows *part, tl_ice_data_file *out, char **key_out,
                              tl_buf *file_out, tl_error *err);

/* The folder of a partition's data files, "<table>/data/<field>=<value>/...",
 * appended to *key. */
tl_status tl_data_file_folder(const tl_table *t, const tl_partition_rows *part, tl_buf *key,
                              tl_error *err);

/* tl_data_file_encode, then the upload: *key_out is the object key written
 * (malloc'd), so a failed caller can delete it. The file's Parquet footer
 * goes to `footers` (NULL: nowhere) when the head object carries it
 * (tl_head_footer_keep). */
tl_status tl_data_file_write(const tl_table *t, const struct ArrowSchema *schema,
                             const tl_partition_rows *part, tl_ice_data_file *out, char **key_out,
                             struct tl_head_objects *footers, tl_error *err);

/* A data file written a slice of rows at a time (a merge's output, in
 * order), so the rows need not all be held at once: opened for a partition
 * (`partition` borrowed until finished), given rows (borrowed; they
 * accumulate into row groups as for tl_data_file_write), finished into its
 * entry and uploaded as tl_data_file_write does, then freed (also after a
 * failure; an unfinished writer uploads nothing). */
typedef struct tl_data_file_writer tl_data_file_writer;
tl_status tl_data_file_writer_open(const tl_table *t, const struct ArrowSchema *schema,
                                   const tl_ice_value *partition, size_t n_partition,
                                   tl_data_file_writer **out, tl_error *err);
/* Makes room for a file of about `bytes` bytes (tl_parquet_writer_reserve):
 * 0, or -1 when memory runs out (the writer unchanged and usable). */
int tl_data_file_writer_reserve(tl_data_file_writer *w, size_t bytes);
tl_status tl_data_file_writer_add(tl_data_file_writer *w, const struct ArrowArray *rows,
                                  tl_error *err);
tl_status tl_data_file_writer_finish(tl_data_file_writer *w, tl_ice_data_file *out, char **key_out,
                                     struct tl_head_objects *footers, tl_error *err);
void tl_data_file_writer_free(tl_data_file_writer *w);

/* Inline maintenance folded into an append's commit (its compaction's
 * snapshot, its expiry, maintain_fold.c): the metadata to create instead of
 * the append's alone. */
typedef struct tl_commit_fold {
    tl_ice_metadata *md; /* the append's metadata changed so: taken by the commit */
    const tl_buf *json;  /* md serialized (borrowed, as the rest) */
    const tl_buf *list;  /* the current snapshot's manifest list; NULL: still the append's */
    const struct tl_head_objects *fresh; /* the objects it wrote, for the head */
} tl_commit_fold;

typedef struct tl_commit_request {
    const char *const *batch_ids; /* the commit's idempotency keys (batch_ids.h) */
    size_t n_batch_ids;
    const tl_ice_data_file *files; /* added data files */
    size_t n_files;
    int64_t added_rows;
    int64_t added_bytes;
    const tl_rows *rows; /* the appended rows, for the last-value index (NULL: none) */
    /* The encoded data files, not yet uploaded: they go up in the first
     * attempt's parallel batch (borrowed). */
    const tl_store_put_item *uploads;
    size_t n_uploads;
    /* Parquet footers of the large data files uploaded before the commit
     * (earlier chunks of a large append), for the head object; or NULL. */
    const struct tl_head_objects *footers;
    /* An "overwrite": the files replace every file live in the parent (each
     * attempt's parent), and the index starts afresh from `rows`. */
    bool replace;
    /* > 0: the commit must make version expect_version + 1; a lost race is
     * TL_ERR_CONFLICT, with no rebase. */
    int64_t expect_version;
    const char *const *summary; /* extra summary pairs, NULL-terminated; or NULL */
    /* Attachments, uploaded in the first attempt's batch; or NULL. */
    const struct tl_attachment_uploads *attachments;
    /* Or NULL. After a lost race, applied to the winner's version (the
     * handle's) before the commit checks that the files still fit it: a
     * replace that changes the schema changes it again there. */
    tl_status (*rebase)(tl_table *t, void *ctx, tl_error *err);
    void *rebase_ctx;
    /* Or NULL. Called in the first attempt once its batch is uploaded, with
     * the metadata it built (the append's snapshot current; not created
     * yet): true and *out filled makes the attempt create out->md instead,
     * one version of both snapshots. Never fails the commit: false leaves
     * the append alone. A lost race retries without it. */
    bool (*fold)(tl_table *t, void *ctx, const tl_ice_metadata *md, tl_commit_fold *out);
    void *fold_ctx;
} tl_commit_request;

typedef struct tl_commit_result {
    bool duplicate;
    int attempts;
    /* The metadata may refer to this append's files: it committed, or the
     * conditional create's outcome stayed unknown. The caller must then keep
     * the data files (orphan cleanup removes them if the commit did not land). */
    bool may_have_landed;
    /* The version created (or perhaps created, with may_have_landed) holds
     * the folded snapshot too (req->fold). */
    bool folded;
    char warning[TL_ERROR_MESSAGE_MAX]; /* non-empty: the parent's index was rebuilt */
} tl_commit_result;

/* Commits the files as one append (or, with req->replace, overwrite)
 * snapshot in two sequential storage round trips: one parallel batch (data files, manifest,
 * manifest list, last-value index), then the conditional create of the next metadata version. On a
 * lost race, reloads, re-checks the batch id, rebuilds the manifest list and the index and retries
 * with backoff. When the commit definitely did not land (error, lost race given up, duplicate
 * batch) it leaves no file of its own behind (the caller deletes the data files); when the outcome
 * is unknown it deletes nothing. */
tl_status tl_commit_append(tl_table *t, const tl_commit_request *req, tl_commit_result *out,
                           tl_error *err);

/* The partition summaries of a manifest of these files (mf->partitions: the
 * lower and upper bound and null presence of each partition field). */
tl_status tl_table_manifest_summarize(const tl_ice_data_file *const *files, size_t n,
                                      tl_ice_manifest_file *mf, tl_error *err);

/* A manifest (Avro, appended to out) of the given entries, written against the
 * table's current schema and default partition spec. */
tl_status tl_table_manifest_encode(const tl_table *t, const tl_ice_manifest_entry *entries,
                                   size_t n, tl_buf *out, tl_error *err);
/* The same against partition spec `spec` of the table (NULL: unpartitioned),
 * whose source columns must be in the current schema. */
tl_status tl_table_manifest_encode_spec(const tl_table *t, const tl_ice_partition_spec *spec,
                                        const tl_ice_manifest_entry *entries, size_t n, tl_buf *out,
                                        tl_error *err);

/* tl_table_append less the refresh of rollups (a layer above does that:
 * tl_table_append is in query/rollup_hooks.c). */
tl_status tl_table_append_rows(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *options, tl_append_result *out,
                               tl_error *err);

/* How a group commit makes each of its commits: tl_table_append, which
 * lives a layer above (it refreshes rollups), handed down. */
typedef tl_status (*tl_append_fn)(tl_table *t, struct ArrowArrayStream *stream,
                                  const tl_append_options *options, tl_append_result *out,
                                  tl_error *err);

/* tl_table_append_group, each commit made by `append`. */
tl_status tl_append_group_run(tl_table *t, tl_append_input *inputs, size_t n,
                              const tl_append_options *options, tl_append_fn append, tl_error *err);

/* tl_table_append_rows (or, with replace, tl_table_replace) whose new
 * snapshot also gets `own_summary` (NULL-terminated key, value pairs of
 * Timelake's own, timelake.* keys, not checked); with such pairs a commit
 * of no rows still lands. */
tl_status tl_table_commit_rows(tl_table *t, struct ArrowArrayStream *stream,
                               const tl_append_options *options, bool replace,
                               const char *const *own_summary, tl_append_result *out,
                               tl_error *err);

#endif
