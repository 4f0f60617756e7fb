/* Review findings on untrusted and foreign inputs: statistics of column
 * types the key comparison must not read as plain integers, and footers,
 * tails and listings cut or corrupted at every byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/parquet/parquet_subset.h"
#include "query/row_group_prune.h"
#include "table/table_internal.h"
#include "test_arrow_helpers.h"
#include "test_table_helpers.h"

static tl_table *make_table(tl_lake **lake, const char *key_format)
{
    return ttable_create(lake, "review-lake", "m.review", "k", key_format, false, NULL);
}

static void le64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* A footer as another writer (arrow-rs) makes it for a DECIMAL(10, 2) key
 * stored as INT64: the statistics are unscaled (1000..2000 is 10.00..20.00),
 * so a key of "12" (12.00, stored 1200) is inside, not below. A DATE key
 * stores days, a TIME key micros: neither compares with the key's text. */
static void test_key_statistics_of_scaled_integers_are_not_compared(void)
{
    tl_lake *lake = NULL;
    tl_table *t = make_table(&lake, "d:10,2");
    uint8_t min[8], max[8], tmin[8], tmax[8];
    le64(min, 1000);
    le64(max, 2000);
    le64(tmin, 0);
    le64(tmax, INT64_MAX / 2);
    tl_pq_schema_element schema[3] = {
        {.name = "schema", .num_children = 2},
        {.has_type = true,
         .type = TL_PQ_INT64,
         .name = "time",
         .logical = {.kind = TL_PQ_LT_TIMESTAMP, .unit = TL_PQ_MICROS, .utc = true}},
        {.has_type = true,
         .type = TL_PQ_INT64,
         .name = "k",
         .has_converted = true,
         .converted = TL_PQ_CT_DECIMAL,
         .scale = 2,
         .precision = 10,
         .logical = {.kind = TL_PQ_LT_DECIMAL, .scale = 2, .precision = 10}},
    };
    tl_pq_column_chunk cols[2] = {0};
    cols[0].has_meta = cols[1].has_meta = true;
    cols[0].meta.has_statistics = cols[1].meta.has_statistics = true;
    cols[0].meta.statistics = (tl_pq_statistics){.has_min_value = true,
                                                 .has_max_value = true,
                                                 .min_value = {tmin, 8},
                                                 .max_value = {tmax, 8}};
    cols[1].meta.statistics = (tl_pq_statistics){
        .has_min_value = true, .has_max_value = true, .min_value = {min, 8}, .max_value = {max, 8}};
    tl_pq_row_group rg = {.columns = cols, .n_columns = 2, .num_rows = 10};
    tl_pq_file_meta m = {.schema = schema, .n_schema = 3, .row_groups = &rg, .n_row_groups = 1};
    char *keys[] = {"12"};
    tl_scan_filter f = {.has_keys = true, .keys = keys, .n_keys = 1};
    CHECK(tl_row_group_needed(t, &m, 0, &f, 1));
    /* The same for a DATE (days) or TIME key in INT32/INT64. */
    schema[2] = (tl_pq_schema_element){.has_type = true,
                                       .type = TL_PQ_INT64,
                                       .name = "k",
                                       .logical = {.kind = TL_PQ_LT_TIME, .unit = TL_PQ_MICROS}};
    CHECK(tl_row_group_needed(t, &m, 0, &f, 1));
    /* A DECIMAL in a BYTE_ARRAY: big-endian bytes, not text ("12" sorts
     * after "\x03\xe8" and would be cut off). */
    uint8_t bmin[2] = {0x03, 0xe8}, bmax[2] = {0x07, 0xd0};
    cols[1].meta.statistics.min_value = (tl_pq_bytes){bmin, 2};
    cols[1].meta.statistics.max_value = (tl_pq_bytes){bmax, 2};
    schema[2] =
        (tl_pq_schema_element){.has_type = true,
                               .type = TL_PQ_BYTE_ARRAY,
                               .name = "k",
                               .logical = {.kind = TL_PQ_LT_DECIMAL, .scale = 2, .precision = 10}};
    CHECK(tl_row_group_needed(t, &m, 0, &f, 1));
    cols[1].meta.statistics.min_value = (tl_pq_bytes){min, 8};
    cols[1].meta.statistics.max_value = (tl_pq_bytes){max, 8};
    /* A plain signed integer key is still compared: 12 is below 1000..2000. */
    schema[2] = (tl_pq_schema_element){.has_type = true, .type = TL_PQ_INT64, .name = "k"};
    CHECK(!tl_row_group_needed(t, &m, 0, &f, 1));
    tl_table_close(t);
    tl_lake_close(lake);
}

/* The footer length from the last 8 bytes, checked against the file size at
 * every size around the limits: never a length that does not fit. */
static void test_footer_length_bounds(void)
{
    uint8_t tail[8] = {0, 0, 0, 0, 'P', 'A', 'R', '1'};
    uint64_t len;
    tl_error err;
    for (uint32_t flen = 0; flen < 40; flen++) {
        tail[0] = (uint8_t)flen;
        for (uint64_t size = 0; size < 60; size++) {
            tl_status st = tl_pq_footer_len(tail, size, &len, &err);
            CHECK_INT(st == TL_OK, size >= 12 && flen + 12 <= size);
            if (st == TL_OK) CHECK(len + 8 <= size);
        }
    }
    memset(tail, 0xff, 4);
    CHECK(tl_pq_footer_len(tail, UINT64_MAX, &len, &err) == TL_OK);
    CHECK(tl_pq_footer_len(tail, 0xffffffffu, &len, &err) != TL_OK);
    memcpy(tail + 4, "PARE", 4);
    CHECK(tl_pq_footer_len(tail, UINT64_MAX, &len, &err) != TL_OK);
}

static const uint8_t *bytes_any(void *ctx, uint64_t off, uint64_t len)
{
    static uint8_t file[256];
    (void)ctx;
    return off <= sizeof file && len <= sizeof file - off ? file + off : NULL;
}

/* A footer whose chunk starts at its dictionary page (inside the file) but
 * names a data page offset far past it: the rewritten offsets must not
 * overflow (UBSan), the chunk is refused. */
static void test_subset_of_a_chunk_with_wild_offsets(void)
{
    tl_pq_schema_element schema[2] = {
        {.name = "schema", .num_children = 1},
        {.has_type = true, .type = TL_PQ_INT64, .name = "v"},
    };
    int64_t wild[] = {INT64_MAX, INT64_MAX - 3, -5, 1000};
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        tl_pq_column_chunk col = {.has_meta = true};
        col.meta.type = TL_PQ_INT64;
        col.meta.total_compressed_size = 40;
        col.meta.has_dictionary_page_offset = true;
        col.meta.dictionary_page_offset = 1;
        col.meta.data_page_offset = wild[i];
        tl_pq_row_group rg = {.columns = &col, .n_columns = 1, .num_rows = 1};
        tl_pq_file_meta m = {
            .version = 1, .schema = schema, .n_schema = 2, .row_groups = &rg, .n_row_groups = 1};
        bool keep = true;
        tl_buf out = {0};
        tl_error err;
        CHECK_INT(tl_pq_subset_write(&m, &keep, NULL, bytes_any, NULL, &out, &err), TL_ERR_STORAGE);
        tl_buf_free(&out);
    }
    /* A dictionary offset past the data pages is no chunk start: it must not
     * overflow when moved either. */
    tl_pq_column_chunk col = {.has_meta = true};
    col.meta.type = TL_PQ_INT64;
    col.meta.total_compressed_size = 40;
    col.meta.data_page_offset = 1;
    col.meta.has_dictionary_page_offset = true;
    col.meta.dictionary_page_offset = INT64_MAX;
    tl_pq_row_group rg = {.columns = &col, .n_columns = 1, .num_rows = 1};
    tl_pq_file_meta m = {
        .version = 1, .schema = schema, .n_schema = 2, .row_groups = &rg, .n_row_groups = 1};
    bool keep = true;
    tl_buf out = {0};
    tl_error err;
    CHECK_INT(tl_pq_subset_write(&m, &keep, NULL, bytes_any, NULL, &out, &err), TL_ERR_STORAGE);
    tl_buf_free(&out);
}

UNIT_TESTS(UNIT(test_subset_of_a_chunk_with_wild_offsets),
           UNIT(test_key_statistics_of_scaled_integers_are_not_compared),
           UNIT(test_footer_length_bounds))
