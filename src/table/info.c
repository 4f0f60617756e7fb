#include <stdlib.h>
#include <string.h>

#include "iceberg/manifest_list.h"
#include "table/append.h"
#include "table/live_files.h"

static char *dup_or_null(const char *s, bool *failed)
{
    if (s == NULL) return NULL;
    char *d = strdup(s);
    if (d == NULL) *failed = true;
    return d;
}

static int64_t summary_int(const tl_ice_snapshot *s, const char *key)
{
    const char *v = s ? tl_ice_snapshot_summary(s, key) : NULL;
    return v ? strtoll(v, NULL, 10) : 0;
}

static tl_status count_manifests(tl_table *t, const tl_ice_snapshot *s, int64_t *out, tl_error *err)
{
    *out = 0;
    if (s == NULL || s->manifest_list == NULL) return TL_OK;
    tl_ice_manifest_file *files = NULL;
    size_t n = 0;
    tl_status st = tl_table_read_manifest_list(t, s->manifest_list, &files, &n, err);
    if (st != TL_OK) st = tl_table_damaged(t, st, err);
    tl_ice_manifest_files_free(files, n);
    *out = (int64_t)n;
    return st;
}

tl_status tl_table_info_get(tl_table *t, tl_table_info *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    const tl_contract *c = &t->contract;
    const tl_ice_snapshot *s = tl_ice_metadata_current_snapshot(t->md);
    bool failed = false;
    out->name = dup_or_null(t->name.full, &failed);
    out->location = dup_or_null(t->location, &failed);
    out->version = t->version;
    out->time_column = dup_or_null(c->time_column, &failed);
    out->chunk = dup_or_null(c->chunk, &failed);
    out->dedup = c->dedup;
    out->ingest_time_column = dup_or_null(c->ingest_column, &failed);
    out->last_value_index =
        dup_or_null(s ? tl_ice_snapshot_summary(s, TL_SUMMARY_LVI) : NULL, &failed);
    out->series_key = calloc(c->series_key.len + 1, sizeof *out->series_key);
    failed |= out->series_key == NULL;
    for (size_t i = 0; !failed && i < c->series_key.len; i++)
        out->series_key[i] = dup_or_null(c->series_key.items[i], &failed);
    size_t first = c->time_index >= 0 && c->n_partition > 0; /* the time partition */
    out->partition_by = calloc(c->n_partition + 1, sizeof *out->partition_by);
    failed |= out->partition_by == NULL;
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(t->md);
    for (size_t i = first; !failed && i < c->n_partition; i++)
        failed |=
            (out->partition_by[i - first] = tl_part_by_format(&c->partition[i], schema)) == NULL;
    out->snapshot_id = s ? s->snapshot_id : 0;
    out->last_commit_ms = s ? s->timestamp_ms : 0;
    out->rows = summary_int(s, "total-records");
    out->files = summary_int(s, "total-data-files");
    out->bytes = summary_int(s, "total-files-size");
    out->snapshots = (int64_t)t->md->n_snapshots;
    tl_status st = failed ? tl_error_nomem(err) : count_manifests(t, s, &out->manifests, err);
    if (st != TL_OK) tl_table_info_clear(out);
    return st;
}

void tl_table_info_clear(tl_table_info *info)
{
    free(info->name);
    free(info->location);
    free(info->time_column);
    free(info->chunk);
    free(info->ingest_time_column);
    free(info->last_value_index);
    tl_strings_free(info->series_key);
    tl_strings_free(info->partition_by);
    memset(info, 0, sizeof *info);
}
