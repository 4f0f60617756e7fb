/* Nested columns through our Parquet writer and reader: a list<int64> with
 * null and empty lists and null elements, and a struct of a list and an
 * int64 with null structs, over several pages and row groups, read back row
 * for row with every field id. */
#include "arrow/nested.h"
#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "test_arrow_helpers.h"
#include "test_parquet_helpers.h"
#include "unit.h"

#define ROWS 23

static void field(struct ArrowSchema *s, const char *format, const char *name, int64_t n_children,
                  int id)
{
    tl_error err;
    CHECK_OK(tl_schema_init(s, format, name, ARROW_FLAG_NULLABLE, n_children, &err), &err);
    char text[16];
    snprintf(text, sizeof text, "%d", id);
    const char *pairs[] = {"PARQUET:field_id", text, NULL};
    char *md = tl_metadata_encode(pairs);
    CHECK_OK(tl_schema_set_metadata(s, md, &err), &err);
    free(md);
}

/* Row i: l = null every 5th, [] every 5th + 1, else [i, null?, i + 2, ...]. */
static void make_list(tlist *l, int64_t n)
{
    int32_t offs[ROWS + 1] = {0};
    int64_t values[4 * ROWS];
    char nulls[ROWS + 1] = {0}, value_nulls[4 * ROWS + 1] = {0};
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        nulls[i] = i % 5 == 0 ? 'x' : '.';
        int64_t len = i % 5 <= 1 ? 0 : i % 4 + 1;
        for (int64_t j = 0; j < len; j++, k++) {
            values[k] = i + j;
            value_nulls[k] = j == 1 ? 'x' : '.';
        }
        offs[i + 1] = (int32_t)k;
    }
    tlist_make(l, "+l", "l", offs, nulls, n, values, value_nulls, k);
}

static void build(struct ArrowSchema *s, struct ArrowArray *a)
{
    tl_error err;
    field(s, "+s", "", 2, 0);
    tlist l, inner;
    make_list(&l, ROWS);
    make_list(&inner, ROWS);
    field(s->children[0], "+l", "l", 1, 1);
    field(s->children[0]->children[0], "l", "element", 0, 3);
    field(s->children[1], "+s", "s", 2, 2);
    field(s->children[1]->children[0], "+l", "t", 1, 4);
    field(s->children[1]->children[0]->children[0], "l", "element", 0, 6);
    field(s->children[1]->children[1], "l", "b", 0, 5);
    CHECK_OK(tl_array_init(a, 1, 2, &err), &err);
    a->length = ROWS;
    tl_array_move(&l.array, a->children[0]);
    struct ArrowArray *st = a->children[1];
    CHECK_OK(tl_array_init(st, 1, 2, &err), &err);
    st->length = ROWS;
    uint8_t *bits = tl_array_alloc_buffer(st, 0, 4);
    for (int64_t i = 0; i < ROWS; i++) {
        if (i % 3 == 2)
            st->null_count++;
        else
            tl_bit_set(bits, i);
    }
    tl_array_move(&inner.array, st->children[0]);
    int64_t b[ROWS];
    for (int64_t i = 0; i < ROWS; i++) b[i] = 100 + i;
    tcol bc;
    tcol_ints(&bc, "l", b, "..x....x....x....x....x", ROWS);
    tl_array_move(&bc.array, st->children[1]);
    tcol_free(&bc);
    tlist_free(&l);
    tlist_free(&inner);
}

static bool valid(const struct ArrowArray *a, int64_t i)
{
    return a->null_count == 0 || a->buffers[0] == NULL || tl_bit_get(a->buffers[0], a->offset + i);
}

/* Whether row i of a and row j of b (of the same field) hold the same value. */
static bool same(const struct ArrowSchema *f, const struct ArrowArray *a, int64_t i,
                 const struct ArrowArray *b, int64_t j)
{
    if (valid(a, i) != valid(b, j)) return false;
    if (!valid(a, i)) return true;
    const char *fmt = f->format;
    if (strcmp(fmt, "+s") == 0) {
        for (int64_t c = 0; c < f->n_children; c++)
            if (!same(f->children[c], a->children[c], a->offset + i, b->children[c], b->offset + j))
                return false;
        return true;
    }
    if (strcmp(fmt, "+l") == 0) {
        const int32_t *oa = (const int32_t *)a->buffers[1] + a->offset,
                      *ob = (const int32_t *)b->buffers[1] + b->offset;
        if (oa[i + 1] - oa[i] != ob[j + 1] - ob[j]) return false;
        for (int32_t k = 0; k < oa[i + 1] - oa[i]; k++)
            if (!same(f->children[0], a->children[0], oa[i] + k, b->children[0], ob[j] + k))
                return false;
        return true;
    }
    return ((const int64_t *)a->buffers[1])[a->offset + i] ==
           ((const int64_t *)b->buffers[1])[b->offset + j];
}

static int field_id(const struct ArrowSchema *f)
{
    int32_t len = 0;
    const char *v = tl_metadata_find(f->metadata, "PARQUET:field_id", &len);
    char text[16] = "-1";
    if (v && len > 0 && len < 16) memcpy(text, v, (size_t)len), text[len] = 0;
    return atoi(text);
}

static void test_nested_columns_round_trip(void)
{
    struct ArrowSchema s = {0};
    struct ArrowArray a = {0};
    build(&s, &a);
    tl_error err;
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD,
                                  .page_rows = 4,
                                  .row_group_rows = 10,
                                  .field_ids = (const int32_t[]){1, 2},
                                  .threads = 1};
    tl_buf file = {0};
    tparquet_write_memory(&s, &a, &o, &file);

    tl_parquet_source src;
    tl_parquet_reader *r = tparquet_open_memory(&src, &file);
    CHECK_INT(tl_parquet_reader_num_row_groups(r), 3);
    CHECK_INT(tl_parquet_reader_leaf(r, 0), -1);
    struct ArrowSchema rs;
    CHECK_OK(tl_parquet_reader_schema(r, &rs, &err), &err);
    CHECK_STR(rs.children[1]->format, "+s");
    CHECK_STR(rs.children[1]->children[0]->format, "+l");
    CHECK_INT(field_id(rs.children[0]), 1);
    CHECK_INT(field_id(rs.children[0]->children[0]), 3);
    CHECK_INT(field_id(rs.children[1]->children[0]->children[0]), 6);
    CHECK_INT(field_id(rs.children[1]->children[1]), 5);
    int64_t row = 0;
    for (int g = 0; g < 3; g++) {
        struct ArrowArray b;
        CHECK_OK(tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err), &err);
        for (int64_t i = 0; i < b.length; i++, row++)
            for (int c = 0; c < 2; c++)
                if (!same(s.children[c], a.children[c], row, b.children[c], i))
                    unit_fail(__FILE__, __LINE__, "row %lld column %d differs", (long long)row, c);
        tl_array_release(&b);
    }
    CHECK_INT(row, ROWS);
    /* Row ranges are for flat columns; a nested one is read by row group. */
    tl_pq_row_range range = {0, 1};
    struct ArrowArray part;
    int64_t bytes = 0;
    CHECK(tl_parquet_reader_read_rows(r, 0, 0, &range, 1, &part, &bytes, &err) == TL_ERR_INVALID);
    tl_schema_release(&rs);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    tl_array_release(&a);
    tl_schema_release(&s);
}

static void test_hostile_levels_are_refused(void)
{
    struct ArrowSchema s = {0};
    struct ArrowArray a = {0};
    build(&s, &a);
    tl_error err;
    tl_parquet_write_options o = {.codec = TL_PARQUET_UNCOMPRESSED, .threads = 1};
    tl_buf file = {0};
    tparquet_write_memory(&s, &a, &o, &file);
    /* Flip bytes of the data pages one at a time: every read fails cleanly
     * or returns rows, never reads out of bounds (ASan watches). */
    for (size_t at = 4; at < file.len / 2; at += 7) {
        uint8_t keep = file.data[at];
        file.data[at] ^= 0x5a;
        tl_parquet_source src;
        tl_parquet_source_from_memory(&src, file.data, file.len);
        tl_parquet_reader *r;
        if (tl_parquet_reader_open(&src, &r, &err) == TL_OK) {
            struct ArrowArray b;
            if (tl_parquet_reader_read_row_group(r, 0, NULL, 0, &b, &err) == TL_OK)
                tl_array_release(&b);
            tl_parquet_reader_free(r);
        }
        file.data[at] = keep;
    }
    tl_buf_free(&file);
    tl_array_release(&a);
    tl_schema_release(&s);
}

UNIT_TESTS(UNIT(test_nested_columns_round_trip), UNIT(test_hostile_levels_are_refused))
