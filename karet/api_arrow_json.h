/* Query results as JSON for the API. */
#ifndef KARET_API_ARROW_JSON_H
#define KARET_API_ARROW_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "timelake.h"

/* Reads stream to its end (or max_rows rows, when > 0) into *out:
 * {"columns": [...], "types": [...], "rows": [{...}], "rowCount", "truncated"}.
 * The stream is not released. Returns 0, or -1 with err. */
int arrow_stream_to_json(struct ArrowArrayStream *stream, int64_t max_rows, json_t **out, char *err,
                         size_t errlen);

#endif
