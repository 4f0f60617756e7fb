/* Time travel: a table as it was at one of its snapshots, for reading only
 * (SQL's FROM t AT (VERSION => id) and AT (TIMESTAMP => ts)). */
#ifndef TL_TABLE_TIME_TRAVEL_H
#define TL_TABLE_TIME_TRAVEL_H

#include "table/table_internal.h"

/* The snapshot that was current at `us` (Unix microseconds): the last entry
 * of the snapshot log at or before it, as Iceberg readers (pyiceberg's
 * snapshot_as_of_timestamp) take it (the snapshots' own times when there is
 * no log). TL_ERR_NOT_FOUND naming the table and its earliest snapshot's
 * time when `us` is before it, saying so when earlier snapshots were
 * expired; also for a table with no snapshot. */
tl_status tl_table_snapshot_at(const tl_table *t, int64_t us, int64_t *out, tl_error *err);

/* The snapshot named by `version`: a snapshot id in decimal, or a tag or
 * branch of the table. TL_ERR_NOT_FOUND naming the table and the snapshots
 * it has (the earliest and the current) for an unknown one, saying when it
 * is known to have been expired (an expired parent of a kept snapshot). */
tl_status tl_table_snapshot_named(const tl_table *t, const char *version, int64_t *out,
                                  tl_error *err);

/* A new handle of t's table as of snapshot `snapshot_id` (one of t's):
 * current snapshot that one, schema the snapshot's, default partition spec
 * the one its data files were written with; t's version and properties.
 * For reading only (its pinned_snapshot is set): never commit through it.
 * Close it with tl_table_close. */
tl_status tl_table_pin(const tl_table *t, int64_t snapshot_id, tl_table **out, tl_error *err);

#endif
