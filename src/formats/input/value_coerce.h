/* Lenient typing of one value: text read from CSV or NDJSON goes into a
 * column of type string, int64, float64, bool or date32 when it converts
 * without loss, and is refused otherwise (the caller then stores a null and
 * says so). The rules, by column type:
 *   string  any value, as written (JSON strings unescaped, numbers as in the
 *           file, objects and arrays as their JSON text); valid UTF-8 only
 *   int64   a number or numeric text whose value is whole and in range
 *           ("42", "42.0", "4.2e1"; not "4.5")
 *   float64 a number or numeric text ("nan" and "inf" too), nearest double;
 *           finite text beyond the double range is refused
 *   bool    true/false, the text "true"/"false" (any case) or "1"/"0", the
 *           numbers 1 and 0
 *   date    text "YYYY-MM-DD"
 * Text given to the non-string types may have spaces or tabs around it. */
#ifndef TL_INPUT_VALUE_COERCE_H
#define TL_INPUT_VALUE_COERCE_H

#include <stdbool.h>
#include <stddef.h>

#include "arrow/builder.h"

typedef enum tl_value_kind {
    TL_VALUE_TEXT,   /* a CSV field or a JSON string */
    TL_VALUE_NUMBER, /* a JSON number, as written */
    TL_VALUE_BOOL,   /* a JSON true or false */
    TL_VALUE_JSON    /* a JSON object or array, as written */
} tl_value_kind;

/* Appends the value s[0, len) to b (of one of the types above) and sets
 * *fits; when it does not fit, appends nothing and clears *fits. Fails only
 * when memory runs out. */
tl_status tl_value_coerce(tl_builder *b, tl_value_kind kind, const char *s, size_t len, bool *fits,
                          tl_error *err);

#endif
