/* The tables the server appends to, one lock each: commits to one table are
 * serialized (and grouped) while appends to other tables go on. */
#ifndef TL_NOTIFY_TABLES_H
#define TL_NOTIFY_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timelake.h"

typedef struct tl_notify_tables tl_notify_tables;

/* Opens each of the `n` tables of `lake` (opened with its storage
 * `options`, NULL-terminated pairs or NULL; duplicates are merged). A missing
 * table is TL_ERR_NOT_FOUND naming it. *out is freed with tl_notify_tables_free. */
tl_status tl_notify_tables_open(const char *lake, const char *const *options,
                                const char *const *names, int n, tl_notify_tables **out,
                                tl_error *err);
void tl_notify_tables_free(tl_notify_tables *t);

/* Whether table `name` already has `batch_id` (tl_table_batches_committed):
 * *out 1 or 0, and the version that says so, under its lock. Without `wait`,
 * a table busy committing is not waited for: *out is -1 (not known), so that
 * a request fetches and parses while others commit. */
tl_status tl_notify_tables_has_batch(tl_notify_tables *t, const char *name, const char *batch_id,
                                     bool wait, int *out, int64_t *version, tl_error *err);

/* A request for table `name` is on its way to tl_notify_tables_append (from
 * before its object is fetched: commits of the table wait a little for it,
 * notify_group.h), or will not join its group after all (gone: its fetch
 * failed, or its object is above the parse-ahead size and commits alone,
 * said as soon as its size is known). Each coming is followed by exactly one
 * gone or one append of an object up to the parse-ahead size. */
tl_status tl_notify_tables_coming(tl_notify_tables *t, const char *name, tl_error *err);
void tl_notify_tables_gone(tl_notify_tables *t, const char *name);

/* Appends the file at `path` (read as `format`, a canonical name of
 * tl_data_format: "csv", "tsv", "ndjson", "parquet"; borrowed for the call)
 * to table `name` with `batch_id`, or, when `data` is not NULL, its `len`
 * bytes (a text format, at most tl_notify_tables_parse_ahead_bytes; `path`
 * then only names them in messages), for a request announced with
 * tl_notify_tables_coming: parsed first, then committed together with the
 * other requests waiting for the table (notify_group.h); *group is how many
 * requests that commit served. Returns once the rows are committed (or
 * failed, nothing of them committed). Files above the parse-ahead size
 * stream under the table's lock as a commit of their own. */
tl_status tl_notify_tables_append(tl_notify_tables *t, const char *name, const char *path,
                                  const uint8_t *data, size_t len, const char *format,
                                  const char *batch_id, tl_append_result *out, int *group,
                                  tl_error *err);

/* Files up to this size are parsed before they join a group commit. */
uint64_t tl_notify_tables_parse_ahead_bytes(void);

#endif
