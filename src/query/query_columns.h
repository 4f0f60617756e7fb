/* Which columns of a lake table a query may use, read from its syntax tree
 * (DuckDB's json_serialize_sql), so that remote files can be fetched without
 * the columns nobody reads. Conservative: a column counts as used when its
 * name appears anywhere in the tree (a column reference, an ORDER BY, a
 * window, a join condition, even a string literal); `*` in any form, or a
 * reference to a whole row by its table's name, means every column. The
 * columns that deduplication and pruning rely on (time, series key, ingest
 * time) are always kept. */
#ifndef TL_QUERY_COLUMNS_H
#define TL_QUERY_COLUMNS_H

#include <stdbool.h>

#include "query/engine.h"

/* Sets keep[i] for each field i of t's current schema. With query NULL, or
 * when the tree cannot be read, every column is kept. */
void tl_query_columns(tl_query_engine *e, const char *query, const tl_table *t, bool *keep);

#endif
