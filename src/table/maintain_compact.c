/* Choosing what compaction rewrites, partition by partition:
 *   full    every partition with more files than its size needs becomes
 *           sorted, duplicate-free files of the target size;
 *   inline  size tiers (64 KiB x 4^n) of small files (under 3/4 of the target)
 *           are merged once a tier holds compact-min-files files, which keeps
 *           write amplification logarithmic under micro-batches; and a cold
 *           partition (the table holds data newer than its end by
 *           compact-cold-after) with two small files or more is rewritten whole.
 * All rewrites of one run are one "replace" commit. */
#include <stdlib.h>
#include <string.h>

#include "iceberg/partition_value.h"
#include "table/maintain.h"

#define TIER_BASE_BYTES (INT64_C(64) * 1024)
#define MAX_TIERS 24

typedef struct plan {
    const tl_live_file **files; /* selected for rewriting, grouped by partition */
    size_t n;
    size_t *group_end; /* end index into files of each group */
    size_t n_groups;
} plan;

/* The time partition of a file of a time-series table (its first partition field). */
static bool time_partition(const tl_table *t, const tl_live_file *f, int64_t *value)
{
    if (t->contract.time_index < 0 || f->file.n_partition == 0) return false;
    const tl_ice_value *v = &f->file.partition[0];
    *value = v->i;
    return v->kind == TL_ICE_VALUE_INT || v->kind == TL_ICE_VALUE_LONG;
}

static int by_partition(const void *a, const void *b)
{
    const tl_live_file *x = *(const tl_live_file *const *)a, *y = *(const tl_live_file *const *)b;
    return tl_ice_values_compare(x->file.partition, x->file.n_partition, y->file.partition,
                                 y->file.n_partition);
}

static int tier_of(int64_t size)
{
    int tier = 0;
    for (int64_t limit = TIER_BASE_BYTES; size >= limit && tier < MAX_TIERS - 1; limit *= 4) tier++;
    return tier;
}

/* The newest time in the table: the largest upper bound of the time column. */
static int64_t newest_time(const tl_table *t, const tl_live_files *lf)
{
    if (t->contract.time_index < 0) return INT64_MIN;
    int32_t id = tl_ice_metadata_current_schema(t->md)->fields[t->contract.time_index].id;
    int64_t newest = INT64_MIN;
    for (size_t i = 0; i < lf->n; i++) {
        const tl_ice_data_file *f = &lf->files[i].file;
        for (size_t b = 0; b < f->n_upper_bounds; b++) {
            if (f->upper_bounds[b].field_id != id || f->upper_bounds[b].len != 8) continue;
            uint64_t v = 0;
            for (int k = 7; k >= 0; k--) v = v << 8 | f->upper_bounds[b].data[k];
            if ((int64_t)v > newest) newest = (int64_t)v;
        }
    }
    return newest;
}

static tl_status select_files(plan *p, const tl_live_file **group, size_t n, const bool *take,
                              tl_error *err)
{
    size_t added = 0;
    for (size_t i = 0; i < n; i++)
        if (take == NULL || take[i]) p->files[p->n + added++] = group[i];
    if (added < 2) return TL_OK; /* one file alone is already what a rewrite would make */
    p->n += added;
    size_t *ends = realloc(p->group_end, (p->n_groups + 1) * sizeof *ends);
    if (ends == NULL) return tl_error_nomem(err);
    p->group_end = ends;
    p->group_end[p->n_groups++] = p->n;
    return TL_OK;
}

static tl_status plan_group(const tl_table *t, const tl_maintain_settings *s, tl_compact_mode mode,
                            int64_t newest, const tl_live_file **group, size_t n, plan *p,
                            tl_error *err)
{
    int64_t total = 0, small_limit = s->target_file_size / 4 * 3;
    size_t small = 0, tier_count[MAX_TIERS] = {0};
    for (size_t i = 0; i < n; i++) {
        int64_t size = group[i]->file.file_size_in_bytes;
        total += size;
        if (size < small_limit) small++, tier_count[tier_of(size)]++;
    }
    if (mode == TL_COMPACT_FULL) {
        int64_t needed = (total + s->target_file_size - 1) / s->target_file_size;
        return (int64_t)n > (needed > 1 ? needed : 1) ? select_files(p, group, n, NULL, err)
                                                      : TL_OK;
    }
    int64_t value;
    if (time_partition(t, group[0], &value) && s->cold_after_us >= 0 && small >= 2 &&
        newest != INT64_MIN && tl_partition_end_micros(t, value) <= newest - s->cold_after_us)
        return select_files(p, group, n, NULL, err);
    bool take[n + 1];
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        int64_t size = group[i]->file.file_size_in_bytes;
        take[i] = size < small_limit && (int64_t)tier_count[tier_of(size)] >= s->compact_min_files;
        any = any || take[i];
    }
    return any ? select_files(p, group, n, take, err) : TL_OK;
}

static tl_status make_plan(const tl_table *t, const tl_maintain_settings *s, tl_compact_mode mode,
                           const tl_live_files *lf, plan *p, tl_error *err)
{
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(t->md);
    int32_t spec_id = spec ? spec->spec_id : 0;
    const tl_live_file **eligible = malloc((lf->n + 1) * sizeof *eligible);
    p->files = malloc((lf->n + 1) * sizeof *p->files);
    if (eligible == NULL || p->files == NULL) {
        free(eligible);
        return tl_error_nomem(err);
    }
    size_t n = 0;
    for (size_t i = 0; i < lf->n; i++)
        if (lf->files[i].partition_spec_id == spec_id &&
            lf->files[i].file.n_partition == t->contract.n_partition)
            eligible[n++] = &lf->files[i];
    qsort(eligible, n, sizeof *eligible, by_partition);
    int64_t newest = newest_time(t, lf);
    tl_status st = TL_OK;
    for (size_t a = 0, b; st == TL_OK && a < n; a = b) {
        for (b = a + 1; b < n && by_partition(&eligible[a], &eligible[b]) == 0; b++) {
        }
        st = plan_group(t, s, mode, newest, eligible + a, b - a, p, err);
    }
    free(eligible);
    return st;
}

tl_status tl_maintain_compact_plan(const tl_table *t, const tl_maintain_settings *s,
                                   tl_compact_mode mode, int64_t *files, int64_t *partitions,
                                   tl_error *err)
{
    tl_live_files lf;
    plan p = {0};
    TL_TRY(tl_maintain_live_files(t, &lf, err));
    tl_status st = make_plan(t, s, mode, &lf, &p, err);
    *files = (int64_t)p.n;
    *partitions = (int64_t)p.n_groups;
    free(p.files);
    free(p.group_end);
    tl_live_files_free(&lf);
    return st;
}

static int64_t max_sequence(const tl_live_file *const *files, size_t n)
{
    int64_t seq = 0;
    for (size_t i = 0; i < n; i++)
        if (files[i]->sequence_number > seq) seq = files[i]->sequence_number;
    return seq;
}

/* Rewrites one group of files; its output joins c's. */
static tl_status rewrite_group(const tl_table *t, const tl_maintain_settings *s,
                               const tl_live_file *const *files, size_t n, tl_compaction *c,
                               tl_error *err)
{
    tl_rewrite_output o;
    TL_TRY(tl_rewrite_files(t, files, n, s->target_file_size, &o, err));
    size_t total = c->out.n_added + o.n_added;
    tl_ice_data_file *a = realloc(c->out.added, (total + 1) * sizeof *a);
    if (a) c->out.added = a;
    char **k = a ? realloc(c->out.keys, (total + 1) * sizeof *k) : NULL;
    if (k) c->out.keys = k;
    int64_t *q = k ? realloc(c->seqs, (total + 1) * sizeof *q) : NULL;
    if (q) c->seqs = q;
    if (q == NULL) {
        tl_rewrite_output_free(t, &o, true);
        return tl_error_nomem(err);
    }
    /* The rewritten rows keep the place of their newest input in the dedup order. */
    int64_t seq = max_sequence(files, n);
    for (size_t i = 0; i < o.n_added; i++) {
        c->out.added[c->out.n_added] = o.added[i];
        c->out.keys[c->out.n_added] = o.keys[i];
        c->seqs[c->out.n_added++] = seq;
    }
    free(o.added);
    free(o.keys);
    tl_status st = tl_head_objects_add_all(&c->out.footers, &o.footers, err);
    tl_head_objects_clear(&o.footers);
    TL_TRY(st);
    tl_maintain_report *r = &c->report;
    r->partitions_compacted++;
    r->files_rewritten += (int64_t)n;
    r->files_written += (int64_t)o.n_added;
    r->rows_rewritten += o.rows_in;
    r->duplicates_removed += o.rows_in - o.rows_out;
    return TL_OK;
}

tl_status tl_compaction_prepare(const tl_table *t, const tl_maintain_settings *s,
                                tl_compact_mode mode, tl_compaction *c, tl_error *err)
{
    memset(c, 0, sizeof *c);
    plan p = {0};
    TL_TRY(tl_maintain_live_files(t, &c->lf, err));
    tl_status st = make_plan(t, s, mode, &c->lf, &p, err);
    for (size_t g = 0, start = 0; st == TL_OK && g < p.n_groups; start = p.group_end[g++])
        st = rewrite_group(t, s, p.files + start, p.group_end[g] - start, c, err);
    c->removed = malloc((p.n + 1) * sizeof *c->removed);
    if (st == TL_OK && c->removed == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < p.n; i++) c->removed[i] = p.files[i]->file.file_path;
    c->n_removed = p.n;
    c->n_groups = p.n_groups;
    free(p.files);
    free(p.group_end);
    if (st != TL_OK) tl_compaction_free(t, c, true);
    return st;
}

tl_rewrite_request tl_compaction_request(const tl_compaction *c)
{
    return (tl_rewrite_request){
        .operation = "replace",
        .removed = c->removed,
        .n_removed = c->n_removed,
        .added = c->out.added,
        .n_added = c->out.n_added,
        .added_sequence_numbers = c->seqs,
        .footers = &c->out.footers,
    };
}

void tl_compaction_free(const tl_table *t, tl_compaction *c, bool remove)
{
    tl_rewrite_output_free(t, &c->out, remove);
    free(c->seqs);
    free(c->removed);
    tl_live_files_free(&c->lf);
    memset(c, 0, sizeof *c);
}

void tl_maintain_report_add(tl_maintain_report *r, const tl_maintain_report *delta)
{
    r->partitions_compacted += delta->partitions_compacted;
    r->files_rewritten += delta->files_rewritten;
    r->files_written += delta->files_written;
    r->rows_rewritten += delta->rows_rewritten;
    r->duplicates_removed += delta->duplicates_removed;
    r->snapshots_expired += delta->snapshots_expired;
    r->objects_deleted += delta->objects_deleted;
}

tl_status tl_maintain_compact(tl_table *t, const tl_maintain_settings *s, tl_compact_mode mode,
                              tl_maintain_report *r, tl_error *err)
{
    tl_compaction c;
    bool may_have_landed = false;
    TL_TRY(tl_compaction_prepare(t, s, mode, &c, err));
    tl_status st = TL_OK;
    if (c.n_groups > 0) {
        tl_rewrite_request req = tl_compaction_request(&c);
        req.may_have_landed = &may_have_landed;
        st = tl_commit_rewrite(t, &req, NULL, err);
    }
    if (st == TL_OK) tl_maintain_report_add(r, &c.report);
    tl_compaction_free(t, &c, st != TL_OK && !may_have_landed);
    return st;
}
