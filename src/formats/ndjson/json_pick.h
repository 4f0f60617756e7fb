/* Values at paths of a JSON object: "request.headers.User-Agent[0]" walks
 * keys (split at '.') and array indexes ([n]) from the top-level object. One
 * pass over a line checks the whole of it (RFC 8259, nesting at most 128
 * deep) and picks the value at every path, descending only where a path
 * leads; a path the line does not have (a missing key, an index past the
 * end, a step into a scalar) is missing. Strings without escapes are handed
 * back in place. */
#ifndef TL_NDJSON_JSON_PICK_H
#define TL_NDJSON_JSON_PICK_H

#include <stddef.h>

#include "core/buf.h"

typedef enum tl_json_kind {
    TL_JSON_MISSING = 0,
    TL_JSON_NULL,
    TL_JSON_BOOL,   /* text "true" or "false" */
    TL_JSON_NUMBER, /* text as written */
    TL_JSON_STRING, /* text unescaped */
    TL_JSON_OBJECT, /* text as written, from '{' to '}' */
    TL_JSON_ARRAY   /* text as written, from '[' to ']' */
} tl_json_kind;

typedef struct tl_json_value {
    tl_json_kind kind;
    const char *text;
    size_t len;
} tl_json_value;

typedef struct tl_json_paths tl_json_paths;

/* Compiles n paths. Keys are the text between dots (any bytes but '.' and
 * '['; empty ones are skipped, as "a..b" is "a.b"), an index is digits in
 * brackets. An empty path or a malformed index is TL_ERR_INVALID naming it.
 * *out is freed with tl_json_paths_free. */
tl_status tl_json_paths_compile(const char *const *paths, size_t n, tl_json_paths **out,
                                tl_error *err);
void tl_json_paths_free(tl_json_paths *p);

/* Parses the line s[0, len) and fills values[0..n) (n as compiled; the
 * value of the last occurrence when a key repeats). *blank is set when the
 * line holds only whitespace (values are then untouched). A line that is not
 * JSON, or not an object, is TL_ERR_INVALID saying what is wrong and at which
 * byte. Unescaped strings are put in `scratch` (emptied first): the values
 * point into s or scratch, and are valid while both are. */
tl_status tl_json_pick(const tl_json_paths *p, const char *s, size_t len, tl_buf *scratch,
                       tl_json_value *values, int *blank, tl_error *err);

#endif
