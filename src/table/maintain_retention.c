/* Retention: whole time partitions that ended before now - retention are
 * dropped in one "delete" commit (their files stay readable by older
 * snapshots until those expire). */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "table/commit_point.h"
#include "table/lvi.h"
#include "table/maintain.h"

#define RETENTION_ATTEMPTS 5

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool expired_file(const tl_table *t, const tl_live_file *f, int64_t cutoff, int64_t *value)
{
    if (f->file.n_partition == 0) return false;
    const tl_ice_value *v = &f->file.partition[0];
    if (v->kind != TL_ICE_VALUE_INT && v->kind != TL_ICE_VALUE_LONG) return false;
    *value = v->i;
    return tl_partition_end_micros(t, v->i) <= cutoff;
}

/* An index row stays when its time partition outlives the cutoff. Rows go
 * whole partitions at a time, oldest first: a series whose newest row is in
 * a dropped partition has no row left, and the index must forget it. */
static bool outlives(const tl_table *t, int64_t time_us, void *ctx)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    tl_ice_transform tr;
    if (spec == NULL || spec->n_fields == 0 ||
        tl_ice_transform_parse(spec->fields[0].transform, &tr, NULL) != TL_OK)
        return true;
    return tl_partition_end_micros(t, tl_ice_transform_apply(tr, time_us)) > *(int64_t *)ctx;
}

static tl_status index_without_dropped(const tl_table *t, void *ctx, int64_t snapshot_id,
                                       char **key, tl_buf *file, tl_error *err)
{
    return tl_lvi_filter(t, outlives, ctx, snapshot_id, key, file, err);
}

/* One pass: plan from the current snapshot, commit. */
static tl_status drop_once(tl_table *t, int64_t cutoff, tl_maintain_report *r, tl_error *err)
{
    tl_live_files lf;
    TL_TRY(tl_maintain_live_files(t, &lf, err));
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    int32_t spec_id = spec ? spec->spec_id : 0;
    const char **removed = malloc((lf.n + 1) * sizeof *removed);
    int64_t *values = malloc((lf.n + 1) * sizeof *values);
    tl_status st = removed && values ? TL_OK : tl_error_nomem(err);
    size_t n = 0;
    for (size_t i = 0; st == TL_OK && i < lf.n; i++)
        if (lf.files[i].partition_spec_id == spec_id &&
            expired_file(t, &lf.files[i], cutoff, &values[n]))
            removed[n++] = lf.files[i].file.file_path;
    if (st == TL_OK && n > 0) {
        tl_rewrite_request req = {.operation = "delete",
                                  .removed = removed,
                                  .n_removed = n,
                                  .index = index_without_dropped,
                                  .index_ctx = &cutoff};
        st = tl_commit_rewrite(t, &req, NULL, err);
    }
    if (st == TL_OK && n > 0) {
        qsort(values, n, sizeof *values, cmp_i64);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || values[i] != values[i - 1]) r->partitions_dropped++;
    }
    free(removed);
    free(values);
    tl_live_files_free(&lf);
    return st;
}

tl_status tl_maintain_retention_due(const tl_table *t, const tl_maintain_settings *s, bool *due,
                                    tl_error *err)
{
    *due = false;
    if (s->retention_us < 0 || t->contract.time_index < 0) return TL_OK;
    int64_t cutoff = tl_now_micros() - s->retention_us, value;
    tl_live_files lf;
    TL_TRY(tl_maintain_live_files(t, &lf, err));
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    int32_t spec_id = spec ? spec->spec_id : 0;
    for (size_t i = 0; !*due && i < lf.n; i++)
        *due = lf.files[i].partition_spec_id == spec_id &&
               expired_file(t, &lf.files[i], cutoff, &value);
    tl_live_files_free(&lf);
    return TL_OK;
}

tl_status tl_maintain_retention(tl_table *t, const tl_maintain_settings *s, tl_maintain_report *r,
                                tl_error *err)
{
    if (s->retention_us < 0 || t->contract.time_index < 0) return TL_OK;
    int64_t cutoff = tl_now_micros() - s->retention_us;
    tl_status st = TL_OK;
    /* A concurrent rewrite may replace a file we meant to drop: plan again. */
    for (int i = 0; i < RETENTION_ATTEMPTS; i++) {
        tl_error local;
        st = drop_once(t, cutoff, r, &local);
        if (st == TL_OK) return TL_OK;
        if (st != TL_ERR_CONFLICT || i + 1 == RETENTION_ATTEMPTS) {
            if (err) *err = local;
            return st;
        }
        TL_TRY(tl_table_reload_same(t, err));
    }
    return st;
}
