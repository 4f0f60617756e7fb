/* The series of a compaction's inputs, ranked once so that the merge
 * (maintain_merge.c) compares two rows' series by one integer instead of by
 * their bytes. A merge of small files compares each row's series several
 * times (the heap, the galloping, the checks of order and duplicates), and
 * the series of those files are few and shared: interning each series once
 * per run of equal rows and sorting the distinct ones costs less than the
 * byte comparisons it replaces.
 *
 * The ranks order series as the merge does: column by column, nulls first,
 * integers by value, bytes lexicographically (a prefix first). */
#ifndef TL_TABLE_MAINTAIN_SERIES_H
#define TL_TABLE_MAINTAIN_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow/array.h"
#include "core/buf.h"

#define TL_SERIES_MAX_COLS 8

typedef struct tl_series_set {
    size_t n_cols;
    int8_t width[TL_SERIES_MAX_COLS]; /* bits of an integer column, 0 for bytes */
    tl_buf keys;                      /* every distinct series encoded, back to back */
    size_t *start;                    /* of each in keys; start[n] is keys.len */
    uint64_t *hash;
    int32_t *rank; /* of each, once ranked */
    size_t n, cap;
    int32_t *slots; /* open addressing: id + 1, 0 empty */
    size_t mask;
    bool ranked;
} tl_series_set;

/* An empty set of series of n_cols columns (at most TL_SERIES_MAX_COLS)
 * of these widths. */
void tl_series_set_init(tl_series_set *s, const int8_t *width, size_t n_cols);
void tl_series_set_free(tl_series_set *s);

/* out[i] = the id of the series of row i of the columns (n_rows rows each).
 * Before tl_series_set_rank, series not seen yet are added; after it, out
 * gets ranks and *found is false when a row's series was never added (out
 * is then of no use). */
tl_status tl_series_set_lookup(tl_series_set *s, const tl_array_view *cols, int64_t n_rows,
                               int32_t *out, bool *found, tl_error *err);

/* Sorts the series added so far; ids handed out before become ranks through
 * tl_series_set_ids_to_ranks, and no series is added after. */
tl_status tl_series_set_rank(tl_series_set *s, tl_error *err);
void tl_series_set_ids_to_ranks(const tl_series_set *s, int32_t *ids, int64_t n);

#endif
