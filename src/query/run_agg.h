/* Partial aggregation of sorted rows, run by run. Data files are sorted by
 * series key, then time: the rows of one group of a GROUP BY <keys>,
 * time_bucket(width, time) query lie in consecutive runs. A run here is a
 * maximal stretch of rows with equal keys (nulls equal), times in one
 * epoch-aligned bucket of the width and on the same side of each bound of
 * the query's time range (so a WHERE on the time and the keys keeps or drops
 * a whole run); a null time makes runs of its own. Runs outside the range
 * (and, when there is a range, of null times) are left out: the WHERE keeps
 * none of their rows. Each other run becomes one partial-state row: its keys and its first row's
 * time (in the same bucket and the same side of each bound as all its rows), then one state per
 * aggregate: count(*) and count(x) as int64, sum, min and max of a float64
 * column as float64, null when the run holds no value of it; the sum of an
 * int64 column (a rollup's stored counts, merged) as int64. min and max
 * order NaN above every number, as DuckDB does; sums add in row order.
 * Without keys, the runs of one bucket fold into one row (a row group
 * sorted by series key then time holds each bucket once per series), when
 * the buckets between its first and last are no more than its runs. */
#ifndef TL_QUERY_RUN_AGG_H
#define TL_QUERY_RUN_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"
#include "core/error.h"

typedef enum tl_run_op {
    TL_RUN_COUNT_STAR,
    TL_RUN_COUNT,
    TL_RUN_SUM,
    TL_RUN_MIN,
    TL_RUN_MAX,
    TL_RUN_SUM_INT /* the sum of an int64 column (a rollup's stored counts), int64 */
} tl_run_op;

typedef struct tl_run_state {
    tl_run_op op;
    size_t value; /* index into the values (unused for count(*)) */
} tl_run_state;

/* Where runs end besides a change of keys. */
typedef struct tl_run_split {
    int64_t width;  /* the bucket width in microseconds, > 0, buckets from the epoch */
    int64_t lo, hi; /* the time range the query keeps, inclusive (INT64_MIN / INT64_MAX: open) */
} tl_run_split;

/* The input: n rows of a time column (Arrow "tsu:..." or "l"), key columns
 * (utf8 "u", or int32 codes "i" with a utf8 dictionary, as a Parquet
 * dictionary page decodes: codes are compared, a string built only for the
 * runs) and value columns, each of at least n rows: float64 ("g"), or int64
 * ("l") for TL_RUN_SUM_INT alone (the caller matches them). */
typedef struct tl_run_input {
    const struct ArrowArray *time;
    const struct ArrowArray *const *keys;
    size_t n_keys;
    const struct ArrowArray *const *values;
    size_t n_values;
    int64_t n;
} tl_run_input;

/* Aggregates the rows of in into out[n_keys + 1 + n_states] (owned by the
 * caller, released on failure): keys, time (int64 buffers, of the time's
 * own format), states. *runs: the rows of each. TL_ERR_INVALID when an
 * input is of another type, or an int64 sum overflows. */
tl_status tl_run_aggregate(const tl_run_split *split, const tl_run_input *in,
                           const tl_run_state *states, size_t n_states, struct ArrowArray *out,
                           int64_t *runs, tl_error *err);

#endif
