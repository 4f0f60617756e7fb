/* Encoding a manifest of the table's current schema and partition spec, for
 * appends and rewrites alike. */
#include <stdlib.h>

#include "iceberg/partition_value.h"
#include "table/append.h"

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
    char *schema_json = NULL, *spec_json = NULL;
    tl_status st = nf ? partition_types(t, spec, fields, types, err) : TL_OK;
    if (st == TL_OK)
        st = tl_ice_schema_to_json_string(tl_ice_metadata_current_schema(t->md), &schema_json, err);
    if (st == TL_OK && spec) st = tl_ice_partition_fields_to_json_string(spec, &spec_json, err);
    tl_ice_manifest_info info = {
        .schema_json = schema_json,
        .partition_spec_json = spec_json ? spec_json : "[]",
        .partition_spec_id = spec ? spec->spec_id : 0,
        .schema_id = t->md->current_schema_id,
        .format_version = 2,
        .content = 0,
        .partition_fields = fields,
        .n_partition_fields = nf,
    };
    if (st == TL_OK) st = tl_ice_manifest_write(&info, entries, n, out, err);
    free(schema_json);
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
