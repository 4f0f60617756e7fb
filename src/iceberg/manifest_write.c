/* Writes manifests in the reference implementation's exact Avro shape. The
 * schema text is assembled from the fixed fields around the partition record,
 * parsed (which validates the partition types) and printed back by the Avro
 * writer; entries are encoded directly in schema order. */
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_file.h"
#include "iceberg/manifest.h"
#include "core/json_text.h"

/* The schema text, one field a line as the reference orders them. */
// clang-format off
#define TL_MWRITE_REQ(name, type, id) \
    "{\"name\":\"" name "\",\"type\":\"" type "\",\"field-id\":" #id "}"
#define TL_MWRITE_OPT(name, type, id) \
    "{\"name\":\"" name "\",\"type\":[\"null\",\"" type "\"],\"default\":null,\"field-id\":" #id "}"
/* An int-keyed map: an array of key/value records named k<key-id>_v<value-id>. */
#define TL_MWRITE_MAP(name, id, kid, vid, vtype) \
    "{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{" \
    "\"type\":\"record\",\"name\":\"k" #kid "_v" #vid "\",\"fields\":[" \
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #kid "}," \
    "{\"name\":\"value\",\"type\":\"" vtype "\",\"field-id\":" #vid "}]}," \
    "\"logicalType\":\"map\"}],\"default\":null,\"field-id\":" #id "}"
#define TL_MWRITE_LIST(name, id, type, eid) \
    "{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"" type "\"," \
    "\"element-id\":" #eid "}],\"default\":null,\"field-id\":" #id "}"

#define TL_MWRITE_ENTRY_START \
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
#define TL_MWRITE_DATA_FILE_START \
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
#define TL_MWRITE_PARTITION_START \
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":"
#define TL_MWRITE_PARTITION_END "},\"field-id\":102},"
#define TL_MWRITE_DATA_FILE_END "]},\"field-id\":2}]}"

#define TL_MWRITE_STATS \
    TL_MWRITE_MAP("column_sizes", 108, 117, 118, "long") "," \
    TL_MWRITE_MAP("value_counts", 109, 119, 120, "long") "," \
    TL_MWRITE_MAP("null_value_counts", 110, 121, 122, "long") "," \
    TL_MWRITE_MAP("nan_value_counts", 137, 138, 139, "long") "," \
    TL_MWRITE_MAP("lower_bounds", 125, 126, 127, "bytes") "," \
    TL_MWRITE_MAP("upper_bounds", 128, 129, 130, "bytes") "," \
    TL_MWRITE_OPT("key_metadata", "bytes", 131) "," \
    TL_MWRITE_LIST("split_offsets", 132, "long", 133)

/* Up to the partition record's fields. */
static const char tl_mwrite_head_v2[] =
    TL_MWRITE_ENTRY_START
    TL_MWRITE_REQ("status", "int", 0) ","
    TL_MWRITE_OPT("snapshot_id", "long", 1) ","
    TL_MWRITE_OPT("sequence_number", "long", 3) ","
    TL_MWRITE_OPT("file_sequence_number", "long", 4) ","
    TL_MWRITE_DATA_FILE_START
    "{\"name\":\"content\",\"type\":\"int\",\"default\":0,\"field-id\":134},"
    TL_MWRITE_REQ("file_path", "string", 100) ","
    TL_MWRITE_REQ("file_format", "string", 101) ","
    TL_MWRITE_PARTITION_START;

/* After the partition record's fields. */
static const char tl_mwrite_tail_v2[] =
    TL_MWRITE_PARTITION_END
    TL_MWRITE_REQ("record_count", "long", 103) ","
    TL_MWRITE_REQ("file_size_in_bytes", "long", 104) ","
    TL_MWRITE_STATS ","
    TL_MWRITE_LIST("equality_ids", 135, "int", 136) ","
    TL_MWRITE_OPT("sort_order_id", "int", 140) ","
    TL_MWRITE_OPT("first_row_id", "long", 142) ","
    TL_MWRITE_OPT("referenced_data_file", "string", 143) ","
    TL_MWRITE_OPT("content_offset", "long", 144) ","
    TL_MWRITE_OPT("content_size_in_bytes", "long", 145)
    TL_MWRITE_DATA_FILE_END;

static const char tl_mwrite_head_v1[] =
    TL_MWRITE_ENTRY_START
    TL_MWRITE_REQ("status", "int", 0) ","
    TL_MWRITE_REQ("snapshot_id", "long", 1) ","
    TL_MWRITE_DATA_FILE_START
    TL_MWRITE_REQ("file_path", "string", 100) ","
    TL_MWRITE_REQ("file_format", "string", 101) ","
    TL_MWRITE_PARTITION_START;

static const char tl_mwrite_tail_v1[] =
    TL_MWRITE_PARTITION_END
    TL_MWRITE_REQ("record_count", "long", 103) ","
    TL_MWRITE_REQ("file_size_in_bytes", "long", 104) ","
    TL_MWRITE_REQ("block_size_in_bytes", "long", 105) ","
    TL_MWRITE_STATS ","
    TL_MWRITE_OPT("sort_order_id", "int", 140)
    TL_MWRITE_DATA_FILE_END;
// clang-format on

/* What v1 writers store in the deprecated block_size_in_bytes. */
#define TL_MWRITE_V1_BLOCK_SIZE 67108864

/* Java Iceberg's rule for field names that are not valid Avro names: an
 * invalid first character or any invalid later one becomes "_x" and its hex
 * code, a digit first becomes "_" and the digit. */
static char *tl_mwrite_avro_name(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(n * 4 + 2);
    if (out == NULL) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
        bool digit = c >= '0' && c <= '9';
        if (letter || (digit && i > 0))
            out[o++] = (char)c;
        else if (digit)
            o += (size_t)sprintf(out + o, "_%c", c);
        else
            o += (size_t)sprintf(out + o, "_x%X", c);
    }
    out[o] = '\0';
    return out;
}

/* Reuses the name of a fixed/enum/record type defined by an earlier field:
 * Avro forbids defining a name twice (two decimal(9,2) partitions). */
static json_t *tl_mwrite_dedupe_named(json_t *type, json_t *seen)
{
    const char *name = json_string_value(json_object_get(type, "name"));
    if (name == NULL) return type;
    if (json_object_get(seen, name)) {
        json_t *ref = json_string(name);
        json_decref(type);
        return ref;
    }
    json_object_set_new(seen, name, json_true());
    return type;
}

static tl_status tl_mwrite_partition_field(const tl_ice_partition_field_type *pf, json_t *seen,
                                           json_t *fields, tl_error *err)
{
    json_error_t jerr;
    const char *text = pf->avro_type_json ? pf->avro_type_json : "";
    bool nomem;
    json_t *type = tl_json_loadb(text, strlen(text), JSON_DECODE_ANY, &jerr, &nomem);
    if (nomem) return tl_error_nomem(err);
    if (type == NULL || json_is_array(type) || json_is_null(type)) {
        json_decref(type);
        return tl_error_set(err, TL_ERR_INVALID, "partition field \"%s\": bad Avro type %s",
                            pf->name, pf->avro_type_json ? pf->avro_type_json : "(null)");
    }
    type = tl_mwrite_dedupe_named(type, seen);
    char *avro_name = tl_mwrite_avro_name(pf->name);
    json_t *f = json_object();
    json_t *u = json_array();
    int rc = avro_name && f && u && type ? 0 : -1;
    rc |= json_array_append_new(u, json_string("null"));
    rc |= json_array_append(u, type);
    rc |= json_object_set_new(f, "name", json_string(avro_name ? avro_name : ""));
    rc |= json_object_set_new(f, "type", u);
    rc |= json_object_set_new(f, "default", json_null());
    rc |= json_object_set_new(f, "field-id", json_integer(pf->field_id));
    if (avro_name && strcmp(avro_name, pf->name) != 0)
        rc |= json_object_set_new(f, "iceberg-field-name", json_string(pf->name));
    rc |= json_array_append_new(fields, f);
    json_decref(type);
    free(avro_name);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_mwrite_schema_text(const tl_ice_manifest_info *info, tl_buf *out, tl_error *err)
{
    for (size_t i = 0; i < info->n_partition_fields; i++)
        if (info->partition_fields[i].name == NULL || info->partition_fields[i].name[0] == '\0')
            return tl_error_set(err, TL_ERR_INVALID, "partition field %zu has no name", i);
    json_t *fields = json_array(), *seen = json_object();
    tl_status st = fields && seen ? TL_OK : tl_error_nomem(err);
    for (size_t i = 0; st == TL_OK && i < info->n_partition_fields; i++)
        st = tl_mwrite_partition_field(&info->partition_fields[i], seen, fields, err);
    char *text = st == TL_OK ? tl_json_dumps(fields, JSON_COMPACT) : NULL;
    if (st == TL_OK && text == NULL) st = tl_error_nomem(err);
    json_decref(fields);
    json_decref(seen);
    if (st != TL_OK) return st;
    bool v1 = info->format_version == 1;
    int rc = tl_buf_append_str(out, v1 ? tl_mwrite_head_v1 : tl_mwrite_head_v2);
    rc |= tl_buf_append_str(out, text);
    rc |= tl_buf_append_str(out, v1 ? tl_mwrite_tail_v1 : tl_mwrite_tail_v2);
    free(text);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

/* ---- Entry encoding: each returns non-zero when memory runs out ---- */

static int tl_mwrite_opt_long(tl_buf *b, bool has, int64_t v)
{
    if (!has) return tl_avro_write_long(b, 0);
    return tl_avro_write_long(b, 1) | tl_avro_write_long(b, v);
}

static int tl_mwrite_counts(tl_buf *b, const tl_ice_count *c, size_t n)
{
    if (n == 0) return tl_avro_write_long(b, 0);
    int rc = tl_avro_write_long(b, 1) | tl_avro_write_long(b, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        rc |= tl_avro_write_long(b, c[i].field_id) | tl_avro_write_long(b, c[i].value);
    return rc | tl_avro_write_long(b, 0);
}

static int tl_mwrite_bounds(tl_buf *b, const tl_ice_bound *c, size_t n)
{
    if (n == 0) return tl_avro_write_long(b, 0);
    int rc = tl_avro_write_long(b, 1) | tl_avro_write_long(b, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        rc |= tl_avro_write_long(b, c[i].field_id) | tl_avro_write_bytes(b, c[i].data, c[i].len);
    return rc | tl_avro_write_long(b, 0);
}

static int tl_mwrite_longs(tl_buf *b, const int64_t *v, size_t n)
{
    if (n == 0) return tl_avro_write_long(b, 0);
    int rc = tl_avro_write_long(b, 1) | tl_avro_write_long(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) rc |= tl_avro_write_long(b, v[i]);
    return rc | tl_avro_write_long(b, 0);
}

static int tl_mwrite_ints(tl_buf *b, const int32_t *v, size_t n)
{
    if (n == 0) return tl_avro_write_long(b, 0);
    int rc = tl_avro_write_long(b, 1) | tl_avro_write_long(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) rc |= tl_avro_write_long(b, v[i]);
    return rc | tl_avro_write_long(b, 0);
}

static int tl_mwrite_opt_bytes(tl_buf *b, const void *data, size_t len)
{
    if (data == NULL) return tl_avro_write_long(b, 0);
    return tl_avro_write_long(b, 1) | tl_avro_write_bytes(b, data, len);
}

static int tl_mwrite_opt_string(tl_buf *b, const char *s)
{
    return tl_mwrite_opt_bytes(b, s, s ? strlen(s) : 0);
}

/* A partition value as branch 1 of ["null", t], checking it fits t. */
static tl_status tl_mwrite_partition_value(tl_buf *b, const tl_avro_type *t, const tl_ice_value *v,
                                           tl_error *err)
{
    if (v->kind == TL_ICE_VALUE_NULL)
        return tl_avro_write_long(b, 0) == 0 ? TL_OK : tl_error_nomem(err);
    bool ok;
    switch (v->kind) {
    case TL_ICE_VALUE_INT:
    case TL_ICE_VALUE_LONG:
        ok = t->kind == TL_AVRO_LONG ||
             (t->kind == TL_AVRO_INT && v->i >= INT32_MIN && v->i <= INT32_MAX);
        break;
    case TL_ICE_VALUE_STRING:
        ok = t->kind == TL_AVRO_STRING;
        break;
    case TL_ICE_VALUE_BYTES:
        ok = t->kind == TL_AVRO_BYTES || (t->kind == TL_AVRO_FIXED && v->len == t->fixed_size);
        break;
    case TL_ICE_VALUE_BOOL:
        ok = t->kind == TL_AVRO_BOOLEAN;
        break;
    case TL_ICE_VALUE_FLOAT:
        ok = t->kind == TL_AVRO_FLOAT;
        break;
    case TL_ICE_VALUE_DOUBLE:
        ok = t->kind == TL_AVRO_DOUBLE;
        break;
    default:
        ok = false;
    }
    if (!ok)
        return tl_error_set(err, TL_ERR_INVALID, "value of kind %d does not fit Avro type %s",
                            (int)v->kind, tl_avro_kind_name(t->kind));
    int rc = tl_avro_write_long(b, 1);
    switch (t->kind) {
    case TL_AVRO_BOOLEAN:
        rc |= tl_avro_write_bool(b, v->i != 0);
        break;
    case TL_AVRO_FLOAT:
        rc |= tl_avro_write_float(b, (float)v->d);
        break;
    case TL_AVRO_DOUBLE:
        rc |= tl_avro_write_double(b, v->d);
        break;
    case TL_AVRO_FIXED:
        rc |= tl_buf_append(b, v->bytes, v->len);
        break;
    case TL_AVRO_BYTES:
    case TL_AVRO_STRING:
        rc |= tl_avro_write_bytes(b, v->bytes, v->len);
        break;
    default:
        rc |= tl_avro_write_long(b, v->i);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_mwrite_partition(tl_buf *b, const tl_avro_type *rec, const tl_ice_data_file *f,
                                     tl_error *err)
{
    if (f->n_partition != rec->n_fields)
        return tl_error_set(err, TL_ERR_INVALID, "%zu partition values for %zu partition fields",
                            f->n_partition, rec->n_fields);
    for (size_t i = 0; i < rec->n_fields; i++) {
        tl_status st =
            tl_mwrite_partition_value(b, rec->fields[i].type->branches[1], &f->partition[i], err);
        if (st != TL_OK) {
            tl_error_prefix(err, "partition field \"%s\"", rec->fields[i].name);
            return st;
        }
    }
    return TL_OK;
}

static tl_status tl_mwrite_entry(tl_buf *b, const tl_avro_type *partition, int version,
                                 const tl_ice_manifest_entry *e, tl_error *err)
{
    const tl_ice_data_file *f = &e->file;
    if (f->file_path == NULL) return tl_error_set(err, TL_ERR_INVALID, "data file without a path");
    if (version == 1 && (!e->has_snapshot_id || f->content != 0))
        return tl_error_set(err, TL_ERR_INVALID,
                            "v1 manifests need a snapshot id and hold only data files");
    int rc = tl_avro_write_long(b, e->status);
    if (version == 1) {
        rc |= tl_avro_write_long(b, e->snapshot_id);
    } else {
        rc |= tl_mwrite_opt_long(b, e->has_snapshot_id, e->snapshot_id);
        rc |= tl_mwrite_opt_long(b, e->has_sequence_number, e->sequence_number);
        rc |= tl_mwrite_opt_long(b, e->has_file_sequence_number, e->file_sequence_number);
        rc |= tl_avro_write_long(b, f->content);
    }
    rc |= tl_avro_write_string(b, f->file_path);
    rc |= tl_avro_write_string(b, f->file_format ? f->file_format : "PARQUET");
    if (rc != 0) return tl_error_nomem(err);
    TL_TRY(tl_mwrite_partition(b, partition, f, err));
    rc = tl_avro_write_long(b, f->record_count) | tl_avro_write_long(b, f->file_size_in_bytes);
    if (version == 1) rc |= tl_avro_write_long(b, TL_MWRITE_V1_BLOCK_SIZE);
    rc |= tl_mwrite_counts(b, f->column_sizes, f->n_column_sizes);
    rc |= tl_mwrite_counts(b, f->value_counts, f->n_value_counts);
    rc |= tl_mwrite_counts(b, f->null_value_counts, f->n_null_value_counts);
    rc |= tl_mwrite_counts(b, f->nan_value_counts, f->n_nan_value_counts);
    rc |= tl_mwrite_bounds(b, f->lower_bounds, f->n_lower_bounds);
    rc |= tl_mwrite_bounds(b, f->upper_bounds, f->n_upper_bounds);
    rc |= tl_mwrite_opt_bytes(b, f->key_metadata, f->key_metadata_len);
    rc |= tl_mwrite_longs(b, f->split_offsets, f->n_split_offsets);
    if (version != 1) rc |= tl_mwrite_ints(b, f->equality_ids, f->n_equality_ids);
    rc |= tl_mwrite_opt_long(b, f->has_sort_order_id, f->sort_order_id);
    if (version != 1) {
        rc |= tl_mwrite_opt_long(b, f->has_first_row_id, f->first_row_id);
        rc |= tl_mwrite_opt_string(b, f->referenced_data_file);
        rc |= tl_mwrite_opt_long(b, f->has_content_offset, f->content_offset);
        rc |= tl_mwrite_opt_long(b, f->has_content_size_in_bytes, f->content_size_in_bytes);
    }
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_mwrite_write_entries(const tl_ice_manifest_info *info,
                                         const tl_avro_schema *schema,
                                         const tl_ice_manifest_entry *entries, size_t n,
                                         tl_buf *out, tl_error *err)
{
    char schema_id[16], spec_id[16], version[16];
    snprintf(schema_id, sizeof schema_id, "%d", (int)info->schema_id);
    snprintf(spec_id, sizeof spec_id, "%d", (int)info->partition_spec_id);
    snprintf(version, sizeof version, "%d", info->format_version);
    const char *meta[] = {"schema",
                          info->schema_json ? info->schema_json : "",
                          "schema-id",
                          schema_id,
                          "partition-spec",
                          info->partition_spec_json ? info->partition_spec_json : "[]",
                          "partition-spec-id",
                          spec_id,
                          "format-version",
                          version,
                          "content",
                          info->content == 0 ? "data" : "deletes",
                          NULL};
    const tl_avro_type *data_file = tl_avro_field_by_name(schema->root, "data_file")->type;
    const tl_avro_type *partition = tl_avro_field_by_name(data_file, "partition")->type;
    tl_avro_writer w;
    TL_TRY(tl_avro_writer_begin(&w, schema, meta, NULL, out, err));
    for (size_t i = 0; i < n; i++) {
        tl_status st = tl_mwrite_entry(tl_avro_writer_block(&w), partition, info->format_version,
                                       &entries[i], err);
        if (st == TL_OK) st = tl_avro_writer_end_datum(&w, err);
        if (st != TL_OK) {
            tl_avro_writer_discard(&w);
            tl_error_prefix(err, "manifest entry %zu", i);
            return st;
        }
    }
    return tl_avro_writer_finish(&w, err);
}

tl_status tl_ice_manifest_write(const tl_ice_manifest_info *info,
                                const tl_ice_manifest_entry *entries, size_t n, tl_buf *out,
                                tl_error *err)
{
    if (info->format_version != 1 && info->format_version != 2)
        return tl_error_set(err, TL_ERR_INVALID, "cannot write manifests of format version %d",
                            info->format_version);
    if (info->format_version == 1 && info->content != 0)
        return tl_error_set(err, TL_ERR_INVALID, "v1 tables have no delete manifests");
    tl_buf text = {0};
    tl_avro_schema *schema = NULL;
    tl_status st = tl_mwrite_schema_text(info, &text, err);
    if (st == TL_OK) st = tl_avro_schema_shared((const char *)text.data, text.len, &schema, err);
    tl_buf_free(&text);
    size_t mark = out->len;
    if (st == TL_OK) st = tl_mwrite_write_entries(info, schema, entries, n, out, err);
    tl_avro_schema_free(schema);
    if (st != TL_OK) {
        if (out->data) out->data[out->len = mark] = '\0';
        tl_error_prefix(err, "writing manifest");
    }
    return st;
}
