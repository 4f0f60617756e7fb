/* Materialized rollups (CREATE MATERIALIZED ROLLUP): tables of per-bucket
 * aggregates of a raw time-series table, kept up to date by refreshes. */
#ifndef TL_QUERY_ROLLUP_H
#define TL_QUERY_ROLLUP_H

#include "table/table_internal.h"

/* Refreshes the rollups of raw table t (its property timelake.rollups):
 * every one (maintenance), or with inline only those whose last refresh is
 * older than their refresh interval. Adds to r's rollups_refreshed and
 * rollup_rows. */
tl_status tl_rollups_refresh_of(tl_table *t, bool inline_mode, tl_maintain_report *r,
                                tl_error *err);

/* After an append's inline maintenance: refreshes the rollups that are due,
 * adding to out's maintenance report (a failure goes to maintenance_error;
 * the append stands). */
void tl_rollups_refresh_inline(tl_table *t, tl_append_result *out);

#endif
