/* The rollup definition (table/rollup_def.h) read from metadata the
 * reference (timelake 0.7.0) wrote for
 *   CREATE MATERIALIZED ROLLUP iot.d AS SELECT device, time_bucket(INTERVAL
 *   '1 day', time) AS bucket, count(*) AS n, sum(k) AS sk FROM iot.raw
 *   GROUP BY device, bucket WITH (refresh_interval = '10m', retention = '365d') */
#include <stdlib.h>
#include <string.h>

#include "iceberg/metadata.h"
#include "table/rollup_def.h"
#include "unit.h"

static const char ref_rollup[] =
    "{\"format-version\":2,\"table-uuid\":\"01a2335b-768a-746b-b3d9-c9f1de1c91d8\",\"location\":"
    "\"file:/"
    "//tmp/s21/lake2/iot/"
    "d\",\"last-sequence-number\":1,\"last-updated-ms\":1796157961879,\"last-colu"
    "mn-id\":4,\"schemas\":[{\"schema-id\":0,\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":"
    "\"device\",\"requ"
    "ired\":false,\"type\":\"string\"},{\"id\":2,\"name\":\"bucket\",\"required\":true,\"type\":"
    "\"timestamptz\"}"
    ",{\"id\":3,\"name\":\"n\",\"required\":true,\"type\":\"long\"},{\"id\":4,\"name\":\"sk\","
    "\"required\":false,\"t"
    "ype\":\"long\"}]}],\"current-schema-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[{"
    "\"source-i"
    "d\":2,\"field-id\":1000,\"name\":\"bucket_month\",\"transform\":\"month\"}]}],\"default-spec-"
    "id\":0,\"la"
    "st-partition-id\":1000,\"properties\":{\"timelake.rollup-source\":\"iot.raw\",\"write.parquet."
    "comp"
    "ression-codec\":\"zstd\",\"timelake.format-version\":\"0.3.0\",\"timelake.series-key\":"
    "\"device\",\"ti"
    "melake.dedup\":\"true\",\"timelake.chunk-interval\":\"month\",\"timelake.rollup-aggregates\":"
    "\"[{\\\"n"
    "ame\\\":\\\"n\\\",\\\"function\\\":\\\"count\\\"},{\\\"name\\\":\\\"sk\\\",\\\"function\\\":"
    "\\\"sum\\\",\\\"column\\\":\\\"k\\\""
    "}]\",\"timelake.time-column\":\"bucket\",\"timelake.rollup-bucket\":\"1d\",\"write.metadata."
    "previous"
    "-versions-max\":\"20\",\"timelake.rollup-refresh-interval\":\"10m\",\"write.format.default\":"
    "\"parqu"
    "et\",\"timelake.retention\":\"365d\"},\"current-snapshot-id\":5925855496634680114,\"snapshot-"
    "log\":"
    "[{\"snapshot-id\":5925855496634680114,\"timestamp-ms\":1796157961879}],\"metadata-log\":[{"
    "\"metad"
    "ata-file\":\"file:///tmp/s21/lake2/iot/d/metadata/"
    "v1.metadata.json\",\"timestamp-ms\":179615796"
    "1866}],\"sort-orders\":[{\"order-id\":1,\"fields\":[{\"source-id\":1,\"transform\":"
    "\"identity\",\"direc"
    "tion\":\"asc\",\"null-order\":\"nulls-first\"},{\"source-id\":2,\"transform\":\"identity\","
    "\"direction\":"
    "\"asc\",\"null-order\":\"nulls-first\"}]}],\"default-sort-order-id\":1,\"refs\":{\"main\":{"
    "\"snapshot-i"
    "d\":5925855496634680114,\"type\":\"branch\"}},\"snapshots\":[{\"snapshot-id\":"
    "5925855496634680114,\""
    "sequence-number\":1,\"timestamp-ms\":1796157961879,\"manifest-list\":\"file:///tmp/s21/lake2/"
    "iot"
    "/d/metadata/snap-5925855496634680114-de19b998-a685-44e7-847a-7b85b9373f37.avro\",\"summary\":"
    "{\"operation\":\"append\",\"timelake.rollup-source-sequence\":\"1\",\"total-position-"
    "deletes\":\"0\",\""
    "total-equality-deletes\":\"0\",\"timelake.last-value-index\":\"file:///tmp/s21/lake2/iot/d/"
    "metad"
    "ata/lvi-5925855496634680114-a5d59ebd-d8b2-435d-86de-48a51fb047e5.parquet\",\"added-files-siz"
    "e\":\"1707\",\"added-data-files\":\"1\",\"timelake.rollup-source-snapshot\":"
    "\"1853276296482648090\",\""
    "total-records\":\"2\",\"added-records\":\"2\",\"total-files-size\":\"1707\",\"total-data-"
    "files\":\"1\",\"t"
    "otal-delete-files\":\"0\"},\"schema-id\":0}]}";

static tl_ice_metadata *parse(const char *json)
{
    tl_ice_metadata *md = NULL;
    tl_error err = {0};
    CHECK_OK(tl_ice_metadata_parse(json, strlen(json), &md, &err), &err);
    return md;
}

static void test_reference_rollup(void)
{
    tl_ice_metadata *md = parse(ref_rollup);
    tl_rollup_def d;
    tl_error err = {0};
    CHECK_OK(tl_rollup_def_parse(md, "iot.d", &d, &err), &err);
    CHECK_STR(d.source, "iot.raw");
    CHECK_STR(d.bucket_column, "bucket");
    CHECK_INT(d.bucket_us, 86400LL * 1000000);
    CHECK_INT(d.keys.len, 1);
    CHECK_STR(d.keys.items[0], "device");
    CHECK_INT(d.n_aggs, 2);
    CHECK_STR(d.aggs[0].name, "n");
    CHECK(d.aggs[0].fn == TL_ROLLUP_COUNT && d.aggs[0].column == NULL);
    CHECK_STR(d.aggs[1].name, "sk");
    CHECK(d.aggs[1].fn == TL_ROLLUP_SUM);
    CHECK_STR(d.aggs[1].column, "k");
    CHECK_INT(d.refresh_interval_us, 600LL * 1000000);
    CHECK(d.routing);
    CHECK_INT(d.source_snapshot, 1853276296482648090LL);
    CHECK_INT(d.source_sequence, 1);
    /* written back as the reference wrote it */
    char *json = tl_rollup_aggregates_json(d.aggs, d.n_aggs);
    CHECK_STR(json, tl_ice_metadata_property(md, TL_ROLLUP_AGGREGATES_KEY));
    free(json);
    tl_rollup_def_free(&d);
    tl_ice_metadata_free(md);
}

static void test_functions_and_lists(void)
{
    for (int f = TL_ROLLUP_COUNT; f <= TL_ROLLUP_TWM_LINEAR; f++) {
        tl_rollup_fn back;
        CHECK(tl_rollup_fn_parse(tl_rollup_fn_name((tl_rollup_fn)f), &back) && (int)back == f);
    }
    tl_rollup_fn fn;
    CHECK(!tl_rollup_fn_parse("median", &fn));
    CHECK(tl_rollup_fn_parse("time_weighted_mean:linear", &fn) && fn == TL_ROLLUP_TWM_LINEAR);

    tl_ice_metadata *md = parse(ref_rollup);
    tl_error err = {0};
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUPS_KEY, "iot.a, iot.b,,iot.c", &err), &err);
    tl_strlist names = {0};
    CHECK_OK(tl_rollup_list(md, &names, &err), &err);
    CHECK_INT(names.len, 3);
    char *joined = tl_rollup_list_join(&names);
    CHECK_STR(joined, "iot.a,iot.b,iot.c");
    free(joined);
    tl_strlist_free(&names);

    /* a table that is no rollup, and malformed definitions */
    tl_rollup_def d;
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_SOURCE_KEY, NULL, &err), &err);
    CHECK(tl_rollup_def_parse(md, "iot.d", &d, &err) == TL_ERR_INVALID);
    CHECK_STR(err.message, "iot.d is not a rollup");
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_SOURCE_KEY, "iot.raw", &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_AGGREGATES_KEY,
                                          "[{\"name\":\"x\",\"function\":\"median\"}]", &err),
             &err);
    CHECK(tl_rollup_def_parse(md, "iot.d", &d, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "timelake.rollup-aggregates") != NULL);
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_AGGREGATES_KEY, "[]", &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_BUCKET_KEY, "soon", &err), &err);
    CHECK(tl_rollup_def_parse(md, "iot.d", &d, &err) == TL_ERR_INVALID);
    CHECK(strstr(err.message, "timelake.rollup-bucket") != NULL);
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_BUCKET_KEY, "90m", &err), &err);
    CHECK_OK(tl_ice_metadata_set_property(md, TL_ROLLUP_ROUTING_KEY, "false", &err), &err);
    CHECK_OK(tl_rollup_def_parse(md, "iot.d", &d, &err), &err);
    CHECK(!d.routing && d.bucket_us == 90LL * 60 * 1000000 && d.n_aggs == 0);
    tl_rollup_def_free(&d);
    tl_ice_metadata_free(md);
}

UNIT_TESTS(UNIT(test_reference_rollup), UNIT(test_functions_and_lists))
