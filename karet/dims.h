/* The rows of a run's dimensions: inline ones from the config, file ones read
 * from CSV objects in the lake (the columns key, values and priority). */
#ifndef KARET_DIMS_H
#define KARET_DIMS_H

#include <jansson.h>

#include "compile.h"
#include "config.h"
#include "timelake.h"

/* Fills rows[i] for every dimension i with `used[i]` set. *files receives
 * {dimension id: [[key, etag]...]} for the files read (new reference).
 * Returns TL_OK, or the failure with err naming the dimension and file. */
tl_status kdims_load(tl_lake *objects, const kconfig *c, const bool *used, kdim_rows *rows,
                     json_t **files, tl_error *err);

#endif
