/* The commit point every kind of commit goes through: the conditional create
 * of the next metadata/vN.metadata.json, and the checks that keep a dropped
 * table dropped.
 *
 * A drop deletes every version; a writer that loaded version K before (a
 * stale handle, or one committing while the drop runs) would otherwise create
 * v(K+1) in the empty folder and bring back a half table whose older files
 * are gone. So after winning the create, a writer checks that its parent
 * still exists and is the same table (table-uuid); when it is gone and no
 * newer version exists, the table was dropped: the writer removes the
 * version it created and reports TL_ERR_NOT_FOUND. Together with a drop that
 * repeats its deletions until the folder stays empty (lake.c), a drop wins:
 * nothing committed after it survives. */
#ifndef TL_TABLE_COMMIT_POINT_H
#define TL_TABLE_COMMIT_POINT_H

#include <stdbool.h>

#include "table/head_write.h"
#include "table/table_internal.h"

/* Creates version t->version + 1 with `len` bytes of JSON, if absent.
 * TL_OK: it landed and the table is alive. TL_ERR_EXISTS: another writer's
 * version is there. TL_ERR_NOT_FOUND: the table was dropped (or dropped and
 * created again) since the handle loaded it; what was created is removed:
 * nothing landed, and the handle refuses later commits. Anything else: the
 * outcome is unknown. */
tl_status tl_table_create_next(tl_table *t, const void *json, size_t len, tl_error *err);

/* The same, also deleting the objects `obsolete[0..n)` (NULL entries
 * skipped) once it landed, while the hint is written and the table checked:
 * locally each deletion may wait for the disk. */
tl_status tl_table_create_next_removing(tl_table *t, const void *json, size_t len,
                                        char *const *obsolete, size_t n, tl_error *err);

/* Makes the versions this handle's commits left visible but not yet
 * durable (t->defer_sync) durable, then deletes what they stopped naming.
 * Nothing to do without such commits. A failure leaves those objects. */
tl_status tl_table_sync_commits(tl_table *t, tl_error *err);

/* Deletes the objects keys[0..n) (NULL entries skipped) once this handle's
 * commits are durable: at tl_table_sync_commits when a version may not be
 * yet, else now (queued, nobody waits: tl_store_remove_later). Returns how
 * many it took: those left out when memory runs out stay, as orphans. */
size_t tl_table_remove_once_durable(tl_table *t, char *const *keys, size_t n);

/* Lands `md` (taken) as version t->version + 1 from its JSON: the commit's
 * head (may be NULL; finished here either way) goes up in parallel with the
 * conditional create, and the handle adopts md when the create landed. A
 * head sent beside a table that turned out dropped is removed again.
 * Returns as tl_table_create_next, or the adoption's error. */
tl_status tl_table_land_next(tl_table *t, tl_ice_metadata *md, const tl_buf *json,
                             tl_head_job *head, tl_error *err);

/* After a lost race: reloads the latest version, which must be of the same
 * table (table-uuid); a table dropped meanwhile, or dropped and created
 * again, is TL_ERR_NOT_FOUND (the handle refuses later commits). */
tl_status tl_table_reload_same(tl_table *t, tl_error *err);

/* After a step that read what the handle's version names failed with
 * TL_ERR_NOT_FOUND (a manifest, an index): when a newer version is listed,
 * another writer's expiry removed it once the table moved on, and the
 * attempt is lost like a race (TL_ERR_EXISTS: reload and retry); otherwise
 * returns `st` unchanged. */
tl_status tl_table_lost_if_moved_on(tl_table *t, tl_status st, tl_error *err);

/* After a failed commit step: when the handle's table is gone (dropped, or
 * dropped and created again), replaces the error with TL_ERR_NOT_FOUND
 * saying so and marks the handle; otherwise returns `st` unchanged. */
tl_status tl_table_explain_failure(tl_table *t, tl_status st, tl_error *err);

/* Removes the head object a commit sent (head.h) once tl_table_create_next
 * said the table was dropped: it went up in parallel with the create. Only
 * a head of the handle's (dropped) table goes: that of a table created again
 * under the name is left as it is. */
void tl_table_remove_head(tl_table *t);

/* TL_ERR_NOT_FOUND when a commit of this handle found its table dropped:
 * its later commits fail at once, before writing anything. */
tl_status tl_table_check_not_dropped(const tl_table *t, tl_error *err);

#endif
