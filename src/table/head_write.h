/* The commit's side job that writes the head object (head.h). */
#ifndef TL_TABLE_HEAD_WRITE_H
#define TL_TABLE_HEAD_WRITE_H

#include <stdbool.h>

#include "table/head.h"
#include "table/table_internal.h"

typedef struct tl_head_job tl_head_job;

/* Whether commits of t with metadata md write a head (an object store, and
 * timelake.head-format not none). */
bool tl_head_wanted(const tl_table *t, const tl_ice_metadata *md);

/* Starts building, in the background, the head of version `version` of t:
 * its metadata md (serialized as json), the snapshot's manifest list `list`,
 * its last-value index `lvi` (NULL: taken from what the handle holds, or
 * fetched) and the manifests and data-file footers this commit wrote
 * (`fresh`, may be NULL); other manifests and the footers of other live
 * large files (head_footer.h) come from the handle or are fetched.
 * Everything passed is borrowed until tl_head_job_send or tl_head_job_finish
 * returns, and t must not change until then. NULL when no head is wanted (a local store, or
 * timelake.head-format none), or when out of memory. */
tl_head_job *tl_head_job_start(tl_table *t, const tl_ice_metadata *md, int64_t version,
                               const tl_buf *json, const tl_buf *list, const tl_buf *lvi,
                               const tl_head_objects *fresh);

/* The head of a commit that keeps the current snapshot (expiry, a change of
 * properties), as tl_head_job_start of version t->version + 1: the
 * snapshot's manifest list comes from the handle's head objects or is read
 * into `list` (borrowed like json). NULL when no head is wanted or the list
 * cannot be had (readers then find the old head stale). */
tl_head_job *tl_head_job_start_same_snapshot(tl_table *t, const tl_ice_metadata *md,
                                             const tl_buf *json, tl_buf *list);

/* Waits until the head is built, then lets its PUT go in the background:
 * called right before the conditional create of vN, the two share one round
 * trip. Without this call the head is never sent. NULL: nothing. */
void tl_head_job_send(tl_head_job *j);

/* Waits for the PUT to end and frees j (NULL: nothing). When `won` (the
 * commit made `version`), the handle keeps the carried objects: the next
 * commit's head needs them. Never fails the commit: a head that did not land
 * leaves an older one, which readers find stale. */
void tl_head_job_finish(tl_table *t, tl_head_job *j, bool won);

#endif
