/* Time travel (time_travel.h): which snapshot a version or a time names,
 * and a read-only handle of the table as of it. */
#include "table/time_travel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table/live_files.h"

/* "2026-01-01 10:00:00.123 UTC" */
static void format_ms(int64_t ms, char *buf, size_t size)
{
    time_t s = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03d UTC", day, (int)(ms - (int64_t)s * 1000));
}

static const tl_ice_snapshot *earliest(const tl_ice_metadata *md)
{
    const tl_ice_snapshot *first = NULL;
    for (size_t i = 0; i < md->n_snapshots; i++)
        if (first == NULL || md->snapshots[i].timestamp_ms < first->timestamp_ms)
            first = &md->snapshots[i];
    return first;
}

/* Whether a kept snapshot names `id` as its parent while md has no such
 * snapshot: it was expired. */
static bool known_expired(const tl_ice_metadata *md, int64_t id)
{
    if (tl_ice_metadata_snapshot(md, id)) return false;
    for (size_t i = 0; i < md->n_snapshots; i++)
        if (md->snapshots[i].has_parent && md->snapshots[i].parent_snapshot_id == id) return true;
    return false;
}

static tl_status no_snapshots(const tl_table *t, tl_error *err)
{
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "%s has no snapshot yet: nothing was ever committed to it, so there is "
                        "no earlier state to read",
                        t->name.full);
}

tl_status tl_table_snapshot_at(const tl_table *t, int64_t us, int64_t *out, tl_error *err)
{
    const tl_ice_metadata *md = t->md;
    const tl_ice_snapshot *first = earliest(md);
    if (first == NULL) return no_snapshots(t, err);
    /* The log, newest last; entries of expired snapshots are gone from it. */
    for (size_t i = md->n_snapshot_log; i-- > 0;) {
        const tl_ice_snapshot_log_entry *e = &md->snapshot_log[i];
        if (e->timestamp_ms * 1000 <= us && tl_ice_metadata_snapshot(md, e->snapshot_id)) {
            *out = e->snapshot_id;
            return TL_OK;
        }
    }
    const tl_ice_snapshot *best = NULL;
    for (size_t i = 0; md->n_snapshot_log == 0 && i < md->n_snapshots; i++) {
        const tl_ice_snapshot *s = &md->snapshots[i];
        if (s->timestamp_ms * 1000 <= us && (best == NULL || s->timestamp_ms > best->timestamp_ms))
            best = s;
    }
    if (best) {
        *out = best->snapshot_id;
        return TL_OK;
    }
    char when[64], asked[64];
    format_ms(first->timestamp_ms, when, sizeof when);
    format_ms(us >= 0 ? us / 1000 : (us - 999) / 1000, asked, sizeof asked);
    if (first->has_parent && known_expired(md, first->parent_snapshot_id))
        return tl_error_set(err, TL_ERR_NOT_FOUND,
                            "%s as of %s: the snapshots of that time were expired; the earliest "
                            "kept is snapshot %" PRId64 " of %s",
                            t->name.full, asked, first->snapshot_id, when);
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "%s as of %s: that is before its first snapshot (%" PRId64
                        ", of %s); give a time at or after it",
                        t->name.full, asked, first->snapshot_id, when);
}

/* A snapshot id in decimal, else false. */
static bool parse_id(const char *text, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno == ERANGE) return false;
    *out = v;
    return true;
}

tl_status tl_table_snapshot_named(const tl_table *t, const char *version, int64_t *out,
                                  tl_error *err)
{
    const tl_ice_metadata *md = t->md;
    int64_t id;
    if (!parse_id(version, &id)) {
        const tl_ice_ref *ref = tl_ice_metadata_ref(md, version);
        if (ref && tl_ice_metadata_snapshot(md, ref->snapshot_id)) {
            *out = ref->snapshot_id;
            return TL_OK;
        }
        return tl_error_set(err, TL_ERR_NOT_FOUND,
                            "%s has no snapshot \"%s\": give a snapshot id (an integer) or the "
                            "name of one of its tags or branches",
                            t->name.full, version);
    }
    if (tl_ice_metadata_snapshot(md, id)) {
        *out = id;
        return TL_OK;
    }
    const tl_ice_snapshot *first = earliest(md), *now = tl_ice_metadata_current_snapshot(md);
    if (first == NULL) return no_snapshots(t, err);
    char when[64];
    format_ms(first->timestamp_ms, when, sizeof when);
    if (known_expired(md, id))
        return tl_error_set(err, TL_ERR_NOT_FOUND,
                            "snapshot %" PRId64 " of %s was expired (snapshot expiry removed it "
                            "and its files); the earliest kept is snapshot %" PRId64 " of %s",
                            id, t->name.full, first->snapshot_id, when);
    return tl_error_set(err, TL_ERR_NOT_FOUND,
                        "%s has no snapshot %" PRId64 " (unknown, or expired long ago): it keeps "
                        "%zu snapshots, the earliest %" PRId64 " of %s, the current %" PRId64,
                        t->name.full, id, md->n_snapshots, first->snapshot_id, when,
                        now ? now->snapshot_id : first->snapshot_id);
}

/* Whether every source column of `spec` is in `schema`. */
static bool spec_fits(const tl_ice_partition_spec *spec, const tl_ice_schema *schema)
{
    for (size_t i = 0; i < spec->n_fields; i++) {
        bool found = false;
        for (size_t j = 0; j < schema->n_fields && !found; j++)
            found = schema->fields[j].id == spec->fields[i].source_id;
        if (!found) return false;
    }
    return true;
}

/* The spec the snapshot's data files were written with, when its manifests
 * agree on one; else the default spec if it fits the schema, else the
 * newest spec that does. Partition pruning reads file partitions by it. */
static tl_status choose_spec(const tl_table *t, tl_ice_metadata *md, const tl_ice_snapshot *s,
                             tl_error *err)
{
    tl_ice_manifest_file *mf = NULL;
    size_t n = 0;
    if (s->manifest_list) TL_TRY(tl_table_read_manifest_list(t, s->manifest_list, &mf, &n, err));
    bool one = n > 0;
    for (size_t i = 1; i < n; i++) one &= mf[i].partition_spec_id == mf[0].partition_spec_id;
    int32_t spec = one ? mf[0].partition_spec_id : md->default_spec_id;
    tl_ice_manifest_files_free(mf, n);
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(md);
    const tl_ice_partition_spec *p = tl_ice_metadata_spec(md, spec);
    for (size_t i = md->n_specs; (p == NULL || !spec_fits(p, schema)) && i-- > 0;)
        p = &md->specs[i];
    if (p) md->default_spec_id = p->spec_id;
    return TL_OK;
}

tl_status tl_table_pin(const tl_table *t, int64_t snapshot_id, tl_table **out, tl_error *err)
{
    const tl_ice_snapshot *s = tl_ice_metadata_snapshot(t->md, snapshot_id);
    if (s == NULL) { /* not one of t's: the error of an unknown id */
        char id[32];
        int64_t none;
        snprintf(id, sizeof id, "%" PRId64, snapshot_id);
        return tl_table_snapshot_named(t, id, &none, err);
    }
    tl_ice_metadata *md = NULL;
    TL_TRY(tl_ice_metadata_copy(t->md, &md, err));
    md->current_snapshot_id = snapshot_id;
    if (s->has_schema_id && tl_ice_metadata_schema(md, s->schema_id))
        md->current_schema_id = s->schema_id;
    tl_status st = choose_spec(t, md, s, err);
    tl_table *p = st == TL_OK ? calloc(1, sizeof *p) : NULL;
    if (st == TL_OK && p == NULL) st = tl_error_nomem(err);
    if (st != TL_OK) {
        tl_ice_metadata_free(md);
        return st;
    }
    p->lake = t->lake;
    p->name = t->name;
    p->pinned_snapshot = snapshot_id;
    if ((st = tl_table_adopt(p, md, t->version, err)) != TL_OK) {
        free(p);
        return tl_error_prefix(err, "%s as of snapshot %" PRId64, t->name.full, snapshot_id);
    }
    *out = p;
    return TL_OK;
}
