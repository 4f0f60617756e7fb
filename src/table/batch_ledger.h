/* The batch-id ledger: what keeps appends idempotent after snapshot expiry.
 *
 * A batch id lives in the summary of the snapshot that committed it, and the
 * duplicate check walks the current snapshot's ancestry. When expiry removes
 * snapshots, that walk ends early: at the lineage root, the oldest snapshot
 * of the current ancestry the table still holds. So expiry writes, for every
 * lineage root left, the batch ids of its ancestry the walk from it cannot
 * reach into a small immutable Avro file, metadata/batch-ledger-<uuidv7>.avro
 * (batch_ledger_file.h), named by the table property timelake.batch-ledger.
 * A batch id is then a duplicate exactly when the current snapshot or one of
 * its ancestors committed it, expired or not, whatever rollbacks made
 * current. Every later commit copies the property with the rest of the
 * metadata, so the ledger survives appends, rebases, maintenance and further
 * expiries (each of which writes a new ledger from the old one).
 * timelake.batch-id-retention (a duration; unset: forever) drops ids older
 * than it when a new ledger is written. The reference keeps and ignores both:
 * after its expiry a lineage root can be missing from the ledger, and the
 * check then counts every id of it, as builds before lineages did. */
#ifndef TL_TABLE_BATCH_LEDGER_H
#define TL_TABLE_BATCH_LEDGER_H

#include <stdbool.h>

#include "table/batch_ledger_file.h"
#include "table/table_internal.h"

#define TL_PROP_BATCH_LEDGER "timelake.batch-ledger"
#define TL_PROP_BATCH_ID_RETENTION "timelake.batch-id-retention"

/* Sets seen[i] to whether ids[i] was committed: looks at the current
 * snapshot's ancestry, then at the ledger's entries for its lineage root
 * (the ledger is read once per file and cached: it never changes). When the
 * ledger the handle names was replaced by a concurrent expiry, the handle is
 * reloaded. */
tl_status tl_batches_seen(tl_table *t, const char *const *ids, size_t n, bool *seen, tl_error *err);

/* For an expiry of the snapshots marked in expire[] (indexed like
 * t->md->snapshots): writes the ledger of the lineage roots left (see
 * batch_ledger_extend.c), less ids past the retention, and points `next`
 * (the metadata to commit) at it. *new_key receives its object key (NULL
 * when nothing changed): the caller removes it if the commit does not land. */
tl_status tl_batch_ledger_extend(const tl_table *t, const bool *expire, tl_ice_metadata *next,
                                 char **new_key, tl_error *err);

/* For the writer: a copy of the ledger t->md names (empty, not lined, when
 * it names none or that file is gone). */
tl_status tl_batch_ledger_load(const tl_table *t, tl_ledger *out, tl_error *err);

/* Remembers a ledger just written (taking l, url set) so that the check
 * need not read it back. */
void tl_batch_ledger_remember(tl_ledger *l);

#endif
