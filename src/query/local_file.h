/* Local paths DuckDB can read for the files of a lake table. Files of a
 * local warehouse are read where they are; files of a remote one (s3://,
 * gs://, az://) are fetched once through the lake's object store (and so its
 * read cache and retries) into a private directory of the engine, removed
 * when the lake closes. Data files and last-value indexes are immutable
 * (every write makes a new name), so a fetched copy never goes stale. */
#ifndef TL_QUERY_LOCAL_FILE_H
#define TL_QUERY_LOCAL_FILE_H

#include "query/engine.h"

/* The local path of `url`, a file the table's metadata refers to (malloc'd
 * into *out). */
tl_status tl_query_local_file(tl_query_engine *e, const tl_table *t, const char *url, char **out,
                              tl_error *err);

/* Removes the fetched copies and their directory. */
void tl_query_local_files_free(tl_query_engine *e);

#endif
