/* Rollup routing: a GROUP BY time_bucket(...) query on a raw table reads the
 * whole buckets a rollup holds unchanged from the rollup, and the rest from
 * the raw table, with the same answer.
 *
 *   SELECT <keys>, time_bucket(<width>, time) AS b, <aggregates>
 *   FROM raw [WHERE <time range> AND <conditions on rollup keys>]
 *   GROUP BY <keys>, b (or GROUP BY ALL) [HAVING ...] [ORDER BY ...] [LIMIT ...]
 *
 * routes to a rollup of raw (timelake.rollups) whose bucket width divides
 * <width> (fixed widths, epoch-aligned), whose keys include every key the
 * query names, and which stores every aggregate: count(*), count(x),
 * sum(x), min(x), max(x), m4(time, x) at any such width and keys; avg(x)
 * from a stored sum(x) and count(x), or from a stored avg(x) at the
 * rollup's own width and keys; first_value / last_value(x ORDER BY time)
 * and time_weighted_mean(time, x [, method]) at the rollup's own keys (the
 * states of several series overlap in time and do not merge). The query
 * becomes the same query over
 *
 *   SELECT keys, time, <partial states of x> FROM raw
 *     WHERE time outside the clean buckets
 *   UNION ALL
 *   SELECT keys, bucket AS time, <stored states> FROM rollup
 *     WHERE bucket among the clean buckets
 *
 * with each aggregate merging the partial states (count: sum of counts;
 * m4 and the time-weighted mean: m4(points) and time_weighted_mean(state)
 * over the stored lists and each raw row's one-point list).
 * A rollup bucket lies within one query bucket, so every group merges the
 * same rows either way. Clean buckets: whole rollup buckets inside the
 * query's time range, after the first raw data (retention), holding no
 * data file added since the rollup's source snapshot (only appends and
 * compactions since, the source snapshot an ancestor of the current one:
 * anything else, a rollback, a retention delete, is not routed). Not
 * routed either when the rollup's files and raw's outside the clean
 * buckets hold more rows than the raw files the query reads. A routed
 * query whose result columns would differ in name or type from the
 * unrouted one is not routed. Off with rollup-routing = false (session or
 * raw table) or timelake.rollup-routing = false on the rollup. */
#ifndef TL_QUERY_SQL_ROUTE_H
#define TL_QUERY_SQL_ROUTE_H

#include "query/sql_explain.h"
#include "query/sql_plan.h"

/* Before the plan's tables are registered: *routed is the query to run
 * instead (malloc'd) and *explain what routing did (malloc'd), or both NULL
 * when the query is not routed. Loads rollups through lookup (which keeps
 * them), registers the rollup's view and raw's narrowed to the rows outside
 * the clean buckets (raw's own view, which a routed query does not read, is
 * then left to the caller: register it only when not routed). What those
 * two views read goes to reads[*n_reads] (room for two more; NULL: added
 * into *stats instead). *cost (malloc'd, NULL when no rollup with clean
 * buckets fits): the cost rule's estimates of both plans and its choice,
 * routed or not, for EXPLAIN. Fails only when a view cannot be registered. query: the text the plan
 * was made from; what routing found is kept by it, the session's settings and the versions of the
 * raw table and its rollups, so that a repeated query neither analyses its syntax tree nor rewrites
 * it again. */
tl_status tl_sql_route(tl_query_engine *e, const char *query, tl_sql_plan *plan,
                       tl_sql_lookup lookup, void *ctx, tl_sql_table_read *reads, size_t *n_reads,
                       tl_scan_stats *stats, char **routed, char **explain, char **cost,
                       tl_error *err);

/* A query of the routing shape that no rollup answers, over one table
 * whose files hold no pending duplicate: when its keys are strings and its
 * aggregates count(*), and count, sum, min, max, avg of float64 columns,
 * the scan aggregates the runs of rows of each group and bucket as it
 * decodes the pages (preagg_scan.h) into a view of partial states, and
 * *routed is the query merging them (as rollup rows merge), *explain what
 * was done; both NULL when not. Call after tl_sql_route found no rollup. */
tl_status tl_sql_preagg(tl_query_engine *e, tl_sql_plan *plan, tl_scan_stats *stats, char **routed,
                        char **explain, tl_error *err);

/* Frees what the engine remembers of routed queries. */
void tl_sql_route_cache_free(tl_query_engine *e);

#endif
