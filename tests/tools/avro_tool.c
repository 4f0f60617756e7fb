/* A test driver for the Avro and manifest code, used by tests/py/test_avro_*.py:
 *
 *   avro_tool dump FILE               any Avro file -> JSON {codec, metadata, schema, records}
 *   avro_tool write SPEC.json OUT     {schema, codec, metadata, records, block_size} -> Avro
 *   avro_tool manifest-read FILE      manifest -> JSON {entries}
 *   avro_tool manifest-write SPEC OUT {info, entries} -> manifest
 *   avro_tool list-read FILE          manifest list -> JSON {manifests}
 *   avro_tool list-write SPEC OUT     {snapshot_id, parent_snapshot_id, sequence_number,
 *                                      format_version, manifests} -> manifest list
 *
 * Records use Avro's JSON encoding; in the manifest JSON, byte strings are hex,
 * absent values null, and partition values {"int": 1}, {"string": "x"}, ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/avro/avro_file.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"

static void die(const char *what, const tl_error *err)
{
    fprintf(stderr, "avro_tool: %s: %s\n", what, err ? err->message : "");
    exit(1);
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) die(path, NULL);
    tl_buf b = {0};
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(&b, chunk, n);
    fclose(f);
    if (b.data == NULL) tl_buf_append(&b, "", 0);
    return tl_buf_detach(&b, len);
}

static void write_file(const char *path, const tl_buf *b)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) die(path, NULL);
}

static void print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    puts(s);
    free(s);
    json_decref(j);
}

static json_t *load_spec(const char *path)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, JSON_ALLOW_NUL, &jerr);
    if (j == NULL) {
        fprintf(stderr, "avro_tool: %s: %s\n", path, jerr.text);
        exit(1);
    }
    return j;
}

/* ---- Hex and optional values ---- */

static json_t *hex(const uint8_t *p, size_t n)
{
    if (p == NULL) return json_null();
    char *s = malloc(n * 2 + 1);
    for (size_t i = 0; i < n; i++) sprintf(s + 2 * i, "%02x", p[i]);
    s[2 * n] = '\0';
    json_t *j = json_string(s);
    free(s);
    return j;
}

/* A malloc'd copy of a hex string, or NULL for JSON null. */
static uint8_t *unhex(const json_t *j, size_t *n)
{
    *n = 0;
    const char *s = json_string_value(j);
    if (s == NULL) return NULL;
    size_t len = strlen(s) / 2;
    uint8_t *p = malloc(len + 1);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        p[i] = (uint8_t)v;
    }
    *n = len;
    return p;
}

static json_t *opt_int(bool has, int64_t v)
{
    return has ? json_integer(v) : json_null();
}

static bool get_opt(const json_t *o, const char *key, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) return false;
    *out = json_integer_value(v);
    return true;
}

static int64_t get_int(const json_t *o, const char *key)
{
    int64_t v = 0;
    get_opt(o, key, &v);
    return v;
}

static char *get_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? strdup(s) : NULL;
}

/* ---- Generic files ---- */

static int cmd_dump(const char *path)
{
    size_t len;
    uint8_t *data = read_file(path, &len);
    tl_error err;
    tl_avro_reader *r;
    if (tl_avro_reader_open(data, len, &r, &err) != TL_OK) die(path, &err);
    json_t *out = json_object(), *meta = json_object(), *records = json_array();
    for (size_t i = 0; i < tl_avro_reader_meta_count(r); i++) {
        const char *key;
        const uint8_t *value;
        size_t vlen;
        tl_avro_reader_meta_at(r, i, &key, &value, &vlen);
        json_object_set_new(meta, key, json_stringn((const char *)value, vlen));
    }
    tl_buf schema = {0};
    if (tl_avro_schema_print(tl_avro_reader_schema(r), &schema, &err) != TL_OK) die("print", &err);
    json_object_set_new(out, "codec", json_string(tl_avro_codec_name(tl_avro_reader_codec(r))));
    json_object_set_new(out, "metadata", meta);
    json_object_set_new(out, "schema", json_loads((char *)schema.data, JSON_DECODE_ANY, NULL));
    tl_buf_free(&schema);
    tl_arena arena = {0};
    for (;;) {
        tl_avro_value v;
        bool done;
        tl_arena_reset(&arena);
        if (tl_avro_reader_next(r, &arena, &v, &done, &err) != TL_OK) die(path, &err);
        if (done) break;
        json_t *j;
        if (tl_avro_to_json(tl_avro_reader_schema(r)->root, &v, &j, &err) != TL_OK)
            die("to json", &err);
        json_array_append_new(records, j);
    }
    json_object_set_new(out, "records", records);
    tl_arena_free(&arena);
    tl_avro_reader_free(r);
    free(data);
    print_json(out);
    return 0;
}

static int cmd_write(const char *spec_path, const char *out_path)
{
    json_t *spec = load_spec(spec_path);
    tl_error err;
    json_t *sj = json_object_get(spec, "schema");
    char *text = json_is_string(sj) ? strdup(json_string_value(sj))
                                    : json_dumps(sj, JSON_COMPACT | JSON_ENCODE_ANY);
    tl_avro_schema *schema;
    if (tl_avro_schema_parse(text, strlen(text), &schema, &err) != TL_OK) die("schema", &err);
    free(text);
    tl_avro_writer_options opts = {0};
    const char *codec = json_string_value(json_object_get(spec, "codec"));
    if (codec &&
        tl_avro_codec_parse((const uint8_t *)codec, strlen(codec), &opts.codec, &err) != TL_OK)
        die("codec", &err);
    opts.block_size = (size_t)get_int(spec, "block_size");
    json_t *meta = json_object_get(spec, "metadata");
    const char **kv = calloc(json_object_size(meta) * 2 + 1, sizeof *kv);
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(meta, key, value)
    {
        kv[i++] = key;
        kv[i++] = json_string_value(value);
    }
    tl_buf out = {0};
    tl_avro_writer w;
    if (tl_avro_writer_begin(&w, schema, kv, &opts, &out, &err) != TL_OK) die("begin", &err);
    tl_arena arena = {0};
    json_t *records = json_object_get(spec, "records");
    for (i = 0; i < json_array_size(records); i++) {
        tl_avro_value v;
        tl_arena_reset(&arena);
        if (tl_avro_from_json(schema->root, json_array_get(records, i), &arena, &v, &err) != TL_OK)
            die("record", &err);
        if (tl_avro_writer_append(&w, &v, &err) != TL_OK) die("append", &err);
    }
    if (tl_avro_writer_finish(&w, &err) != TL_OK) die("finish", &err);
    write_file(out_path, &out);
    tl_arena_free(&arena);
    tl_buf_free(&out);
    free(kv);
    tl_avro_schema_free(schema);
    json_decref(spec);
    return 0;
}

/* ---- Manifests ---- */

static const char *const value_kinds[] = {"null",  "int",  "long",  "string",
                                          "bytes", "bool", "float", "double"};

static json_t *value_json(const tl_ice_value *v)
{
    json_t *inner;
    switch (v->kind) {
    case TL_ICE_VALUE_NULL:
        return json_null();
    case TL_ICE_VALUE_STRING:
        inner = json_stringn((const char *)v->bytes, v->len);
        break;
    case TL_ICE_VALUE_BYTES:
        inner = hex(v->bytes, v->len);
        break;
    case TL_ICE_VALUE_BOOL:
        inner = json_boolean(v->i);
        break;
    case TL_ICE_VALUE_FLOAT:
    case TL_ICE_VALUE_DOUBLE:
        inner = json_real(v->d);
        break;
    default:
        inner = json_integer(v->i);
    }
    json_t *o = json_object();
    json_object_set_new(o, value_kinds[v->kind], inner);
    return o;
}

static void value_parse(const json_t *j, tl_ice_value *v)
{
    memset(v, 0, sizeof *v);
    if (!json_is_object(j)) return;
    const char *kind = json_object_iter_key(json_object_iter((json_t *)j));
    json_t *x = json_object_iter_value(json_object_iter((json_t *)j));
    for (int k = 0; k < 8; k++)
        if (strcmp(kind, value_kinds[k]) == 0) v->kind = (tl_ice_value_kind)k;
    switch (v->kind) {
    case TL_ICE_VALUE_STRING:
        v->bytes = (uint8_t *)strdup(json_string_value(x));
        v->len = strlen((char *)v->bytes);
        break;
    case TL_ICE_VALUE_BYTES:
        v->bytes = unhex(x, &v->len);
        break;
    case TL_ICE_VALUE_BOOL:
        v->i = json_is_true(x);
        break;
    case TL_ICE_VALUE_FLOAT:
    case TL_ICE_VALUE_DOUBLE:
        v->d = json_number_value(x);
        break;
    default:
        v->i = json_integer_value(x);
    }
}

static json_t *counts_json(const tl_ice_count *c, size_t n)
{
    if (n == 0) return json_null();
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("[iI]", (int)c[i].field_id, (json_int_t)c[i].value));
    return a;
}

static tl_ice_count *counts_parse(const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (*n == 0) return NULL;
    tl_ice_count *c = calloc(*n, sizeof *c);
    for (size_t i = 0; i < *n; i++) {
        c[i].field_id = (int32_t)json_integer_value(json_array_get(json_array_get(a, i), 0));
        c[i].value = json_integer_value(json_array_get(json_array_get(a, i), 1));
    }
    return c;
}

static json_t *bounds_json(const tl_ice_bound *b, size_t n)
{
    if (n == 0) return json_null();
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("[io]", (int)b[i].field_id, hex(b[i].data, b[i].len)));
    return a;
}

static tl_ice_bound *bounds_parse(const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (*n == 0) return NULL;
    tl_ice_bound *b = calloc(*n, sizeof *b);
    for (size_t i = 0; i < *n; i++) {
        b[i].field_id = (int32_t)json_integer_value(json_array_get(json_array_get(a, i), 0));
        b[i].data = unhex(json_array_get(json_array_get(a, i), 1), &b[i].len);
        if (b[i].data == NULL) b[i].data = calloc(1, 1);
    }
    return b;
}

static json_t *entry_json(const tl_ice_manifest_entry *e)
{
    const tl_ice_data_file *f = &e->file;
    json_t *df = json_object(), *part = json_array(), *splits = json_null(), *eq = json_null();
    for (size_t i = 0; i < f->n_partition; i++)
        json_array_append_new(part, value_json(&f->partition[i]));
    if (f->n_split_offsets) splits = json_array();
    for (size_t i = 0; i < f->n_split_offsets; i++)
        json_array_append_new(splits, json_integer(f->split_offsets[i]));
    if (f->n_equality_ids) eq = json_array();
    for (size_t i = 0; i < f->n_equality_ids; i++)
        json_array_append_new(eq, json_integer(f->equality_ids[i]));
    json_object_set_new(df, "content", json_integer(f->content));
    json_object_set_new(df, "file_path", json_string(f->file_path));
    json_object_set_new(df, "file_format", json_string(f->file_format));
    json_object_set_new(df, "partition", part);
    json_object_set_new(df, "record_count", json_integer(f->record_count));
    json_object_set_new(df, "file_size_in_bytes", json_integer(f->file_size_in_bytes));
    json_object_set_new(df, "column_sizes", counts_json(f->column_sizes, f->n_column_sizes));
    json_object_set_new(df, "value_counts", counts_json(f->value_counts, f->n_value_counts));
    json_object_set_new(df, "null_value_counts",
                        counts_json(f->null_value_counts, f->n_null_value_counts));
    json_object_set_new(df, "nan_value_counts",
                        counts_json(f->nan_value_counts, f->n_nan_value_counts));
    json_object_set_new(df, "lower_bounds", bounds_json(f->lower_bounds, f->n_lower_bounds));
    json_object_set_new(df, "upper_bounds", bounds_json(f->upper_bounds, f->n_upper_bounds));
    json_object_set_new(df, "key_metadata", hex(f->key_metadata, f->key_metadata_len));
    json_object_set_new(df, "split_offsets", splits);
    json_object_set_new(df, "equality_ids", eq);
    json_object_set_new(df, "sort_order_id", opt_int(f->has_sort_order_id, f->sort_order_id));
    json_object_set_new(df, "first_row_id", opt_int(f->has_first_row_id, f->first_row_id));
    json_object_set_new(df, "referenced_data_file",
                        f->referenced_data_file ? json_string(f->referenced_data_file)
                                                : json_null());
    json_object_set_new(df, "content_offset", opt_int(f->has_content_offset, f->content_offset));
    json_object_set_new(df, "content_size_in_bytes",
                        opt_int(f->has_content_size_in_bytes, f->content_size_in_bytes));
    json_t *o = json_object();
    json_object_set_new(o, "status", json_integer(e->status));
    json_object_set_new(o, "snapshot_id", opt_int(e->has_snapshot_id, e->snapshot_id));
    json_object_set_new(o, "sequence_number", opt_int(e->has_sequence_number, e->sequence_number));
    json_object_set_new(o, "file_sequence_number",
                        opt_int(e->has_file_sequence_number, e->file_sequence_number));
    json_object_set_new(o, "data_file", df);
    return o;
}

static void entry_parse(const json_t *j, tl_ice_manifest_entry *e)
{
    memset(e, 0, sizeof *e);
    e->status = (int32_t)get_int(j, "status");
    e->has_snapshot_id = get_opt(j, "snapshot_id", &e->snapshot_id);
    e->has_sequence_number = get_opt(j, "sequence_number", &e->sequence_number);
    e->has_file_sequence_number = get_opt(j, "file_sequence_number", &e->file_sequence_number);
    const json_t *d = json_object_get(j, "data_file");
    tl_ice_data_file *f = &e->file;
    int64_t v;
    f->content = (int32_t)get_int(d, "content");
    f->file_path = get_str(d, "file_path");
    f->file_format = get_str(d, "file_format");
    json_t *part = json_object_get(d, "partition");
    f->n_partition = json_array_size(part);
    f->partition = calloc(f->n_partition + 1, sizeof *f->partition);
    for (size_t i = 0; i < f->n_partition; i++)
        value_parse(json_array_get(part, i), &f->partition[i]);
    f->record_count = get_int(d, "record_count");
    f->file_size_in_bytes = get_int(d, "file_size_in_bytes");
    f->column_sizes = counts_parse(json_object_get(d, "column_sizes"), &f->n_column_sizes);
    f->value_counts = counts_parse(json_object_get(d, "value_counts"), &f->n_value_counts);
    f->null_value_counts =
        counts_parse(json_object_get(d, "null_value_counts"), &f->n_null_value_counts);
    f->nan_value_counts =
        counts_parse(json_object_get(d, "nan_value_counts"), &f->n_nan_value_counts);
    f->lower_bounds = bounds_parse(json_object_get(d, "lower_bounds"), &f->n_lower_bounds);
    f->upper_bounds = bounds_parse(json_object_get(d, "upper_bounds"), &f->n_upper_bounds);
    f->key_metadata = unhex(json_object_get(d, "key_metadata"), &f->key_metadata_len);
    json_t *splits = json_object_get(d, "split_offsets");
    f->n_split_offsets = json_array_size(splits);
    f->split_offsets = calloc(f->n_split_offsets + 1, sizeof *f->split_offsets);
    for (size_t i = 0; i < f->n_split_offsets; i++)
        f->split_offsets[i] = json_integer_value(json_array_get(splits, i));
    json_t *eq = json_object_get(d, "equality_ids");
    f->n_equality_ids = json_array_size(eq);
    f->equality_ids = calloc(f->n_equality_ids + 1, sizeof *f->equality_ids);
    for (size_t i = 0; i < f->n_equality_ids; i++)
        f->equality_ids[i] = (int32_t)json_integer_value(json_array_get(eq, i));
    if ((f->has_sort_order_id = get_opt(d, "sort_order_id", &v))) f->sort_order_id = (int32_t)v;
    f->has_first_row_id = get_opt(d, "first_row_id", &f->first_row_id);
    f->referenced_data_file = get_str(d, "referenced_data_file");
    f->has_content_offset = get_opt(d, "content_offset", &f->content_offset);
    f->has_content_size_in_bytes = get_opt(d, "content_size_in_bytes", &f->content_size_in_bytes);
}

static int cmd_manifest_read(const char *path)
{
    size_t len, n;
    uint8_t *data = read_file(path, &len);
    tl_error err;
    tl_ice_manifest_entry *entries;
    if (tl_ice_manifest_read(data, len, &entries, &n, &err) != TL_OK) die(path, &err);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, entry_json(&entries[i]));
    tl_ice_manifest_entries_free(entries, n);
    free(data);
    json_t *o = json_object();
    json_object_set_new(o, "entries", a);
    print_json(o);
    return 0;
}

static int cmd_manifest_write(const char *spec_path, const char *out_path)
{
    json_t *spec = load_spec(spec_path);
    json_t *ij = json_object_get(spec, "info"), *fields = json_object_get(ij, "partition_fields");
    size_t n_fields = json_array_size(fields);
    tl_ice_partition_field_type *pf = calloc(n_fields + 1, sizeof *pf);
    char **types = calloc(n_fields + 1, sizeof *types);
    for (size_t i = 0; i < n_fields; i++) {
        json_t *f = json_array_get(fields, i);
        types[i] = json_dumps(json_object_get(f, "avro_type"), JSON_COMPACT | JSON_ENCODE_ANY);
        pf[i].name = json_string_value(json_object_get(f, "name"));
        pf[i].field_id = (int32_t)get_int(f, "field_id");
        pf[i].avro_type_json = types[i];
    }
    tl_ice_manifest_info info = {
        json_string_value(json_object_get(ij, "schema_json")),
        json_string_value(json_object_get(ij, "partition_spec_json")),
        (int32_t)get_int(ij, "partition_spec_id"),
        (int32_t)get_int(ij, "schema_id"),
        (int)get_int(ij, "format_version"),
        (int32_t)get_int(ij, "content"),
        pf,
        n_fields,
    };
    json_t *ej = json_object_get(spec, "entries");
    size_t n = json_array_size(ej);
    tl_ice_manifest_entry *entries = calloc(n + 1, sizeof *entries);
    for (size_t i = 0; i < n; i++) entry_parse(json_array_get(ej, i), &entries[i]);
    tl_buf out = {0};
    tl_error err;
    if (tl_ice_manifest_write(&info, entries, n, &out, &err) != TL_OK) die("write", &err);
    write_file(out_path, &out);
    tl_buf_free(&out);
    tl_ice_manifest_entries_free(entries, n);
    for (size_t i = 0; i < n_fields; i++) free(types[i]);
    free(types);
    free(pf);
    json_decref(spec);
    return 0;
}

/* ---- Manifest lists ---- */

static json_t *list_entry_json(const tl_ice_manifest_file *f)
{
    json_t *parts = json_array();
    for (size_t i = 0; i < f->n_partitions; i++) {
        const tl_ice_field_summary *p = &f->partitions[i];
        json_array_append_new(
            parts, json_pack("{sbsoso so}", "contains_null", p->contains_null, "contains_nan",
                             p->has_contains_nan ? json_boolean(p->contains_nan) : json_null(),
                             "lower_bound", hex(p->lower_bound, p->lower_len), "upper_bound",
                             hex(p->upper_bound, p->upper_len)));
    }
    json_t *o = json_object();
    json_object_set_new(o, "manifest_path", json_string(f->manifest_path));
    json_object_set_new(o, "manifest_length", json_integer(f->manifest_length));
    json_object_set_new(o, "partition_spec_id", json_integer(f->partition_spec_id));
    json_object_set_new(o, "content", json_integer(f->content));
    json_object_set_new(o, "sequence_number", json_integer(f->sequence_number));
    json_object_set_new(o, "min_sequence_number", json_integer(f->min_sequence_number));
    json_object_set_new(o, "added_snapshot_id", json_integer(f->added_snapshot_id));
    json_object_set_new(o, "added_files_count", json_integer(f->added_files_count));
    json_object_set_new(o, "existing_files_count", json_integer(f->existing_files_count));
    json_object_set_new(o, "deleted_files_count", json_integer(f->deleted_files_count));
    json_object_set_new(o, "added_rows_count", json_integer(f->added_rows_count));
    json_object_set_new(o, "existing_rows_count", json_integer(f->existing_rows_count));
    json_object_set_new(o, "deleted_rows_count", json_integer(f->deleted_rows_count));
    json_object_set_new(o, "partitions", parts);
    json_object_set_new(o, "key_metadata", hex(f->key_metadata, f->key_metadata_len));
    return o;
}

static void list_entry_parse(const json_t *j, tl_ice_manifest_file *f)
{
    memset(f, 0, sizeof *f);
    f->manifest_path = get_str(j, "manifest_path");
    f->manifest_length = get_int(j, "manifest_length");
    f->partition_spec_id = (int32_t)get_int(j, "partition_spec_id");
    f->content = (int32_t)get_int(j, "content");
    f->sequence_number = get_int(j, "sequence_number");
    f->min_sequence_number = get_int(j, "min_sequence_number");
    f->added_snapshot_id = get_int(j, "added_snapshot_id");
    f->added_files_count = (int32_t)get_int(j, "added_files_count");
    f->existing_files_count = (int32_t)get_int(j, "existing_files_count");
    f->deleted_files_count = (int32_t)get_int(j, "deleted_files_count");
    f->added_rows_count = get_int(j, "added_rows_count");
    f->existing_rows_count = get_int(j, "existing_rows_count");
    f->deleted_rows_count = get_int(j, "deleted_rows_count");
    json_t *parts = json_object_get(j, "partitions");
    f->n_partitions = json_array_size(parts);
    f->partitions = calloc(f->n_partitions + 1, sizeof *f->partitions);
    for (size_t i = 0; i < f->n_partitions; i++) {
        json_t *p = json_array_get(parts, i);
        tl_ice_field_summary *s = &f->partitions[i];
        json_t *nan = json_object_get(p, "contains_nan");
        s->contains_null = json_is_true(json_object_get(p, "contains_null"));
        s->has_contains_nan = json_is_boolean(nan);
        s->contains_nan = json_is_true(nan);
        s->lower_bound = unhex(json_object_get(p, "lower_bound"), &s->lower_len);
        s->upper_bound = unhex(json_object_get(p, "upper_bound"), &s->upper_len);
    }
    f->key_metadata = unhex(json_object_get(j, "key_metadata"), &f->key_metadata_len);
}

static int cmd_list_read(const char *path)
{
    size_t len, n;
    uint8_t *data = read_file(path, &len);
    tl_error err;
    tl_ice_manifest_file *files;
    if (tl_ice_manifest_list_read(data, len, &files, &n, &err) != TL_OK) die(path, &err);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, list_entry_json(&files[i]));
    tl_ice_manifest_files_free(files, n);
    free(data);
    json_t *o = json_object();
    json_object_set_new(o, "manifests", a);
    print_json(o);
    return 0;
}

static int cmd_list_write(const char *spec_path, const char *out_path)
{
    json_t *spec = load_spec(spec_path);
    json_t *mj = json_object_get(spec, "manifests");
    size_t n = json_array_size(mj);
    tl_ice_manifest_file *files = calloc(n + 1, sizeof *files);
    for (size_t i = 0; i < n; i++) list_entry_parse(json_array_get(mj, i), &files[i]);
    int64_t parent;
    bool has_parent = get_opt(spec, "parent_snapshot_id", &parent);
    tl_buf out = {0};
    tl_error err;
    if (tl_ice_manifest_list_write(get_int(spec, "snapshot_id"), has_parent ? &parent : NULL,
                                   get_int(spec, "sequence_number"),
                                   (int)get_int(spec, "format_version"), files, n, &out,
                                   &err) != TL_OK)
        die("write", &err);
    write_file(out_path, &out);
    tl_buf_free(&out);
    tl_ice_manifest_files_free(files, n);
    json_decref(spec);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "dump") == 0) return cmd_dump(argv[2]);
    if (argc == 4 && strcmp(argv[1], "write") == 0) return cmd_write(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "manifest-read") == 0) return cmd_manifest_read(argv[2]);
    if (argc == 4 && strcmp(argv[1], "manifest-write") == 0)
        return cmd_manifest_write(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "list-read") == 0) return cmd_list_read(argv[2]);
    if (argc == 4 && strcmp(argv[1], "list-write") == 0) return cmd_list_write(argv[2], argv[3]);
    fprintf(stderr, "usage: avro_tool dump|write|manifest-read|manifest-write|list-read|list-write "
                    "ARGS (see the source)\n");
    return 2;
}
