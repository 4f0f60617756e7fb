/* Row pruning within pages: the pages a filter may want (page_select.h)
 * narrowed to the rows whose own time and first series-key values pass it,
 * read from those two columns. Still a superset: a null, or a type whose
 * values cannot be compared with the filter, counts as passing. */
#ifndef TL_QUERY_ROW_REFINE_H
#define TL_QUERY_ROW_REFINE_H

#include "query/page_select.h"

/* Replaces *rr (ranges of row group g of the file r reads) by the rows in it
 * that may pass any of the filters. *bytes grows by the bytes read; read[c]
 * (n_columns entries) is set for each column read. *exact is set false
 * unless the rows left are exactly those passing the one filter: a single
 * filter, whose restricted columns were read and compared exactly at every
 * row (no null, times in microseconds, keys strings). */
tl_status tl_row_refine(const tl_table *t, tl_parquet_reader *r, int g,
                        const tl_scan_filter *filters, size_t n_filters, tl_row_ranges *rr,
                        int64_t *bytes, bool *read, bool *exact, tl_error *err);

#endif
