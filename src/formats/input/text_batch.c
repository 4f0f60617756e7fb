#include "formats/input/text_batch.h"

#include <stdlib.h>
#include <string.h>

tl_status tl_text_batch_init(tl_text_batch *b, int ncols, tl_error *err)
{
    memset(b, 0, sizeof *b);
    b->cols = calloc(ncols > 0 ? (size_t)ncols : 1, sizeof *b->cols);
    if (b->cols == NULL) return tl_error_nomem(err);
    b->ncols = ncols;
    tl_text_batch_reset(b);
    return TL_OK;
}

void tl_text_batch_free(tl_text_batch *b)
{
    for (int i = 0; i < b->ncols; i++) {
        tl_buf_free(&b->cols[i].bytes);
        tl_buf_free(&b->cols[i].offsets);
        tl_buf_free(&b->cols[i].kinds);
        tl_buf_free(&b->cols[i].values);
    }
    free(b->cols);
    tl_buf_free(&b->lines);
    memset(b, 0, sizeof *b);
}

void tl_text_batch_reset(tl_text_batch *b)
{
    static const int64_t zero = 0;
    for (int i = 0; i < b->ncols; i++) {
        b->cols[i].bytes.len = 0;
        b->cols[i].kinds.len = 0;
        b->cols[i].offsets.len = 0;
        b->cols[i].values.len = 0;
        b->cols[i].direct = 0;
        b->cols[i].text = false;
        /* The offsets start with 0; memory is kept, so this cannot fail after the first time. */
        (void)tl_buf_append(&b->cols[i].offsets, &zero, sizeof zero);
    }
    b->lines.len = 0;
    b->rows = 0;
}

int tl_text_column_to_text(tl_text_column *c)
{
    if (tl_text_column_is_text(c)) return 0;
    size_t n = (size_t)c->direct;
    if (tl_buf_reserve(&c->offsets, n * sizeof(int64_t)) != 0 || tl_buf_reserve(&c->kinds, n) != 0)
        return -1;
    /* No text yet: each typed row's is empty, at offset 0. */
    memset(c->offsets.data + c->offsets.len, 0, n * sizeof(int64_t));
    c->offsets.len += n * sizeof(int64_t);
    memset(c->kinds.data + c->kinds.len, TL_TEXT_STRING, n);
    c->kinds.len += n;
    c->text = true;
    return 0;
}

/* Values the column holds: typed ones count until it turns to text, whose
 * rows then cover them. */
static size_t column_values(const tl_text_column *c)
{
    return tl_text_column_is_text(c) ? c->kinds.len : (size_t)c->direct;
}

tl_status tl_text_batch_end_row(tl_text_batch *b, int64_t line, tl_error *err)
{
    for (int i = 0; i < b->ncols; i++)
        if (column_values(&b->cols[i]) != (size_t)b->rows + 1)
            return tl_error_set(err, TL_ERR_INTERNAL, "text batch row %lld is ragged",
                                (long long)b->rows);
    if (tl_buf_append(&b->lines, &line, sizeof line) != 0) return tl_error_nomem(err);
    b->rows++;
    return TL_OK;
}

void tl_text_batch_reserve(tl_text_batch *b, int64_t rows)
{
    if (b->rows <= 0 || rows <= b->rows) return;
    size_t more = (size_t)(rows - b->rows);
    for (int i = 0; i < b->ncols; i++) {
        tl_text_column *c = &b->cols[i];
        size_t per_value = c->bytes.len / (size_t)b->rows + 1;
        if (tl_buf_reserve(&c->bytes, more * per_value) != 0 ||
            tl_buf_reserve(&c->offsets, more * sizeof(int64_t)) != 0 ||
            tl_buf_reserve(&c->kinds, more) != 0 ||
            (c->direct_id && tl_buf_reserve(&c->values, more * sizeof(int64_t)) != 0))
            return;
    }
    (void)tl_buf_reserve(&b->lines, more * sizeof(int64_t));
}

size_t tl_text_batch_bytes(const tl_text_batch *b)
{
    size_t n = 0;
    for (int i = 0; i < b->ncols; i++)
        n += b->cols[i].bytes.len + b->cols[i].offsets.len + b->cols[i].values.len;
    return n;
}

tl_status tl_text_batch_add_column(tl_text_batch *b, int *out, tl_error *err)
{
    tl_text_column *cols = realloc(b->cols, (size_t)(b->ncols + 1) * sizeof *cols);
    if (cols == NULL) return tl_error_nomem(err);
    b->cols = cols;
    tl_text_column *c = &cols[b->ncols];
    memset(c, 0, sizeof *c);
    b->ncols++;
    size_t rows = (size_t)b->rows;
    int64_t *off = tl_buf_extend(&c->offsets, (rows + 1) * sizeof *off);
    uint8_t *kinds = tl_buf_extend(&c->kinds, rows);
    if (off == NULL || (rows && kinds == NULL)) return tl_error_nomem(err);
    if (rows) memset(kinds, TL_TEXT_NULL, rows);
    *out = b->ncols - 1;
    return TL_OK;
}
