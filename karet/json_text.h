/* JSON text read and written whole or not at all when memory runs out.
 * jansson ignores some failed allocations: json_dumps leaves out an
 * object's key it could not write and reports success (a pipeline's config,
 * a run's record, a job's summary without one of its keys), and json_loadb
 * returns a string short of a character or, unescaping it, reads and writes
 * past its buffers (a request body under a memory limit). Karet uses the
 * library through timelake.h only: this is its own of the library's
 * core/json_text.h. */
#ifndef KARET_JSON_TEXT_H
#define KARET_JSON_TEXT_H

#include <jansson.h>

/* As json_dumps (free the text): NULL when the dump failed. Reals are
 * written in their shortest round-trip form (json_write.h). */
char *kjson_dumps(const json_t *j, size_t flags);

/* jansson's own text, reals with 17 significant digits: for the config
 * hashes recorded in the tables, which must not change with the writer
 * (a changed hash means a full run). */
char *kjson_dumps_jansson(const json_t *j, size_t flags);

/* As json_loadb (the caller owns the value): a document parsed while an
 * allocation failed is never returned; then NULL, with e (when given)
 * saying out of memory and json_error_code(e) json_error_out_of_memory. */
json_t *kjson_loadb(const char *text, size_t len, size_t flags, json_error_t *e);

/* The same for a NUL-terminated text; NULL text gives NULL. */
json_t *kjson_loads(const char *text, size_t flags, json_error_t *e);

#endif
