/* Steps of running SQL shared by tl_lake_sql and tl_lake_latest. */
#ifndef TL_QUERY_SQL_RUN_H
#define TL_QUERY_SQL_RUN_H

#include "core/buf.h"
#include "query/engine.h"

/* SELECT over the table's last-value index file. */
tl_status tl_query_lvi_sql(tl_query_engine *e, const tl_table *t, tl_buf *sql, tl_error *err);

/* Runs `query` and streams its result into *out (owned by the caller). */
tl_status tl_query_run(tl_query_engine *e, const char *query, struct ArrowArrayStream *out,
                       tl_error *err);

#endif
