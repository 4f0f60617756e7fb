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
void ktab_close(ktab *k);

/* The record committed with the table's current version: *out is NULL when
 * there is none (a new table). */
tl_status ktab_record(ktab *k, json_t **out, tl_error *err);

/* The rows of `in` whose dedup keys the table does not hold (consumed). */
tl_status ktab_new_keys(ktab *k, struct ArrowArrayStream *in, struct ArrowArrayStream *out,
                        int64_t *dropped, tl_error *err);

typedef enum kcommit {
    KCOMMIT_APPEND,  /* the rows are added */
    KCOMMIT_REPLACE, /* the rows are the whole table */
    /* The rows are the whole table, and its columns and partition keys
     * become the pipeline's, in the same commit: the old table stays
     * readable, whole, until then, and a failure leaves it as it was. */
    KCOMMIT_RESHAPE
} kcommit;

/* Commits the rows (consumed) as `kind` says, with `record` (JSON text) and
 * the snapshot summary pairs, only if the table is still at `version` (else
 * TL_ERR_CONFLICT, nothing written). */
tl_status ktab_commit(ktab *k, struct ArrowArrayStream *rows, kcommit kind, int64_t version,
                      const char *record, const char *const *summary, tl_append_result *out,
                      tl_error *err);

#endif
