/* Local paths DuckDB can read for the files of a lake table. Files of a
 * local warehouse are read where they are; files of a remote one (s3://,
 * gs://, az://) are fetched once through the lake's object store (and so its
 * read cache and retries) into a private directory of the engine, removed
 * when the lake closes. Data files and last-value indexes are immutable
 * (every write makes a new name), so a fetched copy never goes stale. */
#ifndef TL_QUERY_LOCAL_FILE_H
#define TL_QUERY_LOCAL_FILE_H

#include <stdbool.h>

#include "query/engine.h"

/* The local path of `url`, a file the table's metadata refers to (malloc'd
 * into *out). */
tl_status tl_query_local_file(tl_query_engine *e, const tl_table *t, const char *url, char **out,
                              tl_error *err);

/* Names the engine's directory of fetched files (e->fetch_dir) if needed,
 * without creating it; tl_query_fetch_dir creates it (mode 0700) too. */
tl_status tl_query_fetch_dir_name(tl_query_engine *e, tl_error *err);
tl_status tl_query_fetch_dir(tl_query_engine *e, tl_error *err);

/* The path in the fetch directory for a copy of url (malloc'd); suffix (may
 * be NULL) tells apart subsets of one file (remote_fetch.h). */
char *tl_query_local_name(const tl_query_engine *e, const char *url, const char *suffix);

/* Writes a file under a temporary name, then renames it into place: a path
 * DuckDB sees is always complete. */
tl_status tl_query_write_local(const char *path, const void *data, size_t len, tl_error *err);

/* Marks a copy in the fetch directory as used now; false when it is not there. */
bool tl_query_local_reuse(const char *path);

/* Bounds the fetch directory of a long-lived lake: once its copies exceed
 * TL_FETCH_DIR_MAX bytes, those unused for TL_FETCH_DIR_MIN_AGE seconds go,
 * least recently used first (a query's copies are used when it is prepared,
 * and DuckDB has read them when it returns). */
#define TL_FETCH_DIR_MAX (1LL << 30)
#define TL_FETCH_DIR_MIN_AGE 600
void tl_query_fetch_dir_trim(tl_query_engine *e);

/* Removes the fetched copies and their directory. */
void tl_query_local_files_free(tl_query_engine *e);

#endif
