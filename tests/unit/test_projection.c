/* The projection of older files onto a table's current schema
 * (query/projection.h): when it applies, the read_parquet option it gives
 * (field ids to names and DuckDB types, in schema order), and which file
 * schemas already read as the current one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "iceberg/metadata.h"
#include "iceberg/schema.h"
#include "query/projection.h"
#include "table/table_internal.h"
#include "unit.h"

/* Schema 0: a int, s struct<x int>; schema 1 (current): a long, s struct<x
 * long, y string>, the new column "new col" (a name that needs quoting). */
#define FIELD(id, name, type)                                                                      \
    "{\"id\":" #id ",\"name\":\"" name "\",\"required\":false,\"type\":" type "}"
#define OLD_FIELDS                                                                                 \
    FIELD(1, "a", "\"int\"")                                                                       \
    "," FIELD(2, "s", "{\"type\":\"struct\",\"fields\":[" FIELD(3, "x", "\"int\"") "]}")
#define NEW_FIELDS                                                                                 \
    FIELD(1, "a", "\"long\"")                                                                      \
    "," FIELD(2, "s",                                                                              \
              "{\"type\":\"struct\",\"fields\":[" FIELD(3, "x", "\"long\"") "," FIELD(             \
                  4, "y", "\"string\"") "]}") "," FIELD(5, "new col", "\"string\"")

static const char two_schemas[] =
    "{\"format-version\":2,\"table-uuid\":\"01a2335b-768a-746b-b3d9-c9f1de1c91d8\","
    "\"location\":\"file:///tmp/p\",\"last-sequence-number\":0,\"last-updated-ms\":1,"
    "\"last-column-id\":5,\"schemas\":[{\"schema-id\":0,\"type\":\"struct\",\"fields\":[" OLD_FIELDS
    "]},{\"schema-id\":1,\"type\":\"struct\",\"fields\":[" NEW_FIELDS "]}],"
    "\"current-schema-id\":1,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]}],"
    "\"default-spec-id\":0,\"last-partition-id\":999,\"properties\":{},"
    "\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],\"default-sort-order-id\":0}";

static tl_ice_metadata *parse(const char *json)
{
    tl_ice_metadata *md = NULL;
    tl_error err = {0};
    CHECK_OK(tl_ice_metadata_parse(json, strlen(json), &md, &err), &err);
    return md;
}

/* The Arrow schema a file written under schema `id` of md has. */
static void file_schema(const tl_ice_metadata *md, int32_t id, struct ArrowSchema *out)
{
    tl_error err = {0};
    CHECK_OK(tl_ice_schema_to_arrow(tl_ice_metadata_schema(md, id), out, &err), &err);
}

static void test_option_and_fits(void)
{
    tl_table t = {.md = parse(two_schemas)};
    tl_error err = {0};
    CHECK(tl_projection_needed(&t));
    tl_buf sql = {0};
    CHECK_OK(tl_projection_option(&t, &sql, &err), &err);
    CHECK(tl_buf_append_byte(&sql, 0) == 0);
    CHECK_STR((const char *)sql.data,
              ", schema = MAP {1: {name: 'a', type: 'BIGINT', default_value: NULL}, "
              "2: {name: 's', type: 'STRUCT(\"x\" BIGINT, \"y\" VARCHAR)', default_value: NULL}, "
              "5: {name: 'new col', type: 'VARCHAR', default_value: NULL}}");
    tl_buf_free(&sql);

    struct ArrowSchema now, old;
    file_schema(t.md, 1, &now);
    file_schema(t.md, 0, &old);
    CHECK(tl_projection_fits(&t, &now));
    CHECK(!tl_projection_fits(&t, &old)); /* narrower types, fewer columns */
    /* The same names and types under another field id: not the same column. */
    CHECK_OK(tl_schema_set_field_id(now.children[2], 9, &err), &err);
    CHECK(!tl_projection_fits(&t, &now));
    tl_schema_release(&now);
    /* A nested field renamed (by another writer): not the schema's. */
    file_schema(t.md, 1, &now);
    tl_ice_field *y = &t.md->schemas[1].fields[1].children[1]; /* schema 1 is second */
    free(y->name);
    y->name = strdup("z");
    CHECK(!tl_projection_fits(&t, &now));
    tl_schema_release(&now);

    /* With the old schema current again (time travel to a snapshot of it), the
     * old files fit. */
    t.md->current_schema_id = 0;
    CHECK(tl_projection_fits(&t, &old));
    tl_schema_release(&old);
    tl_ice_metadata_free(t.md);
}

static void test_one_schema_needs_none(void)
{
    char json[sizeof two_schemas];
    /* Only schema 1: cut schema 0 out of the list. */
    const char *from = strstr(two_schemas, "{\"schema-id\":0"),
               *to = strstr(from, "{\"schema-id\":1");
    snprintf(json, sizeof json, "%.*s%s", (int)(from - two_schemas), two_schemas, to);
    tl_table t = {.md = parse(json)};
    tl_error err = {0};
    CHECK(!tl_projection_needed(&t));
    tl_buf sql = {0};
    CHECK_OK(tl_projection_option(&t, &sql, &err), &err);
    CHECK(sql.len == 0);
    struct ArrowSchema any;
    file_schema(t.md, 1, &any);
    any.children[0]->format = "i"; /* even one the schema does not describe: read as it is */
    CHECK(tl_projection_fits(&t, &any));
    any.children[0]->format = "l";
    tl_schema_release(&any);
    tl_ice_metadata_free(t.md);
}

UNIT_TESTS(UNIT(test_option_and_fits), UNIT(test_one_schema_needs_none))
