/* Serializing table metadata to JSON in the reference's key order. */
#include "iceberg/metadata.h"

#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata_json.h"

/* Each builder returns a new JSON value or NULL when memory runs out. */

static json_t *finish(json_t *v, bool failed)
{
    if (!failed) return v;
    json_decref(v);
    return NULL;
}

static json_t *array_of(size_t n, json_t *(*item)(const void *base, size_t i), const void *base)
{
    json_t *arr = json_array();
    bool failed = arr == NULL;
    for (size_t i = 0; !failed && i < n; i++) failed = json_array_append_new(arr, item(base, i));
    return finish(arr, failed);
}

static json_t *kv_json(const tl_kv *kv, size_t n)
{
    json_t *o = json_object();
    bool failed = o == NULL;
    for (size_t i = 0; !failed && i < n; i++)
        tl_ice_json_put(o, kv[i].key, json_string(kv[i].value), &failed);
    return finish(o, failed);
}

static json_t *partition_field_json(const void *base, size_t i)
{
    const tl_ice_partition_field *f = (const tl_ice_partition_field *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "source-id", json_integer(f->source_id), &failed);
        tl_ice_json_put(o, "field-id", json_integer(f->field_id), &failed);
        tl_ice_json_put(o, "name", json_string(f->name), &failed);
        tl_ice_json_put(o, "transform", json_string(f->transform), &failed);
    }
    return finish(o, failed);
}

static json_t *spec_json(const void *base, size_t i)
{
    const tl_ice_partition_spec *s = (const tl_ice_partition_spec *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "spec-id", json_integer(s->spec_id), &failed);
        tl_ice_json_put(o, "fields", array_of(s->n_fields, partition_field_json, s->fields),
                        &failed);
    }
    return finish(o, failed);
}

static json_t *sort_field_json(const void *base, size_t i)
{
    const tl_ice_sort_field *f = (const tl_ice_sort_field *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "source-id", json_integer(f->source_id), &failed);
        tl_ice_json_put(o, "transform", json_string(f->transform), &failed);
        tl_ice_json_put(o, "direction", json_string(f->descending ? "desc" : "asc"), &failed);
        tl_ice_json_put(o, "null-order", json_string(f->nulls_first ? "nulls-first" : "nulls-last"),
                        &failed);
    }
    return finish(o, failed);
}

static json_t *sort_order_json(const void *base, size_t i)
{
    const tl_ice_sort_order *s = (const tl_ice_sort_order *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "order-id", json_integer(s->order_id), &failed);
        tl_ice_json_put(o, "fields", array_of(s->n_fields, sort_field_json, s->fields), &failed);
    }
    return finish(o, failed);
}

static json_t *schema_json(const void *base, size_t i)
{
    return tl_ice_schema_to_json((const tl_ice_schema *)base + i);
}

/* Copies the members of `extra` (unknown keys) into o, sharing the values. */
static void put_extra(json_t *o, const json_t *extra, bool *failed)
{
    const char *key;
    json_t *value;
    if (extra == NULL) return;
    json_object_foreach((json_t *)extra, key, value)
    {
        if (json_object_set(o, key, value) != 0) *failed = true;
    }
}

static json_t *snapshot_json(const tl_ice_snapshot *s, int version)
{
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o == NULL) return NULL;
    tl_ice_json_put(o, "snapshot-id", json_integer(s->snapshot_id), &failed);
    if (s->has_parent)
        tl_ice_json_put(o, "parent-snapshot-id", json_integer(s->parent_snapshot_id), &failed);
    if (version >= 2)
        tl_ice_json_put(o, "sequence-number", json_integer(s->sequence_number), &failed);
    tl_ice_json_put(o, "timestamp-ms", json_integer(s->timestamp_ms), &failed);
    if (s->manifest_list)
        tl_ice_json_put(o, "manifest-list", json_string(s->manifest_list), &failed);
    if (s->n_summary) tl_ice_json_put(o, "summary", kv_json(s->summary, s->n_summary), &failed);
    if (s->has_schema_id) tl_ice_json_put(o, "schema-id", json_integer(s->schema_id), &failed);
    put_extra(o, s->extra, &failed);
    return finish(o, failed);
}

static json_t *snapshots_json(const tl_ice_metadata *md)
{
    json_t *arr = json_array();
    bool failed = arr == NULL;
    for (size_t i = 0; !failed && i < md->n_snapshots; i++)
        failed =
            json_array_append_new(arr, snapshot_json(&md->snapshots[i], md->format_version)) != 0;
    return finish(arr, failed);
}

static json_t *snapshot_log_entry_json(const void *base, size_t i)
{
    const tl_ice_snapshot_log_entry *e = (const tl_ice_snapshot_log_entry *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "snapshot-id", json_integer(e->snapshot_id), &failed);
        tl_ice_json_put(o, "timestamp-ms", json_integer(e->timestamp_ms), &failed);
    }
    return finish(o, failed);
}

static json_t *metadata_log_entry_json(const void *base, size_t i)
{
    const tl_ice_metadata_log_entry *e = (const tl_ice_metadata_log_entry *)base + i;
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o) {
        tl_ice_json_put(o, "metadata-file", json_string(e->metadata_file), &failed);
        tl_ice_json_put(o, "timestamp-ms", json_integer(e->timestamp_ms), &failed);
    }
    return finish(o, failed);
}

static json_t *ref_json(const tl_ice_ref *r)
{
    json_t *o = json_object();
    bool failed = o == NULL;
    if (o == NULL) return NULL;
    tl_ice_json_put(o, "snapshot-id", json_integer(r->snapshot_id), &failed);
    tl_ice_json_put(o, "type", json_string(r->is_tag ? "tag" : "branch"), &failed);
    if (r->min_snapshots_to_keep >= 0)
        tl_ice_json_put(o, "min-snapshots-to-keep", json_integer(r->min_snapshots_to_keep),
                        &failed);
    if (r->max_snapshot_age_ms >= 0)
        tl_ice_json_put(o, "max-snapshot-age-ms", json_integer(r->max_snapshot_age_ms), &failed);
    if (r->max_ref_age_ms >= 0)
        tl_ice_json_put(o, "max-ref-age-ms", json_integer(r->max_ref_age_ms), &failed);
    return finish(o, failed);
}

static json_t *refs_json(const tl_ice_metadata *md)
{
    json_t *o = json_object();
    bool failed = o == NULL;
    for (size_t i = 0; !failed && i < md->n_refs; i++)
        tl_ice_json_put(o, md->refs[i].name, ref_json(&md->refs[i]), &failed);
    return finish(o, failed);
}

/* v1 readers need the current schema and default spec under their v1 keys too. */
static void put_v1_schema(json_t *o, const tl_ice_metadata *md, bool *failed)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(md);
    if (md->format_version == 1 && s)
        tl_ice_json_put(o, "schema", tl_ice_schema_to_json(s), failed);
}

static void put_v1_spec(json_t *o, const tl_ice_metadata *md, bool *failed)
{
    const tl_ice_partition_spec *s = tl_ice_metadata_default_spec(md);
    if (md->format_version == 1 && s)
        tl_ice_json_put(o, "partition-spec", array_of(s->n_fields, partition_field_json, s->fields),
                        failed);
}

static void put_header(json_t *o, const tl_ice_metadata *md, bool *failed)
{
    tl_ice_json_put(o, "format-version", json_integer(md->format_version), failed);
    if (md->table_uuid) tl_ice_json_put(o, "table-uuid", json_string(md->table_uuid), failed);
    tl_ice_json_put(o, "location", json_string(md->location), failed);
    if (md->format_version >= 2)
        tl_ice_json_put(o, "last-sequence-number", json_integer(md->last_sequence_number), failed);
    tl_ice_json_put(o, "last-updated-ms", json_integer(md->last_updated_ms), failed);
    tl_ice_json_put(o, "last-column-id", json_integer(md->last_column_id), failed);
    put_v1_schema(o, md, failed);
    tl_ice_json_put(o, "schemas", array_of(md->n_schemas, schema_json, md->schemas), failed);
    tl_ice_json_put(o, "current-schema-id", json_integer(md->current_schema_id), failed);
    put_v1_spec(o, md, failed);
    tl_ice_json_put(o, "partition-specs", array_of(md->n_specs, spec_json, md->specs), failed);
    tl_ice_json_put(o, "default-spec-id", json_integer(md->default_spec_id), failed);
    tl_ice_json_put(o, "last-partition-id", json_integer(md->last_partition_id), failed);
    tl_ice_json_put(o, "properties", kv_json(md->properties, md->n_properties), failed);
}

static void put_history(json_t *o, const tl_ice_metadata *md, bool *failed)
{
    /* As the reference: history keys only once there is history. */
    if (md->current_snapshot_id != -1)
        tl_ice_json_put(o, "current-snapshot-id", json_integer(md->current_snapshot_id), failed);
    if (md->n_snapshot_log)
        tl_ice_json_put(o, "snapshot-log",
                        array_of(md->n_snapshot_log, snapshot_log_entry_json, md->snapshot_log),
                        failed);
    if (md->n_metadata_log)
        tl_ice_json_put(o, "metadata-log",
                        array_of(md->n_metadata_log, metadata_log_entry_json, md->metadata_log),
                        failed);
    tl_ice_json_put(o, "sort-orders", array_of(md->n_sort_orders, sort_order_json, md->sort_orders),
                    failed);
    tl_ice_json_put(o, "default-sort-order-id", json_integer(md->default_sort_order_id), failed);
    tl_ice_json_put(o, "refs", refs_json(md), failed);
    if (md->n_snapshots) tl_ice_json_put(o, "snapshots", snapshots_json(md), failed);
    if (md->statistics && json_object_set(o, "statistics", md->statistics) != 0) *failed = true;
    if (md->partition_statistics &&
        json_object_set(o, "partition-statistics", md->partition_statistics) != 0)
        *failed = true;
}

tl_status tl_ice_metadata_serialize(const tl_ice_metadata *md, tl_buf *out, tl_error *err)
{
    json_t *root = json_object();
    bool failed = root == NULL;
    if (root) {
        put_header(root, md, &failed);
        put_history(root, md, &failed);
        put_extra(root, md->extra, &failed);
    }
    size_t mark = out->len;
    if (!failed && json_dump_callback(root, tl_ice_json_dump_to_buf, out, JSON_COMPACT) != 0) {
        failed = true;
        out->len = mark;
        if (out->data) out->data[mark] = '\0';
    }
    json_decref(root);
    return failed ? tl_error_nomem(err) : TL_OK;
}

tl_status tl_ice_partition_fields_to_json_string(const tl_ice_partition_spec *spec, char **out,
                                                 tl_error *err)
{
    json_t *arr = array_of(spec->n_fields, partition_field_json, spec->fields);
    *out = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
    json_decref(arr);
    return *out ? TL_OK : tl_error_nomem(err);
}
