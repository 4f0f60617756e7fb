/* The public call that prints a batch's values as text cells, for a front
 * end's own layout (the CLI's aligned table): all the cells in one block. */
#include <stdlib.h>
#include <string.h>

#include "formats/csv/value_print.h"

/* Appends the text of every cell to `text`, each followed by a NUL; ends[i]
 * is where cell i's NUL lies, or SIZE_MAX for a null value. */
static tl_status print_cells(const struct ArrowSchema *schema, const struct ArrowArray *b,
                             tl_buf *text, size_t *ends, tl_error *err)
{
    tl_value_printer **cols;
    TL_TRY(tl_value_printers_new(schema, b, &cols, err));
    tl_status st = TL_OK;
    size_t k = 0;
    for (int64_t r = 0; st == TL_OK && r < b->length; r++)
        for (int64_t c = 0; st == TL_OK && c < schema->n_children; c++, k++) {
            if (tl_value_printer_is_null(cols[c], b->offset + r)) {
                ends[k] = SIZE_MAX;
                continue;
            }
            if (tl_value_printer_text(cols[c], b->offset + r, text) != 0 ||
                tl_buf_append_byte(text, 0) != 0)
                st = tl_error_nomem(err);
            ends[k] = text->len - 1;
        }
    tl_value_printers_free(cols, schema->n_children);
    return st;
}

tl_status tl_batch_text(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                        char ***out, tl_error *err)
{
    *out = NULL;
    if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0 ||
        batch == NULL || batch->release == NULL || batch->n_children != schema->n_children ||
        batch->length < 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "tl_batch_text wants a struct batch and the struct schema it has");
    size_t n = (size_t)batch->length * (size_t)schema->n_children;
    size_t *ends = malloc((n ? n : 1) * sizeof *ends);
    tl_buf text = {0};
    tl_status st = ends ? print_cells(schema, batch, &text, ends, err) : tl_error_nomem(err);
    char **cells = st == TL_OK ? malloc(n * sizeof *cells + text.len + 1) : NULL;
    if (st == TL_OK && cells == NULL) st = tl_error_nomem(err);
    if (st == TL_OK) {
        char *block = (char *)(cells + n);
        if (text.len) memcpy(block, text.data, text.len);
        for (size_t i = 0, start = 0; i < n; i++) {
            cells[i] = ends[i] == SIZE_MAX ? NULL : block + start;
            if (ends[i] != SIZE_MAX) start = ends[i] + 1;
        }
        *out = cells;
    }
    free(ends);
    tl_buf_free(&text);
    return st;
}
