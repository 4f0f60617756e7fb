/* JSON text of a jansson value, never a partial document. jansson (2.14 and
 * later) ignores the failure to write an object's key (dump_string's result
 * in do_dump): json_dumps then returns the text without that key, malformed,
 * and reports success. These write through a callback whose first failure
 * fails every later write, so any failed allocation fails the dump. */
#ifndef TL_CORE_JSON_TEXT_H
#define TL_CORE_JSON_TEXT_H

#include <jansson.h>

#include "core/buf.h"

/* As json_dumps (the caller frees the text): NULL when the dump failed. */
char *tl_json_dumps(const json_t *j, size_t flags);

/* Appends the text to *out: 0, or -1 with *out as it was. */
int tl_json_dump_buf(const json_t *j, size_t flags, tl_buf *out);

#endif
