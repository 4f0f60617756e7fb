/* Table metadata lifecycle: freeing, deep copies, new tables and lookups. */
#include "iceberg/metadata.h"

#include <stdlib.h>
#include <string.h>

#include "iceberg/transform.h"

/* ---- Ordered string maps ---- */

const char *tl_kv_find(const tl_kv *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0) return kv[i].value;
    return NULL;
}

void tl_kv_free(tl_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

tl_status tl_kv_copy(const tl_kv *src, size_t n, tl_kv **out, tl_error *err)
{
    *out = NULL;
    if (n == 0) return TL_OK;
    tl_kv *kv = calloc(n, sizeof *kv);
    if (kv == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        kv[i].key = strdup(src[i].key);
        kv[i].value = strdup(src[i].value);
        if (kv[i].key == NULL || kv[i].value == NULL) {
            tl_kv_free(kv, i + 1);
            return tl_error_nomem(err);
        }
    }
    *out = kv;
    return TL_OK;
}

/* ---- Pieces ---- */

void tl_ice_partition_spec_free(tl_ice_partition_spec *spec)
{
    if (spec == NULL) return;
    for (size_t i = 0; i < spec->n_fields; i++) {
        free(spec->fields[i].name);
        free(spec->fields[i].transform);
    }
    free(spec->fields);
    memset(spec, 0, sizeof *spec);
}

tl_status tl_ice_partition_spec_copy(const tl_ice_partition_spec *src, tl_ice_partition_spec *out,
                                     tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->spec_id = src->spec_id;
    if (src->n_fields == 0) return TL_OK;
    out->fields = calloc(src->n_fields, sizeof *out->fields);
    if (out->fields == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < src->n_fields; i++) {
        tl_ice_partition_field *f = &out->fields[out->n_fields++];
        *f = src->fields[i];
        f->name = strdup(src->fields[i].name);
        f->transform = strdup(src->fields[i].transform);
        if (f->name == NULL || f->transform == NULL) {
            tl_ice_partition_spec_free(out);
            return tl_error_nomem(err);
        }
    }
    return TL_OK;
}

void tl_ice_sort_order_free(tl_ice_sort_order *order)
{
    if (order == NULL) return;
    for (size_t i = 0; i < order->n_fields; i++) free(order->fields[i].transform);
    free(order->fields);
    memset(order, 0, sizeof *order);
}

tl_status tl_ice_sort_order_copy(const tl_ice_sort_order *src, tl_ice_sort_order *out,
                                 tl_error *err)
{
    memset(out, 0, sizeof *out);
    out->order_id = src->order_id;
    if (src->n_fields == 0) return TL_OK;
    out->fields = calloc(src->n_fields, sizeof *out->fields);
    if (out->fields == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < src->n_fields; i++) {
        tl_ice_sort_field *f = &out->fields[out->n_fields++];
        *f = src->fields[i];
        f->transform = strdup(src->fields[i].transform);
        if (f->transform == NULL) {
            tl_ice_sort_order_free(out);
            return tl_error_nomem(err);
        }
    }
    return TL_OK;
}

/* tl_ice_snapshot_free and tl_ice_snapshot_copy: snapshot_data.c */

/* ---- Whole metadata ---- */

void tl_ice_metadata_free(tl_ice_metadata *md)
{
    if (md == NULL) return;
    free(md->table_uuid);
    free(md->location);
    for (size_t i = 0; i < md->n_schemas; i++) tl_ice_schema_free(&md->schemas[i]);
    free(md->schemas);
    for (size_t i = 0; i < md->n_specs; i++) tl_ice_partition_spec_free(&md->specs[i]);
    free(md->specs);
    tl_kv_free(md->properties, md->n_properties);
    for (size_t i = 0; i < md->n_snapshots; i++) {
        if (i + TL_ICE_PREFETCH_AHEAD < md->n_snapshots)
            tl_ice_snapshot_prefetch_data(&md->snapshots[i + TL_ICE_PREFETCH_AHEAD]);
        tl_ice_snapshot_free(&md->snapshots[i]);
    }
    free(md->snapshots);
    free(md->snapshot_log);
    for (size_t i = 0; i < md->n_metadata_log; i++) free(md->metadata_log[i].metadata_file);
    free(md->metadata_log);
    for (size_t i = 0; i < md->n_sort_orders; i++) tl_ice_sort_order_free(&md->sort_orders[i]);
    free(md->sort_orders);
    for (size_t i = 0; i < md->n_refs; i++) free(md->refs[i].name);
    free(md->refs);
    json_decref(md->statistics);
    json_decref(md->partition_statistics);
    json_decref(md->extra);
    free(md);
}

/* Each copy_* fills dst from src, counting elements as they are completed so a
 * failed copy can be freed with tl_ice_metadata_free. */

static bool copy_schemas(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_schemas == 0) return true;
    if ((dst->schemas = calloc(src->n_schemas, sizeof *dst->schemas)) == NULL) return false;
    for (; dst->n_schemas < src->n_schemas; dst->n_schemas++)
        if (tl_ice_schema_copy(&src->schemas[dst->n_schemas], &dst->schemas[dst->n_schemas],
                               NULL) != TL_OK)
            return false;
    return true;
}

static bool copy_specs(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_specs == 0) return true;
    if ((dst->specs = calloc(src->n_specs, sizeof *dst->specs)) == NULL) return false;
    for (; dst->n_specs < src->n_specs; dst->n_specs++)
        if (tl_ice_partition_spec_copy(&src->specs[dst->n_specs], &dst->specs[dst->n_specs],
                                       NULL) != TL_OK)
            return false;
    return true;
}

static bool copy_orders(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_sort_orders == 0) return true;
    dst->sort_orders = calloc(src->n_sort_orders, sizeof *dst->sort_orders);
    if (dst->sort_orders == NULL) return false;
    for (; dst->n_sort_orders < src->n_sort_orders; dst->n_sort_orders++)
        if (tl_ice_sort_order_copy(&src->sort_orders[dst->n_sort_orders],
                                   &dst->sort_orders[dst->n_sort_orders], NULL) != TL_OK)
            return false;
    return true;
}

static bool copy_snapshots(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_snapshots == 0) return true;
    dst->snapshots = calloc(src->n_snapshots, sizeof *dst->snapshots);
    if (dst->snapshots == NULL) return false;
    for (; dst->n_snapshots < src->n_snapshots; dst->n_snapshots++) {
        if (dst->n_snapshots + TL_ICE_PREFETCH_AHEAD < src->n_snapshots)
            tl_ice_snapshot_prefetch_data(
                &src->snapshots[dst->n_snapshots + TL_ICE_PREFETCH_AHEAD]);
        if (tl_ice_snapshot_copy(&src->snapshots[dst->n_snapshots],
                                 &dst->snapshots[dst->n_snapshots], NULL) != TL_OK)
            return false;
    }
    return true;
}

static bool copy_logs(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_snapshot_log) {
        size_t bytes = src->n_snapshot_log * sizeof *dst->snapshot_log;
        if ((dst->snapshot_log = malloc(bytes)) == NULL) return false;
        memcpy(dst->snapshot_log, src->snapshot_log, bytes);
        dst->n_snapshot_log = src->n_snapshot_log;
    }
    if (src->n_metadata_log == 0) return true;
    dst->metadata_log = calloc(src->n_metadata_log, sizeof *dst->metadata_log);
    if (dst->metadata_log == NULL) return false;
    for (; dst->n_metadata_log < src->n_metadata_log; dst->n_metadata_log++) {
        const tl_ice_metadata_log_entry *e = &src->metadata_log[dst->n_metadata_log];
        char *file = strdup(e->metadata_file);
        if (file == NULL) return false;
        dst->metadata_log[dst->n_metadata_log] =
            (tl_ice_metadata_log_entry){.metadata_file = file, .timestamp_ms = e->timestamp_ms};
    }
    return true;
}

static bool copy_refs(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    if (src->n_refs == 0) return true;
    if ((dst->refs = calloc(src->n_refs, sizeof *dst->refs)) == NULL) return false;
    for (; dst->n_refs < src->n_refs; dst->n_refs++) {
        tl_ice_ref r = src->refs[dst->n_refs];
        if ((r.name = strdup(r.name)) == NULL) return false;
        dst->refs[dst->n_refs] = r;
    }
    return true;
}

static bool copy_json(const json_t *src, json_t **dst)
{
    *dst = src ? json_deep_copy(src) : NULL;
    return src == NULL || *dst != NULL;
}

static bool copy_strings(const tl_ice_metadata *src, tl_ice_metadata *dst)
{
    dst->table_uuid = src->table_uuid ? strdup(src->table_uuid) : NULL;
    dst->location = strdup(src->location);
    return dst->location && (dst->table_uuid || !src->table_uuid);
}

tl_status tl_ice_metadata_copy(const tl_ice_metadata *md, tl_ice_metadata **out, tl_error *err)
{
    *out = NULL;
    tl_ice_metadata *c = calloc(1, sizeof *c);
    if (c == NULL) return tl_error_nomem(err);
    c->format_version = md->format_version;
    c->last_sequence_number = md->last_sequence_number;
    c->last_updated_ms = md->last_updated_ms;
    c->last_column_id = md->last_column_id;
    c->current_schema_id = md->current_schema_id;
    c->default_spec_id = md->default_spec_id;
    c->last_partition_id = md->last_partition_id;
    c->current_snapshot_id = md->current_snapshot_id;
    c->default_sort_order_id = md->default_sort_order_id;
    bool ok = copy_strings(md, c) && copy_schemas(md, c) && copy_specs(md, c) &&
              copy_orders(md, c) && copy_snapshots(md, c) && copy_logs(md, c) && copy_refs(md, c) &&
              copy_json(md->statistics, &c->statistics) &&
              copy_json(md->partition_statistics, &c->partition_statistics) &&
              copy_json(md->extra, &c->extra);
    if (ok && tl_kv_copy(md->properties, md->n_properties, &c->properties, NULL) == TL_OK)
        c->n_properties = md->n_properties;
    else
        ok = false;
    if (!ok) {
        tl_ice_metadata_free(c);
        return tl_error_nomem(err);
    }
    *out = c;
    return TL_OK;
}

/* ---- Lookups ---- */

const char *tl_ice_metadata_property(const tl_ice_metadata *md, const char *key)
{
    return tl_kv_find(md->properties, md->n_properties, key);
}

const tl_ice_schema *tl_ice_metadata_schema(const tl_ice_metadata *md, int32_t schema_id)
{
    for (size_t i = 0; i < md->n_schemas; i++)
        if (md->schemas[i].schema_id == schema_id) return &md->schemas[i];
    return NULL;
}

const tl_ice_schema *tl_ice_metadata_current_schema(const tl_ice_metadata *md)
{
    return tl_ice_metadata_schema(md, md->current_schema_id);
}

const tl_ice_partition_spec *tl_ice_metadata_spec(const tl_ice_metadata *md, int32_t spec_id)
{
    for (size_t i = 0; i < md->n_specs; i++)
        if (md->specs[i].spec_id == spec_id) return &md->specs[i];
    return NULL;
}

const tl_ice_partition_spec *tl_ice_metadata_default_spec(const tl_ice_metadata *md)
{
    return tl_ice_metadata_spec(md, md->default_spec_id);
}

const tl_ice_sort_order *tl_ice_metadata_default_sort_order(const tl_ice_metadata *md)
{
    for (size_t i = 0; i < md->n_sort_orders; i++)
        if (md->sort_orders[i].order_id == md->default_sort_order_id) return &md->sort_orders[i];
    return NULL;
}

const tl_ice_snapshot *tl_ice_metadata_snapshot(const tl_ice_metadata *md, int64_t snapshot_id)
{
    /* Newest last, and lookups are mostly of recent snapshots. */
    for (size_t i = md->n_snapshots; i > 0; i--)
        if (md->snapshots[i - 1].snapshot_id == snapshot_id) return &md->snapshots[i - 1];
    return NULL;
}

const tl_ice_snapshot *tl_ice_metadata_current_snapshot(const tl_ice_metadata *md)
{
    if (md->current_snapshot_id == -1) return NULL;
    return tl_ice_metadata_snapshot(md, md->current_snapshot_id);
}

const tl_ice_snapshot *tl_ice_metadata_parent(const tl_ice_metadata *md, const tl_ice_snapshot *s)
{
    if (!s->has_parent) return NULL;
    uintptr_t at = (uintptr_t)s, base = (uintptr_t)md->snapshots;
    size_t i = at >= base ? (at - base) / sizeof *s : 0;
    if (i > 0 && i < md->n_snapshots && &md->snapshots[i] == s &&
        md->snapshots[i - 1].snapshot_id == s->parent_snapshot_id)
        return &md->snapshots[i - 1];
    return tl_ice_metadata_snapshot(md, s->parent_snapshot_id);
}

const tl_ice_ref *tl_ice_metadata_ref(const tl_ice_metadata *md, const char *name)
{
    for (size_t i = 0; i < md->n_refs; i++)
        if (strcmp(md->refs[i].name, name) == 0) return &md->refs[i];
    return NULL;
}

const char *tl_ice_snapshot_summary(const tl_ice_snapshot *s, const char *key)
{
    return tl_kv_find(s->summary, s->n_summary, key);
}

int64_t tl_ice_metadata_version_of_key(const char *key)
{
    const char *base = strrchr(key, '/');
    base = base ? base + 1 : key;
    char *end = NULL;
    if (base[0] == 'v') { /* vN.metadata.json: Hadoop catalogs, the reference, ours */
        long long v = strtoll(base + 1, &end, 10);
        if (end == base + 1 || strcmp(end, ".metadata.json") != 0 || v <= 0) return -1;
        return v;
    }
    /* NNNNN-<uuid>.metadata.json: what JDBC and REST catalogs write, from
     * 00000 on; it counts as version NNNNN + 1, so that the next commit (ours,
     * v<N+1>.metadata.json) follows the newest of them. */
    if (base[0] < '0' || base[0] > '9') return -1;
    long long v = strtoll(base, &end, 10);
    size_t rest = end && *end == '-' ? strlen(end) : 0;
    if (v < 0 || rest <= strlen("-.metadata.json") ||
        strcmp(end + rest - 14, ".metadata.json") != 0)
        return -1;
    return v + 1;
}
