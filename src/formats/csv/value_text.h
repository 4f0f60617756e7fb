/* The text of one scalar Arrow value, as the CSV and JSON writers print it:
 * integers and decimals exactly, floats in their shortest round-trip form
 * (of a float32 for a float32), dates as YYYY-MM-DD, times of day as
 * HH:MM:SS and timestamps as ISO 8601 (with Z when the type has a zone), both
 * with the unit's fraction digits when there is a fraction; DuckDB's infinite
 * dates and timestamps as "infinity" and "-infinity". Nested values:
 * value_print.h. */
#ifndef TL_CSV_VALUE_TEXT_H
#define TL_CSV_VALUE_TEXT_H

#include "arrow/array.h"
#include "core/buf.h"

/* Appends the text of value i of v (not null) to out. Binary values are
 * written as hex. Returns 0, or -1 when memory runs out. */
int tl_value_text(const tl_array_view *v, int64_t i, tl_buf *out);

/* True when value i of v is null (through the dictionary, too). */
bool tl_value_is_null(const tl_array_view *v, int64_t i);

/* True for numbers and booleans, which JSON writes bare. */
bool tl_value_is_json_literal(const tl_array_view *v, int64_t i);

#endif
