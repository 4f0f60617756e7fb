#include "iceberg/manifest_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_file.h"

/* ---- Writing ---- */

/* The schema text, one field a line as the reference orders them. */
// clang-format off
#define TL_MLIST_REQ(name, type, id) \
    "{\"name\":\"" name "\",\"type\":\"" type "\",\"field-id\":" #id "}"
#define TL_MLIST_OPT(name, type, id) \
    "{\"name\":\"" name "\",\"type\":[\"null\",\"" type "\"],\"default\":null,\"field-id\":" #id "}"
#define TL_MLIST_PARTITIONS \
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{" \
    "\"type\":\"record\",\"name\":\"r508\",\"fields\":[" \
    TL_MLIST_REQ("contains_null", "boolean", 509) "," \
    TL_MLIST_OPT("contains_nan", "boolean", 518) "," \
    TL_MLIST_OPT("lower_bound", "bytes", 510) "," \
    TL_MLIST_OPT("upper_bound", "bytes", 511) \
    "]},\"element-id\":508}],\"default\":null,\"field-id\":507}"
#define TL_MLIST_START "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
#define TL_MLIST_END "]}"

static const char tl_mlist_schema_v2[] =
    TL_MLIST_START
    TL_MLIST_REQ("manifest_path", "string", 500) ","
    TL_MLIST_REQ("manifest_length", "long", 501) ","
    TL_MLIST_REQ("partition_spec_id", "int", 502) ","
    TL_MLIST_REQ("content", "int", 517) ","
    TL_MLIST_REQ("sequence_number", "long", 515) ","
    TL_MLIST_REQ("min_sequence_number", "long", 516) ","
    TL_MLIST_REQ("added_snapshot_id", "long", 503) ","
    TL_MLIST_REQ("added_files_count", "int", 504) ","
    TL_MLIST_REQ("existing_files_count", "int", 505) ","
    TL_MLIST_REQ("deleted_files_count", "int", 506) ","
    TL_MLIST_REQ("added_rows_count", "long", 512) ","
    TL_MLIST_REQ("existing_rows_count", "long", 513) ","
    TL_MLIST_REQ("deleted_rows_count", "long", 514) ","
    TL_MLIST_PARTITIONS ","
    TL_MLIST_OPT("key_metadata", "bytes", 519)
    TL_MLIST_END;

/* Java Iceberg's v1 shape: optional counts named *_data_files_count. */
static const char tl_mlist_schema_v1[] =
    TL_MLIST_START
    TL_MLIST_REQ("manifest_path", "string", 500) ","
    TL_MLIST_REQ("manifest_length", "long", 501) ","
    TL_MLIST_REQ("partition_spec_id", "int", 502) ","
    TL_MLIST_OPT("added_snapshot_id", "long", 503) ","
    TL_MLIST_OPT("added_data_files_count", "int", 504) ","
    TL_MLIST_OPT("existing_data_files_count", "int", 505) ","
    TL_MLIST_OPT("deleted_data_files_count", "int", 506) ","
    TL_MLIST_PARTITIONS ","
    TL_MLIST_OPT("added_rows_count", "long", 512) ","
    TL_MLIST_OPT("existing_rows_count", "long", 513) ","
    TL_MLIST_OPT("deleted_rows_count", "long", 514) ","
    TL_MLIST_OPT("key_metadata", "bytes", 519)
    TL_MLIST_END;
// clang-format on

/* An optional value written present (v1 marks the counts optional). */
static int tl_mlist_some(tl_buf *b, bool v1, int64_t v)
{
    return (v1 ? tl_avro_write_long(b, 1) : 0) | tl_avro_write_long(b, v);
}

static int tl_mlist_opt_bytes(tl_buf *b, const uint8_t *data, size_t len)
{
    if (data == NULL) return tl_avro_write_long(b, 0);
    return tl_avro_write_long(b, 1) | tl_avro_write_bytes(b, data, len);
}

static int tl_mlist_partitions(tl_buf *b, const tl_ice_field_summary *p, size_t n)
{
    int rc = tl_avro_write_long(b, 1);
    if (n) rc |= tl_avro_write_long(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        rc |= tl_avro_write_bool(b, p[i].contains_null);
        rc |= p[i].has_contains_nan
                  ? tl_avro_write_long(b, 1) | tl_avro_write_bool(b, p[i].contains_nan)
                  : tl_avro_write_long(b, 0);
        rc |= tl_mlist_opt_bytes(b, p[i].lower_bound, p[i].lower_len);
        rc |= tl_mlist_opt_bytes(b, p[i].upper_bound, p[i].upper_len);
    }
    return rc | tl_avro_write_long(b, 0);
}

static tl_status tl_mlist_encode(tl_buf *b, bool v1, const tl_ice_manifest_file *f, tl_error *err)
{
    if (f->manifest_path == NULL)
        return tl_error_set(err, TL_ERR_INVALID, "manifest without a path");
    if (v1 && f->content != 0)
        return tl_error_set(err, TL_ERR_INVALID, "v1 manifest lists hold only data manifests");
    int rc = tl_avro_write_string(b, f->manifest_path);
    rc |= tl_avro_write_long(b, f->manifest_length);
    rc |= tl_avro_write_long(b, f->partition_spec_id);
    if (!v1) {
        rc |= tl_avro_write_long(b, f->content);
        rc |= tl_avro_write_long(b, f->sequence_number);
        rc |= tl_avro_write_long(b, f->min_sequence_number);
    }
    rc |= tl_mlist_some(b, v1, f->added_snapshot_id);
    rc |= tl_mlist_some(b, v1, f->added_files_count);
    rc |= tl_mlist_some(b, v1, f->existing_files_count);
    rc |= tl_mlist_some(b, v1, f->deleted_files_count);
    if (v1) rc |= tl_mlist_partitions(b, f->partitions, f->n_partitions);
    rc |= tl_mlist_some(b, v1, f->added_rows_count);
    rc |= tl_mlist_some(b, v1, f->existing_rows_count);
    rc |= tl_mlist_some(b, v1, f->deleted_rows_count);
    if (!v1) rc |= tl_mlist_partitions(b, f->partitions, f->n_partitions);
    rc |= tl_mlist_opt_bytes(b, f->key_metadata, f->key_metadata_len);
    return rc == 0 ? TL_OK : tl_error_nomem(err);
}

static tl_status tl_mlist_write(const char *const *meta, bool v1, const tl_ice_manifest_file *files,
                                size_t n, tl_buf *out, tl_error *err)
{
    const char *text = v1 ? tl_mlist_schema_v1 : tl_mlist_schema_v2;
    tl_avro_schema *schema;
    TL_TRY(tl_avro_schema_shared(text, strlen(text), &schema, err));
    tl_avro_writer w;
    tl_status st = tl_avro_writer_begin(&w, schema, meta, NULL, out, err);
    for (size_t i = 0; st == TL_OK && i < n; i++) {
        st = tl_mlist_encode(tl_avro_writer_block(&w), v1, &files[i], err);
        if (st == TL_OK) st = tl_avro_writer_end_datum(&w, err);
        if (st != TL_OK) {
            tl_avro_writer_discard(&w);
            tl_error_prefix(err, "manifest %zu", i);
        }
    }
    if (st == TL_OK) st = tl_avro_writer_finish(&w, err);
    tl_avro_schema_free(schema);
    return st;
}

tl_status tl_ice_manifest_list_write(int64_t snapshot_id, const int64_t *parent_snapshot_id,
                                     int64_t sequence_number, int format_version,
                                     const tl_ice_manifest_file *files, size_t n, tl_buf *out,
                                     tl_error *err)
{
    if (format_version != 1 && format_version != 2)
        return tl_error_set(err, TL_ERR_INVALID, "cannot write manifest lists of format version %d",
                            format_version);
    char snap[24], parent[24] = "null", seq[24], version[8];
    snprintf(snap, sizeof snap, "%lld", (long long)snapshot_id);
    if (parent_snapshot_id) snprintf(parent, sizeof parent, "%lld", (long long)*parent_snapshot_id);
    snprintf(seq, sizeof seq, "%lld", (long long)sequence_number);
    snprintf(version, sizeof version, "%d", format_version);
    bool v1 = format_version == 1;
    const char *meta[] = {"snapshot-id",
                          snap,
                          "parent-snapshot-id",
                          parent,
                          "format-version",
                          version,
                          v1 ? NULL : "sequence-number",
                          seq,
                          NULL};
    size_t mark = out->len;
    tl_status st = tl_mlist_write(meta, v1, files, n, out, err);
    if (st != TL_OK) {
        if (out->data) out->data[out->len = mark] = '\0';
        tl_error_prefix(err, "writing manifest list");
    }
    return st;
}

/* ---- Reading ---- */

void tl_ice_manifest_files_free(tl_ice_manifest_file *files, size_t n)
{
    if (files == NULL) return;
    for (size_t i = 0; i < n; i++) {
        free(files[i].manifest_path);
        for (size_t k = 0; k < files[i].n_partitions; k++) {
            free(files[i].partitions[k].lower_bound);
            free(files[i].partitions[k].upper_bound);
        }
        free(files[i].partitions);
        free(files[i].key_metadata);
    }
    free(files);
}

static tl_status tl_mlist_dup(const uint8_t *data, size_t len, uint8_t **out, tl_error *err)
{
    *out = malloc(len + 1);
    if (*out == NULL) return tl_error_nomem(err);
    if (len) memcpy(*out, data, len);
    (*out)[len] = '\0';
    return TL_OK;
}

static tl_status tl_mlist_opt_bytes_read(const tl_avro_value *rec, int32_t id, const char *name,
                                         uint8_t **out, size_t *len, tl_error *err)
{
    bool present;
    const uint8_t *data;
    TL_TRY(tl_avro_get_bytes(rec, id, name, &present, &data, len, err));
    if (!present) return TL_OK;
    return tl_mlist_dup(data, *len, out, err);
}

/* A count named differently in v1 ("added_data_files_count") and v2. */
static tl_status tl_mlist_count(const tl_avro_value *rec, int32_t id, const char *v2_name,
                                const char *v1_name, int64_t *out, tl_error *err)
{
    bool present;
    TL_TRY(tl_avro_get_long(rec, id, v2_name, &present, out, err));
    if (!present && v1_name) TL_TRY(tl_avro_get_long(rec, -1, v1_name, &present, out, err));
    return TL_OK;
}

static tl_status tl_mlist_count32(const tl_avro_value *rec, int32_t id, const char *v2_name,
                                  const char *v1_name, int32_t *out, tl_error *err)
{
    int64_t v = 0;
    TL_TRY(tl_mlist_count(rec, id, v2_name, v1_name, &v, err));
    if (v < INT32_MIN || v > INT32_MAX)
        return tl_error_set(err, TL_ERR_INVALID, "%s %lld out of range", v2_name, (long long)v);
    *out = (int32_t)v;
    return TL_OK;
}

static tl_status tl_mlist_summaries(const tl_avro_value *rec, tl_ice_manifest_file *f,
                                    tl_error *err)
{
    bool present;
    const tl_avro_value *a = NULL;
    TL_TRY(tl_avro_get_kind(rec, 507, "partitions", TL_AVRO_ARRAY, &present, &a, err));
    if (!present || a->len == 0) return TL_OK;
    if ((f->partitions = calloc(a->len, sizeof *f->partitions)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < a->len; i++) {
        const tl_avro_value *s = &a->u.items[i];
        tl_ice_field_summary *p = &f->partitions[i];
        f->n_partitions = i + 1;
        TL_TRY(tl_avro_get_bool(s, 509, "contains_null", NULL, &p->contains_null, err));
        TL_TRY(
            tl_avro_get_bool(s, 518, "contains_nan", &p->has_contains_nan, &p->contains_nan, err));
        TL_TRY(tl_mlist_opt_bytes_read(s, 510, "lower_bound", &p->lower_bound, &p->lower_len, err));
        TL_TRY(tl_mlist_opt_bytes_read(s, 511, "upper_bound", &p->upper_bound, &p->upper_len, err));
    }
    return TL_OK;
}

static tl_status tl_mlist_record(const tl_avro_value *rec, tl_ice_manifest_file *f, tl_error *err)
{
    const uint8_t *path;
    size_t len;
    bool present;
    TL_TRY(tl_avro_get_bytes(rec, 500, "manifest_path", NULL, &path, &len, err));
    TL_TRY(tl_mlist_dup(path, len, (uint8_t **)&f->manifest_path, err));
    TL_TRY(tl_avro_get_long(rec, 501, "manifest_length", NULL, &f->manifest_length, err));
    TL_TRY(tl_avro_get_int(rec, 502, "partition_spec_id", NULL, &f->partition_spec_id, err));
    TL_TRY(tl_avro_get_int(rec, 517, "content", &present, &f->content, err));
    TL_TRY(tl_avro_get_long(rec, 515, "sequence_number", &present, &f->sequence_number, err));
    TL_TRY(
        tl_avro_get_long(rec, 516, "min_sequence_number", &present, &f->min_sequence_number, err));
    TL_TRY(tl_avro_get_long(rec, 503, "added_snapshot_id", &present, &f->added_snapshot_id, err));
    TL_TRY(tl_mlist_count32(rec, 504, "added_files_count", "added_data_files_count",
                            &f->added_files_count, err));
    TL_TRY(tl_mlist_count32(rec, 505, "existing_files_count", "existing_data_files_count",
                            &f->existing_files_count, err));
    TL_TRY(tl_mlist_count32(rec, 506, "deleted_files_count", "deleted_data_files_count",
                            &f->deleted_files_count, err));
    TL_TRY(tl_mlist_count(rec, 512, "added_rows_count", NULL, &f->added_rows_count, err));
    TL_TRY(tl_mlist_count(rec, 513, "existing_rows_count", NULL, &f->existing_rows_count, err));
    TL_TRY(tl_mlist_count(rec, 514, "deleted_rows_count", NULL, &f->deleted_rows_count, err));
    TL_TRY(tl_mlist_summaries(rec, f, err));
    return tl_mlist_opt_bytes_read(rec, 519, "key_metadata", &f->key_metadata, &f->key_metadata_len,
                                   err);
}

static tl_status tl_mlist_record_cb(const tl_avro_value *rec, void *elem, tl_error *err)
{
    return tl_mlist_record(rec, elem, err);
}

tl_status tl_ice_manifest_list_read(const uint8_t *data, size_t len, tl_ice_manifest_file **out,
                                    size_t *n, tl_error *err)
{
    void *items = NULL;
    tl_status st = tl_avro_read_records(data, len, sizeof **out, tl_mlist_record_cb, "manifest",
                                        &items, n, err);
    *out = items;
    if (st != TL_OK) {
        tl_ice_manifest_files_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return st;
}
