/* A driver for tests/py/test_iceberg_*.py: exposes src/iceberg's metadata,
 * transform and bound code on the command line so Python oracles (pyiceberg)
 * can check what it writes and computes.
 *
 *   iceberg_tool create <dir>            writes v1..v3.metadata.json: a new table, then 2 commits
 *   iceberg_tool roundtrip <in> <out>    parses <in> and serializes it to <out>
 *   iceberg_tool transform <name> <micros>...   prints "<value> <human string>" per input
 *   iceberg_tool bound <type> <int>...   prints the hex bound of each integer (decimal: unscaled)
 *   iceberg_tool arrow <in>              prints the current schema's Arrow children as
 *                                        "name format nullable field_id" lines
 * Exit status 0 on success; errors go to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "iceberg/bounds.h"
#include "iceberg/metadata.h"
#include "iceberg/transform.h"

static int fail(const tl_error *err)
{
    fprintf(stderr, "error %d: %s\n", (int)err->code, err->message);
    return 1;
}

static int read_file(const char *path, tl_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) return -1;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tl_buf_append(out, chunk, n);
    fclose(f);
    return 0;
}

static int write_metadata(const tl_ice_metadata *md, const char *path)
{
    tl_buf b = {0};
    tl_error err;
    if (tl_ice_metadata_serialize(md, &b, &err) != TL_OK) return fail(&err);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(b.data, 1, b.len, f) != b.len) return perror(path), 1;
    fclose(f);
    tl_buf_free(&b);
    return 0;
}

static int cmd_create(const char *dir)
{
    static const char *types[] = {"timestamptz",    "string",    "double",   "int",  "long",
                                  "decimal(10, 2)", "binary",    "fixed[4]", "uuid", "date",
                                  "time",           "timestamp", "boolean",  "float"};
    static const char *names[] = {"time", "device_id", "temp", "qty", "big",   "price", "raw",
                                  "tag",  "id",        "day",  "tod", "local", "flag",  "f"};
    tl_ice_field fields[14];
    tl_error err;
    for (int i = 0; i < 14; i++) {
        fields[i] = (tl_ice_field){.id = i + 1, .name = (char *)names[i], .required = i == 0};
        if (tl_ice_type_parse(types[i], &fields[i].type, &err) != TL_OK) return fail(&err);
    }
    fields[2].doc = "degrees";
    tl_ice_schema schema = {0, fields, 14, NULL, 0};
    tl_ice_partition_field pf[] = {{1, 1000, "time_day", "day"},
                                   {2, 1001, "device_id_bucket", "bucket[8]"}};
    tl_ice_partition_spec spec = {0, pf, 2};
    tl_ice_sort_field sf[] = {{2, "identity", false, true}, {1, "identity", true, false}};
    tl_ice_sort_order order = {1, sf, 2};
    const char *props[] = {"write.format.default",
                           "parquet",
                           "timelake.time-column",
                           "time",
                           "write.metadata.previous-versions-max",
                           "20",
                           NULL};
    char location[1024], path[1100];
    snprintf(location, sizeof location, "file://%s", dir);
    tl_ice_metadata *md;
    if (tl_ice_metadata_new("01a226cc-8bc3-742f-84ed-84dcdd777b95", location, &schema, &spec,
                            &order, props, 1795947269059LL, &md, &err) != TL_OK)
        return fail(&err);
    snprintf(path, sizeof path, "%s/v1.metadata.json", dir);
    int rc = write_metadata(md, path);
    tl_kv s1[] = {{"operation", "append"}, {"added-records", "3"}, {"total-records", "3"}};
    tl_kv s2[] = {{"operation", "overwrite"}, {"added-records", "1"}, {"total-records", "4"}};
    tl_ice_snapshot snaps[] = {
        {.snapshot_id = 5813220597814538045LL,
         .sequence_number = 1,
         .timestamp_ms = 1795947269071LL,
         .manifest_list = "file:///m/snap-1.avro",
         .summary = s1,
         .n_summary = 3,
         .has_schema_id = true},
        {.snapshot_id = 9223372036854775807LL,
         .has_parent = true,
         .parent_snapshot_id = 5813220597814538045LL,
         .sequence_number = 2,
         .timestamp_ms = 1795947269999LL,
         .manifest_list = "file:///m/snap-2.avro",
         .summary = s2,
         .n_summary = 3,
         .has_schema_id = true},
    };
    for (int i = 0; rc == 0 && i < 2; i++) {
        char prev[1100];
        snprintf(prev, sizeof prev, "%s/metadata/v%d.metadata.json", location, i + 1);
        if (tl_ice_metadata_add_snapshot(md, &snaps[i], prev, &err) != TL_OK) rc = fail(&err);
        snprintf(path, sizeof path, "%s/v%d.metadata.json", dir, i + 2);
        if (rc == 0) rc = write_metadata(md, path);
    }
    tl_ice_metadata_free(md);
    return rc;
}

static int cmd_roundtrip(const char *in, const char *out)
{
    tl_buf b = {0};
    if (read_file(in, &b) != 0) return perror(in), 1;
    tl_ice_metadata *md;
    tl_error err;
    tl_status st = tl_ice_metadata_parse((const char *)b.data, b.len, &md, &err);
    tl_buf_free(&b);
    if (st != TL_OK) return fail(&err);
    int rc = write_metadata(md, out);
    tl_ice_metadata_free(md);
    return rc;
}

static int cmd_transform(const char *name, int argc, char **argv)
{
    tl_ice_transform t;
    tl_error err;
    if (tl_ice_transform_parse(name, &t, &err) != TL_OK) return fail(&err);
    for (int i = 0; i < argc; i++) {
        int64_t v = tl_ice_transform_apply(t, strtoll(argv[i], NULL, 10));
        char human[64];
        tl_ice_transform_format_value(t, v, human, sizeof human);
        printf("%lld %s\n", (long long)v, human);
    }
    return 0;
}

static int cmd_bound(const char *type, int argc, char **argv)
{
    tl_ice_type t;
    tl_error err;
    if (tl_ice_type_parse(type, &t, &err) != TL_OK) return fail(&err);
    for (int i = 0; i < argc; i++) {
        uint8_t b[TL_ICE_BOUND_FIXED_MAX];
        size_t n;
        tl_status st = t.id == TL_ICE_FLOAT || t.id == TL_ICE_DOUBLE
                           ? tl_ice_bound_from_double(&t, strtod(argv[i], NULL), b, &n, &err)
                           : tl_ice_bound_from_int(&t, strtoll(argv[i], NULL, 10), b, &n, &err);
        if (st != TL_OK) return fail(&err);
        for (size_t k = 0; k < n; k++) printf("%02x", b[k]);
        printf("\n");
    }
    return 0;
}

static int cmd_arrow(const char *in)
{
    tl_buf b = {0};
    if (read_file(in, &b) != 0) return perror(in), 1;
    tl_ice_metadata *md;
    tl_error err;
    tl_status st = tl_ice_metadata_parse((const char *)b.data, b.len, &md, &err);
    tl_buf_free(&b);
    if (st != TL_OK) return fail(&err);
    struct ArrowSchema s;
    st = tl_ice_schema_to_arrow(tl_ice_metadata_current_schema(md), &s, &err);
    tl_ice_metadata_free(md);
    if (st != TL_OK) return fail(&err);
    for (int64_t i = 0; i < s.n_children; i++) {
        const struct ArrowSchema *c = s.children[i];
        int32_t len = 0;
        const char *id = tl_metadata_find(c->metadata, "PARQUET:field_id", &len);
        printf("%s %s %d %.*s\n", c->name, c->format, (c->flags & ARROW_FLAG_NULLABLE) != 0,
               (int)len, id ? id : "");
    }
    tl_schema_release(&s);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "create") == 0) return cmd_create(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "roundtrip") == 0) return cmd_roundtrip(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "transform") == 0)
        return cmd_transform(argv[2], argc - 3, argv + 3);
    if (argc >= 3 && strcmp(argv[1], "bound") == 0) return cmd_bound(argv[2], argc - 3, argv + 3);
    if (argc >= 3 && strcmp(argv[1], "arrow") == 0) return cmd_arrow(argv[2]);
    fprintf(stderr, "usage: iceberg_tool create|roundtrip|transform|bound|arrow ...\n");
    return 2;
}
