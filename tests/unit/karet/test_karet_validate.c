/* karet_validate: a good config has no problem; each bad variation of it has
 * the expected problem at the expected JSON Pointer, with the expected kind. */
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "run.h"
#include "unit.h"

static json_t *load_base(void)
{
    tl_buf b = {0};
    if (unit_read_data("karet", "base.json", &b) != 0) return NULL;
    json_error_t e;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &e);
    tl_buf_free(&b);
    return j;
}

/* Sets (value != NULL) or removes the member at a JSON Pointer whose parent
 * exists; array indexes may be "-" (append). Takes `value`. */
static void set_at(json_t *root, const char *pointer, json_t *value)
{
    char path[512];
    snprintf(path, sizeof path, "%s", pointer);
    char *last = strrchr(path, '/');
    *last = '\0';
    json_t *parent = root;
    for (char *seg = strtok(path + (path[0] == '/'), "/"); seg && parent; seg = strtok(NULL, "/"))
        parent = json_is_array(parent) ? json_array_get(parent, (size_t)atoi(seg))
                                       : json_object_get(parent, seg);
    const char *key = last + 1;
    if (json_is_array(parent)) {
        if (strcmp(key, "-") == 0)
            json_array_append_new(parent, value);
        else if (value)
            json_array_set_new(parent, (size_t)atoi(key), value);
        else
            json_array_remove(parent, (size_t)atoi(key));
    } else if (json_is_object(parent)) {
        if (value)
            json_object_set_new(parent, key, value);
        else
            json_object_del(parent, key);
    }
}

typedef struct edit {
    const char *pointer;
    const char *json; /* NULL: remove */
} edit;

typedef struct bad_case {
    const char *name;
    edit edits[4];
    const char *path, *kind; /* a problem that must be reported */
} bad_case;

static const bad_case CASES[] = {
    {"no version", {{"/version", NULL}}, "/version", "missing_field"},
    {"version 2", {{"/version", "2"}}, "/version", "schema"},
    {"unknown top field", {{"/lookup_mappings", "[]"}}, "/lookup_mappings", "unknown_field"},
    {"no sources", {{"/source_containers", NULL}}, "/source_containers", "missing_field"},
    {"sources not array", {{"/source_containers", "{}"}}, "/source_containers", "schema"},
    {"no mappings", {{"/mappings", NULL}}, "/mappings", "missing_field"},
    {"no tables", {{"/analytic_tables", NULL}}, "/analytic_tables", "missing_field"},
    {"layout not object", {{"/layout", "[]"}}, "/layout", "schema"},
    {"source no id",
     {{"/source_containers/1/id", NULL}},
     "/source_containers/1/id",
     "missing_field"},
    {"source id number", {{"/source_containers/1/id", "5"}}, "/source_containers/1/id", "schema"},
    {"source id empty", {{"/source_containers/1/id", "\"\""}}, "/source_containers/1/id", "schema"},
    {"duplicate source id",
     {{"/source_containers/1/id", "\"events\""}},
     "/source_containers/1/id",
     "duplicate_id"},
    {"id shared across kinds",
     {{"/dimensions/1/id", "\"hits\""}},
     "/analytic_tables/0/id",
     "duplicate_id"},
    {"unknown source field",
     {{"/source_containers/0/bucket", "\"b\""}},
     "/source_containers/0/bucket",
     "unknown_field"},
    {"no path_prefix",
     {{"/source_containers/1/path_prefix", NULL}},
     "/source_containers/1/path_prefix",
     "missing_field"},
    {"prefix without slash",
     {{"/source_containers/1/path_prefix", "\"a/b\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix leading slash",
     {{"/source_containers/1/path_prefix", "\"/a/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix dotdot",
     {{"/source_containers/1/path_prefix", "\"a/../b/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix empty segment",
     {{"/source_containers/1/path_prefix", "\"a//b/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix empty",
     {{"/source_containers/1/path_prefix", "\"\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix in warehouse",
     {{"/source_containers/1/path_prefix", "\"warehouse/x/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix inside another",
     {{"/source_containers/1/path_prefix", "\"pipelines/t/events/old/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"prefix around another",
     {{"/source_containers/1/path_prefix", "\"pipelines/\""}},
     "/source_containers/1/path_prefix",
     "schema"},
    {"bad format",
     {{"/source_containers/1/format", "\"parquet\""}},
     "/source_containers/1/format",
     "schema"},
    {"record_filter on csv",
     {{"/source_containers/1/record_filter", "{\"kind\":\"bool\",\"value\":true}"}},
     "/source_containers/1/record_filter",
     "schema"},
    {"record_filter not bool",
     {{"/source_containers/0/record_filter", "{\"kind\":\"col\",\"name\":\"path\"}"}},
     "/source_containers/0/record_filter",
     "expression"},
    {"record_filter unknown column",
     {{"/source_containers/0/record_filter/left/name", "\"nope\""}},
     "/source_containers/0/record_filter/left/name",
     "dangling_reference"},
    {"no schema",
     {{"/source_containers/1/schema", NULL}},
     "/source_containers/1/schema",
     "missing_field"},
    {"empty schema",
     {{"/source_containers/1/schema", "[]"}},
     "/source_containers/1/schema",
     "schema"},
    {"column not object",
     {{"/source_containers/1/schema/0", "\"a\""}},
     "/source_containers/1/schema/0",
     "schema"},
    {"column no name",
     {{"/source_containers/1/schema/0/name", NULL}},
     "/source_containers/1/schema/0/name",
     "missing_field"},
    {"column no type",
     {{"/source_containers/1/schema/0/type", NULL}},
     "/source_containers/1/schema/0/type",
     "missing_field"},
    {"column bad type",
     {{"/source_containers/1/schema/0/type", "\"decimal\""}},
     "/source_containers/1/schema/0/type",
     "schema"},
    {"column unknown field",
     {{"/source_containers/1/schema/0/width", "3"}},
     "/source_containers/1/schema/0/width",
     "unknown_field"},
    {"duplicate column",
     {{"/source_containers/1/schema/1/name", "\"A\""}},
     "/source_containers/1/schema/1/name",
     "duplicate_id"},
    {"reserved column",
     {{"/source_containers/1/schema/1/name", "\"__karet_row\""}},
     "/source_containers/1/schema/1/name",
     "schema"},
    {"bad json path",
     {{"/source_containers/0/schema/0/path", "\"a..b\""}},
     "/source_containers/0/schema/0/path",
     "schema"},
    {"bad json index",
     {{"/source_containers/0/schema/0/path", "\"a[x]\""}},
     "/source_containers/0/schema/0/path",
     "schema"},
    {"nullable not bool",
     {{"/source_containers/1/schema/0/nullable", "\"no\""}},
     "/source_containers/1/schema/0/nullable",
     "schema"},
    {"min on string",
     {{"/source_containers/1/schema/0/assertions", "{\"min\": 1}"}},
     "/source_containers/1/schema/0/assertions/min",
     "schema"},
    {"min over max",
     {{"/source_containers/1/schema/1/assertions", "{\"min\": 5, \"max\": 1}"}},
     "/source_containers/1/schema/1/assertions",
     "schema"},
    {"unknown assertion",
     {{"/source_containers/1/schema/1/assertions", "{\"unique\": true}"}},
     "/source_containers/1/schema/1/assertions/unique",
     "unknown_field"},
    {"no dimensions", {{"/dimensions", NULL}}, "/dimensions", "missing_field"},
    {"source no name",
     {{"/source_containers/1/name", NULL}},
     "/source_containers/1/name",
     "missing_field"},
    {"table blank name",
     {{"/analytic_tables/0/name", "\"  \""}},
     "/analytic_tables/0/name",
     "missing_field"},
    {"dim bad match", {{"/dimensions/0/match", "\"regex\""}}, "/dimensions/0/match", "schema"},
    {"dim bad on_miss", {{"/dimensions/0/on_miss", "\"drop\""}}, "/dimensions/0/on_miss", "schema"},
    {"dim literal not text",
     {{"/dimensions/0/on_miss", "{\"literal\": [1]}"}},
     "/dimensions/0/on_miss/literal",
     "schema"},
    {"dim literal missing",
     {{"/dimensions/0/on_miss", "{}"}},
     "/dimensions/0/on_miss/literal",
     "missing_field"},
    {"dim no rows", {{"/dimensions/0/rows", NULL}}, "/dimensions/0/rows", "missing_field"},
    {"dim rows not object", {{"/dimensions/0/rows", "[]"}}, "/dimensions/0/rows", "schema"},
    {"dim rows and file",
     {{"/dimensions/0/rows/path_prefix", "\"dims/a.csv\""}},
     "/dimensions/0/rows/rows",
     "unknown_field"},
    {"dim field at the top",
     {{"/dimensions/0/key", "\"k\""}},
     "/dimensions/0/key",
     "unknown_field"},
    {"dim file not csv",
     {{"/dimensions/1/rows/path_prefix", "\"dims/a.txt\""}},
     "/dimensions/1/rows/path_prefix",
     "schema"},
    {"dim file no key",
     {{"/dimensions/1/rows/key", NULL}},
     "/dimensions/1/rows/key",
     "missing_field"},
    {"dim no values",
     {{"/dimensions/1/rows/values", NULL}},
     "/dimensions/1/rows/values",
     "missing_field"},
    {"dim values twice",
     {{"/dimensions/0/rows/values", "[\"a\", \"a\"]"}},
     "/dimensions/0/rows/values",
     "schema"},
    {"dim row unknown field",
     {{"/dimensions/0/rows/rows/0/colour", "\"red\""}},
     "/dimensions/0/rows/rows/0/colour",
     "unknown_field"},
    {"dim row no patterns",
     {{"/dimensions/0/rows/rows/1/patterns", NULL}},
     "/dimensions/0/rows/rows/1/patterns",
     "missing_field"},
    {"dim row values count",
     {{"/dimensions/0/rows/rows/1/values", "[\"x\"]"}},
     "/dimensions/0/rows/rows/1/values",
     "schema"},
    {"dim row value number",
     {{"/dimensions/0/rows/rows/1/values", "[\"x\", 3]"}},
     "/dimensions/0/rows/rows/1/values/1",
     "schema"},
    {"dim priority text",
     {{"/dimensions/0/rows/rows/0/priority", "\"high\""}},
     "/dimensions/0/rows/rows/0/priority",
     "schema"},
    {"dim exact key twice",
     {{"/dimensions/0/match", "\"exact\""}, {"/dimensions/0/rows/rows/1/patterns", "[\"API\"]"}},
     "/dimensions/0/rows/rows/1/patterns",
     "schema"},
    {"table id with dot",
     {{"/analytic_tables/0/id", "\"a.b\""}},
     "/analytic_tables/0/id",
     "schema"},
    {"table column path",
     {{"/analytic_tables/0/schema/1/path", "\"x\""}},
     "/analytic_tables/0/schema/1/path",
     "schema"},
    {"three partition keys",
     {{"/analytic_tables/0/partition_keys/-", "\"user\""}},
     "/analytic_tables/0/partition_keys",
     "schema"},
    {"partition on float",
     {{"/analytic_tables/0/partition_keys/1", "\"kb\""}},
     "/analytic_tables/0/partition_keys/1",
     "schema"},
    {"partition unknown column",
     {{"/analytic_tables/0/partition_keys/1", "\"zz\""}},
     "/analytic_tables/0/partition_keys/1",
     "dangling_reference"},
    {"month of a string",
     {{"/analytic_tables/0/partition_keys/0", "\"month(user)\""}},
     "/analytic_tables/0/partition_keys/0",
     "schema"},
    {"partition twice",
     {{"/analytic_tables/0/partition_keys/1", "\"day\""}},
     "/analytic_tables/0/partition_keys/1",
     "schema"},
    {"dedup unknown",
     {{"/analytic_tables/0/dedup_keys/-", "\"zz\""}},
     "/analytic_tables/0/dedup_keys/2",
     "dangling_reference"},
    {"dedup twice",
     {{"/analytic_tables/0/dedup_keys/-", "\"day\""}},
     "/analytic_tables/0/dedup_keys/2",
     "schema"},
    {"mapping dangling source",
     {{"/mappings/0/source_container_id", "\"nope\""}},
     "/mappings/0/source_container_id",
     "dangling_reference"},
    {"mapping dangling table",
     {{"/mappings/1/analytic_table_id", "\"nope\""}},
     "/mappings/1/analytic_table_id",
     "dangling_reference"},
    {"mapping no source",
     {{"/mappings/1/source_container_id", NULL}},
     "/mappings/1/source_container_id",
     "missing_field"},
    {"mapping column not in table",
     {{"/mappings/1/columns/0/name", "\"nope\""}},
     "/mappings/1/columns/0/name",
     "dangling_reference"},
    {"mapping column twice",
     {{"/mappings/1/columns/1/name", "\"user\""}},
     "/mappings/1/columns/1/name",
     "duplicate_id"},
    {"mapping column no expr",
     {{"/mappings/1/columns/0/expr", NULL}},
     "/mappings/1/columns/0/expr",
     "missing_field"},
    {"expr unknown kind",
     {{"/mappings/1/columns/0/expr", "{\"kind\": \"lookup_ref\"}"}},
     "/mappings/1/columns/0/expr/kind",
     "expression"},
    {"expr no kind",
     {{"/mappings/1/columns/0/expr", "{\"name\": \"a\"}"}},
     "/mappings/1/columns/0/expr/kind",
     "missing_field"},
    {"expr not object",
     {{"/mappings/1/columns/0/expr", "\"a\""}},
     "/mappings/1/columns/0/expr",
     "expression"},
    {"expr unknown field",
     {{"/mappings/1/columns/1/expr/extra", "1"}},
     "/mappings/1/columns/1/expr/extra",
     "unknown_field"},
    {"expr missing child",
     {{"/mappings/0/columns/3/expr/right", NULL}},
     "/mappings/0/columns/3/expr/right",
     "missing_field"},
    {"col unknown",
     {{"/mappings/1/columns/0/expr/args/0/name", "\"path\""}},
     "/mappings/1/columns/0/expr/args/0/name",
     "dangling_reference"},
    {"add string",
     {{"/mappings/0/columns/3/expr/left", "{\"kind\":\"col\",\"name\":\"user\"}"}},
     "/mappings/0/columns/3/expr",
     "expression"},
    {"compare string int",
     {{"/mappings/0/where/right/input/right", "{\"kind\":\"num\",\"value\":3}"}},
     "/mappings/0/where/right/input",
     "expression"},
    {"compare date bad literal",
     {{"/mappings/0/where/left/right/value", "\"2020-02-30\""}},
     "/mappings/0/where/left",
     "expression"},
    {"and of string",
     {{"/mappings/0/where/right", "{\"kind\":\"col\",\"name\":\"user\"}"}},
     "/mappings/0/where",
     "expression"},
    {"where not bool",
     {{"/mappings/0/where", "{\"kind\":\"col\",\"name\":\"user\"}"}},
     "/mappings/0/where",
     "expression"},
    {"where names a source column",
     {{"/mappings/0/where/right/input/left/name", "\"path\""}},
     "/mappings/0/where/right/input/left/name",
     "dangling_reference"},
    {"substring start text",
     {{"/mappings/1/columns/0/expr",
       "{\"kind\":\"substring\",\"input\":{\"kind\":\"col\",\"name\":\"a\"},\"start\":\"1\"}"}},
     "/mappings/1/columns/0/expr/start",
     "expression"},
    {"substring negative length",
     {{"/mappings/1/columns/0/expr", "{\"kind\":\"substring\",\"input\":{\"kind\":\"col\",\"name\":"
                                     "\"a\"},\"start\":0,\"length\":-1}"}},
     "/mappings/1/columns/0/expr/length",
     "expression"},
    {"parse_date bad directive",
     {{"/mappings/1/columns/0/expr",
       "{\"kind\":\"parse_date\",\"input\":{\"kind\":\"col\",\"name\":\"a\"},\"format\":\"%s\"}"}},
     "/mappings/1/columns/0/expr/format",
     "expression"},
    {"parse_date of int",
     {{"/mappings/0/columns/0/expr",
       "{\"kind\":\"parse_date\",\"input\":{\"kind\":\"col\",\"name\":\"ts\"},\"format\":\"%Y\"}"}},
     "/mappings/0/columns/0/expr",
     "expression"},
    {"from_unix bad unit",
     {{"/mappings/0/columns/0/expr/unit", "\"us\""}},
     "/mappings/0/columns/0/expr/unit",
     "expression"},
    {"from_unix of string",
     {{"/mappings/0/columns/0/expr/input/name", "\"user\""}},
     "/mappings/0/columns/0/expr",
     "expression"},
    {"year of string",
     {{"/mappings/1/columns/1/expr",
       "{\"kind\":\"year\",\"input\":{\"kind\":\"col\",\"name\":\"a\"}}"}},
     "/mappings/1/columns/1/expr",
     "expression"},
    {"cast to decimal",
     {{"/mappings/1/columns/1/expr",
       "{\"kind\":\"cast\",\"input\":{\"kind\":\"col\",\"name\":\"a\"},\"to\":\"decimal\"}"}},
     "/mappings/1/columns/1/expr/to",
     "expression"},
    {"cast date to int",
     {{"/mappings/0/columns/4/expr",
       "{\"kind\":\"cast\",\"input\":{\"kind\":\"col\",\"name\":\"day\"},\"to\":\"int64\"}"}},
     "/mappings/0/columns/4/expr",
     "expression"},
    {"if mixes types",
     {{"/mappings/1/columns/1/expr",
       "{\"kind\":\"if\",\"cond\":{\"kind\":\"bool\",\"value\":true},\"then\":{\"kind\":\"num\","
       "\"value\":1},\"else\":{\"kind\":\"str\",\"value\":\"x\"}}"}},
     "/mappings/1/columns/1/expr",
     "expression"},
    {"coalesce mixes types",
     {{"/mappings/1/columns/1/expr/args/1", "{\"kind\":\"bool\",\"value\":true}"}},
     "/mappings/1/columns/1/expr/args/1",
     "expression"},
    {"concat sep number",
     {{"/mappings/1/columns/0/expr/sep", "1"}},
     "/mappings/1/columns/0/expr/sep",
     "expression"},
    {"dim_ref unknown dim",
     {{"/mappings/0/columns/2/expr/dim_id", "\"nope\""}},
     "/mappings/0/columns/2/expr/dim_id",
     "dangling_reference"},
    {"dim_ref unknown value",
     {{"/mappings/0/columns/2/expr/value", "\"colour\""}},
     "/mappings/0/columns/2/expr/value",
     "dangling_reference"},
    {"value into a date column",
     {{"/mappings/0/columns/0/expr", "{\"kind\":\"num\",\"value\":3}"}},
     "/mappings/0/columns/0/expr",
     "expression"},
    {"str value number",
     {{"/mappings/0/where/left/right/value", "5"}},
     "/mappings/0/where/left/right/value",
     "expression"},
    {"num value text",
     {{"/mappings/0/columns/4/expr/value", "\"1\""}},
     "/mappings/0/columns/4/expr/value",
     "expression"},
};

static bool has_problem(json_t *problems, const char *path, const char *kind)
{
    for (size_t i = 0; i < json_array_size(problems); i++) {
        json_t *p = json_array_get(problems, i);
        if (strcmp(json_string_value(json_object_get(p, "path")), path) == 0 &&
            strcmp(json_string_value(json_object_get(p, "kind")), kind) == 0)
            return true;
    }
    return false;
}

static void test_base_is_valid(void)
{
    json_t *base = load_base();
    CHECK(base != NULL);
    json_t *problems = karet_validate(base);
    CHECK_INT(json_array_size(problems), 0);
    if (json_array_size(problems)) {
        char *s = json_dumps(problems, JSON_INDENT(1));
        fprintf(stderr, "%s\n", s);
        free(s);
    }
    json_decref(problems);
    json_decref(base);
}

static void test_bad_configs(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        const bad_case *c = &CASES[i];
        json_t *root = load_base();
        for (size_t e = 0; e < 4 && c->edits[e].pointer; e++) {
            json_t *v = NULL;
            if (c->edits[e].json) {
                json_error_t je;
                v = json_loads(c->edits[e].json, JSON_DECODE_ANY, &je);
                CHECK(v != NULL);
            }
            set_at(root, c->edits[e].pointer, v);
        }
        json_t *problems = karet_validate(root);
        if (!has_problem(problems, c->path, c->kind)) {
            char *s = json_dumps(problems, JSON_COMPACT);
            unit_fail(__FILE__, __LINE__, "%s: expected %s at %s, got %s", c->name, c->kind,
                      c->path, s);
            free(s);
        }
        /* Every problem is well-formed. */
        for (size_t k = 0; k < json_array_size(problems); k++) {
            json_t *p = json_array_get(problems, k);
            CHECK(json_is_string(json_object_get(p, "message")));
            CHECK(json_string_value(json_object_get(p, "path"))[0] == '/');
        }
        json_decref(problems);
        json_decref(root);
    }
}

/* Not an object at all, and the smallest valid config. */
static void test_shapes(void)
{
    json_t *j = json_string("x");
    json_t *p = karet_validate(j);
    CHECK_INT(json_array_size(p), 1);
    CHECK(has_problem(p, "", "schema"));
    json_decref(p);
    json_decref(j);
    json_error_t e;
    j = json_loads("{\"version\":1,\"source_containers\":[],\"dimensions\":[],\"mappings\":[],"
                   "\"analytic_tables\":[]}",
                   0, &e);
    p = karet_validate(j);
    CHECK_INT(json_array_size(p), 0);
    json_decref(p);
    json_decref(j);
}

/* Deep nesting is refused, not a stack overflow. */
static void test_deep_expression(void)
{
    json_t *root = load_base();
    json_t *e = json_pack("{s:s, s:s}", "kind", "col", "name", "a");
    for (int i = 0; i < 5000; i++) e = json_pack("{s:s, s:o}", "kind", "upper", "input", e);
    set_at(root, "/mappings/1/columns/0/expr", e);
    json_t *p = karet_validate(root);
    CHECK(json_array_size(p) >= 1);
    json_decref(p);
    json_decref(root);
}

/* JSON Pointer escaping of ~ and / in member names. */
static void test_pointer_escape(void)
{
    json_t *root = load_base();
    set_at(root, "/source_containers/0/a~b", json_integer(1));
    json_object_set_new(json_array_get(json_object_get(root, "source_containers"), 0), "c/d",
                        json_integer(1));
    json_t *p = karet_validate(root);
    CHECK(has_problem(p, "/source_containers/0/a~0b", "unknown_field"));
    CHECK(has_problem(p, "/source_containers/0/c~1d", "unknown_field"));
    json_decref(p);
    json_decref(root);
}

/* The templates the service offers are valid configs. */
static void test_templates_are_valid(void)
{
    static const char *const names[] = {"access_logs.json", "bank_statements.json"};
    const char *root = getenv("KARET_SOURCE_DIR");
    CHECK(root != NULL);
    for (size_t i = 0; root && i < sizeof names / sizeof *names; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/karet/templates/%s", root, names[i]);
        json_error_t e;
        json_t *j = json_load_file(path, 0, &e);
        CHECK(j != NULL);
        json_t *p = karet_validate(j);
        if (json_array_size(p)) unit_fail(__FILE__, __LINE__, "%s has problems", names[i]);
        json_decref(p);
        json_decref(j);
    }
}

UNIT_TESTS(UNIT(test_base_is_valid), UNIT(test_templates_are_valid), UNIT(test_bad_configs),
           UNIT(test_shapes), UNIT(test_deep_expression), UNIT(test_pointer_escape))
