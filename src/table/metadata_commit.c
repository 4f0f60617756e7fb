#include "table/metadata_commit.h"

#include "core/clock.h"
#include "core/random.h"
#include "table/commit_point.h"
#include "table/head_write.h"

#define MAX_ATTEMPTS 40
#define BACKOFF_CAP_MS 200

/* One attempt: TL_OK (committed), TL_ERR_EXISTS (lost the race) or an error. */
static tl_status attempt(tl_table *t, tl_metadata_edit_fn edit, void *ctx, tl_error *err)
{
    tl_ice_metadata *md = NULL;
    tl_buf json = {0}, list = {0};
    tl_status st = tl_ice_metadata_copy(t->md, &md, err);
    if (st == TL_OK) st = edit(t, md, ctx, err);
    if (st == TL_OK && t->metadata_url) /* as every commit: the replaced version is logged */
        st = tl_ice_metadata_log_previous(md, t->metadata_url, t->md->last_updated_ms, err);
    if (st == TL_OK) {
        int64_t now = tl_now_millis();
        md->last_updated_ms = now > md->last_updated_ms ? now : md->last_updated_ms + 1;
        /* The new metadata must make a table this library can load. */
        tl_contract contract;
        st = tl_contract_load(md, &contract, err);
        if (st == TL_OK) tl_contract_free(&contract);
    }
    if (st == TL_OK) st = tl_ice_metadata_serialize(md, &json, err);
    if (st == TL_OK) {
        tl_head_job *head = tl_head_job_start_same_snapshot(t, md, &json, &list);
        st = tl_table_land_next(t, md, &json, head, err);
        md = NULL;
    }
    tl_ice_metadata_free(md);
    tl_buf_free(&json);
    tl_buf_free(&list);
    return st;
}

tl_status tl_table_commit_metadata(tl_table *t, tl_metadata_edit_fn edit, void *ctx, tl_error *err)
{
    tl_status st = tl_table_check_not_dropped(t, err);
    for (int i = 1; st == TL_OK; i++) {
        st = attempt(t, edit, ctx, err);
        if (st != TL_ERR_EXISTS) break;
        if (i == MAX_ATTEMPTS)
            return tl_error_set(err, TL_ERR_CONFLICT,
                                "%s: gave up after %d commit attempts lost to concurrent writers",
                                t->name.full, i);
        int64_t cap = INT64_C(2) << (i < 7 ? i : 7);
        tl_sleep_ms((int64_t)(tl_random_u64() %
                              (uint64_t)((cap < BACKOFF_CAP_MS ? cap : BACKOFF_CAP_MS) + 1)));
        st = tl_table_reload_same(t, err);
    }
    return st;
}
