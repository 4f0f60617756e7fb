#include "formats/ndjson/json_writer.h"

#include <stdlib.h>
#include <string.h>

#include "formats/csv/value_text.h"

static int put_string(const uint8_t *s, size_t len, tl_buf *out)
{
    if (tl_buf_append_byte(out, '"') != 0) return -1;
    for (size_t k = 0; k < len; k++) {
        uint8_t ch = s[k];
        int rc = ch == '"'    ? tl_buf_append_str(out, "\\\"")
                 : ch == '\\' ? tl_buf_append_str(out, "\\\\")
                 : ch == '\n' ? tl_buf_append_str(out, "\\n")
                 : ch < 0x20  ? tl_buf_printf(out, "\\u%04x", ch)
                              : tl_buf_append_byte(out, ch);
        if (rc != 0) return -1;
    }
    return tl_buf_append_byte(out, '"');
}

static int put_value(const tl_array_view *v, int64_t i, tl_buf *text, tl_buf *out)
{
    if (tl_value_is_null(v, i)) return tl_buf_append_str(out, "null");
    bool literal = tl_value_is_json_literal(v, i);
    bool is_float = v->type.id == TL_ATYPE_FLOAT32 || v->type.id == TL_ATYPE_FLOAT64;
    if (is_float && !literal) return tl_buf_append_str(out, "null");
    text->len = 0;
    if (tl_value_text(v, i, text) != 0) return -1;
    return literal ? tl_buf_append(out, text->data, text->len)
                   : put_string(text->data, text->len, out);
}

tl_status tl_json_write_batch(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              tl_buf *out, tl_error *err)
{
    int64_t n = schema->n_children;
    tl_array_view *views = calloc(n ? (size_t)n : 1, sizeof *views);
    if (views == NULL) return tl_error_nomem(err);
    tl_status st = TL_OK;
    int64_t ready = 0;
    for (; st == TL_OK && ready < n; ready++)
        st =
            tl_array_view_init(&views[ready], schema->children[ready], batch->children[ready], err);
    if (st != TL_OK) ready--;
    tl_buf text = {0};
    for (int64_t r = 0; st == TL_OK && r < batch->length; r++) {
        int rc = tl_buf_append_byte(out, '{');
        for (int64_t c = 0; rc == 0 && c < n; c++) {
            const char *name = schema->children[c]->name ? schema->children[c]->name : "";
            rc = (c ? tl_buf_append_byte(out, ',') : 0) ||
                 put_string((const uint8_t *)name, strlen(name), out) ||
                 tl_buf_append_byte(out, ':') ||
                 put_value(&views[c], batch->offset + r, &text, out);
        }
        if (rc != 0 || tl_buf_append_str(out, "}\n") != 0) st = tl_error_nomem(err);
    }
    tl_buf_free(&text);
    for (int64_t c = 0; c < ready; c++) tl_array_view_free(&views[c]);
    free(views);
    return st;
}
