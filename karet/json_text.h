/* JSON text of a jansson value, never a partial document: jansson's
 * json_dumps leaves out an object's key it could not write for want of
 * memory and reports success (a pipeline's config, a run's record, a job's
 * summary without one of its keys). Karet uses the library through
 * timelake.h only: this is its own of the library's core/json_text.h. */
#ifndef KARET_JSON_TEXT_H
#define KARET_JSON_TEXT_H

#include <jansson.h>

/* As json_dumps (free the text): NULL when the dump failed. */
char *kjson_dumps(const json_t *j, size_t flags);

#endif
