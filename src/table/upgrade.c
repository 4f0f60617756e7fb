/* tl_table_upgrade: bringing a table written by an older Timelake (or by
 * another Iceberg writer) to the current format, as the reference's
 * Table.upgrade does, step by step, each a commit: the last-value index,
 * compaction into sorted files, then one metadata commit that sets the
 * format version and keeps every snapshot for a while (so that a rollback
 * to the snapshot before the upgrade undoes it), which also writes the head
 * object on object stores. Steps are named in the reference's words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "table/head_write.h"
#include "table/lvi.h"
#include "table/maintain.h"
#include "table/metadata_commit.h"

#define DEFAULT_KEEP "7d"
#define OLDEST_FORMAT "0.1.0" /* a table without timelake.format-version */

typedef struct upgrade_plan {
    const char *format_from; /* NULL: current */
    bool index;              /* build the last-value index */
    int64_t files, partitions;
    bool head;
} upgrade_plan;

/* Compares dotted versions ("0.1.0" < "0.3.0") numerically. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if (ea == a && eb == b) break; /* neither moved: not numbers */
    }
    return 0;
}

static bool needs_index(const tl_table *t)
{
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    if (!tl_lvi_kept(t) || s == NULL) return false;
    const char *rows = tl_ice_snapshot_summary(s, "total-records");
    return tl_ice_snapshot_summary(s, TL_SUMMARY_LVI) == NULL && rows && strcmp(rows, "0") != 0;
}

/* The version the head object describes, read alone (0: none, or not one
 * that decodes): for a store that cannot list, which no upgrade can write
 * to anyway, so that its dry run still tells the steps. */
static int64_t head_version(tl_table *t)
{
    char key[sizeof t->name.key + 64];
    tl_head_key(&t->name, key, sizeof key);
    tl_buf b = {0};
    tl_head h;
    int64_t v = 0;
    if (tl_store_get(t->lake->store, key, &b, NULL) == TL_OK &&
        tl_head_decode(b.data, b.len, &h, NULL) == TL_OK) {
        v = h.version;
        tl_head_clear(&h);
    }
    tl_buf_free(&b);
    return v;
}

/* Whether the store holds no head describing the handle's version. */
static tl_status needs_head(tl_table *t, bool *out, tl_error *err)
{
    *out = false;
    if (!tl_head_wanted(t, t->md)) return TL_OK;
    if (t->lake->store->read_only) {
        *out = head_version(t) != t->version;
        return TL_OK;
    }
    int64_t version = 0;
    tl_ice_metadata *md = NULL;
    tl_head_objects *objects = NULL;
    TL_TRY(tl_head_load_latest(t->lake->store, &t->name, &version, &md, &objects, NULL, err));
    *out = md == NULL || version != t->version;
    tl_ice_metadata_free(md);
    tl_head_objects_free(objects);
    return TL_OK;
}

static tl_status make_plan(tl_table *t, bool compact, upgrade_plan *p, tl_error *err)
{
    memset(p, 0, sizeof *p);
    /* Plain tables carry no format version (nor do the reference's). */
    const char *format = tl_ice_metadata_property(t->md, TL_PROP_FORMAT_VERSION);
    if (format == NULL) format = OLDEST_FORMAT;
    if (t->contract.time_column && version_cmp(format, TL_FORMAT_VERSION) < 0)
        p->format_from = format;
    p->index = needs_index(t);
    if (compact) {
        tl_maintain_settings s;
        TL_TRY(tl_maintain_settings_load(t, &s, err));
        TL_TRY(tl_maintain_compact_plan(t, &s, TL_COMPACT_FULL, &p->files, &p->partitions, err));
    }
    return needs_head(t, &p->head, err);
}

static tl_status plan_steps(const upgrade_plan *p, tl_strlist *steps, tl_error *err)
{
    char line[160];
    bool ok = true;
    if (p->format_from) {
        snprintf(line, sizeof line, "set table format %s \xe2\x86\x92 %s", p->format_from,
                 TL_FORMAT_VERSION);
        ok = tl_strlist_push(steps, line) == 0;
    }
    if (ok && p->index) ok = tl_strlist_push(steps, "build the last-value index") == 0;
    if (ok && p->files > 0) {
        snprintf(line, sizeof line, "rewrite %lld unsorted or small files in %lld partitions",
                 (long long)p->files, (long long)p->partitions);
        ok = tl_strlist_push(steps, line) == 0;
    }
    if (ok && p->head) ok = tl_strlist_push(steps, "write the head object") == 0;
    return ok ? TL_OK : tl_error_nomem(err);
}

/* ---- building the last-value index from the data files ---- */

typedef struct index_job {
    const tl_rows *rows;
    int64_t parent; /* the snapshot the rows were read from */
} index_job;

static tl_status fresh_index(const tl_table *t, void *ctx, int64_t snapshot_id, char **key,
                             tl_buf *file, tl_error *err)
{
    const index_job *j = ctx;
    if (t->md->current_snapshot_id != j->parent)
        return tl_error_set(err, TL_ERR_CONFLICT,
                            "%s: a concurrent commit changed the table while its last-value "
                            "index was built; run the upgrade again",
                            t->name.full);
    return tl_lvi_encode(t, j->rows, snapshot_id, true, key, file, NULL, err);
}

static tl_status build_index(tl_table *t, tl_error *err)
{
    tl_rows rows = {0};
    bool any = false;
    TL_TRY(tl_lvi_rebuild(t, &rows, &any, err));
    if (!any) return tl_error_set(err, TL_ERR_INTERNAL, "no data file to index");
    index_job job = {&rows, t->md->current_snapshot_id};
    tl_rewrite_request req = {.operation = "replace", .index = fresh_index, .index_ctx = &job};
    tl_status st = tl_commit_rewrite(t, &req, NULL, err);
    tl_rows_free(&rows);
    return st;
}

/* ---- the final metadata commit ---- */

typedef struct final_props {
    char until[24];
} final_props;

static tl_status set_final(const tl_table *t, tl_ice_metadata *md, void *ctx, tl_error *err)
{
    const final_props *f = ctx;
    if (t->contract.time_column)
        TL_TRY(tl_ice_metadata_set_property(md, TL_PROP_FORMAT_VERSION, TL_FORMAT_VERSION, err));
    return tl_ice_metadata_set_property(md, TL_PROP_KEEP_SNAPSHOTS_UNTIL, f->until, err);
}

static tl_status run(tl_table *t, const upgrade_plan *p, int64_t keep_us, tl_upgrade_report *out,
                     tl_error *err)
{
    if (p->index) TL_TRY(build_index(t, err));
    if (p->files > 0) {
        tl_maintain_settings s;
        tl_maintain_report r = {0};
        TL_TRY(tl_maintain_settings_load(t, &s, err));
        TL_TRY(tl_maintain_compact(t, &s, TL_COMPACT_FULL, &r, err));
    }
    int64_t until = tl_now_millis() + keep_us / 1000;
    final_props f;
    snprintf(f.until, sizeof f.until, "%lld", (long long)until);
    TL_TRY(tl_table_commit_metadata(t, set_final, &f, err));
    out->keep_snapshots_until_ms = until;
    return TL_OK;
}

tl_status tl_table_upgrade(tl_table *t, const tl_upgrade_options *options, tl_upgrade_report *out,
                           tl_error *err)
{
    tl_upgrade_options o = options ? *options : (tl_upgrade_options){.compact = 1};
    memset(out, 0, sizeof *out);
    char what[sizeof t->name.full + 16];
    snprintf(what, sizeof what, "upgrade %s", t->name.full);
    if (!o.dry_run) TL_TRY(tl_store_check_writable(t->lake->store, what, err));
    int64_t keep_us = 0;
    TL_TRY(tl_duration_parse(o.keep_snapshots ? o.keep_snapshots : DEFAULT_KEEP, &keep_us, err));
    TL_TRY(tl_table_reload(t, 0, err)); /* upgrade what is there now */
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    out->version_before = t->version;
    out->snapshot_before = s ? s->snapshot_id : 0;
    upgrade_plan p;
    tl_strlist steps = {0};
    tl_status st = make_plan(t, o.compact, &p, err);
    if (st == TL_OK) st = plan_steps(&p, &steps, err);
    if (st == TL_OK && steps.len > 0 && !o.dry_run) st = run(t, &p, keep_us, out, err);
    char **list = st == TL_OK ? calloc(steps.len + 1, sizeof *list) : NULL;
    if (st == TL_OK && list == NULL) st = tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < steps.len; i++) {
        list[i] = steps.items[i];
        steps.items[i] = NULL;
    }
    tl_strlist_free(&steps);
    if (st == TL_OK) out->steps = list;
    return st;
}

void tl_upgrade_report_clear(tl_upgrade_report *r)
{
    if (r == NULL) return;
    tl_strings_free(r->steps);
    memset(r, 0, sizeof *r);
}
