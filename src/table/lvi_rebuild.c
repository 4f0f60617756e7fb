/* The last-value index computed from the data, for a snapshot whose index
 * is missing or cannot be read (lvi.h). */
#include <stdlib.h>
#include <string.h>

#include "table/lvi.h"
#include "table/maintain.h"

static int by_sequence(const void *a, const void *b)
{
    const tl_live_file *x = *(const tl_live_file *const *)a, *y = *(const tl_live_file *const *)b;
    return x->sequence_number < y->sequence_number ? -1 : x->sequence_number > y->sequence_number;
}

/* Folds the newest rows of `rows` into *acc (*have: acc holds rows). */
static tl_status fold(const tl_table *t, tl_rows *rows, tl_rows *acc, bool *have, tl_error *err)
{
    tl_rows merged;
    tl_status st =
        *have ? tl_lvi_newest(t, acc, rows, &merged, err) : tl_lvi_winners(t, rows, &merged, err);
    if (st != TL_OK) return st;
    if (*have) tl_rows_free(acc);
    *acc = merged;
    *have = true;
    return TL_OK;
}

tl_status tl_lvi_rebuild(const tl_table *t, tl_rows *out, bool *any, tl_error *err)
{
    *any = false;
    memset(out, 0, sizeof *out);
    tl_live_files lf;
    TL_TRY(tl_maintain_live_files(t, &lf, err));
    const tl_live_file **order = malloc((lf.n + 1) * sizeof *order);
    tl_status st = order ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; order && i < lf.n; i++) order[i] = &lf.files[i];
    /* Oldest commit first: a later write wins a tie, as on read. */
    if (order) qsort(order, lf.n, sizeof *order, by_sequence);
    for (size_t i = 0; st == TL_OK && i < lf.n; i++) {
        tl_rows rows;
        st = tl_rewrite_read_file(t, order[i], &rows, err);
        if (st == TL_OK) {
            st = fold(t, &rows, out, any, err);
            tl_rows_free(&rows);
        }
    }
    if (st != TL_OK && *any) tl_rows_free(out), *any = false;
    free(order);
    tl_live_files_free(&lf);
    return st;
}
