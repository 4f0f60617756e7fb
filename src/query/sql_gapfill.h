/* Gap filling: time_bucket_gapfill, locf and interpolate, as TimescaleDB's
 * users write them, rewritten into plain SQL (sql_gapfill.c). */
#ifndef TL_QUERY_SQL_GAPFILL_H
#define TL_QUERY_SQL_GAPFILL_H

#include <jansson.h>
#include <stdbool.h>

#include "query/engine.h"

/* Rewrites every SELECT among `statements` (a syntax tree's, changed in
 * place) that groups by time_bucket_gapfill; *changed says whether any did.
 * A misuse (locf without time_bucket_gapfill, no bounds for the buckets) is
 * TL_ERR_QUERY, named. */
tl_status tl_sql_gapfill(tl_query_engine *e, json_t *statements, bool *changed, tl_error *err);

#endif
