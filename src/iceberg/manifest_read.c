/* Reads manifests of any writer: fields are found by Iceberg field-id with a
 * fallback to their names, v1 fields missing from the file take their v1
 * meaning (data content, sequence numbers inherited). */
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_file.h"
#include "iceberg/manifest.h"

static tl_status tl_mread_dup(const uint8_t *data, size_t len, uint8_t **out, tl_error *err)
{
    *out = malloc(len + 1);
    if (*out == NULL) return tl_error_nomem(err);
    if (len) memcpy(*out, data, len);
    (*out)[len] = '\0';
    return TL_OK;
}

/* A required or optional string field, copied. */
static tl_status tl_mread_string(const tl_avro_value *rec, int32_t id, const char *name,
                                 bool required, char **out, tl_error *err)
{
    const uint8_t *data;
    size_t len;
    bool present = false;
    TL_TRY(tl_avro_get_bytes(rec, id, name, required ? NULL : &present, &data, &len, err));
    if (!required && !present) return TL_OK;
    return tl_mread_dup(data, len, (uint8_t **)out, err);
}

/* An optional array field: NULL (with *n = 0) when absent or null. */
static tl_status tl_mread_array(const tl_avro_value *rec, int32_t id, const char *name,
                                const tl_avro_value **out, tl_error *err)
{
    bool present;
    *out = NULL;
    TL_TRY(tl_avro_get_kind(rec, id, name, TL_AVRO_ARRAY, &present, out, err));
    if (!present) *out = NULL;
    return TL_OK;
}

/* An array of {key: int, value: long} records (Iceberg's int-keyed maps). */
static tl_status tl_mread_counts(const tl_avro_value *rec, int32_t id, const char *name,
                                 tl_ice_count **out, size_t *n, tl_error *err)
{
    const tl_avro_value *a;
    TL_TRY(tl_mread_array(rec, id, name, &a, err));
    if (a == NULL || a->len == 0) return TL_OK;
    if ((*out = calloc(a->len, sizeof **out)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < a->len; i++) {
        const tl_avro_value *kv = &a->u.items[i];
        tl_status st = tl_avro_get_int(kv, -1, "key", NULL, &(*out)[i].field_id, err);
        if (st == TL_OK) st = tl_avro_get_long(kv, -1, "value", NULL, &(*out)[i].value, err);
        if (st != TL_OK) {
            tl_error_prefix(err, "%s", name);
            return st;
        }
        *n = i + 1;
    }
    return TL_OK;
}

/* An array of {key: int, value: bytes} records. */
static tl_status tl_mread_bounds(const tl_avro_value *rec, int32_t id, const char *name,
                                 tl_ice_bound **out, size_t *n, tl_error *err)
{
    const tl_avro_value *a;
    TL_TRY(tl_mread_array(rec, id, name, &a, err));
    if (a == NULL || a->len == 0) return TL_OK;
    if ((*out = calloc(a->len, sizeof **out)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < a->len; i++) {
        const tl_avro_value *kv = &a->u.items[i];
        const uint8_t *data;
        tl_ice_bound *b = &(*out)[i];
        tl_status st = tl_avro_get_int(kv, -1, "key", NULL, &b->field_id, err);
        if (st == TL_OK) st = tl_avro_get_bytes(kv, -1, "value", NULL, &data, &b->len, err);
        if (st == TL_OK) st = tl_mread_dup(data, b->len, &b->data, err);
        if (st != TL_OK) {
            tl_error_prefix(err, "%s", name);
            return st;
        }
        *n = i + 1;
    }
    return TL_OK;
}

static tl_status tl_mread_longs(const tl_avro_value *rec, int32_t id, const char *name,
                                int64_t **out, size_t *n, tl_error *err)
{
    const tl_avro_value *a;
    TL_TRY(tl_mread_array(rec, id, name, &a, err));
    if (a == NULL || a->len == 0) return TL_OK;
    if ((*out = calloc(a->len, sizeof **out)) == NULL) return tl_error_nomem(err);
    *n = a->len;
    for (size_t i = 0; i < a->len; i++) {
        const tl_avro_value *v = &a->u.items[i];
        if (v->kind != TL_AVRO_LONG && v->kind != TL_AVRO_INT)
            return tl_error_set(err, TL_ERR_INVALID, "%s: element %zu is not a long", name, i);
        (*out)[i] = v->u.i;
    }
    return TL_OK;
}

static tl_status tl_mread_ints(const tl_avro_value *rec, int32_t id, const char *name,
                               int32_t **out, size_t *n, tl_error *err)
{
    const tl_avro_value *a;
    TL_TRY(tl_mread_array(rec, id, name, &a, err));
    if (a == NULL || a->len == 0) return TL_OK;
    if ((*out = calloc(a->len, sizeof **out)) == NULL) return tl_error_nomem(err);
    *n = a->len;
    for (size_t i = 0; i < a->len; i++) {
        const tl_avro_value *v = &a->u.items[i];
        if (v->kind != TL_AVRO_INT &&
            !(v->kind == TL_AVRO_LONG && v->u.i >= INT32_MIN && v->u.i <= INT32_MAX))
            return tl_error_set(err, TL_ERR_INVALID, "%s: element %zu is not an int", name, i);
        (*out)[i] = (int32_t)v->u.i;
    }
    return TL_OK;
}

static tl_status tl_mread_partition_value(const tl_avro_value *v, tl_ice_value *out, tl_error *err)
{
    switch (v->kind) {
    case TL_AVRO_NULL:
        out->kind = TL_ICE_VALUE_NULL;
        return TL_OK;
    case TL_AVRO_INT:
        out->kind = TL_ICE_VALUE_INT;
        break;
    case TL_AVRO_LONG:
        out->kind = TL_ICE_VALUE_LONG;
        break;
    case TL_AVRO_BOOLEAN:
        out->kind = TL_ICE_VALUE_BOOL;
        out->i = v->u.b;
        return TL_OK;
    case TL_AVRO_FLOAT:
        out->kind = TL_ICE_VALUE_FLOAT;
        out->d = v->u.f;
        return TL_OK;
    case TL_AVRO_DOUBLE:
        out->kind = TL_ICE_VALUE_DOUBLE;
        out->d = v->u.d;
        return TL_OK;
    case TL_AVRO_STRING:
    case TL_AVRO_BYTES:
    case TL_AVRO_FIXED:
        out->kind = v->kind == TL_AVRO_STRING ? TL_ICE_VALUE_STRING : TL_ICE_VALUE_BYTES;
        out->len = v->len;
        return tl_mread_dup(v->u.bytes, v->len, &out->bytes, err);
    default:
        return tl_error_set(err, TL_ERR_INVALID, "partition value of Avro type %s",
                            tl_avro_kind_name(v->kind));
    }
    out->i = v->u.i;
    return TL_OK;
}

static tl_status tl_mread_partition(const tl_avro_value *df, tl_ice_data_file *f, tl_error *err)
{
    const tl_avro_value *p;
    TL_TRY(tl_avro_get_kind(df, 102, "partition", TL_AVRO_RECORD, NULL, &p, err));
    if (p->len == 0) return TL_OK;
    if ((f->partition = calloc(p->len, sizeof *f->partition)) == NULL) return tl_error_nomem(err);
    for (size_t i = 0; i < p->len; i++) {
        f->n_partition = i + 1;
        tl_status st = tl_mread_partition_value(&p->u.items[i], &f->partition[i], err);
        if (st != TL_OK) {
            tl_error_prefix(err, "partition field \"%s\"", p->type->fields[i].name);
            return st;
        }
    }
    return TL_OK;
}

static tl_status tl_mread_optional_longs(const tl_avro_value *df, tl_ice_data_file *f,
                                         tl_error *err)
{
    TL_TRY(
        tl_avro_get_int(df, 140, "sort_order_id", &f->has_sort_order_id, &f->sort_order_id, err));
    TL_TRY(tl_avro_get_long(df, 142, "first_row_id", &f->has_first_row_id, &f->first_row_id, err));
    TL_TRY(tl_avro_get_long(df, 144, "content_offset", &f->has_content_offset, &f->content_offset,
                            err));
    return tl_avro_get_long(df, 145, "content_size_in_bytes", &f->has_content_size_in_bytes,
                            &f->content_size_in_bytes, err);
}

static tl_status tl_mread_data_file(const tl_avro_value *df, tl_ice_data_file *f, tl_error *err)
{
    bool present;
    const uint8_t *km;
    TL_TRY(tl_avro_get_int(df, 134, "content", &present, &f->content, err));
    TL_TRY(tl_mread_string(df, 100, "file_path", true, &f->file_path, err));
    TL_TRY(tl_mread_string(df, 101, "file_format", true, &f->file_format, err));
    TL_TRY(tl_mread_partition(df, f, err));
    TL_TRY(tl_avro_get_long(df, 103, "record_count", NULL, &f->record_count, err));
    TL_TRY(tl_avro_get_long(df, 104, "file_size_in_bytes", NULL, &f->file_size_in_bytes, err));
    TL_TRY(tl_mread_counts(df, 108, "column_sizes", &f->column_sizes, &f->n_column_sizes, err));
    TL_TRY(tl_mread_counts(df, 109, "value_counts", &f->value_counts, &f->n_value_counts, err));
    TL_TRY(tl_mread_counts(df, 110, "null_value_counts", &f->null_value_counts,
                           &f->n_null_value_counts, err));
    TL_TRY(tl_mread_counts(df, 137, "nan_value_counts", &f->nan_value_counts,
                           &f->n_nan_value_counts, err));
    TL_TRY(tl_mread_bounds(df, 125, "lower_bounds", &f->lower_bounds, &f->n_lower_bounds, err));
    TL_TRY(tl_mread_bounds(df, 128, "upper_bounds", &f->upper_bounds, &f->n_upper_bounds, err));
    TL_TRY(tl_avro_get_bytes(df, 131, "key_metadata", &present, &km, &f->key_metadata_len, err));
    if (present) TL_TRY(tl_mread_dup(km, f->key_metadata_len, &f->key_metadata, err));
    TL_TRY(tl_mread_longs(df, 132, "split_offsets", &f->split_offsets, &f->n_split_offsets, err));
    TL_TRY(tl_mread_ints(df, 135, "equality_ids", &f->equality_ids, &f->n_equality_ids, err));
    TL_TRY(tl_mread_string(df, 143, "referenced_data_file", false, &f->referenced_data_file, err));
    return tl_mread_optional_longs(df, f, err);
}

static tl_status tl_mread_entry(const tl_avro_value *rec, tl_ice_manifest_entry *e, tl_error *err)
{
    const tl_avro_value *df;
    TL_TRY(tl_avro_get_int(rec, 0, "status", NULL, &e->status, err));
    if (e->status < 0 || e->status > 2)
        return tl_error_set(err, TL_ERR_INVALID, "invalid status %d", (int)e->status);
    TL_TRY(tl_avro_get_long(rec, 1, "snapshot_id", &e->has_snapshot_id, &e->snapshot_id, err));
    TL_TRY(tl_avro_get_long(rec, 3, "sequence_number", &e->has_sequence_number, &e->sequence_number,
                            err));
    TL_TRY(tl_avro_get_long(rec, 4, "file_sequence_number", &e->has_file_sequence_number,
                            &e->file_sequence_number, err));
    TL_TRY(tl_avro_get_kind(rec, 2, "data_file", TL_AVRO_RECORD, NULL, &df, err));
    tl_status st = tl_mread_data_file(df, &e->file, err);
    if (st != TL_OK) tl_error_prefix(err, "data_file");
    return st;
}

static tl_status tl_mread_entry_cb(const tl_avro_value *rec, void *elem, tl_error *err)
{
    return tl_mread_entry(rec, elem, err);
}

tl_status tl_ice_manifest_read(const uint8_t *data, size_t len, tl_ice_manifest_entry **out,
                               size_t *n, tl_error *err)
{
    void *items = NULL;
    tl_status st =
        tl_avro_read_records(data, len, sizeof **out, tl_mread_entry_cb, "entry", &items, n, err);
    *out = items;
    if (st != TL_OK) {
        tl_ice_manifest_entries_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return st;
}
