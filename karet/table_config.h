/* What a table is built from: its definition, the mappings that feed it, their
 * sources and the dimensions they look up (names and layout left out). A
 * change to any of it, or to a dimension file it reads, makes the table's
 * next run a full run; the table's record keeps its SHA-256. */
#ifndef KARET_TABLE_CONFIG_H
#define KARET_TABLE_CONFIG_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"

/* The dimensions the mappings feeding t (and their sources' record filters)
 * look up: flags over c->ndims, set here. */
void ktable_dims_used(const kconfig *c, const ktable *t, bool *used);

/* The canonical JSON of what t is built from; `dim_files` (may be NULL) is
 * {dimension id: [[key, etag]...]} of the dimension files read. New reference. */
json_t *ktable_config(const kconfig *c, const ktable *t, const json_t *dim_files);

/* Its SHA-256, 64 hex digits. Returns false when out of memory. */
bool ktable_config_hash(const kconfig *c, const ktable *t, const json_t *dim_files, char out[65]);

#endif
