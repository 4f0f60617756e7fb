/* The public data-file calls (timelake.h, "Data files"), through the public
 * header only: format names, reading files and bytes as Arrow streams,
 * writing batches as CSV, TSV, NDJSON and Parquet, batches as text cells,
 * and the errors bad input gets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timelake.h"
#include "unit.h"

/* ---- a struct schema of flat columns made by the test (no library helper) ---- */

static void static_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

typedef struct test_schema {
    struct ArrowSchema top, cols[4];
    struct ArrowSchema *ptrs[4];
} test_schema;

/* n columns named names[i] of Arrow format formats[i], nullable. */
static struct ArrowSchema *make_schema(test_schema *t, int n, const char *const *names,
                                       const char *const *formats)
{
    for (int i = 0; i < n; i++) {
        t->cols[i] = (struct ArrowSchema){.format = formats[i],
                                          .name = names[i],
                                          .flags = ARROW_FLAG_NULLABLE,
                                          .release = static_release};
        t->ptrs[i] = &t->cols[i];
    }
    t->top = (struct ArrowSchema){.format = "+s",
                                  .name = "",
                                  .n_children = n,
                                  .children = t->ptrs,
                                  .release = static_release};
    return &t->top;
}

/* ---- helpers ---- */

static char *tmp_path(const char *name)
{
    static char path[4][4096];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, 4096, "%s/%s", unit_tmpdir(), name);
    return p;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) fputs(text, f);
    if (f) fclose(f);
}

/* Every batch of a stream (consumed) as text: cells joined by '|', rows by
 * '\n', a null as "~"; the header first. */
static void stream_text(struct ArrowArrayStream *s, char *out, size_t size)
{
    struct ArrowSchema schema;
    out[0] = 0;
    CHECK_INT(s->get_schema(s, &schema), 0);
    for (int64_t i = 0; i < schema.n_children; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s:%s", i ? "|" : "",
                 schema.children[i]->name, schema.children[i]->format);
    for (;;) {
        struct ArrowArray b;
        CHECK_INT(s->get_next(s, &b), 0);
        if (b.release == NULL) break;
        char **cells;
        tl_error err;
        CHECK_OK(tl_batch_text(&schema, &b, &cells, &err), &err);
        for (int64_t r = 0; r < b.length; r++)
            for (int64_t c = 0; c < schema.n_children; c++) {
                const char *v = cells[r * schema.n_children + c];
                snprintf(out + strlen(out), size - strlen(out), "%s%s", c ? "|" : "\n",
                         v ? v : "~");
            }
        tl_free(cells);
        b.release(&b);
    }
    schema.release(&schema);
    s->release(s);
}

/* Writes every batch of `in` (consumed) to a new file at path as `format`. */
static tl_status copy_stream(struct ArrowArrayStream *in, const char *format, const char *path,
                             tl_error *err)
{
    struct ArrowSchema schema;
    CHECK_INT(in->get_schema(in, &schema), 0);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    tl_data_writer *w = NULL;
    tl_status st = tl_data_writer_open(f, format, &schema, &w, err);
    while (st == TL_OK) {
        struct ArrowArray b;
        CHECK_INT(in->get_next(in, &b), 0);
        if (b.release == NULL) break;
        st = tl_data_writer_write(w, &b, err);
        b.release(&b);
    }
    if (st == TL_OK)
        st = tl_data_writer_finish(w, err);
    else
        tl_data_writer_abort(w);
    fclose(f);
    schema.release(&schema);
    in->release(in);
    return st;
}

static char *read_all(const char *path)
{
    static char text[8192];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f) fclose(f);
    return text;
}

static const char CSV[] = "id,name,temp\n1,pump,71.5\n2,,\n3,\"a,b\",-4\n";

/* ---- format names ---- */

static void test_format_names(void)
{
    const char *f = NULL;
    tl_error err;
    CHECK_OK(tl_data_format("csv", NULL, &f, &err), &err);
    CHECK_STR(f, "csv");
    CHECK_OK(tl_data_format("jsonl", "x.parquet", &f, &err), &err); /* the name wins */
    CHECK_STR(f, "ndjson");
    CHECK_OK(tl_data_format(NULL, "dir/x.TSV.gz", &f, &err), &err);
    CHECK_STR(f, "tsv");
    CHECK_OK(tl_data_format(NULL, "x.pq", &f, &err), &err);
    CHECK_STR(f, "parquet");
    CHECK_INT(tl_data_format("xml", NULL, &f, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"xml\"") != NULL);
    CHECK_INT(tl_data_format(NULL, "notes.txt", &f, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "notes.txt") != NULL);
    CHECK_INT(tl_data_format(NULL, NULL, &f, &err), TL_ERR_INVALID);
    CHECK_INT(tl_data_format(NULL, "x.parquet.gz", &f, NULL), TL_ERR_INVALID);
}

/* ---- reading ---- */

static void test_read_memory_infers_types(void)
{
    tl_data_read_options o = {.format = "csv"};
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_data_read_memory(CSV, strlen(CSV), "mem.csv", &o, &s, &err), &err);
    char text[4096];
    stream_text(&s, text, sizeof text);
    CHECK_STR(text, "id:l|name:u|temp:g\n1|pump|71.5\n2||~\n3|a,b|-4.0");

    static const char nd[] = "{\"a\":1,\"b\":true}\n\n{\"a\":null}\n";
    o.format = "json";
    CHECK_OK(tl_data_read_memory(nd, strlen(nd), "mem.ndjson", &o, &s, &err), &err);
    stream_text(&s, text, sizeof text);
    CHECK_STR(text, "a:l|b:b\n1|true\n~|~");
}

static void test_read_with_columns_and_batches(void)
{
    test_schema t;
    static const char *const names[] = {"temp", "id"}, *const formats[] = {"f", "i"};
    tl_data_read_options o = {
        .format = "csv", .columns = make_schema(&t, 2, names, formats), .batch_rows = 2};
    struct ArrowArrayStream s;
    tl_error err;
    static const char csv[] = "id,temp\n1,1.5\n2,\n3,3\n";
    CHECK_OK(tl_data_read_memory(csv, strlen(csv), "m.csv", &o, &s, &err), &err);
    struct ArrowSchema schema;
    CHECK_INT(s.get_schema(&s, &schema), 0);
    CHECK_INT(schema.n_children, 2);
    int64_t rows[3] = {0}, batches = 0;
    for (;;) {
        struct ArrowArray b;
        CHECK_INT(s.get_next(&s, &b), 0);
        if (b.release == NULL) break;
        if (batches < 3) rows[batches] = b.length;
        batches++;
        b.release(&b);
    }
    CHECK_INT(batches, 2);
    CHECK_INT(rows[0], 2);
    CHECK_INT(rows[1], 1);
    /* Parsed into the given types, whatever the text looks like. */
    for (int64_t i = 0; i < schema.n_children; i++)
        CHECK_STR(schema.children[i]->format,
                  strcmp(schema.children[i]->name, "id") == 0 ? "i" : "f");
    schema.release(&schema);
    s.release(&s);

    /* A header column the schema does not have is named. */
    static const char extra[] = "id,temp,site\n1,2,x\n";
    CHECK_INT(tl_data_read_memory(extra, strlen(extra), "m.csv", &o, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "site") != NULL);
    /* A value that does not fit its column's type is named with its line. */
    static const char bad[] = "id,temp\n1,2\nx,3\n";
    CHECK_INT(tl_data_read_memory(bad, strlen(bad), "m.csv", &o, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "m.csv") != NULL && strstr(err.message, "id") != NULL);
}

static int64_t progress_bytes;
static void on_progress(void *ctx, uint64_t bytes)
{
    (void)ctx;
    progress_bytes = (int64_t)bytes;
}

static void test_read_file(void)
{
    char *csv = tmp_path("r.csv");
    write_file(csv, CSV);
    tl_data_read_options o = {.progress = on_progress};
    struct ArrowArrayStream s;
    tl_error err;
    progress_bytes = 0;
    CHECK_OK(tl_data_read_file(csv, &o, &s, &err), &err); /* the format from the name */
    char text[4096];
    stream_text(&s, text, sizeof text);
    CHECK_STR(text, "id:l|name:u|temp:g\n1|pump|71.5\n2||~\n3|a,b|-4.0");
    CHECK_INT(progress_bytes, (int64_t)strlen(CSV));

    char *nd = tmp_path("r.data");
    write_file(nd, "{\"x\":\"a\"}\n{\"x\":\"b\"}\n");
    o = (tl_data_read_options){.format = "ndjson"};
    CHECK_OK(tl_data_read_file(nd, &o, &s, &err), &err); /* the format given */
    stream_text(&s, text, sizeof text);
    CHECK_STR(text, "x:u\na\nb");
    CHECK_INT(tl_data_read_file(nd, NULL, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "r.data") != NULL); /* no format, an unknown extension */
}

static void test_read_errors(void)
{
    struct ArrowArrayStream s = {0};
    tl_error err;
    tl_data_read_options o = {.format = "xml"};
    CHECK_INT(tl_data_read_memory("a\n1\n", 4, "m", &o, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "xml") != NULL);
    o = (tl_data_read_options){.format = "csv", .batch_rows = -1};
    CHECK_INT(tl_data_read_memory("a\n1\n", 4, "m", &o, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "batch_rows") != NULL);
    struct ArrowSchema flat = {.format = "l", .name = "a", .release = static_release};
    o = (tl_data_read_options){.format = "csv", .columns = &flat};
    CHECK_INT(tl_data_read_memory("a\n1\n", 4, "m", &o, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "struct") != NULL);
    o = (tl_data_read_options){.format = "parquet"};
    CHECK_INT(tl_data_read_memory("PAR1", 4, "m", &o, &s, &err), TL_ERR_INVALID);
    CHECK_INT(tl_data_read_memory("a\n1\n", 4, "m", NULL, &s, &err), TL_ERR_INVALID);
    CHECK_INT(tl_data_read_file(tmp_path("missing.csv"), NULL, &s, &err), TL_ERR_NOT_FOUND);
    CHECK(strstr(err.message, "missing.csv") != NULL);
    CHECK_INT(tl_data_read_file("-", NULL, &s, &err), TL_ERR_INVALID); /* stdin needs a format */
    CHECK_INT(tl_data_read_file(NULL, NULL, &s, &err), TL_ERR_INVALID);

    /* Malformed files, named. */
    static const char ragged[] = "a,b\n1,2\n3,4,5\n";
    o = (tl_data_read_options){.format = "csv"};
    CHECK_INT(tl_data_read_memory(ragged, strlen(ragged), "ragged.csv", &o, &s, &err),
              TL_ERR_INVALID);
    CHECK(strstr(err.message, "ragged.csv") != NULL);
    char *pq = tmp_path("fake.parquet");
    write_file(pq, "not parquet at all");
    CHECK_INT(tl_data_read_file(pq, NULL, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "fake.parquet") != NULL);
    char *gz = tmp_path("cut.csv.gz");
    write_file(gz, "\x1f\x8b\x08");
    CHECK_INT(tl_data_read_file(gz, NULL, &s, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "cut.csv.gz") != NULL);
}

/* ---- writing ---- */

static struct ArrowArrayStream csv_stream(void)
{
    tl_data_read_options o = {.format = "csv"};
    struct ArrowArrayStream s;
    tl_error err;
    CHECK_OK(tl_data_read_memory(CSV, strlen(CSV), "mem.csv", &o, &s, &err), &err);
    return s;
}

static void test_write_text_formats(void)
{
    tl_error err;
    struct ArrowArrayStream s = csv_stream();
    char *out = tmp_path("w.csv");
    CHECK_OK(copy_stream(&s, "csv", out, &err), &err);
    CHECK_STR(read_all(out), "id,name,temp\n1,pump,71.5\n2,,\n3,\"a,b\",-4.0\n");
    s = csv_stream();
    CHECK_OK(copy_stream(&s, "tsv", out, &err), &err);
    CHECK_STR(read_all(out), "id\tname\ttemp\n1\tpump\t71.5\n2\t\t\n3\ta,b\t-4.0\n");
    s = csv_stream();
    CHECK_OK(copy_stream(&s, "jsonl", out, &err), &err);
    CHECK_STR(read_all(out), "{\"id\":1,\"name\":\"pump\",\"temp\":71.5}\n"
                             "{\"id\":2,\"name\":\"\",\"temp\":null}\n"
                             "{\"id\":3,\"name\":\"a,b\",\"temp\":-4.0}\n");
}

/* Parquet written, then read back: the same rows and types. */
static void test_write_parquet_round_trip(void)
{
    tl_error err;
    struct ArrowArrayStream s = csv_stream();
    char *out = tmp_path("w.parquet");
    CHECK_OK(copy_stream(&s, "parquet", out, &err), &err);
    CHECK(strncmp(read_all(out), "PAR1", 4) == 0);
    CHECK_OK(tl_data_read_file(out, NULL, &s, &err), &err);
    char text[4096];
    stream_text(&s, text, sizeof text);
    CHECK_STR(text, "id:l|name:u|temp:g\n1|pump|71.5\n2||~\n3|a,b|-4.0");
}

/* No batch: a text file gets nothing, not even the header. */
static void test_write_no_batches(void)
{
    test_schema t;
    static const char *const names[] = {"a"}, *const formats[] = {"l"};
    struct ArrowSchema *schema = make_schema(&t, 1, names, formats);
    char *out = tmp_path("empty.csv");
    FILE *f = fopen(out, "wb");
    tl_data_writer *w;
    tl_error err;
    CHECK_OK(tl_data_writer_open(f, "csv", schema, &w, &err), &err);
    CHECK_OK(tl_data_writer_finish(w, &err), &err);
    fclose(f);
    CHECK_STR(read_all(out), "");
}

static void test_write_errors(void)
{
    tl_data_writer *w = (tl_data_writer *)1;
    tl_error err;
    test_schema t;
    static const char *const names[] = {"a"}, *const formats[] = {"l"};
    struct ArrowSchema *schema = make_schema(&t, 1, names, formats);
    FILE *f = fopen(tmp_path("bad.out"), "wb");
    CHECK_INT(tl_data_writer_open(f, "xml", schema, &w, &err), TL_ERR_INVALID);
    CHECK(w == NULL && strstr(err.message, "xml") != NULL);
    CHECK_INT(tl_data_writer_open(f, NULL, schema, &w, &err), TL_ERR_INVALID);
    CHECK_INT(tl_data_writer_open(NULL, "csv", schema, &w, &err), TL_ERR_INVALID);
    CHECK_INT(tl_data_writer_open(f, "csv", &t.cols[0], &w, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "struct") != NULL);
    /* A column Parquet cannot hold is named. */
    static const char *const iv_names[] = {"span"}, *const iv_formats[] = {"tiM"};
    CHECK_INT(tl_data_writer_open(f, "parquet", make_schema(&t, 1, iv_names, iv_formats), &w, &err),
              TL_ERR_INVALID);
    CHECK(strstr(err.message, "span") != NULL);

    /* A batch that does not fit the schema writes nothing; then only abort. */
    schema = make_schema(&t, 1, names, formats);
    CHECK_OK(tl_data_writer_open(f, "csv", schema, &w, &err), &err);
    struct ArrowArrayStream s = csv_stream();
    struct ArrowArray b;
    CHECK_INT(s.get_next(&s, &b), 0);
    CHECK_INT(tl_data_writer_write(w, &b, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "columns") != NULL);
    CHECK_INT(tl_data_writer_write(w, &b, &err), TL_ERR_INVALID);
    tl_data_writer_abort(w);
    tl_data_writer_abort(NULL);
    b.release(&b);
    s.release(&s);
    fclose(f);
    CHECK_STR(read_all(tmp_path("bad.out")), "");
}

static void test_batch_text_errors(void)
{
    struct ArrowArrayStream s = csv_stream();
    struct ArrowSchema schema;
    struct ArrowArray b;
    CHECK_INT(s.get_schema(&s, &schema), 0);
    CHECK_INT(s.get_next(&s, &b), 0);
    char **cells = (char **)1;
    tl_error err;
    CHECK_INT(tl_batch_text(schema.children[0], &b, &cells, &err), TL_ERR_INVALID);
    CHECK(cells == NULL);
    b.release(&b);
    CHECK_INT(tl_batch_text(&schema, &b, &cells, &err), TL_ERR_INVALID); /* released */
    schema.release(&schema);
    s.release(&s);
}

UNIT_TESTS(UNIT(test_format_names), UNIT(test_read_memory_infers_types),
           UNIT(test_read_with_columns_and_batches), UNIT(test_read_file), UNIT(test_read_errors),
           UNIT(test_write_text_formats), UNIT(test_write_parquet_round_trip),
           UNIT(test_write_no_batches), UNIT(test_write_errors), UNIT(test_batch_text_errors))
