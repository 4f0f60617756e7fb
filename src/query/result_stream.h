/* An ArrowArrayStream over a DuckDB query result, chunk by chunk through
 * DuckDB's Arrow conversion. */
#ifndef TL_QUERY_RESULT_STREAM_H
#define TL_QUERY_RESULT_STREAM_H

#include <duckdb.h>
#include <stdbool.h>

#include "timelake.h"
#include "core/error.h"

/* Takes `result` (the stream destroys it when released) and fills *out. */
tl_status tl_query_result_stream(duckdb_result *result, struct ArrowArrayStream *out,
                                 tl_error *err);

/* Reads `result` (destroyed here, which stops a streaming query still
 * running) into memory: at most max_rows rows (0: all), *truncated set
 * when more were left. On success *out is a stream over those rows, owned
 * by the caller. A failure (the query's, or converting its rows) is
 * TL_ERR_QUERY. */
tl_status tl_query_result_collect(duckdb_result *result, int64_t max_rows,
                                  struct ArrowArrayStream *out, bool *truncated, tl_error *err);

#endif
