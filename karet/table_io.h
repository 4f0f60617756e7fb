/* What the engine asks of a Timelake table: create it with the pipeline's
 * columns and partitions, read the record of the files it has read, find
 * which keys it already holds, and commit rows with a new record, only if
 * the table is still at a given version. */
#ifndef KARET_TABLE_IO_H
#define KARET_TABLE_IO_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"
#include "run.h"

#define KARET_RECORD "karet.record"

typedef struct ktab {
    karet_lake *lake;
    const char *name; /* "<slug>.<table id>" */
    const ktable *t;
    const char *slug;
    tl_table *handle;
} ktab;

/* Opens the table, creating it (empty, with t's columns and partition keys)
 * when it does not exist; *created says which. */
tl_status ktab_open(ktab *k, bool *created, tl_error *err);
/* Drops and creates it again (its columns or partition keys changed). */
tl_status ktab_recreate(ktab *k, tl_error *err);
void ktab_close(ktab *k);

/* The record committed with the table's current version: *out is NULL when
 * there is none (a new table). */
tl_status ktab_record(ktab *k, json_t **out, tl_error *err);

/* The rows of `in` whose dedup keys the table does not hold (consumed). */
tl_status ktab_new_keys(ktab *k, struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                        int64_t *dropped, tl_error *err);

/* Commits the rows (consumed) as an append, or a replace of the whole table,
 * with `record` (JSON text) and the snapshot summary pairs, only if the table
 * is still at `version` (else TL_ERR_CONFLICT, nothing written). */
tl_status ktab_commit(ktab *k, struct ArrowArrayStream *rows, bool replace, int64_t version,
                      const char *record, const char *const *summary, tl_append_result *out,
                      tl_error *err);

#endif
