/* Mappings evaluated in C over a file's rows, without DuckDB, for the
 * expressions whose SQL semantics (expr.c) it reproduces value for value:
 * columns, literals, arithmetic, comparisons, and/or/not, upper and lower,
 * from_unix, and the conversions of int64 to float64 and of null. Mapping a
 * file through DuckDB costs a query each (plan, copy in, execute, copy out);
 * in C it is one pass over the columns.
 *
 * A plan exists only when every node of the mappings of a source into a
 * table is one of those and no column has an assertion (the checks stay SQL).
 * A file whose values the plan cannot give exactly as DuckDB would (a
 * non-ASCII string to upper or lower, a float that is not finite in
 * arithmetic or from_unix, a NaN compared, a column of an unexpected Arrow
 * type) is handed back, to be mapped by DuckDB instead. */
#ifndef KARET_MAP_FAST_H
#define KARET_MAP_FAST_H

#include <stdbool.h>

#include "batch.h"
#include "config.h"

typedef struct kfast kfast;

/* The plan of the mappings of source s into table t, or NULL: not every
 * node is evaluated in C (*oom false), or out of memory (*oom true). */
kfast *kfast_plan(const kconfig *c, const ktable *t, const ksource *s, bool *oom);
void kfast_free(kfast *p);

/* Maps the file's rows (batches with the source's columns and
 * KARET_COL_ROW) into *out, appended: batches of the columns the mapping
 * query returns (KARET_COL_MAPPING, KARET_COL_ROW, the table's columns,
 * KARET_COL_VIOLATION), in ingest order, the table's text columns as large
 * utf8 (U), the library's storage type. Returns 0, or 1 when the file must
 * go to DuckDB (*out unchanged), or -1 when out of memory. */
int kfast_map(const kfast *p, const kbatches *rows, kbatches *out);

#endif
