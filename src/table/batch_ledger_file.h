/* The batch ledger's file (see batch_ledger.h): an Avro object container
 * file of records {batch_id: string, committed_ms: long, lineage: ["null",
 * "long"] = null}.
 *
 * An entry's lineage is the snapshot id of a lineage root: a snapshot the
 * table kept whose parent expiry removed (or the table's first snapshot).
 * The entry says that batch_id was committed by one of that root's expired
 * ancestors (or by a kept ancestor behind an expired one, which the walk from
 * the root cannot reach), so it counts only for a current snapshot whose
 * ancestry ends at that root. One record per (batch_id, lineage): an id
 * shared by two lines of history is written once for each. The file's
 * metadata timelake.lineages lists every lineage root of the metadata the
 * ledger was written for (decimal snapshot ids, comma separated), those
 * without entries too, so that a root missing from it is known to come from
 * another tool's expiry.
 *
 * Files of builds before December 2026 have no lineage field and no
 * timelake.lineages: their entries are untagged (null) and count for every
 * line, as they always did. Those builds read this format too: they ignore
 * the field and see every id, so they never commit a batch twice. */
#ifndef TL_TABLE_BATCH_LEDGER_FILE_H
#define TL_TABLE_BATCH_LEDGER_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"

typedef struct tl_ledger_entry {
    char *batch_id;
    int64_t committed_ms; /* the committing snapshot's timestamp */
    bool tagged;          /* false: counts for every line (older builds) */
    int64_t lineage;      /* the lineage root, when tagged */
} tl_ledger_entry;

typedef struct tl_ledger {
    char *url;
    tl_ledger_entry *entries; /* sorted by batch_id, tagged, lineage; unique */
    size_t n;
    bool lined;        /* has timelake.lineages (else every entry is untagged) */
    int64_t *lineages; /* its roots, sorted */
    size_t n_lineages;
} tl_ledger;

void tl_ledger_entries_free(tl_ledger_entry *e, size_t n);
void tl_ledger_free(tl_ledger *l);

/* Sorts and keeps one entry per (batch_id, lineage), the newest; returns the
 * new count. */
size_t tl_ledger_sort_unique(tl_ledger_entry *e, size_t n);

/* Sorts lineage ids and drops repeats; returns the new count. */
size_t tl_ledger_sort_lineages(int64_t *ids, size_t n);

/* The entries of batch_id: *first is the first (NULL when none), *count how many. */
void tl_ledger_find(const tl_ledger *l, const char *batch_id, const tl_ledger_entry **first,
                    size_t *count);

bool tl_ledger_has_lineage(const tl_ledger *l, int64_t root);

/* Decodes a ledger file (url is left NULL). */
tl_status tl_ledger_decode(const uint8_t *data, size_t len, tl_ledger *out, tl_error *err);

/* Encodes l (entries sorted and unique, lined) into out. */
tl_status tl_ledger_encode(const tl_ledger *l, tl_buf *out, tl_error *err);

#endif
