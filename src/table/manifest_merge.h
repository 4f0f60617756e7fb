/* Merging manifests on append, so that a table's manifest list stays short
 * whatever the number of appends (each append writes one manifest of its
 * own). Without it, every append reads and writes a list that grows by one
 * entry per append, and every reader opens one manifest per append.
 *
 * The parent's data manifests of the current partition spec are put in size
 * tiers by their live file count (1-7, 8-63, 64-511, ... for a fan-in of
 * 8); once a tier holds fan-in manifests, the commit merges them into one
 * manifest of EXISTING entries (snapshot ids and data sequence numbers kept
 * explicitly), which belongs to the next tier. So each file is rewritten
 * about log(files) / log(fan-in) times over its life, the list holds at most
 * fan-in - 1 manifests per tier, and an append's cost does not grow with the
 * history. The append's own new manifest is never merged by its commit.
 * Manifests holding only DELETED entries of earlier snapshots are dropped,
 * as Iceberg's writers drop them.
 *
 * Iceberg's table properties steer it: commit.manifest-merge.enabled
 * (default true), commit.manifest.min-count-to-merge (the fan-in; default 8,
 * where Java's is 100: a short list helps cold readers) and
 * commit.manifest.target-size-bytes (default 8 MiB: larger manifests are
 * never merged). */
#ifndef TL_TABLE_MANIFEST_MERGE_H
#define TL_TABLE_MANIFEST_MERGE_H

#include "core/buf.h"
#include "iceberg/manifest_list.h"
#include "table/table_internal.h"

typedef struct tl_manifest_merge {
    bool *leave;                  /* per parent manifest: merged or dropped, not listed */
    tl_ice_manifest_file *merged; /* the merged manifest's list entry, or NULL */
    char *key;                    /* its object key */
    tl_buf avro;                  /* its bytes */
} tl_manifest_merge;

/* Plans and encodes the merge for a commit of snapshot `snapshot_id` with
 * sequence number seq on top of the parent's manifests (old, borrowed).
 * Nothing to merge leaves out->merged NULL. */
tl_status tl_manifest_merge_plan(const tl_table *t, const tl_ice_manifest_file *old, size_t n_old,
                                 int64_t snapshot_id, int64_t seq, tl_manifest_merge *out,
                                 tl_error *err);

/* Frees m; with remove, deletes its uploaded manifest first. */
void tl_manifest_merge_clear(tl_table *t, tl_manifest_merge *m, bool remove);

#endif
