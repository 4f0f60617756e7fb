/* Recognising queries that only need the newest row of each series, which
 * the last-value index answers without reading data files. Every shape is
 * matched strictly; anything else runs over the data.
 *
 * Sound only for dedup tables (each (series, time) once, so the newest row
 * of a series is unique and is the index's winner); the series key and time
 * columns are required (never null). The shapes, over the bare table:
 * - SELECT DISTINCT ON (key...) ... ORDER BY key..., time DESC
 * - SELECT ... WHERE key = c ORDER BY time DESC LIMIT 1
 * - row_number() (or rank()) OVER (PARTITION BY key... ORDER BY time DESC)
 *   kept where = 1, by QUALIFY or by the WHERE of the enclosing query
 * - SELECT key..., max(time), arg_max(col, time) ... GROUP BY key...
 * Their select lists hold only columns, constants and that window, so that
 * no other window or aggregate sees the missing older rows. */
#ifndef TL_QUERY_SQL_PLAN_LATEST_H
#define TL_QUERY_SQL_PLAN_LATEST_H

#include <jansson.h>

#include "core/strlist.h"
#include "table/table_internal.h"

/* Whether `select` (a SELECT_NODE whose FROM is t, named `alias`) only needs
 * the newest row per series. `first_only` is the select-list column that the
 * enclosing query keeps only where it is 1 (NULL when none). Columns whose
 * index values must be non-null for the answer to hold (arg_max skips null
 * arguments) are added to *nonnull. */
bool tl_sql_latest_shape(const tl_table *t, const char *alias, const json_t *select,
                         const char *first_only, tl_strlist *nonnull);

/* The alias of a row-numbering window in the select list of `select` that
 * `where` (of the query reading it as `rel`) keeps only where it equals 1,
 * or NULL. */
const char *tl_sql_first_only(const json_t *select, const json_t *where, const char *rel);

#endif
