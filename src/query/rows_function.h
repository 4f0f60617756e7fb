/* Rows Timelake decoded itself, handed to DuckDB through a table function:
 * `__timelake_rows(id)` scans rowset `id` of the engine. A rowset is a list
 * of segments (pieces of row groups) whose columns are Arrow arrays of the
 * types read_parquet would give them; columns a query does not use may be
 * left out (the function pushes projections down, and refuses a column it
 * was not given). The function can be scanned any number of times (a
 * self-join, a CTE used twice), in parallel for large rowsets. Rowsets live
 * until tl_rowsets_clear, which tl_lake_sql calls once its query has run
 * (a query's inputs until tl_rowsets_clear_inputs). */
#ifndef TL_QUERY_ROWS_FUNCTION_H
#define TL_QUERY_ROWS_FUNCTION_H

#include <stdbool.h>

#include "core/buf.h"
#include "query/engine.h"

#define TL_ROWS_FUNCTION "__timelake_rows"

typedef struct tl_rows_segment {
    int64_t rows;
    struct ArrowArray *cols; /* n_cols arrays; a released one was not decoded */
} tl_rows_segment;

typedef struct tl_rowset {
    size_t n_cols;
    char **names;
    char **formats; /* Arrow formats, one of those tl_rows_type maps */
    tl_rows_segment *segs;
    size_t n_segs;
    int64_t rows;
} tl_rowset;

/* Whether an Arrow format has a DuckDB type here, the one read_parquet gives
 * a Parquet column our reader decodes to it. */
bool tl_rows_type_mapped(const char *format);

void tl_rowset_free(tl_rowset *rs);

/* Appends to sig what a statement bound to the engine's rowsets depends on
 * (statement_cache.h): each rowset's id, column names and types. Nonzero
 * when out of memory. */
int tl_rowsets_signature(const tl_query_engine *e, tl_buf *sig);

/* Registers the table function on the engine's connection. */
tl_status tl_rows_register_function(tl_query_engine *e, tl_error *err);

/* Hands rs to the engine; *id names it in TL_ROWS_FUNCTION(id). On failure
 * rs is freed. */
tl_status tl_rowsets_add(tl_query_engine *e, tl_rowset *rs, int64_t *id, tl_error *err);

/* As tl_rowsets_add, for a query's input (sql_inputs.h): kept by
 * tl_rowsets_clear, freed by tl_rowsets_clear_inputs. */
tl_status tl_rowsets_add_input(tl_query_engine *e, tl_rowset *rs, int64_t *id, tl_error *err);

/* Frees the engine's rowsets decoded for a query (tl_rowsets_clear), its
 * inputs (tl_rowsets_clear_inputs), or everything (tl_rowsets_free). */
void tl_rowsets_clear(tl_query_engine *e);
void tl_rowsets_clear_inputs(tl_query_engine *e);
void tl_rowsets_free(tl_query_engine *e);

#endif
