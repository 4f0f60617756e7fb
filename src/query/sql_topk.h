/* Running a top-k query (sql_plan_topk.h) over a window at one end of its
 * table's time range first.
 *
 * The window starts at the newest time a file left after the query's own
 * pruning can hold (capped by the query's upper time bound), or for ASC
 * orders at the oldest, and reaches back over whole buckets of the query's
 * time_bucket (same width and origin) for the rows wanted, sized from the
 * density of the newest file. The table's view becomes its scan restricted
 * to the window: the time range prunes files, row groups, pages and rows as
 * a WHERE on time would, and a predicate on time makes the rows DuckDB sees
 * exactly those inside. The query's result, materialised, is the answer
 * when it holds at least LIMIT + OFFSET rows: every row or group outside
 * ranks after every one inside. Otherwise the window widens sixteenfold, a
 * few times, and then the caller runs the query as usual. */
#ifndef TL_QUERY_SQL_TOPK_H
#define TL_QUERY_SQL_TOPK_H

#include "query/scan.h"
#include "query/sql_plan_topk.h"

/* Tries the window of `k` for `query` (planned as `plan`, in namespace ns).
 * *answered true: *out (owned by the caller) holds the result, at most
 * max_rows rows of it (0: all; *truncated says whether more were left).
 * false: the caller runs the query as usual (and registers its views
 * again). Reads are added to *stats; its totals only when answered. */
tl_status tl_query_topk(tl_query_engine *e, const tl_sql_plan *plan, const tl_sql_topk *k,
                        const char *query, const char *ns, int64_t max_rows,
                        struct ArrowArrayStream *out, bool *truncated, tl_scan_stats *stats,
                        bool *answered, tl_error *err);

#endif
