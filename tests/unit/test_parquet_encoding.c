/* Thrift compact protocol and Parquet encodings: known byte vectors from the
 * specifications, round trips, and hostile (truncated / corrupted) input. */
#include <stdlib.h>

#include "formats/parquet/parquet_encoding.h"
#include "formats/parquet/parquet_meta.h"
#include "formats/parquet/thrift_compact.h"
#include "unit.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;
static uint64_t rnd(void)
{
    return trand(&rng_state);
}

static int bytes_eq(const tl_buf *b, const uint8_t *want, size_t n)
{
    return b->len == n && memcmp(b->data, want, n) == 0;
}

/* ---- Thrift ---- */

static void test_thrift_known_bytes(void)
{
    tl_buf b = {0};
    tl_thrift_writer w;
    tl_thrift_writer_init(&w, &b);
    tl_thrift_struct_begin(&w);
    tl_thrift_field_i32(&w, 1, 1);     /* short form: delta 1, type i32 */
    tl_thrift_field_bool(&w, 2, true); /* the type nibble carries the value */
    tl_thrift_field_string(&w, 3, "ab");
    tl_thrift_field_i64(&w, 20, -1); /* delta 17: long form with a zigzag id */
    tl_thrift_field_list(&w, 21, TL_THRIFT_I32, 2);
    tl_thrift_elem_i32(&w, 150);
    tl_thrift_elem_i32(&w, -2);
    tl_thrift_struct_end(&w);
    tl_error err;
    CHECK_OK(tl_thrift_writer_finish(&w, &err), &err);
    const uint8_t want[] = {0x15, 0x02, 0x11, 0x18, 0x02, 'a',  'b',  0x06,
                            0x28, 0x01, 0x19, 0x25, 0xAC, 0x02, 0x03, 0x00};
    CHECK(bytes_eq(&b, want, sizeof want));

    tl_thrift_reader r;
    tl_thrift_reader_init(&r, b.data, b.len, &err);
    int16_t last = 0, id;
    uint8_t type;
    int32_t i32;
    int64_t i64;
    bool flag;
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(id == 1 && tl_thrift_read_i32(&r, type, &i32) == TL_OK && i32 == 1);
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(id == 2 && tl_thrift_read_bool(&r, type, &flag) == TL_OK && flag);
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(id == 3);
    CHECK_OK(tl_thrift_skip(&r, type), &err);
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(id == 20 && tl_thrift_read_i64(&r, type, &i64) == TL_OK && i64 == -1);
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    uint8_t et;
    size_t n;
    CHECK(id == 21 && tl_thrift_read_list(&r, type, &et, &n) == TL_OK && n == 2);
    CHECK(tl_thrift_read_i32(&r, et, &i32) == TL_OK && i32 == 150);
    CHECK(tl_thrift_read_i32(&r, et, &i32) == TL_OK && i32 == -2);
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(type == TL_THRIFT_STOP && r.p == r.end);
    /* A wrong wire type for a known field is an error, not a misread. */
    tl_thrift_reader_init(&r, want, sizeof want, &err);
    last = 0;
    CHECK_OK(tl_thrift_read_field(&r, &last, &type, &id), &err);
    CHECK(tl_thrift_read_i64(&r, type, &i64) == TL_ERR_INVALID);
    tl_buf_free(&b);
}

static void test_thrift_varints(void)
{
    uint8_t tmp[10];
    CHECK_INT(tl_thrift_put_uvarint(tmp, 0), 1);
    CHECK_INT(tl_thrift_put_uvarint(tmp, 300), 2);
    CHECK(tmp[0] == 0xAC && tmp[1] == 0x02);
    CHECK_INT(tl_thrift_put_uvarint(tmp, UINT64_MAX), 10);
    const uint8_t *p = tmp;
    uint64_t v;
    CHECK(tl_thrift_get_uvarint(&p, tmp + 10, &v) == 0 && v == UINT64_MAX);
    p = tmp;
    CHECK(tl_thrift_get_uvarint(&p, tmp + 9, &v) != 0); /* truncated */
    const uint8_t endless[11] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    p = endless;
    CHECK(tl_thrift_get_uvarint(&p, endless + 11, &v) != 0); /* over 64 bits */
    CHECK(tl_zigzag64(-1) == 1 && tl_zigzag64(1) == 2 && tl_zigzag64(INT64_MIN) == UINT64_MAX);
    CHECK(tl_unzigzag64(tl_zigzag64(INT64_MIN)) == INT64_MIN);
}

static void test_thrift_nesting_limit(void)
{
    /* 100 nested struct fields: the skipper must stop, not recurse without bound. */
    uint8_t deep[101];
    for (int i = 0; i < 100; i++) deep[i] = 0x1C; /* field 1, type struct */
    deep[100] = 0;
    tl_error err;
    tl_thrift_reader r;
    tl_thrift_reader_init(&r, deep, sizeof deep, &err);
    CHECK_INT(tl_thrift_skip(&r, TL_THRIFT_STRUCT), TL_ERR_INVALID);
    CHECK(strstr(err.message, "nested") != NULL);
    /* A list claiming more elements than bytes is refused before any allocation. */
    const uint8_t list[] = {0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F};
    tl_thrift_reader_init(&r, list, sizeof list, &err);
    uint8_t et;
    size_t n;
    CHECK_INT(tl_thrift_read_list(&r, TL_THRIFT_LIST, &et, &n), TL_ERR_INVALID);
}

static void sample_footer(tl_buf *out)
{
    tl_pq_schema_element schema[3] = {
        {.name = "schema", .num_children = 2},
        {.has_type = true,
         .type = TL_PQ_INT64,
         .has_repetition = true,
         .name = "ts",
         .has_field_id = true,
         .field_id = 7,
         .logical = {.kind = TL_PQ_LT_TIMESTAMP, .utc = true, .unit = TL_PQ_MICROS}},
        {.has_type = true,
         .type = TL_PQ_FIXED_LEN_BYTE_ARRAY,
         .type_length = 9,
         .has_repetition = true,
         .repetition = TL_PQ_OPTIONAL,
         .name = "d",
         .has_converted = true,
         .converted = TL_PQ_CT_DECIMAL,
         .scale = 2,
         .precision = 20,
         .logical = {.kind = TL_PQ_LT_DECIMAL, .scale = 2, .precision = 20}},
    };
    int32_t encodings[] = {0, 3, 8};
    const char *path[] = {"ts"};
    tl_pq_column_chunk cols[2] = {0};
    for (int i = 0; i < 2; i++) {
        cols[i].has_meta = true;
        cols[i].meta = (tl_pq_column_meta){.type = schema[i + 1].type,
                                           .encodings = encodings,
                                           .n_encodings = 3,
                                           .path = path,
                                           .n_path = 1,
                                           .codec = TL_PQ_CODEC_ZSTD,
                                           .num_values = 10,
                                           .total_uncompressed_size = 100,
                                           .total_compressed_size = 50,
                                           .data_page_offset = 4};
    }
    cols[1].meta.has_statistics = true;
    cols[1].meta.statistics = (tl_pq_statistics){.has_null_count = true,
                                                 .null_count = 3,
                                                 .has_min_value = true,
                                                 .has_max_value = true,
                                                 .min_value = {(const uint8_t *)"\x80", 1},
                                                 .max_value = {(const uint8_t *)"\x7f\x01", 2}};
    tl_pq_sorting_column sort = {.column_idx = 1, .nulls_first = true};
    tl_pq_row_group rg = {.columns = cols,
                          .n_columns = 2,
                          .num_rows = 10,
                          .sorting_columns = &sort,
                          .n_sorting_columns = 1,
                          .has_ordinal = true,
                          .ordinal = 0};
    tl_pq_key_value kv = {"k", "v"};
    tl_pq_file_meta m = {.version = 2,
                         .schema = schema,
                         .n_schema = 3,
                         .num_rows = 10,
                         .row_groups = &rg,
                         .n_row_groups = 1,
                         .key_value = &kv,
                         .n_key_value = 1,
                         .created_by = "test",
                         .n_column_orders = 2};
    tl_error err;
    CHECK_OK(tl_pq_write_file_meta(out, &m, &err), &err);
}

static void test_file_meta_round_trip(void)
{
    tl_buf b = {0};
    sample_footer(&b);
    tl_arena arena = {0};
    tl_pq_file_meta m;
    tl_error err;
    CHECK_OK(tl_pq_parse_file_meta(b.data, b.len, &arena, &m, &err), &err);
    CHECK_INT(m.n_schema, 3);
    CHECK_STR(m.schema[1].name, "ts");
    CHECK(m.schema[1].has_field_id && m.schema[1].field_id == 7);
    CHECK(m.schema[1].logical.kind == TL_PQ_LT_TIMESTAMP && m.schema[1].logical.utc &&
          m.schema[1].logical.unit == TL_PQ_MICROS);
    CHECK(m.schema[2].type_length == 9 && m.schema[2].logical.precision == 20);
    CHECK(m.schema[2].repetition == TL_PQ_OPTIONAL);
    CHECK_INT(m.n_row_groups, 1);
    const tl_pq_column_meta *cm = &m.row_groups[0].columns[1].meta;
    CHECK(cm->statistics.has_null_count && cm->statistics.null_count == 3);
    CHECK(cm->statistics.min_value.len == 1 && cm->statistics.min_value.data[0] == 0x80);
    CHECK(cm->n_encodings == 3 && cm->encodings[2] == 8);
    CHECK_STR(cm->path[0], "ts");
    CHECK(m.row_groups[0].n_sorting_columns == 1 && m.row_groups[0].sorting_columns[0].nulls_first);
    CHECK_STR(m.key_value[0].value, "v");
    CHECK_STR(m.created_by, "test");
    CHECK_INT(m.n_column_orders, 2);
    tl_arena_free(&arena);

    /* Every truncation fails cleanly; every single-byte corruption fails or parses. */
    for (size_t n = 0; n < b.len; n++) {
        tl_arena a = {0};
        CHECK(tl_pq_parse_file_meta(b.data, n, &a, &m, &err) != TL_OK);
        tl_arena_free(&a);
    }
    for (int i = 0; i < 2000; i++) {
        tl_buf c = {0};
        tl_buf_append(&c, b.data, b.len);
        c.data[rnd() % c.len] ^= (uint8_t)(1 + rnd() % 255);
        tl_arena a = {0};
        (void)tl_pq_parse_file_meta(c.data, c.len, &a, &m, &err);
        tl_arena_free(&a);
        tl_buf_free(&c);
    }
    tl_buf_free(&b);
}

static void test_page_header_round_trip(void)
{
    tl_pq_page_header h = {.type = TL_PQ_DATA_PAGE_V2,
                           .uncompressed_page_size = 1000,
                           .compressed_page_size = 500,
                           .has_data_v2 = true};
    h.data_v2.num_values = 20;
    h.data_v2.num_nulls = 2;
    h.data_v2.num_rows = 20;
    h.data_v2.encoding = TL_PQ_ENC_DELTA_BINARY_PACKED;
    h.data_v2.def_length = 7;
    h.data_v2.is_compressed = false;
    tl_buf b = {0};
    tl_error err;
    CHECK_OK(tl_pq_write_page_header(&b, &h, &err), &err);
    tl_buf_append(&b, "tail", 4);
    tl_pq_page_header g;
    size_t used;
    CHECK_OK(tl_pq_parse_page_header(b.data, b.len, &g, &used, &err), &err);
    CHECK_INT(used, b.len - 4);
    CHECK(g.type == TL_PQ_DATA_PAGE_V2 && g.has_data_v2 && g.data_v2.def_length == 7);
    CHECK(g.data_v2.num_nulls == 2 && !g.data_v2.is_compressed && g.compressed_page_size == 500);
    tl_buf_free(&b);
}

/* ---- RLE / bit-packed hybrid ---- */

static void test_rle_known_vectors(void)
{
    /* The spec's bit-packing example: 0..7 at width 3 is 10001000 11000110 11111010. */
    uint32_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    tl_buf b = {0};
    CHECK(tl_pq_rle_encode(&b, v, 8, 3) == 0);
    const uint8_t packed[] = {0x03, 0x88, 0xC6, 0xFA};
    CHECK(bytes_eq(&b, packed, sizeof packed));
    uint32_t out[16];
    tl_error err;
    size_t used;
    CHECK_OK(tl_pq_rle_decode(packed, sizeof packed, 3, out, 8, &used, &err), &err);
    CHECK(memcmp(out, v, sizeof v) == 0 && used == 4);
    /* An RLE run: 10 copies of 5 at width 3 is header 10 << 1, then one value byte. */
    b.len = 0;
    uint32_t fives[10];
    for (int i = 0; i < 10; i++) fives[i] = 5;
    CHECK(tl_pq_rle_encode(&b, fives, 10, 3) == 0);
    const uint8_t run[] = {0x14, 0x05};
    CHECK(bytes_eq(&b, run, sizeof run));
    /* Values wider than the bit width and runs past the data are errors. */
    const uint8_t bad_value[] = {0x14, 0x09};
    CHECK_INT(tl_pq_rle_decode(bad_value, 2, 3, out, 10, NULL, &err), TL_ERR_INVALID);
    CHECK_INT(tl_pq_rle_decode(packed, 3, 3, out, 8, NULL, &err), TL_ERR_INVALID);
    CHECK_INT(tl_pq_rle_decode(run, 2, 3, out, 11, NULL, &err), TL_ERR_INVALID);
    tl_buf_free(&b);
}

static void test_rle_round_trip(void)
{
    tl_error err;
    for (int width = 0; width <= 32; width++) {
        size_t n = 1 + rnd() % 3000;
        uint32_t *v = malloc(n * sizeof *v), *out = malloc(n * sizeof *v);
        uint64_t mask = width == 32 ? 0xFFFFFFFFu : (1ull << width) - 1;
        for (size_t i = 0; i < n; i++) {
            /* Mix runs (sorted-series style) with noise. */
            v[i] = (rnd() % 4 == 0 && i > 0) ? v[i - 1] : (uint32_t)(rnd() & mask);
            if (i % 200 < 50 && i > 0) v[i] = v[i - 1];
        }
        tl_buf b = {0};
        CHECK(tl_pq_rle_encode(&b, v, n, width) == 0);
        size_t used = 0;
        CHECK_OK(tl_pq_rle_decode(b.data, b.len, width, out, n, &used, &err), &err);
        CHECK(memcmp(v, out, n * sizeof *v) == 0);
        CHECK_INT(used, b.len);
        for (size_t cut = 0; cut < b.len; cut += 1 + b.len / 50)
            (void)tl_pq_rle_decode(b.data, cut, width, out, n, NULL, &err);
        tl_buf_free(&b);
        free(v);
        free(out);
    }
}

static void test_rle_bitmap_levels(void)
{
    tl_error err;
    for (int round = 0; round < 50; round++) {
        size_t n = 1 + rnd() % 2000;
        uint8_t bits[256] = {0}, back[260] = {0};
        int64_t ones = 0;
        for (size_t i = 0; i < n; i++) {
            bool on = (i / 64) % 3 == 0 ? true : (i / 64) % 3 == 1 ? false : (rnd() & 1);
            if (on) bits[i / 8] |= (uint8_t)(1u << (i % 8)), ones++;
        }
        tl_buf b = {0};
        CHECK(tl_pq_rle_encode_bitmap(&b, bits, n) == 0);
        int64_t got = -1;
        int64_t off = (int64_t)(rnd() % 13);
        CHECK_OK(tl_pq_rle_decode_bitmap(b.data, b.len, back, off, n, &got, &err), &err);
        CHECK_INT(got, ones);
        for (size_t i = 0; i < n; i++) {
            bool a = (bits[i / 8] >> (i % 8)) & 1, c = (back[(off + i) / 8] >> ((off + i) % 8)) & 1;
            if (a != c) {
                CHECK(a == c);
                break;
            }
        }
        tl_buf_free(&b);
    }
}

/* ---- DELTA_BINARY_PACKED ---- */

static void test_delta_known_vector(void)
{
    /* The spec's example: 1..5 is a header (128, 4 miniblocks, 5 values, first 1)
     * and one block with min delta 1 and four zero bit widths. */
    int64_t v[5] = {1, 2, 3, 4, 5};
    tl_buf b = {0};
    CHECK(tl_pq_delta_encode(&b, v, 5, false) == 0);
    const uint8_t want[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    CHECK(bytes_eq(&b, want, sizeof want));
    int64_t out[8];
    size_t n, used;
    tl_error err;
    CHECK_OK(tl_pq_delta_decode(want, sizeof want, false, out, 8, &n, &used, &err), &err);
    CHECK(n == 5 && used == sizeof want && memcmp(out, v, sizeof v) == 0);
    CHECK_INT(tl_pq_delta_decode(want, sizeof want, false, out, 4, &n, &used, &err),
              TL_ERR_INVALID);
    tl_buf_free(&b);
}

static void test_delta_round_trip(void)
{
    tl_error err;
    for (int round = 0; round < 40; round++) {
        size_t n = rnd() % 1500;
        bool is32 = round % 2;
        int64_t *v = malloc((n + 1) * sizeof *v), *out = malloc((n + 1) * sizeof *v);
        int32_t *v32 = malloc((n + 1) * sizeof *v32);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rnd();
            int64_t x = round % 4 < 2 ? (int64_t)r : (int64_t)(i * 1000000) + (int64_t)(r % 7);
            if (r % 50 == 0) x = r & 1 ? INT64_MAX : INT64_MIN;
            v[i] = is32 ? (int32_t)x : x;
            v32[i] = (int32_t)x;
        }
        tl_buf b = {0};
        CHECK((is32 ? tl_pq_delta_encode_i32(&b, v32, n) : tl_pq_delta_encode(&b, v, n, false)) ==
              0);
        size_t got, used;
        CHECK_OK(tl_pq_delta_decode(b.data, b.len, is32, out, n, &got, &used, &err), &err);
        CHECK(got == n && used == b.len);
        CHECK(n == 0 || memcmp(v, out, n * sizeof *v) == 0);
        for (size_t cut = 0; cut < b.len; cut++)
            (void)tl_pq_delta_decode(b.data, cut, is32, out, n, &got, &used, &err);
        tl_buf_free(&b);
        free(v);
        free(out);
        free(v32);
    }
}

/* Every bit width 0..64 of a block's miniblocks, against a packing done bit
 * by bit: 101 values are 100 deltas, so the last miniblock is padded. Each
 * miniblock holds the block's least delta and one 2^w - 1 above it. */
static void test_delta_every_width(void)
{
    enum { N = 101, DELTAS = N - 1 };
    tl_error err;
    for (int w = 0; w <= 64; w++) {
        uint64_t top = w == 64 ? UINT64_MAX : (1ull << w) - 1, lo = w == 64 ? 1ull << 63 : 0;
        uint64_t u[128] = {0};
        for (size_t k = 0; k < DELTAS; k++) {
            bool at_top = k % 32 == 1 || k == DELTAS - 1;
            u[k] = k % 32 == 0 ? 0 : at_top ? top : rnd() & top;
        }
        int64_t v[N];
        v[0] = 12345;
        for (size_t k = 0; k < DELTAS; k++) v[k + 1] = (int64_t)((uint64_t)v[k] + lo + u[k]);
        tl_buf b = {0};
        CHECK(tl_pq_delta_encode(&b, v, N, false) == 0);
        uint8_t want[4 * 4 * 64] = {0};
        for (size_t k = 0; k < 128; k++)
            for (int bit = 0; bit < w; bit++)
                if (u[k] >> bit & 1)
                    want[(k * (size_t)w + (size_t)bit) / 8] |=
                        (uint8_t)(1u << ((k * (size_t)w + (size_t)bit) % 8));
        size_t packed = 16 * (size_t)w;
        CHECK(b.len >= packed + 4);
        CHECK(memcmp(b.data + b.len - packed, want, packed) == 0);
        for (int m = 0; m < 4; m++) CHECK_INT(b.data[b.len - packed - 4 + (size_t)m], w);
        int64_t out[N];
        size_t got, used;
        CHECK_OK(tl_pq_delta_decode(b.data, b.len, false, out, N, &got, &used, &err), &err);
        CHECK(got == N && used == b.len && memcmp(out, v, sizeof v) == 0);
        tl_buf_free(&b);
    }
}

/* The count of values in [lo, hi] without decoding, against the decoded values:
 * even runs (steady steps, equal values, steps that wrap past INT64's ends),
 * runs broken by jitter, bounds on, inside and just past the values. */
static void test_delta_count(void)
{
    tl_error err;
    for (int round = 0; round < 60; round++) {
        size_t n = rnd() % 2000;
        int64_t *v = malloc((n + 1) * sizeof *v), *out = malloc((n + 1) * sizeof *v);
        int64_t step = round % 5 == 0 ? 0 : round % 5 == 1 ? -3 : (int64_t)(rnd() % 10000000);
        int64_t x = round % 7 == 0 ? INT64_MAX - 100000 : (int64_t)(rnd() % 1000000000);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rnd();
            if (round % 3 == 0 && r % 97 == 0)
                x = (int64_t)((uint64_t)x - r % 500000);                           /* new series */
            if (round % 4 == 0 && r % 61 == 0) x = (int64_t)((uint64_t)x + r % 9); /* jitter */
            if (round % 9 == 0 && r % 300 == 0) x = r & 1 ? INT64_MAX : INT64_MIN;
            v[i] = x;
            x = (int64_t)((uint64_t)x + (uint64_t)step);
        }
        tl_buf b = {0};
        CHECK(tl_pq_delta_encode(&b, v, n, false) == 0);
        size_t got, used;
        CHECK_OK(tl_pq_delta_decode(b.data, b.len, false, out, n, &got, &used, &err), &err);
        for (int q = 0; q < 20; q++) {
            int64_t lo, hi;
            if (q == 0) {
                lo = INT64_MIN, hi = INT64_MAX;
            } else {
                lo = n ? (int64_t)((uint64_t)v[rnd() % n] + rnd() % 3 - 1) : 0;
                hi = n ? (int64_t)((uint64_t)v[rnd() % n] + rnd() % 3 - 1) : 0;
                if (q % 4 == 0) hi = lo;
                if (lo > hi) {
                    int64_t t = lo;
                    lo = hi, hi = t;
                }
            }
            size_t want = 0, count = 99, seen = 0;
            for (size_t i = 0; i < n; i++) want += out[i] >= lo && out[i] <= hi;
            CHECK_OK(tl_pq_delta_count64(b.data, b.len, n, lo, hi, &seen, &count, &err), &err);
            CHECK(seen == n);
            CHECK_INT((int64_t)count, (int64_t)want);
        }
        if (n > 0)
            CHECK_INT(tl_pq_delta_count64(b.data, b.len, n - 1, 0, 1, &got, &used, &err),
                      TL_ERR_INVALID);
        for (size_t cut = 0; cut < b.len; cut++)
            (void)tl_pq_delta_count64(b.data, cut, n, 0, INT64_MAX, &got, &used, &err);
        tl_buf_free(&b);
        free(v);
        free(out);
    }
}

/* ---- Byte arrays and BYTE_STREAM_SPLIT ---- */

static void make_views(tl_pq_view *v, size_t n, char (*store)[40])
{
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(store[i], 40, "%s%zu", i % 5 == 0 ? "" : "prefix-shared-", i / 3);
        if (i % 11 == 0) len = 0;
        v[i].data = (const uint8_t *)store[i];
        v[i].len = (uint32_t)len;
    }
}

static bool views_equal(const tl_pq_view *a, const tl_pq_view *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].len != b[i].len || (a[i].len && memcmp(a[i].data, b[i].data, a[i].len) != 0))
            return false;
    return true;
}

static void test_byte_array_encodings(void)
{
    enum { N = 300 };
    static char store[N][40];
    tl_pq_view v[N], out[N];
    make_views(v, N, store);
    tl_error err;
    int (*enc[3])(tl_buf *, const tl_pq_view *, size_t) = {
        tl_pq_plain_bytes_encode, tl_pq_delta_length_encode, tl_pq_delta_byte_array_encode};
    for (int e = 0; e < 3; e++) {
        tl_buf b = {0};
        CHECK(enc[e](&b, v, N) == 0);
        uint8_t *storage = NULL;
        tl_status st = e == 0 ? tl_pq_plain_bytes_decode(b.data, b.len, out, N, &err)
                       : e == 1
                           ? tl_pq_delta_length_decode(b.data, b.len, out, N, NULL, &err)
                           : tl_pq_delta_byte_array_decode(b.data, b.len, out, N, &storage, &err);
        CHECK_OK(st, &err);
        CHECK(views_equal(v, out, N));
        free(storage);
        for (size_t cut = 0; cut < b.len; cut += 3) {
            storage = NULL;
            st = e == 0   ? tl_pq_plain_bytes_decode(b.data, cut, out, N, &err)
                 : e == 1 ? tl_pq_delta_length_decode(b.data, cut, out, N, NULL, &err)
                          : tl_pq_delta_byte_array_decode(b.data, cut, out, N, &storage, &err);
            CHECK(st != TL_OK);
            free(storage);
        }
        tl_buf_free(&b);
    }
    /* PLAIN known bytes: a 4-byte little-endian length, then the bytes. */
    tl_pq_view one = {(const uint8_t *)"hi", 2};
    tl_buf b = {0};
    CHECK(tl_pq_plain_bytes_encode(&b, &one, 1) == 0);
    const uint8_t want[] = {2, 0, 0, 0, 'h', 'i'};
    CHECK(bytes_eq(&b, want, sizeof want));
    tl_buf_free(&b);
}

static void test_byte_stream_split(void)
{
    /* 1.0f and 2.0f are 00 00 80 3f and 00 00 00 40: streams interleave by byte. */
    float f[2] = {1.0f, 2.0f};
    tl_buf b = {0};
    CHECK(tl_pq_byte_stream_split_encode(&b, (const uint8_t *)f, 2, 4) == 0);
    const uint8_t want[] = {0, 0, 0, 0, 0x80, 0, 0x3f, 0x40};
    CHECK(bytes_eq(&b, want, sizeof want));
    float back[2];
    tl_error err;
    CHECK_OK(tl_pq_byte_stream_split_decode(b.data, b.len, 4, 2, (uint8_t *)back, &err), &err);
    CHECK(back[0] == 1.0f && back[1] == 2.0f);
    CHECK_INT(tl_pq_byte_stream_split_decode(b.data, 7, 4, 2, (uint8_t *)back, &err),
              TL_ERR_INVALID);
    tl_buf_free(&b);
    /* Widths 8 (doubles, decoded a value at once), 4 and 2 (byte by byte):
     * byte k of value i is byte i of stream k. */
    for (size_t width = 2; width <= 8; width *= 2) {
        uint8_t streams[8 * 5], out[8 * 5];
        for (size_t i = 0; i < width * 5; i++) streams[i] = (uint8_t)(i * 37 + 11);
        CHECK_OK(tl_pq_byte_stream_split_decode(streams, width * 5, width, 5, out, &err), &err);
        for (size_t i = 0; i < 5; i++)
            for (size_t k = 0; k < width; k++) CHECK_INT(out[i * width + k], streams[k * 5 + i]);
    }
    /* Doubles past 16 (decoded 16 at a time where the machine can), and a tail. */
    enum { N = 37 };
    uint8_t streams[8 * N], out[8 * N];
    for (size_t i = 0; i < sizeof streams; i++) streams[i] = (uint8_t)(i * 131 + 7);
    CHECK_OK(tl_pq_byte_stream_split_decode(streams, sizeof streams, 8, N, out, &err), &err);
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < 8; k++) CHECK_INT(out[i * 8 + k], streams[k * N + i]);
}

static void test_bit_helpers(void)
{
    uint8_t a[16] = {0}, b[16] = {0};
    tl_pq_bits_set_range(a, 3, 100, true);
    CHECK_INT(tl_pq_bits_count(a, 0, 128), 100);
    CHECK_INT(tl_pq_bits_count(a, 3, 100), 100);
    for (int src = 0; src < 9; src++)
        for (int dst = 0; dst < 9; dst++) {
            memset(b, 0, sizeof b);
            tl_pq_bits_copy(b, dst, a, src, 90);
            CHECK_INT(tl_pq_bits_count(b, dst, 90), tl_pq_bits_count(a, src, 90));
            CHECK_INT(tl_pq_bits_count(b, 0, 128), tl_pq_bits_count(a, src, 90));
        }
    CHECK_INT(tl_pq_bit_width(0), 0);
    CHECK_INT(tl_pq_bit_width(1), 1);
    CHECK_INT(tl_pq_bit_width(255), 8);
    CHECK_INT(tl_pq_bit_width(UINT64_MAX), 64);
}

UNIT_TESTS(UNIT(test_thrift_known_bytes), UNIT(test_thrift_varints),
           UNIT(test_thrift_nesting_limit), UNIT(test_file_meta_round_trip),
           UNIT(test_page_header_round_trip), UNIT(test_rle_known_vectors),
           UNIT(test_rle_round_trip), UNIT(test_rle_bitmap_levels), UNIT(test_delta_known_vector),
           UNIT(test_delta_round_trip), UNIT(test_delta_every_width), UNIT(test_delta_count),
           UNIT(test_byte_array_encodings), UNIT(test_byte_stream_split), UNIT(test_bit_helpers))
