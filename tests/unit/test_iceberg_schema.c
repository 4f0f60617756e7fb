#include <stdlib.h>

#include "arrow/array.h"
#include "iceberg/schema.h"
#include "unit.h"

static void test_type_strings_round_trip(void)
{
    const char *types[] = {
        "boolean", "int",       "long",        "float",          "double",         "date",
        "time",    "timestamp", "timestamptz", "timestamp_ns",   "timestamptz_ns", "string",
        "uuid",    "binary",    "fixed[16]",   "decimal(10, 2)", "decimal(38, 0)", "fixed[1]"};
    tl_error err;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        tl_ice_type t;
        CHECK_OK(tl_ice_type_parse(types[i], &t, &err), &err);
        char buf[TL_ICE_TYPE_STR_MAX];
        tl_ice_type_format(&t, buf, sizeof buf);
        CHECK_STR(buf, types[i]);
    }
}

static void test_type_parse_variants(void)
{
    tl_error err;
    tl_ice_type t;
    CHECK_OK(tl_ice_type_parse("decimal(9,3)", &t, &err), &err);
    CHECK_INT(t.id, TL_ICE_DECIMAL);
    CHECK_INT(t.precision, 9);
    CHECK_INT(t.scale, 3);
    CHECK_OK(tl_ice_type_parse("decimal( 5 ,  0 )", &t, &err), &err);
    CHECK_INT(t.precision, 5);
    CHECK_OK(tl_ice_type_parse("fixed[7]", &t, &err), &err);
    CHECK_INT(t.id, TL_ICE_FIXED);
    CHECK_INT(t.length, 7);
}

static void test_type_parse_rejects(void)
{
    const char *bad[] = {"",
                         "Long",
                         "int ",
                         "decimal(39, 0)",
                         "decimal(5, 6)",
                         "decimal(0, 0)",
                         "decimal(10)",
                         "decimal(10, 2",
                         "decimal(-1, 2)",
                         "decimal(10, 2)x",
                         "fixed[0]",
                         "fixed[]",
                         "fixed[16",
                         "fixed[99999999999]",
                         "struct",
                         "list<int>",
                         "decimal(1234567890, 1)"};
    tl_error err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_ice_type t;
        CHECK_INT(tl_ice_type_parse(bad[i], &t, &err), TL_ERR_INVALID);
    }
    tl_ice_type t;
    tl_ice_type_parse("variant", &t, &err);
    CHECK(strstr(err.message, "\"variant\"") != NULL);
}

/* Builds a struct schema from (name, format, nullable) triples; dictionary of utf8 for "dict". */
static void make_arrow(struct ArrowSchema *s, const char *const *cols, size_t n)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, "+s", "", 0, (int64_t)n, &err), &err);
    for (size_t i = 0; i < n; i++) {
        const char *name = cols[3 * i], *fmt = cols[3 * i + 1];
        int64_t flags = cols[3 * i + 2][0] == 'y' ? ARROW_FLAG_NULLABLE : 0;
        bool dict = strcmp(fmt, "dict") == 0;
        CHECK_OK(tl_schema_init(s->children[i], dict ? "i" : fmt, name, flags, 0, &err), &err);
        if (dict) {
            s->children[i]->dictionary = calloc(1, sizeof(struct ArrowSchema));
            CHECK_OK(tl_schema_init(s->children[i]->dictionary, "u", NULL, 0, 0, &err), &err);
        }
    }
}

static void test_arrow_mapping_as_reference(void)
{
    /* Each column: name, Arrow format, nullable; then the Iceberg type the reference writes. */
    const char *cols[] = {"i8",      "c",
                          "y",       "i16",
                          "s",       "y",
                          "i32",     "i",
                          "n",       "i64",
                          "l",       "y",
                          "u8",      "C",
                          "y",       "u16",
                          "S",       "y",
                          "u32",     "I",
                          "y",       "f32",
                          "f",       "y",
                          "f64",     "g",
                          "y",       "b",
                          "b",       "y",
                          "s",       "u",
                          "y",       "ls",
                          "U",       "y",
                          "bin",     "z",
                          "y",       "lbin",
                          "Z",       "y",
                          "fsb",     "w:16",
                          "y",       "dec",
                          "d:10,2",  "y",
                          "d",       "tdD",
                          "y",       "t64",
                          "ttu",     "y",
                          "t32",     "ttm",
                          "y",       "tsn",
                          "tsn:",    "y",
                          "tsms",    "tsm:Europe/Paris",
                          "y",       "tsu",
                          "tsu:UTC", "n",
                          "dict",    "dict",
                          "y"};
    const char *expect[] = {
        "int",    "int",       "int",         "long",           "int",    "int",
        "long",   "float",     "double",      "boolean",        "string", "string",
        "binary", "binary",    "fixed[16]",   "decimal(10, 2)", "date",   "time",
        "time",   "timestamp", "timestamptz", "timestamptz",    "string"};
    size_t n = sizeof expect / sizeof expect[0];
    CHECK_INT(sizeof cols / sizeof cols[0], 3 * n);
    struct ArrowSchema s;
    make_arrow(&s, cols, n);
    tl_ice_schema is;
    tl_error err;
    CHECK_OK(tl_ice_schema_from_arrow(&s, 1, &is, &err), &err);
    CHECK_INT(is.n_fields, n);
    for (size_t i = 0; i < is.n_fields && i < n; i++) {
        char buf[TL_ICE_TYPE_STR_MAX];
        tl_ice_type_format(&is.fields[i].type, buf, sizeof buf);
        CHECK_STR(buf, expect[i]);
        CHECK_INT(is.fields[i].id, (int)i + 1);
        CHECK_STR(is.fields[i].name, cols[3 * i]);
        CHECK_INT(is.fields[i].required, cols[3 * i + 2][0] == 'n');
    }
    tl_ice_schema_free(&is);
    tl_schema_release(&s);
}

static void check_arrow_error(const char *format, const char *needle)
{
    const char *cols[] = {"ok", "l", "y", "bad", format, "y"};
    struct ArrowSchema s;
    make_arrow(&s, cols, 2);
    tl_ice_schema is;
    tl_error err;
    CHECK_INT(tl_ice_schema_from_arrow(&s, 1, &is, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, needle) != NULL);
    CHECK(strncmp(err.message, "column \"bad\": ", 14) == 0);
    CHECK(is.fields == NULL && is.n_fields == 0);
    tl_schema_release(&s);
}

static void test_arrow_mapping_errors(void)
{
    check_arrow_error("L", "UInt64 columns are not supported by Iceberg; cast to Int64");
    check_arrow_error("+ud:0,1", "is not supported by Iceberg (lists, structs and maps are)");
    check_arrow_error("+l", "a list must have one child");
    check_arrow_error("e", "float16");
    check_arrow_error("tdm", "date64");
    check_arrow_error("n", "null");
}

static void test_arrow_schema_errors(void)
{
    tl_error err;
    tl_ice_schema is;
    struct ArrowSchema s;
    CHECK_OK(tl_schema_init(&s, "i", "x", 0, 0, &err), &err);
    CHECK_INT(tl_ice_schema_from_arrow(&s, 1, &is, &err), TL_ERR_INVALID);
    tl_schema_release(&s);

    const char *dup[] = {"a", "i", "y", "a", "l", "y"};
    make_arrow(&s, dup, 2);
    CHECK_INT(tl_ice_schema_from_arrow(&s, 1, &is, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "duplicate") != NULL);
    tl_schema_release(&s);

    const char *unnamed[] = {"", "i", "y"};
    make_arrow(&s, unnamed, 1);
    CHECK_INT(tl_ice_schema_from_arrow(&s, 1, &is, &err), TL_ERR_INVALID);
    tl_schema_release(&s);

    /* A dictionary of something other than strings/binary. */
    const char *d[] = {"d", "i", "y"};
    make_arrow(&s, d, 1);
    s.children[0]->dictionary = calloc(1, sizeof(struct ArrowSchema));
    CHECK_OK(tl_schema_init(s.children[0]->dictionary, "g", NULL, 0, 0, &err), &err);
    CHECK_INT(tl_ice_schema_from_arrow(&s, 1, &is, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "column \"d\"") != NULL);
    tl_schema_release(&s);
}

static void test_to_arrow(void)
{
    const char *types[] = {
        "int",      "long",           "float", "double", "boolean",   "string",      "binary",
        "fixed[4]", "decimal(12, 3)", "date",  "time",   "timestamp", "timestamptz", "uuid"};
    const char *formats[] = {"i",   "l",      "f",   "g",   "b",    "u",          "Z",
                             "w:4", "d:12,3", "tdD", "ttu", "tsu:", "tsu:+00:00", "w:16"};
    size_t n = sizeof types / sizeof types[0];
    tl_ice_schema s = {0};
    s.fields = calloc(n, sizeof *s.fields);
    s.n_fields = n;
    tl_error err;
    for (size_t i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%zu", i);
        s.fields[i].id = (int32_t)(10 + i);
        s.fields[i].name = strdup(name);
        s.fields[i].required = i % 2 == 0;
        CHECK_OK(tl_ice_type_parse(types[i], &s.fields[i].type, &err), &err);
    }
    struct ArrowSchema a;
    CHECK_OK(tl_ice_schema_to_arrow(&s, &a, &err), &err);
    CHECK_STR(a.format, "+s");
    CHECK_INT(a.n_children, n);
    for (size_t i = 0; i < n; i++) {
        const struct ArrowSchema *c = a.children[i];
        CHECK_STR(c->format, formats[i]);
        CHECK_STR(c->name, s.fields[i].name);
        CHECK_INT((c->flags & ARROW_FLAG_NULLABLE) != 0, i % 2 == 1);
        int32_t len = 0;
        const char *v = tl_metadata_find(c->metadata, "PARQUET:field_id", &len);
        char want[16];
        snprintf(want, sizeof want, "%d", (int)(10 + i));
        CHECK(v != NULL && len == (int32_t)strlen(want) && memcmp(v, want, (size_t)len) == 0);
    }
    /* And back: the same types except the lossy uuid (-> fixed[16]). */
    tl_ice_schema back;
    CHECK_OK(tl_ice_schema_from_arrow(&a, 10, &back, &err), &err);
    for (size_t i = 0; i + 1 < n; i++)
        CHECK(tl_ice_type_equal(&back.fields[i].type, &s.fields[i].type));
    CHECK_INT(back.fields[n - 1].type.id, TL_ICE_FIXED);
    tl_ice_schema_free(&back);
    tl_schema_release(&a);
    tl_ice_schema_free(&s);
}

static const char schema_json[] =
    "{\"schema-id\":3,\"type\":\"struct\",\"fields\":["
    "{\"id\":1,\"name\":\"time\",\"required\":true,\"type\":\"timestamptz\"},"
    "{\"id\":2,\"name\":\"device_id\",\"required\":false,\"type\":\"string\",\"doc\":\"who\"},"
    "{\"id\":5,\"name\":\"v\",\"required\":false,\"type\":\"decimal(10, 2)\"}],"
    "\"identifier-field-ids\":[2]}";

static void test_json_round_trip(void)
{
    tl_error err;
    tl_ice_schema s, again, copy;
    CHECK_OK(tl_ice_schema_parse_json(schema_json, strlen(schema_json), &s, &err), &err);
    CHECK_INT(s.schema_id, 3);
    CHECK_INT(s.n_fields, 3);
    CHECK_STR(s.fields[1].doc, "who");
    CHECK_INT(s.n_identifier_field_ids, 1);
    CHECK_INT(tl_ice_schema_max_field_id(&s), 5);
    CHECK(tl_ice_schema_find(&s, "v") == &s.fields[2]);
    CHECK(tl_ice_schema_find(&s, "nope") == NULL);
    CHECK(tl_ice_schema_field_by_id(&s, 2) == &s.fields[1]);
    char *text = NULL;
    CHECK_OK(tl_ice_schema_to_json_string(&s, &text, &err), &err);
    CHECK_STR(text, schema_json);
    CHECK_OK(tl_ice_schema_parse_json(text, strlen(text), &again, &err), &err);
    CHECK(tl_ice_schema_same_fields(&s, &again));
    CHECK_OK(tl_ice_schema_copy(&s, &copy, &err), &err);
    CHECK(tl_ice_schema_same_fields(&s, &copy));
    CHECK_INT(copy.schema_id, 3);
    free(text);
    tl_ice_schema_free(&s);
    tl_ice_schema_free(&again);
    tl_ice_schema_free(&copy);
}

/* Nested types as the reference writes them (an m4 rollup's list<struct>, a
 * time-weighted state, a map of lists), ids assigned as Iceberg assigns them. */
static const char nested_json[] =
    "{\"schema-id\":0,\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"device\",\"required\":"
    "false,\"type\""
    ":\"string\"},{\"id\":2,\"name\":\"bucket\",\"required\":true,\"type\":\"timestamptz\"},{"
    "\"id\":3,\"name\":"
    "\"m4_temp\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":7,\"element-"
    "required\":false"
    ",\"element\":{\"type\":\"struct\",\"fields\":[{\"id\":8,\"name\":\"time\",\"required\":false,"
    "\"type\":\"tim"
    "estamptz\"},{\"id\":9,\"name\":\"value\",\"required\":false,\"type\":\"double\"}]}}},{\"id\":"
    "4,\"name\":\""
    "tw\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":10,\"element-required\":"
    "false,\"ele"
    "ment\":{\"type\":\"struct\",\"fields\":[{\"id\":11,\"name\":\"first_time\",\"required\":true,"
    "\"type\":\"lo"
    "ng\"},{\"id\":12,\"name\":\"area\",\"required\":true,\"type\":\"double\"}]}}},{\"id\":5,"
    "\"name\":\"m\",\"req"
    "uired\":false,\"type\":{\"type\":\"map\",\"key-id\":13,\"key\":\"string\",\"value-id\":14,"
    "\"value-requir"
    "ed\":false,\"value\":{\"type\":\"list\",\"element-id\":15,\"element-required\":true,"
    "\"element\":\"long"
    "\"}}},{\"id\":6,\"name\":\"n\",\"required\":true,\"type\":\"long\"}]}";

static void test_nested_json_and_arrow(void)
{
    tl_error err;
    tl_ice_schema s, copy, back;
    CHECK_OK(tl_ice_schema_parse_json(nested_json, strlen(nested_json), &s, &err), &err);
    CHECK_INT(s.n_fields, 6);
    CHECK_INT(tl_ice_schema_max_field_id(&s), 15);
    CHECK(tl_ice_schema_has_id(&s, 12) && !tl_ice_schema_has_id(&s, 16));
    const tl_ice_field *m4 = tl_ice_schema_find(&s, "m4_temp");
    CHECK(m4 && m4->type.id == TL_ICE_LIST && m4->n_children == 1);
    const tl_ice_field *el = &m4->children[0];
    CHECK_INT(el->id, 7);
    CHECK(!el->required && el->type.id == TL_ICE_STRUCT && el->n_children == 2);
    CHECK_STR(el->children[1].name, "value");
    CHECK_INT(el->children[1].type.id, TL_ICE_DOUBLE);
    const tl_ice_field *m = tl_ice_schema_find(&s, "m");
    CHECK(m->type.id == TL_ICE_MAP && m->n_children == 2 && m->children[0].required);
    CHECK(m->children[1].type.id == TL_ICE_LIST && m->children[1].children[0].required);
    char *text = NULL;
    CHECK_OK(tl_ice_schema_to_json_string(&s, &text, &err), &err);
    CHECK_STR(text, nested_json);
    free(text);
    CHECK_OK(tl_ice_schema_copy(&s, &copy, &err), &err);
    CHECK(tl_ice_schema_same_fields(&s, &copy));
    copy.fields[2].children[0].children[1].type.id = TL_ICE_FLOAT;
    CHECK(!tl_ice_schema_same_fields(&s, &copy));

    /* To Arrow, field ids on every level, and back with fresh ids: the same schema. */
    struct ArrowSchema a;
    CHECK_OK(tl_ice_schema_to_arrow(&s, &a, &err), &err);
    const struct ArrowSchema *al = a.children[2], *ael = al->children[0];
    CHECK_STR(al->format, "+l");
    CHECK_STR(ael->format, "+s");
    CHECK_STR(ael->name, "element");
    CHECK((ael->flags & ARROW_FLAG_NULLABLE) != 0);
    CHECK_STR(ael->children[0]->format, "tsu:+00:00");
    int32_t len = 0;
    const char *v = tl_metadata_find(ael->children[1]->metadata, "PARQUET:field_id", &len);
    CHECK(v && len == 1 && v[0] == '9');
    const struct ArrowSchema *am = a.children[4];
    CHECK_STR(am->format, "+m");
    CHECK_STR(am->children[0]->name, "entries");
    CHECK_INT(am->children[0]->flags & ARROW_FLAG_NULLABLE, 0);
    CHECK_STR(am->children[0]->children[0]->name, "key");
    CHECK_INT(am->children[0]->children[0]->flags & ARROW_FLAG_NULLABLE, 0);
    CHECK_OK(tl_ice_schema_from_arrow(&a, 1, &back, &err), &err);
    CHECK(tl_ice_schema_same_fields(&s, &back));
    tl_ice_schema_free(&back);
    tl_schema_release(&a);
    tl_ice_schema_free(&copy);
    tl_ice_schema_free(&s);
}

static void check_bad_schema(const char *json, const char *needle)
{
    tl_error err;
    tl_ice_schema s;
    tl_status st = tl_ice_schema_parse_json(json, strlen(json), &s, &err);
    CHECK_INT(st, TL_ERR_INVALID);
    if (st == TL_ERR_INVALID && strstr(err.message, needle) == NULL)
        unit_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", err.message, needle);
    CHECK(s.fields == NULL);
}

static void test_json_rejects(void)
{
    check_bad_schema("[]", "object");
    check_bad_schema("{\"type\":\"struct\"}", "\"fields\"");
    check_bad_schema("{\"type\":\"record\",\"fields\":[]}", "struct");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":{\"type\":\"list\",\"element\":\"int\"}}]}",
                     "field \"a\": required key \"element-id\"");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":{\"type\":\"list\",\"element-id\":1,\"element-required\":true,"
                     "\"element\":\"int\"}}]}",
                     "field id 1 is used twice");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":{\"type\":\"struct\",\"fields\":[{\"id\":2,\"name\":\"x\","
                     "\"required\":true,\"type\":\"int\"},{\"id\":3,\"name\":\"x\","
                     "\"required\":true,\"type\":\"int\"}]}}]}",
                     "field name \"x\" is used twice");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":{\"type\":\"list\",\"element-id\":2,\"element-required\":true,"
                     "\"element\":\"int32\"}}]}",
                     "unsupported Iceberg type \"int32\"");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":1,"
                     "\"type\":\"int\"}]}",
                     "\"required\"");
    check_bad_schema(
        "{\"type\":\"struct\",\"fields\":[{\"id\":1.5,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"}]}",
        "\"id\"");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":99999999999,\"name\":\"a\","
                     "\"required\":true,\"type\":\"int\"}]}",
                     "32-bit");
    check_bad_schema(
        "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"},{\"id\":1,\"name\":\"b\",\"required\":true,\"type\":\"int\"}]}",
        "used twice");
    check_bad_schema(
        "{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
        "\"type\":\"int\"},{\"id\":2,\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}",
        "used twice");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":\"int\"}],\"identifier-field-ids\":[7]}",
                     "identifier");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[7]}", "fields[0]");
    check_bad_schema("{\"type\":\"struct\",\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":true,"
                     "\"type\":\"int\"}",
                     "JSON");
}

UNIT_TESTS(UNIT(test_type_strings_round_trip), UNIT(test_type_parse_variants),
           UNIT(test_type_parse_rejects), UNIT(test_arrow_mapping_as_reference),
           UNIT(test_arrow_mapping_errors), UNIT(test_arrow_schema_errors), UNIT(test_to_arrow),
           UNIT(test_json_round_trip), UNIT(test_nested_json_and_arrow), UNIT(test_json_rejects))
