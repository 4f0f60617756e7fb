/* A rollup computed on the fly from raw pages: for a GROUP BY <keys>,
 * time_bucket(width, time) query with decomposable aggregates, the scan
 * decodes only the pages (page_select.h) of the time, key and aggregated
 * columns and turns each run of rows into one partial-state row (run_agg.h),
 * never materialising the rows. The rows go to DuckDB as a rowset
 * (rows_function.h) with columns <keys>, <time>, <state names>; rollup
 * routing's rewrite (sql_route.c) merges them as it merges rollup rows.
 *
 * Files that may hold a duplicate pending a merge on read (tl_scan_pending:
 * they overlap another file of their partition) are not aggregated: their
 * rows, merged on read as any scan merges them, come as a SELECT of one
 * partial-state row each, which the caller adds to the rowset's rows.
 *
 * When the pages the filters leave are few (at most a quarter of the files'
 * rows and TL_SELECTIVE_MAX_ROWS: the selective scan's rule), their rows are
 * first narrowed by their time and first key values (row_refine.h), as the
 * selective scan narrows them, and only the rows left are decoded.
 *
 * Declined (*id 0, the query reads raw rows as before) when the table has
 * delete files, when every file needed may hold pending duplicates, when a
 * file is remote, lacks a column or holds one of another type or encoding
 * than our reader decodes to utf8, float64 and microsecond timestamps, when
 * filter pushdown is off, or when TL_PREAGG=off. Key columns are read as
 * dictionary codes where their pages hold them (TL_PREAGG=strings: never,
 * for tests; TL_PREAGG=pieces: a large row group of one file is cut into
 * pieces of a page, not of 131,072 rows, for tests). */
#ifndef TL_QUERY_PREAGG_SCAN_H
#define TL_QUERY_PREAGG_SCAN_H

#include "query/engine.h"
#include "query/run_agg.h"
#include "query/scan.h"

typedef struct tl_preagg_request {
    const tl_table *t;
    const tl_scan_filter *filters; /* the query's, for pruning; may be NULL */
    size_t n_filters;
    tl_run_split split;
    const char *const *keys; /* schema names of the key columns */
    size_t n_keys;
    const char *const *values; /* schema names of the aggregated (double) columns */
    size_t n_values;
    const tl_run_state *states;
    const char *const *state_names; /* the rowset's names of the states */
    size_t n_states;
} tl_preagg_request;

/* Whether TL_PREAGG=off turns the partial aggregation off. */
bool tl_preagg_off(void);

/* *id: the rowset of partial states, or 0 when declined; *pending_sql
 * (malloc'd, NULL when no such file is needed): the SELECT of the pending
 * files' rows as partial states, in the rowset's columns. stats grows by
 * what was read. */
tl_status tl_preagg_scan(tl_query_engine *e, const tl_preagg_request *r, int64_t *id,
                         char **pending_sql, tl_scan_stats *stats, tl_error *err);

#endif
