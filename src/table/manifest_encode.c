/* Encoding a manifest of the table's current schema and partition spec, for
 * appends and rewrites alike. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/partition_value.h"
#include "table/append.h"

/* The schema's JSON goes into every manifest's header, and building it with
 * jansson cost more than encoding a small append's manifest entries. A schema
 * never changes once in a table's metadata (a change adds one under a new
 * id), so its text is kept per (table uuid, schema id), process-wide. */
#define SCHEMA_SLOTS 16

static struct {
    pthread_mutex_t lock;
    struct {
        char *uuid, *json;
        int32_t id;
    } slot[SCHEMA_SLOTS];
    unsigned next; /* the slot replaced next */
} schema_texts = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A copy of the kept text, or NULL when there is none (or no memory). */
static char *kept_schema_json(const char *uuid, int32_t id)
{
    char *out = NULL;
    pthread_mutex_lock(&schema_texts.lock);
    for (size_t i = 0; i < SCHEMA_SLOTS && out == NULL; i++) {
        const char *u = schema_texts.slot[i].uuid;
        if (u && schema_texts.slot[i].id == id && strcmp(u, uuid) == 0)
            out = strdup(schema_texts.slot[i].json);
    }
    pthread_mutex_unlock(&schema_texts.lock);
    return out;
}

static void keep_schema_json(const char *uuid, int32_t id, const char *json)
{
    char *u = strdup(uuid), *j = strdup(json);
    if (u == NULL || j == NULL) { /* not kept: built again next time */
        free(u);
        free(j);
        return;
    }
    pthread_mutex_lock(&schema_texts.lock);
    unsigned i = schema_texts.next++ % SCHEMA_SLOTS;
    free(schema_texts.slot[i].uuid);
    free(schema_texts.slot[i].json);
    schema_texts.slot[i].uuid = u;
    schema_texts.slot[i].json = j;
    schema_texts.slot[i].id = id;
    pthread_mutex_unlock(&schema_texts.lock);
}

/* The current schema's JSON (the caller frees it). */
static tl_status schema_json(const tl_table *t, char **out, tl_error *err)
{
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    const char *uuid = t->md->table_uuid; /* NULL for a v1 table: not kept */
    if (uuid && s && (*out = kept_schema_json(uuid, s->schema_id)) != NULL) return TL_OK;
    TL_TRY(tl_ice_schema_to_json_string(s, out, err));
    if (uuid && s) keep_schema_json(uuid, s->schema_id, *out);
    return TL_OK;
}

static tl_status partition_types(const tl_table *t, const tl_ice_partition_spec *spec,
                                 tl_ice_partition_field_type *out, char (*types)[64], tl_error *err)
{
    const tl_ice_schema *schema = tl_ice_metadata_current_schema(t->md);
    for (size_t i = 0; i < spec->n_fields; i++) {
        const tl_ice_field *src = tl_ice_schema_field_by_id(schema, spec->fields[i].source_id);
        if (src == NULL)
            return tl_error_set(err, TL_ERR_INVALID, "partition field %s has no source column",
                                spec->fields[i].name);
        char type[TL_ICE_TYPE_STR_MAX];
        tl_ice_type_format(&src->type, type, sizeof type);
        TL_TRY(tl_ice_partition_avro_type(type, spec->fields[i].transform, types[i], 64, err));
        out[i] =
            (tl_ice_partition_field_type){spec->fields[i].name, spec->fields[i].field_id, types[i]};
    }
    return TL_OK;
}

tl_status tl_table_manifest_encode(const tl_table *t, const tl_ice_manifest_entry *entries,
                                   size_t n, tl_buf *out, tl_error *err)
{
    return tl_table_manifest_encode_spec(t, tl_ice_metadata_default_spec(t->md), entries, n, out,
                                         err);
}

tl_status tl_table_manifest_encode_spec(const tl_table *t, const tl_ice_partition_spec *spec,
                                        const tl_ice_manifest_entry *entries, size_t n, tl_buf *out,
                                        tl_error *err)
{
    size_t nf = spec ? spec->n_fields : 0;
    tl_ice_partition_field_type fields[nf + 1];
    char types[nf + 1][64];
    char *schema_text = NULL, *spec_json = NULL;
    tl_status st = nf ? partition_types(t, spec, fields, types, err) : TL_OK;
    if (st == TL_OK) st = schema_json(t, &schema_text, err);
    if (st == TL_OK && spec) st = tl_ice_partition_fields_to_json_string(spec, &spec_json, err);
    tl_ice_manifest_info info = {
        .schema_json = schema_text,
        .partition_spec_json = spec_json ? spec_json : "[]",
        .partition_spec_id = spec ? spec->spec_id : 0,
        .schema_id = t->md->current_schema_id,
        .format_version = 2,
        .content = 0,
        .partition_fields = fields,
        .n_partition_fields = nf,
    };
    if (st == TL_OK) st = tl_ice_manifest_write(&info, entries, n, out, err);
    free(schema_text);
    free(spec_json);
    return st;
}

tl_status tl_table_manifest_summarize(const tl_ice_data_file *const *files, size_t n,
                                      tl_ice_manifest_file *mf, tl_error *err)
{
    size_t nf = n ? files[0]->n_partition : 0;
    const tl_ice_value **tuples = malloc((n + 1) * sizeof *tuples);
    if (tuples == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < n; i++) {
        if (files[i]->n_partition != nf) nf = 0; /* mixed specs: no summary */
        tuples[i] = files[i]->partition;
    }
    tl_status st = tl_ice_partition_summaries(tuples, n, nf, &mf->partitions, err);
    if (st == TL_OK) mf->n_partitions = mf->partitions ? nf : 0;
    free(tuples);
    return st;
}
