/* The batch-id ledger: what keeps appends idempotent after snapshot expiry.
 *
 * A batch id lives in the summary of the snapshot that committed it, and the
 * duplicate check walks the live snapshots. When expiry removes snapshots, the
 * batch ids they carried are merged into a small immutable Avro file,
 * metadata/batch-ledger-<uuidv7>.avro (records {batch_id, committed_ms},
 * sorted by batch_id, unique), named by the table property
 * timelake.batch-ledger. Every later commit copies the property with the rest
 * of the metadata, so the ledger survives appends, rebases, maintenance and
 * further expiries (each of which writes a new ledger holding the old one).
 * timelake.batch-id-retention (a duration; unset: forever) drops ids older than
 * it when a new ledger is written. The reference keeps and ignores both. */
#ifndef TL_TABLE_BATCH_LEDGER_H
#define TL_TABLE_BATCH_LEDGER_H

#include <stdbool.h>

#include "table/table_internal.h"

#define TL_PROP_BATCH_LEDGER "timelake.batch-ledger"
#define TL_PROP_BATCH_ID_RETENTION "timelake.batch-id-retention"

/* Sets seen[i] to whether ids[i] was committed: looks at the current
 * snapshot's ancestry, then at the ledger (read once per ledger file and
 * cached: it never changes). When the ledger the handle names was replaced by
 * a concurrent expiry, the handle is reloaded. */
tl_status tl_batches_seen(tl_table *t, const char *const *ids, size_t n, bool *seen, tl_error *err);

/* For an expiry of the snapshots marked in expire[] (indexed like
 * t->md->snapshots): writes a new ledger holding the old one's ids and the
 * batch ids of the expired ancestors of the current snapshot, less those past
 * the retention, and points `next` (the metadata to commit) at it. *new_key
 * receives its object key (NULL when nothing changed): the caller removes it
 * if the commit does not land. */
tl_status tl_batch_ledger_extend(const tl_table *t, const bool *expire, tl_ice_metadata *next,
                                 char **new_key, tl_error *err);

#endif
