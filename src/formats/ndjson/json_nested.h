/* JSON objects and arrays into nested Arrow columns: a struct from an object
 * (keys are its fields), a list from an array, a map from an object (keys are
 * its keys) or an array of [key, value] pairs; leaves from JSON scalars, cast
 * as text is cast to the leaf's type. */
#ifndef TL_NDJSON_JSON_NESTED_H
#define TL_NDJSON_JSON_NESTED_H

#include "arrow/array.h"

/* Parses `texts` (a large string array of JSON texts, nulls where null) into
 * *out, an owned array of nested field `field`. Errors name the column path
 * ("tags.element") and the value; *bad_row gets the row (or -1). */
tl_status tl_json_nested_column(const struct ArrowSchema *field, const struct ArrowArray *texts,
                                const char *column, struct ArrowArray *out, int64_t *bad_row,
                                tl_error *err);

#endif
