/* The batch ids a commit carries, its idempotency keys. One id goes into the
 * snapshot summary key timelake.batch-id (what the reference writes and
 * checks); several (an import committing a group of files, each file its own
 * id) go into timelake.batch-ids as a JSON array of strings, which only we
 * read. A commit is a duplicate when every one of its ids was committed. */
#ifndef TL_TABLE_BATCH_IDS_H
#define TL_TABLE_BATCH_IDS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strlist.h"
#include "iceberg/metadata.h"
#include "table/table_internal.h"

#define TL_SUMMARY_BATCH_IDS "timelake.batch-ids"

/* Appends the batch ids snapshot s carries to *out (a malformed
 * timelake.batch-ids, from another tool, counts as none). */
tl_status tl_snapshot_batch_ids(const tl_ice_snapshot *s, tl_strlist *out, tl_error *err);

/* Pushes the summary key and value that record ids[0..n) (n > 0) onto kv. */
tl_status tl_batch_ids_summary(const char *const *ids, size_t n, tl_strlist *kv, tl_error *err);

/* Whether a commit of ids[0..n) (n > 0) is a duplicate: *duplicate when
 * every id was committed (ancestry or ledger), false when none was, and
 * TL_ERR_CONFLICT naming one of each when some were. */
tl_status tl_batch_duplicate(tl_table *t, const char *const *ids, size_t n, bool *duplicate,
                             tl_error *err);

#endif
