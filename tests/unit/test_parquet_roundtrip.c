/* Parquet writer -> reader round trips of every supported Arrow type, with
 * nulls, empty strings, many pages and row groups, all codecs and both encoding
 * policies; statistics, page index, rejected batches, and hostile files
 * (truncations and random byte flips must fail cleanly, never crash). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_reader.h"
#include "test_parquet_helpers.h"
#include "formats/parquet/parquet_writer.h"
#include "unit.h"

typedef struct coltype {
    const char *in, *out; /* Arrow format written, and as read back */
} coltype;

static const coltype TYPES[] = {
    {"b", "b"},
    {"c", "c"},
    {"C", "C"},
    {"s", "s"},
    {"S", "S"},
    {"i", "i"},
    {"I", "I"},
    {"l", "l"},
    {"L", "L"},
    {"e", "e"},
    {"f", "f"},
    {"g", "g"},
    {"u", "u"},
    {"U", "u"},
    {"z", "z"},
    {"Z", "z"},
    {"w:5", "w:5"},
    {"d:10,2", "d:10,2"},
    {"d:38,5", "d:38,5"},
    {"tdD", "tdD"},
    {"tdm", "tdD"},
    {"tts", "ttm"},
    {"ttm", "ttm"},
    {"ttu", "ttu"},
    {"ttn", "ttn"},
    {"tss:", "tsm:"},
    {"tsm:", "tsm:"},
    {"tsu:", "tsu:"},
    {"tsu:UTC", "tsu:UTC"},
    {"tsn:Europe/Paris", "tsn:UTC"},
};
enum { N_TYPES = sizeof TYPES / sizeof TYPES[0], N_COLS = 2 * N_TYPES };

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    return trand(&rng_state);
}

/* Column c holds type c / 2; odd columns are nullable. */
static const coltype *col_type(int c)
{
    return &TYPES[c / 2];
}

static bool col_nullable(int c)
{
    return c % 2 == 1;
}

static int64_t logical(int64_t i, int c)
{
    uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)c * 0x632BE59BD9B4E019ull;
    x ^= x >> 29;
    return (int64_t)(x % 2000001) - 1000000;
}

static bool row_null(int64_t i, int c)
{
    return col_nullable(c) && (i % 5 == 2 || (i / 150) % 5 == 3);
}

static int64_t iabs(int64_t x)
{
    return x < 0 ? -x : x;
}

/* The string of row i (empty every 7th row; binary ones hold a NUL). */
static size_t row_string(int64_t i, int c, char *buf)
{
    if (i % 7 == 0) return 0;
    int64_t l = logical(i, c);
    size_t n = 0;
    for (int64_t k = 0; k <= iabs(l) % 4; k++)
        n += (size_t)sprintf(buf + n, "v%lld,", (long long)l);
    if (col_type(c)->in[0] == 'z' || col_type(c)->in[0] == 'Z') buf[0] = '\0';
    return n;
}

static void put_i128(uint8_t *out, int64_t v)
{
    memcpy(out, &v, 8);
    memset(out + 8, v < 0 ? 0xFF : 0, 8);
}

/* Value bytes of row i in the Arrow layout of `fmt` (input or output side). */
static void row_value(int64_t i, int c, bool output, uint8_t *out)
{
    const char *f = output ? col_type(c)->out : col_type(c)->in;
    const char *in = col_type(c)->in;
    int64_t l = logical(i, c), v;
    double d;
    float x;
    switch (in[0]) {
    case 'c':
        out[0] = (uint8_t)l;
        return;
    case 'C':
        out[0] = (uint8_t)l;
        return;
    case 's':
    case 'S':
        v = l;
        memcpy(out, &v, 2);
        return;
    case 'i':
        v = l;
        memcpy(out, &v, 4);
        return;
    case 'I':
        v = l * 4099;
        memcpy(out, &v, 4);
        return;
    case 'l':
        v = l * 1000003 * 1000;
        memcpy(out, &v, 8);
        return;
    case 'L':
        v = (int64_t)((uint64_t)l * 0x10000000001ull);
        memcpy(out, &v, 8);
        return;
    case 'e':
        v = l & 0x7BFF;
        memcpy(out, &v, 2);
        return;
    case 'f':
        x = i % 13 == 6 ? NAN : (float)l / 8;
        memcpy(out, &x, 4);
        return;
    case 'g':
        d = i % 13 == 6 ? NAN : (double)l / 16;
        memcpy(out, &d, 8);
        return;
    case 'w':
        for (int k = 0; k < 5; k++) out[k] = (uint8_t)(l >> (8 * k));
        return;
    case 'd':
        put_i128(out, strcmp(in, "d:10,2") == 0 ? l * 100 + 7 : l * 1000000000000);
        return;
    default:
        break;
    }
    if (strcmp(in, "tdD") == 0 || strcmp(in, "tdm") == 0) {
        int32_t days = (int32_t)(l % 30000);
        if (f[2] == 'D')
            memcpy(out, &days, 4);
        else
            v = days * 86400000LL, memcpy(out, &v, 8);
        return;
    }
    if (in[1] == 't') {
        int32_t t32;
        switch (in[2]) {
        case 's':
            t32 = (int32_t)(iabs(l) % 86400) * (output ? 1000 : 1);
            memcpy(out, &t32, 4);
            return;
        case 'm':
            t32 = (int32_t)(iabs(l) % 86400000);
            memcpy(out, &t32, 4);
            return;
        case 'u':
            v = iabs(l) * 1000;
            memcpy(out, &v, 8);
            return;
        default:
            v = iabs(l) * 1000000;
            memcpy(out, &v, 8);
            return;
        }
    }
    /* Timestamps. */
    switch (in[2]) {
    case 's':
        v = l * 1000 * (output ? 1000 : 1);
        break;
    case 'm':
        v = l * 1000;
        break;
    case 'u':
        v = l * 1000000 + i;
        break;
    default:
        v = l * 1000000000;
        break;
    }
    memcpy(out, &v, 8);
}

/* row_value into a scalar (through a buffer wide enough for any type). */
static void row_scalar(int64_t i, int c, void *out, size_t size)
{
    uint8_t buf[16];
    row_value(i, c, true, buf);
    memcpy(out, buf, size);
}

static int value_width(const char *fmt)
{
    tl_arrow_type t;
    tl_arrow_type_parse(fmt, &t, NULL);
    return tl_arrow_type_bit_width(&t);
}

static void build_column(struct ArrowArray *a, int c, int64_t n)
{
    tl_error err;
    const char *f = col_type(c)->in;
    bool var = f[0] == 'u' || f[0] == 'U' || f[0] == 'z' || f[0] == 'Z';
    bool large = f[0] == 'U' || f[0] == 'Z';
    tl_array_init(a, var ? 3 : 2, 0, &err);
    a->length = n;
    if (col_nullable(c)) {
        uint8_t *valid = tl_array_alloc_buffer(a, 0, (size_t)n / 8 + 1);
        for (int64_t i = 0; i < n; i++)
            if (!row_null(i, c))
                tl_bit_set(valid, i);
            else
                a->null_count++;
    }
    if (var) {
        uint8_t *offsets = tl_array_alloc_buffer(a, 1, (size_t)(n + 1) * 8);
        char *data = tl_array_alloc_buffer(a, 2, (size_t)n * 64);
        int64_t pos = 0;
        for (int64_t i = 0; i < n; i++) {
            if (large)
                ((int64_t *)offsets)[i] = pos;
            else
                ((int32_t *)offsets)[i] = (int32_t)pos;
            /* Null rows keep junk bytes: writers must not store them. */
            pos += row_null(i, c) ? (i % 3) : (int64_t)row_string(i, c, data + pos);
        }
        if (large)
            ((int64_t *)offsets)[n] = pos;
        else
            ((int32_t *)offsets)[n] = (int32_t)pos;
        return;
    }
    int bits = value_width(f);
    uint8_t *values = tl_array_alloc_buffer(a, 1, (size_t)n * (size_t)(bits / 8 + 1) + 8);
    for (int64_t i = 0; i < n; i++) {
        if (bits == 1) {
            if (logical(i, c) & 1) tl_bit_set(values, i);
            continue;
        }
        row_value(i, c, false, values + i * (bits / 8));
    }
}

static void build_batch(struct ArrowSchema *s, struct ArrowArray *a, int64_t n)
{
    tl_error err;
    tl_schema_init(s, "+s", NULL, 0, N_COLS, &err);
    tl_array_init(a, 1, N_COLS, &err);
    a->length = n;
    for (int c = 0; c < N_COLS; c++) {
        char name[32];
        snprintf(name, sizeof name, "c%d_%s", c, col_nullable(c) ? "n" : "r");
        tl_schema_init(s->children[c], col_type(c)->in, name,
                       col_nullable(c) ? ARROW_FLAG_NULLABLE : 0, 0, &err);
        build_column(a->children[c], c, n);
    }
}

/* Checks row `row` (of the whole file) of column c against what was written. */
static bool check_row(const struct ArrowArray *a, int64_t r, int64_t row, int c)
{
    bool null = a->null_count && !tl_bit_get(a->buffers[0], r);
    if (null != row_null(row, c)) return false;
    if (null) return true;
    const char *f = col_type(c)->out;
    if (f[0] == 'u' || f[0] == 'z') {
        const int32_t *off = a->buffers[1];
        char want[128];
        size_t n = row_string(row, c, want);
        return (size_t)(off[r + 1] - off[r]) == n &&
               memcmp((const char *)a->buffers[2] + off[r], want, n) == 0;
    }
    int bits = value_width(f);
    if (bits == 1) return tl_bit_get(a->buffers[1], r) == (logical(row, c) & 1);
    uint8_t want[16];
    row_value(row, c, true, want);
    return memcmp((const uint8_t *)a->buffers[1] + r * (bits / 8), want, (size_t)bits / 8) == 0;
}

static tl_status write_file(const tl_parquet_write_options *o, int64_t n, const int64_t *splits,
                            size_t reserve, tl_buf *out, tl_parquet_file_stats *stats,
                            tl_error *err)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    build_batch(&s, &a, n);
    tl_parquet_writer *w;
    tl_status st = tl_parquet_writer_open(&s, o, &w, err);
    if (st == TL_OK && reserve && tl_parquet_writer_reserve(w, reserve) != 0)
        st = tl_error_nomem(err);
    for (int64_t start = 0, k = 0; st == TL_OK && start < n; k++) {
        int64_t len = splits && splits[k] ? splits[k] : n - start;
        if (len > n - start) len = n - start;
        struct ArrowArray slice = a;
        slice.offset = start;
        slice.length = len;
        slice.release = NULL;
        st = tl_parquet_writer_write(w, &slice, err);
        start += len;
    }
    if (st == TL_OK) st = tl_parquet_writer_finish(w, out, stats, err);
    tl_parquet_writer_free(w);
    a.release(&a);
    s.release(&s);
    return st;
}

static void check_schema(tl_parquet_reader *r, bool field_ids)
{
    tl_error err;
    struct ArrowSchema s;
    CHECK_OK(tl_parquet_reader_schema(r, &s, &err), &err);
    CHECK_INT(s.n_children, N_COLS);
    for (int c = 0; c < N_COLS && c < s.n_children; c++) {
        const struct ArrowSchema *f = s.children[c];
        if (strcmp(f->format, col_type(c)->out) != 0) CHECK_STR(f->format, col_type(c)->out);
        CHECK(((f->flags & ARROW_FLAG_NULLABLE) != 0) == col_nullable(c));
        int32_t len = 0;
        const char *id = tl_metadata_find(f->metadata, "PARQUET:field_id", &len);
        if (field_ids) {
            char want[16];
            snprintf(want, sizeof want, "%d", 100 + c);
            CHECK(id != NULL && len == (int32_t)strlen(want) && memcmp(id, want, (size_t)len) == 0);
        } else {
            CHECK(id == NULL);
        }
    }
    s.release(&s);
}

static void check_values(tl_parquet_reader *r, int64_t n)
{
    tl_error err;
    int64_t row0 = 0;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        struct ArrowArray b;
        CHECK_OK(tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err), &err);
        if (b.release == NULL) return;
        for (int c = 0; c < N_COLS; c++) {
            const struct ArrowArray *a = b.children[c];
            CHECK_INT(a->length, b.length);
            for (int64_t i = 0; i < a->length; i++)
                if (!check_row(a, i, row0 + i, c)) {
                    unit_fail(__FILE__, __LINE__, "column %d (%s) row %lld differs", c,
                              col_type(c)->in, (long long)(row0 + i));
                    break;
                }
        }
        row0 += b.length;
        b.release(&b);
    }
    CHECK_INT(row0, n);
}

typedef struct round_trip {
    tl_parquet_codec codec;
    tl_parquet_encodings encodings;
    int64_t page_rows, rg_rows, n;
    int64_t splits[4];
    int threads;
    bool page_index, field_ids;
} round_trip;

static void run_round_trip(const round_trip *rt)
{
    int32_t ids[N_COLS];
    for (int c = 0; c < N_COLS; c++) ids[c] = 100 + c;
    int32_t sorting[] = {15, 0};
    const char *kv[] = {"writer", "unit", "empty", "", NULL};
    tl_parquet_write_options o = {.codec = rt->codec,
                                  .compression_level = 3,
                                  .page_rows = rt->page_rows,
                                  .row_group_rows = rt->rg_rows,
                                  .field_ids = rt->field_ids ? ids : NULL,
                                  .sorting_columns = sorting,
                                  .n_sorting_columns = 2,
                                  .key_value_metadata = kv,
                                  .write_page_index = rt->page_index,
                                  .encodings = rt->encodings,
                                  .threads = rt->threads};
    tl_buf file = {0};
    tl_parquet_file_stats stats;
    tl_error err;
    CHECK_OK(write_file(&o, rt->n, rt->splits, 0, &file, &stats, &err), &err);
    CHECK_INT(stats.file_size, file.len);
    CHECK_INT(stats.num_rows, rt->n);
    CHECK_INT(stats.n_row_groups, (rt->n + rt->rg_rows - 1) / rt->rg_rows);
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    if (r == NULL) return;
    CHECK_INT(tl_parquet_reader_num_rows(r), rt->n);
    CHECK_INT(tl_parquet_reader_num_row_groups(r), stats.n_row_groups);
    const tl_pq_file_meta *m = tl_parquet_reader_meta(r);
    CHECK(m->n_row_groups == 0 || (m->row_groups[0].n_sorting_columns == 2 &&
                                   m->row_groups[0].sorting_columns[0].column_idx == 15));
    CHECK(m->n_key_value == 2 && strcmp(m->key_value[1].key, "empty") == 0);
    for (size_t g = 0; g < stats.n_row_groups; g++)
        CHECK_INT(stats.row_group_offsets[g], m->row_groups[g].file_offset);
    check_schema(r, rt->field_ids);
    check_values(r, rt->n);
    tl_parquet_reader_free(r);
    tl_parquet_file_stats_free(&stats);
    tl_buf_free(&file);
}

static void test_round_trip_compact_zstd_threads(void)
{
    round_trip rt = {.codec = TL_PARQUET_ZSTD,
                     .page_rows = 64,
                     .rg_rows = 300,
                     .n = 1000,
                     .splits = {333, 1, 200},
                     .threads = 2,
                     .page_index = true,
                     .field_ids = true};
    run_round_trip(&rt);
}

static void test_round_trip_parallel_columns(void)
{
    /* Big enough steps that columns are encoded on several threads. */
    round_trip rt = {.codec = TL_PARQUET_ZSTD,
                     .page_rows = 3000,
                     .rg_rows = 25000,
                     .n = 40000,
                     .splits = {17000, 23000},
                     .threads = 3,
                     .page_index = true};
    run_round_trip(&rt);
}

static void test_round_trip_plain_snappy(void)
{
    round_trip rt = {.codec = TL_PARQUET_SNAPPY,
                     .encodings = TL_PARQUET_ENCODINGS_PLAIN,
                     .page_rows = 1000,
                     .rg_rows = 1000,
                     .n = 1000,
                     .threads = 1};
    run_round_trip(&rt);
}

static void test_round_trip_gzip_tiny_pages(void)
{
    round_trip rt = {.codec = TL_PARQUET_GZIP,
                     .page_rows = 7,
                     .rg_rows = 100,
                     .n = 250,
                     .splits = {3, 5, 8, 13},
                     .threads = 1,
                     .page_index = true};
    run_round_trip(&rt);
}

static void test_round_trip_uncompressed_and_empty(void)
{
    round_trip rt = {.codec = TL_PARQUET_UNCOMPRESSED,
                     .page_rows = 100,
                     .rg_rows = 64,
                     .n = 500,
                     .page_index = true,
                     .field_ids = true};
    run_round_trip(&rt);
    round_trip empty = {.codec = TL_PARQUET_ZSTD, .page_rows = 10, .rg_rows = 10, .n = 0};
    run_round_trip(&empty);
}

/* A file buffer reserved big enough is the one the file comes back in, never
 * grown (a compaction sizes it from its inputs); one reserved too small grows
 * as before. The bytes are the same either way. */
static void test_reserved_file_buffer(void)
{
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD,
                                  .page_rows = 500,
                                  .row_group_rows = 2000,
                                  .write_page_index = true,
                                  .threads = 1};
    int64_t splits[] = {700, 900, 0};
    tl_buf plain = {0}, big = {0}, small = {0};
    tl_error err;
    CHECK_OK(write_file(&o, 5000, splits, 0, &plain, NULL, &err), &err);
    CHECK_OK(write_file(&o, 5000, splits, plain.len + 100, &big, NULL, &err), &err);
    CHECK_OK(write_file(&o, 5000, splits, plain.len / 2, &small, NULL, &err), &err);
    CHECK_INT(big.cap, plain.len + 101); /* the reservation and its NUL */
    CHECK(small.cap > plain.len);
    CHECK(big.len == plain.len && memcmp(big.data, plain.data, plain.len) == 0);
    CHECK(small.len == plain.len && memcmp(small.data, plain.data, plain.len) == 0);
    tl_buf_free(&plain);
    tl_buf_free(&big);
    tl_buf_free(&small);
}

/* ---- Statistics ---- */

static int64_t col_index(const char *in, bool nullable)
{
    for (int t = 0; t < N_TYPES; t++)
        if (strcmp(TYPES[t].in, in) == 0) return 2 * t + nullable;
    return -1;
}

/* A double column's statistics from one page of v[0, n): whether it has a
 * min and max, and them; its NaN count. */
typedef struct dstats {
    bool has;
    double lo, hi;
    int64_t nans;
} dstats;

static dstats double_stats(const double *v, int64_t n)
{
    tl_error err;
    struct ArrowSchema s;
    struct ArrowArray a;
    dstats out = {0};
    CHECK_OK(tl_schema_init(&s, "+s", NULL, 0, 1, &err), &err);
    CHECK_OK(tl_schema_init(s.children[0], "g", "x", 0, 0, &err), &err);
    CHECK_OK(tl_array_init(&a, 1, 1, &err), &err);
    a.length = n;
    CHECK_OK(tl_array_init(a.children[0], 2, 0, &err), &err);
    a.children[0]->length = n;
    double *values = tl_array_alloc_buffer(a.children[0], 1, (size_t)n * sizeof *v);
    CHECK(values != NULL);
    if (values) memcpy(values, v, (size_t)n * sizeof *v);
    tl_parquet_write_options o = {.codec = TL_PARQUET_UNCOMPRESSED};
    tl_parquet_writer *w = NULL;
    tl_buf file = {0};
    tl_parquet_file_stats fs = {0};
    CHECK_OK(tl_parquet_writer_open(&s, &o, &w, &err), &err);
    CHECK_OK(tl_parquet_writer_write(w, &a, &err), &err);
    CHECK_OK(tl_parquet_writer_finish(w, &file, &fs, &err), &err);
    if (fs.n_columns == 1) {
        out.has = fs.columns[0].has_min_max;
        out.nans = fs.columns[0].nan_count;
        if (out.has) {
            memcpy(&out.lo, fs.columns[0].min, 8);
            memcpy(&out.hi, fs.columns[0].max, 8);
        }
    }
    tl_parquet_file_stats_free(&fs);
    tl_parquet_writer_free(w);
    tl_buf_free(&file);
    tl_array_release(&a);
    tl_schema_release(&s);
    return out;
}

/* Double statistics are scanned two values at a time: the least and the
 * greatest in either lane or in an odd last value, NaN in any position
 * (counted, never min or max), zeros widened to -0.0 and +0.0. */
static void test_double_statistics(void)
{
    static const struct {
        double v[7];
        int n;
        double lo, hi;
        int64_t nans;
    } cases[] = {
        {{NAN, 3.5, -0.0, NAN, -2.25, 0.0, NAN}, 7, -2.25, 3.5, 3},
        {{1, 2, NAN, 4, 9}, 5, 1, 9, 1},  /* the greatest is the odd last value */
        {{5, 2, 7, -8, 6}, 5, -8, 7, 0},  /* the least in the second lane */
        {{-1, 4, 3, 2, -9}, 5, -9, 4, 0}, /* the least is the odd last value */
        {{0.0, -0.0, 0.0}, 3, -0.0, 0.0, 0},
        {{NAN, NAN, NAN}, 3, 0, 0, 3},
        {{42}, 1, 42, 42, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dstats st = double_stats(cases[c].v, cases[c].n);
        CHECK_INT(st.nans, cases[c].nans);
        CHECK(st.has == (cases[c].nans < cases[c].n));
        if (!st.has) continue;
        CHECK(st.lo == cases[c].lo && signbit(st.lo) == signbit(cases[c].lo));
        CHECK(st.hi == cases[c].hi && signbit(st.hi) == signbit(cases[c].hi));
    }
}

static void test_statistics(void)
{
    enum { N = 700 };
    tl_parquet_write_options o = {
        .codec = TL_PARQUET_ZSTD, .page_rows = 50, .row_group_rows = 256, .write_page_index = true};
    tl_buf file = {0};
    tl_parquet_file_stats fs;
    tl_error err;
    CHECK_OK(write_file(&o, N, NULL, 0, &file, &fs, &err), &err);
    /* int64, nullable: min/max over non-null rows, PLAIN little-endian. */
    int c = (int)col_index("l", true);
    int64_t lo = INT64_MAX, hi = INT64_MIN, nulls = 0;
    for (int64_t i = 0; i < N; i++) {
        if (row_null(i, c)) {
            nulls++;
            continue;
        }
        int64_t v;
        row_scalar(i, c, &v, sizeof v);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    const tl_parquet_column_stats *s = &fs.columns[c];
    CHECK(s->has_min_max && s->min_len == 8 && s->max_len == 8);
    CHECK(memcmp(s->min, &lo, 8) == 0 && memcmp(s->max, &hi, 8) == 0);
    CHECK_INT(s->null_count, nulls);
    CHECK_INT(s->value_count, N);
    CHECK_INT(s->nan_count, -1);
    CHECK_INT(s->field_id, -1);
    /* double: NaN is counted, never min or max. */
    c = (int)col_index("g", false);
    s = &fs.columns[c];
    int64_t nans = 0;
    double dlo = INFINITY, dhi = -INFINITY;
    for (int64_t i = 0; i < N; i++) {
        double d;
        row_scalar(i, c, &d, sizeof d);
        if (d != d)
            nans++;
        else
            dlo = d < dlo ? d : dlo, dhi = d > dhi ? d : dhi;
    }
    CHECK_INT(s->nan_count, nans);
    CHECK(s->has_min_max && memcmp(s->min, &dlo, 8) == 0 && memcmp(s->max, &dhi, 8) == 0);
    /* unsigned 32-bit: compared unsigned. */
    c = (int)col_index("I", false);
    uint32_t ulo = UINT32_MAX, uhi = 0;
    for (int64_t i = 0; i < N; i++) {
        uint32_t u;
        row_scalar(i, c, &u, sizeof u);
        ulo = u < ulo ? u : ulo;
        uhi = u > uhi ? u : uhi;
    }
    CHECK(memcmp(fs.columns[c].min, &ulo, 4) == 0 && memcmp(fs.columns[c].max, &uhi, 4) == 0);
    /* strings: byte-wise; the empty string is the minimum. */
    c = (int)col_index("u", true);
    CHECK(fs.columns[c].has_min_max && fs.columns[c].min_len == 0);
    /* decimal: big-endian two's complement of the FLBA width (5 bytes for precision 10). */
    c = (int)col_index("d:10,2", false);
    CHECK(fs.columns[c].has_min_max && fs.columns[c].min_len == 5 && (fs.columns[c].min[0] & 0x80));
    /* float16 has no order Parquet defines here: no min/max. */
    CHECK(!fs.columns[col_index("e", false)].has_min_max);

    /* Reader per-chunk statistics agree with the writer's per-file ones. */
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, file.data, file.len);
    tl_parquet_reader *r;
    CHECK_OK(tl_parquet_reader_open(&src, &r, &err), &err);
    c = (int)col_index("l", true);
    int64_t rlo = INT64_MAX, rhi = INT64_MIN, rnulls = 0;
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        tl_parquet_column_stats cs;
        CHECK_OK(tl_parquet_reader_column_stats(r, g, c, &cs, &err), &err);
        int64_t a, b;
        memcpy(&a, cs.min, 8);
        memcpy(&b, cs.max, 8);
        rlo = a < rlo ? a : rlo;
        rhi = b > rhi ? b : rhi;
        rnulls += cs.null_count;
        tl_parquet_column_stats_clear(&cs);
    }
    CHECK(rlo == lo && rhi == hi && rnulls == nulls);

    /* Page index: pages of 50 rows; the null run of rows 450..599 makes null pages. */
    tl_pq_column_index ci;
    tl_pq_offset_index oi;
    CHECK_OK(tl_parquet_reader_page_index(r, 1, c, &ci, &oi, &err), &err);
    CHECK_INT(oi.n_pages, 6);
    CHECK_INT(ci.n_pages, 6);
    for (size_t p = 0; p < oi.n_pages; p++) {
        CHECK_INT(oi.pages[p].first_row_index, (int64_t)p * 50);
        if (p)
            CHECK(oi.pages[p].offset ==
                  oi.pages[p - 1].offset + oi.pages[p - 1].compressed_page_size);
    }
    /* Row group 1 holds rows 256..511: rows 450..511 are null (pages 4 from row 456 on). */
    CHECK(!ci.null_pages[0] && ci.null_pages[4] && ci.null_counts[4] == 50);
    CHECK(ci.min_values[0].len == 8);
    tl_parquet_reader_free(r);
    tl_parquet_file_stats_free(&fs);
    tl_buf_free(&file);
}

/* ---- Dictionary fallback ---- */

static size_t fallback_string(int64_t i, char *buf)
{
    /* 2000 rows of 10 repeated values, then distinct 200-byte values. */
    if (i < 2000) return (size_t)sprintf(buf, "repeat-%d", (int)(i % 10));
    memset(buf, 'a' + (int)(i % 26), 200);
    return (size_t)sprintf(buf + 180, "%019lld", (long long)i) + 180;
}

/* Row i of test_dictionary_neighbours: runs of equal strings, then a
 * neighbour of the same length that differs in one byte (first, middle or
 * last), at every length from 0 to 24. */
static size_t neighbour_string(int64_t i, char *out)
{
    size_t len = (size_t)(i / 12) % 25, at = (size_t)(i / 4) % 3;
    memset(out, 'k', len);
    if (len && i % 4 == 3) out[at == 0 ? 0 : at == 1 ? len / 2 : len - 1] = 'q';
    return len;
}

typedef size_t (*string_of_row)(int64_t i, char *out);

/* A batch of one string column "tag" whose row i is row(i), of at most
 * max_len bytes. */
static void string_batch(int64_t n, int64_t flags, size_t max_len, string_of_row row,
                         struct ArrowSchema *s, struct ArrowArray *a)
{
    tl_error err;
    tl_schema_init(s, "+s", NULL, 0, 1, &err);
    tl_schema_init(s->children[0], "u", "tag", flags, 0, &err);
    tl_array_init(a, 1, 1, &err);
    a->length = n;
    struct ArrowArray *c = a->children[0];
    tl_array_init(c, 3, 0, &err);
    c->length = n;
    int32_t *off = tl_array_alloc_buffer(c, 1, (size_t)(n + 1) * 4);
    char *data = tl_array_alloc_buffer(c, 2, (size_t)n * max_len);
    for (int64_t i = 0; i < n; i++) off[i + 1] = off[i] + (int32_t)row(i, data + off[i]);
}

/* Reads back row group 0 and checks its string column row by row. */
static void check_string_rows(tl_parquet_reader *r, int64_t n, string_of_row row)
{
    tl_error err;
    struct ArrowArray b;
    CHECK_OK(tl_parquet_reader_read_row_group(r, 0, NULL, 0, &b, &err), &err);
    const int32_t *got = b.children[0]->buffers[1];
    for (int64_t i = 0; i < n; i++) {
        char want[256];
        size_t len = row(i, want);
        if ((size_t)(got[i + 1] - got[i]) != len ||
            memcmp((const char *)b.children[0]->buffers[2] + got[i], want, len) != 0) {
            unit_fail(__FILE__, __LINE__, "row %lld differs", (long long)i);
            break;
        }
    }
    b.release(&b);
}

/* A dictionary page's values are compared with the previous one to skip
 * the hash of a repeat: neighbours that differ in any byte stay apart. */
static void test_dictionary_neighbours(void)
{
    enum { N = 25 * 12 };
    struct ArrowSchema s;
    struct ArrowArray a;
    string_batch(N, 0, 24, neighbour_string, &s, &a);
    tl_parquet_write_options o = {.codec = TL_PARQUET_UNCOMPRESSED};
    tl_buf file = {0};
    tparquet_write_memory(&s, &a, &o, &file);
    tl_parquet_source src;
    tl_parquet_reader *r = tparquet_open_memory(&src, &file);
    CHECK(tl_parquet_reader_meta(r)->row_groups[0].columns[0].meta.has_dictionary_page_offset);
    check_string_rows(r, N, neighbour_string);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    a.release(&a);
    s.release(&s);
}

static void test_dictionary_falls_back_to_plain(void)
{
    enum { N = 12000 };
    struct ArrowSchema s;
    struct ArrowArray a;
    string_batch(N, ARROW_FLAG_NULLABLE, 220, fallback_string, &s, &a);
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD, .page_rows = 2000, .row_group_rows = N};
    tl_buf file = {0};
    tparquet_write_memory(&s, &a, &o, &file);
    tl_parquet_source src;
    tl_parquet_reader *r = tparquet_open_memory(&src, &file);
    const tl_pq_column_meta *m = &tl_parquet_reader_meta(r)->row_groups[0].columns[0].meta;
    int dict_pages = 0, plain_pages = 0;
    for (size_t i = 0; i < m->n_encoding_stats; i++) {
        if (m->encoding_stats[i].encoding == 8) dict_pages = m->encoding_stats[i].count;
        if (m->encoding_stats[i].encoding == 0 && m->encoding_stats[i].page_type == 0)
            plain_pages = m->encoding_stats[i].count;
    }
    CHECK(dict_pages >= 2 && plain_pages >= 1 && dict_pages + plain_pages == N / 2000);
    CHECK(m->has_dictionary_page_offset);
    check_string_rows(r, N, fallback_string);
    tl_parquet_reader_free(r);
    tl_buf_free(&file);
    a.release(&a);
    s.release(&s);
}

/* ---- Rejected input ---- */

static void test_rejects_bad_batches(void)
{
    tl_error err;
    struct ArrowSchema s;
    tl_schema_init(&s, "+s", NULL, 0, 1, &err);
    tl_schema_init(s.children[0], "l", "x", 0, 0, &err);
    tl_parquet_write_options o = {.codec = TL_PARQUET_ZSTD};
    tl_parquet_writer *w;
    CHECK_OK(tl_parquet_writer_open(&s, &o, &w, &err), &err);
    struct ArrowArray a;
    tl_array_init(&a, 1, 1, &err);
    a.length = 10;
    tl_array_init(a.children[0], 2, 0, &err);
    a.children[0]->length = 10;
    a.children[0]->null_count = 1;
    uint8_t *valid = tl_array_alloc_buffer(a.children[0], 0, 2);
    valid[0] = 0xFF;
    valid[1] = 0x01; /* row 9 is null */
    tl_array_alloc_buffer(a.children[0], 1, 80);
    CHECK_INT(tl_parquet_writer_write(w, &a, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "\"x\"") != NULL);
    valid[1] = 0x03;
    CHECK_OK(tl_parquet_writer_write(w, &a, &err), &err); /* still usable */
    tl_buf out = {0};
    CHECK_OK(tl_parquet_writer_finish(w, &out, NULL, &err), &err);
    tl_parquet_writer_free(w);
    tl_buf_free(&out);
    a.release(&a);
    /* Unsupported types and dictionary input are refused at open. */
    tl_schema_release(s.children[0]);
    tl_schema_init(s.children[0], "+l", "nested", 0, 0, &err);
    CHECK_INT(tl_parquet_writer_open(&s, &o, &w, &err), TL_ERR_INVALID);
    CHECK(strstr(err.message, "nested") != NULL);
    s.release(&s);
}

/* ---- Hostile files ---- */

static void read_everything(const uint8_t *data, size_t len)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, data, len);
    tl_parquet_reader *r;
    tl_error err;
    if (tl_parquet_reader_open(&src, &r, &err) != TL_OK) {
        CHECK(err.message[0] != '\0');
        return;
    }
    struct ArrowSchema s;
    if (tl_parquet_reader_schema(r, &s, &err) == TL_OK) s.release(&s);
    for (int g = 0; g < tl_parquet_reader_num_row_groups(r); g++) {
        struct ArrowArray b;
        if (tl_parquet_reader_read_row_group(r, g, NULL, 0, &b, &err) == TL_OK) b.release(&b);
        for (int c = 0; c < tl_parquet_reader_num_columns(r); c++) {
            tl_parquet_column_stats cs;
            if (tl_parquet_reader_column_stats(r, g, c, &cs, &err) == TL_OK)
                tl_parquet_column_stats_clear(&cs);
            tl_pq_column_index ci;
            tl_pq_offset_index oi;
            (void)tl_parquet_reader_page_index(r, g, c, &ci, &oi, &err);
        }
    }
    tl_parquet_reader_free(r);
}

static void test_hostile_files(void)
{
    tl_parquet_write_options o = {
        .codec = TL_PARQUET_ZSTD, .page_rows = 40, .row_group_rows = 70, .write_page_index = true};
    int64_t splits[] = {0};
    tl_buf file = {0};
    tl_error err;
    CHECK_OK(write_file(&o, 140, splits, 0, &file, NULL, &err), &err);
    /* Every truncation is refused at open (the footer moves with the end). */
    for (size_t n = 0; n < file.len; n += 1 + n / 64) {
        tl_parquet_source src;
        tl_parquet_source_from_memory(&src, file.data, n);
        tl_parquet_reader *r;
        CHECK(tl_parquet_reader_open(&src, &r, &err) != TL_OK);
    }
    /* A file whose data is cut but whose footer survives: reads fail, never crash. */
    uint8_t *copy = malloc(file.len);
    for (int i = 0; i < 1000; i++) {
        memcpy(copy, file.data, file.len);
        copy[rnd() % file.len] ^= (uint8_t)(1 + rnd() % 255);
        read_everything(copy, file.len);
    }
    /* Flips aimed at the footer, where the lengths and offsets live. */
    uint32_t flen = tl_load_le32(file.data + file.len - 8);
    for (int i = 0; i < 1000; i++) {
        memcpy(copy, file.data, file.len);
        copy[file.len - 8 - 1 - rnd() % flen] ^= (uint8_t)(1 + rnd() % 255);
        read_everything(copy, file.len);
    }
    free(copy);
    tl_buf_free(&file);
}

UNIT_TESTS(UNIT(test_round_trip_compact_zstd_threads), UNIT(test_round_trip_parallel_columns),
           UNIT(test_round_trip_plain_snappy), UNIT(test_round_trip_gzip_tiny_pages),
           UNIT(test_round_trip_uncompressed_and_empty), UNIT(test_reserved_file_buffer),
           UNIT(test_statistics), UNIT(test_double_statistics),
           UNIT(test_dictionary_falls_back_to_plain), UNIT(test_dictionary_neighbours),
           UNIT(test_rejects_bad_batches), UNIT(test_hostile_files))
