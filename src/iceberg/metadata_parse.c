/* Parsing and validating table metadata JSON (format versions 1 and 2). */
#include "iceberg/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
#include "iceberg/metadata_json.h"

#define TL_ICE_WHERE "table metadata"

/* Top-level keys the model holds; everything else is kept in md->extra. */
static const char *const tl_ice_known_keys[] = {"format-version",
                                                "table-uuid",
                                                "location",
                                                "last-sequence-number",
                                                "last-updated-ms",
                                                "last-column-id",
                                                "schema",
                                                "schemas",
                                                "current-schema-id",
                                                "partition-spec",
                                                "partition-specs",
                                                "default-spec-id",
                                                "last-partition-id",
                                                "properties",
                                                "current-snapshot-id",
                                                "snapshots",
                                                "snapshot-log",
                                                "metadata-log",
                                                "sort-orders",
                                                "default-sort-order-id",
                                                "refs",
                                                "statistics",
                                                "partition-statistics",
                                                NULL};

static const char *const tl_ice_snapshot_keys[] = {"snapshot-id",     "parent-snapshot-id",
                                                   "sequence-number", "timestamp-ms",
                                                   "manifest-list",   "summary",
                                                   "schema-id",       NULL};

static bool is_known(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys[i]; i++)
        if (strcmp(keys[i], key) == 0) return true;
    return false;
}

/* The unknown members of obj as a new object (NULL *out when there are none). */
static tl_status collect_extra(const json_t *obj, const char *const *known, json_t **out,
                               tl_error *err)
{
    *out = NULL;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        if (is_known(known, key)) continue;
        if (*out == NULL && (*out = json_object()) == NULL) return tl_error_nomem(err);
        if (json_object_set(*out, key, value) != 0) return tl_error_nomem(err);
    }
    return TL_OK;
}

/* An optional array member: *out NULL and *n 0 when absent. */
static tl_status get_array(const json_t *obj, const char *key, bool required, json_t **out,
                           size_t *n, tl_error *err)
{
    TL_TRY(tl_ice_json_member(obj, key, JSON_ARRAY, required, TL_ICE_WHERE, out, err));
    *n = *out ? json_array_size(*out) : 0;
    if (required && *n == 0)
        return tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": key \"%s\" must not be empty",
                            key);
    return TL_OK;
}

static tl_status check_object(const json_t *v, const char *where, tl_error *err)
{
    if (json_is_object(v)) return TL_OK;
    return tl_error_set(err, TL_ERR_INVALID, "%s: expected an object", where);
}

/* ---- String maps ---- */

/* Reads an object of strings into an ordered list; `first` (may be NULL) is moved first. */
static tl_status parse_string_map(const json_t *obj, const char *where, const char *first,
                                  tl_kv **out, size_t *n, tl_error *err)
{
    size_t size = json_object_size(obj);
    if (size == 0) return TL_OK;
    if ((*out = calloc(size, sizeof **out)) == NULL) return tl_error_nomem(err);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        if (!json_is_string(value))
            return tl_error_set(err, TL_ERR_INVALID, "%s: the value of \"%s\" must be a string",
                                where, key);
        tl_kv *kv = &(*out)[(*n)++];
        kv->key = strdup(key);
        kv->value = strdup(json_string_value(value));
        if (kv->key == NULL || kv->value == NULL) return tl_error_nomem(err);
        if (first && strcmp(key, first) == 0 && *n > 1) {
            tl_kv moved = *kv;
            memmove(&(*out)[1], &(*out)[0], (*n - 1) * sizeof **out);
            (*out)[0] = moved;
        }
    }
    return TL_OK;
}

/* ---- Schemas ---- */

static tl_status check_unique_schemas(const tl_ice_metadata *md, tl_error *err)
{
    for (size_t i = 0; i < md->n_schemas; i++)
        for (size_t j = 0; j < i; j++)
            if (md->schemas[i].schema_id == md->schemas[j].schema_id)
                return tl_error_set(err, TL_ERR_INVALID,
                                    TL_ICE_WHERE ": schema id %d is used twice",
                                    (int)md->schemas[i].schema_id);
    return TL_OK;
}

static tl_status parse_schema_list(const json_t *arr, size_t n, tl_ice_metadata *md, tl_error *err)
{
    if ((md->schemas = calloc(n, sizeof *md->schemas)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        tl_status st = tl_ice_schema_from_json(json_array_get(arr, i), 0, &md->schemas[i], err);
        if (st != TL_OK) {
            tl_error_prefix(err, TL_ICE_WHERE ": schemas[%zu]", i);
            return st;
        }
        md->n_schemas++;
    }
    return check_unique_schemas(md, err);
}

/* The v1 "schema" key. */
static tl_status schema_key(const json_t *single, tl_ice_schema *out, tl_error *err)
{
    tl_status st = tl_ice_schema_from_json(single, 0, out, err);
    if (st != TL_OK) tl_error_prefix(err, TL_ICE_WHERE ": schema");
    return st;
}

static tl_status parse_schemas(const json_t *root, int version, tl_ice_metadata *md, tl_error *err)
{
    json_t *arr, *single;
    size_t n;
    TL_TRY(get_array(root, "schemas", version >= 2, &arr, &n, err));
    TL_TRY(tl_ice_json_member(root, "schema", JSON_OBJECT, version == 1 && n == 0, TL_ICE_WHERE,
                              &single, err));
    if (n > 0) {
        TL_TRY(parse_schema_list(arr, n, md, err));
        md->current_schema_id = md->schemas[0].schema_id;
        if (single) {
            tl_ice_schema s;
            TL_TRY(schema_key(single, &s, err));
            md->current_schema_id = s.schema_id;
            tl_ice_schema_free(&s);
        }
    } else {
        if ((md->schemas = calloc(1, sizeof *md->schemas)) == NULL) return tl_error_nomem(err);
        TL_TRY(schema_key(single, &md->schemas[0], err));
        md->n_schemas = 1;
        md->current_schema_id = md->schemas[0].schema_id;
    }
    TL_TRY(tl_ice_json_i32(root, "current-schema-id", version >= 2, TL_ICE_WHERE,
                           &md->current_schema_id, NULL, err));
    if (tl_ice_metadata_current_schema(md) == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_ICE_WHERE ": current-schema-id %d names no schema",
                            (int)md->current_schema_id);
    return TL_OK;
}

/* ---- Partition specs ---- */

static tl_status parse_partition_field(const json_t *f, const char *where, size_t index,
                                       bool need_id, tl_ice_partition_field *out, tl_error *err)
{
    char w[96];
    snprintf(w, sizeof w, "%s, fields[%zu]", where, index);
    TL_TRY(check_object(f, w, err));
    out->field_id = 1000 + (int32_t)index; /* v1 specs may omit field ids */
    TL_TRY(tl_ice_json_i32(f, "source-id", true, w, &out->source_id, NULL, err));
    TL_TRY(tl_ice_json_i32(f, "field-id", need_id, w, &out->field_id, NULL, err));
    TL_TRY(tl_ice_json_strdup(f, "name", true, w, &out->name, err));
    return tl_ice_json_strdup(f, "transform", true, w, &out->transform, err);
}

static tl_status parse_partition_fields(const json_t *fields, const char *where, bool need_ids,
                                        tl_ice_partition_spec *spec, tl_error *err)
{
    if (!json_is_array(fields))
        return tl_error_set(err, TL_ERR_INVALID, "%s: key \"fields\" must be an array", where);
    size_t n = json_array_size(fields);
    if (n && (spec->fields = calloc(n, sizeof *spec->fields)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        spec->n_fields++;
        TL_TRY(parse_partition_field(json_array_get(fields, i), where, i, need_ids,
                                     &spec->fields[i], err));
    }
    return TL_OK;
}

static tl_status parse_spec(const json_t *j, size_t index, int version, tl_ice_partition_spec *out,
                            tl_error *err)
{
    char where[64];
    snprintf(where, sizeof where, TL_ICE_WHERE ": partition-specs[%zu]", index);
    TL_TRY(check_object(j, where, err));
    TL_TRY(tl_ice_json_i32(j, "spec-id", true, where, &out->spec_id, NULL, err));
    json_t *fields;
    TL_TRY(tl_ice_json_member(j, "fields", JSON_ARRAY, true, where, &fields, err));
    return parse_partition_fields(fields, where, version >= 2, out, err);
}

static int32_t max_partition_id(const tl_ice_metadata *md)
{
    int32_t last = 999;
    for (size_t i = 0; i < md->n_specs; i++)
        for (size_t j = 0; j < md->specs[i].n_fields; j++)
            if (md->specs[i].fields[j].field_id > last) last = md->specs[i].fields[j].field_id;
    return last;
}

static tl_status parse_specs(const json_t *root, int version, tl_ice_metadata *md, tl_error *err)
{
    json_t *arr, *v1_fields;
    size_t n;
    TL_TRY(get_array(root, "partition-specs", version >= 2, &arr, &n, err));
    TL_TRY(tl_ice_json_member(root, "partition-spec", JSON_ARRAY, version == 1 && n == 0,
                              TL_ICE_WHERE, &v1_fields, err));
    if ((md->specs = calloc(n ? n : 1, sizeof *md->specs)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        md->n_specs++;
        TL_TRY(parse_spec(json_array_get(arr, i), i, version, &md->specs[i], err));
        for (size_t j = 0; j < i; j++)
            if (md->specs[j].spec_id == md->specs[i].spec_id)
                return tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": spec id %d is used twice",
                                    (int)md->specs[i].spec_id);
    }
    if (n == 0) {
        md->n_specs = 1;
        TL_TRY(parse_partition_fields(v1_fields, TL_ICE_WHERE ": partition-spec", false,
                                      &md->specs[0], err));
    }
    md->default_spec_id = md->specs[0].spec_id;
    TL_TRY(tl_ice_json_i32(root, "default-spec-id", version >= 2, TL_ICE_WHERE,
                           &md->default_spec_id, NULL, err));
    if (tl_ice_metadata_default_spec(md) == NULL)
        return tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": default-spec-id %d names no spec",
                            (int)md->default_spec_id);
    md->last_partition_id = max_partition_id(md);
    return tl_ice_json_i32(root, "last-partition-id", version >= 2, TL_ICE_WHERE,
                           &md->last_partition_id, NULL, err);
}

/* ---- Sort orders ---- */

static tl_status parse_sort_field(const json_t *f, const char *where, tl_ice_sort_field *out,
                                  tl_error *err)
{
    TL_TRY(check_object(f, where, err));
    TL_TRY(tl_ice_json_i32(f, "source-id", true, where, &out->source_id, NULL, err));
    TL_TRY(tl_ice_json_strdup(f, "transform", true, where, &out->transform, err));
    json_t *dir, *nulls;
    TL_TRY(tl_ice_json_member(f, "direction", JSON_STRING, true, where, &dir, err));
    TL_TRY(tl_ice_json_member(f, "null-order", JSON_STRING, true, where, &nulls, err));
    const char *d = json_string_value(dir), *o = json_string_value(nulls);
    if (strcmp(d, "asc") != 0 && strcmp(d, "desc") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: direction must be asc or desc", where);
    if (strcmp(o, "nulls-first") != 0 && strcmp(o, "nulls-last") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: null-order must be nulls-first or nulls-last",
                            where);
    out->descending = strcmp(d, "desc") == 0;
    out->nulls_first = strcmp(o, "nulls-first") == 0;
    return TL_OK;
}

static tl_status parse_sort_order(const json_t *j, size_t index, tl_ice_sort_order *out,
                                  tl_error *err)
{
    char where[96];
    snprintf(where, sizeof where, TL_ICE_WHERE ": sort-orders[%zu]", index);
    TL_TRY(check_object(j, where, err));
    TL_TRY(tl_ice_json_i32(j, "order-id", true, where, &out->order_id, NULL, err));
    json_t *fields;
    TL_TRY(tl_ice_json_member(j, "fields", JSON_ARRAY, true, where, &fields, err));
    size_t n = json_array_size(fields);
    if (n && (out->fields = calloc(n, sizeof *out->fields)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        char w[128];
        snprintf(w, sizeof w, "%s, fields[%zu]", where, i);
        out->n_fields++;
        TL_TRY(parse_sort_field(json_array_get(fields, i), w, &out->fields[i], err));
    }
    return TL_OK;
}

static tl_status parse_sort_orders(const json_t *root, int version, tl_ice_metadata *md,
                                   tl_error *err)
{
    json_t *arr;
    size_t n;
    TL_TRY(get_array(root, "sort-orders", version >= 2, &arr, &n, err));
    /* v1 tables without orders are unsorted: order 0 with no fields. */
    if ((md->sort_orders = calloc(n ? n : 1, sizeof *md->sort_orders)) == NULL)
        return tl_error_nomem(err);
    md->n_sort_orders = n ? 0 : 1;
    for (size_t i = 0; i < n; i++) {
        md->n_sort_orders++;
        TL_TRY(parse_sort_order(json_array_get(arr, i), i, &md->sort_orders[i], err));
        for (size_t j = 0; j < i; j++)
            if (md->sort_orders[j].order_id == md->sort_orders[i].order_id)
                return tl_error_set(err, TL_ERR_INVALID,
                                    TL_ICE_WHERE ": sort order id %d is used twice",
                                    (int)md->sort_orders[i].order_id);
    }
    md->default_sort_order_id = md->sort_orders[0].order_id;
    TL_TRY(tl_ice_json_i32(root, "default-sort-order-id", version >= 2, TL_ICE_WHERE,
                           &md->default_sort_order_id, NULL, err));
    if (tl_ice_metadata_default_sort_order(md) == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_ICE_WHERE ": default-sort-order-id %d names no sort order",
                            (int)md->default_sort_order_id);
    return TL_OK;
}

/* ---- Snapshots ---- */

static tl_status parse_summary(const json_t *j, const char *where, tl_ice_snapshot *out,
                               tl_error *err)
{
    json_t *summary;
    TL_TRY(tl_ice_json_member(j, "summary", JSON_OBJECT, false, where, &summary, err));
    if (summary == NULL) return TL_OK;
    char w[96];
    snprintf(w, sizeof w, "%s: summary", where);
    TL_TRY(parse_string_map(summary, w, "operation", &out->summary, &out->n_summary, err));
    if (tl_ice_snapshot_summary(out, "operation") == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "%s has no \"operation\"", w);
    return TL_OK;
}

static tl_status parse_snapshot(const json_t *j, size_t index, int version, tl_ice_snapshot *out,
                                tl_error *err)
{
    char where[64];
    snprintf(where, sizeof where, TL_ICE_WHERE ": snapshots[%zu]", index);
    TL_TRY(check_object(j, where, err));
    TL_TRY(tl_ice_json_i64(j, "snapshot-id", true, where, &out->snapshot_id, NULL, err));
    TL_TRY(tl_ice_json_i64(j, "parent-snapshot-id", false, where, &out->parent_snapshot_id,
                           &out->has_parent, err));
    /* Java reads a missing sequence number as 0 even in v2 (tables upgraded from v1). */
    TL_TRY(tl_ice_json_i64(j, "sequence-number", false, where, &out->sequence_number, NULL, err));
    TL_TRY(tl_ice_json_i64(j, "timestamp-ms", true, where, &out->timestamp_ms, NULL, err));
    TL_TRY(tl_ice_json_strdup(j, "manifest-list", version >= 2, where, &out->manifest_list, err));
    TL_TRY(parse_summary(j, where, out, err));
    TL_TRY(
        tl_ice_json_i32(j, "schema-id", false, where, &out->schema_id, &out->has_schema_id, err));
    return collect_extra(j, tl_ice_snapshot_keys, &out->extra, err);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorting keeps this O(n log n): long-lived tables carry thousands of snapshots. */
static tl_status check_unique_snapshots(const tl_ice_metadata *md, tl_error *err)
{
    size_t n = md->n_snapshots;
    if (n < 2) return TL_OK;
    int64_t *ids = malloc(n * sizeof *ids);
    if (ids == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) ids[i] = md->snapshots[i].snapshot_id;
    qsort(ids, n, sizeof *ids, compare_i64);
    tl_status st = TL_OK;
    for (size_t i = 1; i < n && st == TL_OK; i++)
        if (ids[i] == ids[i - 1])
            st = tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": snapshot id %lld is used twice",
                              (long long)ids[i]);
    free(ids);
    return st;
}

static tl_status parse_snapshots(const json_t *root, int version, tl_ice_metadata *md,
                                 tl_error *err)
{
    json_t *arr;
    size_t n;
    TL_TRY(get_array(root, "snapshots", false, &arr, &n, err));
    if (n && (md->snapshots = calloc(n, sizeof *md->snapshots)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        md->n_snapshots++;
        TL_TRY(parse_snapshot(json_array_get(arr, i), i, version, &md->snapshots[i], err));
        TL_TRY(tl_ice_snapshot_pack(&md->snapshots[i], err));
    }
    TL_TRY(check_unique_snapshots(md, err));
    md->current_snapshot_id = -1;
    json_t *cur = json_object_get(root, "current-snapshot-id");
    if (cur == NULL || json_is_null(cur)) return TL_OK;
    if (tl_ice_json_as_i64(cur, TL_ICE_WHERE ": current-snapshot-id", &md->current_snapshot_id,
                           err) != TL_OK)
        return TL_ERR_INVALID;
    if (md->current_snapshot_id != -1 && tl_ice_metadata_current_snapshot(md) == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_ICE_WHERE ": current-snapshot-id %lld names no snapshot",
                            (long long)md->current_snapshot_id);
    return TL_OK;
}

/* ---- Logs ---- */

static tl_status parse_snapshot_log(const json_t *root, tl_ice_metadata *md, tl_error *err)
{
    json_t *arr;
    size_t n;
    TL_TRY(get_array(root, "snapshot-log", false, &arr, &n, err));
    if (n && (md->snapshot_log = calloc(n, sizeof *md->snapshot_log)) == NULL)
        return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        char where[64];
        snprintf(where, sizeof where, TL_ICE_WHERE ": snapshot-log[%zu]", i);
        const json_t *e = json_array_get(arr, i);
        tl_ice_snapshot_log_entry *out = &md->snapshot_log[i];
        TL_TRY(check_object(e, where, err));
        TL_TRY(tl_ice_json_i64(e, "snapshot-id", true, where, &out->snapshot_id, NULL, err));
        TL_TRY(tl_ice_json_i64(e, "timestamp-ms", true, where, &out->timestamp_ms, NULL, err));
        md->n_snapshot_log++;
    }
    return TL_OK;
}

static tl_status parse_metadata_log(const json_t *root, tl_ice_metadata *md, tl_error *err)
{
    json_t *arr;
    size_t n;
    TL_TRY(get_array(root, "metadata-log", false, &arr, &n, err));
    if (n && (md->metadata_log = calloc(n, sizeof *md->metadata_log)) == NULL)
        return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        char where[64];
        snprintf(where, sizeof where, TL_ICE_WHERE ": metadata-log[%zu]", i);
        const json_t *e = json_array_get(arr, i);
        tl_ice_metadata_log_entry *out = &md->metadata_log[i];
        TL_TRY(check_object(e, where, err));
        TL_TRY(tl_ice_json_i64(e, "timestamp-ms", true, where, &out->timestamp_ms, NULL, err));
        TL_TRY(tl_ice_json_strdup(e, "metadata-file", true, where, &out->metadata_file, err));
        md->n_metadata_log++;
    }
    return TL_OK;
}

/* ---- Refs ---- */

static tl_status parse_ref(const json_t *j, const char *name, const tl_ice_metadata *md,
                           tl_ice_ref *out, tl_error *err)
{
    char where[128];
    snprintf(where, sizeof where, TL_ICE_WHERE ": refs[\"%.64s\"]", name);
    TL_TRY(check_object(j, where, err));
    TL_TRY(tl_ice_json_i64(j, "snapshot-id", true, where, &out->snapshot_id, NULL, err));
    if (tl_ice_metadata_snapshot(md, out->snapshot_id) == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "%s: snapshot %lld does not exist", where,
                            (long long)out->snapshot_id);
    json_t *type;
    TL_TRY(tl_ice_json_member(j, "type", JSON_STRING, true, where, &type, err));
    const char *t = json_string_value(type);
    if (strcmp(t, "branch") != 0 && strcmp(t, "tag") != 0)
        return tl_error_set(err, TL_ERR_INVALID, "%s: type must be branch or tag", where);
    out->is_tag = strcmp(t, "tag") == 0;
    out->min_snapshots_to_keep = out->max_snapshot_age_ms = out->max_ref_age_ms = -1;
    TL_TRY(tl_ice_json_i64(j, "min-snapshots-to-keep", false, where, &out->min_snapshots_to_keep,
                           NULL, err));
    TL_TRY(tl_ice_json_i64(j, "max-snapshot-age-ms", false, where, &out->max_snapshot_age_ms, NULL,
                           err));
    return tl_ice_json_i64(j, "max-ref-age-ms", false, where, &out->max_ref_age_ms, NULL, err);
}

/* Tables written before refs existed have an implied main branch at the current snapshot. */
static tl_status implied_main(tl_ice_metadata *md, tl_error *err)
{
    if (md->current_snapshot_id == -1 || tl_ice_metadata_ref(md, "main") != NULL) return TL_OK;
    tl_ice_ref *grown = realloc(md->refs, (md->n_refs + 1) * sizeof *grown);
    if (grown == NULL) return tl_error_nomem(err);
    md->refs = grown;
    char *name = strdup("main");
    if (name == NULL) return tl_error_nomem(err);
    md->refs[md->n_refs++] = (tl_ice_ref){.name = name,
                                          .snapshot_id = md->current_snapshot_id,
                                          .min_snapshots_to_keep = -1,
                                          .max_snapshot_age_ms = -1,
                                          .max_ref_age_ms = -1};
    return TL_OK;
}

static tl_status parse_refs(const json_t *root, tl_ice_metadata *md, tl_error *err)
{
    json_t *refs;
    TL_TRY(tl_ice_json_member(root, "refs", JSON_OBJECT, false, TL_ICE_WHERE, &refs, err));
    size_t n = refs ? json_object_size(refs) : 0;
    if (n && (md->refs = calloc(n, sizeof *md->refs)) == NULL) return tl_error_nomem(err);
    const char *name;
    json_t *value;
    if (refs) json_object_foreach(refs, name, value)
        {
            tl_ice_ref *r = &md->refs[md->n_refs];
            TL_TRY(parse_ref(value, name, md, r, err));
            if ((r->name = strdup(name)) == NULL) return tl_error_nomem(err);
            md->n_refs++;
        }
    return implied_main(md, err);
}

/* ---- Root ---- */

static tl_status parse_header(const json_t *root, tl_ice_metadata *md, tl_error *err)
{
    int32_t version = 0;
    TL_TRY(tl_ice_json_i32(root, "format-version", true, TL_ICE_WHERE, &version, NULL, err));
    if (version != 1 && version != 2)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_ICE_WHERE ": format-version %d is not supported (1 or 2)",
                            (int)version);
    md->format_version = version;
    TL_TRY(
        tl_ice_json_strdup(root, "table-uuid", version >= 2, TL_ICE_WHERE, &md->table_uuid, err));
    TL_TRY(tl_ice_json_strdup(root, "location", true, TL_ICE_WHERE, &md->location, err));
    TL_TRY(tl_ice_json_i64(root, "last-sequence-number", version >= 2, TL_ICE_WHERE,
                           &md->last_sequence_number, NULL, err));
    if (md->last_sequence_number < 0)
        return tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": last-sequence-number is negative");
    TL_TRY(tl_ice_json_i64(root, "last-updated-ms", true, TL_ICE_WHERE, &md->last_updated_ms, NULL,
                           err));
    return tl_ice_json_i32(root, "last-column-id", true, TL_ICE_WHERE, &md->last_column_id, NULL,
                           err);
}

static tl_status keep_array(const json_t *root, const char *key, json_t **out, tl_error *err)
{
    TL_TRY(tl_ice_json_member(root, key, JSON_ARRAY, false, TL_ICE_WHERE, out, err));
    if (*out) json_incref(*out);
    return TL_OK;
}

static tl_status parse_root(const json_t *root, tl_ice_metadata *md, tl_error *err)
{
    if (!json_is_object(root))
        return tl_error_set(err, TL_ERR_INVALID, TL_ICE_WHERE ": the document is not an object");
    TL_TRY(parse_header(root, md, err));
    int v = md->format_version;
    TL_TRY(parse_schemas(root, v, md, err));
    TL_TRY(parse_specs(root, v, md, err));
    json_t *props;
    TL_TRY(tl_ice_json_member(root, "properties", JSON_OBJECT, false, TL_ICE_WHERE, &props, err));
    if (props)
        TL_TRY(parse_string_map(props, TL_ICE_WHERE ": properties", NULL, &md->properties,
                                &md->n_properties, err));
    TL_TRY(parse_snapshots(root, v, md, err));
    TL_TRY(parse_snapshot_log(root, md, err));
    TL_TRY(parse_metadata_log(root, md, err));
    TL_TRY(parse_sort_orders(root, v, md, err));
    TL_TRY(parse_refs(root, md, err));
    TL_TRY(keep_array(root, "statistics", &md->statistics, err));
    TL_TRY(keep_array(root, "partition-statistics", &md->partition_statistics, err));
    return collect_extra(root, tl_ice_known_keys, &md->extra, err);
}

tl_status tl_ice_metadata_parse(const char *json, size_t len, tl_ice_metadata **out, tl_error *err)
{
    *out = NULL;
    json_error_t jerr;
    bool nomem;
    json_t *root = tl_json_loadb(json, len, 0, &jerr, &nomem);
    if (nomem) return tl_error_nomem(err);
    if (root == NULL)
        return tl_error_set(err, TL_ERR_INVALID,
                            TL_ICE_WHERE " is not valid JSON: %s (line %d, column %d)", jerr.text,
                            jerr.line, jerr.column);
    tl_ice_metadata *md = calloc(1, sizeof *md);
    tl_status st = md ? parse_root(root, md, err) : tl_error_nomem(err);
    json_decref(root);
    if (st != TL_OK) {
        tl_ice_metadata_free(md);
        return st;
    }
    *out = md;
    return TL_OK;
}
