/* Materialized rollups (CREATE MATERIALIZED ROLLUP): tables of per-bucket
 * aggregates of a raw time-series table, kept up to date by refreshes. The
 * definition lives in the tables' properties (table/rollup_def.h). */
#ifndef TL_QUERY_ROLLUP_H
#define TL_QUERY_ROLLUP_H

#include "table/rollup_def.h"
#include "table/table_internal.h"

/* The rows of rollup d computed from its raw table (raw: the handle whose
 * schema gives the columns' types): all buckets (ranges NULL), or those of
 * the n time ranges [ranges[2i], ranges[2i+1]) (bucket-aligned, µs). The
 * query reads the raw table at raw's current snapshot (the one a refresh
 * records), whatever was committed since. *out is the caller's. */
tl_status tl_rollup_compute(tl_lake *lake, const tl_rollup_def *d, const tl_table *raw,
                            const int64_t *ranges, size_t n, struct ArrowArrayStream *out,
                            tl_error *err);

/* The same from the rows of `fine` (fine_t its handle, read at its current
 * snapshot), a finer rollup of the same raw table whose aggregates merge
 * into d's. */
tl_status tl_rollup_compute_from(tl_lake *lake, const tl_rollup_def *d, const tl_table *raw,
                                 const int64_t *ranges, size_t n, const tl_rollup_def *fine,
                                 const tl_table *fine_t, struct ArrowArrayStream *out,
                                 tl_error *err);

/* Commits `rows` (consumed) to the rollup, recording `source` (a snapshot
 * of the raw table) as the one it was refreshed from; with replace, the rows
 * replace the rollup's. *written gets the rows committed. */
tl_status tl_rollup_commit(tl_table *rollup, struct ArrowArrayStream *rows, bool replace,
                           const tl_ice_snapshot *source, int64_t *written, tl_error *err);

/* Refreshes one rollup (a handle at its latest version) from its raw table:
 * the buckets the raw table's new data files touch since the recorded
 * source snapshot, or every bucket (the rollup replaced) when that snapshot
 * is no longer in the raw table's history (a rollback) or was never
 * recorded. *rows gets the rows written (0: it was up to date). */
tl_status tl_rollup_refresh(tl_table *rollup, int64_t *rows, tl_error *err);

/* Refreshes the rollups of raw table t (its property timelake.rollups),
 * narrowest bucket first: every one (maintenance), or with inline only
 * those whose refresh interval has passed since their last refresh. Adds
 * to r's rollups_refreshed and rollup_rows. */
tl_status tl_rollups_refresh_of(tl_table *t, bool inline_mode, tl_maintain_report *r,
                                tl_error *err);

/* After an append's inline maintenance: refreshes the rollups that are due,
 * adding to out's maintenance report (a failure goes to maintenance_error;
 * the append stands). */
void tl_rollups_refresh_inline(tl_table *t, tl_append_result *out);

/* CREATE MATERIALIZED ROLLUP [IF NOT EXISTS] name AS SELECT ... [WITH (...)],
 * REFRESH MATERIALIZED ROLLUP name and DROP MATERIALIZED ROLLUP [IF EXISTS]
 * name, run in namespace ns: *handled is false (and nothing done) when
 * `text` is none of them; otherwise *out is one row {rollup, rows}. */
tl_status tl_rollup_statement(tl_lake *lake, const char *ns, const char *text, bool *handled,
                              struct ArrowArrayStream *out, tl_error *err);

#endif
