/* An ArrowArrayStream over a DuckDB query result, chunk by chunk through
 * DuckDB's Arrow conversion. */
#ifndef TL_QUERY_RESULT_STREAM_H
#define TL_QUERY_RESULT_STREAM_H

#include <duckdb.h>

#include "timelake.h"
#include "core/error.h"

/* Takes `result` (the stream destroys it when released) and fills *out. */
tl_status tl_query_result_stream(duckdb_result *result, struct ArrowArrayStream *out,
                                 tl_error *err);

#endif
