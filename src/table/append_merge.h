/* The data files of an append larger than a chunk (append.c), and the merge
 * that makes them one sorted run per partition (append_merge.c).
 *
 * An append is laid out, sorted and encoded a chunk at a time, so that its
 * memory stays bounded: each chunk writes one sorted file per partition it
 * touches. Files of one partition from several chunks overlap in (series
 * key..., time) unless the input came sorted by series, and overlapping files
 * cost every query the read-time dedup and most of its row-group pruning
 * until a compaction. So, at the end of the stream, the files of a partition
 * whose key ranges overlap are merged (a streaming k-way merge,
 * maintain_merge.c) into files of disjoint ranges, as one sort of the whole
 * input would have laid them out. */
#ifndef TL_TABLE_APPEND_MERGE_H
#define TL_TABLE_APPEND_MERGE_H

#include "table/append.h"
#include "table/head.h"

/* An append's data files: [0, uploaded) in the store (their bytes freed), the
 * rest in memory, which the commit uploads in its parallel batch. A file in
 * memory is encoded (`bytes`), or still its chunk's sorted rows (`raw`): a
 * run that a merge will likely rewrite is not encoded before it (append.c).
 * A raw run's entry has its row count, partition and an estimate of its
 * encoded size only, and its key is its partition's folder ("…/data/p=x/"). */
typedef struct tl_append_files {
    tl_ice_data_file *files;
    char **keys;
    tl_buf *bytes;
    tl_store_put_item *items; /* keys and bytes, as the commit uploads them */
    /* Each file's first and last row (a run of its chunk, sorted), or no rows
     * when not known (a merge's output). */
    tl_rows *ends;
    int64_t *chunk;            /* the chunk of the append that wrote it: later ones win ties */
    struct ArrowArray *raw;    /* rows not yet encoded (release set), with `schema` */
    struct ArrowSchema schema; /* of the raw rows (the storage layout), once there are any */
    size_t n;
} tl_append_files;

/* Gives an empty set (f's arrays NULL) room for n files. On failure f is
 * left as it was. */
tl_status tl_append_files_reserve(tl_append_files *f, size_t n, tl_error *err);

/* Frees the files; with remove, deletes the objects of encoded ones too. */
void tl_append_files_free(tl_table *t, tl_append_files *f, bool remove);

static inline bool tl_append_file_is_raw(const tl_append_files *f, size_t i)
{
    return f->raw[i].release != NULL;
}

/* Bytes of runs an append holds in memory (encoded, or rows not yet
 * encoded) before it encodes and uploads them (the merge then reads them
 * back from the store). TIMELAKE_APPEND_HOLD_BYTES overrides it, for tests
 * of the uploaded path. */
int64_t tl_append_hold_bytes(void);

/* ---- Held runs (append_hold.c) ---- */

/* Whether a chunk's runs are held as rows rather than encoded: not the
 * first chunk's (a one-chunk append encodes as always, and the ratio of
 * encoded to raw bytes, calibrated_bytes, comes from it); the last one's,
 * whose rows are in memory anyway; the others' while what is held and the
 * chunk's bytes stay within `limit`. */
bool tl_append_hold_raw(int64_t chunks_before, int64_t calibrated_bytes, int64_t held,
                        int64_t chunk_bytes, int64_t limit, bool last);
/* About how many bytes rows take in memory (their buffers' sizes). */
int64_t tl_append_rows_bytes(const struct ArrowSchema *schema, const struct ArrowArray *array);
/* Bytes of files [from, n) held in memory: encoded, or raw rows. */
int64_t tl_append_files_held(const tl_append_files *f, size_t from);
/* Makes *e the parts' raw runs, taking their rows and partition values (the
 * parts are left empty); each one's encoded size is estimated as its rows'
 * bytes times `ratio`. On failure *e holds what was taken (free it). */
tl_status tl_append_files_hold(const tl_table *t, const struct ArrowSchema *schema,
                               tl_partition_rows *parts, size_t n_parts, double ratio,
                               tl_append_files *e, tl_error *err);
/* Encodes every raw run of f in memory (its bytes and items then set, its
 * rows let go of); on failure, the runs not encoded stay raw. */
tl_status tl_append_files_encode_raw(const tl_table *t, tl_append_files *f, tl_error *err);

/* Merges the files of each partition whose key ranges overlap into files of
 * disjoint ranges (latest write wins among equal keys, the later chunk on a
 * tie); partitions whose runs do not overlap, and runs whose keys the merge
 * cannot compare, are left as they are. The merged files leave *f (those in
 * the store are deleted) and the new ones, uploaded, join it (their footers
 * added to `footers`, for the head). *uploaded is the count of
 * files in the store before and after. On failure *f, *uploaded and the store
 * are as they were. *merged (may be NULL) gets the count of files merged. */
tl_status tl_append_merge_runs(const tl_table *t, tl_append_files *f, size_t *uploaded,
                               tl_head_objects *footers, size_t *merged, tl_error *err);

#endif
