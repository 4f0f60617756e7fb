/* The writer's per-chunk codec choice (min_saving_pct): a column chunk whose
 * first data page the codec barely shrinks (by less than min_saving_pct, or by
 * less than 8 KiB) is stored uncompressed, floats as PLAIN; every other chunk
 * keeps the codec. Each chunk decides afresh, and the
 * values read back unchanged either way. A float page of more than 1,024
 * values is judged by its first 1,024 when they leave no doubt. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_compress.h"
#include "formats/parquet/parquet_encoding.h"
#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "unit.h"

enum { ROWS = 24000, GROUP = 12000, PAGE = 4000, N_COLS = 6 };

static int64_t page_rows = PAGE;

/* noise: full-precision doubles; rounded: readings to 0.1; ints: random 64-bit;
 * tag: a few repeated strings (dictionary-encoded); mixed: noise in the first
 * row group, a constant in the second; late: a first page of nulls, then
 * readings. */
static const char *const NAMES[N_COLS] = {"noise", "rounded", "ints", "tag", "mixed", "late"};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    return trand(&rng);
}

static double noise(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0 * 100.0;
}

typedef struct table {
    struct ArrowSchema schema;
    struct ArrowArray array;
} table;

static void make_table(table *t)
{
    tl_error err;
    const char *formats[N_COLS] = {"g", "g", "l", "u", "g", "g"};
    tl_schema_init(&t->schema, "+s", NULL, 0, N_COLS, &err);
    tl_array_init(&t->array, 1, N_COLS, &err);
    t->array.length = ROWS;
    for (int c = 0; c < N_COLS; c++) {
        int64_t flags = c == 0 || c == 5 ? ARROW_FLAG_NULLABLE : 0;
        tl_schema_init(t->schema.children[c], formats[c], NAMES[c], flags, 0, &err);
        struct ArrowArray *a = t->array.children[c];
        tl_array_init(a, c == 3 ? 3 : 2, 0, &err);
        a->length = ROWS;
    }
    uint8_t *valid = tl_array_alloc_buffer(t->array.children[0], 0, (ROWS + 7) / 8);
    uint8_t *late_valid = tl_array_alloc_buffer(t->array.children[5], 0, (ROWS + 7) / 8);
    double *d[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        if (c != 2 && c != 3) d[c] = tl_array_alloc_buffer(t->array.children[c], 1, ROWS * 8);
    int64_t *ints = tl_array_alloc_buffer(t->array.children[2], 1, ROWS * 8);
    int32_t *off = tl_array_alloc_buffer(t->array.children[3], 1, (ROWS + 1) * 4);
    char *text = tl_array_alloc_buffer(t->array.children[3], 2, ROWS * 8);
    t->array.children[0]->null_count = 0;
    t->array.children[5]->null_count = PAGE;
    for (int64_t i = 0; i < ROWS; i++) {
        bool is_null = i % 7 == 3;
        if (!is_null) valid[i / 8] |= (uint8_t)(1u << (i % 8));
        t->array.children[0]->null_count += is_null;
        d[0][i] = is_null ? 0 : noise();
        d[1][i] = round(200.0 + 50.0 * sin((double)i / 300.0)) / 10.0;
        ints[i] = (int64_t)rnd();
        off[i + 1] = off[i] + (int32_t)snprintf(text + off[i], 8, "host%d", (int)(i / 500));
        d[4][i] = i < GROUP ? noise() : 42.0;
        if (i >= PAGE) late_valid[i / 8] |= (uint8_t)(1u << (i % 8));
        d[5][i] = i < PAGE ? 0 : d[1][i];
    }
}

static tl_status write_table(const table *t, tl_parquet_codec codec, int min_saving, tl_buf *out,
                             tl_error *err)
{
    tl_parquet_write_options o = {.codec = codec,
                                  .compression_level = 3,
                                  .min_saving_pct = min_saving,
                                  .page_rows = page_rows,
                                  .row_group_rows = GROUP,
                                  .write_page_index = true};
    tl_parquet_writer *w = NULL;
    TL_TRY(tl_parquet_writer_open(&t->schema, &o, &w, err));
    tl_status st = tl_parquet_writer_write(w, &t->array, err);
    if (st == TL_OK) st = tl_parquet_writer_finish(w, out, NULL, err);
    tl_parquet_writer_free(w);
    return st;
}

static bool has_encoding(const tl_pq_column_meta *m, tl_pq_encoding e)
{
    for (size_t i = 0; i < m->n_encodings; i++)
        if (m->encodings[i] == (int32_t)e) return true;
    return false;
}

/* Every value of every column reads back as written. */
static void check_values(tl_parquet_reader *r, const table *t)
{
    tl_error err;
    for (size_t g = 0; g < 2; g++) {
        struct ArrowArray b;
        CHECK_OK(tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err), &err);
        int64_t base = (int64_t)g * GROUP;
        for (int c = 0; c < N_COLS; c++) {
            const struct ArrowArray *want = t->array.children[c], *got = b.children[c];
            int64_t nulls = 0;
            for (int64_t i = base; c == 0 && i < base + GROUP; i++) nulls += i % 7 == 3;
            if (c == 5 && g == 0) nulls = PAGE;
            CHECK_INT(got->null_count, nulls);
            size_t width = c == 3 ? 4 : 8;
            const uint8_t *w = (const uint8_t *)want->buffers[1] + (size_t)base * width;
            if (c == 3) { /* offsets differ by the group's start; compare the strings */
                const int32_t *wo = want->buffers[1], *go = got->buffers[1];
                for (int64_t i = 0; i < GROUP; i++)
                    CHECK(go[i + 1] - go[i] == wo[base + i + 1] - wo[base + i] &&
                          memcmp((const char *)got->buffers[2] + go[i],
                                 (const char *)want->buffers[2] + wo[base + i],
                                 (size_t)(go[i + 1] - go[i])) == 0);
                continue;
            }
            const uint8_t *valid = c == 0 || c == 5 ? got->buffers[0] : NULL;
            for (int64_t i = 0; i < GROUP; i++) {
                if (valid && !(valid[i / 8] & (1u << (i % 8)))) continue;
                if (memcmp((const uint8_t *)got->buffers[1] + i * 8, w + i * 8, 8) != 0) {
                    unit_fail(__FILE__, __LINE__, "column %s row %lld differs", NAMES[c],
                              (long long)(base + i));
                    break;
                }
            }
        }
        b.release(&b);
    }
}

static void open_file(const tl_buf *file, tl_parquet_reader **r)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file->data, file->len);
    tl_error err;
    CHECK_OK(tl_parquet_reader_open(&src, r, &err), &err);
}

static const tl_pq_column_meta *chunk(tl_parquet_reader *r, size_t g, int c)
{
    return &tl_parquet_reader_meta(r)->row_groups[g].columns[c].meta;
}

static void test_noise_is_stored_uncompressed(void)
{
    table t;
    make_table(&t);
    tl_buf file = {0};
    tl_error err;
    CHECK_OK(write_table(&t, TL_PARQUET_ZSTD, 20, &file, &err), &err);
    tl_parquet_reader *r = NULL;
    open_file(&file, &r);
    if (r == NULL) return;
    for (size_t g = 0; g < 2; g++) {
        CHECK_INT(chunk(r, g, 0)->codec, TL_PQ_CODEC_UNCOMPRESSED);
        CHECK(!has_encoding(chunk(r, g, 0), TL_PQ_ENC_BYTE_STREAM_SPLIT));
        CHECK_INT(chunk(r, g, 1)->codec, TL_PQ_CODEC_ZSTD);
        CHECK_INT(chunk(r, g, 2)->codec, TL_PQ_CODEC_UNCOMPRESSED);
        CHECK_INT(chunk(r, g, 3)->codec, TL_PQ_CODEC_ZSTD);
        CHECK(chunk(r, g, 0)->total_compressed_size == chunk(r, g, 0)->total_uncompressed_size);
    }
    /* Each chunk decides for itself. */
    CHECK_INT(chunk(r, 0, 4)->codec, TL_PQ_CODEC_UNCOMPRESSED);
    CHECK_INT(chunk(r, 1, 4)->codec, TL_PQ_CODEC_ZSTD);
    /* A first page without values keeps the codec. */
    CHECK_INT(chunk(r, 0, 5)->codec, TL_PQ_CODEC_ZSTD);
    check_values(r, &t);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    t.array.release(&t.array);
    t.schema.release(&t.schema);
}

static void test_zero_keeps_the_codec_everywhere(void)
{
    table t;
    make_table(&t);
    tl_parquet_codec codecs[] = {TL_PARQUET_ZSTD, TL_PARQUET_SNAPPY};
    tl_pq_codec_id ids[] = {TL_PQ_CODEC_ZSTD, TL_PQ_CODEC_SNAPPY};
    for (int k = 0; k < 2; k++) {
        tl_buf file = {0};
        tl_error err;
        CHECK_OK(write_table(&t, codecs[k], 0, &file, &err), &err);
        tl_parquet_reader *r = NULL;
        open_file(&file, &r);
        if (r == NULL) continue;
        for (size_t g = 0; g < 2; g++)
            for (int c = 0; c < N_COLS; c++) CHECK_INT(chunk(r, g, c)->codec, ids[k]);
        CHECK(has_encoding(chunk(r, 0, 0), TL_PQ_ENC_BYTE_STREAM_SPLIT));
        check_values(r, &t);
        tl_parquet_reader_free(r);
        tl_buf_free(&file);
    }
    t.array.release(&t.array);
    t.schema.release(&t.schema);
}

static void test_snappy_drops_too(void)
{
    table t;
    make_table(&t);
    tl_buf file = {0};
    tl_error err;
    CHECK_OK(write_table(&t, TL_PARQUET_SNAPPY, 20, &file, &err), &err);
    tl_parquet_reader *r = NULL;
    open_file(&file, &r);
    if (r != NULL) {
        CHECK_INT(chunk(r, 0, 0)->codec, TL_PQ_CODEC_UNCOMPRESSED);
        CHECK_INT(chunk(r, 0, 3)->codec, TL_PQ_CODEC_SNAPPY);
        check_values(r, &t);
        tl_parquet_reader_free(r);
    }
    tl_buf_free(&file);
    t.array.release(&t.array);
    t.schema.release(&t.schema);
}

/* Pages of 500 readings (4 KB) shrink by well over 20% but by less than
 * 8 KiB: stored uncompressed, unless min_saving_pct is 0. */
static void test_small_pages_keep_no_codec(void)
{
    table t;
    make_table(&t);
    page_rows = 500;
    for (int k = 0; k < 2; k++) {
        tl_buf file = {0};
        tl_error err;
        CHECK_OK(write_table(&t, TL_PARQUET_ZSTD, k ? 0 : 20, &file, &err), &err);
        tl_parquet_reader *r = NULL;
        open_file(&file, &r);
        if (r == NULL) continue;
        for (size_t g = 0; g < 2; g++)
            CHECK_INT(chunk(r, g, 1)->codec, k ? TL_PQ_CODEC_ZSTD : TL_PQ_CODEC_UNCOMPRESSED);
        CHECK_INT(chunk(r, 0, 3)->codec, TL_PQ_CODEC_ZSTD); /* dictionary-encoded: kept */
        check_values(r, &t);
        tl_parquet_reader_free(r);
        tl_buf_free(&file);
    }
    page_rows = PAGE;
    t.array.release(&t.array);
    t.schema.release(&t.schema);
}

static void test_rejects_bad_percentages(void)
{
    table t;
    make_table(&t);
    int bad[] = {-1, 101};
    for (int k = 0; k < 2; k++) {
        tl_buf file = {0};
        tl_error err;
        CHECK(write_table(&t, TL_PARQUET_ZSTD, bad[k], &file, &err) == TL_ERR_INVALID);
        CHECK(strstr(err.message, "compression saving") != NULL);
        CHECK_INT(file.len, 0);
        tl_buf_free(&file);
    }
    t.array.release(&t.array);
    t.schema.release(&t.schema);
}

/* One float column of `n` rows on one page: its first `head` values noise,
 * the rest a constant. Returns the codec its chunk was stored with. */
static tl_pq_codec_id head_noise_codec(int64_t n, int64_t head, int min_saving)
{
    tl_error err;
    table t;
    tl_schema_init(&t.schema, "+s", NULL, 0, 1, &err);
    tl_schema_init(t.schema.children[0], "g", "v", 0, 0, &err);
    tl_array_init(&t.array, 1, 1, &err);
    t.array.length = n;
    struct ArrowArray *a = t.array.children[0];
    tl_array_init(a, 2, 0, &err);
    a->length = n;
    double *d = tl_array_alloc_buffer(a, 1, (size_t)n * 8);
    rng = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) d[i] = i < head ? noise() : 42.0;
    int64_t saved = page_rows;
    page_rows = n;
    tl_buf file = {0};
    CHECK_OK(write_table(&t, TL_PARQUET_ZSTD, min_saving, &file, &err), &err);
    page_rows = saved;
    tl_parquet_reader *r = NULL;
    open_file(&file, &r);
    tl_pq_codec_id codec = r ? chunk(r, 0, 0)->codec : TL_PQ_CODEC_UNCOMPRESSED;
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    t.array.release(&t.array);
    t.schema.release(&t.schema);
    return codec;
}

/* The percentage zstd saves on `n` noise values, BYTE_STREAM_SPLIT. */
static int noise_saving(int64_t n)
{
    double *d = malloc((size_t)n * 8);
    rng = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) d[i] = noise();
    tl_buf split = {0}, comp = {0};
    tl_error err;
    tl_pq_byte_stream_split_encode(&split, (const uint8_t *)d, (size_t)n, 8);
    tl_pq_codec_ctx *c = tl_pq_codec_ctx_new();
    CHECK_OK(tl_pq_compress(c, TL_PQ_CODEC_ZSTD, 3, split.data, split.len, &comp, &err), &err);
    int pct = (int)(100 - comp.len * 100 / split.len);
    tl_pq_codec_ctx_free(c);
    tl_buf_free(&split);
    tl_buf_free(&comp);
    free(d);
    return pct;
}

/* A large float page is judged by its first 1,024 values when they make the
 * outcome clear, and tried whole when they leave it close: here the sample
 * is noise and the rest of the page a constant, which the codec would
 * shrink by far. */
static void test_float_pages_judged_by_a_sample(void)
{
    int s = noise_saving(1024);
    CHECK(s >= 0 && s < 60);
    /* Far below the sample's saving: the sample decides, uncompressed. */
    CHECK_INT(head_noise_codec(20000, 1024, s + 20), TL_PQ_CODEC_UNCOMPRESSED);
    /* Within a few points of it: the whole page is tried, and keeps zstd. */
    CHECK_INT(head_noise_codec(20000, 1024, s + 2), TL_PQ_CODEC_ZSTD);
}

UNIT_TESTS(UNIT(test_noise_is_stored_uncompressed), UNIT(test_float_pages_judged_by_a_sample),
           UNIT(test_zero_keeps_the_codec_everywhere), UNIT(test_snappy_drops_too),
           UNIT(test_small_pages_keep_no_codec), UNIT(test_rejects_bad_percentages))
