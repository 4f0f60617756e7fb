/* latest() straight from the last-value index file, without the SQL engine. */
#ifndef TL_QUERY_LATEST_INDEX_H
#define TL_QUERY_LATEST_INDEX_H

#include <stdbool.h>

#include "table/table_internal.h"

/* The rows of the index file at `url` of table t as the stream the SQL
 * engine gives for SELECT * over that file: the file's columns in its
 * order, every field nullable, strings and binaries with 32-bit offsets,
 * time zones written UTC, one batch per row group, rows in file order. Reads
 * the file through the handle (from the head object's copy when it carries
 * it). *done is false, with nothing done, when a column's type is not one
 * whose engine form is certain here, or when the file's columns are not the
 * table's current schema (projection.h): the caller asks the engine then. */
tl_status tl_latest_from_index(const tl_table *t, const char *url, bool *done,
                               struct ArrowArrayStream *out, tl_error *err);

#endif
