/* The batch ids of the current snapshot's ancestry, kept with the table
 * handle (tl_table.batch_index) as a hash set, so that the duplicate check of
 * an append costs a few lookups whatever the length of the history.
 *
 * The set is built by one walk of the ancestry and remembers the snapshot ids
 * of the metadata it was built for. A later version whose snapshots are those
 * same ones plus new ones, with the new current snapshot stacked on the old
 * one (every append and compaction, by this handle or by another writer),
 * only adds the ids of the new ancestors; any other change (expiry, a
 * rollback, another writer's branch) builds it again. So its answer is always
 * exactly the walk's: carried by the current snapshot or one of its
 * ancestors. The batch ledger (batch_ledger.h) covers expired snapshots. */
#ifndef TL_TABLE_BATCH_INDEX_H
#define TL_TABLE_BATCH_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "table/table_internal.h"

typedef struct tl_batch_index tl_batch_index;

/* Sets seen[i] when ids[i] is carried by the current snapshot of t->md or by
 * one of its ancestors (seen[] is not cleared first), and *root to the
 * lineage root: the snapshot id of the oldest ancestor t->md holds (-1 when
 * there is no current snapshot). Brings t's index up to date with t->md
 * first. */
tl_status tl_batch_index_lookup(tl_table *t, const char *const *ids, size_t n, bool *seen,
                                int64_t *root, tl_error *err);

void tl_batch_index_free(tl_batch_index *ix);

#endif
