/* Reading chosen rows of a column chunk through its page index
 * (tl_parquet_reader_read_rows) against decoding the whole chunk, on files
 * our writer makes (pages aligned on row boundaries across columns) and on
 * files pyarrow makes (tests/data/parquet/make_pages.py: pages cut by size,
 * nulls, dictionary and plain pages, data page v1 and v2); and page
 * selection (tl_page_select) against the rows a filter really wants. */
#include <stdio.h>
#include <stdlib.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "query/page_select.h"
#include "query/row_refine.h"
#include "table/table_internal.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"

static bool same_value(const tl_array_view *a, int64_t i, const tl_array_view *b, int64_t j)
{
    bool na = tl_view_is_null(a, i), nb = tl_view_is_null(b, j);
    if (na || nb) return na == nb;
    if (a->type.id == TL_ATYPE_BOOL)
        return tl_bit_get(a->values, a->offset + i) == tl_bit_get(b->values, b->offset + j);
    if (tl_atype_is_varbinary(a->type.id)) {
        int64_t la, lb;
        const uint8_t *x = tl_view_bytes(a, i, &la), *y = tl_view_bytes(b, j, &lb);
        return la == lb && (la == 0 || memcmp(x, y, (size_t)la) == 0);
    }
    size_t w = (size_t)tl_arrow_type_bit_width(&a->type) / 8;
    return memcmp((const uint8_t *)a->values + (size_t)(a->offset + i) * w,
                  (const uint8_t *)b->values + (size_t)(b->offset + j) * w, w) == 0;
}

/* The number of nulls of v whose fixed-width value slot is not zeroed: the
 * reader allocates decoded values unzeroed and writes a null's slot itself. */
static int64_t dirty_null_slots(const tl_array_view *v, int64_t length)
{
    if (v->type.id == TL_ATYPE_BOOL || tl_atype_is_varbinary(v->type.id) || v->values == NULL)
        return 0;
    size_t w = (size_t)tl_arrow_type_bit_width(&v->type) / 8;
    int64_t dirty = 0;
    for (int64_t i = 0; i < length; i++) {
        const uint8_t *x = (const uint8_t *)v->values + (size_t)(v->offset + i) * w;
        for (size_t b = 0; tl_view_is_null(v, i) && b < w; b++)
            if (x[b] != 0) {
                dirty++;
                break;
            }
    }
    return dirty;
}

/* Reads the ranges of one column and compares them with the whole chunk;
 * returns the bytes read. */
static int64_t check_ranges(tl_parquet_reader *r, const struct ArrowSchema *schema, int rg, int col,
                            const tl_pq_row_range *ranges, size_t n)
{
    tl_error err;
    struct ArrowArray whole = {0}, part = {0};
    int64_t bytes = 0;
    CHECK_OK(tl_parquet_reader_read_row_group(r, rg, &col, 1, &whole, &err), &err);
    CHECK_OK(tl_parquet_reader_read_rows(r, rg, col, ranges, n, &part, &bytes, &err), &err);
    if (whole.release == NULL || part.release == NULL) {
        tl_array_release(&whole);
        tl_array_release(&part);
        return 0;
    }
    tl_array_view a, b;
    CHECK_OK(tl_array_view_init(&a, schema->children[col], whole.children[0], &err), &err);
    CHECK_OK(tl_array_view_init(&b, schema->children[col], &part, &err), &err);
    int64_t at = 0, bad = 0;
    for (size_t k = 0; k < n; k++)
        for (int64_t i = ranges[k].start; i < ranges[k].end; i++)
            bad += !same_value(&a, i, &b, at++);
    CHECK_INT(part.length, at);
    CHECK_INT(bad, 0);
    int64_t nulls = 0;
    for (int64_t i = 0; i < part.length; i++) nulls += tl_view_is_null(&b, i);
    CHECK_INT(part.null_count, nulls);
    CHECK_INT(dirty_null_slots(&a, a.length), 0);
    CHECK_INT(dirty_null_slots(&b, b.length), 0);
    tl_array_view_free(&a);
    tl_array_view_free(&b);
    tl_array_release(&whole);
    tl_array_release(&part);
    return bytes;
}

/* Random sorted disjoint ranges inside [0, rows). */
static size_t random_ranges(uint64_t *seed, int64_t rows, tl_pq_row_range *out, size_t max)
{
    size_t n = 0;
    int64_t at = (int64_t)(trand(seed) % (uint64_t)rows);
    while (n < max && at < rows) {
        int64_t len = 1 + (int64_t)(trand(seed) % 40);
        if (at + len > rows) len = rows - at;
        out[n++] = (tl_pq_row_range){at, at + len};
        at += len + 1 + (int64_t)(trand(seed) % 60);
    }
    return n;
}

/* A memory source that counts its reads. */
typedef struct counted {
    const uint8_t *data;
    int reads;
} counted;

static tl_status counted_read(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    (void)err;
    counted *c = ctx;
    c->reads++;
    if (len) memcpy(dst, c->data + offset, len);
    return TL_OK;
}

/* Reader `shared` (tl_parquet_reader_share of `base`) gives base's rows of
 * each column for random ranges, reading through its own source; it holds
 * base's page indexes when *borrowed (none read again), else loads its own. */
static void check_shared(tl_parquet_reader *base, tl_parquet_reader *shared, counted *src,
                         bool borrowed)
{
    tl_error err;
    CHECK_INT(tl_parquet_reader_num_rows(shared), tl_parquet_reader_num_rows(base));
    CHECK_INT(tl_parquet_reader_num_columns(shared), tl_parquet_reader_num_columns(base));
    uint64_t seed = 7;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(base); g++)
        for (int c = 0; c < tl_parquet_reader_num_columns(base); c++) {
            tl_pq_column_index ci;
            tl_pq_offset_index oi;
            int before = src->reads;
            CHECK_OK(tl_parquet_reader_page_index(shared, g, c, &ci, &oi, &err), &err);
            CHECK_INT(src->reads - before, borrowed ? 0 : 2);
            tl_pq_row_range ranges[16];
            size_t n = random_ranges(&seed, tl_parquet_reader_row_group_rows(base, g), ranges, 16);
            struct ArrowArray a = {0}, b = {0};
            int64_t ba = 0, bb = 0;
            CHECK_OK(tl_parquet_reader_read_rows(base, g, c, ranges, n, &a, &ba, &err), &err);
            before = src->reads;
            CHECK_OK(tl_parquet_reader_read_rows(shared, g, c, ranges, n, &b, &bb, &err), &err);
            CHECK(src->reads > before);
            CHECK_INT(bb, ba);
            CHECK_INT(b.length, a.length);
            CHECK_INT(b.null_count, a.null_count);
            tl_array_release(&a);
            tl_array_release(&b);
        }
}

static void check_file(const uint8_t *data, size_t len)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, data, len);
    tl_parquet_reader *r = NULL;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    if (r == NULL) return;
    struct ArrowSchema schema;
    CHECK_OK(tl_parquet_reader_schema(r, &schema, &err), &err);
    /* Readers sharing r's footer: one before r loaded any page index, one after. */
    counted early_src = {data, 0}, late_src = {data, 0};
    tl_parquet_source es = {&early_src, len, counted_read}, ls = {&late_src, len, counted_read};
    tl_parquet_reader *early = NULL, *late = NULL;
    CHECK_OK(tl_parquet_reader_share(r, &es, &early, &err), &err);
    CHECK_INT(early_src.reads, 0); /* the footer is not read again */
    uint64_t seed = 42;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        int64_t rows = tl_parquet_reader_row_group_rows(r, g);
        for (int c = 0; c < tl_parquet_reader_num_columns(r); c++) {
            tl_pq_row_range all = {0, rows}, first = {0, 1}, last = {rows - 1, rows};
            check_ranges(r, &schema, g, c, &all, 1);
            int64_t one = check_ranges(r, &schema, g, c, &first, 1);
            check_ranges(r, &schema, g, c, &last, 1);
            const tl_pq_column_chunk *cc = &tl_parquet_reader_meta(r)->row_groups[g].columns[c];
            tl_pq_column_index ci;
            tl_pq_offset_index oi;
            CHECK_OK(tl_parquet_reader_page_index(r, g, c, &ci, &oi, &err), &err);
            if (oi.n_pages > 1) CHECK(one < cc->meta.total_compressed_size); /* pages skipped */
            for (int k = 0; k < 20; k++) {
                tl_pq_row_range ranges[16];
                size_t n = random_ranges(&seed, rows, ranges, 16);
                check_ranges(r, &schema, g, c, ranges, n);
            }
        }
    }
    CHECK_OK(tl_parquet_reader_share(r, &ls, &late, &err), &err);
    if (early && late) {
        check_shared(r, early, &early_src, false);
        check_shared(r, late, &late_src, true);
    }
    tl_parquet_reader_free(early);
    tl_parquet_reader_free(late);
    /* Bad ranges are refused. */
    struct ArrowArray out;
    int64_t bytes = 0;
    tl_pq_row_range bad[2] = {{5, 10}, {8, 12}};
    CHECK(tl_parquet_reader_read_rows(r, 0, 0, bad, 2, &out, &bytes, &err) == TL_ERR_INVALID);
    tl_pq_row_range past = {0, tl_parquet_reader_row_group_rows(r, 0) + 1};
    CHECK(tl_parquet_reader_read_rows(r, 0, 0, &past, 1, &out, &bytes, &err) == TL_ERR_INVALID);
    tl_schema_release(&schema);
    tl_parquet_reader_free(r);
}

static void test_pyarrow_pages(void)
{
    const char *names[] = {"pyarrow_pages_v1.parquet", "pyarrow_pages_v2.parquet"};
    for (size_t i = 0; i < 2; i++) {
        tl_buf file = {0};
        CHECK(unit_read_data("parquet", names[i], &file) == 0);
        check_file(file.data, file.len);
        tl_buf_free(&file);
    }
}

enum { N = 1000 };

static void write_file(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                       const tl_parquet_write_options *o, tl_buf *file)
{
    tl_error err;
    tl_parquet_writer *w = NULL;
    CHECK_OK(tl_parquet_writer_open(schema, o, &w, &err), &err);
    if (w) CHECK_OK(tl_parquet_writer_write(w, batch, &err), &err);
    if (w) CHECK_OK(tl_parquet_writer_finish(w, file, NULL, &err), &err);
    tl_parquet_writer_free(w);
}

/* Bytes read for row `row` of column `col` in row group 0. */
static int64_t bytes_of_row(const uint8_t *data, size_t len, int col, int64_t row)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, data, len);
    tl_parquet_reader *r = NULL;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    struct ArrowArray out = {0};
    int64_t bytes = 0;
    tl_pq_row_range one = {row, row + 1};
    if (r) CHECK_OK(tl_parquet_reader_read_rows(r, 0, col, &one, 1, &out, &bytes, &err), &err);
    tl_array_release(&out);
    tl_parquet_reader_free(r);
    return bytes;
}

static void test_our_pages(void)
{
    tl_error err;
    struct ArrowSchema schema;
    struct ArrowArray batch;
    CHECK_OK(tl_schema_init(&schema, "+s", NULL, 0, 5, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[0], "l", "id", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[1], "u", "key", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[2], "g", "v", ARROW_FLAG_NULLABLE, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[3], "tsu:UTC", "ts", 0, 0, &err), &err);
    CHECK_OK(tl_schema_init(schema.children[4], "g", "w", ARROW_FLAG_NULLABLE, 0, &err), &err);
    static int64_t ids[N], times[N];
    static double vals[N], ws[N];
    static char idn[N], vn[N], names[N][16];
    static const char *keys[N];
    for (int i = 0; i < N; i++) {
        ids[i] = i * 11 - 300;
        idn[i] = i % 6 == 1 ? 'x' : 0; /* tcol's null mark */
        vals[i] = i * 0.5;
        vn[i] = i % 4 == 0 && i >= 100 ? 'x' : 0; /* the first pages without nulls */
        ws[i] = i * 0.25 - 7;
        times[i] = 1700000000000000 + (int64_t)i * 1000000;
        snprintf(names[i], sizeof names[i], "host_%03d", i / 37);
        keys[i] = names[i];
    }
    tcol c[5];
    tcol_ints(&c[0], "l", ids, idn, N);
    tcol_strs(&c[1], "u", keys, N);
    tcol_doubles(&c[2], "g", vals, vn, N);
    tcol_ints(&c[3], "tsu:UTC", times, NULL, N);
    tcol_doubles(&c[4], "g", ws, NULL, N); /* nullable, none null */
    CHECK_OK(tl_array_init(&batch, 1, 5, &err), &err);
    batch.length = N;
    for (int i = 0; i < 5; i++) {
        tl_array_move(&c[i].array, batch.children[i]);
        tcol_free(&c[i]);
    }
    /* Uncompressed PLAIN pages are read in place (rows of them, not pages):
     * required and optional columns, pages with and without nulls. */
    tl_parquet_codec codecs[] = {TL_PARQUET_ZSTD, TL_PARQUET_UNCOMPRESSED};
    for (int enc = 0; enc < 2; enc++)
        for (size_t k = 0; k < 2; k++) {
            tl_parquet_write_options o = {.codec = codecs[k],
                                          .page_rows = 7,
                                          .row_group_rows = 300,
                                          .write_page_index = true,
                                          .encodings = enc,
                                          .threads = 1};
            tl_buf file = {0};
            write_file(&schema, &batch, &o, &file);
            check_file(file.data, file.len);
            tl_buf_free(&file);
        }
    /* One row of a page of 200 (1,600 bytes of values): its header and that value. */
    tl_parquet_write_options o = {.codec = TL_PARQUET_UNCOMPRESSED,
                                  .page_rows = 200,
                                  .row_group_rows = 1000,
                                  .write_page_index = true,
                                  .encodings = TL_PARQUET_ENCODINGS_PLAIN,
                                  .threads = 1};
    tl_buf file = {0};
    write_file(&schema, &batch, &o, &file);
    check_file(file.data, file.len);
    CHECK(bytes_of_row(file.data, file.len, 3, 250) <= 256 + 8); /* required */
    CHECK(bytes_of_row(file.data, file.len, 4, 250) <= 256 + 8); /* optional, no null */
    CHECK(bytes_of_row(file.data, file.len, 2, 250) > 1000);     /* nulls: the page (150 values) */
    tl_buf_free(&file);
    tl_array_release(&batch);
    tl_schema_release(&schema);
}

/* ---- Page selection ---- */

static const int64_t T0 = 1767225600000000; /* 2026-01-01 */

static tl_table *make_table(tl_lake **lake, struct ArrowSchema *schema)
{
    return ttable_create(lake, "pages-lake", "m.cpu", "host", "u", false, schema);
}

/* Rows sorted by (host, time): host h<i / 25>, time T0 + (i % 25) s. */
static void write_sorted(const tl_table *t, const struct ArrowSchema *schema, tl_buf *out)
{
    tl_error err;
    static int64_t times[N];
    static char names[N][8];
    static const char *hosts[N];
    for (int i = 0; i < N; i++) {
        times[i] = T0 + (int64_t)(i % 25) * 1000000;
        snprintf(names[i], sizeof names[i], "h%02d", i / 25);
        hosts[i] = names[i];
    }
    struct ArrowArray batch;
    tbatch_time_key(&batch, times, hosts, N);
    const tl_ice_schema *s = tl_ice_metadata_current_schema(t->md);
    int32_t ids[2] = {s->fields[0].id, s->fields[1].id};
    tl_parquet_write_options o = {.codec = TL_PARQUET_UNCOMPRESSED,
                                  .page_rows = 10,
                                  .row_group_rows = 200,
                                  .field_ids = ids,
                                  .write_page_index = true,
                                  .threads = 1};
    tl_parquet_writer *w = NULL;
    CHECK_OK(tl_parquet_writer_open(schema, &o, &w, &err), &err);
    CHECK_OK(tl_parquet_writer_write(w, &batch, &err), &err);
    CHECK_OK(tl_parquet_writer_finish(w, out, NULL, &err), &err);
    tl_parquet_writer_free(w);
    tl_array_release(&batch);
}

/* The ranges of every row group, as "g:start-end ..." */
static bool refine; /* selected(): narrowed to rows too */

static void selected(const tl_table *t, tl_parquet_reader *r, const tl_scan_filter *f, size_t n,
                     char *out, size_t size, int64_t *rows)
{
    tl_error err;
    size_t at = 0;
    out[0] = '\0';
    *rows = 0;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        tl_row_ranges rr = {0};
        int64_t bytes = 0;
        bool read[2] = {false, false};
        CHECK_OK(tl_page_select(t, r, g, f, n, &rr, &err), &err);
        if (refine && rr.n > 0) { /* reads the time and key pages of the ranges */
            bool exact = true;    /* micros and strings, no null: exact for one filter */
            CHECK_OK(tl_row_refine(t, r, g, f, n, &rr, &bytes, read, &exact, &err), &err);
            CHECK(exact == (n == 1));
            CHECK(read[0] == (f->has_lo || f->has_hi || (n > 1 && (f[1].has_lo || f[1].has_hi))));
            CHECK(read[1] == (f->has_keys || (n > 1 && f[1].has_keys)));
            CHECK(bytes > 0);
        }
        for (size_t k = 0; k < rr.n; k++)
            at += (size_t)snprintf(out + at, size - at, "%s%d:%lld-%lld", at ? " " : "", g,
                                   (long long)rr.r[k].start, (long long)rr.r[k].end);
        *rows += tl_row_ranges_rows(&rr);
        tl_row_ranges_free(&rr);
    }
}

/* Every row the filter wants (host h<i / 25>, second i % 25) is selected. */
static void check_superset(const tl_table *t, tl_parquet_reader *r, const tl_scan_filter *f)
{
    tl_error err;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        tl_row_ranges rr = {0};
        CHECK_OK(tl_page_select(t, r, g, f, 1, &rr, &err), &err);
        for (int j = 0; j < 200; j++) {
            int64_t time = T0 + (int64_t)((g * 200 + j) % 25) * 1000000;
            if ((f->has_lo && time < f->lo) || (f->has_hi && time > f->hi)) continue;
            bool in = false;
            for (size_t k = 0; k < rr.n; k++) in |= rr.r[k].start <= j && j < rr.r[k].end;
            CHECK(in);
        }
        tl_row_ranges_free(&rr);
    }
}

static void test_page_select(void)
{
    tl_lake *lake = NULL;
    struct ArrowSchema schema;
    tl_table *t = make_table(&lake, &schema);
    tl_buf file = {0};
    write_sorted(t, &schema, &file);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r = NULL;
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    char got[512];
    int64_t rows;
    /* h03: rows 75..99 of row group 0, on pages 70-80 .. 90-100. */
    char *k3[] = {"h03"};
    tl_scan_filter key = {.has_keys = true, .keys = k3, .n_keys = 1};
    selected(t, r, &key, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:70-100");
    /* h07 and h08 (rows 175..224) span two row groups; "h99" matches nothing. */
    char *k78[] = {"h08", "h07", "h99"};
    tl_scan_filter keys = {.has_keys = true, .keys = k78, .n_keys = 3};
    selected(t, r, &keys, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:170-200 1:0-30");
    /* Time: seconds 22..24 of every host; pages whose time range misses them go. */
    tl_scan_filter late = {.has_lo = true, .lo = T0 + 22 * 1000000};
    selected(t, r, &late, 1, got, sizeof got, &rows);
    CHECK(rows < N);
    check_superset(t, r, &late);
    /* Key and time together: the intersection; two references: the union. */
    tl_scan_filter both = key;
    both.has_hi = true;
    both.hi = T0 + 4 * 1000000; /* h03 seconds 0..4: rows 75..79, page 70-80 */
    selected(t, r, &both, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:70-80");
    tl_scan_filter two[2] = {both, keys};
    selected(t, r, two, 2, got, sizeof got, &rows);
    CHECK_STR(got, "0:70-80 0:170-200 1:0-30");
    /* Narrowed to rows by the values themselves. */
    refine = true;
    selected(t, r, &key, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:75-100");
    selected(t, r, &keys, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:175-200 1:0-25");
    selected(t, r, &both, 1, got, sizeof got, &rows);
    CHECK_STR(got, "0:75-80");
    selected(t, r, two, 2, got, sizeof got, &rows);
    CHECK_STR(got, "0:75-80 0:175-200 1:0-25");
    selected(t, r, &late, 1, got, sizeof got, &rows);
    CHECK_INT(rows, N / 25 * 3); /* seconds 22, 23 and 24 of every host */
    refine = false;
    /* No restriction at all: everything. */
    tl_scan_filter none = {0};
    selected(t, r, &none, 1, got, sizeof got, &rows);
    CHECK_INT(rows, N);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    tl_schema_release(&schema);
    tl_table_close(t);
    tl_lake_close(lake);
}

UNIT_TESTS(UNIT(test_pyarrow_pages), UNIT(test_our_pages), UNIT(test_page_select))
