#include "formats/ndjson/json_writer.h"

#include <stdlib.h>
#include <string.h>

#include "formats/csv/value_print.h"

tl_status tl_json_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              tl_buf *out, tl_error *err)
{
    int64_t n = schema->n_children;
    tl_value_printer **cols;
    TL_TRY(tl_value_printers_new(schema, batch, &cols, err));
    tl_status st = TL_OK;
    for (int64_t r = 0; st == TL_OK && r < batch->length; r++) {
        int rc = tl_buf_append_byte(out, '{');
        for (int64_t c = 0; rc == 0 && c < n; c++) {
            const char *name = schema->children[c]->name ? schema->children[c]->name : "";
            rc = (c ? tl_buf_append_byte(out, ',') : 0) ||
                 tl_value_json_string((const uint8_t *)name, strlen(name), out) ||
                 tl_buf_append_byte(out, ':') ||
                 tl_value_printer_json(cols[c], batch->offset + r, out);
        }
        if (rc != 0 || tl_buf_append_str(out, "}\n") != 0) st = tl_error_nomem(err);
    }
    tl_value_printers_free(cols, n);
    return st;
}
