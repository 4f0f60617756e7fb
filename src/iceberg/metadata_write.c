/* Serializing table metadata to JSON in the reference's key order. */
#include "iceberg/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_text.h"
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

/* The document is written member by member: most members are small jansson
 * values dumped in place, but the snapshots (their JSON kept with them, see
 * snapshot_data.c) and the snapshot log, which grow with the table's
 * history, are written directly. */
typedef struct writer {
    tl_buf *out;
    bool failed;
    size_t members;
} writer;

static void put_raw(writer *w, const char *s, size_t n)
{
    if (!w->failed && tl_buf_append(w->out, s, n) != 0) w->failed = true;
}

static void put_dump(writer *w, const json_t *v)
{
    if (!w->failed && tl_json_dump_buf(v, JSON_COMPACT | JSON_ENCODE_ANY, w->out) != 0)
        w->failed = true;
}

#define put_lit(w, s) put_raw((w), (s), strlen(s))

/* Writes s as a JSON string: by hand when it is printable ASCII with nothing
 * to escape (names, keys, URLs: as jansson would write them), else through
 * jansson, which also refuses invalid UTF-8. */
static void put_string(writer *w, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, n++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\') {
            json_t *v = json_string(s);
            if (v == NULL) w->failed = true;
            put_dump(w, v);
            json_decref(v);
            return;
        }
    put_raw(w, "\"", 1);
    put_raw(w, s, n);
    put_raw(w, "\"", 1);
}

static void put_key(writer *w, const char *key)
{
    put_raw(w, w->members++ ? "," : "{", 1);
    put_string(w, key);
    put_raw(w, ":", 1);
}

/* Writes key and value (taken; NULL means out of memory). */
static void put(writer *w, const char *key, json_t *value)
{
    if (value == NULL) w->failed = true;
    put_key(w, key);
    put_dump(w, value);
    json_decref(value);
}

static void put_i64(writer *w, int64_t v)
{
    char num[21];
    put_raw(w, num, tl_format_i64(num, v));
}

static void put_int(writer *w, const char *key, int64_t v)
{
    put_key(w, key);
    put_i64(w, v);
}

/* v1 readers need the current schema and default spec under their v1 keys too. */
static void put_header(writer *w, const tl_ice_metadata *md)
{
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(md);
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(md);
    put_int(w, "format-version", md->format_version);
    if (md->table_uuid) put(w, "table-uuid", json_string(md->table_uuid));
    put(w, "location", json_string(md->location));
    if (md->format_version >= 2) put_int(w, "last-sequence-number", md->last_sequence_number);
    put_int(w, "last-updated-ms", md->last_updated_ms);
    put_int(w, "last-column-id", md->last_column_id);
    if (md->format_version == 1 && schema) put(w, "schema", tl_ice_schema_to_json(schema));
    put(w, "schemas", array_of(md->n_schemas, schema_json, md->schemas));
    put_int(w, "current-schema-id", md->current_schema_id);
    if (md->format_version == 1 && spec)
        put(w, "partition-spec", array_of(spec->n_fields, partition_field_json, spec->fields));
    put(w, "partition-specs", array_of(md->n_specs, spec_json, md->specs));
    put_int(w, "default-spec-id", md->default_spec_id);
    put_int(w, "last-partition-id", md->last_partition_id);
    put(w, "properties", kv_json(md->properties, md->n_properties));
}

/* The two logs grow with the history: written directly, as jansson would. */
static void put_snapshot_log(writer *w, const tl_ice_metadata *md)
{
    put_key(w, "snapshot-log");
    put_raw(w, "[", 1);
    for (size_t i = 0; i < md->n_snapshot_log; i++) {
        put_lit(w, i ? ",{\"snapshot-id\":" : "{\"snapshot-id\":");
        put_i64(w, md->snapshot_log[i].snapshot_id);
        put_lit(w, ",\"timestamp-ms\":");
        put_i64(w, md->snapshot_log[i].timestamp_ms);
        put_raw(w, "}", 1);
    }
    put_raw(w, "]", 1);
}

static void put_metadata_log(writer *w, const tl_ice_metadata *md)
{
    put_key(w, "metadata-log");
    put_raw(w, "[", 1);
    for (size_t i = 0; i < md->n_metadata_log; i++) {
        put_lit(w, i ? ",{\"metadata-file\":" : "{\"metadata-file\":");
        put_string(w, md->metadata_log[i].metadata_file);
        put_lit(w, ",\"timestamp-ms\":");
        put_i64(w, md->metadata_log[i].timestamp_ms);
        put_raw(w, "}", 1);
    }
    put_raw(w, "]", 1);
}

static void put_snapshots(writer *w, const tl_ice_metadata *md)
{
    put_key(w, "snapshots");
    put_raw(w, "[", 1);
    for (size_t i = 0; !w->failed && i < md->n_snapshots; i++) {
        const tl_ice_snapshot *s = &md->snapshots[i];
        if (i + 2 * TL_ICE_PREFETCH_AHEAD < md->n_snapshots)
            tl_ice_snapshot_prefetch_data(s + 2 * TL_ICE_PREFETCH_AHEAD);
        if (i + TL_ICE_PREFETCH_AHEAD < md->n_snapshots)
            tl_ice_snapshot_prefetch_json(s + TL_ICE_PREFETCH_AHEAD);
        if (i) put_raw(w, ",", 1);
        size_t len;
        const char *kept = tl_ice_snapshot_json(s, md->format_version, &len);
        if (kept) {
            put_raw(w, kept, len);
            continue;
        }
        size_t mark = w->out->len;
        json_t *o = snapshot_json(s, md->format_version);
        if (o == NULL) w->failed = true;
        put_dump(w, o);
        json_decref(o);
        if (!w->failed)
            tl_ice_snapshot_keep_json(s, md->format_version, (const char *)w->out->data + mark,
                                      w->out->len - mark);
    }
    put_raw(w, "]", 1);
}

static void put_history(writer *w, const tl_ice_metadata *md)
{
    /* As the reference: history keys only once there is history. */
    if (md->current_snapshot_id != -1) put_int(w, "current-snapshot-id", md->current_snapshot_id);
    if (md->n_snapshot_log) put_snapshot_log(w, md);
    if (md->n_metadata_log) put_metadata_log(w, md);
    put(w, "sort-orders", array_of(md->n_sort_orders, sort_order_json, md->sort_orders));
    put_int(w, "default-sort-order-id", md->default_sort_order_id);
    put(w, "refs", refs_json(md));
    if (md->n_snapshots) put_snapshots(w, md);
    if (md->statistics) put(w, "statistics", json_incref(md->statistics));
    if (md->partition_statistics)
        put(w, "partition-statistics", json_incref(md->partition_statistics));
}

/* About the document's size, reserved at once: growing the buffer as it
 * fills copied the whole history several times per commit. Snapshots are
 * alike, so one of the last ones' text stands for each, with a quarter to spare
 * (reserved pages nothing writes cost nothing). */
static size_t size_hint(const tl_ice_metadata *md)
{
    size_t n = 4096 + 64 * md->n_snapshot_log, each = 1024;
    for (size_t i = 0; i < md->n_metadata_log; i++)
        n += strlen(md->metadata_log[i].metadata_file) + 48;
    for (size_t i = md->n_snapshots; i-- > 0 && md->n_snapshots - i <= 2;) /* the new one: none */
        if (tl_ice_snapshot_json(&md->snapshots[i], md->format_version, &each)) break;
    return n + md->n_snapshots * (each + each / 4 + 1);
}

tl_status tl_ice_metadata_serialize(const tl_ice_metadata *md, tl_buf *out, tl_error *err)
{
    writer w = {.out = out};
    size_t mark = out->len;
    if (tl_buf_reserve(out, size_hint(md)) != 0) return tl_error_nomem(err);
    put_header(&w, md);
    put_history(&w, md);
    const char *key;
    json_t *value;
    if (md->extra) json_object_foreach(md->extra, key, value) put(&w, key, json_incref(value));
    put_raw(&w, w.members ? "}" : "{}", w.members ? 1 : 2);
    if (w.failed) {
        out->len = mark;
        if (out->data) out->data[mark] = '\0';
        return tl_error_nomem(err);
    }
    return TL_OK;
}

tl_status tl_ice_partition_fields_to_json_string(const tl_ice_partition_spec *spec, char **out,
                                                 tl_error *err)
{
    json_t *arr = array_of(spec->n_fields, partition_field_json, spec->fields);
    *out = arr ? tl_json_dumps(arr, JSON_COMPACT) : NULL;
    json_decref(arr);
    return *out ? TL_OK : tl_error_nomem(err);
}
