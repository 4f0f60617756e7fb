/* Commits that change only the table metadata and add no snapshot: a change
 * of properties, a rollback to an earlier snapshot. Each attempt edits a copy
 * of the handle's metadata and creates the next version; a lost race reloads
 * and edits the winner's metadata again. */
#ifndef TL_TABLE_METADATA_COMMIT_H
#define TL_TABLE_METADATA_COMMIT_H

#include "table/table_internal.h"

/* Changes md (a copy of the handle's current metadata) for the commit;
 * called again on the winner's metadata after a lost race. */
typedef tl_status (*tl_metadata_edit_fn)(const tl_table *t, tl_ice_metadata *md, void *ctx,
                                         tl_error *err);

/* Commits edit's change as version t->version + 1, retrying with backoff on
 * lost races (TL_ERR_CONFLICT when they keep being lost). The new metadata
 * must load as a table of this library. On success the handle is at the new
 * version. */
tl_status tl_table_commit_metadata(tl_table *t, tl_metadata_edit_fn edit, void *ctx, tl_error *err);

#endif
