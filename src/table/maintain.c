/* tl_table_maintain and inline maintenance after appends: retention, then
 * compaction, then snapshot expiry, each step its own commit. */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "table/lvi.h"
#include "table/maintain.h"

static tl_status run(tl_table *t, const tl_maintain_options *o, bool inline_mode,
                     const tl_maintain_step *between, tl_maintain_report *r, tl_error *err)
{
    tl_maintain_settings s;
    TL_TRY(tl_maintain_settings_load(t, &s, err));
    if (o->retention) TL_TRY(tl_maintain_retention(t, &s, r, err));
    if (o->compact)
        TL_TRY(
            tl_maintain_compact(t, &s, inline_mode ? TL_COMPACT_INLINE : TL_COMPACT_FULL, r, err));
    if (between) TL_TRY(between->run(t, between->ctx, r, err));
    if (o->expire) TL_TRY(tl_maintain_expire(t, &s, !inline_mode, r, err));
    return TL_OK;
}

/* A current snapshot whose index is missing or unreadable gets one rebuilt
 * from its data, in a commit of its own that changes no file. */
static tl_status repair_index(tl_table *t, tl_maintain_report *r, tl_error *err)
{
    char warning[TL_ERROR_MESSAGE_MAX] = "";
    tl_rows index;
    bool found = false;
    if (!tl_lvi_kept(t)) return TL_OK;
    TL_TRY(tl_lvi_parent(t, &index, &found, warning, err));
    if (found) tl_rows_free(&index);
    if (!warning[0]) return TL_OK;
    tl_rewrite_request req = {
        .operation = "replace", .index = tl_lvi_repaired, .index_ctx = warning};
    TL_TRY(tl_commit_rewrite(t, &req, NULL, err));
    snprintf(r->warning, sizeof r->warning, "%s", warning);
    return TL_OK;
}

static tl_status check_writable(tl_table *t, tl_error *err)
{
    char what[sizeof t->name.full + 16];
    snprintf(what, sizeof what, "maintain %s", t->name.full);
    return tl_store_check_writable(t->lake->store, what, err);
}

/* tl_maintain_options.inline_mode: the pass tl_maintain_after_append runs,
 * from the handle's version (a maintainer thread keeps its handle current
 * with tl_table_follow: a reload would list and parse the metadata again
 * each pass), with no repair and no wait for the deletions it queued. */
static tl_status run_inline(tl_table *t, const tl_maintain_options *o,
                            const tl_maintain_step *before_expiry, tl_maintain_report *r,
                            tl_error *err)
{
    if (!tl_maintain_inline_wanted(t, -1)) return TL_OK; /* auto-maintain off */
    TL_TRY(check_writable(t, err));
    return run(t, o, true, before_expiry, r, err);
}

static tl_status run_full(tl_table *t, const tl_maintain_options *o,
                          const tl_maintain_step *before_expiry, tl_maintain_report *r,
                          tl_error *err)
{
    TL_TRY(check_writable(t, err));
    /* Start from the latest version: maintenance rewrites what is there now. */
    tl_status st = tl_table_reload(t, 0, err);
    if (st == TL_OK) st = repair_index(t, r, err);
    if (st == TL_OK) st = run(t, o, false, before_expiry, r, err);
    tl_store_settle(t->lake->store); /* what it deleted is gone when it returns */
    return st;
}

tl_status tl_maintain_run(tl_table *t, const tl_maintain_options *o,
                          const tl_maintain_step *before_expiry, tl_maintain_report *out,
                          tl_error *err)
{
    double t0 = tl_monotonic_ms();
    tl_maintain_report r = {0};
    tl_status st = o->inline_mode ? run_inline(t, o, before_expiry, &r, err)
                                  : run_full(t, o, before_expiry, &r, err);
    r.seconds = (tl_monotonic_ms() - t0) / 1000.0;
    if (out) *out = r;
    return st;
}

bool tl_maintain_inline_wanted(const tl_table *t, int maintain)
{
    return maintain > 0 || (maintain < 0 && t->contract.auto_maintain);
}

void tl_maintain_after_append(tl_table *t, int maintain, const tl_maintain_fold *fold,
                              tl_append_result *out)
{
    if (!tl_maintain_inline_wanted(t, maintain)) return;
    double t0 = tl_monotonic_ms();
    bool folded = fold && fold->done;
    tl_maintain_options all = {.compact = !folded, .retention = 1, .expire = 1};
    tl_maintain_report r = {0};
    tl_error err = {0};
    tl_status st = TL_OK;
    if (folded) {
        tl_maintain_report_add(&r, &fold->report);
        st = fold->st;
        if (st != TL_OK) err = fold->err; /* the rest waits, as after a failed compaction */
    }
    if (st == TL_OK) st = run(t, &all, true, NULL, &r, &err);
    r.seconds = (tl_monotonic_ms() - t0) / 1000.0 + (folded ? fold->seconds : 0);
    bool worked =
        r.partitions_compacted || r.partitions_dropped || r.snapshots_expired || r.objects_deleted;
    if (worked) {
        out->maintained = 1;
        out->maintenance = r;
    }
    if (st != TL_OK)
        snprintf(out->maintenance_error, sizeof out->maintenance_error, "%s",
                 err.message[0] ? err.message : tl_status_name(st));
}
