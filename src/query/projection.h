/* Reading a table whose files were written under older schemas: every read
 * shows the table's current schema (Iceberg's column projection, by field
 * id). A rollback to a snapshot taken before a schema change keeps the
 * current schema (Iceberg's rollback moves the current snapshot only), and
 * other writers (pyiceberg's update_schema) add columns without rewriting
 * the files, so a file may lack a column (read as nulls of its type), hold
 * a narrower type (int for long, float for double: read widened), lack a
 * nested field (null), or name a column differently (read under the
 * schema's name). A time-travel handle (time_travel.h) has its snapshot's
 * schema as current: that read projects onto it, as pyiceberg's
 * scan(snapshot_id=...) does.
 *
 * DuckDB does the projection (read_parquet's `schema` option, a map of field
 * ids to names and types; inside a nested column, fields are matched by
 * name, as Timelake's schema changes keep them). Our own readers (the
 * selective scan, latest() from the index) read a file only when its
 * columns are already the schema's, and otherwise leave it to DuckDB.
 *
 * A table whose metadata has only ever had one schema needs none of this:
 * every file was written under it (and a file without field ids, which the
 * projection would read as nulls, is read by name as before). */
#ifndef TL_QUERY_PROJECTION_H
#define TL_QUERY_PROJECTION_H

#include <stdbool.h>

#include "core/buf.h"
#include "table/table_internal.h"

/* Whether reads of t project its files onto the current schema: its
 * metadata has more than one schema. */
bool tl_projection_needed(const tl_table *t);

/* Appends to *sql the read_parquet option that projects t's files onto its
 * current schema (", schema = MAP {...}"), or nothing when none is needed. */
tl_status tl_projection_option(const tl_table *t, tl_buf *sql, tl_error *err);

/* Whether a file whose columns are `file` (our Parquet reader's schema)
 * already reads as t's current schema: no projection needed, or the same
 * columns in the same order, by field id (by name when the file has none),
 * name and type, nested fields included. */
bool tl_projection_fits(const tl_table *t, const struct ArrowSchema *file);

#endif
