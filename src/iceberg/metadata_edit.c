/* Building new table metadata and the edits of a commit. */
#include "iceberg/metadata.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/transform.h"

#define TL_ICE_PREVIOUS_VERSIONS_KEY "write.metadata.previous-versions-max"
#define TL_ICE_PREVIOUS_VERSIONS_DEFAULT 100

/* ---- New tables ---- */

static tl_status check_source(const tl_ice_schema *schema, int32_t source_id, const char *transform,
                              const char *what, tl_error *err)
{
    if (tl_ice_schema_field_by_id(schema, source_id) == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "%s: source field id %d is not in the schema",
                            what, (int)source_id);
    tl_ice_transform t;
    tl_status st = tl_ice_transform_parse(transform, &t, err);
    if (st != TL_OK) tl_error_prefix(err, "%s", what);
    return st;
}

static tl_status check_spec(const tl_ice_schema *schema, const tl_ice_partition_spec *spec,
                            tl_error *err)
{
    for (size_t i = 0; i < spec->n_fields; i++) {
        const tl_ice_partition_field *f = &spec->fields[i];
        if (f->name == NULL || f->name[0] == '\0')
            return tl_error_set(err, TL_ERR_INVALID, "partition field %zu has no name", i);
        TL_TRY(check_source(schema, f->source_id, f->transform, "partition spec", err));
        for (size_t j = 0; j < i; j++)
            if (spec->fields[j].field_id == f->field_id ||
                strcmp(spec->fields[j].name, f->name) == 0)
                return tl_error_set(err, TL_ERR_INVALID,
                                    "partition field \"%s\" repeats a field id or name", f->name);
    }
    return TL_OK;
}

static tl_status check_order(const tl_ice_schema *schema, const tl_ice_sort_order *order,
                             tl_error *err)
{
    if (order->order_id == 0 && order->n_fields > 0)
        return tl_error_set(err, TL_ERR_INVALID,
                            "sort order id 0 is reserved for the unsorted order");
    for (size_t i = 0; i < order->n_fields; i++)
        TL_TRY(check_source(schema, order->fields[i].source_id, order->fields[i].transform,
                            "sort order", err));
    return TL_OK;
}

static int32_t last_partition_id(const tl_ice_partition_spec *spec)
{
    /* Partition field ids start at 1000; 999 means none were assigned yet. */
    int32_t last = 999;
    for (size_t i = 0; i < spec->n_fields; i++)
        if (spec->fields[i].field_id > last) last = spec->fields[i].field_id;
    return last;
}

static tl_status fill_new(tl_ice_metadata *md, const char *table_uuid, const char *location,
                          const tl_ice_schema *schema, const tl_ice_partition_spec *spec,
                          const tl_ice_sort_order *order, const char *const *properties,
                          tl_error *err)
{
    md->table_uuid = strdup(table_uuid);
    md->location = strdup(location);
    md->schemas = calloc(1, sizeof *md->schemas);
    md->specs = calloc(1, sizeof *md->specs);
    md->sort_orders = calloc(1, sizeof *md->sort_orders);
    if (!md->table_uuid || !md->location || !md->schemas || !md->specs || !md->sort_orders)
        return tl_error_nomem(err);
    TL_TRY(tl_ice_schema_copy(schema, &md->schemas[0], err));
    md->n_schemas = 1;
    TL_TRY(tl_ice_partition_spec_copy(spec, &md->specs[0], err));
    md->n_specs = 1;
    TL_TRY(tl_ice_sort_order_copy(order, &md->sort_orders[0], err));
    md->n_sort_orders = 1;
    for (size_t i = 0; properties && properties[i]; i += 2) {
        if (properties[i + 1] == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "property \"%s\" has no value", properties[i]);
        TL_TRY(tl_ice_metadata_set_property(md, properties[i], properties[i + 1], err));
    }
    return TL_OK;
}

tl_status tl_ice_metadata_new(const char *table_uuid, const char *location,
                              const tl_ice_schema *schema, const tl_ice_partition_spec *spec,
                              const tl_ice_sort_order *order, const char *const *properties,
                              int64_t last_updated_ms, tl_ice_metadata **out, tl_error *err)
{
    static const tl_ice_partition_spec unpartitioned = {0};
    static const tl_ice_sort_order unsorted = {0};
    *out = NULL;
    if (table_uuid == NULL || location == NULL || schema == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "a new table needs a uuid, location and schema");
    if (spec == NULL) spec = &unpartitioned;
    if (order == NULL) order = &unsorted;
    TL_TRY(check_spec(schema, spec, err));
    TL_TRY(check_order(schema, order, err));
    tl_ice_metadata *md = calloc(1, sizeof *md);
    if (md == NULL) return tl_error_nomem(err);
    md->format_version = 2;
    md->last_updated_ms = last_updated_ms;
    md->last_column_id = tl_ice_schema_max_field_id(schema);
    md->current_schema_id = schema->schema_id;
    md->default_spec_id = spec->spec_id;
    md->last_partition_id = last_partition_id(spec);
    md->default_sort_order_id = order->order_id;
    md->current_snapshot_id = -1;
    tl_status st = fill_new(md, table_uuid, location, schema, spec, order, properties, err);
    if (st != TL_OK) {
        tl_ice_metadata_free(md);
        return st;
    }
    *out = md;
    return TL_OK;
}

/* ---- Properties ---- */

static void remove_property(tl_ice_metadata *md, size_t i)
{
    free(md->properties[i].key);
    free(md->properties[i].value);
    memmove(&md->properties[i], &md->properties[i + 1],
            (md->n_properties - i - 1) * sizeof *md->properties);
    md->n_properties--;
}

tl_status tl_ice_metadata_set_property(tl_ice_metadata *md, const char *key, const char *value,
                                       tl_error *err)
{
    size_t i = 0;
    while (i < md->n_properties && strcmp(md->properties[i].key, key) != 0) i++;
    if (value == NULL) {
        if (i < md->n_properties) remove_property(md, i);
        return TL_OK;
    }
    char *v = strdup(value);
    if (v == NULL) return tl_error_nomem(err);
    if (i < md->n_properties) {
        free(md->properties[i].value);
        md->properties[i].value = v;
        return TL_OK;
    }
    char *k = strdup(key);
    tl_kv *grown = k ? realloc(md->properties, (md->n_properties + 1) * sizeof *grown) : NULL;
    if (grown == NULL) {
        free(k);
        free(v);
        return tl_error_nomem(err);
    }
    md->properties = grown;
    md->properties[md->n_properties++] = (tl_kv){.key = k, .value = v};
    return TL_OK;
}

/* ---- Snapshots ---- */

static tl_status check_snapshot(const tl_ice_metadata *md, const tl_ice_snapshot *snap,
                                tl_error *err)
{
    long long id = (long long)snap->snapshot_id;
    if (snap->snapshot_id == -1 || tl_ice_metadata_snapshot(md, snap->snapshot_id) != NULL)
        return tl_error_set(err, TL_ERR_INVALID, "snapshot id %lld is already used or reserved",
                            id);
    if (snap->has_schema_id && tl_ice_metadata_schema(md, snap->schema_id) == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "snapshot %lld: schema %d does not exist", id,
                            (int)snap->schema_id);
    if (md->format_version < 2) return TL_OK;
    if (snap->manifest_list == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "snapshot %lld has no manifest list", id);
    if (tl_ice_snapshot_summary(snap, "operation") == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "snapshot %lld has no operation in its summary",
                            id);
    if (snap->sequence_number <= md->last_sequence_number)
        return tl_error_set(err, TL_ERR_INVALID,
                            "snapshot %lld: sequence number %lld is not above the table's %lld", id,
                            (long long)snap->sequence_number, (long long)md->last_sequence_number);
    return TL_OK;
}

/* Grows an array by one element (its count is not changed). */
static bool grow(void **array, size_t n, size_t elem)
{
    void *p = realloc(*array, (n + 1) * elem);
    if (p == NULL) return false;
    *array = p;
    return true;
}

static size_t previous_versions_max(const tl_ice_metadata *md)
{
    const char *v = tl_ice_metadata_property(md, TL_ICE_PREVIOUS_VERSIONS_KEY);
    if (v == NULL) return TL_ICE_PREVIOUS_VERSIONS_DEFAULT;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0') return TL_ICE_PREVIOUS_VERSIONS_DEFAULT;
    return n < 1 ? 1 : (size_t)n;
}

static void trim_metadata_log(tl_ice_metadata *md)
{
    size_t max = previous_versions_max(md);
    if (md->n_metadata_log <= max) return;
    size_t drop = md->n_metadata_log - max;
    for (size_t i = 0; i < drop; i++) free(md->metadata_log[i].metadata_file);
    memmove(md->metadata_log, md->metadata_log + drop, max * sizeof *md->metadata_log);
    md->n_metadata_log = max;
}

tl_status tl_ice_metadata_log_previous(tl_ice_metadata *md, const char *previous_metadata_file,
                                       int64_t timestamp_ms, tl_error *err)
{
    char *file = strdup(previous_metadata_file);
    if (file == NULL || !grow((void **)&md->metadata_log, md->n_metadata_log,
                              sizeof *md->metadata_log)) {
        free(file);
        return tl_error_nomem(err);
    }
    md->metadata_log[md->n_metadata_log++] =
        (tl_ice_metadata_log_entry){.metadata_file = file, .timestamp_ms = timestamp_ms};
    trim_metadata_log(md);
    return TL_OK;
}

/* Everything add_snapshot allocates, made before md is touched so failure leaves it whole. */
typedef struct tl_ice_snapshot_staging {
    tl_ice_snapshot snap;
    char *previous_file;
    char *main_name; /* set when refs.main must be created */
} tl_ice_snapshot_staging;

static tl_status stage_snapshot(tl_ice_metadata *md, const tl_ice_snapshot *snap,
                                const char *previous_file, tl_ice_snapshot_staging *st,
                                tl_error *err)
{
    TL_TRY(tl_ice_snapshot_copy(snap, &st->snap, err));
    bool ok = grow((void **)&md->snapshots, md->n_snapshots, sizeof *md->snapshots) &&
              grow((void **)&md->snapshot_log, md->n_snapshot_log, sizeof *md->snapshot_log);
    if (ok && previous_file)
        ok = (st->previous_file = strdup(previous_file)) != NULL &&
             grow((void **)&md->metadata_log, md->n_metadata_log, sizeof *md->metadata_log);
    if (ok && tl_ice_metadata_ref(md, "main") == NULL)
        ok = (st->main_name = strdup("main")) != NULL &&
             grow((void **)&md->refs, md->n_refs, sizeof *md->refs);
    if (ok) return TL_OK;
    tl_ice_snapshot_free(&st->snap);
    free(st->previous_file);
    free(st->main_name);
    return tl_error_nomem(err);
}

tl_status tl_ice_metadata_add_snapshot(tl_ice_metadata *md, const tl_ice_snapshot *snap,
                                       const char *previous_metadata_file, tl_error *err)
{
    TL_TRY(check_snapshot(md, snap, err));
    tl_ice_snapshot_staging st = {0};
    TL_TRY(stage_snapshot(md, snap, previous_metadata_file, &st, err));
    if (st.previous_file)
        md->metadata_log[md->n_metadata_log++] = (tl_ice_metadata_log_entry){
            .metadata_file = st.previous_file, .timestamp_ms = md->last_updated_ms};
    if (st.main_name)
        md->refs[md->n_refs++] = (tl_ice_ref){.name = st.main_name,
                                              .min_snapshots_to_keep = -1,
                                              .max_snapshot_age_ms = -1,
                                              .max_ref_age_ms = -1};
    tl_ice_ref *main = (tl_ice_ref *)tl_ice_metadata_ref(md, "main");
    main->snapshot_id = snap->snapshot_id;
    main->is_tag = false;
    md->snapshots[md->n_snapshots++] = st.snap;
    md->snapshot_log[md->n_snapshot_log++] = (tl_ice_snapshot_log_entry){
        .snapshot_id = snap->snapshot_id, .timestamp_ms = snap->timestamp_ms};
    md->current_snapshot_id = snap->snapshot_id;
    if (md->format_version >= 2) md->last_sequence_number = snap->sequence_number;
    md->last_updated_ms = snap->timestamp_ms;
    trim_metadata_log(md);
    return TL_OK;
}

tl_status tl_ice_metadata_set_current_snapshot(tl_ice_metadata *md, int64_t snapshot_id,
                                               int64_t now_ms, tl_error *err)
{
    if (tl_ice_metadata_snapshot(md, snapshot_id) == NULL)
        return tl_error_set(err, TL_ERR_NOT_FOUND, "snapshot %lld does not exist",
                            (long long)snapshot_id);
    char *main_name = NULL;
    bool ok = grow((void **)&md->snapshot_log, md->n_snapshot_log, sizeof *md->snapshot_log);
    if (ok && tl_ice_metadata_ref(md, "main") == NULL)
        ok = (main_name = strdup("main")) != NULL &&
             grow((void **)&md->refs, md->n_refs, sizeof *md->refs);
    if (!ok) {
        free(main_name);
        return tl_error_nomem(err);
    }
    if (main_name)
        md->refs[md->n_refs++] = (tl_ice_ref){.name = main_name,
                                              .min_snapshots_to_keep = -1,
                                              .max_snapshot_age_ms = -1,
                                              .max_ref_age_ms = -1};
    tl_ice_ref *main = (tl_ice_ref *)tl_ice_metadata_ref(md, "main");
    main->snapshot_id = snapshot_id;
    main->is_tag = false;
    md->snapshot_log[md->n_snapshot_log++] =
        (tl_ice_snapshot_log_entry){.snapshot_id = snapshot_id, .timestamp_ms = now_ms};
    md->current_snapshot_id = snapshot_id;
    return TL_OK;
}

/* ---- Schema and partition evolution ---- */

int32_t tl_ice_metadata_partition_field_id(const tl_ice_metadata *md, int32_t source_id,
                                           const char *transform, const char *name)
{
    for (size_t s = 0; s < md->n_specs; s++)
        for (size_t i = 0; i < md->specs[s].n_fields; i++) {
            const tl_ice_partition_field *f = &md->specs[s].fields[i];
            if (f->source_id == source_id && strcmp(f->transform, transform) == 0 &&
                strcmp(f->name, name) == 0)
                return f->field_id;
        }
    return -1;
}

static bool same_spec_fields(const tl_ice_partition_spec *a, const tl_ice_partition_spec *b)
{
    if (a->n_fields != b->n_fields) return false;
    for (size_t i = 0; i < a->n_fields; i++) {
        const tl_ice_partition_field *x = &a->fields[i], *y = &b->fields[i];
        if (x->source_id != y->source_id || x->field_id != y->field_id ||
            strcmp(x->name, y->name) != 0 || strcmp(x->transform, y->transform) != 0)
            return false;
    }
    return true;
}

static tl_status use_schema(tl_ice_metadata *md, const tl_ice_schema *schema, tl_error *err)
{
    int32_t next = 0;
    for (size_t i = 0; i < md->n_schemas; i++) {
        if (tl_ice_schema_same_fields(&md->schemas[i], schema)) {
            md->current_schema_id = md->schemas[i].schema_id;
            return TL_OK;
        }
        if (md->schemas[i].schema_id >= next) next = md->schemas[i].schema_id + 1;
    }
    if (!grow((void **)&md->schemas, md->n_schemas, sizeof *md->schemas))
        return tl_error_nomem(err);
    TL_TRY(tl_ice_schema_copy(schema, &md->schemas[md->n_schemas], err));
    md->schemas[md->n_schemas++].schema_id = next;
    md->current_schema_id = next;
    int32_t top = tl_ice_schema_max_field_id(schema);
    if (top > md->last_column_id) md->last_column_id = top;
    return TL_OK;
}

static tl_status use_spec(tl_ice_metadata *md, const tl_ice_partition_spec *spec, tl_error *err)
{
    int32_t next = 0;
    for (size_t i = 0; i < md->n_specs; i++) {
        if (same_spec_fields(&md->specs[i], spec)) {
            md->default_spec_id = md->specs[i].spec_id;
            return TL_OK;
        }
        if (md->specs[i].spec_id >= next) next = md->specs[i].spec_id + 1;
    }
    if (!grow((void **)&md->specs, md->n_specs, sizeof *md->specs)) return tl_error_nomem(err);
    TL_TRY(tl_ice_partition_spec_copy(spec, &md->specs[md->n_specs], err));
    md->specs[md->n_specs++].spec_id = next;
    md->default_spec_id = next;
    int32_t top = last_partition_id(spec);
    if (top > md->last_partition_id) md->last_partition_id = top;
    return TL_OK;
}

/* The default sort order must name fields of the current schema: when one
 * is gone, the table becomes unsorted (order 0, added when missing). */
static tl_status fit_sort_order(tl_ice_metadata *md, const tl_ice_schema *schema, tl_error *err)
{
    const tl_ice_sort_order *order = tl_ice_metadata_default_sort_order(md);
    bool fits = true;
    for (size_t i = 0; order && i < order->n_fields; i++)
        fits = fits && tl_ice_schema_field_by_id(schema, order->fields[i].source_id) != NULL;
    if (fits) return TL_OK;
    md->default_sort_order_id = 0;
    for (size_t i = 0; i < md->n_sort_orders; i++)
        if (md->sort_orders[i].order_id == 0) return TL_OK;
    if (!grow((void **)&md->sort_orders, md->n_sort_orders, sizeof *md->sort_orders))
        return tl_error_nomem(err);
    md->sort_orders[md->n_sort_orders++] = (tl_ice_sort_order){0};
    return TL_OK;
}

tl_status tl_ice_metadata_evolve(tl_ice_metadata *md, const tl_ice_schema *schema,
                                 const tl_ice_partition_spec *spec, tl_error *err)
{
    static const tl_ice_partition_spec unpartitioned = {0};
    if (spec == NULL) spec = &unpartitioned;
    for (size_t i = 0; i < schema->n_fields; i++)
        for (size_t j = 0; j < i; j++)
            if (schema->fields[i].id == schema->fields[j].id)
                return tl_error_set(err, TL_ERR_INVALID, "schema field id %d is used twice",
                                    (int)schema->fields[i].id);
    TL_TRY(check_spec(schema, spec, err));
    TL_TRY(use_schema(md, schema, err));
    TL_TRY(use_spec(md, spec, err));
    return fit_sort_order(md, schema, err);
}
