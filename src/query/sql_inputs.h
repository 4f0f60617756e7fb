/* A query's inputs (tl_sql_input): Arrow streams read whole into rowsets
 * (rows_function.h), so that the query may scan them any number of times,
 * and shown to it as temporary views by name. DuckDB looks in its temporary
 * catalog before the search path, so an input hides a table of its name. */
#ifndef TL_QUERY_SQL_INPUTS_H
#define TL_QUERY_SQL_INPUTS_H

#include "query/rows_function.h"

/* Reads `stream` to its end and releases it, whatever happens. Columns of
 * types the rows function does not take are cast to one it does when
 * nothing is lost (large or view strings to strings, small or unsigned
 * integers to int64, float16 to float32, timestamps in s or ms to us,
 * dictionaries decoded); any other type is TL_ERR_INVALID naming the input
 * and column. On success *out is owned by the caller (tl_rowset_free). */
tl_status tl_sql_input_read(const char *name, struct ArrowArrayStream *stream, tl_rowset **out,
                            tl_error *err);

/* Hands rs to the engine and creates the temporary view `name` over it
 * (replacing one of that name). rs is the engine's afterwards, on failure too. */
tl_status tl_sql_input_show(tl_query_engine *e, const char *name, tl_rowset *rs, tl_error *err);

/* Drops the temporary view `name` (the rowset goes with tl_rowsets_clear_inputs). */
void tl_sql_input_hide(tl_query_engine *e, const char *name);

#endif
