/* The reader against golden files written by pyarrow and DuckDB
 * (tests/data/parquet/make_golden.py): dictionary pages, data page v2,
 * DELTA_BINARY_PACKED / DELTA_BYTE_ARRAY / BYTE_STREAM_SPLIT, INT96, legacy
 * PLAIN_DICTIONARY, snappy / gzip / zstd, several row groups. */
#include <stdio.h>
#include <stdlib.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_reader.h"
#include "unit.h"

static int find_column(const struct ArrowSchema *s, const char *name)
{
    for (int64_t i = 0; i < s->n_children; i++)
        if (strcmp(s->children[i]->name, name) == 0) return (int)i;
    return -1;
}

static bool valid(const struct ArrowArray *a, int64_t i)
{
    return a->null_count == 0 || a->buffers[0] == NULL || tl_bit_get(a->buffers[0], a->offset + i);
}

static void check_row(const struct ArrowArray *b, const int *col, int64_t r, int64_t i, bool ns)
{
    const struct ArrowArray *id = b->children[col[0]], *key = b->children[col[1]];
    const struct ArrowArray *val = b->children[col[2]], *ts = b->children[col[3]];
    const struct ArrowArray *small = b->children[col[4]];
    CHECK(valid(id, r) == (i % 7 != 3));
    if (valid(id, r)) CHECK_INT(((const int64_t *)id->buffers[1])[r], i * 3 - 100);
    CHECK(valid(key, r) == (i % 5 != 4));
    if (valid(key, r)) {
        char want[16] = "";
        if (i % 11) snprintf(want, sizeof want, "k%d", (int)(i % 10));
        const int32_t *off = key->buffers[1];
        int32_t len = off[r + 1] - off[r];
        CHECK(len == (int32_t)strlen(want) &&
              memcmp((const char *)key->buffers[2] + off[r], want, (size_t)len) == 0);
    }
    CHECK(((const double *)val->buffers[1])[r] == (double)i / 4);
    int64_t want_ts = 1700000000000000 + i * 1000000;
    CHECK_INT(((const int64_t *)ts->buffers[1])[r], ns ? want_ts * 1000 : want_ts);
    CHECK_INT(((const int32_t *)small->buffers[1])[r], (i * 7919) % 100000 - 50000);
}

static void check_file(const char *name, const char *ts_format, int row_groups)
{
    tl_buf file = {0};
    if (unit_read_data("parquet", name, &file) != 0) {
        unit_fail(__FILE__, __LINE__, "cannot read %s", name);
        return;
    }
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    if (r == NULL) {
        tl_buf_free(&file);
        return;
    }
    CHECK_INT(tl_parquet_reader_num_rows(r), 300);
    CHECK_INT(tl_parquet_reader_num_row_groups(r), row_groups);
    struct ArrowSchema s;
    CHECK_OK(tl_parquet_reader_schema(r, &s, &err), &err);
    const char *names[] = {"id", "key", "val", "ts", "small"};
    const char *formats[] = {"l", "u", "g", ts_format, "i"};
    int col[5];
    for (int k = 0; k < 5; k++) {
        col[k] = find_column(&s, names[k]);
        CHECK(col[k] >= 0);
        if (col[k] < 0) goto done;
        CHECK_STR(s.children[col[k]]->format, formats[k]);
    }
    int64_t row = 0;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        struct ArrowArray b;
        CHECK_OK(tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err), &err);
        if (b.release == NULL) break;
        for (int64_t i = 0; i < b.length; i++) check_row(&b, col, i, row + i, ts_format[2] == 'n');
        row += b.length;
        b.release(&b);
        /* Statistics of the id column: min/max as the file states them. */
        tl_parquet_column_stats cs;
        CHECK_OK(tl_parquet_reader_column_stats(r, g, col[0], &cs, &err), &err);
        CHECK(cs.value_count > 0 && cs.null_count > 0 && cs.has_min_max && cs.min_len == 8);
        tl_parquet_column_stats_clear(&cs);
    }
    CHECK_INT(row, 300);
    /* A subset of columns, in the order asked for. */
    int pick[2] = {col[4], col[1]};
    struct ArrowArray b;
    CHECK_OK(tl_parquet_reader_read_row_group(r, 0, pick, 2, &b, &err), &err);
    if (b.release) {
        CHECK_INT(b.n_children, 2);
        CHECK_INT(((const int32_t *)b.children[0]->buffers[1])[1], 7919 - 50000);
        b.release(&b);
    }
done:
    s.release(&s);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
}

static void test_pyarrow_v1_dictionary_snappy(void)
{
    check_file("pyarrow_v1_dict_snappy.parquet", "tsu:UTC", 3);
}

static void test_pyarrow_v2_delta_zstd(void)
{
    check_file("pyarrow_v2_delta_zstd.parquet", "tsu:UTC", 1);
}

static void test_pyarrow_int96_gzip(void)
{
    check_file("pyarrow_int96_gzip.parquet", "tsn:", 1);
}

static void test_pyarrow_legacy_plain_dictionary(void)
{
    check_file("pyarrow_v1_legacy.parquet", "tsu:UTC", 1);
}

static void test_duckdb_v2(void)
{
    check_file("duckdb_v2.parquet", "tsu:UTC", 1);
}

static void test_bad_requests(void)
{
    tl_buf file = {0};
    CHECK(unit_read_data("parquet", "duckdb_v2.parquet", &file) == 0);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    struct ArrowArray b;
    int bad = 9;
    CHECK_INT(tl_parquet_reader_read_row_group(r, 5, NULL, 0, &b, &err), TL_ERR_INVALID);
    CHECK_INT(tl_parquet_reader_read_row_group(r, 0, &bad, 1, &b, &err), TL_ERR_INVALID);
    tl_parquet_column_stats cs;
    CHECK_INT(tl_parquet_reader_column_stats(r, 0, 99, &cs, &err), TL_ERR_INVALID);
    tl_parquet_reader_free(r);
    /* Not Parquet at all. */
    tl_parquet_source_from_memory(&src, (const uint8_t *)"PAR1 hello world PAR0", 21);
    CHECK_INT(tl_parquet_reader_open(&src, &r, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "PAR1") != NULL);
    tl_buf_free(&file);
}

UNIT_TESTS(UNIT(test_pyarrow_v1_dictionary_snappy), UNIT(test_pyarrow_v2_delta_zstd),
           UNIT(test_pyarrow_int96_gzip), UNIT(test_pyarrow_legacy_plain_dictionary),
           UNIT(test_duckdb_v2), UNIT(test_bad_requests))
