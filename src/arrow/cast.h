/* Casting arrays to a column's type. A data lake must never silently corrupt
 * data, so every conversion is exact or fails naming the column, the row
 * (0-based, within the view) and the value:
 *
 *   integers <-> integers            range-checked per value
 *   integers -> float32/float64      allowed (rounds beyond 2^24 / 2^53, as Arrow does)
 *   floats -> integers               only integral values in range
 *   float64 -> float32               rounds; finite values beyond float32 fail; NaN/inf kept
 *   float16 -> float32/float64       exact
 *   bool -> integers                 0 / 1 (integers -> bool is not allowed)
 *   integers -> decimal128           range-checked
 *   decimal128 -> decimal128         rescaled exactly, else an error
 *   date32/date64/timestamp, and time32/time64, among themselves:
 *                                    to a finer unit overflow-checked, to a coarser unit
 *                                    only exact values (ns -> us with sub-microsecond
 *                                    digits, a time of day into a date: an error);
 *                                    a time zone change keeps the instant (values are UTC)
 *   string <-> large_string, binary <-> large_binary, (large_)string -> (large_)binary
 *   (large_)string -> integers, floats, bool, date32, date64, timestamp, decimal128:
 *                                    parsed with the parsers of arrow/parse.h
 *   dictionary<any index, T> -> T (decoded) or whatever T casts to
 *   null -> any type but struct      all nulls
 *   identical types                  copied (one memcpy per buffer)
 * Anything else is TL_ERR_INVALID "column \"x\": cannot cast <from> to <to>". */
#ifndef TL_ARROW_CAST_H
#define TL_ARROW_CAST_H

#include <stdbool.h>

#include "arrow/array.h"

/* Casts `src` (plain or dictionary-encoded, any offset) to `target`. `column`
 * names the column in error messages. *out is an owned array (the caller
 * releases it) with offset 0, an exact null_count and NULL validity when no
 * value is null. Nulls pass through. */
tl_status tl_arrow_cast(const tl_array_view *src, const tl_arrow_type *target, const char *column,
                        struct ArrowArray *out, tl_error *err);

/* The type-level check: true when tl_arrow_cast may succeed (values can still
 * fail). For dictionary arrays pass the value type. */
bool tl_arrow_can_cast(const tl_arrow_type *from, const tl_arrow_type *to);

#endif
