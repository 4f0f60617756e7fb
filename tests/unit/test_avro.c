/* Avro: binary primitives, schemas, values and object container files. */
#include <math.h>
#include <stdlib.h>

#include "formats/avro/avro_file.h"
#include "unit.h"

/* ---- Binary primitives ---- */

static void test_zigzag_varint_vectors(void)
{
    static const struct {
        int64_t v;
        uint8_t bytes[10];
        size_t len;
    } vec[] = {
        {0, {0x00}, 1},
        {-1, {0x01}, 1},
        {1, {0x02}, 1},
        {-2, {0x03}, 1},
        {63, {0x7e}, 1},
        {-64, {0x7f}, 1},
        {64, {0x80, 0x01}, 2},
        {8192, {0x80, 0x80, 0x01}, 3},
        {-8193, {0x81, 0x80, 0x01}, 3},
        {INT32_MAX, {0xfe, 0xff, 0xff, 0xff, 0x0f}, 5},
        {INT32_MIN, {0xff, 0xff, 0xff, 0xff, 0x0f}, 5},
        {INT64_MAX, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
        {INT64_MIN, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 10},
    };
    tl_error err;
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        tl_buf b = {0};
        CHECK(tl_avro_write_long(&b, vec[i].v) == 0);
        CHECK_INT(b.len, vec[i].len);
        CHECK(memcmp(b.data, vec[i].bytes, vec[i].len) == 0);
        tl_avro_cursor c = tl_avro_cursor_make(vec[i].bytes, vec[i].len);
        int64_t got = 0;
        CHECK_OK(tl_avro_read_long(&c, &got, &err), &err);
        CHECK(got == vec[i].v);
        CHECK_INT(tl_avro_cursor_left(&c), 0);
        /* Every strict prefix is truncated. */
        for (size_t cut = 0; cut < vec[i].len; cut++) {
            tl_avro_cursor t = tl_avro_cursor_make(vec[i].bytes, cut);
            CHECK_INT(tl_avro_read_long(&t, &got, &err), TL_ERR_INVALID);
        }
        tl_buf_free(&b);
    }
}

static void test_varint_rejects_overlong_and_out_of_range(void)
{
    tl_error err;
    int64_t v;
    int32_t i32;
    const uint8_t eleven[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    tl_avro_cursor c = tl_avro_cursor_make(eleven, sizeof eleven);
    CHECK_INT(tl_avro_read_long(&c, &v, &err), TL_ERR_INVALID);
    const uint8_t big10[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03};
    c = tl_avro_cursor_make(big10, sizeof big10);
    CHECK_INT(tl_avro_read_long(&c, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "overflows") != NULL);
    const uint8_t int_over[5] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^31 */
    c = tl_avro_cursor_make(int_over, sizeof int_over);
    CHECK_INT(tl_avro_read_int(&c, &i32, &err), TL_ERR_INVALID);
    const uint8_t bad_bool = 2;
    bool b;
    c = tl_avro_cursor_make(&bad_bool, 1);
    CHECK_INT(tl_avro_read_bool(&c, &b, &err), TL_ERR_INVALID);
    /* A byte string longer than the input. */
    const uint8_t long_bytes[3] = {0x0a, 'a', 'b'};
    const uint8_t *data;
    size_t len;
    c = tl_avro_cursor_make(long_bytes, sizeof long_bytes);
    CHECK_INT(tl_avro_read_bytes(&c, &data, &len, &err), TL_ERR_INVALID);
    const uint8_t neg_bytes[1] = {0x01};
    c = tl_avro_cursor_make(neg_bytes, 1);
    CHECK_INT(tl_avro_read_bytes(&c, &data, &len, &err), TL_ERR_INVALID);
}

static void test_float_double_little_endian(void)
{
    tl_buf b = {0};
    CHECK(tl_avro_write_float(&b, 1.0f) == 0);
    CHECK(tl_avro_write_double(&b, -2.5) == 0);
    const uint8_t want[12] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0x04, 0xc0};
    CHECK_INT(b.len, 12);
    CHECK(memcmp(b.data, want, 12) == 0);
    tl_error err;
    tl_avro_cursor c = tl_avro_cursor_make(b.data, b.len);
    float f;
    double d;
    CHECK_OK(tl_avro_read_float(&c, &f, &err), &err);
    CHECK_OK(tl_avro_read_double(&c, &d, &err), &err);
    CHECK(f == 1.0f && d == -2.5);
    tl_buf_free(&b);
}

/* ---- Schemas ---- */

/* What the reference writes for its manifest lists (field-id attributes, a
 * nested named record, element-id on an array). */
static const char manifest_list_schema[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":[{\"name\":\"manifest_path\","
    "\"type\":\"string\",\"field-id\":500},{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":"
    "\"array\",\"items\":{\"type\":\"record\",\"name\":\"r508\",\"fields\":[{\"name\":"
    "\"contains_null\",\"type\":\"boolean\",\"field-id\":509},{\"name\":\"lower_bound\",\"type\":"
    "[\"null\",\"bytes\"],\"default\":null,\"field-id\":510}]},\"element-id\":508}],\"default\":"
    "null,\"field-id\":507}]}";

static char *print_schema(const tl_avro_schema *s)
{
    tl_buf b = {0};
    tl_error err;
    CHECK_OK(tl_avro_schema_print(s, &b, &err), &err);
    return (char *)tl_buf_detach(&b, NULL);
}

static void test_schema_round_trip_keeps_attributes(void)
{
    tl_error err;
    tl_avro_schema *s;
    CHECK_OK(tl_avro_schema_parse(manifest_list_schema, strlen(manifest_list_schema), &s, &err),
             &err);
    if (s == NULL) return;
    char *text = print_schema(s);
    CHECK_STR(text, manifest_list_schema);
    free(text);
    const tl_avro_field *f = tl_avro_field_by_id(s->root, 507);
    CHECK(f != NULL && strcmp(f->name, "partitions") == 0);
    CHECK(tl_avro_field_by_name(s->root, "manifest_path")->field_id == 500);
    const tl_avro_type *arr = f->type->branches[1];
    int64_t eid = 0;
    CHECK(arr->kind == TL_AVRO_ARRAY && tl_avro_type_int_attr(arr, "element-id", &eid));
    CHECK_INT(eid, 508);
    CHECK_STR(arr->items->fullname, "r508");
    CHECK(tl_avro_field_by_id(arr->items, 510) != NULL);
    tl_avro_schema_free(s);
}

static const char rich_schema[] =
    "{\"type\":\"record\",\"name\":\"Rec\",\"namespace\":\"a.b\",\"doc\":\"top\",\"fields\":["
    "{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"i\",\"type\":\"int\",\"field-id\":1,\"doc\":\"an int\"},"
    "{\"name\":\"l\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
    "\"adjust-to-utc\":true}},"
    "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"RED\",\"GREEN\"]"
    "}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"x.Four\",\"size\":4}},"
    "{\"name\":\"fx2\",\"type\":\"x.Four\"},"
    "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"long\",\"element-id\":7}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"string\"],\"key-id\":8,"
    "\"value-id\":9}},"
    "{\"name\":\"u\",\"type\":[\"null\",\"Color\",\"Rec\"],\"default\":null},"
    "{\"name\":\"n\",\"type\":\"null\"}]}";

static void test_schema_named_types_and_recursion(void)
{
    tl_error err;
    tl_avro_schema *s;
    CHECK_OK(tl_avro_schema_parse(rich_schema, strlen(rich_schema), &s, &err), &err);
    if (s == NULL) return;
    CHECK_STR(s->root->fullname, "a.b.Rec");
    const tl_avro_field *e = tl_avro_field_by_name(s->root, "e");
    CHECK_STR(e->type->fullname, "a.b.Color");
    const tl_avro_field *fx = tl_avro_field_by_name(s->root, "fx");
    const tl_avro_field *fx2 = tl_avro_field_by_name(s->root, "fx2");
    CHECK(fx->type == fx2->type && fx->type->fixed_size == 4);
    CHECK_STR(fx->type->fullname, "x.Four");
    const tl_avro_field *u = tl_avro_field_by_name(s->root, "u");
    CHECK(u->type->branches[2] == s->root); /* recursive reference */
    CHECK(u->type->branches[1] == e->type);
    CHECK_STR(tl_avro_field_by_name(s->root, "l")->type->logical_type, "timestamp-micros");
    /* Printing and parsing again gives the same text. */
    char *once = print_schema(s);
    tl_avro_schema *s2;
    CHECK_OK(tl_avro_schema_parse(once, strlen(once), &s2, &err), &err);
    char *twice = s2 ? print_schema(s2) : NULL;
    CHECK_STR(twice, once);
    CHECK(strstr(once, "\"key-id\":8") && strstr(once, "\"doc\":\"an int\""));
    CHECK(strstr(once, "\"namespace\":\"a.b\""));
    free(once);
    free(twice);
    tl_avro_schema_free(s2);
    tl_avro_schema_free(s);
}

static void test_schema_primitive_and_errors(void)
{
    tl_error err;
    tl_avro_schema *s;
    CHECK_OK(tl_avro_schema_parse("\"long\"", 6, &s, &err), &err);
    char *text = print_schema(s);
    CHECK_STR(text, "\"long\"");
    free(text);
    tl_avro_schema_free(s);
    static const char *const bad[] = {
        "{\"type\":\"nope\"}",
        "[\"int\",\"int\"]",
        "[\"null\",[\"int\"]]",
        "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"B\"}]}",
        "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":{\"type\":"
        "\"fixed\",\"name\":\"A\",\"size\":1}}]}",
        "{\"type\":\"record\",\"name\":\"1A\",\"fields\":[]}",
        "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"},"
        "{\"name\":\"x\",\"type\":\"long\"}]}",
        "{\"type\":\"record\",\"name\":\"A\"}",
        "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"A\"]}",
        "{\"type\":\"fixed\",\"name\":\"F\",\"size\":-1}",
        "{\"type\":\"array\"}",
        "{\"type\":\"record\",\"name\":\"int\",\"fields\":[]}",
        "not json",
        "42",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = NULL;
        CHECK_INT(tl_avro_schema_parse(bad[i], strlen(bad[i]), &s, &err), TL_ERR_INVALID);
        CHECK(s == NULL);
    }
    /* Deep nesting is bounded. */
    tl_buf deep = {0};
    for (int i = 0; i < 200; i++) tl_buf_append_str(&deep, "{\"type\":\"array\",\"items\":");
    tl_buf_append_str(&deep, "\"int\"");
    for (int i = 0; i < 200; i++) tl_buf_append_str(&deep, "}");
    CHECK_INT(tl_avro_schema_parse((char *)deep.data, deep.len, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "deeper") != NULL);
    tl_buf_free(&deep);
}

/* ---- Values and files ---- */

static const char rich_json[] =
    "[{\"b\":true,\"i\":-7,\"l\":1700000000000000,\"f\":1.5,\"d\":-0.25,\"by\":\"\\u0000\\u00ff"
    "ab\",\"s\":\"h\\u00e9llo\",\"e\":\"GREEN\",\"fx\":\"abcd\",\"fx2\":\"\\u0001\\u0002\\u0003"
    "\\u0004\",\"a\":[1,-2,300000000000],\"m\":{\"k1\":null,\"k2\":{\"string\":\"v\"}},\"u\":{"
    "\"a.b.Rec\":{\"b\":false,\"i\":1,\"l\":2,\"f\":0.0,\"d\":0.0,\"by\":\"\",\"s\":\"\",\"e\":"
    "\"RED\","
    "\"fx\":\"wxyz\",\"fx2\":\"1234\",\"a\":[],\"m\":{},\"u\":{\"a.b.Color\":\"RED\"},\"n\":null}},"
    "\"n\":null},"
    "{\"b\":false,\"i\":2147483647,\"l\":-9223372036854775808,\"f\":\"NaN\",\"d\":\"-Infinity\","
    "\"by\":\"\",\"s\":\"\",\"e\":\"RED\",\"fx\":\"0000\",\"fx2\":\"1111\",\"a\":[],\"m\":{},"
    "\"u\":null,\"n\":null}]";

typedef struct fixture {
    tl_avro_schema *schema;
    tl_arena arena;
    tl_avro_value *values;
    size_t n;
    json_t *json;
} fixture;

static void fixture_init(fixture *fx)
{
    tl_error err;
    memset(fx, 0, sizeof *fx);
    CHECK_OK(tl_avro_schema_parse(rich_schema, strlen(rich_schema), &fx->schema, &err), &err);
    fx->json = json_loads(rich_json, JSON_ALLOW_NUL, NULL);
    CHECK(fx->json != NULL);
    fx->n = json_array_size(fx->json);
    fx->values = calloc(fx->n, sizeof *fx->values);
    for (size_t i = 0; i < fx->n; i++)
        CHECK_OK(tl_avro_from_json(fx->schema->root, json_array_get(fx->json, i), &fx->arena,
                                   &fx->values[i], &err),
                 &err);
}

static void fixture_free(fixture *fx)
{
    tl_arena_free(&fx->arena);
    free(fx->values);
    json_decref(fx->json);
    tl_avro_schema_free(fx->schema);
}

static bool json_same(const tl_avro_type *t, const tl_avro_value *v, const json_t *want)
{
    tl_error err;
    json_t *got;
    if (tl_avro_to_json(t, v, &got, &err) != TL_OK) {
        fprintf(stderr, "  to_json: %s\n", err.message);
        return false;
    }
    bool same = json_equal(got, (json_t *)want);
    if (!same) {
        char *a = json_dumps(got, JSON_COMPACT), *b = json_dumps(want, JSON_COMPACT);
        fprintf(stderr, "  got  %s\n  want %s\n", a, b);
        free(a);
        free(b);
    }
    json_decref(got);
    return same;
}

static void test_value_encode_decode_round_trip(void)
{
    fixture fx;
    fixture_init(&fx);
    tl_error err;
    for (size_t i = 0; i < fx.n; i++) {
        tl_buf b = {0};
        CHECK_OK(tl_avro_encode(fx.schema->root, &fx.values[i], &b, &err), &err);
        tl_avro_cursor c = tl_avro_cursor_make(b.data, b.len);
        tl_arena arena = {0};
        tl_avro_value v;
        CHECK_OK(tl_avro_decode(fx.schema->root, &c, &arena, NULL, &v, &err), &err);
        CHECK_INT(tl_avro_cursor_left(&c), 0);
        CHECK(json_same(fx.schema->root, &v, json_array_get(fx.json, i)));
        /* Field access by name and by field-id. */
        CHECK(tl_avro_value_field(&v, 1, NULL) == tl_avro_value_field(&v, -1, "i"));
        int32_t iv = 0;
        CHECK_OK(tl_avro_get_int(&v, 1, "i", NULL, &iv, &err), &err);
        CHECK_INT(iv, i == 0 ? -7 : 2147483647);
        bool present = true;
        const tl_avro_value *u;
        CHECK_OK(tl_avro_get_kind(&v, -1, "u", TL_AVRO_RECORD, &present, &u, &err), &err);
        CHECK(present == (i == 0));
        CHECK_INT(tl_avro_get_kind(&v, -1, "n", TL_AVRO_RECORD, NULL, &u, &err), TL_ERR_INVALID);
        CHECK_INT(tl_avro_get_long(&v, -1, "s", NULL, &(int64_t){0}, &err), TL_ERR_INVALID);
        /* Every truncation fails cleanly. */
        for (size_t cut = 0; cut < b.len; cut++) {
            tl_avro_cursor t = tl_avro_cursor_make(b.data, cut);
            tl_arena_reset(&arena);
            CHECK(tl_avro_decode(fx.schema->root, &t, &arena, NULL, &v, &err) != TL_OK);
        }
        tl_arena_free(&arena);
        tl_buf_free(&b);
    }
    /* A value of the wrong kind is refused and leaves nothing behind. */
    tl_avro_value bad = fx.values[0];
    bad.kind = TL_AVRO_STRING;
    tl_buf b = {0};
    tl_buf_append_str(&b, "x");
    CHECK_INT(tl_avro_encode(fx.schema->root, &bad, &b, &err), TL_ERR_INVALID);
    CHECK_INT(b.len, 1);
    tl_buf_free(&b);
    fixture_free(&fx);
}

static void test_blocks_with_negative_counts(void)
{
    tl_error err;
    tl_avro_schema *s;
    const char *schema = "{\"type\":\"map\",\"values\":{\"type\":\"array\",\"items\":\"int\"}}";
    CHECK_OK(tl_avro_schema_parse(schema, strlen(schema), &s, &err), &err);
    /* map block of -1 entries (size 5): "k" -> array blocks [-2 (size 2): 1, 2], [1: 3], end. */
    const uint8_t data[] = {0x01, 0x0a, 0x02, 'k', 0x03, 0x04, 0x02, 0x04, 0x02, 0x06, 0x00, 0x00};
    tl_avro_cursor c = tl_avro_cursor_make(data, sizeof data);
    tl_arena arena = {0};
    tl_avro_value v;
    CHECK_OK(tl_avro_decode(s->root, &c, &arena, NULL, &v, &err), &err);
    CHECK_INT(tl_avro_cursor_left(&c), 0);
    CHECK(v.kind == TL_AVRO_MAP && v.len == 1 && strcmp(v.keys[0], "k") == 0);
    const tl_avro_value *a = &v.u.items[0];
    CHECK(a->len == 3 && a->u.items[0].u.i == 1 && a->u.items[1].u.i == 2 &&
          a->u.items[2].u.i == 3);
    /* A block size larger than the input is refused. */
    const uint8_t bad[] = {0x01, 0x7e, 0x02, 'k', 0x00, 0x00};
    c = tl_avro_cursor_make(bad, sizeof bad);
    CHECK_INT(tl_avro_decode(s->root, &c, &arena, NULL, &v, &err), TL_ERR_INVALID);
    tl_arena_free(&arena);
    tl_avro_schema_free(s);
}

static void test_hostile_counts_are_bounded(void)
{
    tl_error err;
    tl_avro_schema *s;
    const char *schema = "{\"type\":\"array\",\"items\":\"null\"}";
    CHECK_OK(tl_avro_schema_parse(schema, strlen(schema), &s, &err), &err);
    /* 2^62 nulls in a few bytes: refused quickly, not looped over. */
    tl_buf b = {0};
    tl_avro_write_long(&b, (int64_t)1 << 62);
    tl_avro_write_long(&b, 0);
    tl_avro_cursor c = tl_avro_cursor_make(b.data, b.len);
    tl_arena arena = {0};
    tl_avro_value v;
    CHECK_INT(tl_avro_decode(s->root, &c, &arena, NULL, &v, &err), TL_ERR_INVALID);
    tl_avro_schema_free(s);
    /* A long array count with too few bytes behind it. */
    const char *longs = "{\"type\":\"array\",\"items\":\"long\"}";
    CHECK_OK(tl_avro_schema_parse(longs, strlen(longs), &s, &err), &err);
    b.len = 0;
    tl_avro_write_long(&b, 1000000);
    tl_avro_write_long(&b, 1);
    c = tl_avro_cursor_make(b.data, b.len);
    CHECK_INT(tl_avro_decode(s->root, &c, &arena, NULL, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "exceeds") != NULL);
    tl_avro_schema_free(s);
    /* Recursion through data is bounded by depth. */
    const char *list = "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"next\","
                       "\"type\":[\"null\",\"L\"]}]}";
    CHECK_OK(tl_avro_schema_parse(list, strlen(list), &s, &err), &err);
    b.len = 0;
    for (int i = 0; i < 1000; i++) tl_avro_write_long(&b, 1);
    tl_avro_write_long(&b, 0);
    c = tl_avro_cursor_make(b.data, b.len);
    CHECK_INT(tl_avro_decode(s->root, &c, &arena, NULL, &v, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "deeper") != NULL);
    tl_avro_schema_free(s);
    tl_arena_free(&arena);
    tl_buf_free(&b);
}

static const uint8_t fixed_sync[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void write_rich_file(fixture *fx, tl_avro_codec codec, size_t copies, tl_buf *out)
{
    tl_error err;
    tl_avro_writer w;
    tl_avro_writer_options opts = {codec, 0, 100, fixed_sync};
    const char *meta[] = {"user.key", "user value", NULL};
    CHECK_OK(tl_avro_writer_begin(&w, fx->schema, meta, &opts, out, &err), &err);
    for (size_t k = 0; k < copies; k++)
        for (size_t i = 0; i < fx->n; i++)
            CHECK_OK(tl_avro_writer_append(&w, &fx->values[i], &err), &err);
    CHECK_OK(tl_avro_writer_finish(&w, &err), &err);
}

/* Reads a whole file; returns the number of datums or -1 on error. */
static long read_all(const uint8_t *data, size_t len, fixture *fx, tl_error *err)
{
    tl_avro_reader *r;
    if (tl_avro_reader_open(data, len, &r, err) != TL_OK) return -1;
    tl_arena arena = {0};
    long n = 0;
    for (;;) {
        tl_avro_value v;
        bool done;
        tl_arena_reset(&arena);
        if (tl_avro_reader_next(r, &arena, &v, &done, err) != TL_OK) {
            n = -1;
            break;
        }
        if (done) break;
        if (fx) CHECK(json_same(fx->schema->root, &v, json_array_get(fx->json, (size_t)n % fx->n)));
        n++;
    }
    tl_arena_free(&arena);
    tl_avro_reader_free(r);
    return n;
}

static void test_file_round_trip_every_codec(void)
{
    fixture fx;
    fixture_init(&fx);
    tl_error err;
    for (int codec = TL_AVRO_CODEC_NULL; codec <= TL_AVRO_CODEC_ZSTD; codec++) {
        tl_buf file = {0};
        write_rich_file(&fx, (tl_avro_codec)codec, 20, &file);
        CHECK(memcmp(file.data, "Obj\x01", 4) == 0);
        long n = read_all(file.data, file.len, &fx, &err);
        if (n < 0) fprintf(stderr, "  codec %d: %s\n", codec, err.message);
        CHECK_INT(n, 20 * (long)fx.n);
        tl_avro_reader *r;
        CHECK_OK(tl_avro_reader_open(file.data, file.len, &r, &err), &err);
        size_t len;
        const uint8_t *v = tl_avro_reader_meta(r, "user.key", &len);
        CHECK(v && len == 10 && memcmp(v, "user value", 10) == 0);
        CHECK_INT(tl_avro_reader_codec(r), codec);
        CHECK_INT(tl_avro_reader_meta_count(r), 3);
        tl_buf printed = {0};
        CHECK_OK(tl_avro_schema_print(tl_avro_reader_schema(r), &printed, &err), &err);
        char *orig = print_schema(fx.schema);
        CHECK_STR((char *)printed.data, orig);
        free(orig);
        tl_buf_free(&printed);
        tl_avro_reader_free(r);
        /* Same sync marker, same input: same bytes. */
        tl_buf again = {0};
        write_rich_file(&fx, (tl_avro_codec)codec, 20, &again);
        CHECK(again.len == file.len && memcmp(again.data, file.data, file.len) == 0);
        tl_buf_free(&again);
        tl_buf_free(&file);
    }
    fixture_free(&fx);
}

static void test_empty_file_and_random_sync(void)
{
    fixture fx;
    fixture_init(&fx);
    tl_error err;
    tl_buf a = {0}, b = {0};
    tl_avro_writer w;
    CHECK_OK(tl_avro_writer_begin(&w, fx.schema, NULL, NULL, &a, &err), &err);
    CHECK_OK(tl_avro_writer_finish(&w, &err), &err);
    CHECK_OK(tl_avro_writer_begin(&w, fx.schema, NULL, NULL, &b, &err), &err);
    CHECK_OK(tl_avro_writer_finish(&w, &err), &err);
    CHECK_INT(read_all(a.data, a.len, NULL, &err), 0);
    CHECK(a.len == b.len && memcmp(a.data + a.len - 16, b.data + b.len - 16, 16) != 0);
    const char *reserved[] = {"avro.codec", "x", NULL};
    tl_buf c = {0};
    CHECK_INT(tl_avro_writer_begin(&w, fx.schema, reserved, NULL, &c, &err), TL_ERR_INVALID);
    CHECK_INT(c.len, 0);
    tl_buf_free(&a);
    tl_buf_free(&b);
    tl_buf_free(&c);
    fixture_free(&fx);
}

/* A damaged file's error says which part is wrong (a caller names the file
 * before it), and is never an allocation failure. */
static bool says_what_is_wrong(const tl_error *err)
{
    static const char *starts[] = {"empty file (0 bytes)",
                                   "not an Avro file (bad magic)",
                                   "truncated or damaged header: ",
                                   "bad header: ",
                                   "bad schema: ",
                                   "truncated or damaged block ",
                                   "damaged block "};
    if (err->code != TL_ERR_INVALID) return false;
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
        if (strncmp(err->message, starts[i], strlen(starts[i])) == 0) return true;
    return false;
}

static void test_file_truncations_and_flips(void)
{
    fixture fx;
    fixture_init(&fx);
    tl_error err;
    for (int codec = TL_AVRO_CODEC_NULL; codec <= TL_AVRO_CODEC_ZSTD; codec++) {
        tl_buf file = {0};
        write_rich_file(&fx, (tl_avro_codec)codec, 3, &file);
        for (size_t cut = 0; cut < file.len; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1); /* exact size: ASan sees over-reads */
            memcpy(copy, file.data, cut);
            long n = read_all(copy, cut, NULL, &err);
            CHECK(n < 3 * (long)fx.n);
            if (n < 0 && !says_what_is_wrong(&err))
                fprintf(stderr, "  cut at %zu: %s\n", cut, err.message);
            CHECK(n >= 0 || says_what_is_wrong(&err));
            if (n < 0 && cut == 0) CHECK(strstr(err.message, "empty file") == err.message);
            if (n < 0 && cut > 0 && cut < 4) CHECK(strstr(err.message, "bad magic") != NULL);
            free(copy);
        }
        srand(1234 + codec);
        for (int k = 0; k < 1000; k++) {
            uint8_t *copy = malloc(file.len);
            memcpy(copy, file.data, file.len);
            int flips = 1 + rand() % 3;
            for (int f = 0; f < flips; f++) copy[rand() % file.len] ^= (uint8_t)(1 + rand() % 255);
            /* Error or data; never a crash, never "out of memory". */
            if (read_all(copy, file.len, NULL, &err) < 0) {
                if (!says_what_is_wrong(&err)) fprintf(stderr, "  flipped: %s\n", err.message);
                CHECK(says_what_is_wrong(&err));
            }
            free(copy);
        }
        tl_buf_free(&file);
    }
    fixture_free(&fx);
}

/* Schemas with very many names parse in linear time (hash lookups). */
static void test_schema_many_names(void)
{
    tl_buf b = {0};
    tl_buf_append_str(&b, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[");
    for (int i = 0; i < 20000; i++)
        tl_buf_printf(&b,
                      "%s{\"name\":\"f%d\",\"type\":{\"type\":\"fixed\",\"name\":\"F%d\","
                      "\"size\":1}},{\"name\":\"g%d\",\"type\":\"F%d\"}",
                      i ? "," : "", i, i, i, i);
    tl_buf_append_str(&b, "]}");
    tl_error err;
    tl_avro_schema *s;
    CHECK_OK(tl_avro_schema_parse((char *)b.data, b.len, &s, &err), &err);
    if (s) {
        CHECK_INT(s->root->n_fields, 40000);
        CHECK_INT(s->n_named, 20001);
        tl_buf printed = {0};
        CHECK_OK(tl_avro_schema_print(s, &printed, &err), &err);
        CHECK_INT(printed.len, b.len);
        tl_buf_free(&printed);
        tl_avro_schema_free(s);
    }
    tl_buf_free(&b);
}

/* A file of many zero-byte datums, each of many values, is refused early. */
static void test_zero_byte_datums_are_bounded(void)
{
    tl_buf schema = {0};
    tl_buf_append_str(&schema, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[");
    for (int i = 0; i < 5000; i++)
        tl_buf_printf(&schema, "%s{\"name\":\"n%d\",\"type\":\"null\"}", i ? "," : "", i);
    tl_buf_append_str(&schema, "]}");
    tl_error err;
    tl_avro_schema *s;
    CHECK_OK(tl_avro_schema_parse((char *)schema.data, schema.len, &s, &err), &err);
    const int64_t counts[] = {1, 100, (int64_t)1 << 40};
    for (size_t k = 0; k < 3; k++) {
        tl_buf file = {0};
        tl_avro_writer w;
        CHECK_OK(tl_avro_writer_begin(&w, s, NULL, NULL, &file, &err), &err);
        tl_avro_writer_discard(&w);
        const uint8_t *sync = file.data + file.len - 16;
        uint8_t marker[16];
        memcpy(marker, sync, 16);
        tl_avro_write_long(&file, counts[k]);
        tl_avro_write_long(&file, 0);
        tl_buf_append(&file, marker, 16);
        CHECK_INT(read_all(file.data, file.len, NULL, &err), -1);
        CHECK(strstr(err.message, counts[k] == 1 ? "too many values" : "cannot fit") != NULL ||
              strstr(err.message, "too many values") != NULL);
        tl_buf_free(&file);
    }
    tl_avro_schema_free(s);
    tl_buf_free(&schema);
}

static void test_codec_limits(void)
{
    tl_error err;
    size_t big = 1 << 20;
    uint8_t *zeros = calloc(1, big);
    for (int codec = TL_AVRO_CODEC_DEFLATE; codec <= TL_AVRO_CODEC_ZSTD; codec++) {
        tl_buf packed = {0}, out = {0};
        CHECK_OK(tl_avro_compress((tl_avro_codec)codec, 0, zeros, big, &packed, &err), &err);
        CHECK(packed.len < big / 10);
        CHECK_OK(tl_avro_decompress((tl_avro_codec)codec, packed.data, packed.len, big, &out, &err),
                 &err);
        CHECK(out.len == big && memcmp(out.data, zeros, big) == 0);
        /* A block that inflates past the limit is refused. */
        CHECK_INT(
            tl_avro_decompress((tl_avro_codec)codec, packed.data, packed.len, big - 1, &out, &err),
            TL_ERR_INVALID);
        /* Truncated compressed data is refused. */
        CHECK_INT(
            tl_avro_decompress((tl_avro_codec)codec, packed.data, packed.len / 2, big, &out, &err),
            TL_ERR_INVALID);
        tl_buf_free(&packed);
        tl_buf_free(&out);
    }
    /* Snappy's CRC catches corruption of the uncompressed bytes' checksum. */
    tl_buf packed = {0}, out = {0};
    CHECK_OK(tl_avro_compress(TL_AVRO_CODEC_SNAPPY, 0, (const uint8_t *)"hello", 5, &packed, &err),
             &err);
    packed.data[packed.len - 1] ^= 1;
    CHECK_INT(tl_avro_decompress(TL_AVRO_CODEC_SNAPPY, packed.data, packed.len, 100, &out, &err),
              TL_ERR_INVALID);
    CHECK(strstr(err.message, "CRC") != NULL);
    tl_avro_codec c;
    CHECK_INT(tl_avro_codec_parse((const uint8_t *)"bzip2", 5, &c, &err), TL_ERR_INVALID);
    CHECK_OK(tl_avro_codec_parse((const uint8_t *)"zstandard", 9, &c, &err), &err);
    CHECK_INT(c, TL_AVRO_CODEC_ZSTD);
    tl_buf_free(&packed);
    tl_buf_free(&out);
    free(zeros);
}

static void test_json_values_checked_against_schema(void)
{
    fixture fx;
    fixture_init(&fx);
    tl_error err;
    tl_avro_value v;
    static const char *const bad[] = {
        "{\"b\":1}",
        "{\"b\":true,\"i\":2147483648}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_loads(bad[i], 0, NULL);
        CHECK_INT(tl_avro_from_json(fx.schema->root, j, &fx.arena, &v, &err), TL_ERR_INVALID);
        json_decref(j);
    }
    fixture_free(&fx);
}

UNIT_TESTS(UNIT(test_zigzag_varint_vectors), UNIT(test_varint_rejects_overlong_and_out_of_range),
           UNIT(test_float_double_little_endian), UNIT(test_schema_round_trip_keeps_attributes),
           UNIT(test_schema_named_types_and_recursion), UNIT(test_schema_primitive_and_errors),
           UNIT(test_value_encode_decode_round_trip), UNIT(test_blocks_with_negative_counts),
           UNIT(test_hostile_counts_are_bounded), UNIT(test_file_round_trip_every_codec),
           UNIT(test_empty_file_and_random_sync), UNIT(test_file_truncations_and_flips),
           UNIT(test_codec_limits), UNIT(test_schema_many_names),
           UNIT(test_zero_byte_datums_are_bounded), UNIT(test_json_values_checked_against_schema))
