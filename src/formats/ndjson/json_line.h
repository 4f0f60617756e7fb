/* One NDJSON line: a JSON object whose values are strings, numbers, booleans,
 * null, or objects and arrays (kept as their JSON text, for nested columns). */
#ifndef TL_NDJSON_JSON_LINE_H
#define TL_NDJSON_JSON_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Called for each member: the key and value (unescaped UTF-8; an object or
 * array as its JSON text), and the kind of the value (TL_TEXT_STRING,
 * TL_TEXT_LITERAL, TL_TEXT_NULL or TL_TEXT_JSON). */
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
