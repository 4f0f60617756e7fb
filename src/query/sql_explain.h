/* EXPLAIN [ANALYZE] <query>: what a query reads and how it runs, as rows of
 * (plan_type, plan) like the reference's:
 *   rewritten_query  the query as DuckDB runs it, when Timelake rewrote it
 *                    (first_value, gap filling, information_schema, ...);
 *   timelake_scan    per table: its snapshot, and either the last-value
 *                    index that answers it, or the files (listed) and row
 *                    groups its pruning leaves of all, and the bytes read;
 *   timelake_rollup  the rollup a routed query reads (sql_route.h), and its
 *                    clean buckets;
 *   timelake_route_cost  when a rollup fits: the bytes each plan reads, as
 *                    the cost rule estimates them, and which it chose;
 *   timelake_topk    the window of newest (or oldest) buckets a top-k
 *                    query is tried on first (sql_topk.h);
 *   physical_plan    DuckDB's plan; with ANALYZE, "Plan with Metrics" (the
 *                    reference's name) instead:
 *                    DuckDB's plan with what each step did, the query run. */
#ifndef TL_QUERY_SQL_EXPLAIN_H
#define TL_QUERY_SQL_EXPLAIN_H

#include <stdbool.h>

#include "query/engine.h"
#include "query/scan.h"
#include "query/sql_plan.h"
#include "query/sql_plan_topk.h"

/* What the registration of one table's view read (sql.c). */
typedef struct tl_sql_table_read {
    const tl_table *t;
    bool from_index; /* the last-value index answers */
    tl_scan_stats stats;
    char *view_sql;
    /* A view rollup routing registered (sql_route.h): the filters it read
     * with (owned, borrowing the plan's keys), in place of the query's, and
     * what it is for; both NULL otherwise. */
    tl_scan_filter *filters;
    size_t n_filters;
    const char *note;
} tl_sql_table_read;

typedef struct tl_sql_explain_input {
    const char *original; /* the query as given */
    const char *query;    /* as DuckDB runs it */
    const tl_sql_table_read *reads;
    size_t n_reads;
    const tl_sql_plan *plan; /* the filters of each reference */
    const tl_sql_topk *topk; /* NULL: no top-k shape */
    const char *routing;     /* what rollup routing did (sql_route.h), or NULL */
    const char *route_cost;  /* its cost rule's estimates and choice, or NULL */
    const char *preagg;      /* what the partial aggregation in the scan did, or NULL */
    bool analyze;
} tl_sql_explain_input;

/* The rows, as a stream the caller owns. The views must be registered. */
tl_status tl_sql_explain(tl_query_engine *e, const tl_sql_explain_input *x,
                         struct ArrowArrayStream *out, tl_error *err);

#endif
