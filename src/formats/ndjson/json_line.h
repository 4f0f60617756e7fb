/* One NDJSON line: a flat JSON object whose values are strings, numbers,
 * booleans or null. Nested objects and arrays are errors (a table is flat). */
#ifndef TL_NDJSON_JSON_LINE_H
#define TL_NDJSON_JSON_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Called for each member: the key and value (unescaped UTF-8), and the kind of
 * the value (TL_TEXT_STRING, TL_TEXT_LITERAL or TL_TEXT_NULL). */
typedef tl_status (*tl_json_member_fn)(void *ctx, const char *key, size_t key_len,
                                       const char *value, size_t value_len, int kind,
                                       tl_error *err);

/* Parses the object in s[0, len). Sets *blank when the line holds only
 * whitespace. A syntax error is TL_ERR_INVALID with a message saying what is
 * wrong and at which byte (the caller adds the file and line). `scratch` holds
 * unescaped text between calls. */
tl_status tl_json_line_parse(const char *s, size_t len, tl_buf scratch[2], tl_json_member_fn fn,
                             void *ctx, int *blank, tl_error *err);

#endif
