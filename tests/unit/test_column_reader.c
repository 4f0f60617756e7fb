/* tl_reader: CSV, TSV and NDJSON read into typed columns, leniently and
 * strictly; header matching, NDJSON paths, typing rules, skipped lines and
 * nulled values with their report, gzip, batches and bad options. */
#include <stdlib.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "formats/csv/value_text.h"
#include "unit.h"

typedef struct outcome {
    tl_status open, stream; /* of tl_reader_open, and of reading the stream */
    tl_error err;           /* the failure's message */
    tl_buf rows;            /* "v|v|v\n" per row, "-" for null */
    int64_t batches;
    tl_read_report report;
    char problems[2048]; /* "line:column:message;" each */
} outcome;

static void outcome_free(outcome *o)
{
    tl_buf_free(&o->rows);
}

static void render_batch(const struct ArrowSchema *schema, const struct ArrowArray *a, tl_buf *out)
{
    tl_array_view v[8];
    for (int64_t c = 0; c < a->n_children; c++)
        CHECK(tl_array_view_init(&v[c], schema->children[c], a->children[c], NULL) == TL_OK);
    for (int64_t i = 0; i < a->length; i++) {
        for (int64_t c = 0; c < a->n_children; c++) {
            if (c) tl_buf_append_byte(out, '|');
            if (tl_value_is_null(&v[c], i))
                tl_buf_append_byte(out, '-');
            else
                tl_value_text(&v[c], i, out);
        }
        tl_buf_append_byte(out, '\n');
    }
    for (int64_t c = 0; c < a->n_children; c++) tl_array_view_free(&v[c]);
}

/* Reads data with the columns given as "name:type[:path]" specs. */
static void read_with(const void *data, size_t len, const char *name, const char *format,
                      const char *const *specs, int lenient, int64_t batch, outcome *o)
{
    memset(o, 0, sizeof *o);
    tl_read_column cols[8];
    char buf[8][3][64];
    int n = 0;
    for (; specs[n]; n++) {
        char tmp[192];
        snprintf(tmp, sizeof tmp, "%s", specs[n]);
        char *save, *f = strtok_r(tmp, ":", &save);
        for (int k = 0; k < 3; k++) {
            snprintf(buf[n][k], sizeof buf[n][k], "%s", f ? f : "");
            f = f ? strtok_r(NULL, ":", &save) : NULL;
        }
        cols[n] = (tl_read_column){buf[n][0], buf[n][2][0] ? buf[n][2] : NULL, buf[n][1]};
    }
    tl_read_options opts = {format, name, cols, (size_t)n, lenient, batch};
    tl_reader *r;
    o->open = tl_reader_open(data, len, &opts, &r, &o->err);
    if (o->open != TL_OK) return;
    struct ArrowArrayStream s;
    CHECK_OK(tl_reader_stream(r, &s, &o->err), &o->err);
    struct ArrowSchema schema;
    CHECK(s.get_schema(&s, &schema) == 0);
    for (;;) {
        struct ArrowArray a;
        if (s.get_next(&s, &a) != 0) {
            o->stream = TL_ERR_INVALID;
            snprintf(o->err.message, sizeof o->err.message, "%s", s.get_last_error(&s));
            break;
        }
        if (a.release == NULL) break;
        o->batches++;
        render_batch(&schema, &a, &o->rows);
        a.release(&a);
    }
    schema.release(&schema);
    s.release(&s);
    tl_reader_report(r, &o->report);
    size_t at = 0;
    for (size_t i = 0; i < o->report.problems_len && at < sizeof o->problems; i++) {
        const tl_read_problem *p = &o->report.problems[i];
        at += (size_t)snprintf(o->problems + at, sizeof o->problems - at, "%lld:%s:%s;",
                               (long long)p->line, p->column ? p->column : "", p->message);
    }
    o->report.problems = NULL; /* owned by the reader, closed now */
    tl_reader_close(r);
    tl_buf_append_byte(&o->rows, 0);
    o->rows.len--;
}

static void read_text(const char *text, const char *name, const char *const *specs, int lenient,
                      outcome *o)
{
    read_with(text, strlen(text), name, NULL, specs, lenient, 0, o);
}

#define ROWS(o) ((const char *)((o)->rows.data ? (o)->rows.data : (const uint8_t *)""))

static void check_contains(const char *text, const char *words, int line)
{
    if (strstr(text, words) == NULL) unit_fail(__FILE__, line, "\"%s\" not in \"%s\"", words, text);
}
#define CHECK_HAS(text, words) check_contains(text, words, __LINE__)

static void test_csv_columns_by_header(void)
{
    const char *specs[] = {"amount:float64", "who:string:name", "n:int64", NULL};
    outcome o;
    read_text("id,name,amount,n,extra\n1,ann,2.5,7,x\n2,\"bo, \"\"b\"\"\",-1e3,8,y\n3,,,,z\n",
              "t.csv", specs, 1, &o);
    CHECK_INT(o.open, TL_OK);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "2.5|ann|7\n-1000.0|bo, \"b\"|8\n-|-|-\n");
    CHECK_INT(o.report.rows, 3);
    CHECK_INT(o.report.lines, 4);
    CHECK_INT(o.report.values_nulled, 0);
    outcome_free(&o);

    /* TSV, CRLF, a BOM */
    read_text("\xEF\xBB\xBFname\tamount\tn\r\nann\t1\t2\r\n", "t.tsv", specs, 0, &o);
    CHECK_STR(ROWS(&o), "1.0|ann|2\n");
    outcome_free(&o);
}

static void test_csv_header_errors(void)
{
    const char *specs[] = {"a:int64", "b:string", "c:bool", NULL};
    outcome o;
    read_text("a,x\n1,2\n", "t.csv", specs, 1, &o);
    CHECK_INT(o.open, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.csv: the header has no column \"b\", \"c\"");
    read_text("", "t.csv", specs, 1, &o);
    CHECK_HAS(o.err.message, "t.csv: empty file: no header row");
    read_text("a,b,c,a\n", "t.csv", specs, 1, &o);
    CHECK_HAS(o.err.message, "column \"a\" appears twice in the header");
    read_text("a,b,c\n", "t.csv", specs, 1, &o); /* header only: no rows */
    CHECK_INT(o.open, TL_OK);
    CHECK_INT(o.report.rows, 0);
    CHECK_INT(o.batches, 0);
    outcome_free(&o);
}

static void test_csv_lenient_and_strict(void)
{
    const char *specs[] = {"n:int64", "f:float64", "b:bool", "d:date", "s:string", NULL};
    const char *text = "n,f,b,d,s\n"
                       " 42 ,1.5,TRUE,2024-02-29,x\n"
                       "4.2e1,nan,0,2024-02-30,y\n"
                       "4.5,abc,yes,2024-01-01T00:00:00Z,z\n"
                       "1,2\n"
                       "9223372036854775808,1e999,1,2024-01-01,\xff\n"
                       "-0,-inf,false,0001-01-01,\n";
    outcome o;
    read_text(text, "t.csv", specs, 1, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "42|1.5|true|2024-02-29|x\n"
                        "42|nan|false|-|y\n"
                        "-|-|-|-|z\n"
                        "-|-|true|2024-01-01|-\n"
                        "0|-inf|false|0001-01-01|-\n");
    CHECK_INT(o.report.rows, 5);
    CHECK_INT(o.report.lines_skipped, 1);
    CHECK_INT(o.report.values_nulled, 8);
    CHECK_HAS(o.problems, "3:d:\"2024-02-30\" is not a valid date;");
    CHECK_HAS(o.problems, "4:n:\"4.5\" is not a valid int64;");
    CHECK_HAS(o.problems, "4:b:\"yes\" is not a valid bool;");
    CHECK_HAS(o.problems, "5::2 fields, expected 5;");
    CHECK_HAS(o.problems, "6:f:\"1e999\" is not a valid float64;");
    CHECK_HAS(o.problems, "6:s:text that is not valid UTF-8 is not a valid string;");
    outcome_free(&o);

    read_text(text, "t.csv", specs, 0, &o);
    CHECK_INT(o.stream, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.csv: line 3, column \"d\": \"2024-02-30\" is not a valid date");
    outcome_free(&o);
    read_text("n,f,b,d,s\n1,2\n", "t.csv", specs, 0, &o);
    CHECK_HAS(o.err.message, "t.csv: line 2: 2 fields, expected 5");
    outcome_free(&o);
    /* A broken quote is the file's error, lenient or not. */
    read_text("n,f,b,d,s\n1,2,1,2024-01-01,\"x\n", "t.csv", specs, 1, &o);
    CHECK_INT(o.stream, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.csv: line 2: unterminated quoted field");
    outcome_free(&o);
}

/* Integers: plain digits (up to 18, read inline) and everything else
 * (longer, signed, with a point or an exponent) agree, before and after a
 * null. */
static void test_csv_integers(void)
{
    const char *specs[] = {"n:int64", NULL};
    const char *text = "n\n007\n-12\n999999999999999999\n-999999999999999999\n"
                       "9223372036854775807\n-9223372036854775808\n+5\n-\n12a\n3\n1e3\n"
                       "9223372036854775808\n";
    outcome o;
    read_text(text, "t.csv", specs, 1, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "7\n-12\n999999999999999999\n-999999999999999999\n"
                        "9223372036854775807\n-9223372036854775808\n5\n-\n-\n3\n1000\n-\n");
    CHECK_INT(o.report.values_nulled, 3);
    CHECK_HAS(o.problems, "9:n:\"-\" is not a valid int64;");
    CHECK_HAS(o.problems, "10:n:\"12a\" is not a valid int64;");
    outcome_free(&o);
}

static void test_ndjson_paths(void)
{
    const char *specs[] = {"host:string:request.host", "ua:string:request.headers.User-Agent[0]",
                           "status:int64", "second:int64:a[1][0]", NULL};
    const char *text =
        "{\"ts\":1.5,\"status\":200,\"request\":{\"host\":\"etl.example\",\"headers\":"
        "{\"User-Agent\":[\"curl/8\",\"x\"]}},\"a\":[[1],[2,3]]}\n"
        "\n"
        "  "
        "{\"request\":{\"host\":\"x\"},\"request\":{\"host\":\"h\\u00e9\\t\"},\"status\":\"201\"}\n"
        "{\"request\":{\"host\":\"gone\"},\"request\":5,\"a\":[1],\"st\\u0061tus\":404}\n";
    outcome o;
    read_text(text, "t.ndjson", specs, 1, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "etl.example|curl/8|200|2\n"
                        "h\xc3\xa9\t|-|201|-\n"
                        "-|-|404|-\n");
    CHECK_INT(o.report.lines, 4);
    CHECK_INT(o.report.lines_skipped, 0);
    outcome_free(&o);

    const char *bad[] = {"x:int64:a[x]", NULL};
    read_text("{}\n", "t.ndjson", bad, 1, &o);
    CHECK_INT(o.open, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.ndjson: path \"a[x]\": malformed array index");
    const char *empty[] = {"x:int64:..", NULL};
    read_text("{}\n", "t.ndjson", empty, 1, &o);
    CHECK_HAS(o.err.message, "path \"..\": empty path");
}

static void test_ndjson_typing(void)
{
    const char *specs[] = {"i:int64", "f:float64", "b:bool", "s:string", "d:date", NULL};
    const char *text = "{\"i\":\"42\",\"f\":\"2.5\",\"b\":1,\"s\":7.50,\"d\":\"2024-05-01\"}\n"
                       "{\"i\":4.2e1,\"f\":3,\"b\":\"false\",\"s\":true,\"d\":null}\n"
                       "{\"i\":4.5,\"f\":true,\"b\":2,\"s\":{\"k\": [1, 2]},\"d\":20240501}\n"
                       "{\"i\":null,\"s\":\"\",\"f\":1e400}\n";
    outcome o;
    read_text(text, "t.jsonl", specs, 1, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "42|2.5|true|7.50|2024-05-01\n"
                        "42|3.0|false|true|-\n"
                        "-|-|-|{\"k\": [1, 2]}|-\n"
                        "-|-|-||-\n");
    CHECK_INT(o.report.values_nulled, 5);
    CHECK_HAS(o.problems, "3:i:\"4.5\" is not a valid int64;");
    CHECK_HAS(o.problems, "3:d:\"20240501\" is not a valid date;");
    CHECK_HAS(o.problems, "4:f:\"1e400\" is not a valid float64;");
    outcome_free(&o);
}

static void test_ndjson_skipped_lines(void)
{
    const char *specs[] = {"a:int64", NULL};
    const char *text = "{\"a\":1}\nnot json\n[1,2]\n\"x\"\n{\"a\":2} trailing\n"
                       "{\"a\":\"\xff\"}\n{\"a\":3}\n{\"a\":4,\"b\":[";
    outcome o;
    read_text(text, "t.ndjson", specs, 1, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_STR(ROWS(&o), "1\n3\n");
    CHECK_INT(o.report.lines, 8);
    CHECK_INT(o.report.lines_skipped, 6);
    CHECK_HAS(o.problems, "2::not a JSON object at byte 1;");
    CHECK_HAS(o.problems, "5::text after the object at byte 9;");
    CHECK_HAS(o.problems, "6::invalid UTF-8 in string");
    CHECK_HAS(o.problems, "8::missing value");
    outcome_free(&o);

    read_text(text, "t.ndjson", specs, 0, &o);
    CHECK_INT(o.stream, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.ndjson: line 2: not a JSON object at byte 1");
    outcome_free(&o);

    /* One JSON array is not NDJSON: the file's error. */
    read_text("\n [{\"a\":1},\n{\"a\":2}]\n", "t.ndjson", specs, 1, &o);
    CHECK_INT(o.stream, TL_ERR_INVALID);
    CHECK_HAS(o.err.message, "t.ndjson: the file starts with '['");
    outcome_free(&o);

    /* Nesting beyond 128 levels is a skipped line, not a crash. */
    tl_buf deep = {0};
    tl_buf_append_str(&deep, "{\"a\":1,\"b\":");
    for (int i = 0; i < 200; i++) tl_buf_append_byte(&deep, '[');
    for (int i = 0; i < 200; i++) tl_buf_append_byte(&deep, ']');
    tl_buf_append_str(&deep, "}\n{\"a\":5}\n");
    read_with(deep.data, deep.len, "t.ndjson", NULL, specs, 1, 0, &o);
    CHECK_STR(ROWS(&o), "5\n");
    CHECK_HAS(o.problems, "nested deeper than 128 levels");
    outcome_free(&o);
    tl_buf_free(&deep);
}

static void gzip(const char *text, size_t len, tl_buf *out)
{
    CHECK(unit_gzip(text, len, out) == 0);
}

static void test_gzip_and_batches(void)
{
    tl_buf text = {0}, gz = {0};
    tl_buf_append_str(&text, "k,v\n");
    for (int i = 0; i < 1000; i++) tl_buf_printf(&text, "%d,v%d\n", i, i * 7);
    gzip((const char *)text.data, text.len, &gz);
    const char *specs[] = {"k:int64", "v:string", NULL};
    outcome o;
    read_with(gz.data, gz.len, "x.csv.gz", NULL, specs, 1, 300, &o);
    CHECK_INT(o.stream, TL_OK);
    CHECK_INT(o.report.rows, 1000);
    CHECK_INT(o.batches, 4);
    CHECK_HAS(ROWS(&o), "999|v6993\n");
    outcome_free(&o);
    /* Cut anywhere: an error, never part of the file. */
    for (size_t cut = 1; cut < gz.len; cut += 97) {
        read_with(gz.data, cut, "x.csv.gz", NULL, specs, 1, 300, &o);
        CHECK(o.open == TL_ERR_INVALID || o.stream == TL_ERR_INVALID);
        CHECK_HAS(o.err.message, "x.csv.gz");
        outcome_free(&o);
    }
    /* NDJSON too, whatever the name says once the format is given. */
    tl_buf_free(&gz);
    gzip("{\"k\":1}\n{\"k\":2}\n", 16, &gz);
    read_with(gz.data, gz.len, "blob", "ndjson", specs, 1, 0, &o);
    CHECK_STR(ROWS(&o), "1|-\n2|-\n");
    outcome_free(&o);
    tl_buf_free(&gz);
    tl_buf_free(&text);
}

static void test_bad_options(void)
{
    outcome o;
    const char *unknown[] = {"a:int32", NULL};
    read_text("a\n", "t.csv", unknown, 1, &o);
    CHECK_HAS(o.err.message, "t.csv: column \"a\": unknown type \"int32\"");
    const char *twice[] = {"a:int64", "a:string", NULL};
    read_text("a\n", "t.csv", twice, 1, &o);
    CHECK_HAS(o.err.message, "column \"a\" is given twice");
    const char *none[] = {NULL};
    read_text("a\n", "t.csv", none, 1, &o);
    CHECK_HAS(o.err.message, "give between 1 and 10000 columns");
    const char *one[] = {"a:int64", NULL};
    read_text("a\n", "t.parquet", one, 1, &o);
    CHECK_HAS(o.err.message, "Parquet is not read");
    read_text("a\n", "t.xlsx", one, 1, &o);
    CHECK_HAS(o.err.message, "unknown file type");
    read_with("a\n", 2, "t.csv", "xml", one, 1, 0, &o);
    CHECK_HAS(o.err.message, "unknown input format \"xml\"");

    tl_reader *r;
    tl_error err;
    tl_read_column col = {"a", NULL, "int64"};
    tl_read_options opts = {.name = "t.csv", .columns = &col, .columns_len = 1};
    CHECK_OK(tl_reader_open("a\n1\n", 4, &opts, &r, &err), &err);
    struct ArrowArrayStream s;
    CHECK_OK(tl_reader_stream(r, &s, &err), &err);
    struct ArrowArrayStream again;
    CHECK(tl_reader_stream(r, &again, &err) == TL_ERR_INVALID);
    s.release(&s);
    tl_reader_close(r);
    tl_reader_close(NULL);
}

UNIT_TESTS(UNIT(test_csv_columns_by_header), UNIT(test_csv_header_errors),
           UNIT(test_csv_lenient_and_strict), UNIT(test_csv_integers), UNIT(test_ndjson_paths),
           UNIT(test_ndjson_typing), UNIT(test_ndjson_skipped_lines), UNIT(test_gzip_and_batches),
           UNIT(test_bad_options))
