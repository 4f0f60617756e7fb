/* The batch-id set of a handle's current ancestry (see batch_index.h). */
#include "table/batch_index.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "formats/parquet/parquet_dict.h"
#include "table/batch_ids.h"

struct tl_batch_index {
    int64_t *snapshot_ids; /* those of the metadata it describes, in its order */
    size_t n, cap;
    int64_t head;   /* that metadata's current snapshot, -1 for none */
    int64_t root;   /* the oldest of head and its ancestors there, -1 for none */
    tl_pq_dict ids; /* the batch ids of head and its ancestors */
    bool valid;     /* false after a failure part way: built again */
};

void tl_batch_index_free(tl_batch_index *ix)
{
    if (ix == NULL) return;
    free(ix->snapshot_ids);
    tl_pq_dict_free(&ix->ids);
    free(ix);
}

static tl_status add_snapshot_ids(tl_batch_index *ix, const tl_ice_snapshot *s, tl_error *err)
{
    tl_strlist carried = {0};
    tl_status st = tl_snapshot_batch_ids(s, &carried, err);
    for (size_t i = 0; st == TL_OK && i < carried.len; i++) {
        uint32_t at;
        const char *id = carried.items[i];
        if (tl_pq_dict_insert(&ix->ids, (const uint8_t *)id, strlen(id), &at) != 0)
            st = tl_error_nomem(err);
    }
    tl_strlist_free(&carried);
    return st;
}

/* Remembers md's snapshot ids from index `from` on. */
static tl_status note_snapshots(tl_batch_index *ix, const tl_ice_metadata *md, size_t from,
                                tl_error *err)
{
    if (TL_GROW(ix->snapshot_ids, ix->cap, md->n_snapshots, 64) != 0) return tl_error_nomem(err);
    for (size_t i = from; i < md->n_snapshots; i++)
        ix->snapshot_ids[i] = md->snapshots[i].snapshot_id;
    ix->n = md->n_snapshots;
    ix->head = md->current_snapshot_id;
    return TL_OK;
}

static tl_status build(tl_batch_index *ix, const tl_ice_metadata *md, tl_error *err)
{
    tl_pq_dict_reset(&ix->ids);
    tl_status st = TL_OK;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
    ix->root = -1;
    /* Bounded by the snapshot count, in case of a malformed parent cycle. */
    for (size_t steps = 0; st == TL_OK && s != NULL && steps <= md->n_snapshots; steps++) {
        st = add_snapshot_ids(ix, s, err);
        ix->root = s->snapshot_id;
        s = tl_ice_metadata_parent(md, s);
    }
    if (st == TL_OK) st = note_snapshots(ix, md, 0, err);
    ix->valid = st == TL_OK;
    return st;
}

/* Whether md holds ix's snapshots first, in ix's order, and its current
 * snapshot is ix's head or stacked on it through snapshots new in md (those
 * from index ix->n on). */
static bool extends(const tl_batch_index *ix, const tl_ice_metadata *md)
{
    if (!ix->valid || md->n_snapshots < ix->n) return false;
    for (size_t i = 0; i < ix->n; i++)
        if (md->snapshots[i].snapshot_id != ix->snapshot_ids[i]) return false;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
    if (md->current_snapshot_id != -1 && s == NULL) return false;
    for (size_t steps = 0; steps <= md->n_snapshots - ix->n; steps++) {
        if (s == NULL) return ix->head == -1;
        if ((size_t)(s - md->snapshots) < ix->n) return s->snapshot_id == ix->head;
        s = tl_ice_metadata_parent(md, s);
    }
    return false;
}

/* Adds the ids of the new snapshots between md's current snapshot and ix's
 * head (the root stays, unless there was no head). */
static tl_status advance(tl_batch_index *ix, const tl_ice_metadata *md, tl_error *err)
{
    tl_status st = TL_OK;
    for (const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(md);
         st == TL_OK && s != NULL && (size_t)(s - md->snapshots) >= ix->n;
         s = tl_ice_metadata_parent(md, s)) {
        st = add_snapshot_ids(ix, s, err);
        if (ix->head == -1) ix->root = s->snapshot_id;
    }
    if (st == TL_OK) st = note_snapshots(ix, md, ix->n, err);
    ix->valid = st == TL_OK;
    return st;
}

static tl_status bring_up_to_date(tl_table *t, tl_error *err)
{
    if (t->batch_index == NULL) {
        t->batch_index = calloc(1, sizeof *t->batch_index);
        if (t->batch_index == NULL) return tl_error_nomem(err);
        return build(t->batch_index, t->md, err);
    }
    tl_batch_index *ix = t->batch_index;
    if (!extends(ix, t->md)) return build(ix, t->md, err);
    if (ix->n == t->md->n_snapshots && ix->head == t->md->current_snapshot_id) return TL_OK;
    return advance(ix, t->md, err);
}

tl_status tl_batch_index_lookup(tl_table *t, const char *const *ids, size_t n, bool *seen,
                                int64_t *root, tl_error *err)
{
    *root = -1;
    if (n == 0) return TL_OK;
    TL_TRY(bring_up_to_date(t, err));
    *root = t->batch_index->root;
    for (size_t i = 0; i < n; i++)
        if (tl_pq_dict_find(&t->batch_index->ids, (const uint8_t *)ids[i], strlen(ids[i])) >= 0)
            seen[i] = true;
    return TL_OK;
}
