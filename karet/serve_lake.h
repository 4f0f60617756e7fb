/* The service's view of the lake: the root (sources, uploads, the lake
 * browser) and the warehouse/ folder beside the sources, where each
 * pipeline's tables live in the namespace of its slug. Request handlers open
 * handles per request (a handle serves one thread at a time). */
#ifndef KARET_SERVE_LAKE_H
#define KARET_SERVE_LAKE_H

#include <stddef.h>

#include "serve.h"
#include "timelake.h"

#define WAREHOUSE_DIR "warehouse"

/* NULL with err filled on failure; close with tl_lake_close. */
tl_lake *lake_open_objects(service *svc, char *err, size_t errlen);
tl_lake *lake_open_warehouse(service *svc, char *err, size_t errlen);

/* Drops every table of namespace slug; returns how many, or -1 (err). */
int lake_drop_namespace(service *svc, const char *slug, char *err, size_t errlen);

/* Splits an s3:// lake URL into the bucket its events name and the key
 * prefix of the lake inside it ("" or ending in '/'). Both NULL for other
 * lakes. */
void lake_bucket_of(const char *url, char **bucket, char **prefix);

#endif
