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
 * rest encoded in memory, which the commit uploads in its parallel batch. */
typedef struct tl_append_files {
    tl_ice_data_file *files;
    char **keys;
    tl_buf *bytes;
    tl_store_put_item *items; /* keys and bytes, as the commit uploads them */
    /* Each file's first and last row (a run of its chunk, sorted), or no rows
     * when not known (a merge's output). */
    tl_rows *ends;
    int64_t *chunk; /* the chunk of the append that wrote it: later ones win ties */
    size_t n;
} tl_append_files;

/* Frees the files; with remove, deletes their objects too. */
void tl_append_files_free(tl_table *t, tl_append_files *f, bool remove);

/* Encoded bytes an append holds in memory before it uploads them (the merge
 * then reads them back from the store). TIMELAKE_APPEND_HOLD_BYTES overrides
 * it, for tests of the uploaded path. */
int64_t tl_append_hold_bytes(void);

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
