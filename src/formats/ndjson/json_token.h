/* The JSON tokens both NDJSON parsers read (json_line.h for flat objects,
 * json_pick.h for values at paths): whitespace, strings, numbers, literals,
 * per RFC 8259. Strings are checked for escapes, control bytes and UTF-8;
 * one without escapes is handed back in place, without a copy. */
#ifndef TL_NDJSON_JSON_TOKEN_H
#define TL_NDJSON_JSON_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

typedef struct tl_json_cursor {
    const char *s;
    size_t len, i;
} tl_json_cursor;

/* Where a string's text is: s[off, off + len) of the input, or, when it had
 * escapes, out->data[off, off + len) of the buffer it was unescaped onto. */
typedef struct tl_json_text {
    size_t off, len;
    bool unescaped;
} tl_json_text;

void tl_json_skip_ws(tl_json_cursor *c);

/* TL_ERR_INVALID: "<what> at byte <i + 1>". */
tl_status tl_json_syntax(const tl_json_cursor *c, const char *what, tl_error *err);

/* A string at c->i (on the opening quote). With escapes, its text is appended
 * to `out`; out NULL only checks it. */
tl_status tl_json_string(tl_json_cursor *c, tl_buf *out, tl_json_text *text, tl_error *err);

/* A number at c->i per the JSON grammar (its text is the value). */
tl_status tl_json_number(tl_json_cursor *c, tl_error *err);

/* Consumes the literal `w` ("true", "false", "null") when it is at c->i. */
bool tl_json_word(tl_json_cursor *c, const char *w);

static inline const char *tl_json_text_ptr(const tl_json_cursor *c, const tl_buf *out,
                                           const tl_json_text *t)
{
    return t->unescaped ? (const char *)out->data + t->off : c->s + t->off;
}

#endif
