#include <stdlib.h>

#include "iceberg/metadata.h"
#include "iceberg/metadata_json.h"
#include "unit.h"

/* v1.metadata.json and v2.metadata.json as written by the reference (timelake 0.7.0,
 * Rust) for a table created and then appended to once. */
static const char ref_v1[] =
    "{\"format-version\":2,\"table-uuid\":\"01a226cc-8bc3-742f-84ed-84dcdd777b95\",\"location"
    "\":\"file:///tmp/explore/wh/iot/readings\",\"last-sequence-number\":0,\"last-updated-ms\""
    ":1795947269059,\"last-column-id\":4,\"schemas\":[{\"schema-id\":0,\"type\":\"struct\",\""
    "fields\":[{\"id\":1,\"name\":\"time\",\"required\":true,\"type\":\"timestamptz\"},{\"id\""
    ":2,\"name\":\"device_id\",\"required\":false,\"type\":\"string\"},{\"id\":3,\"name\":\"t"
    "emp\",\"required\":false,\"type\":\"double\"},{\"id\":4,\"name\":\"_ingest_ts\",\"requir"
    "ed\":true,\"type\":\"timestamptz\"}]}],\"current-schema-id\":0,\"partition-specs\":[{\"s"
    "pec-id\":0,\"fields\":[{\"source-id\":1,\"field-id\":1000,\"name\":\"time_day\",\"transf"
    "orm\":\"day\"}]}],\"default-spec-id\":0,\"last-partition-id\":1000,\"properties\":{\"tim"
    "elake.retention\":\"365d\",\"timelake.format-version\":\"0.3.0\",\"write.format.default\""
    ":\"parquet\",\"timelake.series-key\":\"device_id\",\"write.parquet.compression-codec\":\""
    "zstd\",\"timelake.dedup\":\"true\",\"timelake.chunk-interval\":\"day\",\"write.metadata."
    "previous-versions-max\":\"20\",\"timelake.ingest-time-column\":\"_ingest_ts\",\"timelake"
    ".time-column\":\"time\"},\"sort-orders\":[{\"order-id\":1,\"fields\":[{\"source-id\":2,\""
    "transform\":\"identity\",\"direction\":\"asc\",\"null-order\":\"nulls-first\"},{\"source"
    "-id\":1,\"transform\":\"identity\",\"direction\":\"asc\",\"null-order\":\"nulls-first\"}"
    "]}],\"default-sort-order-id\":1,\"refs\":{}}";

static const char ref_v2[] =
    "{\"format-version\":2,\"table-uuid\":\"01a226cc-8bc3-742f-84ed-84dcdd777b95\",\"location"
    "\":\"file:///tmp/explore/wh/iot/readings\",\"last-sequence-number\":1,\"last-updated-ms\""
    ":1795947269071,\"last-column-id\":4,\"schemas\":[{\"schema-id\":0,\"type\":\"struct\",\""
    "fields\":[{\"id\":1,\"name\":\"time\",\"required\":true,\"type\":\"timestamptz\"},{\"id\""
    ":2,\"name\":\"device_id\",\"required\":false,\"type\":\"string\"},{\"id\":3,\"name\":\"t"
    "emp\",\"required\":false,\"type\":\"double\"},{\"id\":4,\"name\":\"_ingest_ts\",\"requir"
    "ed\":true,\"type\":\"timestamptz\"}]}],\"current-schema-id\":0,\"partition-specs\":[{\"s"
    "pec-id\":0,\"fields\":[{\"source-id\":1,\"field-id\":1000,\"name\":\"time_day\",\"transf"
    "orm\":\"day\"}]}],\"default-spec-id\":0,\"last-partition-id\":1000,\"properties\":{\"tim"
    "elake.retention\":\"365d\",\"timelake.format-version\":\"0.3.0\",\"write.format.default\""
    ":\"parquet\",\"timelake.series-key\":\"device_id\",\"write.parquet.compression-codec\":\""
    "zstd\",\"timelake.dedup\":\"true\",\"timelake.chunk-interval\":\"day\",\"write.metadata."
    "previous-versions-max\":\"20\",\"timelake.ingest-time-column\":\"_ingest_ts\",\"timelake"
    ".time-column\":\"time\"},\"current-snapshot-id\":5813220597814538045,\"snapshot-log\":[{"
    "\"snapshot-id\":5813220597814538045,\"timestamp-ms\":1795947269071}],\"metadata-log\":[{"
    "\"metadata-file\":\"file:///tmp/explore/wh/iot/readings/metadata/v1.metadata.json\",\"ti"
    "mestamp-ms\":1795947269059}],\"sort-orders\":[{\"order-id\":1,\"fields\":[{\"source-id\""
    ":2,\"transform\":\"identity\",\"direction\":\"asc\",\"null-order\":\"nulls-first\"},{\"s"
    "ource-id\":1,\"transform\":\"identity\",\"direction\":\"asc\",\"null-order\":\"nulls-fir"
    "st\"}]}],\"default-sort-order-id\":1,\"refs\":{\"main\":{\"snapshot-id\":581322059781453"
    "8045,\"type\":\"branch\"}},\"snapshots\":[{\"snapshot-id\":5813220597814538045,\"sequenc"
    "e-number\":1,\"timestamp-ms\":1795947269071,\"manifest-list\":\"file:///tmp/explore/wh/i"
    "ot/readings/metadata/snap-5813220597814538045-6f9ff641-3621-4863-8606-4cb426a9b619.avro\""
    ",\"summary\":{\"operation\":\"append\",\"added-records\":\"3\",\"total-data-files\":\"2\""
    ",\"added-files-size\":\"3542\",\"total-files-size\":\"3542\",\"timelake.batch-id\":\"gat"
    "eway-3-000042\",\"total-delete-files\":\"0\",\"added-data-files\":\"2\",\"total-records\""
    ":\"3\",\"total-equality-deletes\":\"0\",\"timelake.last-value-index\":\"file:///tmp/expl"
    "ore/wh/iot/readings/metadata/lvi-5813220597814538045-c6ab26f8-b6ba-496a-b106-873efe3c866"
    "1.parquet\",\"total-position-deletes\":\"0\"},\"schema-id\":0}]}";

static tl_ice_metadata *parse_ok(const char *json)
{
    tl_ice_metadata *md = NULL;
    tl_error err;
    CHECK_OK(tl_ice_metadata_parse(json, strlen(json), &md, &err), &err);
    return md;
}

/* Serializes md to a malloc'd string. */
static char *dump(const tl_ice_metadata *md)
{
    tl_buf b = {0};
    tl_error err;
    CHECK_OK(tl_ice_metadata_serialize(md, &b, &err), &err);
    return (char *)tl_buf_detach(&b, NULL);
}

static void check_same_text(const char *got, const char *want, int line)
{
    if (got && strcmp(got, want) == 0) return;
    size_t i = 0;
    while (got && got[i] && got[i] == want[i]) i++;
    unit_fail(__FILE__, line, "JSON differs at byte %zu:\n    got  ...%.80s\n    want ...%.80s", i,
              got ? got + i : "(null)", want + i);
}

static void test_reference_files_parse(void)
{
    tl_ice_metadata *v1 = parse_ok(ref_v1), *v2 = parse_ok(ref_v2);
    if (v1 == NULL || v2 == NULL) return;
    CHECK_INT(v1->format_version, 2);
    CHECK_STR(v1->table_uuid, "01a226cc-8bc3-742f-84ed-84dcdd777b95");
    CHECK_STR(v1->location, "file:///tmp/explore/wh/iot/readings");
    CHECK_INT(v1->last_updated_ms, 1795947269059LL);
    CHECK_INT(v1->last_column_id, 4);
    const tl_ice_schema *s = tl_ice_metadata_current_schema(v1);
    CHECK(s != NULL && s->n_fields == 4);
    CHECK_STR(s->fields[3].name, "_ingest_ts");
    CHECK_INT(s->fields[0].type.id, TL_ICE_TIMESTAMPTZ);
    CHECK(s->fields[0].required && !s->fields[1].required);
    const tl_ice_partition_spec *spec = tl_ice_metadata_default_spec(v1);
    CHECK(spec != NULL && spec->n_fields == 1);
    CHECK_STR(spec->fields[0].name, "time_day");
    CHECK_STR(spec->fields[0].transform, "day");
    CHECK_INT(spec->fields[0].field_id, 1000);
    CHECK_INT(v1->last_partition_id, 1000);
    const tl_ice_sort_order *order = tl_ice_metadata_default_sort_order(v1);
    CHECK(order != NULL && order->order_id == 1 && order->n_fields == 2);
    CHECK(!order->fields[0].descending && order->fields[0].nulls_first);
    CHECK_INT(order->fields[0].source_id, 2);
    CHECK_INT(v1->n_properties, 10);
    CHECK_STR(v1->properties[0].key, "timelake.retention");
    CHECK_STR(tl_ice_metadata_property(v1, "timelake.time-column"), "time");
    CHECK(tl_ice_metadata_property(v1, "nope") == NULL);
    CHECK(tl_ice_metadata_current_snapshot(v1) == NULL);
    CHECK_INT(v1->current_snapshot_id, -1);
    CHECK_INT(v1->n_refs, 0);

    CHECK_INT(v2->last_sequence_number, 1);
    const tl_ice_snapshot *snap = tl_ice_metadata_current_snapshot(v2);
    CHECK(snap != NULL);
    if (snap) {
        CHECK_INT(snap->snapshot_id, 5813220597814538045LL);
        CHECK(!snap->has_parent);
        CHECK_INT(snap->sequence_number, 1);
        CHECK_STR(snap->summary[0].key, "operation");
        CHECK_STR(tl_ice_snapshot_summary(snap, "operation"), "append");
        CHECK_STR(tl_ice_snapshot_summary(snap, "timelake.batch-id"), "gateway-3-000042");
        CHECK(snap->has_schema_id && snap->schema_id == 0);
        CHECK(snap->extra == NULL);
    }
    CHECK_INT(v2->n_metadata_log, 1);
    CHECK_STR(v2->metadata_log[0].metadata_file,
              "file:///tmp/explore/wh/iot/readings/metadata/v1.metadata.json");
    CHECK_INT(v2->n_snapshot_log, 1);
    const tl_ice_ref *main = tl_ice_metadata_ref(v2, "main");
    CHECK(main != NULL && main->snapshot_id == 5813220597814538045LL && !main->is_tag);
    CHECK(v2->extra == NULL);
    tl_ice_metadata_free(v1);
    tl_ice_metadata_free(v2);
}

static void test_reference_files_serialize_identically(void)
{
    const char *refs[] = {ref_v1, ref_v2};
    for (int i = 0; i < 2; i++) {
        tl_ice_metadata *md = parse_ok(refs[i]);
        if (md == NULL) continue;
        char *text = dump(md);
        check_same_text(text, refs[i], __LINE__);
        tl_ice_metadata *copy = NULL;
        tl_error err;
        CHECK_OK(tl_ice_metadata_copy(md, &copy, &err), &err);
        char *again = dump(copy);
        check_same_text(again, refs[i], __LINE__);
        free(text);
        free(again);
        tl_ice_metadata_free(copy);
        tl_ice_metadata_free(md);
    }
}

static void make_reference_table(tl_ice_metadata **out)
{
    static const char *const props[] = {"timelake.retention",
                                        "365d",
                                        "timelake.format-version",
                                        "0.3.0",
                                        "write.format.default",
                                        "parquet",
                                        "timelake.series-key",
                                        "device_id",
                                        "write.parquet.compression-codec",
                                        "zstd",
                                        "timelake.dedup",
                                        "true",
                                        "timelake.chunk-interval",
                                        "day",
                                        "write.metadata.previous-versions-max",
                                        "20",
                                        "timelake.ingest-time-column",
                                        "_ingest_ts",
                                        "timelake.time-column",
                                        "time",
                                        NULL};
    tl_ice_field fields[] = {
        {1, "time", true, {.id = TL_ICE_TIMESTAMPTZ}, NULL, NULL, 0},
        {2, "device_id", false, {.id = TL_ICE_STRING}, NULL, NULL, 0},
        {3, "temp", false, {.id = TL_ICE_DOUBLE}, NULL, NULL, 0},
        {4, "_ingest_ts", true, {.id = TL_ICE_TIMESTAMPTZ}, NULL, NULL, 0},
    };
    tl_ice_schema schema = {.schema_id = 0, .fields = fields, .n_fields = 4};
    tl_ice_partition_field pf = {1, 1000, "time_day", "day"};
    tl_ice_partition_spec spec = {0, &pf, 1};
    tl_ice_sort_field sf[] = {{2, "identity", false, true}, {1, "identity", false, true}};
    tl_ice_sort_order order = {1, sf, 2};
    tl_error err;
    CHECK_OK(tl_ice_metadata_new("01a226cc-8bc3-742f-84ed-84dcdd777b95",
                                 "file:///tmp/explore/wh/iot/readings", &schema, &spec, &order,
                                 props, 1795947269059LL, out, &err),
             &err);
}

static tl_kv ref_summary[] = {
    {"operation", "append"},
    {"added-records", "3"},
    {"total-data-files", "2"},
    {"added-files-size", "3542"},
    {"total-files-size", "3542"},
    {"timelake.batch-id", "gateway-3-000042"},
    {"total-delete-files", "0"},
    {"added-data-files", "2"},
    {"total-records", "3"},
    {"total-equality-deletes", "0"},
    {"timelake.last-value-index",
     "file:///tmp/explore/wh/iot/readings/metadata/"
     "lvi-5813220597814538045-c6ab26f8-b6ba-496a-b106-873efe3c8661.parquet"},
    {"total-position-deletes", "0"},
};

static tl_ice_snapshot ref_snapshot(void)
{
    return (tl_ice_snapshot){
        .snapshot_id = 5813220597814538045LL,
        .sequence_number = 1,
        .timestamp_ms = 1795947269071LL,
        .manifest_list = "file:///tmp/explore/wh/iot/readings/metadata/"
                         "snap-5813220597814538045-6f9ff641-3621-4863-8606-4cb426a9b619.avro",
        .summary = ref_summary,
        .n_summary = sizeof ref_summary / sizeof ref_summary[0],
        .has_schema_id = true,
        .schema_id = 0,
    };
}

static void test_new_and_add_snapshot_match_reference(void)
{
    tl_ice_metadata *md = NULL;
    make_reference_table(&md);
    if (md == NULL) return;
    char *text = dump(md);
    check_same_text(text, ref_v1, __LINE__);
    free(text);
    tl_ice_snapshot snap = ref_snapshot();
    tl_error err;
    CHECK_OK(tl_ice_metadata_add_snapshot(
                 md, &snap, "file:///tmp/explore/wh/iot/readings/metadata/v1.metadata.json", &err),
             &err);
    text = dump(md);
    check_same_text(text, ref_v2, __LINE__);
    free(text);
    tl_ice_metadata_free(md);
}

static void test_new_unpartitioned_like_reference(void)
{
    /* The reference's plain table: unpartitioned spec, last-partition-id 999, order 0. */
    tl_ice_field f = {1, "a", false, {.id = TL_ICE_INT}, NULL, NULL, 0};
    tl_ice_schema schema = {0, &f, 1, NULL, 0};
    tl_ice_metadata *md = NULL;
    tl_error err;
    CHECK_OK(tl_ice_metadata_new("u", "file:///x", &schema, NULL, NULL, NULL, 5, &md, &err), &err);
    if (md == NULL) return;
    char *text = dump(md);
    check_same_text(
        text,
        "{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"file:///x\","
        "\"last-sequence-number\":0,\"last-updated-ms\":5,\"last-column-id\":1,"
        "\"schemas\":[{\"schema-id\":0,\"type\":\"struct\",\"fields\":[{\"id\":1,"
        "\"name\":\"a\",\"required\":false,\"type\":\"int\"}]}],\"current-schema-id\":0,"
        "\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],\"default-spec-id\":0,"
        "\"last-partition-id\":999,\"properties\":{},\"sort-orders\":[{\"order-id\":0,"
        "\"fields\":[]}],\"default-sort-order-id\":0,\"refs\":{}}",
        __LINE__);
    free(text);
    tl_ice_metadata_free(md);
}

static void test_new_rejects(void)
{
    tl_ice_field f = {1, "a", false, {.id = TL_ICE_LONG}, NULL, NULL, 0};
    tl_ice_schema schema = {0, &f, 1, NULL, 0};
    tl_ice_partition_field pf = {7, 1000, "a_day", "day"};
    tl_ice_partition_spec spec = {0, &pf, 1};
    tl_ice_metadata *md = NULL;
    tl_error err;
    CHECK_INT(tl_ice_metadata_new("u", "l", &schema, &spec, NULL, NULL, 0, &md, &err),
              TL_ERR_INVALID);
    pf.source_id = 1;
    pf.transform = "weekly";
    CHECK_INT(tl_ice_metadata_new("u", "l", &schema, &spec, NULL, NULL, 0, &md, &err),
              TL_ERR_INVALID);
    tl_ice_sort_field sf = {1, "identity", false, true};
    tl_ice_sort_order order = {0, &sf, 1};
    CHECK_INT(tl_ice_metadata_new("u", "l", &schema, NULL, &order, NULL, 0, &md, &err),
              TL_ERR_INVALID);
    const char *odd[] = {"k", NULL};
    CHECK_INT(tl_ice_metadata_new("u", "l", &schema, NULL, NULL, odd, 0, &md, &err),
              TL_ERR_INVALID);
    CHECK(md == NULL);
}

static void test_add_snapshot_rejects_and_leaves_md_unchanged(void)
{
    tl_ice_metadata *md = parse_ok(ref_v2);
    if (md == NULL) return;
    char *before = dump(md);
    tl_error err;
    tl_ice_snapshot snap = ref_snapshot();
    CHECK_INT(tl_ice_metadata_add_snapshot(md, &snap, "x", &err), TL_ERR_INVALID); /* dup id */
    snap.snapshot_id = 42;
    CHECK_INT(tl_ice_metadata_add_snapshot(md, &snap, "x", &err), TL_ERR_INVALID); /* seq 1 */
    CHECK(strstr(err.message, "sequence number") != NULL);
    snap.sequence_number = 2;
    snap.n_summary = 0;
    CHECK_INT(tl_ice_metadata_add_snapshot(md, &snap, "x", &err), TL_ERR_INVALID);
    snap.n_summary = 1;
    snap.manifest_list = NULL;
    CHECK_INT(tl_ice_metadata_add_snapshot(md, &snap, "x", &err), TL_ERR_INVALID);
    snap = ref_snapshot();
    snap.snapshot_id = 42;
    snap.sequence_number = 2;
    snap.schema_id = 9;
    CHECK_INT(tl_ice_metadata_add_snapshot(md, &snap, "x", &err), TL_ERR_INVALID);
    char *after = dump(md);
    check_same_text(after, before, __LINE__);
    free(before);
    free(after);
    tl_ice_metadata_free(md);
}

static void test_metadata_log_is_trimmed(void)
{
    tl_ice_metadata *md = parse_ok(ref_v2);
    if (md == NULL) return;
    tl_error err;
    CHECK_OK(tl_ice_metadata_set_property(md, "write.metadata.previous-versions-max", "2", &err),
             &err);
    for (int i = 0; i < 4; i++) {
        tl_ice_snapshot snap = ref_snapshot();
        snap.snapshot_id = 100 + i;
        snap.has_parent = true;
        snap.parent_snapshot_id = i ? 100 + i - 1 : ref_snapshot().snapshot_id;
        snap.sequence_number = 2 + i;
        snap.timestamp_ms = 1795947269071LL + 10 * (i + 1);
        char prev[32];
        snprintf(prev, sizeof prev, "v%d.metadata.json", i + 2);
        CHECK_OK(tl_ice_metadata_add_snapshot(md, &snap, prev, &err), &err);
    }
    CHECK_INT(md->n_metadata_log, 2);
    CHECK_STR(md->metadata_log[0].metadata_file, "v4.metadata.json");
    CHECK_STR(md->metadata_log[1].metadata_file, "v5.metadata.json");
    CHECK_INT(md->metadata_log[1].timestamp_ms, 1795947269071LL + 30);
    CHECK_INT(md->n_snapshots, 5);
    CHECK_INT(md->n_snapshot_log, 5);
    CHECK_INT(md->current_snapshot_id, 103);
    CHECK_INT(md->last_sequence_number, 5);
    CHECK_INT(md->last_updated_ms, 1795947269071LL + 40);
    CHECK_INT(tl_ice_metadata_ref(md, "main")->snapshot_id, 103);
    CHECK_INT(tl_ice_metadata_current_snapshot(md)->parent_snapshot_id, 102);
    /* And it all survives a round trip. */
    char *text = dump(md);
    tl_ice_metadata *again = parse_ok(text);
    char *text2 = again ? dump(again) : NULL;
    check_same_text(text2, text, __LINE__);
    free(text);
    free(text2);
    tl_ice_metadata_free(again);
    tl_ice_metadata_free(md);
}

static void test_properties(void)
{
    tl_ice_metadata *md = parse_ok(ref_v1);
    if (md == NULL) return;
    tl_error err;
    CHECK_OK(tl_ice_metadata_set_property(md, "new.key", "1", &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, "timelake.retention", "30d", &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, "timelake.dedup", NULL, &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, "absent", NULL, &err), &err);
    CHECK_INT(md->n_properties, 10);
    CHECK_STR(md->properties[0].value, "30d");
    CHECK_STR(md->properties[9].key, "new.key");
    CHECK(tl_ice_metadata_property(md, "timelake.dedup") == NULL);
    tl_ice_metadata_free(md);
}

/* A table as another engine might write it: extra keys everywhere we must keep. */
static const char foreign[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"s3://b/t\",\"last-sequence-number\":34,\"last-updated-ms\":1602638573590,"
    "\"last-column-id\":3,\"current-schema-id\":1,\"schemas\":[{\"type\":\"struct\",\"schema-id\":"
    "0,\"fields\":[{\"id\":1,\"name\":\"x\",\"required\":true,\"type\":\"long\"}]},{\"type\":"
    "\"struct\",\"schema-id\":1,\"identifier-field-ids\":[1,2],\"fields\":[{\"id\":1,\"name\":"
    "\"x\",\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"y\",\"required\":true,"
    "\"type\":\"long\",\"doc\":\"comment\"},{\"id\":3,\"name\":\"z\",\"required\":true,\"type\":"
    "\"long\"}]}],\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[{\"name\":"
    "\"x\",\"transform\":\"identity\",\"source-id\":1,\"field-id\":1000}]}],\"last-partition-id\":"
    "1000,\"default-sort-order-id\":3,\"sort-orders\":[{\"order-id\":3,\"fields\":[{\"transform\":"
    "\"identity\",\"source-id\":2,\"direction\":\"asc\",\"null-order\":\"nulls-first\"},"
    "{\"transform\":\"bucket[4]\",\"source-id\":3,\"direction\":\"desc\",\"null-order\":"
    "\"nulls-last\"}]}],\"properties\":{\"read.split.target-size\":\"134217728\"},"
    "\"current-snapshot-id\":3055729675574597004,\"snapshots\":[{\"snapshot-id\":"
    "3051729675574597004,\"timestamp-ms\":1515100955770,\"sequence-number\":0,\"summary\":"
    "{\"operation\":\"append\"},\"manifest-list\":\"s3://a/b/1.avro\"},{\"snapshot-id\":"
    "3055729675574597004,\"parent-snapshot-id\":3051729675574597004,\"timestamp-ms\":"
    "1555100955770,\"sequence-number\":1,\"summary\":{\"added-files\":\"4\",\"operation\":"
    "\"overwrite\"},\"manifest-list\":\"s3://a/b/2.avro\",\"schema-id\":1,\"first-row-id\":0,"
    "\"added-rows\":9,\"key-id\":\"k1\"}],\"snapshot-log\":[{\"snapshot-id\":3051729675574597004,"
    "\"timestamp-ms\":1515100955770},{\"snapshot-id\":3055729675574597004,\"timestamp-ms\":"
    "1555100955770}],\"metadata-log\":[],\"refs\":{\"main\":{\"snapshot-id\":3055729675574597004,"
    "\"type\":\"branch\",\"max-snapshot-age-ms\":86400000},\"v1\":{\"snapshot-id\":"
    "3051729675574597004,\"type\":\"tag\",\"max-ref-age-ms\":123}},\"statistics\":[{\"snapshot-"
    "id\":"
    "3055729675574597004,\"statistics-path\":\"s3://a/stats.puffin\",\"file-size-in-bytes\":413,"
    "\"file-footer-size-in-bytes\":42,\"blob-metadata\":[{\"type\":\"ndv\",\"snapshot-id\":1,"
    "\"sequence-number\":1,\"fields\":[1]}]}],\"x-engine\":{\"nested\":[1,2.5,\"s\",null,true]},"
    "\"encryption-keys\":[{\"key-id\":\"k1\",\"encrypted-key-metadata\":\"AA==\"}],"
    "\"next-row-id\":12}";

static json_t *load(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    CHECK(j != NULL);
    return j;
}

static void test_foreign_table_keeps_everything(void)
{
    tl_ice_metadata *md = parse_ok(foreign);
    if (md == NULL) return;
    CHECK_INT(md->current_schema_id, 1);
    CHECK_INT(tl_ice_metadata_current_schema(md)->n_identifier_field_ids, 2);
    CHECK_STR(tl_ice_metadata_current_schema(md)->fields[1].doc, "comment");
    CHECK_INT(tl_ice_metadata_default_sort_order(md)->fields[1].descending, 1);
    const tl_ice_snapshot *cur = tl_ice_metadata_current_snapshot(md);
    CHECK(cur && cur->extra && json_object_size(cur->extra) == 3);
    CHECK_STR(cur->summary[0].key, "operation"); /* moved first */
    CHECK(tl_ice_metadata_ref(md, "v1")->is_tag);
    CHECK_INT(tl_ice_metadata_ref(md, "main")->max_snapshot_age_ms, 86400000);
    CHECK_INT(tl_ice_metadata_ref(md, "main")->min_snapshots_to_keep, -1);
    CHECK(md->extra && json_object_size(md->extra) == 3);

    /* Semantically equal after a round trip (empty logs are left out, as the reference
     * does), and after a commit keeps every extra key. */
    char *text = dump(md);
    json_t *a = load(foreign), *b = load(text);
    json_object_del(a, "metadata-log");
    CHECK(json_equal(a, b));
    tl_ice_snapshot snap = ref_snapshot();
    snap.sequence_number = 35;
    tl_error err;
    CHECK_OK(tl_ice_metadata_add_snapshot(md, &snap, "s3://b/t/metadata/v9.metadata.json", &err),
             &err);
    char *text2 = dump(md);
    json_t *c = load(text2);
    const char *keys[] = {"x-engine", "encryption-keys", "next-row-id", "statistics"};
    for (int i = 0; i < 4; i++)
        CHECK(json_equal(json_object_get(a, keys[i]), json_object_get(c, keys[i])));
    json_t *old_snap = json_array_get(json_object_get(c, "snapshots"), 1);
    CHECK(json_integer_value(json_object_get(old_snap, "added-rows")) == 9);
    CHECK_INT(json_integer_value(json_object_get(c, "current-snapshot-id")), 5813220597814538045LL);
    CHECK_INT(json_array_size(json_object_get(c, "metadata-log")), 1);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    free(text);
    free(text2);
    tl_ice_metadata_free(md);
}

static const char java_v1[] =
    "{\"format-version\":1,\"table-uuid\":\"d20125c8-7284-442c-9aea-15fee620737c\","
    "\"location\":\"s3://bucket/test/location\",\"last-updated-ms\":1602638573874,"
    "\"last-column-id\":3,\"schema\":{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"x\","
    "\"required\":true,\"type\":\"long\"},{\"id\":2,\"name\":\"y\",\"required\":true,\"type\":"
    "\"long\"},{\"id\":3,\"name\":\"z\",\"required\":true,\"type\":\"long\"}]},"
    "\"partition-spec\":[{\"name\":\"x\",\"transform\":\"identity\",\"source-id\":1}],"
    "\"properties\":{},\"current-snapshot-id\":-1,\"snapshots\":[{\"snapshot-id\":7,"
    "\"timestamp-ms\":5,\"manifests\":[\"a.avro\",\"b.avro\"]}]}";

static void test_v1_table(void)
{
    tl_ice_metadata *md = parse_ok(java_v1);
    if (md == NULL) return;
    CHECK_INT(md->format_version, 1);
    CHECK_INT(md->n_schemas, 1);
    CHECK_INT(md->current_schema_id, 0);
    CHECK_INT(md->specs[0].fields[0].field_id, 1000);
    CHECK_INT(md->last_partition_id, 1000);
    CHECK_INT(md->n_sort_orders, 1);
    CHECK_INT(md->sort_orders[0].n_fields, 0);
    CHECK(tl_ice_metadata_current_snapshot(md) == NULL);
    CHECK(md->snapshots[0].manifest_list == NULL && md->snapshots[0].extra != NULL);
    char *text = dump(md);
    json_t *j = load(text);
    CHECK_INT(json_integer_value(json_object_get(j, "format-version")), 1);
    CHECK(json_object_get(j, "schema") != NULL);
    CHECK(json_object_get(j, "partition-spec") != NULL);
    CHECK(json_object_get(j, "last-sequence-number") == NULL);
    json_t *s0 = json_array_get(json_object_get(j, "snapshots"), 0);
    CHECK_INT(json_array_size(json_object_get(s0, "manifests")), 2);
    CHECK(json_object_get(s0, "sequence-number") == NULL);
    tl_ice_metadata *again = parse_ok(text);
    char *text2 = again ? dump(again) : NULL;
    check_same_text(text2, text, __LINE__);
    json_decref(j);
    free(text);
    free(text2);
    tl_ice_metadata_free(again);
    tl_ice_metadata_free(md);
}

static void test_extreme_ids_round_trip(void)
{
    tl_ice_metadata *md = parse_ok(ref_v1);
    if (md == NULL) return;
    tl_ice_snapshot snap = ref_snapshot();
    snap.snapshot_id = INT64_MAX;
    snap.has_parent = true;
    snap.parent_snapshot_id = INT64_MIN;
    snap.timestamp_ms = INT64_MAX - 1;
    tl_error err;
    CHECK_OK(tl_ice_metadata_add_snapshot(md, &snap, NULL, &err), &err);
    char *text = dump(md);
    CHECK(strstr(text, "9223372036854775807") && strstr(text, "-9223372036854775808"));
    tl_ice_metadata *again = parse_ok(text);
    if (again) {
        CHECK_INT(again->current_snapshot_id, INT64_MAX);
        CHECK_INT(again->snapshots[0].parent_snapshot_id, INT64_MIN);
        CHECK_INT(again->last_updated_ms, INT64_MAX - 1);
    }
    free(text);
    tl_ice_metadata_free(again);
    tl_ice_metadata_free(md);
}

/* Applies an edit to the parsed reference v2 document and expects TL_ERR_INVALID with `needle`. */
static void check_invalid_text(const char *text, const char *needle, int line)
{
    tl_ice_metadata *md = NULL;
    tl_error err = {0};
    tl_status st = tl_ice_metadata_parse(text, strlen(text), &md, &err);
    if (st != TL_ERR_INVALID || md != NULL)
        unit_fail(__FILE__, line, "status %d for a document that should be invalid (%s)", st,
                  needle);
    else if (strstr(err.message, needle) == NULL)
        unit_fail(__FILE__, line, "message \"%s\" lacks \"%s\"", err.message, needle);
    tl_ice_metadata_free(md);
}

static void check_invalid_edit(const char *path, json_t *value, const char *needle, int line)
{
    json_t *root = load(ref_v2), *obj = root;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    /* path: "a/b/0/c"; the last part is set (or removed when value is NULL). */
    char *part = buf, *slash;
    while ((slash = strchr(part, '/')) != NULL) {
        *slash = '\0';
        obj = json_is_array(obj) ? json_array_get(obj, (size_t)atoi(part))
                                 : json_object_get(obj, part);
        part = slash + 1;
    }
    if (json_is_array(obj) && (size_t)atoi(part) == json_array_size(obj))
        json_array_append_new(obj, value);
    else if (json_is_array(obj))
        json_array_set_new(obj, (size_t)atoi(part), value);
    else if (value)
        json_object_set_new(obj, part, value);
    else
        json_object_del(obj, part);
    char *text = json_dumps(root, JSON_COMPACT);
    check_invalid_text(text, needle, line);
    free(text);
    json_decref(root);
}

static void test_missing_required_keys(void)
{
    const char *required[] = {
        "format-version",       "table-uuid",      "location",          "last-sequence-number",
        "last-updated-ms",      "last-column-id",  "schemas",           "current-schema-id",
        "partition-specs",      "default-spec-id", "last-partition-id", "sort-orders",
        "default-sort-order-id"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        check_invalid_edit(required[i], NULL, required[i], __LINE__);
    check_invalid_edit("snapshots/0/snapshot-id", NULL, "snapshot-id", __LINE__);
    check_invalid_edit("snapshots/0/timestamp-ms", NULL, "timestamp-ms", __LINE__);
    check_invalid_edit("snapshots/0/manifest-list", NULL, "manifest-list", __LINE__);
    check_invalid_edit("schemas/0/fields/1/name", NULL, "name", __LINE__);
    check_invalid_edit("schemas/0/fields/1/type", NULL, "type", __LINE__);
    check_invalid_edit("partition-specs/0/fields/0/transform", NULL, "transform", __LINE__);
    check_invalid_edit("partition-specs/0/fields/0/field-id", NULL, "field-id", __LINE__);
    check_invalid_edit("sort-orders/0/fields/0/direction", NULL, "direction", __LINE__);
    check_invalid_edit("metadata-log/0/metadata-file", NULL, "metadata-file", __LINE__);
    check_invalid_edit("snapshot-log/0/snapshot-id", NULL, "snapshot-log[0]", __LINE__);
    check_invalid_edit("refs/main/type", NULL, "type", __LINE__);
    check_invalid_edit("snapshots/0/summary/operation", NULL, "operation", __LINE__);
}

static void test_wrong_types_and_values(void)
{
    check_invalid_edit("format-version", json_integer(3), "format-version 3", __LINE__);
    check_invalid_edit("format-version", json_string("2"), "format-version", __LINE__);
    check_invalid_edit("location", json_integer(1), "location", __LINE__);
    check_invalid_edit("last-column-id", json_real(4.0), "last-column-id", __LINE__);
    check_invalid_edit("last-column-id", json_integer(1LL << 40), "last-column-id", __LINE__);
    check_invalid_edit("last-sequence-number", json_integer(-1), "last-sequence-number", __LINE__);
    check_invalid_edit("current-snapshot-id", json_integer(12), "current-snapshot-id 12", __LINE__);
    check_invalid_edit("current-snapshot-id", json_string("5"), "current-snapshot-id", __LINE__);
    check_invalid_edit("current-schema-id", json_integer(4), "current-schema-id 4", __LINE__);
    check_invalid_edit("default-spec-id", json_integer(4), "default-spec-id 4", __LINE__);
    check_invalid_edit("default-sort-order-id", json_integer(0), "default-sort-order-id 0",
                       __LINE__);
    check_invalid_edit("schemas", json_array(), "schemas", __LINE__);
    check_invalid_edit("schemas", json_object(), "schemas", __LINE__);
    check_invalid_edit("schemas/0/fields/0/type", json_string("timestamp_us"), "timestamp_us",
                       __LINE__);
    check_invalid_edit("schemas/0/fields/0/type", json_pack("{s:s}", "type", "map"), "\"key-id\"",
                       __LINE__);
    check_invalid_edit("schemas/0/fields/0/type", json_pack("{s:s}", "type", "variant"),
                       "unsupported nested type \"variant\"", __LINE__);
    check_invalid_edit("properties/write.format.default", json_integer(1), "write.format.default",
                       __LINE__);
    check_invalid_edit("properties", json_array(), "properties", __LINE__);
    check_invalid_edit("snapshots/0", json_string("x"), "snapshots[0]", __LINE__);
    check_invalid_edit("snapshots/0/summary/added-records", json_integer(3), "added-records",
                       __LINE__);
    check_invalid_edit("snapshots/0/parent-snapshot-id", json_string("1"), "parent-snapshot-id",
                       __LINE__);
    check_invalid_edit("refs/main/snapshot-id", json_integer(77), "snapshot 77 does not exist",
                       __LINE__);
    check_invalid_edit("refs/main/type", json_string("trunk"), "branch or tag", __LINE__);
    check_invalid_edit("refs/main", json_integer(1), "refs", __LINE__);
    check_invalid_edit("sort-orders/0/fields/0/null-order", json_string("first"), "null-order",
                       __LINE__);
    check_invalid_edit("snapshots/1",
                       json_pack("{s:I,s:I,s:I,s:s,s:{s:s}}", "snapshot-id",
                                 (json_int_t)5813220597814538045LL, "sequence-number",
                                 (json_int_t)1, "timestamp-ms", (json_int_t)1, "manifest-list", "m",
                                 "summary", "operation", "append"),
                       "used twice", __LINE__);
    check_invalid_edit("partition-specs/1", json_pack("{s:i,s:[]}", "spec-id", 0, "fields"),
                       "spec id 0 is used twice", __LINE__);
    check_invalid_edit("metadata-log", json_pack("[i]", 1), "metadata-log[0]", __LINE__);
}

static void test_not_json(void)
{
    const char *bad[] = {"",      "null",
                         "[]",    "42",
                         "{",     "{\"format-version\":2",
                         "\"x\"", "{\"format-version\":99999999999999999999999}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_ice_metadata *md = NULL;
        tl_error err;
        CHECK_INT(tl_ice_metadata_parse(bad[i], strlen(bad[i]), &md, &err), TL_ERR_INVALID);
        CHECK(md == NULL);
    }
    /* Deeply nested unknown values are refused by the JSON parser, not by the stack. */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 32);
    strcpy(deep, "{\"x\":");
    size_t n = strlen(deep);
    memset(deep + n, '[', depth);
    memset(deep + n + depth, ']', depth);
    strcpy(deep + n + 2 * depth, "}");
    check_invalid_text(deep, "JSON", __LINE__);
    free(deep);
}

static void test_truncations_and_byte_flips(void)
{
    size_t len = strlen(ref_v2);
    for (size_t cut = 0; cut < len; cut++) {
        char *p = malloc(cut ? cut : 1);
        memcpy(p, ref_v2, cut);
        tl_ice_metadata *md = NULL;
        tl_status st = tl_ice_metadata_parse(p, cut, &md, NULL);
        if (st != TL_ERR_INVALID) unit_fail(__FILE__, __LINE__, "cut at %zu: status %d", cut, st);
        tl_ice_metadata_free(md);
        free(p);
    }
    const char *docs[] = {ref_v2, foreign, java_v1};
    uint64_t x = 0x2545F4914F6CDD1DULL;
    int ok = 0;
    for (int round = 0; round < 6000; round++) {
        const char *doc = docs[round % 3];
        size_t n = strlen(doc);
        char *p = malloc(n);
        memcpy(p, doc, n);
        int flips = 1 + round % 3;
        for (int f = 0; f < flips; f++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            static const char repl[] = "0123456789-\"{}[],:.eE tfnul\\x\x01\xff";
            p[(x >> 8) % n] = (x & 1) ? (char)(x >> 32) : repl[(x >> 40) % (sizeof repl - 1)];
        }
        tl_ice_metadata *md = NULL;
        tl_status st = tl_ice_metadata_parse(p, n, &md, NULL);
        if (st == TL_OK) {
            ok++;
            char *text = dump(md);
            tl_ice_metadata *again = text ? parse_ok(text) : NULL;
            tl_ice_metadata_free(again);
            free(text);
        } else if (st != TL_ERR_INVALID) {
            unit_fail(__FILE__, __LINE__, "round %d: status %d", round, st);
        }
        tl_ice_metadata_free(md);
        free(p);
    }
    CHECK(ok > 0); /* some flips land in strings and stay valid */
}

static void test_pieces_json(void)
{
    tl_ice_metadata *md = parse_ok(ref_v1);
    if (md == NULL) return;
    char *text = NULL;
    tl_error err;
    CHECK_OK(tl_ice_partition_fields_to_json_string(tl_ice_metadata_default_spec(md), &text, &err),
             &err);
    CHECK_STR(text, "[{\"source-id\":1,\"field-id\":1000,\"name\":\"time_day\",\"transform\":"
                    "\"day\"}]");
    free(text);
    tl_ice_metadata_free(md);
}

/* A table with many snapshots: copies share each snapshot's storage, the
 * JSON kept from one serialization is what a fresh one would write, and the
 * document stays canonical compact JSON (what jansson itself would write). */
static void test_many_snapshots_shared_and_kept(void)
{
    tl_ice_metadata *md = NULL;
    make_reference_table(&md);
    if (md == NULL) return;
    tl_error err;
    char prev[96];
    for (int i = 1; i <= 50; i++) {
        tl_ice_snapshot snap = ref_snapshot();
        snap.snapshot_id = 1000 + i;
        snap.sequence_number = i;
        snap.timestamp_ms += i;
        snap.has_parent = i > 1;
        snap.parent_snapshot_id = 999 + i;
        snprintf(prev, sizeof prev,
                 "file:///tmp/explore/wh/iot/readings/metadata/v%d.metadata.json", i);
        tl_ice_metadata *next = NULL;
        CHECK_OK(tl_ice_metadata_copy(md, &next, &err), &err);
        CHECK_OK(tl_ice_metadata_add_snapshot(next, &snap, prev, &err), &err);
        char *text = dump(next); /* keeps the JSON of every snapshot */
        for (size_t k = 0; k < md->n_snapshots; k++)
            CHECK(next->snapshots[k].data != NULL &&
                  next->snapshots[k].data == md->snapshots[k].data);
        tl_ice_metadata_free(md);
        md = next;
        free(text);
    }
    const tl_ice_snapshot *cur = tl_ice_metadata_current_snapshot(md);
    CHECK(cur == &md->snapshots[49]);
    CHECK(tl_ice_metadata_parent(md, cur) == &md->snapshots[48]);
    CHECK(tl_ice_metadata_parent(md, &md->snapshots[0]) == NULL);
    size_t len = 0;
    CHECK(tl_ice_snapshot_json(cur, md->format_version, &len) != NULL && len > 100);
    /* Kept per format version: a v1 document lists no sequence numbers. */
    CHECK(tl_ice_snapshot_json(cur, 1, &len) == NULL);
    char *text = dump(md);
    tl_ice_metadata *fresh = parse_ok(text); /* parsed: nothing kept yet */
    CHECK(fresh && tl_ice_snapshot_json(&fresh->snapshots[0], 2, &len) == NULL);
    char *again = fresh ? dump(fresh) : NULL;
    if (again) check_same_text(again, text, __LINE__);
    json_t *j = load(text);
    char *canonical = json_dumps(j, JSON_COMPACT);
    if (canonical) check_same_text(text, canonical, __LINE__);
    CHECK_INT(json_array_size(json_object_get(j, "snapshots")), 50);
    CHECK_INT(json_array_size(json_object_get(j, "snapshot-log")), 50);
    free(canonical);
    json_decref(j);
    free(again);
    free(text);
    tl_ice_metadata_free(fresh);
    tl_ice_metadata_free(md);
}

/* Strings written by hand (metadata-log files, keys) come out as jansson
 * writes them whatever they hold, and invalid UTF-8 is refused. */
static void test_log_strings_escaped_as_jansson(void)
{
    const char *urls[] = {"file:///w/a \"q\".json",    "file:///w/b\\c.json",
                          "file:///w/t\tab.json",      "file:///w/\x01.json",
                          "file:///w/\x7f.json",       "file:///w/caf\xc3\xa9/v1.json",
                          "file:///w/v1.metadata.json"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        tl_ice_metadata *md = parse_ok(ref_v2);
        if (md == NULL) return;
        free(md->metadata_log[0].metadata_file);
        md->metadata_log[0].metadata_file = strdup(urls[i]);
        char *text = dump(md);
        json_t *j = text ? load(text) : NULL;
        char *canonical = j ? json_dumps(j, JSON_COMPACT) : NULL;
        if (canonical) check_same_text(text, canonical, __LINE__);
        json_t *log = json_array_get(json_object_get(j, "metadata-log"), 0);
        CHECK_STR(json_string_value(json_object_get(log, "metadata-file")), urls[i]);
        free(canonical);
        json_decref(j);
        free(text);
        tl_ice_metadata_free(md);
    }
    tl_ice_metadata *md = parse_ok(ref_v2);
    if (md == NULL) return;
    free(md->metadata_log[0].metadata_file);
    md->metadata_log[0].metadata_file = strdup("file:///w/\xff.json");
    tl_buf b = {0};
    tl_error err;
    CHECK(tl_ice_metadata_serialize(md, &b, &err) != TL_OK);
    tl_buf_free(&b);
    tl_ice_metadata_free(md);
}

UNIT_TESTS(UNIT(test_reference_files_parse), UNIT(test_reference_files_serialize_identically),
           UNIT(test_log_strings_escaped_as_jansson),
           UNIT(test_new_and_add_snapshot_match_reference),
           UNIT(test_new_unpartitioned_like_reference), UNIT(test_new_rejects),
           UNIT(test_add_snapshot_rejects_and_leaves_md_unchanged),
           UNIT(test_metadata_log_is_trimmed), UNIT(test_properties),
           UNIT(test_foreign_table_keeps_everything), UNIT(test_v1_table),
           UNIT(test_extreme_ids_round_trip), UNIT(test_missing_required_keys),
           UNIT(test_wrong_types_and_values), UNIT(test_not_json),
           UNIT(test_truncations_and_byte_flips), UNIT(test_pieces_json),
           UNIT(test_many_snapshots_shared_and_kept))
