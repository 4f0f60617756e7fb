/* tl_table_rollback: an earlier snapshot made current again, in a commit of
 * new metadata only (as the reference's Table.rollback). */
#include <stdio.h>

#include "core/clock.h"
#include "table/metadata_commit.h"

static tl_status make_current(const tl_table *t, tl_ice_metadata *md, void *ctx, tl_error *err)
{
    int64_t id = *(const int64_t *)ctx;
    if (tl_ice_metadata_snapshot(md, id) == NULL)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "%s: snapshot %lld", t->name.full,
                            (long long)id);
    return tl_ice_metadata_set_current_snapshot(md, id, tl_now_millis(), err);
}

tl_status tl_table_rollback(tl_table *t, int64_t snapshot_id, tl_error *err)
{
    char what[sizeof t->name.full + 16];
    snprintf(what, sizeof what, "roll back %s", t->name.full);
    TL_TRY(tl_store_check_writable(t->lake->store, what, err));
    /* From the latest version: the snapshot may be newer than the handle. */
    TL_TRY(tl_table_reload(t, 0, err));
    /* The head of the new version lists the footers of that snapshot's files. */
    t->no_large_files = false;
    return tl_table_commit_metadata(t, make_current, &snapshot_id, err);
}
