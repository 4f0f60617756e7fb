/* JSON text read and written whole or not at all when memory runs out.
 * jansson (2.14 and later) ignores some failed allocations: json_dumps
 * returns the text without an object's key it could not write, and
 * json_loadb a string short of a character (or, unescaping it, reads and
 * writes past its buffers). */
#ifndef TL_CORE_JSON_TEXT_H
#define TL_CORE_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>

#include "core/buf.h"

/* As json_loadb, with *nomem set when it failed for want of memory (then
 * the document may be fine: TL_ERR_NOMEM, not TL_ERR_INVALID); a document
 * parsed while an allocation failed is never returned. */
json_t *tl_json_loadb(const char *json, size_t len, size_t flags, json_error_t *e, bool *nomem);

/* Dumps write through a callback whose first failure fails every later
 * write, so any failed allocation fails the dump. They lay the text out as
 * jansson does, but write each real as the shortest text that reads back
 * as the same double (tl_double_text: 0.1, 1e+21), where jansson writes 17
 * significant digits (0.10000000000000001, 1e21). */

/* As json_dumps (the caller frees the text): NULL when the dump failed. */
char *tl_json_dumps(const json_t *j, size_t flags);

/* Appends the text to *out: 0, or -1 with *out as it was. */
int tl_json_dump_buf(const json_t *j, size_t flags, tl_buf *out);

#endif
