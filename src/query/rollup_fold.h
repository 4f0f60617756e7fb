/* A routed query's rollup rows aggregated in the scan (preagg_scan.h): the
 * rollup's files are sorted by its keys then bucket, so the rows of one
 * group and query bucket lie in runs, each merged into one row of partial
 * states as it is decoded (stored counts summed, sums summed, minima and
 * maxima kept), and without keys the runs of one bucket fold into one row.
 * DuckDB then merges a few rows per group instead of one per rollup bucket
 * and series. The view has the columns the routed query reads of the
 * rollup (sql_route.c): the keys, the bucket column, and each stored
 * column, now a partial state of its merge. */
#ifndef TL_QUERY_ROLLUP_FOLD_H
#define TL_QUERY_ROLLUP_FOLD_H

#include "core/strlist.h"
#include "query/run_agg.h"
#include "query/scan.h"

#define TL_ROLLUP_FOLD_MAX 62

typedef struct tl_rollup_fold {
    tl_run_split split; /* the query's bucket width; the clean range, inclusive */
    tl_strlist keys;    /* the rollup's columns the query groups or filters by */
    tl_strlist values;  /* stored columns, value i merged by ops[i] */
    tl_run_op ops[TL_ROLLUP_FOLD_MAX];
} tl_rollup_fold;

/* Adds key column `name` of the rollup; false when it is no string column
 * or out of memory. */
bool tl_rollup_fold_key(tl_rollup_fold *f, const tl_table *rollup, const char *name);

/* Adds stored column `column` merged by op (TL_RUN_SUM_INT: an int64
 * column; TL_RUN_SUM, MIN, MAX: a double one); false when it is of another
 * type, merged by another op already, one too many, or out of memory. */
bool tl_rollup_fold_value(tl_rollup_fold *f, const tl_table *rollup, const char *column,
                          tl_run_op op);

void tl_rollup_fold_free(tl_rollup_fold *f);

/* Copies f into *out (freed by tl_rollup_fold_free); false when out of memory. */
bool tl_rollup_fold_copy(const tl_rollup_fold *f, tl_rollup_fold *out);

/* Appends to *sql the view's SELECT of the rollup's rows that pass the
 * filters, aggregated; *done false (and nothing appended) when the scan
 * declines, the caller then reads the rows as they are. stats grows by what
 * was read. */
tl_status tl_rollup_fold_sql(tl_query_engine *e, const tl_table *rollup, const tl_rollup_fold *f,
                             const tl_scan_filter *filters, size_t n_filters, tl_buf *sql,
                             tl_scan_stats *stats, bool *done, tl_error *err);

#endif
