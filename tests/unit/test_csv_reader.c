/* The CSV reader: quoting, line ends, batches, inference, target types and
 * errors, with records split across reads of every size. */
#include <stdlib.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "formats/csv/csv_reader.h"
#include "formats/input/input_open.h"
#include "formats/input/text_batch.h"
#include "unit.h"

typedef struct result {
    tl_status st;
    tl_error err;
    struct ArrowSchema schema;
    int64_t rows, batches;
    tl_array_view col[4]; /* of the last batch */
    struct ArrowArray last;
} result;

static void result_free(result *r)
{
    for (int i = 0; i < 4; i++)
        if (r->col[i].array) tl_array_view_free(&r->col[i]);
    tl_array_release(&r->last);
    tl_schema_release(&r->schema);
}

/* Reads the whole text; views the columns of the last batch. */
static void read_csv(const char *text, const char *target_spec, size_t read_limit, int64_t batch,
                     result *r)
{
    memset(r, 0, sizeof *r);
    tl_text_input *in;
    tl_text_input_open_memory((const uint8_t *)text, strlen(text), "t.csv", &in, &r->err);
    tl_text_input_set_read_limit(in, read_limit);
    struct ArrowSchema target = {0};
    if (target_spec) {
        /* "l,u,g": formats of the columns a, b, c */
        char names[][2] = {"a", "b", "c", "d"};
        char fmt[16][16];
        int n = 0;
        for (const char *p = target_spec; *p; n++) {
            size_t k = strcspn(p, ",");
            memcpy(fmt[n], p, k);
            fmt[n][k] = 0;
            p += k + (p[k] == ',');
        }
        tl_schema_init(&target, "+s", "", 0, n, NULL);
        for (int i = 0; i < n; i++)
            tl_schema_init(target.children[i], fmt[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
    }
    tl_csv_options o = {.batch_rows = batch};
    struct ArrowArrayStream s;
    r->st = tl_csv_stream_open(in, &o, target_spec ? &target : NULL, &s, &r->err);
    tl_schema_release(&target);
    if (r->st != TL_OK) return;
    s.get_schema(&s, &r->schema);
    for (;;) {
        struct ArrowArray a;
        if (s.get_next(&s, &a) != 0) {
            r->st = TL_ERR_INVALID;
            snprintf(r->err.message, sizeof r->err.message, "%s", s.get_last_error(&s));
            break;
        }
        if (a.release == NULL) break;
        r->rows += a.length;
        r->batches++;
        tl_array_release(&r->last);
        tl_array_move(&a, &r->last);
    }
    s.release(&s);
    for (int i = 0; r->last.release && i < r->last.n_children && i < 4; i++)
        tl_array_view_init(&r->col[i], r->schema.children[i], r->last.children[i], NULL);
}

static const char *str_at(const tl_array_view *v, int64_t i, char *buf)
{
    int64_t len;
    const uint8_t *p = tl_view_bytes(v, i, &len);
    memcpy(buf, p, (size_t)len);
    buf[len] = 0;
    return buf;
}

static void test_quoting_and_line_ends(void)
{
    const char *text = "\xEF\xBB\xBF"
                       "a,b,c\r\n1,\"x,\"\"y\"\"\",2.5\r\n\r\n2,\"multi\nline\",\n3,plain,-1e3";
    for (size_t limit = 0; limit <= 64; limit++) { /* 0: read whole, the bytes the window */
        result r;
        read_csv(text, NULL, limit, 0, &r);
        CHECK_OK(r.st, &r.err);
        CHECK_INT(r.rows, 3);
        CHECK_STR(r.schema.children[0]->name, "a");
        CHECK_STR(r.schema.children[0]->format, "l");
        CHECK_STR(r.schema.children[1]->format, "u");
        CHECK_STR(r.schema.children[2]->format, "g");
        char buf[64];
        CHECK_STR(str_at(&r.col[1], 0, buf), "x,\"y\"");
        CHECK_STR(str_at(&r.col[1], 1, buf), "multi\nline");
        CHECK(tl_view_is_null(&r.col[2], 1));
        CHECK(((const double *)r.col[2].values)[2] == -1000.0);
        result_free(&r);
    }
}

static void test_batches(void)
{
    result r;
    read_csv("a\n1\n2\n3\n4\n5\n", NULL, 3, 2, &r);
    CHECK_OK(r.st, &r.err);
    CHECK_INT(r.rows, 5);
    CHECK_INT(r.batches, 3);
    CHECK_INT(((const int64_t *)r.col[0].values)[0], 5);
    result_free(&r);
}

static void test_inference(void)
{
    result r;
    read_csv("t,n,d,b,s,e\n2024-05-01T10:00:00Z,1,2024-05-01,true,x,\n"
             "2024-05-01 10:00:00.5+02:00,NA,2024-05-02,False,1,null\n",
             NULL, 7, 0, &r);
    CHECK_OK(r.st, &r.err);
    const char *want[] = {"tsu:UTC", "l", "tdD", "b", "u", "u"};
    for (int i = 0; i < 6; i++) CHECK_STR(r.schema.children[i]->format, want[i]);
    CHECK_INT(((const int64_t *)r.col[0].values)[1], 1714550400500000LL);
    result_free(&r);
}

static void test_target_types(void)
{
    result r;
    read_csv("b,a\n\"7\",2024-05-01T10:00:00\n,2024-05-01\n", "tsu:UTC,i", 5, 0, &r);
    CHECK_OK(r.st, &r.err);
    CHECK_STR(r.schema.children[0]->format, "i");
    CHECK_STR(r.schema.children[1]->format, "tsu:UTC");
    CHECK_INT(((const int32_t *)r.col[0].values)[0], 7);
    CHECK(tl_view_is_null(&r.col[0], 1));
    CHECK_INT(((const int64_t *)r.col[1].values)[1], 1714521600000000LL);
    result_free(&r);
}

static void expect_error(const char *text, const char *target, const char *words)
{
    result r;
    read_csv(text, target, 4, 2, &r);
    CHECK(r.st == TL_ERR_INVALID);
    if (strstr(r.err.message, words) == NULL)
        unit_fail(__FILE__, __LINE__, "\"%s\" not in \"%s\"", words, r.err.message);
    result_free(&r);
}

static void test_errors(void)
{
    expect_error("", NULL, "t.csv: empty file: no header row");
    expect_error("a,b\n1\n", NULL, "t.csv: line 2: 1 fields, expected 2");
    expect_error("a,b\n1,2,3\n", NULL, "line 2: more than 2 fields");
    expect_error("a\n1\n2\n\"x\n", NULL, "line 4: unterminated quoted field");
    expect_error("a\n\"x\"y\n", NULL, "line 2: unexpected text after a closing quote");
    expect_error("a,a\n", NULL, "column \"a\" appears twice");
    expect_error("a\n1\n2\n3\nx\n", "l", "t.csv: line 5, column \"a\": \"x\" is not a valid int64");
    expect_error("a\n300\n", "c", "column \"a\": \"300\" is not a valid int8");
    expect_error("z\n1\n", "l", "column \"z\" is not in the table");
    expect_error("a\n\xff\n", "u", "is not a valid string");
    /* Read into 64-bit offsets (the storage form) it is still a string. */
    expect_error("a\n\xff\n", "U", "text that is not valid UTF-8 is not a valid string");
    expect_error("a\n1\n", "tts", "cannot be read from text");
    expect_error("a\n1\n2\n2.5\n", NULL, "line 4, column \"a\": \"2.5\" is not a valid int64");
}

/* Rows of bare and wholly quoted fields are split sixteen bytes at a time
 * straight into the batch; the rest (escaped quotes, a quote inside a bare
 * field, fields over lines, blank lines, CRLF) goes to the scanner. Both
 * read the same values whatever the window's reads, and a row of the wrong
 * shape among plain ones is named by its line. */
static void test_plain_rows(void)
{
    const char *text = "a,b,c,d\n"
                       "\"first value\",plain text here,\"with, comma\",x1234567890\n"
                       "\"\",,\"q\",last-field-long-enough\n"
                       "bare\"quote,\"esc \"\"q\"\"\",z,y\n"
                       "r4 long enough text,\"multi\nline\",m,n\n"
                       "\r\n"
                       "r6,s6,t6,u6-long-field-text\r\n"
                       "r8,b,c,d-tail-padding-padding-padding\n";
    const char *want[][4] = {{"first value", "plain text here", "with, comma", "x1234567890"},
                             {"", "", "q", "last-field-long-enough"},
                             {"bare\"quote", "esc \"q\"", "z", "y"},
                             {"r4 long enough text", "multi\nline", "m", "n"},
                             {"r6", "s6", "t6", "u6-long-field-text"},
                             {"r8", "b", "c", "d-tail-padding-padding-padding"}};
    for (size_t limit = 0; limit <= 64; limit++) {
        result r;
        read_csv(text, "u,u,u,u", limit, 0, &r);
        CHECK_OK(r.st, &r.err);
        CHECK_INT(r.rows, 6);
        char buf[64];
        for (int row = 0; row < 6; row++)
            for (int col = 0; col < 4; col++)
                CHECK_STR(str_at(&r.col[col], row, buf), want[row][col]);
        result_free(&r);
    }
    const char *pad = "4444,4444\n4444,4444\n4444,4444\n";
    const char *bad[][2] = {
        {"a,b\n5555555555555555555\n", "t.csv: line 2: 1 fields, expected 2"},
        {"a,b\n1,2,3333333333333333\n", "t.csv: line 2: more than 2 fields"},
        {"a,b\n\"x\ny\",2\n333333333333333333333\n", "line 4: 1 fields, expected 2"},
        {"a,b\n\"xxxxxxxxxxxxxxxx\"y,2\n", "line 2: unexpected text after a closing quote"}};
    for (int i = 0; i < 4; i++) {
        char t[256];
        snprintf(t, sizeof t, "%s%s", bad[i][0], pad);
        expect_error(t, NULL, bad[i][1]);
    }
}

/* float64, int64 and timestamp columns convert by a loop of their own until
 * a row it does not take (a null, a bad value): the values on either side of
 * nulls land in their rows, and a bad value after nulls is named by its line. */
static void test_plain_columns_with_nulls(void)
{
    result r;
    read_csv("a,b,c\n1.5,7,2024-05-01T00:00:00Z\n,NA,\n-2,8,2024-05-02 00:00:01Z\n"
             "NaN,,2024-05-02T00:00:02Z\n2.25,9,null\n",
             "g,l,tsu:UTC", 0, 0, &r);
    CHECK_OK(r.st, &r.err);
    CHECK_INT(r.rows, 5);
    const double *a = r.col[0].values;
    const int64_t *b = r.col[1].values, *c = r.col[2].values;
    const bool null_a[] = {false, true, false, true, false},
               null_b[] = {false, true, false, true, false},
               null_c[] = {false, true, false, false, true};
    for (int i = 0; i < 5 && r.st == TL_OK; i++) {
        CHECK(tl_view_is_null(&r.col[0], i) == null_a[i]);
        CHECK(tl_view_is_null(&r.col[1], i) == null_b[i]);
        CHECK(tl_view_is_null(&r.col[2], i) == null_c[i]);
    }
    if (r.st == TL_OK) {
        CHECK(a[0] == 1.5 && a[2] == -2 && a[4] == 2.25);
        CHECK(b[0] == 7 && b[2] == 8 && b[4] == 9);
        CHECK_INT(c[0], 1714521600000000LL);
        CHECK_INT(c[2], 1714608001000000LL);
        CHECK_INT(c[3], 1714608002000000LL);
    }
    result_free(&r);
    expect_error("a\n1\n\n2\nx\n", "l", "t.csv: line 5, column \"a\": \"x\" is not a valid int64");
    expect_error("a\n1\nNA\n2\n1e999\n", "g", "line 5, column \"a\": \"1e999\"");
    expect_error(
        "a\n2024-05-01\n2024-05-01T00:00:00.0000001Z\n", "tsu:UTC",
        "line 3, column \"a\": \"2024-05-01T00:00:00.0000001Z\" has digits below a microsecond");
}

/* A string column's values go into the column all at once, checked as
 * UTF-8 together: multibyte values come back whole, and a character split
 * across two fields (each invalid, though their bytes together are valid)
 * is refused, naming the first. */
static void test_string_run(void)
{
    result r;
    read_csv("a,b\n\xC3\xA9,1\n\xE6\x97\xA5\xE6\x9C\xAC,2\n,3\nabc,4\n", "u,l", 0, 0, &r);
    CHECK_OK(r.st, &r.err);
    char buf[16];
    if (r.st == TL_OK) {
        CHECK_STR(str_at(&r.col[0], 0, buf), "\xC3\xA9");
        CHECK_STR(str_at(&r.col[0], 1, buf), "\xE6\x97\xA5\xE6\x9C\xAC");
        CHECK_STR(str_at(&r.col[0], 2, buf), "");
        CHECK_STR(str_at(&r.col[0], 3, buf), "abc");
    }
    result_free(&r);
    expect_error("a,b\nx\xC3,1\n\xA9y,2\n", "u,l", "line 2, column \"a\"");
    expect_error("a,b\nok,1\n\xC3\xA9\xC3,2\n\xA9,3\n", "u,l", "line 3, column \"a\"");
    expect_error("a\nok\n\xA9\n", "u", "line 3, column \"a\"");
}

/* A batch big enough to convert its columns in threads: the values land in
 * their columns, and of two bad columns the first is named, as one at a time. */
static void test_large_batch(void)
{
    enum { ROWS = 6000 };
    tl_buf text = {0};
    tl_buf_append_str(&text, "a,b,c,d\n");
    for (int i = 0; i < ROWS; i++) tl_buf_printf(&text, "%d,s%d,%d.5,%d\n", i, i, i, -i);
    result r;
    read_csv((const char *)text.data, "l,u,g,l", 1 << 20, 1 << 20, &r);
    CHECK_OK(r.st, &r.err);
    CHECK_INT(r.rows, ROWS);
    char buf[32];
    for (int i = 0; i < ROWS; i += 997) {
        CHECK_INT(((const int64_t *)r.col[0].values)[i], i);
        snprintf(buf + 16, 16, "s%d", i);
        CHECK_STR(str_at(&r.col[1], i, buf), buf + 16);
        CHECK(((const double *)r.col[2].values)[i] == i + 0.5);
        CHECK_INT(((const int64_t *)r.col[3].values)[i], -i);
    }
    result_free(&r);
    tl_buf_append_str(&text, "1,x,2.5,oops\n7,y,bad,8\n");
    read_csv((const char *)text.data, "l,u,g,l", 1 << 20, 1 << 20, &r);
    CHECK(r.st == TL_ERR_INVALID);
    if (strstr(r.err.message, "line 6003, column \"c\": \"bad\"") == NULL)
        unit_fail(__FILE__, __LINE__, "unexpected error \"%s\"", r.err.message);
    result_free(&r);
    tl_buf_free(&text);
}

/* The batch sized from its first rows and the input's size: rows much
 * longer or shorter than the sampled ones after it still land whole. */
static void test_rows_unlike_the_sample(void)
{
    for (int longer = 0; longer < 2; longer++) {
        tl_buf text = {0};
        tl_buf_append_str(&text, "a,b\n");
        for (int i = 0; i < 3000; i++) {
            int wide = (i >= 64) == longer;
            tl_buf_printf(&text, "%d,%s%d\n", i, wide ? "a-much-longer-text-value-" : "s", i);
        }
        result r;
        read_csv((const char *)text.data, "l,u", 1 << 20, 1 << 20, &r);
        CHECK_OK(r.st, &r.err);
        CHECK_INT(r.rows, 3000);
        char buf[64], want[64];
        for (int i = 0; i < 3000; i += 71) {
            CHECK_INT(((const int64_t *)r.col[0].values)[i], i);
            int wide = (i >= 64) == longer;
            snprintf(want, sizeof want, "%s%d", wide ? "a-much-longer-text-value-" : "s", i);
            CHECK_STR(str_at(&r.col[1], i, buf), want);
        }
        result_free(&r);
        tl_buf_free(&text);
    }
}

/* A reserved batch takes the rows it was sized for without moving its
 * buffers (no copies through growth), and keeps its values. */
static void test_batch_reserve(void)
{
    tl_text_batch b;
    tl_error err = {0};
    CHECK_OK(tl_text_batch_init(&b, 2, &err), &err);
    char v[32];
    for (int i = 0; i < 1000; i++) {
        if (i == 10) tl_text_batch_reserve(&b, 1000);
        const void *before[2] = {b.cols[0].bytes.data, b.cols[1].offsets.data};
        int n = snprintf(v, sizeof v, "value-%04d", i);
        CHECK_OK(tl_text_batch_put(&b, 0, v, (size_t)n, TL_TEXT_STRING, &err), &err);
        CHECK_OK(tl_text_batch_put(&b, 1, v, 5, TL_TEXT_STRING, &err), &err);
        CHECK_OK(tl_text_batch_end_row(&b, i + 2, &err), &err);
        if (i >= 10)
            CHECK(before[0] == b.cols[0].bytes.data && before[1] == b.cols[1].offsets.data);
    }
    size_t len;
    int kind;
    const char *p = tl_text_value(&b.cols[0], 777, &len, &kind);
    CHECK(len == 10 && memcmp(p, "value-0777", 10) == 0 && kind == TL_TEXT_STRING);
    tl_text_batch_free(&b);
}

/* tl_input_open_memory: CSV and NDJSON read from bytes, errors named as
 * given, Parquet and an unknown format refused. */
static void test_input_open_memory(void)
{
    static const struct {
        tl_input_format format;
        const char *text;
        int64_t rows;
    } ok[] = {{TL_INPUT_CSV, "a,b\n1,x\n2,y\n3,z\n", 3},
              {TL_INPUT_TSV, "a\tb\n1\tx\n", 1},
              {TL_INPUT_NDJSON, "{\"a\":1}\n{\"a\":2}\n", 2}};
    tl_error err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tl_input_options o = {.format = ok[i].format};
        struct ArrowArrayStream s;
        CHECK_OK(tl_input_open_memory((const uint8_t *)ok[i].text, strlen(ok[i].text), "mem", &o,
                                      &s, &err),
                 &err);
        int64_t rows = 0;
        for (struct ArrowArray a; s.get_next(&s, &a) == 0 && a.release; tl_array_release(&a))
            rows += a.length;
        CHECK_INT(rows, ok[i].rows);
        s.release(&s);
    }
    const char *bad = "a,b\n1\n";
    tl_input_options csv = {.format = TL_INPUT_CSV};
    struct ArrowArrayStream s;
    tl_status st =
        tl_input_open_memory((const uint8_t *)bad, strlen(bad), "s3://b/k.csv", &csv, &s, &err);
    CHECK_INT(st, TL_ERR_INVALID);
    CHECK(strstr(err.message, "s3://b/k.csv") != NULL);
    tl_input_options pq = {.format = TL_INPUT_PARQUET}, any = {0};
    CHECK_INT(tl_input_open_memory((const uint8_t *)"PAR1", 4, "p", &pq, &s, &err), TL_ERR_INVALID);
    CHECK_INT(tl_input_open_memory((const uint8_t *)"a\n", 2, "p", &any, &s, &err), TL_ERR_INVALID);
}

/* Row i of test_typed_as_read: a float64, an int64, a timestamp and a
 * string, some spelled so that the typed reading of their column stops
 * (a null spelling, an empty or quoted number) or that the row goes to the
 * scanner (an escaped quote). */
static void typed_row(int i, char *out, size_t size)
{
    char a[32], b[32], c[48], d[32];
    snprintf(a, sizeof a, i == 17 ? "NA" : i == 41 ? "" : i == 23 ? "\"%g\"" : "%g", i * 0.25);
    snprintf(b, sizeof b, i == 29 ? "null" : "%lld", (long long)i * 1000003 - 7);
    snprintf(c, sizeof c, i == 5 ? "" : "2024-05-01T00:%02d:%02d.%06dZ", i / 60, i % 60, i);
    snprintf(d, sizeof d, i == 35 ? "\"x\"\"y%d\"" : "s%d", i);
    snprintf(out, size, "%s,%s,%s,%s\n", a, b, c, d);
}

/* Numbers and times are typed as they are read, until a value of their
 * column does not parse plainly; the rest of that batch is read as text and
 * converted after. Wherever that happens, whatever the reads' size (rows
 * split across reads go to the scanner) and the batches', every row holds
 * its value or its null, and a bad value after typed rows is named by its
 * line. */
static void test_typed_as_read(void)
{
    enum { ROWS = 60 };
    char text[ROWS * 96 + 16] = "a,b,c,d\n";
    for (int i = 0; i < ROWS; i++) typed_row(i, text + strlen(text), sizeof text - strlen(text));
    const size_t limits[] = {0, 5, 16, 37, 64, 1000};
    const int64_t batches[] = {0, 7, 16};
    for (size_t l = 0; l < sizeof limits / sizeof *limits; l++)
        for (size_t k = 0; k < sizeof batches / sizeof *batches; k++) {
            tl_error err = {0};
            tl_text_input *in;
            tl_text_input_open_memory((const uint8_t *)text, strlen(text), "t.csv", &in, &err);
            tl_text_input_set_read_limit(in, limits[l]);
            struct ArrowSchema target = {0}, schema = {0};
            tl_schema_init(&target, "+s", "", 0, 4, NULL);
            const char *fmt[] = {"g", "l", "tsu:UTC", "u"}, *names[] = {"a", "b", "c", "d"};
            for (int i = 0; i < 4; i++)
                tl_schema_init(target.children[i], fmt[i], names[i], ARROW_FLAG_NULLABLE, 0, NULL);
            tl_csv_options o = {.batch_rows = batches[k]};
            struct ArrowArrayStream s;
            CHECK_OK(tl_csv_stream_open(in, &o, &target, &s, &err), &err);
            tl_schema_release(&target);
            s.get_schema(&s, &schema);
            int64_t row = 0;
            struct ArrowArray a;
            while (s.get_next(&s, &a) == 0 && a.release) {
                tl_array_view v[4];
                for (int i = 0; i < 4; i++)
                    tl_array_view_init(&v[i], schema.children[i], a.children[i], NULL);
                for (int64_t r = 0; r < a.length; r++, row++) {
                    int i = (int)row;
                    CHECK(tl_view_is_null(&v[0], r) == (i == 17 || i == 41));
                    CHECK(tl_view_is_null(&v[1], r) == (i == 29));
                    CHECK(tl_view_is_null(&v[2], r) == (i == 5));
                    if (i != 17 && i != 41) CHECK(((const double *)v[0].values)[r] == i * 0.25);
                    if (i != 29)
                        CHECK_INT(((const int64_t *)v[1].values)[r], (int64_t)i * 1000003 - 7);
                    if (i != 5)
                        CHECK_INT(((const int64_t *)v[2].values)[r],
                                  1714521600000000LL + i * 1000000LL + i);
                    char buf[32], want[32];
                    snprintf(want, sizeof want, i == 35 ? "x\"y%d" : "s%d", i);
                    CHECK_STR(str_at(&v[3], r, buf), want);
                }
                for (int i = 0; i < 4; i++) tl_array_view_free(&v[i]);
                tl_array_release(&a);
            }
            CHECK_INT(row, ROWS);
            s.release(&s);
            tl_schema_release(&schema);
        }
    char bad[ROWS * 96 + 32];
    snprintf(bad, sizeof bad, "%s1.5,x,,\n", text);
    expect_error(bad, "g,l,tsu:UTC,u", "t.csv: line 62, column \"b\": \"x\" is not a valid int64");
}

UNIT_TESTS(UNIT(test_quoting_and_line_ends), UNIT(test_plain_rows), UNIT(test_input_open_memory),
           UNIT(test_batches), UNIT(test_inference), UNIT(test_target_types), UNIT(test_errors),
           UNIT(test_plain_columns_with_nulls), UNIT(test_string_run), UNIT(test_large_batch),
           UNIT(test_rows_unlike_the_sample), UNIT(test_batch_reserve), UNIT(test_typed_as_read))
