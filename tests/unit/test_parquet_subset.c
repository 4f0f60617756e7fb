/* The Parquet subset writer: files with some row groups and some columns of
 * a multi-row-group, multi-page file (with dictionaries and a page index)
 * read back by the Parquet reader with exactly the values of the original's
 * kept rows and columns; chunk ranges, footer lengths, and refusals. */
#include <stdio.h>
#include <stdlib.h>

#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_subset.h"
#include "formats/parquet/parquet_writer.h"
#include "test_arrow_helpers.h"

enum { ROWS = 1000, GROUP = 100 };

static int64_t t_of(int64_t i)
{
    return 1767225600000000 + i * 1000;
}

/* time (us, UTC), host (string, dictionary), v (double, every 5th null). */
static void write_file(tl_buf *out)
{
    tl_error err;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 3, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "tsu:UTC", "time", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "host", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[2], "g", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
    int64_t *t = malloc(ROWS * sizeof *t);
    double *v = malloc(ROWS * sizeof *v);
    char *nulls = calloc(ROWS + 1, 1), (*names)[8] = malloc(ROWS * sizeof *names);
    const char **hosts = malloc(ROWS * sizeof *hosts);
    for (int64_t i = 0; i < ROWS; i++) {
        t[i] = t_of(i);
        v[i] = (double)i * 0.5;
        nulls[i] = i % 5 == 0 ? 'x' : '.';
        snprintf(names[i], sizeof names[i], "h%d", (int)(i % 7));
        hosts[i] = names[i];
    }
    tcol c0, c1, c2;
    tcol_ints(&c0, "tsu:UTC", t, NULL, ROWS);
    tcol_strs(&c1, "u", hosts, ROWS);
    tcol_doubles(&c2, "g", v, nulls, ROWS);
    CHECK_OK(tl_array_init(&batch, 1, 3, &err), &err);
    batch.length = ROWS;
    tl_array_move(&c0.array, batch.children[0]);
    tl_array_move(&c1.array, batch.children[1]);
    tl_array_move(&c2.array, batch.children[2]);
    tcol_free(&c0);
    tcol_free(&c1);
    tcol_free(&c2);
    int32_t ids[] = {1, 2, 3};
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD,
                                  .page_rows = 30,
                                  .row_group_rows = GROUP,
                                  .field_ids = ids,
                                  .write_page_index = true,
                                  .threads = 1};
    tl_parquet_writer *w = NULL;
    CHECK_OK(tl_parquet_writer_open(&schema, &o, &w, &err), &err);
    CHECK_OK(tl_parquet_writer_write(w, &batch, &err), &err);
    CHECK_OK(tl_parquet_writer_finish(w, out, NULL, &err), &err);
    tl_parquet_writer_free(w);
    tl_array_release(&batch);
    tl_schema_release(&schema);
    free(t);
    free(v);
    free(nulls);
    free(names);
    free(hosts);
}

typedef struct source {
    const tl_buf *file;
    int calls;
} source;

static const uint8_t *bytes_of(void *ctx, uint64_t off, uint64_t len)
{
    source *s = ctx;
    s->calls++;
    return off + len <= s->file->len ? s->file->data + off : NULL;
}

/* Reads the subset back and checks every kept value against the original rows. */
static void check_subset(const tl_buf *sub, const bool *keep_rg, const bool *keep_col)
{
    tl_error err;
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, sub->data, sub->len);
    tl_parquet_reader *r = NULL;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    if (r == NULL) return;
    int kept_cols[3], nc = 0;
    for (int c = 0; c < 3; c++)
        if (keep_col == NULL || keep_col[c]) kept_cols[nc++] = c;
    CHECK_INT(tl_parquet_reader_num_columns(r), nc);
    int g2 = 0;
    int64_t rows = 0;
    for (int g = 0; g < ROWS / GROUP; g++) {
        if (!keep_rg[g]) continue;
        struct ArrowArray a;
        CHECK_OK(tl_parquet_reader_read_row_group(r, g2++, NULL, 0, &a, &err), &err);
        CHECK_INT(a.length, GROUP);
        for (int k = 0; k < nc; k++) {
            int c = kept_cols[k];
            const char *fmt = c == 0 ? "tsu:UTC" : c == 1 ? "u" : "g";
            tl_array_view v = tview(fmt, a.children[k]);
            for (int64_t j = 0; j < GROUP; j++) {
                int64_t i = g * GROUP + j;
                char buf[16], want[16];
                if (c == 0) CHECK_INT(tv_int(&v, j), t_of(i));
                if (c == 1) {
                    snprintf(want, sizeof want, "h%d", (int)(i % 7));
                    CHECK_STR(tv_str(&v, j, buf, sizeof buf), want);
                }
                if (c == 2 && i % 5 == 0) CHECK(tl_view_is_null(&v, j));
                if (c == 2 && i % 5 != 0) CHECK(tv_double(&v, j) == (double)i * 0.5);
            }
            tl_array_view_free(&v);
        }
        tl_array_release(&a);
        rows += GROUP;
    }
    CHECK_INT(tl_parquet_reader_num_row_groups(r), g2);
    CHECK_INT(tl_parquet_reader_num_rows(r), rows);
    tl_parquet_reader_free(r);
}

static void subset_case(const bool *keep_rg, const bool *keep_col)
{
    tl_error err;
    tl_buf file = {0}, sub = {0};
    write_file(&file);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r = NULL;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    CHECK_INT(m->n_row_groups, ROWS / GROUP);
    CHECK(tl_pq_subset_columns_ok(m));
    source s = {&file, 0};
    CHECK_OK(tl_pq_subset_write(m, keep_rg, keep_col, bytes_of, &s, &sub, &err), &err);
    check_subset(&sub, keep_rg, keep_col);
    if (keep_col) CHECK(sub.len < file.len);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    tl_buf_free(&sub);
}

static void test_some_groups_some_columns(void)
{
    bool rg[10] = {0, 1, 0, 0, 1, 0, 0, 0, 0, 1}, col[3] = {true, false, true};
    subset_case(rg, col);
    bool col2[3] = {false, true, false};
    subset_case(rg, col2);
}

static void test_all_groups_and_none(void)
{
    bool all[10], none[10] = {0};
    for (int i = 0; i < 10; i++) all[i] = true;
    subset_case(all, NULL);
    bool col[3] = {false, false, true};
    subset_case(all, col);
    subset_case(none, NULL);
}

static void test_chunk_ranges_and_footer(void)
{
    tl_error err;
    tl_buf file = {0};
    write_file(&file);
    uint64_t flen = 0;
    CHECK_OK(tl_pq_footer_len(file.data + file.len - 8, file.len, &flen, &err), &err);
    CHECK(flen > 0 && flen < file.len);
    CHECK_INT(tl_pq_footer_len(file.data + file.len - 8, flen, &flen, &err), TL_ERR_STORAGE);
    uint8_t bad[8] = {1, 0, 0, 0, 'P', 'A', 'R', '2'};
    CHECK_INT(tl_pq_footer_len(bad, 100, &flen, &err), TL_ERR_STORAGE);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r = NULL;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    /* The chunks tile the data region: each starts where the previous ended. */
    uint64_t at = 4;
    for (size_t g = 0; g < m->n_row_groups; g++)
        for (size_t c = 0; c < m->row_groups[g].n_columns; c++) {
            uint64_t off, len;
            tl_pq_chunk_range(&m->row_groups[g].columns[c], &off, &len);
            CHECK_INT(off, at);
            at = off + len;
        }
    /* A missing range and an empty column choice are errors, not files. */
    bool rg[10] = {1}, nocol[3] = {0};
    tl_buf out = {0};
    CHECK_INT(tl_pq_subset_write(m, rg, nocol, bytes_of, &(source){&file, 0}, &out, &err),
              TL_ERR_INVALID);
    tl_buf empty = {0};
    out.len = 0;
    CHECK_INT(tl_pq_subset_write(m, rg, NULL, bytes_of, &(source){&empty, 0}, &out, &err),
              TL_ERR_STORAGE);
    tl_buf_free(&out);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
}

UNIT_TESTS(UNIT(test_some_groups_some_columns), UNIT(test_all_groups_and_none),
           UNIT(test_chunk_ranges_and_footer))
