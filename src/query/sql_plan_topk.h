/* Recognising "newest (or oldest) k" queries, which need only the data at
 * one end of the table's time range:
 *
 *   SELECT ... FROM t [WHERE ...] [GROUP BY ... [HAVING ...]]
 *   ORDER BY <time or time_bucket(<constant width>, time [, <constant origin>])>
 *            DESC|ASC [, ...] LIMIT k [OFFSET o]
 *
 * over one lake table referenced once, the ordered expression given
 * directly, by a select-list alias or by ordinal; with a GROUP BY it must be
 * one of the grouping keys (so each group lies within one bucket). No
 * windows, DISTINCT, set operations, CTEs, samples or time travel. Such a
 * query ranks every row (or group) whose time lies in a bucket-aligned
 * window at that end before every row outside it: run over the window
 * alone, it gives the same first k + o rows whenever the window yields that
 * many (sql_topk.h). A table (or session) with newest-first false is read
 * whole instead. */
#ifndef TL_QUERY_SQL_PLAN_TOPK_H
#define TL_QUERY_SQL_PLAN_TOPK_H

#include <stdbool.h>
#include <stdint.h>

#include "query/sql_plan.h"

/* Beyond this many rows wanted, the window saves little. */
#define TL_TOPK_MAX_ROWS 10000

typedef struct tl_sql_topk {
    bool desc;        /* newest first (else oldest first) */
    int64_t limit;    /* LIMIT: a window answers when the result has that many rows */
    int64_t need;     /* LIMIT + OFFSET: rows the window must hold */
    int64_t width_us; /* bucket width; 1 when ordering by time itself */
    int64_t origin_us;
} tl_sql_topk;

/* Whether the planned query has the shape; fills *out. Evaluates the
 * bucket's width and origin with DuckDB. */
bool tl_sql_topk_shape(tl_query_engine *e, const tl_sql_plan *plan, tl_sql_topk *out);

#endif
