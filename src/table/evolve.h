/* A replace that changes the table's columns and partitioning
 * (tl_table_replace_schema): the evolution applied to a version of the
 * table's metadata, and the handle's metadata staged with it while the
 * replace writes its files and commits. */
#ifndef TL_TABLE_EVOLVE_H
#define TL_TABLE_EVOLVE_H

#include <stdbool.h>

#include "table/table_internal.h"

typedef struct tl_evolution {
    const struct ArrowSchema *schema; /* the new columns (borrowed struct schema) */
    const char *const *partition_by;  /* the new partition_by entries (borrowed) */
    size_t partition_by_len;
} tl_evolution;

/* A copy of md (*out, owned by the caller) whose current schema has ev's
 * columns and whose default spec ev's partitions. A column whose name and
 * type (or a widening of it: int to long, float to double) the current
 * schema has keeps its field id; the others get new ids after
 * last-column-id. Nested columns likewise at every level: struct fields by
 * name, a list's element, a map's key (same type) and value; a struct
 * continues a struct whatever its fields. A new required field inside a
 * column that continues is refused, naming its path. The same md and ev
 * always give the same ids. A
 * time-series table keeps its time column and series key (same names and
 * types), its ingest-time column and its time partition first.
 * TL_ERR_INVALID naming the problem otherwise. */
tl_status tl_evolution_apply(const tl_ice_metadata *md, const tl_evolution *ev,
                             tl_ice_metadata **out, tl_error *err);

/* What the handle held before tl_table_stage_evolution. */
typedef struct tl_table_stash {
    tl_ice_metadata *md;
    uint64_t md_token;
    tl_contract contract;
    int64_t version;
    bool staged;
} tl_table_stash;

/* Makes the handle's metadata its own version evolved by ev, at the same
 * version number: appends then lay out and encode rows for the new schema
 * and spec, and the next commit records them. *stash (NULL: the handle's
 * metadata is given up, as after a lost race) keeps what was there. On
 * failure the handle is unchanged. */
tl_status tl_table_stage_evolution(tl_table *t, const tl_evolution *ev, tl_table_stash *stash,
                                   tl_error *err);

/* After the commit: when it did not land the handle goes back to what it
 * held (or, when a lost race moved it on, to that version as stored). */
void tl_table_unstage(tl_table *t, tl_table_stash *stash, bool committed);

#endif
