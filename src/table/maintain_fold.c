/* Inline compaction folded into the append's own commit.
 *
 * On a disk a commit waits for the journal twice: the files it wrote are
 * made durable before its vN is linked, and vN before the append returns
 * (docs/decisions.md). An append whose inline compaction is due used to make
 * two versions, the append's and then the compaction's: three waits. Folded,
 * the compaction is planned and its files are written on the append's
 * metadata before that metadata is created, and the one version created
 * holds both snapshots: the append's, then the compaction's "replace" whose
 * parent is the append's. One round of fsyncs covers the files of both, and
 * one link publishes them.
 *
 * The plan is the one the compaction after the append would make (same
 * snapshot, same settings), so the files written are the same. Only the
 * first attempt of the commit folds, and only when retention has nothing to
 * drop (it runs before compaction) and the commit writes no head (the head
 * is built during the upload batch, before the fold could give its
 * snapshot). After a lost race the append retries alone, the compaction's
 * files are deleted, and inline maintenance runs after the append as before.
 * When the compaction fails (out of memory, a store error writing its
 * files), the append commits alone and the failure is its maintenance error,
 * as when a compaction after the append failed: the append stands.
 *
 * Inline expiry is folded the same way, after the compaction: when the
 * snapshots the version will hold (the append's, the compaction's) are more
 * than expiry keeps, the version is created without the expired ones, as
 * the expiry after the append would have left it, and one link publishes
 * all three steps. The objects only they named are deleted once that
 * version is durable (tl_table_remove_once_durable), never before: until
 * then the version before it, which names them, is the table. An expiry
 * that fails to stage (out of memory, writing its batch ledger) is left to
 * the expiry after the append, which reports its error. */
#include <string.h>

#include "core/clock.h"
#include "table/commit_point.h"
#include "table/head_write.h"
#include "table/maintain.h"

bool tl_maintain_fold_wanted(const tl_table *t, int maintain)
{
    return tl_maintain_inline_wanted(t, maintain) && !tl_head_wanted(t, t->md);
}

/* Plans and writes the compaction on the handle's (swapped) metadata, then
 * stages the expiry on what the version would hold. *compacted: the
 * compaction is staged. *last: inline maintenance after the append will
 * commit nothing more when this version lands (no retention, no expiry due
 * on it). */
static tl_status stage(tl_table *t, tl_maintain_fold *f, bool *compacted, bool *last, tl_error *err)
{
    tl_maintain_settings s;
    bool retention_due = false;
    *compacted = *last = false;
    TL_TRY(tl_maintain_settings_load(t, &s, err));
    TL_TRY(tl_maintain_retention_due(t, &s, &retention_due, err));
    if (retention_due) return TL_OK; /* retention first, after the append: as before */
    f->checked = true;
    TL_TRY(tl_compaction_prepare(t, &s, TL_COMPACT_INLINE, &f->compaction, err));
    if (f->compaction.n_groups > 0) {
        tl_rewrite_request req = tl_compaction_request(&f->compaction);
        TL_TRY(tl_commit_rewrite_stage(t, &req, &f->staged, err));
        *compacted = true;
        t->md = f->staged.md; /* the caller puts the handle's back */
    }
    tl_error expiry_err = {0};
    *last = tl_maintain_expire_stage(t, &s, &f->expiry, &expiry_err) == TL_OK;
    return TL_OK;
}

bool tl_maintain_fold_stage(tl_table *t, void *ctx, const tl_ice_metadata *md, tl_commit_fold *out)
{
    tl_maintain_fold *f = ctx;
    double t0 = tl_monotonic_ms();
    /* The handle looks at the append's metadata while the compaction is
     * planned and staged on it: same table, same schema and spec, one
     * snapshot more. */
    tl_ice_metadata *own = t->md;
    t->md = (tl_ice_metadata *)md;
    bool compacted = false, last = false;
    f->st = stage(t, f, &compacted, &last, &f->err);
    t->md = own;
    /* After a failed fold inline maintenance stops there (maintain.c). */
    t->sync_early = last || f->st != TL_OK;
    f->seconds = (tl_monotonic_ms() - t0) / 1000.0;
    bool expired = f->expiry.md != NULL;
    if (f->st != TL_OK || (!compacted && !expired)) {
        tl_compaction_free(t, &f->compaction, true);
        return false;
    }
    /* The list is for the head, which a folding commit does not write; an
     * expiry alone leaves the append's snapshot current. */
    out->list = compacted ? &f->staged.list : NULL;
    out->fresh = &f->staged.fresh;
    if (expired) {
        out->md = f->expiry.md;
        out->json = &f->expiry.json;
        f->expiry.md = NULL; /* the commit's now */
        tl_ice_metadata_free(f->staged.md);
    } else {
        out->md = f->staged.md;
        out->json = &f->staged.json;
    }
    f->staged.md = NULL; /* the commit's, or freed */
    return true;
}

void tl_maintain_fold_end(tl_table *t, tl_maintain_fold *f, tl_status st,
                          const tl_commit_result *cr)
{
    /* The metadata names the compaction's files when the folded version
     * landed, or may have (unknown outcome: orphan cleanup removes them if
     * it did not). */
    bool keep = cr->folded && (st == TL_OK || cr->may_have_landed);
    bool landed = st == TL_OK && !cr->duplicate && cr->attempts == 1;
    tl_rewrite_staged_free(t, &f->staged, !keep);
    if (keep) f->report = f->compaction.report;
    tl_compaction_free(t, &f->compaction, !keep);
    /* The expired snapshots are gone from the version that landed; what
     * only they named goes once it is durable. Not after an unknown
     * outcome: the version before may still be the table. */
    if (cr->folded && st == TL_OK) {
        f->report.snapshots_expired = f->expiry.n_expired;
        f->report.objects_deleted =
            (int64_t)tl_table_remove_once_durable(t, f->expiry.gone.items, f->expiry.gone.len);
    }
    tl_expiry_staged_free(t, &f->expiry, !keep);
    /* The compaction after the append would plan on the very snapshot the
     * fold planned on when the first attempt landed: done (or failed). */
    f->done = landed && (f->checked || f->st != TL_OK);
}
