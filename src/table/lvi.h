/* The last-value index: one small Parquet file per snapshot holding the
 * newest row of every series (the table's columns, sorted by series key),
 * referenced from the snapshot summary key timelake.last-value-index as the
 * reference writes it. Each append merges the parent snapshot's index with the
 * newest rows of its own data; the winner of a series is the row with the
 * latest time, then the higher ingest time, then the later write (the new
 * rows over the parent's index, a later row of the append over an earlier). */
#ifndef TL_TABLE_LVI_H
#define TL_TABLE_LVI_H

#include "table/append.h"

/* Whether the table keeps an index: it has a time column, and no struct, list
 * or map column (our Parquet reader, which merges the index, reads flat
 * columns only; `latest` computes the newest rows by a query instead). */
bool tl_lvi_kept(const tl_table *t);

/* Builds the index of a new snapshot `snapshot_id` whose parent is the
 * handle's current snapshot and which adds `rows` (or, with `fresh`, holds only
 * `rows`: a replace), in memory: *file_out (owned: tl_buf_free) is to be
 * uploaded under *key_out (malloc'd). Reads the parent's index unless fresh
 * (tl_lvi_parent: rebuilt when its file is gone or garbage, and `warning`,
 * NULL or TL_ERROR_MESSAGE_MAX bytes, says so); writes nothing. *key_out
 * stays NULL when the table keeps no index: no time column, or a parent with
 * rows that names no index (another writer's commit; maintain builds one). */
tl_status tl_lvi_encode(const tl_table *t, const tl_rows *rows, int64_t snapshot_id, bool fresh,
                        char **key_out, tl_buf *file_out, char *warning, tl_error *err);

/* tl_lvi_encode in its parts, for a commit that builds the index while it
 * writes the metadata naming it. Whether the index of a new snapshot is built
 * (tl_lvi_encode's *key_out not NULL); the key to upload it under (malloc'd,
 * NULL when out of memory); and the file (reads the table, writes nothing,
 * and is safe beside other readers of the handle: tl_lvi_parent). */
bool tl_lvi_wanted(const tl_table *t, bool fresh);
char *tl_lvi_key(const tl_table *t, int64_t snapshot_id);
tl_status tl_lvi_build(const tl_table *t, const tl_rows *rows, bool fresh, const char *key,
                       tl_buf *file_out, char *warning, tl_error *err);
/* tl_lvi_build keeps the rows it built under `key` (NULL: not kept) in the
 * handle's memo (lvi_memo.h), and merges the next append with them rather
 * than decoding the file again while the current snapshot names that key. */

/* Whether an index row whose time is `time_us` stays. */
typedef bool (*tl_lvi_keep_fn)(const tl_table *t, int64_t time_us, void *ctx);

/* The handle's index less the rows `keep` refuses, as the index of a new
 * snapshot `snapshot_id` (in memory, as tl_lvi_encode). *key_out stays NULL
 * when every row stays or there is no index: the parent's serves. For
 * commits that remove rows (retention): a series whose newest row went has
 * no row left when rows go by time, oldest first. */
tl_status tl_lvi_filter(const tl_table *t, tl_lvi_keep_fn keep, void *ctx, int64_t snapshot_id,
                        char **key_out, tl_buf *file_out, tl_error *err);

/* The handle's index into *out (*found false: the table has no rows). When
 * its file is gone or is not an index (TL_ERR_NOT_FOUND or TL_ERR_INVALID on
 * reading it), or the snapshot has rows and names none, it is computed from
 * the data instead (tl_lvi_rebuild) and `warning` (NULL or
 * TL_ERROR_MESSAGE_MAX bytes) says so, naming the file. Other failures to
 * read it (the store, memory) are errors. */
tl_status tl_lvi_parent(const tl_table *t, tl_rows *out, bool *found, char *warning, tl_error *err);

/* For tl_rewrite_request.index: the index of a snapshot whose parent's is
 * missing or unreadable, rebuilt from the data (ctx: a TL_ERROR_MESSAGE_MAX
 * buffer for the warning); *key NULL when the parent's index serves. */
tl_status tl_lvi_repaired(const tl_table *t, void *ctx, int64_t snapshot_id, char **key,
                          tl_buf *file, tl_error *err);

/* The winners of every series among `rows` (a later row over an earlier). */
tl_status tl_lvi_winners(const tl_table *t, const tl_rows *rows, tl_rows *out, tl_error *err);

/* The index of the handle's current snapshot computed from its data: every
 * live data file read, oldest commit first, the newest row of each series
 * kept (ties as on read). *any is false, and *out untouched, when the table
 * has no rows. For a snapshot whose index is missing or cannot be read. */
tl_status tl_lvi_rebuild(const tl_table *t, tl_rows *out, bool *any, tl_error *err);

/* The winners of every series among `a` followed by `b` (b later), into
 * *out with a's schema: how an append bounded in memory carries the newest
 * rows of its earlier chunks to the index. */
tl_status tl_lvi_newest(const tl_table *t, const tl_rows *a, const tl_rows *b, tl_rows *out,
                        tl_error *err);

/* The index of the handle's current snapshot, read into a struct array with
 * the table's storage schema. *found is false (and nothing is filled) when
 * the snapshot has no index. */
tl_status tl_lvi_read(const tl_table *t, tl_rows *out, bool *found, tl_error *err);

#endif
