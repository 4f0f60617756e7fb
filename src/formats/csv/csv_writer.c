#include "formats/csv/csv_writer.h"

#include <stdlib.h>
#include <string.h>

#include "formats/csv/value_print.h"

static int put_field(const uint8_t *s, size_t len, char delimiter, tl_buf *out)
{
    bool quote = false;
    for (size_t k = 0; k < len && !quote; k++)
        quote = s[k] == (uint8_t)delimiter || s[k] == '"' || s[k] == '\n' || s[k] == '\r';
    if (!quote) return len ? tl_buf_append(out, s, len) : 0;
    if (tl_buf_append_byte(out, '"') != 0) return -1;
    for (size_t k = 0; k < len; k++)
        if ((s[k] == '"' && tl_buf_append_byte(out, '"') != 0) ||
            tl_buf_append_byte(out, s[k]) != 0)
            return -1;
    return tl_buf_append_byte(out, '"');
}

tl_status tl_csv_write_header(const struct ArrowSchema *schema, char delimiter, tl_buf *out,
                              tl_error *err)
{
    for (int64_t c = 0; c < schema->n_children; c++) {
        const char *name = schema->children[c]->name ? schema->children[c]->name : "";
        if ((c && tl_buf_append_byte(out, (uint8_t)delimiter) != 0) ||
            put_field((const uint8_t *)name, strlen(name), delimiter, out) != 0)
            return tl_error_nomem(err);
    }
    return tl_buf_append_byte(out, '\n') == 0 ? TL_OK : tl_error_nomem(err);
}

tl_status tl_csv_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                             char delimiter, tl_buf *out, tl_error *err)
{
    int64_t n = schema->n_children;
    tl_value_printer **cols;
    TL_TRY(tl_value_printers_new(schema, batch, &cols, err));
    tl_status st = TL_OK;
    tl_buf text = {0};
    for (int64_t r = 0; st == TL_OK && r < batch->length; r++) {
        for (int64_t c = 0; st == TL_OK && c < n; c++) {
            text.len = 0;
            int rc = c ? tl_buf_append_byte(out, (uint8_t)delimiter) : 0;
            if (rc == 0 && !tl_value_printer_is_null(cols[c], batch->offset + r))
                rc = tl_value_printer_text(cols[c], batch->offset + r, &text) ||
                     put_field(text.data, text.len, delimiter, out);
            if (rc != 0) st = tl_error_nomem(err);
        }
        if (st == TL_OK && tl_buf_append_byte(out, '\n') != 0) st = tl_error_nomem(err);
    }
    tl_buf_free(&text);
    tl_value_printers_free(cols, n);
    return st;
}
