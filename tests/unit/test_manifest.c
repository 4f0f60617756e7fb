/* Iceberg manifests and manifest lists: the reference's exact Avro shape,
 * round trips of every field set and unset, v1, and hostile input. */
#include <stdlib.h>

#include "formats/avro/avro_file.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_list.h"
#include "unit.h"

/* The avro.schema of the reference implementation's (timelake 0.7.0)
 * manifest and manifest list for a table partitioned by day(time). */
static const char reference_manifest_schema[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":[{\"name\":\"status\",\"type\""
    ":\"int\",\"field-id\":0},{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\""
    ":null,\"field-id\":1},{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default"
    "\":null,\"field-id\":3},{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\""
    "default\":null,\"field-id\":4},{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"nam"
    "e\":\"r2\",\"fields\":[{\"name\":\"content\",\"type\":\"int\",\"default\":0,\"field-id\":1"
    "34},{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},{\"name\":\"file_format\""
    ",\"type\":\"string\",\"field-id\":101},{\"name\":\"partition\",\"type\":{\"type\":\"record"
    "\",\"name\":\"r102\",\"fields\":[{\"name\":\"time_day\",\"type\":[\"null\",{\"type\":\"int"
    "\",\"logicalType\":\"date\"}],\"default\":null,\"field-id\":1000}]},\"field-id\":102},{\"n"
    "ame\":\"record_count\",\"type\":\"long\",\"field-id\":103},{\"name\":\"file_size_in_bytes\""
    ",\"type\":\"long\",\"field-id\":104},{\"name\":\"column_sizes\",\"type\":[\"null\",{\"type"
    "\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k117_v118\",\"fields\":[{\"name\":\""
    "key\",\"type\":\"int\",\"field-id\":117},{\"name\":\"value\",\"type\":\"long\",\"field-id\""
    ":118}]},\"logicalType\":\"map\"}],\"default\":null,\"field-id\":108},{\"name\":\"value_cou"
    "nts\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k11"
    "9_v120\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":119},{\"name\":\"valu"
    "e\",\"type\":\"long\",\"field-id\":120}]},\"logicalType\":\"map\"}],\"default\":null,\"fie"
    "ld-id\":109},{\"name\":\"null_value_counts\",\"type\":[\"null\",{\"type\":\"array\",\"item"
    "s\":{\"type\":\"record\",\"name\":\"k121_v122\",\"fields\":[{\"name\":\"key\",\"type\":\"i"
    "nt\",\"field-id\":121},{\"name\":\"value\",\"type\":\"long\",\"field-id\":122}]},\"logical"
    "Type\":\"map\"}],\"default\":null,\"field-id\":110},{\"name\":\"nan_value_counts\",\"type\""
    ":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"k138_v139\",\"fie"
    "lds\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":138},{\"name\":\"value\",\"type\":\""
    "long\",\"field-id\":139}]},\"logicalType\":\"map\"}],\"default\":null,\"field-id\":137},{\""
    "name\":\"lower_bounds\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"recor"
    "d\",\"name\":\"k126_v127\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":126"
    "},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":127}]},\"logicalType\":\"map\"}],\"d"
    "efault\":null,\"field-id\":125},{\"name\":\"upper_bounds\",\"type\":[\"null\",{\"type\":\""
    "array\",\"items\":{\"type\":\"record\",\"name\":\"k129_v130\",\"fields\":[{\"name\":\"key\""
    ",\"type\":\"int\",\"field-id\":129},{\"name\":\"value\",\"type\":\"bytes\",\"field-id\":13"
    "0}]},\"logicalType\":\"map\"}],\"default\":null,\"field-id\":128},{\"name\":\"key_metadata"
    "\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":131},{\"name\":\"split_offs"
    "ets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}],\"def"
    "ault\":null,\"field-id\":132},{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"ar"
    "ray\",\"items\":\"int\",\"element-id\":136}],\"default\":null,\"field-id\":135},{\"name\":"
    "\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":140},{\"name\""
    ":\"first_row_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":142},{\"name\""
    ":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"default\":null,\"field-id\":143"
    "},{\"name\":\"content_offset\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":"
    "144},{\"name\":\"content_size_in_bytes\",\"type\":[\"null\",\"long\"],\"default\":null,\"f"
    "ield-id\":145}]},\"field-id\":2}]}";

static const char reference_list_schema[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\",\""
    "type\":\"string\",\"field-id\":500},{\"name\":\"manifest_length\",\"type\":\"long\",\"fiel"
    "d-id\":501},{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},{\"name\":\""
    "content\",\"type\":\"int\",\"field-id\":517},{\"name\":\"sequence_number\",\"type\":\"long"
    "\",\"field-id\":515},{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516}"
    ",{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},{\"name\":\"added_fil"
    "es_count\",\"type\":\"int\",\"field-id\":504},{\"name\":\"existing_files_count\",\"type\":"
    "\"int\",\"field-id\":505},{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":"
    "506},{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},{\"name\":\"existi"
    "ng_rows_count\",\"type\":\"long\",\"field-id\":513},{\"name\":\"deleted_rows_count\",\"typ"
    "e\":\"long\",\"field-id\":514},{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"arr"
    "ay\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":[{\"name\":\"contains_nul"
    "l\",\"type\":\"boolean\",\"field-id\":509},{\"name\":\"contains_nan\",\"type\":[\"null\",\""
    "boolean\"],\"default\":null,\"field-id\":518},{\"name\":\"lower_bound\",\"type\":[\"null\""
    ",\"bytes\"],\"default\":null,\"field-id\":510},{\"name\":\"upper_bound\",\"type\":[\"null\""
    ",\"bytes\"],\"default\":null,\"field-id\":511}]},\"element-id\":508}],\"default\":null,\"f"
    "ield-id\":507},{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\""
    "field-id\":519}]}";

static const char table_schema[] =
    "{\"schema-id\":0,\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"time\",\"required\":"
    "true,\"type\":\"timestamptz\"},{\"id\":2,\"name\":\"device_id\",\"required\":false,\"type\":"
    "\"string\"}]}";
static const char day_spec[] =
    "[{\"source-id\":1,\"field-id\":1000,\"name\":\"time_day\",\"transform\":\"day\"}]";
static const tl_ice_partition_field_type day_field = {
    "time_day", 1000, "{\"type\":\"int\",\"logicalType\":\"date\"}"};

static tl_ice_manifest_info day_info(int version)
{
    tl_ice_manifest_info info = {table_schema, day_spec, 0, 0, version, 0, &day_field, 1};
    return info;
}

static const char *meta_of(const tl_buf *file, const char *key, char *buf, size_t cap)
{
    tl_error err;
    tl_avro_reader *r;
    buf[0] = '\0';
    if (tl_avro_reader_open(file->data, file->len, &r, &err) != TL_OK) return NULL;
    const uint8_t *v = tl_avro_reader_meta(r, key, NULL);
    if (v) snprintf(buf, cap, "%s", (const char *)v);
    tl_avro_reader_free(r);
    return v ? buf : NULL;
}

/* ---- Entries with every field set, and with every optional field unset ---- */

static tl_ice_count sizes[] = {{1, 43}, {4, 59}, {2, 75}};
static tl_ice_count counts[] = {{1, 2}, {2, 2}};
static tl_ice_count nulls[] = {{1, 0}};
static tl_ice_count nans[] = {{3, 0}};
static uint8_t lo1[] = {0x00, 0x40, 0x20, 0x46, 0x48, 0x47, 0x06, 0x00};
static uint8_t lo2[] = {'p', 'u', 'm', 'p', '-', '7'};
static uint8_t hi2[] = {'p', 'u', 'm', 'p', '-', '8'};
static tl_ice_bound lows[] = {{1, lo1, sizeof lo1}, {2, lo2, sizeof lo2}};
static tl_ice_bound highs[] = {{2, hi2, sizeof hi2}, {5, lo1, 0}};
static int64_t splits[] = {4, 1000000};
static int32_t eq_ids[] = {2, 1};
static uint8_t key_md[] = {0, 1, 2};

static void full_entry(tl_ice_manifest_entry *e, tl_ice_value *day)
{
    memset(e, 0, sizeof *e);
    e->status = 1;
    e->has_snapshot_id = true;
    e->snapshot_id = 5813220597814538045;
    e->has_sequence_number = true;
    e->sequence_number = 7;
    e->has_file_sequence_number = true;
    e->file_sequence_number = 6;
    tl_ice_data_file *f = &e->file;
    f->content = 2;
    f->file_path = "file:///tmp/wh/data/time_day=2026-01-01/a.parquet";
    f->file_format = "PARQUET";
    f->partition = day;
    f->n_partition = 1;
    f->record_count = 2;
    f->file_size_in_bytes = 1780;
    f->column_sizes = sizes;
    f->n_column_sizes = 3;
    f->value_counts = counts;
    f->n_value_counts = 2;
    f->null_value_counts = nulls;
    f->n_null_value_counts = 1;
    f->nan_value_counts = nans;
    f->n_nan_value_counts = 1;
    f->lower_bounds = lows;
    f->n_lower_bounds = 2;
    f->upper_bounds = highs;
    f->n_upper_bounds = 2;
    f->split_offsets = splits;
    f->n_split_offsets = 2;
    f->equality_ids = eq_ids;
    f->n_equality_ids = 2;
    f->key_metadata = key_md;
    f->key_metadata_len = sizeof key_md;
    f->has_sort_order_id = true;
    f->sort_order_id = 1;
    f->has_first_row_id = true;
    f->first_row_id = -5;
    f->referenced_data_file = "file:///x.parquet";
    f->has_content_offset = true;
    f->content_offset = 10;
    f->has_content_size_in_bytes = true;
    f->content_size_in_bytes = 20;
}

static void minimal_entry(tl_ice_manifest_entry *e, tl_ice_value *day)
{
    memset(e, 0, sizeof *e);
    e->file.file_path = "s3://b/k.parquet";
    e->file.file_format = "PARQUET";
    e->file.partition = day;
    e->file.n_partition = 1;
}

static bool same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static void check_values(const tl_ice_value *a, const tl_ice_value *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        CHECK_INT(a[i].kind, b[i].kind);
        if (a[i].kind == TL_ICE_VALUE_STRING || a[i].kind == TL_ICE_VALUE_BYTES)
            CHECK(same_bytes(a[i].bytes, a[i].len, b[i].bytes, b[i].len));
        else if (a[i].kind == TL_ICE_VALUE_FLOAT || a[i].kind == TL_ICE_VALUE_DOUBLE)
            CHECK(a[i].d == b[i].d);
        else
            CHECK(a[i].i == b[i].i);
    }
}

static void check_counts(const tl_ice_count *a, size_t an, const tl_ice_count *b, size_t bn)
{
    CHECK_INT(an, bn);
    for (size_t i = 0; i < an && i < bn; i++)
        CHECK(a[i].field_id == b[i].field_id && a[i].value == b[i].value);
}

static void check_bounds(const tl_ice_bound *a, size_t an, const tl_ice_bound *b, size_t bn)
{
    CHECK_INT(an, bn);
    for (size_t i = 0; i < an && i < bn; i++)
        CHECK(a[i].field_id == b[i].field_id &&
              same_bytes(a[i].data, a[i].len, b[i].data, b[i].len));
}

/* v1 keeps no sequence numbers, content or v3 fields. */
static void check_entry(const tl_ice_manifest_entry *got, const tl_ice_manifest_entry *want,
                        int version)
{
    CHECK_INT(got->status, want->status);
    CHECK_INT(got->has_snapshot_id, want->has_snapshot_id);
    CHECK(got->snapshot_id == want->snapshot_id || !want->has_snapshot_id);
    bool v2 = version == 2;
    CHECK_INT(got->has_sequence_number, v2 && want->has_sequence_number);
    CHECK_INT(got->has_file_sequence_number, v2 && want->has_file_sequence_number);
    if (v2 && want->has_sequence_number) CHECK_INT(got->sequence_number, want->sequence_number);
    if (v2 && want->has_file_sequence_number)
        CHECK_INT(got->file_sequence_number, want->file_sequence_number);
    const tl_ice_data_file *g = &got->file, *w = &want->file;
    CHECK_INT(g->content, v2 ? w->content : 0);
    CHECK_STR(g->file_path, w->file_path);
    CHECK_STR(g->file_format, w->file_format);
    CHECK_INT(g->n_partition, w->n_partition);
    if (g->n_partition == w->n_partition) check_values(g->partition, w->partition, g->n_partition);
    CHECK_INT(g->record_count, w->record_count);
    CHECK_INT(g->file_size_in_bytes, w->file_size_in_bytes);
    check_counts(g->column_sizes, g->n_column_sizes, w->column_sizes, w->n_column_sizes);
    check_counts(g->value_counts, g->n_value_counts, w->value_counts, w->n_value_counts);
    check_counts(g->null_value_counts, g->n_null_value_counts, w->null_value_counts,
                 w->n_null_value_counts);
    check_counts(g->nan_value_counts, g->n_nan_value_counts, w->nan_value_counts,
                 w->n_nan_value_counts);
    check_bounds(g->lower_bounds, g->n_lower_bounds, w->lower_bounds, w->n_lower_bounds);
    check_bounds(g->upper_bounds, g->n_upper_bounds, w->upper_bounds, w->n_upper_bounds);
    CHECK_INT(g->n_split_offsets, w->n_split_offsets);
    for (size_t i = 0; i < g->n_split_offsets && i < w->n_split_offsets; i++)
        CHECK_INT(g->split_offsets[i], w->split_offsets[i]);
    CHECK_INT(g->n_equality_ids, v2 ? w->n_equality_ids : 0);
    for (size_t i = 0; v2 && i < g->n_equality_ids && i < w->n_equality_ids; i++)
        CHECK_INT(g->equality_ids[i], w->equality_ids[i]);
    CHECK((g->key_metadata == NULL) == (w->key_metadata == NULL));
    if (w->key_metadata)
        CHECK(
            same_bytes(g->key_metadata, g->key_metadata_len, w->key_metadata, w->key_metadata_len));
    CHECK_INT(g->has_sort_order_id, w->has_sort_order_id);
    CHECK_INT(g->sort_order_id, w->has_sort_order_id ? w->sort_order_id : 0);
    CHECK_INT(g->has_first_row_id, v2 && w->has_first_row_id);
    CHECK_INT(g->first_row_id, v2 && w->has_first_row_id ? w->first_row_id : 0);
    if (v2 && w->referenced_data_file)
        CHECK_STR(g->referenced_data_file, w->referenced_data_file);
    else
        CHECK(g->referenced_data_file == NULL);
    CHECK_INT(g->has_content_offset, v2 && w->has_content_offset);
    CHECK_INT(g->content_offset, v2 && w->has_content_offset ? w->content_offset : 0);
    CHECK_INT(g->has_content_size_in_bytes, v2 && w->has_content_size_in_bytes);
    CHECK_INT(g->content_size_in_bytes,
              v2 && w->has_content_size_in_bytes ? w->content_size_in_bytes : 0);
}

static void test_manifest_schema_is_the_references(void)
{
    tl_error err;
    tl_ice_value day = {TL_ICE_VALUE_INT, 20454, 0, NULL, 0};
    tl_ice_manifest_entry e;
    minimal_entry(&e, &day);
    tl_ice_manifest_info info = day_info(2);
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_write(&info, &e, 1, &file, &err), &err);
    char buf[4096];
    CHECK_STR(meta_of(&file, "avro.schema", buf, sizeof buf), reference_manifest_schema);
    CHECK_STR(meta_of(&file, "avro.codec", buf, sizeof buf), "null");
    CHECK_STR(meta_of(&file, "schema", buf, sizeof buf), table_schema);
    CHECK_STR(meta_of(&file, "schema-id", buf, sizeof buf), "0");
    CHECK_STR(meta_of(&file, "partition-spec", buf, sizeof buf), day_spec);
    CHECK_STR(meta_of(&file, "partition-spec-id", buf, sizeof buf), "0");
    CHECK_STR(meta_of(&file, "format-version", buf, sizeof buf), "2");
    CHECK_STR(meta_of(&file, "content", buf, sizeof buf), "data");
    tl_buf_free(&file);
}

static void round_trip(int version, const tl_ice_manifest_entry *entries, size_t n)
{
    tl_error err;
    tl_ice_manifest_info info = day_info(version);
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_write(&info, entries, n, &file, &err), &err);
    tl_ice_manifest_entry *got = NULL;
    size_t n_got = 0;
    CHECK_OK(tl_ice_manifest_read(file.data, file.len, &got, &n_got, &err), &err);
    CHECK_INT(n_got, n);
    for (size_t i = 0; i < n && i < n_got; i++) check_entry(&got[i], &entries[i], version);
    tl_ice_manifest_entries_free(got, n_got);
    tl_buf_free(&file);
}

static void test_manifest_round_trip_v2(void)
{
    tl_ice_value day = {TL_ICE_VALUE_INT, 20454, 0, NULL, 0};
    tl_ice_value null_day = {TL_ICE_VALUE_NULL, 0, 0, NULL, 0};
    tl_ice_manifest_entry e[3];
    full_entry(&e[0], &day);
    minimal_entry(&e[1], &null_day);
    full_entry(&e[2], &day);
    e[2].status = 2;
    round_trip(2, e, 3);
    round_trip(2, e, 0);
}

static void test_manifest_round_trip_v1(void)
{
    tl_error err;
    tl_ice_value day = {TL_ICE_VALUE_INT, -3, 0, NULL, 0};
    tl_ice_manifest_entry e[2];
    full_entry(&e[0], &day);
    e[0].file.content = 0;
    minimal_entry(&e[1], &day);
    e[1].has_snapshot_id = true;
    e[1].snapshot_id = 1;
    round_trip(1, e, 2);
    /* v1 needs snapshot ids and data files only. */
    tl_ice_manifest_info info = day_info(1);
    tl_buf file = {0};
    e[1].has_snapshot_id = false;
    CHECK_INT(tl_ice_manifest_write(&info, e, 2, &file, &err), TL_ERR_INVALID);
    CHECK_INT(file.len, 0);
    CHECK(strstr(err.message, "entry 1") != NULL);
    tl_buf_free(&file);
}

static void test_manifest_partition_kinds(void)
{
    tl_error err;
    uint8_t dec[4] = {0x00, 0x00, 0x30, 0x39};
    uint8_t bin[2] = {0xff, 0x00};
    tl_ice_partition_field_type fields[] = {
        {"id", 1000, "\"int\""},
        {"big", 1001, "\"long\""},
        {"name", 1002, "\"string\""},
        {"flag", 1003, "\"boolean\""},
        {"ratio", 1004, "\"float\""},
        {"x", 1005, "\"double\""},
        {"raw", 1006, "\"bytes\""},
        {"price", 1007,
         "{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,\"logicalType\":\"decimal\","
         "\"precision\":9,\"scale\":2}"},
        {"price 2", 1008,
         "{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,\"logicalType\":\"decimal\","
         "\"precision\":9,\"scale\":2}"},
        {"hour", 1009, "\"int\""},
    };
    tl_ice_value values[] = {
        {TL_ICE_VALUE_INT, -42, 0, NULL, 0},
        {TL_ICE_VALUE_LONG, INT64_MIN, 0, NULL, 0},
        {TL_ICE_VALUE_STRING, 0, 0, (uint8_t *)"pump-7", 6},
        {TL_ICE_VALUE_BOOL, 1, 0, NULL, 0},
        {TL_ICE_VALUE_FLOAT, 0, 1.5, NULL, 0},
        {TL_ICE_VALUE_DOUBLE, 0, -2.25, NULL, 0},
        {TL_ICE_VALUE_BYTES, 0, 0, bin, 2},
        {TL_ICE_VALUE_BYTES, 0, 0, dec, 4},
        {TL_ICE_VALUE_NULL, 0, 0, NULL, 0},
        {TL_ICE_VALUE_INT, 493000, 0, NULL, 0},
    };
    size_t n = sizeof fields / sizeof fields[0];
    tl_ice_manifest_info info = {table_schema, "[]", 3, 1, 2, 0, fields, n};
    tl_ice_manifest_entry e;
    minimal_entry(&e, values);
    e.file.n_partition = n;
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_write(&info, &e, 1, &file, &err), &err);
    char schema[8192];
    meta_of(&file, "avro.schema", schema, sizeof schema);
    /* The second decimal reuses the first's name; the invalid name is made valid. */
    CHECK(strstr(schema,
                 "{\"name\":\"price_x202\",\"type\":[\"null\",\"decimal_9_2\"],"
                 "\"default\":null,\"field-id\":1008,\"iceberg-field-name\":\"price 2\"}") != NULL);
    tl_ice_manifest_entry *got;
    size_t n_got;
    CHECK_OK(tl_ice_manifest_read(file.data, file.len, &got, &n_got, &err), &err);
    CHECK_INT(n_got, 1);
    if (n_got == 1) {
        CHECK_INT(got->file.n_partition, n);
        /* An int value read back is an int, a long a long. */
        if (got->file.n_partition == n) check_values(got->file.partition, values, n);
    }
    tl_ice_manifest_entries_free(got, n_got);
    tl_buf_free(&file);
    /* Unpartitioned. */
    tl_ice_manifest_info none = {table_schema, "[]", 0, 0, 2, 0, NULL, 0};
    minimal_entry(&e, NULL);
    e.file.n_partition = 0;
    CHECK_OK(tl_ice_manifest_write(&none, &e, 1, &file, &err), &err);
    CHECK_OK(tl_ice_manifest_read(file.data, file.len, &got, &n_got, &err), &err);
    CHECK(n_got == 1 && got[0].file.n_partition == 0);
    tl_ice_manifest_entries_free(got, n_got);
    tl_buf_free(&file);
}

static void test_manifest_write_errors(void)
{
    tl_error err;
    tl_buf file = {0};
    tl_buf_append_str(&file, "keep");
    tl_ice_manifest_info info = day_info(2);
    tl_ice_value str = {TL_ICE_VALUE_STRING, 0, 0, (uint8_t *)"x", 1};
    tl_ice_value too_big = {TL_ICE_VALUE_LONG, (int64_t)1 << 40, 0, NULL, 0};
    tl_ice_manifest_entry e;
    minimal_entry(&e, &str);
    CHECK_INT(tl_ice_manifest_write(&info, &e, 1, &file, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "time_day") != NULL);
    minimal_entry(&e, &too_big);
    CHECK_INT(tl_ice_manifest_write(&info, &e, 1, &file, &err), TL_ERR_INVALID);
    minimal_entry(&e, &str);
    e.file.n_partition = 0;
    CHECK_INT(tl_ice_manifest_write(&info, &e, 1, &file, &err), TL_ERR_INVALID);
    tl_ice_partition_field_type bad_type = {"p", 1000, "[\"null\",\"int\"]"};
    info.partition_fields = &bad_type;
    CHECK_INT(tl_ice_manifest_write(&info, &e, 0, &file, &err), TL_ERR_INVALID);
    bad_type.avro_type_json = "\"nope\"";
    CHECK_INT(tl_ice_manifest_write(&info, &e, 0, &file, &err), TL_ERR_INVALID);
    info = day_info(3);
    CHECK_INT(tl_ice_manifest_write(&info, &e, 0, &file, &err), TL_ERR_INVALID);
    CHECK(file.len == 4 && strcmp((char *)file.data, "keep") == 0);
    tl_buf_free(&file);
}

static void test_manifest_hostile_input(void)
{
    tl_error err;
    tl_ice_value day = {TL_ICE_VALUE_INT, 20454, 0, NULL, 0};
    tl_ice_manifest_entry e[2];
    full_entry(&e[0], &day);
    minimal_entry(&e[1], &day);
    tl_ice_manifest_info info = day_info(2);
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_write(&info, e, 2, &file, &err), &err);
    tl_ice_manifest_entry *got;
    size_t n;
    for (size_t cut = 0; cut < file.len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, file.data, cut);
        tl_status st = tl_ice_manifest_read(copy, cut, &got, &n, &err);
        CHECK(st != TL_OK || n < 2);
        if (st == TL_OK)
            tl_ice_manifest_entries_free(got, n);
        else
            CHECK(got == NULL && n == 0 && err.message[0] != '\0');
        free(copy);
    }
    srand(42);
    int failures = 0;
    for (int k = 0; k < 1000; k++) {
        uint8_t *copy = malloc(file.len);
        memcpy(copy, file.data, file.len);
        copy[rand() % file.len] ^= (uint8_t)(1 + rand() % 255);
        if (tl_ice_manifest_read(copy, file.len, &got, &n, &err) == TL_OK)
            tl_ice_manifest_entries_free(got, n);
        else
            failures++;
        free(copy);
    }
    CHECK(failures > 0); /* the flips did reach checked structure */
    tl_buf_free(&file);
}

static void test_partition_avro_types(void)
{
    static const char *const vec[][3] = {
        {"timestamptz", "day", "{\"type\":\"int\",\"logicalType\":\"date\"}"},
        {"timestamp", "hour", "\"int\""},
        {"date", "month", "\"int\""},
        {"date", "year", "\"int\""},
        {"string", "bucket[16]", "\"int\""},
        {"int", "identity", "\"int\""},
        {"long", "identity", "\"long\""},
        {"string", "truncate[4]", "\"string\""},
        {"date", "identity", "{\"type\":\"int\",\"logicalType\":\"date\"}"},
        {"timestamptz", "identity",
         "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}"},
        {"decimal(9, 2)", "identity",
         "{\"type\":\"fixed\",\"name\":\"decimal_9_2\",\"size\":4,\"logicalType\":\"decimal\","
         "\"precision\":9,\"scale\":2}"},
        {"decimal(38,10)", "identity",
         "{\"type\":\"fixed\",\"name\":\"decimal_38_10\",\"size\":16,\"logicalType\":\"decimal\","
         "\"precision\":38,\"scale\":10}"},
        {"fixed[3]", "void", "{\"type\":\"fixed\",\"name\":\"fixed_3\",\"size\":3}"},
        {"binary", "identity", "\"bytes\""},
    };
    tl_error err;
    char buf[256];
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        CHECK_OK(tl_ice_partition_avro_type(vec[i][0], vec[i][1], buf, sizeof buf, &err), &err);
        CHECK_STR(buf, vec[i][2]);
    }
    CHECK_INT(tl_ice_partition_avro_type("int", "bucket", buf, sizeof buf, &err), TL_ERR_INVALID);
    CHECK_INT(tl_ice_partition_avro_type("map", "identity", buf, sizeof buf, &err), TL_ERR_INVALID);
    CHECK_INT(tl_ice_partition_avro_type("int", "week", buf, sizeof buf, &err), TL_ERR_INVALID);
    CHECK_INT(tl_ice_partition_avro_type("timestamptz", "identity", buf, 8, &err), TL_ERR_INVALID);
}

/* ---- Manifest lists ---- */

static uint8_t lb[] = {0xe6, 0x4f, 0, 0}, ub[] = {0xe7, 0x4f, 0, 0};

static void full_list_entry(tl_ice_manifest_file *f, tl_ice_field_summary *parts)
{
    memset(f, 0, sizeof *f);
    f->manifest_path = "file:///wh/metadata/58039089-added-m.avro";
    f->manifest_length = 4177;
    f->partition_spec_id = 3;
    f->content = 1;
    f->sequence_number = 9;
    f->min_sequence_number = 4;
    f->added_snapshot_id = 5813220597814538045;
    f->added_files_count = 2;
    f->existing_files_count = 3;
    f->deleted_files_count = 4;
    f->added_rows_count = 5;
    f->existing_rows_count = 6;
    f->deleted_rows_count = 7;
    memset(parts, 0, 2 * sizeof *parts);
    parts[0].contains_null = true;
    parts[0].has_contains_nan = true;
    parts[0].contains_nan = false;
    parts[0].lower_bound = lb;
    parts[0].lower_len = 4;
    parts[0].upper_bound = ub;
    parts[0].upper_len = 4;
    f->partitions = parts;
    f->n_partitions = 2;
    f->key_metadata = key_md;
    f->key_metadata_len = 3;
}

static void check_list_entry(const tl_ice_manifest_file *g, const tl_ice_manifest_file *w,
                             int version)
{
    bool v2 = version == 2;
    CHECK_STR(g->manifest_path, w->manifest_path);
    CHECK_INT(g->manifest_length, w->manifest_length);
    CHECK_INT(g->partition_spec_id, w->partition_spec_id);
    CHECK_INT(g->content, v2 ? w->content : 0);
    CHECK_INT(g->sequence_number, v2 ? w->sequence_number : 0);
    CHECK_INT(g->min_sequence_number, v2 ? w->min_sequence_number : 0);
    CHECK_INT(g->added_snapshot_id, w->added_snapshot_id);
    CHECK_INT(g->added_files_count, w->added_files_count);
    CHECK_INT(g->existing_files_count, w->existing_files_count);
    CHECK_INT(g->deleted_files_count, w->deleted_files_count);
    CHECK_INT(g->added_rows_count, w->added_rows_count);
    CHECK_INT(g->existing_rows_count, w->existing_rows_count);
    CHECK_INT(g->deleted_rows_count, w->deleted_rows_count);
    CHECK_INT(g->n_partitions, w->n_partitions);
    for (size_t i = 0; i < g->n_partitions && i < w->n_partitions; i++) {
        const tl_ice_field_summary *a = &g->partitions[i], *b = &w->partitions[i];
        CHECK(a->contains_null == b->contains_null && a->has_contains_nan == b->has_contains_nan &&
              a->contains_nan == b->contains_nan);
        CHECK((a->lower_bound == NULL) == (b->lower_bound == NULL));
        CHECK((a->upper_bound == NULL) == (b->upper_bound == NULL));
        if (b->lower_bound)
            CHECK(same_bytes(a->lower_bound, a->lower_len, b->lower_bound, b->lower_len));
        if (b->upper_bound)
            CHECK(same_bytes(a->upper_bound, a->upper_len, b->upper_bound, b->upper_len));
    }
    CHECK((g->key_metadata == NULL) == (w->key_metadata == NULL));
    if (w->key_metadata)
        CHECK(
            same_bytes(g->key_metadata, g->key_metadata_len, w->key_metadata, w->key_metadata_len));
}

static void list_round_trip(int version, const int64_t *parent, const tl_ice_manifest_file *files,
                            size_t n)
{
    tl_error err;
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_list_write(77, parent, 12, version, files, n, &file, &err), &err);
    char buf[4096];
    CHECK_STR(meta_of(&file, "snapshot-id", buf, sizeof buf), "77");
    char want_parent[32] = "null";
    if (parent) snprintf(want_parent, sizeof want_parent, "%lld", (long long)*parent);
    CHECK_STR(meta_of(&file, "parent-snapshot-id", buf, sizeof buf), want_parent);
    CHECK_STR(meta_of(&file, "format-version", buf, sizeof buf), version == 2 ? "2" : "1");
    if (version == 2)
        CHECK_STR(meta_of(&file, "sequence-number", buf, sizeof buf), "12");
    else
        CHECK(meta_of(&file, "sequence-number", buf, sizeof buf) == NULL);
    tl_ice_manifest_file *got;
    size_t n_got;
    CHECK_OK(tl_ice_manifest_list_read(file.data, file.len, &got, &n_got, &err), &err);
    CHECK_INT(n_got, n);
    for (size_t i = 0; i < n && i < n_got; i++) check_list_entry(&got[i], &files[i], version);
    tl_ice_manifest_files_free(got, n_got);
    tl_buf_free(&file);
}

static void test_manifest_list_schema_is_the_references(void)
{
    tl_error err;
    tl_ice_field_summary parts[2];
    tl_ice_manifest_file f;
    full_list_entry(&f, parts);
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_list_write(1, NULL, 1, 2, &f, 1, &file, &err), &err);
    char buf[4096];
    CHECK_STR(meta_of(&file, "avro.schema", buf, sizeof buf), reference_list_schema);
    tl_buf_free(&file);
}

static void test_manifest_list_round_trips(void)
{
    tl_ice_field_summary parts[2];
    tl_ice_manifest_file f[2];
    full_list_entry(&f[0], parts);
    memset(&f[1], 0, sizeof f[1]);
    f[1].manifest_path = "m2.avro";
    int64_t parent = -1;
    list_round_trip(2, NULL, f, 2);
    list_round_trip(2, &parent, f, 2);
    list_round_trip(2, NULL, f, 0);
    f[0].content = 0;
    list_round_trip(1, &parent, f, 2);
    tl_error err;
    tl_buf file = {0};
    f[0].content = 1;
    CHECK_INT(tl_ice_manifest_list_write(1, NULL, 0, 1, f, 1, &file, &err), TL_ERR_INVALID);
    CHECK_INT(tl_ice_manifest_list_write(1, NULL, 0, 4, f, 1, &file, &err), TL_ERR_INVALID);
    CHECK_INT(file.len, 0);
    tl_buf_free(&file);
}

static void test_manifest_list_hostile_input(void)
{
    tl_error err;
    tl_ice_field_summary parts[2];
    tl_ice_manifest_file f;
    full_list_entry(&f, parts);
    tl_buf file = {0};
    CHECK_OK(tl_ice_manifest_list_write(1, NULL, 1, 2, &f, 1, &file, &err), &err);
    tl_ice_manifest_file *got;
    size_t n;
    srand(7);
    for (int k = 0; k < 1000; k++) {
        uint8_t *copy = malloc(file.len);
        memcpy(copy, file.data, file.len);
        copy[rand() % file.len] ^= (uint8_t)(1 + rand() % 255);
        if (tl_ice_manifest_list_read(copy, file.len, &got, &n, &err) == TL_OK)
            tl_ice_manifest_files_free(got, n);
        free(copy);
    }
    for (size_t cut = 0; cut < file.len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, file.data, cut);
        tl_status st = tl_ice_manifest_list_read(copy, cut, &got, &n, &err);
        CHECK(st != TL_OK || n == 0);
        if (st == TL_OK) tl_ice_manifest_files_free(got, n);
        free(copy);
    }
    tl_buf_free(&file);
}

UNIT_TESTS(UNIT(test_manifest_schema_is_the_references), UNIT(test_manifest_round_trip_v2),
           UNIT(test_manifest_round_trip_v1), UNIT(test_manifest_partition_kinds),
           UNIT(test_manifest_write_errors), UNIT(test_manifest_hostile_input),
           UNIT(test_partition_avro_types), UNIT(test_manifest_list_schema_is_the_references),
           UNIT(test_manifest_list_round_trips), UNIT(test_manifest_list_hostile_input))
